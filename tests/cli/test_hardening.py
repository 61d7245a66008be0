"""The command line's hardening: no traceback, one line on stderr, no terminal control from data."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import askkit.cli
from askkit.cli import _terminal, main
from askkit.cli.errors import TRACEBACK_ENV
from tests.conftest import DATA, ROOT

#: What may not reach a terminal from data: C0 but tab and newline, DEL, C1, lone surrogates.
UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def one_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """Run ``askkit ARGV`` in this process; it must fail with exactly one line on stderr."""
    assert main(argv) == 2, argv
    err = capsys.readouterr().err
    assert err.startswith("askkit: error: "), (argv, err)
    assert err.count("\n") == 1, (argv, err)
    assert "Traceback" not in err, (argv, err)
    return err


def test_cli_tracebacks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hardening item 12: bad arguments and bad files are one line on stderr, exit 2.

    A bad value is refused when the arguments are parsed, before any work;
    what gets past that is caught by ``main``, which names an exception it
    does not expect (and lets it through, traceback and all, on request).
    """
    monkeypatch.setenv("COLUMNS", "60")  # a long message stays one line
    monkeypatch.setenv("ASKKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv(TRACEBACK_ENV, raising=False)
    run, log = str(DATA / "run.jsonl"), str(DATA / "turns.jsonl")
    a_file = tmp_path / "notes.txt"
    a_file.write_text("keep me\n", encoding="utf-8")
    closed = "http://127.0.0.1:9"  # the discard port: nothing listens there

    err = one_error(capsys, ["report", log, "-o", str(tmp_path)])
    assert "-o must be a file to write, got the folder" in err
    err = one_error(capsys, ["report", log, "-o", "/proc/x.html"])
    assert "-o must be a file askkit can write" in err
    assert "/proc" in err
    err = one_error(capsys, ["report", log, "-o", str(a_file / "r.html")])
    assert "is a file" in err
    err = one_error(capsys, ["report", run, "--max-queries", "-1"])
    assert "--max-queries must be at least 0 (a whole number), got -1" in err
    for value in ("nan", "inf", "-inf"):
        argv = ["search", "q", "--server", closed, "--vault-id", "v", f"--timeout={value}"]
        err = one_error(capsys, argv)
        assert f"--timeout must be more than 0 seconds (a finite number), got {value}" in err
    err = one_error(capsys, ["lab", "--ip", "999.1.1.1", "--dry-run"])
    assert "--ip must be an IP address" in err
    err = one_error(capsys, ["lab", "--ip", "8.8.8.8", "--dry-run"])
    assert "--ip must be an address of this machine, got '8.8.8.8'" in err
    err = one_error(capsys, ["index", str(DATA / "vault"), "--cache-dir", str(a_file)])
    assert "--cache-dir must be a folder, got the file" in err
    assert a_file.read_text(encoding="utf-8") == "keep me\n"  # untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]  # nothing written

    # bad input files: too deep, not UTF-8, a number too large, a lone surrogate
    bad = {
        "deep.json": b"[" * 100_000 + b"]" * 100_000,
        "latin1.json": b'{"answer": "caf\xe9", "sources": []}',
        "huge.json": b'[{"path": "a.md", "title": "t", "content": "c", "hash": "h", '
        b'"similarity_score": 1' + b"0" * 400 + b', "ordinal": 1}]',
        "digits.json": b'{"answer": "x", "sources": [], "n": 1' + b"0" * 5000 + b"}",
        "surrogate.json": b'{"answer": "\\ud800 [1]", "sources": [{"path": "a\\udc80.md", '
        b'"title": "t", "content": "c", "hash": "h", "similarity_score": 1, "ordinal": 1}]}',
    }
    for name, data in bad.items():
        path = tmp_path / name
        path.write_bytes(data)
        for command in (["sources"], ["prompt"], ["report", "-o", str(tmp_path / "r.html")]):
            one_error(capsys, [*command, str(path)])
        path.unlink()

    # argparse's own errors are one line too; --help is untouched
    err = one_error(capsys, ["eval", str(DATA / "qrels.tsv")])
    assert "the following arguments are required: run (see askkit eval --help)" in err
    one_error(capsys, ["no-such-command"])
    with pytest.raises(SystemExit) as exit_:
        main(["eval", "--help"])
    assert exit_.value.code == 0
    usage = capsys.readouterr().out
    assert usage.startswith("usage: askkit eval")
    assert "--relevance-level" in usage
    assert usage.count("\n") > 10

    # an exception askkit does not expect: named in one line, its traceback on request
    def broken(*_: object) -> int:
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(askkit.cli, "_cmd_sources", broken)
    err = one_error(capsys, ["sources", str(DATA / "answer_job.json")])
    assert err.startswith("askkit: error: unexpected ZeroDivisionError: boom (")
    assert f"{TRACEBACK_ENV}=1" in err
    monkeypatch.setenv(TRACEBACK_ENV, "1")
    with pytest.raises(ZeroDivisionError, match="boom"):
        main(["sources", str(DATA / "answer_job.json")])
    # an OSError names its file
    monkeypatch.delenv(TRACEBACK_ENV)

    def unwritable(*_: object) -> int:
        raise PermissionError(13, "Permission denied", "/some/file.html")

    monkeypatch.setattr(askkit.cli, "_cmd_sources", unwritable)
    err = one_error(capsys, ["sources", str(DATA / "answer_job.json")])
    assert err == "askkit: error: /some/file.html: Permission denied\n"


HOSTILE = (
    "\x1b]0;retitled\x07"  # OSC: retitle the window (rich drops the BEL: its text stays)
    "\x1b[2J\x1b[H"  # CSI: clear the screen
    "\x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\"  # OSC 8: a forged link
    "\x1bP1$qm\x1b\\"  # DCS: a terminal query
    "\x9b31m\x9d2;owned\x9c"  # C1 CSI and OSC
    "\x1bc\x00\x08\x7f\x85"  # reset, NUL, backspace, DEL, NEL
)


def hostile_payload() -> dict[str, object]:
    return {
        "question": "why" + HOSTILE,
        "answer": "because" + HOSTILE + " [1]",
        "sources": [
            {
                "path": "notes/a\x1b[2J\x9b1m.md",
                "title": "Head" + HOSTILE + "\x1fSub",
                "date": None,
                "content": "text" + HOSTILE,
                "hash": "h",
                "similarity_score": 0.5,
                "ordinal": 1,
            }
        ],
    }


def test_control_sequences_in_payload_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hardening item 13: payload text never reaches the terminal with its control sequences.

    Titles, texts, paths, answers and error messages pass through one helper,
    ``askkit.cli._terminal.clean``; ``--json`` escapes instead, and reads back.
    """
    payload = tmp_path / "hostile.json"
    payload.write_text(json.dumps(hostile_payload()), encoding="utf-8")
    env = {**os.environ, "COLUMNS": "200"}
    for command in ("sources", "prompt"):
        out = subprocess.run(
            [sys.executable, "-m", "askkit.cli", command, str(payload)],
            check=False,
            capture_output=True,
            text=True,
            cwd=ROOT,
            env=env,
        )
        assert out.returncode == 0, out.stderr
        assert not UNSAFE.findall(out.stdout), (command, out.stdout)
        assert "owned" not in out.stdout
        assert "evil.example" not in out.stdout
        assert "link" in out.stdout  # the text around the sequences stays
        assert "Head" in out.stdout
        if command == "sources":
            assert "because" in out.stdout
            assert "why" in out.stdout

    # on a real terminal rich adds its styles (SGR only), the payload's sequences are gone
    sink = io.StringIO()
    console = _terminal.console(file=sink, force_terminal=True, width=200)
    from askkit.cli._console import print_turn
    from askkit.payloads import read_turn

    print_turn(console, read_turn(payload))
    shown = sink.getvalue()
    assert re.findall(r"\x1b\[[0-9;]*m", shown)  # rich's own colours survive
    assert not UNSAFE.findall(re.sub(r"\x1b\[[0-9;]*m", "", shown))
    assert "owned" not in shown

    # an error message that quotes a path (or a server's text) is cleaned too
    missing = tmp_path / ("gone" + HOSTILE.replace("\x00", "") + ".json")  # no NUL in a path
    monkeypatch.setenv("COLUMNS", "200")
    err = one_error(capsys, ["sources", str(missing)])
    assert not UNSAFE.findall(err), err
    assert "owned" not in err
    assert "retitled" not in err  # cleaned before rich sees it: the whole OSC goes
    assert "gone" in err

    # a vault note's title, in a table and as --json (escaped, read back unchanged)
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "bread.md").write_text(f"# Bread{HOSTILE}\n\nrye starter\n", encoding="utf-8")
    argv = ["search", "rye", "--vault", str(vault), "--cache-dir", str(tmp_path / "c")]
    assert main(argv) == 0
    table = capsys.readouterr().out
    assert "Bread" in table
    assert not UNSAFE.findall(table), table
    assert main([*argv, "--json"]) == 0
    text = capsys.readouterr().out
    assert not UNSAFE.findall(text), text
    chunk = json.loads(text)["chunks"][0]
    assert chunk["title"].startswith("Bread\x1b]0;retitled\x07")  # the data, unchanged
    assert json.loads(_terminal.json_text({"s": HOSTILE + "\ud800"})) == {"s": HOSTILE + "\ud800"}

    # a warning raised during a command (a note skipped, a cache rebuilt) is one clean line
    def warns(*_: object) -> int:
        warnings.warn(f"not indexing notes/b{HOSTILE}.md: not UTF-8", UserWarning, stacklevel=1)
        return 0

    monkeypatch.setattr(askkit.cli, "_cmd_sources", warns)
    assert main(["sources", str(payload)]) == 0
    err = capsys.readouterr().err
    assert err.startswith("askkit: warning: not indexing notes/b")
    assert err.count("\n") == 1, err
    assert not UNSAFE.findall(err), err


def test_a_closed_output_pipe_exits_2_quietly() -> None:
    """Hardening item 12: ``askkit sources x | head -c1`` exited 1 through rich; now 2."""
    data = Path(__file__).resolve().parents[2] / "data" / "answer_job.json"
    reader = subprocess.Popen(["head", "-c1"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    assert reader.stdin is not None
    out = subprocess.run(
        [sys.executable, "-m", "askkit.cli", "sources", str(data)],
        stdout=reader.stdin,
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
        check=False,
    )
    reader.stdin.close()
    reader.wait(timeout=10)
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
