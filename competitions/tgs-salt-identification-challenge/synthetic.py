"""Synthetic raw data for tgs-salt-identification-challenge (see mle_env.competition.synthetic).

MLE-bench reads ``competition_data.zip`` (a ``competition_data/`` folder: ``train.csv`` with ``id`` and
``rle_mask``, empty for an image without salt; ``train/images/<id>.png`` and ``train/masks/<id>.png``, 101 x 101
grey PNGs; ``test/images/<id>.png``) and ``depths.csv`` (``id``, ``z`` for train and test ids); Kaggle also
ships ``sample_submission.csv``.
"""

import io
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import held_out, hex_ids, image_bytes, write_csv, write_zip
from mle_env.grading.rle import decode_rle, encode_rle

PUBLIC = frozenset({"depths.csv", "sample_submission.csv", "test", "train", "train.csv"})
PRIVATE = frozenset({"test.csv"})
SIZE = 101


def _mask(rng: np.random.Generator, n: int) -> np.ndarray:
    """No salt, all salt, a band over most of the image, or one or two random rectangles."""
    mask = np.zeros((SIZE, SIZE), dtype=bool)
    kind = n % 6
    if kind == 1:
        mask[:] = True
    elif kind == 2:
        mask[int(rng.integers(10, 40)):, :] = True
    elif kind >= 3:
        for _ in range(int(rng.integers(1, 3))):
            top, left = rng.integers(0, 80, 2)
            height, width = rng.integers(5, 40, 2)
            mask[top:top + height, left:left + width] = True
    return mask


def _png(mask: np.ndarray) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.fromarray(mask.astype(np.uint8) * 255, "L").save(out, "PNG")
    return out.getvalue()


def generate(raw: Path) -> None:
    rng = np.random.default_rng(7)
    ids = hex_ids(rng, 48, 10)
    train_ids, test_ids = ids[:40], ids[40:]
    masks = [_mask(rng, n) for n in range(len(train_ids))]
    rles = [encode_rle(m) or np.nan for m in masks]
    members: dict[str, bytes | str] = {
        "competition_data/train.csv": pd.DataFrame({"id": train_ids, "rle_mask": rles}).to_csv(index=False)}
    for n, (i, mask) in enumerate(zip(train_ids, masks, strict=True)):
        members[f"competition_data/train/images/{i}.png"] = image_bytes("PNG", (SIZE, SIZE), "L", seed=n)
        members[f"competition_data/train/masks/{i}.png"] = _png(mask)
    for n, i in enumerate(test_ids):
        members[f"competition_data/test/images/{i}.png"] = image_bytes("PNG", (SIZE, SIZE), "L", seed=100 + n)
    write_zip(raw / "competition_data.zip", members)
    write_csv(pd.DataFrame({"id": ids, "z": rng.integers(50, 950, len(ids))}), raw / "depths.csv")
    write_csv(pd.DataFrame({"id": test_ids, "rle_mask": "1 1"}), raw / "sample_submission.csv")


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    return list(answers["id"])


def expected_test_ids(raw: Path) -> list[str]:
    """A 25 % split of ``train.csv`` inside the zip, sorted by id."""
    with zipfile.ZipFile(raw / "competition_data.zip") as zf:
        labelled = pd.read_csv(io.BytesIO(zf.read("competition_data/train.csv")))
    return sorted(str(i) for i in held_out(labelled, 0.25)["id"])


def noisy_submission(answers: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """Each true mask shifted by a few pixels, with some rows emptied (salt missed, MLE-bench's quirk) and
    some salt-free rows given a small false mask."""
    rows = []
    for n, text in enumerate(answers["rle_mask"]):
        mask = decode_rle(text, (SIZE, SIZE))
        if not mask.any():
            mask[40:45, 40:45] = n % 2 == 0
        elif n % 3 == 0:
            mask[:] = False
        else:
            mask = np.roll(mask, tuple(rng.integers(-6, 7, 2)), axis=(0, 1))
        rows.append(encode_rle(mask))
    return pd.DataFrame({"id": answers["id"], "rle_mask": rows})
