"""A run ranked and graded as integer arrays: what both scoring paths produce.

:func:`askkit.metrics.preparation.code` turns a run and its judgments into a
:class:`Coded` run (integer query codes; document ids stay Arrow strings).
Either path then ranks, de-duplicates and grades it into a :class:`Graded`
run: :func:`askkit.metrics.exact.exact`, the specification, or the faster
:func:`askkit.metrics.fast.graded`. This module holds those types and the
integer primitives both paths rank with. A run is four arrays (query code,
document code, score, input order); the qrels are three (query code,
document code, grade). Query codes run over ``0..n_queries-1``; document
codes sort like the document id strings (or come with a ``doc_rank`` that
orders them, so that "document id descending" is a code comparison). A run
that arrives grouped and ranked is checked in one vectorized pass and not
sorted; otherwise one ``argsort`` of a packed int64 key ranks it. A hash pass
drops duplicate (query, document) pairs; ranks come from group starts and
grades from a ``searchsorted`` merge with the qrels.
"""

from __future__ import annotations

import itertools
import mmap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

__all__ = [
    "CHUNK",
    "Blocked",
    "Blocks",
    "BoolArray",
    "Coded",
    "FloatArray",
    "Graded",
    "Hits",
    "IntArray",
    "Ranked",
    "Ties",
    "argsort_keys",
    "block_order",
    "chunk_edges",
    "descending_or_tied",
    "dictionary_codes",
    "fresh",
    "group_numbers",
    "group_rank",
    "lookup_grades",
    "query_blocks",
    "rank_run",
    "take",
]

IntArray = np.ndarray[Any, np.dtype[np.int64]]
FloatArray = np.ndarray[Any, np.dtype[np.float64]]
BoolArray = np.ndarray[Any, np.dtype[np.bool_]]
Ties = Literal["trec", "input"]
#: numpy advises transparent huge pages for arrays of this many bytes and more.
_HUGE_PAGES = 4 << 20


@dataclass(frozen=True, slots=True)
class Coded:
    """A run and its judgments with integer query codes: where both paths start.

    Query codes index ``qids`` (sorted). The run's kept rows (those of
    ``qids``' queries) are ``query``, ``score`` and ``order``;
    ``keep`` maps them to rows of the run (None: every row) and ``docs`` holds
    the document id of every row of the run (Arrow ``large_string``, an array
    or its chunks). ``grouped``: each query's kept rows are contiguous.
    ``order`` is the input order (the ``rank``
    column, else the row number). The qrels are ``qrels_query``,
    ``qrels_docs`` and ``qrels_grade``, one row per judgment as read.
    """

    qids: pd.Index
    in_qrels: BoolArray
    in_run: BoolArray
    run_only: tuple[str, ...]
    ties: Ties
    grouped: bool
    query: IntArray
    keep: IntArray | None
    score: FloatArray
    order: IntArray
    docs: pa.Array | pa.ChunkedArray
    qrels_query: IntArray
    qrels_docs: pa.Array | pa.ChunkedArray
    qrels_grade: IntArray


@dataclass(frozen=True, slots=True)
class Ranked:
    """A run after de-duplication and ranking: rows sorted by query, then rank.

    ``rows`` are positions in the input arrays (the kept, best chunk of each
    (query, document) pair); ``duplicates`` counts the rows dropped.
    """

    rows: IntArray
    query: IntArray
    doc: IntArray
    rank: IntArray
    duplicates: int


@dataclass(frozen=True, slots=True)
class Graded:
    """A run ranked, de-duplicated and graded: everything :func:`compute` scores.

    ``ranked.doc`` indexes ``docs`` (the document ids, Arrow strings);
    ``score``, ``grade`` (0 when unjudged) and ``judged`` follow ``ranked``'s
    rows. ``qrels_query`` and ``qrels_grade`` hold one judgment per (query,
    document), the highest grade.
    """

    ranked: Ranked
    docs: pa.Array | pa.ChunkedArray
    score: FloatArray
    grade: IntArray
    judged: BoolArray
    qrels_query: IntArray
    qrels_grade: IntArray


@dataclass(frozen=True, slots=True)
class Blocked:
    """A run grouped by query (each query's rows one block), its queries coded block
    by block: what :func:`askkit.metrics.fast.judged_rows` takes.

    Query codes index ``qids`` (the judged queries, sorted). The blocks are
    those of judged queries, in the run's order: each starts at row
    ``start`` of the run, holds ``size`` rows and is query ``code`` (each
    code at most once). ``score``, ``rank`` (the input order; None: the row
    number) and ``docs`` cover every row of the run; the qrels are
    ``qrels_query``, ``qrels_docs`` and ``qrels_grade``, one row per judgment
    as read.
    """

    qids: pd.Index
    ties: Ties
    start: IntArray
    size: IntArray
    code: IntArray
    score: FloatArray
    rank: IntArray | None
    docs: pa.Array | pa.ChunkedArray
    qrels_query: IntArray
    qrels_docs: pa.Array | pa.ChunkedArray
    qrels_grade: IntArray


