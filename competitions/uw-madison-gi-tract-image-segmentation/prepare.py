"""MLE-bench's split: whole cases go to test (``train_test_split`` over the distinct cases in order of
appearance, test_size 0.1, random_state 42), then every training case with more than four days gives the
days after its fourth (by day number) to test too. Rows keep their raw order; each case's folder goes to
``train/`` or ``test/``, a moved day's folder to ``test/``. The answers add each test image's width and
height, read from its scan's file name (``slice_<SSSS>_<width>_<height>_...png``), as MLE-bench writes them
(floats: ``266.0``)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.errors import PrepareError
from mle_env.prepare.helpers import PrepareContext, find_raw, place_files, raw_folder, read_csv, split, write_csv

SCAN = re.compile(r"slice_(\d+)_(\d+)_(\d+)_.*\.png")


def _day_number(day: str) -> int:
    return int(day[len("day"):])


def _split(case: pd.Series, day: pd.Series) -> tuple[set[str], set[tuple[str, str]]]:
    """The cases held out whole, and the (case, day) pairs of the training cases' days after their fourth."""
    _, test_cases = split(np.array(list(dict.fromkeys(case)), dtype=object), 0.1, random_state=42)
    whole = set(test_cases)
    late: set[tuple[str, str]] = set()
    in_train = ~case.isin(whole)
    for name, days in pd.DataFrame({"case": case[in_train], "day": day[in_train]}).groupby("case", sort=False)["day"]:
        late |= {(name, d) for d in sorted(set(days), key=_day_number)[4:]}
    return whole, late


def _image_sizes(source: Path, test: pd.DataFrame) -> pd.DataFrame:
    """(image_width, image_height) of each test row, from the name of its one scan file."""
    found: dict[tuple[str, str], dict[str, list[tuple[int, int]]]] = {}
    widths, heights = [], []
    for row_id in test["id"]:
        case, day, number = row_id.split("_")[0], row_id.split("_")[1], row_id.split("_")[-1]
        if (case, day) not in found:
            scans: dict[str, list[tuple[int, int]]] = {}
            folder = source / case / f"{case}_{day}" / "scans"
            for path in sorted(folder.glob("slice_*.png")):
                match = SCAN.fullmatch(path.name)
                if match:
                    scans.setdefault(match.group(1), []).append((int(match.group(2)), int(match.group(3))))
            found[(case, day)] = scans
        sizes = found[(case, day)].get(number, [])
        if len(sizes) != 1:
            raise PrepareError(f"expected one scan for {row_id} in {source / case / f'{case}_{day}' / 'scans'}, "
                               f"found {len(sizes)}")
        widths.append(float(sizes[0][0]))
        heights.append(float(sizes[0][1]))
    return pd.DataFrame({"image_width": widths, "image_height": heights}, index=test.index)


def prepare(ctx: PrepareContext) -> None:
    raw = read_csv(find_raw(ctx, "train.csv"))
    parts = raw["id"].str.split("_")
    case, day = parts.str[0], parts.str[1]
    whole, late = _split(case, day)
    in_test = case.isin(whole).to_numpy() | np.array([(c, d) in late for c, d in zip(case, day, strict=True)])
    train, test = raw[~in_test], raw[in_test]

    # each case's folder to its part, a late day's folder to test
    source = raw_folder(ctx, "train")
    pairs = []
    for name in dict.fromkeys(case):
        for child in sorted((source / name).iterdir()):
            late_day = (name, child.name[len(name) + 1:]) in late
            part = "test" if name in whole or late_day else "train"
            pairs.append((child, ctx.public / part / name / child.name))
    place_files(pairs, ctx.may_link(source))

    write_csv(train, ctx.public / "train.csv", na_rep="")
    write_csv(test[["id", "class"]], ctx.public / "test.csv", na_rep="")
    write_csv(test[["id", "class"]].assign(predicted="1 1 5 2"), ctx.public / "sample_submission.csv", na_rep="")
    answers = test.rename(columns={"segmentation": "predicted"}).join(_image_sizes(source, test))
    write_csv(answers, ctx.private / "test.csv", na_rep="")
