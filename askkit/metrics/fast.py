"""A faster way to :func:`askkit.metrics.exact.exact`'s result, for the usual run.

A run that arrives grouped by query and ranked (as kimun sends it) needs no
global document dictionary: duplicates only matter within a query and grades
only within a query's judgments. So each document id is reduced to a 63-bit
hash of its bytes, read straight from the Arrow buffers (no hash table, no
Python strings), and every hash match is confirmed by comparing the strings
themselves. A grouped run is ranked, de-duplicated and graded a slice of
whole queries at a time, in query order, so that its temporaries stay small;
a run in any other order is first put in rank order as a whole (a radix sort
by query, then each query's rows sorted as one row of a matrix). Tied scores
of different documents are put in trec_eval's order (document id descending)
by one Arrow sort of the tied rows.

:func:`graded` returns None when it is switched off (:data:`ENABLED`) or in
any doubt (a hash match the strings do not confirm), and
:func:`askkit.metrics.preparation.prepare`, the one place that chooses, then
takes the exact path, so results never depend on the hash.
:func:`judged_rows` is the same work for :func:`~askkit.metrics.evaluate`
alone, which scores only the judged rows: a grouped run is taken in its own
order of queries (not put in the order of their ids) and only the judged
rows' query, rank and grade come out; it too returns None when in doubt, and
:func:`askkit.metrics.preparation.judged_run` then prepares the run as
:func:`~askkit.metrics.preparation.prepare` does.
``tests/metrics/test_fast.py`` holds the two paths equal;
``benchmarks/metrics_bench.py`` times one against the other.

>>> ENABLED
True
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from askkit.metrics.ranked import (
    Blocked,
    Blocks,
    BoolArray,
    Coded,
    FloatArray,
    Graded,
    Hits,
    IntArray,
    Ranked,
    Ties,
    block_order,
    descending_or_tied,
    fresh,
    group_rank,
    query_blocks,
    take,
)

__all__ = ["ENABLED", "graded", "judged_rows"]

#: Whether :func:`graded` may take a run; False leaves every run to the exact path.
ENABLED = True

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_QMIX = np.uint64(0x9E3779B97F4A7C15)
#: At most 2**21 slots (2 MiB) in the judged-keys bitmap: a larger table misses the
#: CPU caches on every lookup, which costs more than the extra candidates it saves,
#: and from 4 MiB numpy would fault in fresh huge pages for it on every slice.
_BITMAP_BITS = 21
#: Rows per slice of :func:`_graded` (whole queries; a larger query is one slice).
#: A slice's int64 temporaries stay under 4 MiB, the size from which numpy advises
#: transparent huge pages, so they reuse the heap's pages instead of faulting in
#: fresh 2 MB ones.
_SLICE = 500_000
#: Strings hashed at a time: the hash's temporaries (8 bytes a string each) stay
#: in the CPU's caches; hashing 500,000 at once takes about twice as long.
_PIECE = 16_384


def _mix(
    h: np.ndarray[Any, np.dtype[np.uint64]],
    scratch: np.ndarray[Any, np.dtype[np.uint64]] | None = None,
) -> None:
    """splitmix64's finaliser, in place (``scratch``: a spare array as long as ``h``)."""
    t = np.empty_like(h) if scratch is None else scratch
    h ^= np.right_shift(h, np.uint64(30), out=t)
    h *= _M1
    h ^= np.right_shift(h, np.uint64(27), out=t)
    h *= _M2
    h ^= np.right_shift(h, np.uint64(31), out=t)


def _hash_strings(
    arr: pa.Array | pa.ChunkedArray,
    out: np.ndarray[Any, np.dtype[np.uint64]] | None = None,
) -> np.ndarray[Any, np.dtype[np.uint64]] | None:
    """A 64-bit hash of each string's bytes (equal strings hash alike); None if not hashable.

    Mixes the length, the first 8 bytes, every whole word after them and the
    last 8 bytes (zero for strings under 8 bytes, whose first bytes are masked).
    A chunked array is hashed chunk by chunk, in place (a chunk too small to
    hash on its own is hashed with the others, joined). ``out``: an array as
    long as ``arr`` to write the hashes into.
    """
    if isinstance(arr, pa.ChunkedArray):
        chunks = [c for c in arr.chunks if len(c)]
        if not chunks:
            return None
        if len(chunks) == 1:
            return _hash_strings(chunks[0], out)
        h = np.empty(len(arr), dtype=np.uint64) if out is None else out
        ends = np.cumsum([len(c) for c in chunks]).tolist()
        for chunk, lo, hi in zip(chunks, [0, *ends[:-1]], ends, strict=True):
            if _hash_strings(chunk, h[lo:hi]) is None:
                return _hash_strings(arr.combine_chunks(), out)
        return h
    n = len(arr)
    if not pa.types.is_large_string(arr.type) or arr.null_count or n == 0:
        return None
    _, obuf, dbuf = arr.buffers()
    offsets = np.frombuffer(obuf, dtype=np.int64, count=n + 1, offset=arr.offset * 8)
    first, nbytes = int(offsets[0]), int(offsets[-1])
    if dbuf is None or nbytes - first < 8:
        return None
    data = np.frombuffer(dbuf, dtype=np.uint8, count=nbytes)
    # every 8-byte window of the data, unaligned: words[i] = bytes i..i+7
    words = np.ndarray((nbytes - 7,), dtype=np.uint64, buffer=data, strides=(1,))
    h = np.empty(n, dtype=np.uint64) if out is None else out
    for lo in range(0, n, _PIECE):  # a piece's temporaries stay in the CPU's caches
        hi = min(lo + _PIECE, n)
        _hash_piece(words, offsets[lo : hi + 1], h[lo:hi])
    return h


