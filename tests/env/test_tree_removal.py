"""remove_tree: removes what an agent left, whatever its shape, without recursion, links or leaks.

Each tree is built by file descriptor (so no path grows past PATH_MAX); what must survive lies outside the
tree (link targets) or on another mount inside it.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mle_env.sandbox.tree_removal import remove_tree

REPO = Path(__file__).resolve().parents[2]


def chain(root: Path, depth: int, name: str = "a", mode: int = 0o755) -> None:
    """``root/name/name/...`` ``depth`` levels deep, each folder made with ``mode``, a file at the bottom."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir(name, 0o700, dir_fd=fd)
            child = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
        os.close(os.open("bottom.txt", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd))
    finally:
        os.close(fd)
    if mode != 0o700:  # modes last, top-down order does not matter: chmod by path would need PATH_MAX
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
        try:
            for _ in range(depth):
                child = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
                os.chmod(name, mode, dir_fd=fd)
                os.close(fd)
                fd = child
        finally:
            os.close(fd)


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_a_missing_path_a_file_and_a_link_as_the_top(tmp_path: Path) -> None:
    remove_tree(tmp_path / "missing")
    (tmp_path / "file").write_text("x")
    remove_tree(tmp_path / "file")
    target = tmp_path / "target"
    target.mkdir()
    (target / "keep").write_text("keep")
    (tmp_path / "link").symlink_to(target, target_is_directory=True)
    remove_tree(tmp_path / "link")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["target"]
    assert (target / "keep").read_text() == "keep"


def test_links_pointing_outside_are_removed_and_their_targets_untouched(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "secret.txt").write_text("secret")
    (outside / "sub" / "deep.txt").write_text("deep")
    os.chmod(outside / "sub", 0o555)  # a folder an agent's link leads to, even a read-only one
    tree = tmp_path / "tree"
    (tree / "x" / "y").mkdir(parents=True)
    (tree / "to-dir").symlink_to(outside, target_is_directory=True)
    (tree / "x" / "to-file").symlink_to(outside / "secret.txt")
    (tree / "x" / "y" / "to-sub").symlink_to(outside / "sub", target_is_directory=True)
    (tree / "x" / "dangling").symlink_to(tmp_path / "nowhere")
    (tree / "x" / "to-root").symlink_to("/", target_is_directory=True)
    remove_tree(tree)
    assert not tree.exists() and not tree.is_symlink()
    assert (outside / "secret.txt").read_text() == "secret" and (outside / "sub" / "deep.txt").read_text() == "deep"
    os.chmod(outside / "sub", 0o755)


@pytest.mark.parametrize("depth", [1500, 5000])
def test_deep_trees_need_no_recursion_and_few_descriptors(tmp_path: Path, depth: int) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    chain(tree, depth)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)  # Python's default (a library imported earlier in the session may raise it)
    try:
        with pytest.raises(RecursionError):  # what the standard library does with it in Python 3.11
            shutil.rmtree(tree)
    finally:
        sys.setrecursionlimit(limit)
    before = open_fds()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (before + 12, hard))  # a few descriptors, whatever the depth
    try:
        remove_tree(tree)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert not tree.exists()
    assert open_fds() == before


