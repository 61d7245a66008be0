"""The columnar sweep equals the per-query loop over the pure cuts; recommend picks from it."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from askkit.errors import SchemaError
from askkit.ranking.cut import cut_len
from askkit.ranking.pool import pool_of
from askkit.ranking.settings import STRATEGIES, CutSettings
from askkit.ranking.sweep import (
    DEFAULT_GRID,
    SWEEP_COLUMNS,
    recommend,
    settings_grid,
    sweep_cuts,
    sweep_cuts_reference,
)

#: kimun's commit whose cuts the sweep reproduces (server/src/lib.rs as of 42c2f81b).
KIMUN_COMMIT = "f28bdd5426c7c22f67601f62f588e958c35e43e1"
EXACT = [c for c in SWEEP_COLUMNS if c != "ndcg"]


def assert_same(fast: pd.DataFrame, slow: pd.DataFrame) -> None:
    """Equal, to the bit except nDCG (prefix sums vs a loop's sums: 1e-12 relative)."""
    pd.testing.assert_frame_equal(fast[EXACT], slow[EXACT], check_exact=True)
    np.testing.assert_allclose(fast["ndcg"], slow["ndcg"], rtol=1e-12, atol=0)


def section_heavy() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "query_id": ["q1"] * 5,
            "path": ["a.md", "a.md", "a.md", "b.md", "c.md"],
            "score": [0.99, 0.98, 0.97, 0.80, 0.70],
        }
    )


QRELS = pd.DataFrame(
    {"query_id": ["q1", "q1", "q1"], "path": ["a.md", "b.md", "z.md"], "grade": [2, 1, 3]}
)


# --------------------------------------------------------------------------- values by hand


def test_the_measures_on_kimuns_section_heavy_pool() -> None:
    table = sweep_cuts(
        section_heavy(), QRELS, grid={"fixed": [1], "score-range": [0.4], "largest-drop": [(1, 30)]}
    )
    fixed, ranged, dropped = (table.iloc[i] for i in range(3))
    ideal = 2 + 1 / math.log2(3)  # z.md is judged but not in the pool: not in the ideal
    assert (fixed["mean_chunks"], fixed["mean_notes"], fixed["mean_search_rows"]) == (1, 1, 1)
    assert fixed["recall"] == 0.5
    assert fixed["precision"] == 1.0
    assert fixed["ndcg"] == pytest.approx(2 / ideal)
    assert ranged["setting"] == "score-range cutoff=0.4"
    assert (ranged["mean_chunks"], ranged["mean_notes"]) == (3, 1)
    # largest-drop over notes .99/.80/.70 in window 1..2: .99 -> .80 (0.19) wins, keep 4 chunks
    assert (dropped["mean_chunks"], dropped["mean_notes"], dropped["recall"]) == (4, 2, 1.0)
    assert dropped["ndcg"] == pytest.approx(1.0)
    assert dropped["queries_without_relevant"] == 0
    assert (dropped["queries"], dropped["judged_queries"]) == (1, 1)
    assert list(table.columns) == SWEEP_COLUMNS


def test_unjudged_queries_count_for_size_not_for_quality() -> None:
    pools = pd.concat([section_heavy(), section_heavy().assign(query_id="q2")])
    table = sweep_cuts(pools, QRELS, grid={"fixed": [2]}, strategies=["fixed"])
    row = table.iloc[0]
    assert (row["queries"], row["judged_queries"]) == (2, 1)
    assert row["recall"] == 0.5  # q1 only: a.md of a.md, b.md
    assert row["mean_search_rows"] == 2


def test_a_query_whose_relevant_notes_are_all_cut_is_counted() -> None:
    qrels = pd.DataFrame({"query_id": ["q1"], "path": ["c.md"], "grade": [1]})
    table = sweep_cuts(section_heavy(), qrels, ["score-range"], {"score-range": [0.4]})
    assert table.iloc[0]["queries_without_relevant"] == 1
    assert table.iloc[0]["recall"] == 0.0


def test_qrels_from_a_file_and_grade_rules(tmp_path: Path) -> None:
    path = tmp_path / "qrels.tsv"
    path.write_text(
        "query_id\tpath\theading\tgrade\nq1\tb.md\tx\t0\nq1\tb.md\ty\t2\nq1\tc.md\t\t-1\n"
    )
    table = sweep_cuts(section_heavy(), path, ["fixed"], {"fixed": [5]})
    row = table.iloc[0]
    assert row["recall"] == 1.0  # b.md's grade is its best row's: 2
    assert row["precision"] == pytest.approx(1 / 3)
    assert row["ndcg"] == pytest.approx((2 / math.log2(3)) / 2)  # c.md's -1 gains nothing


def test_empty_pools_give_no_queries() -> None:
    empty = pd.DataFrame({"query_id": [], "path": [], "score": []})
    for table in (sweep_cuts(empty, QRELS), sweep_cuts_reference(empty, QRELS)):
        assert (table["queries"] == 0).all()
        assert table["mean_chunks"].isna().all()
        assert table["recall"].isna().all()


