"""``askkit report``: the command writes the report of askkit.report."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import DATA, ROOT
from tests.test_report import relabel, write_run_log


@pytest.fixture(scope="module")
def run_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_run_log(tmp_path_factory.mktemp("cli-report") / "run.jsonl")


def test_cli_writes_the_report(run_log: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "askkit.cli",
            "report",
            str(run_log),
            "--qrels",
            str(DATA / "qrels.tsv"),
            "--vault",
            str(DATA / "vault"),
            "-o",
            str(out),
        ],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert proc.returncode == 0, proc.stderr
    assert f"wrote {out}" in proc.stdout
    assert out.read_text(encoding="utf-8").count("<details>") >= 37


def test_cli_missing_log_is_one_line(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "askkit.cli", "report", str(tmp_path / "nope.jsonl")],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 2
    assert "nope.jsonl" in proc.stderr


def test_cli_passes_the_context_cut_options(run_log: Path, tmp_path: Path) -> None:
    from askkit.cli import main
    from askkit.frame import sources_frame
    from askkit.report import sweep_context_cut

    out = tmp_path / "r.html"
    argv = ["report", str(run_log), "--qrels", str(DATA / "qrels.tsv"), "-o", str(out)]
    assert main([*argv, "--objective", "precision", "--min-recall", "0.6"]) == 0
    cut = sweep_context_cut(
        sources_frame(run_log), DATA / "qrels.tsv", objective="precision", min_recall=0.6
    )
    assert cut.recommended is not None
    page = out.read_text(encoding="utf-8")
    assert cut.recommended.to_toml().replace('"', "&quot;") in page


@pytest.mark.parametrize("value", ["nan", "2", "-1"])
def test_cli_refuses_a_bad_min_recall(
    run_log: Path, value: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from askkit.cli import main

    monkeypatch.setenv("COLUMNS", "1000")
    assert main(["report", str(run_log), "--min-recall", value]) == 2
    err = capsys.readouterr().err
    assert err.startswith("askkit: error: --min-recall must be a number in 0..1")
    assert err.count("\n") == 1


def run_report(log: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "askkit.cli",
            "report",
            str(log),
            "--qrels",
            str(DATA / "qrels.tsv"),
            "-o",
            str(out),
        ],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "COLUMNS": "80"},
    )


@pytest.mark.parametrize(
    ("scheme", "cause"),
    [("scheme", "different id schemes"), ("case", "only in case"), ("padding", "zero-padding")],
)
def test_cli_says_on_stderr_that_nothing_can_be_scored(
    run_log: Path, tmp_path: Path, scheme: str, cause: str
) -> None:
    out = tmp_path / "r.html"
    proc = run_report(relabel(run_log, tmp_path / "run.jsonl", scheme), out)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1  # one line, however narrow the terminal
    assert lines[0].startswith("No run query matches a judged query: nothing can be scored.")
    assert cause in lines[0]
    assert f"wrote {out}" in proc.stdout
    assert "nothing can be scored" in out.read_text(encoding="utf-8")


def test_cli_on_matching_ids_is_quiet_on_stderr(run_log: Path, tmp_path: Path) -> None:
    proc = run_report(run_log, tmp_path / "r.html")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
