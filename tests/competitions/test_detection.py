"""The detection group's metrics (siim_map, coco_map) on hand-computed cases, and the grading quirks of
siim-covid19-detection and vinbigdata-chest-xray-abnormalities-detection."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from reference_metrics_detection import lyft_3d_map as reference_lyft
from reference_metrics_detection import siim_map as reference_siim

from mle_env.competition.registry import get_spec
from mle_env.grading.metrics import InvalidPrediction, coco_map, lyft_3d_map, siim_map
from mle_env.grading.metrics.detection import _groups

SIIM = "siim-covid19-detection"
VIN = "vinbigdata-chest-xray-abnormalities-detection"
LYFT = "3d-object-detection-for-autonomous-vehicles"
VIN_PARAMS = get_spec(VIN).metric.params
LYFT_PARAMS = get_spec(LYFT).metric.params


def cells(*values: str) -> np.ndarray:
    return np.array(values, dtype=object)


def test_group_parser_reads_the_label_at_any_position() -> None:
    labels, values = _groups("1.0 2 3 car 0.5 4 5 bus", 4, label_at=3)
    assert list(labels) == ["car", "bus"] and values.tolist() == [[1, 2, 3], [0.5, 4, 5]]
    labels, values = _groups("  a 1 2\tb 3 4 ", 3, any_space=True)
    assert list(labels) == ["a", "b"] and values.tolist() == [[1, 2], [3, 4]]
    with pytest.raises(ValueError):
        _groups("a 1 2 b 3", 3)


# --- siim_map ----------------------------------------------------------------------------------------
def test_siim_map_pools_pairs_per_answer_class() -> None:
    truth = cells("negative 1 0 0 1 1", "opacity 1 0 0 10 10")
    prediction = cells("negative 0.9 0 0 1 1 typical 0.8 0 0 1 1", "opacity 0.6 0 0 10 10 opacity 0.7 50 50 60 60")
    # negative: (1, .9) and the image row's (0, 0): AP 1. opacity: the study row's (0, 0), then the
    # unmatched (0, .7) ranked above the match (1, .6): AP 0.5. typical is not a class of the answers.
    assert siim_map(truth, prediction, iou_threshold=0.5) == pytest.approx(0.75)


def test_siim_map_counts_a_missed_box_as_recalled_at_score_zero() -> None:
    truth = cells("negative 1 0 0 1 1", "opacity 1 0 0 10 10 opacity 1 20 20 30 30")
    prediction = cells("negative 1 0 0 1 1", "opacity 0.9 0 0 10 10")
    # opacity pairs (0, 0), (1, .9), (1, 0): AP = 1 x 1/2 + 2/3 x 1/2
    assert siim_map(truth, prediction, iou_threshold=0.5) == pytest.approx((1 + (0.5 + 1 / 3)) / 2)


def test_siim_map_matches_the_best_unmatched_box_above_the_threshold() -> None:
    truth = cells("opacity 1 0 0 10 10 opacity 1 4 0 14 10")
    # the first prediction overlaps the second box most (IoU 1) and takes it; the second then takes the first
    assert siim_map(truth, cells("opacity 0.9 4 0 14 10 opacity 0.8 3 0 13 10"), iou_threshold=0.5) == 1.0
    # an IoU of exactly the threshold is no match (10x10 against 10x5 inside it: IoU 0.5): opacity pairs
    # (0, .9), (1, 0), (0, 0) give AP 1/3; none is found (AP 1)
    assert siim_map(cells("opacity 1 0 0 10 10", "none 1 0 0 1 1"), cells("opacity 0.9 0 0 10 5", "none 1 0 0 1 1"),
                    iou_threshold=0.5) == pytest.approx((1 / 3 + 1) / 2)


def test_siim_map_reads_an_empty_cell_as_no_predictions() -> None:
    truth = cells("negative 1 0 0 1 1", "none 1 0 0 1 1")
    assert siim_map(truth, cells("negative 1 0 0 1 1", ""), iou_threshold=0.5) == siim_map(
        truth, cells("negative 1 0 0 1 1", " "), iou_threshold=0.5)


@pytest.mark.parametrize("cell", ["negative 1 0 0 1", "negative high 0 0 1 1", "negative nan 0 0 1 1",
                                  "opacity 1 0 0 inf 1"])
def test_siim_map_rejects_malformed_predictions(cell: str) -> None:
    with pytest.raises(InvalidPrediction, match="row 2"):
        siim_map(cells("negative 1 0 0 1 1", "none 1 0 0 1 1"), cells("negative 1 0 0 1 1", cell), iou_threshold=0.5)


def test_siim_map_compares_labels_as_written() -> None:
    """A label is its exact text: 'opacity' followed by a NUL is a foreign label (a fixed-width text array
    would drop the NUL), so the first row's box is missed and the second row's prediction is a false
    positive scored above it: AP 1/2."""
    truth = cells("opacity 1 0 0 10 10", "none 1 0 0 1 1")
    prediction = cells("opacity\x00 0.9 0 0 10 10", "opacity 0.8 50 50 60 60 none 1 0 0 1 1")
    assert siim_map(truth, prediction, iou_threshold=0.5) == pytest.approx((0.5 + 1) / 2)


def _siim_scene(rng: np.random.Generator, classes: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Random rows of labelled boxes: many on a 5 x 5 grid (equal IoUs with different boxes, equal
    confidences), some inverted, some labelled outside the classes, empty rows."""

    def box() -> list[float]:
        if rng.random() < 0.6:
            (x0, x1), (y0, y1) = np.sort(rng.choice(5, 2, replace=False)), np.sort(rng.choice(5, 2, replace=False))
            return [x0, y0, x1, y1]
        corners = rng.random(4) * 20
        return list(corners if rng.random() < 0.1 else [*np.minimum(corners[:2], corners[2:]),
                                                        *np.maximum(corners[:2], corners[2:])])

    def cell(groups: int) -> str:
        return "  ".join(" ".join([str(rng.choice(classes)) if rng.random() > 0.05 else "other",
                                   str(rng.choice([0.5, 1.0, 0.0, rng.random()])), *map(str, box())])
                         for _ in range(groups))

    rows, per_row = int(rng.integers(1, 30)), int(rng.integers(1, 8))
    return (cells(*(cell(int(rng.integers(0, per_row + 1))) for _ in range(rows))),
            cells(*(cell(int(rng.integers(0, 2 * per_row + 1))) for _ in range(rows))))


