"""7z archives, read and written with py7zr (Kaggle ships some competitions' files as ``.7z``).

:func:`~mle_env.prepare.sources.extract_archive` (used for ``--raw-zip`` and by
:func:`~mle_env.prepare.helpers.find_raw` / :func:`~mle_env.prepare.helpers.raw_folder`) recognises a 7z
archive by its signature and calls :func:`extract_7z`; :func:`write_7z` builds one for public/, as MLE-bench
republishes ``train.json.7z``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from mle_env.errors import PrepareError

SIGNATURE = b"7z\xbc\xaf\x27\x1c"


def is_7z(path: Path) -> bool:
    """Whether ``path`` is a file that starts with the 7z signature."""
    try:
        with open(path, "rb") as f:
            return f.read(len(SIGNATURE)) == SIGNATURE
    except OSError:
        return False


def extract_7z(archive: Path, dest: Path) -> None:
    """Extract every member of a 7z ``archive`` into ``dest``, refusing members that would land outside it."""
    import py7zr

    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    try:
        with py7zr.SevenZipFile(archive, "r") as z:
            for name in z.getnames():
                if not (dest / name).resolve().is_relative_to(dest.resolve()):
                    raise PrepareError(f"{archive} holds a member outside the archive: {name}")
            z.extractall(dest)
    except (py7zr.exceptions.ArchiveError, EOFError, OSError, ValueError) as e:
        raise PrepareError(f"{archive} is damaged or incomplete ({e}); download it again") from e


def write_7z(pairs: Iterable[tuple[Path, str]], archive: Path) -> int:
    """Write each source file into a new 7z ``archive`` under its member name (LZMA2); returns the count."""
    import py7zr

    archive.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with py7zr.SevenZipFile(archive, "w") as z:
        for source, member in pairs:
            if not Path(source).is_file():
                raise PrepareError(f"expected file {source} is missing")
            z.write(source, member)
            count += 1
    return count


def read_7z_member(archive: Path) -> bytes:
    """The bytes of the one file in a 7z ``archive`` (the first by name when there are several), read through
    a temporary folder: statoil publishes its sample submission as ``sample_submission.csv.7z``."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        extract_7z(archive, Path(folder))
        files = sorted(p for p in Path(folder).rglob("*") if p.is_file())
        if not files:
            raise PrepareError(f"{archive} holds no file")
        return files[0].read_bytes()
