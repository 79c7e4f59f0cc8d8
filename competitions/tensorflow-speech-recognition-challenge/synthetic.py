"""Synthetic raw data for tensorflow-speech-recognition-challenge (see mle_env.competition.synthetic)."""

import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.archives import extract_7z
from mle_env.competition.synthetic import held_out, wav_bytes

PUBLIC = frozenset({"sample_submission.csv", "test", "train"})
PRIVATE = frozenset({"test.csv"})
FOLDERS = ("yes", "no", "go", "bed", "cat", "seven")
WORDS = ("yes", "no", "up", "down", "left", "right", "on", "off", "stop", "go")


def _pack(files: dict[str, bytes], archive: Path) -> None:
    import py7zr

    with py7zr.SevenZipFile(archive, "w") as z:
        for name, data in files.items():
            z.writestr(data, name)


def generate(raw: Path) -> None:
    rng = np.random.default_rng(23)
    speakers = [f"{s:08x}" for s in rng.choice(16**8, 14, replace=False)]
    train: dict[str, bytes] = {}
    for n, spk in enumerate(speakers):
        for folder in rng.choice(FOLDERS, 3, replace=False):
            train[f"train/audio/{folder}/{spk}_nohash_{n % 2}.wav"] = wav_bytes(0.01 + 0.001 * n)
    for noise in ("white_noise", "running_tap"):
        train[f"train/audio/_background_noise_/{noise}.wav"] = wav_bytes(0.08)
    train["train/audio/_background_noise_/README.md"] = b"Noise recordings.\n"
    train["train/validation_list.txt"] = "\n".join(list(train)[:3]).encode()
    train["train/testing_list.txt"] = "\n".join(list(train)[3:6]).encode()
    train["train/LICENSE"] = b"CC BY 4.0\n"
    _pack(train, raw / "train.7z")
    test = {f"test/audio/clip_{h}.wav": wav_bytes(0.01) for h in ("000044442", "0000adfa2", "00015b8d8")}
    _pack(test, raw / "test.7z")
    sample = pd.DataFrame({"fname": [Path(n).name for n in test], "label": "silence"})
    _pack({"sample_submission.csv": sample.to_csv(index=False).encode()}, raw / "sample_submission.7z")


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    """Each test clip as '<fname> <label>' (file names alone are just a count)."""
    return [f"{f} {label}" for f, label in zip(answers["fname"], answers["label"], strict=True)]


def expected_test_ids(raw: Path) -> list[str]:
    """Speakers (noise files each their own) sorted and split 10 %; their clips sorted by '<folder>_<name>',
    put in RandomState(0) order and numbered; labels folded into the 12 classes."""
    with tempfile.TemporaryDirectory() as tmp:
        extract_7z(raw / "train.7z", Path(tmp))
        clips = sorted((p.parent.name, p.name) for p in Path(tmp).glob("train/audio/*/*.wav"))
    clips.sort(key=lambda c: f"{c[0]}_{c[1]}")

    def who(folder: str, name: str) -> str:
        return f"_background_noise_/{name}" if folder == "_background_noise_" else name.split("_nohash_")[0]

    chosen = set(held_out(sorted({who(*c) for c in clips}), 0.1))
    test = [c for c in clips if who(*c) in chosen]
    test = [test[i] for i in np.random.RandomState(0).permutation(len(test))]
    folded = [f if f in WORDS else ("silence" if f == "_background_noise_" else "unknown") for f, _ in test]
    return [f"clip_{i:08d}.wav {label}" for i, label in enumerate(folded)]
