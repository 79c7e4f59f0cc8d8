"""Reference implementations of the medical group's metrics, from their definitions (plain Python and numpy,
never mle_env.grading or scikit-learn); merged into reference_metrics.REFERENCES. Same signature as every
reference there: ``fn(answers, submission, params) -> float`` with every cell as text."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd


def probabilistic_fbeta(answers: pd.DataFrame, submission: pd.DataFrame, params: Mapping[str, Any]) -> float:
    """Kaggle's pF-beta: soft true and false positives from the predictions clipped to [0, 1]."""
    beta = float(params.get("beta", 1.0))
    truth = [float(v) for v in answers.iloc[:, 0]]
    predicted = [min(max(float(v), 0.0), 1.0) for v in submission.iloc[:, 0]]
    positives = sum(1 for t in truth if t != 0)
    ctp = sum(p for t, p in zip(truth, predicted, strict=True) if t != 0)
    cfp = sum(p for t, p in zip(truth, predicted, strict=True) if t == 0)
    if positives == 0 or ctp + cfp == 0:
        return 0.0
    precision, recall = ctp / (ctp + cfp), ctp / positives
    if precision <= 0 or recall <= 0:
        return 0.0
    return (1 + beta**2) * precision * recall / (beta**2 * precision + recall)


def weighted_multilabel_log_loss(answers: pd.DataFrame, submission: pd.DataFrame, params: Mapping[str, Any]) -> float:
    """Per group: sum of weight * binary log loss over its rows / sum of weights (the weight by the row's
    label and truth); then the mean over groups. ``answers``: truth, group, label columns in that order."""
    eps = float(params.get("eps", 1e-15))
    sums: dict[str, list[float]] = {}
    rows = zip(answers.iloc[:, 0], answers[params["group_column"]], answers[params["label_column"]],
               submission.iloc[:, 0], strict=True)
    for truth, group, label, cell in rows:
        y, p = float(truth), min(max(float(cell), eps), 1 - eps)
        weight = float(params["positive_weights"][label] if y == 1 else params["negative_weights"][label])
        loss = -math.log(p) if y == 1 else -math.log(1 - p)
        total = sums.setdefault(group, [0.0, 0.0])
        total[0] += weight * loss
        total[1] += weight
    return sum(loss / weight for loss, weight in sums.values()) / len(sums)


REFERENCES_MEDICAL = {
    "probabilistic_fbeta": probabilistic_fbeta,
    "weighted_multilabel_log_loss": weighted_multilabel_log_loss,
}
