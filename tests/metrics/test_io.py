"""askkit.metrics.io: judgments and runs on disk, and the document ids metrics compare."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from askkit.errors import SchemaError
from askkit.metrics import evaluate, read_run, write_run
from askkit.metrics.io import (
    QRELS_COLUMNS,
    decode_id,
    doc_ids,
    encode_id,
    qrels_doc_ids,
    read_qrels,
    read_trec_run,
    write_qrels,
)
from tests.conftest import DATA

QRELS = pd.DataFrame(
    {"query_id": ["q1", "q1", "q2"], "path": ["a.md", "b.md", "c.md"], "grade": [1, 3, 2]}
)

# --------------------------------------------------------------------------- document ids


@given(st.lists(st.text(alphabet=st.sampled_from("a%20 \t\n\r\x0b\x0c#é"), max_size=8)))
def test_encoded_ids_are_one_trec_column_and_decode_back(ids: list[str]) -> None:
    encoded = encode_id(pd.Series(ids, dtype="str"))
    assert not encoded.str.contains(r"\s", regex=True).any()
    assert decode_id(encoded).tolist() == ids


def test_doc_ids_at_note_and_section_level() -> None:
    run = pd.DataFrame(
        {
            "path": ["a.md", "j/2026-04-21.md", "b.md", "c.md"],
            "title": [" A\x1fBake log\x1f ", "2026-04-21", "B \u203a C\x1fD \u203a E", None],
            "match_heading": ["x", "y", "z", "From match"],
        }
    )
    assert doc_ids(run, "note").tolist() == ["a.md", "j/2026-04-21.md", "b.md", "c.md"]
    assert doc_ids(run, "section").tolist() == [
        "a.md#Bake log",  # trimmed, then the last non-empty segment
        "j/2026-04-21.md#2026-04-21",
        "b.md#D \u203a E",  # a heading may hold the display separator
        "c.md#From match",  # no title: the frame's match_heading
    ]
    only_match = run.drop(columns="title")
    assert doc_ids(only_match, "section").tolist()[0] == "a.md#x"
    given_doc = pd.DataFrame({"doc": ["x.md#H"], "path": ["ignored.md"]})
    assert doc_ids(given_doc, "note").tolist() == ["x.md#H"]


def test_doc_ids_say_which_column_is_missing() -> None:
    with pytest.raises(SchemaError, match="no 'path'"):
        doc_ids(pd.DataFrame({"title": ["A"]}), "note")
    with pytest.raises(SchemaError, match="'title' or 'match_heading'"):
        doc_ids(pd.DataFrame({"path": ["a.md"]}), "section")
    with pytest.raises(ValueError, match="level must be"):
        doc_ids(pd.DataFrame({"path": ["a.md"]}), "page")  # type: ignore[arg-type]


def test_qrels_doc_ids() -> None:
    qrels = read_qrels(QRELS.assign(heading=["H", "", "X"]))
    assert qrels_doc_ids(qrels, "note").tolist() == ["a.md", "b.md", "c.md"]
    assert qrels_doc_ids(qrels, "section").tolist() == ["a.md#H", "b.md", "c.md#X"]
    with pytest.raises(ValueError, match="level must be"):
        qrels_doc_ids(qrels, "page")  # type: ignore[arg-type]


def test_read_qrels_tsv_with_and_without_heading(tmp_path: Path) -> None:
    with_heading = read_qrels(DATA / "qrels.tsv")
    assert list(with_heading.columns) == ["query_id", "path", "heading", "grade"]
    assert with_heading["grade"].dtype == np.int64
    assert (with_heading["heading"] == "").sum() == 1  # q34's note has no heading
    plain = tmp_path / "plain.tsv"
    plain.write_text("query_id\tpath\tgrade\nq1\tNotes/A.md\t2\n", encoding="utf-8")
    got = read_qrels(plain)
    assert got.iloc[0].tolist() == ["q1", "Notes/A.md", "", 2]  # ids are exact by default
    assert read_qrels(plain, ids="vault").iloc[0].tolist() == ["q1", "notes/a.md", "", 2]


def test_read_qrels_trec(tmp_path: Path) -> None:
    """TREC qrels ids are opaque: never split on ``#``, never decoded."""
    path = tmp_path / "qrels.txt"
    path.write_text("q1 0 a.md#Bake%20log 2\nq1 Q0 b.md 0\n", encoding="utf-8")
    got = read_qrels(path)
    assert list(got.columns) == ["query_id", "path", "heading", "grade", "doc", "iteration"]
    assert got.values.tolist() == [
        ["q1", "a.md#Bake%20log", "", 2, "a.md#Bake%20log", "0"],
        ["q1", "b.md", "", 0, "b.md", "Q0"],
    ]
    assert qrels_doc_ids(got, "section").tolist() == ["a.md#Bake%20log", "b.md"]


@pytest.mark.parametrize("fmt", ["tsv"])
def test_write_read_round_trip(tmp_path: Path, fmt: str) -> None:
    qrels = pd.DataFrame(
        {
            "query_id": ["q 1", "q2", "q2"],
            "path": ["a.md", "b/c.md", "d.md"],
            "heading": ["Tab\there", 'He said "hi"', "50% done"],
            "grade": [0, 3, 1],
        }
    )
    target = tmp_path / f"qrels.{fmt}"
    write_qrels(qrels, target, format=fmt)  # type: ignore[arg-type]
    back = read_qrels(target)
    pd.testing.assert_frame_equal(back, read_qrels(qrels))


