"""The competition spec: ``competitions/<id>/competition.toml`` read into typed, frozen dataclasses.

A folder holds ``competition.toml`` (validated against ``schema.json``), ``description.md`` (our own
words) and, only where the shared helpers cannot express it, ``prepare.py`` or a metric script.
Loading reports every problem of a folder at once: one problem raises
:class:`~mle_env.errors.CompetitionSpecError` naming the file and the field at fault, several raise its
subclass :class:`CompetitionSpecErrors`, whose ``errors`` lists each; a misspelled key or value comes with
a did-you-mean.
"""

from __future__ import annotations

import difflib
import functools
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from mle_env.errors import CompetitionSpecError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

SPEC_FILE = "competition.toml"
#: lite, medium, high: MLE-bench's 75 (its low, medium and high complexity); dev: MLE-bench's 7 development
#: competitions, outside the 75 (not to be confused with an episode's dev_split); practice: mle-env's own
Split = Literal["lite", "medium", "high", "dev", "practice"]
SPLITS: tuple[str, ...] = ("lite", "medium", "high", "dev", "practice")
#: the shared prepare recipes a spec may name as ``prepare.helper`` (mle_env.prepare.helpers.HELPERS runs them)
PREPARE_HELPERS: tuple[str, ...] = ("split_csv", "text_normalization", "table_split")


@dataclass(frozen=True)
class MetricSpec:
    """Which registered metric scores the submission, and whether lower scores are better."""

    name: str
    lower_is_better: bool
    params: dict[str, Any] = field(default_factory=dict)
    script: str | None = None
    #: answer columns the metric reads besides the targets (checked when the grader loads the answers)
    answer_columns: tuple[str, ...] = ()


@dataclass(frozen=True)
class SubmissionSpec:
    """The shape a submission CSV must have; see schema.json for each field's meaning.

    ``id_columns`` are the columns whose values together name a row (a composite key such as id + class);
    ``id_column`` is the first of them (the only one, usually). Built with ``id_column`` alone,
    ``id_columns`` is ``(id_column,)``.
    """

    id_column: str
    kind: str
    answers: str
    sample_submission: str
    unique_ids: bool = True
    id_columns: tuple[str, ...] = ()
    allow_extra_ids: bool = False
    target_columns: tuple[str, ...] | None = None
    answer_columns: tuple[str, ...] | None = None
    extra_columns: tuple[str, ...] = ()
    allowed_values: tuple[Any, ...] | None = None
    rows_sum_to_one: bool = False
    value_range: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        if not self.id_columns:
            object.__setattr__(self, "id_columns", (self.id_column,))


@dataclass(frozen=True)
class SourceSpec:
    """One place raw files come from (``kaggle`` or ``pypi``); ``options`` holds the other TOML keys."""

    type: str
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PrepareSpec:
    """A shared helper (by name) or a script in the folder, with its parameters. ``dev``: the split_csv
    parameters of a dev split of the public training table (:mod:`mle_env.prepare.dev`), for a script whose
    prepare is such a split; None for the recipe's own (split_csv) or none."""

    helper: str | None = None
    script: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    dev: dict[str, Any] | None = None


@dataclass(frozen=True)
class LeaderboardSpec:
    """``kaggle``: obtained at prepare time, never shipped. ``bundled``: the folder's leaderboard.csv."""

    source: str
    kaggle_competition: str | None = None
    note: str | None = None


@dataclass(frozen=True)
class Hints:
    """Advice on what a run needs; not enforced."""

    gpu: bool = False
    time_limit_s: int | None = None
    cpus: int | None = None
    memory_gb: float | None = None
    raw_size_gb: float | None = None


