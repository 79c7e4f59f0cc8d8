"""Reading (and copying) files of a workspace folder on the host, whatever the agent put at their paths.

The walk opens every component relative to the one before with ``O_NOFOLLOW``, so a symbolic link anywhere
on the path (to /etc/passwd, to the private answers) is refused, and nothing can be swapped in between a
check and the read. Named pipes, devices and folders are refused without blocking.
"""

from __future__ import annotations

import io
import os
import stat
import tarfile
import time
from pathlib import Path


def read_workspace_file(root: Path, path: str, max_bytes: int) -> bytes | str | None:
    """The bytes of ``root/path``; None when there is no such file; or why it was not read (a link, not a
    regular file, over ``max_bytes``). ``path`` is relative, without ``..``."""
    parts = [p for p in Path(path).parts if p not in ("", ".")]
    name = parts[-1] if parts else path
    if not parts or ".." in parts or Path(path).is_absolute():
        return f"{path} is not a path inside the working directory"
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    except FileNotFoundError:
        return None
    try:
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | (0 if last else os.O_DIRECTORY)
            try:
                next_fd = os.open(part, flags, dir_fd=fd)
            except FileNotFoundError:
                return None
            except OSError as e:  # O_NOFOLLOW: ELOOP for a link as the file, ENOTDIR for a link as a folder
                if os.path.islink(os.path.join(f"/proc/self/fd/{fd}", part)):
                    return (f"{'/'.join(parts[:i + 1])} is a symbolic link, which could lead out of the working "
                            "directory; write a regular file")
                if isinstance(e, NotADirectoryError):
                    return f"{'/'.join(parts[:i + 1])} is not a folder"
                return f"{name} cannot be read ({e.strerror})"
            os.close(fd)
            fd = next_fd
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            return f"{name} is a directory, not a file"
        if not stat.S_ISREG(st.st_mode):
            return f"{name} is not a regular file"
        if st.st_size > max_bytes:
            return f"{name} is {st.st_size} bytes, over the {max_bytes}-byte limit"
        chunks, left = [], max_bytes + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > max_bytes:
            return f"{name} is over the {max_bytes}-byte limit"
        return data
    finally:
        os.close(fd)


class TreeArchive:
    """A tar archive of regular files built under a byte cap (see ``Sandbox.copy_tree``)."""

    def __init__(self, max_bytes: int) -> None:
        self.buffer = io.BytesIO()
        self.tar = tarfile.open(fileobj=self.buffer, mode="w")
        self.left = max_bytes
        self.skipped_files = 0
        self.skipped_bytes = 0

    def add(self, name: str, data: bytes, mtime: float | None = None) -> None:
        if len(data) > self.left:
            self.skipped_files += 1
            self.skipped_bytes += len(data)
            return
        self.left -= len(data)
        info = tarfile.TarInfo(name)
        info.size, info.mode, info.mtime = len(data), 0o644, mtime or time.time()
        self.tar.addfile(info, io.BytesIO(data))

    def skip(self, size: int) -> None:
        self.skipped_files += 1
        self.skipped_bytes += size

    def finish(self) -> bytes:
        if self.skipped_files:
            note = (f"{self.skipped_files} file(s), {self.skipped_bytes} bytes, were left out: over the size cap\n")
            self.left = len(note)
            self.add("TRUNCATED.txt", note.encode())
        self.tar.close()
        return self.buffer.getvalue()


def archive_workspace_tree(root: Path, path: str, max_bytes: int) -> bytes:
    """``Sandbox.copy_tree`` for a workspace on the host: a walk by file descriptors that never follows a
    link and never blocks on a pipe."""
    archive = TreeArchive(max_bytes)
    parts = [p for p in Path(path).parts if p not in ("", ".")]
    if ".." in parts or Path(path).is_absolute():
        return archive.finish()
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
        for part in parts:
            next_fd = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = next_fd
    except OSError:
        return archive.finish()
    try:
        for folder, _dirs, files, dir_fd in os.fwalk(".", dir_fd=fd, follow_symlinks=False):
            for name in sorted(files):
                try:
                    file_fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
                except OSError:
                    continue
                with os.fdopen(file_fd, "rb") as f:
                    st = os.fstat(f.fileno())
                    if not stat.S_ISREG(st.st_mode):
                        continue
                    if st.st_size > archive.left:
                        archive.skip(st.st_size)
                        continue
                    archive.add(os.path.normpath(os.path.join(folder, name)), f.read(archive.left + 1)[: st.st_size],
                                st.st_mtime)
    finally:
        os.close(fd)
    return archive.finish()


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
            offset = 0
            while offset < st.st_size:  # data segments only, so that a sparse file stays sparse
                try:
                    start = os.lseek(fd_in, offset, os.SEEK_DATA)
                except OSError:  # ENXIO: nothing but a hole up to the end
                    break
                end = os.lseek(fd_in, start, os.SEEK_HOLE)
                while start < end:
                    n = os.copy_file_range(fd_in, fd_out, end - start, start, start)
                    if n == 0:
                        break
                    start += n
                offset = end
            os.ftruncate(fd_out, st.st_size)
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
