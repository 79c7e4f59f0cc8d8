"""Before a download, prepare checks the cache has room for it (archive, extracted files, prepared copy)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import mle_env.prepare.sources as sources
from mle_env.errors import PrepareError
from mle_env.prepare.runner import prepare
from mle_env.prepare.sources import DISK_FACTOR, DirSource, ZipSource, free_bytes


@pytest.fixture
def big(make_competition: Callable[..., Path], home: Path) -> Path:
    """The tiny competition, claiming a 400 GB Kaggle download."""
    folder = make_competition()
    toml = folder / "competition.toml"
    toml.write_text(toml.read_text().replace('type = "kaggle"', 'type = "kaggle"\nsize_bytes = 400000000000'))
    return folder


def test_too_little_space_fails_before_downloading(big: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sources, "free_bytes", lambda path: 20 * 10**9)
    monkeypatch.setenv("KAGGLE_USERNAME", "someone")  # would pass the credentials check: space is checked first
    monkeypatch.setenv("KAGGLE_KEY", "0" * 32)
    with pytest.raises(PrepareError, match=r"not enough disk space: needs about 1.2 TB free at .* 20.0 GB free"):
        prepare("tiny")


def test_dry_run_shows_the_space_needed(big: Path, monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    monkeypatch.setattr(sources, "free_bytes", lambda path: 2 * 10**12)
    result = prepare("tiny", dry_run=True)
    assert "kaggle: competition 'tiny-comp' (400.0 GB), needs about 1.2 TB free" in result.message
    assert "2.0 TB free" in result.message and not home.exists()


def test_space_needed_per_source(tmp_path: Path) -> None:
    archive = tmp_path / "raw.zip"
    archive.write_bytes(b"0" * 1000)
    assert ZipSource(archive).space_needed() == DISK_FACTOR * 1000
    assert DirSource(tmp_path).space_needed() is None  # read in place: nothing is downloaded
    assert free_bytes(tmp_path / "not" / "yet" / "there") == free_bytes(tmp_path)
