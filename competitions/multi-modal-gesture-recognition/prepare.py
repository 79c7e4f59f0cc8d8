"""MLE-bench's preparation, with the label leak of its issue #77 removed.

All of ``training4.tar.gz`` becomes the test set: its ids are the last four characters of each top-level
``SampleNNNNN.zip`` member's stem, sorted. ``training.csv`` loses those rows (they are the answers,
``private/test.csv``, in raw order); ``test.csv`` lists the ids; ``randomPredictions.csv`` gives each a random
permutation of the gestures 1-20 (``random.seed(0)``, then ``random.sample`` per row, as MLE-bench draws them).
``test.tar.gz`` is training4 with every ``*_data.mat`` rewritten without ``Video.Labels`` (the gesture names
and their frame ranges: the answers); every other member, byte for byte, and the other archives are
published unchanged.
"""

from __future__ import annotations

import gzip
import io
import tarfile
import zipfile
from pathlib import Path, PurePosixPath

import pandas as pd

from mle_env.prepare.helpers import PrepareContext, copy_files, read_csv, write_csv
from mle_env.prepare.samples import python_sample

COPIED = ("training1.tar.gz", "training2.tar.gz", "training3.tar.gz", "validation1.tar.gz",
          "validation2.tar.gz", "validation3.tar.gz", "devel01-40.7z", "valid_all_files_combined.7z",
          "sample_code_mmrgc.zip")
LABEL_FIELD = "Labels"


def test_ids(archive: Path) -> list[str]:
    """The sample ids of a training tar: the last 4 characters of each top-level .zip member's stem, sorted."""
    with tarfile.open(archive) as tar:
        names = [PurePosixPath(m.name) for m in tar.getmembers() if m.isfile()]
    return sorted(p.stem[-4:] for p in names if p.suffix == ".zip" and len(p.parts) == 1)


def strip_labels(mat: bytes) -> bytes:
    """A MATLAB file whose ``Video`` struct has lost its ``Labels`` field (every other variable and field kept)."""
    import scipy.io

    data = {k: v for k, v in scipy.io.loadmat(io.BytesIO(mat)).items() if not k.startswith("__")}
    video = data.get("Video")
    if video is not None and video.dtype.names and LABEL_FIELD in video.dtype.names:
        data["Video"] = {name: video[name][0, 0] for name in video.dtype.names if name != LABEL_FIELD}
    out = io.BytesIO()
    scipy.io.savemat(out, data, do_compression=True)
    return out.getvalue()


def strip_sample(sample: bytes) -> bytes:
    """A sample zip with each ``*_data.mat`` member passed through :func:`strip_labels`."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(sample)) as zin, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            data = zin.read(info)
            zout.writestr(info, strip_labels(data) if info.filename.endswith("_data.mat") else data)
    return out.getvalue()


def write_unlabelled_tar(source: Path, target: Path) -> None:
    """Copy the tar.gz ``source`` to ``target``, member by member, with every .zip member's labels stripped."""
    with tarfile.open(source) as tar, open(target, "wb") as raw_out, \
            gzip.GzipFile(fileobj=raw_out, mode="wb", mtime=0) as gz, tarfile.open(fileobj=gz, mode="w|") as out:
        for member in tar:
            if not member.isfile():
                out.addfile(member)
                continue
            handle = tar.extractfile(member)
            assert handle is not None
            data = handle.read()
            if member.name.endswith(".zip"):
                data = strip_sample(data)
            member.size = len(data)
            out.addfile(member, io.BytesIO(data))


def prepare(ctx: PrepareContext) -> None:
    archive = ctx.raw_file("training4.tar.gz")
    ids = test_ids(archive)
    training = read_csv(ctx.raw_file("training.csv"), dtype={"Id": str, "Sequence": str})
    held = training["Id"].isin(ids)
    write_csv(training[~held], ctx.public / "training.csv")
    write_csv(training[held], ctx.private / "test.csv")
    write_csv(pd.DataFrame({"Id": ids}), ctx.public / "test.csv")
    sequences = python_sample(len(ids), seed=0, options=range(1, 21))
    write_csv(pd.DataFrame({"Id": ids, "Sequence": sequences}), ctx.public / "randomPredictions.csv")
    write_unlabelled_tar(archive, ctx.public / "test.tar.gz")
    copy_files(COPIED, ctx.raw, ctx.public, ctx.may_link(ctx.raw))
