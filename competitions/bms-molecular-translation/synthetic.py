"""Synthetic raw data for bms-molecular-translation (see mle_env.competition.synthetic).

Kaggle ships ``train_labels.csv`` (``image_id``, ``InChI``), one PNG per image at
``train/<c0>/<c1>/<c2>/<image_id>.png`` (the first three characters of the 12-digit hex id), the unlabelled
``test/`` images in the same layout, ``extra_approved_InChIs.csv`` (``InChI``) and ``sample_submission.csv``.
"""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import hex_ids, image_bytes, split_recipe, write_csv

PUBLIC = frozenset({"extra_approved_InChIs.csv", "sample_submission.csv", "test", "train", "train_labels.csv"})
PRIVATE = frozenset({"test.csv"})
FORMULAS = ["InChI=1S/C13H20OS/c1-9(2)8-15-13-6-5-10(3)7-12(13)11(4)14/h5-7,9,11,14H,8H2,1-4H3",
            "InChI=1S/C21H30O4/c1-12(22)25-14-6-8-20(2)13(10-14)11-17(23)19-15-4-5-18(24)21(15,3)9-7-16(19)20/h13-16,19H",
            "InChI=1S/C24H23N5O4/c1-14-13-15(7-8-17(14)28-12-10-20(30)26-24(28)32)",
            "InChI=1S/C17H24N2O4S/c1-12(20)18-13(14-7-6-10-24-14)11-15(21)19-16(22)8-4-3-5-9-23-17(16)2"]


def _png(raw: Path, folder: str, image_id: str, seed: int) -> None:
    path = raw / folder / image_id[0] / image_id[1] / image_id[2] / f"{image_id}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(image_bytes("PNG", (16, 12), "L", seed=seed))


def generate(raw: Path) -> None:
    rng = np.random.default_rng(41)
    ids = hex_ids(rng, 56, 12)
    train = pd.DataFrame({"image_id": ids[:50], "InChI": [f"{FORMULAS[i % 4]}{'' if i % 3 else '/q+1'}"
                                                          for i in range(50)]})
    write_csv(train, raw / "train_labels.csv")
    for n, image_id in enumerate(ids):
        _png(raw, "train" if n < 50 else "test", image_id, n)
    write_csv(pd.DataFrame({"image_id": ids[50:], "InChI": "InChI=1S/H2O/h1H2"}), raw / "sample_submission.csv")
    write_csv(pd.DataFrame({"InChI": FORMULAS[:2]}), raw / "extra_approved_InChIs.csv")


ids_from_answers, expected_test_ids = split_recipe("image_id", 0.2, "train_labels.csv")
