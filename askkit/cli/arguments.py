"""What an ``askkit`` argument may be, checked when the arguments are parsed.

A bad argument is refused before any work: each value check here is an
argparse ``type=`` (``--max-queries -1``, ``--timeout nan``, ``--ip
8.8.8.8``, ``-o`` a folder or a FIFO, ``--cache-dir`` a file), and
:class:`Parser` raises argparse's own errors as one-line
:class:`~askkit.errors.UsageError`. An input file goes through askkit's one
input rule (:func:`askkit._files.open_input`: a FIFO, a device or a folder is
refused, never read) first thing in its command, with :func:`check_input`.

``--help`` is argparse's, unchanged.
"""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
import math
import os
import re
import socket
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

from askkit._files import describe_mode, open_input
from askkit.errors import SchemaError, UsageError

__all__ = [
    "Parser",
    "cache_folder",
    "check_input",
    "client_setting",
    "fraction",
    "listen_address",
    "output_file",
    "store_location",
    "whole_number",
]

_ARGUMENT = re.compile(r"argument (\S+): (.*)", re.DOTALL)


class Parser(argparse.ArgumentParser):
    """An :class:`argparse.ArgumentParser` whose errors are one line, raised, not printed.

    ``error`` raises :class:`~askkit.errors.UsageError`: a value check's
    message as is, any other with where to read the usage. The subcommand
    parsers it makes are of this class too.

    Examples
    --------
    >>> parser = Parser(prog="askkit")
    >>> _ = parser.add_argument("-k", type=whole_number(1))
    >>> parser.parse_args(["-k", "0"])
    Traceback (most recent call last):
    ...
    askkit.errors.UsageError: -k must be at least 1 (a whole number), got 0
    >>> parser.parse_args(["--nope"])
    Traceback (most recent call last):
    ...
    askkit.errors.UsageError: unrecognized arguments: --nope (see askkit --help)
    """

    def error(self, message: str) -> NoReturn:
        match = _ARGUMENT.fullmatch(message)
        if match and match.group(2).startswith("must "):  # a value check of this module
            # "argument -M/--max-docs: must be ..." -> "-M must be ..."
            raise UsageError(f"{match.group(1).split('/')[0]} {match.group(2)}")
        if match:
            message = f"{match.group(1).split('/')[0]}: {match.group(2)}"
        raise UsageError(f"{message} (see {self.prog} --help)")


def _number(text: str, kind: Callable[[str], float | int], what: str) -> float | int:
    try:
        return kind(text.strip())
    except (ValueError, OverflowError):
        raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}") from None


def whole_number(least: int | None = None, most: int | None = None) -> Callable[[str], int]:
    """A whole number in ``least..most`` (either end may be open): counts, ports, digits."""
    if least is not None and most is not None:
        what = f"a whole number in {least}..{most}"
    elif least is not None:
        what = f"at least {least} (a whole number)"
    elif most is not None:  # pragma: no cover - no option has only an upper bound
        what = f"a whole number <= {most}"
    else:
        what = "a whole number"

    def check(text: str) -> int:
        value = int(_number(text, int, what))
        if (least is not None and value < least) or (most is not None and value > most):
            raise argparse.ArgumentTypeError(f"must be {what}, got {value}")
        return value

    check.__name__ = "whole_number"
    return check


def fraction(text: str) -> float:
    """A finite number in 0..1 (``--min-recall``)."""
    what = "a number in 0..1"
    value = float(_number(text, float, what))
    if not (math.isfinite(value) and 0.0 <= value <= 1.0):
        raise argparse.ArgumentTypeError(f"must be {what}, got {value}")
    return value


def client_setting(name: str, kind: Callable[[str], float | int]) -> Callable[[str], float | int]:
    """A value of the :class:`~askkit.retrieve.ClientSettings` field ``name``,
    checked by that class (seconds finite and positive, counts at least 1)."""
    from askkit.retrieve import ClientSettings

    what = "a whole number" if kind is int else "a number"

    def check(text: str) -> float | int:
        value = _number(text, kind, what)
        try:
            ClientSettings(**{name: value})  # type: ignore[arg-type]
        except SchemaError as exc:
            raise argparse.ArgumentTypeError(f"{exc.message}, got {value!r}") from None
        return value

    check.__name__ = name
    return check


