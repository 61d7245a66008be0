"""askkit.ranking.pools: a sources frame's turns as kimun's ranked pools (pool order, the
three cuts, truncation), and many queries' pools as the long frame a sweep reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from askkit import AskSource, Turn
from askkit.errors import SchemaError
from askkit.frame import sources_frame
from askkit.ranking import STRATEGIES, CutSettings, answer_context, cut_len, pool_of, sweep_cuts
from askkit.ranking.pools import (
    POOL_COLUMNS,
    pool_frame,
    pool_truncated,
    query_pools,
    with_pool,
)
from askkit.wire import ChunkResult
from tests.conftest import DATA

DATA_RUN = DATA / "run.jsonl"
KEPT = ["kept_fixed", "kept_score_range", "kept_largest_drop"]


def turns_frame(pools: dict[str, list[tuple[str, float]]]) -> pd.DataFrame:
    """A minimal sources frame: each turn's (path, score) rows in the given order."""
    rows = [(tid, p, s) for tid, pool in pools.items() for p, s in pool]
    return pd.DataFrame(rows, columns=["turn_id", "path", "score"])


def test_pool_rank_is_the_best_first_position_in_the_turn() -> None:
    frame = turns_frame({"t1": [("a", 0.5), ("b", 0.9), ("c", 0.7)], "t2": [("a", 0.1)]})
    assert with_pool(frame)["pool_rank"].tolist() == [3, 1, 2, 1]


def test_tied_scores_keep_ordinal_then_received_order() -> None:
    frame = pd.DataFrame(
        {
            "turn_id": ["t"] * 4,
            "path": ["a", "b", "c", "d"],
            "score": [0.5, 0.5, 0.5, 0.9],
            "ordinal": [3, 2, 2, 1],
            "rank": [1, 2, 3, 4],
        }
    )
    assert with_pool(frame)["pool_rank"].tolist() == [4, 2, 3, 1]


def test_interleaved_turns_are_grouped() -> None:
    frame = pd.DataFrame(
        {"turn_id": ["x", "y", "x", "y"], "path": list("abcd"), "score": [0.2, 0.3, 0.9, 0.1]}
    )
    assert with_pool(frame)["pool_rank"].tolist() == [2, 1, 1, 2]
    pools = pool_frame(frame)
    assert pools[["query_id", "rank", "path"]].values.tolist() == [
        ["x", 1, "c"],
        ["x", 2, "a"],
        ["y", 1, "b"],
        ["y", 2, "d"],
    ]


def test_the_callers_frame_is_not_touched() -> None:
    frame = turns_frame({"t": [("a", 0.9), ("b", 0.1)]})
    before = frame.copy()
    out = with_pool(frame)
    pd.testing.assert_frame_equal(frame, before)
    assert list(out.columns) == [*frame.columns, "pool_rank", *KEPT]
    assert out["pool_rank"].dtype == np.int64
    assert all(out[c].dtype == bool for c in KEPT)


def test_empty_frame() -> None:
    out = with_pool(turns_frame({}))
    assert out.empty
    assert list(out.columns)[-4:] == ["pool_rank", *KEPT]
    assert pool_frame(turns_frame({})).empty
    assert pool_truncated(turns_frame({})).empty


def test_one_source() -> None:
    out = with_pool(turns_frame({"t": [("a", 0.3)]}))
    assert out[["pool_rank", *KEPT]].values.tolist() == [[1, True, True, True]]


def test_settings_give_each_strategy_its_knob() -> None:
    scores = [0.99, 0.98, 0.95, 0.94, 0.50, 0.45]
    frame = turns_frame({"t": [(f"{i}.md", s) for i, s in enumerate(scores)]})
    settings = CutSettings(top_k=2, score_range_cutoff=0.9, drop_window_min=1)
    out = with_pool(frame, settings)
    pool = pool_of(scores, [f"{i}.md" for i in range(6)])
    for strategy, column in zip(STRATEGIES, KEPT, strict=True):
        kept = cut_len(pool, settings.replace(strategy=strategy))
        assert out[column].tolist() == [i < kept for i in range(6)], strategy


