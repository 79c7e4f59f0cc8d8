"""Grader behaviour of jigsaw-unintended-bias and us-patent that the registry test cannot see: MLE-bench's
binarised jigsaw predictions, and the pearson metric's constant_score (a shared metric parameter)."""

import numpy as np
import pandas as pd
import pytest

from mle_env.competition.registry import get_spec
from mle_env.grading.metrics import get_metric

JIGSAW = get_spec("jigsaw-unintended-bias-in-toxicity-classification")
TOXIC = np.array([1.0, 0.0, 0.9, 0.2, 0.6, 0.0, 0.7, 0.1])


def jigsaw_answers() -> pd.DataFrame:
    identities = dict.fromkeys(JIGSAW.metric.params["identity_columns"], [1, 1, 0, 0, 1, 1, 0, np.nan])
    return pd.DataFrame({"toxicity": TOXIC, **identities})


def jigsaw_score(predictions: list[float], **override: object) -> float:
    params = {**JIGSAW.metric.params, **override}
    return get_metric("jigsaw_bias_auc")(TOXIC, np.array(predictions), answers=jigsaw_answers(), **params)


def test_jigsaw_spec_binarises_predictions_as_mlebench_does() -> None:
    assert JIGSAW.metric.params["binarize_predictions"] is True
    # only the side of 0.5 counts: a reordering within each side leaves the score unchanged
    ranked = [0.99, 0.01, 0.98, 0.02, 0.97, 0.03, 0.96, 0.04]
    shuffled = [0.51, 0.49, 0.6, 0.0, 0.8, 0.3, 0.55, 0.45]
    assert jigsaw_score(ranked) == jigsaw_score(shuffled) == pytest.approx(1.0)
    # one toxic comment below 0.5: a two-point ROC curve, lower than Kaggle's continuous score
    near_miss = [0.99, 0.01, 0.98, 0.02, 0.97, 0.03, 0.45, 0.04]
    assert jigsaw_score(near_miss) < jigsaw_score(near_miss, binarize_predictions=False) == pytest.approx(1.0)


def test_pearson_constant_score_replaces_nan() -> None:
    pearson = get_metric("pearson")
    assert get_spec("us-patent-phrase-to-phrase-matching").metric.params == {"constant_score": 0.0}
    truth = np.array([0.0, 0.5, 1.0, 0.25])
    assert pearson(truth, np.zeros(4), constant_score=0.0) == 0.0
    with pytest.warns(RuntimeWarning):  # scipy's ConstantInputWarning
        assert np.isnan(pearson(truth, np.zeros(4)))
    assert pearson(truth, 2 * truth + 1, constant_score=0.0) == pytest.approx(1.0)
