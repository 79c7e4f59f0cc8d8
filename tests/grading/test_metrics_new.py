"""The metrics added for MLE-bench's medium and high competitions: the edge cases MLE-bench defines, and
one cross-check against a library where the definition comes from one (hand-computed values of every
metric are in test_metrics.py)."""

import math
import random
import string
import warnings

import numpy as np
import pandas as pd
import pytest

from mle_env.grading import metrics
from mle_env.grading.metrics import METRICS, InvalidPrediction, get_metric, levenshtein_distance

A = np.array


def _reference_levenshtein(a: str, b: str) -> int:
    """The pure-Python dynamic programme mle-env used before rapidfuzz (kept here as the reference)."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


# --- the package -------------------------------------------------------------------------------------
def test_importing_the_package_registers_every_family() -> None:
    families = {"classification", "correlation", "detection", "detection3d", "probability", "ranking", "regression",
                "roc", "segmentation", "text", "volumes"}
    modules = {m.fn.__module__.rsplit(".", 1)[-1] for m in METRICS.values()}
    assert families <= modules
    assert metrics.registry.METRICS is METRICS


def test_metrics_that_read_the_answers_table_say_so() -> None:
    needs = {n for n, m in METRICS.items() if m.needs_answers}
    assert needs == {"jigsaw_bias_auc", "mae", "masked_mcrmse", "grouped_log_mae", "laplace_log_likelihood",
                     "haversine_p50_p95", "dice_hausdorff_3d", "weighted_multilabel_log_loss", "rle_dice",
                     "iou_sweep_precision_rle", "pixel_fbeta_rle"}
    assert {n for n, m in METRICS.items() if m.needs_classes} == {"multiclass_log_loss", "masked_mcrmse",
                                                                   "mean_angular_error"}


def test_invalid_prediction_is_a_value_error() -> None:
    assert issubclass(InvalidPrediction, ValueError)


# --- levenshtein -------------------------------------------------------------------------------------
def test_rapidfuzz_levenshtein_equals_the_pure_python_one() -> None:
    rng = random.Random(12)
    for _ in range(300):
        a = "".join(rng.choices("abcd" + string.punctuation[:3], k=rng.randint(0, 30)))
        b = "".join(rng.choices("abcd" + string.punctuation[:3], k=rng.randint(0, 30)))
        assert levenshtein_distance(a, b) == _reference_levenshtein(a, b)
    assert levenshtein_distance("flaw", "lawn") == levenshtein_distance("lawn", "flaw") == 2


def test_levenshtein_reads_nan_as_empty() -> None:
    assert get_metric("levenshtein")(A(["abc", float("nan")], dtype=object), A(["", "xy"], dtype=object)) == 2.5


# --- label sets and rankings -------------------------------------------------------------------------
def test_multilabel_micro_f1_equals_scikit_learn() -> None:
    from sklearn.metrics import f1_score
    from sklearn.preprocessing import MultiLabelBinarizer

    rng = np.random.default_rng(3)
    labels = list("abcdefg")
    truth = [" ".join(rng.choice(labels, rng.integers(0, 4), replace=False)) for _ in range(200)]
    pred = [" ".join(rng.choice([*labels, "zz"], rng.integers(0, 5))) for _ in range(200)]
    binarizer = MultiLabelBinarizer(classes=sorted({t for cell in truth for t in cell.split()}), sparse_output=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "unknown class(es) ['zz'] will be ignored"
        expected = f1_score(binarizer.fit_transform([c.split() for c in truth]),
                            binarizer.transform([c.split() for c in pred]), average="micro")
    assert get_metric("multilabel_micro_f1")(A(truth), A(pred)) == pytest.approx(expected, abs=1e-12)


def test_multilabel_micro_f1_with_no_label_anywhere_is_zero() -> None:
    assert get_metric("multilabel_micro_f1")(A(["", float("nan")], dtype=object), A(["", "x"], dtype=object)) == 0.0


def test_kendall_tau_pooled_equals_scipy_on_one_row() -> None:
    from scipy.stats import kendalltau

    order = np.random.default_rng(5).permutation(40)
    truth, pred = " ".join(f"c{i}" for i in range(40)), " ".join(f"c{i}" for i in order)
    expected = kendalltau(np.arange(40), order).statistic
    assert get_metric("kendall_tau_pooled")(A([truth]), A([pred])) == pytest.approx(expected, abs=1e-12)


def test_kendall_tau_pooled_counts_inversions_beyond_one_block() -> None:
    n = 2500  # more than one block of the pairwise count: the reversed order has n(n-1)/2 inversions
    truth = " ".join(map(str, range(n)))
    assert get_metric("kendall_tau_pooled")(A([truth]), A([" ".join(map(str, reversed(range(n))))])) == -1.0


@pytest.mark.parametrize("pred", ["a b", "a b b", "a b d"])
def test_kendall_tau_pooled_rejects_a_non_permutation(pred: str) -> None:
    with pytest.raises(InvalidPrediction, match="row 1: the predicted order must list each of the 3 items"):
        get_metric("kendall_tau_pooled")(A(["a b c"]), A([pred]))


def test_map_at_k_empty_truth_scores_zero_and_mlebench_splits_on_one_space() -> None:
    m = get_metric("map_at_k")
    assert m(A(["", "a"]), A(["a", "a"]), k=5, truncate_first=True) == 0.5
    # "a  b" split on " " is ["a", "", "b"]: the empty token takes rank 2, so only "a" counts: 1 / 2
    assert m(A(["a b"]), A(["a  b"]), k=2, truncate_first=True, separator=" ") == 0.5
    assert m(A(["a b"]), A(["a  b"]), k=2, truncate_first=True) == 1.0


# --- ROC-based ---------------------------------------------------------------------------------------
def test_weighted_auc_tpr_bands_equals_a_dense_integration() -> None:
    """Each band's area is the area under min(TPR(x), top) - bottom, clipped at 0, for x in [0, 1]."""
    from sklearn.metrics import roc_curve

    rng = np.random.default_rng(7)
    y = rng.integers(0, 2, 300)
    s = y * 0.5 + rng.normal(size=300)
    fpr, tpr, _ = roc_curve(y, s, pos_label=1, drop_intermediate=False)
    x = np.linspace(0, 1, 400_001)
    curve = np.interp(x, fpr, tpr)
    bands = [(0.0, 0.4, 2.0), (0.4, 1.0, 1.0)]
    dense = sum(w * np.trapezoid(np.clip(curve, lo, hi) - lo, x) for lo, hi, w in bands) / 1.4
    assert get_metric("weighted_auc_tpr_bands")(y, s) == pytest.approx(dense, abs=1e-4)
    # with one band of weight 1 it is the plain AUC
    plain = get_metric("auc")(y, s)
    assert get_metric("weighted_auc_tpr_bands")(y, s, edges=(0.0, 1.0), weights=(1.0,)) == pytest.approx(plain)


