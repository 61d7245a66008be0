"""``askkit run``: a question set retrieved from a vault and written as a run, as a user runs it.

The runs it writes are read back by ``askkit eval`` (and the readers ``diff``,
``report`` and ``why`` share) to the scores of the same retrieval computed in
Python; the writers round-trip; bad inputs are one line and exit status 2,
before any work; progress shows on a pipe.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from askkit.cli import main
from askkit.cli.run import JSONL_MARK, is_run_output, turn_log, write_output
from askkit.errors import SchemaError
from askkit.frame import sources_frame, to_turns
from askkit.gate import vault_side
from askkit.metrics import evaluate, ranked_run, read_run
from askkit.sources import AskSource, Turn, VaultPath
from askkit.testing.embed_servers import EmbedTestServer
from askkit.wire import ChunkResult
from tests.conftest import DATA, ROOT
from tests.strategies import chunks

VAULT = str(DATA / "vault")
QUERIES = str(DATA / "queries.tsv")
QRELS = str(DATA / "qrels.tsv")
MEASURES = ("ndcg@10", "mrr", "recall@10", "map")


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """askkit's cache for this test (and its subprocesses)."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("ASKKIT_CACHE_DIR", str(folder))
    return folder


def askkit(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``askkit ARGS`` in this process: (exit status, stdout, stderr)."""
    status = main(list(args))
    out = capsys.readouterr()
    return status, out.out, out.err


def command(*args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    """``askkit ARGS`` in a fresh process, stdout and stderr pipes."""
    env = {**os.environ, "ASKKIT_CACHE_DIR": str(cache), "COLUMNS": "80", "HF_HUB_OFFLINE": "1"}
    env.pop("ASKKIT_TRACEBACK", None)
    return subprocess.run(
        [sys.executable, "-m", "askkit.cli", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=300,
        check=False,
    )


def eval_scores(capsys: pytest.CaptureFixture[str], run: Path) -> dict[str, float]:
    """``askkit eval QRELS RUN -m ...``'s means, as printed."""
    status, out, err = askkit(capsys, "eval", QRELS, str(run), "-m", ",".join(MEASURES))
    assert status == 0, err
    rows = [line.split() for line in out.splitlines()]
    return {
        name: float(value)
        for name, query, value in rows
        if query == "all" and name not in {"level", "num_q"}
    }


def one_line(status: int, err: str) -> str:
    assert status == 2, err
    assert err.count("\n") == 1, err
    assert err.startswith("askkit: error: "), err
    assert "Traceback" not in err
    return err


# -- the runs written are the retrieval, as eval reads them ---------------------------------------


@pytest.mark.parametrize("name", ["run.trec", "run.jsonl"])
def test_issue41_3_a_run_reads_back_in_eval_with_the_scores_of_the_retrieval_in_python(
    name: str, tmp_path: Path, cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / name
    status, said, err = askkit(
        capsys, "run", "--vault", VAULT, "--queries", QUERIES, "-o", str(out)
    )
    assert status == 0, err
    assert "Retrieved 37 questions" in " ".join(said.split())
    assert f"to {out}" in " ".join(said.split())
    side = vault_side(VAULT, QUERIES, progress=False, store=False)
    expected = evaluate(side.frame, QRELS, list(MEASURES)).mean
    printed = eval_scores(capsys, out)
    assert set(printed) == set(MEASURES)
    for measure in MEASURES:
        assert printed[measure] == pytest.approx(float(expected[measure]), abs=5e-5), measure
    assert is_run_output(out)


def test_issue41_3_the_turn_log_is_one_turn_per_question_with_the_query_id(
    tmp_path: Path, cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "log.jsonl"
    status, said, err = askkit(
        capsys, "run", "--vault", VAULT, "--queries", QUERIES, "-o", str(out), "-k", "3"
    )
    assert status == 0, err
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    questions = pd.read_csv(QUERIES, sep="\t", dtype=str)
    assert [r["id"] for r in records] == questions["query_id"].tolist()
    assert [r["question"] for r in records] == questions["question"].tolist()
    assert all(1 <= len(r["chunks"]) <= 3 for r in records)
    assert all(list(r)[:1] == ["format"] and r["answer"] == "" for r in records)
    frame = sources_frame(out)  # the reader eval, diff, report and why share
    assert frame.groupby("turn_id").size().max() == 3
    assert "at most 3 chunks each" in " ".join(said.split())


def test_issue41_3_a_trec_run_at_section_level(
    tmp_path: Path, cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "sections.run"
    status, _, err = askkit(
        capsys, "run", "--vault", VAULT, "--queries", QUERIES, "-o", str(out), "--level", "section"
    )
    assert status == 0, err
    side = vault_side(VAULT, QUERIES, progress=False, store=False)
    written = read_run(out, decode=True)
    expected = ranked_run(side.frame, level="section")
    assert written["doc"].tolist() == expected["doc"].tolist()
    assert any("#" in doc for doc in written["doc"])


# -- the writers round-trip -----------------------------------------------------------------------

query_ids = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=6)


def _note_path(path: str) -> str:
    """``path`` as a vault's note path is written: printed by kimun's rules (which change
    some paths twice, ``journal/`` to ``journal``), so that reading it back keeps it."""
    printed = str(VaultPath(path))
    return printed if str(VaultPath(printed)) == printed else "note.md"


@st.composite
def runs(draw: st.DrawFn) -> tuple[dict[str, str], pd.DataFrame]:
    """Questions and, for some, the chunks retrieved for them (a sources frame)."""
    ids = draw(st.lists(query_ids, min_size=1, max_size=4, unique=True))
    queries = {qid: draw(st.text(max_size=12)) for qid in ids}
    turns = {}
    for qid in ids:
        found = draw(st.lists(chunks(), max_size=4))
        found = [
            ChunkResult(**{**c.to_dict(), "path": _note_path(c.path), "ordinal": c.ordinal % 2**63})
            for c in found
        ]
        if found:
            turns[qid] = Turn(queries[qid], "", AskSource.from_chunks(found))
    frame = sources_frame(turns) if turns else pd.DataFrame()
    return queries, frame


def _wire(turns: dict[str, Turn]) -> dict[str, list[dict[str, Any]]]:
    return {qid: [s.to_chunk().to_dict() for s in t.sources] for qid, t in turns.items()}


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(run=runs())
def test_issue41_3_a_turn_log_reads_back_exactly_what_was_written(
    run: tuple[dict[str, str], pd.DataFrame], tmp_path: Path
) -> None:
    queries, frame = run
    path = tmp_path / "log.jsonl"
    write_output(str(path), frame, queries)
    lines = path.read_text(encoding="utf-8").split("\n")  # JSON leaves U+2028 and such raw
    assert lines.pop() == ""
    assert all(line.startswith(JSONL_MARK + ",") for line in lines)
    assert [json.loads(line)["id"] for line in lines] == list(queries)
    assert [json.loads(line)["question"] for line in lines] == list(queries.values())
    back = sources_frame(path)
    written = to_turns(frame) if len(frame) else {}
    assert _wire(to_turns(back) if len(back) else {}) == _wire(written)
    assert is_run_output(path)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(run=runs(), level=st.sampled_from(["note", "section"]))
def test_issue41_3_a_trec_run_reads_back_exactly_what_was_written(
    run: tuple[dict[str, str], pd.DataFrame], level: str, tmp_path: Path
) -> None:
    queries, frame = run
    path = tmp_path / "run.trec"
    path.unlink(missing_ok=True)
    if not len(frame):
        return
    try:
        write_output(str(path), frame, queries, level=level)  # type: ignore[arg-type]
    except SchemaError:  # an id a TREC file cannot hold: refused, nothing written
        assert not path.exists()
        return
    back = read_run(path, decode=True)
    expected = ranked_run(frame, level=level)  # type: ignore[arg-type]
    assert back["turn_id"].tolist() == expected["query_id"].tolist()
    assert back["doc"].tolist() == expected["doc"].tolist()
    assert back["rank"].tolist() == expected["rank"].tolist()
    assert back["score"].tolist() == expected["score"].tolist()
    assert set(back["tag"]) == {"askkit"}
    assert is_run_output(path)


def test_a_question_that_retrieved_nothing_is_a_turn_without_chunks(tmp_path: Path) -> None:
    text = turn_log({"q1": "starter?", "q2": "nothing"}, pd.DataFrame())
    assert [json.loads(line)["chunks"] for line in text.splitlines()] == [[], []]


# -- bad inputs: one line, exit 2, nothing done -------------------------------------------------


def test_issue41_3_bad_inputs_are_one_line_and_exit_2(
    tmp_path: Path, cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty.tsv"
    empty.write_text("")
    header = tmp_path / "header.tsv"
    header.write_text("query_id\tquestion\n")
    out = str(tmp_path / "run.trec")
    base = ("run", "--vault", VAULT)
    cases = {
        "missing queries": (
            (*base, "--queries", str(tmp_path / "nope.tsv"), "-o", out),
            "nope.tsv",
        ),
        "empty queries": ((*base, "--queries", str(empty), "-o", out), "empty"),
        "a header alone": ((*base, "--queries", str(header), "-o", out), "no queries"),
        "unknown suffix": (
            (*base, "--queries", QUERIES, "-o", str(tmp_path / "run.csv")),
            "unknown format '.csv'",
        ),
        "no suffix": ((*base, "--queries", QUERIES, "-o", str(tmp_path / "run")), "(no suffix)"),
        "a level for a log": (
            (*base, "--queries", QUERIES, "-o", str(tmp_path / "r.jsonl"), "--level", "note"),
            "--level applies to a TREC run",
        ),
        "a reranker alone": (
            (*base, "--queries", QUERIES, "-o", out, "--reranker", "fastembed"),
            "give --embedder too",
        ),
        "no vault": (
            ("run", "--vault", str(tmp_path / "none"), "--queries", QUERIES, "-o", out),
            "no such folder",
        ),
        "missing -o": ((*base, "--queries", QUERIES), "-o"),
    }
    for name, (args, said) in cases.items():
        status, _, err = askkit(capsys, *args)
        assert said in one_line(status, err), (name, err)
    assert not (tmp_path / "run.trec").exists()
    assert not cache.exists()  # checked before any index was built


def test_issue41_3_a_file_askkit_did_not_write_is_replaced_only_with_force(
    tmp_path: Path, cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mine = tmp_path / "notes.txt"
    mine.write_text("my own notes\n")
    args = ("run", "--vault", VAULT, "--queries", QUERIES, "-o", str(mine))
    status, _, err = askkit(capsys, *args)
    assert "not a run askkit run wrote" in one_line(status, err)
    assert mine.read_text() == "my own notes\n"
    assert not cache.exists()  # refused before any work
    foreign_log = tmp_path / "kimun.jsonl"
    foreign_log.write_text('{"id": "q01", "question": "?", "answer": "", "chunks": []}\n')
    status, _, err = askkit(
        capsys, "run", "--vault", VAULT, "--queries", QUERIES, "-o", str(foreign_log)
    )
    one_line(status, err)
    status, _, err = askkit(capsys, *args, "--force")
    assert status == 0, err
    assert is_run_output(mine)
    status, _, err = askkit(capsys, *args)  # its own run: replaced
    assert status == 0, err


# -- progress on a pipe, and the shared store -----------------------------------------------------


def test_issue41_2_run_embedding_on_a_pipe_prints_a_line_every_few_seconds(
    tmp_path: Path,
) -> None:
    """A slow embedder (each batch 2 s): lines on the pipe, never a bar redrawn in place."""
    with EmbedTestServer(dim=8) as server:
        server.fail("slow", delay=2.0, skip=1)  # the probe answers at once
        spec = f"ollama:{server.url}:nomic-embed-text"
        out = command(
            *("run", "--vault", VAULT, "--queries", QUERIES, "--embedder", spec),
            *("-o", str(tmp_path / "r.trec")),
            cache=tmp_path / "cache",
        )
    assert out.returncode == 0, out.stderr
    assert "\r" not in out.stderr
    lines = [line for line in out.stderr.splitlines() if line.startswith("embedding (")]
    assert len(lines) >= 3, out.stderr  # the first state, at least one 5 s later, the last
    assert all(re.search(r"\d+% \d+/480 \[\d\d:\d\d<", line) for line in lines), lines
    assert "480/480" in lines[-1]
    assert "Embedded 480 of 480 chunks" in " ".join(out.stdout.split())


def test_issue41_3_a_trec_run_of_paths_with_spaces_meets_judgments_that_hold_the_paths(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A TREC file must percent-encode a path holding a space (``my%20note.md``); the
    judgments the Labeler writes hold the path as kimun prints it. eval, diff and report score the
    TREC run of ``askkit run`` against them as its turn log scores, and say why."""
    monkeypatch.setenv("ASKKIT_CACHE_DIR", str(tmp_path / "cache"))
    vault = tmp_path / "vault"
    (vault / "Baking notes").mkdir(parents=True)
    (vault / "Baking notes" / "my starter.md").write_text(
        "# Sourdough starter\n\nFeed the starter flour and water every day.\n", encoding="utf-8"
    )
    (vault / "other.md").write_text("# Other\n\nNothing about bread here.\n", encoding="utf-8")
    queries = tmp_path / "queries.tsv"
    queries.write_text("query_id\tquestion\nq1\tfeed the starter\n", encoding="utf-8")
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text("query_id\tpath\tgrade\nq1\tbaking notes/my starter.md\t2\n", "utf-8")
    trec, log = tmp_path / "run.trec", tmp_path / "run.jsonl"
    for out in (trec, log):
        argv = ["run", "--vault", str(vault), "--queries", str(queries), "-o", str(out)]
        assert main(argv) == 0
    assert "baking%20notes/my%20starter.md" in trec.read_text(encoding="utf-8")
    capsys.readouterr()
    for run in (trec, log):
        assert main(["eval", str(qrels), str(run), "-m", "ndcg@10"]) == 0
        out = capsys.readouterr()
        assert re.search(r"ndcg@10\s+all\s+1\.0000", out.out), (run, out.out)
        assert ("percent-encoded" in out.err) == (run == trec)
    assert main(["diff", str(trec), str(log), "--qrels", str(qrels)]) == 0
    assert "read as the paths they name" in capsys.readouterr().out
    page = tmp_path / "report.html"
    assert main(["report", str(trec), "--qrels", str(qrels), "-o", str(page)]) == 0
    assert "read as the paths they name" in page.read_text(encoding="utf-8")
