"""What the cut becomes on kimun's two surfaces: search rows and an answer's context.

* **search** (``/api/embeddings``, ``KimunRag::search`` in ``server/src/lib.rs``)
  lists one row per note, the note's best (first-seen) chunk: under
  ``fixed`` it walks the whole ranked pool until ``top_k`` notes (floored to
  1); under the adaptive cuts it lists every note with a chunk in the kept
  prefix.
* **answer** (``/api/answer``) keeps the chunk-level prefix, numbered
  ``1..n``: the ordinals the prompt's ``[n]`` citations use.

Examples
--------
>>> from askkit.ranking.pool import pool_of
>>> pool = pool_of([0.99, 0.98, 0.97, 0.80, 0.70],
...                paths=["/a.md", "/a.md", "/a.md", "/b.md", "/c.md"])
>>> [c.path for c in search_rows(pool)], [c.ordinal for c in answer_context(pool)]
(['/a.md'], [1, 2, 3])
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from askkit.ranking.cut import cut_len
from askkit.ranking.pool import Scored
from askkit.ranking.settings import CutSettings
from askkit.wire import ChunkResult

__all__ = ["CutPreview", "answer_context", "cut_preview", "dedupe_by_note", "search_rows"]

S = TypeVar("S", bound=Scored)


def dedupe_by_note(ranked: Iterable[S], top_k: int | None = None) -> list[S]:
    """kimun's ``dedupe_by_note``: each note's first (best) chunk, at most ``top_k`` notes.

    ``top_k=None`` means no limit (kimun's ``usize::MAX``); ``top_k <= 0``
    gives no rows (kimun's function returns none for 0; the search surface
    floors ``top_k`` to 1 before calling it).

    >>> from askkit.ranking.pool import pool_of
    >>> rows = dedupe_by_note(pool_of([0.9, 0.8, 0.7], paths=["/a.md", "/a.md", "/b.md"]), 20)
    >>> [(r.path, r.similarity_score) for r in rows]
    [('/a.md', 0.9), ('/b.md', 0.7)]
    """
    if top_k is not None and top_k <= 0:
        return []
    seen: set[str] = set()
    out: list[S] = []
    for chunk in ranked:
        if chunk.path not in seen:
            seen.add(chunk.path)
            out.append(chunk)
            if len(out) == top_k:
                break
    return out


def search_rows(pool: Sequence[S], settings: CutSettings | None = None) -> list[S]:
    """The rows kimun's search returns for this ranked pool: one per note, best first.

    >>> from askkit.ranking.pool import pool_of
    >>> pool = pool_of([0.99, 0.98, 0.80, 0.70], paths=["/a.md", "/a.md", "/b.md", "/c.md"])
    >>> [r.path for r in search_rows(pool, CutSettings(strategy="fixed", top_k=2))]
    ['/a.md', '/b.md']
    """
    settings = CutSettings() if settings is None else settings
    if settings.strategy == "fixed":
        return dedupe_by_note(pool, max(settings.top_k, 1))
    return dedupe_by_note(pool[: cut_len(pool, settings)])


def answer_context(
    pool: Sequence[ChunkResult], settings: CutSettings | None = None
) -> list[ChunkResult]:
    """The chunks kimun's answer puts in the prompt, each with its ordinal ``1..n``.

    >>> from askkit.ranking.pool import pool_of
    >>> context = answer_context(pool_of([0.90, 0.40, 0.30]))
    >>> [(c.path, c.ordinal) for c in context]
    [('/n0.md', 1)]
    """
    kept = pool[: cut_len(pool, settings)]
    return [replace(chunk, ordinal=i) for i, chunk in enumerate(kept, start=1)]


@dataclass(frozen=True, slots=True)
class CutPreview:
    """kimun's ``CutPreview`` (the web UI's test-query box): where the cut lands.

    Attributes
    ----------
    pool_chunks:
        Chunks in the ranked pool.
    context:
        The chunks the cut keeps (the answer's context), best first.
    boundary:
        ``(last kept score, first dropped score)``, or ``None`` when nothing
        was cut (or nothing kept).
    """

    pool_chunks: int
    context: tuple[Scored, ...]
    boundary: tuple[float, float] | None


def cut_preview(pool: Sequence[Scored], settings: CutSettings | None = None) -> CutPreview:
    """kimun's cut preview of a ranked pool.

    >>> from askkit.ranking.pool import pool_of
    >>> cut_preview(pool_of([0.99, 0.98, 0.97, 0.80, 0.70])).boundary
    (0.97, 0.8)
    """
    cut = cut_len(pool, settings)
    boundary = None
    if 0 < cut < len(pool):
        boundary = (pool[cut - 1].similarity_score, pool[cut].similarity_score)
    return CutPreview(len(pool), tuple(pool[:cut]), boundary)
