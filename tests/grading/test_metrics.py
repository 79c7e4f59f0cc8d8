"""Every registered metric against values computed by hand (the arithmetic is in each comment)."""

import math

import numpy as np
import pandas as pd
import pytest

from mle_env.grading.metrics import METRICS, get_metric, levenshtein_distance

A = np.array

# name -> list of (y_true, y_pred, params, expected)
CASES = {
    # pairs (pos, neg): (0.35>0.1) (0.35<0.4) (0.8>0.1) (0.8>0.4) -> 3 of 4 ordered correctly
    "auc": [(A([0, 0, 1, 1]), A([0.1, 0.4, 0.35, 0.8]), {}, 0.75),
            (A([[0, 1], [1, 0]]), A([[0.2, 0.9], [0.8, 0.1]]), {}, 1.0)],
    # column 1: perfect (1.0); column 2 without the -1 row: y [0, 1, 0], p [0.2, 0.9, 0.9]: one pair right,
    # one tie (0.5) -> 0.75; mean (1.0 + 0.75) / 2
    "mean_columnwise_auc": [(A([[0, 0], [1, 1], [1, -1], [0, 0]]), A([[0.1, 0.2], [0.9, 0.9], [0.8, 0.5], [0.2, 0.9]]),
                             {"ignore_label": -1}, 0.875)],
    # -(ln 0.8 + ln 0.7) / 2 = (0.223144 + 0.356675) / 2
    "log_loss": [(A([1, 0]), A([0.8, 0.3]), {}, 0.2899092),
                 # a certain mistake is clipped at 1e-15: -ln(1e-15) / 2 = 34.538776 / 2
                 (A([1, 0]), A([0.0, 0.0]), {}, 17.2693882),
                 # MLE-bench's scikit-learn clips at float64 machine epsilon: -ln(2.220446e-16) / 2 = 36.0436534 / 2
                 (A([1, 0]), A([0.0, 0.0]), {"eps": 2.220446049250313e-16}, 18.0218267)],
    # -(ln 0.7 + ln 0.8) / 2; second case: a row [2, 2] is clipped to [1-1e-15]*2 then normalised to 0.5 -> ln 2
    "multiclass_log_loss": [(A(["a", "b"]), A([[0.7, 0.3], [0.2, 0.8]]), {"classes": ["a", "b"]}, 0.2899092),
                            (A([[1, 0]]), A([[2.0, 2.0]]), {"classes": ["a", "b"]}, math.log(2)),
                            # not renormalised (scikit-learn >= 1.5): -(ln 0.5 + ln 0.6) / 2 = (0.693147 + 0.510826) / 2
                            (A([[1, 0], [0, 1]]), A([[0.5, 0.3], [0.0, 0.6]]), {"renormalise": False}, 0.6019864)],
    "accuracy": [(A([1, 2, 3, 4]), A([1, 2, 0, 4]), {}, 0.75),
                 (A([3, 1]), A([3.0, 1.0]), {}, 1.0),
                 (A(["x", "y"]), A(["x", "z"]), {}, 0.5)],
    # O = [[1,1],[0,2]], E = [[0.5,1.5],[0.5,1.5]], W = [[0,1],[1,0]] -> 1 - 1/2
    "quadratic_weighted_kappa": [(A([0, 0, 1, 1]), A([0, 1, 1, 1]), {}, 0.5), (A([0, 1, 2]), A([0, 1, 2]), {}, 1.0)],
    # one true positive, one false positive, one false negative -> P = R = 0.5
    "f1": [(A([1, 1, 0, 0]), A([1, 0, 1, 0]), {}, 0.5),
           # macro: class a F1 = 2/3 (P 1, R 1/2), class b F1 = 2/3 (P 1/2, R 1) -> 2/3
           (A(["a", "a", "b"]), A(["a", "b", "b"]), {"average": "macro"}, 2 / 3)],
    # hit at rank 1 -> 1; hit at rank 2 -> 1/2; outside k=2 -> 0: mean (1 + 0.5 + 0) / 3
    "map_at_k": [(A(["a", "b", "c"]), A(["a b c", "a b c", "a b c"]), {"k": 2}, 0.5),
                 # MLE-bench's rule: "a a b" truncated to "a a", the repeat uses up rank 2: 1/1 / min(2, 2) = .5;
                 # "x c": 1/2 -> mean .5 (deduplicated first it would be (1 + .5) / 2)
                 (A(["a b", "c"]), A(["a a b", "x c"]), {"k": 2, "truncate_first": True}, 0.5),
                 (A(["a b", "c"]), A(["a a b", "x c"]), {"k": 2}, 0.75)],
    # sqrt((0 + 0 + 4) / 3)
    "rmse": [(A([1, 2, 3]), A([1, 2, 5]), {}, math.sqrt(4 / 3))],
    # log1p values [0, 1] vs [1, 0]: sqrt((1 + 1) / 2) = 1
    "rmsle": [(A([0.0, math.e - 1]), A([math.e - 1, 0.0]), {}, 1.0)],
    # 100 * mean(2|f - a| / (|a| + |f|)): 2*10/210, 2*50/50, and 0/0 counting 0
    "smape": [(A([100.0, 50.0, 0.0]), A([110.0, 0.0, 0.0]), {}, 100 * (20 / 210 + 2) / 3)],
    # column 1: 1.0 (as above); column 2 identical: 0 -> mean 0.5
    "mean_columnwise_rmsle": [(A([[0.0, 1.0], [math.e - 1, 2.0]]), A([[math.e - 1, 1.0], [0.0, 2.0]]), {}, 0.5)],
    # (1 + 0 + 2) / 3
    "mae": [(A([1, 2, 3]), A([2, 2, 5]), {}, 1.0),
            # rows with u_out = 0 only: (1 + 3 + 0) / 3
            (A([1, 2, 3, 4]), A([2, 2, 6, 4]),
             {"answers": pd.DataFrame({"u_out": [0, 1, 0, 0]}), "mask_column": "u_out"}, 4 / 3),
            # 2.5 rounds to 2 and 3.5 to 4 (Python's round: ties to even)
            (A([0, 0]), A([2, 3]), {"round_to_int": True}, 2.0),
            (A([0, 0]), A([3, 4]), {"round_to_int": True}, 4.0)],
    # column 1 same order (+1), column 2 reversed (-1) -> 0
    "mean_columnwise_spearman": [(A([[1, 1], [2, 2], [3, 3]]), A([[10, 3], [20, 2], [30, 1]]), {}, 0.0)],
    # {a,b,c} vs {a,b,d}: 2 / 4; two empty strings: 0.5 by convention; case is ignored: 1 -> mean 2/3
    "word_jaccard": [(A(["a b c", "", "Hello"]), A(["a b d", "", "hello"]), {}, (0.5 + 0.5 + 1) / 3)],
    # kitten -> sitting: 3 edits; "" -> "abc": 3 -> mean 3
    "levenshtein": [(A(["kitten", ""]), A(["sitting", "abc"]), {}, 3.0)],
    # vocabulary {a, b, c}, x ignored: row 1 TP a, FN b; row 2 TP c, FP b; row 3 FP a -> TP 2, FP 2, FN 1:
    # 2*2 / (2*2 + 2 + 1) = 4/7
    "multilabel_micro_f1": [(A(["a b", "c", ""]), A(["a x", "c b", "a"]), {}, 4 / 7)],
    # row 1: "b a c" has ranks [1, 0, 2] in "a b c", 1 inversion, n(n-1) = 6; row 2: 0 of 2 -> 1 - 4*1/8
    "kendall_tau_pooled": [(A(["a b c", "x y"]), A(["b a c", "x y"]), {}, 0.5)],
    # ROC (0,0) (0,.5) (.5,.5) (.5,1) (1,1) plus (0,.4) inserted; band [0,.4] closed at (1,.4): area .4 x 2;
    # band [.4,1] shifted down .4: .5*.1 + .5*.6 = .35 x 1 -> (0.8 + 0.35) / (.4*2 + .6*1) = 1.15 / 1.4
    "weighted_auc_tpr_bands": [(A([0, 0, 1, 1]), A([0.1, 0.4, 0.35, 0.8]), {}, 1.15 / 1.4)],
    # overall AUC 7/9; identity g (0.5 counts, NaN does not): subgroup 1/2, BPSN 1, BNSP 3/4; identity h:
    # subgroup 1, BPSN 3/4, BNSP 1; power means (p = -5) over the two identities, each weighted 0.25
    "jigsaw_bias_auc": [(A([1, 0, 1, 0, 1, 0.0]), A([0.9, 0.7, 0.3, 0.2, 0.8, 0.4]),
                         {"answers": pd.DataFrame({"g": [0.9, 0.6, 0.5, 0.2, np.nan, 0.0], "h": [0, 1, 0, 1, 1, 0]}),
                          "identity_columns": ["g", "h"]},
                         0.25 * (7 / 9 + ((0.5**-5 + 1) / 2) ** (-1 / 5) + 2 * ((1 + 0.75**-5) / 2) ** (-1 / 5)))],
    # deviations from the means 2.5: [-1.5, -.5, .5, 1.5] and [-.5, -1.5, 1.5, .5]: 3 / sqrt(5 * 5)
    "pearson": [(A([1, 2, 3, 4]), A([2, 1, 4, 3]), {}, 0.6)],
    # TP 2, TN 1, FP 1, FN 1: (2*1 - 1*1) / sqrt(3 * 3 * 2 * 2) = 1/6 (1.0 and 1 are the same label)
    "mcc": [(A([1, 1, 0, 0, 1]), A([1.0, 0, 0, 1, 1]), {}, 1 / 6)],
    # votes -> [.5, .5, 0] and [0, 0, 1]: .5 ln(.5/.25) + .5 ln(.5/.5) = .5 ln 2; ln(1/.5) = ln 2 -> mean .75 ln 2
    "kl_divergence": [(A([[1, 1, 0], [0, 0, 3]]), A([[0.25, 0.5, 0.25], [0.2, 0.3, 0.5]]), {}, 0.75 * math.log(2))],
    # type a: MAE (1 + 0)/2 = .5; type b: (0 + 6)/2 = 3 -> (ln .5 + ln 3) / 2 = ln(1.5) / 2
    "grouped_log_mae": [(A([1, 2, 3, 10]), A([2, 2, 3, 16]), {"answers": pd.DataFrame({"type": list("aabb")})},
                         math.log(1.5) / 2)],
    # rows: d 100, s 100: -sqrt2 - ln(100 sqrt2) = -6.365957; d 0, s max(50, 70): -ln(70 sqrt2) = -4.595069;
    # d min(2000, 1000), NaN sigma -> 70: -1000 sqrt2 / 70 - ln(70 sqrt2) = -24.798120 -> mean -11.919715
    "laplace_log_likelihood": [(A([2000, 2500, 3000.0]), A([[2100, 100], [2500, 50], [1000, np.nan]]), {}, -11.919715),
                               # only the scored rows 1 and 3: (-6.365957 - 24.798120) / 2
                               (A([2000, 2500, 3000.0]), A([[2100, 100], [2500, 50], [1000, np.nan]]),
                                {"answers": pd.DataFrame({"scored": [True, False, True]}), "mask_column": "scored"},
                                -15.582039)],
    # keep rows 1, 2; column a: errors 1, 2 -> sqrt(5/2); column c: 0, 3 -> sqrt(9/2); b is not scored
    "masked_mcrmse": [(A([[1, 0, 5], [3, 0, 5], [100, 100, 100.0]]), A([[2, 9, 5], [1, 9, 8], [0, 0, 0.0]]),
                       {"classes": ["a", "b", "c"], "answers": pd.DataFrame({"keep": [True, True, False]}),
                        "score_columns": ["a", "c"]}, (math.sqrt(2.5) + math.sqrt(4.5)) / 2)],
    # d = 6371000 m x radians(0.001); trip a: distances [0, d, 2d]: P50 d, P95 (position 1.9) 1.9d -> 1.45d;
    # trip b: d -> (1.45d + d) / 2
    "haversine_p50_p95": [(A([[0, 0], [0, 0], [0, 0], [10, 20]]), A([[0, 0], [0, 0.001], [0, 0.002], [10.001, 20]]),
                           {"answers": pd.DataFrame({"tripId": list("aaab")})}, 1.225 * 6371000 * math.radians(0.001))],
    # [1,2,3] -> [1,3]: 1; [4,5] -> [4,5,6] ("05" is 5): 1 -> 2 / 5 true tokens
    "sequence_edit_rate": [(A(["1 2 3", "4 5"]), A(["1 3", "4 05 6"]), {}, 0.4)],
    # page 1: box A takes "A 5 5" (TP), box B has no point inside (FN), "A 6 6" and "B 30 30" unused (FP 2);
    # page 2: FP 1; page 3: FN 1; page 4: x = 10 is on the edge, not inside (FN 1, FP 1) -> TP 1, FP 4, FN 3:
    # P 1/5, R 1/4 -> 2 * (1/20) / (9/20) = 2/9
    "point_in_box_f1": [(A(["A 0 0 10 10 B 20 20 5 5", "", "D 0 0 4 4", "E 0 0 10 10"]),
                         A(["A 5 5 A 6 6 B 30 30", "C 1 1", "", "E 10 5"]), {}, 2 / 9)],
    # negative: pairs (1, .9) and (0, 0): AP 1; opacity: (0, 0), then (0, .7) above (1, .6): AP 1/2;
    # typical is no class of the answers -> 0.75
    "siim_map": [(A(["negative 1 0 0 1 1", "opacity 1 0 0 10 10"]),
                  A(["negative 0.9 0 0 1 1 typical 0.8 0 0 1 1", "opacity 0.6 0 0 10 10 opacity 0.7 50 50 60 60"]),
                  {"iou_threshold": 0.5}, 0.75)],
    # class 3: one of two boxes at precision 1 (51 of COCO's 101 recall points); class 14 found -> mean
    "coco_map": [(A(["3 1.0 10 10 50 50", "3 1.0 60 60 90 90 14 1.0 0 0 1 1"]),
                  A(["3 0.9 10 10 50 50", "14 0.5 0 0 1 1"]),
                  {"iou_thresholds": [0.4], "max_detections": 100, "boxes_as_xywh": True}, (51 / 101 + 1) / 2)],
    # 2 x 4 x 2 boxes 1 m apart: overlap 3 x 2 x 2 = 12, union 20: IoU 0.6 is above 2 of the 10 thresholds
    "lyft_3d_map": [(A(["1.0 0 0 0 2 4 2 0 car"]), A(["0.5 1 0 0 2 4 2 0 car"]), {}, 0.2)],
    # RLE masks in a 2 x 5 image: pixels 1-4 vs 2-5 share 3: Dice 6/8; both empty: 1 -> mean 0.875;
    # pooled over both images: 2 * 3 / 8 = 0.75
    "rle_dice": [(A(["1 4", ""]), A(["2 4", "-"]), {"shape": [2, 5]}, 0.875),
                 (A(["1 4", ""]), A(["2 4", "-"]), {"mode": "global", "shape": [2, 5]}, 0.75)],
    # IoU 3/4 beats 0.5 ... 0.7 (5 of 10); a truth-free image predicted empty: 1 -> mean 0.75
    "iou_sweep_precision_rle": [(A(["1 4", ""]), A(["1 3", ""]), {"shape": [2, 5]}, 0.75)],
    # TP 2, FP 1, FN 2: P 2/3, R 1/2 -> 1.25 P R / (0.25 P + R) = 0.625
    "pixel_fbeta_rle": [(A(["1 4"]), A(["3 3"]), {"beta": 0.5, "order": "C", "shape": [3, 3]}, 0.625)],
    # directions (azimuth, zenith): the x and y axes are pi/2 apart; at the pole (zenith 0) azimuth is moot: 0
    "mean_angular_error": [(A([[0.0, math.pi / 2], [0.3, 0.0]]), A([[math.pi / 2, math.pi / 2], [2.9, 0.0]]),
                            {"classes": ["azimuth", "zenith"]}, math.pi / 4)],
    # 2 x 2 images, one volume of 2 slices: Dice 1 (same pixel) and 0 (a pixel where the truth is empty): 0.5;
    # the extra voxel (1, 1, 1) is sqrt(3) / 2 from (0, 0, 0) in the unit cube, over sqrt(3): 0.5
    # -> 0.4 * 0.5 + 0.6 * (1 - 0.5)
    # first tokens 3, 2, 1 ("07"-style tokens are integers too) against 3, 7, 1: one wrong -> 1/3
    "classification_error": [(A([3, 7, 1]), A(["3 5", "2", "1 7 9"]), {}, 1 / 3)],
    # 1.5 clipped to 1: cTP 0.8 + 0.6 = 1.4, cFP 0.4 + 1 = 1.4: P 0.5, R 1.4 / 2 = 0.7 -> 2 P R / (P + R) = 0.7 / 1.2
    "probabilistic_fbeta": [(A([1, 0, 1, 0]), A([0.8, 0.4, 0.6, 1.5]), {"beta": 1.0}, 0.7 / 1.2)],
    # study s1: (14 ln 2 + 1 ln 2) / (14 + 1) = ln 2; s2: 7 (-ln 0.1) / 7 = ln 10 -> (ln 2 + ln 10) / 2
    "weighted_multilabel_log_loss": [(A([1, 0, 0]), A([0.5, 0.5, 0.9]), {
        "answers": pd.DataFrame({"study": ["s1", "s1", "s2"], "label": ["overall", "C1", "overall"]}),
        "group_column": "study", "label_column": "label", "positive_weights": {"overall": 14, "C1": 2},
        "negative_weights": {"overall": 7, "C1": 1}}, (math.log(2) + math.log(10)) / 2)],
    # row 1: labels 0 and 2 at ranks 1 and 3: precisions 1 and 2/3 (weight 2); row 2: label 1 ranked below
    # both others: 1/3 (weight 1); row 3 has no true label: left out -> (2 x 5/6 + 1/3) / 3 = 2/3
    "lwlrap": [(A([[1, 0, 1], [0, 1, 0], [0, 0, 0]]), A([[0.9, 0.8, 0.1], [0.2, 0.1, 0.3], [0.5, 0.5, 0.5]]), {},
                2 / 3)],
    # a valid span; empty for a row without answer; NO for YES; empty for a row with one -> 2 of 4;
    # with na_is_empty, "nan" is the empty answer of row 2
    "nq_answer_accuracy": [(A(["5:10 7:9", "", "YES", "3:4"]), A(["7:9", "", "NO", ""]), {}, 0.5),
                           (A(["5:10", ""]), A(["5:10", "nan"]), {"na_is_empty": True}, 1.0)],
    "dice_hausdorff_3d": [(A(["1 1", ""], dtype=object), A(["1 1", "4 1"], dtype=object),
                           {"answers": pd.DataFrame({"id": ["c1_day1_slice_0001", "c1_day1_slice_0002"],
                                                     "image_height": [2, 2], "image_width": [2, 2]})}, 0.5)],
}


