"""Metrics on text and token sequences."""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np
from rapidfuzz.distance import Levenshtein

from mle_env.grading.metrics.registry import InvalidPrediction, register_metric, text

# insertion, deletion, substitution: each costs 1
_UNIT_WEIGHTS = (1, 1, 1)


def _jaccard(a: str, b: str) -> float:
    left, right = set(a.lower().split()), set(b.lower().split())
    if not left and not right:
        return 0.5  # Kaggle's convention for two empty strings
    common = len(left & right)
    return common / (len(left) + len(right) - common)


@register_metric("word_jaccard", lower_is_better=False)
def word_jaccard(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Mean word-level Jaccard similarity (lower-cased, split on whitespace)."""
    pairs = zip(np.ravel(y_true), np.ravel(y_pred), strict=True)
    return float(np.mean([_jaccard(text(t), text(p)) for t, p in pairs]))


def levenshtein_distance(a: str | Sequence[Hashable], b: str | Sequence[Hashable]) -> int:
    """Edit distance between two strings (or token sequences): insertions, deletions and substitutions
    each cost 1 (rapidfuzz, in C)."""
    return int(Levenshtein.distance(a, b, weights=_UNIT_WEIGHTS))


#: the cells pandas.read_csv reads as missing by default
PANDAS_NA_TEXTS = frozenset({"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
                             "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"})


@register_metric("levenshtein", lower_is_better=True)
def mean_levenshtein(y_true: np.ndarray, y_pred: np.ndarray, *, missing_as: str | None = None) -> float:
    """Mean character-level Levenshtein distance between answer and prediction strings (NaN reads as "").

    ``missing_as``: when set, a cell that pandas reads as missing by default (:data:`PANDAS_NA_TEXTS`: empty,
    "NA", "nan", "None", "null", ...) is scored as this text; MLE-bench's bms grader reads submissions with
    pandas and casts them to text, so there such a cell is "nan". None (default): cells are scored as written.
    """
    def cell(value: object) -> str:
        value = text(value)
        return missing_as if missing_as is not None and value in PANDAS_NA_TEXTS else value

    pairs = zip(np.ravel(y_true), np.ravel(y_pred), strict=True)
    return float(np.mean([levenshtein_distance(cell(t), cell(p)) for t, p in pairs]))


def _integers(cell: object, row: int) -> list[int]:
    try:
        return [int(token) for token in text(cell).split()]
    except ValueError:
        raise InvalidPrediction(f"row {row}: a sequence must be integers separated by spaces") from None


@register_metric("sequence_edit_rate", lower_is_better=True)
def sequence_edit_rate(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Sum over rows of the token-level Levenshtein distance / total number of true tokens (multi-modal
    gesture recognition); can exceed 1.

    Cells are whitespace-separated integers, compared as numbers (so "02" equals "2"); an empty cell is
    the empty sequence. A prediction token that is not an integer raises :class:`InvalidPrediction`;
    answers with no token at all raise ValueError (the rate is undefined).
    """
    distance = tokens = 0
    for row, (actual_cell, predicted_cell) in enumerate(zip(np.ravel(y_true), np.ravel(y_pred), strict=True), 1):
        actual = [int(token) for token in text(actual_cell).split()]
        distance += levenshtein_distance(actual, _integers(predicted_cell, row))
        tokens += len(actual)
    if tokens == 0:
        raise ValueError("sequence_edit_rate: the answers hold no token")
    return distance / tokens


_YES_NO = frozenset({"YES", "NO"})


def _nq_answer(token: str, row: int) -> tuple[int, int] | str:
    """A question-answering prediction or valid answer: "start:end" token offsets (compared as integers)
    or YES / NO; anything else raises :class:`InvalidPrediction`."""
    parts = token.split(":")
    if len(parts) == 2:
        try:
            return int(parts[0]), int(parts[1])
        except ValueError:
            pass
    elif token in _YES_NO:
        return token
    raise InvalidPrediction(f"row {row}: {token[:40]!r} is not 'start:end' (two integers), YES, NO or empty")


@register_metric("nq_answer_accuracy", lower_is_better=False)
def nq_answer_accuracy(y_true: np.ndarray, y_pred: np.ndarray, *, na_is_empty: bool = False) -> float:
    """Fraction of rows answered right (Natural Questions style): a row is right when its prediction is
    given and is one of the row's valid answers, or when it is empty and the row has no valid answer.

    Answer cells hold the valid answers separated by spaces ("start:end" token spans, YES, NO; empty: none).
    A prediction is one "start:end" span (two integers, compared as numbers), YES, NO, or empty (after
    stripping spaces); anything else raises :class:`InvalidPrediction`. This is MLE-bench's
    ``f1_score(average="micro")`` over its per-row 0/1 labels, which equals their accuracy.
    ``na_is_empty``: a prediction that pandas reads as missing by default (:data:`PANDAS_NA_TEXTS`: "nan",
    "NA", "None", ...) counts as empty, as in MLE-bench, which reads submissions with pandas.
    """
    right = 0
    cells = zip(np.ravel(y_true), np.ravel(y_pred), strict=True)
    for row, (actual_cell, predicted_cell) in enumerate(cells, 1):
        valid = {_nq_answer(token, row) for token in text(actual_cell).split()}
        raw = text(predicted_cell)
        predicted = "" if na_is_empty and raw in PANDAS_NA_TEXTS else raw.strip()
        right += (_nq_answer(predicted, row) in valid) if predicted else not valid
    return right / len(np.ravel(y_true))