def _hash_piece(
    words: np.ndarray[Any, np.dtype[np.uint64]],
    offsets: IntArray,
    h: np.ndarray[Any, np.dtype[np.uint64]],
) -> None:
    """:func:`_hash_strings` of the strings between ``offsets``, into ``h``."""
    last = len(words) - 1  # the last window's start: nbytes - 8
    starts, ends = offsets[:-1], offsets[1:]
    lens = h.view(np.int64)  # the lengths become the hash
    np.subtract(ends, starts, out=lens)
    short = np.flatnonzero(lens < 8)
    s_len = lens[short].astype(np.uint64)
    active = np.flatnonzero(lens >= 16)
    a_len = lens[active]
    h *= _QMIX
    # only the last few strings can start past the last window: clip those (all short)
    at = starts if int(starts[-1]) <= last else np.minimum(starts, last)
    word = words[at]
    if len(short):  # masked to the string's own bytes
        s_head = word[short] >> ((starts[short] - at[short]) * 8).astype(np.uint64)
        s_head &= (np.uint64(1) << (s_len * np.uint64(8))) - np.uint64(1)
        word[short] = s_head
    del at
    h ^= word
    _mix(h, word)
    k = 1
    while len(active):  # whole words after the first
        sub = h[active] ^ words[starts[active] + 8 * k]
        _mix(sub)
        h[active] = sub
        k += 1
        more = a_len >= 8 * (k + 1)
        active, a_len = active[more], a_len[more]
    back = word.view(np.int64)  # the first words' buffer now indexes the last ones
    np.subtract(ends, 8, out=back)
    back[short] = 0
    word = words[back]
    word[short] = 0
    h ^= word
    _mix(h, back.view(np.uint64))


def _pair_keys(query: IntArray, doc_hash: np.ndarray[Any, np.dtype[np.uint64]], n: int) -> IntArray:
    """A 63-bit key per (query code < ``n``, document hash): the query in the high bits.

    Keys of one query are adjacent, so searching a run's rows (grouped by
    query) in sorted qrels keys stays in cache.
    """
    width = max(n - 1, 1).bit_length()
    key = (doc_hash >> np.uint64(width + 1)).view(np.int64)
    key |= query << (63 - width)
    return key


def _is_ranked(
    query: IntArray, score: FloatArray, order: IntArray, ties: Ties
) -> tuple[bool, IntArray | None]:
    """Whether a grouped run's rows are in rank order within each query (ties aside),
    and for ``ties="trec"`` where neighbours of a query tie on score (as
    :func:`_tie_order` finds them)."""
    same = query[1:] == query[:-1]
    if ties == "trec":
        ok, check = descending_or_tied(score, same)
        return bool(ok.all()), check
    return bool(np.all(~same | (order[1:] >= order[:-1]))), None


def _radix_argsort(codes: IntArray) -> IntArray:
    """Stable argsort of non-negative integer codes below 2**32, 16 bits at a time:
    numpy sorts 16-bit keys with a radix sort, in linear time."""
    top = int(codes.max()) if len(codes) else 0
    if top >= 1 << 32:
        return np.argsort(codes, kind="stable").astype(np.int64)
    order = np.argsort((codes & 0xFFFF).astype(np.uint16), kind="stable")
    if top >= 1 << 16:
        high = (codes >> 16).astype(np.uint16)[order]
        order = order[np.argsort(high, kind="stable")]
    return order.astype(np.int64)


