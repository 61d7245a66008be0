"""explain_cut's per-chunk table and why_not's plain words."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from askkit.errors import SchemaError
from askkit.ranking.cut import cut_len
from askkit.ranking.explain import explain_cut, why_not
from askkit.ranking.pool import pool_of
from askkit.ranking.settings import STRATEGIES, CutSettings
from askkit.ranking.surfaces import search_rows
from askkit.wire import ChunkResult

#: kimun's commit these tests pin (server/src/lib.rs as of 42c2f81b).
KIMUN_COMMIT = "f28bdd5426c7c22f67601f62f588e958c35e43e1"


def chunk(path: str, section: str, score: float) -> ChunkResult:
    return ChunkResult(path, section, None, f"{path}#{section}", "h", score)


def staircase() -> list[ChunkResult]:
    """kimun's `largest_drop_cut_sees_through_same_note_staircases` pool."""
    return [
        chunk("/a.md", "s1", 0.90),
        chunk("/b.md", "s1", 0.85),
        chunk("/c.md", "s1", 0.80),
        chunk("/a.md", "s2", 0.74),
        chunk("/a.md", "s3", 0.69),
        chunk("/a.md", "s4", 0.65),
        chunk("/d.md", "s1", 0.62),
        chunk("/e.md", "s1", 0.55),
    ]


#: kimun's `section_heavy_store`.
SECTION_HEAVY = [
    chunk("/a.md", "intro", 0.99),
    chunk("/a.md", "body", 0.98),
    chunk("/a.md", "end", 0.97),
    chunk("/b.md", "b1", 0.80),
    chunk("/c.md", "c1", 0.70),
]


# --------------------------------------------------------------------------- explain_cut


def test_explain_cut_lays_out_the_staircase() -> None:
    frame = explain_cut(staircase())
    assert frame["rank"].tolist() == list(range(1, 9))
    assert frame["path"].tolist() == [c.path for c in staircase()]
    assert frame["note_rank"].tolist() == [1, 2, 3, 1, 1, 1, 4, 5]
    assert frame["note_best"].tolist() == [True, True, True, False, False, False, True, True]
    # score-range: low 0.55, high 0.90
    assert frame["normalised"].tolist() == [(s - 0.55) / (0.90 - 0.55) for s in frame["score"]]
    # the notes' relative drops: /c.md -> /d.md is the largest (0.225)
    drops = dict(zip(frame["path"], frame["note_drop"], strict=False))
    assert drops["/c.md"] == (0.80 - 0.62) / 0.80
    assert math.isnan(drops["/e.md"])
    assert frame["kept_largest_drop"].tolist() == [True] * 7 + [False]
    assert frame["is_boundary_largest_drop"].tolist() == [False] * 6 + [True, False]
    # 0.55 + 0.4 * 0.35 is 0.6900000000000001 in f64: the 0.69 chunk is cut, as in kimun
    assert frame["kept_score_range"].tolist() == [True] * 4 + [False] * 4
    assert frame["kept_fixed"].all()
    assert not frame["is_boundary_fixed"].any()
    assert frame["in_search_largest_drop"].tolist() == [True] * 3 + [False] * 3 + [True, False]
    assert frame.attrs["cut_len"] == {"fixed": 8, "score-range": 4, "largest-drop": 7}
    assert frame.attrs["threshold"]["largest-drop"] == 0.62


@pytest.mark.parametrize("scores", [[], [0.5], [0.5, 0.5, 0.5], [-0.1, -0.5, -0.7]])
def test_explain_cut_edge_pools(scores: list[float]) -> None:
    frame = explain_cut(pool_of(scores), CutSettings(top_k=2))
    assert len(frame) == len(scores)
    for strategy, suffix in zip(STRATEGIES, ("fixed", "score_range", "largest_drop"), strict=True):
        kept = cut_len(pool_of(scores), CutSettings(strategy=strategy, top_k=2))
        assert int(frame[f"kept_{suffix}"].sum()) == kept
    if len(scores) > 1 and len(set(scores)) == 1:
        assert frame["normalised"].isna().all()  # a flat pool has no scale


