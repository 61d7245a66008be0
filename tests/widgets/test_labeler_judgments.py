"""Labeler: a save keeps every column and row the user wrote, and the grade shown is
the one evaluate uses."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest

from askkit import AskSource, VaultPath
from askkit.errors import SchemaError
from askkit.metrics import evaluate, read_qrels
from askkit.widgets import Labeler, SourceReader
from askkit.widgets._qrels import (
    load_judgments,
    load_questions,
    question_id,
    question_key,
    question_text,
    questions_path,
    record_questions,
    save_judgments,
    update_judgments,
)

HEADER = "query_id\tpath\theading\tgrade"


def shown(path: str, heading: str) -> SourceReader:
    reader = SourceReader()
    reader.show(AskSource(VaultPath(path), heading, None, 0.5, "x", 1))
    return reader


def test_a_labeler_save_keeps_a_column_the_user_added(tmp_path: Path) -> None:
    """A ``notes`` column was dropped by the first grade of a session."""
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text(
        "query_id\tpath\theading\tgrade\tnotes\n"
        "q1\ta.md\tA\t3\tthe recipe itself\n"
        'q1\tb.md\t\t0\toff topic, "spam"\n',
        encoding="utf-8",
    )
    labeler = Labeler(qrels, shown("c.md", "C"), query_id="q1")
    assert labeler.grade(2)
    back = read_qrels(qrels, extra_columns=True)
    assert list(back.columns) == ["query_id", "path", "heading", "grade", "notes"]
    assert back.values.tolist() == [
        ["q1", "a.md", "A", 3, "the recipe itself"],
        ["q1", "b.md", "", 0, 'off topic, "spam"'],
        ["q1", "c.md", "C", 2, ""],
    ]


def test_a_labeler_save_keeps_a_column_in_the_users_order(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text("notes\tgrade\tpath\tquery_id\nmine\t1\ta.md\tq1\n", encoding="utf-8")
    assert Labeler(qrels, shown("a.md", ""), query_id="q1").grade(3)
    assert qrels.read_text(encoding="utf-8") == (
        "notes\tgrade\tpath\theading\tquery_id\nmine\t3\ta.md\t\tq1\n"
    )


def test_grading_an_unrelated_source_keeps_duplicate_rows_and_the_scores(tmp_path: Path) -> None:
    """``a.md 3, a.md 1`` became ``a.md 1``: nDCG@10 went from 0.913 to 1.000."""
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text(f"{HEADER}\nq1\ta.md\t\t3\nq1\tb.md\t\t2\nq1\ta.md\t\t1\n", encoding="utf-8")
    before = qrels.read_text(encoding="utf-8")
    run = pd.DataFrame({"turn_id": "q1", "path": ["b.md", "a.md"], "score": [2.0, 1.0]})
    ndcg = evaluate(run, qrels, ["ndcg@10"]).mean["ndcg@10"]
    assert round(ndcg, 3) == 0.913
    labeler = Labeler(qrels, shown("z.md", "Z"), query_id="q9")
    assert labeler.grade(0)
    assert qrels.read_text(encoding="utf-8") == before + "q9\tz.md\tZ\t0\n"
    assert evaluate(run, qrels, ["ndcg@10"]).mean["ndcg@10"] == ndcg


def test_the_labeler_shows_the_grade_evaluate_uses(tmp_path: Path) -> None:
    """Two rows for one key: evaluate takes the highest grade, so the Labeler shows it
    (it showed the last row's)."""
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text(f"{HEADER}\nq1\ta.md\tA\t3\nq1\ta.md\tA\t1\n", encoding="utf-8")
    labeler = Labeler(qrels, shown("a.md", "A"), query_id="q1")
    assert labeler.current_grade() == 3
    assert load_judgments(qrels) == {("q1", "a.md", "A"): 3}
    assert labeler.grade_buttons[3].button_style == "success"


def test_a_regrade_of_a_key_with_duplicate_rows_is_the_grade_evaluate_uses(
    tmp_path: Path,
) -> None:
    """Regrading a key judged twice sets the grade of both rows (each row and its other
    columns kept), so the new grade is the one evaluate scores with."""
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text(
        f"{HEADER}\tnotes\nq1\ta.md\tA\t3\tfirst\nq1\tb.md\t\t1\t\nq1\ta.md\tA\t1\tsecond\n",
        encoding="utf-8",
    )
    labeler = Labeler(qrels, shown("a.md", "A"), query_id="q1")
    assert labeler.grade(0)
    assert labeler.current_grade() == 0
    assert read_qrels(qrels, extra_columns=True).values.tolist() == [
        ["q1", "a.md", "A", 0, "first"],
        ["q1", "b.md", "", 1, ""],
        ["q1", "a.md", "A", 0, "second"],
    ]
    run = pd.DataFrame({"turn_id": "q1", "path": ["a.md"], "title": ["A"], "score": [1.0]})
    assert evaluate(run, qrels, ["mrr"], level="section").mean["mrr"] == 0.0


def test_save_judgments_replaces_the_grades_and_keeps_the_columns_of_the_rows_kept(
    tmp_path: Path,
) -> None:
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text(
        f"{HEADER}\tnotes\nq1\ta.md\t\t3\tkeep me\nq1\tb.md\t\t1\tgone\n", encoding="utf-8"
    )
    save_judgments(qrels, {("q2", "c.md", "C"): 2, ("q1", "a.md", ""): 1})
    assert read_qrels(qrels, extra_columns=True).values.tolist() == [
        ["q2", "c.md", "C", 2, ""],
        ["q1", "a.md", "", 1, "keep me"],
    ]
    assert load_judgments(qrels) == {("q2", "c.md", "C"): 2, ("q1", "a.md", ""): 1}


def test_update_judgments_returns_what_the_file_holds(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text(f"{HEADER}\nq1\ta.md\t\t3\nq1\ta.md\t\t1\n", encoding="utf-8")
    merged = update_judgments(qrels, {("q1", "b.md", ""): 2})
    assert merged == load_judgments(qrels) == {("q1", "a.md", ""): 3, ("q1", "b.md", ""): 2}


def test_a_fifo_or_device_given_as_the_judgments_file_is_refused(tmp_path: Path) -> None:
    """Never waits on a FIFO, never takes /dev/null for an empty judgments file it may
    replace: a SchemaError naming the file and what it is."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for path, kind in ((str(fifo), "a FIFO"), ("/dev/null", "a character device")):
        with pytest.raises(SchemaError, match=f"the qrels file is {kind}") as info:
            Labeler(path, SourceReader(), query_id="q")
        assert info.value.file == path
        with pytest.raises(SchemaError, match=kind):
            update_judgments(path, {("q", "a.md", ""): 1})
    assert fifo.exists()
    assert Path("/dev/null").is_char_device()


# --------------------------------------------------------------------------- issue 40


@pytest.mark.parametrize(
    ("question", "slug"),
    [
        ("embed a note", "embed-a-note"),
        ("  Embed\ta   NOTE \n", "embed-a-note"),  # whitespace and case aside: one question
        ("Café au lait?", "cafe-au-lait"),  # accents dropped from the slug only
        ("keyboard shortcut for the command palette", "keyboard-shortcut-for-the-command"),
        ("日本語のノート", "q"),
        ("", "q"),
    ],
)
def test_issue40_11_question_ids_follow_one_documented_rule(question: str, slug: str) -> None:
    import hashlib

    qid = question_id(question)
    key = " ".join(question.split()).casefold()
    assert qid == f"{slug}-{hashlib.sha256(key.encode()).hexdigest()[:8]}"
    assert len(qid) <= 40 + 9
    assert question_id(question) == qid  # stable
    assert "\t" not in qid
    assert " " not in qid


def test_issue40_11_question_ids_tell_questions_apart() -> None:
    assert question_id("Café au lait?") != question_id("Cafe au lait?")  # the digits differ
    long = "keyboard shortcut for the command palette"
    assert question_id(long) != question_id(long + " on a mac")
    assert question_key("  Embed\ta   NOTE ") == question_key("embed a note")
    assert question_text("  Embed\ta   NOTE \n") == "Embed a NOTE"


def test_issue40_11_questions_are_recorded_beside_the_judgments_keeping_the_file(
    tmp_path: Path,
) -> None:
    qrels = tmp_path / "judgments.tsv"
    questions = questions_path(qrels)
    assert questions == tmp_path / "judgments.queries.tsv"
    key = ("q-a", "a.md", "A")
    update_judgments(qrels, {key: 2}, {"q-a": "first  question\t?"})
    assert questions.read_text(encoding="utf-8") == "query_id\tquestion\nq-a\tfirst question ?\n"
    # a file the user edited: its bytes kept, its columns' order followed, its ids kept
    questions.write_text(
        "question\tquery_id\tnotes\nfirst question ?\tq-a\tmine\n", encoding="utf-8"
    )
    assert not record_questions(questions, {"q-a": "another text for the same id"})
    assert record_questions(questions, {"q-b": "second"})
    assert questions.read_text(encoding="utf-8") == (
        "question\tquery_id\tnotes\nfirst question ?\tq-a\tmine\nsecond\tq-b\t\n"
    )
    assert load_questions(questions) == {"q-a": "first question ?", "q-b": "second"}
    assert load_questions(tmp_path / "absent.tsv") == {}
    (tmp_path / "blank.tsv").write_text("query_id\tquestion\n", encoding="utf-8")
    assert load_questions(tmp_path / "blank.tsv") == {}  # a header alone


def test_issue40_11_a_malformed_questions_file_is_never_overwritten(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.tsv"
    questions = questions_path(qrels)
    questions.write_text("not\ta queries file\n", encoding="utf-8")
    with pytest.raises(SchemaError, match="queries TSV"):
        update_judgments(qrels, {("q", "a.md", ""): 1}, {"q": "question"})
    assert questions.read_text(encoding="utf-8") == "not\ta queries file\n"
    assert not qrels.exists()  # no judgment written without its question
    with pytest.raises(SchemaError, match="tab or a line break"):
        record_questions(tmp_path / "new.tsv", {"a\tb": "q"})
