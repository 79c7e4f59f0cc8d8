"""The shared prepare helpers: finding raw files (packed or not), placing files, and the split_csv recipe."""

from __future__ import annotations

import os
import stat
import textwrap
import zipfile
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from conftest import raw_dir

from mle_env.competition.registry import get_spec, register_competition
from mle_env.errors import PrepareError
from mle_env.paths import CompetitionPaths
from mle_env.prepare.helpers import (
    PrepareContext,
    find_raw,
    place_files,
    raw_folder,
    renumber,
    write_zipped_csv,
    zip_files,
)
from mle_env.prepare.runner import prepare


@pytest.fixture
def ctx(make_competition: Callable[..., Path], tmp_path: Path) -> PrepareContext:
    make_competition()
    paths = [tmp_path / "ctx" / name for name in ("raw", "public", "private", "scratch")]
    for path in paths:
        path.mkdir(parents=True)
    return PrepareContext(get_spec("tiny"), *paths, raw_owned=False)


def test_find_raw_takes_a_file_plain_or_packed(ctx: PrepareContext) -> None:
    (ctx.raw / "plain.csv").write_text("a\n1\n")
    with zipfile.ZipFile(ctx.raw / "train.csv.zip", "w") as zf:
        zf.writestr("train.csv", "a\n2\n")
    with zipfile.ZipFile(ctx.raw / "train.zip", "w") as zf:
        zf.writestr("nested/other.csv", "a\n3\n")
    (ctx.raw / "data.json").mkdir()
    (ctx.raw / "data.json" / "data.json").write_text("[]")
    assert find_raw(ctx, "plain.csv") == ctx.raw / "plain.csv"
    assert find_raw(ctx, "train.csv").read_text() == "a\n2\n"
    assert find_raw(ctx, "other.csv", archive="train.zip").read_text() == "a\n3\n"
    assert find_raw(ctx, "data.json").read_text() == "[]"
    assert find_raw(ctx, "train.csv").is_relative_to(ctx.scratch)  # unpacked into scratch, never into raw
    with pytest.raises(PrepareError, match="raw file 'missing.csv' is missing"):
        find_raw(ctx, "missing.csv")
    with pytest.raises(PrepareError, match="holds no file named absent.csv"):
        find_raw(ctx, "absent.csv", archive="train.zip")


def test_raw_folder_takes_a_folder_plain_or_zipped(ctx: PrepareContext) -> None:
    (ctx.raw / "images").mkdir()
    with zipfile.ZipFile(ctx.raw / "train.zip", "w") as zf:
        zf.writestr("train/a.jpg", b"a")
    with zipfile.ZipFile(ctx.raw / "flat.zip", "w") as zf:
        zf.writestr("b.jpg", b"b")
    assert raw_folder(ctx, "images") == ctx.raw / "images"
    assert (raw_folder(ctx, "train") / "a.jpg").read_bytes() == b"a"
    assert (raw_folder(ctx, "flat") / "b.jpg").read_bytes() == b"b"  # no top folder: the archive is the folder
    assert raw_folder(ctx, "train") == raw_folder(ctx, "train")  # extracted once, then reused
    with pytest.raises(PrepareError, match="'nothing'"):
        raw_folder(ctx, "nothing")


def test_place_files_links_only_when_allowed(ctx: PrepareContext) -> None:
    source = ctx.scratch / "a.bin"
    source.write_bytes(b"x")
    place_files([(source, ctx.public / "linked" / "a.bin")])
    place_files([(source, ctx.public / "copied" / "a.bin")], link=False)
    assert (ctx.public / "linked" / "a.bin").stat().st_ino == source.stat().st_ino
    assert (ctx.public / "copied" / "a.bin").stat().st_ino != source.stat().st_ino
    with pytest.raises(PrepareError, match="missing"):
        place_files([(ctx.scratch / "nope", ctx.public / "nope")])
    assert not ctx.may_link(ctx.raw / "x") and ctx.may_link(ctx.scratch)  # a user's folder is only copied
    owned = PrepareContext(ctx.spec, ctx.raw, ctx.public, ctx.private, ctx.scratch)
    assert owned.may_link(ctx.raw / "x")


def test_zips_and_renumbering(ctx: PrepareContext) -> None:
    (ctx.scratch / "a.txt").write_text("A")
    zip_files([(ctx.scratch / "a.txt", "top/a.txt")], ctx.public / "a.zip")
    write_zipped_csv(pd.DataFrame({"x": [1, 2]}), ctx.public / "t.csv.zip", ctx.scratch)
    with zipfile.ZipFile(ctx.public / "a.zip") as zf:
        assert zf.namelist() == ["top/a.txt"]
    with zipfile.ZipFile(ctx.public / "t.csv.zip") as zf:
        assert zf.namelist() == ["t.csv"] and zf.read("t.csv") == b"x\n1\n2\n"
    assert list(renumber(pd.Series([7, 3, 7, 5]))) == [0, 1, 0, 2]
    assert list(renumber(pd.Series(["b", "a"]), prefix="Test_")) == ["Test_0", "Test_1"]


