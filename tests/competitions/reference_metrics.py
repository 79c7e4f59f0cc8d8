"""Metrics recomputed from their definitions, to check the grader's scores against.

Written with plain numpy and Python from each metric's textbook (and Kaggle's) definition, never calling
``mle_env.grading`` or scikit-learn, so a bug in the library's metric cannot hide in its check.

Every reference is ``fn(answers, submission, params) -> float``:

- ``answers``: the answer columns of the private answers file (the spec's ``answer_columns``, else its
  target columns), every cell as text, exactly as written;
- ``submission``: the submission's target columns, every cell as text, in the same row order as
  ``answers`` (the caller aligns rows by id: alignment is not part of a metric);
- ``params``: the spec's ``[metric.params]``.

To cover a new metric, add one function below and one entry to ``REFERENCES`` (keyed by the metric's
registry name).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

Reference = Callable[[pd.DataFrame, pd.DataFrame, Mapping[str, Any]], float]

_BOOLEANS = {"true": 1.0, "false": 0.0}


def _number(cell: object) -> float:
    text = str(cell).strip()
    return _BOOLEANS[text.lower()] if text.lower() in _BOOLEANS else float(text)


def numbers(frame: pd.DataFrame) -> np.ndarray:
    """Cells as floats (``True``/``False`` as 1/0), shape (rows, columns)."""
    return np.array([[_number(v) for v in row] for row in frame.to_numpy()], dtype=float).reshape(frame.shape)


def _same_label(a: str, b: str) -> bool:
    """Labels are equal as text, or as numbers when both are numbers (3 and 3.0)."""
    try:
        return float(a) == float(b)
    except ValueError:
        return a == b


def _roc_auc(labels: np.ndarray, scores: np.ndarray) -> float:
    """P(score of a random positive > score of a random negative), ties counting 1/2 (Mann-Whitney U)."""
    positive = labels == labels.max()
    values, inverse, counts = np.unique(scores, return_inverse=True, return_counts=True)
    midrank = np.cumsum(counts) - (counts - 1) / 2  # 1-based rank of each distinct score, ties averaged
    ranks = midrank[inverse]
    n_pos, n_neg = int(positive.sum()), int((~positive).sum())
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


# --- one function per metric -------------------------------------------------------------------------
def auc(answers: pd.DataFrame, submission: pd.DataFrame, params: Mapping[str, Any]) -> float:
    """ROC AUC of all cells taken together (several columns are flattened into one ranking)."""
    return _roc_auc(numbers(answers).ravel(), numbers(submission).ravel())


def mean_columnwise_auc(answers: pd.DataFrame, submission: pd.DataFrame, params: Mapping[str, Any]) -> float:
    """Mean over columns of ROC AUC, leaving out rows whose answer is ``params["ignore_label"]``."""
    y, p = numbers(answers), numbers(submission)
    ignore = params.get("ignore_label")
    scores = []
    for j in range(y.shape[1]):
        keep = np.ones(len(y), bool) if ignore is None else y[:, j] != float(ignore)
        scores.append(_roc_auc(y[keep, j], p[keep, j]))
    return sum(scores) / len(scores)


def log_loss(answers: pd.DataFrame, submission: pd.DataFrame, params: Mapping[str, Any]) -> float:
    """Binary cross-entropy, probabilities clipped to [eps, 1 - eps]."""
    eps = params.get("eps", 1e-15)
    total, n = 0.0, 0
    for y, p in zip(numbers(answers).ravel(), numbers(submission).ravel(), strict=True):
        p = min(max(p, eps), 1 - eps)
        total -= y * math.log(p) + (1 - y) * math.log(1 - p)
        n += 1
    return total / n


def multiclass_log_loss(answers: pd.DataFrame, submission: pd.DataFrame, params: Mapping[str, Any]) -> float:
    """Mean over rows of -log(probability given to the true class); probabilities are clipped to
    [eps, 1 - eps] and, unless ``renormalise`` is false, each row is then divided by its sum. The answers
    are one label per row (matched against the submission's column names) or one column per class."""
    eps, renormalise = params.get("eps", 1e-15), params.get("renormalise", True)
    classes = list(submission.columns)
    total = 0.0
    for i, row in enumerate(numbers(submission)):
        clipped = [min(max(p, eps), 1 - eps) for p in row]
        norm = sum(clipped) if renormalise else 1.0
        if answers.shape[1] == 1:
            true = [classes.index(str(answers.iloc[i, 0]))]
        else:
            true = [classes.index(c) for c in answers.columns if float(answers.iloc[i][c]) == 1.0]
        total -= sum(math.log(clipped[k] / norm) for k in true)
    return total / len(submission)


def accuracy(answers: pd.DataFrame, submission: pd.DataFrame, params: Mapping[str, Any]) -> float:
    """Fraction of cells predicted exactly."""
    pairs = list(zip(answers.to_numpy().ravel(), submission.to_numpy().ravel(), strict=True))
    return sum(_same_label(str(a), str(b)) for a, b in pairs) / len(pairs)


def quadratic_weighted_kappa(answers: pd.DataFrame, submission: pd.DataFrame, params: Mapping[str, Any]) -> float:
    """Cohen's kappa with weights (i - j)^2, i and j indexing the sorted labels seen in either column
    (as MLE-bench's scikit-learn call does): 1 - sum(w * observed) / sum(w * expected by chance)."""
    y = [int(v) for v in numbers(answers).ravel()]
    p = [int(v) for v in numbers(submission).ravel()]
    labels = sorted(set(y) | set(p))
    index = {v: k for k, v in enumerate(labels)}
    k = len(labels)
    observed = np.zeros((k, k))
    for a, b in zip(y, p, strict=True):
        observed[index[a], index[b]] += 1
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / len(y)
    weights = np.array([[(i - j) ** 2 for j in range(k)] for i in range(k)], dtype=float)
    return float(1 - (weights * observed).sum() / (weights * expected).sum())


def rmse(answers: pd.DataFrame, submission: pd.DataFrame, params: Mapping[str, Any]) -> float:
    """Root mean squared error over all cells."""
    diff = numbers(answers).ravel() - numbers(submission).ravel()
    return math.sqrt(sum(d * d for d in diff) / len(diff))


def _rmsle(y: np.ndarray, p: np.ndarray) -> float:
    terms = [(math.log(1 + b) - math.log(1 + a)) ** 2 for a, b in zip(y, p, strict=True)]
    return math.sqrt(sum(terms) / len(terms))


def rmsle(answers: pd.DataFrame, submission: pd.DataFrame, params: Mapping[str, Any]) -> float:
    """Root mean squared error of log(1 + value), over all cells."""
    return _rmsle(numbers(answers).ravel(), numbers(submission).ravel())


def mean_columnwise_rmsle(answers: pd.DataFrame, submission: pd.DataFrame, params: Mapping[str, Any]) -> float:
    """Mean over columns of RMSLE."""
    y, p = numbers(answers), numbers(submission)
    return sum(_rmsle(y[:, j], p[:, j]) for j in range(y.shape[1])) / y.shape[1]


def word_jaccard(answers: pd.DataFrame, submission: pd.DataFrame, params: Mapping[str, Any]) -> float:
    """Mean over rows of |A & B| / |A | B| for the lower-cased whitespace-split word sets of answer and
    prediction; a row where both sets are empty scores 0.5 (Kaggle's convention)."""
    scores = []
    for a, b in zip(answers.to_numpy().ravel(), submission.to_numpy().ravel(), strict=True):
        left, right = set(str(a).lower().split()), set(str(b).lower().split())
        scores.append(len(left & right) / len(left | right) if left | right else 0.5)
    return sum(scores) / len(scores)


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    dx, dy = x - x.mean(), y - y.mean()
    return float((dx * dy).sum() / math.sqrt((dx * dx).sum() * (dy * dy).sum()))


def pearson(answers: pd.DataFrame, submission: pd.DataFrame, params: Mapping[str, Any]) -> float:
    """Pearson's r of all cells; ``params["constant_score"]`` when either side is constant."""
    x, y = numbers(answers).ravel(), numbers(submission).ravel()
    if params.get("constant_score") is not None and (len(set(x)) == 1 or len(set(y)) == 1):
        return float(params["constant_score"])
    return _pearson(x, y)


def _midranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks, ties sharing the mean of the ranks they span."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = np.empty(len(values))
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for k in range(start, end + 1):
            ranks[order[k]] = (start + end) / 2 + 1
        start = end + 1
    return ranks


def mean_columnwise_spearman(answers: pd.DataFrame, submission: pd.DataFrame, params: Mapping[str, Any]) -> float:
    """Mean over columns of Spearman's rho (Pearson's r of the mid-ranks); a constant column counts 0."""
    y, p = numbers(answers), numbers(submission)
    scores = []
    for j in range(y.shape[1]):
        constant = len(set(y[:, j])) == 1 or len(set(p[:, j])) == 1
        scores.append(0.0 if constant else _pearson(_midranks(y[:, j]), _midranks(p[:, j])))
    return sum(scores) / len(scores)


def jigsaw_bias_auc(answers: pd.DataFrame, submission: pd.DataFrame, params: Mapping[str, Any]) -> float:
    """Jigsaw's bias-weighted AUC. ``answers``: the toxicity column, then the identity columns.

    Toxicity and identities count as present when >= ``threshold`` (an empty cell: absent); predictions
    too with ``binarize_predictions``. Per identity: the AUC on rows with it (subgroup), on non-toxic rows
    with it plus toxic rows without it (BPSN), on toxic rows with it plus non-toxic rows without it (BNSP).
    Score: w0 * overall AUC + sum_k w_k * (mean over identities of AUC_k ** p) ** (1 / p)."""
    threshold, p = float(params["threshold"]), float(params["power"])
    weights = list(params["weights"])

    def present(column: pd.Series) -> np.ndarray:
        return np.array([str(v).strip() != "" and float(v) >= threshold for v in column])

    toxic = present(answers.iloc[:, 0])
    score = numbers(submission).ravel()
    if params["binarize_predictions"]:
        score = (score >= threshold).astype(float)
    total = weights[0] * _roc_auc(toxic.astype(float), score)
    for k, pick in enumerate((lambda has: has, lambda has: (~toxic & has) | (toxic & ~has),
                              lambda has: (toxic & has) | (~toxic & ~has)), start=1):
        aucs = []
        for column in params["identity_columns"]:
            rows = pick(present(answers[column]))
            aucs.append(_roc_auc(toxic[rows].astype(float), score[rows]))
        total += weights[k] * (sum(a ** p for a in aucs) / len(aucs)) ** (1 / p)
    return total


# --- metric name -> reference ------------------------------------------------------------------------
def multilabel_micro_f1(answers: pd.DataFrame, submission: pd.DataFrame, params: Mapping[str, Any]) -> float:
    """Micro F1 over (row, label) cells of space-separated label sets; only labels that occur in the answers
    count (others predicted are ignored); 2 TP / (2 TP + FP + FN), 0 when that is 0 / 0."""
    truths = [set(str(cell).split()) for cell in answers.to_numpy().ravel()]
    known = set().union(*truths)
    tp = fp = fn = 0
    for truth, cell in zip(truths, submission.to_numpy().ravel(), strict=True):
        guessed = {label for label in str(cell).split() if label in known}
        tp += len(truth & guessed)
        fp += len(guessed - truth)
        fn += len(truth - guessed)
    return 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0


def map_at_k(answers: pd.DataFrame, submission: pd.DataFrame, params: Mapping[str, Any]) -> float:
    """Mean average precision at ``params["k"]``: per row, the sum over ranks r <= k holding a relevant item
    not seen earlier in the list of (relevant items so far / r), over min(#relevant, k); 0 without relevant
    items. ``truncate_first``: the list is cut to k before repeats are skipped (a repeat takes a rank),
    else repeats are dropped first. Items split on ``params["separator"]`` (None: whitespace)."""
    k, sep = int(params.get("k", 5)), params.get("separator")
    total = 0.0
    rows = list(zip(answers.to_numpy().ravel(), submission.to_numpy().ravel(), strict=True))
    for truth_cell, guess_cell in rows:
        truth, guesses = set(str(truth_cell).split(sep)), str(guess_cell).split(sep)
        if not params.get("truncate_first"):
            guesses = [g for i, g in enumerate(guesses) if g not in guesses[:i]]
        hits, score = 0, 0.0
        for rank, guess in enumerate(guesses[:k], start=1):
            if guess in truth and guess not in guesses[:rank - 1]:
                hits += 1
                score += hits / rank
        total += score / min(len(truth), k) if truth else 0.0
    return total / len(rows)


REFERENCES: dict[str, Reference] = {
    "accuracy": accuracy,
    "multilabel_micro_f1": multilabel_micro_f1,
    "map_at_k": map_at_k,
    "auc": auc,
    "log_loss": log_loss,
    "mean_columnwise_auc": mean_columnwise_auc,
    "mean_columnwise_rmsle": mean_columnwise_rmsle,
    "multiclass_log_loss": multiclass_log_loss,
    "quadratic_weighted_kappa": quadratic_weighted_kappa,
    "rmse": rmse,
    "rmsle": rmsle,
    "word_jaccard": word_jaccard,
    "pearson": pearson,
    "mean_columnwise_spearman": mean_columnwise_spearman,
    "jigsaw_bias_auc": jigsaw_bias_auc,
}
