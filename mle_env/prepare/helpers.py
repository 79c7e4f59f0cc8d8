"""Shared building blocks for turning raw files into public/ and private/.

A competition names one helper in ``[prepare] helper = "..."`` with ``params``, or ships a
``prepare.py`` whose ``prepare(ctx)`` calls these functions. Random splits use scikit-learn's
``train_test_split(..., random_state=0)`` exactly as MLE-bench does, so the same raw files give the
same test set.

Helpers read from ``ctx.raw`` (never write there: it may be the user's own folder), may use
``ctx.scratch`` for temporary files, and write only to ``ctx.public`` and ``ctx.private``. Raw files may
still be packed as Kaggle ships them (``train.csv.zip``, ``train.zip`` holding ``train/``):
:func:`find_raw` and :func:`raw_folder` unpack them into scratch when needed.

Whole recipes (``HELPERS``): ``split_csv`` covers one labelled CSV split into train and test, with one
or several target columns, one-hot answers for multi-class labels, one file per row (images, clips)
placed into folders or flat zips, and extra raw files copied along; ``text_normalization`` is the recipe
of Kaggle's two text-normalization challenges; ``table_split`` is the recipe of competitions made with
``mle-env new`` (:mod:`mle_env.prepare.table_split`).
"""

from __future__ import annotations

import csv
import json
import shutil
import zipfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mle_env.competition.spec import CompetitionSpec
from mle_env.errors import PrepareError, PrerequisiteError
from mle_env.prepare import samples
from mle_env.prepare.table_split import table_split
from mle_env.prepare.tables import CsvAppender, read_csv, split  # also for competitions' prepare.py


@dataclass
class PrepareContext:
    """What a prepare step works with.

    Attributes:
        spec: the competition.
        raw: the raw files (read-only).
        public: output folder for what agents may see.
        private: output folder for answers.
        scratch: a temporary folder, deleted after prepare.
        params: ``[prepare] params`` from competition.toml.
        raw_owned: True when ``raw`` is mle-env's own cache, whose files may be hard-linked into public/;
            False for a folder the user gave (``--raw-dir``), which is only ever copied from.
        files: raw files kept outside ``raw`` (a ``url`` source's download), by name; :meth:`raw_file` finds them.
    """

    spec: CompetitionSpec
    raw: Path
    public: Path
    private: Path
    scratch: Path
    params: dict[str, Any] = field(default_factory=dict)
    raw_owned: bool = True
    files: dict[str, Path] = field(default_factory=dict)

    def may_link(self, source: Path) -> bool:
        """Whether files under ``source`` may be hard-linked (a link shares the file's mode, and prepare
        makes public/ read-only, so the user's own files are copied instead)."""
        return self.raw_owned or not Path(source).resolve().is_relative_to(self.raw.resolve())

    def raw_file(self, name: str) -> Path:
        """A raw file that must exist (in ``raw``, else in ``files``); a missing one raises a PrepareError naming it."""
        path = self.raw / name
        if not path.exists() and name in self.files:
            return self.files[name]
        if not path.exists():
            present = sorted(p.name for p in self.raw.iterdir())[:10] if self.raw.is_dir() else []
            raise PrepareError(
                f"raw file '{name}' is missing in {self.raw} (found: {', '.join(present) or 'nothing'}); "
                "the raw folder must hold the competition's original files"
            )
        return path


# --- finding raw files -------------------------------------------------------------------------------
def extract(ctx: PrepareContext, archive: str, into: Path | None = None) -> Path:
    """Extract raw ``archive`` into ``into`` (default: a scratch folder named after it, reused if there)."""
    from mle_env.prepare.sources import extract_archive

    dest = into or ctx.scratch / "archives" / archive
    if into is None and dest.is_dir():
        return dest
    dest.mkdir(parents=True, exist_ok=True)
    extract_archive(ctx.raw_file(archive), dest)
    return dest


def _packed(ctx: PrepareContext, name: str) -> str:
    """The raw archive that holds ``name`` by Kaggle's naming: ``<name>.zip``, else ``<name>.7z``."""
    return next((f"{name}{ext}" for ext in (".zip", ".7z") if (ctx.raw / f"{name}{ext}").is_file()), f"{name}.zip")


