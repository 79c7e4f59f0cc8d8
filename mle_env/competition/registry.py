"""The competition registry: every known competition by id, resolved from ids and aliases.

Competitions come from four places, in this order:

1. the folders shipped in the package (``mle_env.competitions``);
2. the competition folders in ``<MLE_ENV_HOME>/competitions`` (where ``mle-env new`` writes them);
3. folders named in ``$MLE_ENV_COMPETITIONS`` (``os.pathsep``-separated); each is a competition folder
   (it holds competition.toml) or a folder of competition folders;
4. folders added at run time with :func:`register_competition`.

Only folder names and TOML headers are read to list ids of the first two; a spec is fully loaded and
validated the first time it is asked for. :func:`register_competition` validates at once. Two
competitions that claim the same id or alias raise ``RegistrationError``.
"""

from __future__ import annotations

import difflib
import importlib.resources
import os
from collections.abc import Callable, Iterator
from pathlib import Path

from mle_env.competition.spec import SPEC_FILE, CompetitionSpec, CompetitionSpecErrors, load_spec
from mle_env.errors import CompetitionSpecError, MleEnvError, RegistrationError, UnknownCompetition
from mle_env.paths import EXTRA_COMPETITIONS_ENV, user_competitions


def builtin_folder() -> Path:
    """The folder of competitions shipped with the package (found as package data: the competitions' own code
    is loaded by path when it is needed, never imported from here)."""
    return Path(str(importlib.resources.files("mle_env.competitions")))


def _competition_folders(root: Path) -> Iterator[Path]:
    if (root / SPEC_FILE).is_file():
        yield root
        return
    if root.is_dir():
        for child in sorted(root.iterdir()):
            if (child / SPEC_FILE).is_file():
                yield child


