"""Metrics recomputed from their definitions, to check the grader's scores against.

Written with plain numpy and Python from each metric's textbook (and Kaggle's) definition, never calling
``mle_env.grading`` or scikit-learn, so a bug in the library's metric cannot hide in its check.

Every reference is ``fn(answers, submission, params) -> float``:

- ``answers``: the answer columns of the private answers file (the spec's ``answer_columns``, else its
  target columns), then the columns the metric reads besides them (``[metric] answer_columns``: groups,
  masks), every cell as text, exactly as written;
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


_PANDAS_MISSING = {"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>",
                   "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"}


def _edit_distance(a: str, b: str) -> int:
    """The full edit-distance table: cell (i, j) is the distance between a[:i] and b[:j]; insertions,
    deletions and substitutions cost 1."""
    table = [[i + j if i == 0 or j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
    return table[len(a)][len(b)]


def levenshtein(answers: pd.DataFrame, submission: pd.DataFrame, params: Mapping[str, Any]) -> float:
    """Mean character edit distance; with ``params["missing_as"]``, a cell pandas reads as missing is that text."""
    missing_as = params.get("missing_as")

    def cell(value: str) -> str:
        return missing_as if missing_as is not None and value in _PANDAS_MISSING else value

    pairs = list(zip(answers.to_numpy().ravel(), submission.to_numpy().ravel(), strict=True))
    return sum(_edit_distance(cell(str(a)), cell(str(b))) for a, b in pairs) / len(pairs)


def kendall_tau_pooled(answers: pd.DataFrame, submission: pd.DataFrame, params: Mapping[str, Any]) -> float:
    """1 - 4 x (discordant pairs summed over rows) / (sum over rows of n (n - 1)); cells are space-separated orders."""
    discordant = pairs = 0
    for truth, predicted in zip(answers.iloc[:, 0], submission.iloc[:, 0], strict=True):
        rank = {item: k for k, item in enumerate(str(truth).split())}
        order = [rank[item] for item in str(predicted).split()]
        discordant += sum(order[i] > order[j] for i in range(len(order)) for j in range(i + 1, len(order)))
        pairs += len(order) * (len(order) - 1)
    return 1 - 4 * discordant / pairs


def point_in_box_f1(answers: pd.DataFrame, submission: pd.DataFrame, params: Mapping[str, Any]) -> float:
    """F1 over all pages: a true box "label x y w h" is found by the first unused predicted point "label px py"
    with its label and x < px < x + w, y < py < y + h; unused points are false positives."""
    tp = fp = fn = 0
    for truth, predicted in zip(answers.iloc[:, 0], submission.iloc[:, 0], strict=True):
        t, p = str(truth).split(), str(predicted).split()
        boxes = [(t[k], *map(float, t[k + 1:k + 5])) for k in range(0, len(t), 5)]
        points = [(p[k], float(p[k + 1]), float(p[k + 2])) for k in range(0, len(p), 3)]
        used = [False] * len(points)
        for label, x, y, w, h in boxes:
            hit = next((k for k, (pl, px, py) in enumerate(points)
                        if not used[k] and pl == label and x < px < x + w and y < py < y + h), None)
            if hit is None:
                fn += 1
            else:
                used[hit] = True
                tp += 1
        fp += used.count(False)
    if tp == 0:
        return 0.0
    precision, recall = tp / (tp + fp), tp / (tp + fn)
    return 2 * precision * recall / (precision + recall)


def weighted_auc_tpr_bands(answers: pd.DataFrame, submission: pd.DataFrame, params: Mapping[str, Any]) -> float:
    """ALASKA2's weighted AUC: the ROC polyline (one point per distinct score, highest first) gets a point at
    each TPR band edge, interpolated on the first segment that crosses it; each band's points, closed by
    (FPR 1, TPR top of band) and measured from the band's bottom, give a trapezoid area; the areas are weighted
    and divided by the sum of band width x weight."""
    edges, weights = list(params["edges"]), list(params["weights"])
    y, s = numbers(answers).ravel(), numbers(submission).ravel()
    positives, negatives = (y == 1).sum(), (y != 1).sum()
    fpr, tpr = [0.0], [0.0]
    for threshold in sorted(set(s), reverse=True):
        tpr.append(float(((s >= threshold) & (y == 1)).sum() / positives))
        fpr.append(float(((s >= threshold) & (y != 1)).sum() / negatives))
    for edge in edges:
        if edge in tpr:
            continue
        k = next((k for k, v in enumerate(tpr) if v > edge), None)
        if k:
            fpr.insert(k, fpr[k - 1] + (fpr[k] - fpr[k - 1]) * (edge - tpr[k - 1]) / (tpr[k] - tpr[k - 1]))
            tpr.insert(k, edge)
    total = 0.0
    for low, high, weight in zip(edges[:-1], edges[1:], weights, strict=True):
        band = [(f, t) for f, t in zip(fpr, tpr, strict=True) if low <= t <= high]
        if not band:
            continue
        xs, ys = [f for f, _ in band] + [1.0], [t - low for _, t in band] + [high - low]
        total += weight * sum((xs[k + 1] - xs[k]) * (ys[k + 1] + ys[k]) / 2 for k in range(len(xs) - 1))
    return total / sum((high - low) * w for low, high, w in zip(edges[:-1], edges[1:], weights, strict=True))


def _kept(cells: pd.Series, keep_value: object) -> np.ndarray:
    """Rows whose cell equals ``keep_value``, as numbers when both are numbers (booleans as 1/0)."""
    return np.array([_number(c) == _number(keep_value) for c in cells], dtype=bool)


def masked_mae(answers: pd.DataFrame, submission: pd.DataFrame, params: Mapping[str, Any]) -> float:
    """Mean |y - p| over the rows whose ``params["mask_column"]`` (when set) equals ``params["keep_value"]``;
    rounded half to even with ``params["round_to_int"]``. ``answers``: the targets, then the mask column."""
    mask = params.get("mask_column")
    truth = answers.drop(columns=[mask]) if mask else answers
    keep = _kept(answers[mask], params["keep_value"]) if mask else np.ones(len(answers), dtype=bool)
    diffs = np.abs(numbers(truth)[keep] - numbers(submission)[keep]).ravel()
    value = sum(diffs) / len(diffs)
    return float(round(value)) if params["round_to_int"] else value


def masked_mcrmse(answers: pd.DataFrame, submission: pd.DataFrame, params: Mapping[str, Any]) -> float:
    """Mean over ``params["score_columns"]`` of the RMSE on the rows whose ``params["mask_column"]`` equals
    ``params["keep_value"]``."""
    keep = _kept(answers[params["mask_column"]], params["keep_value"])
    errors = []
    for column in params["score_columns"]:
        d = numbers(answers[[column]])[keep, 0] - numbers(submission[[column]])[keep, 0]
        errors.append(math.sqrt(sum(d * d) / len(d)))
    return sum(errors) / len(errors)


def grouped_log_mae(answers: pd.DataFrame, submission: pd.DataFrame, params: Mapping[str, Any]) -> float:
    """Mean over the groups of ``params["group_column"]`` of ln(max(MAE in the group, ``params["mae_floor"]``)).
    ``answers``: the target, then the group column."""
    group = params["group_column"]
    y, p = numbers(answers.drop(columns=[group]))[:, 0], numbers(submission)[:, 0]
    errors: dict[str, list[float]] = {}
    for g, a, b in zip(answers[group], y, p, strict=True):
        errors.setdefault(g, []).append(abs(a - b))
    return sum(math.log(max(sum(e) / len(e), params["mae_floor"])) for e in errors.values()) / len(errors)


def laplace_log_likelihood(answers: pd.DataFrame, submission: pd.DataFrame, params: Mapping[str, Any]) -> float:
    """OSIC's modified Laplace log-likelihood: mean of -sqrt(2) d / s - ln(sqrt(2) s), d = min(|y - FVC|, cap),
    s = max(confidence, floor), over the rows with a measured answer whose mask column holds the keep value.
    ``answers``: the measured value (empty when none), then the mask column; ``submission``: value, sigma."""
    mask = params["mask_column"]
    terms = []
    for truth, flag, (value, sigma) in zip(answers.iloc[:, 0], answers[mask], numbers(submission), strict=True):
        if str(truth).strip() == "" or not _kept(pd.Series([flag]), params["keep_value"])[0]:
            continue
        s = max(sigma, params["sigma_floor"])
        d = min(abs(float(truth) - value), params["error_cap"])
        terms.append(-math.sqrt(2) * d / s - math.log(math.sqrt(2) * s))
    return sum(terms) / len(terms)


def kl_divergence(answers: pd.DataFrame, submission: pd.DataFrame, params: Mapping[str, Any]) -> float:
    """Mean over rows of sum of y ln(y / p) over y > 0, y = the row's votes divided by their sum, p clipped to
    [eps, 1 - eps]."""
    eps, total = params["eps"], 0.0
    for votes, probs in zip(numbers(answers), numbers(submission), strict=True):
        y = votes / votes.sum()
        total += sum(a * math.log(a / min(max(b, eps), 1 - eps)) for a, b in zip(y, probs, strict=True) if a > 0)
    return total / len(answers)


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


def mcc(answers: pd.DataFrame, submission: pd.DataFrame, params: Mapping[str, Any]) -> float:
    """Matthews correlation of 0/1 labels: (TP TN - FP FN) / sqrt((TP+FP)(TP+FN)(TN+FP)(TN+FN)), 0 when a
    factor of the denominator is 0."""
    y, p = numbers(answers).ravel() == 1, numbers(submission).ravel() == 1
    tp, tn, fp, fn = (int(n) for n in ((y & p).sum(), (~y & ~p).sum(), (~y & p).sum(), (y & ~p).sum()))
    denominator = math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    return (tp * tn - fp * fn) / denominator if denominator else 0.0


def f1(answers: pd.DataFrame, submission: pd.DataFrame, params: Mapping[str, Any]) -> float:
    """F1 = 2 TP / (2 TP + FP + FN). ``average="macro"``: the mean over every label seen in the answers or
    the submission (labels compared as numbers when both are numbers); ``"binary"``: of ``pos_label`` only."""
    def labels(frame: pd.DataFrame) -> list[str]:
        return [str(int(float(v))) if _number_text(v) else str(v) for v in frame.to_numpy().ravel()]

    y, p = labels(answers), labels(submission)
    classes = sorted(set(y) | set(p)) if params["average"] == "macro" else [str(params["pos_label"])]
    scores = []
    for c in classes:
        tp = sum(a == c and b == c for a, b in zip(y, p, strict=True))
        wrong = sum((a == c) != (b == c) for a, b in zip(y, p, strict=True))
        scores.append(2 * tp / (2 * tp + wrong) if tp + wrong else 0.0)
    return sum(scores) / len(scores)


def _number_text(value: object) -> bool:
    try:
        return float(str(value)).is_integer()
    except ValueError:
        return False


def _percentile(values: list[float], q: float) -> float:
    """Linear interpolation between the order statistics at position q (n - 1)."""
    ordered, position = sorted(values), q * (len(values) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def haversine_p50_p95(answers: pd.DataFrame, submission: pd.DataFrame, params: Mapping[str, Any]) -> float:
    """``answers``: latitude, longitude (degrees), then ``params["group_column"]``. Per group, the mean of
    the 50th and 95th percentiles of the great-circle distances 2 R asin(sqrt(hav)); then the mean over groups."""
    radius, trips = float(params["radius"]), {}
    for (lat1, lng1, trip), (lat2, lng2) in zip(answers.to_numpy(), submission.to_numpy(), strict=True):
        p1, p2, l1, l2 = (math.radians(float(v)) for v in (lat1, lat2, lng1, lng2))
        hav = math.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin((l2 - l1) / 2) ** 2
        trips.setdefault(trip, []).append(2 * radius * math.asin(math.sqrt(hav)))
    per_trip = [(_percentile(d, 0.5) + _percentile(d, 0.95)) / 2 for d in trips.values()]
    return sum(per_trip) / len(per_trip)


def sequence_edit_rate(answers: pd.DataFrame, submission: pd.DataFrame, params: Mapping[str, Any]) -> float:
    """Sum over rows of the edit distance between the space-separated integer sequences (insert, delete,
    substitute a whole token: cost 1) / the total number of true tokens."""
    distance = tokens = 0
    for truth, guess in zip(answers.to_numpy().ravel(), submission.to_numpy().ravel(), strict=True):
        t, g = [int(x) for x in str(truth).split()], [int(x) for x in str(guess).split()]
        distance, tokens = distance + _edit_distance(t, g), tokens + len(t)  # type: ignore[arg-type]
    return distance / tokens


REFERENCES: dict[str, Reference] = {
    "sequence_edit_rate": sequence_edit_rate,
    "haversine_p50_p95": haversine_p50_p95,
    "f1": f1,
    "mcc": mcc,
    "mae": masked_mae,
    "masked_mcrmse": masked_mcrmse,
    "grouped_log_mae": grouped_log_mae,
    "laplace_log_likelihood": laplace_log_likelihood,
    "kl_divergence": kl_divergence,
    "accuracy": accuracy,
    "levenshtein": levenshtein,
    "kendall_tau_pooled": kendall_tau_pooled,
    "point_in_box_f1": point_in_box_f1,
    "weighted_auc_tpr_bands": weighted_auc_tpr_bands,
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

# the references of the competition groups added later, each in a module of its own
from reference_metrics_detection import REFERENCES_DETECTION  # noqa: E402
from reference_metrics_fgvc import REFERENCES_FGVC  # noqa: E402
from reference_metrics_medical import REFERENCES_MEDICAL  # noqa: E402
from reference_metrics_misc import REFERENCES_MISC  # noqa: E402
from reference_metrics_segmentation import REFERENCES_SEGMENTATION  # noqa: E402
from reference_metrics_volumes import REFERENCES_VOLUMES  # noqa: E402

REFERENCES.update(REFERENCES_DETECTION)
REFERENCES.update(REFERENCES_FGVC)
REFERENCES.update(REFERENCES_MEDICAL)
REFERENCES.update(REFERENCES_MISC)
REFERENCES.update(REFERENCES_SEGMENTATION)
REFERENCES.update(REFERENCES_VOLUMES)
