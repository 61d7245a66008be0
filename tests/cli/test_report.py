"""``askkit report``: the command writes the report of askkit.report."""

from __future__ import annotations

import json
import os
import re
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


# --------------------------------------------------------------------------- issue 41


def _metrics(page: str) -> dict[str, float]:
    """The Metrics table's means, by measure."""
    table = page.split("<h2>Metrics</h2>", 1)[1].split("</table>", 1)[0]
    names = re.findall(r"<th>([^<]+)</th>", table)[1:]
    values = [float(x) for x in re.findall(r'<td class="num">([0-9.]+)</td>', table)]
    return dict(zip(names, values, strict=True))


def _eval_mean(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, str]:
    from askkit.cli import main

    capsys.readouterr()  # what came before
    assert main(["eval", *argv]) == 0
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    return {m.strip(): v for m, q, v in rows if q == "all"}


@pytest.fixture
def trec_run(tmp_path: Path) -> Path:
    """The bundled turn log as a TREC run (note ids, as askkit writes a run)."""
    from askkit.frame import sources_frame
    from askkit.metrics import write_run

    path = tmp_path / "run-bm25.trec"
    write_run(sources_frame(DATA / "run.jsonl"), path)
    return path


@pytest.mark.usefixtures("wide")
def test_issue41_3_report_reads_a_trec_run_as_eval_and_diff_do(
    trec_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``askkit report run-bm25.trec --qrels q.tsv`` failed: "the file is not valid JSON"."""
    from askkit.cli import main

    out = tmp_path / "r.html"
    assert main(["report", str(trec_run), "--qrels", str(DATA / "qrels.tsv"), "-o", str(out)]) == 0
    assert f"wrote {out} (37 queries, 370 sources, 25 of 37 in the drilldown)" in (
        capsys.readouterr().out
    )
    page = out.read_text(encoding="utf-8")
    evaluated = _eval_mean(capsys, str(DATA / "qrels.tsv"), str(trec_run), "-m", "ndcg@10,mrr")
    shown = _metrics(page)
    assert f"{shown['ndcg@10']:.4f}" == evaluated["ndcg@10"] == "0.7205"
    assert f"{shown['mrr']:.4f}" == evaluated["mrr"]
    # no answers or citations: the page says so instead of showing empty sections
    assert f"{trec_run} is a TREC run: ranked document ids and scores only" in page
    for absent in (
        "<h2>Context cut</h2>",
        "<h2>Where relevant notes are lost</h2>",
        'class="askkit-answer"',
        'class="askkit-sources"',
    ):
        assert absent not in page
    assert "Each query&#x27;s documents are in rank order." in page or (
        "Each query's documents are in rank order." in page
    )
    # each query's documents, ranked, with scores and grades
    first = page.split("<details><summary><b>", 2)[2]
    head = re.findall(r"<th>([^<]*)</th>", first.split("</table>", 1)[0])
    assert head == ["rank", "document", "score", "grade"]
    # the same through a comparison: a TREC run beside the turn log it came from
    both = tmp_path / "both.html"
    argv = ["report", str(DATA / "run.jsonl"), str(trec_run), "--qrels", str(DATA / "qrels.tsv")]
    assert main([*argv, "-o", str(both), "--measures", "ndcg@10"]) == 0
    compared = both.read_text(encoding="utf-8").split("<h2>Runs compared</h2>", 1)[1]
    assert '<td>run-bm25</td><td class="num">0.7205</td>' in compared


@pytest.mark.usefixtures("wide")
def test_issue41_3_vault_with_a_trec_run_is_refused_before_any_work(
    trec_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = one_error_line(
        ["report", str(trec_run), "--vault", str(DATA / "vault"), "-o", str(tmp_path / "r.html")],
        capsys,
    )
    assert err.startswith(f"askkit: error: --vault: {trec_run} is a TREC run, whose documents")
    assert not (tmp_path / "r.html").exists()


@pytest.mark.usefixtures("wide")
def test_issue41_4_eval_diff_and_report_give_the_same_numbers_by_default_and_say_the_level(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """On the bundled run, eval and diff scored notes (nDCG@10 0.7205) and report
    sections (0.5027), each by default."""
    import json

    from askkit.cli import main

    qrels, run = str(DATA / "qrels.tsv"), str(DATA / "run.jsonl")
    evaluated = _eval_mean(capsys, qrels, run, "-m", "ndcg@10,recall@10")
    assert main(["diff", run, run, "--qrels", qrels, "--json"]) == 0
    gated = json.loads(capsys.readouterr().out)
    out = tmp_path / "r.html"
    assert main(["report", run, "--qrels", qrels, "-o", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    reported = _metrics(page)
    for measure in ("ndcg@10", "recall@10"):
        base = next(m["base"] for m in gated["measures"] if m["measure"] == measure)
        assert evaluated[measure] == f"{base:.4f}" == f"{reported[measure]:.4f}"
    assert evaluated["ndcg@10"] == "0.7205"
    # each output says the level
    assert evaluated["level"] == gated["level"] == "note"
    header = page.split("<h2>", 1)[0]
    assert "scored at <b>note</b> level" in header
    assert "askkit's default in every command" in header
    assert "37 judged queries, scored at <b>note</b> level" in page
    # --level section is said too, and scores what eval scores
    section = _eval_mean(capsys, qrels, run, "-m", "ndcg@10", "--level", "section")
    assert main(["report", run, "--qrels", qrels, "--level", "section", "-o", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert f"{_metrics(page)['ndcg@10']:.4f}" == section["ndcg@10"] == "0.5027"
    assert "scored at <b>section</b> level" in page.split("<h2>", 1)[0]


@pytest.mark.usefixtures("wide")
@pytest.mark.parametrize("which", ["run", "qrels"])
def test_issue41_6_report_refuses_an_empty_run_or_qrels_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], which: str
) -> None:
    empty = tmp_path / ("empty.trec" if which == "run" else "empty.tsv")
    empty.write_text("")
    out = tmp_path / "r.html"
    run, qrels = (empty, DATA / "qrels.tsv") if which == "run" else (DATA / "run.jsonl", empty)
    err = one_error_line(["report", str(run), "--qrels", str(qrels), "-o", str(out)], capsys)
    said = "holds no ranked documents" if which == "run" else "holds no judgments"
    assert err.startswith(f"askkit: error: {empty}: {said} (")
    assert not out.exists()


@pytest.mark.usefixtures("wide")
def test_issue41_7_the_drilldown_shows_the_worst_25_and_says_how_to_see_all(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from askkit.cli import main
    from askkit.cli.report import _DEFAULT_DRILLDOWN
    from askkit.report import DEFAULT_DRILLDOWN

    assert _DEFAULT_DRILLDOWN == DEFAULT_DRILLDOWN == 25
    out = tmp_path / "r.html"
    argv = ["report", str(DATA / "run.jsonl"), "--qrels", str(DATA / "qrels.tsv"), "-o", str(out)]
    assert main(argv) == 0
    assert "25 of 37 in the drilldown" in capsys.readouterr().out
    page = out.read_text(encoding="utf-8")
    assert "<h2>Queries (25 of 37 shown)</h2>" in page
    assert (
        "12 more queries not shown: the drilldown shows the worst 25 by ndcg@10 of 37. To "
        "see every query: askkit report --drilldown all"
    ) in page
    shown = [float(x) for x in re.findall(r"ndcg@10 ([0-9.]+) ·", page)]
    assert len(shown) == 25
    assert shown == sorted(shown)
    per_query = page.split("Per-query measures", 1)[1].split("</table>", 1)[0]
    assert per_query.count("<tr><td>q") == 37  # every judged query keeps its row
    for option, count in (("all", 37), ("ALL", 37), ("3", 3), ("0", 0)):
        assert main([*argv, "--drilldown", option]) == 0
        assert f"{count} of 37 in the drilldown" in capsys.readouterr().out
        assert f"<h2>Queries ({count} of 37 shown)</h2>" in out.read_text(encoding="utf-8")
    assert main([*argv, "--max-queries", "2"]) == 0  # the older spelling
    assert "2 of 37 in the drilldown" in capsys.readouterr().out
    err = one_error_line([*argv, "--drilldown", "some"], capsys)
    assert err == "askkit: error: --drilldown must be a whole number >= 0 or 'all', got 'some'\n"
    err = one_error_line([*argv, "--drilldown", "2", "--max-queries", "2"], capsys)
    assert "--drilldown and --max-queries are one option" in err


def _cranfield(folder: Path) -> tuple[Path, Path]:
    """Cranfield as a vault (one note per abstract, ``# title`` then the abstract) and
    its 225 questions' BM25 turn log (80 notes each, kimun's pool), as
    benchmarks/cranfield.py builds them; returns the log and the qrels."""
    from askkit.retrieve import LocalIndex
    from tests.corpora import corpus

    source = corpus("cranfield")

    def records(name: str) -> list[dict[str, str]]:
        out: list[dict[str, str]] = []
        field = ""
        for line in (source / name).read_text(encoding="utf-8", errors="replace").splitlines():
            head = re.match(r"^\.([A-Z])(?:\s+(\S+))?\s*$", line)
            if head and head.group(1) == "I":
                out.append({"id": head.group(2) or ""})
                field = ""
            elif head:
                field = head.group(1)
            elif out and field:
                out[-1][field] = out[-1].get(field, "") + line.strip() + " "
        return out

    vault = folder / "vault"
    vault.mkdir()
    for doc in records("cran.all.1400"):
        text = f"# {doc.get('T', '').strip()}\n\n{doc.get('W', '').strip()}\n"
        (vault / f"d{int(doc['id']):04d}.md").write_text(text, encoding="utf-8")
    index = LocalIndex(vault, cache_dir=False, progress=False)
    log = folder / "run.jsonl"
    with log.open("w", encoding="utf-8") as fh:
        for n, query in enumerate(records("cran.qry"), start=1):
            question = query.get("W", "").strip()
            chunks = [c.to_dict() for c in index.search(question, k=80)]
            fh.write(json.dumps({"id": f"q{n:03d}", "question": question, "chunks": chunks}))
            fh.write("\n")
    qrels = folder / "qrels.tsv"
    rows = [line.split() for line in (source / "cranqrel").read_text().splitlines() if line.strip()]
    qrels.write_text(
        "query_id\tpath\tgrade\n"
        + "".join(f"q{int(q):03d}\td{int(d):04d}.md\t{max(int(g), 0)}\n" for q, d, g in rows),
        encoding="utf-8",
    )
    return log, qrels


@pytest.mark.slow
@pytest.mark.usefixtures("wide")
def test_issue41_7_a_cranfield_report_stays_under_a_few_mb(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """225 questions of 80 sources each, with the vault: 32 MB before the cap."""
    from askkit.cli import main

    log, qrels = _cranfield(tmp_path)
    out = tmp_path / "r.html"
    argv = ["report", str(log), "--qrels", str(qrels), "--vault", str(log.parent / "vault")]
    assert main([*argv, "-o", str(out)]) == 0
    assert "25 of 225 in the drilldown" in capsys.readouterr().out
    size = out.stat().st_size
    assert size < 4_000_000, size
    page = out.read_text(encoding="utf-8")
    assert "200 more queries not shown" in page
    assert "the section is the chunk&#x27;s text, shown above, whole" in page or (
        "the section is the chunk's text, shown above, whole" in page
    )


@pytest.mark.usefixtures("wide")
def test_issue42_grade_fills_the_bounds_and_needs_qrels(
    run_log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from askkit.cli import main

    out = tmp_path / "r.html"
    err = one_error_line(
        ["report", str(DATA / "turns.jsonl"), "-o", str(out), "--grade", "1"], capsys
    )
    assert "askkit: error: --grade: used only with --qrels" in err
    argv = ["report", str(run_log), "--qrels", str(DATA / "qrels.tsv"), "-o", str(out)]
    assert main([*argv, "--measures", "ndcg@10", "--grade", "1"]) == 0
    assert "relevant at grade 1 (as asked)" in out.read_text(encoding="utf-8")
