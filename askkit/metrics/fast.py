"""A faster way to :func:`askkit.metrics.prepare.exact`'s result, for the usual run.

A run that arrives grouped by query and ranked (as kimun sends it) needs no
global document dictionary: duplicates only matter within a query and grades
only within a query's judgments. So each document id is reduced to a 63-bit
hash of its bytes, read straight from the Arrow buffers (no hash table, no
Python strings), and every hash match is confirmed by comparing the strings
themselves. A run in any other order is first put in rank order (a radix sort
by query, then each query's rows sorted as one row of a matrix) and scored
the same way.

This is the one place that decides between this path and the exact one:
:func:`graded` returns None when it is switched off (:data:`ENABLED`) or in
any doubt (tied scores of different documents out of trec_eval's order, a
hash collision, queries too uneven for the matrix sort), and
:func:`askkit.metrics.prepare.prepare` then takes the exact path, so results
never depend on the hash. ``tests/metrics/test_fast.py`` holds the two paths
equal; ``benchmarks/metrics_bench.py`` times one against the other.

>>> ENABLED
True
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from askkit.metrics.measures import (
    BoolArray,
    FloatArray,
    Graded,
    IntArray,
    Ranked,
    Ties,
    descending_or_tied,
    group_rank,
)

if TYPE_CHECKING:  # prepare imports this module at run time
    from askkit.metrics.prepare import Coded

__all__ = ["ENABLED", "graded"]

#: Whether :func:`graded` may take a run; False leaves every run to the exact path.
ENABLED = True

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_QMIX = np.uint64(0x9E3779B97F4A7C15)
#: At most 2**22 slots (4 MiB) in the judged-keys bitmap: a larger table misses the
#: CPU caches on every lookup, which costs more than the extra candidates it saves.
_BITMAP_BITS = 22


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


def _hash_strings(arr: pa.Array) -> np.ndarray[Any, np.dtype[np.uint64]] | None:
    """A 64-bit hash of each string's bytes (equal strings hash alike); None if not hashable.

    Mixes the length, the first 8 bytes, every whole word after them and the
    last 8 bytes (zero for strings under 8 bytes, whose first bytes are masked).
    """
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
    starts, ends = offsets[:-1], offsets[1:]
    lens = ends - starts
    short = np.flatnonzero(lens < 8)
    s_len = lens[short].astype(np.uint64)
    active = np.flatnonzero(lens >= 16)
    a_len = lens[active]
    h = lens.view(np.uint64)  # the lengths' buffer becomes the hash
    h *= _QMIX
    # only the last few strings can start past the last window: clip those (all short)
    at = starts if int(starts[-1]) <= nbytes - 8 else np.minimum(starts, nbytes - 8)
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
    return h


def _pair_keys(query: IntArray, doc_hash: np.ndarray[Any, np.dtype[np.uint64]], n: int) -> IntArray:
    """A 63-bit key per (query code < ``n``, document hash): the query in the high bits.

    Keys of one query are adjacent, so searching a run's rows (grouped by
    query) in sorted qrels keys stays in cache.
    """
    width = max(n - 1, 1).bit_length()
    key = (doc_hash >> np.uint64(width + 1)).view(np.int64)
    key |= query << (63 - width)
    return key


def _is_ranked(query: IntArray, score: FloatArray, order: IntArray, ties: Ties) -> bool:
    """Whether a grouped run's rows are in rank order within each query (ties aside)."""
    same = query[1:] == query[:-1]
    if ties == "trec":
        return bool(descending_or_tied(score, same)[0].all())
    return bool(np.all(~same | (order[1:] >= order[:-1])))


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


