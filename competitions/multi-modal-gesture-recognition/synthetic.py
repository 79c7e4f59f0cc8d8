"""Synthetic raw data for multi-modal-gesture-recognition (see mle_env.competition.synthetic)."""

import gzip
import io
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import column_ids, mp4_bytes, wav_bytes, write_csv, write_zip

PUBLIC = frozenset({"devel01-40.7z", "randomPredictions.csv", "sample_code_mmrgc.zip", "test.csv", "test.tar.gz",
                    "training.csv", "training1.tar.gz", "training2.tar.gz", "training3.tar.gz",
                    "valid_all_files_combined.7z", "validation1.tar.gz", "validation2.tar.gz",
                    "validation3.tar.gz"})
PRIVATE = frozenset({"test.csv"})
GESTURES = ["vattene", "vieniqui", "perfetto", "furbo", "cheduepalle", "chevuoi", "daccordo", "seipazzo",
            "combinato", "freganiente", "ok", "cosatifarei", "basta", "prendere", "noncenepiu", "fame",
            "tantotempo", "buonissimo", "messidaccordo", "sonostufo"]
FIXED = (2013, 5, 1, 0, 0, 0)


def data_mat(sequence: list[int] | None, frames: int = 4) -> bytes:
    """A sample's ``_data.mat``: the ``Video`` struct (frames, skeletons, and ``Labels`` unless None)."""
    import scipy.io

    skeletons = np.zeros((1, frames), dtype=[("Skeleton", "O")])
    for f in range(frames):
        joint = np.zeros((1, 1), dtype=[("WorldPosition", "O"), ("PixelPosition", "O"), ("JointType", "O")])
        joint[0, 0] = (np.full((20, 3), 0.1 * f), np.full((20, 2), f), np.array(["HipCenter"], dtype=object))
        skeletons[0, f] = (joint,)
    video = {"NumFrames": frames, "FrameRate": 20, "Frames": skeletons, "MaxDepth": 3000}
    if sequence is not None:
        labels = np.zeros((1, len(sequence)), dtype=[("Name", "O"), ("Begin", "O"), ("End", "O")])
        for k, g in enumerate(sequence):
            labels[0, k] = (GESTURES[g - 1], 10 * k + 1, 10 * k + 8)
        video["Labels"] = labels
    out = io.BytesIO()
    scipy.io.savemat(out, {"Video": video}, do_compression=True)
    return out.getvalue()


def sample_zip(name: str, sequence: list[int] | None) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for suffix, data in (("_color.mp4", mp4_bytes(name)), ("_depth.mp4", mp4_bytes(name + "d")),
                             ("_user.mp4", mp4_bytes(name + "u")), ("_audio.wav", wav_bytes(0.01)),
                             ("_data.mat", data_mat(sequence))):
            zf.writestr(zipfile.ZipInfo(f"{name}{suffix}", FIXED), data)
    return out.getvalue()


def write_tar_gz(path: Path, members: dict[str, bytes]) -> None:
    """A gzipped tar of ``members`` (name -> bytes) at ``path``, with fixed times."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(data), 1367366400
            tar.addfile(info, io.BytesIO(data))
    path.write_bytes(gzip.compress(buffer.getvalue(), mtime=0))


def generate(raw: Path) -> None:
    rng = np.random.default_rng(41)
    rows = []
    for batch in range(1, 5):
        members = {}
        for k in range(4 if batch < 4 else 3):
            number = 100 * batch + k * 7 + 1
            sequence = [int(g) for g in rng.choice(np.arange(1, 21), int(rng.integers(8, 13)), replace=False)]
            members[f"Sample{number:05d}.zip"] = sample_zip(f"Sample{number:05d}", sequence)
            rows.append({"Id": f"{number:04d}", "Sequence": " ".join(map(str, sequence))})
        write_tar_gz(raw / f"training{batch}.tar.gz", members)
    for batch in range(1, 4):
        names = [f"Sample{700 + 10 * batch + k:05d}" for k in range(2)]
        write_tar_gz(raw / f"validation{batch}.tar.gz", {f"{n}.zip": sample_zip(n, None) for n in names})
    write_csv(pd.DataFrame(rows), raw / "training.csv")
    import py7zr

    for name, member in (("devel01-40.7z", "devel01/devel01_1.avi"), ("valid_all_files_combined.7z", "readme.txt")):
        with py7zr.SevenZipFile(raw / name, "w") as z:
            z.writestr(f"{name} {member}".encode(), member)
    write_zip(raw / "sample_code_mmrgc.zip", {"sample_code_mmrgc/main.m": "% read a sample\n"})


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    return column_ids(answers, "Id")


def expected_test_ids(raw: Path) -> list[str]:
    """The training4 samples, as the last four digits of each zip's name, in training.csv's order."""
    with tarfile.open(raw / "training4.tar.gz") as tar:
        held = {Path(m.name).stem[-4:] for m in tar.getmembers() if m.name.endswith(".zip")}
    training = pd.read_csv(raw / "training.csv", dtype=str)
    return [i for i in training["Id"] if i in held]


def noisy_submission(answers: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """The true sequences with, per row, a gesture dropped, one replaced, or one added at random."""
    def edit(cell: str) -> str:
        tokens = cell.split()
        k = int(rng.integers(len(tokens)))
        change = int(rng.integers(3))
        if change == 0:
            del tokens[k]
        elif change == 1:
            tokens[k] = str(int(tokens[k]) % 20 + 1)
        else:
            tokens.insert(k, str(int(rng.integers(1, 21))))
        return " ".join(tokens)

    return answers[["Id"]].assign(Sequence=[edit(c) for c in answers["Sequence"]])
