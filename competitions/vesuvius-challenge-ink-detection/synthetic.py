"""Synthetic raw data for vesuvius-challenge-ink-detection (see mle_env.competition.synthetic).

Kaggle ships ``train/{1,2,3}/`` (``surface_volume/00.tif`` .. ``64.tif``: 16-bit slices of the scanned
papyrus; ``mask.png``: the fragment's outline; ``ir.png``: an infrared photograph; ``inklabels.png``: the ink,
white on black; ``inklabels_rle.csv``: ``Id``, ``Predicted``, the ink as a row-major RLE), ``test/{a,b}/``
(slices and mask only) and ``sample_submission.csv``. Fragments here are a few dozen pixels and 6 slices.
"""

import io
from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import write_csv
from mle_env.grading.rle import decode_rle, encode_rle

PUBLIC = frozenset({"sample_submission.csv", "test", "train"})
PRIVATE = frozenset({"gold_submission.csv", "inklabels_rle.csv"})
SLICES = 6


def _png(array: np.ndarray, mode: str = "L") -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.fromarray(array, mode).save(out, "PNG")
    return out.getvalue()


def _fragment(folder: Path, rng: np.random.Generator, height: int, width: int, labelled: bool) -> None:
    from PIL import Image

    (folder / "surface_volume").mkdir(parents=True)
    for k in range(SLICES):
        out = io.BytesIO()
        Image.fromarray(rng.integers(0, 65535, (height, width)).astype(np.uint16)).save(out, "TIFF")
        (folder / "surface_volume" / f"{k:02d}.tif").write_bytes(out.getvalue())
    (folder / "mask.png").write_bytes(_png(np.full((height, width), 255, np.uint8)))
    if not labelled:
        return
    ink = np.zeros((height, width), dtype=bool)
    for _ in range(4):
        row, col = rng.integers(0, height - 4), rng.integers(0, width - 6)
        ink[row:row + int(rng.integers(2, 5)), col:col + int(rng.integers(3, 7))] = True
    (folder / "ir.png").write_bytes(_png(rng.integers(0, 255, (height, width)).astype(np.uint8)))
    (folder / "inklabels.png").write_bytes(_png(ink.astype(np.uint8), "L"))
    write_csv(pd.DataFrame({"Id": [folder.name], "Predicted": [encode_rle(ink, order="C")]}),
              folder / "inklabels_rle.csv")


def generate(raw: Path) -> None:
    rng = np.random.default_rng(11)
    for name, (height, width) in {"1": (20, 28), "2": (24, 18), "3": (18, 26)}.items():
        _fragment(raw / "train" / name, rng, height, width, True)
    for name in ("a", "b"):
        _fragment(raw / "test" / name, rng, 12, 16, False)
    write_csv(pd.DataFrame({"Id": ["a", "b"], "Predicted": "1 1 5 1"}), raw / "sample_submission.csv")


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    return list(answers["Id"])


def expected_test_ids(raw: Path) -> list[str]:
    """The one test fragment, always fragment 3 renamed "a"."""
    return ["a"]


def noisy_submission(answers: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """The true ink shifted by a pixel or two, plus a false stroke."""
    rows = []
    for text, width, height in zip(answers["Predicted"], answers["width"], answers["height"], strict=True):
        shape = (int(height), int(width))
        mask = np.roll(decode_rle(text, shape, order="C"), tuple(rng.integers(-2, 3, 2)), axis=(0, 1))
        mask[0, :5] = True
        rows.append(encode_rle(mask, order="C"))
    return pd.DataFrame({"Id": answers["Id"], "Predicted": rows})