def _rank_order(
    query: IntArray,
    score: FloatArray,
    order: IntArray,
    ties: Ties,
    grouped: bool = False,
    *,
    stable: bool = True,
) -> IntArray:
    """A stable order of the rows by query, then rank: score descending (NaN last)
    for ``ties="trec"`` (ties between documents are left to the caller), ``order``
    ascending for ``ties="input"``. ``stable=False``: rows of a query with equal
    keys may come in any order, for a caller that orders them itself.

    The rows are grouped by a radix sort of the query codes, then each query's
    rows are sorted as one row of a (query x position) matrix, or, when the
    queries' sizes vary too much for that matrix, by one stable sort on both
    keys.
    ``grouped``: each query's rows are already contiguous (the blocks are put in
    query order, not the rows).
    """
    n = len(query)
    by_query = block_order(query) if grouped else _radix_argsort(query)
    q = query if by_query is None else query[by_query]
    starts = np.flatnonzero(np.concatenate([[True], q[1:] != q[:-1]]))
    sizes = np.diff(np.append(starts, n))
    width = int(sizes.max())
    if ties == "trec":
        key: np.ndarray[Any, Any] = score.copy() if by_query is None else score[by_query]
        key += 0.0  # -0.0 ties with 0.0
        np.negative(key, out=key)  # NaN stays NaN: last
        pad: float | int = np.inf
    else:
        key = order if by_query is None else order[by_query]
        pad = np.iinfo(np.int64).max

    def rows(local: IntArray) -> IntArray:
        return local if by_query is None else np.asarray(by_query[local], dtype=np.int64)

    if len(starts) * width > 2 * n + 1024:  # too uneven for a matrix: one sort by both keys
        return rows(np.lexsort((key, q)).astype(np.int64, copy=False))
    kind: Any = "stable" if stable else None
    if (sizes == width).all():
        within = np.argsort(key.reshape(-1, width), axis=1, kind=kind)
        within += starts[:, None]
        return rows(within.reshape(-1))
    group = np.repeat(np.arange(len(starts)), sizes)
    at = np.arange(n) - starts[group]
    matrix = np.full((len(starts), width), pad, dtype=key.dtype)
    matrix[group, at] = key
    within = np.argsort(matrix, axis=1, kind=kind)  # a row's padding is left out below
    real = within < sizes[:, None]
    return rows((starts[:, None] + within)[real])


def _sort_blocks(packed: IntArray, block: IntArray) -> None:
    """Sort ``packed`` (block number in the high bits, ``block`` non-decreasing) in place.

    When every block is equally long (a fixed top-k, the usual run), each block
    is one row of a matrix sorted row by row, several times faster than one
    sort of everything.
    """
    n = len(packed)
    width = int(np.searchsorted(block, block[0], side="right"))
    if n % width == 0:
        by_row = block.reshape(-1, width)
        one_each = bool(np.all(by_row[:, 0] == by_row[:, -1]))
        if one_each and bool(np.all(by_row[1:, 0] != by_row[:-1, -1])):
            packed.reshape(-1, width).sort(axis=1)
            return
    packed.sort(kind="stable")  # timsort: the blocks are already in order


def _same_strings(
    left: pa.Array | pa.ChunkedArray, a: IntArray, right: pa.Array | pa.ChunkedArray, b: IntArray
) -> BoolArray:
    """Whether ``left[a] == right[b]``, element-wise."""
    if len(a) == 0:
        return np.zeros(0, dtype=bool)
    eq = pc.equal(take(left, a), take(right, b))
    return np.asarray(eq, dtype=bool)


def graded(coded: Coded) -> Graded | None:
    """:func:`askkit.metrics.exact.exact`'s result, faster; None when in doubt or switched off.

    A grouped run (each query's rows contiguous) is ranked and graded a slice
    of whole queries at a time (:func:`_graded`); any other run is first put
    in rank order as a whole (:func:`_rank_order`, :func:`_tie_order`).
    Either way the queries come out in code order, as the exact path gives
    them. ``docs`` is the run's document ids as given and ``ranked.doc``
    holds rows of it, so the result equals the exact path's in every field
    but the document codes, which name the same documents.

    >>> import pandas as pd
    >>> from askkit.metrics.exact import exact
    >>> from askkit.metrics.preparation import code
    >>> run = pd.DataFrame({"turn_id": ["q", "q", "q"], "score": [3.0, 2.0, 1.0],
    ...                     "path": ["notes/c.md", "notes/b.md", "notes/c.md"]})
    >>> qrels = pd.DataFrame({"query_id": ["q"], "path": ["notes/b.md"], "grade": [2]})
    >>> coded = code(run, qrels, "note", "trec")
    >>> g, e = graded(coded), exact(coded)
    >>> g.ranked.rows.tolist(), g.grade.tolist(), g.ranked.duplicates
    ([0, 1], [0, 2], 1)
    >>> g.docs.take(g.ranked.doc).to_pylist() == e.docs.take(e.ranked.doc).to_pylist()
    True
    """
    query, score, order, ties = coded.query, coded.score, coded.order, coded.ties
    if not ENABLED or len(query) < 2:
        return None
    if coded.grouped:  # each query's rows contiguous: ranked slice by slice
        return _graded(coded, run_q=query, score=score, order=order)
    by = _rank_order(query, score, order, ties)  # queries in code order, as the exact path
    q_by, s_by = query[by], score[by]
    fix = _tie_order(by, q_by, s_by, coded.docs, coded.keep) if ties == "trec" else None
    if fix is not None:
        pos, perm = fix
        by[pos] = by[pos][perm]
        s_by[pos] = s_by[pos][perm]  # -0.0 and 0.0 tie, and keep their own rows
    rows = by if coded.keep is None else coded.keep[by]
    return _graded(coded, run_q=q_by, score=s_by, order=None, doc_rows=rows)