def find_raw(ctx: PrepareContext, name: str, archive: str | None = None) -> Path:
    """The raw file ``name``, or, when it is still packed, the member of that name inside raw ``archive``
    (default ``<name>.zip`` or ``<name>.7z``: Kaggle ships files as ``train.csv.zip``, ``train.json.7z``),
    extracted into scratch."""
    direct = ctx.raw / name
    if direct.is_file():
        return direct
    if (direct / name).is_file():  # some Kaggle downloads unpack train.json.zip into a folder train.json/
        return direct / name
    packed = archive or _packed(ctx, name)
    if not (ctx.raw / packed).is_file():
        return ctx.raw_file(name)  # raises, naming the file
    matches = sorted(p for p in extract(ctx, packed).rglob(name) if p.is_file())
    if not matches:
        raise PrepareError(f"{packed} in {ctx.raw} holds no file named {name}")
    return matches[0]


def raw_folder(ctx: PrepareContext, folder: str, archive: str | None = None) -> Path:
    """The raw folder ``folder``, or the same folder inside raw ``archive`` (default ``<folder>.zip`` or
    ``<folder>.7z``); an archive without that top folder counts as the folder itself."""
    direct = ctx.raw / folder
    if direct.is_dir():
        return direct
    packed = archive or _packed(ctx, folder)
    if not (ctx.raw / packed).is_file():
        raise PrepareError(f"raw folder '{folder}' (or archive '{packed}') is missing in {ctx.raw}")
    root = extract(ctx, packed)
    return root / folder if (root / folder).is_dir() else root


def pillow() -> Any:
    """PIL.Image, or a PrerequisiteError saying how to install it."""
    try:
        from PIL import Image
    except ImportError as e:
        raise PrerequisiteError(
            f"this competition's images need Pillow, which cannot be imported here ({type(e).__name__}: {e}): "
            "pip install 'mle-env[images]'"
        ) from e
    return Image