def test_write_qrels_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "qrels.tsv"
    write_qrels(QRELS, target)
    before = target.read_bytes()

    def boom(self: Path, other: Path) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(Path, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        write_qrels(QRELS.assign(grade=0), target)
    assert target.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["qrels.tsv"]  # no temporary file left


def test_bad_grade_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "q.tsv"
    path.write_text("query_id\tpath\theading\tgrade\nq1\ta.md\tX\t2\nq1\tb.md\tY\thigh\n")
    with pytest.raises(SchemaError) as info:
        read_qrels(path)
    assert info.value.line == 3
    assert info.value.field == "grade"
    assert str(path) in str(info.value)


def test_trec_run_round_trip(tmp_path: Path, local_run: pd.DataFrame) -> None:
    target = tmp_path / "run.txt"
    write_run(local_run, target, level="section", tag="bm25")
    line = target.read_text(encoding="utf-8").splitlines()[0].split(" ")
    assert len(line) == 6
    assert line[1] == "Q0"
    assert line[5] == "bm25"
    # the trec_eval workflow: both sides exported, their section ids encoded alike
    qrels_file = tmp_path / "qrels.txt"
    write_qrels(read_qrels(DATA / "qrels.tsv"), qrels_file, format="trec")
    a = evaluate(local_run, DATA / "qrels.tsv", ["ndcg@10", "map"], level="section")
    b = evaluate(read_run(target), qrels_file, ["ndcg@10", "map"], level="section")
    pd.testing.assert_frame_equal(a.per_query, b.per_query)
    assert a.mean["map"] > 0


def test_qrels_frames_are_checked_and_printed_as_vault_paths() -> None:
    frame = pd.DataFrame({"query_id": ["q1"], "path": ["Notes/A.md"], "grade": ["2"]})
    got = read_qrels(frame)
    assert dict(got.dtypes) == QRELS_COLUMNS
    assert got.iloc[0].tolist() == ["q1", "Notes/A.md", "", 2]
    assert read_qrels(frame, ids="vault").iloc[0].tolist() == ["q1", "notes/a.md", "", 2]
    with pytest.raises(SchemaError, match="need columns") as info:
        read_qrels(pd.DataFrame({"query_id": ["q1"], "grade": [1]}))
    assert info.value.value == ["path"]
    with pytest.raises(SchemaError, match="must not be empty") as info:
        read_qrels(pd.DataFrame({"query_id": ["q1", ""], "path": ["a.md", "b.md"], "grade": 1}))
    assert info.value.field == "query_id"
    with pytest.raises(SchemaError, match="an integer"):
        read_qrels(pd.DataFrame({"query_id": ["q1"], "path": ["a.md"], "grade": [1.5]}))


def test_read_qrels_of_an_empty_or_missing_file(tmp_path: Path) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_text("\n", encoding="utf-8")
    for fmt in ("auto", "tsv", "trec"):
        got = read_qrels(empty, format=fmt)
        assert len(got) == 0
        assert QRELS_COLUMNS.items() <= dict(got.dtypes).items()
    with pytest.raises(SchemaError, match="cannot read the qrels file"):
        read_qrels(tmp_path / "absent.tsv")
    with pytest.raises(ValueError, match="format must be"):
        write_qrels(QRELS, tmp_path / "q.x", format="json")  # type: ignore[arg-type]


def test_read_trec_run_columns_and_errors(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    path.write_text("q%201 Q0 a.md#Bake%20log 1 2.5 bm25\nq2 Q0 b.md 1 nan bm25\n", "utf-8")
    run = read_trec_run(path)
    assert list(run.columns) == ["turn_id", "doc", "rank", "score", "tag"]
    assert run["turn_id"].tolist() == ["q%201", "q2"]  # exact: never decoded
    assert run["doc"].tolist() == ["a.md#Bake%20log", "b.md"]
    assert run["rank"].dtype == np.int64
    assert run["score"].iloc[0] == 2.5
    assert np.isnan(run["score"].iloc[1])
    path.write_text("q1 Q0 a.md 1 2.5 bm25\nq1 Q0 b.md two 1.0 bm25\n", "utf-8")
    with pytest.raises(SchemaError, match="rank must be an integer") as info:
        read_trec_run(path)
    assert info.value.line == 2
    path.write_text("q1 Q0 a.md 1 2.5\n", "utf-8")
    with pytest.raises(SchemaError, match="expected at least 6 whitespace-separated fields"):
        read_trec_run(path)
    with pytest.raises(SchemaError, match="cannot read the run file"):
        read_trec_run(tmp_path / "absent.txt")


def test_write_run_needs_a_one_word_tag(tmp_path: Path) -> None:
    run = pd.DataFrame({"turn_id": ["q1"], "path": ["a.md"], "score": [1.0]})
    with pytest.raises(ValueError, match="one word"):
        write_run(run, tmp_path / "run.txt", tag="two words")
