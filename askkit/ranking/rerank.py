"""The reranker stage of kimun's pipeline: sanitise, validate, reorder, or fall back.

kimun's server (``KimunRag::rank`` in ``server/src/lib.rs``) passes the whole
de-duplicated pool to the reranker, which answers with one ``(index, score)``
pair per chunk. Then, in this order:

1. :func:`sanitize_scores`: a batch with any score outside ``0..=1`` or
   non-finite goes through the :func:`sigmoid` (non-finite scores become 0.0);
2. :func:`validate_scored` (``reranker/mod.rs``): exactly one score per chunk,
   each index in range and unique, then sorted by score descending (a stable
   sort with Rust's ``f64::total_cmp``);
3. the pool is reordered and each chunk takes its reranker score.

A failed call or a malformed answer keeps the vector-ranked pool.
:func:`rerank` does all of it and says why it fell back.

Examples
--------
>>> from askkit.ranking.pool import pool_of
>>> out = rerank(pool_of([0.7, 0.7, 0.7]), [(0, 0.1), (1, 0.9), (2, 0.5)])
>>> [(c.path, c.similarity_score) for c in out.pool], out.fallback_reason
([('/n1.md', 0.9), ('/n2.md', 0.5), ('/n0.md', 0.1)], None)
"""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence
from dataclasses import dataclass, replace
from numbers import Integral, Real

from askkit.errors import SchemaError
from askkit.wire import ChunkResult

__all__ = [
    "Reranked",
    "rerank",
    "sanitize_scores",
    "sigmoid",
    "total_order_key",
    "validate_scored",
]

_MAGNITUDE = 0x7FFF_FFFF_FFFF_FFFF


def sigmoid(x: float) -> float:
    """kimun's ``sigmoid``: ``1 / (1 + e^-x)``; ``e^-x`` overflowing gives 0.0.

    >>> sigmoid(0.0), sigmoid(-1000.0), sigmoid(1000.0)
    (0.5, 0.0, 1.0)
    """
    try:
        tail = math.exp(-x)
    except OverflowError:  # Rust's exp gives inf here
        tail = math.inf
    return 1.0 / (1.0 + tail)


def total_order_key(x: float) -> int:
    """An int that sorts like Rust's ``f64::total_cmp``: -NaN < -inf < -0.0 < 0.0 < inf < NaN.

    >>> sorted([0.0, -0.0, float("inf"), -1.0], key=total_order_key)
    [-1.0, -0.0, 0.0, inf]
    """
    bits: int = struct.unpack("<q", struct.pack("<d", x))[0]
    return bits ^ ((bits >> 63) & _MAGNITUDE)


def sanitize_scores(
    scored: Sequence[tuple[int, float]],
) -> tuple[list[tuple[int, float]], bool]:
    """kimun's ``sanitize_scores``: sigmoid a batch that leaves ``0..=1``; non-finite -> 0.0.

    Returns the pairs and whether the batch broke the ``0..=1`` contract
    (kimun then logs a warning once per run). A batch inside ``0..=1`` is
    returned unchanged, so calibrated scores are never squashed.

    >>> sanitize_scores([(0, 5.0), (1, float("nan"))])
    ([(0, 0.9933071490757153), (1, 0.0)], True)
    >>> sanitize_scores([(0, 0.2), (1, 1.0)])
    ([(0, 0.2), (1, 1.0)], False)
    """
    pairs = [(index, float(score)) for index, score in scored]
    violated = any(not math.isfinite(s) or not 0.0 <= s <= 1.0 for _, s in pairs)
    if not violated:
        return pairs, False
    return [(i, sigmoid(s) if math.isfinite(s) else 0.0) for i, s in pairs], True


