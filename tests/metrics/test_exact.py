"""askkit.metrics.exact: the exact path, the specification: one document dictionary,
trec_eval's tie break, each document's best chunk, the highest grade."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from askkit.metrics.exact import exact
from askkit.metrics.preparation import code

QRELS = pd.DataFrame(
    {"query_id": ["q1", "q1", "q2"], "path": ["a.md", "b.md", "c.md"], "grade": [1, 3, 2]}
)


def frame(rows: list[tuple[str, str, float]], **extra: Any) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["turn_id", "path", "score"]).assign(**extra)


def named(docs: pa.Array, codes: np.ndarray[Any, Any]) -> list[str]:
    return list(docs.take(pa.array(codes)).to_pylist())


def test_exact_ranks_trec_ties_by_document_id_descending() -> None:
    run = frame([("q1", "a.md", 1.0), ("q1", "c.md", 2.0), ("q1", "b.md", 1.0)])
    g = exact(code(run, QRELS, "note", "trec"))
    assert named(g.docs, g.ranked.doc) == ["c.md", "b.md", "a.md"]
    assert g.ranked.rows.tolist() == [1, 2, 0]
    assert g.ranked.rank.tolist() == [1, 2, 3]
    assert g.score.tolist() == [2.0, 1.0, 1.0]


def test_exact_keeps_the_input_order_for_input_ties() -> None:
    run = frame([("q1", "a.md", 1.0), ("q1", "c.md", 2.0), ("q1", "b.md", 1.0)], rank=[2, 3, 1])
    g = exact(code(run, QRELS, "note", "input"))
    assert named(g.docs, g.ranked.doc) == ["b.md", "a.md", "c.md"]


def test_exact_keeps_each_documents_best_chunk_and_grades_it() -> None:
    run = frame(
        [
            ("q1", "b.md", 1.0),
            ("q2", "z.md", float("nan")),
            ("q1", "b.md", 3.0),
            ("q2", "c.md", 0.5),
            ("q9", "a.md", 1.0),
        ]
    )
    qrels = pd.concat([QRELS, pd.DataFrame({"query_id": ["q2"], "path": ["c.md"], "grade": [0]})])
    g = exact(code(run, qrels, "note", "trec"))
    assert g.ranked.rows.tolist() == [2, 3, 1]  # rows of the run (q9's was left out)
    assert g.ranked.query.tolist() == [0, 1, 1]
    assert g.ranked.duplicates == 1
    assert named(g.docs, g.ranked.doc) == ["b.md", "c.md", "z.md"]  # NaN ranks last
    assert g.grade.tolist() == [3, 2, 0]  # c.md judged 2 and 0: the highest counts
    assert g.judged.tolist() == [True, True, False]
    pairs = sorted(zip(g.qrels_query.tolist(), g.qrels_grade.tolist(), strict=True))
    assert pairs == [(0, 1), (0, 3), (1, 2)]  # one judgment per (query, document)


def test_exact_on_an_empty_run_and_no_qrels() -> None:
    empty = frame([])
    g = exact(code(empty, QRELS, "note", "trec"))
    assert len(g.ranked.rows) == len(g.grade) == 0
    g = exact(code(frame([("q1", "a.md", 1.0)]), None, "note", "trec", run_queries=True))
    assert g.grade.tolist() == [0]
    assert g.judged.tolist() == [False]
    assert len(g.qrels_query) == 0
