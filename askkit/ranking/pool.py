"""The candidate pool as kimun holds it: scored chunks, best first, each with its note path.

kimun's server pulls the best :data:`~askkit.ranking.settings.CANDIDATE_POOL`
chunks from its vector store, then de-duplicates identical chunks
(``deduplicate_chunks`` in ``server/src/lib.rs``). Every later stage (the
reranker, the context cut, the two surfaces) reads that pool in order.

askkit represents a chunk of the pool as a :class:`~askkit.ChunkResult`
(``similarity_score`` is the pool score: the vector score, or the reranker's
after :func:`~askkit.ranking.rerank.rerank`). The cut functions need only a
``path`` and a ``similarity_score`` (:class:`Scored`).

Examples
--------
>>> pool = deduplicate_chunks(pool_of([0.5, 0.9, 0.7], paths=["a.md", "a.md", "b.md"]))
>>> [(c.path, c.similarity_score) for c in pool]
[('a.md', 0.9), ('b.md', 0.7)]
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import replace
from typing import Protocol

from askkit.wire import ChunkResult

__all__ = ["Scored", "deduplicate_chunks", "pool_of"]


class Scored(Protocol):
    """What the cuts read of a pool chunk: its note and its score (higher is better)."""

    @property
    def path(self) -> str: ...

    @property
    def similarity_score(self) -> float: ...


def pool_of(
    scores: Iterable[float],
    paths: Iterable[str] | None = None,
    *,
    section: str = "s",
) -> list[ChunkResult]:
    """A pool of chunks with these scores, in this order; distinct notes unless ``paths`` say.

    The chunk of ``/n{i}.md`` gets title ``section`` and text
    ``"{path}#{section}"``, the shape of kimun's own test pools (``pool()``
    and ``chunk()`` in ``lib.rs``'s tests).

    >>> [c.path for c in pool_of([0.9, 0.8])]
    ['/n0.md', '/n1.md']
    """
    values = list(scores)
    names = [f"/n{i}.md" for i in range(len(values))] if paths is None else list(paths)
    if len(names) != len(values):
        raise ValueError(f"pool_of: {len(values)} scores but {len(names)} paths")
    return [
        ChunkResult(
            path=path,
            title=section,
            date=None,
            content=f"{path}#{section}",
            hash="h",
            similarity_score=float(score),
        )
        for score, path in zip(values, names, strict=True)
    ]


def _best_first(a: ChunkResult, b: ChunkResult) -> int:
    """Rust's ``b.0.partial_cmp(&a.0).unwrap_or(Equal)``: descending, NaN equal to all."""
    x, y = a.similarity_score, b.similarity_score
    return (x < y) - (x > y)


def deduplicate_chunks(results: Iterable[ChunkResult]) -> list[ChunkResult]:
    """kimun's ``deduplicate_chunks``: one chunk per (path, hash, title, text, date), best first.

    Identical chunks (the five fields of kimun's ``FlattenedChunk``) keep
    their highest score (a later score replaces the kept one only when it is
    strictly greater). The result is sorted best first. kimun collects the
    chunks in a hash map, so its order among equal scores is arbitrary; askkit
    keeps the first-seen order among them (one of kimun's possible orders).
    The kept chunk is the first one seen, with the best score.

    >>> pool = pool_of([0.5, 0.9, 0.7], paths=["/a.md", "/a.md", "/b.md"])
    >>> [c.similarity_score for c in deduplicate_chunks(pool)]
    [0.9, 0.7]
    """
    kept: dict[tuple[str, str, str, str, str | None], ChunkResult] = {}
    for chunk in results:
        key = (chunk.path, chunk.hash, chunk.title, chunk.content, chunk.date)
        seen = kept.get(key)
        if seen is None:
            kept[key] = chunk
        elif chunk.similarity_score > seen.similarity_score:
            kept[key] = replace(seen, similarity_score=chunk.similarity_score)
    return sorted(kept.values(), key=functools.cmp_to_key(_best_first))
