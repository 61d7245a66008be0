"""Reports askkit writes for people: their marks, and the one rule for replacing a file.

askkit replaces an existing file with a report only when that file is one of
its own reports, or when the user says so (``--force``, ``force=True``). A
report is recognised by an exact mark at a fixed place at its very start,
never by a phrase found somewhere in it (a README or a CI workflow that
*mentions* ``askkit diff`` is the user's file, not a report):

========  ==============================================================
format    how the file starts
========  ==============================================================
HTML      ``<!doctype html>...<meta charset='utf-8'>`` then askkit's
          ``<meta name="generator" content="askkit VERSION">`` (``askkit report``)
Markdown  the line ``<!-- askkit diff -->`` (``askkit diff --markdown``)
JUnit     the XML declaration, then ``<testsuites name="askkit diff"`` as
          the root element's first attribute (``askkit diff --junit``)
JSON      ``{`` and ``"format": "askkit diff"`` as the first key
          (``askkit diff --json``)
turn log  ``{"format": "askkit run",`` on its first record (``askkit run -o
          FILE.jsonl``)
TREC run  a first line ``QUERY Q0 DOC RANK SCORE askkit``: askkit's run tag
          (``askkit run -o FILE.trec``)
folder    ``askkit-collection.json`` starting ``{"format": "askkit collection"``
          marks a vault ``askkit collection`` wrote (its files are listed there)
========  ==============================================================

Any of these marks makes a file askkit's: ``askkit diff --json out.json``
may replace a Markdown report it wrote there before. Only the first
:data:`HEAD_BYTES` bytes of a regular file are read (a FIFO or a device is
never opened for reading: :func:`askkit._files.open_input`).

:func:`write_report` is the one writer: it refuses a foreign file unless
forced, refuses a dangling symbolic link (:func:`askkit._atomic.followed`),
and writes atomically with the mode the user's umask gives a new file (a
report is meant to be passed on; a replaced file keeps its own mode).

Examples
--------
>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> readme = folder / "README.md"
>>> _ = readme.write_text("# My project\\n\\nRun `askkit diff` in CI.\\n")
>>> is_askkit_output(readme)
False
>>> _ = write_report(folder / "gate.md", MARKDOWN_MARK + "\\n### PASS\\n")
>>> is_askkit_output(folder / "gate.md"), foreign_file(readme) == readme
(True, True)
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from askkit._atomic import atomic_write_text, followed
from askkit._files import open_input
from askkit.errors import SchemaError, UsageError

__all__ = [
    "COLLECTION_FORMAT",
    "HEAD_BYTES",
    "HOLES_HEADER",
    "HTML_START",
    "JSON_FORMAT",
    "JUNIT_ROOT",
    "MARKDOWN_MARK",
    "MARKS",
    "RUN_FORMAT",
    "TREC_TAG",
    "foreign_file",
    "is_askkit_output",
    "write_report",
]

#: What ``askkit diff``'s reports call their format (the JSON's first key's value,
#: the JUnit root's ``name``).
JSON_FORMAT = "askkit diff"
#: The first line of every Markdown report.
MARKDOWN_MARK = f"<!-- {JSON_FORMAT} -->"
#: How every JUnit report starts: the declaration, then the root element and its first attribute.
JUNIT_ROOT = f'<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="{JSON_FORMAT}"'
#: What the first key of each record of a turn log ``askkit run`` writes says.
RUN_FORMAT = "askkit run"
#: The run tag of every line of a TREC run ``askkit run`` writes.
TREC_TAG = "askkit"
#: What the record ``askkit collection`` leaves in a vault it wrote says first.
COLLECTION_FORMAT = "askkit collection"
#: The header line of every holes file ``askkit diff --holes`` writes
#: (:data:`askkit.gate.holes.HOLES_COLUMNS`, in order).
HOLES_HEADER = "query_id\tpath\theading\tdoc\tside\trank\tmeasures\tquestion"
#: How every HTML report starts, before askkit's generator tag.
HTML_START = "<!doctype html><html lang='en'><head><meta charset='utf-8'>"

#: Each format's mark, matched at the first byte of a file.
MARKS: dict[str, re.Pattern[bytes]] = {
    "html": re.compile(
        re.escape(HTML_START).encode() + rb'<meta name="generator" content="askkit [^"<>\n]{1,64}">'
    ),
    "markdown": re.compile(re.escape(MARKDOWN_MARK).encode() + rb"\r?\n"),
    "junit": re.compile(re.escape(JUNIT_ROOT).encode() + rb"[ >]"),
    "json": re.compile(rb'\{\s*"format": "' + re.escape(JSON_FORMAT).encode() + rb'"\s*[,}]'),
    "run": re.compile(rb'\{"format": "' + re.escape(RUN_FORMAT).encode() + rb'"\s*,'),
    "trec": re.compile(rb"[^\s#]\S* Q0 \S+ -?\d+ \S+ " + re.escape(TREC_TAG).encode() + rb"\r?\n"),
    "collection": re.compile(
        rb'\{\s*"format": "' + re.escape(COLLECTION_FORMAT).encode() + rb'"\s*[,}]'
    ),
    "holes": re.compile(re.escape(HOLES_HEADER).encode() + rb"[\t\r\n]"),
}
#: The bytes of an existing file read to look for a mark.
HEAD_BYTES = 4096


def is_askkit_output(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a regular file starting with one of askkit's report marks."""
    try:
        with open_input(path, what="report") as handle:
            head = handle.read(HEAD_BYTES)
    except (SchemaError, OSError):
        return False
    return any(mark.match(head) for mark in MARKS.values())


def foreign_file(path: str | os.PathLike[str]) -> Path | None:
    """The regular file a report written to ``path`` would replace, when askkit did not
    write it (``None``: nothing there, or one of askkit's reports).

    A link is followed, as the writer follows it. What is not a regular file
    (a folder, a FIFO, a device) is left to the writer, which refuses it.
    """
    target = followed(path)
    try:
        mode = target.stat().st_mode
    except OSError:  # nothing there, or out of reach: the write says what is wrong
        return None
    if not stat.S_ISREG(mode) or is_askkit_output(target):
        return None
    return target


def write_report(
    path: str | os.PathLike[str], text: str, *, force: bool = False, fix: str = ""
) -> Path:
    """Write the report ``text`` to ``path`` atomically; return the path.

    An existing file is replaced only when it is one of askkit's reports
    (:func:`is_askkit_output`) or ``force`` is true; a folder, a FIFO, a device,
    a file with several hard links or a dangling link never is. ``fix`` ends
    the refusal's message (how to force it from where the call came).

    Raises
    ------
    UsageError
        ``path`` is a file askkit did not write (and ``force`` is false), or
        cannot be written as a regular file.
    """
    foreign = None if force else foreign_file(path)
    if foreign is not None:
        raise UsageError(
            f"{foreign}: exists and is not an askkit report; askkit replaces only the "
            f"reports it wrote, so it is left as is: {fix or 'write to another file'}"
        )
    atomic_write_text(path, text, shared=True)  # to be passed on: the umask's mode
    return Path(path)