def _tie_order(
    by: IntArray | None,
    q: IntArray,
    s: FloatArray,
    docs: pa.Array | pa.ChunkedArray,
    keep: IntArray | None,
    *,
    check: IntArray | None = None,
) -> tuple[IntArray, IntArray] | None:
    """Where rows in query, score-descending order (``by``, None: as they are; ``q``
    and ``s`` their queries and scores) are not in trec_eval's order for tied
    scores (document id descending): the tied positions ``pos`` and the
    permutation ``perm`` that puts them in it (``by[pos] = by[pos][perm]``).
    None when every tie is in order.

    One Arrow sort of the tied rows by (run of ties, id); it is stable, so a
    document repeated with the same score keeps its rows' order. ``check``: the
    tied neighbours, when :func:`~askkit.metrics.ranked.descending_or_tied`
    already found them.
    """
    if check is None:
        _, check = descending_or_tied(s, q[1:] == q[:-1])
    if not len(check):
        return None
    n = len(q)
    tied_prev = np.zeros(n, dtype=bool)
    tied_prev[check + 1] = True
    tied = tied_prev.copy()
    tied[check] = True
    pos = np.flatnonzero(tied)  # positions (in rank order) of tied rows
    run = np.cumsum(~tied_prev[pos])  # the tie run of each, non-decreasing
    local = pos if by is None else by[pos]
    doc = take(docs, local if keep is None else keep[local])
    perm = np.asarray(
        pc.sort_indices(
            pa.table({"run": run, "doc": doc}),
            sort_keys=[("run", "ascending"), ("doc", "descending")],
        ),
        dtype=np.int64,
    )
    if bool(np.all(perm[1:] > perm[:-1])):
        return None
    return pos, perm


class _Doubt(Exception):
    """A hash match the strings do not confirm: the exact path decides."""


@dataclass(frozen=True, slots=True)
class _Judged:
    """The qrels, one grade per (query, document) (the highest), indexed by pair key."""

    key: IntArray  # sorted pair keys
    row: IntArray  # a qrels row of each key
    grade: IntArray
    query: IntArray
    group: IntArray  # the key's high bits: the query code, or its number among the slice's
    groups: int
    seen: BoolArray  # a bitmap of the keys' slots
    shift: np.uint64


def _index_qrels(
    coded: Coded | Blocked,
    rows: IntArray,
    hashes: _Hashes,
    group: IntArray | None = None,
    groups: int = 0,
) -> _Judged:
    """The judgments in ``rows`` (qrels rows, whole queries), one grade per (query,
    document), the highest, indexed by pair key. The key's high bits are the
    query code, or ``group`` (a number below ``groups`` for each of ``rows``, one
    per query). Raises :class:`_Doubt`."""
    jdoc = coded.qrels_docs
    jq, jgrade = coded.qrels_query[rows], coded.qrels_grade[rows]
    if group is None:
        group, groups = jq, len(coded.qids)
    jhash = hashes.of(rows)
    jkey = _pair_keys(group, jhash, groups)
    by = np.argsort(jkey, kind="stable")
    sk = jkey[by]
    new = np.ones(len(sk), dtype=bool)
    new[1:] = sk[1:] != sk[:-1]
    inner = np.flatnonzero(~new[1:])
    if len(inner):
        a, b = by[inner], by[inner + 1]
        if not (np.all(group[a] == group[b]) and _same_strings(jdoc, rows[a], jdoc, rows[b]).all()):
            raise _Doubt
    starts = np.flatnonzero(new)
    first = by[starts]
    key_group = group[first]
    # a bitmap of the judged keys' bits rules most run rows out before the search
    bits = min(max(len(starts), 1).bit_length() + 4, _BITMAP_BITS)
    shift = np.uint64(64 - bits)
    seen = np.zeros(1 << bits, dtype=bool)
    uslot = jhash[first] + key_group.view(np.uint64)
    uslot *= _QMIX
    seen[uslot >> shift] = True
    return _Judged(
        key=sk[starts],
        row=rows[first],
        grade=np.maximum.reduceat(jgrade[by], starts),
        query=jq[first],
        group=key_group,
        groups=groups,
        seen=seen,
        shift=shift,
    )


class _Hashes:
    """The hashes of some rows of document ids: each slice's hashed when it is taken
    (its rows consecutive, so hashed in place, in the CPU's caches), or, when the
    rows are spread (queries in another order than their codes'), every id hashed
    once in place and the rows' hashes picked out: taking spread strings out of a
    chunked column joins its chunks."""

    def __init__(self, docs: pa.Array | pa.ChunkedArray, spread: bool) -> None:
        self.docs = docs
        self.all = None
        if spread:
            self.all = _hash_strings(docs, fresh(len(docs), np.uint64))
            if self.all is None:  # too short to hash in place: hashed beside a padding string
                self.all = _hash_rows(docs, np.arange(len(docs), dtype=np.int64))
            if self.all is None:
                raise _Doubt

    def of(self, rows: IntArray) -> np.ndarray[Any, np.dtype[np.uint64]]:
        """The hashes of ``rows``. Raises :class:`_Doubt` when they cannot be hashed."""
        h = _hash_rows(self.docs, rows) if self.all is None else self.all[rows]
        if h is None:
            raise _Doubt
        return h