turn_pools = st.dictionaries(
    st.sampled_from(["q1", "q2", "q3", "q4"]),
    st.lists(
        st.tuples(
            st.sampled_from(["a.md", "b.md", "c.md", "d.md", "e.md", "f.md"]),
            st.sampled_from([0.0, 0.1, 0.3, 0.5, 0.5, 0.8, 0.9, 1.0, -0.2]),
        ),
        min_size=1,
        max_size=25,
    ),
    max_size=4,
)
settings_values = st.builds(
    CutSettings,
    top_k=st.integers(0, 10),
    score_range_cutoff=st.floats(0, 1),
    drop_window_min=st.integers(0, 6),
    drop_window_max=st.integers(0, 10),
)


@given(turn_pools, settings_values)
def test_kept_columns_equal_each_turns_cut_len(
    pools: dict[str, list[tuple[str, float]]], settings: CutSettings
) -> None:
    """The specification: per turn, sort best first and ask askkit.ranking.cut_len."""
    frame = turns_frame(pools)
    out = with_pool(frame, settings)
    for tid, rows in pools.items():
        part = out[out["turn_id"] == tid]
        ranked = sorted(range(len(rows)), key=lambda i: -rows[i][1])  # stable: received order
        pool = pool_of([rows[i][1] for i in ranked], [rows[i][0] for i in ranked])
        expected_rank = np.empty(len(rows), dtype=np.int64)
        expected_rank[ranked] = np.arange(1, len(rows) + 1)
        assert part["pool_rank"].tolist() == expected_rank.tolist()
        for strategy, column in zip(STRATEGIES, KEPT, strict=True):
            kept = cut_len(pool, settings.replace(strategy=strategy))
            assert part[column].tolist() == (expected_rank <= kept).tolist(), (tid, strategy)


def test_kept_score_range_matches_the_answer_context_of_local_pools(data_dir: Path) -> None:
    from askkit.metrics.queries import read_queries
    from askkit.retrieve.local import LocalIndex

    index = LocalIndex(data_dir / "vault", cache_dir=False, progress=False)
    queries = dict(list(read_queries(data_dir / "queries.tsv").items())[:6])
    pools = {qid: index.pool(text) for qid, text in queries.items()}
    turns = [Turn(text, "", AskSource.from_chunks(pools[qid])) for qid, text in queries.items()]
    frame = sources_frame(turns)
    ids = dict(zip(frame["turn_id"].unique(), queries, strict=True))
    frame["turn_id"] = frame["turn_id"].map(ids)
    out = with_pool(frame)
    for qid, pool in pools.items():
        part = out[out["turn_id"] == qid]
        assert part["pool_rank"].tolist() == list(range(1, len(pool) + 1))
        assert part["kept_score_range"].sum() == len(answer_context(pool))
    # the frame's pools sweep exactly as the index's own pool frame does
    from_frame = sweep_cuts(pool_frame(frame), data_dir / "qrels.tsv")
    from_index = sweep_cuts(index.pools(queries), data_dir / "qrels.tsv")
    pd.testing.assert_frame_equal(from_frame, from_index)


def test_pool_frame_keeps_title_and_text(data_dir: Path) -> None:
    frame = sources_frame(data_dir / "turns.jsonl")
    pools = pool_frame(frame)
    assert list(pools.columns) == ["query_id", "rank", "path", "score", "title", "text"]
    assert len(pools) == len(frame)
    best_first = pools.groupby("query_id", sort=False)["score"].is_monotonic_decreasing
    assert best_first.all()


@pytest.mark.parametrize(
    ("columns", "field"),
    [
        ({"turn_id": ["t"], "path": ["a"]}, "columns"),
        ({"turn_id": ["t", None], "path": ["a", "b"], "score": [1.0, 0.5]}, "turn_id[1]"),
        ({"turn_id": ["t"], "path": [None], "score": [1.0]}, "path[0]"),
        ({"turn_id": ["t", "t"], "path": ["a", "b"], "score": [1.0, np.nan]}, "score[1]"),
        ({"turn_id": ["t"], "path": ["a"], "score": [np.inf]}, "score[0]"),
    ],
)
def test_bad_frames_are_refused(columns: dict[str, list[Any]], field: str) -> None:
    frame = pd.DataFrame(columns)
    for function in (with_pool, pool_frame):
        with pytest.raises(SchemaError) as info:
            function(frame)
        assert info.value.field == field