def test_wide_trees_and_many_files(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    for i in range(50):
        folder = tree / f"d{i}" / "e" / "f"
        folder.mkdir(parents=True)
        for j in range(40):
            (folder / f"file{j}").write_bytes(b"")
        (tree / f"d{i}" / f"empty{i}").mkdir()
    many = tree / "many"
    many.mkdir()
    for j in range(20_000):
        os.close(os.open(many / f"f{j}", os.O_WRONLY | os.O_CREAT, 0o600))
    remove_tree(tree)
    assert not tree.exists()


def test_names_that_are_not_utf8_or_long(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    raw = os.fsencode(tree)
    odd = [b"\xff\xfe", b"caf\xe9", b"\x80" * 200, b"x" * 255, b"\n\t -", b"\xed\xa0\x80"]
    for name in odd:
        os.mkdir(raw + b"/" + name)
        os.mkdir(raw + b"/" + name + b"/" + name)
        with open(raw + b"/" + name + b"/" + name + b"/" + name, "wb") as f:
            f.write(b"x")
        with open(raw + b"/" + b"f" + name[:250], "wb") as f:
            f.write(b"x")
    remove_tree(tree)
    assert not tree.exists()


def test_folders_made_unreadable_as_root_and_as_their_owner(tmp_path: Path) -> None:
    for run in ("in-process", "owner-only"):
        tree = tmp_path / run
        tree.mkdir()
        chain(tree, 300, mode=0o000)
        (tree / "locked").mkdir(mode=0o000)
        os.chmod(tree, 0o000)
        if run == "in-process":
            remove_tree(tree)
        else:
            remove_as_owner_without_privileges(tree)
        assert not tree.exists()


def remove_as_owner_without_privileges(tree: Path) -> None:
    """remove_tree in a process of the tree's owner with no permission-bypassing capability (root without
    CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH, or a plain user): mode-000 folders stop it unless it chmods."""
    code = f"import sys; sys.path.insert(0, {str(REPO)!r}); from mle_env.sandbox.tree_removal import remove_tree; " \
           f"remove_tree({str(tree)!r})"
    command = [sys.executable, "-c", code]
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("needs setpriv (util-linux) to drop root's permission-bypassing capabilities")
        command = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", *command]
    subprocess.run(command, check=True, timeout=120)


MOUNT_SCRIPT = textwrap.dedent("""
    import os, subprocess, sys
    sys.path.insert(0, {repo!r})
    from mle_env.sandbox.tree_removal import remove_tree
    tree, outside = {tree!r}, {outside!r}
    os.makedirs(tree + "/a/b/tmpfs")
    os.makedirs(tree + "/a/c/bind")
    subprocess.run(["mount", "-t", "tmpfs", "none", tree + "/a/b/tmpfs"], check=True)
    open(tree + "/a/b/tmpfs/on-tmpfs", "w").close()
    subprocess.run(["mount", "--bind", outside, tree + "/a/c/bind"], check=True)
    open(tree + "/owner", "w").close()
    open(tree + "/a/gone", "w").close()
    remove_tree(tree)  # must not raise
    left = sorted(os.path.relpath(os.path.join(d, n), tree) for d, ds, fs in os.walk(tree) for n in ds + fs)
    print(left)
    # the folders above a mount point may have been moved up under other names; the mounts' files stay
    assert [p for p in left if p.endswith("/tmpfs/on-tmpfs")], "a file of a mounted tmpfs was removed"
    assert [p for p in left if p.endswith("/bind/keep.txt")], "a file under a bind mount was removed"
    assert "owner" in left, "the top folder's own files stay while something below cannot be removed"
    assert not [p for p in left if p.endswith("gone")]
""")


def test_mount_points_are_skipped_and_their_files_kept(tmp_path: Path) -> None:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("needs root and unshare to mount inside a private mount namespace")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    tree = tmp_path / "tree"
    script = MOUNT_SCRIPT.format(repo=str(REPO), tree=str(tree), outside=str(outside))
    result = subprocess.run(["unshare", "--mount", "--propagation", "private", sys.executable, "-c", script],
                            capture_output=True, text=True, timeout=120)
    if result.returncode != 0 and "mount" in result.stderr and "Traceback" not in result.stderr:
        pytest.skip(f"cannot mount here: {result.stderr.strip()[-200:]}")
    assert result.returncode == 0, result.stdout + result.stderr
    assert (outside / "keep.txt").read_text() == "keep"  # the bind mount's source: same filesystem, other mount
    # out of the mount namespace the mounts are gone: what was kept for them can be removed now
    remove_tree(tree)
    assert not tree.exists()
