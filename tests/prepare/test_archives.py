"""7z archives: written and read back unchanged, found as packed raw files, and extracted by prepare."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import raw_dir

from mle_env.archives import extract_7z, is_7z, write_7z
from mle_env.competition.registry import get_spec
from mle_env.errors import PrepareError
from mle_env.paths import CompetitionPaths
from mle_env.prepare.helpers import PrepareContext, find_raw, raw_folder
from mle_env.prepare.runner import prepare
from mle_env.prepare.sources import extract_archive


def test_7z_round_trip(tmp_path: Path) -> None:
    files = {"train.json": b'[{"id": 1}]', "nested/deep/a.bin": bytes(range(256)) * 40, "empty.txt": b""}
    for name, data in files.items():
        (tmp_path / "src" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "src" / name).write_bytes(data)
    archive = tmp_path / "out" / "train.json.7z"
    assert write_7z(((tmp_path / "src" / n, n) for n in files), archive) == 3
    assert is_7z(archive) and not is_7z(tmp_path / "src" / "train.json")
    extract_7z(archive, tmp_path / "back")
    assert {n: (tmp_path / "back" / n).read_bytes() for n in files} == files
    extract_archive(archive, tmp_path / "again")  # the generic extractor recognises 7z by its signature
    assert (tmp_path / "again" / "nested" / "deep" / "a.bin").read_bytes() == files["nested/deep/a.bin"]
    archive.write_bytes(archive.read_bytes()[:40])
    with pytest.raises(PrepareError, match="damaged"):
        extract_7z(archive, tmp_path / "broken")


def test_find_raw_and_raw_folder_unpack_7z(tmp_path: Path, make_competition: Callable[..., Path]) -> None:
    make_competition()
    raw, scratch = tmp_path / "raw7z", tmp_path / "scratch"
    raw.mkdir()
    (tmp_path / "train.json").write_text("[]")
    (tmp_path / "audio").mkdir()
    (tmp_path / "audio" / "a.wav").write_bytes(b"RIFF")
    write_7z([(tmp_path / "train.json", "train.json")], raw / "train.json.7z")
    write_7z([(tmp_path / "audio" / "a.wav", "train/audio/a.wav")], raw / "train.7z")
    ctx = PrepareContext(get_spec("tiny"), raw, tmp_path / "public", tmp_path / "private", scratch)
    assert find_raw(ctx, "train.json").read_text() == "[]"
    assert (raw_folder(ctx, "train") / "audio" / "a.wav").read_bytes() == b"RIFF"
    assert find_raw(ctx, "train.json").is_relative_to(scratch)


def test_prepare_extracts_a_7z_raw_archive(make_competition: Callable[..., Path], home: Path, tmp_path: Path) -> None:
    folder = make_competition()
    archive = tmp_path / "tiny-comp.7z"
    write_7z([(raw_dir(folder) / "data.csv", "data.csv")], archive)
    result = prepare("tiny-comp", raw_zip=archive)
    assert result.status == "prepared"
    paths = CompetitionPaths("tiny-comp")
    assert (paths.raw / "data.csv").read_bytes() == (raw_dir(folder) / "data.csv").read_bytes()
    assert len((paths.public / "train.csv").read_text().splitlines()) == 31  # header + 30 of the 40 rows
