"""``mle-env doctor``: before preparing, what stands in the way, without downloading anything.

- Kaggle: whether the ``kaggle`` package and credentials are there, and whether Kaggle accepts them;
- for each competition: whether the account has accepted its rules (Kaggle refuses every download until it
  has: the most common complaint), with the rules page to open; its raw size, the disk a prepare needs here,
  and the free disk under MLE_ENV_HOME; and whether it is prepared and its files match their manifest.

Kaggle is asked once for each competition's entry (``competitions_list(search=id)``: no file is fetched).
Where Kaggle cannot be asked, each answer says why instead (never a guess).
"""

from __future__ import annotations

import shutil
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from mle_env.competition.spec import CompetitionSpec
from mle_env.errors import MleEnvError, NotPrepared
from mle_env.paths import CompetitionPaths
from mle_env.paths import home as default_home
from mle_env.prepare.sources import kaggle_api, kaggle_rules_url

#: a prepare writes public/ and private/ beside raw/: about as much again as the raw files (a copy where
#: hard links are impossible)
PREPARE_FACTOR = 2.0


@dataclass
class CompetitionCheck:
    """What doctor found for one competition (see the module docstring); sizes in bytes (None: unknown)."""

    id: str
    split: str
    kaggle: bool
    rules: str  # "accepted", "not accepted", "not needed" (no Kaggle source) or "unknown: why"
    rules_url: str | None
    raw_bytes: int | None
    needed_bytes: int | None  # for a prepare here (0 when prepared and valid)
    prepared: str  # "yes", "no" or "invalid: why"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def raw_bytes(spec: CompetitionSpec) -> int | None:
    """The competition's raw download, from its Kaggle source's size or its size hint."""
    for source in spec.sources:
        size = source.options.get("size_bytes")
        if isinstance(size, int) and size > 0:
            return size
    return int(spec.hints.raw_size_gb * 1e9) if spec.hints.raw_size_gb else None


def prepared_state(spec: CompetitionSpec, home: Path | None) -> str:
    try:
        CompetitionPaths(spec.id, home).verify()
    except NotPrepared as e:
        return "no" if not CompetitionPaths(spec.id, home).is_prepared() else f"invalid: {e}"
    return "yes"


def kaggle_account(slugs: list[str]) -> tuple[Any, str | None]:
    """An authenticated Kaggle client, or None and why not (package, credentials, or their rejection)."""
    if not slugs:
        return None, None
    try:
        return kaggle_api(), None
    except MleEnvError as e:
        return None, str(e)


def rules_state(api: Any, slug: str) -> str:
    """Whether the account has accepted ``slug``'s rules, asked of Kaggle's competition list."""
    try:
        found = api.competitions_list(search=slug) or []
    except Exception as e:  # noqa: BLE001 - the client raises many unrelated types
        return f"unknown: Kaggle did not answer ({type(e).__name__}: {str(e)[:120]})"
    for competition in found:
        ref = str(getattr(competition, "ref", "") or "").rstrip("/").rsplit("/", 1)[-1]
        if ref == slug:
            entered = getattr(competition, "user_has_entered", getattr(competition, "userHasEntered", None))
            if entered is None:
                return "unknown: Kaggle's answer does not say"
            return "accepted" if entered else "not accepted"
    return "unknown: Kaggle does not list it (the competition may be closed to new entrants)"


def check(specs: list[CompetitionSpec], home: Path | None = None) -> dict[str, Any]:
    """Doctor's report for ``specs`` (see the module docstring): ``kaggle`` (``ok``, and ``problem`` when not),
    ``disk`` (``free_bytes`` under the home, ``needed_bytes`` for what is not prepared, ``enough``) and
    ``competitions`` (one :class:`CompetitionCheck` dict each)."""
    slugs = {spec.id: next((str(s.options.get("competition", spec.id)) for s in spec.sources if s.type == "kaggle"),
                           None) for spec in specs}
    api, problem = kaggle_account([s for s in slugs.values() if s])
    rows = []
    for spec in specs:
        slug = slugs[spec.id]
        size = raw_bytes(spec)
        prepared = prepared_state(spec, home)
        if slug is None:
            rules = "not needed"
        elif api is None:
            rules = "unknown: Kaggle could not be asked (see the kaggle problem)"
        else:
            rules = rules_state(api, slug)
        needed = 0 if prepared == "yes" else (int(size * PREPARE_FACTOR) if size is not None else None)
        rows.append(CompetitionCheck(
            id=spec.id, split=spec.split, kaggle=slug is not None, rules=rules,
            rules_url=kaggle_rules_url(slug) if slug else None,
            raw_bytes=size, needed_bytes=needed, prepared=prepared))
    root = home or default_home()
    existing = next((p for p in (root, *root.parents) if p.exists()), Path("/"))
    free = shutil.disk_usage(existing).free
    needed = sum(r.needed_bytes or 0 for r in rows)
    return {"kaggle": {"ok": api is not None or not any(slugs.values()), "problem": problem},
            "disk": {"home": str(root), "free_bytes": free, "needed_bytes": needed, "enough": needed <= free,
                     "unknown_sizes": [r.id for r in rows if r.needed_bytes is None]},
            "competitions": [r.to_dict() for r in rows]}
