"""The candidate pool: kimun's de-duplication of identical chunks."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from askkit.ranking.pool import deduplicate_chunks, pool_of
from askkit.ranking.settings import CutSettings
from askkit.ranking.surfaces import search_rows
from askkit.wire import ChunkResult

#: kimun's commit these tests pin (server/src/lib.rs as of 42c2f81b).
KIMUN_COMMIT = "f28bdd5426c7c22f67601f62f588e958c35e43e1"


def chunk(path: str, section: str, score: float) -> ChunkResult:
    """kimun's test `chunk(path, section)`, with its score."""
    return ChunkResult(path, section, None, f"{path}#{section}", "h", score)


def test_search_dedupes_identical_chunks_keeping_best_score() -> None:
    # lib.rs: the store returns /a.md#s twice (0.5, 0.9) and /b.md#s; fixed search, top_k 10.
    dup = chunk("/a.md", "s", 0.5)
    raw = [dup, replace(dup, similarity_score=0.9), chunk("/b.md", "s", 0.7)]
    out = search_rows(deduplicate_chunks(raw), CutSettings(strategy="fixed", top_k=10))
    assert len(out) == 2
    assert out[0].similarity_score == 0.9, "duplicate keeps its highest score"
    assert out[0].path == "/a.md"


@pytest.mark.parametrize(
    "field",
    [
        {"path": "/other.md"},
        {"hash": "h2"},
        {"title": "t2"},
        {"content": "other text"},
        {"date": "2026-04-08"},
    ],
)
def test_chunks_differing_in_any_identity_field_are_kept_apart(field: dict[str, str]) -> None:
    a = chunk("/a.md", "s", 0.9)
    b = replace(a, similarity_score=0.8, **field)  # type: ignore[arg-type]
    assert deduplicate_chunks([a, b]) == [a, b]


def test_the_ordinal_is_not_part_of_a_chunks_identity() -> None:
    a = chunk("/a.md", "s", 0.5)
    out = deduplicate_chunks([a, replace(a, similarity_score=0.6, ordinal=3)])
    assert out == [replace(a, similarity_score=0.6)]


def test_an_equal_score_does_not_replace_the_kept_chunk() -> None:
    a = replace(chunk("/a.md", "s", 0.5), ordinal=1)
    assert deduplicate_chunks([a, replace(a, ordinal=2)]) == [a]


def test_ties_keep_the_first_seen_order_and_the_pool_is_resorted() -> None:
    raw = pool_of([0.1, 0.5, 0.5, 0.9], paths=["/w.md", "/x.md", "/y.md", "/z.md"])
    assert [c.path for c in deduplicate_chunks(raw)] == ["/z.md", "/x.md", "/y.md", "/w.md"]


@pytest.mark.parametrize(
    ("scores", "expected"),
    [([], []), ([0.3], [0.3]), ([-0.5, -0.1], [-0.1, -0.5]), ([0.7, 0.7, 0.7], [0.7, 0.7, 0.7])],
)
def test_edge_pools(scores: list[float], expected: list[float]) -> None:
    assert [c.similarity_score for c in deduplicate_chunks(pool_of(scores))] == expected


def test_pool_of_needs_one_path_per_score() -> None:
    with pytest.raises(ValueError, match="2 scores but 1 paths"):
        pool_of([0.9, 0.8], paths=["/a.md"])


IDENTITIES = st.tuples(
    st.sampled_from(["/a.md", "/b.md", "/c.md"]), st.sampled_from(["s", "t"]), st.integers(-4, 4)
)


@given(st.lists(IDENTITIES, max_size=20))
def test_dedup_keeps_one_chunk_per_identity_with_its_best_score_best_first(
    rows: list[tuple[str, str, int]],
) -> None:
    raw = [chunk(path, section, score / 4) for path, section, score in rows]
    out = deduplicate_chunks(raw)
    keys = [(c.path, c.title) for c in out]
    assert len(keys) == len(set(keys)) == len({(p, s) for p, s, _ in rows})
    for c in out:
        same = [r.similarity_score for r in raw if (r.path, r.title) == (c.path, c.title)]
        assert c.similarity_score == max(same)
    scores = [c.similarity_score for c in out]
    assert scores == sorted(scores, reverse=True)
