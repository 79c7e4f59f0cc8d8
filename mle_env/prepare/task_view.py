"""The prepared public/ folder as an episode with another task text sees it: the same files, with
``description.md`` holding that text (an obfuscated description, or MLE-bench's own; see ``task_text`` in
:mod:`mle_env.env`). Without this, ``./data/description.md`` would still name the competition.

A view is built once per text and public folder, beside the prepared data (``<id>/task-views/<key>/public``),
its files hard links to the prepared ones (copies across filesystems), so it costs little. It is built aside
and renamed into place, so a half-built view is never used; views of texts no longer asked for stay until the
competition is prepared again.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import uuid
from pathlib import Path

from mle_env.prepare.helpers import place_files

VIEWS = "task-views"
DESCRIPTION = "description.md"


def view_key(public: Path, description: str) -> str:
    """What a view depends on: the text, and every file of ``public`` (name, size and inode, so that
    preparing again, which writes new files, makes a new view)."""
    digest = hashlib.sha256(description.encode())
    for path in sorted(public.rglob("*")):
        if path.is_file() and path.relative_to(public).as_posix() != DESCRIPTION:
            st = path.stat()
            digest.update(f"\0{path.relative_to(public).as_posix()}\0{st.st_size}\0{st.st_ino}".encode())
    return digest.hexdigest()[:16]


def ensure_task_view(public: Path, root: Path, description: str) -> Path:
    """The public folder of the view of ``public`` whose description.md is ``description``, built under
    ``root`` (the competition's folder in MLE_ENV_HOME) unless it is there already."""
    target = root / VIEWS / view_key(public, description)
    if (target / "public" / DESCRIPTION).is_file():
        return target / "public"
    staging = root / VIEWS / f".staging-{uuid.uuid4().hex[:8]}"
    try:
        files = [p for p in sorted(public.rglob("*"))
                 if p.is_file() and p.relative_to(public).as_posix() != DESCRIPTION]
        place_files((p, staging / "public" / p.relative_to(public)) for p in files)
        (staging / "public").mkdir(parents=True, exist_ok=True)
        (staging / "public" / DESCRIPTION).write_text(description, encoding="utf-8")
        try:
            os.rename(staging, target)
        except OSError:  # another process built it first
            if not (target / "public" / DESCRIPTION).is_file():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target / "public"