def test_weighted_auc_tpr_bands_needs_one_weight_per_band() -> None:
    with pytest.raises(ValueError, match="one weight per band: 2, got 3"):
        get_metric("weighted_auc_tpr_bands")(A([0, 1]), A([0.2, 0.8]), weights=(1, 2, 3))


JIGSAW_ANSWERS = pd.DataFrame({"g": [0.9, 0.6, 0.5, 0.2, np.nan, 0.0]})
JIGSAW_Y, JIGSAW_P = A([1, 0, 1, 0, 1, 0.0]), A([0.9, 0.7, 0.3, 0.2, 0.8, 0.4])


def test_jigsaw_bias_auc_binarised_as_mlebench_does() -> None:
    # predictions >= 0.5: [1, 1, 0, 0, 1, 0]; overall: positives {1, 0, 1} vs negatives {1, 0, 0} = 6/9;
    # subgroup g (rows 1-3): positives {1, 0} vs {1}: (0.5 + 0) / 2; BPSN: {1} vs {1}: tie 0.5;
    # BNSP: {1, 0} vs {0, 0}: (2 + 1) / 4 -> 0.25 * (2/3 + 1/4 + 1/2 + 3/4)
    got = get_metric("jigsaw_bias_auc")(JIGSAW_Y, JIGSAW_P, answers=JIGSAW_ANSWERS, identity_columns=["g"],
                                        binarize_predictions=True)
    assert got == pytest.approx(0.25 * (2 / 3 + 1 / 4 + 1 / 2 + 3 / 4))


