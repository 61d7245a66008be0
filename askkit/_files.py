"""Opening a file a user names as input: the one rule every reader follows.

A judgments file, a run, a turn log, a payload, a queries file or a
``server.toml`` must be a regular file. A FIFO would block the reader until
something writes to it, ``/dev/zero`` would be read until memory runs out,
``/dev/null`` would read as an empty file and give numbers computed on
nothing. So :func:`open_input` opens without blocking (``O_NONBLOCK``, which
a FIFO honours and a regular file ignores), checks what the descriptor is
with ``fstat`` (so no swap between a check and the open can slip another file
in) and refuses anything but a regular file with a :class:`SchemaError`
naming the file and what it is. Links are followed: a link to a regular file
is that file.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> (folder / "q.tsv").write_text("query_id\\tquestion\\n")
18
>>> read_input(folder / "q.tsv", what="queries")
b'query_id\\tquestion\\n'
>>> try:
...     read_input("/dev/null", what="qrels")
... except SchemaError as exc:
...     print(exc.message)
the qrels file is a character device, not a regular file; give a file
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from askkit.errors import SchemaError

__all__ = ["describe_mode", "input_error", "open_input", "read_input"]

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def describe_mode(mode: int) -> str:
    """What a file of this ``st_mode`` is, in words (``"a regular file"``, ``"a FIFO
    (named pipe)"``, ...).

    >>> describe_mode(stat.S_IFIFO)
    'a FIFO (named pipe)'
    """
    if stat.S_ISREG(mode):
        return "a regular file"
    return next((name for test, name in _KINDS if test(mode)), "a special file")


def input_error(path: str | os.PathLike[str], what: str, exc: OSError) -> SchemaError:
    """The error for an input that cannot be opened or read (``exc``), naming the file."""
    reason = {
        errno.ENOENT: "no such file",
        errno.EACCES: "permission denied",
        errno.ENOTDIR: "a path component is not a folder",
        errno.EISDIR: "a folder",
        errno.ELOOP: "too many levels of symbolic links",
    }.get(exc.errno or 0, exc.strerror or str(exc))
    return SchemaError(f"cannot read the {what} file: {reason}", file=str(path), has_value=False)


def _not_regular(path: str | os.PathLike[str], what: str, mode: int) -> SchemaError:
    return SchemaError(
        f"the {what} file is {describe_mode(mode)}, not a regular file; give a file",
        file=str(path),
        has_value=False,
    )


@contextlib.contextmanager
def open_input(path: str | os.PathLike[str], *, what: str) -> Iterator[BinaryIO]:
    """The regular file ``path``, open for binary reading; anything else raises.

    ``what`` names the input in the error (``"qrels"``, ``"run"``, ``"turn log"``).
    A missing or unreadable file, a folder, a FIFO, a socket or a device raises
    :class:`SchemaError` naming the file, never blocks and reads nothing.
    """
    try:
        fd = os.open(os.fspath(path), os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a socket cannot be opened: say what it is
            with contextlib.suppress(OSError):
                raise _not_regular(path, what, Path(path).stat().st_mode) from None
        raise input_error(path, what, exc) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise _not_regular(path, what, mode)
        os.set_blocking(fd, True)
        handle = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with handle:
        yield handle


def read_input(path: str | os.PathLike[str], *, what: str, limit: int | None = None) -> bytes:
    """The bytes of the regular file ``path`` (see :func:`open_input`).

    ``limit``: the most bytes accepted; a larger file raises :class:`SchemaError`
    before it is read whole.
    """
    with open_input(path, what=what) as handle:
        try:
            if limit is not None:
                size = os.fstat(handle.fileno()).st_size
                if size > limit:
                    raise SchemaError(
                        f"the {what} file has {size} bytes, over the {limit}-byte limit",
                        file=str(path),
                        has_value=False,
                    )
                data = handle.read(limit + 1)
                if len(data) > limit:
                    raise SchemaError(
                        f"the {what} file is over the {limit}-byte limit",
                        file=str(path),
                        has_value=False,
                    )
                return data
            return handle.read()
        except OSError as exc:
            raise input_error(path, what, exc) from None
