"""``mle-env prepare``: fetch raw files, build public/ and private/, and install them atomically.

The prepared folder is built in ``<home>/<id>/.staging-*`` and renamed to ``<home>/<id>/prepared`` in
one step, after its manifest (version, source, sha256, size and modification time of every output) is
written. So a prepare that is interrupted at any point leaves either the previous complete folder or none,
never a half-written one; leftovers are removed by the next prepare. Fetching resumes: the raw folder of
an interrupted fetch (marked with :data:`RAW_PARTIAL`) keeps what it holds, an extraction skips the members
already written at full size, and a Kaggle zip downloaded whole is not downloaded again; the build (hard
links, splits, checksums) runs again. A file lock makes concurrent
prepares of the same competition (e.g. two Ray tasks on one node) safe: the second waits and then finds
the work done. Prepared data that fails its checksums (:meth:`~mle_env.paths.CompetitionPaths.verify`)
counts as not prepared and is rebuilt.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import json
import os
import shutil
import stat
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from mle_env.competition.registry import get_spec
from mle_env.competition.spec import CompetitionSpec
from mle_env.errors import ChecksumMismatch, MleEnvError, NotPrepared, PrepareError, SourceUnavailable
from mle_env.paths import CompetitionPaths, sha256_file
from mle_env.prepare.helpers import HELPERS, PrepareContext
from mle_env.prepare.leaderboards import install_leaderboard
from mle_env.prepare.sources import (
    DirSource,
    ManualSource,
    Source,
    UrlSource,
    ZipSource,
    disk_space,
    spec_sources,
    url_files,
)

RAW_COMPLETE = ".complete"
#: in a raw folder being filled: the source type filling it; a prepare interrupted then finds it and goes on
#: with what that source already fetched (see _fetch)
RAW_PARTIAL = ".partial"


@dataclass(frozen=True)
class PrepareResult:
    """What ``prepare`` did: ``status`` is prepared, already-prepared or dry-run (``raw_bytes``: the size of
    what the first source would fetch, None when unknown)."""

    competition_id: str
    status: str
    message: str
    source: str | None = None
    seconds: float = 0.0
    public_bytes: int = 0
    private_bytes: int = 0
    raw_bytes: int | None = None

    def to_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


LOCK = ".lock"


@contextlib.contextmanager
def locked(root: Path) -> Iterator[None]:
    """Hold ``root/.lock`` exclusively (made with ``root`` when missing). On the way out, a ``root`` that
    holds nothing but the lock and empty folders (a prepare that failed before fetching anything) is removed,
    so that a failure leaves no trace in the cache; a prepare waiting on the removed lock file locks anew."""
    while True:
        root.mkdir(parents=True, exist_ok=True)
        try:
            lock = open(root / LOCK, "a")
        except FileNotFoundError:  # root removed between mkdir and open by a failed prepare: again
            continue
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _is_current(lock, root / LOCK):
            break
        lock.close()  # this lock file was removed (with its folder) while we waited for it
    try:
        yield
    finally:
        try:
            _remove_if_empty(root)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
            lock.close()


def _is_current(lock: object, path: Path) -> bool:
    """Whether the open lock file is still the one at ``path`` (not removed, nor replaced)."""
    try:
        now = path.stat()
    except FileNotFoundError:
        return False
    held = os.fstat(lock.fileno())  # type: ignore[attr-defined]
    return (held.st_dev, held.st_ino) == (now.st_dev, now.st_ino)


def _remove_if_empty(root: Path) -> None:
    """Remove ``root`` when it holds only the lock file and empty folders (called with the lock held);
    otherwise leave everything as it is."""
    entries = list(root.iterdir())
    folders = [e for e in entries if e.is_dir() and not e.is_symlink()]
    if any(e.name != LOCK and e not in folders for e in entries) or any(any(f.iterdir()) for f in folders):
        return
    for folder in folders:
        with contextlib.suppress(OSError):
            folder.rmdir()
    (root / LOCK).unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        root.rmdir()


def prepare(
    competition: str,
    *,
    force: bool = False,
    source: str | None = None,
    raw_dir: str | os.PathLike[str] | None = None,
    raw_zip: str | os.PathLike[str] | None = None,
    leaderboard: str | os.PathLike[str] | None = None,
    home: str | os.PathLike[str] | None = None,
    dry_run: bool = False,
    log: Callable[[str], None] | None = None,
    verify: bool = True,
) -> PrepareResult:
    """Prepare a competition's data (idempotent: a second call does nothing unless ``force``).

    Args:
        competition: id or alias.
        force: rebuild even if prepared data of the current version exists (raw downloads are reused).
        source: use only this source type from competition.toml (``pypi``, ``kaggle`` or ``none``: files
            placed by hand in ``<home>/<id>/raw/``).
        raw_dir: read raw files from this folder instead of downloading.
        raw_zip: extract raw files from this archive instead of downloading.
        leaderboard: a leaderboard CSV to install (MLE-bench's format or any CSV with a ``score`` column).
        home: the cache folder (default ``$MLE_ENV_HOME`` or ``~/.cache/mle-env``).
        dry_run: only say what would be fetched, how big, and the disk space it needs; change nothing.
        log: called with progress lines.
        verify: check outputs against the spec's ``expected_checksums`` (False for raw files that are
            not the originals, e.g. synthetic test data).

    Raises:
        PrepareError: no source could provide the raw files (each source's reason is listed, including
            too little free disk space for a download), a raw file is missing or malformed, or an output
            fails its checksum.
    """
    say = log or (lambda _line: None)
    spec = get_spec(competition)
    paths = CompetitionPaths(spec.id, Path(home) if home is not None else None)
    sources = _choose_sources(spec, paths, source, raw_dir, raw_zip)
    extras = [s for s in spec_sources(spec, paths.root / "downloads", paths.raw) if isinstance(s, UrlSource)]
    if dry_run:
        lines = []
        for src in sources:
            note, _ = disk_space(src, paths.root)
            lines.append(src.describe() + (f", {note}" if note else ""))
        plus = "".join(f"; plus {extra.describe()}" for extra in extras)
        return PrepareResult(spec.id, "dry-run", "would fetch from the first that works: " + " | ".join(lines) + plus,
                             raw_bytes=sources[0].size_bytes if sources else None)

    with locked(paths.root):
        if leaderboard is not None:
            say(f"installing leaderboard {leaderboard}")
            install_leaderboard(spec, Path(leaderboard), paths.leaderboard)
        _remove_leftovers(paths)
        current = _manifest_version(paths)
        if current == spec.version and not force:
            try:
                paths.verify()
            except NotPrepared as e:  # damaged since it was prepared: rebuilt below, as with --force
                say(f"rebuilding: {e}")
            else:
                return PrepareResult(spec.id, "already-prepared",
                                     f"{spec.id} is already prepared (version {spec.version})")
        started = time.monotonic()
        raw, used = _fetch(spec, paths, sources, say)
        for extra in extras:
            say(f"fetching raw file: {extra.describe()}")
        files = url_files(extras, raw)
        say(f"preparing {spec.id} from {used}")
        staging = paths.root / f".staging-{uuid.uuid4().hex[:8]}"
        try:
            manifest = _build(spec, raw, staging, used, verify, files)
            install(staging, paths)
        except BaseException:
            remove_tree(staging)
            raise
        seconds = time.monotonic() - started
        return PrepareResult(
            spec.id, "prepared", f"prepared {spec.id} in {seconds:.1f} s from {used}", used, seconds,
            manifest["public_bytes"], manifest["private_bytes"],
        )


def _choose_sources(
    spec: CompetitionSpec, paths: CompetitionPaths, source: str | None, raw_dir: object, raw_zip: object
) -> list[Source]:
    if raw_dir is not None:
        return [DirSource(Path(str(raw_dir)))]
    if raw_zip is not None:
        return [ZipSource(Path(str(raw_zip)))]
    # url sources add a file to whichever source is used, so they are no alternative (prepare fetches them)
    sources = [s for s in spec_sources(spec, paths.root / "downloads", paths.raw) if not isinstance(s, UrlSource)]
    if source is not None:
        sources = [s for s in sources if s.type == source]
        if not sources:
            kinds = ", ".join(s.type for s in spec.sources)
            raise PrepareError(f"{spec.id} has no '{source}' source (it has: {kinds}); or pass --raw-dir / --raw-zip")
    return sources


def _manifest_version(paths: CompetitionPaths) -> int | None:
    if not paths.is_prepared():
        return None
    try:
        return int(json.loads(paths.manifest.read_text())["version"])
    except (ValueError, KeyError, OSError):
        return None


def _remove_leftovers(paths: CompetitionPaths) -> None:
    """Remove what an interrupted prepare left behind (we hold the lock, so nothing else is building)."""
    for leftover in list(paths.root.glob(".staging-*")) + list(paths.root.glob(".trash-*")):
        remove_tree(leftover)
    if paths.prepared.exists() and not paths.is_prepared():
        remove_tree(paths.prepared)


def remove_tree(path: Path) -> None:
    """rmtree that first gives back write permission to the read-only folders of a prepared public/."""
    for folder in [path, *(p for p in Path(path).rglob("*") if p.is_dir() and not p.is_symlink())]:
        try:
            folder.chmod(folder.stat().st_mode | stat.S_IWUSR)
        except OSError:
            pass
    shutil.rmtree(path, ignore_errors=True)


def _fetch(
    spec: CompetitionSpec, paths: CompetitionPaths, sources: list[Source], say: Callable[[str], None]
) -> tuple[Path, str]:
    complete = paths.raw / RAW_COMPLETE
    if complete.is_file() and not any(s.given_by_user for s in sources):
        return paths.raw, complete.read_text().strip() or "cache"
    manual = [s for s in sources if isinstance(s, ManualSource)]
    # files placed by hand win over a download, and the raw folder that holds them is never emptied
    sources = [s for s in manual if not s.missing()] + [s for s in sources if s not in manual or s.missing()]
    reasons = []
    for src in sources:
        note, enough = disk_space(src, paths.root)
        if not enough:
            reasons.append(f"{src.type}: not enough disk space: {note}")
            continue
        say(f"fetching raw files: {src.describe()}")
        partial = paths.raw / RAW_PARTIAL
        if src.fills_cache and not manual:
            resuming = partial.is_file() and partial.read_text().strip() == src.type
            if resuming:
                say(f"resuming the interrupted fetch from {src.type}: files already here are kept")
            else:
                shutil.rmtree(paths.raw, ignore_errors=True)
            paths.raw.mkdir(parents=True, exist_ok=True)
            partial.write_text(src.type)
        try:
            raw = src.fetch(paths.raw)
        except SourceUnavailable as e:
            reasons.append(f"{src.type}: {e}")
            if src.fills_cache and not manual and [p.name for p in paths.raw.iterdir()] == [RAW_PARTIAL]:
                shutil.rmtree(paths.raw, ignore_errors=True)  # nothing fetched: leave no trace in the cache
            continue
        except (KeyboardInterrupt, SystemExit):
            raise  # interrupted: what was fetched stays, and the next prepare goes on from there
        except BaseException:
            if src.fills_cache and not manual:
                shutil.rmtree(paths.raw, ignore_errors=True)
            raise
        if src.fills_cache:
            complete.write_text(src.type)
            partial.unlink(missing_ok=True)
        return raw, src.type
    if sources and all(isinstance(s, ManualSource) for s in sources):  # one line: which files to put where
        raise PrepareError(manual[0].instructions())
    raise PrepareError(
        f"no source could provide the raw files of {spec.id}: " + "; ".join(reasons)
        + f". Or, with the raw files already here (MLE-bench's raw/ folder, Kaggle's zip), run "
          f"`mle-env prepare {spec.id} --raw-dir FOLDER` (or --raw-zip ARCHIVE)"
    )


def _run_prepare(spec: CompetitionSpec, ctx: PrepareContext) -> None:
    if spec.prepare.helper is not None:
        HELPERS[spec.prepare.helper](ctx, **spec.prepare.params)
        return
    assert spec.prepare.script is not None
    path = spec.folder / spec.prepare.script
    module_spec = importlib.util.spec_from_file_location(f"mle_env_prepare_{spec.id.replace('-', '_')}", path)
    assert module_spec is not None and module_spec.loader is not None
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    if not hasattr(module, "prepare"):
        raise PrepareError(f"{path} defines no prepare(ctx) function")
    module.prepare(ctx)


def _build(
    spec: CompetitionSpec, raw: Path, staging: Path, source: str, verify: bool = True,
    files: dict[str, Path] | None = None,
) -> dict[str, object]:
    public, private = staging / "public", staging / "private"
    public.mkdir(parents=True)
    private.mkdir()
    with tempfile.TemporaryDirectory(dir=staging, prefix=".scratch-") as scratch:
        ctx = PrepareContext(
            spec, raw, public, private, Path(scratch), dict(spec.prepare.params),
            raw_owned=source not in (DirSource.type, ManualSource.type),  # the user's files: never hard-linked
            files=dict(files or {}),
        )
        try:
            _run_prepare(spec, ctx)
        except MleEnvError:
            raise
        except Exception as e:
            raise PrepareError(f"preparing {spec.id} failed: {type(e).__name__}: {e}") from e
    shutil.copyfile(spec.description_path, public / "description.md")
    _check_outputs(spec, public, private)
    files = {str(p.relative_to(staging)): sha256_file(p) for p in sorted(staging.rglob("*")) if p.is_file()}
    for rel, expected in spec.expected_checksums.items() if verify else ():
        if files.get(rel) != expected:
            raise ChecksumMismatch(f"{spec.id}: {rel} has sha256 {files.get(rel)}, expected {expected}")
    manifest = {
        "competition_id": spec.id,
        "version": spec.version,
        "source": source,
        "created_at": datetime.now(timezone.utc).isoformat(),
        "public_bytes": sum((staging / f).stat().st_size for f in files if f.startswith("public/")),
        "private_bytes": sum((staging / f).stat().st_size for f in files if f.startswith("private/")),
        "sha256": files,
    }
    seal(staging, manifest)
    return manifest


def seal(staging: Path, manifest: dict[str, object]) -> None:
    """Make ``staging/public`` read-only and write ``staging/manifest.json`` (``manifest`` gains ``stat``: the
    size and modification time of every file its ``sha256`` lists)."""
    files = manifest["sha256"]
    assert isinstance(files, dict)
    public = staging / "public"
    # agents get read-only data (files and folders), so no sandbox user can change or delete the shared cache;
    # root in a local sandbox is not stopped by this
    for rel in files:
        if rel.startswith("public/"):
            os.chmod(staging / rel, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    read_only_dir = stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH
    for folder in sorted((p for p in public.rglob("*") if p.is_dir()), reverse=True) + [public]:
        os.chmod(folder, read_only_dir)
    # size and modification time of every output, so that CompetitionPaths.verify need not hash unchanged
    # public files again (renaming the staging folder into place changes neither)
    manifest["stat"] = {rel: [(staging / rel).stat().st_size, (staging / rel).stat().st_mtime_ns] for rel in files}
    tmp = staging / ".manifest.tmp"
    tmp.write_text(json.dumps(manifest, indent=1))
    os.replace(tmp, staging / "manifest.json")


def _check_outputs(spec: CompetitionSpec, public: Path, private: Path) -> None:
    sub = spec.submission
    if not (private / sub.answers).is_file():
        raise PrepareError(f"prepare of {spec.id} wrote no private/{sub.answers} (the answers)")
    if not (public / sub.sample_submission).is_file():
        raise PrepareError(f"prepare of {spec.id} wrote no public/{sub.sample_submission}")
    if (public / sub.answers).is_file() and sha256_file(public / sub.answers) == sha256_file(private / sub.answers):
        raise PrepareError(f"prepare of {spec.id} put the answers file into public/")


def install(staging: Path, paths: CompetitionPaths) -> None:
    trash = None
    if paths.prepared.exists():
        trash = paths.root / f".trash-{uuid.uuid4().hex[:8]}"
        os.rename(paths.prepared, trash)
    os.rename(staging, paths.prepared)
    if trash is not None:
        remove_tree(trash)
