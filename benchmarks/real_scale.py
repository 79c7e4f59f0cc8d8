"""Answers at MLE-bench's real scale for the 21 competitions added last, built from their synthetic ones.

``benchmarks/grading.py --real-scale`` grades a perfect submission against these. The synthetic answers
(``competitions/<id>/synthetic.py``, a few rows of tiny images) are repeated, each copy's ids made unique,
until there are as many rows as MLE-bench's prepared test set has; mask competitions get masks drawn at
the real image size (blobs placed on a jittered grid, so that runs never overlap). Row counts and sizes
are estimates from the raw data's published sizes and MLE-bench's split ratios
(``../shared/facts/mlebench-remaining.md``), rounded; what is measured is the cost of grading that many
rows and pixels, not a score.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Scale:
    """How one competition's answers grow to the real size.

    ``rows``: answer rows of MLE-bench's test set (the synthetic rows are repeated until there are at least
    as many). ``note``: where that size comes from (printed beside the timing). ``key_columns``: columns
    beside the id columns that name the same thing and must change with them. ``masks``: redraws the mask
    column(s) of the repeated frame at the real image size.
    """

    rows: int
    note: str
    key_columns: tuple[str, ...] = ()
    masks: Callable[[pd.DataFrame, np.random.Generator], pd.DataFrame] | None = None


def blob_runs(height: int, width: int, radius: int, count: int, rng: np.random.Generator,
              order: str = "F") -> str:
    """An RLE text ("start length" pairs, 1-based, ``order`` F = column-major, C = row-major) of ``count``
    discs of about ``radius`` pixels, on a jittered grid so that no two discs touch."""
    spacing = 2 * radius + 3
    across, down = max(width // spacing, 1), max(height // spacing, 1)
    cells = rng.choice(across * down, size=min(count, across * down), replace=False)
    cells.sort()
    centre_y = (cells % down) * spacing + radius + 1
    centre_x = (cells // down) * spacing + radius + 1
    radii = rng.integers(max(radius // 2, 1), radius + 1, len(cells))
    blob = np.repeat(np.arange(len(cells)), 2 * radii + 1)
    step = np.arange(len(blob)) - np.repeat(np.cumsum(2 * radii + 1) - (2 * radii + 1), 2 * radii + 1) - radii[blob]
    half = np.floor(np.sqrt(radii[blob] ** 2 - step ** 2)).astype(np.int64)
    if order == "F":  # a run down each column of the disc
        starts = (centre_x[blob] + step) * height + centre_y[blob] - half
    else:  # a run along each row of the disc
        starts = (centre_y[blob] + step) * width + centre_x[blob] - half
    lengths = 2 * half + 1
    keep = (starts >= 0) & (starts + lengths <= height * width)
    starts, lengths = starts[keep], lengths[keep]
    order_of = np.argsort(starts, kind="stable")
    pairs = np.column_stack((starts[order_of] + 1, lengths[order_of])).ravel()
    return " ".join(map(str, pairs.tolist()))


def _unique_ids(values: pd.Series, copy: np.ndarray) -> pd.Series:
    """The ids of repeated rows, row ``i`` from copy ``copy[i]``, made unique: numbers shifted past every
    original one, other texts marked before their first '_' (so that suffixes the metrics read, ``_study``,
    ``_short``, ``_slice_0001``, stay as they are). Copy 0 keeps its ids."""
    text = values.astype(str).reset_index(drop=True)
    if text.str.fullmatch(r"\d+").all():
        stride = 10 ** int(text.str.len().max())
        if stride * (int(copy.max()) + 1) < 2 ** 62:
            return pd.Series(text.astype(np.int64).to_numpy() + copy * stride).astype(str)
        return pd.Series([str(int(v) + int(c) * stride) for v, c in zip(text, copy, strict=True)])
    parts = text.str.partition("_")
    mark = pd.Series(np.where(copy > 0, "-" + copy.astype(str), ""))
    return parts[0] + mark + parts[1] + parts[2]


def repeat_rows(answers: pd.DataFrame, rows: int, id_columns: tuple[str, ...]) -> pd.DataFrame:
    """``answers`` repeated ``ceil(rows / len(answers))`` times, each copy's ``id_columns`` made unique."""
    copies = math.ceil(rows / len(answers))
    grown = pd.DataFrame({c: np.tile(answers[c].to_numpy(), copies) for c in answers.columns})
    copy = np.repeat(np.arange(copies), len(answers))
    for column in id_columns:
        grown[column] = _unique_ids(grown[column], copy)
    return grown


