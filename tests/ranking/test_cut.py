"""kimun's three context cuts, value for value, with kimun's own tests first."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from askkit.ranking.cut import (
    HIGH_INDEX_FACTOR,
    LOW_INDEX_FACTOR,
    cut_len,
    fixed_cut_len,
    largest_drop,
    largest_drop_cut_len,
    note_best_scores,
    score_range,
    score_range_cut_len,
)
from askkit.ranking.pool import pool_of
from askkit.ranking.settings import (
    DROP_WINDOW_MAX,
    DROP_WINDOW_MIN,
    SCORE_RANGE_DEFAULT_CUTOFF,
    STRATEGIES,
    CutSettings,
)
from askkit.wire import ChunkResult

#: kimun's commit these tests pin (server/src/lib.rs as of 42c2f81b).
KIMUN_COMMIT = "f28bdd5426c7c22f67601f62f588e958c35e43e1"
DW = (DROP_WINDOW_MIN, DROP_WINDOW_MAX)


def chunk(path: str, section: str, score: float) -> ChunkResult:
    """kimun's test `chunk(path, section)`, with its score."""
    return ChunkResult(path, section, None, f"{path}#{section}", "h", score)


def pool(scores: list[float]) -> list[ChunkResult]:
    """kimun's test `pool(scores)`: distinct paths /n{i}.md."""
    return pool_of(scores)


# --------------------------------------------------------------------------- kimun's tests


def test_score_range_cut_is_shift_invariant_and_keeps_flat_pools_whole() -> None:
    negatives = [chunk("/a.md", "a", -0.1), chunk("/b.md", "b", -0.5)]
    assert score_range_cut_len(negatives, SCORE_RANGE_DEFAULT_CUTOFF) == 1
    flat = [chunk("/a.md", "a", 0.7), chunk("/b.md", "b", 0.7), chunk("/c.md", "c", 0.7)]
    assert score_range_cut_len(flat, SCORE_RANGE_DEFAULT_CUTOFF) == 3
    assert score_range_cut_len([], SCORE_RANGE_DEFAULT_CUTOFF) == 0


def test_score_range_cut_is_not_stretched_by_extreme_outliers() -> None:
    scores = [0.85, 0.84, 0.75, 0.70, *([0.65] * 15), 0.60, 0.05]
    assert score_range_cut_len(pool(scores), SCORE_RANGE_DEFAULT_CUTOFF) == 4
    assert score_range_cut_len(pool(scores), 0.5) == 3
    # the percentile endpoints kimun's comment names: high = idx 1, low = idx 19
    cut = score_range(pool(scores))
    assert (cut.high, cut.low) == (0.84, 0.60)


def test_largest_drop_cut_cuts_at_the_biggest_gap_in_the_window() -> None:
    p = pool([0.90, 0.89, 0.88, 0.87, 0.86, 0.50, 0.49, 0.48])
    assert largest_drop_cut_len(p, DW) == 6
    assert largest_drop_cut_len(p, (3, 4)) == 5


def test_largest_drop_cut_only_searches_the_window() -> None:
    p = pool([0.90, 0.90, 0.20, 0.20, 0.20, 0.20, 0.20])
    assert largest_drop_cut_len(p, DW) == 7
    scores = [0.9] * 31 + [0.1] * 4
    assert largest_drop_cut_len(pool(scores), DW) == 35


def test_largest_drop_cut_sees_through_same_note_staircases() -> None:
    p = [
        chunk("/a.md", "s1", 0.90),
        chunk("/b.md", "s1", 0.85),
        chunk("/c.md", "s1", 0.80),
        chunk("/a.md", "s2", 0.74),
        chunk("/a.md", "s3", 0.69),
        chunk("/a.md", "s4", 0.65),
        chunk("/d.md", "s1", 0.62),
        chunk("/e.md", "s1", 0.55),
    ]
    kept = largest_drop_cut_len(p, DW)
    assert kept == 7, "everything >= the gap-closing note's .62"
    assert all(c.similarity_score >= 0.62 for c in p[:kept])


def test_largest_drop_cut_ties_cut_earliest_and_small_pools_stay_whole() -> None:
    p = pool([0.90, 0.89, 0.80, 0.40, 0.30, 0.15, 0.10])
    assert largest_drop_cut_len(p, DW) == 4
    assert largest_drop_cut_len(pool([0.9, 0.2, 0.1]), DW) == 3
    assert largest_drop_cut_len([], DW) == 0
    negatives = pool([-0.1, -0.2, -0.3, -0.4, -0.5])
    assert largest_drop_cut_len(negatives, DW) == 5