def _hash_rows(
    docs: pa.Array | pa.ChunkedArray, rows: IntArray
) -> np.ndarray[Any, np.dtype[np.uint64]] | None:
    """:func:`_hash_strings` of ``docs[rows]`` (a run of consecutive rows is sliced,
    not copied); strings under 8 bytes in all are hashed beside a padding string."""
    if (
        len(rows)
        and int(rows[-1]) - int(rows[0]) == len(rows) - 1
        and (len(rows) < 2 or bool(np.all(rows[1:] > rows[:-1])))
    ):
        part = docs.slice(int(rows[0]), len(rows))
    else:
        part = take(docs, rows)
    h = _hash_strings(part)
    if h is None and len(rows):
        chunks = part.chunks if isinstance(part, pa.ChunkedArray) else [part]
        padded = pa.chunked_array([*chunks, pa.array(["\0" * 8], pa.large_string())])
        h = _hash_strings(padded)
        h = None if h is None else h[:-1]
    return h


def _slices(blocks: Blocks, n: int) -> list[int]:
    """Edges (block indices) of slices of about :data:`_SLICE` of the ``n`` rows,
    each a run of whole blocks."""
    return _slice_edges(blocks.first, n)


def _slice_edges(first: IntArray, n: int) -> list[int]:
    """:func:`_slices` of blocks starting at ``first`` (increasing) among ``n`` rows."""
    cuts = np.searchsorted(first, np.arange(_SLICE, n, _SLICE), side="right") - 1
    return [0, *sorted({int(c) for c in cuts if c > 0}), len(first)]


def _grade_slice(
    coded: Coded,
    judged_index: _Judged | None,
    *,
    q: IntArray,
    h: np.ndarray[Any, np.dtype[np.uint64]],
    doc_rows: IntArray,
    width: int,
) -> tuple[IntArray | None, IntArray, BoolArray, int]:
    """One slice of whole queries (``q``: their codes, non-decreasing): the rows kept
    (None: all), their grades, whether judged, and the duplicates dropped.
    ``width``: the bits of the largest query code. Raises :class:`_Doubt`."""
    kept, duplicates = _dedup(coded.docs, q, width, h, doc_rows)
    if kept is not None:
        q, h, doc_rows = q[kept], h[kept], doc_rows[kept]
    grade = np.zeros(len(q), dtype=np.int64)
    judged = np.zeros(len(q), dtype=bool)
    if judged_index is not None:
        hit, hit_grade = _lookup(coded, judged_index, q, h, doc_rows)
        grade[hit] = hit_grade
        judged[hit] = True
    return kept, grade, judged, duplicates


def _dedup(
    rdoc: pa.Array | pa.ChunkedArray,
    block: IntArray,
    width: int,
    h: np.ndarray[Any, np.dtype[np.uint64]],
    doc_rows: IntArray,
) -> tuple[IntArray | None, int]:
    """The rows of a slice of whole blocks (``block``: non-decreasing numbers below
    ``2**width``; each a query, its rows in rank order) that are not a repeat of a
    document above them in their block (None: all), and how many are.
    Raises :class:`_Doubt`."""
    # duplicates: (block, hash) packed, sorted block by block
    packed = (h >> np.uint64(width + 1)).view(np.int64)
    packed |= block << (63 - width)
    _sort_blocks(packed, block)
    if not bool((packed[1:] == packed[:-1]).any()):
        return None, 0
    # rare: pack again, find which rows repeat
    packed = (h >> np.uint64(width + 1)).view(np.int64)
    packed |= block << (63 - width)
    by = np.argsort(packed, kind="stable")
    eq = np.flatnonzero(packed[by[1:]] == packed[by[:-1]])
    first, later = by[eq], by[eq + 1]
    if not _same_strings(rdoc, doc_rows[first], rdoc, doc_rows[later]).all():
        raise _Doubt
    dup = np.zeros(len(block), dtype=bool)
    dup[later] = True
    return np.flatnonzero(~dup), int(np.count_nonzero(dup))


def _lookup(
    coded: Coded | Blocked,
    j: _Judged,
    group: IntArray,
    h: np.ndarray[Any, np.dtype[np.uint64]],
    doc_rows: IntArray,
) -> tuple[IntArray, IntArray]:
    """The rows (``group``: their queries, numbered as ``j``'s keys number them;
    ``h``: their documents' hashes; ``doc_rows``: their rows of the run's
    documents) that ``j`` judges, and their grades: a key match is a
    candidate, confirmed on the strings."""
    slot = h + group.view(np.uint64)
    slot *= _QMIX
    slot >>= j.shift
    cand = np.flatnonzero(j.seen[slot])
    del slot
    rkey = _pair_keys(group[cand], h[cand], j.groups)
    p = np.minimum(np.searchsorted(j.key, rkey), len(j.key) - 1)
    match = j.key[p] == rkey
    cand, p = cand[match], p[match]
    good = (j.group[p] == group[cand]) & _same_strings(
        coded.docs, doc_rows[cand], coded.qrels_docs, j.row[p]
    )
    return cand[good], j.grade[p[good]]