RECIPE_TOML = """
id = "recipe-comp"
version = 0
title = "Recipe"
domain = "image"
split = "practice"

[metric]
name = "multiclass_log_loss"
lower_is_better = true

[submission]
id_column = "id"
kind = "probability"
rows_sum_to_one = true
answers = "answers.csv"
sample_submission = "sample.csv"

[prepare]
helper = "split_csv"

[prepare.params]
file = "labels.csv"
archive = "labels.zip"
test_size = 0.25
id_column = "id"
target_columns = ["kind"]
classes = ["cat", "dog", "eel"]
keep_order = true
train_name = "labels.csv"
test_name = ""
answers_name = "answers.csv"
sample_name = "sample.csv"
row_files = {{ source = "pics", name = "{{id}}.jpg", train = "{train}", test = "{test}" }}
also_copy = ["notes.txt"]

[[sources]]
type = "kaggle"

[leaderboard]
source = "bundled"
"""


def _recipe(tmp_path: Path, train: str, test: str) -> Path:
    folder = tmp_path / "competitions" / "recipe-comp"
    folder.mkdir(parents=True)
    (folder / "competition.toml").write_text(textwrap.dedent(RECIPE_TOML.format(train=train, test=test)))
    (folder / "description.md").write_text("# recipe\n")
    pd.DataFrame({"score": [0.1, 0.5]}).to_csv(folder / "leaderboard.csv", index=False)
    register_competition(folder)
    raw = tmp_path / "raw-recipe"
    (raw / "pics").mkdir(parents=True)
    labels = pd.DataFrame({"id": [f"p{i:02d}" for i in range(20)], "kind": ["cat", "dog", "eel", "dog"] * 5})
    with zipfile.ZipFile(raw / "labels.zip", "w") as zf:
        zf.writestr("labels.csv", labels.to_csv(index=False))
    for image_id in labels["id"]:
        (raw / "pics" / f"{image_id}.jpg").write_bytes(image_id.encode())
    (raw / "notes.txt").write_text("notes")
    return raw


def test_split_csv_one_hot_in_raw_order_with_files(tmp_path: Path, home: Path) -> None:
    raw = _recipe(tmp_path, "pics", "pics")
    prepare("recipe-comp", raw_dir=raw)
    paths = CompetitionPaths("recipe-comp")
    answers = pd.read_csv(paths.private / "answers.csv")
    sample = pd.read_csv(paths.public / "sample.csv")
    train = pd.read_csv(paths.public / "labels.csv")
    assert list(answers.columns) == ["id", "cat", "dog", "eel"]
    assert answers[["cat", "dog", "eel"]].sum(axis=1).eq(1).all()
    assert list(answers["id"]) == sorted(answers["id"]) and list(train["id"]) == sorted(train["id"])  # raw order
    assert len(answers) == 5 and set(answers["id"]).isdisjoint(train["id"])
    assert sample[["cat", "dog", "eel"]].eq(1 / 3).all().all() and list(sample["id"]) == list(answers["id"])
    assert sorted(p.name for p in paths.public.iterdir()) == ["description.md", "labels.csv", "notes.txt", "pics",
                                                               "sample.csv"]
    assert len(list((paths.public / "pics").iterdir())) == 20
    # --raw-dir is the user's folder: its files are copied, not linked, and stay writable
    picture = raw / "pics" / "p00.jpg"
    assert (paths.public / "pics" / "p00.jpg").stat().st_ino != picture.stat().st_ino
    assert picture.stat().st_mode & stat.S_IWUSR


def test_split_csv_zips_files_and_links_from_its_own_cache(tmp_path: Path, home: Path) -> None:
    raw = _recipe(tmp_path, "train.zip", "test.zip")
    archive = tmp_path / "download.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for path in sorted(raw.rglob("*")):
            if path.is_file():
                zf.write(path, path.relative_to(raw))
    prepare("recipe-comp", raw_zip=archive)
    public = CompetitionPaths("recipe-comp").public
    with zipfile.ZipFile(public / "train.zip") as train, zipfile.ZipFile(public / "test.zip") as test:
        assert len(train.namelist()) == 15 and len(test.namelist()) == 5
        assert all("/" not in name for name in train.namelist() + test.namelist())  # flat, as MLE-bench zips
    notes = public / "notes.txt"
    assert notes.stat().st_ino == (CompetitionPaths("recipe-comp").raw / "notes.txt").stat().st_ino
    assert not os.stat(notes).st_mode & stat.S_IWUSR


def test_split_csv_still_works_for_the_tiny_competition(make_competition: Callable[..., Path], home: Path) -> None:
    prepare("tiny", raw_dir=raw_dir(make_competition()))
    assert (CompetitionPaths("tiny-comp").public / "test.csv").is_file()