# --------------------------------------------------------------------------- f64 as kimun writes it


def test_the_percentile_factors_are_kimuns_f64_arithmetic() -> None:
    assert HIGH_INDEX_FACTOR == 0.050000000000000044
    assert HIGH_INDEX_FACTOR != 0.05
    assert LOW_INDEX_FACTOR == 0.95


def test_the_high_index_moves_at_21_chunks_as_kimuns_arithmetic_says() -> None:
    # 0.050000000000000044 * 20 = 1.0000000000000009 -> floor 1 (0.05 * 20 gives 1 too),
    # and at n = 41, 0.050000000000000044 * 40 = 2.0000000000000018 -> 2.
    assert math.floor(HIGH_INDEX_FACTOR * 20) == 1
    assert math.ceil(LOW_INDEX_FACTOR * 20) == 19
    assert math.ceil(LOW_INDEX_FACTOR * 40) == 38
    scores = [1.0 - i / 64 for i in range(41)]
    cut = score_range(pool(scores))
    assert (cut.high, cut.low) == (scores[2], scores[38])


def test_a_threshold_that_rounds_up_drops_the_chunk_kimun_drops() -> None:
    # 0.55 + 0.4 * (0.90 - 0.55) is 0.6900000000000001 in f64: the 0.69 chunk is cut.
    p = pool([0.90, 0.85, 0.80, 0.74, 0.69, 0.65, 0.62, 0.55])
    cut = score_range(p)
    assert cut.threshold == 0.55 + 0.4 * (0.90 - 0.55) > 0.69
    assert cut.cut_len == 4


# --------------------------------------------------------------------------- edge cases


@pytest.mark.parametrize(
    ("scores", "expected"),
    [
        ([], {"fixed": 0, "score-range": 0, "largest-drop": 0}),
        ([0.5], {"fixed": 1, "score-range": 1, "largest-drop": 1}),
        ([0.5, 0.5, 0.5, 0.5], {"fixed": 2, "score-range": 4, "largest-drop": 4}),
        ([-0.1, -0.2, -0.9, -1.0], {"fixed": 2, "score-range": 2, "largest-drop": 4}),
        ([0.9, 0.0, 0.0, -0.5], {"fixed": 2, "score-range": 1, "largest-drop": 4}),
        ([0.9, 0.8, 0.7, 0.1], {"fixed": 2, "score-range": 3, "largest-drop": 4}),
    ],
)
def test_edge_pools(scores: list[float], expected: dict[str, int]) -> None:
    for strategy in STRATEGIES:
        settings = CutSettings(strategy=strategy, top_k=2)
        assert cut_len(pool(scores), settings) == expected[strategy], strategy


@pytest.mark.parametrize("top_k", [0, -1, 1])
def test_a_zero_or_negative_top_k_keeps_one_chunk(top_k: int) -> None:
    assert fixed_cut_len(pool([0.9, 0.8]), top_k) == 1
    assert cut_len(pool([0.9, 0.8]), CutSettings(strategy="fixed", top_k=top_k)) == 1


@pytest.mark.parametrize("window", [(5, 30), (40, 80), (100, 100), (0, 0)])
def test_a_window_beyond_the_pool_finds_no_drop_and_keeps_it_whole(
    window: tuple[int, int],
) -> None:
    p = pool([0.9, 0.5, 0.1, 0.05])
    cut = largest_drop(p, window)
    assert cut.cut_len == 4
    assert cut.keep is None
    assert len(cut.searched) == 0


def test_a_window_min_of_0_searches_from_position_1_as_kimuns_loop() -> None:
    assert largest_drop_cut_len(pool([0.9, 0.1, 0.05]), (0, 30)) == 2


def test_a_non_positive_base_stops_the_search() -> None:
    cut = largest_drop(pool([0.9, 0.8, 0.7, 0.0, -0.5, -0.9]), (1, 30))
    assert list(cut.searched) == [1, 2, 3]  # position 4's base is 0.0: stop
    assert cut.keep == 3
    assert cut.boundary == 0.0
    assert cut.cut_len == 4


def test_the_note_level_boundary_keeps_every_chunk_at_or_above_it() -> None:
    p = [
        chunk("/a.md", "1", 0.9),
        chunk("/b.md", "1", 0.8),
        chunk("/c.md", "1", 0.3),
        chunk("/a.md", "2", 0.3),
        chunk("/d.md", "1", 0.2),
    ]
    assert note_best_scores(p) == [0.9, 0.8, 0.3, 0.2]
    cut = largest_drop(p, (1, 30))
    assert (cut.keep, cut.boundary, cut.cut_len) == (2, 0.3, 4)  # the tied /a.md#2 rides along