def _rank_slice(
    q: IntArray,
    s: FloatArray,
    o: IntArray,
    ties: Ties,
    *,
    docs: pa.Array | pa.ChunkedArray,
    rows: IntArray,
    any_duplicate: bool = False,
) -> tuple[IntArray | None, FloatArray]:
    """The order that ranks a slice of whole queries (None: it is ranked), and the
    scores in that order; tied scores in trec_eval's order for ``ties="trec"``.
    ``any_duplicate``: with ``ties="trec"``, rows of one document tied on score
    (duplicates) may come in any order among themselves (the caller needs
    only one of them, and not which)."""
    by = None
    ranked, check = _is_ranked(q, s, o, ties)
    if not ranked:
        by = _rank_order(q, s, o, ties, grouped=True, stable=not (any_duplicate and ties == "trec"))
        s, check = s[by], None
    if ties == "trec":
        fix = _tie_order(by, q, s, docs, rows, check=check)
        if fix is not None:
            if by is None:  # s may still be a view of the caller's scores
                by, s = np.arange(len(q), dtype=np.int64), s.copy()
            pos, perm = fix
            by[pos] = by[pos][perm]
            s[pos] = s[pos][perm]  # -0.0 and 0.0 tie, and keep their own rows
    return by, s


def _counting(n: int) -> IntArray:
    """``0, 1, ..., n - 1`` in :func:`~askkit.metrics.ranked.fresh` memory."""
    out = fresh(n, np.int64)
    out.fill(1)
    out[:1] = 0
    return np.cumsum(out, out=out)


def _moved(
    n: int, filled: int, run_q: IntArray, score: FloatArray, doc_rows: IntArray | None
) -> list[np.ndarray[Any, Any]]:
    """The (rows, query, score) outputs of :func:`_graded` once a slice moves or drops
    rows: the first ``filled`` rows, left where they were, copied in."""
    rows, q, s = fresh(n, np.int64), fresh(n, np.int64), fresh(n, np.float64)
    rows[:filled] = np.arange(filled) if doc_rows is None else doc_rows[:filled]
    q[:filled], s[:filled] = run_q[:filled], score[:filled]
    return [rows, q, s]


def _judgment_slices(
    jq: IntArray, blocks: Blocks, edges: list[int]
) -> tuple[IntArray | None, list[int]]:
    """The judgments in query order (None: as they are) and the edges of each slice's:
    those of its queries, and of the judged queries before them that the run lacks."""
    j_sorted = len(jq) < 2 or bool(np.all(jq[1:] >= jq[:-1]))
    j_order = None if j_sorted else _radix_argsort(jq)
    cuts = np.searchsorted(
        jq if j_order is None else jq[j_order], blocks.code[edges[1:-1]], side="left"
    )
    return j_order, [0, *cuts.tolist(), len(jq)]


def _slice_rows(
    blocks: Blocks, a: int, b: int, run_q: IntArray, doc_rows: IntArray | None
) -> tuple[IntArray | slice, IntArray, IntArray]:
    """Blocks ``a`` to ``b - 1`` of a grouped run: where they lie in its arrays, their
    query codes and their rows of the documents."""
    if blocks.in_order:
        lo, hi = blocks.span(a, b)
        q = run_q[lo:hi]
        rows = np.arange(lo, hi, dtype=np.int64) if doc_rows is None else doc_rows[lo:hi]
        return slice(lo, hi), q, rows
    at = blocks.rows(a, b)
    q = np.repeat(blocks.code[a:b], blocks.size[a:b])
    return at, q, at if doc_rows is None else doc_rows[at]