@dataclass(frozen=True)
class Requirement:
    """A Python module the competition needs on the host (to prepare its data, and for the agent's programs
    in the local sandbox), and how to install it."""

    module: str
    package: str
    extra: str | None = None

    @property
    def install(self) -> str:
        """The install command: the mle-env extra when there is one, else the package."""
        return f"pip install 'mle-env[{self.extra}]'" if self.extra else f"pip install '{self.package}'"

    def missing(self) -> str | None:
        """None when the module imports here, else why not (the ImportError, in one line)."""
        import importlib

        try:
            importlib.import_module(self.module)
        except Exception as e:  # noqa: BLE001 - a broken install is as missing as an absent one
            return f"{type(e).__name__}: {e}"
        return None


@dataclass(frozen=True)
class KnownIssue:
    """A known problem of the competition and whether mle-env corrects it."""

    kind: str
    summary: str
    reference: str | None = None
    fixed: bool = False
    fix: str | None = None


@dataclass(frozen=True)
class CompetitionSpec:
    """Everything mle-env knows about one competition, read from its folder."""

    id: str
    version: int
    title: str
    domain: str
    split: str
    metric: MetricSpec
    submission: SubmissionSpec
    prepare: PrepareSpec
    sources: tuple[SourceSpec, ...]
    leaderboard: LeaderboardSpec
    folder: Path
    aliases: tuple[str, ...] = ()
    description_file: str = "description.md"
    hints: Hints = field(default_factory=Hints)
    known_issues: tuple[KnownIssue, ...] = ()
    expected_checksums: dict[str, str] = field(default_factory=dict)
    requires: tuple[Requirement, ...] = ()
    #: the data's licence (practice competitions)
    license: str | None = None
    #: practice competitions: "train" or "eval", the fixed half of the pool (sets practice-train, practice-eval)
    partition: str | None = None

    @property
    def gym_id(self) -> str:
        """The Gymnasium id, ``mle_env/<id>-v<version>``."""
        return f"mle_env/{self.id}-v{self.version}"

    @property
    def description_path(self) -> Path:
        return self.folder / self.description_file

    def description(self) -> str:
        """The task text (Markdown), as agents see it in public/description.md."""
        return self.description_path.read_text(encoding="utf-8")

    @property
    def bundled_leaderboard(self) -> Path | None:
        """The folder's leaderboard.csv for ``leaderboard.source = "bundled"``, else None."""
        return self.folder / "leaderboard.csv" if self.leaderboard.source == "bundled" else None


@functools.cache
def schema() -> dict[str, Any]:
    """The JSON Schema every competition.toml is validated against."""
    return json.loads((Path(__file__).with_name("schema.json")).read_text(encoding="utf-8"))


