"""Preparing a run and judgments for scoring: integer codes, ranking, grades.

:func:`prepare` turns a run frame and a qrels frame into the arrays
:mod:`askkit.metrics.measures` works on. Query ids are factorized block-wise
(a run arrives grouped by turn, so only the first id of each block is
hashed). A run grouped and ranked, as kimun sends it, is scored on 63-bit
hashes of its document ids, with every hash match confirmed on the strings;
a run in any other order is first put in rank order (a radix sort by query,
then each query's rows sorted as one row of a matrix) and scored the same
way. Anything in doubt (tied scores of different documents, a doubtful hash)
takes the exact path: document ids with one Arrow ``dictionary_encode``
shared by run and qrels, the document order for trec_eval's tie break
computed only when tied scores need it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from askkit.errors import SchemaError
from askkit.frame.schema import STRING
from askkit.metrics.io import (
    QRELS_COLUMNS,
    Level,
    PathOrFrame,
    doc_ids,
    qrels_doc_ids,
    read_qrels,
)
from askkit.metrics.measures import (
    BoolArray,
    FloatArray,
    IntArray,
    Ranked,
    _group_rank,
    argsort_keys,
    descending_or_tied,
    lookup_grades,
    rank_run,
)

__all__ = ["Prepared", "as_qrels", "check_options", "prepare"]

Ties = Literal["trec", "input"]


@dataclass(frozen=True, slots=True)
class Prepared:
    qids: pd.Index
    in_qrels: BoolArray
    in_run: BoolArray
    run_only: tuple[str, ...]
    ranked: Ranked
    score: FloatArray
    grade: IntArray
    judged: BoolArray
    docs: pa.Array
    qrels_query: IntArray
    qrels_grade: IntArray


def _run_columns(run: pd.DataFrame) -> None:
    if not isinstance(run, pd.DataFrame):
        raise TypeError(
            f"a run is a sources frame (askkit.frame.sources_frame), got {type(run).__name__}"
        )
    missing = [c for c in ("turn_id", "score") if c not in run.columns]
    if missing:
        raise SchemaError(
            "not a run: it needs turn_id, score and path (or doc) columns; "
            "build it with askkit.frame.sources_frame",
            field="columns",
            value=missing,
        )


def check_options(level: str, ties: str, missing: str | None = None) -> None:
    if level not in ("note", "section"):
        raise ValueError(f"level must be 'note' or 'section', got {level!r}")
    if ties not in ("trec", "input"):
        raise ValueError(f"ties must be 'trec' or 'input', got {ties!r}")
    if missing is not None and missing not in ("drop", "zero"):
        raise ValueError(f"missing must be 'drop' or 'zero', got {missing!r}")


def as_qrels(qrels: PathOrFrame | None) -> pd.DataFrame:
    if qrels is None:
        return pd.DataFrame({c: pd.Series([], dtype=t) for c, t in QRELS_COLUMNS.items()})
    if isinstance(qrels, pd.DataFrame) and dict(qrels.dtypes) == QRELS_COLUMNS:
        return qrels
    return read_qrels(qrels)


def _arrow_strings(values: pd.Series, what: str) -> pa.Array:
    """One contiguous Arrow string array (zero-copy for pandas' Arrow strings)."""
    arr = pa.array(values.astype(STRING).array)
    arr = arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr
    if arr.null_count:
        raise SchemaError(f"{what} has missing values", field=what, value=None)
    return arr.cast(pa.large_string()) if arr.type != pa.large_string() else arr


def _encode(values: pa.Array | pa.ChunkedArray) -> tuple[IntArray, pa.Array]:
    """Dictionary codes (order of first appearance) and the dictionary.

    A chunked input is encoded without concatenating it: Arrow shares one
    hash table across chunks, and every chunk carries the final dictionary.
    """
    encoded = pc.dictionary_encode(values)
    if isinstance(encoded, pa.ChunkedArray):
        chunks = [c for c in encoded.chunks if len(c)]
        if not chunks:
            return np.empty(0, dtype=np.int64), pa.array([], pa.large_string())
        codes = np.concatenate([np.asarray(c.indices, dtype=np.int64) for c in chunks])
        return codes, chunks[-1].dictionary
    return np.asarray(encoded.indices, dtype=np.int64), encoded.dictionary


def _query_codes(turn: pa.Array) -> tuple[IntArray, pa.Array, bool]:
    """Factorize the run's query ids, hashing only the first id of each block of equal ids.

    Returns the codes, the distinct ids (Arrow, in order of first appearance)
    and whether the run is grouped (each query's rows contiguous).
    """
    n = len(turn)
    if n == 0:
        return np.empty(0, dtype=np.int64), pa.array([], pa.large_string()), True
    new = np.ones(n, dtype=bool)
    new[1:] = np.asarray(pc.not_equal(turn.slice(1), turn.slice(0, n - 1)))
    starts = np.flatnonzero(new)
    if 2 * len(starts) > n:  # hardly any blocks (a shuffled run): hash every id in place
        codes, uniques = _encode(turn)
        return codes, uniques, len(uniques) == len(starts)
    block_codes, uniques = _encode(turn.take(pa.array(starts)))
    codes = np.repeat(block_codes, np.diff(np.append(starts, n)))
    return codes, uniques, len(uniques) == len(starts)


def _positions(values: pa.Array, sorted_ids: pa.Array) -> IntArray:
    """Each value's position in ``sorted_ids``, -1 when absent."""
    found = pc.index_in(values, value_set=sorted_ids)
    return np.asarray(pc.fill_null(found, -1).to_numpy(), dtype=np.int64)


def prepare(  # noqa: PLR0915 - shared set-up, then the fast or the exact path
    run: pd.DataFrame,
    qrels: PathOrFrame | None,
    level: Level,
    ties: Ties,
    *,
    run_queries: bool = False,
) -> Prepared:
    """Integer-code the run and the qrels, rank the run, attach grades.

    Query codes cover the qrels' queries (plus the run's when ``run_queries``),
    in sorted order; run rows of other queries are dropped.
    """
    _run_columns(run)
    judgments = as_qrels(qrels)
    run_codes, run_ids, grouped = _query_codes(_arrow_strings(run["turn_id"], "turn_id"))
    jq_codes, jq_ids = _encode(_arrow_strings(judgments["query_id"], "query_id"))
    wanted = pc.unique(pa.concat_arrays([jq_ids, run_ids])) if run_queries else jq_ids
    sorted_ids = wanted.take(pc.sort_indices(wanted))  # UTF-8 byte order = code point order
    qids = pd.Index(pd.array(sorted_ids, dtype=STRING), name="query_id")
    qmap = _positions(run_ids, sorted_ids)
    run_only = sorted(run_ids.filter(pa.array(qmap < 0)).to_pylist())
    rq = qmap[run_codes] if len(run_codes) else np.empty(0, dtype=np.int64)
    keep_all = bool(np.all(qmap >= 0))
    keep = None if keep_all else np.flatnonzero(rq >= 0)
    rdoc = _arrow_strings(doc_ids(run, level), "doc")
    jdoc = _arrow_strings(qrels_doc_ids(judgments, level), "doc")
    jq = _positions(jq_ids, sorted_ids)[jq_codes] if len(jq_codes) else jq_codes
    jgrade = judgments["grade"].to_numpy(dtype=np.int64)
    scores = run["score"]
    score_all = (  # read only: float64 scores are used in place (na_value would copy them)
        scores.to_numpy()
        if scores.dtype == np.float64
        else scores.to_numpy(dtype=np.float64, na_value=np.nan)
    )
    order_all = run["rank"].to_numpy(dtype=np.int64) if "rank" in run.columns else None
    run_q = rq if keep is None else rq[keep]
    score = score_all if keep is None else score_all[keep]
    if order_all is None:
        order = np.arange(len(rq), dtype=np.int64) if keep is None else keep
    else:
        order = order_all if keep is None else order_all[keep]
    n = len(qids)
    in_qrels = np.bincount(jq, minlength=n) > 0
    in_run = np.zeros(n, dtype=bool)
    in_run[qmap[qmap >= 0]] = True
    fast = None
    if grouped and _is_ranked(run_q, score, order, ties):
        block = run_codes if keep is None else run_codes[keep]
        fast = _fast(run_q, block, keep, rdoc, score, order, ties, jq, jdoc, jgrade, n)
    elif len(run_q) > 1:  # put the rows in rank order, then the fast path as for a ranked run
        by = _rank_order(run_q, score, order, ties)
        if by is not None:
            rows = by if keep is None else keep[by]
            q_by = run_q[by]
            fast = _fast(q_by, q_by, rows, rdoc, score[by], order[by], ties, jq, jdoc, jgrade, n)
    if fast is not None:
        ranked, kept_score, grade, judged, jq_out, jg_out = fast
        return Prepared(
            qids=qids,
            in_qrels=in_qrels,
            in_run=in_run,
            run_only=tuple(run_only),
            ranked=ranked,
            score=kept_score,
            grade=grade,
            judged=judged,
            docs=rdoc,
            qrels_query=jq_out,
            qrels_grade=jg_out,
        )
    if keep is None:
        keep = np.arange(len(rq), dtype=np.int64)
    else:
        rdoc = rdoc.take(pa.array(keep))
    codes, dictionary = _encode(pa.chunked_array([rdoc, jdoc], pa.large_string()))
    rdoc_codes, jdoc_codes = codes[: len(keep)], codes[len(keep) :]

    def doc_rank() -> IntArray:
        by_id = np.asarray(pc.sort_indices(dictionary), dtype=np.int64)
        ranks = np.empty(len(by_id), dtype=np.int64)
        ranks[by_id] = np.arange(len(by_id), dtype=np.int64)
        return ranks

    ranked = rank_run(run_q, rdoc_codes, score, order, ties=ties, doc_rank=doc_rank)
    # qrels: one grade per (query, document), the highest
    n_docs = len(dictionary)
    if len(jq):
        low, high = int(jgrade.min()), int(jgrade.max())
        by = argsort_keys([(jq, n), (jdoc_codes, max(n_docs, 1)), (high - jgrade, high - low + 1)])
        jq, jd, jg = jq[by], jdoc_codes[by], jgrade[by]
        first = np.ones(len(jq), dtype=bool)
        first[1:] = (jq[1:] != jq[:-1]) | (jd[1:] != jd[:-1])
        jq, jd, jg = jq[first], jd[first], jg[first]
    else:
        jd = jg = jq
    grade, judged = lookup_grades(
        n_docs, ranked.query, ranked.doc, qrels_query=jq, qrels_doc=jd, qrels_grade=jg
    )
    rows = keep[ranked.rows]
    return Prepared(
        qids=qids,
        in_qrels=in_qrels,
        in_run=in_run,
        run_only=tuple(run_only),
        ranked=Ranked(rows, ranked.query, ranked.doc, ranked.rank, ranked.duplicates),
        score=score[ranked.rows],
        grade=grade,
        judged=judged,
        docs=dictionary,
        qrels_query=jq,
        qrels_grade=jg,
    )


# --------------------------------------------------------------------------- fast path
#
# A run that arrives grouped by query and ranked (as kimun sends it) needs no
# global document dictionary: duplicates only matter within a query and grades
# only within a query's judgments. So each document id is reduced to a 63-bit
# hash of its bytes, read straight from the Arrow buffers (no hash table, no
# Python strings), and every hash match is confirmed by comparing the strings
# themselves; any doubt (a hash collision, an unsorted run) falls back to the
# exact dictionary path above, so results never depend on the hash.

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


def _fast(  # noqa: PLR0915, PLR0917 - one pass over the run, fallback at each doubt
    run_q: IntArray,
    block: IntArray,
    keep: IntArray | None,
    rdoc: pa.Array,
    score: FloatArray,
    order: IntArray,
    ties: Ties,
    jq: IntArray,
    jdoc: pa.Array,
    jgrade: IntArray,
    n: int,
) -> tuple[Ranked, FloatArray, IntArray, BoolArray, IntArray, IntArray] | None:
    """Rank, de-duplicate and grade a grouped run without a document dictionary.

    ``run_q``, ``block`` (non-decreasing block numbers), ``score`` and
    ``order`` cover the kept rows; ``keep`` maps them to rows of ``rdoc`` (None:
    all rows). None when the run is not already ranked or a hash is in doubt.
    """
    rows_n = len(run_q)
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
    ranked = Ranked(rows, q, rows, _group_rank(q, out=spare[: len(q)]), duplicates)
    kept_score = score if kept is None else score[kept]
    return ranked, kept_score, grade, judged, jq_out, jg_out