def test_jigsaw_bias_auc_with_one_identity_is_the_plain_mean_of_four_aucs() -> None:
    # overall 7/9, subgroup 1/2, BPSN 1, BNSP 3/4 (the power mean of one value is that value)
    got = get_metric("jigsaw_bias_auc")(JIGSAW_Y, JIGSAW_P, answers=JIGSAW_ANSWERS, identity_columns=["g"])
    assert got == pytest.approx(0.25 * (7 / 9 + 1 / 2 + 1 + 3 / 4))


def test_jigsaw_bias_auc_zero_auc_makes_the_power_mean_zero() -> None:
    # prediction 0.6 for the toxic row without g: BPSN = {0.6} vs {0.7} = 0; overall (3 + 1 + 2) / 9
    p = JIGSAW_P.copy()
    p[4] = 0.6
    got = get_metric("jigsaw_bias_auc")(JIGSAW_Y, p, answers=JIGSAW_ANSWERS, identity_columns=["g"])
    assert got == pytest.approx(0.25 * (6 / 9 + 1 / 2 + 0 + 3 / 4))


def test_jigsaw_bias_auc_needs_both_classes_and_the_identity_columns() -> None:
    answers = pd.DataFrame({"g": [1, 1, 0, 0]})
    with pytest.raises(ValueError, match="one class only"):  # subgroup g holds toxic rows only
        get_metric("jigsaw_bias_auc")(A([1, 1, 0, 1.0]), A([0.9, 0.2, 0.1, 0.5]), answers=answers,
                                      identity_columns=["g"])
    with pytest.raises(ValueError, match="needs answer column 'male'"):
        get_metric("jigsaw_bias_auc")(A([1, 0.0]), A([0.9, 0.1]), answers=answers.iloc[:2])


