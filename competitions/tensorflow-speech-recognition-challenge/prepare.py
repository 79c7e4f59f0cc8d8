"""MLE-bench's preparation of the speech commands, with the two defects of its issue #63 fixed.

Every wav below ``train/audio/<label>/`` of the raw ``train.7z`` is a row. Speakers are kept apart: the
distinct speakers (a clip's name up to ``_nohash_``; each background-noise recording is a speaker of its
own), sorted, are split 10 % / 90 % with ``train_test_split(random_state=0)``, and each clip follows its
speaker. Train clips keep their place, ``public/train/audio/<label>/<name>``. Test clips, listed as MLE-bench
lists them (sorted by ``<label>_<name>``) and then shuffled with ``RandomState(0)`` so that the clip number
says nothing of the label, become ``public/test/audio/clip_<8-digit index>.wav``. Their labels are mapped
to the 12 classes Kaggle scored (the ten words, ``silence`` for background noise, ``unknown`` for every
other word) in ``private/test.csv``; the sample submission says ``silence`` everywhere.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from mle_env.prepare.helpers import PrepareContext, place_files, raw_folder, split, write_csv

WORDS = ("yes", "no", "up", "down", "left", "right", "on", "off", "stop", "go")
NOISE = "_background_noise_"


def scored_label(folder: str) -> str:
    """The class Kaggle scores for a clip of ``folder``: the word itself, ``silence`` or ``unknown``."""
    return folder if folder in WORDS else ("silence" if folder == NOISE else "unknown")


def speaker(folder: str, name: str) -> str:
    """Who recorded a clip: the part of its name before ``_nohash_``; a noise recording is its own speaker."""
    return f"{NOISE}/{name}" if folder == NOISE else name.split("_nohash_")[0]


def prepare(ctx: PrepareContext) -> None:
    root = raw_folder(ctx, "train")
    audio = root / "audio" if (root / "audio").is_dir() else root / "train" / "audio"
    clips = sorted(audio.rglob("*.wav"), key=lambda p: f"{p.parent.name}_{p.name}")
    speakers = sorted({speaker(p.parent.name, p.name) for p in clips})
    test_speakers = set(split(speakers, 0.1, random_state=0)[1])
    test = [p for p in clips if speaker(p.parent.name, p.name) in test_speakers]
    test = [test[i] for i in np.random.RandomState(0).permutation(len(test))]
    train = [p for p in clips if speaker(p.parent.name, p.name) not in test_speakers]
    link = ctx.may_link(audio)
    place_files(((p, ctx.public / "train" / "audio" / p.parent.name / p.name) for p in train), link)
    names = [f"clip_{i:08d}.wav" for i in range(len(test))]
    place_files(((p, ctx.public / "test" / "audio" / n) for p, n in zip(test, names, strict=True)), link)
    answers = pd.DataFrame({"fname": names, "label": [scored_label(p.parent.name) for p in test]})
    write_csv(answers, ctx.private / "test.csv")
    write_csv(answers[["fname"]].assign(label="silence"), ctx.public / "sample_submission.csv")
