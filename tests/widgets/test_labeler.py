"""Labeler: grades go to a qrels TSV atomically; nothing earlier is lost; reload on start."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from askkit import AskSource, VaultPath, read_turn
from askkit.errors import SchemaError
from askkit.metrics import read_qrels
from askkit.widgets import Explorer, Labeler, SourceReader, TurnView, read_queries
from askkit.widgets._qrels import (
    judgment_key,
    load_judgments,
    load_questions,
    question_id,
    save_judgments,
)
from tests.conftest import DATA, ROOT


def source(path: str, heading: str, n: int = 1) -> AskSource:
    return AskSource(VaultPath(path), heading, None, 0.5, "text", n)


def test_grade_buttons_write_the_file(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.tsv"
    reader = SourceReader()
    lab = Labeler(qrels, reader, query_id="q01")
    assert all(b.disabled for b in lab.grade_buttons)
    lab.grade(2)  # nothing shown: nothing written
    assert not qrels.exists()
    assert "nothing to grade" in lab.status_html.value
    reader.show(source("projects/sourdough.md", "Sourdough › Starter › Feeding schedule"))
    lab.grade_buttons[3].click()
    assert qrels.read_text() == (
        "query_id\tpath\theading\tgrade\nq01\tprojects/sourdough.md\tFeeding schedule\t3\n"
    )
    assert lab.grade_buttons[3].button_style == "success"
    assert lab.current_grade() == 3
    lab.grade_buttons[1].click()  # a regrade replaces, it does not duplicate
    assert load_judgments(qrels) == {("q01", "projects/sourdough.md", "Feeding schedule"): 1}
    with pytest.raises(ValueError, match="grade"):
        lab.grade(4)


def test_keys_grade_and_move(tmp_path: Path) -> None:
    turn = read_turn(DATA / "answer_job.json", question="How often do I feed the starter?")
    view = TurnView(turn)
    lab = Labeler(tmp_path / "q.tsv", view, query_id="q01")
    view.open_citation(1)
    lab.keys_box.value = "2"
    assert lab.keys_box.value == ""
    lab.keys_box.value = "n"
    assert lab.source is not None
    assert lab.source.ordinal != 1
    lab.keys_box.value = "0"
    lab.keys_box.value = "p"
    assert lab.source is not None
    assert lab.source.ordinal == 1
    assert lab.current_grade() == 2
    assert len(load_judgments(tmp_path / "q.tsv")) == 2


def test_query_id_follows_the_reader_through_queries_tsv(tmp_path: Path) -> None:
    queries = read_queries(DATA / "queries.tsv")
    question = queries["q02"]
    ex = Explorer(
        lambda q: [
            {"path": "a.md", "title": "A", "content": "x", "hash": "h", "similarity_score": 1.0}
        ]
    )
    lab = Labeler(tmp_path / "q.tsv", ex, queries=DATA / "queries.tsv")
    ex.search(question)
    assert lab.query_id == "q02"
    ex.search("free text")
    assert lab.query_id == question_id("free text")  # a question the TSV does not hold
    lab.grade(1)
    assert load_judgments(tmp_path / "q.tsv") == {(question_id("free text"), "a.md", "A"): 1}


def test_reloads_on_start_and_never_loses_earlier_judgments(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text((DATA / "qrels.tsv").read_text())
    before = load_judgments(qrels)
    reader = SourceReader()
    reader.show(source("projects/sourdough.md", "Sourdough › Starter › Feeding schedule"))
    first = Labeler(qrels, reader, query_id="q01")
    assert first.current_grade() == 3  # judged in the file already
    other_reader = SourceReader()
    other_reader.show(source("notes/new.md", "New"))
    second = Labeler(qrels, other_reader, query_id="q99")  # started before first writes
    first.grade(1)
    second.grade(2)  # merges into the file as it is now, keeping first's grade
    after = load_judgments(qrels)
    assert after[("q01", "projects/sourdough.md", "Feeding schedule")] == 1
    assert after[("q99", "notes/new.md", "New")] == 2
    for key, grade in before.items():
        if key != ("q01", "projects/sourdough.md", "Feeding schedule"):
            assert after[key] == grade
    assert len(after) == len(before) + 1
    assert len(read_qrels(qrels)) == len(after)


def test_keys_are_the_innermost_heading_and_printed_path() -> None:
    src = AskSource(
        VaultPath("J//2026-04-08.md"),
        "A › B",
        "2026-04-08",
        0.1,
        "x",
        1,
        title="2026-04-08\x1fA\x1fB",
    )
    assert judgment_key("q", src) == ("q", "j/2026-04-08.md", "B")
    journal = AskSource(VaultPath("j/2026-03-29.md"), "", "2026-03-29", 0.1, "x", 1)
    assert judgment_key("q", journal) == ("q", "j/2026-03-29.md", "")


def test_odd_fields_round_trip(tmp_path: Path) -> None:
    qrels = tmp_path / "q.tsv"
    judgments = {("q 1", "a.md", "tab\there"): 0, ("q2", "b.md", ""): 3}
    save_judgments(qrels, judgments)
    assert load_judgments(qrels) == judgments
    with pytest.raises(ValueError, match="0-3"):
        save_judgments(qrels, {("q", "a.md", ""): 7})


def test_a_malformed_file_is_never_overwritten(tmp_path: Path) -> None:
    qrels = tmp_path / "q.tsv"
    qrels.write_text("not\ta\tqrels\n")
    reader = SourceReader()
    with pytest.raises(SchemaError):
        Labeler(qrels, reader, query_id="q")
    assert qrels.read_text() == "not\ta\tqrels\n"


def test_labeler_needs_a_reader() -> None:
    with pytest.raises(TypeError, match="SourceReader"):
        Labeler("q.tsv", object())


WRITER = textwrap.dedent(
    """
    import os, sys, time
    import askkit._atomic
    from askkit.widgets._qrels import save_judgments

    real_fsync = os.fsync

    def slow_fsync(fd):  # a slow disk: the temporary file is written, not yet renamed
        print("in-write", flush=True)
        time.sleep(0.2)
        real_fsync(fd)

    askkit._atomic.os.fsync = slow_fsync
    path = sys.argv[1]
    base = {(f"q{i:05d}", f"notes/n{i}.md", f"Heading {i}"): i % 4 for i in range(20000)}
    n = 0
    while True:
        n += 1
        base[(f"extra{n}", "x.md", "")] = n % 4
        save_judgments(path, base)
        print("written", n, flush=True)
    """
)


@pytest.mark.slow
@pytest.mark.parametrize("writes_before_kill", [1, 2, 5])
def test_a_writer_killed_mid_write_leaves_the_file_intact(
    tmp_path: Path, writes_before_kill: int
) -> None:
    """SIGKILL a process that rewrites the qrels file in a loop, inside a write."""
    qrels = tmp_path / "qrels.tsv"
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, str(script), str(qrels)], stdout=subprocess.PIPE, text=True, env=env
    )
    assert proc.stdout is not None
    written = 0
    try:
        while True:
            line = proc.stdout.readline()
            assert line, "the writer died on its own"
            if line.startswith("written"):
                written += 1
            elif written >= writes_before_kill:
                break  # inside a write: the temporary file is written, not yet renamed
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    # killed inside the temporary's fsync: an unnamed temporary goes with its process
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []
    judgments = load_judgments(qrels)  # parses: the last whole file
    assert len(judgments) == 20000 + written
    assert judgments[("q00000", "notes/n0.md", "Heading 0")] == 0
    assert qrels.read_text().endswith("\n")
    assert len(read_qrels(qrels)) == len(judgments)
    # a Labeler starting on the file now finds every judgment
    reader = SourceReader()
    assert len(Labeler(qrels, reader, query_id="q").judgments) == len(judgments)


# --------------------------------------------------------------------------- issue 40


def enter(explorer: Explorer, question: str) -> None:
    """Type ``question`` in the Explorer's box and press Enter, as the browser sends it."""
    box = explorer.query_box
    box._handle_msg(
        {
            "content": {"data": {"method": "update", "state": {"value": question}}},
            "buffers": [],
        }
    )
    box._handle_msg(
        {"content": {"data": {"method": "custom", "content": {"event": "submit"}}}, "buffers": []}
    )
    assert explorer.wait(30)