def test_the_default_grid_covers_each_strategy() -> None:
    table = sweep_cuts(section_heavy(), QRELS)
    counts = table["strategy"].value_counts().to_dict()
    assert counts == {s: len(DEFAULT_GRID[s]) for s in STRATEGIES}


def test_settings_grid_sanitises_and_fills_from_base() -> None:
    base = CutSettings(top_k=7, score_range_cutoff=0.3)
    grid = settings_grid(
        STRATEGIES,
        {"fixed": [0], "score-range": [math.nan, 2.0], "largest-drop": [(5, 2), 4]},
        base,
    )
    assert [s.label for s in grid] == [
        "fixed top_k=1",
        "score-range cutoff=0.3",
        "score-range cutoff=1",
        "largest-drop window=5..5",
        "largest-drop window=4..30",
    ]
    assert all(s.top_k in (1, 7) for s in grid)


def test_unknown_strategies_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown strategy 'elbow'"):
        settings_grid(["elbow"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="unknown strategy 'score_range'"):
        settings_grid(grid={"score_range": [0.4]})


# --------------------------------------------------------------------------- bad pools


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"score": [0.9, math.nan, 0.5, 0.4, 0.3]}, "score[1]"),
        ({"score": [0.9, math.inf, 0.5, 0.4, 0.3]}, "score[1]"),
        ({"query_id": ["q1", None, "q1", "q1", "q1"]}, "query_id[1]"),
        ({"path": ["a.md", "a.md", None, "b.md", "c.md"]}, "path[2]"),
        ({"rank": [1, 2, math.nan, 4, 5]}, "rank[2]"),
    ],
)
def test_bad_rows_are_named(change: dict[str, list[object]], field: str) -> None:
    pools = section_heavy().assign(**change)
    with pytest.raises(SchemaError) as info:
        sweep_cuts(pools, QRELS)
    assert info.value.field == field


def test_missing_columns_are_named() -> None:
    with pytest.raises(SchemaError) as info:
        sweep_cuts(section_heavy().drop(columns="score"), QRELS)
    assert info.value.value == ["score"]


def test_a_rank_that_contradicts_the_scores_is_refused() -> None:
    pools = section_heavy().assign(rank=[2, 1, 3, 4, 5])
    with pytest.raises(SchemaError, match="not best first"):
        sweep_cuts(pools, QRELS)
    with pytest.raises(SchemaError, match="not best first"):
        sweep_cuts_reference(pools, QRELS)


def test_rows_in_any_order_are_grouped_and_sorted() -> None:
    pools = pd.concat([section_heavy(), section_heavy().assign(query_id="q2")])
    shuffled = pools.sample(frac=1.0, random_state=3)
    assert_same(sweep_cuts(shuffled, QRELS), sweep_cuts(pools, QRELS))
    ranked = shuffled.assign(rank=shuffled.groupby("query_id")["score"].rank(ascending=False))
    assert_same(sweep_cuts(ranked, QRELS), sweep_cuts(pools, QRELS))


# --------------------------------------------------------------------------- properties

SCORES = st.integers(-16, 64).map(lambda i: i / 64)  # ties, zero and negatives


@st.composite
def pools_and_qrels(draw: st.DrawFn) -> tuple[pd.DataFrame, pd.DataFrame]:
    rows: list[tuple[str, str, float, int]] = []
    for q in range(draw(st.integers(1, 5))):
        scores = sorted(draw(st.lists(SCORES, min_size=1, max_size=30)), reverse=True)
        notes = draw(
            st.lists(st.sampled_from("abcdefghij"), min_size=len(scores), max_size=len(scores))
        )
        pairs = enumerate(zip(scores, notes, strict=True))
        rows += [(f"q{q}", f"{p}.md", s, r + 1) for r, (s, p) in pairs]
    pools = pd.DataFrame(rows, columns=["query_id", "path", "score", "rank"])
    if draw(st.booleans()):
        pools = pools.drop(columns="rank")
    if draw(st.booleans()):
        pools = pools.sample(frac=1.0, random_state=draw(st.integers(0, 99)))
        if "rank" not in pools.columns:  # without a rank, ties must stay in pool order
            pools = pools.sort_values("query_id", kind="stable")
    judged = draw(
        st.lists(
            st.tuples(
                st.sampled_from(["q0", "q1", "q2", "q9"]),
                st.sampled_from("abcdefghijz"),
                st.integers(-1, 3),
            ),
            max_size=25,
        )
    )
    qrels = pd.DataFrame(
        [(q, f"{p}.md", g) for q, p, g in judged], columns=["query_id", "path", "grade"]
    )
    return pools, qrels


GRIDS = st.fixed_dictionaries(
    {
        "fixed": st.lists(st.integers(-1, 35), min_size=1, max_size=4),
        "score-range": st.lists(
            st.one_of(st.integers(0, 16).map(lambda i: i / 16), st.floats(-0.5, 1.5)),
            min_size=1,
            max_size=4,
        ),
        "largest-drop": st.lists(
            st.tuples(st.integers(0, 12), st.integers(0, 35)), min_size=1, max_size=4
        ),
    }
)


