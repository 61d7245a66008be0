"""Every writer of askkit.metrics reads back what it wrote: any ids, rows in any order,
ties, duplicates, extra columns, any row labels."""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from askkit.errors import SchemaError
from askkit.metrics import ranked_run, read_qrels, read_run, write_qrels, write_run
from askkit.metrics.ids import decode_id, qrels_doc_ids, trec_id
from tests.metrics.strategies import extra_names, headings, ids, labels, scores

#: What a TREC reader splits fields on, so what a TREC writer encodes.
SPLIT = "[ \t\n\r\x0b\x0c]"
FEW = settings(max_examples=max(10, settings().max_examples // 2))


def ambiguous(values: pd.Series) -> bool:
    """The documented refusal: an id is percent-encoded, and another, written as it
    is, holds a percent code decoding would change."""
    spaced = values.str.contains(SPLIT, regex=True).to_numpy(dtype=bool)
    raw = values[~spaced]
    return bool(spaced.any()) and bool((decode_id(raw) != raw).any())


#: A TREC run holds finite scores only: write_run refuses NaN and infinities, as
#: read_run does (test_runs.py's hardening_39 tests).
finite_scores = scores.filter(math.isfinite)


def score_text(value: float) -> str:
    return repr(value)


def rows_of(frame: pd.DataFrame, qid: str, rank: str = "rank") -> set[tuple[str, str, int, str]]:
    return set(
        zip(
            frame[qid].tolist(),
            frame["doc"].tolist(),
            frame[rank].tolist(),
            [score_text(s) for s in frame["score"].tolist()],
            strict=True,
        )
    )


@st.composite
def runs(draw: st.DrawFn) -> tuple[pd.DataFrame, str]:
    """A sources-like run: a few queries and documents, tied finite scores, repeated
    chunks, extra columns, any row labels; and the level to write it at."""
    qids = draw(st.lists(ids, min_size=1, max_size=3, unique=True))
    docs = draw(st.lists(ids, min_size=1, max_size=4, unique=True))
    rows = draw(
        st.lists(
            st.tuples(st.sampled_from(qids), st.sampled_from(docs), finite_scores, headings),
            min_size=1,
            max_size=10,
        )
    )
    level = draw(st.sampled_from(["note", "section"]))
    frame = pd.DataFrame(
        {
            "turn_id": [r[0] for r in rows],
            "path": [r[1] for r in rows],
            "score": [r[2] for r in rows],
            "title": [r[3] for r in rows],
        },
        index=draw(labels(len(rows))),
    )
    for name in draw(extra_names):
        frame[name] = draw(st.lists(ids, min_size=len(rows), max_size=len(rows)))
    return frame, level


@FEW
@given(runs(), st.booleans())
def test_write_run_reads_back_each_query_and_document_with_its_own_rank_and_score(
    drawn: tuple[pd.DataFrame, str], input_ties: bool
) -> None:
    run, level = drawn
    before = run.copy()
    ties = "input" if input_ties else "trec"
    ranked = ranked_run(run, level=level, ties=ties)  # type: ignore[arg-type]
    every_id = pd.concat([ranked["query_id"], ranked["doc"]], ignore_index=True)
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "run.trec"
        if ranked["query_id"].str.startswith("#").any() or ambiguous(every_id):
            with pytest.raises(SchemaError):
                write_run(run, target, level=level, ties=ties, tag="t")  # type: ignore[arg-type]
            assert not target.exists()
            return
        write_run(run, target, level=level, ties=ties, tag="t")  # type: ignore[arg-type]
        encoded = bool(every_id.str.contains(SPLIT, regex=True).any())
        back = read_run(target, decode=encoded)
        assert len(back) == len(ranked)  # one line per (query, document)
        assert rows_of(back, "turn_id") == rows_of(ranked, "query_id")
        assert set(back["tag"]) == {"t"}
        exact = read_run(target)  # as written: ids holding whitespace encoded
        assert sorted(exact["doc"]) == sorted(trec_id(ranked["doc"]).tolist())
    pd.testing.assert_frame_equal(run, before)  # the caller's frame is untouched


@st.composite
def qrels_frames(draw: st.DrawFn) -> pd.DataFrame:
    """Judgments with any ids and headings, repeated keys, grades -3..3, extra columns
    in any place, any row labels."""
    qids = draw(st.lists(ids, min_size=1, max_size=3, unique=True))
    rows = draw(
        st.lists(st.tuples(st.sampled_from(qids), ids, headings, st.integers(-3, 3)), max_size=8)
    )
    if rows and draw(st.booleans()):
        rows.append(rows[0])  # a key judged twice
        rows.append((*rows[0][:3], 3 - rows[0][3]))  # ... with another grade
    frame = pd.DataFrame(
        {
            "query_id": np.array([r[0] for r in rows], dtype=object),
            "path": np.array([r[1] for r in rows], dtype=object),
            "heading": np.array([r[2] for r in rows], dtype=object),
            "grade": np.array([r[3] for r in rows], dtype=np.int64),
        },
        index=draw(labels(len(rows))),
    )
    for name in draw(extra_names):
        frame[name] = draw(st.lists(headings, min_size=len(rows), max_size=len(rows)))
    order = draw(st.permutations(list(frame.columns)))
    return frame[order]


@FEW
@given(qrels_frames())
def test_write_qrels_tsv_reads_back_every_column_and_row(qrels: pd.DataFrame) -> None:
    before = qrels.copy()
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "qrels.tsv"
        write_qrels(qrels, target)
        pd.testing.assert_frame_equal(
            read_qrels(target, extra_columns=True), read_qrels(qrels, extra_columns=True)
        )
        pd.testing.assert_frame_equal(read_qrels(target), read_qrels(qrels))
    pd.testing.assert_frame_equal(qrels, before)


@FEW
@given(qrels_frames(), st.sampled_from([None, "note", "section"]))
def test_write_qrels_trec_reads_back_the_ids_it_was_written_from(
    qrels: pd.DataFrame, level: str | None
) -> None:
    judged = read_qrels(qrels)
    if level is None:
        level = "section" if bool((judged["heading"] != "").any()) else "note"
    doc = qrels_doc_ids(judged, level)  # type: ignore[arg-type]
    every_id = pd.concat([judged["query_id"], doc], ignore_index=True)
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "qrels.txt"
        if judged["query_id"].str.startswith("#").any() or ambiguous(every_id):
            with pytest.raises(SchemaError):
                write_qrels(qrels, target, format="trec", level=level)  # type: ignore[arg-type]
            assert not target.exists()
            return
        write_qrels(qrels, target, format="trec", level=level)  # type: ignore[arg-type]
        encoded = bool(every_id.str.contains(SPLIT, regex=True).any())
        back = read_qrels(target, decode=encoded)
        assert len(back) == len(judged)
        if back.empty:  # an empty file: no TREC columns to compare
            return
        assert back["query_id"].tolist() == judged["query_id"].tolist()
        assert back["doc"].tolist() == doc.tolist()
        assert back["grade"].tolist() == judged["grade"].tolist()
        assert set(back["iteration"]) <= {"0"}
        assert read_qrels(target)["doc"].tolist() == trec_id(doc).tolist()
        again = Path(folder) / "again.txt"  # a TREC file read back writes the same bytes
        write_qrels(read_qrels(target), again, format="trec")
        assert again.read_bytes() == target.read_bytes()
