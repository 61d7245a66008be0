"""askkit._outputs: a report is askkit's by an exact mark at its start, never by a phrase."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from askkit._outputs import (
    HTML_START,
    JUNIT_ROOT,
    MARKDOWN_MARK,
    foreign_file,
    is_askkit_output,
    write_report,
)
from askkit.errors import UsageError
from tests.conftest import ROOT

#: One report of each format, as askkit starts them.
OURS = {
    "html": HTML_START + '<meta name="generator" content="askkit 0.1.0"><title>x</title>',
    "markdown": MARKDOWN_MARK + "\n### ✅ PASS\n",
    "junit": JUNIT_ROOT + ' tests="1">\n</testsuites>\n',
    "json": '{\n  "format": "askkit diff",\n  "passed": true\n}\n',
    "json, one line": '{"format": "askkit diff", "passed": true}\n',
}

#: Files that mention askkit's reports, or hold a mark elsewhere than at the start.
THEIRS = {
    "the gate's guide": (ROOT / "docs" / "gate.md").read_text(encoding="utf-8"),
    "a README": "# Project\n\nThe CI runs `askkit diff` and writes <!-- askkit diff -->.\n",
    "a workflow": "on: push\njobs:\n  gate:\n    steps:\n      - run: askkit diff a b\n",
    "markdown, mark on line 2": "\n" + OURS["markdown"],
    "markdown, mark not alone": "<!-- askkit diff --> my notes\n",
    "json, format second": '{"passed": true, "format": "askkit diff"}\n',
    "json, another format": '{"format": "askkit diffs"}\n',
    "junit, name second": '<?xml version="1.0" encoding="UTF-8"?>\n<testsuites tests="1" '
    'name="askkit diff"></testsuites>\n',
    "html, no generator": HTML_START + "<title>askkit report</title>",
    "html, generator later": "<!doctype html>" + OURS["html"],
}


@pytest.mark.parametrize("name", OURS)
def test_hardening_39_1_each_format_is_recognised_by_its_mark(tmp_path: Path, name: str) -> None:
    path = tmp_path / "report"
    path.write_text(OURS[name], encoding="utf-8")
    assert is_askkit_output(path)
    assert foreign_file(path) is None


@pytest.mark.parametrize("name", THEIRS)
def test_hardening_39_1_a_mention_or_a_misplaced_mark_is_no_mark(tmp_path: Path, name: str) -> None:
    path = tmp_path / "file"
    path.write_text(THEIRS[name], encoding="utf-8")
    assert not is_askkit_output(path)
    assert foreign_file(path) == path
    with pytest.raises(UsageError, match="exists and is not an askkit report"):
        write_report(path, OURS["markdown"])
    assert path.read_text(encoding="utf-8") == THEIRS[name]


def test_write_report_replaces_a_report_keeps_its_mode_and_forces_only_when_asked(
    tmp_path: Path,
) -> None:
    path = tmp_path / "r.md"
    old = os.umask(0o027)
    try:
        write_report(path, OURS["markdown"])
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640  # the umask's mode: a report is shared
    path.chmod(0o600)
    write_report(path, OURS["json"])
    assert path.read_text() == OURS["json"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # a replaced file keeps its own
    theirs = tmp_path / "notes.txt"
    theirs.write_text("mine")
    write_report(theirs, OURS["markdown"], force=True)
    assert theirs.read_text() == OURS["markdown"]


def test_a_fifo_is_never_read_for_a_mark(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert not is_askkit_output(fifo)  # returns at once: opened without blocking, not read
    assert foreign_file(fifo) is None  # left to the writer, which refuses it
