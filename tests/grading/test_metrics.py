"""Every registered metric against values computed by hand (the arithmetic is in each comment)."""

import math

import numpy as np
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
    "map_at_k": [(A(["a", "b", "c"]), A(["a b c", "a b c", "a b c"]), {"k": 2}, 0.5)],
    # sqrt((0 + 0 + 4) / 3)
    "rmse": [(A([1, 2, 3]), A([1, 2, 5]), {}, math.sqrt(4 / 3))],
    # log1p values [0, 1] vs [1, 0]: sqrt((1 + 1) / 2) = 1
    "rmsle": [(A([0.0, math.e - 1]), A([math.e - 1, 0.0]), {}, 1.0)],
    # column 1: 1.0 (as above); column 2 identical: 0 -> mean 0.5
    "mean_columnwise_rmsle": [(A([[0.0, 1.0], [math.e - 1, 2.0]]), A([[math.e - 1, 1.0], [0.0, 2.0]]), {}, 0.5)],
    # (1 + 0 + 2) / 3
    "mae": [(A([1, 2, 3]), A([2, 2, 5]), {}, 1.0)],
    # column 1 same order (+1), column 2 reversed (-1) -> 0
    "mean_columnwise_spearman": [(A([[1, 1], [2, 2], [3, 3]]), A([[10, 3], [20, 2], [30, 1]]), {}, 0.0)],
    # {a,b,c} vs {a,b,d}: 2 / 4; two empty strings: 0.5 by convention; case is ignored: 1 -> mean 2/3
    "word_jaccard": [(A(["a b c", "", "Hello"]), A(["a b d", "", "hello"]), {}, (0.5 + 0.5 + 1) / 3)],
    # kitten -> sitting: 3 edits; "" -> "abc": 3 -> mean 3
    "levenshtein": [(A(["kitten", ""]), A(["sitting", "abc"]), {}, 3.0)],
}


def test_every_metric_has_hand_computed_cases() -> None:
    assert set(CASES) == set(METRICS)


@pytest.mark.parametrize(("name", "case"), [(n, c) for n, cases in CASES.items() for c in cases])
def test_metric_value(name: str, case: tuple) -> None:
    y_true, y_pred, params, expected = case
    assert get_metric(name)(y_true, y_pred, **params) == pytest.approx(expected, abs=1e-6)


def test_directions() -> None:
    lower = {n for n, m in METRICS.items() if m.lower_is_better}
    assert lower == {"log_loss", "multiclass_log_loss", "rmse", "rmsle", "mean_columnwise_rmsle", "mae", "levenshtein"}


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
