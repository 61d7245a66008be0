"""The numpy engine behind :func:`askkit.metrics.evaluate`: integer codes in, per-query arrays out.

Everything here works on whole columns. A run is four arrays (query code,
document code, score, input order); the qrels are three (query code, document
code, grade). Query codes run over ``0..n_queries-1``; document codes are
shared by run and qrels and **sort like the document id strings** (or come
with a ``doc_rank`` that orders them, so that "document id descending" is a
code comparison). A run that arrives grouped and ranked is checked in one
vectorized pass and not sorted; otherwise one ``argsort`` of a packed int64
key ranks it. A hash pass drops duplicate (query, document) pairs; ranks come
from group starts, grades from a ``searchsorted`` merge with the qrels, and
every measure is a ``bincount`` (a per-query sum) over the relevant rows.
"""

from __future__ import annotations

import mmap
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
import pyarrow as pa

from askkit.errors import SchemaError

__all__ = [
    "KINDS",
    "VALID_NAMES",
    "Blocks",
    "Graded",
    "Measure",
    "Ranked",
    "argsort_keys",
    "block_order",
    "compute",
    "counts_as_relevant",
    "descending_or_tied",
    "fresh",
    "group_rank",
    "lookup_grades",
    "parse_measure",
    "parse_measures",
    "query_blocks",
    "rank_run",
    "trec_values",
]

IntArray = np.ndarray[Any, np.dtype[np.int64]]
FloatArray = np.ndarray[Any, np.dtype[np.float64]]
BoolArray = np.ndarray[Any, np.dtype[np.bool_]]
Ties = Literal["trec", "input"]
#: numpy advises transparent huge pages for arrays of this many bytes and more.
_HUGE_PAGES = 4 << 20

#: Measure kind -> (needs a cutoff, may take a cutoff). Aliases map to these kinds.
KINDS: dict[str, tuple[bool, bool]] = {
    "precision": (True, True),
    "recall": (True, True),
    "hit": (True, True),
    "mrr": (False, True),
    "map": (False, True),
    "ndcg": (False, True),
    "r-precision": (False, False),
}
_ALIASES = {
    "p": "precision",
    "hit_rate": "hit",
    "success": "hit",
    "recip_rank": "mrr",
    "rprec": "r-precision",
    "r_precision": "r-precision",
}
_NAME = re.compile(r"^([A-Za-z_\-]+)(?:@([0-9]+))?$")
#: Every measure name :func:`parse_measure` takes, in words (``k`` a cutoff >= 1).
VALID_NAMES = "precision@k, recall@k, hit@k, mrr, mrr@k, map, map@k, ndcg, ndcg@k or r-precision"


@dataclass(frozen=True, slots=True)
class Measure:
    """A parsed measure name: ``ndcg@10`` is ``Measure("ndcg@10", "ndcg", 10)``."""

    name: str
    kind: str
    k: int | None


def parse_measure(name: str) -> Measure:
    """Parse a ranx-style measure name.

    >>> parse_measure("ndcg@10")
    Measure(name='ndcg@10', kind='ndcg', k=10)
    >>> parse_measure("P@5").kind, parse_measure("r-precision").k
    ('precision', None)
    """
    match = _NAME.match(name.strip()) if isinstance(name, str) else None
    if match is None:
        raise SchemaError(f"not a measure name; use {VALID_NAMES}", field="measures", value=name)
    base = match.group(1).lower()
    kind = _ALIASES.get(base, base)
    if kind not in KINDS:
        raise SchemaError(
            f"unknown measure {base!r}; known: {', '.join(KINDS)}", field="measures", value=name
        )
    needs, takes = KINDS[kind]
    k = int(match.group(2)) if match.group(2) is not None else None
    if k is None and needs:
        raise SchemaError(f"{kind} needs a cutoff, e.g. {kind}@10", field="measures", value=name)
    if k is not None and not takes:
        raise SchemaError(f"{kind} takes no cutoff", field="measures", value=name)
    if k is not None and k < 1:
        raise SchemaError("a cutoff must be >= 1", field="measures", value=name)
    return Measure(name, kind, k)


