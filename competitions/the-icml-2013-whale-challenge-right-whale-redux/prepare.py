"""The labelled clips of the first two recording days are the new training set, those of the last two
days the test set (no random split), as MLE-bench does.

Clips are renumbered within each part in name (= time) order: training clips keep their name with
``TRAIN<k>`` renumbered (the ``_<label>`` suffix stays), test clips become ``<date_time_offset>_Test<k>.aif``.
Both parts are zipped with a top folder (``train2/``, ``test2/``) like Kaggle's archives.
"""

import re
from pathlib import Path

import pandas as pd

from mle_env.errors import PrepareError
from mle_env.prepare.helpers import PrepareContext, raw_folder, write_csv, zip_files


def prepare(ctx: PrepareContext) -> None:
    clips = raw_folder(ctx, "train2")
    names = [p.name for p in clips.iterdir() if p.is_file()]
    days = sorted({name.split("_")[0] for name in names})
    if len(days) != 4:
        raise PrepareError(f"expected clips from 4 recording days in train2, found {len(days)}: {days}")
    train = sorted(n for n in names if n.split("_")[0] in days[:2])
    test = sorted(n for n in names if n.split("_")[0] in days[2:])
    train_names = [re.sub(r"TRAIN\d+", f"TRAIN{k}", name) for k, name in enumerate(train)]
    test_names = [f"{name.split('TRAIN')[0]}Test{k}.aif" for k, name in enumerate(test)]
    zip_files(((clips / old, f"train2/{new}") for old, new in zip(train, train_names, strict=True)),
              ctx.public / "train2.zip")
    zip_files(((clips / old, f"test2/{new}") for old, new in zip(test, test_names, strict=True)),
              ctx.public / "test2.zip")
    labels = [int(Path(name).stem.endswith("_1")) for name in test]
    answers = pd.DataFrame({"clip": test_names, "probability": labels})
    write_csv(answers, ctx.private / "test.csv")
    write_csv(answers.assign(probability=0), ctx.public / "sampleSubmission.csv")
