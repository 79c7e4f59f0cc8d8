"""Reading one file out of a workspace folder on the host, whatever the agent put at its path.

The walk opens every component relative to the one before with ``O_NOFOLLOW``, so a symbolic link anywhere
on the path (to /etc/passwd, to the private answers) is refused, and nothing can be swapped in between a
check and the read. Named pipes, devices and folders are refused without blocking.
"""

from __future__ import annotations

import os
import stat
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