@dataclass(frozen=True, slots=True)
class Hits:
    """The judged rows of a run ranked, de-duplicated and graded: all that
    :func:`~askkit.metrics.measures.compute` reads of a :class:`Graded` run when
    no unjudged row can count (the relevance level above -1).

    ``query``, ``rank`` and ``grade`` are the judged rows' (each query's rows
    contiguous and in rank order, the queries in any order), ranked among
    every row kept; ``retrieved`` counts each query's rows kept;
    ``duplicates`` the rows dropped. ``qrels_query`` and ``qrels_grade`` hold
    one judgment per (query, document), the highest grade.
    """

    query: IntArray
    rank: IntArray
    grade: IntArray
    retrieved: IntArray
    duplicates: int
    qrels_query: IntArray
    qrels_grade: IntArray


def fresh(n: int, dtype: Any) -> np.ndarray[Any, Any]:
    """An uninitialised array of ``n`` values in ordinary 4 kB pages.

    numpy advises transparent huge pages for arrays of 4 MiB and more. On a
    virtual machine whose freed memory goes back to its host, the first touch
    of each fresh 2 MB page then costs milliseconds; the long outputs of a
    large run are mapped in small pages instead.
    """
    nbytes = n * np.dtype(dtype).itemsize
    if nbytes < _HUGE_PAGES:
        return np.empty(n, dtype=dtype)
    return np.frombuffer(mmap.mmap(-1, nbytes), dtype=dtype)