def parse_measures(names: Sequence[str] | str) -> list[Measure]:
    """Parse a list of measure names (one name given as a string is that name).

    An empty list, a name that is not a measure and a name given twice raise
    :class:`SchemaError` naming the value and the valid names.

    >>> [m.name for m in parse_measures(["ndcg@10", "mrr"])], parse_measures("map")[0].kind
    (['ndcg@10', 'mrr'], 'map')
    """
    given = [names] if isinstance(names, str) else list(names)
    if not given:
        raise SchemaError(
            f"no measure named; name at least one of {VALID_NAMES}", field="measures", value=given
        )
    parsed = [parse_measure(name) for name in given]
    seen = [m.name for m in parsed]
    if len(set(seen)) != len(seen):
        raise SchemaError("a measure is named twice", field="measures", value=seen)
    return parsed


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
    """Check that scores never rise within a query (NaN sorts last, as in trec_eval).

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


def _ideal_dcg(
    n_queries: int, qrels_query: IntArray, qrels_grade: IntArray, k: int | None
) -> FloatArray:
    gain = np.maximum(qrels_grade, 0).astype(np.float64)
    positive = gain > 0
    q, g = qrels_query[positive], gain[positive]
    top = int(qrels_grade.max()) if len(qrels_grade) else 0
    order = argsort_keys([(q, n_queries), (top - g.astype(np.int64), top + 1)])
    q, g = q[order], g[order]
    rank = group_rank(q)
    inside = rank <= k if k is not None else np.ones(len(rank), dtype=bool)
    return np.bincount(
        q[inside], weights=g[inside] / np.log2(rank[inside] + 1.0), minlength=n_queries
    ).astype(np.float64)


def trec_values(grade: IntArray, judged: BoolArray) -> IntArray:
    """trec_eval's value of each retrieved row: its grade when judged 0 or more,
    -2 when judged negative, -1 when not judged (``-l`` compares against it)."""
    value = fresh(len(grade), np.int64)
    value.fill(-1)
    np.copyto(value, grade, where=judged)
    value[judged & (grade < 0)] = -2
    return value


def counts_as_relevant(qrels_grade: IntArray, relevance_level: int) -> BoolArray:
    """Which judgments count in R: a grade of at least 0 and at least the level."""
    return (qrels_grade >= 0) & (qrels_grade >= relevance_level)


def compute(
    measures: list[Measure],
    n_queries: int,
    ranked: Ranked,
    grade: IntArray,
    *,
    qrels_query: IntArray,
    qrels_grade: IntArray,
    relevance_level: int = 1,
    judged: BoolArray | None = None,
    max_docs: int | None = None,
) -> dict[str, FloatArray]:
    """Every measure for every query code, trec_eval's definitions (see the README).

    ``grade`` is the grade of each ranked row, ``judged`` whether it has one
    (``None``: every row with a grade above 0 is judged). Each row gets
    trec_eval's value: its grade when judged with a grade of 0 or more, -2
    when judged negative, -1 when not judged; a row is relevant when its
    value is at least ``relevance_level`` (trec_eval's ``-l``, so at ``-l0``
    a judged 0 is relevant and at ``-l-1`` so is an unjudged row), and the
    number of relevant documents counts judgments of at least 0 and at least
    the level. nDCG ignores the level: its gain is a positive value.
    ``max_docs`` keeps each query's top rows only (trec_eval's ``-M``). Only
    the rows that are relevant or carry a positive gain take part: every
    measure is a per-query sum over them (``bincount``).
    """
    if judged is None:
        judged = grade > 0
    value = trec_values(grade, judged)
    useful = (value >= relevance_level) | (value > 0)
    if max_docs is not None:
        useful &= ranked.rank <= max_docs
    q, rank, g = ranked.query[useful], ranked.rank[useful], value[useful]
    rel = g >= relevance_level
    n_rel = np.bincount(
        qrels_query[counts_as_relevant(qrels_grade, relevance_level)], minlength=n_queries
    )
    safe_rel = np.where(n_rel > 0, n_rel, 1).astype(np.float64)
    rel_q, rel_rank = q[rel], rank[rel]
    rel_cum = group_rank(rel_q)  # relevant retrieved so far, this one included
    inv_rank = 1.0 / rel_rank.astype(np.float64)
    gain = np.maximum(g, 0).astype(np.float64)
    discounted = gain / np.log2(rank + 1.0)
    out: dict[str, FloatArray] = {}
    ideal: dict[int | None, FloatArray] = {}

    def per_query(mask: BoolArray, weights: FloatArray | None = None) -> FloatArray:
        """Sum over the relevant retrieved rows selected by ``mask``, per query."""
        w = None if weights is None else weights[mask]
        return np.bincount(rel_q[mask], weights=w, minlength=n_queries).astype(np.float64)

    for m in measures:
        k = m.k
        cut = np.iinfo(np.int64).max if k is None else k
        if m.kind in ("precision", "recall", "hit"):
            hits = per_query(rel_rank <= cut)
            if m.kind == "precision":
                out[m.name] = hits / float(cut)
            elif m.kind == "recall":
                out[m.name] = np.where(n_rel > 0, hits / safe_rel, 0.0)
            else:
                out[m.name] = (hits > 0).astype(np.float64)
        elif m.kind == "mrr":
            out[m.name] = per_query((rel_cum == 1) & (rel_rank <= cut), inv_rank)
        elif m.kind == "map":
            prec = rel_cum / rel_rank.astype(np.float64)
            out[m.name] = np.where(n_rel > 0, per_query(rel_rank <= cut, prec) / safe_rel, 0.0)
        elif m.kind == "ndcg":
            if k not in ideal:
                ideal[k] = _ideal_dcg(n_queries, qrels_query, qrels_grade, k)
            idcg = ideal[k]
            mask = rank <= cut
            dcg = np.bincount(q[mask], weights=discounted[mask], minlength=n_queries)
            out[m.name] = np.where(idcg > 0, dcg / np.where(idcg > 0, idcg, 1.0), 0.0)
        else:  # r-precision: relevant in the top R, over R
            at_r = rel_rank <= n_rel[rel_q]
            out[m.name] = np.where(n_rel > 0, per_query(at_r) / safe_rel, 0.0)
    return out