def test_siim_map_equals_the_reference_on_random_crowded_scenes() -> None:
    """The rows are matched in step (the k-th prediction of every row at once); the reference matches one
    prediction at a time, so the order of matching, the ties and the pairs of rows without boxes count."""
    rng = np.random.default_rng(3)
    for _ in range(150):
        truths, predictions = _siim_scene(rng, ["opacity", "none", "negative", "typical"][:rng.integers(1, 5)])
        for threshold in (0.5, 0.3, 0.0):
            expected = reference_siim(pd.DataFrame({"t": truths}), pd.DataFrame({"p": predictions}),
                                      {"iou_threshold": threshold})
            assert siim_map(truths, predictions, iou_threshold=threshold) == pytest.approx(expected, rel=1e-12)


# --- coco_map ----------------------------------------------------------------------------------------
def test_coco_map_perfect_and_half_found() -> None:
    truth = cells("3 1.0 10 10 50 50", "3 1.0 60 60 90 90 14 1.0 0 0 1 1")
    assert coco_map(truth, truth, **VIN_PARAMS) == pytest.approx(1.0)
    # class 3: one of two boxes found at precision 1 (51 of 101 recall points); class 14 found
    half = coco_map(truth, cells("3 0.9 10 10 50 50", "14 0.5 0 0 1 1"), **VIN_PARAMS)
    assert half == pytest.approx((51 / 101 + 1) / 2, abs=1e-9)


def test_coco_map_numbers_boxes_from_one() -> None:
    # one true box and its exact prediction: numbered from 0, pycocotools would count it as a false positive
    assert coco_map(cells("0 1.0 5 5 20 20"), cells("0 0.3 5 5 20 20"), **VIN_PARAMS) == pytest.approx(1.0)


def test_coco_map_hands_corners_to_coco_as_width_and_height() -> None:
    truth, prediction = cells("3 1.0 100 100 110 110"), cells("3 0.9 104 104 114 114")
    # as corners the 10x10 boxes overlap 36 / 164 (IoU 0.22, no match); as x, y, w, h boxes of 110 and 114
    # pixels from (100, 100) and (104, 104) they overlap 106^2 / 13,860 (IoU 0.81)
    assert coco_map(truth, prediction, **VIN_PARAMS) == pytest.approx(1.0)
    assert coco_map(truth, prediction, **{**VIN_PARAMS, "boxes_as_xywh": False}) == 0.0