def validate_scored(scored: Sequence[tuple[int, float]], documents: int) -> list[tuple[int, float]]:
    """kimun's ``validate_scored``: one score per document, indices in range and unique; sorted.

    The sort is by score descending, stable, with ``total_cmp`` (so ``0.0``
    ranks above ``-0.0``). The error messages are kimun's.

    Raises
    ------
    SchemaError
        ``"rerank returned 1 scores for a 2-document request"``,
        ``"rerank returned index 7 for a 1-document request"``,
        ``"rerank returned index 0 more than once"``; or an index that is not
        a whole number, a score that is not a number.

    Examples
    --------
    >>> validate_scored([(0, 0.1), (2, 0.9), (1, 0.5)], 3)
    [(2, 0.9), (1, 0.5), (0, 0.1)]
    >>> validate_scored([(0, 0.9)], 2)
    Traceback (most recent call last):
    ...
    askkit.errors.SchemaError: rerank returned 1 scores for a 2-document request
    """
    pairs = list(scored)
    if len(pairs) != documents:
        raise SchemaError(
            f"rerank returned {len(pairs)} scores for a {documents}-document request",
            has_value=False,
        )
    seen = [False] * documents
    for position, (index, score) in enumerate(pairs):
        if isinstance(index, bool) or not isinstance(index, Integral):
            raise SchemaError("expected a whole number", field=f"[{position}].index", value=index)
        if isinstance(score, bool) or not isinstance(score, Real):
            raise SchemaError("expected a number", field=f"[{position}].score", value=score)
        if not 0 <= index < documents:
            raise SchemaError(
                f"rerank returned index {index} for a {documents}-document request",
                has_value=False,
            )
        if seen[index]:
            raise SchemaError(f"rerank returned index {index} more than once", has_value=False)
        seen[index] = True
    ordered = [(int(i), float(s)) for i, s in pairs]
    ordered.sort(key=lambda pair: total_order_key(pair[1]), reverse=True)  # stable
    return ordered


@dataclass(frozen=True, slots=True)
class Reranked:
    """The pool after kimun's rank step.

    Attributes
    ----------
    pool:
        The ranked pool: reordered with the reranker's scores, or the
        vector-ranked pool unchanged when kimun fell back.
    fallback_reason:
        Why kimun kept the vector order (the call failed, or kimun's
        validation message), or ``None`` when the reranker's order was used.
    sanitised:
        The reranker's scores left ``0..=1`` (or were not finite) and went
        through the sigmoid; kimun logs a warning (once per run).
    """

    pool: tuple[ChunkResult, ...]
    fallback_reason: str | None = None
    sanitised: bool = False

    @property
    def reranked(self) -> bool:
        """Whether the reranker's order (and scores) were used."""
        return self.fallback_reason is None


def rerank(pool: Sequence[ChunkResult], scored: Sequence[tuple[int, float]] | None) -> Reranked:
    """kimun's ``rank`` step: apply a reranker's answer to the pool, or keep the vector order.

    Parameters
    ----------
    pool:
        The de-duplicated, vector-ranked pool (best first).
    scored:
        The reranker's ``(index into pool, score)`` pairs, in any order, as
        its backend returned them; ``None`` when the call failed (an HTTP
        error, a model error).

    Returns
    -------
    Reranked
        The ranked pool, and why kimun fell back to the vector order if it did.

    Examples
    --------
    >>> from askkit.ranking.pool import pool_of
    >>> out = rerank(pool_of([0.9, 0.8]), [(0, 0.5), (0, 0.5)])
    >>> out.reranked, out.fallback_reason
    (False, 'rerank returned index 0 more than once; kimun keeps the vector order')
    """
    chunks = tuple(pool)
    if scored is None:
        return Reranked(chunks, "the reranker call failed; kimun keeps the vector order")
    try:
        sane, sanitised = sanitize_scores(scored)
        order = validate_scored(sane, len(chunks))
    except (SchemaError, TypeError, ValueError) as exc:
        message = exc.message if isinstance(exc, SchemaError) and exc.field is None else str(exc)
        return Reranked(chunks, f"{message}; kimun keeps the vector order")
    ranked = tuple(replace(chunks[i], similarity_score=s) for i, s in order)
    return Reranked(ranked, None, sanitised)