def test_every_metric_has_hand_computed_cases() -> None:
    assert set(CASES) == set(METRICS)


@pytest.mark.parametrize(("name", "case"), [(n, c) for n, cases in CASES.items() for c in cases])
def test_metric_value(name: str, case: tuple) -> None:
    y_true, y_pred, params, expected = case
    assert get_metric(name)(y_true, y_pred, **params) == pytest.approx(expected, abs=1e-6)


def test_directions() -> None:
    lower = {n for n, m in METRICS.items() if m.lower_is_better}
    assert lower == {"log_loss", "multiclass_log_loss", "rmse", "rmsle", "mean_columnwise_rmsle", "mae", "levenshtein",
                     "kl_divergence", "grouped_log_mae", "masked_mcrmse", "haversine_p50_p95", "sequence_edit_rate",
                     "mean_angular_error", "classification_error", "weighted_multilabel_log_loss", "smape"}


def test_unknown_metric_suggests() -> None:
    with pytest.raises(KeyError, match="did you mean auc"):
        get_metric("aucc")


def test_levenshtein_symmetric() -> None:
    assert levenshtein_distance("flaw", "lawn") == levenshtein_distance("lawn", "flaw") == 2


def test_multiclass_log_loss_rejects_labels_without_a_column() -> None:
    with pytest.raises(ValueError, match="no submission column"):
        get_metric("multiclass_log_loss")(A(["c"]), A([[0.5, 0.5]]), classes=["a", "b"])