def listen_address(text: str) -> str:
    """An IP address of this machine (one a server here can listen on), or ``localhost``."""
    if text == "localhost":
        return text
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be an IP address such as 127.0.0.1, got {text!r}"
        ) from None
    family = socket.AF_INET6 if address.version == 6 else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.bind((str(address), 0))
    except OSError as exc:
        raise argparse.ArgumentTypeError(
            f"must be an address of this machine, got {text!r} ({exc.strerror})"
        ) from None
    return str(address)


def _nearest_existing(path: Path) -> Path:
    for folder in path.parents:
        if folder.exists():
            return folder
    return Path.cwd()  # pragma: no cover - a relative path's parents end at "."


def output_file(text: str) -> str:
    """A file askkit can write: not a folder, in a folder it can create files in.

    Missing parent folders are fine (the report's writer creates them); the
    nearest existing one must be a folder that accepts a new file, which is
    tried with an unnamed temporary file, so nothing is left behind.
    """
    path = Path(text).expanduser()
    if not text.strip():
        raise argparse.ArgumentTypeError("must be a file name, got ''")
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"must be a file to write, got the folder {text!r}")
    if path.is_symlink() and not path.exists():
        raise argparse.ArgumentTypeError(
            f"must be a file, got {text!r}, a symbolic link to "
            f"{str(path.readlink())!r}, which does not exist (askkit never creates a file "
            "through a link)"
        )
    folder = _nearest_existing(path)
    if not folder.is_dir():
        raise argparse.ArgumentTypeError(
            f"must be a file in a folder, got {text!r} ({folder} is a file)"
        )
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise argparse.ArgumentTypeError(
            f"must be a file askkit can write, got {text!r} "
            f"(cannot create a file in {folder}: {exc.strerror})"
        ) from None
    with contextlib.suppress(OSError):  # a missing file is written; a FIFO or device never is
        mode = path.stat().st_mode
        if not stat.S_ISREG(mode):
            raise argparse.ArgumentTypeError(
                f"must be a regular file to write, got {text!r} ({describe_mode(mode)})"
            )
    if path.exists() and not os.access(path, os.W_OK):
        raise argparse.ArgumentTypeError(
            f"must be a file askkit can write, got {text!r} (permission denied)"
        )
    return text


def check_input(path: str, *, what: str, option: str = "") -> None:
    """Refuse an input file askkit's one input rule refuses, before the command's work.

    ``what`` names the input as the readers do (``"qrels"``, ``"turn log"``);
    ``option`` (``"--qrels"``) leads the message. The file is opened without
    blocking and closed unread; the reader applies the same rule again.

    >>> check_input("/dev/null", what="qrels", option="--qrels")
    Traceback (most recent call last):
    ...
    askkit.errors.UsageError: --qrels /dev/null: the qrels file is a character device, not a regular file; give a file
    """  # noqa: E501 - a doctest's output is one line
    try:
        with open_input(path, what=what):
            pass
    except SchemaError as exc:
        raise UsageError(f"{option} {exc}" if option else str(exc)) from None


def cache_folder(text: str) -> str:
    """A cache folder: anything but an existing file.

    Whether an existing folder is askkit's is
    :class:`~askkit.retrieve.local.LocalIndex`'s to decide.
    """
    path = Path(text).expanduser()
    if not text.strip():
        raise argparse.ArgumentTypeError("must be a folder, got ''")
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"must be a folder, got the file {text!r}")
    return text


def store_location(text: str) -> str:
    """A vector store that exists: a folder (kimun's ``[vector_db] path``) or its ``embeddings.db``.

    Whether it is a store, and kimun's, is :class:`~askkit.dense.KimunStore`'s to decide.
    """
    if not text.strip():
        raise argparse.ArgumentTypeError("must be a store folder, got ''")
    if not Path(text).expanduser().exists():
        raise argparse.ArgumentTypeError(
            "must be a store folder (kimun's [vector_db] path) or its embeddings.db, "
            f"got {text!r}, which does not exist"
        )
    return text