FEED = "how often should I feed the sourdough starter"
RYE = "what hydration for a rye loaf"


def test_issue40_11_the_labeler_grades_what_the_explorer_shows(tmp_path: Path) -> None:
    from askkit.retrieve.local import LocalIndex

    qrels = tmp_path / "my-qrels.tsv"
    ex = Explorer(LocalIndex(DATA / "vault", cache_dir=False, progress=False), DATA / "vault")
    ex.settle = 0.0
    labeler = Labeler(qrels, ex)  # the notebook's call, exactly
    assert labeler.key() is None  # nothing asked yet: nothing to grade
    enter(ex, FEED)
    first, second = ex.sources[0], ex.sources[1]
    assert labeler.source == ex.reader.source == first  # the source open in the reader
    assert labeler.query_id == question_id(FEED)
    assert FEED in labeler.question_html.value
    assert labeler.grade(3)
    ex.view._rows[1].button.click()  # the user clicks the next result
    assert labeler.source == second
    labeler.keys_box.value = "1"
    enter(ex, RYE)  # a new question
    assert labeler.query_id == question_id(RYE)
    assert labeler.source == ex.sources[0]
    labeler.grade_buttons[2].click()
    assert load_judgments(qrels) == {
        judgment_key(question_id(FEED), first): 3,
        judgment_key(question_id(FEED), second): 1,
        judgment_key(question_id(RYE), ex.sources[0]): 2,
    }
    queries = qrels.with_name("my-qrels.queries.tsv")  # the questions, beside the judgments
    assert queries.read_text(encoding="utf-8") == (
        f"query_id\tquestion\n{question_id(FEED)}\t{FEED}\n{question_id(RYE)}\t{RYE}\n"
    )
    assert read_queries(queries) == {question_id(FEED): FEED, question_id(RYE): RYE}
    # the file the user named, its questions and the lock: nothing else, nothing temporary
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".my-qrels.tsv.lock",
        "my-qrels.queries.tsv",
        "my-qrels.tsv",
    ]
    again = Labeler(qrels, ex)  # a new session finds the grades
    assert again.current_grade() == 2