def read_toml(path: Path) -> dict[str, Any]:
    """Parse a TOML file; a syntax error becomes a CompetitionSpecError naming the file."""
    try:
        with path.open("rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        raise CompetitionSpecError(path, None, f"missing; a competition folder needs a {SPEC_FILE}") from None
    except tomllib.TOMLDecodeError as e:
        raise CompetitionSpecError(path, None, f"not valid TOML ({e})") from None


def _field_path(parts: Any) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


class CompetitionSpecErrors(CompetitionSpecError):
    """Several problems in one competition.toml, all reported at once; :attr:`errors` holds each one (a
    :class:`CompetitionSpecError` naming the file and the field)."""

    def __init__(self, path: object, errors: list[CompetitionSpecError]) -> None:
        lines = "".join("\n  - " + ("" if e.path == str(path) else f"{e.path}: ")
                        + (f"field '{e.field}': " if e.field else "") + e.problem for e in errors)
        super().__init__(path, None, f"{len(errors)} problems:{lines}")
        self.errors = list(errors)


def _did_you_mean(word: object, choices: Any) -> str:
    choices = [str(c) for c in choices]
    close = difflib.get_close_matches(str(word), choices, n=3, cutoff=0.6) if isinstance(word, str) else []
    if close:
        return "; did you mean " + " or ".join(repr(c) for c in close) + "?"
    return f"; allowed: {', '.join(choices)}" if choices else ""


def _schema_problems(error: Any) -> list[tuple[str | None, str]]:
    """(field, problem) pairs for one JSON Schema error, with did-you-mean hints for misspelled keys and
    values, and the relevant branch of a ``oneOf`` (a source of a known type is checked as that type)."""
    where = list(error.absolute_path)
    if error.validator == "additionalProperties" and error.validator_value is False:
        known = list(error.schema.get("properties", {}))
        extras = [k for k in error.instance if k not in known] if isinstance(error.instance, dict) else []
        return [(_field_path([*where, k]), f"unknown key '{k}'{_did_you_mean(k, known)}") for k in extras] or [
            (_field_path(where) or None, error.message)]
    if error.validator == "enum":
        hint = _did_you_mean(error.instance, error.validator_value)
        return [(_field_path(where) or None, f"{error.instance!r} is not one of {error.validator_value}"
                 + (hint if "did you mean" in hint else ""))]
    if error.validator == "oneOf":
        branches: dict[int, list[Any]] = {}
        for sub in error.context or ():
            branches.setdefault(sub.relative_schema_path[0], []).append(sub)
        types = [b.get("properties", {}).get("type", {}).get("const") for b in error.validator_value]
        if all(types) and isinstance(error.instance, dict):  # a tagged union: pick the branch of its type
            kind = error.instance.get("type")
            if kind in types:
                out: list[tuple[str | None, str]] = []
                for sub in branches.get(types.index(kind), ()):
                    out += _schema_problems(sub)
                return out or [(_field_path(where) or None, error.message)]
            return [(_field_path([*where, "type"]), f"unknown source type {kind!r}{_did_you_mean(kind, types)}")]
        if where == ["prepare"]:
            return [("prepare", "set exactly one of 'helper' (a shared helper) or 'script' (a file in the folder)")]
        if error.context:
            import jsonschema

            return _schema_problems(jsonschema.exceptions.best_match(error.context))
    return [(_field_path(where) or None, error.message)]


def schema_errors(doc: dict[str, Any], path: Path) -> list[CompetitionSpecError]:
    """Every problem JSON Schema validation finds in a parsed competition.toml, in document order."""
    import jsonschema  # imported here: it is slow to import and only loading a spec needs it

    validator = jsonschema.Draft202012Validator(schema())
    found = sorted(validator.iter_errors(doc), key=lambda e: [str(p) for p in e.absolute_path])
    return [CompetitionSpecError(path, where, problem) for e in found for where, problem in _schema_problems(e)]


def validate_document(doc: dict[str, Any], path: Path) -> None:
    """Check a parsed competition.toml against the JSON Schema; raise on every problem found at once."""
    _raise_all(schema_errors(doc, path), path)


def _raise_all(errors: list[CompetitionSpecError], path: Path) -> None:
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise CompetitionSpecErrors(path, errors)


def load_spec(folder: Path) -> CompetitionSpec:
    """Read and validate ``folder/competition.toml`` and the files it names.

    Raises:
        CompetitionSpecError: the TOML is missing or malformed, a field is invalid, the folder name does
            not match the id, or a file the spec names (description, scripts, bundled leaderboard) is absent.
    """
    folder = Path(folder)
    path = folder / SPEC_FILE
    doc = read_toml(path)
    _raise_all(schema_errors(doc, path) + _semantic_errors(doc, folder, path), path)

    sub = doc["submission"]
    ids = [sub["id_column"]] if isinstance(sub["id_column"], str) else list(sub["id_column"])
    spec = CompetitionSpec(
        id=doc["id"],
        version=doc["version"],
        title=doc["title"],
        domain=doc["domain"],
        split=doc["split"],
        aliases=tuple(doc.get("aliases", ())),
        description_file=doc.get("description", "description.md"),
        metric=MetricSpec(
            name=doc["metric"]["name"],
            lower_is_better=doc["metric"]["lower_is_better"],
            params=dict(doc["metric"].get("params", {})),
            script=doc["metric"].get("script"),
            answer_columns=tuple(doc["metric"].get("answer_columns", ())),
        ),
        submission=SubmissionSpec(
            id_column=ids[0],
            id_columns=tuple(ids),
            allow_extra_ids=sub.get("allow_extra_ids", False),
            kind=sub["kind"],
            answers=sub["answers"],
            sample_submission=sub["sample_submission"],
            unique_ids=sub.get("unique_ids", True),
            target_columns=tuple(sub["target_columns"]) if "target_columns" in sub else None,
            answer_columns=tuple(sub["answer_columns"]) if "answer_columns" in sub else None,
            extra_columns=tuple(sub.get("extra_columns", ())),
            allowed_values=tuple(sub["allowed_values"]) if "allowed_values" in sub else None,
            rows_sum_to_one=sub.get("rows_sum_to_one", False),
            value_range=tuple(sub["value_range"]) if "value_range" in sub else None,
        ),
        prepare=PrepareSpec(
            helper=doc["prepare"].get("helper"),
            script=doc["prepare"].get("script"),
            params=dict(doc["prepare"].get("params", {})),
            dev=dict(doc["prepare"]["dev"]) if "dev" in doc["prepare"] else None,
        ),
        sources=tuple(
            SourceSpec(type=s["type"], options={k: v for k, v in s.items() if k != "type"}) for s in doc["sources"]
        ),
        leaderboard=LeaderboardSpec(**doc["leaderboard"]),
        hints=Hints(**doc.get("hints", {})),
        known_issues=tuple(KnownIssue(**k) for k in doc.get("known_issues", ())),
        expected_checksums=dict(doc.get("expected_checksums", {})),
        requires=tuple(Requirement(**r) for r in doc.get("requires", ())),
        license=doc.get("license"),
        partition=doc.get("partition"),
        folder=folder,
    )
    return spec


def _semantic_errors(doc: dict[str, Any], folder: Path, path: Path) -> list[CompetitionSpecError]:
    """Checks a JSON Schema cannot express (files that must exist, names that must resolve), on the parsed
    document; a field of the wrong type is left to the schema's own error."""

    def section(name: str) -> dict[str, Any]:
        value = doc.get(name)
        return value if isinstance(value, dict) else {}

    errors: list[CompetitionSpecError] = []

    def problem(fld: str, text: str) -> None:
        errors.append(CompetitionSpecError(path, fld, text))

    cid = doc.get("id")
    if isinstance(cid, str) and cid != folder.name:
        problem("id", f"'{cid}' must equal the folder name '{folder.name}'")
    description = doc.get("description", "description.md")
    if isinstance(description, str) and not (folder / description).is_file():
        problem("description", f"file '{description}' is missing in {folder}")
    prep, metric, sub = section("prepare"), section("metric"), section("submission")
    for fld, script in (("prepare.script", prep.get("script")), ("metric.script", metric.get("script"))):
        if isinstance(script, str) and not (folder / script).is_file():
            problem(fld, f"file '{script}' is missing in {folder}")
    helper = prep.get("helper")
    if isinstance(helper, str) and helper not in PREPARE_HELPERS:
        problem("prepare.helper", f"unknown helper '{helper}'{_did_you_mean(helper, sorted(PREPARE_HELPERS))}")
    name = metric.get("name")
    if isinstance(name, str) and metric.get("script") is None:
        from mle_env.grading.metrics import METRICS, suggest

        if name not in METRICS:
            problem("metric.name", f"unknown metric '{name}'{suggest(name)}")
    if "partition" in doc and doc.get("split") != "practice":
        problem("partition", "only practice competitions belong to practice-train or practice-eval")
    if section("leaderboard").get("source") == "bundled" and doc.get("split", "practice") != "practice":
        problem("leaderboard.source", "only practice competitions ship a leaderboard; Kaggle ones use 'kaggle'")
    if sub.get("kind") == "label" and "allowed_values" not in sub:
        problem("submission.allowed_values", "required when kind is 'label'")
    bounds = sub.get("value_range")
    if (isinstance(bounds, list) and len(bounds) == 2 and all(isinstance(b, (int, float)) for b in bounds)
            and bounds[0] > bounds[1]):
        problem("submission.value_range", "the lower bound is above the upper bound")
    return errors
