"""kimun's two surfaces end to end: store -> de-dup -> (rerank) -> cut -> search rows / answer.

kimun's pipeline tests (``lib.rs``) run ``KimunRag::search`` and ``answer`` on a
fake store and fake rerankers; here the same pipeline is composed from the pure
functions, with the same inputs and expected values.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import pytest

from askkit.ranking.pool import deduplicate_chunks, pool_of
from askkit.ranking.rerank import rerank
from askkit.ranking.settings import STRATEGIES, CutSettings
from askkit.ranking.surfaces import (
    answer_context,
    cut_preview,
    dedupe_by_note,
    search_rows,
)
from askkit.wire import ChunkResult

#: kimun's commit these tests pin (server/src/lib.rs as of 42c2f81b).
KIMUN_COMMIT = "f28bdd5426c7c22f67601f62f588e958c35e43e1"

Reranker = Callable[[Sequence[ChunkResult]], list[tuple[int, float]] | None]


def chunk(path: str, section: str, score: float) -> ChunkResult:
    """kimun's test `chunk(path, section)`, with its score."""
    return ChunkResult(path, section, None, f"{path}#{section}", "h", score)


def section_heavy_store() -> list[ChunkResult]:
    """kimun's `section_heavy_store`: /a.md three times at the top, then /b.md, /c.md."""
    return [
        chunk("/a.md", "intro", 0.99),
        chunk("/a.md", "body", 0.98),
        chunk("/a.md", "end", 0.97),
        chunk("/b.md", "b1", 0.80),
        chunk("/c.md", "c1", 0.70),
    ]


def ranked(raw: list[ChunkResult], reranker: Reranker | None) -> list[ChunkResult]:
    """kimun's `retrieve` (de-dup) then `rank` (the reranker, or the vector order)."""
    pool = deduplicate_chunks(raw)
    return pool if reranker is None else list(rerank(pool, reranker(pool)).pool)


def search(
    raw: list[ChunkResult], settings: CutSettings, reranker: Reranker | None = None
) -> list[ChunkResult]:
    return search_rows(ranked(raw, reranker), settings)


def answer(
    raw: list[ChunkResult], settings: CutSettings, reranker: Reranker | None = None
) -> list[ChunkResult]:
    return answer_context(ranked(raw, reranker), settings)


def failing(_: Sequence[ChunkResult]) -> None:
    return None


def spiky(pool: Sequence[ChunkResult]) -> list[tuple[int, float]]:
    return [(i, 0.9 if i == 0 else 0.1) for i in range(len(pool))]


def logit(pool: Sequence[ChunkResult]) -> list[tuple[int, float]]:
    return [(i, 5.0 - i) for i in range(len(pool))]


def nan_first(pool: Sequence[ChunkResult]) -> list[tuple[int, float]]:
    return [(i, math.nan if i == 0 else 0.9 - i * 0.1) for i in range(len(pool))]


def duplicate_index(pool: Sequence[ChunkResult]) -> list[tuple[int, float]]:
    return [(0, 0.5) for _ in pool]


def short(_: Sequence[ChunkResult]) -> list[tuple[int, float]]:
    return [(0, 0.9)]


FIXED = CutSettings(strategy="fixed")
DEFAULT = CutSettings()


# --------------------------------------------------------------------------- kimun's tests


def test_search_returns_one_result_per_note_and_top_k_counts_notes() -> None:
    out = search(section_heavy_store(), FIXED.replace(top_k=2))
    assert len(out) == 2, "top_k counts NOTES, not chunks"
    assert out[0].path == "/a.md"
    assert out[0].title == "intro", "keeps the note's best chunk"
    assert out[1].path == "/b.md"


def test_answer_keeps_chunk_level_context_cut_by_normalized_score() -> None:
    sources = answer(section_heavy_store(), DEFAULT.replace(top_k=2))
    assert len(sources) == 3
    assert sources[0].path == "/a.md"
    assert sources[1].path == "/a.md", "chunk-level: no note-dedup"
    assert [s.ordinal for s in sources] == [1, 2, 3]


def test_answer_without_reranker_has_no_count_floor() -> None:
    raw = [chunk("/a.md", "a1", 0.90), chunk("/b.md", "b1", 0.40), chunk("/c.md", "c1", 0.30)]
    sources = answer(raw, DEFAULT.replace(top_k=2))
    assert len(sources) == 1
    assert sources[0].path == "/a.md"


def test_search_and_answer_degrade_to_vector_ranking_when_the_reranker_fails() -> None:
    out = search(section_heavy_store(), DEFAULT.replace(top_k=2), failing)
    assert len(out) == 1, "request succeeds on the raw pool"
    assert out[0].path == "/a.md"
    assert len(answer(section_heavy_store(), DEFAULT.replace(top_k=2), failing)) == 3


def test_non_finite_cutoff_is_ignored_not_poisonous() -> None:
    ragged = DEFAULT.replace(score_range_cutoff=math.nan, top_k=10)
    assert len(search(section_heavy_store(), ragged)) == 1, "default cutoff still applies"
    strict = DEFAULT.replace(score_range_cutoff=math.inf, top_k=10)
    assert len(search(section_heavy_store(), strict)) == 1, "inf -> cutoff 1.0: the range top"
    loose = DEFAULT.replace(score_range_cutoff=-math.inf, top_k=10)
    assert len(search(section_heavy_store(), loose)) == 3, "-inf -> 0.0 keeps the whole pool"


