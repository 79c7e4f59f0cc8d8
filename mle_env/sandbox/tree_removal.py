"""Removing a folder tree whose content an agent controlled: iteratively, by file descriptor, never
following a link.

``shutil.rmtree`` (and ``os.fwalk``) recurse once per folder level in Python 3.11, so a tree 1,500 folders
deep raises RecursionError. :func:`remove_tree` flattens instead: a folder that is not empty has its files
unlinked and its sub-folders moved up into the top folder under fresh names, then is removed; the top folder
is scanned again until no folder is left. At most a handful of descriptors are open, whatever the depth, and
no more than one folder's listing is read at a time (as an iterator, never a list).

Every name is opened, moved or unlinked relative to an open folder with ``O_NOFOLLOW``, so a symbolic link is
removed as a link and its target never touched. Folders the agent made unreadable (mode 000) are given
``u+rwx`` back through a handle on that very folder. Another filesystem mounted inside the tree (or a folder
the kernel will not let go) is left in place with the folders above it: its files are not the tree's.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import secrets
import stat
from collections.abc import Iterator

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NOT_A_DIR = (errno.ELOOP, errno.ENOTDIR)  # what O_NOFOLLOW | O_DIRECTORY gives for a link or a file


def remove_tree(path: str | os.PathLike[str]) -> None:
    """Remove ``path`` and everything below it, as far as it can be removed; never raises OSError.

    ``path`` itself is trusted (the caller's own folder); everything below it may be hostile: links are
    removed, never followed; depth costs no recursion and no descriptors. What cannot be removed (a mount
    point, an immutable file) stays, together with the folders that lead to it and the top folder's own
    files (so that a marker there, such as a sandbox's owner file, outlives a removal that was cut short).
    A missing ``path`` is not an error; a ``path`` that is a link or a file is unlinked.
    """
    parent, name = os.path.split(os.path.abspath(os.fspath(path)))
    with contextlib.suppress(OSError):
        parent_fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            _remove_entry(parent_fd, name)
        finally:
            os.close(parent_fd)


def _remove_entry(parent_fd: int, name: str) -> None:
    try:
        top = _open_dir(parent_fd, name)
    except FileNotFoundError:
        return
    except OSError as e:
        if e.errno in _NOT_A_DIR:
            os.unlink(name, dir_fd=parent_fd)
        return
    try:
        emptied = _drain(top)
    finally:
        os.close(top)
    if emptied:
        os.rmdir(name, dir_fd=parent_fd)


def _drain(top: int) -> bool:
    """Empty the folder open as ``top``: its folders first (flattened into it), its other entries last.
    True when nothing is left in it."""
    prefix = f".mle-env-removing-{secrets.token_hex(6)}-"  # no name in the top folder starts so
    fresh = (f"{prefix}{n}" for n in itertools.count())
    kept: set[str] = set()  # entries that cannot be removed; skipped on every later scan
    progress = True
    while progress:
        progress = False
        for entry in _scan(top):
            if entry.name not in kept and _is_dir(entry):
                if _flatten(top, entry.name, fresh, moved=entry.name.startswith(prefix)):
                    progress = True
                else:
                    kept.add(entry.name)
    if kept:
        return False  # the top folder's own files stay with what stays
    for entry in _scan(top):
        if entry.name not in kept and not _is_dir(entry):
            try:
                os.unlink(entry.name, dir_fd=top)
            except FileNotFoundError:
                pass
            except OSError:
                kept.add(entry.name)
    return not kept


def _flatten(top: int, name: str, fresh: Iterator[str], moved: bool) -> bool:
    """Remove the folder ``name`` of ``top``, moving its sub-folders up into ``top``; True when it is gone
    (False: it stays, being a mount point or holding something that stays).

    A folder that was ``moved`` up is no mount point (the kernel refuses to move one: EBUSY, which leaves
    its parent in place); one of the top folder's own is checked with rmdir first, which refuses a mount
    point before it looks for entries, so that no file of another mount is unlinked."""
    if not moved:
        try:
            os.rmdir(name, dir_fd=top)
            return True
        except FileNotFoundError:
            return True
        except OSError as e:
            if e.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                return False  # EBUSY: a mount point; EPERM, EROFS: not ours to remove
    try:
        fd = _open_dir(top, name)
    except FileNotFoundError:
        return True
    except OSError as e:
        return e.errno in _NOT_A_DIR and _unlink(top, name)  # swapped for a link or a file meanwhile
    try:
        if not _empty_into(fd, top, fresh):
            return False
    finally:
        os.close(fd)
    try:
        os.rmdir(name, dir_fd=top)
    except FileNotFoundError:
        pass
    except OSError:
        return False
    return True


def _empty_into(fd: int, top: int, fresh: Iterator[str]) -> bool:
    """Unlink the non-folders of the folder open as ``fd`` and move its folders into ``top`` under fresh
    names; True when it ends up empty."""
    while True:
        seen = stuck = False
        for entry in _scan(fd):
            seen = True
            try:
                if _is_dir(entry):
                    _move_up(fd, entry.name, top, fresh)
                else:
                    os.unlink(entry.name, dir_fd=fd)
            except FileNotFoundError:
                pass
            except OSError:
                stuck = True
        if stuck or not seen:
            return not stuck


def _move_up(fd: int, name: str, top: int, fresh: Iterator[str]) -> None:
    """Remove the folder ``name`` of ``fd`` if it is empty, else move it into ``top``."""
    try:
        os.rmdir(name, dir_fd=fd)
        return
    except OSError:
        pass
    target = next(fresh)
    try:
        os.rename(name, target, src_dir_fd=fd, dst_dir_fd=top)
    except PermissionError:  # moving a folder to another parent rewrites its '..': the owner needs u+w on it
        _grant_by_name(fd, name)
        os.rename(name, target, src_dir_fd=fd, dst_dir_fd=top)


def _open_dir(dir_fd: int, name: str) -> int:
    """Open the folder ``name`` of ``dir_fd`` (never a link), with u+rwx given back where it lacked them.

    Raises:
        OSError: ELOOP or ENOTDIR when it is a link or not a folder; whatever else the open met.
    """
    try:
        fd = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except PermissionError:  # unreadable to its owner (not to root): grant, then open the same folder again
        handle = os.open(name, os.O_PATH | _DIR_FLAGS, dir_fd=dir_fd)
        try:
            _grant(handle)
            fd = os.open(f"/proc/self/fd/{handle}", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        finally:
            os.close(handle)
    _grant(fd)  # so that its entries can be listed, unlinked and moved
    return fd


def _grant_by_name(dir_fd: int, name: str) -> None:
    handle = os.open(name, os.O_PATH | _DIR_FLAGS, dir_fd=dir_fd)
    try:
        _grant(handle)
    finally:
        os.close(handle)


def _grant(fd: int) -> None:
    """Add u+rwx to the folder open as ``fd`` (an O_PATH handle too) where it lacks them, if we may (root or
    the owner); chmod goes through /proc/self/fd, which names the opened folder itself, never a link."""
    with contextlib.suppress(OSError):
        st = os.fstat(fd)
        if st.st_mode & stat.S_IRWXU != stat.S_IRWXU and os.geteuid() in (0, st.st_uid):
            os.chmod(f"/proc/self/fd/{fd}", stat.S_IMODE(st.st_mode) | stat.S_IRWXU)


def _unlink(dir_fd: int, name: str) -> bool:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except FileNotFoundError:
        pass
    except OSError:
        return False
    return True


def _scan(fd: int) -> Iterator[os.DirEntry[str]]:
    """The entries of the folder open as ``fd``, one at a time (scandir dups ``fd`` and rewinds it when
    done, so each scan starts at the beginning). Names are str with surrogate escapes, which turn back into
    the exact bytes, UTF-8 or not, when passed to os functions."""
    with os.scandir(fd) as entries:
        yield from entries


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


__all__ = ["remove_tree"]
