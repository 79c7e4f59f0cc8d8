"""An interrupted prepare resumes: the members an extraction already wrote are kept, a finished Kaggle download
is not fetched again, and the result equals an uninterrupted prepare's."""

from __future__ import annotations

import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest

from mle_env.competition.synthetic import load_synthetic
from mle_env.paths import CompetitionPaths
from mle_env.prepare import sources
from mle_env.prepare.runner import RAW_COMPLETE, RAW_PARTIAL, prepare
from mle_env.prepare.sources import extract_archive

CID = "spaceship-titanic"


def _files(n: int, folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for i in range(n):
        path = folder / f"sub{i % 3}" / f"f{i:03d}.bin"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(bytes([i % 251]) * (1000 + 37 * i))
        out.append(path)
    return out


@pytest.mark.parametrize("kind", ["zip", "tar.gz"])
def test_extraction_keeps_complete_members_and_redoes_the_rest(tmp_path: Path, kind: str) -> None:
    files = _files(30, tmp_path / "src")
    archive = tmp_path / f"a.{kind}"
    if kind == "zip":
        with zipfile.ZipFile(archive, "w") as zf:
            for f in files:
                zf.write(f, f.relative_to(tmp_path / "src"))
    else:
        with tarfile.open(archive, "w:gz") as tf:
            for f in files:
                tf.add(f, str(f.relative_to(tmp_path / "src")))
    dest = tmp_path / "dest"
    assert extract_archive(archive, dest) == 30
    stamps = {p: p.stat().st_mtime_ns for p in dest.rglob("*.bin")}
    cut, gone = dest / "sub1" / "f004.bin", dest / "sub2" / "f005.bin"
    cut.write_bytes(cut.read_bytes()[:10])  # the file an interrupted extraction was writing
    gone.unlink()  # one it had not reached
    assert extract_archive(archive, dest) == 2
    for path, stamp in stamps.items():
        assert path.read_bytes() == (tmp_path / "src" / path.relative_to(dest)).read_bytes()
        if path not in (cut, gone):
            assert path.stat().st_mtime_ns == stamp  # kept, not written again


def _raw_zip(tmp_path: Path) -> Path:
    raw = tmp_path / "raw-files"
    raw.mkdir()
    load_synthetic(CID).generate(raw)
    archive = tmp_path / f"{CID}.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for f in sorted(raw.rglob("*")):
            if f.is_file():
                zf.write(f, f.relative_to(raw))
    return archive


def test_an_interrupted_extraction_resumes_and_prepares_the_same_data(
        home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    archive = _raw_zip(tmp_path)
    members = zipfile.ZipFile(archive).namelist()
    assert len(members) >= 2
    real = zipfile.ZipFile.extract
    calls: list[str] = []

    def interrupted(self: zipfile.ZipFile, member: Any, path: Any = None, pwd: Any = None) -> str:
        calls.append(getattr(member, "filename", member))
        if len(calls) == 2:
            raise KeyboardInterrupt  # Ctrl-C while the second member is extracted
        return real(self, member, path, pwd)

    monkeypatch.setattr(zipfile.ZipFile, "extract", interrupted)
    with pytest.raises(KeyboardInterrupt):
        prepare(CID, raw_zip=archive, verify=False)
    paths = CompetitionPaths(CID, home)
    first = paths.raw / members[0]
    assert first.is_file() and (paths.raw / RAW_PARTIAL).read_text() == "zip"
    assert not (paths.raw / RAW_COMPLETE).exists() and not paths.prepared.exists()
    stamp = first.stat().st_mtime_ns
    calls.clear()
    monkeypatch.setattr(zipfile.ZipFile, "extract", real)
    lines: list[str] = []
    result = prepare(CID, raw_zip=archive, verify=False, log=lines.append)
    assert result.status == "prepared" and any("resuming the interrupted fetch" in line for line in lines)
    assert first.stat().st_mtime_ns == stamp  # the member extracted before the interruption was kept
    assert (paths.raw / RAW_COMPLETE).is_file() and not (paths.raw / RAW_PARTIAL).exists()
    fresh = tmp_path / "fresh-home"
    prepare(CID, raw_zip=archive, verify=False, home=fresh)
    manifest = (paths.prepared / "manifest.json").read_text()
    import json

    assert json.loads(manifest)["sha256"] == \
        json.loads((CompetitionPaths(CID, fresh).prepared / "manifest.json").read_text())["sha256"]


class FakeKaggleDownloads:
    """The Kaggle client's download: writes the competition's zip into ``path``; counts the downloads."""

    def __init__(self, archive: Path) -> None:
        self.archive, self.downloads = archive, 0

    def competition_download_files(self, slug: str, path: str, quiet: bool = True) -> None:
        self.downloads += 1
        (Path(path) / f"{slug}.zip").write_bytes(self.archive.read_bytes())


def test_a_finished_kaggle_download_is_not_fetched_again(home: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeKaggleDownloads(_raw_zip(tmp_path))
    monkeypatch.setattr(sources, "kaggle_api", lambda slug=None: fake)
    real = sources.extract_archive

    def stop(archive: Path, dest: Path) -> int | None:
        raise KeyboardInterrupt

    monkeypatch.setattr(sources, "extract_archive", stop)
    with pytest.raises(KeyboardInterrupt):
        prepare(CID, source="kaggle", verify=False)
    paths = CompetitionPaths(CID, home)
    assert fake.downloads == 1 and zipfile.is_zipfile(paths.root / "downloads" / "kaggle" / f"{CID}.zip")
    monkeypatch.setattr(sources, "extract_archive", real)
    assert prepare(CID, source="kaggle", verify=False).status == "prepared"
    assert fake.downloads == 1  # the whole zip was there: extracted, not downloaded again
    assert not (paths.root / "downloads" / "kaggle").exists()  # removed once extracted
    # a download cut off midway is no zip: it is fetched again
    (paths.root / "downloads" / "kaggle").mkdir(parents=True)
    (paths.root / "downloads" / "kaggle" / f"{CID}.zip").write_bytes(fake.archive.read_bytes()[:100])
    (paths.raw / RAW_COMPLETE).unlink()
    assert prepare(CID, source="kaggle", verify=False, force=True).status == "prepared"
    assert fake.downloads == 2