def test_out_of_contract_reranker_scores_are_sigmoid_normalized() -> None:
    sources = answer(pool_of([0.7, 0.7, 0.7]), DEFAULT.replace(top_k=2), logit)
    assert len(sources) == 2, "normalized scores keep the cut"
    assert all(0.0 <= s.similarity_score < 1.0 for s in sources)


def test_nan_reranker_scores_do_not_empty_results() -> None:
    sources = answer(pool_of([0.7, 0.7, 0.7]), DEFAULT.replace(top_k=3), nan_first)
    assert sources, "NaN must not empty the results"
    assert all(math.isfinite(s.similarity_score) for s in sources)


def test_malformed_reranker_output_degrades_instead_of_panicking() -> None:
    out = search(section_heavy_store(), DEFAULT.replace(top_k=2), duplicate_index)
    assert len(out) == 1, "duplicate index -> vector-order fallback"
    assert out[0].path == "/a.md"
    assert len(search(section_heavy_store(), DEFAULT.replace(top_k=2), short)) == 1


def test_zero_top_k_from_a_config_file_is_floored() -> None:
    fixed = FIXED.replace(top_k=0)
    assert len(search(section_heavy_store(), fixed)) == 1
    assert len(answer(section_heavy_store(), fixed)) == 1


def test_the_cut_runs_on_reranked_scores() -> None:
    store = pool_of([0.7, 0.7, 0.7, 0.7, 0.7])
    sources = answer(store, DEFAULT.replace(top_k=4), spiky)
    assert len(sources) == 1, "cut on reranked scores"
    assert sources[0].similarity_score == 0.9
    assert len(answer(store, FIXED.replace(top_k=4), spiky)) == 4
    assert len(search(store, DEFAULT.replace(top_k=10), spiky)) == 1


def test_search_cut_preview_marks_the_answer_context() -> None:
    pool = ranked(section_heavy_store(), None)
    preview = cut_preview(pool, DEFAULT.replace(top_k=10))
    hits = search_rows(pool, DEFAULT.replace(top_k=10))
    assert preview.pool_chunks == 5
    assert len(preview.context) == 3, "score-range keeps 0.99/0.98/0.97 of the 0.99..0.70 pool"
    assert preview.boundary == (0.97, 0.80), "boundary = last kept / first dropped pool score"
    assert len(hits) == 1
    assert hits[0] in preview.context
    reranked = cut_preview(ranked(section_heavy_store(), failing), DEFAULT)
    assert reranked.pool_chunks == 5, "preview on the reranked path too"


def test_answer_uses_the_configured_context_cut() -> None:
    store = pool_of([1.00, 0.93, 0.88, 0.86, 0.84])
    assert len(answer(store, DEFAULT.replace(top_k=2))) == 2, "default is score-range"
    assert len(answer(store, CutSettings(strategy="largest-drop", top_k=2))) == 5


def test_dedupe_by_note_returns_all_distinct_notes_when_under_top_k() -> None:
    ranked_pool = [chunk("/a.md", "s", 0.9), chunk("/a.md", "s2", 0.8), chunk("/b.md", "s", 0.7)]
    out = dedupe_by_note(ranked_pool, 20)
    assert len(out) == 2
    assert out[0].path == "/a.md"
    assert out[1].path == "/b.md"


def test_dedupe_by_note_top_k_zero_is_empty() -> None:
    assert dedupe_by_note([chunk("/a.md", "s", 0.9)], 0) == []


# --------------------------------------------------------------------------- beyond kimun's tests


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_an_empty_pool_gives_no_rows_no_context_and_no_boundary(strategy: str) -> None:
    settings = CutSettings(strategy=strategy)  # type: ignore[arg-type]
    assert search_rows([], settings) == []
    assert answer_context([], settings) == []
    assert cut_preview([], settings).boundary is None


def test_fixed_search_walks_the_whole_pool_past_the_answers_chunks() -> None:
    # top_k = 2 chunks are both /a.md, but search walks on until 2 notes
    settings = FIXED.replace(top_k=2)
    assert [c.path for c in answer_context(section_heavy_store(), settings)] == ["/a.md"] * 2
    assert [c.path for c in search_rows(section_heavy_store(), settings)] == ["/a.md", "/b.md"]


def test_adaptive_search_lists_every_note_with_a_kept_chunk_whatever_top_k() -> None:
    pool = pool_of([0.9, 0.9, 0.9, 0.1], paths=["/a.md", "/b.md", "/a.md", "/c.md"])
    rows = search_rows(pool, DEFAULT.replace(top_k=1))
    assert [r.path for r in rows] == ["/a.md", "/b.md"]


def test_answer_ordinals_replace_any_previous_ordinal() -> None:
    pool = [c.__class__(**{**c.to_dict(), "ordinal": 9}) for c in pool_of([0.9, 0.8])]
    assert [c.ordinal for c in answer_context(pool, FIXED.replace(top_k=2))] == [1, 2]


def test_the_preview_boundary_is_none_when_nothing_is_cut() -> None:
    assert cut_preview(pool_of([0.5, 0.5]), DEFAULT).boundary is None