def _graded(
    coded: Coded,
    *,
    run_q: IntArray,
    score: FloatArray,
    order: IntArray | None,
    doc_rows: IntArray | None = None,
) -> Graded | None:
    """Rank, de-duplicate and grade a grouped run, without a document dictionary.

    ``run_q`` (each query's rows contiguous) and ``score`` cover the rows to
    score; ``doc_rows`` maps them to rows of ``coded.docs`` (None:
    ``coded.keep``, or the rows themselves). With ``order`` (the input
    order) each query's rows are put in rank order here; without it they
    already are, tied scores included, and the queries are in code order.
    None when a hash is in doubt.

    The run is ranked and graded in slices of whole queries in code order
    (about :data:`_SLICE` rows each), each with the judgments of its queries
    (and of the judged queries before them that the run lacks), so that
    every step's temporaries stay small and their memory is reused, not
    freshly mapped.
    """
    rows_n, ties, jq = len(run_q), coded.ties, coded.qrels_query
    rdoc = coded.docs
    if doc_rows is None:
        doc_rows = coded.keep
    if rows_n < 2:
        return None
    blocks = query_blocks(run_q)  # a slice's rows are found block by block: no whole permutation
    edges = _slices(blocks, rows_n)
    j_order, j_edges = _judgment_slices(jq, blocks, edges)
    width = max(len(coded.qids) - 1, 1).bit_length()
    # grade and judged of the rows kept; (query, grade) of the judgments
    out_grade, out_judged = fresh(rows_n, np.int64), fresh(rows_n, bool)
    out_jq, out_jgrade = fresh(len(jq), np.int64), fresh(len(jq), np.int64)
    # (rows, query, score) of the rows kept: None while they are the input's own, in
    # order (no slice put its rows in another order or dropped one: the usual run)
    moved: list[np.ndarray[Any, Any]] | None = None
    filled = judgments = duplicates = 0
    try:
        run_hashes = _Hashes(rdoc, spread=not blocks.in_order or doc_rows is not None)
        qrels_hashes = _Hashes(coded.qrels_docs, spread=j_order is not None)
        for (ba, bb), (ja, jb) in zip(
            itertools.pairwise(edges), itertools.pairwise(j_edges), strict=True
        ):
            j_rows = np.arange(ja, jb, dtype=np.int64) if j_order is None else j_order[ja:jb]
            index = _index_qrels(coded, j_rows, qrels_hashes) if jb > ja else None
            at, q, rows = _slice_rows(blocks, ba, bb, run_q, doc_rows)
            s = score[at]
            h = run_hashes.of(rows)
            by = None
            if order is not None:
                by, s = _rank_slice(q, s, order[at], ties, docs=rdoc, rows=rows)
                if by is not None:
                    rows, h = rows[by], h[by]  # rows move within their query: q is unchanged
            kept, grade, judged, dups = _grade_slice(
                coded, index, q=q, h=h, doc_rows=rows, width=width
            )
            duplicates += dups
            if kept is not None:
                rows, q, s = rows[kept], q[kept], s[kept]
            if moved is None and (not blocks.in_order or by is not None or kept is not None):
                moved = _moved(rows_n, filled, run_q, score, doc_rows)
            end = filled + len(q)
            if moved is not None:
                for out, value in zip(moved, (rows, q, s), strict=True):
                    out[filled:end] = value
            out_grade[filled:end], out_judged[filled:end] = grade, judged
            filled = end
            if index is not None:
                end = judgments + len(index.query)
                out_jq[judgments:end], out_jgrade[judgments:end] = index.query, index.grade
                judgments = end
    except _Doubt:
        return None
    if moved is None:  # every row kept where it was
        rows = _counting(rows_n) if doc_rows is None else doc_rows
        q, out_score = run_q, score
    else:
        rows, q, out_score = (out[:filled] for out in moved)
    return Graded(
        ranked=Ranked(rows, q, rows, group_rank(q, out=fresh(len(q), np.int64)), duplicates),
        docs=rdoc,
        score=out_score,
        grade=out_grade[:filled],
        judged=out_judged[:filled],
        qrels_query=out_jq[:judgments],
        qrels_grade=out_jgrade[:judgments],
    )


def judged_rows(blocked: Blocked) -> Hits | None:
    """The judged rows of a run grouped by query, ranked, de-duplicated and graded as
    :func:`graded` ranks, de-duplicates and grades it (so as the exact path does);
    None when in doubt or switched off.

    All :func:`~askkit.metrics.evaluate` needs when no unjudged row can count:
    the run is taken in its own order of queries, a slice of whole blocks at a
    time (:data:`_SLICE` rows), its ids hashed in place; no column as long as
    the run is written, only the judged rows' query, rank and grade.

    >>> import pandas as pd
    >>> from askkit.metrics.preparation import judged_run
    >>> run = pd.DataFrame({"turn_id": ["q2", "q2", "q2", "q1"], "score": [3.0, 2.0, 1.0, 1.0],
    ...                     "path": ["c.md", "b.md", "c.md", "b.md"]})
    >>> qrels = pd.DataFrame({"query_id": ["q1", "q2"], "path": ["b.md", "b.md"], "grade": 2})
    >>> h = judged_run(run, qrels, level="note", ties="trec").hits
    >>> h.query.tolist(), h.rank.tolist(), h.grade.tolist(), h.retrieved.tolist(), h.duplicates
    ([1, 0], [2, 1], [2, 2], [1, 2], 1)
    """
    n, rows_n = len(blocked.qids), int(blocked.size.sum())
    if not ENABLED or rows_n < 2:
        return None
    first = np.cumsum(blocked.size) - blocked.size  # where each block starts among their rows
    edges = _slice_edges(first, rows_n)
    j_order, j_block, j_edges = _judgments_by_block(blocked, edges)
    retrieved = np.zeros(n, dtype=np.int64)
    parts: list[tuple[IntArray, IntArray, IntArray]] = []
    judgments: list[tuple[IntArray, IntArray]] = []
    duplicates = 0
    try:
        qrels_hashes = _Hashes(blocked.qrels_docs, spread=j_order is not None)
        for i, (ja, jb) in enumerate(itertools.pairwise(j_edges)):
            j_rows = np.arange(ja, jb, dtype=np.int64) if j_order is None else j_order[ja:jb]
            if i == len(edges) - 1:  # the judged queries the run lacks
                if jb > ja:
                    lacked = _index_qrels(blocked, j_rows, qrels_hashes)
                    judgments.append((lacked.query, lacked.grade))
                break
            a, b = edges[i], edges[i + 1]
            index = None
            if jb > ja:  # keyed by the query's block among the slice's
                index = _index_qrels(blocked, j_rows, qrels_hashes, j_block[ja:jb] - a, b - a)
                judgments.append((index.query, index.grade))
            part, kept_sizes, dups = _judged_slice(blocked, index, first, a, b)
            retrieved[blocked.code[a:b]] = kept_sizes
            duplicates += dups
            if part is not None:
                parts.append(part)
    except _Doubt:
        return None
    if parts:
        query, rank, grade = (np.concatenate(c) for c in zip(*parts, strict=True))
    else:
        query = rank = grade = np.zeros(0, dtype=np.int64)
    return Hits(
        query=query,
        rank=rank,
        grade=grade,
        retrieved=retrieved,
        duplicates=duplicates,
        qrels_query=_joined([jq for jq, _ in judgments]),
        qrels_grade=_joined([jg for _, jg in judgments]),
    )