def _rank_order(query: IntArray, score: FloatArray, order: IntArray, ties: Ties) -> IntArray | None:
    """A stable order of the rows by query, then rank: score descending (NaN last)
    for ``ties="trec"`` (ties between documents are left to the caller), ``order``
    ascending for ``ties="input"``.

    The rows are grouped by a radix sort of the query codes, then each query's
    rows are sorted as one row of a (query x position) matrix. None when the
    queries' sizes vary too much for that matrix (the caller sorts everything).
    """
    n = len(query)
    by_query = _radix_argsort(query)
    q = query[by_query]
    starts = np.flatnonzero(np.concatenate([[True], q[1:] != q[:-1]]))
    sizes = np.diff(np.append(starts, n))
    width = int(sizes.max())
    if len(starts) * width > 2 * n + 1024:
        return None
    if ties == "trec":
        key: np.ndarray[Any, Any] = -(score[by_query] + 0.0)  # -0.0 ties with 0.0; NaN last
        pad: float | int = np.inf
    else:
        key, pad = order[by_query], np.iinfo(np.int64).max
    if (sizes == width).all():
        within = np.argsort(key.reshape(-1, width), axis=1, kind="stable")
        return np.asarray(by_query[(starts[:, None] + within).reshape(-1)], dtype=np.int64)
    group = np.repeat(np.arange(len(starts)), sizes)
    at = np.arange(n) - starts[group]
    matrix = np.full((len(starts), width), pad, dtype=key.dtype)
    matrix[group, at] = key
    within = np.argsort(matrix, axis=1, kind="stable")  # a row's padding sorts after its rows
    real = within < sizes[:, None]
    return np.asarray(by_query[(starts[:, None] + within)[real]], dtype=np.int64)


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


def _same_strings(left: pa.Array, a: IntArray, right: pa.Array, b: IntArray) -> BoolArray:
    """Whether ``left[a] == right[b]``, element-wise."""
    if len(a) == 0:
        return np.zeros(0, dtype=bool)
    eq = pc.equal(left.take(pa.array(a)), right.take(pa.array(b)))
    return np.asarray(eq, dtype=bool)


