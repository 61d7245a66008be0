"""askkit.metrics.preparation: the shared set-up (code), and prepare's one choice
between the fast path and the exact one."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from askkit.errors import SchemaError, UsageError
from askkit.metrics import coverage, evaluate, fast, preparation, ranked_run
from askkit.metrics.preparation import _query_codes, as_qrels, check_options, code
from askkit.metrics.qrels import QRELS_COLUMNS

QRELS = pd.DataFrame(
    {"query_id": ["q1", "q1", "q2"], "path": ["a.md", "b.md", "c.md"], "grade": [1, 3, 2]}
)


def frame(rows: list[tuple[str, str, float]], **extra: Any) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["turn_id", "path", "score"]).assign(**extra)


def named(docs: pa.Array, codes: np.ndarray[Any, Any]) -> list[str]:
    return list(docs.take(pa.array(codes)).to_pylist())


# --------------------------------------------------------------------------- options and inputs


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("page", "trec"), "level must be"),
        (("note", "score"), "ties must be"),
        (("note", "trec", "skip"), "missing must be"),
    ],
)
def test_check_options_names_the_bad_option(args: tuple[str, ...], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        check_options(*args)
    check_options("section", "input", "zero")  # the good ones pass


def test_as_qrels_takes_none_a_frame_or_a_file(data_dir: Any) -> None:
    empty = as_qrels(None)
    assert len(empty) == 0
    assert dict(empty.dtypes) == QRELS_COLUMNS
    ready = as_qrels(QRELS)  # normalised once ...
    assert dict(ready.dtypes) == QRELS_COLUMNS
    assert as_qrels(ready) is ready  # ... and then used as it is
    assert len(as_qrels(data_dir / "qrels.tsv")) > 0


def test_a_run_must_be_a_frame_with_its_columns() -> None:
    with pytest.raises(TypeError, match="sources frame"):
        code([("q", "a.md", 1.0)], QRELS, "note", "trec")  # type: ignore[arg-type]
    with pytest.raises(SchemaError, match="turn_id") as info:
        code(pd.DataFrame({"path": ["a.md"]}), QRELS, "note", "trec")
    assert info.value.value == ["turn_id", "score"]
    no_id = pd.DataFrame({"turn_id": [None], "path": ["a.md"], "score": [1.0]})
    with pytest.raises(SchemaError, match="missing values"):
        code(no_id, QRELS, "note", "trec")


# --------------------------------------------------------------------------- code


@pytest.mark.parametrize("blocky", [True, False])
def test_query_codes_in_order_of_first_appearance(blocky: bool) -> None:
    """A run grouped in blocks hashes one id per block; a shuffled one every id."""
    ids = ["b", "b", "b", "a", "a", "c"] if blocky else ["b", "a", "b", "c", "a", "b"]
    codes, sizes, uniques, grouped = _query_codes(pa.array(ids, pa.large_string()))
    assert uniques.to_pylist() == ["b", "a", "c"]
    rows = codes if sizes is None else np.repeat(codes, sizes)
    assert [uniques[c].as_py() for c in rows] == ids
    assert (sizes is not None) is blocky  # a code per block, or one per row
    assert grouped is blocky
    empty, no_sizes, none, grouped = _query_codes(pa.array([], pa.large_string()))
    assert (len(empty), no_sizes, len(none), grouped) == (0, None, 0, True)


def test_code_keeps_the_judged_queries_rows() -> None:
    run = frame(
        [("q2", "c.md", 1.0), ("q9", "a.md", 5.0), ("q1", "b.md", 2.0), ("q2", "a.md", 0.5)],
        rank=[1, 1, 1, 2],
    )
    c = code(run, QRELS, "note", "trec")
    assert list(c.qids) == ["q1", "q2"]  # the qrels' queries, sorted
    assert c.keep is not None
    assert c.keep.tolist() == [0, 2, 3]  # q9 has no judgments
    assert c.query.tolist() == [1, 0, 1]
    assert c.score.tolist() == [1.0, 2.0, 0.5]
    assert c.order.tolist() == [1, 1, 2]  # the rank column
    assert c.grouped is False  # q2's rows are apart
    assert c.run_only == ("q9",)
    assert c.in_qrels.tolist() == [True, True]
    assert c.in_run.tolist() == [True, True]
    assert c.docs.to_pylist() == ["c.md", "a.md", "b.md", "a.md"]  # every row of the run
    assert c.qrels_docs.to_pylist() == ["a.md", "b.md", "c.md"]
    assert (c.qrels_query.tolist(), c.qrels_grade.tolist()) == ([0, 0, 1], [1, 3, 2])


def test_code_with_run_queries_keeps_every_row() -> None:
    run = frame([("q9", "a.md", 1.0), ("q1", "b.md", 2.0), ("q9", "z.md", 0.0)])
    c = code(run, QRELS, "note", "input", run_queries=True)
    assert list(c.qids) == ["q1", "q2", "q9"]
    assert c.keep is None
    assert c.query.tolist() == [2, 0, 2]
    assert c.order.tolist() == [0, 1, 2]  # no rank column: the row number
    assert c.run_only == ()
    assert c.in_run.tolist() == [True, False, True]
    assert c.in_qrels.tolist() == [True, True, False]


def test_kept_rows_are_grouped_when_only_a_dropped_query_splits_them() -> None:
    run = frame([("q1", "a.md", 2.0), ("q9", "a.md", 1.0), ("q1", "b.md", 1.0)])
    assert code(run, QRELS, "note", "trec", run_queries=True).grouped is False
    kept = code(run, QRELS, "note", "trec")
    assert kept.grouped is True
    assert kept.query.tolist() == [0, 0]  # q1's two rows, q9's left out
    assert kept.keep.tolist() == [0, 2]


def test_code_names_documents_at_either_level() -> None:
    run = pd.DataFrame(
        {"turn_id": ["q1"], "path": ["a.md"], "title": ["A\x1fBake"], "score": [1.0]}
    )
    qrels = QRELS.assign(heading=["Bake", "", "X"])
    assert code(run, qrels, "note", "trec").docs.to_pylist() == ["a.md"]
    section = code(run, qrels, "section", "trec")
    assert section.docs.to_pylist() == ["a.md#Bake"]
    assert section.qrels_docs.to_pylist() == ["a.md#Bake", "b.md", "c.md#X"]
    assert pa.types.is_large_string(section.docs.type)


# --------------------------------------------------------------------------- prepare


def _calls(monkeypatch: pytest.MonkeyPatch, name: str, module: Any) -> list[Any]:
    real = getattr(module, name)
    calls: list[Any] = []

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append(real(*args, **kwargs))
        return calls[-1]

    monkeypatch.setattr(module, name, spy)
    return calls


@pytest.mark.parametrize("enabled", [True, False])
def test_prepare_asks_the_fast_path_then_the_exact_one(
    enabled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = frame([("q1", "notes/b.md", 2.0), ("q1", "notes/a.md", 1.0), ("q2", "c.md", 1.0)])
    qrels = QRELS.assign(path=["notes/a.md", "notes/b.md", "c.md"])
    monkeypatch.setattr(fast, "ENABLED", enabled)
    fast_calls = _calls(monkeypatch, "graded", fast)
    exact_calls = _calls(monkeypatch, "exact", preparation)
    p = preparation.prepare(run, qrels, level="note", ties="trec", run_queries=False)
    assert len(fast_calls) == 1
    assert (fast_calls[0] is not None) == enabled
    assert len(exact_calls) == (0 if enabled else 1)  # the exact path only when declined
    assert list(p.qids) == ["q1", "q2"]
    assert p.ranked.rows.tolist() == [0, 1, 2]
    assert named(p.docs, p.ranked.doc) == ["notes/b.md", "notes/a.md", "c.md"]
    assert p.grade.tolist() == [3, 1, 2]
    assert p.in_run.tolist() == [True, True]


# --------------------------------------------------------------------------- one preparation


def test_a_prepared_run_scores_as_the_run_and_its_qrels_do() -> None:
    run = frame(
        [("q1", "b.md", 2.0), ("q1", "a.md", 1.0), ("q1", "b.md", 0.5), ("q9", "c.md", 1.0)]
    )
    prepared = preparation.prepare(run, QRELS, level="note")
    ev = evaluate(prepared, measures=["mrr", "ndcg@2"])
    want = evaluate(run, QRELS, ["mrr", "ndcg@2"])
    pd.testing.assert_frame_equal(ev.per_query, want.per_query)
    assert (ev.run_only, ev.unanswered, ev.duplicates) == (want.run_only, want.unanswered, 1)
    pd.testing.assert_frame_equal(coverage(prepared).per_query, coverage(run, QRELS).per_query)
    pd.testing.assert_frame_equal(ranked_run(prepared), ranked_run(run, QRELS))
    assert repr(prepared) == "Prepared(3 queries, 3 documents, level=note, ties=trec)"


def test_a_prepared_run_keeps_its_own_judgments_level_and_ties() -> None:
    run = frame([("q1", "a.md", 1.0)])
    prepared = preparation.prepare(run, QRELS)
    with pytest.raises(UsageError, match="carries its judgments"):
        evaluate(prepared, QRELS)
    with pytest.raises(UsageError, match="prepared with level='note'"):
        ranked_run(prepared, level="section")
    judged_only = preparation.prepare(run, QRELS, run_queries=False)
    assert evaluate(judged_only, measures=["mrr"]).per_query["mrr"].tolist() == [1.0]
    with pytest.raises(UsageError, match="run_queries=False"):
        coverage(judged_only)
    with pytest.raises(TypeError, match="needs judgments"):
        evaluate(run)
