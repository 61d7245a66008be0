"""How an ``askkit`` command ends: one line on stderr and exit status 2, never a traceback.

Every error is one line on stderr, ``askkit: error: ...``, and exit status 2:
:func:`run` catches what gets past the argument checks
(:mod:`askkit.cli.arguments`). An exception askkit does not expect is named in
that line (``unexpected RecursionError: ...``); ``ASKKIT_TRACEBACK=1`` lets it
through with its traceback. A warning is one line too (``askkit: warning:
...``), and text from payloads, vaults and servers reaches the terminal
without its control sequences (:mod:`askkit.cli._terminal`).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import TextIO

from rich.text import Text

from askkit.cli import _terminal
from askkit.errors import AskkitError

__all__ = ["TRACEBACK_ENV", "error_line", "run"]

#: Set this environment variable to ``1`` to see the traceback of an exception
#: askkit does not expect, instead of its one-line summary.
TRACEBACK_ENV = "ASKKIT_TRACEBACK"


def _os_error(exc: OSError) -> str:
    """``file: reason`` for an :class:`OSError` that names its file, else the reason."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    if exc.filename is None:
        return reason
    where = _name(exc.filename)
    if exc.filename2 is not None:
        where += f" -> {_name(exc.filename2)}"
    return f"{where}: {reason}"


def _name(filename: object) -> str:
    """A file name as an :class:`OSError` holds it (str, bytes, a path, a descriptor)."""
    return os.fsdecode(filename) if isinstance(filename, bytes) else str(filename)


def error_line(exc: Exception) -> str:
    """The one line printed for ``exc``, cleaned of control characters.

    Examples
    --------
    >>> from askkit.errors import UsageError
    >>> error_line(UsageError("-k must be at least 1 (a whole number), got 0"))
    'askkit: error: -k must be at least 1 (a whole number), got 0'
    >>> error_line(PermissionError(13, "Permission denied", "/srv/report.html"))
    'askkit: error: /srv/report.html: Permission denied'
    >>> error_line(KeyError("sources"))  # doctest: +ELLIPSIS
    "askkit: error: unexpected KeyError: 'sources' (askkit's own bug, ...ASKKIT_TRACEBACK=1 ...)"
    """
    if isinstance(exc, AskkitError):
        text = str(exc) or type(exc).__name__
    elif isinstance(exc, OSError):
        text = _os_error(exc)
    else:  # a bug: say what it was, without the traceback
        text = (
            f"unexpected {type(exc).__name__}: {exc} "
            f"(askkit's own bug, please report it; {TRACEBACK_ENV}=1 shows the traceback)"
        )
    return "askkit: error: " + _terminal.one_line(text)


def _say(line: str) -> None:
    """Print one line on stderr, however narrow the terminal."""
    with contextlib.suppress(OSError):  # stderr is gone too: nothing more to do
        _terminal.console(stderr=True, soft_wrap=True).print(Text(line, style="red"))


def _show_warning(  # noqa: PLR0917 - warnings.showwarning's signature
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """A warning, as one cleaned line on stderr (not Python's two, with a source line)."""
    with contextlib.suppress(OSError):
        _terminal.console(stderr=True, soft_wrap=True).print(
            Text("askkit: warning: " + _terminal.one_line(str(message)), style="yellow")
        )


def _quiet_stdout() -> None:
    """After a broken pipe: send what is left of stdout nowhere (no second error at exit)."""
    with contextlib.suppress(OSError, ValueError):  # stdout may not be a file (tests)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def run(build: Callable[[], argparse.ArgumentParser], argv: Sequence[str] | None) -> int:
    """Parse ``argv`` with the parser ``build`` makes, run its command; the exit status.

    The command is the parsed ``func``, called with the arguments and a
    terminal-safe console; a warning it raises is one line on stderr
    (``askkit: warning: ...``). Any error prints :func:`error_line` on stderr and
    returns 2; Ctrl-C prints ``askkit: interrupted`` and returns 130; a closed
    stdout (``askkit sources x | head -1``) ends quietly with 2.
    """
    try:
        with warnings.catch_warnings():  # restores Python's printer after the command
            warnings.showwarning = _show_warning
            args = build().parse_args(argv)
            return int(args.func(args, _terminal.console()))
    except KeyboardInterrupt:
        _say("askkit: interrupted")
        return 130
    except BrokenPipeError:  # the reader stopped reading: nothing left to say
        _quiet_stdout()
        return 2
    except Exception as exc:
        expected = isinstance(exc, AskkitError | OSError)
        if not expected and os.environ.get(TRACEBACK_ENV, "") not in ("", "0"):
            raise
        _say(error_line(exc))
        return 2