def test_explain_cut_takes_a_frame_in_pool_order() -> None:
    frame = pd.DataFrame({"path": ["/a.md", "/b.md", "/c.md"], "score": [0.9, 0.4, 0.3]})
    table = explain_cut(frame)
    assert table["kept_score_range"].tolist() == [True, False, False]
    renamed = frame.rename(columns={"score": "similarity_score"})
    assert explain_cut(renamed).equals(table)


def test_explain_cut_refuses_a_frame_without_path_and_score() -> None:
    with pytest.raises(SchemaError) as info:
        explain_cut(pd.DataFrame({"note": ["a"], "score": [0.5]}))
    assert info.value.field == "columns"


@given(st.lists(st.integers(-8, 8), max_size=30), st.lists(st.sampled_from("abcde"), max_size=30))
def test_explain_cut_agrees_with_the_cuts_and_the_search(
    scores: list[int], notes: list[str]
) -> None:
    n = min(len(scores), len(notes))
    pool = pool_of(sorted((s / 8 for s in scores[:n]), reverse=True), [f"/{p}" for p in notes[:n]])
    frame = explain_cut(pool)
    for strategy, suffix in zip(STRATEGIES, ("fixed", "score_range", "largest_drop"), strict=True):
        settings = CutSettings(strategy=strategy)
        kept = cut_len(pool, settings)
        assert frame[f"kept_{suffix}"].tolist() == [i < kept for i in range(n)]
        assert int(frame[f"is_boundary_{suffix}"].sum()) == int(0 < kept < n)
        rows = np.flatnonzero(frame[f"in_search_{suffix}"].to_numpy())
        assert [pool[i] for i in rows] == search_rows(pool, settings)


# --------------------------------------------------------------------------- why_not


def test_why_not_a_note_outside_the_pool() -> None:
    text = why_not(SECTION_HEAVY, "/z.md")
    assert text.startswith("/z.md is not in the pool: none of its chunks is among the 5 chunks")


def test_why_not_cut_by_score_range_says_the_normalised_score_and_the_cutoff() -> None:
    lines = why_not(SECTION_HEAVY, "/b.md").splitlines()
    assert lines[0] == "/b.md is in the pool: best chunk at rank 4 of 5 (score 0.8), note 2 of 3."
    assert lines[1] == (
        "Answer (score-range): cut: normalised 0.34 < cutoff 0.40 "
        "(score 0.8 < threshold 0.816); the context keeps ranks 1-3."
    )
    assert lines[2] == "Search: not listed: its best chunk (rank 4) is cut."


def test_why_not_prints_more_digits_when_two_decimals_would_tie() -> None:
    # normalised (0.69 - 0.55) / 0.35 = 0.4000000000000001 ... yet 0.69 < 0.6900000000000001
    text = why_not(staircase(), staircase()[4])
    assert "normalised 0.400 < cutoff 0.400" not in text
    assert "score 0.69 < threshold 0.6900000000000001" in text


def test_why_not_cut_by_fixed() -> None:
    lines = why_not(SECTION_HEAVY, "/c.md", CutSettings(strategy="fixed", top_k=2)).splitlines()
    assert lines[1] == "Answer (fixed): cut: rank 5 > top_k 2; the context keeps ranks 1-2."
    assert lines[2] == "Search: not listed: note 3 > top_k 2 notes."


def test_why_not_cut_by_largest_drop_names_the_gap() -> None:
    lines = why_not(staircase(), "/e.md", CutSettings(strategy="largest-drop")).splitlines()
    assert lines[1] == (
        "Answer (largest-drop): cut: score 0.55 < boundary 0.62, the best score of note 4, "
        "which closes the largest relative drop 0.225 (from note 3 at 0.8; note positions "
        "3..4 searched); the context keeps ranks 1-7."
    )


def test_why_not_a_kept_note_gives_its_ordinals_and_search_row() -> None:
    lines = why_not(SECTION_HEAVY, "/a.md").splitlines()
    assert lines[1] == "Answer (score-range): kept as [1], [2], [3] of 3 chunks."
    assert lines[2] == "Search: listed as row 1 (its best chunk, rank 1)."


def test_why_not_a_partly_kept_note() -> None:
    lines = why_not(staircase(), "/a.md").splitlines()
    assert lines[1].startswith("Answer (score-range): kept as [1], [4]; rank 5, 6 cut: ")