def test_issue40_11_a_later_session_keeps_the_ids_it_recorded(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.tsv"
    qrels.with_name("qrels.queries.tsv").write_text(
        f"query_id\tquestion\nfeeding\t{FEED}\n", encoding="utf-8"
    )
    ex = Explorer(
        lambda q: [
            {"path": "a.md", "title": "A", "content": "x", "hash": "h", "similarity_score": 1.0}
        ]
    )
    labeler = Labeler(qrels, ex)
    ex.search("How often should I  feed the sourdough starter")  # case and spaces aside
    assert labeler.query_id == "feeding"  # the id recorded (or renamed) there
    assert labeler.grade(2)
    assert load_questions(qrels.with_name("qrels.queries.tsv")) == {"feeding": FEED}


def test_issue40_11_a_users_queries_tsv_gives_its_ids_and_is_only_read(tmp_path: Path) -> None:
    users = tmp_path / "queries.tsv"
    users.write_bytes((DATA / "queries.tsv").read_bytes())
    before = users.read_bytes()
    question = read_queries(users)["q02"]
    ex = Explorer(
        lambda q: [
            {"path": "a.md", "title": "A", "content": "x", "hash": "h", "similarity_score": 1.0}
        ]
    )
    labeler = Labeler(tmp_path / "qrels.tsv", ex, queries=users)
    ex.search(question.upper())
    assert labeler.query_id == "q02"
    assert labeler.grade(1)
    assert not (tmp_path / "qrels.queries.tsv").exists()  # q02 is the user's, recorded there
    ex.search("a question of my own")
    assert labeler.grade(2)
    assert users.read_bytes() == before  # never written
    assert load_questions(tmp_path / "qrels.queries.tsv") == {
        question_id("a question of my own"): "a question of my own"
    }


def test_issue40_11_a_late_result_never_changes_the_question_graded(tmp_path: Path) -> None:
    import threading

    release = threading.Event()

    def retrieve(query: str, k: int = 10) -> list[dict[str, object]]:
        if query == "late":
            assert release.wait(30)
        return [
            {
                "path": f"{query}-{i}.md",
                "title": "T",
                "content": "x",
                "hash": "h",
                "similarity_score": 1.0 - i / 10,
            }
            for i in range(3)
        ]

    ex = Explorer(retrieve)
    ex.settle = 0.0
    labeler = Labeler(tmp_path / "qrels.tsv", ex)
    ex.search("shown")
    ex.submit("late")  # runs, then is superseded before it shows
    ex.query_box.value = ""
    ex.ask()  # an empty box asks nothing, but supersedes what runs
    release.set()
    assert ex.wait(30)
    for thread in threading.enumerate():
        if thread.name == "askkit-explorer-search":
            thread.join(30)
    assert ex.history[-1].query == "late"  # in the history, not shown
    assert [str(s.path) for s in ex.sources] == ["shown-0.md", "shown-1.md", "shown-2.md"]
    ex.view._rows[2].button.click()
    assert ex.reader.query == "shown"
    assert labeler.query_id == question_id("shown")
    assert labeler.grade(0)
    assert load_judgments(tmp_path / "qrels.tsv") == {(question_id("shown"), "shown-2.md", "T"): 0}
