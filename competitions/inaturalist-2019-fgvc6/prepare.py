"""iNaturalist 2019: the images of ``train2019.json`` split per category with
:func:`mle_env.prepare.coco_split.coco_split` (12 %; a category with one image stays in train, one with 2-4
sends its last image to test), as MLE-bench splits them.

Test images keep their ids; their file names become ``test2019/<original base name>``. Public:
``train2019.json`` (the train items, every other key kept), ``test2019.json`` (the test ``images``, ``info``
and ``licenses``), ``val2019.json`` unchanged, ``kaggle_sample_submission.csv`` (MLE-bench's seeded values)
and the images packed as MLE-bench packs them: ``train_val2019.tar.gz`` (members ``<category folder>/
<name>.jpg``, the path below ``train_val2019/``) and ``test2019.tar.gz`` (members ``<name>.jpg``), both plain
uncompressed tar archives despite their names. Private: ``answers.csv`` (``id``, ``predicted``).

The images are read straight from the raw ``train_val2019.tar.gz`` in one pass and written into the two
archives, so the ~82 GB archive is never unpacked on disk (a raw ``train_val2019/`` folder, as MLE-bench
leaves one beside the archive, is read instead when present).
"""

from __future__ import annotations

import tarfile
from pathlib import Path, PurePosixPath
from typing import Any

from mle_env.errors import PrepareError
from mle_env.prepare import samples
from mle_env.prepare.coco_split import answers_frame, coco_split, read_metadata, with_items, write_metadata
from mle_env.prepare.helpers import PrepareContext, copy_files, write_csv

IMAGES = "train_val2019"


def prepare(ctx: PrepareContext) -> None:
    p: dict[str, Any] = ctx.params
    metadata = read_metadata(ctx.raw_file("train2019.json"))
    parts = coco_split(metadata, test_size=p["test_size"], random_state=p["random_state"],
                       shuffle_seed=p["shuffle_seed"], small="last")
    write_metadata(with_items(metadata, ((i.annotation, i.image) for i in parts.train)), ctx.public / "train2019.json")
    test = [(item.annotation, {**item.image, "file_name": "test2019/" + PurePosixPath(item.image["file_name"]).name})
            for item in parts.test]
    public_test = with_items(metadata, test, keep=("info", "licenses"))
    del public_test["annotations"]
    write_metadata(public_test, ctx.public / "test2019.json")
    copy_files(["val2019.json"], ctx.raw, ctx.public, ctx.may_link(ctx.raw))
    ids = [item.image["id"] for item in parts.test]
    write_csv(answers_frame(ids, (item.category for item in parts.test), ("id", "predicted")),
              ctx.private / "answers.csv")
    values = samples.random_values(len(ids), p["sample_random"])
    write_csv(answers_frame(ids, values, ("id", "predicted")), ctx.public / "kaggle_sample_submission.csv")
    # raw path -> (archive, member name)
    wanted = {item.image["file_name"]: ("train", str(PurePosixPath(item.image["file_name"]).relative_to(IMAGES)))
              for item in parts.train}
    wanted.update({item.image["file_name"]: ("test", PurePosixPath(item.image["file_name"]).name)
                   for item in parts.test})
    pack_images(ctx, wanted)


def pack_images(ctx: PrepareContext, wanted: dict[str, tuple[str, str]]) -> None:
    """Write every raw image of ``wanted`` into public ``train_val2019.tar.gz`` or ``test2019.tar.gz`` under
    its member name (uncompressed tar, as MLE-bench writes them)."""
    outputs = {"train": ctx.public / f"{IMAGES}.tar.gz", "test": ctx.public / "test2019.tar.gz"}
    folder = ctx.raw / IMAGES
    with tarfile.open(outputs["train"], "w") as train, tarfile.open(outputs["test"], "w") as test:
        archives = {"train": train, "test": test}
        if folder.is_dir():
            missing = [name for name in wanted if not (ctx.raw / name).is_file()]
            _check_missing(missing, folder)
            for name, (part, member) in wanted.items():
                archives[part].add(ctx.raw / name, arcname=member)
            return
        source = ctx.raw_file(f"{IMAGES}.tar.gz")
        found: set[str] = set()
        with tarfile.open(source, "r|*") as raw:  # one sequential pass: no seeking in 80 GB of gzip
            for info in raw:
                name = info.name.removeprefix("./")
                if not info.isfile() or name not in wanted or name in found:
                    continue
                part, member = wanted[name]
                out = tarfile.TarInfo(member)
                out.size, out.mtime, out.mode = info.size, info.mtime, info.mode
                archives[part].addfile(out, raw.extractfile(info))
                found.add(name)
        _check_missing([name for name in wanted if name not in found], source)


def _check_missing(missing: list[str], source: Path) -> None:
    if missing:
        raise PrepareError(f"{source.name} lacks {len(missing)} image(s) listed in train2019.json, e.g. {missing[0]}")
