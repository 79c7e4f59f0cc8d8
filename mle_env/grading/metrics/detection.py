"""Object-detection metrics on prediction strings (all higher is better)."""

from __future__ import annotations

import numpy as np

from mle_env.grading.metrics.registry import InvalidPrediction, register_metric, text


def _groups(cell: str, width: int, label_at: int = 0, any_space: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Split a prediction string of fixed-width token groups into labels and values.

    Tokens are separated by single spaces (``any_space``: by runs of any whitespace, ends stripped); the
    token at ``label_at`` of each group is its label (text), the others its numbers. Returns the labels
    and a (groups, width - 1) float array of the other tokens in group order. Raises ValueError when the
    tokens do not form whole groups or a number does not parse.
    """
    tokens = cell.split() if any_space else cell.split(" ")
    if len(tokens) % width:
        raise ValueError(f"{len(tokens)} tokens do not form groups of {width}")
    labels = np.array(tokens[label_at::width], dtype=object)
    columns = [tokens[i::width] for i in range(width) if i != label_at]
    values = np.array(columns, dtype=float).T.reshape(len(labels), width - 1)
    return labels, values


def _starts(counts: np.ndarray) -> np.ndarray:
    """Where each of segments of ``counts`` items laid end to end starts."""
    return (np.cumsum(counts) - counts).astype(np.int64)


def _segments(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For segments of ``counts`` items laid end to end: each item's segment and its position in it."""
    owner = np.repeat(np.arange(len(counts)), counts)
    return owner, np.arange(int(counts.sum())) - _starts(counts)[owner]


def _page_counts(truth: str, prediction: str) -> tuple[int, int, int]:
    """(TP, FP, FN) of one page: each true box in order takes the first unused prediction with its label
    and the point strictly inside it."""
    if not truth:
        return 0, (len(prediction.split(" ")) // 3 if prediction else 0), 0
    if not prediction:
        return 0, 0, len(truth.split(" ")) // 5
    truth_labels, boxes = _groups(truth, 5)
    labels, points = _groups(prediction, 3)
    unused = np.ones(len(labels), dtype=bool)
    tp = 0
    for label, (x, y, width, height) in zip(truth_labels, boxes, strict=True):
        match = ((x < points[:, 0]) & (points[:, 0] < x + width) & (y < points[:, 1]) & (points[:, 1] < y + height)
                 & (labels == label) & unused)
        if match.any():
            tp += 1
            unused[np.argmax(match)] = False
    return tp, int(unused.sum()), len(truth_labels) - tp


@register_metric("point_in_box_f1", lower_is_better=False)
def point_in_box_f1(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """F1 of predicted character centres against true boxes, TP/FP/FN pooled over pages (kuzushiji).

    Answers hold "label x y width height" groups, predictions "label x y" groups, single-space separated;
    an empty (or NaN) cell is a page with none. A point matches a box with the same label when
    x < px < x + width and y < py < y + height; each true box, in order, takes the first unused matching
    prediction (TP) or counts a FN; predictions left unused are FP. F1 = 2PR / (P + R), and 0 when
    precision or recall is 0 or undefined. A prediction that is not "label x y" groups with numeric x and y
    raises :class:`InvalidPrediction`.
    """
    truths, predictions = [text(t) for t in np.ravel(y_true)], [text(p) for p in np.ravel(y_pred)]
    for row, prediction in enumerate(predictions, 1):
        if prediction:
            try:
                _groups(prediction, 3)
            except ValueError:
                message = f"row {row}: the prediction must be 'label x y' groups with numeric x and y"
                raise InvalidPrediction(message) from None
    tp = fp = fn = 0
    for truth, prediction in zip(truths, predictions, strict=True):
        page = _page_counts(truth, prediction)
        tp, fp, fn = tp + page[0], fp + page[1], fn + page[2]
    if tp == 0:
        return 0.0
    precision, recall = tp / (tp + fp), tp / (tp + fn)
    return 2 * precision * recall / (precision + recall)


# --- boxes with a label and a confidence ---------------------------------------------------------------
def _labelled_boxes(cells: np.ndarray, any_space: bool, what: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each cell's "label confidence x_min y_min x_max y_max" groups as (labels, (groups, 5) floats); an
    empty (or NaN) cell has none. A cell that does not parse, or holds a value that is not finite, raises
    :class:`InvalidPrediction` naming its row (``what``: "prediction" or "answer")."""
    out = []
    for row, cell in enumerate(np.ravel(cells), 1):
        value = text(cell)
        try:
            labels, values = _groups(value, 6, any_space=any_space) if value.strip() else (
                np.array([], dtype=object), np.zeros((0, 5)))
        except ValueError:
            raise InvalidPrediction(f"row {row}: the {what} must be 'label confidence x_min y_min x_max y_max' "
                                    "groups of numbers after the label") from None
        if not np.isfinite(values).all():
            raise InvalidPrediction(f"row {row}: the {what} holds a value that is not a finite number")
        out.append((labels, values))
    return out


def _iou(boxes: np.ndarray, others: np.ndarray) -> np.ndarray:
    """IoU of [x_min, y_min, x_max, y_max] boxes, broadcast against each other along their last axis; 0 where
    the union is not positive (areas are signed, as the formula gives them for inverted boxes)."""
    width = np.minimum(boxes[..., 2], others[..., 2]) - np.maximum(boxes[..., 0], others[..., 0])
    height = np.minimum(boxes[..., 3], others[..., 3]) - np.maximum(boxes[..., 1], others[..., 1])
    inter = np.where(width > 0, width, 0.0) * np.where(height > 0, height, 0.0)
    union = ((boxes[..., 2] - boxes[..., 0]) * (boxes[..., 3] - boxes[..., 1])
             + (others[..., 2] - others[..., 0]) * (others[..., 3] - others[..., 1]) - inter)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(union > 0, inter / np.where(union > 0, union, 1.0), 0.0)


def _class_pairs(truth_rows: np.ndarray, truth_boxes: np.ndarray, rows: np.ndarray, scores: np.ndarray,
                 boxes: np.ndarray, row_count: int, iou_threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """(is true, score) pairs of one class pooled over ``row_count`` rows, in no particular order (the AP of
    pooled pairs does not depend on it). ``truth_rows``/``truth_boxes``: the class's true boxes, rows in
    ascending order; ``rows``/``scores``/``boxes``: its predictions in written order.

    In each row the predictions by confidence (ties in written order) each take the unmatched true box of
    highest IoU above the threshold (the first in written order on ties): (1, confidence), or (0,
    confidence) when none is left; unmatched true boxes add (1, 0), and a row with neither adds (0, 0). The
    rows are matched in step: the k-th prediction of every row at once."""
    with_truth, truth_count = np.unique(truth_rows, return_counts=True)
    group, slot = _segments(truth_count)
    table = np.zeros((len(with_truth), int(truth_count.max(initial=0)), 4))
    table[group, slot] = truth_boxes
    present = np.zeros(table.shape[:2], dtype=bool)
    present[group, slot] = True
    matched = np.zeros_like(present)
    order = np.lexsort((np.arange(len(rows)), -scores, rows))  # by row, then confidence, then written order
    order = order[np.isin(rows[order], with_truth)]  # predictions in rows without boxes match nothing
    owner = np.searchsorted(with_truth, rows[order])
    rank = _segments(np.unique(owner, return_counts=True)[1])[1]
    by_rank = np.argsort(rank, kind="stable")  # step k's predictions are one slice: no scan of all per step
    bounds = np.r_[0, np.cumsum(np.bincount(rank))] if len(rank) else np.zeros(1, dtype=np.int64)
    threshold = max(iou_threshold, 0.0)
    hit = np.zeros(len(rows), dtype=bool)
    unmatched = int(present.sum())
    for k in range(len(bounds) - 1):
        if not unmatched:  # every true box is taken: the predictions left match nothing
            break
        step = by_rank[bounds[k]:bounds[k + 1]]
        now, g = order[step], owner[step]
        ious = _iou(boxes[now][:, None, :], table[g])
        ok = (ious > threshold) & present[g] & ~matched[g]
        found = ok.any(axis=1)
        matched[g[found], np.argmax(np.where(ok, ious, -np.inf), axis=1)[found]] = True
        hit[now[found]] = True
        unmatched -= int(found.sum())
    missed = unmatched
    neither = row_count - len(np.union1d(with_truth, rows))
    ys = np.concatenate([hit.astype(int), np.ones(missed, dtype=int), np.zeros(neither, dtype=int)])
    return ys, np.concatenate([scores, np.zeros(missed + neither)])


def _flat(boxes: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every row's groups as one table: (row of each group, its label (``str`` objects: a fixed-width text
    array would be as wide as the longest label on every row), its 5 numbers)."""
    rows = np.repeat(np.arange(len(boxes)), [len(labels) for labels, _ in boxes])
    labels = np.concatenate([labels for labels, _ in boxes]) if boxes else np.zeros(0, dtype=object)
    values = np.concatenate([values for _, values in boxes]) if boxes else np.zeros((0, 5))
    return rows, labels, values


@register_metric("siim_map", lower_is_better=False)
def siim_map(y_true: np.ndarray, y_pred: np.ndarray, iou_threshold: float = 0.5) -> float:
    """Mean over classes of the average precision of (is true, score) pairs pooled over rows (SIIM COVID-19).

    Cells hold "label confidence x_min y_min x_max y_max" groups separated by whitespace (the answers'
    confidences are ignored); an empty cell is a row with no predictions. The classes are the labels in
    the answers (predicted labels outside them are ignored). Per class and row, predictions in decreasing
    confidence (ties in written order) each take the unmatched true box of highest IoU, if above
    ``iou_threshold`` (a (1, confidence) pair), else give (0, confidence); each unmatched true box gives
    (1, 0), and a row with neither boxes nor predictions of the class gives (0, 0). The class's AP is
    scikit-learn's ``average_precision_score`` of its pairs. A cell that is not such groups of finite
    numbers raises :class:`InvalidPrediction`.
    """
    from sklearn.metrics import average_precision_score

    truths = _labelled_boxes(y_true, True, "answer")
    truth_rows, truth_labels, truth_values = _flat(truths)
    rows, labels, values = _flat(_labelled_boxes(y_pred, True, "prediction"))
    aps = []
    for cls in sorted(set(truth_labels.tolist())):
        mine, theirs = labels == cls, truth_labels == cls
        ys, ss = _class_pairs(truth_rows[theirs], truth_values[theirs, 1:], rows[mine], values[mine, 0],
                              values[mine, 1:], len(truths), iou_threshold)
        aps.append(average_precision_score(ys, ss))
    return float(np.mean(aps)) if aps else 0.0


def _coco_annotations(cells: np.ndarray, what: str, as_xywh: bool) -> list[dict]:
    """COCO annotations of each row's "class confidence x_min y_min x_max y_max" groups (image id = row
    index, annotation ids from 1); classes must be whole numbers."""
    annotations: list[dict] = []
    for image, (labels, values) in enumerate(_labelled_boxes(cells, False, what)):
        try:
            classes = labels.astype(float)
        except ValueError:
            classes = np.array([np.nan])
        if not (np.isfinite(classes).all() and (classes == np.round(classes)).all()):
            raise InvalidPrediction(f"row {image + 1}: the {what}'s class ids must be whole numbers")
        for cls, (score, x1, y1, x2, y2) in zip(classes.astype(int), values, strict=True):
            box = [x1, y1, x2, y2] if as_xywh else [x1, y1, x2 - x1, y2 - y1]
            annotations.append({"id": len(annotations) + 1, "image_id": image, "category_id": int(cls),
                                "bbox": [float(v) for v in box], "area": float((x2 - x1) * (y2 - y1)),
                                "iscrowd": 0, "ignore": 0, "segmentation": [], "score": float(score)})
    return annotations


@register_metric("coco_map", lower_is_better=False)
def coco_map(y_true: np.ndarray, y_pred: np.ndarray, iou_thresholds: list[float] | None = None,
             max_detections: int = 100, boxes_as_xywh: bool = False) -> float:
    """COCO bounding-box AP (pycocotools' COCOeval, area range "all") at ``iou_thresholds`` (VinBigData).

    Cells hold "class confidence x_min y_min x_max y_max" groups separated by single spaces, ``class`` a
    whole number (the answers' confidences are ignored); an empty cell is an image with no predictions.
    Each row is one image; the categories are the classes of the answers (others are ignored); at most
    ``max_detections`` of the most confident predictions per image and category count. The score is the
    mean of COCO's 101-point interpolated precision over IoU thresholds and categories. ``boxes_as_xywh``
    hands each [x_min, y_min, x_max, y_max] to COCO as if it were [x, y, width, height] (MLE-bench's
    convention; areas stay (x_max - x_min)(y_max - y_min)). Annotations are numbered from 1, as COCO's
    own loader does (pycocotools reads id 0 as "no match"). Needs ``pycocotools``.
    """
    import contextlib
    import io

    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    truths = _coco_annotations(y_true, "answer", boxes_as_xywh)
    predictions = _coco_annotations(y_pred, "prediction", boxes_as_xywh)
    images = [{"id": i} for i in range(len(np.ravel(y_true)))]
    categories = [{"id": c, "name": str(c)} for c in sorted({a["category_id"] for a in truths})]
    with contextlib.redirect_stdout(io.StringIO()):
        coco_true, coco_pred = COCO(), COCO()
        coco_true.dataset = {"images": images, "categories": categories, "annotations": truths}
        coco_pred.dataset = {"images": images, "categories": categories, "annotations": predictions}
        coco_true.createIndex()
        coco_pred.createIndex()
        evaluation = COCOeval(coco_true, coco_pred, "bbox")
        evaluation.params.imgIds = [image["id"] for image in images]
        evaluation.params.iouThrs = np.array(iou_thresholds if iou_thresholds is not None else [0.5], dtype=float)
        evaluation.params.maxDets = [int(max_detections)]
        evaluation.params.areaRng, evaluation.params.areaRngLbl = [evaluation.params.areaRng[0]], ["all"]
        evaluation.evaluate()
        evaluation.accumulate()
    precision = evaluation.eval["precision"][:, :, :, 0, 0]
    return float(np.mean(precision[precision > -1])) if (precision > -1).any() else -1.0
