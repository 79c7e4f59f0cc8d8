"""``mle-env new``: turn a labelled table into a graded competition folder.

:func:`new_competition` reads the table (:mod:`mle_env.authoring.source`), infers the task and checks it
(:mod:`mle_env.authoring.checks`), then writes ``<out>/<id>/``:

- competition.toml: the ``table_split`` recipe with every parameter and every metric parameter explicit;
- description.md and description_obfuscated.md: skeletons naming the files, columns, target, metric and
  submission format, with TODO lines for the story, which the author writes;
- data/ (a local table only, with its sha256 in competition.toml);
- leaderboard.csv and reference-versions.json: the shared reference population
  (:mod:`mle_env.reference_population`) prepared, run and graded, so medals mean something at once.

A failure at any point removes the folder: nothing is left half-written.
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mle_env.authoring import checks
from mle_env.authoring.description import describe, describe_obfuscated
from mle_env.authoring.source import copy_into, resolve_source
from mle_env.authoring.toml_text import dumps
from mle_env.competition.spec import SPEC_FILE, SPLITS
from mle_env.errors import ConfigError
from mle_env.paths import EXTRA_COMPETITIONS_ENV, user_competitions
from mle_env.prepare.table_formats import read_table
from mle_env.prepare.table_split import GENERATED_ID, encode_target

SPLIT_KINDS = ("random", "stratified", "group", "time")
DOMAINS = ("tabular", "text", "image", "time-series")


@dataclass(frozen=True)
class NewCompetition:
    """The options of ``mle-env new`` (each flag's help says the same).

    Attributes:
        id: the competition id (folder name): lowercase letters, digits and dashes.
        source: ``--from``: a local table or ``pypi:PACKAGE==VERSION:MEMBER[,MEMBER...]``.
        target: the column to predict.
        id_column: a unique id column; None numbers the rows after a seeded shuffle.
        metric: a name of :data:`checks.METRICS` (or an alias); None: the task's default.
        test_size: the test fraction (default 0.2).
        group: a column whose values never sit on both sides (a group split).
        time: a column to split by time: the last ``test_size`` of the rows are the test set.
        split_kind: None: ``group`` with ``group``, ``time`` with ``time``, else ``stratified`` for class
            targets and ``random`` for numbers.
        seed: every random choice (default 0).
        out: the folder that receives ``<id>/`` (default ``<MLE_ENV_HOME>/competitions``, which the registry
            reads).
        title, domain, split, license, partition: competition.toml fields (split default ``practice``).
        positive: the positive label of a binary target (default: the rarer one).
        labels: the classes from lowest to highest, for QWK on a text target.
        drop: columns left out (leaks, row names).
        max_rows: keep at most this many rows (a seeded sample; the latest for a time split); 0: all.
        format: the table format when the file name does not tell it.
        leaderboard: build the reference leaderboard (default True).
    """

    id: str
    source: str
    target: str
    id_column: str | None = None
    metric: str | None = None
    test_size: float = 0.2
    group: str | None = None
    time: str | None = None
    split_kind: str | None = None
    seed: int = 0
    out: Path | None = None
    title: str | None = None
    domain: str | None = None
    split: str = "practice"
    license: str | None = None
    partition: str | None = None
    positive: str | None = None
    labels: tuple[str, ...] | None = None
    drop: tuple[str, ...] = ()
    max_rows: int = 0
    format: str | None = None
    leaderboard: bool = True
    time_limit_s: int = 1800

    def __post_init__(self) -> None:
        import re

        if not re.fullmatch(r"[a-z0-9][a-z0-9-]{1,80}", self.id):
            raise ConfigError(f"id {self.id!r}: use lowercase letters, digits and dashes (e.g. practice-churn)")
        if self.split not in SPLITS:
            raise ConfigError(f"--split {self.split} is not one of {', '.join(SPLITS)}")
        if self.split_kind is not None and self.split_kind not in SPLIT_KINDS:
            raise ConfigError(f"--split-kind {self.split_kind} is not one of {', '.join(SPLIT_KINDS)}")
        if self.domain is not None and self.domain not in DOMAINS:
            raise ConfigError(f"--domain {self.domain} is not one of {', '.join(DOMAINS)}")
        if self.partition not in (None, "train", "eval"):
            raise ConfigError(f"--partition {self.partition} must be train or eval")
        if self.group and self.time:
            raise ConfigError("give --group or --time, not both")
        if self.max_rows < 0:
            raise ConfigError(f"--max-rows must be >= 0 (0: every row); got {self.max_rows}")

    @property
    def folder(self) -> Path:
        return (self.out or user_competitions()) / self.id


def new_competition(options: NewCompetition, say: Any = print) -> Path:
    """Write the competition folder ``options.folder`` (see the module docstring) and return it. A folder
    outside ``<MLE_ENV_HOME>/competitions`` and the package is added to this process's
    ``$MLE_ENV_COMPETITIONS``, so that the registry here (and the child that builds the leaderboard) finds it.

    Raises:
        ConfigError: the options, the table or the task fail a check (one line saying what to change).
    """
    folder = options.folder
    if folder.exists():
        raise ConfigError(f"{folder} already exists; pick another id or remove it")
    with tempfile.TemporaryDirectory(prefix="mle-env-new-") as scratch:
        source = resolve_source(options.source, Path(scratch), options.format)
        frame = _read(source)
        doc, counts = _document(options, source, frame)
        folder.mkdir(parents=True)
        try:
            copy_into(folder, source.copies)
            (folder / SPEC_FILE).write_text(dumps(doc, _COMMENTS), encoding="utf-8")
            (folder / "description.md").write_text(describe(doc, frame, counts), encoding="utf-8")
            obfuscated = describe_obfuscated(doc, frame, counts)
            (folder / "description_obfuscated.md").write_text(obfuscated, encoding="utf-8")
            _register(folder)
            if options.leaderboard:
                _leaderboard(doc["id"], folder, say)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            _register(None)
            raise
    return folder


def _read(source: Any) -> Any:
    import pandas as pd

    try:
        return pd.concat([read_table(path, source.format) for path in source.paths], ignore_index=True)
    except Exception as e:  # noqa: BLE001 - any parse failure is the user's file
        raise ConfigError(f"cannot read the table as {source.format}: {e}") from None


def _document(options: NewCompetition, source: Any, frame: Any) -> tuple[dict[str, Any], dict[str, int]]:
    """competition.toml's content, and the row counts the descriptions state."""
    for flag, column in (("--target", options.target), ("--group", options.group), ("--time", options.time)):
        if column and column not in frame.columns:
            raise ConfigError(f"{flag} {column} is not a column; the table has {', '.join(frame.columns[:30])}")
    unknown = [c for c in options.drop if c not in frame.columns]
    if unknown:
        raise ConfigError(f"--drop {', '.join(unknown)}: no such column")
    metric = checks.metric_name(options.metric)
    frame = frame.drop(columns=list(options.drop)).dropna(subset=[options.target]).reset_index(drop=True)
    info = checks.infer_target(frame[options.target], metric, options.positive, options.labels)
    metric = metric or checks.DEFAULT_METRIC[info.task]
    choice = checks.METRICS[metric]
    if choice.answers == "classes" and info.task == "binary":  # one probability column per label, by name
        info = checks.Target("multiclass", info.labels)
    checks.check_id(frame, options.id_column)
    rows = min(len(frame), options.max_rows) if options.max_rows else len(frame)
    kind = options.split_kind or ("group" if options.group else "time" if options.time
                                  else "stratified" if info.task != "regression" else "random")
    checks.check_test_size(frame.head(rows), frame[options.target], options.test_size, info, choice.answers,
                           stratified=kind == "stratified")
    skip = {c for c in (options.id_column, options.group, options.time) if c}
    encoded = frame.assign(**{options.target: encode_target(frame[options.target], info.task, info.positive,
                                                             info.labels)})
    leak = checks.find_leak(encoded, options.target, info, skip, options.seed)
    if leak:
        raise ConfigError(f"column {leak[0]!r} predicts {options.target!r} almost perfectly on its own "
                          f"(score {leak[1]:.3f}; {checks.LEAK_SCORE} or more is a leak); "
                          f"leave it out with --drop {leak[0]}")
    if kind == "group" and not options.group or kind == "time" and not options.time:
        raise ConfigError(f"--split-kind {kind} needs --{kind}")
    id_column = options.id_column or GENERATED_ID
    if id_column in frame.columns and not options.id_column:
        raise ConfigError(f"the table already has a column {GENERATED_ID!r}; pass --id {GENERATED_ID} or --drop it")
    n_test = math.ceil(rows * options.test_size)
    counts = {"rows": rows, "train": rows - n_test, "test": n_test}
    submission, sample_value = _submission(info, choice, options.target, id_column)
    params = {
        "files": source.files, "format": source.format, "target": options.target, "task": info.task,
        "answers": choice.answers, "id_column": options.id_column or "", "split": kind,
        "test_size": options.test_size, "random_state": options.seed, "sample_value": sample_value,
        "positive": info.positive if info.positive is not None else "", "labels": list(info.labels),
        "drop": list(options.drop), "max_rows": options.max_rows, "group_column": options.group or "",
        "time_column": options.time or "",
    }
    dev = {"file": "train.csv", "id_column": id_column, "target_columns": [options.target],
           "random_state": options.seed}
    dev.update({"classes": list(info.labels)} if choice.answers == "classes"
               else {"sample_values": {options.target: sample_value}})
    domain = options.domain or _domain(frame, source.format, options)
    doc: dict[str, Any] = {
        "id": options.id, "version": 0,
        "title": options.title or "Practice: " + options.id.removeprefix("practice-").replace("-", " ").title(),
        "domain": domain, "split": options.split,
    }
    if options.license:
        doc["license"] = options.license
    if options.split == "practice":
        doc["partition"] = options.partition or _partition(options.id)
    doc["metric"] = {"name": choice.registered, "lower_is_better": choice.lower_is_better, "params": choice.params}
    doc["submission"] = submission
    doc["prepare"] = {"helper": "table_split", "params": params, "dev": dev}
    doc["leaderboard"] = {"source": "bundled", "note": (
        "Not a human leaderboard: scores of mle-env's shared reference population "
        f"(mle_env/reference_population.py), rebuilt with `mle-env reference-leaderboard {options.id}`.")}
    size_gb = sum(p.stat().st_size for p in source.paths) / 1e9
    doc["hints"] = {"gpu": False, "time_limit_s": options.time_limit_s, "cpus": 2, "memory_gb": 2,
                    "raw_size_gb": round(size_gb, 4)}
    doc["sources"] = source.sources
    return doc, counts


def _submission(info: checks.Target, choice: checks.MetricChoice, target: str, id_column: str) -> tuple[dict, Any]:
    """The [submission] table and the sample submission's value."""
    base = {"id_column": id_column}
    if choice.answers == "classes":
        return {**base, "target_columns": list(info.labels), "kind": "probability", "value_range": [0.0, 1.0],
                "answers": "test.csv", "sample_submission": "sample_submission.csv"}, ""
    if info.task == "regression":
        shape = {"kind": "number"}
        sample: Any = 0.0
    elif choice.registered in ("auc", "log_loss"):
        shape, sample = {"kind": "probability", "value_range": [0.0, 1.0]}, 0.5
    elif info.task == "multiclass":
        shape, sample = {"kind": "label", "allowed_values": list(info.labels)}, info.labels[0]
    elif info.task == "binary":
        shape, sample = {"kind": "integer", "allowed_values": [0, 1]}, 0
    else:  # ordinal: positions 0..k-1
        shape, sample = {"kind": "integer", "allowed_values": list(range(len(info.labels)))}, 0
    return {**base, "target_columns": [target], **shape, "answers": "test.csv",
            "sample_submission": "sample_submission.csv"}, sample


def _domain(frame: Any, fmt: str, options: NewCompetition) -> str:
    from mle_env.reference_population import TEXT_MIN_CHARS, column_roles

    if fmt == "ts" or options.time:
        return "time-series"
    sample = frame.head(2000)
    roles = column_roles(sample, {options.target, options.id_column or ""})
    prose = [c for c in roles["text"] if sample[c].dropna().astype(str).str.len().mean() >= TEXT_MIN_CHARS]
    return "text" if prose else "tabular"  # names and short phrases do not make a text task


def _partition(cid: str) -> str:
    """A fixed partition from the id alone (about one task in four is held out for evaluation)."""
    import hashlib

    return "eval" if int(hashlib.sha256(cid.encode()).hexdigest(), 16) % 4 == 0 else "train"


_COMMENTS = {
    "prepare": "The table split into train and test (mle_env/prepare/table_split.py explains each parameter);\n"
               "[prepare.dev] repeats the split on public/train.csv for a dev set.",
}


def _register(folder: Path | None) -> None:
    """Make the new folder visible to the registry here and to the child that builds the leaderboard (None:
    forget a removed one)."""
    from mle_env.competition.registry import reset_registry

    root = folder.parent.resolve() if folder is not None else None
    if root is not None and root != user_competitions().resolve() and not _builtin(root):
        paths = [p for p in os.environ.get(EXTRA_COMPETITIONS_ENV, "").split(os.pathsep) if p]
        if str(root) not in paths:
            os.environ[EXTRA_COMPETITIONS_ENV] = os.pathsep.join([*paths, str(root)])
    reset_registry()


def _builtin(root: Path) -> bool:
    from mle_env.competition.registry import builtin_folder

    return root == builtin_folder().resolve()


def _leaderboard(cid: str, folder: Path, say: Any) -> None:
    from mle_env.reference import build_reference_leaderboard

    say(f"building the reference leaderboard of {cid} (114 seeded solutions) ...")
    build_reference_leaderboard(cid, folder / "leaderboard.csv")
