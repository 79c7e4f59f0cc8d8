"""Synthetic raw data for hubmap-kidney-segmentation (see mle_env.competition.synthetic).

Kaggle ships ``train.csv`` (``id``, ``encoding``: the glomeruli as a column-major RLE of the whole image;
15 images), ``train/<id>.tiff`` with ``<id>.json`` (glomerulus polygons) and ``<id>-anatomical-structure.json``,
``test/`` laid out the same without labels, ``HuBMAP-20-dataset_information.csv`` (one row per train and
test image: ``image_file``, ``width_pixels``, ``height_pixels``, the segmentation file names and patient
fields) and ``sample_submission.csv`` (``id``, ``predicted``). Images here are a few dozen pixels wide
instead of tens of thousands.
"""

import json
from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import hex_ids, image_bytes, write_csv
from mle_env.grading.rle import decode_rle, encode_rle

PUBLIC = frozenset({"HuBMAP-20-dataset_information.csv", "sample_submission.csv", "test", "train", "train.csv"})
PRIVATE = frozenset({"gold_submission.csv", "test.csv"})


def _polygon(top: int, left: int, size: int) -> dict:
    ring = [[left, top], [left + size, top], [left + size, top + size], [left, top + size], [left, top]]
    return {"type": "Feature", "geometry": {"type": "Polygon", "coordinates": [ring]},
            "properties": {"classification": {"name": "glomerulus"}}}


def _image(folder: Path, image_id: str, rng: np.random.Generator, n: int) -> str:
    """Writes the image's three files; returns its RLE (glomeruli as squares)."""
    height, width = 30 + 2 * n, 40 + n
    mask = np.zeros((height, width), dtype=bool)
    squares = [] if n % 7 == 3 else [(int(rng.integers(0, height - 8)), int(rng.integers(0, width - 8)),
                                      int(rng.integers(3, 8))) for _ in range(int(rng.integers(1, 4)))]
    for top, left, size in squares:
        mask[top:top + size, left:left + size] = True
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{image_id}.tiff").write_bytes(image_bytes("TIFF", (width, height), seed=n))
    (folder / f"{image_id}.json").write_text(json.dumps([_polygon(*s) for s in squares], indent=2))
    cortex = {"type": "Feature", "properties": {"classification": {"name": "Cortex"}},
              "geometry": {"type": "Polygon", "coordinates": [[[0, 0], [width, 0], [width, height], [0, 0]]]}}
    (folder / f"{image_id}-anatomical-structure.json").write_text(json.dumps([cortex], indent=2))
    return encode_rle(mask)


def generate(raw: Path) -> None:
    rng = np.random.default_rng(3)
    ids = hex_ids(rng, 20, 9)
    encodings = [_image(raw / "train", i, rng, n) for n, i in enumerate(ids[:15])]
    for n, i in enumerate(ids[15:]):
        _image(raw / "test", i, rng, 15 + n)
        (raw / "test" / f"{i}.json").unlink()
    write_csv(pd.DataFrame({"id": ids[:15], "encoding": encodings}), raw / "train.csv")
    info = pd.DataFrame({
        "image_file": [f"{i}.tiff" for i in ids], "width_pixels": [40 + n for n in range(20)],
        "height_pixels": [30 + 2 * n for n in range(20)],
        "anatomical_structures_segmention_file": [f"{i}-anatomical-structure.json" for i in ids],
        "glomerulus_segmentation_file": [f"{i}.json" for i in ids],
        "patient_number": rng.integers(60000, 70000, 20), "race": "White", "ethnicity": "Not Hispanic or Latino",
        "sex": ["Male", "Female"] * 10, "age": rng.integers(30, 80, 20),
        "weight_kilograms": rng.normal(80, 10, 20).round(1), "height_centimeters": rng.normal(170, 8, 20).round(1),
        "bmi_kg/m^2": rng.normal(27, 3, 20).round(1), "laterality": ["Left", "Right"] * 10,
        "percent_cortex": rng.integers(50, 100, 20), "percent_medulla": rng.integers(0, 50, 20)})
    write_csv(info, raw / "HuBMAP-20-dataset_information.csv")
    write_csv(pd.DataFrame({"id": ids[15:], "predicted": ""}), raw / "sample_submission.csv")


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    return list(answers["id"])


def expected_test_ids(raw: Path) -> list[str]:
    """Three of the 15 labelled images, in the split's order."""
    from sklearn.model_selection import train_test_split

    labelled = pd.read_csv(raw / "train.csv")
    return list(train_test_split(labelled, train_size=12, test_size=3, random_state=0)[1]["id"])


def perfect_submission(answers: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({"id": answers["id"], "predicted": answers["encoding"]})


def noisy_submission(answers: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """Each true mask shifted by a pixel or two, plus a false glomerulus in a corner."""
    rows = []
    for text, width, height in zip(answers["encoding"], answers["width_pixels"], answers["height_pixels"],
                                   strict=True):
        mask = np.roll(decode_rle(text, (int(height), int(width))), tuple(rng.integers(-2, 3, 2)), axis=(0, 1))
        mask[:2, :3] = True
        rows.append(encode_rle(mask))
    return pd.DataFrame({"id": answers["id"], "predicted": rows})
