"""``askkit report``: the command writes the report of askkit.report."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import DATA, ROOT
from tests.test_report import relabel, write_pool_log, write_run_log


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


def test_cli_passes_the_context_cut_options(tmp_path: Path) -> None:
    from askkit.cli import main
    from askkit.frame import sources_frame
    from askkit.ranking import sweep_context_cut

    pool_log = write_pool_log(tmp_path / "pools.jsonl")  # whole pools: a recommendation
    out = tmp_path / "r.html"
    argv = ["report", str(pool_log), "--qrels", str(DATA / "qrels.tsv"), "-o", str(out)]
    assert main([*argv, "--objective", "precision", "--min-recall", "0.6"]) == 0
    cut = sweep_context_cut(
        sources_frame(pool_log), DATA / "qrels.tsv", objective="precision", min_recall=0.6
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


# --------------------------------------------------------------------------- -o, inputs, options


def one_error_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    from askkit.cli import main

    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("askkit: error: ")
    assert err.count("\n") == 1, err
    assert "unexpected" not in err
    return err


@pytest.fixture
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "1000")


@pytest.mark.usefixtures("wide")
def test_cli_refuses_to_replace_a_file_it_did_not_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``-o /etc/passwd`` replaced it; a file that is no askkit report is now left as is,
    refused before any work, with how to proceed."""
    precious = tmp_path / "passwd"
    precious.write_text("root:x:0:0:root:/root:/bin/bash\n", encoding="utf-8")
    err = one_error_line(["report", str(DATA / "turns.jsonl"), "-o", str(precious)], capsys)
    assert err == (
        f"askkit: error: -o {precious}: exists and is not an askkit report, so it is left "
        "as is: give another -o, or --force to replace it\n"
    )
    assert precious.read_text(encoding="utf-8") == "root:x:0:0:root:/root:/bin/bash\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["passwd"]


@pytest.mark.usefixtures("wide")
def test_cli_replaces_its_own_report_and_with_force_any_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from askkit.cli import main

    out = tmp_path / "r.html"
    argv = ["report", str(DATA / "turns.jsonl"), "--max-queries", "1", "-o", str(out)]
    assert main(argv) == 0
    assert main(argv) == 0  # its own report: replaced without --force
    assert out.read_text(encoding="utf-8").startswith("<!doctype html>")
    mine = tmp_path / "mine.html"
    mine.write_text("mine", encoding="utf-8")
    assert main([*argv[:-1], str(mine), "--force"]) == 0
    assert 'content="askkit ' in mine.read_text(encoding="utf-8")
    capsys.readouterr()


@pytest.mark.usefixtures("wide")
@pytest.mark.parametrize(
    "options",
    [
        ["--measures", "nope"],
        ["--measures", "ndcg@10"],
        ["--level", "section"],
        ["--objective", "ndcg"],
        ["--min-recall", "0.5"],
    ],
)
def test_cli_refuses_judged_report_options_without_qrels(
    tmp_path: Path, options: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """``--measures nope`` without ``--qrels`` was ignored silently."""
    out = tmp_path / "r.html"
    err = one_error_line(["report", str(DATA / "turns.jsonl"), "-o", str(out), *options], capsys)
    assert f"askkit: error: {options[0]}: used only with --qrels" in err
    assert not out.exists()


@pytest.mark.usefixtures("wide")
@pytest.mark.parametrize("measures", [",", "", " , "])
def test_cli_refuses_a_measure_list_that_names_none(
    run_log: Path, tmp_path: Path, measures: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--measures ,`` was an "unexpected IndexError" (askkit's own bug)."""
    out = tmp_path / "r.html"
    argv = ["report", str(run_log), "--qrels", str(DATA / "qrels.tsv"), "-o", str(out)]
    err = one_error_line([*argv, "--measures", measures], capsys)
    assert "--measures names no measure" in err
    assert not out.exists()


@pytest.mark.parametrize("option", ["RUN", "--qrels"])
@pytest.mark.parametrize(
    ("special", "kind"),
    [("/dev/null", "a character device"), ("/dev/zero", "a character device"), ("fifo", "a FIFO")],
)
def test_cli_says_what_a_special_input_file_is(
    tmp_path: Path, option: str, special: str, kind: str
) -> None:
    """A FIFO hung ``askkit report``, /dev/zero was read until the process was killed
    (bounded child: a hang or a runaway read fails the test)."""
    from tests.cli.bounded import run_cli

    path = special
    if special == "fifo":
        path = str(tmp_path / "input")
        os.mkfifo(path)
    out = tmp_path / "r.html"
    if option == "RUN":
        argv, what = ["report", path, "-o", str(out)], "turn log"
    else:
        argv = ["report", str(DATA / "turns.jsonl"), "--qrels", path, "-o", str(out)]
        what = "qrels"
    proc = run_cli(argv, env={**os.environ, "COLUMNS": "1000"})
    assert proc.returncode == 2, proc.stderr
    where = path if option == "RUN" else f"--qrels {path}"
    assert proc.stderr.startswith(f"askkit: error: {where}: the {what} file is {kind}")
    assert proc.stderr.count("\n") == 1
    assert not out.exists()


@pytest.mark.usefixtures("wide")
def test_cli_refuses_an_output_that_is_a_fifo_when_parsing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "out.html"
    os.mkfifo(fifo)
    err = one_error_line(["report", str(DATA / "turns.jsonl"), "-o", str(fifo)], capsys)
    assert err == (
        f"askkit: error: -o must be a regular file to write, got '{fifo}' (a FIFO (named pipe))\n"
    )


def test_cli_compares_several_runs(
    run_log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from askkit.cli import main

    other = tmp_path / "other.jsonl"
    other.write_text(run_log.read_text(encoding="utf-8"), encoding="utf-8")
    out = tmp_path / "r.html"
    argv = ["report", str(run_log), str(other), "--qrels", str(DATA / "qrels.tsv")]
    assert main([*argv, "-o", str(out), "--measures", "ndcg@10"]) == 0
    page = out.read_text(encoding="utf-8")
    assert "<h2>Runs compared</h2><p>2 runs on 37 judged queries" in page
    assert "the baseline is <b>run</b>" in page
    # the same run twice: no query better or worse
    assert '<td>other</td><td>ndcg@10</td><td class="num">' in page
    capsys.readouterr()
    assert main(["report", str(run_log), str(other), "-o", str(tmp_path / "x.html")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "2 runs: comparing runs needs --qrels" in err
