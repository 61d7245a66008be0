"""``askkit cut``: the context-cut sweep and the recommended [reranker] block, in a terminal."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from askkit.cli import main
from askkit.ranking import CutSettings, recommend, sweep_cuts
from askkit.retrieve.local import LocalIndex
from tests.cli.bounded import run_cli
from tests.conftest import DATA, ROOT
from tests.test_report import write_run_log

QRELS = str(DATA / "qrels.tsv")
QUERIES = str(DATA / "queries.tsv")
VAULT = str(DATA / "vault")


@pytest.fixture(autouse=True)
def _wide_and_cached(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("COLUMNS", "1000")  # one error line, never wrapped
    monkeypatch.setenv("ASKKIT_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def run_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled queries' search results (10 notes each), ids as the qrels' ids."""
    return write_run_log(tmp_path_factory.mktemp("cli-cut") / "run.jsonl")


def toml_block(out: str) -> CutSettings:
    return CutSettings.from_toml(out[out.index("\n[reranker]\n") :])


def test_vault_pools_print_the_sweep_and_the_recommended_block(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["cut", "--vault", VAULT, "--queries", QUERIES, "--qrels", QRELS]) == 0
    out = capsys.readouterr().out
    index = LocalIndex(VAULT, cache_dir=False, progress=False)
    expected = recommend(sweep_cuts(index.pools(QUERIES), QRELS))
    assert toml_block(out) == expected
    assert f"recommended: {expected.label}" in out
    assert "37 pools, 34 with a relevant note" in out
    assert "fixed top_k=40" in out  # every setting of the sweep is listed
    assert "largest-drop window=3..80" in out
    assert "already truncated" not in out  # local pools are whole


