"""Atomic file writes, and a lock for read-modify-write updates.

A reader (or a crash) never sees a half-written file: the old content stays
in place until a rename (:meth:`pathlib.Path.replace`) swaps the new one in,
which POSIX and Windows both do atomically within one file system.

The new content is written to an unnamed temporary file (Linux's
``O_TMPFILE``), flushed to disk, then given a name beside the target
(``.<name>.<pid>.<random>.tmp``) and renamed over it. A writer killed before
the rename leaves nothing behind: an unnamed file vanishes with its process.
Only a kill between the link and the rename, two system calls apart, can
leave a named temporary; so can any kill where ``O_TMPFILE`` is not available
(another system, a file system without it), where the temporary is named
from the start. The next write to the same target removes such leftovers,
and nothing else: regular files of this user, named by that pattern, whose
process is no longer running.

:func:`locked` serialises writers that re-read a file, change it and write it
back (the Labeler's judgments): an exclusive ``flock`` on a sibling
``.<name>.lock`` file, which is created once and never deleted.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

from askkit.errors import UsageError

if sys.platform == "win32":  # pragma: no cover - askkit is tested on Linux
    import msvcrt
else:
    import fcntl

__all__ = [
    "atomic_write_bytes",
    "atomic_write_text",
    "followed",
    "lock_path",
    "locked",
    "temp_pattern",
    "umask",
]

#: The mode of a written file (as :func:`tempfile.mkstemp` creates it).
_MODE = 0o600
_O_TMPFILE: int | None = getattr(os, "O_TMPFILE", None)


def temp_pattern(name: str) -> re.Pattern[str]:
    """The names askkit gives the temporaries of a target called ``name``
    (group 1 is the writer's process id).

    >>> bool(temp_pattern("q.tsv").fullmatch(".q.tsv.4242.0f3a9c1e.tmp"))
    True
    >>> bool(temp_pattern("q.tsv").fullmatch(".q.tsv.lock"))
    False
    """
    return re.compile(rf"\.{re.escape(name)}\.([0-9]{{1,10}})\.[0-9a-f]{{8}}\.tmp")


def _temp_name(target: Path) -> str:
    return f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True  # another thread of this process may be writing it
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # a process of another user, or not a pid we can judge
    return True


def _remove_stale(target: Path) -> None:
    """Delete ``target``'s temporaries left by writers that are no longer alive: regular
    files named as askkit names them, owned by this user, whose process id is not
    a running process."""
    pattern = temp_pattern(target.name)
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return
    uid = os.getuid() if hasattr(os, "getuid") else None
    for entry in entries:
        match = pattern.fullmatch(entry.name)
        if not match or _alive(int(match.group(1))):
            continue
        with contextlib.suppress(OSError):
            info = entry.stat(follow_symlinks=False)
            if entry.is_file(follow_symlinks=False) and uid in (None, info.st_uid):
                Path(entry.path).unlink(missing_ok=True)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.fsync(fd)


def _unnamed(parent: Path, data: bytes) -> int | None:
    """An unnamed file in ``parent`` holding ``data`` (flushed), or None where
    ``O_TMPFILE`` is not supported."""
    if _O_TMPFILE is None:
        return None
    try:
        fd = os.open(parent, _O_TMPFILE | os.O_WRONLY, _MODE)
    except OSError:  # EISDIR/EOPNOTSUPP/EINVAL: no O_TMPFILE in this kernel or file system
        return None
    try:
        _write_all(fd, data)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _link(fd: int, target: Path, dir_fd: int) -> Path | None:
    """Name the unnamed file ``fd`` beside ``target``; None when it cannot be linked
    (no /proc)."""
    for _ in range(8):
        tmp = target.with_name(_temp_name(target))
        try:
            # dst_dir_fd makes CPython call linkat with AT_SYMLINK_FOLLOW, which
            # links the file /proc/self/fd/N points to rather than the link itself
            os.link(f"/proc/self/fd/{fd}", tmp, dst_dir_fd=dir_fd, follow_symlinks=True)
        except FileExistsError:
            continue
        except OSError:
            return None
        return tmp
    return None


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes, *, shared: bool = False) -> None:
    """Replace ``path`` with ``data`` atomically (parent folders are created).

    A replaced file keeps its permissions. A new file is private (``0600``),
    or, with ``shared=True`` (a file meant to be passed on, such as a report),
    has the mode the user's umask gives any new file (``0666 & ~umask``).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> atomic_write_bytes(folder / "a.txt", b"one")
    >>> (folder / "a.txt").read_bytes(), [p.name for p in folder.iterdir()]
    (b'one', ['a.txt'])
    """
    target = followed(path)
    previous = _replaceable(target)
    parent = target.parent
    parent.mkdir(parents=True, exist_ok=True)
    _remove_stale(target)
    dir_fd = os.open(parent, os.O_RDONLY)
    try:
        _replace(target, data, dir_fd, previous, shared=shared)
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def followed(path: str | os.PathLike[str]) -> Path:
    """``path``, or the file its symbolic link names: a write replaces the file, not the link.

    Every spelling of one file (a link, the file itself) then shares one
    lock and one target, so a judgment written through a link reaches the file.
    A dangling link is refused (:class:`UsageError`): writing through it would
    create a file wherever the link points.
    """
    target = Path(path)
    if not target.is_symlink():
        return target
    real = Path(os.path.realpath(target))
    if not real.exists():
        raise UsageError(
            f"{target}: a symbolic link to {real}, which does not exist; askkit never "
            "creates a file through a link, so nothing is written: give the file itself"
        )
    return real


def _replaceable(target: Path) -> os.stat_result | None:
    """The status of the file a write replaces (``None`` when there is none), or a refusal.

    Only a regular file with one name is replaced: a device, a FIFO or a
    folder is never turned into a file, and a file with several hard links
    is not split from its other names.
    """
    try:
        st = target.stat()
    except FileNotFoundError:
        return None
    except OSError:
        return None  # the write itself reports what is wrong
    if not stat.S_ISREG(st.st_mode):
        kind = "a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise UsageError(f"{target}: {kind}; askkit writes only regular files, and leaves it as is")
    if st.st_nlink > 1:
        raise UsageError(
            f"{target}: has {st.st_nlink} hard links; replacing it would split them, so it is "
            "left as is (write to a new file)"
        )
    return st


def umask() -> int:
    """The process's umask, read without changing it where the system says it
    (``/proc/self/status`` on Linux), else set and restored at once."""
    try:
        with Path("/proc/self/status").open(encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


def _keep_mode(fd: int, previous: os.stat_result | None, *, shared: bool = False) -> None:
    """Give the new file the replaced file's permissions (and its group, where allowed);
    a new shared file the mode the umask gives."""
    if previous is None:
        if shared:
            os.fchmod(fd, 0o666 & ~umask())
        return
    os.fchmod(fd, stat.S_IMODE(previous.st_mode))
    with contextlib.suppress(OSError):
        os.fchown(fd, -1, previous.st_gid)


def _replace(
    target: Path, data: bytes, dir_fd: int, previous: os.stat_result | None, *, shared: bool
) -> None:
    tmp: Path | None = None
    fd = _unnamed(target.parent, data)
    try:
        if fd is not None:
            _keep_mode(fd, previous, shared=shared)
            tmp = _link(fd, target, dir_fd)
        if tmp is None:
            tmp = _named(target, data)
            if previous is not None or shared:
                keep = os.open(tmp, os.O_RDONLY)
                try:
                    _keep_mode(keep, previous, shared=shared)
                finally:
                    os.close(keep)
        tmp.replace(target)
    except BaseException:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
        raise
    finally:
        if fd is not None:
            os.close(fd)


def _named(target: Path, data: bytes) -> Path:
    """A named temporary beside ``target`` holding ``data`` (flushed)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    while True:
        tmp = target.with_name(_temp_name(target))
        try:
            fd = os.open(tmp, flags, _MODE)
        except FileExistsError:
            continue
        break
    try:
        _write_all(fd, data)
    except BaseException:
        os.close(fd)
        tmp.unlink(missing_ok=True)
        raise
    os.close(fd)
    return tmp


def atomic_write_text(
    path: str | os.PathLike[str], text: str, encoding: str = "utf-8", *, shared: bool = False
) -> None:
    """Replace ``path`` with ``text`` atomically (``shared``: see :func:`atomic_write_bytes`)."""
    atomic_write_bytes(path, text.encode(encoding), shared=shared)


def lock_path(path: str | os.PathLike[str]) -> Path:
    """The lock file of ``path``: ``.<name>.lock`` in the same folder.

    >>> lock_path("data/qrels.tsv").as_posix()
    'data/.qrels.tsv.lock'
    """
    target = Path(path)
    return target.with_name(f".{target.name}.lock")


@contextlib.contextmanager
def locked(path: str | os.PathLike[str]) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (through :func:`lock_path`) while the block runs.

    Every process (and thread) that updates ``path`` inside ``locked(path)``
    waits for the one before it, so a re-read, merge and write is never
    interleaved with another. The lock is released when the block ends, or
    by the system when the process dies; the lock file stays.
    """
    lock = lock_path(followed(path))
    lock.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)  # not inherited by children (PEP 446)
    try:
        _acquire(fd)
        try:
            yield
        finally:
            _release(fd)
    finally:
        os.close(fd)


if sys.platform == "win32":  # pragma: no cover - askkit is tested on Linux

    def _acquire(fd: int) -> None:
        while True:
            try:
                msvcrt.locking(fd, msvcrt.LK_LOCK, 1)  # gives up after 10 s: wait on
            except OSError:
                continue
            return

    def _release(fd: int) -> None:
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:

    def _acquire(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX)

    def _release(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)