def test_log_losses_with_mlebench_params_equal_scikit_learn() -> None:
    """The Lite competitions' log-loss params reproduce MLE-bench's scikit-learn calls exactly."""
    import warnings

    from sklearn.metrics import log_loss

    rng = np.random.default_rng(0)
    eps = float(np.finfo(np.float64).eps)
    probs = rng.dirichlet(np.ones(4), 50)
    probs[0] = [1.0, 0.0, 0.0, 0.0]  # a confident mistake or hit, where the clipping matters
    labels = rng.integers(0, 4, 50)
    onehot = np.eye(4)[labels]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn renames y_pred to y_proba in 1.9
        expected = log_loss(onehot, probs)
        binary_expected = log_loss(labels % 2, probs[:, 0])
    ours = get_metric("multiclass_log_loss")(onehot, probs, eps=eps, renormalise=False)
    assert ours == pytest.approx(expected, abs=1e-12)
    assert get_metric("log_loss")(labels % 2, probs[:, 0], eps=eps) == pytest.approx(binary_expected, abs=1e-12)


def test_label_metrics_on_codes_equal_scikit_learn_on_the_texts_bit_for_bit() -> None:
    """accuracy, f1 and mcc score integer codes of the labels (fast); the codes must give exactly what
    scikit-learn gives on the labels as text: the same labels equal, and the same label order (text order,
    so "10" before "9"), which fixes the order of the per-class terms in the mean."""
    from sklearn.metrics import f1_score, matthews_corrcoef

    from mle_env.grading.metrics.registry import label_codes, normalise_labels

    rng = np.random.default_rng(3)
    names = A(["é", "e", "Z", "a", "10", "9", "09"], dtype=object)
    for n_classes in (2, 3, 12, 150):
        truth = rng.integers(0, n_classes, 400)
        guess = np.where(rng.uniform(size=400) < 0.6, truth, rng.integers(0, n_classes + 3, 400))
        for y_true, y_pred in [
            (truth, guess), (truth.astype(float), guess), (truth.astype(str).astype(object), guess),
            (truth, A([f"{v}.0" if v % 3 == 0 else str(v) for v in guess], dtype=object)),
            (truth + 0.5 * (truth == 1), guess), (names[truth % 7], names[guess % 7]),
        ]:
            texts_true, texts_pred = normalise_labels(y_true), normalise_labels(y_pred)
            codes_true, codes_pred = label_codes(y_true, y_pred)
            assert ((codes_true[:, None] == codes_pred[None, :]) == (texts_true[:, None] == texts_pred[None, :])).all()
            assert get_metric("accuracy")(y_true, y_pred) == float(np.mean(texts_true == texts_pred))
            for average in ("macro", "micro", "weighted"):
                assert get_metric("f1")(y_true, y_pred, average=average) == f1_score(texts_true, texts_pred,
                                                                                     average=average)
            assert get_metric("mcc")(y_true, y_pred) == matthews_corrcoef(texts_true, texts_pred)