def _contrails(answers: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    answers = answers.copy()
    empty = rng.random(len(answers)) < 0.6  # most records have no contrail
    answers["encoded_pixels"] = ["-" if e else blob_runs(256, 256, 6, int(rng.integers(2, 12)), rng)
                                 for e in empty]
    answers["height"], answers["width"] = "256", "256"
    return answers


HUBMAP_SIZES = [(25_794, 34_937), (23_990, 47_340), (36_800, 43_780)]  # about the kidney slides' sizes


def _hubmap(answers: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    answers = answers.head(len(HUBMAP_SIZES)).copy()
    answers["height_pixels"] = [str(h) for h, _ in HUBMAP_SIZES]
    answers["width_pixels"] = [str(w) for _, w in HUBMAP_SIZES]
    answers["encoding"] = [blob_runs(h, w, 150, 1_500, rng) for h, w in HUBMAP_SIZES]
    return answers


def _vesuvius(answers: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    answers = answers.head(1).copy()
    answers["height"], answers["width"] = "7606", "5249"  # fragment 3
    answers["Predicted"] = blob_runs(7_606, 5_249, 20, 20_000, rng, order="C")
    return answers


def _uw_madison(answers: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """40 case-days of 144 slices, 3 classes each, at 266 x 266; organs in about half the slices."""
    rows = []
    for volume in range(40):
        for slice_number in range(1, 145):
            slice_id = f"case{volume + 1}_day{volume % 7}_slice_{slice_number:04d}"
            for organ in ("large_bowel", "small_bowel", "stomach"):
                mask = blob_runs(266, 266, 18, int(rng.integers(1, 4)), rng) if rng.random() < 0.5 else ""
                rows.append((slice_id, organ, mask, "266", "266"))
    return pd.DataFrame(rows, columns=["id", "class", "predicted", "image_width", "image_height"])


#: the 21 at MLE-bench's scale
SCALES: dict[str, Scale] = {
    "3d-object-detection-for-autonomous-vehicles": Scale(4_500, "20% of ~22,700 lidar samples"),
    "google-research-identify-contrails-reduce-global-warming": Scale(
        1_856, "1,856 records, 256 x 256", masks=_contrails),
    "rsna-2022-cervical-spine-fracture-detection": Scale(
        14_536, "1,817 studies x 8 targets", key_columns=("StudyInstanceUID",)),
    "rsna-breast-cancer-detection": Scale(2_382, "1,191 patients x 2 sides"),
    "rsna-miccai-brain-tumor-radiogenomic-classification": Scale(59, "10% of 585 cases"),
    "siim-covid19-detection": Scale(1_240, "~606 studies and ~634 images"),
    "vesuvius-challenge-ink-detection": Scale(1, "fragment 3, 7,606 x 5,249, row-major", masks=_vesuvius),
    "vinbigdata-chest-xray-abnormalities-detection": Scale(1_500, "1,500 images"),
    "cdiscount-image-classification-challenge": Scale(707_000, "10% of 7.07M products"),
    "freesound-audio-tagging-2019": Scale(3_361, "the private test clips, 80 classes"),
    "herbarium-2020-fgvc7": Scale(206_000, "~20% of 1.03M sheets"),
    "herbarium-2021-fgvc8": Scale(450_000, "~20% of 2.26M sheets"),
    "herbarium-2022-fgvc9": Scale(168_000, "20% of 840k sheets"),
    "hubmap-kidney-segmentation": Scale(3, "3 slides of 0.9-1.6 gigapixels", masks=_hubmap),
    "icecube-neutrinos-in-deep-ice": Scale(13_200_000, "66 batches of 200,000 events"),
    "inaturalist-2019-fgvc6": Scale(32_000, "12% of 265k images"),
    "iwildcam-2020-fgvc7": Scale(48_000, "22% of 218k images"),
    "seti-breakthrough-listen": Scale(6_000, "10% of 60,000 cadences"),
    "tensorflow2-question-answering": Scale(61_400, "30,700 examples x (short, long)"),
    "tgs-salt-identification-challenge": Scale(1_000, "25% of 4,000 images, 101 x 101"),
    "uw-madison-gi-tract-image-segmentation": Scale(17_280, "40 case-days x 144 slices x 3 organs, 266 x 266",
                                                    masks=_uw_madison),
}


def real_scale_answers(cid: str, answers: pd.DataFrame, id_columns: tuple[str, ...], seed: int = 0) -> pd.DataFrame:
    """``cid``'s synthetic ``answers`` grown to MLE-bench's size (see :data:`SCALES`)."""
    scale = SCALES[cid]
    grown = repeat_rows(answers, scale.rows, (*id_columns, *scale.key_columns))
    return scale.masks(grown, np.random.default_rng(seed)) if scale.masks else grown
