"""Dev splits: a hidden development set carved out of a competition's *public* training data.

``mle_env.make(id, dev_split=0.1)`` gives the agent a dense, leak-free signal: the competition's own split
recipe (``split_csv``) is applied once more, to the prepared public training table, with
``test_size=dev_split``. The agent sees the smaller training table and the test files unchanged; the dev
rows' inputs (without targets) are public, their answers stay on the host like the test answers. Only
public files are read, so nothing about the test answers reaches the dev set or any score the agent sees.

Supported: competitions whose prepare is a split of labelled rows, i.e. the ``split_csv`` recipe (its own
parameters are reused), or a ``prepare.py`` whose competition.toml declares the equivalent split of its
public training table under ``[prepare.dev]`` (split_csv parameters: ``file``, ``id_column``,
``target_columns``, optionally ``sample_values``, ``classes``, ``answers_keep``...). Anything else (group
splits, folder splits, recipes with several tables) raises :class:`DevSplitUnsupported` naming why;
:func:`dev_support` says which competitions are supported (``mle-env list`` shows it).

Layout, beside the prepared data (so ``CompetitionPaths(id, <dev home>)`` and the Grader read it as a
prepared competition)::

    <home>/<id>/dev-<fraction>/<id>/prepared/public/    the prepared public/ (hard links), its training table
                                                        replaced by the smaller one, plus dev/dev.csv (the
                                                        dev rows without targets) and dev/sample_submission.csv
    <home>/<id>/dev-<fraction>/<id>/prepared/private/   the dev answers, named as the test answers are
    <home>/<id>/dev-<fraction>/<id>/prepared/manifest.json  checksums, as prepare writes them, plus ``dev``

It is built once, in a staging folder renamed into place under the competition's prepare lock, and reused
while its key (the recipe, the fraction, the competition version and the sha256 of every prepared public
file) is unchanged; a change of the public data (a new prepare) rebuilds it.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from mle_env.competition.spec import CompetitionSpec
from mle_env.errors import ConfigError, MleEnvError, NotPrepared, PrepareError
from mle_env.paths import CompetitionPaths, sha256_file

DEV_FORMAT = 2
DEV_FOLDER = "dev"
DEV_INPUTS = f"{DEV_FOLDER}/dev.csv"
DEV_SAMPLE = f"{DEV_FOLDER}/sample_submission.csv"
# split_csv parameters a dev split carries over from the recipe (row files, extra copies, exclusions and
# archives concern raw files, which the public data no longer has)
KEPT_PARAMS = ("id_column", "target_columns", "sample_values", "sample_random", "random_state", "keep_order",
               "classes", "answers_keep", "chunk_rows")
DECLARED_PARAMS = ("file", *KEPT_PARAMS)


class DevSplitUnsupported(ConfigError):
    """Raised when ``dev_split`` is asked of a competition whose prepare is not a split of labelled rows."""


def dev_support(spec: CompetitionSpec) -> str | None:
    """None when ``spec`` supports a dev split, else one line saying why not."""
    try:
        dev_recipe(spec)
    except DevSplitUnsupported as e:
        return str(e)
    return None


def dev_recipe(spec: CompetitionSpec) -> dict[str, Any]:
    """The split_csv parameters (but the fraction and the output names) of ``spec``'s dev split.

    Raises:
        DevSplitUnsupported: its prepare is not a split of labelled rows (the message says what it is).
    """
    declared = spec.prepare.dev
    if spec.prepare.helper == "split_csv":
        params = spec.prepare.params
        recipe = {k: params[k] for k in KEPT_PARAMS if k in params}
        recipe["file"] = params.get("train_name", "train.csv")
        recipe.update(declared or {})
    elif declared is not None:
        recipe = dict(declared)
    else:
        how = f"the '{spec.prepare.helper}' recipe" if spec.prepare.helper else f"its own {spec.prepare.script}"
        raise DevSplitUnsupported(
            f"{spec.id} has no dev split: it is prepared by {how}, not by a split of labelled rows that mle-env "
            "can repeat on the public training data (split_csv, or a [prepare.dev] table in competition.toml); "
            "use dev_split=None"
        )
    unknown = sorted(set(recipe) - set(DECLARED_PARAMS))
    missing = [k for k in ("file", "id_column", "target_columns") if k not in recipe]
    if unknown or missing:
        raise DevSplitUnsupported(f"{spec.id}: its [prepare.dev] table " + (
            f"has unknown key(s) {unknown} (allowed: {', '.join(DECLARED_PARAMS)})" if unknown
            else f"lacks {missing}"))
    return recipe


def dev_key(spec: CompetitionSpec, manifest: dict[str, Any], recipe: dict[str, Any], fraction: float) -> str:
    """What a dev split is built from: the recipe, the fraction, the version and every public file's sha256."""
    public = {k: v for k, v in sorted(manifest.get("sha256", {}).items()) if k.startswith("public/")}
    text = json.dumps({"format": DEV_FORMAT, "version": spec.version, "recipe": recipe, "fraction": fraction,
                       "public": public}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def ensure_dev_split(spec: CompetitionSpec, paths: CompetitionPaths, manifest: dict[str, Any], fraction: float) -> Path:
    """The dev home of ``spec``'s dev split (``CompetitionPaths(spec.id, <it>)`` holds its prepared data),
    built now unless a current one is there (see the module docstring).

    ``paths`` and ``manifest`` are the prepared competition's, already verified (``Grader.manifest``).

    Raises:
        DevSplitUnsupported: the competition has no dev split.
        PrepareError: the public data does not hold what the recipe needs, or the split leaves a part empty.
    """
    from mle_env.prepare.runner import install, locked, remove_tree

    recipe = dev_recipe(spec)
    key = dev_key(spec, manifest, recipe, fraction)
    dev_home = paths.root / f"dev-{fraction:g}"
    dev_paths = CompetitionPaths(spec.id, dev_home)
    if _current(dev_paths, key):
        return dev_home
    with locked(paths.root):
        if _current(dev_paths, key):  # built by another process while we waited
            return dev_home
        dev_paths.root.mkdir(parents=True, exist_ok=True)
        for leftover in dev_paths.root.glob(".staging-*"):
            remove_tree(leftover)
        staging = dev_paths.root / f".staging-{uuid.uuid4().hex[:8]}"
        try:
            _build(spec, paths.public, manifest, recipe, fraction, key, staging)
            install(staging, dev_paths)
        except BaseException:
            remove_tree(staging)
            raise
    return dev_home


def _current(dev_paths: CompetitionPaths, key: str) -> bool:
    try:
        built = dev_paths.verify()
    except NotPrepared:
        return False
    return isinstance(built.get("dev"), dict) and built["dev"].get("key") == key


def _build(spec: CompetitionSpec, source: Path, manifest: dict[str, Any], recipe: dict[str, Any], fraction: float,
           key: str, staging: Path) -> None:
    """Split ``source``'s training table into ``staging`` (see the module docstring); reads public files only."""
    from mle_env.prepare.helpers import PrepareContext, place_files, read_csv, split_csv
    from mle_env.prepare.runner import seal

    train_name = recipe["file"]
    if not (source / train_name).is_file():
        raise PrepareError(f"{spec.id}: the prepared public/ has no {train_name} to carve a dev set from; "
                           f"run `mle-env prepare {spec.id} --force`")
    if (source / DEV_FOLDER).exists():
        raise DevSplitUnsupported(f"{spec.id}: its public data already has a '{DEV_FOLDER}' entry, where the "
                                  "dev files would go")
    public, private = staging / "public", staging / "private"
    public.mkdir(parents=True)
    private.mkdir()
    with tempfile.TemporaryDirectory(dir=staging, prefix=".scratch-") as scratch:
        out = Path(scratch) / "out"
        ctx = PrepareContext(spec, source, out, private, Path(scratch) / "work", dict(recipe), raw_owned=False)
        ctx.scratch.mkdir()
        try:
            # ids and targets are read as written (pandas would turn an id 00012 into 12), but labels that
            # must match a list of classes that are not text
            text_labels = all(isinstance(c, str) for c in recipe.get("classes") or ())
            as_written = {c: str for c in (recipe["id_column"], *(recipe["target_columns"] if text_labels else ()))}
            split_csv(ctx, **{**{k: v for k, v in recipe.items() if k != "file"}, "file": train_name,
                              "test_size": fraction, "train_name": train_name, "test_name": DEV_INPUTS,
                              "answers_name": spec.submission.answers, "sample_name": DEV_SAMPLE,
                              "dtype": as_written})
        except MleEnvError:
            raise
        except Exception as e:
            raise PrepareError(f"the dev split of {spec.id} failed: {type(e).__name__}: {e}") from e
        kept = sorted(p for p in source.rglob("*") if p.is_file() and p.relative_to(source).as_posix() != train_name)
        place_files((p, public / p.relative_to(source)) for p in kept)
        new = sorted(p for p in out.rglob("*") if p.is_file())
        place_files(((p, public / p.relative_to(out)) for p in new), link=False)
    rows = {part: len(read_csv(public / name, usecols=[recipe["id_column"]])) for part, name in
            (("train", train_name), ("dev", DEV_INPUTS))}
    if min(rows.values()) == 0:
        raise PrepareError(f"dev_split={fraction:g} leaves the {min(rows, key=rows.get)} part of {spec.id} empty")
    # the files placed unchanged keep the checksums the prepared manifest lists (verified by the Grader)
    old = manifest.get("sha256", {})
    unchanged = {f"public/{p.relative_to(source).as_posix()}" for p in kept}
    sums = {}
    for path in sorted(p for p in staging.rglob("*") if p.is_file()):
        rel = path.relative_to(staging).as_posix()
        sums[rel] = old[rel] if rel in unchanged and rel in old else sha256_file(path)
    seal(staging, {
        "competition_id": spec.id, "version": spec.version, "source": "dev split of the prepared public/",
        "created_at": datetime.now(timezone.utc).isoformat(),
        "public_bytes": sum((staging / f).stat().st_size for f in sums if f.startswith("public/")),
        "private_bytes": sum((staging / f).stat().st_size for f in sums if f.startswith("private/")),
        "sha256": sums,
        "dev": {"key": key, "fraction": fraction, "recipe": recipe, "rows": rows, "train_file": train_name},
    })


__all__ = ["DEV_INPUTS", "DEV_SAMPLE", "DevSplitUnsupported", "dev_recipe", "dev_support", "ensure_dev_split"]