def group_rank(query: IntArray, out: IntArray | None = None) -> IntArray:
    """1-based position within each run of equal values of a grouped ``query``.

    ``out``: an int64 array as long as ``query`` to write the ranks into.

    >>> group_rank(np.array([4, 4, 4, 1, 7, 7])).tolist()
    [1, 2, 3, 1, 1, 2]
    """
    n = len(query)
    if n == 0:
        return np.empty(0, dtype=np.int64)
    new = np.empty(n, dtype=bool)
    new[0] = True
    np.not_equal(query[1:], query[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    del new
    # ones, with each group's first step back to 1; their running sum is the rank
    if out is None:
        rank = np.ones(n, dtype=np.int64)
    else:
        rank = out
        rank.fill(1)
    rank[starts[1:]] = 1 - np.diff(starts)
    np.cumsum(rank, out=rank)
    return rank


def group_numbers(query: IntArray) -> IntArray:
    """The number (0, 1, ...) of each row's run of equal values of a grouped ``query``.

    >>> group_numbers(np.array([4, 4, 1, 7, 7])).tolist()
    [0, 0, 1, 2, 2]
    """
    if len(query) == 0:
        return np.zeros(0, dtype=np.int64)
    new = np.empty(len(query), dtype=np.int64)
    new[0] = 0
    np.not_equal(query[1:], query[:-1], out=new[1:])
    return np.cumsum(new, out=new)


#: Rows a columnar pass takes at a time (:func:`chunk_edges`), so that its
#: temporaries stay in the CPU's caches and their memory is reused.
CHUNK = 131_072


def chunk_edges(query: IntArray, size: int | None = None) -> list[int]:
    """Edges of runs of about ``size`` (default :data:`CHUNK`) rows of a grouped
    ``query``, each of whole queries; ``[0, 0]`` when there are no rows.

    >>> chunk_edges(np.array([0, 0, 0, 1, 1, 2]), 2)
    [0, 3, 5, 6]
    """
    size = CHUNK if size is None else size
    if len(query) <= size:
        return [0, len(query)]
    starts = np.flatnonzero(query[1:] != query[:-1]) + 1
    at = np.searchsorted(starts, np.arange(size, len(query), size))
    return [0, *sorted({int(starts[i]) for i in at if i < len(starts)}), len(query)]


def argsort_keys(keys: list[tuple[IntArray, int]]) -> IntArray:
    """Stable argsort by non-negative integer keys, most significant first; each key < its bound.

    One ``argsort`` of a packed int64 when the keys fit in 63 bits, else one
    stable ``argsort`` per key (least significant first).

    >>> argsort_keys([(np.array([1, 0, 1]), 2), (np.array([0, 5, 3]), 6)]).tolist()
    [1, 0, 2]
    """
    n = len(keys[0][0])
    widths = [max(int(bound) - 1, 1).bit_length() for _, bound in keys]
    if sum(widths) <= 63:
        packed = np.zeros(n, dtype=np.int64)
        for (values, _), width in zip(keys, widths, strict=True):
            packed <<= width
            packed |= values
        return np.argsort(packed, kind="stable").astype(np.int64)
    order = np.arange(n, dtype=np.int64)
    for values, _ in reversed(keys):
        order = order[np.argsort(values[order], kind="stable")]
    return order


def _dense_desc(score: FloatArray) -> tuple[IntArray, int]:
    """Codes that sort like ``score`` descending (equal scores share a code; NaN last)."""
    uniq, inverse = np.unique(score, return_inverse=True)  # NaN sorts last in uniq
    n_nan = int(np.count_nonzero(np.isnan(uniq)))
    finite = len(uniq) - n_nan
    codes = np.where(inverse < finite, finite - 1 - inverse, finite).astype(np.int64)
    return codes, finite + 1


def _is_grouped(query: IntArray, same: BoolArray) -> bool:
    """Whether each query's rows are contiguous."""
    blocks = len(query) - int(np.count_nonzero(same))
    return blocks == int(np.count_nonzero(np.bincount(query)))


def descending_or_tied(score: FloatArray, same: BoolArray) -> tuple[BoolArray, IntArray]:
    """Check that scores never rise within a query (NaN sorts last: askkit's rule for a
    frame, since trec_eval gives a NaN no defined rank and a TREC run may not hold one).

    Returns ``ok`` (one flag per neighbouring pair; pairs across queries are
    ok) and the positions of pairs whose scores tie within a query: the caller
    decides those by document id.
    """
    hi, lo = score[:-1], score[1:]
    if np.isnan(score).any():
        nan_lo, nan_hi = np.isnan(lo), np.isnan(hi)
        tied = (hi == lo) | (nan_lo & nan_hi)
        ok = ~same | (hi > lo) | (nan_lo & ~nan_hi) | tied
    else:
        tied = hi == lo
        ok = ~same | (hi >= lo)
    return ok, np.flatnonzero(same & tied)


@dataclass(frozen=True, slots=True)
class Blocks:
    """The query blocks of a grouped run (each query's rows contiguous), in query order."""

    start: IntArray
    """Each block's first row in the run."""
    size: IntArray
    code: IntArray
    """Each block's query code (non-decreasing)."""
    first: IntArray
    """Where each block starts once the blocks are in query order."""
    in_order: bool
    """The run's blocks already are in query order (``start == first``)."""

    def span(self, a: int, b: int) -> tuple[int, int]:
        """Where blocks ``a`` to ``b - 1`` lie once the blocks are in query order."""
        if b <= a:
            return 0, 0
        return int(self.first[a]), int(self.first[b - 1] + self.size[b - 1])

    def rows(self, a: int, b: int) -> IntArray:
        """The run's rows of blocks ``a`` to ``b - 1``, in query order."""
        lo, hi = self.span(a, b)
        moved = np.repeat(self.start[a:b] - self.first[a:b], self.size[a:b])
        moved += np.arange(lo, hi, dtype=np.int64)
        return moved


def query_blocks(query: IntArray) -> Blocks:
    """The blocks of a grouped ``query``, put in query order (a stable sort of blocks).

    >>> b = query_blocks(np.array([5, 5, 2, 7, 7]))
    >>> b.code.tolist(), b.size.tolist(), b.rows(0, 3).tolist()
    ([2, 5, 7], [1, 2, 2], [2, 0, 1, 3, 4])
    """
    n = len(query)
    if n == 0:
        empty = np.empty(0, dtype=np.int64)
        return Blocks(empty, empty, empty, empty, in_order=True)
    starts = np.flatnonzero(np.concatenate([[True], query[1:] != query[:-1]]))
    by_block = np.argsort(query[starts], kind="stable")
    in_order = bool(np.all(by_block[1:] > by_block[:-1]))
    sizes = np.diff(np.append(starts, n))
    if not in_order:
        starts, sizes = starts[by_block], sizes[by_block]
    first = starts if in_order else np.cumsum(sizes) - sizes
    return Blocks(starts, sizes, query[starts], first, in_order)


def block_order(query: IntArray) -> IntArray | None:
    """The rows of a grouped run (each query's rows contiguous), blocks in query order;
    None when they already are.

    >>> block_order(np.array([5, 5, 2, 7, 7])).tolist()
    [2, 0, 1, 3, 4]
    >>> block_order(np.array([0, 0, 1])) is None
    True
    """
    blocks = query_blocks(query)
    return None if blocks.in_order else blocks.rows(0, len(blocks.start))


def rank_run(
    query: IntArray,
    doc: IntArray,
    score: FloatArray,
    order: IntArray,
    *,
    ties: Ties,
    doc_rank: Callable[[], IntArray] | None = None,
) -> Ranked:
    """De-duplicate (query, document) pairs keeping the best, then rank within each query.

    ``ties="trec"``: score descending, then document id descending (NaN
    scores last). ``ties="input"``: ``order`` ascending (the rank as
    received; equal values keep row order). The row kept for a duplicated
    pair is the first in that same order. ``doc_rank()`` maps a document code
    to its position in id order (codes are taken as ordered when omitted);
    it is only called when tied scores need it. Queries come out in code
    order, each query's rows in rank order; a run that already arrives
    grouped by query and ranked (as kimun sends it) only has its blocks put
    in that order, its rows are not sorted.

    >>> r = rank_run(np.array([0, 0, 0]), np.array([1, 2, 1]), np.array([1.0, 1.0, 3.0]),
    ...              np.array([1, 2, 3]), ties="trec")
    >>> r.doc.tolist(), r.rank.tolist(), r.duplicates
    ([1, 2], [1, 2], 1)
    """
    n = len(query)
    if n == 0:
        empty = np.empty(0, dtype=np.int64)
        return Ranked(empty, empty, empty, empty, 0)
    ranks_of_docs: IntArray | None = None

    def doc_ranks() -> IntArray:
        nonlocal ranks_of_docs
        if ranks_of_docs is None:
            ranks_of_docs = (
                doc_rank()
                if doc_rank is not None
                else np.arange(int(doc.max()) + 1, dtype=np.int64)
            )
        return ranks_of_docs

    same = query[1:] == query[:-1]
    grouped = _is_grouped(query, same)
    rows: IntArray | None = None
    if ties == "trec":
        s = score + 0.0  # -0.0 ties with 0.0, as in C
        if grouped:
            ok, check = descending_or_tied(s, same)
            if len(check):
                ranks = doc_ranks()
                ok[check] = ranks[doc[check]] >= ranks[doc[check + 1]]
            if ok.all():  # in rank order: only the queries are put in order
                rows = block_order(query)
                rows = np.arange(n, dtype=np.int64) if rows is None else rows
        if rows is None:
            codes, bound = _dense_desc(s)
            ranks = doc_ranks()
            width = int(ranks.max()) + 1 if len(ranks) else 1
            rows = argsort_keys(
                [
                    (query, int(query.max()) + 1),
                    (codes, bound),
                    (width - 1 - ranks[doc], width),
                ]
            )
    elif grouped and bool(np.all(~same | (order[1:] >= order[:-1]))):
        rows = block_order(query)
        rows = np.arange(n, dtype=np.int64) if rows is None else rows
    else:
        _, dense = np.unique(order, return_inverse=True)
        rows = argsort_keys(
            [(query, int(query.max()) + 1), (dense.astype(np.int64), int(dense.max()) + 1)]
        )
    identity = bool(rows[0] == 0 and rows[-1] == n - 1 and np.all(rows[1:] > rows[:-1]))
    q, d = (query, doc) if identity else (query[rows], doc[rows])
    duplicates = 0
    if _has_duplicates(q, d, same if identity else None):
        span = np.int64(int(doc.max()) + 1)
        dup = pd.Series(q * span + d).duplicated(keep="first").to_numpy()
        duplicates = int(np.count_nonzero(dup))
        rows, q, d = rows[~dup], q[~dup], d[~dup]
    return Ranked(rows, q, d, group_rank(q), duplicates)


def _has_duplicates(query: IntArray, doc: IntArray, same: BoolArray | None = None) -> bool:
    """Whether a grouped run holds a (query, document) pair twice.

    Packs (group number, document) so that the keys are already sorted group
    by group: the stable sort (timsort) then only sorts within groups.
    """
    if len(query) < 2:
        return False
    new = np.empty(len(query), dtype=bool)
    new[0] = True
    if same is None:
        np.not_equal(query[1:], query[:-1], out=new[1:])
    else:
        np.logical_not(same, out=new[1:])
    block = np.cumsum(new, dtype=np.int64) - 1
    width = max(int(doc.max()), 1).bit_length()
    if int(block[-1]).bit_length() + width > 63:
        return bool(pd.Series(block * (int(doc.max()) + 1) + doc).duplicated().any())
    keys = np.sort((block << width) | doc, kind="stable")
    return bool(np.any(keys[1:] == keys[:-1]))


def lookup_grades(
    n_docs: int,
    run_query: IntArray,
    run_doc: IntArray,
    *,
    qrels_query: IntArray,
    qrels_doc: IntArray,
    qrels_grade: IntArray,
) -> tuple[IntArray, BoolArray]:
    """The grade of each run row (0 when unjudged) and whether it is judged.

    The qrels must hold each (query, document) pair once. Only rows whose
    document is judged for some query are looked up.
    """
    grade = np.zeros(len(run_query), dtype=np.int64)
    judged = np.zeros(len(run_query), dtype=bool)
    if len(qrels_query) == 0 or len(run_query) == 0:
        return grade, judged
    width = np.int64(max(n_docs, 1))
    qkey = qrels_query * width + qrels_doc
    order = np.argsort(qkey, kind="stable")
    sorted_keys = qkey[order]
    known = np.zeros(max(n_docs, 1), dtype=bool)
    known[qrels_doc] = True
    cand = np.flatnonzero(known[run_doc])
    rkey = run_query[cand] * width + run_doc[cand]
    pos = np.minimum(np.searchsorted(sorted_keys, rkey), len(sorted_keys) - 1)
    hit = sorted_keys[pos] == rkey
    judged[cand[hit]] = True
    grade[cand[hit]] = qrels_grade[order[pos[hit]]]
    return grade, judged


def dictionary_codes(values: pa.Array | pa.ChunkedArray) -> tuple[IntArray, pa.Array]:
    """Dictionary codes (order of first appearance) and the dictionary.

    A chunked input is encoded without concatenating it: Arrow shares one
    hash table across chunks, and every chunk carries the final dictionary.

    >>> codes, names = dictionary_codes(pa.chunked_array([["b", "a"], ["b"]]))
    >>> codes.tolist(), names.to_pylist()
    ([0, 1, 0], ['b', 'a'])
    """
    encoded = pc.dictionary_encode(values)
    if isinstance(encoded, pa.ChunkedArray):
        chunks = [c for c in encoded.chunks if len(c)]
        if not chunks:
            return np.empty(0, dtype=np.int64), pa.array([], pa.large_string())
        codes = fresh(sum(len(c) for c in chunks), np.int64)
        np.concatenate([np.asarray(c.indices) for c in chunks], out=codes, casting="unsafe")
        return codes, chunks[-1].dictionary
    codes = fresh(len(encoded), np.int64)
    codes[...] = np.asarray(encoded.indices)
    return codes, encoded.dictionary


def take(values: pa.Array | pa.ChunkedArray, rows: IntArray) -> pa.Array | pa.ChunkedArray:
    """``values[rows]`` without joining a chunked array's chunks.

    Arrow's ``take`` joins every chunk first: 100 MB of copies per call for the
    ids of a 5M-row run. Rows in chunk order are taken chunk by chunk; any
    other rows are grouped by chunk (a stable radix sort of their chunk
    numbers), taken so, and put back in their order, so only the strings
    taken are copied.

    >>> take(pa.chunked_array([["a", "b"], ["c"]]), np.array([2, 0, 1])).to_pylist()
    ['c', 'a', 'b']
    """
    if not isinstance(values, pa.ChunkedArray) or values.num_chunks < 2 or not len(rows):
        return values.take(pa.array(rows))
    bounds = np.cumsum([0, *(len(c) for c in values.chunks)])
    if int(rows.min()) < 0 or int(rows.max()) >= len(values):
        raise IndexError(f"rows out of range for {len(values)} values")
    chunk = np.searchsorted(bounds, rows, side="right") - 1
    by = None
    if not bool(np.all(chunk[1:] >= chunk[:-1])):  # grouped by chunk (a radix sort of few keys)
        key = chunk.astype(np.uint16) if values.num_chunks <= 1 << 16 else chunk
        by = np.argsort(key, kind="stable")
        rows, chunk = rows[by], chunk[by]
    cuts = np.searchsorted(chunk, np.arange(values.num_chunks + 1), side="left")
    parts = [
        values.chunk(i).take(pa.array(rows[a:b] - bounds[i]))
        for i, (a, b) in enumerate(itertools.pairwise(cuts.tolist()))
        if b > a
    ]
    taken = pa.chunked_array(parts, values.type)
    if by is None:
        return taken
    back = np.empty(len(rows), dtype=np.int64)
    back[by] = np.arange(len(rows), dtype=np.int64)
    return taken.combine_chunks().take(pa.array(back))
