"""The command line, run as a user runs it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from askkit.cli import main
from tests.conftest import DATA, ROOT


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "askkit.cli", *args],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"COLUMNS": "200", "PATH": ""},
    )


def test_version_says_whether_the_kernels_are_built() -> None:
    out = run("--version")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("askkit 0.1.0 (compiled kernels built)")


def test_version_without_the_kernels(monkeypatch: pytest.MonkeyPatch) -> None:
    from askkit.cli import version_text
    from askkit.frame import kernels as _compiled

    monkeypatch.setattr(_compiled, "_built", None)
    assert "not built" in version_text()
    assert "pyarrow.compute" in version_text()


def test_sources_prints_the_table() -> None:
    out = run("sources", str(DATA / "answer_job.json"))
    assert out.returncode == 0, out.stderr
    assert "cited with no source: [7]" in out.stdout
    assert "2026-04-08 · Afternoon" in out.stdout
    assert "projects/sourdough.md" in out.stdout
    # the table lists the sources by [n], as the answer cites them (the payload: 4, 1, 6, 2, 3)
    table = out.stdout[out.stdout.index("sources, by [n]") :]
    rows = re.findall(r"^│ \[(\d+)\] │", table, flags=re.M)
    assert rows == ["1", "2", "3", "4", "6"]


def test_sources_of_an_embeddings_response() -> None:
    out = run("sources", str(DATA / "embeddings_old_server.json"))
    assert out.returncode == 0, out.stderr
    assert "Sourdough › Starter › Feeding schedule" in out.stdout


def test_prompt_command() -> None:
    out = run("prompt", str(DATA / "sample_turn.json"))
    assert out.returncode == 0, out.stderr
    assert '[1] projects/sourdough.md — "Sourdough › Starter › Feeding schedule"' in out.stdout
    assert "Date: 2026-04-12" in out.stdout


def test_missing_file_is_one_clear_line(tmp_path: Path) -> None:
    out = run("sources", str(tmp_path / "nope.json"))
    assert out.returncode == 2
    assert "nope.json" in out.stderr
    assert "cannot read the payload file: no such file" in out.stderr


def test_bad_payload_names_file_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"answer": "x", "sources": [{"path": 1}]}')
    assert main(["sources", str(bad)]) == 2
    out = run("sources", str(bad))
    assert "bad.json" in out.stderr
    assert "sources[0].path" in out.stderr


def test_job_that_failed(tmp_path: Path) -> None:
    bad = tmp_path / "job.json"
    bad.write_text('{"job_id": "1", "status": "failed", "result": null, "error": "LLM down"}')
    out = run("sources", str(bad))
    assert out.returncode == 2
    assert "LLM down" in out.stderr


def test_a_long_error_stays_one_line_on_stderr(tmp_path: Path) -> None:
    missing = tmp_path / ("a-very-long-folder-name-" * 8) / "answer.json"
    out = subprocess.run(
        [sys.executable, "-m", "askkit.cli", "sources", str(missing)],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "COLUMNS": "40"},
    )
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert "Traceback" not in out.stderr