class Registry:
    """Ids, aliases and folders of all known competitions; specs are loaded lazily and cached."""

    def __init__(self) -> None:
        self._folders: dict[str, Path] = {}
        self._aliases: dict[str, str] = {}
        self._versions: dict[str, int] = {}
        self._specs: dict[str, CompetitionSpec] = {}
        self._loaded_roots: set[Path] = set()
        #: folders of $MLE_ENV_COMPETITIONS that were skipped, and why
        self.problems: dict[Path, str] = {}

    # -- building --------------------------------------------------------------------------------------
    def add_root(self, root: Path) -> list[str]:
        """Register every competition folder at or under ``root``; returns the ids added."""
        root = Path(root).expanduser().resolve()
        if not root.exists():
            raise RegistrationError(f"competition folder {root} does not exist")
        if root in self._loaded_roots:
            return []
        added = [self._add_folder(folder) for folder in _competition_folders(root)]
        self._loaded_roots.add(root)
        return added

    def add_user_root(self, root: Path) -> list[str]:
        """Like :meth:`add_root` for a folder named in ``$MLE_ENV_COMPETITIONS``, where one bad folder must
        not hide every competition: a folder that cannot be read (missing, bad TOML, a clashing id) is
        reported in one warning line (and kept in :attr:`problems`) and skipped."""
        root = Path(root).expanduser().resolve()
        if root in self._loaded_roots:
            return []
        if not root.exists():
            self._skip(root, f"competition folder {root} does not exist")
            return []
        added = []
        for folder in _competition_folders(root):
            try:
                added.append(self._add_folder(folder))
            except MleEnvError as e:
                self._skip(folder, str(e))
        self._loaded_roots.add(root)
        return added

    def _skip(self, folder: Path, problem: str) -> None:
        import sys

        self.problems[folder] = problem
        print(f"warning: {EXTRA_COMPETITIONS_ENV}: skipped {folder}: {problem}", file=sys.stderr)

    def _add_folder(self, folder: Path) -> str:
        from mle_env.competition.spec import read_toml

        header = read_toml(folder / SPEC_FILE)
        cid = header.get("id") or folder.name
        if cid in self._folders and self._folders[cid] != folder:
            raise RegistrationError(
                f"competition id '{cid}' is defined twice: {self._folders[cid]} and {folder}; rename one of them"
            )
        self._folders[cid] = folder
        self._versions[cid] = int(header.get("version", 0))
        for alias in header.get("aliases", ()):
            owner = self._aliases.get(alias)
            if (owner is not None and owner != cid) or (alias in self._folders and alias != cid):
                raise RegistrationError(f"alias '{alias}' of '{cid}' ({folder}) is already taken by '{owner or alias}'")
            self._aliases[alias] = cid
        self._specs.pop(cid, None)
        return cid

    # -- lookup ----------------------------------------------------------------------------------------
    def ids(self) -> list[str]:
        """All competition ids, sorted."""
        return sorted(self._folders)

    def resolve(self, name: str) -> str:
        """The id that ``name`` (an id or an alias) stands for.

        Raises:
            UnknownCompetition: nothing matches; the message lists close ids and how to see them all.
        """
        if name in self._folders:
            return name
        if name in self._aliases:
            return self._aliases[name]
        known = list(self._folders) + list(self._aliases)
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
        if not close:  # a prefix or substring of an id is a good guess too ("aerial" -> aerial-cactus-...)
            close = [k for k in known if name.lower() in k.lower()][:3]
        hint = f" Did you mean: {', '.join(repr(c) for c in close)}?" if close else ""
        raise UnknownCompetition(f"Unknown competition '{name}'.{hint} Run `mle-env list` to see every competition.")

    def spec(self, name: str) -> CompetitionSpec:
        """The validated spec of the competition that ``name`` resolves to (loaded once, then cached)."""
        cid = self.resolve(name)
        if cid not in self._specs:
            self._specs[cid] = load_spec(self._folders[cid])
        return self._specs[cid]

    def specs(self, split: str | None = None) -> list[CompetitionSpec]:
        """Every spec (optionally only one split), sorted by id."""
        specs = [self.spec(cid) for cid in self.ids()]
        return [s for s in specs if split is None or s.split == split]

    def version(self, name: str) -> int:
        """The spec version from the TOML header (read without full validation)."""
        return self._versions[self.resolve(name)]

    def folder(self, name: str) -> Path:
        return self._folders[self.resolve(name)]


_REGISTRY: Registry | None = None


def registry() -> Registry:
    """The process-wide registry, built on first use from the package, ``<MLE_ENV_HOME>/competitions`` and
    ``$MLE_ENV_COMPETITIONS``."""
    global _REGISTRY
    if _REGISTRY is None:
        reg = Registry()
        reg.add_root(builtin_folder())
        if user_competitions().is_dir():  # what mle-env new wrote
            reg.add_user_root(user_competitions())
        for entry in os.environ.get(EXTRA_COMPETITIONS_ENV, "").split(os.pathsep):
            if entry.strip():
                reg.add_user_root(Path(entry.strip()))
        _REGISTRY = reg
    return _REGISTRY


def reset_registry() -> None:
    """Forget the process-wide registry (it is rebuilt, re-reading the environment, on next use)."""
    global _REGISTRY
    _REGISTRY = None


def register_competition(folder: str | os.PathLike[str]) -> list[str]:
    """Add a competition folder (or a folder of them) from outside the package; returns the ids added.

    The folder uses the same format as the shipped ones. Each competition is validated now, not first at
    ``make()``: every problem of its competition.toml is reported at once, each naming the file and the
    field, with did-you-mean hints for misspelled keys, and nothing is registered when one fails. Newly
    added ids are also registered with Gymnasium as ``mle_env/<id>-v<version>``.

    Raises:
        CompetitionSpecError: a competition folder is invalid (:class:`CompetitionSpecErrors`, a subclass,
            when it has several problems or several folders fail; ``errors`` lists each).
        RegistrationError: the folder does not exist, or an id or alias is already taken.
    """
    root = Path(folder).expanduser().resolve()
    if not root.exists():
        raise RegistrationError(f"competition folder {root} does not exist")
    failures: list[CompetitionSpecError] = []
    for path in _competition_folders(root):
        try:
            load_spec(path)
        except CompetitionSpecError as e:
            failures.append(e)
    if len(failures) == 1:
        raise failures[0]
    if failures:  # several folders: one exception listing every problem of each
        raise CompetitionSpecErrors(root, [e for f in failures for e in getattr(f, "errors", [f])])
    added = registry().add_root(root)  # the spec is read again when first asked for, as for every folder
    for listener in list(_ADDED_LISTENERS):
        listener(added)
    return added


