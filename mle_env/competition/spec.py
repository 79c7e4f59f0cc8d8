"""The competition spec: ``competitions/<id>/competition.toml`` read into typed, frozen dataclasses.

A folder holds ``competition.toml`` (validated against ``schema.json``), ``description.md`` (our own
words) and, only where the shared helpers cannot express it, ``prepare.py`` or a metric script.
Every problem found while loading raises :class:`~mle_env.errors.CompetitionSpecError` naming the file
and the field at fault.
"""

from __future__ import annotations

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
Split = Literal["lite", "medium", "high", "practice"]
SPLITS: tuple[str, ...] = ("lite", "medium", "high", "practice")


@dataclass(frozen=True)
class MetricSpec:
    """Which registered metric scores the submission, and whether lower scores are better."""

    name: str
    lower_is_better: bool
    params: dict[str, Any] = field(default_factory=dict)
    script: str | None = None


@dataclass(frozen=True)
class SubmissionSpec:
    """The shape a submission CSV must have; see schema.json for each field's meaning."""

    id_column: str
    kind: str
    answers: str
    sample_submission: str
    unique_ids: bool = True
    target_columns: tuple[str, ...] | None = None
    answer_columns: tuple[str, ...] | None = None
    extra_columns: tuple[str, ...] = ()
    allowed_values: tuple[Any, ...] | None = None
    rows_sum_to_one: bool = False
    value_range: tuple[float, float] | None = None


@dataclass(frozen=True)
class SourceSpec:
    """One place raw files come from (``kaggle`` or ``pypi``); ``options`` holds the other TOML keys."""

    type: str
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PrepareSpec:
    """A shared helper (by name) or a script in the folder, with its parameters."""

    helper: str | None = None
    script: str | None = None
    params: dict[str, Any] = field(default_factory=dict)


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


def validate_document(doc: dict[str, Any], path: Path) -> None:
    """Check a parsed competition.toml against the JSON Schema; raise on the most relevant error."""
    import jsonschema  # imported here: it is slow to import and only loading a spec needs it

    validator = jsonschema.Draft202012Validator(schema())
    error = jsonschema.exceptions.best_match(validator.iter_errors(doc))
    if error is None:
        return
    # best_match may descend into a oneOf branch; report the deepest concrete problem it picked
    where = _field_path(error.absolute_path) or None
    raise CompetitionSpecError(path, where, error.message)


def load_spec(folder: Path) -> CompetitionSpec:
    """Read and validate ``folder/competition.toml`` and the files it names.

    Raises:
        CompetitionSpecError: the TOML is missing or malformed, a field is invalid, the folder name does
            not match the id, or a file the spec names (description, scripts, bundled leaderboard) is absent.
    """
    folder = Path(folder)
    path = folder / SPEC_FILE
    doc = read_toml(path)
    validate_document(doc, path)
    if doc["id"] != folder.name:
        raise CompetitionSpecError(path, "id", f"'{doc['id']}' must equal the folder name '{folder.name}'")

    sub = doc["submission"]
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
        ),
        submission=SubmissionSpec(
            id_column=sub["id_column"],
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
        ),
        sources=tuple(
            SourceSpec(type=s["type"], options={k: v for k, v in s.items() if k != "type"}) for s in doc["sources"]
        ),
        leaderboard=LeaderboardSpec(**doc["leaderboard"]),
        hints=Hints(**doc.get("hints", {})),
        known_issues=tuple(KnownIssue(**k) for k in doc.get("known_issues", ())),
        expected_checksums=dict(doc.get("expected_checksums", {})),
        folder=folder,
    )
    _check_semantics(spec, path)
    return spec


def _check_semantics(spec: CompetitionSpec, path: Path) -> None:
    """Checks a JSON Schema cannot express: files that must exist, names that must resolve."""
    if not spec.description_path.is_file():
        raise CompetitionSpecError(path, "description", f"file '{spec.description_file}' is missing in {spec.folder}")
    for fld, script in (("prepare.script", spec.prepare.script), ("metric.script", spec.metric.script)):
        if script and not (spec.folder / script).is_file():
            raise CompetitionSpecError(path, fld, f"file '{script}' is missing in {spec.folder}")
    if spec.prepare.helper is not None:
        from mle_env.prepare.helpers import HELPERS

        if spec.prepare.helper not in HELPERS:
            raise CompetitionSpecError(
                path, "prepare.helper", f"unknown helper '{spec.prepare.helper}'; known: {', '.join(sorted(HELPERS))}"
            )
    if spec.metric.script is None:
        from mle_env.grading.metrics import METRICS, suggest

        if spec.metric.name not in METRICS:
            problem = f"unknown metric '{spec.metric.name}'{suggest(spec.metric.name)}"
            raise CompetitionSpecError(path, "metric.name", problem)
    if spec.leaderboard.source == "bundled" and spec.split != "practice":
        raise CompetitionSpecError(
            path, "leaderboard.source", "only practice competitions ship a leaderboard; Kaggle ones use 'kaggle'"
        )
    sub = spec.submission
    if sub.kind == "label" and sub.allowed_values is None:
        raise CompetitionSpecError(path, "submission.allowed_values", "required when kind is 'label'")
    if sub.value_range is not None and sub.value_range[0] > sub.value_range[1]:
        raise CompetitionSpecError(path, "submission.value_range", "the lower bound is above the upper bound")
