"""Synthetic raw data for the-icml-2013-whale-challenge-right-whale-redux (see mle_env.competition.synthetic)."""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import aiff_bytes, column_ids, sorted_member_names, write_csv, write_zip

PUBLIC = frozenset({"sampleSubmission.csv", "test2.zip", "train2.zip"})
PRIVATE = frozenset({"test.csv"})


def generate(raw: Path) -> None:
    rng = np.random.default_rng(22)
    clips, index = {}, 0
    for day in ("20090328", "20090329", "20090330", "20090331"):
        for k in range(6):
            label = k % 2 if day >= "20090330" else int(rng.integers(0, 2))
            name = f"{day}_{k:02d}0000_{rng.integers(100):03d}s{k}ms_TRAIN{index}_{label}.aif"
            clips[f"train2/{name}"] = aiff_bytes()
            index += 1
    write_zip(raw / "train2.zip", clips)
    write_zip(raw / "test2.zip", {f"test2/20090401_000000_00{i}s0ms_Test{i}.aif": aiff_bytes() for i in range(3)})
    write_csv(pd.DataFrame({"clip": [f"20090401_000000_00{i}s0ms_Test{i}.aif" for i in range(3)], "probability": 0}),
              raw / "sampleSubmission.csv")


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    return column_ids(answers, "clip")


def expected_test_ids(raw: Path) -> list[str]:
    """The clips of the last two of the sorted recording days, renamed "<time>_Test<k>.aif" in name order."""
    names = sorted_member_names(raw / "train2.zip", ".aif")
    days = sorted({n[:8] for n in names})
    return [n.split("TRAIN")[0] + f"Test{k}.aif" for k, n in enumerate(n for n in names if n[:8] in days[2:])]
