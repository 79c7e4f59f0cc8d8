"""Where mle-env keeps its data on the host.

Layout under the home folder (``MLE_ENV_HOME``, default ``~/.cache/mle-env``)::

    <home>/<competition-id>/raw/                  raw files as fetched from a source
    <home>/<competition-id>/prepared/public/      what agents may see
    <home>/<competition-id>/prepared/private/     the answers (never enters a sandbox)
    <home>/<competition-id>/prepared/manifest.json  version, source, sha256 of every output
    <home>/<competition-id>/leaderboard.csv        the leaderboard medals are computed against

``prepared/`` is built elsewhere and renamed into place in one step, so it is either complete or absent.
The ``<id>/prepared/{public,private}`` shape is also MLE-bench's, so an MLE-bench data folder can be read.
"""

from __future__ import annotations

import os
from pathlib import Path

HOME_ENV = "MLE_ENV_HOME"
LEADERBOARDS_ENV = "MLE_ENV_LEADERBOARDS"
EXTRA_COMPETITIONS_ENV = "MLE_ENV_COMPETITIONS"


def home() -> Path:
    """The cache folder: ``$MLE_ENV_HOME`` if set, else ``~/.cache/mle-env``. Not created here."""
    value = os.environ.get(HOME_ENV)
    return Path(value).expanduser() if value else Path.home() / ".cache" / "mle-env"


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