def test_coco_map_ignores_classes_absent_from_the_answers_and_empty_cells() -> None:
    truth = cells("3 1.0 10 10 50 50", "14 1.0 0 0 1 1")
    extra_class = cells("3 0.9 10 10 50 50 7 0.99 0 0 5 5", "14 0.5 0 0 1 1")
    assert coco_map(truth, extra_class, **VIN_PARAMS) == pytest.approx(1.0)
    assert coco_map(truth, cells("3 0.9 10 10 50 50", ""), **VIN_PARAMS) == pytest.approx(0.5)


@pytest.mark.parametrize("cell", ["3.7 0.9 10 10 50 50", "3 0.9 10 10 50", "3 0.9 10 10 50 nan", "3  0.9 1 1 5 5"])
def test_coco_map_rejects_malformed_predictions(cell: str) -> None:
    with pytest.raises(InvalidPrediction, match="row 1"):
        coco_map(cells("3 1.0 10 10 50 50"), cells(cell), **VIN_PARAMS)


# --- lyft_3d_map -------------------------------------------------------------------------------------
CAR = "0 0 0 2 4 2 0 car"  # x y z width length height yaw class: footprint x in [-2, 2], y in [-1, 1]


def lyft(truth: list[str], prediction: list[str]) -> float:
    return lyft_3d_map(cells(*truth), cells(*prediction), **LYFT_PARAMS)


def test_lyft_iou_is_footprint_overlap_times_height_overlap_over_the_union() -> None:
    assert lyft([f"1.0 {CAR}"], [f"0.5 {CAR}"]) == pytest.approx(1.0)
    # moved 1 m along x: overlap 3 x 2 x 2 = 12 of 16 + 16 - 12: IoU 0.6, above 0.5 and 0.55 only
    assert lyft([f"1.0 {CAR}"], ["0.5 1 0 0 2 4 2 0 car"]) == pytest.approx(0.2)
    # turned by 90 degrees: footprints overlap on 2 x 2, IoU 8 / 24
    assert lyft([f"1.0 {CAR}"], [f"0.5 0 0 0 2 4 2 {np.pi / 2} car"]) == 0.0
    # half as tall, same footprint: IoU 8 / 16 = 0.5 is not above 0.5
    assert lyft([f"1.0 {CAR}"], ["0.5 0 0 0.5 2 4 1 0 car"]) == 0.0


def test_lyft_a_prediction_whose_best_box_is_taken_is_a_miss() -> None:
    far = "50 0 0 2 4 2 0 car"
    # the second prediction's best box (IoU 0.6) is already taken: a miss, though the far box is free
    score = lyft([f"1.0 {CAR} 1.0 {far}"], [f"0.9 {CAR} 0.8 1 0 0 2 4 2 0 car"])
    assert score == pytest.approx(0.5)  # recall 1/2 at precision 1, at every threshold


def test_lyft_averages_samples_and_ignores_classes_absent_from_a_sample() -> None:
    truth = [f"1.0 {CAR}", f"1.0 {CAR} 1.0 5 5 0 1 1 2 0 pedestrian"]
    assert lyft(truth, [f"0.5 {CAR} 0.4 9 9 0 1 1 1 0 bus", ""]) == pytest.approx(0.5)
    # sample 2: car found, pedestrian not (0): its mAP is 1/2
    assert lyft(truth, [f"0.5 {CAR}", f"0.5 {CAR}"]) == pytest.approx(0.75)


def test_lyft_names_the_first_malformed_row_of_many() -> None:
    good = f"0.5 {CAR}"
    truth = [f"1.0 {CAR}"] * 4
    for bad, reason in [("0.5 0 0 0 2 4 2 car", "groups"), ("0.5 0 0 0 2 4 nan 0 car", "finite"),
                        ("0.5 0 0 0 2 -4 2 0 car", "not positive")]:
        later = "0.5 0 0 0 2 4 2 0 car 1"  # also malformed, further down
        with pytest.raises(InvalidPrediction, match=f"row 3: .*{reason}"):
            lyft(truth, [good, "", bad, later])