# --- correlations and labels -------------------------------------------------------------------------
def test_pearson_equals_numpy_and_is_nan_for_a_constant() -> None:
    rng = np.random.default_rng(1)
    y, p = rng.normal(size=50), rng.normal(size=50)
    assert get_metric("pearson")(y, p) == pytest.approx(np.corrcoef(y, p)[0, 1], abs=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert math.isnan(get_metric("pearson")(y, np.ones(50)))


def test_mcc_of_a_constant_prediction_is_zero() -> None:
    assert get_metric("mcc")(A([0, 1, 1]), A([1, 1, 1])) == 0.0


# --- probabilities -----------------------------------------------------------------------------------
def test_kl_divergence_equals_scipy_rel_entr_and_clips() -> None:
    from scipy.special import rel_entr

    rng = np.random.default_rng(2)
    votes = rng.integers(0, 4, (30, 6)).astype(float)
    votes[votes.sum(axis=1) == 0, 0] = 1
    probs = rng.dirichlet(np.ones(6), 30)
    expected = np.mean(rel_entr(votes / votes.sum(axis=1, keepdims=True), probs).sum(axis=1))
    assert get_metric("kl_divergence")(votes, probs) == pytest.approx(expected, abs=1e-12)
    # a zero probability where y = 1 is clipped to 1e-15: ln(1 / 1e-15) = 34.538776
    assert get_metric("kl_divergence")(A([[1, 0]]), A([[0.0, 1.0]])) == pytest.approx(34.538776, abs=1e-6)


def test_kl_divergence_of_an_answer_row_without_votes_is_nan() -> None:
    with np.errstate(invalid="ignore"):
        assert math.isnan(get_metric("kl_divergence")(A([[0, 0], [1, 0]]), A([[0.5, 0.5], [0.5, 0.5]])))


# --- regression --------------------------------------------------------------------------------------
def test_grouped_log_mae_of_an_exact_group_is_minus_infinity() -> None:
    answers = pd.DataFrame({"type": ["a", "b"]})
    assert get_metric("grouped_log_mae")(A([1.0, 2.0]), A([1.0, 3.0]), answers=answers) == -math.inf


def test_laplace_log_likelihood_floors_sigma_caps_error_and_skips_missing_answers() -> None:
    m = get_metric("laplace_log_likelihood")
    floor = -math.log(math.sqrt(2) * 70)  # d = 0, s = 70: the best a row can score
    # negative and NaN sigmas count as 0, then the floor 70; the NaN answer row is not scored
    assert m(A([10.0, 10.0, np.nan]), A([[10, -5], [10, np.nan], [0, 1]])) == pytest.approx(floor)
    # an error of 5000 is capped at 1000
    assert m(A([0.0]), A([[5000, 70]])) == pytest.approx(-math.sqrt(2) * 1000 / 70 + floor)
    assert m(A([0.0]), A([[5000, 70]]), error_cap=2000.0, sigma_floor=100.0) == pytest.approx(
        -math.sqrt(2) * 20 - math.log(math.sqrt(2) * 100))
    with pytest.raises(ValueError, match="two prediction columns"):
        m(A([0.0]), A([1.0]))


def test_masks_read_text_and_number_columns() -> None:
    answers = pd.DataFrame({"keep": ["True", "false", "TRUE"], "u_out": [0.0, 1.0, 0.0]})
    y, p = A([[1.0], [5.0], [3.0]]), A([[2.0], [0.0], [3.0]])
    assert get_metric("masked_mcrmse")(y, p, classes=["t"], answers=answers, score_columns=["t"]) == pytest.approx(
        math.sqrt(0.5))
    assert get_metric("mae")(y, p, answers=answers, mask_column="u_out") == 0.5
    with pytest.raises(ValueError, match="needs the answers table to read column 'u_out'"):
        get_metric("mae")(y, p, mask_column="u_out")
    with pytest.raises(ValueError, match=r"score column\(s\) \['x'\] are not target columns"):
        get_metric("masked_mcrmse")(y, p, classes=["t"], answers=answers, score_columns=["x"])


def test_haversine_equals_scikit_learn() -> None:
    from sklearn.metrics.pairwise import haversine_distances

    rng = np.random.default_rng(4)
    truth = np.column_stack([rng.uniform(30, 40, 20), rng.uniform(-122, -121, 20)])
    pred = truth + rng.normal(scale=1e-4, size=truth.shape)
    d = np.diag(haversine_distances(np.radians(truth), np.radians(pred))) * 6_371_000
    expected = np.mean([np.quantile(d, 0.5), np.quantile(d, 0.95)])
    got = get_metric("haversine_p50_p95")(truth, pred, answers=pd.DataFrame({"tripId": ["t"] * 20}))
    assert got == pytest.approx(expected, rel=1e-9)


# --- sequences and detection -------------------------------------------------------------------------
def test_sequence_edit_rate_is_token_level_and_can_exceed_one() -> None:
    m = get_metric("sequence_edit_rate")
    assert m(A(["12"]), A(["1 2"])) == 2.0  # [12] -> [1, 2]: one substitution, one insertion
    assert m(A(["1", "2"]), A(["3 4 5", ""])) == 2.0  # [1] -> [3, 4, 5]: 3 edits; "" deletes [2]: 1 -> 4 / 2


def test_sequence_edit_rate_rejects_non_integers_and_empty_answers() -> None:
    m = get_metric("sequence_edit_rate")
    with pytest.raises(InvalidPrediction, match="row 2: a sequence must be integers"):
        m(A(["1", "2"]), A(["1", "2 x"]))
    with pytest.raises(ValueError, match="the answers hold no token"):
        m(A([""]), A(["1"]))


def test_point_in_box_f1_edge_cases() -> None:
    m = get_metric("point_in_box_f1")
    assert m(A(["", float("nan")], dtype=object), A(["", ""])) == 0.0  # nothing at all: 0, as Kaggle's code
    assert m(A(["A 0 0 4 4"]), A(["B 1 1"])) == 0.0  # no TP: precision 0
    # a prediction is used once: the second box of label A finds no unused point -> TP 1, FN 1: P 1, R 1/2
    assert m(A(["A 0 0 4 4 A 0 0 4 4"]), A(["A 1 1"])) == pytest.approx(2 / 3)
    for bad in ("A 1", "A x 1", "A 1  2"):
        with pytest.raises(InvalidPrediction, match="'label x y' groups"):
            m(A([""]), A([bad]))
