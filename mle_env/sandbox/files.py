"""Reading (and copying) files of a workspace folder on the host, whatever the agent put at their paths.

The walk opens every component relative to the one before with ``O_NOFOLLOW``, so a symbolic link anywhere
on the path (to /etc/passwd, to the private answers) is refused, and nothing can be swapped in between a
check and the read. Named pipes, devices and folders are refused without blocking.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import IO

from mle_env.sandbox.worker import copy_fd, open_in_workspace, pack_tree


def read_workspace_file(root: Path, path: str, max_bytes: int) -> bytes | str | None:
    """The bytes of ``root/path``; None when there is no such file; or why it was not read (a link in any
    component, not a regular file, over ``max_bytes``). ``path`` is relative, without ``..``."""
    fd, why = open_in_workspace(str(root), path)
    if fd is None:
        return why
    name = Path(path).name
    with os.fdopen(fd, "rb") as f:
        size = os.fstat(fd).st_size
        if size > max_bytes:
            return f"{name} is {size} bytes, over the {max_bytes}-byte limit"
        data = f.read(max_bytes + 1)
    if len(data) > max_bytes:
        return f"{name} is over the {max_bytes}-byte limit"
    return data


def empty_tree_archive() -> IO[bytes]:
    """An archive with no file, in the form ``Sandbox.copy_tree`` returns."""
    out = tempfile.TemporaryFile(prefix="mle-env-tree-")
    pack_tree("/nonexistent", "", out, 0, 0)
    out.seek(0)
    return out


def archive_workspace_tree(root: Path, path: str, max_bytes: int, max_files: int) -> IO[bytes]:
    """``Sandbox.copy_tree`` for a workspace on the host: a walk by file descriptors that never follows a
    link, never blocks on a pipe, never recurses, and writes the archive to a temporary file as it goes."""
    out = tempfile.TemporaryFile(prefix="mle-env-tree-")
    try:
        pack_tree(str(root), path, out, max_bytes, max_files)
    except BaseException:
        out.close()
        raise
    out.seek(0)
    return out


#: folders deeper than this below the copied root are left out of a copy (each level holds two descriptors)
MAX_COPY_DEPTH = 200


def copy_workspace(source: Path, target: Path) -> list[str]:
    """Copy the folder ``source`` to ``target`` (which must not exist) as exactly as a file-by-file copy can:
    contents (holes kept; reflinked where the filesystem shares extents through ``copy_file_range``), modes,
    owners (when this process may set them) and modification times. Links are copied as links and never
    followed: the walk opens every component relative to its folder with ``O_NOFOLLOW``, so a process that
    swaps a folder for a link while the copy runs cannot make it read anything outside ``source``. Pipes,
    sockets and devices are left out, and so are entries that cannot be read or lie deeper than
    MAX_COPY_DEPTH; returns their paths relative to ``source``."""
    skipped: list[str] = []
    src = os.open(source, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        st = os.fstat(src)
        os.mkdir(target, 0o700)
        dst = os.open(target, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        try:
            _copy_folder(src, dst, "", 0, skipped)
            _copy_metadata(dst, st)
        finally:
            os.close(dst)
    finally:
        os.close(src)
    return skipped


def _copy_folder(src: int, dst: int, where: str, depth: int, skipped: list[str]) -> None:
    for name in os.listdir(src):
        path = f"{where}{name}"
        try:
            st = os.stat(name, dir_fd=src, follow_symlinks=False)
            if stat.S_ISLNK(st.st_mode):
                os.symlink(os.readlink(name, dir_fd=src), name, dir_fd=dst)
                _copy_metadata(None, st, name, dst)
            elif stat.S_ISDIR(st.st_mode):
                if depth >= MAX_COPY_DEPTH:
                    skipped.append(path + "/")
                    continue
                sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=src)
                try:
                    os.mkdir(name, 0o700, dir_fd=dst)
                    sub_dst = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dst)
                    try:
                        _copy_folder(sub, sub_dst, path + "/", depth + 1, skipped)
                        _copy_metadata(sub_dst, os.fstat(sub))
                    finally:
                        os.close(sub_dst)
                finally:
                    os.close(sub)
            elif stat.S_ISREG(st.st_mode):
                _copy_file(src, dst, name)
            else:
                skipped.append(path)
        except OSError:  # gone meanwhile, unreadable, or swapped for something else: left out
            skipped.append(path)


def _copy_file(src: int, dst: int, name: str) -> None:
    fd_in = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=src)
    try:
        st = os.fstat(fd_in)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(f"{name} is no longer a regular file")
        fd_out = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=dst)
        try:
            copy_fd(fd_in, fd_out, st.st_size)  # data segments only, so that a sparse file stays sparse
            _copy_metadata(fd_out, st)
        finally:
            os.close(fd_out)
    finally:
        os.close(fd_in)


def _copy_metadata(fd: int | None, st: os.stat_result, name: str = "", dir_fd: int | None = None) -> None:
    """Owner (root only), mode and times of ``st`` onto the open ``fd``, or onto the link ``name`` in ``dir_fd``."""
    if fd is None:
        if os.geteuid() == 0:
            os.chown(name, st.st_uid, st.st_gid, dir_fd=dir_fd, follow_symlinks=False)
        os.utime(name, ns=(st.st_atime_ns, st.st_mtime_ns), dir_fd=dir_fd, follow_symlinks=False)
        return
    if os.geteuid() == 0:
        os.fchown(fd, st.st_uid, st.st_gid)
    os.fchmod(fd, stat.S_IMODE(st.st_mode))
    os.utime(fd, ns=(st.st_atime_ns, st.st_mtime_ns))