@pytest.mark.parametrize(
    ("bad", "threshold", "kept"),
    [
        (math.nan, math.nan, 0),  # NaN range is not <= 0; NaN threshold fails every >=
        (math.inf, math.inf, 1),  # inf >= inf: only the first
        (-math.inf, None, 3),  # high - low = -inf <= 0: flat, kept whole
    ],
)
def test_non_finite_scores_behave_as_kimuns_comparisons(
    bad: float, threshold: float | None, kept: int
) -> None:
    # kimun only cuts sanitised scores; the comparisons are IEEE in both languages.
    cut = score_range(pool([bad, 0.5, 0.1]))
    if threshold is None:
        assert cut.threshold is None
    else:
        assert cut.threshold is not None
        assert cut.threshold == threshold or (math.isnan(cut.threshold) and math.isnan(threshold))
    assert cut.cut_len == kept


# --------------------------------------------------------------------------- properties

#: Scores on a 1/64 grid in [-2, 2]: exactly representable, with ties.
GRID_SCORES = st.integers(-128, 128).map(lambda i: i / 64)


@st.composite
def pools(draw: st.DrawFn, scores: st.SearchStrategy[float] = GRID_SCORES) -> list[ChunkResult]:
    values = sorted(draw(st.lists(scores, max_size=40)), reverse=True)
    paths = draw(st.lists(st.sampled_from("abcdefgh"), min_size=len(values), max_size=len(values)))
    return pool_of(values, [f"/{p}.md" for p in paths])


SETTINGS = st.builds(
    CutSettings,
    strategy=st.sampled_from(STRATEGIES),
    score_range_cutoff=st.integers(0, 16).map(lambda i: i / 16),
    drop_window_min=st.integers(0, 12),
    drop_window_max=st.integers(0, 45),
    top_k=st.integers(0, 45),
)


@given(pools(), SETTINGS)
def test_every_cut_is_a_best_first_prefix(p: list[ChunkResult], settings: CutSettings) -> None:
    kept = cut_len(p, settings)
    assert 0 <= kept <= len(p)
    if p:
        assert kept >= 1 or settings.strategy == "score-range"
    if settings.strategy != "fixed" and 0 < kept < len(p):
        # an adaptive cut never splits tied scores: it keeps a score band
        assert p[kept].similarity_score < p[kept - 1].similarity_score


@given(st.integers(0, 40), GRID_SCORES, SETTINGS)
def test_a_flat_pool_is_kept_whole(n: int, score: float, settings: CutSettings) -> None:
    p = pool([score] * n)
    if settings.strategy != "fixed":
        assert cut_len(p, settings) == n


@given(
    pools(),
    st.integers(0, 16).map(lambda i: i / 16),
    st.integers(-256, 256).map(lambda i: i / 64),
    st.integers(-4, 4).map(lambda e: 2.0**e),
)
def test_score_range_is_invariant_under_shift_and_positive_scale(
    p: list[ChunkResult], cutoff: float, shift: float, scale: float
) -> None:
    moved = pool_of([c.similarity_score * scale + shift for c in p], [c.path for c in p])
    assert score_range_cut_len(moved, cutoff) == score_range_cut_len(p, cutoff)


@given(
    pools(st.integers(1, 256).map(lambda i: i / 64)),
    st.integers(-4, 4).map(lambda e: 2.0**e),
    st.tuples(st.integers(0, 10), st.integers(0, 45)),
)
def test_largest_drop_is_invariant_under_positive_scale(
    p: list[ChunkResult], scale: float, window: tuple[int, int]
) -> None:
    scaled = pool_of([c.similarity_score * scale for c in p], [c.path for c in p])
    assert largest_drop_cut_len(scaled, window) == largest_drop_cut_len(p, window)


@given(pools(), st.tuples(st.integers(1, 10), st.integers(1, 45)))
def test_largest_drop_keeps_through_the_gap_closing_note(
    p: list[ChunkResult], window: tuple[int, int]
) -> None:
    cut = largest_drop(p, window)
    if cut.keep is None:
        assert cut.cut_len == len(p)
        return
    assert cut.keep in cut.searched
    notes = note_best_scores(p[: cut.cut_len])
    assert len(notes) >= cut.keep + 1  # the notes above the gap and the one closing it
    assert notes[cut.keep] == cut.boundary