def test_lwlrap_equals_scikit_learn_bit_for_bit() -> None:
    """lwlrap does scikit-learn's label-ranking average precision for all rows at once: the same number to
    the last bit, ties, rows of every label and of over 8 labels (numpy's pairwise sums) included."""
    from sklearn.metrics import label_ranking_average_precision_score

    from mle_env.grading.metrics import ranking

    rng = np.random.default_rng(5)
    for trial in range(150):
        n, k = int(rng.integers(1, 50)), int(rng.integers(1, 30))
        truth = rng.random((n, k)) < [0.05, 0.2, 0.5, 0.9][trial % 4]
        truth[int(rng.integers(n))] = trial % 3 == 0  # a row of every label, or of none
        scores = [rng.random((n, k)), np.round(rng.random((n, k)), 1), rng.integers(0, 3, (n, k)) * 1.0][trial % 3]
        weights = truth.sum(axis=1)
        rows = np.flatnonzero(weights > 0)
        if not len(rows):
            continue
        expected = label_ranking_average_precision_score(truth[rows], scores[rows], sample_weight=weights[rows])
        assert get_metric("lwlrap")(truth.astype(int), scores) == expected, trial
        assert ranking._weighted_lrap(truth[rows], scores[rows], weights[rows]) == expected, trial
    with pytest.raises(ValueError, match="finite"):
        get_metric("lwlrap")(A([[1, 0]]), A([[0.5, np.nan]]))