@given(pools_and_qrels(), GRIDS)
def test_the_columnar_sweep_equals_the_per_query_loop(
    data: tuple[pd.DataFrame, pd.DataFrame], grid: dict[str, list[object]]
) -> None:
    pools, qrels = data
    assert_same(sweep_cuts(pools, qrels, grid=grid), sweep_cuts_reference(pools, qrels, grid=grid))


@given(
    st.lists(SCORES, min_size=1, max_size=40),
    st.lists(st.sampled_from("abcdef"), min_size=40, max_size=40),
    GRIDS,
)
def test_one_querys_context_is_kimuns_cut_length(
    scores: list[float], notes: list[str], grid: dict[str, list[object]]
) -> None:
    scores = sorted(scores, reverse=True)
    paths = [f"{p}.md" for p in notes[: len(scores)]]
    pools = pd.DataFrame({"query_id": "q", "path": paths, "score": scores})
    table = sweep_cuts(pools, QRELS, grid=grid)
    pool = pool_of(scores, paths)
    expected = [cut_len(pool, s) for s in settings_grid(STRATEGIES, grid)]
    assert table["mean_chunks"].tolist() == expected


# --------------------------------------------------------------------------- recommend


def _table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "strategy": ["fixed", "score-range", "largest-drop", "score-range"],
            "top_k": [20, 20, 20, 20],
            "score_range_cutoff": [0.4, 0.6, 0.4, 0.2],
            "drop_window_min": [3, 3, 2, 3],
            "drop_window_max": [30, 30, 30, 30],
            "mean_chunks": [20.0, 6.0, 6.0, 12.0],
            "recall": [1.0, 0.92, 0.95, 0.99],
            "precision": [0.1, 0.4, 0.4, 0.3],
            "ndcg": [0.5, 0.6, 0.7, 0.65],
        }
    )


def test_recommend_takes_the_smallest_context_keeping_recall() -> None:
    best = recommend(_table())
    assert best == CutSettings(strategy="largest-drop", drop_window_min=2)  # tie: higher nDCG
    assert recommend(_table(), min_recall=0.96) == CutSettings(score_range_cutoff=0.2)
    assert best.to_toml().splitlines()[2] == 'context_cut = "largest-drop"'


def test_recommend_other_objectives() -> None:
    assert recommend(_table(), "ndcg").strategy == "largest-drop"
    assert recommend(_table(), "ndcg", min_recall=0.96).score_range_cutoff == 0.2
    assert recommend(_table(), "precision", min_recall=0.0).strategy == "score-range"


def test_recommend_says_when_no_setting_keeps_the_recall() -> None:
    with pytest.raises(SchemaError, match=r"no setting keeps recall >= 1.5 \(the best keeps 1.000"):
        recommend(_table(), min_recall=1.5)
    with pytest.raises(ValueError, match="objective must be one of"):
        recommend(_table(), "f1")  # type: ignore[arg-type]


def test_recommend_on_a_real_sweep_prints_a_server_toml_block() -> None:
    table = sweep_cuts(section_heavy(), QRELS)
    toml = recommend(table).to_toml()
    assert toml.startswith("[reranker]\ntop_k = ")


# --------------------------------------------------------------------------- f64 limits


@given(
    st.lists(
        st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=12),
        min_size=1,
        max_size=4,
    ),
    st.lists(st.sampled_from("abcd"), min_size=12, max_size=12),
    GRIDS,
)
def test_the_sweep_on_any_finite_scores_warns_nothing_and_equals_kimuns_cuts(
    pools: list[list[float]], notes: list[str], grid: dict[str, list[object]]
) -> None:
    """Pools near the f64 limit printed NumPy's "overflow encountered in subtract": kimun
    computes ``high - low`` and each drop in f64 without traps, and so does the sweep."""
    rows = [
        (f"q{q}", f"{notes[r]}.md", s)
        for q, scores in enumerate(pools)
        for r, s in enumerate(sorted(scores, reverse=True))
    ]
    frame = pd.DataFrame(rows, columns=["query_id", "path", "score"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fast = sweep_cuts(frame, QRELS, grid=grid)
    assert_same(fast, sweep_cuts_reference(frame, QRELS, grid=grid))


def test_the_sweep_near_the_float_limit_keeps_what_kimun_keeps() -> None:
    scores = [1.7e308, 1e308, -1e308, -1.7e308]
    frame = pd.DataFrame(
        {"query_id": "q1", "path": ["a.md", "b.md", "c.md", "d.md"], "score": scores}
    )
    grid = {"fixed": [2], "score-range": [0.0, 0.4], "largest-drop": [(1, 30)]}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = sweep_cuts(frame, QRELS, grid=grid)
    # fixed 2; score-range: high - low = inf, the threshold inf or NaN: nothing kept;
    # largest-drop: (1e308 - -1e308) / 1e308 = inf, the gap closing at note 3
    assert table["mean_chunks"].tolist() == [2, 0, 0, 3]