def test_objective_strategies_and_brief(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["cut", "--vault", VAULT, "--queries", QUERIES, "--qrels", QRELS]
    argv += ["--objective", "ndcg", "--strategies", "fixed", "--min-recall", "0.5", "--brief"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    index = LocalIndex(VAULT, cache_dir=False, progress=False)
    sweep = sweep_cuts(index.pools(QUERIES), QRELS, ["fixed"])
    assert toml_block(out) == recommend(sweep, "ndcg", min_recall=0.5)
    assert "best setting per strategy" in out
    assert "score-range" not in out.split("[reranker]")[0]


def test_a_log_of_cut_answers_is_said_to_be_truncated(
    run_log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["cut", str(run_log), "--qrels", QRELS]) == 0
    out = capsys.readouterr().out
    assert "The server's cut already truncated 37 of 37 pools" in out
    assert "the sweep can only cut further" in out
    # a setting picked on pools that were all cut is no recommendation: no block to merge
    assert "cannot tell what a looser cut would add" in out
    assert "no [reranker] block is recommended" in out
    assert "\n[reranker]\n" not in out
    assert "recommended:" not in out
    assert "fixed top_k=1" in out  # the sweep itself is still shown


def test_a_log_of_whole_pools(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    index = LocalIndex(VAULT, cache_dir=False, progress=False)
    log = tmp_path / "pools.jsonl"
    with log.open("w", encoding="utf-8") as fh:
        for qid, question in [("q01", "sourdough starter feeding ratio"), ("q05", "tomatoes")]:
            chunks = [c.to_dict() for c in index.pool(question)]
            fh.write(json.dumps({"id": qid, "question": question, "chunks": chunks}) + "\n")
    assert main(["cut", str(log), "--qrels", QRELS, "--min-recall", "0"]) == 0
    out = capsys.readouterr().out
    full = sum(len(index.pool(q)) == 80 for q in ("sourdough starter feeding ratio", "tomatoes"))
    assert ("already truncated" in out) == (full < 2)
    # a block to merge unless every pool was cut (BM25's pools here hold 32 and 29 chunks)
    assert ("\n[reranker]\n" in out) == (full > 0)


def error_of(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("askkit: error: ")
    assert err.count("\n") == 1, err  # one line
    return err


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["cut", "nope.jsonl", "--qrels", QRELS], "nope.jsonl"),
        (
            ["cut", str(DATA / "turns.jsonl"), "--qrels", "nope.tsv"],
            "--qrels nope.tsv: cannot read the qrels file: no such file",
        ),
        (["cut", str(DATA / "turns.jsonl"), "--qrels", QRELS], "no pool holds a relevant note"),
        (["cut", "--qrels", QRELS], "give either a turn LOG or --vault"),
        (["cut", "x.jsonl", "--vault", VAULT, "--queries", QUERIES, "--qrels", QRELS], "not both"),
        (["cut", "--vault", VAULT, "--qrels", QRELS], "--vault needs --queries"),
        (["cut", "--vault", "no-such-dir", "--queries", QUERIES, "--qrels", QRELS], "no such"),
        (["cut", "--vault", VAULT, "--queries", "nope.tsv", "--qrels", QRELS], "nope.tsv"),
        (["cut", str(DATA / "turns.jsonl"), "--queries", QUERIES, "--qrels", QRELS], "--queries"),
    ],
)
def test_bad_inputs_are_one_line_and_status_2(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert says in error_of(argv, capsys)


@pytest.mark.parametrize("value", ["1.5", "-0.1", "nan", "inf"])
def test_min_recall_out_of_range(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["cut", str(DATA / "turns.jsonl"), "--qrels", QRELS, "--min-recall", value]
    assert "--min-recall must be a number in 0..1" in error_of(argv, capsys)


@pytest.mark.parametrize("value", ["rerank", "", "fixed,nope"])
def test_unknown_strategies(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["cut", str(DATA / "turns.jsonl"), "--qrels", QRELS, "--strategies", value]
    assert "--strategies: unknown strategy" in error_of(argv, capsys)


def test_no_setting_reaches_the_minimum_recall(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["cut", "--vault", VAULT, "--queries", QUERIES, "--qrels", QRELS]
    argv += ["--strategies", "fixed", "--min-recall", "1"]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert "context cut sweep" in captured.out  # the table is printed before the error
    assert "no setting keeps recall >= 1.0" in captured.err
    assert "\n[reranker]\n" not in captured.out


def test_a_nan_score_in_the_log_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chunk = {"path": "projects/sourdough.md", "title": "S", "content": "x", "hash": "h"}
    log = tmp_path / "nan.jsonl"
    log.write_text(
        json.dumps({"id": "q01", "question": "q", "chunks": [{**chunk, "similarity_score": 0.5}]})
        + "\n"
        + '{"id": "q02", "question": "q", "chunks": [{"path": "a.md", "title": "S", '
        '"content": "x", "hash": "h", "similarity_score": NaN}]}\n',
        encoding="utf-8",
    )
    argv = ["cut", str(log), "--qrels", QRELS]
    assert main(argv) == 2
    assert capsys.readouterr().err.startswith("askkit: error: ")


def test_run_as_a_program(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "askkit.cli",
            "cut",
            "--vault",
            VAULT,
            "--queries",
            QUERIES,
            "--qrels",
            QRELS,
            "--brief",
        ],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "COLUMNS": "200", "ASKKIT_CACHE_DIR": str(tmp_path)},
    )
    assert proc.returncode == 0, proc.stderr
    assert "best setting per strategy" in proc.stdout
    assert 'context_cut = "' in proc.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "askkit.cli", "cut", "nope.jsonl", "--qrels", QRELS],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert bad.returncode == 2
    assert bad.stderr.count("\n") == 1
    assert "nope.jsonl" in bad.stderr


# --------------------------------------------------------------------------- hostile inputs


@pytest.mark.parametrize(
    ("option", "what"), [("--qrels", "qrels"), ("LOG", "turn log"), ("--queries", "queries")]
)
@pytest.mark.parametrize(
    ("special", "kind"),
    [
        ("/dev/null", "a character device"),
        ("/dev/zero", "a character device"),
        ("fifo", "a FIFO (named pipe)"),
    ],
)
def test_cut_says_what_a_special_input_file_is(
    tmp_path: Path, option: str, what: str, special: str, kind: str
) -> None:
    """``--qrels /dev/null`` said "no such file"; a FIFO log hung; /dev/zero was read until
    the process was killed. Each is now refused by askkit's one input rule, named as what
    it is, before any work (bounded child: a hang or a runaway read fails the test)."""
    path = special
    if special == "fifo":
        path = str(tmp_path / "input")
        os.mkfifo(path)
    argv = {
        "--qrels": ["cut", str(DATA / "run.jsonl"), "--qrels", path],
        "LOG": ["cut", path, "--qrels", QRELS],
        "--queries": ["cut", "--vault", VAULT, "--queries", path, "--qrels", QRELS],
    }[option]
    out = run_cli(argv, env={**os.environ, "COLUMNS": "1000"})
    where = path if option == "LOG" else f"{option} {path}"
    assert out.returncode == 2, out.stderr
    assert out.stderr == (
        f"askkit: error: {where}: the {what} file is {kind}, not a regular file; give a file\n"
    )


def test_cut_with_an_empty_queries_file_is_one_typed_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An empty --queries file was an "unexpected EmptyDataError" (askkit's own bug)."""
    empty = tmp_path / "queries.tsv"
    empty.write_bytes(b"")
    err = error_of(["cut", "--vault", VAULT, "--queries", str(empty), "--qrels", QRELS], capsys)
    assert "unexpected" not in err
    assert str(empty) in err


def test_cut_refuses_a_log_whose_turns_share_an_id_naming_their_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two turns with one id were merged silently into one pool; now refused, with both
    lines named, so the pools are never mixed."""
    chunk = {"title": "S", "content": "x", "hash": "h"}
    lines = [
        {"id": "q01", "chunks": [{**chunk, "path": "a.md", "similarity_score": 0.9}]},
        {"id": "q02", "chunks": [{**chunk, "path": "b.md", "similarity_score": 0.8}]},
        {"id": "q01", "chunks": [{**chunk, "path": "c.md", "similarity_score": 0.7}]},
    ]
    log = tmp_path / "dup.jsonl"
    log.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    err = error_of(["cut", str(log), "--qrels", QRELS], capsys)
    assert err.startswith(f"askkit: error: {log}: turn_id: ")
    assert "'q01' is the id of 2 turns (lines 1, 3)" in err


def test_cut_on_scores_near_the_float_limit_prints_no_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Pools of 1e308 scores printed "askkit: warning: overflow encountered in subtract"."""
    scores = [1.7e308, 1e308, -1e308, -1.7e308]
    log = tmp_path / "huge.jsonl"
    with log.open("w", encoding="utf-8") as fh:
        for q in ("q01", "q02"):
            chunks = [
                {
                    "path": f"n{i}.md",
                    "title": "t",
                    "content": "x",
                    "hash": "h",
                    "similarity_score": s,
                }
                for i, s in enumerate(scores)
            ]
            fh.write(json.dumps({"id": q, "chunks": chunks}) + "\n")
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text("query_id\tpath\theading\tgrade\nq01\tn0.md\t\t2\nq02\tn2.md\t\t1\n")
    assert main(["cut", str(log), "--qrels", str(qrels), "--min-recall", "0"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert "37 pools" not in captured.out
    assert "no [reranker] block is recommended" in captured.out  # 4-chunk pools: all cut


def test_an_80_column_terminal_shows_every_setting_and_value_whole(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["cut", "--vault", VAULT, "--queries", QUERIES, "--qrels", QRELS]) == 0
    out = capsys.readouterr().out
    assert "…" not in out
    index = LocalIndex(VAULT, cache_dir=False, progress=False)
    sweep = sweep_cuts(index.pools(QUERIES), QRELS)
    rows = [line for line in out.splitlines() if line[2:].startswith(tuple(sweep["setting"]))]
    assert len(rows) == len(sweep)  # one whole row per setting, none cut or wrapped
    assert all(len(row) <= 80 for row in rows)
    best = recommend(sweep)
    starred = [row for row in rows if row.startswith("★ ")]
    assert len(starred) == 1
    chunks = f"{sweep.set_index('setting').loc[best.label, 'mean_chunks']:.3f}"
    assert starred[0].split()[1:4] == [*best.label.split(), chunks]
    for row, (_, expected) in zip(rows, sweep.iterrows(), strict=True):
        assert f"{expected['recall']:.3f}" in row
    assert "lost: queries whose context keeps none" in out


# Issue 41, item 8: every input is read and checked before any pool is built.


@pytest.mark.parametrize("source", ["vault", "log"])
def test_issue41_8_cut_checks_the_qrels_before_any_pool(tmp_path: Path, source: str) -> None:
    """``--qrels data/run.jsonl`` (the run given as judgments) fails on the qrels at once:
    no index is built, no pool drawn, no progress shown."""
    cache = tmp_path / "cache"
    given = (
        ["--vault", VAULT, "--queries", QUERIES] if source == "vault" else [str(DATA / "run.jsonl")]
    )
    env = {**os.environ, "COLUMNS": "1000", "ASKKIT_CACHE_DIR": str(cache)}
    out = run_cli(["cut", *given, "--qrels", str(DATA / "run.jsonl")], env=env)
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr.count("\n") == 1, out.stderr  # the one error line, no progress
    assert out.stderr.startswith(f"askkit: error: {DATA / 'run.jsonl'}:1: ")
    assert "the run and the qrels files may be swapped" in out.stderr
    assert not cache.exists()  # no index was built


def test_issue41_3_cut_says_a_trec_run_lacks_what_it_needs_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A TREC run is read by the one run reader, which says what cut needs from a turn
    log instead of a JSON syntax error."""
    run = tmp_path / "run.trec"
    run.write_text("q01 Q0 projects/sourdough.md 1 2.5 askkit\n", encoding="utf-8")
    qrels = str(Path(__file__).resolve().parents[2] / "data" / "qrels.tsv")
    assert main(["cut", str(run), "--qrels", qrels]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "not valid JSON" not in err
    assert "a TREC run holds ranked documents only" in err
    assert "--vault DIR --queries TSV" in err
