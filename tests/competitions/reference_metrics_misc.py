"""Reference metrics of the misc group (tensorflow2-question-answering, freesound-audio-tagging-2019), written
from their definitions in plain Python and numpy (see reference_metrics.py for the calling convention)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

#: what pandas.read_csv reads as missing by default (MLE-bench reads submissions so)
_PANDAS_MISSING = {"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>",
                   "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"}


def _nq_token(token: str) -> object:
    """ "a:b" as the pair of integers, YES / NO as themselves."""
    if token in ("YES", "NO"):
        return token
    start, end = token.split(":")
    return int(start), int(end)


def nq_answer_accuracy(answers: pd.DataFrame, submission: pd.DataFrame, params: Mapping[str, Any]) -> float:
    """Per row: y_pred = 1 when a prediction is given; y_true = 1 when (given and among the valid answers) or
    (blank and some valid answer exists); the score is the micro F1 of those labels, i.e. the share of rows
    where y_true == y_pred."""
    y_true, y_pred = [], []
    for valid_cell, cell in zip(answers.iloc[:, 0], submission.iloc[:, 0], strict=True):
        valid = [_nq_token(t) for t in str(valid_cell).split()]
        cell = "" if params.get("na_is_empty") and cell in _PANDAS_MISSING else str(cell).strip()
        given = cell != ""
        y_pred.append(int(given))
        y_true.append(int(_nq_token(cell) in valid) if given else int(bool(valid)))
    # micro F1 over the two classes: TP summed over classes = matching rows, FP = FN = the others
    matches = sum(t == p for t, p in zip(y_true, y_pred, strict=True))
    return 2 * matches / (2 * matches + 2 * (len(y_true) - matches))


def lwlrap(answers: pd.DataFrame, submission: pd.DataFrame, params: Mapping[str, Any]) -> float:
    """Label-weighted label-ranking average precision: every true label of every row counts once; it scores
    the share of true labels among the labels ranked at or above it (ties included); the mean over all true
    labels. Rows without a true label add nothing."""
    truth = answers.astype(float).to_numpy() > 0
    scores = submission.astype(float).to_numpy()
    total, count = 0.0, 0
    for labels, row in zip(truth, scores, strict=True):
        for j in np.flatnonzero(labels):
            at_or_above = row >= row[j]
            total += labels[at_or_above].sum() / at_or_above.sum()
            count += 1
    return total / count


REFERENCES_MISC = {
    "nq_answer_accuracy": nq_answer_accuracy,
    "lwlrap": lwlrap,
}