def test_lyft_counts_a_corner_overlap_and_nothing_for_boxes_just_apart() -> None:
    # at IoU threshold 0, any shared volume is a hit: the pairs nearest the cut-off of the shapely-free
    # shortcut (circumscribed circles that barely meet) must still be measured
    corner, apart = "0.5 3.98 1.99 0 2 4 2 0 car", "0.5 4.02 2.01 0 2 4 2 0 car"
    assert lyft_3d_map(cells(f"1.0 {CAR}"), cells(corner), iou_thresholds=[0.0]) == 1.0
    assert lyft_3d_map(cells(f"1.0 {CAR}"), cells(apart), iou_thresholds=[0.0]) == 0.0
    tilted = f"0.5 {1.999 + np.sqrt(5)} 0 0 2 4 2 {np.arctan2(1, 2)} car"  # its corner pokes into the car's side
    assert lyft_3d_map(cells(f"1.0 {CAR}"), cells(tilted), iou_thresholds=[0.0]) == 1.0


def _random_scenes(rng: np.random.Generator, n_samples: int) -> tuple[list[str], list[str]]:
    """Crowded samples: jittered, duplicated, relabelled and stray predictions, confidences that tie."""
    def cell(boxes: list[list]) -> str:
        return " ".join(" ".join([str(b[0]), *(repr(float(v)) for v in b[1:8]), b[8]]) for b in boxes)

    truths, predictions = [], []
    for _ in range(n_samples):
        true_boxes = [[1.0, *rng.uniform(0, 12, 2), rng.uniform(0, 2), *rng.uniform(1, 4, 2), rng.uniform(1, 2),
                       rng.uniform(-3, 3), str(rng.choice(["car", "bus", "pedestrian"]))]
                      for _ in range(rng.integers(1, 7))]
        predicted = []
        for box in true_boxes:
            for _ in range(rng.integers(0, 3)):
                guess = [float(rng.choice([0.5, 0.9, rng.uniform()])), *(np.asarray(box[1:8]) + rng.normal(0, 0.3, 7)),
                         box[8] if rng.uniform() < 0.9 else "truck"]
                guess[4:7] = [abs(v) + 0.1 for v in guess[4:7]]
                predicted.append(guess)
            if rng.uniform() < 0.2:
                predicted.append(list(box))
        predicted += [[0.5, *rng.uniform(0, 12, 2), 1.0, 2.0, 4.0, 1.5, 0.3, "car"] for _ in range(rng.integers(0, 3))]
        order = rng.permutation(len(predicted))
        truths.append(cell(true_boxes))
        predictions.append(cell([predicted[k] for k in order]))
    return truths, predictions


def test_lyft_equals_the_reference_on_random_crowded_scenes() -> None:
    rng = np.random.default_rng(7)
    for thresholds in (LYFT_PARAMS["iou_thresholds"], [0.0, 0.1, 0.3]):
        for _ in range(10):
            truths, predictions = _random_scenes(rng, int(rng.integers(1, 30)))
            expected = reference_lyft(pd.DataFrame({"t": truths}), pd.DataFrame({"p": predictions}),
                                      {"iou_thresholds": thresholds})
            assert lyft_3d_map(cells(*truths), cells(*predictions), iou_thresholds=thresholds) == pytest.approx(
                expected, abs=1e-12)


@pytest.mark.parametrize("cell", ["0.5 0 0 0 2 4 2 car", "0.5 0 0 0 0 4 2 0 car", "nan 0 0 0 2 4 2 0 car",
                                  "0.5 0 0 0 2 4 2 0 car  "])
def test_lyft_rejects_malformed_predictions(cell: str) -> None:
    with pytest.raises(InvalidPrediction, match="row 1"):
        lyft([f"1.0 {CAR}"], [cell])


# --- the competitions' specs -----------------------------------------------------------------------
def test_specs_name_every_parameter_and_the_quirks() -> None:
    assert get_spec(SIIM).metric.params == {"iou_threshold": 0.5}
    assert VIN_PARAMS == {"iou_thresholds": [0.4], "max_detections": 100, "boxes_as_xywh": True}
    assert get_spec(VIN).submission.answers == "gold_submission.csv"
    assert [r.module for r in get_spec(VIN).requires] == ["pycocotools"]
    vin_issues = " ".join(i.summary for i in get_spec(VIN).known_issues)
    assert "id 0" in vin_issues and "[x, y, width, height]" in vin_issues and "NumPy" in vin_issues
    assert "(0, 0) pair" in " ".join(i.summary for i in get_spec(SIIM).known_issues)
    assert LYFT_PARAMS == {"iou_thresholds": [0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95]}
    assert [r.module for r in get_spec(LYFT).requires] == ["shapely"]
    assert "map.json" in " ".join(i.summary for i in get_spec(LYFT).known_issues)