@pytest.mark.parametrize(
    ("sizes", "kwargs", "expected"),
    [
        ({"a": 80, "b": 5}, {}, {"a": False, "b": True}),
        ({"a": 81}, {}, {"a": False}),
        ({"a": 79}, {}, {"a": True}),
        ({"a": 12, "b": 5}, {"vault_chunks": 12}, {"a": False, "b": True}),
        ({"a": 5}, {"size": 5}, {"a": False}),
        ({"a": 4}, {"size": 5}, {"a": True}),
    ],
)
def test_pool_truncated_per_turn(
    sizes: dict[str, int], kwargs: dict[str, Any], expected: dict[str, bool]
) -> None:
    frame = turns_frame({t: [("p.md", 1.0)] * n for t, n in sizes.items()})
    truncated = pool_truncated(frame, **kwargs)
    assert truncated.name == "pool_truncated"
    assert truncated.to_dict() == expected


def test_a_saved_answer_log_is_truncated(data_dir: Path) -> None:
    truncated = pool_truncated(sources_frame(data_dir / "turns.jsonl"))
    assert truncated.all()
    assert truncated.index[0] == "q-starter"


def test_pool_truncated_refuses_bad_input() -> None:
    with pytest.raises(SchemaError):
        pool_truncated(pd.DataFrame({"path": ["a"]}))
    with pytest.raises(ValueError, match="size must be >= 1"):
        pool_truncated(turns_frame({}), size=0)


def _log_with_a_shared_id(path: Path) -> Path:
    chunk = {"title": "S", "content": "x", "hash": "h"}
    lines = [
        {"id": "q1", "chunks": [{**chunk, "path": "a.md", "similarity_score": 0.9}]},
        {"id": "q2", "chunks": [{**chunk, "path": "b.md", "similarity_score": 0.8}]},
        {"id": "q1", "chunks": [{**chunk, "path": "c.md", "similarity_score": 0.7}]},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_turns_of_a_log_that_share_an_id_are_refused_not_merged_into_one_pool(
    tmp_path: Path,
) -> None:
    """Two turns with one id were read as one pool, their rankings mixed, silently."""
    frame = sources_frame(_log_with_a_shared_id(tmp_path / "dup.jsonl"))
    for function in (with_pool, pool_frame):
        with pytest.raises(SchemaError) as info:
            function(frame)
        assert info.value.field == "turn_id"
        assert info.value.message.startswith("'q1' is the id of 2 turns (lines 1, 3): ")


def test_a_shared_id_lists_at_most_five_of_its_lines() -> None:
    frame = pd.DataFrame(
        {"turn_id": ["t"] * 7, "path": list("abcdefg"), "score": [0.5] * 7, "line": range(1, 8)}
    )
    with pytest.raises(
        SchemaError, match=r"'t' is the id of 7 turns \(lines 1, 2, 3, 4, 5, \.\.\.\)"
    ):
        pool_frame(frame)


def test_one_turn_on_one_line_is_one_pool() -> None:
    frame = sources_frame(DATA_RUN)
    assert pool_frame(frame)["query_id"].nunique() == frame["turn_id"].nunique()


def test_query_pools_are_the_long_frame_a_sweep_reads() -> None:
    def pool(text: str, size: int | None) -> list[ChunkResult]:
        chunks = [
            ChunkResult(
                path=f"{text}/{i}.md",
                title="T",
                date=None,
                content="x",
                hash="h",
                similarity_score=1.0 - i / 10,
                ordinal=i + 1,
            )
            for i in range(size or 2)
        ]
        return chunks if text != "none" else []

    out = query_pools(pool, {"q1": "a", "q2": "none", "q3": "b"}, 3)
    assert list(out.columns) == list(POOL_COLUMNS)
    assert dict(out.dtypes) == POOL_COLUMNS
    assert out["query_id"].tolist() == ["q1"] * 3 + ["q3"] * 3  # a query matching nothing: no rows
    assert out["rank"].tolist() == [1, 2, 3, 1, 2, 3]
    with pytest.raises(SchemaError, match="the query text is empty"):
        query_pools(pool, {"q1": " "})