# --- small pieces ------------------------------------------------------------------------------------
def write_csv(frame: pd.DataFrame, path: Path, **kwargs: Any) -> None:
    """Write without the index, creating parent folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False, **kwargs)


def write_json(data: Any, path: Path) -> None:
    """JSON with a 4-space indent and ASCII escapes (json.dump's defaults), as MLE-bench writes it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=4)


def renumber(values: pd.Series, start: int = 0, prefix: str = "") -> pd.Series:
    """Replace each distinct value by ``<prefix><n>``, n counting from ``start`` in order of first appearance."""
    mapping = {old: (f"{prefix}{n}" if prefix else n) for n, old in enumerate(values.unique(), start=start)}
    return values.map(mapping)


def place_files(pairs: Iterable[tuple[Path, Path]], link: bool = True) -> int:
    """Put each source file at its target path: a hard link when ``link`` and on one filesystem, else a copy.
    A source folder is placed whole (every file below it, at the same relative path under the target, so a
    split's rows may be folders); returns the number of files placed."""
    count = 0
    for source, target in pairs:
        if source.is_dir():
            target.mkdir(parents=True, exist_ok=True)
            files = sorted(p for p in source.rglob("*") if p.is_file())
            count += place_files(((f, target / f.relative_to(source)) for f in files), link)
            continue
        if not source.is_file():
            raise PrepareError(f"expected file {source} is missing")
        target.parent.mkdir(parents=True, exist_ok=True)
        count += 1
        if link:
            try:
                target.hardlink_to(source)
                continue
            except OSError:  # another filesystem, or links not supported: copy instead
                pass
        shutil.copyfile(source, target)
    return count


def copy_files(names: Iterable[str], src: Path, dest: Path, link: bool = True) -> int:
    """Copy ``src/<name>`` (a file or a whole folder) to ``dest/<name>`` for each name (see :func:`place_files`);
    returns the number of files."""
    dest.mkdir(parents=True, exist_ok=True)
    return place_files(((src / name, dest / name) for name in names), link)


def zip_files(pairs: Iterable[tuple[Path, str]], archive: Path, compression: int = zipfile.ZIP_DEFLATED) -> int:
    """Write each source file into ``archive`` under its member name; returns the count."""
    archive.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with zipfile.ZipFile(archive, "w", compression) as zf:
        for source, member in pairs:
            if not source.is_file():
                raise PrepareError(f"expected file {source} is missing")
            zf.write(source, member)
            count += 1
    return count


def write_zipped_csv(frame: pd.DataFrame, archive: Path, scratch: Path, **kwargs: Any) -> None:
    """Write ``frame`` as the one CSV inside ``archive`` (member name: the archive's name without .zip)."""
    member = archive.name.removesuffix(".zip")
    staged = scratch / "zipped" / member
    write_csv(frame, staged, **kwargs)
    zip_files([(staged, member)], archive)
    staged.unlink()


def sample_submission(ids: pd.Series, id_column: str, values: dict[str, Any]) -> pd.DataFrame:
    """A sample submission: the id column, then one column per target with a constant value."""
    return pd.DataFrame({id_column: ids.to_numpy(), **values})


def one_hot(frame: pd.DataFrame, id_column: str, label_column: str, classes: Sequence[str]) -> pd.DataFrame:
    """Id column plus one 0/1 column per class, in ``classes`` order (answers for multi-class log loss)."""
    unknown = sorted(set(frame[label_column]) - set(classes))
    if unknown:
        raise PrepareError(f"labels {unknown[:5]} are not in the class list")
    labels = frame[label_column].to_numpy()
    return pd.DataFrame({id_column: frame[id_column].to_numpy(), **{c: (labels == c).astype(int) for c in classes}})


def place_row_files(
    ctx: PrepareContext, row_files: dict[str, Any], id_column: str, train: pd.DataFrame, test: pd.DataFrame
) -> None:
    """Put one raw file per row (an image, a clip) beside the new train and test tables.

    ``row_files`` (from competition.toml): ``source`` raw folder, optional ``archive`` holding it, ``name``
    pattern with ``{id}`` (default ``"{id}"``), and ``train`` / ``test`` output names under public/; a name
    ending in ``.zip`` becomes a flat archive, anything else a folder (the two may be the same folder).
    """
    source = raw_folder(ctx, row_files["source"], row_files.get("archive"))
    pattern = row_files.get("name", "{id}")
    for rows, out in ((train, row_files["train"]), (test, row_files["test"])):
        names = [pattern.format(id=value) for value in rows[id_column]]
        if out.endswith(".zip"):
            zip_files(((source / n, n) for n in names), ctx.public / out)
        else:
            copy_files(names, source, ctx.public / out, ctx.may_link(source))


# --- whole recipes (named in competition.toml) -------------------------------------------------------
def split_csv(
    ctx: PrepareContext,
    *,
    file: str,
    test_size: float | int,
    id_column: str,
    target_columns: Sequence[str],
    sample_values: dict[str, Any] | None = None,
    sample_random: dict[str, dict[str, Any]] | None = None,
    archive: str | None = None,
    random_state: int = 0,
    keep_order: bool = False,
    classes: Sequence[str] | None = None,
    row_files: dict[str, Any] | None = None,
    also_copy: Sequence[str] = (),
    train_name: str = "train.csv",
    test_name: str = "test.csv",
    answers_name: str = "test.csv",
    sample_name: str = "sample_submission.csv",
    answers_keep: str = "all",
    exclude: str | None = None,
    chunk_rows: int | None = None,
    dtype: dict[str, Any] | None = None,
) -> None:
    """One labelled CSV split into a new train and test, as most MLE-bench competitions are.

    Writes public/<train_name> (every column), public/<test_name> (without targets; skipped when
    ``test_name`` is empty), private/<answers_name> and public/<sample_name> (ids with ``sample_values``,
    and per column in ``sample_random`` seeded random values as MLE-bench draws them: see
    :mod:`mle_env.prepare.samples`).

    Answers hold every column, or only id and targets with ``answers_keep="targets"``; with ``classes``
    the single target is a label and the answers are one 0/1 column per class (the sample then defaults to
    1/len(classes) everywhere). ``keep_order`` keeps both parts in the raw file's row order instead of the
    split's. ``row_files`` places one file or folder per row (see :func:`place_row_files`); ``also_copy``
    copies raw files into public/ unchanged. ``archive`` names the raw zip or 7z holding ``file`` (default
    ``<file>.zip`` / ``<file>.7z``). ``exclude`` is a pandas query; the rows it matches are removed before
    the split. ``chunk_rows``: stream the file in chunks of that many rows (0: never), bounding memory
    whatever the file size, with the same rows and order (:mod:`mle_env.prepare.chunked`); by default a
    file over 256 MiB is streamed in chunks of 200,000 rows. ``dtype``: column types to read a file that is
    not streamed with (e.g. ``{"id": str}`` keeps ids like ``00012`` as written).
    """
    from mle_env.prepare import chunked

    path = find_raw(ctx, file, archive)
    header = list(read_csv(path, nrows=0).columns)
    missing = [c for c in [id_column, *target_columns] if c not in header]
    if missing:
        raise PrepareError(f"{file} lacks column(s) {missing}; is this the competition's original file?")
    if chunk_rows is None:
        chunk_rows = chunked.DEFAULT_CHUNK_ROWS if path.stat().st_size > chunked.STREAM_ABOVE_BYTES else 0
    if chunk_rows:
        parts = chunked.split_chunks(path, test_size, random_state, scratch=ctx.scratch, chunk_rows=chunk_rows,
                                     keep_order=keep_order, exclude=exclude)
        train_frames, test_frames, n_test = parts.frames("train"), parts.frames("test"), parts.sizes["test"]
    else:
        frame = read_csv(path, dtype=dtype)
        if exclude:
            frame = frame.drop(frame.query(exclude).index)
        train, test = split(frame, test_size, random_state)
        if keep_order:  # the same rows as the split picks, listed as in the raw file
            train, test = train.sort_index(), test.sort_index()
        train_frames, test_frames, n_test = iter([train]), iter([test]), len(test)
    if classes is not None:
        sample_values = sample_values or {c: 1 / len(classes) for c in classes}
    drawn = {column: samples.random_values(n_test, draw) for column, draw in (sample_random or {}).items()}
    ids: dict[str, list[Any]] = {"train": [], "test": []}
    with CsvAppender(ctx.public / train_name) as out:
        for part in train_frames:
            out.write(part)
            ids["train"] += list(part[id_column]) if row_files is not None else []
    with (CsvAppender(ctx.public / test_name) as public_test, CsvAppender(ctx.private / answers_name) as answers,
          CsvAppender(ctx.public / sample_name) as sample):
        done = 0
        for part in test_frames:
            if test_name:
                public_test.write(part.drop(columns=list(target_columns)))
            if classes is not None:
                answers.write(one_hot(part, id_column, target_columns[0], classes))
            else:
                answers.write(part if answers_keep == "all" else part[[id_column, *target_columns]])
            values = {c: np.asarray(v)[done:done + len(part)] for c, v in drawn.items()}
            sample.write(sample_submission(part[id_column], id_column, {**(sample_values or {}), **values}))
            done += len(part)
            ids["test"] += list(part[id_column]) if row_files is not None else []
    if row_files is not None:
        place_row_files(ctx, row_files, id_column, *(pd.DataFrame({id_column: ids[k]}) for k in ("train", "test")))
    copy_files(also_copy, ctx.raw, ctx.public, ctx.may_link(ctx.raw))


def text_normalization(ctx: PrepareContext, *, language: str, test_size: float = 0.1, random_state: int = 0) -> None:
    """Kaggle's text-normalization challenges (``language`` is the file prefix, ``en`` or ``ru``).

    Whole sentences go to train or test (a split of the distinct sentence ids); sentence ids are then
    renumbered from 0 within each part. Public: ``<lang>_train.csv``, ``<lang>_test_2.csv`` (no ``class``,
    no ``after``) and ``<lang>_sample_submission_2.csv`` (``after`` = ``before``), each zipped alone as
    Kaggle ships them. Private: ``answers.csv`` (``id`` = ``<sentence>_<token>``, ``after``) and the
    sample again. Every CSV quotes its text fields (QUOTE_NONNUMERIC), as MLE-bench writes them.
    """
    old = read_csv(find_raw(ctx, f"{language}_train.csv"))
    train_ids, test_ids = split(old["sentence_id"].unique(), test_size, random_state)
    train = old[old["sentence_id"].isin(train_ids)].copy()
    answers = old[old["sentence_id"].isin(test_ids)].copy()
    for part in (train, answers):
        part["sentence_id"] = renumber(part["sentence_id"])
    test = answers.drop(columns=["after", "class"])
    ids = answers["sentence_id"].astype(str) + "_" + answers["token_id"].astype(str)
    quoted = {"quoting": csv.QUOTE_NONNUMERIC}
    sample = pd.DataFrame({"id": ids, "after": test["before"]})
    write_csv(pd.DataFrame({"id": ids, "after": answers["after"]}), ctx.private / "answers.csv", **quoted)
    write_csv(sample, ctx.private / "sample_submission.csv", **quoted)
    for frame, name in ((train, "train"), (test, "test_2"), (sample, "sample_submission_2")):
        write_zipped_csv(frame, ctx.public / f"{language}_{name}.csv.zip", ctx.scratch, **quoted)


#: the recipe of each name a spec may give (``PREPARE_HELPERS``, checked when a spec is read)
HELPERS: dict[str, Callable[..., None]] = {
    "split_csv": split_csv,
    "text_normalization": text_normalization,
    "table_split": table_split,
}
