"""Copying the submission out: whatever the agent puts at ./submission/submission.csv (links out of the
sandbox, a pipe, a folder, a huge sparse file, NUL bytes), validate and submit answer at once with a reason,
never with the linked file's content, and never raise."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hostile import shell

CASES = {
    "link-to-etc-passwd": ("ln -sf /etc/passwd submission/submission.csv", "symbolic link"),
    "link-to-the-answers": ("ln -sf {answers} submission/submission.csv", "symbolic link"),
    "fifo": ("mkfifo submission/submission.csv", "not a regular file"),
    "directory": ("mkdir -p submission/submission.csv", "directory"),
    "sparse-2gb": ("truncate -s 2G submission/submission.csv", "limit"),
    "nul-bytes": ("printf 'id,target\\0\\0\\nr001,\\0\\n' > submission/submission.csv", ""),
    # docker's /home is root's, so there the folder cannot even be replaced
    "folder-is-a-link": ("rmdir submission && ln -s /etc submission; true", ("symbolic link", "there is no")),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_submissions_are_refused_with_a_reason(open_env, case: str, home: Path, tiny_prepared: str) -> None:
    answers = home / tiny_prepared / "prepared" / "private" / "test.csv"
    setup, reasons = CASES[case]
    reasons = (reasons,) if isinstance(reasons, str) else reasons
    env = open_env()
    shell(env, setup.format(answers=answers))
    started = time.monotonic()
    obs, _, terminated, truncated, _ = env.step({"type": "validate"})
    assert not (terminated or truncated) and obs["exit_code"] == 1, obs
    assert any(r in obs["message"] for r in reasons), obs["message"]
    obs, _, terminated, _, info = env.step({"type": "submit"})
    assert time.monotonic() - started < 30
    grade = info["grade"]
    assert terminated and not grade["valid_submission"] and grade["invalid_reason"], grade
    assert any(r in grade["invalid_reason"] for r in reasons), grade["invalid_reason"]
    assert "root:x:0" not in str(grade) and "root:x:0" not in obs["message"]
    assert len(grade["invalid_reason"]) < 1000


def test_copying_a_folder_out_keeps_only_regular_files_under_the_cap(open_env) -> None:
    import tarfile

    env = open_env()
    shell(env, "mkdir -p code/sub; echo hi > code/a.py; head -c 5000 /dev/zero > code/sub/big.bin;"
               " echo x > code/sub/b.txt; ln -s /etc/passwd code/link; ln -s / code/root; mkfifo code/fifo")
    sandbox = env.unwrapped._sandbox
    started = time.monotonic()
    with sandbox.copy_tree("code", 3000) as archive, tarfile.open(fileobj=archive) as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar.getmembers()}
    assert time.monotonic() - started < 30
    assert set(members) == {"a.py", "sub/b.txt", "TRUNCATED.txt"} and members["a.py"] == b"hi\n"
    assert b"1 file(s), 5000 bytes" in members["TRUNCATED.txt"]
    with sandbox.copy_tree("no-such-folder", 3000) as archive, tarfile.open(fileobj=archive) as tar:
        assert tar.getmembers() == []


def test_a_file_that_shrinks_while_it_is_packed_leaves_the_archive_readable(tmp_path: Path) -> None:
    """The size is read before the bytes; a file the agent truncates in between must not leave a member shorter
    than its header says (the archive would end there, and every later file with it)."""
    import os
    import tarfile

    from mle_env.sandbox.worker import PackedTree

    (tmp_path / "short").write_bytes(b"0123456789")
    (tmp_path / "next").write_bytes(b"after")
    with (tmp_path / "out.tar").open("wb") as out:
        packed = PackedTree(out, 10_000, 10)
        for name, claimed in (("short", 100), ("next", 5)):
            fd = os.open(tmp_path / name, os.O_RDONLY)
            st = os.fstat(fd)
            packed.add(name, fd, os.stat_result((*st[:6], claimed, *st[7:])))  # as stat said before a truncate
            os.close(fd)
        packed.finish()
    with tarfile.open(tmp_path / "out.tar") as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar.getmembers()}
    assert members == {"short": b"0123456789" + b"\0" * 90, "next": b"after"}