def _joined(parts: list[IntArray]) -> IntArray:
    """The parts end to end, in :func:`~askkit.metrics.ranked.fresh` memory."""
    out = fresh(sum(len(p) for p in parts), np.int64)
    if parts:
        np.concatenate(parts, out=out)
    return out


def _judgments_by_block(
    blocked: Blocked, edges: list[int]
) -> tuple[IntArray | None, IntArray, list[int]]:
    """The judgments in the order of their queries' blocks in the run, the queries
    the run lacks last (None: as they are), the block of each in that order
    (the number of blocks for the queries the run lacks), and the edges of each
    slice's (``edges``: the slices' block edges), then of the judgments the run
    lacks."""
    jq, n_blocks = blocked.qrels_query, len(blocked.code)
    position = np.full(len(blocked.qids), n_blocks, dtype=np.int64)
    position[blocked.code] = np.arange(n_blocks, dtype=np.int64)
    key = np.take(position, jq, out=fresh(len(jq), np.int64))
    j_order = None if len(key) < 2 or bool(np.all(key[1:] >= key[:-1])) else _radix_argsort(key)
    if j_order is not None:
        key = np.take(key, j_order, out=fresh(len(jq), np.int64))
    cuts = np.searchsorted(key, edges[1:], side="left")
    return j_order, key, [0, *cuts.tolist(), len(jq)]


def _judged_slice(
    blocked: Blocked, index: _Judged | None, first: IntArray, a: int, b: int
) -> tuple[tuple[IntArray, IntArray, IntArray] | None, IntArray, int]:
    """Blocks ``a`` to ``b - 1`` of :func:`judged_rows`' run (``first``: where each
    starts among the blocks' rows) ranked, de-duplicated and graded: the judged
    rows' (query, rank, grade) (None: no judgments), each block's rows kept and
    the duplicates dropped. Raises :class:`_Doubt`."""
    rdoc, starts, sizes = blocked.docs, blocked.start[a:b], blocked.size[a:b]
    lo, hi = int(starts[0]), int(starts[-1] + sizes[-1])
    if hi - lo == int(first[b - 1] + sizes[-1] - first[a]):  # side by side: read in place
        at: IntArray | slice = slice(lo, hi)
        rows = np.arange(lo, hi, dtype=np.int64)
    else:
        rows = np.repeat(starts - (first[a:b] - first[a]), sizes)
        rows += np.arange(len(rows), dtype=np.int64)
        at = rows
    s = blocked.score[at]
    h = _hash_rows(rdoc, rows)
    if h is None:
        raise _Doubt
    block = np.repeat(np.arange(b - a, dtype=np.int64), sizes)  # numbered 0, 1, ... here
    order = rows if blocked.rank is None else blocked.rank[at]
    # only the judged rows' ranks and grades are kept: which of a document's tied
    # duplicates is kept does not matter, so the scores need no stable sort
    by, s = _rank_slice(block, s, order, blocked.ties, docs=rdoc, rows=rows, any_duplicate=True)
    if by is not None:
        rows, h = rows[by], h[by]  # rows move within their block
    kept, dups = _dedup(rdoc, block, max(b - a - 1, 1).bit_length(), h, rows)
    if kept is not None:
        block, h, rows = block[kept], h[kept], rows[kept]
        sizes = np.bincount(block, minlength=b - a)
    if index is None:
        return None, sizes, dups
    hit, grade = _lookup(blocked, index, block, h, rows)
    hit_block = block[hit]
    block_first = np.cumsum(sizes) - sizes
    return (blocked.code[a:b][hit_block], hit - block_first[hit_block] + 1, grade), sizes, dups