def graded(coded: Coded) -> Graded | None:
    """:func:`askkit.metrics.prepare.exact`'s result, faster; None when in doubt or switched off.

    A grouped run already in rank order is used as it is; any other run is
    first put in rank order (:func:`_rank_order`). ``docs`` is the run's
    document ids as given and ``ranked.doc`` holds rows of it, so the result
    equals the exact path's in every field but the document codes, which
    name the same documents.

    >>> import pandas as pd
    >>> from askkit.metrics.prepare import code, exact
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
    if coded.grouped and _is_ranked(query, score, order, ties):
        return _graded(
            coded, run_q=query, block=coded.block, keep=coded.keep, score=score, order=order
        )
    by = _rank_order(query, score, order, ties)
    if by is None:
        return None
    rows = by if coded.keep is None else coded.keep[by]
    q_by = query[by]
    return _graded(coded, run_q=q_by, block=q_by, keep=rows, score=score[by], order=order[by])


def _graded(  # noqa: PLR0915 - one pass over the run, a fallback at each doubt
    coded: Coded,
    *,
    run_q: IntArray,
    block: IntArray,
    keep: IntArray | None,
    score: FloatArray,
    order: IntArray,
) -> Graded | None:
    """Rank, de-duplicate and grade a grouped run without a document dictionary.

    ``run_q``, ``block`` (non-decreasing block numbers), ``score`` and
    ``order`` cover the rows to score; ``keep`` maps them to rows of
    ``coded.docs`` (None: all rows). None when the rows are not in rank
    order or a hash is in doubt.
    """
    rows_n, ties, n = len(run_q), coded.ties, len(coded.qids)
    rdoc, jq, jdoc, jgrade = coded.docs, coded.qrels_query, coded.qrels_docs, coded.qrels_grade
    if rows_n < 2:
        return None

    def at(local: IntArray) -> IntArray:
        return local if keep is None else keep[local]

    same = run_q[1:] == run_q[:-1]
    if ties == "trec":
        ok, check = descending_or_tied(score, same)
        if len(check):  # tied scores: document id descending
            a = rdoc.take(pa.array(at(check)))
            b = rdoc.take(pa.array(at(check + 1)))
            ok[check] = np.asarray(pc.greater_equal(a, b), dtype=bool)
        if not ok.all():
            return None
    elif not _is_ranked(run_q, score, order, ties):
        return None
    hashes = _hash_strings(rdoc)
    jhash = _hash_strings(jdoc) if len(jq) else None
    if hashes is None or (len(jq) and jhash is None):
        return None
    if keep is not None:
        hashes = hashes[keep]
    # duplicates: (block, hash) packed, sorted block by block
    width = max(int(block[-1]), 1).bit_length()
    packed = (hashes >> np.uint64(width + 1)).view(np.int64)
    packed |= block << (63 - width)
    duplicates = 0
    kept: IntArray | None = None
    _sort_blocks(packed, block)
    repeated = bool((packed[1:] == packed[:-1]).any())
    if repeated:  # rare: pack again, and find which rows repeat
        packed = (hashes >> np.uint64(width + 1)).view(np.int64)
        packed |= block << (63 - width)
        by = np.argsort(packed, kind="stable")
        eq = np.flatnonzero(packed[by[1:]] == packed[by[:-1]])
        first, later = by[eq], by[eq + 1]
        if not _same_strings(rdoc, at(first), rdoc, at(later)).all():
            return None
        dup = np.zeros(rows_n, dtype=bool)
        dup[later] = True
        duplicates = int(np.count_nonzero(dup))
        kept = np.flatnonzero(~dup)
    spare = packed  # no longer needed: its buffer is reused below
    del packed
    local = np.arange(rows_n, dtype=np.int64) if kept is None else kept
    q = run_q if kept is None else run_q[kept]
    h = hashes if kept is None else hashes[kept]
    rows = at(local)
    grade = np.zeros(len(q), dtype=np.int64)
    judged = np.zeros(len(q), dtype=bool)
    jq_out, jg_out = jq, jgrade
    if jhash is not None:
        # qrels: one grade per (query, document), the highest
        jkey = _pair_keys(jq, jhash, n)
        by = np.argsort(jkey, kind="stable")
        sk = jkey[by]
        new = np.ones(len(sk), dtype=bool)
        new[1:] = sk[1:] != sk[:-1]
        inner = np.flatnonzero(~new[1:])
        if len(inner):
            a, b = by[inner], by[inner + 1]
            if not (np.all(jq[a] == jq[b]) and _same_strings(jdoc, a, jdoc, b).all()):
                return None
        starts = np.flatnonzero(new)
        ukey, urow = sk[starts], by[starts]
        ugrade = np.maximum.reduceat(jgrade[by], starts)
        jq_out, jg_out = jq[urow], ugrade
        # run rows: a key match is a candidate, confirmed on the strings
        # a bitmap of the judged keys' bits rules most run rows out before the search
        bits = min(max(len(ukey), 1).bit_length() + 4, _BITMAP_BITS)
        shift = np.uint64(64 - bits)
        seen = np.zeros(1 << bits, dtype=bool)
        uslot = jhash[urow] + jq_out.view(np.uint64)
        uslot *= _QMIX
        seen[uslot >> shift] = True
        slot = np.add(h, q.view(np.uint64), out=spare[: len(q)].view(np.uint64))
        slot *= _QMIX
        slot >>= shift
        cand = np.flatnonzero(seen[slot])
        del slot, seen
        rkey = _pair_keys(q[cand], h[cand], n)
        p = np.minimum(np.searchsorted(ukey, rkey), len(ukey) - 1)
        match = ukey[p] == rkey
        cand, p = cand[match], p[match]
        good = (jq_out[p] == q[cand]) & _same_strings(rdoc, rows[cand], jdoc, urow[p])
        hit = cand[good]
        grade[hit] = ugrade[p[good]]
        judged[hit] = True
    return Graded(
        ranked=Ranked(rows, q, rows, group_rank(q, out=spare[: len(q)]), duplicates),
        docs=rdoc,
        score=score if kept is None else score[kept],
        grade=grade,
        judged=judged,
        qrels_query=jq_out,
        qrels_grade=jg_out,
    )
