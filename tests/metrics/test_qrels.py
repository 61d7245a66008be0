"""askkit.metrics.qrels: judgments on disk, TSV and TREC, read and written back."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from askkit.errors import SchemaError
from askkit.metrics.ids import qrels_doc_ids
from askkit.metrics.qrels import QRELS_COLUMNS, read_qrels, write_qrels
from tests.conftest import DATA

QRELS = pd.DataFrame(
    {"query_id": ["q1", "q1", "q2"], "path": ["a.md", "b.md", "c.md"], "grade": [1, 3, 2]}
)


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