def test_why_not_a_chunk_folded_into_a_better_chunk_of_its_note() -> None:
    lines = why_not(SECTION_HEAVY, SECTION_HEAVY[1]).splitlines()
    assert lines[1] == "Answer (score-range): kept as [2] of 3 chunks."
    assert lines[2] == (
        "Search: this chunk is folded into a better chunk of the same note (rank 1, 'intro'); "
        "the note is row 1."
    )


def test_why_not_a_chunk_missing_from_a_pool_that_holds_its_note() -> None:
    stranger = chunk("/a.md", "elsewhere", 0.5)
    text = why_not(SECTION_HEAVY, stranger)
    assert text.startswith("This chunk of /a.md is not in the pool (other chunks of its note are).")


def test_why_not_takes_a_frame() -> None:
    frame = pd.DataFrame({"path": ["/a.md", "/b.md"], "score": [0.9, 0.1]})
    assert "not listed" in why_not(frame, "/b.md")


def test_why_not_names_a_lone_kept_rank_in_the_singular() -> None:
    from askkit.ranking import CutSettings, pool_of, why_not

    pool = pool_of([0.9, 0.5, 0.4])
    text = why_not(pool, str(pool[2].path), CutSettings(strategy="fixed", top_k=1))
    assert "the context keeps rank 1." in text
    assert "ranks 1-1" not in text


# --------------------------------------------------------------------------- f64 limits

#: Scores near the f64 limit: kimun's ``high - low`` and a note's drop overflow to inf.
HUGE = pool_of([1.7e308, 1e308, -1e308, -1.7e308], ["/a.md", "/b.md", "/c.md", "/d.md"])


@pytest.mark.parametrize("cutoff", [0.4, 0.0, 1.0])
def test_explain_cut_near_the_float_limit_warns_nothing_and_keeps_what_kimun_keeps(
    cutoff: float,
) -> None:
    """NumPy's overflow warnings reached the terminal as ``askkit: warning: overflow``.

    kimun computes in f64 without traps: ``high - low`` is inf, so its threshold
    ``low + cutoff * inf`` is inf (NaN for a cutoff of 0) and no finite score
    reaches it: the score-range cut keeps nothing. The largest drop from 1e308 to
    -1e308 is ``inf / 1e308`` = inf, the largest there is.
    """
    settings = CutSettings(score_range_cutoff=cutoff, drop_window_min=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        frame = explain_cut(HUGE, settings)
    assert frame.attrs["cut_len"] == {
        strategy: cut_len(HUGE, settings.replace(strategy=strategy)) for strategy in STRATEGIES
    }
    assert frame.attrs["cut_len"]["score-range"] == 0
    assert frame.attrs["cut_len"]["largest-drop"] == 3  # the gap after note 2 closes at note 3
    assert frame["note_drop"].tolist()[:2] == [(1.7e308 - 1e308) / 1.7e308, math.inf]
    assert frame["normalised"].isna().all()  # a range that overflows has no scale


def test_why_not_near_the_float_limit_says_the_range_overflows() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        text = why_not(HUGE, "/b.md")
    assert "Answer (score-range): cut: the score range high - low overflows f64" in text
    assert "(1.7e+308 - -1.7e+308 = inf)" in text
    assert "threshold (low + cutoff * range) is inf and score 1e+308 does not reach it" in text


@given(
    st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64), min_size=1, max_size=25),
    st.lists(st.sampled_from("abcde"), min_size=25, max_size=25),
    st.floats(0.0, 1.0),
)
def test_explain_cut_on_any_finite_scores_warns_nothing_and_agrees_with_the_cuts(
    scores: list[float], notes: list[str], cutoff: float
) -> None:
    pool = pool_of(sorted(scores, reverse=True), [f"/{p}" for p in notes[: len(scores)]])
    settings = CutSettings(score_range_cutoff=cutoff, drop_window_min=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        frame = explain_cut(pool, settings)
        why_not(pool, pool[-1].path, settings)
    for strategy in STRATEGIES:
        assert frame.attrs["cut_len"][strategy] == cut_len(
            pool, settings.replace(strategy=strategy)
        )
