"""Where mle-env keeps its data on the host.

Layout under the home folder (``MLE_ENV_HOME``, default ``~/.cache/mle-env``)::

    <home>/<competition-id>/raw/                  raw files as fetched from a source
    <home>/<competition-id>/prepared/public/      what agents may see
    <home>/<competition-id>/prepared/private/     the answers (never enters a sandbox)
    <home>/<competition-id>/prepared/manifest.json  version, source, sha256 of every output
    <home>/<competition-id>/leaderboard.csv        the leaderboard medals are computed against

``prepared/`` is built elsewhere and renamed into place in one step, so it is either complete or absent.
The ``<id>/prepared/{public,private}`` shape is also MLE-bench's, so an MLE-bench data folder can be read.

:meth:`CompetitionPaths.verify` checks the prepared files against the manifest before they are used (the
grader calls it): once per process and manifest, hashing the private files (the answers) and every public
file whose size or modification time differs from what the manifest recorded; later calls only compare the
private files' sizes and modification times with what was checked. A file that is missing,
truncated or changed raises NotPrepared with the ``mle-env prepare ID --force`` command that rebuilds it.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path
from typing import Any

from mle_env.errors import NotPrepared

HOME_ENV = "MLE_ENV_HOME"
LEADERBOARDS_ENV = "MLE_ENV_LEADERBOARDS"
EXTRA_COMPETITIONS_ENV = "MLE_ENV_COMPETITIONS"


def home() -> Path:
    """The cache folder: ``$MLE_ENV_HOME`` if set, else ``~/.cache/mle-env``. Not created here."""
    value = os.environ.get(HOME_ENV)
    return Path(value).expanduser() if value else Path.home() / ".cache" / "mle-env"


def user_competitions() -> Path:
    """Where ``mle-env new`` writes competitions by default (``<home>/competitions``); the registry reads
    every competition folder there."""
    return home() / "competitions"


class CompetitionPaths:
    """The cache paths of one competition (nothing is created or checked here)."""

    def __init__(self, competition_id: str, root: Path | None = None) -> None:
        self.competition_id = competition_id
        self.root = (root or home()) / competition_id

    @property
    def raw(self) -> Path:
        return self.root / "raw"

    @property
    def prepared(self) -> Path:
        return self.root / "prepared"

    @property
    def public(self) -> Path:
        return self.prepared / "public"

    @property
    def private(self) -> Path:
        return self.prepared / "private"

    @property
    def manifest(self) -> Path:
        return self.prepared / "manifest.json"

    @property
    def leaderboard(self) -> Path:
        return self.root / "leaderboard.csv"

    def is_prepared(self) -> bool:
        """True when a complete prepared/ folder is in place (the manifest is written last)."""
        return self.manifest.is_file()

    def prepare_command(self, force: bool = False) -> str:
        """The command that (re)builds this competition's data here (naming the home when it is not the default)."""
        where = "" if self.root.parent == home() else f"MLE_ENV_HOME={self.root.parent} "
        return f"{where}mle-env prepare {self.competition_id}" + (" --force" if force else "")

    def damaged(self, what: str) -> NotPrepared:
        """The error for prepared data that cannot be trusted: what is wrong, and the command that fixes it."""
        return NotPrepared(f"the prepared data of '{self.competition_id}' at {self.prepared} is damaged: {what}; "
                           f"run `{self.prepare_command(force=True)}` to rebuild it")

    def verify(self) -> dict[str, Any]:
        """The manifest, once the prepared files have been checked against it (see the module docstring).

        Raises:
            NotPrepared: nothing is prepared, or the manifest or a file it lists is missing, unreadable or
                changed (the message names the file and the command to run).
        """
        if not self.is_prepared():
            raise NotPrepared(
                f"'{self.competition_id}' is not prepared (no {self.manifest}); run `{self.prepare_command()}` first"
            )
        try:
            st = self.manifest.stat()
            key = (str(self.manifest.resolve()), st.st_ino, st.st_mtime_ns, st.st_size)
            with _VERIFIED_LOCK:
                cached = _VERIFIED.get(key)
            if cached is not None and cached[0] == self._signature(cached[1]):
                return cached[2]  # checked in this process, and the answers have not changed since
            manifest = json.loads(self.manifest.read_bytes())
        except (OSError, ValueError) as e:
            raise self.damaged(f"manifest.json cannot be read ({type(e).__name__})") from None
        sums = manifest.get("sha256") if isinstance(manifest, dict) else None
        if not isinstance(sums, dict) or not all(isinstance(v, str) for v in sums.values()):
            raise self.damaged("manifest.json lists no sha256 checksums")
        private = sorted(rel for rel in sums if rel.startswith("private/"))
        recorded = manifest.get("stat") if isinstance(manifest.get("stat"), dict) else {}
        for rel, digest in sums.items():
            path = self.prepared / rel
            try:
                now = path.stat()
            except OSError:
                raise self.damaged(f"{rel} is missing") from None
            seen = recorded.get(rel)
            if isinstance(seen, list) and len(seen) == 2:
                if now.st_size != seen[0]:
                    raise self.damaged(f"{rel} is {now.st_size} bytes, but was {seen[0]} bytes when prepared")
                if now.st_mtime_ns == seen[1] and not rel.startswith("private/"):
                    continue  # unchanged since prepare: not hashed again (the answers always are)
            try:
                actual = sha256_file(path)
            except OSError as e:
                raise self.damaged(f"{rel} cannot be read ({e.strerror or type(e).__name__})") from None
            if actual != digest:
                raise self.damaged(f"{rel} ({now.st_size} bytes) does not have the sha256 the manifest lists")
        with _VERIFIED_LOCK:
            _VERIFIED[key] = (self._signature(private), private, manifest)
        return manifest

    def _signature(self, rels: list[str]) -> tuple[tuple[int, int], ...] | None:
        try:
            return tuple(((s := (self.prepared / rel).stat()).st_size, s.st_mtime_ns) for rel in rels)
        except OSError:
            return None


# manifest (path, inode, mtime, size) -> (size and mtime of its private files when checked, their names, manifest)
_VERIFIED: dict[tuple[str, int, int, int], tuple[tuple[tuple[int, int], ...] | None, list[str], dict[str, Any]]] = {}
_VERIFIED_LOCK = threading.Lock()


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    """The hex sha256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            digest.update(block)
    return digest.hexdigest()
