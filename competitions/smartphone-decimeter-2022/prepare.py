"""Whole days of driving go to train or test, as MLE-bench splits them: the distinct dates (YYYY-MM-DD, the
start of each drive's name) of the raw ``train/<drive>/`` folders, sorted, are split with
``train_test_split(test_size=0.1, random_state=0)``; each drive folder follows its date into public/train/
or public/test/. The test drives' ``<phone>/ground_truth.csv`` become the answers (``tripId`` =
``<drive>-<phone>``, in sorted drive and phone order) and are left out of public/test/, and so is every
``supplemental/span_log.nmea`` there (the reference receiver's track: see the known issue). ``metadata/``
is copied; the sample submission is the answers' rows at one constant position."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from mle_env.errors import PrepareError
from mle_env.prepare.helpers import PrepareContext, copy_files, place_files, raw_folder, read_csv, split, write_csv
from mle_env.prepare.splits import folder_rows

#: files of a test drive that are not published: the answers, and the reference track that reveals them
WITHHELD = ("ground_truth.csv", "span_log.nmea")
SAMPLE_POSITION = {"LatitudeDegrees": 37.904611315634504, "LongitudeDegrees": -86.48107806249548}


def drive_date(drive: str) -> str:
    """The date a drive's folder name starts with (``2020-5-15-US-MTV-1`` -> ``2020-05-15``)."""
    parts = drive.split("-")
    if len(parts) < 3 or not all(p.isdigit() for p in parts[:3]):
        raise PrepareError(f"drive folder '{drive}' does not start with a date YYYY-MM-DD")
    return f"{parts[0]}-{parts[1].zfill(2)}-{parts[2].zfill(2)}"


def _publish(drive: Path, target: Path, withhold: tuple[str, ...], link: bool) -> None:
    files = sorted(p for p in drive.rglob("*") if p.is_file() and p.name not in withhold)
    place_files(((p, target / p.relative_to(drive)) for p in files), link)


def prepare(ctx: PrepareContext) -> None:
    train_root = raw_folder(ctx, "train")
    drives = folder_rows(train_root, kind="dir")
    test_dates = set(split(sorted({drive_date(d) for d in drives}), 0.1, random_state=0)[1])
    link = ctx.may_link(train_root)
    trips = []
    for drive in drives:
        testing = drive_date(drive) in test_dates
        _publish(train_root / drive, ctx.public / ("test" if testing else "train") / drive,
                 WITHHELD if testing else (), link)
        if testing:
            for phone in folder_rows(train_root / drive, kind="dir"):
                truth = read_csv(train_root / drive / phone / "ground_truth.csv")
                trips.append(truth.assign(tripId=f"{drive}-{phone}")[
                    ["tripId", "UnixTimeMillis", "LatitudeDegrees", "LongitudeDegrees"]])
    answers = pd.concat(trips, ignore_index=True)
    write_csv(answers, ctx.private / "test.csv")
    write_csv(answers.assign(**SAMPLE_POSITION), ctx.public / "sample_submission.csv")
    copy_files(["metadata"], ctx.raw, ctx.public, ctx.may_link(ctx.raw))
