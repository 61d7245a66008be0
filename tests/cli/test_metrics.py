"""``askkit eval``: TREC files scored from the command line, checked against pytrec_eval
and against ``askkit.metrics.evaluate`` with the same options."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import pytrec_eval

from askkit.cli import main
from askkit.metrics import evaluate, read_qrels, read_run
from tests.conftest import DATA, ROOT

# ids kimun's path rules would change: case, ':', '#', '/', a trailing '.'
QRELS = """\
# judged by hand
Q1 0 FT911-1 2
Q1 0 http://Example.org/Doc:7 1
Q1 0 CR93E-1282#p3 0
Q1 0 LA0101-9. 3
Q2 0 FT911-1 1
Q2 0 urn:ISBN:0451450523 2
Q3 0 FT911-2 1
"""
RUN = """\
Q1 Q0 CR93E-1282#p3 1 9.5 sys
Q1 Q0 FT911-1 2 9.5 sys
Q1 Q0 LA0101-9. 3 7.0 sys
Q1 Q0 http://Example.org/Doc:7 4 2.5 sys
Q2 Q0 urn:ISBN:0451450523 1 3.0 sys
Q2 Q0 FT911-9 2 3.0 sys
Q2 Q0 FT911-1 3 1.0 sys
"""


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text(QRELS)
    run.write_text(RUN)
    return qrels, run


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "askkit.cli", "eval", *args],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"COLUMNS": "200", "PATH": ""},
    )


def table(stdout: str) -> dict[tuple[str, str], str]:
    rows = [line.split("\t") for line in stdout.splitlines()]
    return {(m.strip(), q): v for m, q, v in rows}


def test_eval_prints_trec_eval_rows_equal_to_pytrec_eval(files: tuple[Path, Path]) -> None:
    qrels, run = files
    out = cli(str(qrels), str(run), "-m", "map,ndcg@10", "-m", "mrr", "-q", "--digits", "12")
    assert out.returncode == 0, out.stderr
    got = table(out.stdout)
    with qrels.open() as q, run.open() as r:
        lines = [line for line in q if not line.startswith("#")]
        reference = pytrec_eval.RelevanceEvaluator(
            pytrec_eval.parse_qrel(lines), {"map", "ndcg", "recip_rank"}
        ).evaluate(pytrec_eval.parse_run(r))
    assert set(reference) == {"Q1", "Q2"}
    for qid, values in reference.items():
        assert float(got["map", qid]) == pytest.approx(values["map"], abs=1e-11)
        assert float(got["mrr", qid]) == pytest.approx(values["recip_rank"], abs=1e-11)
    assert got["num_q", "all"] == "2"
    mean_map = sum(v["map"] for v in reference.values()) / 2
    assert float(got["map", "all"]) == pytest.approx(mean_map, abs=1e-11)
    assert out.stderr == ""


@pytest.mark.parametrize(
    "flags",
    [["-l", "2"], ["-l", "0"], ["-l", "-1"], ["-M", "1"], ["-c"], ["--ties", "input"]],
)
def test_eval_flags_equal_the_python_options(files: tuple[Path, Path], flags: list[str]) -> None:
    qrels, run = files
    measures = ["map", "recall@10", "precision@2", "ndcg@10"]
    assert main(["eval", str(qrels), str(run), "-m", ",".join(measures), "--digits", "12"]) == 0
    out = cli(str(qrels), str(run), "-m", ",".join(measures), "--digits", "12", *flags)
    assert out.returncode == 0, out.stderr
    got = table(out.stdout)
    options: dict[str, object]
    if flags[0] == "-l":
        options = {"relevance_level": int(flags[1])}
    elif flags[0] == "-M":
        options = {"max_docs_per_query": int(flags[1])}
    elif flags[0] == "-c":
        options = {"missing": "zero"}
    else:
        options = {"ties": "input"}
    want = evaluate(read_run(run), read_qrels(qrels), measures, **options)  # type: ignore[arg-type]
    assert got["num_q", "all"] == str(len(want.per_query))
    for m in measures:
        assert float(got[m, "all"]) == pytest.approx(float(want.mean[m]), abs=1e-11)


def test_eval_reads_a_turn_log_and_the_tsv_qrels() -> None:
    out = cli(str(DATA / "qrels.tsv"), str(DATA / "run.jsonl"), "-m", "ndcg@10")
    assert out.returncode == 0, out.stderr
    got = table(out.stdout)
    from askkit.frame import sources_frame

    want = evaluate(sources_frame(DATA / "run.jsonl"), DATA / "qrels.tsv", ["ndcg@10"])
    assert float(got["ndcg@10", "all"]) == pytest.approx(float(want.mean["ndcg@10"]), abs=5e-5)
    assert int(got["num_q", "all"]) == len(want.per_query) > 0


def test_a_bad_line_is_one_line_naming_file_and_line(files: tuple[Path, Path]) -> None:
    qrels, run = files
    run.write_text(RUN + "Q2 Q0 FT911-3 4 high sys\n")
    out = cli(str(qrels), str(run))
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert f"{run}:8" in out.stderr
    assert "score" in out.stderr
    assert "'high'" in out.stderr
    assert "Traceback" not in out.stderr


def test_lenient_scores_the_rest_and_says_what_was_skipped(files: tuple[Path, Path]) -> None:
    qrels, run = files
    run.write_text(RUN + "Q2 Q0 FT911-3 4 high sys\nQ3 Q0 FT911-2\n")
    out = cli(str(qrels), str(run), "--lenient", "-m", "map")
    assert out.returncode == 0, out.stderr
    assert "run: 2 of 9 records skipped" in out.stderr
    assert f"{run}:8" in out.stderr
    strict = cli(str(qrels), str(run.with_name("clean.txt")))
    assert strict.returncode == 2  # a missing file: one line, status 2
    run.write_text(RUN)
    clean = cli(str(qrels), str(run), "-m", "map")
    assert table(out.stdout)["map", "all"] == table(clean.stdout)["map", "all"]


def test_ids_that_never_match_are_said_on_stderr(files: tuple[Path, Path]) -> None:
    qrels, run = files
    run.write_text(RUN.lower().replace("q1 q0", "Q1 Q0").replace("q2 q0", "Q2 Q0"))
    out = cli(str(qrels), str(run), "-m", "map")
    assert out.returncode == 0
    assert "judged" in out.stderr
    assert "ft911-1" in out.stderr  # examples from each side
    assert "FT911-1" in out.stderr
    assert float(table(out.stdout)["map", "all"]) == 0.0


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["-m", "ndcg@ten"], "-m ndcg@ten"),
        (["-M", "0"], "-M must be at least 1"),
        (["--digits", "40"], "--digits"),
    ],
)
def test_bad_options_are_one_line(files: tuple[Path, Path], flags: list[str], says: str) -> None:
    qrels, run = files
    out = cli(str(qrels), str(run), *flags)
    assert out.returncode == 2
    assert says in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr


@pytest.mark.parametrize("flags", [["-m", ""], ["-m", ","], ["-m", " , ", "-m", ""]])
def test_a_measure_option_that_names_none_is_one_line(
    files: tuple[Path, Path], flags: list[str]
) -> None:
    """``-m ""`` was an "unexpected ValueError" (askkit's own bug)."""
    qrels, run = files
    out = cli(str(qrels), str(run), *flags)
    assert out.returncode == 2
    assert out.stderr.startswith("askkit: error: -m names no measure")
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr


@pytest.mark.parametrize("which", ["qrels", "run"])
@pytest.mark.parametrize(
    ("special", "kind"),
    [("/dev/null", "a character device"), ("/dev/zero", "a character device"), ("fifo", "a FIFO")],
)
def test_a_special_input_file_is_refused_saying_what_it_is(
    files: tuple[Path, Path], tmp_path: Path, which: str, special: str, kind: str
) -> None:
    """``eval /dev/zero RUN`` scored num_q 0 and exited 0; a FIFO run hung (bounded child:
    a hang or a runaway read fails the test)."""
    from tests.cli.bounded import run_cli

    path = special
    if special == "fifo":
        path = str(tmp_path / "input")
        os.mkfifo(path)
    qrels, run = (path, str(files[1])) if which == "qrels" else (str(files[0]), path)
    out = run_cli(["eval", qrels, run], env={**os.environ, "COLUMNS": "1000"})
    assert out.returncode == 2, out.stderr
    assert out.stderr.startswith(f"askkit: error: {path}: the {which} file is {kind}")
    assert out.stderr.count("\n") == 1
    assert out.stdout == ""


# --------------------------------------------------------------------------- issue 41


def test_issue41_4_eval_says_the_level_it_scored_at() -> None:
    """Every command scores at note level by default; eval's output says which level."""
    note = cli(str(DATA / "qrels.tsv"), str(DATA / "run.jsonl"), "-m", "ndcg@10")
    section = cli(
        str(DATA / "qrels.tsv"), str(DATA / "run.jsonl"), "-m", "ndcg@10", "--level", "section"
    )
    assert note.returncode == section.returncode == 0, note.stderr + section.stderr
    assert note.stdout.splitlines()[0].split("\t") == ["level    ", "all", "note"]
    assert table(note.stdout)["level", "all"] == "note"
    assert table(section.stdout)["level", "all"] == "section"
    assert table(note.stdout)["ndcg@10", "all"] == "0.7205"  # the bundled run, note level
    assert table(section.stdout)["ndcg@10", "all"] == "0.5027"


EMPTY_QRELS = {
    "an empty TSV": ("qrels.tsv", ""),
    "a TSV header alone": ("qrels.tsv", "query_id\tpath\theading\tgrade\n"),
    "an empty TREC file": ("qrels.txt", ""),
    "TREC comments only": ("qrels.txt", "# judged later\n\n"),
}
EMPTY_RUNS = {
    "an empty TREC run": ("run.txt", ""),
    "TREC comments only": ("run.txt", "# nothing retrieved\n"),
    "an empty turn log": ("run.jsonl", ""),
    "turns without sources": ("run.jsonl", '{"id": "Q1", "question": "x", "chunks": []}\n'),
}


@pytest.mark.parametrize("name", EMPTY_QRELS)
def test_issue41_6_eval_refuses_qrels_that_hold_no_judgments(
    files: tuple[Path, Path], tmp_path: Path, name: str
) -> None:
    """An empty qrels file exited 0 printing ``num_q all 0`` and ``nan``."""
    file, text = EMPTY_QRELS[name]
    qrels = tmp_path / file
    qrels.write_text(text, encoding="utf-8")
    out = cli(str(qrels), str(files[1]))
    assert out.returncode == 2, out.stdout
    assert out.stderr == f"askkit: error: {qrels}: holds no judgments " + (
        "(no line names a query, a document and a grade); give the judgments of the run's queries\n"
    )
    assert out.stdout == ""


@pytest.mark.parametrize("name", EMPTY_RUNS)
def test_issue41_6_eval_refuses_a_run_that_holds_no_ranked_documents(
    files: tuple[Path, Path], tmp_path: Path, name: str
) -> None:
    file, text = EMPTY_RUNS[name]
    run = tmp_path / file
    run.write_text(text, encoding="utf-8")
    out = cli(str(files[0]), str(run))
    assert out.returncode == 2, out.stdout
    assert out.stderr.startswith(f"askkit: error: {run}: holds no ranked documents (")
    assert out.stderr.count("\n") == 1
    assert out.stdout == ""


def test_issue41_6_eval_refuses_a_run_and_qrels_that_share_no_query_id() -> None:
    """The bundled turn log's ids (q-starter, ...) are not the judgments' (q01, ...)."""
    out = cli(str(DATA / "qrels.tsv"), str(DATA / "turns.jsonl"))
    assert out.returncode == 2, out.stdout
    assert out.stderr.count("\n") == 1
    assert out.stderr.startswith(
        f"askkit: error: {DATA / 'turns.jsonl'} and {DATA / 'qrels.tsv'} share no query id, "
        "so nothing can be scored. Run ids: q-starter, q-acetone, q-oven; judged ids: q01, "
        "q02, q03."
    )
    assert out.stdout == ""


def _runs_as_trec(folder: Path) -> Path:
    from askkit.frame import sources_frame
    from askkit.metrics import write_run

    trec = folder / "run.trec"
    write_run(sources_frame(DATA / "run.jsonl"), trec)
    return trec


@pytest.mark.parametrize(
    ("swap", "says"),
    [
        ("log as qrels", "has 540 and looks like JSON (a turn log or a payload)"),
        ("run as qrels", "has 6 and looks like a TREC run line (query_id Q0 doc rank score tag)"),
        ("qrels as run", "has 4 and looks like a qrels line (query_id iteration doc grade)"),
    ],
)
def test_issue41_8_swapped_files_are_said_in_one_sentence(
    tmp_path: Path, swap: str, says: str
) -> None:
    """It said "got" twice and never that the two files may be swapped."""
    trec = _runs_as_trec(tmp_path)
    argv, file = {
        "log as qrels": ((DATA / "run.jsonl", DATA / "qrels.tsv"), DATA / "run.jsonl"),
        "run as qrels": ((trec, DATA / "qrels.tsv"), trec),
        "qrels as run": ((DATA / "qrels.tsv", DATA / "qrels.tsv"), DATA / "qrels.tsv"),
    }[swap]
    out = cli(*map(str, argv))
    assert out.returncode == 2
    lines = out.stderr.splitlines()
    assert len(lines) == 1, out.stderr
    kind = "run" if swap == "qrels as run" else "qrels"
    fields = "at least 6" if kind == "run" else "4"
    assert lines[0].startswith(
        f"askkit: error: {file}:1: line: a {kind} line has {fields} whitespace-separated fields ("
    )
    assert says in lines[0]
    assert "the run and the qrels files may be swapped, got '" in lines[0]
    assert lines[0].count("got") == 1


TREC_FILES = ROOT / "tests" / "metrics" / "trec_eval"


def test_issue42_eval_takes_bpref_infap_judged_and_condensed_measures_as_pytrec_eval() -> None:
    qrels, run = TREC_FILES / "qrels.rel_level", TREC_FILES / "results.test"
    out = cli(str(qrels), str(run), "-q", "-m", "bpref,infAP,ndcg'@10,judged@10", "--digits", "12")
    assert out.returncode == 0, out.stderr
    got = table(out.stdout)
    q = read_qrels(qrels)
    r = read_run(run)
    qd: dict[str, dict[str, int]] = {}
    for qid, doc, grade in zip(q["query_id"], q["doc"], q["grade"], strict=True):
        qd.setdefault(qid, {})[doc] = int(grade)
    rd: dict[str, dict[str, float]] = {}
    for qid, doc, score in zip(r["turn_id"], r["doc"], r["score"], strict=True):
        rd.setdefault(qid, {})[doc] = float(score)
    plain = pytrec_eval.RelevanceEvaluator(qd, {"bpref", "infAP"}).evaluate(rd)
    judged = pytrec_eval.RelevanceEvaluator(
        qd, {"ndcg_cut.10"}, judged_docs_only_flag=True
    ).evaluate(rd)
    for qid in plain:
        assert float(got[("bpref", qid)]) == pytest.approx(plain[qid]["bpref"], abs=1e-12)
        assert float(got[("infAP", qid)]) == pytest.approx(plain[qid]["infAP"], abs=1e-12)
        assert float(got[("ndcg'@10", qid)]) == pytest.approx(judged[qid]["ndcg_cut_10"], abs=1e-12)
    assert 0.0 < float(got[("judged@10", "all")]) <= 1.0


def test_issue42_eval_J_scores_every_measure_on_the_condensed_list() -> None:
    qrels, run = TREC_FILES / "qrels.rel_level", TREC_FILES / "results.test"
    out = cli(str(qrels), str(run), "-J", "-m", "map,ndcg@10,judged@10", "--digits", "12")
    assert out.returncode == 0, out.stderr
    got = table(out.stdout)
    want = evaluate(read_run(run), read_qrels(qrels), ["map'", "ndcg'@10", "judged@10"]).mean
    assert {m for m, _ in got} == {"level", "num_q", "map'", "ndcg'@10", "judged@10"}
    for name in ("map'", "ndcg'@10", "judged@10"):
        assert float(got[(name, "all")]) == pytest.approx(float(want[name]), abs=1e-12)
    bad = cli(str(qrels), str(run), "-m", "judged'@10")
    assert bad.returncode == 2
    assert bad.stderr.count("\n") == 1
    assert "no condensed form" in bad.stderr


def test_issue42_eval_bounds_prints_each_value_with_its_bounds() -> None:
    qrels, run = TREC_FILES / "qrels.rel_level", TREC_FILES / "results.test"
    out = cli(str(qrels), str(run), "-q", "-m", "map,P_5", "--bounds", "--grade", "2")
    assert out.returncode == 0, out.stderr
    got = table(out.stdout)
    from askkit.metrics import bounds

    b = bounds(read_run(run), read_qrels(qrels), ["map", "P_5"], grade=2)
    mean = b.table()
    for name in ("map", "P_5"):
        value, span = got[(name, "all")].split(" ", 1)
        assert float(value) == pytest.approx(mean.loc[name, "value"], abs=1e-4)
        low, high = (float(x) for x in span.strip("[]").split(", "))
        assert low == pytest.approx(mean.loc[name, "lower"], abs=1e-4)
        assert high == pytest.approx(mean.loc[name, "upper"], abs=1e-4)
        assert low <= float(value) <= high
        assert float(got[(f"unjudged:{name}", "all")]) == pytest.approx(b.share()[name], abs=1e-4)
        for qid in b.value.index:
            assert got[(name, str(qid))].startswith(f"{b.value.loc[qid, name]:.4f} [")
    assert got[("fill_grade", "all")] == "2"
    assert float(got[("map", "all")].split()[2].rstrip("]")) > float(got[("map", "all")].split()[0])
    bad = cli(str(qrels), str(run), "--grade", "2")
    assert bad.returncode == 2
    assert "--bounds" in bad.stderr