#: called with the ids register_competition adds (mle_env.gym_registration registers them with Gymnasium)
_ADDED_LISTENERS: list[Callable[[list[str]], object]] = []


def on_competitions_added(listener: Callable[[list[str]], object]) -> None:
    """Have ``listener(ids)`` called whenever :func:`register_competition` adds competitions (once per
    listener, however often this is called)."""
    if listener not in _ADDED_LISTENERS:
        _ADDED_LISTENERS.append(listener)


def list_competitions(split: str | None = None) -> list[str]:
    """Ids of every registered competition, or of one split (lite, medium, high, dev, practice), sorted."""
    if split is None:
        return registry().ids()
    return [spec.id for spec in registry().specs(split)]


#: the sets of practice competitions besides the split itself: the fixed partition and one per domain
PRACTICE_PARTITIONS = ("practice-train", "practice-eval")
#: MLE-bench's 75, as ``all`` names them
MLEBENCH_SPLITS = ("lite", "medium", "high")


def task_set(name: str) -> list[str] | None:
    """The ids a set name stands for, sorted; None when ``name`` is no set. Sets: the splits (lite, medium,
    high, dev, practice), ``all`` (MLE-bench's 75: lite, medium and high), ``practice-train`` and
    ``practice-eval`` (the practice pool's fixed partition) and ``practice-<domain>`` (the practice
    competitions of one domain: practice-tabular, practice-text, practice-image, practice-time-series...)."""
    from mle_env.competition.spec import SPLITS

    if name in SPLITS:
        return list_competitions(name)
    if name == "all":
        return sorted(cid for split in MLEBENCH_SPLITS for cid in list_competitions(split))
    if not name.startswith("practice-") or name in registry().ids():
        return None
    practice = registry().specs("practice")
    if name in PRACTICE_PARTITIONS:
        return sorted(s.id for s in practice if s.partition == name.removeprefix("practice-"))
    domain = sorted(s.id for s in practice if s.domain == name.removeprefix("practice-"))
    return domain or None


def task_sets() -> dict[str, int]:
    """Every set name with the number of competitions in it (for ``mle-env list`` and error messages)."""
    from mle_env.competition.spec import SPLITS

    practice = registry().specs("practice")
    names = [*SPLITS, "all", *PRACTICE_PARTITIONS, *sorted({f"practice-{s.domain}" for s in practice})]
    return {name: len(task_set(name) or []) for name in names}


def select_competitions(names: list[str]) -> list[str]:
    """Competition ids from ids, aliases, set names (:func:`task_set`: lite, medium, high, dev, practice,
    all, practice-train, practice-eval, practice-<domain>) and ``@FILE`` (a file with one id or alias per
    line, # comments allowed); in order, without repeats.

    Raises:
        UnknownCompetition: a name is none of these.
    """
    ids: list[str] = []
    for name in names:
        if name.startswith("@"):
            lines = Path(name[1:]).read_text().splitlines()
            found = select_competitions([ln.split("#")[0].strip() for ln in lines if ln.split("#")[0].strip()])
        elif (members := task_set(name)) is not None:
            found = members
        else:
            found = [registry().resolve(name)]
        ids += [cid for cid in found if cid not in ids]
    return ids


def get_spec(name: str) -> CompetitionSpec:
    """Shorthand for ``registry().spec(name)``."""
    return registry().spec(name)
