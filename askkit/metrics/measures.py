"""Every measure askkit computes, defined once: names, gain, relevance, discount, ratios.

A measure is defined here and computed by providers: :func:`compute` scores a
ranked run trec_eval's way for :func:`askkit.metrics.evaluate`, and
:func:`askkit.ranking.sweep_cuts` scores each context cut with the same
definitions (as ir_measures defines a measure once and lets providers compute
it):

* relevance: a value of at least the level (:func:`relevant`; grade >= 1 by
  default, trec_eval's ``-l 1``);
* gain: the grade, negatives as 0 (:func:`gain`), discounted by
  ``log2(rank + 1)`` (:func:`discounted`); the ideal DCG ranks every positive
  gain best first (:func:`ideal_dcg`);
* recall, precision and nDCG are ratios that score 0 when there is nothing to
  find (:func:`recall`, :func:`precision`, :func:`ndcg`).

Everything works on whole columns: every measure is a ``bincount`` (a
per-query sum) over the relevant rows of a :class:`~askkit.metrics.ranked.Ranked` run.

>>> gain(np.array([3, 0, -1])).tolist(), relevant(np.array([3, 0, -1])).tolist()
([3.0, 0.0, 0.0], [True, False, False])
>>> ndcg(np.array([1.5, 0.0]), np.array([3.0, 0.0])).tolist()
[0.5, 0.0]
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from askkit.errors import SchemaError
from askkit.metrics.ranked import (
    BoolArray,
    FloatArray,
    IntArray,
    Ranked,
    argsort_keys,
    chunk_edges,
    fresh,
    group_numbers,
    group_rank,
)

__all__ = [
    "KINDS",
    "RELEVANT",
    "VALID_NAMES",
    "Measure",
    "compute",
    "counts_as_relevant",
    "discounted",
    "gain",
    "ideal_dcg",
    "ndcg",
    "parse_measure",
    "parse_measures",
    "precision",
    "ratio",
    "recall",
    "relevant",
    "trec_values",
]

#: The lowest grade that counts as relevant unless told otherwise (trec_eval's ``-l 1``).
RELEVANT = 1

#: Measure kind -> (needs a cutoff, may take a cutoff). Aliases map to these kinds.
KINDS: dict[str, tuple[bool, bool]] = {
    "precision": (True, True),
    "recall": (True, True),
    "hit": (True, True),
    "mrr": (False, True),
    "map": (False, True),
    "ndcg": (False, True),
    "r-precision": (False, False),
    "bpref": (False, False),
    "infap": (False, False),
    "judged": (True, True),
}
#: Other names of the kinds: ranx's, ir_measures' and trec_eval's (``P_5``,
#: ``ndcg_cut_10``, ``map_cut_10``, ``success_1``, ``recip_rank``, ``Rprec``, ``infAP``).
_ALIASES = {
    "p": "precision",
    "hit_rate": "hit",
    "success": "hit",
    "recip_rank": "mrr",
    "rr": "mrr",
    "ap": "map",
    "map_cut": "map",
    "ndcg_cut": "ndcg",
    "rprec": "r-precision",
    "r_precision": "r-precision",
}
#: A kind, an optional ``'`` (condensed), an optional cutoff after ``@`` or ``_``
#: (trec_eval's ``P_5``), and the ``'`` may come last instead (``ndcg@10'``).
_NAME = re.compile(r"^([A-Za-z][A-Za-z_\-]*?)(')?(?:[@_]([0-9]+))?(')?$")
#: Every measure name :func:`parse_measure` takes, in words (``k`` a cutoff >= 1).
VALID_NAMES = (
    "precision@k, recall@k, hit@k, mrr, mrr@k, map, map@k, ndcg, ndcg@k, r-precision, "
    "bpref, infap or judged@k; a ' after the name (ndcg'@10) scores the condensed list"
)
#: The kinds with no condensed form: judged@k is 1 on a list of judged documents.
NOT_CONDENSED = frozenset({"judged"})


@dataclass(frozen=True, slots=True)
class Measure:
    """A parsed measure name: ``ndcg@10`` is ``Measure("ndcg@10", "ndcg", 10)``.

    ``condensed``: scored on the condensed list (Sakai 2007), the ranking with
    every unjudged document taken out and the rest moved up, as trec_eval's
    ``-J`` and pytrec_eval's ``judged_docs_only_flag`` do; written ``ndcg'@10``.
    """

    name: str
    kind: str
    k: int | None
    condensed: bool = False

    @property
    def label(self) -> str:
        """The canonical name: ``ndcg'@10`` for ``NDCG_cut_10'``."""
        prime = "'" if self.condensed else ""
        return f"{self.kind}{prime}" + ("" if self.k is None else f"@{self.k}")


def parse_measure(name: str) -> Measure:
    """Parse a ranx-style measure name.

    >>> parse_measure("ndcg@10")
    Measure(name='ndcg@10', kind='ndcg', k=10, condensed=False)
    >>> parse_measure("P@5").kind, parse_measure("r-precision").k
    ('precision', None)
    >>> parse_measure("ndcg_cut_10").label, parse_measure("P'@5").label, parse_measure("infAP").kind
    ('ndcg@10', "precision'@5", 'infap')
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
    if match.group(2) and match.group(4):
        raise SchemaError("one ' marks a condensed measure", field="measures", value=name)
    condensed = bool(match.group(2) or match.group(4))
    if condensed and kind in NOT_CONDENSED:
        raise SchemaError(
            f"{kind} has no condensed form: every document of a condensed list is judged",
            field="measures",
            value=name,
        )
    needs, takes = KINDS[kind]
    k = int(match.group(3)) if match.group(3) is not None else None
    if k is None and needs:
        raise SchemaError(f"{kind} needs a cutoff, e.g. {kind}@10", field="measures", value=name)
    if k is not None and not takes:
        raise SchemaError(f"{kind} takes no cutoff", field="measures", value=name)
    if k is not None and k < 1:
        raise SchemaError("a cutoff must be >= 1", field="measures", value=name)
    return Measure(name, kind, k, condensed)


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


# --------------------------------------------------------------------------- definitions


def relevant(value: np.ndarray[Any, Any], level: int = RELEVANT) -> BoolArray:
    """Which grades (or trec_eval values) count as relevant: at least ``level``."""
    return np.asarray(value >= level, dtype=bool)


def gain(grade: np.ndarray[Any, Any]) -> FloatArray:
    """nDCG's gain of each grade: the grade itself, negatives as 0 (trec_eval, linear)."""
    return np.asarray(np.maximum(grade, 0), dtype=np.float64)


def discounted(gains: FloatArray, rank: np.ndarray[Any, Any]) -> FloatArray:
    """Each gain at its 1-based rank, discounted by ``log2(rank + 1)``."""
    return np.asarray(gains / np.log2(rank + 1.0), dtype=np.float64)


def ideal_dcg(query: IntArray, grade: IntArray, n_queries: int, k: int | None = None) -> FloatArray:
    """Each query's ideal DCG: its positive gains best first, the top ``k`` (None: all).

    >>> ideal_dcg(np.array([0, 0, 1]), np.array([1, 3, 0]), 2).round(4).tolist()
    [3.6309, 0.0]
    """
    gains = gain(grade)
    positive = gains > 0
    q, g = query[positive], gains[positive]
    top = int(grade.max()) if len(grade) else 0
    order = argsort_keys([(q, n_queries), (top - g.astype(np.int64), top + 1)])
    q, g = q[order], g[order]
    rank = group_rank(q)
    inside = rank <= k if k is not None else np.ones(len(rank), dtype=bool)
    return np.bincount(
        q[inside], weights=discounted(g[inside], rank[inside]), minlength=n_queries
    ).astype(np.float64)


def ratio(part: Any, whole: Any) -> FloatArray:
    """``part / whole``, 0 where ``whole`` is 0: a query with nothing to find scores 0."""
    safe = np.where(np.asarray(whole) > 0, whole, 1)
    return np.asarray(np.where(np.asarray(whole) > 0, part / safe, 0.0), dtype=np.float64)


def recall(found: Any, relevant_total: Any) -> FloatArray:
    """Relevant documents retrieved over those there are."""
    return ratio(found, relevant_total)


def precision(found: Any, retrieved: Any) -> FloatArray:
    """Relevant documents retrieved over the documents retrieved (trec_eval's ``P@k``
    counts ``k`` retrieved, whether or not the run holds that many)."""
    return ratio(found, retrieved)


def ndcg(dcg: Any, ideal: Any) -> FloatArray:
    """DCG over the ideal DCG."""
    return ratio(dcg, ideal)


# --------------------------------------------------------------------------- trec_eval


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


#: infAP's smoothing constant (trec_eval's ``INFAP_EPSILON``).
INFAP_EPSILON = 0.00001


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
    retrieved: IntArray | None = None,
) -> dict[str, FloatArray]:
    """Every measure for every query code, trec_eval's definitions (see the README).

    ``grade`` is the grade of each ranked row, ``judged`` whether it has one
    (``None``: every row with a grade above 0 is judged). Each row gets
    trec_eval's value: its grade when judged with a grade of 0 or more, -2
    when judged negative (trec_eval's "in the pool but unjudged", so a qrels
    grade of -1 marks a pooled document nobody judged), -1 when not judged;
    a row is relevant when its value is at least ``relevance_level``
    (trec_eval's ``-l``, so at ``-l0`` a judged 0 is relevant and at
    ``-l-1`` so is an unjudged row), and the number of relevant documents
    counts judgments of at least 0 and at least the level. nDCG ignores the
    level: its gain is a positive value. ``max_docs`` keeps each query's top
    rows only (trec_eval's ``-M``). ``retrieved``: each query's rows (None:
    counted in ``ranked``; given when ``ranked`` holds only some of them). A
    condensed measure (``ndcg'@10``) is scored on the rows of value 0 or more
    only, ranked again in their order
    (trec_eval's ``-J``, after ``-M``).

    Every measure is a sum over the judged rows (value -1 never counts unless
    the level is -1 or less) and each row's rank; the unjudged rows only
    move ranks. So the judged rows are taken out once, in rank order, and
    every measure, condensed ones included, is one pass over them.
    """
    if judged is None:
        judged = grade > 0
    q, rank = ranked.query, ranked.rank
    if not any(m.kind == "judged" for m in measures):
        retrieved = None
    else:  # Judged@k's denominator counts every row (given, or counted here)
        counted = np.bincount(q, minlength=n_queries) if retrieved is None else retrieved.copy()
        if max_docs is not None:
            np.minimum(counted, max_docs, out=counted)
        retrieved = counted
    if relevance_level > -1:  # an unjudged row is never relevant: the judged rows suffice
        at = np.flatnonzero(judged)
        q, rank = q[at], rank[at]
        value = grade[at]
        value[value < 0] = -2
    else:
        value = trec_values(grade, judged)
    if max_docs is not None:
        top = rank <= max_docs
        q, rank, value = q[top], rank[top], value[top]
    counts = _Counts.of(qrels_query, qrels_grade, n_queries, relevance_level, retrieved)
    plain = [m for m in measures if not m.condensed]
    condensed = [m for m in measures if m.condensed]
    out = {m.name: np.zeros(n_queries, dtype=np.float64) for m in measures}
    for a, b in itertools.pairwise(chunk_edges(q)):  # whole queries: each query's sums in one
        parts: dict[str, FloatArray] = {}
        cq, crank, cvalue = q[a:b], rank[a:b], value[a:b]
        if plain:
            parts.update(_scores(plain, counts, cq, crank, cvalue))
        if condensed:
            kept = cvalue >= 0
            kq = cq[kept]
            parts.update(_scores(condensed, counts, kq, group_rank(kq), cvalue[kept]))
        for name, part in parts.items():  # a query outside the chunk scores 0 in it
            out[name] += part
    return out


@dataclass(frozen=True, slots=True)
class _Counts:
    """Per query: the judgments that count as relevant (R) and as not relevant,
    the level, the judgments themselves for the ideal DCG, the rows retrieved
    (after ``-M``; only Judged@k needs them, else None), and each cutoff's
    ideal DCG once computed."""

    n_queries: int
    level: int
    n_rel: IntArray
    n_nonrel: IntArray
    qrels_query: IntArray
    qrels_grade: IntArray
    retrieved: IntArray | None = None
    ideal: dict[int | None, FloatArray] = field(default_factory=dict)

    def ideal_dcg(self, k: int | None) -> FloatArray:
        """:func:`ideal_dcg` of the judgments at cutoff ``k``, computed once, from
        :meth:`best_first`'s judgments."""
        if k not in self.ideal:
            q, g = self.best_first(k)
            self.ideal[k] = ideal_dcg(q, g, self.n_queries, k)
        return self.ideal[k]

    def best_first(self, k: int | None) -> tuple[IntArray, IntArray]:
        """The judgments with a gain by query, then grade descending, as the ideal
        DCG ranks them, at most ``k`` a query (None: all): put in that order by
        counting (judgments per query and grade, expanded best first), so its
        sort finds them in order, and cut where its cutoff would. When the
        grades are too many to count, the judgments as given.

        >>> c = _Counts.of(np.array([1, 0, 1, 1]), np.array([2, 1, 3, 0]), 2, 1)
        >>> [a.tolist() for a in c.best_first(None)], [a.tolist() for a in c.best_first(1)]
        ([[0, 1, 1], [1, 3, 2]], [[0, 1], [1, 3]])
        """
        n, query, grade = self.n_queries, self.qrels_query, self.qrels_grade
        top = int(grade.max()) if len(grade) else 0
        if top <= 0 or n * (top + 1) > 4 * len(grade) + 1024:
            return query, grade
        # judgments per query and grade, grades descending; no gain: the last column
        cell = np.maximum(grade, 0, out=fresh(len(grade), np.int64))
        np.subtract(top, cell, out=cell)
        cell += np.multiply(query, top + 1, out=fresh(len(query), np.int64))
        table = np.bincount(cell, minlength=n * (top + 1)).reshape(n, top + 1)[:, :top]
        if k is not None:  # each query's first k: a cell keeps what its query still lacks
            before = np.cumsum(table, axis=1) - table
            table = np.clip(k - before, 0, table)
        per_cell = table.reshape(-1)
        cell_query = np.repeat(np.arange(n, dtype=np.int64), top)
        cell_grade = np.tile(np.arange(top, 0, -1, dtype=np.int64), n)
        return np.repeat(cell_query, per_cell), np.repeat(cell_grade, per_cell)

    @classmethod
    def of(
        cls,
        qrels_query: IntArray,
        qrels_grade: IntArray,
        n: int,
        level: int,
        retrieved: IntArray | None = None,
    ) -> _Counts:
        # one count per (query, kind): 0 relevant, 1 not relevant, 2 neither (negative)
        cell = np.multiply(qrels_query, 3, out=fresh(len(qrels_query), np.int64))
        cell += qrels_grade < max(level, 0)
        cell += qrels_grade < 0
        per_kind = np.bincount(cell, minlength=3 * n).reshape(n, 3)
        return cls(
            n,
            level,
            np.ascontiguousarray(per_kind[:, 0]),
            np.ascontiguousarray(per_kind[:, 1]),
            qrels_query,
            qrels_grade,
            retrieved,
        )


def _scores(
    measures: list[Measure], counts: _Counts, q: IntArray, rank: IntArray, value: IntArray
) -> dict[str, FloatArray]:
    """The measures over ranked rows (``q`` grouped, ``rank`` 1-based within each
    query, ``value`` trec_eval's value of each row; rows that can never count,
    unjudged ones above level -1, may be left out: ``rank`` keeps their place)."""
    n_queries, level, n_rel = counts.n_queries, counts.level, counts.n_rel
    useful = relevant(value, level) | (value > 0)
    uq, urank, g = q[useful], rank[useful], value[useful]
    rel = relevant(g, level)
    rel_q, rel_rank = uq[rel], urank[rel]
    rel_cum = group_rank(rel_q)  # relevant retrieved so far, this one included
    inv_rank = 1.0 / rel_rank.astype(np.float64)
    terms = discounted(gain(g), urank)
    out: dict[str, FloatArray] = {}

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
                out[m.name] = precision(hits, float(cut))
            elif m.kind == "recall":
                out[m.name] = recall(hits, n_rel)
            else:
                out[m.name] = (hits > 0).astype(np.float64)
        elif m.kind == "mrr":
            out[m.name] = per_query((rel_cum == 1) & (rel_rank <= cut), inv_rank)
        elif m.kind == "map":
            prec = rel_cum / rel_rank.astype(np.float64)
            out[m.name] = ratio(per_query(rel_rank <= cut, prec), n_rel)
        elif m.kind == "ndcg":
            mask = urank <= cut
            dcg = np.bincount(uq[mask], weights=terms[mask], minlength=n_queries)
            out[m.name] = ndcg(dcg, counts.ideal_dcg(k))
        elif m.kind == "r-precision":  # relevant in the top R, over R
            out[m.name] = ratio(per_query(rel_rank <= n_rel[rel_q]), n_rel)
        elif m.kind == "bpref":
            out[m.name] = bpref(q, value, counts.n_rel, counts.n_nonrel, level)
        elif m.kind == "infap":
            out[m.name] = infap(q, rank, value, counts.n_rel, level)
        else:  # judged@k
            if counts.retrieved is None:
                raise ValueError("judged@k needs each query's retrieved rows (_Counts.retrieved)")
            out[m.name] = judged_at(q, rank, value, cut, counts.retrieved)
    return out


def _before(group: IntArray, flag: BoolArray, at: BoolArray | None = None) -> IntArray:
    """How many rows of the same group (:func:`~askkit.metrics.ranked.group_numbers`:
    rows grouped by query, in rank order) above each row have ``flag``; ``at``:
    of the rows it selects only.

    >>> _before(np.array([0, 0, 0, 1, 1]), np.array([1, 1, 0, 1, 0], dtype=bool)).tolist()
    [0, 1, 2, 0, 1]
    """
    total = np.cumsum(flag, dtype=np.int64)
    total -= flag  # exclusive
    if len(group) == 0:
        return total if at is None else total[at]
    first = total[np.searchsorted(group, np.arange(int(group[-1]) + 1))]  # at each start
    if at is None:
        total -= first[group]
        return total
    return total[at] - first[group[at]]


def bpref(
    q: IntArray, value: IntArray, n_rel: IntArray, n_nonrel: IntArray, level: int = RELEVANT
) -> FloatArray:
    """Binary preference (Buckley and Voorhees 2004), trec_eval's ``bpref``.

    Only judged rows count: each relevant one scores ``1 - min(n, R) / min(N, R)``
    (1 when ``n`` is 0), ``n`` the judged non-relevant rows above it, ``R``
    and ``N`` the query's relevant and non-relevant judgments; the sum is
    divided by ``R``. Unjudged rows, and rows judged negative (pooled but
    unjudged), are skipped.

    >>> q = np.array([0, 0, 0, 0]); v = np.array([0, -1, 1, 1])
    >>> bpref(q, v, np.array([3]), np.array([2])).round(6).tolist()
    [0.333333]
    """
    n_queries = len(n_rel)
    judged = value >= 0
    jq, jv = q[judged], value[judged]
    nonrel = jv < level
    rel = ~nonrel
    rq, n = jq[rel], _before(group_numbers(jq), nonrel, rel)
    big_r = n_rel[rq]
    denom = np.where(n > 0, np.minimum(n_nonrel[rq], big_r), 1).astype(np.float64)
    term = np.where(n > 0, 1.0 - np.minimum(n, big_r).astype(np.float64) / denom, 1.0)
    total = np.bincount(rq, weights=term, minlength=n_queries)
    return ratio(total, n_rel)


def infap(
    q: IntArray, rank: IntArray, value: IntArray, n_rel: IntArray, level: int = RELEVANT
) -> FloatArray:
    """Inferred AP (Yilmaz and Aslam 2006), trec_eval's ``infAP``.

    A relevant row at 0-based position ``j > 0`` scores
    ``1/(j+1) + j/(j+1) * (a/j) * ((r + e) / (r + n + 2e))``, where, above it,
    ``r`` rows are relevant, ``n`` judged non-relevant, ``a = r + n + p`` with
    ``p`` pooled but unjudged (qrels grade below 0), and ``e`` is
    :data:`INFAP_EPSILON`; at ``j = 0`` it scores 1. Rows outside the pool
    (no judgment) only move ``j``. The sum is divided by ``R``.

    >>> q = np.zeros(3, dtype=np.int64)
    >>> infap(q, np.array([1, 2, 3]), np.array([1, -1, 1]), np.array([2])).round(4).tolist()
    [0.8333]
    """
    n_queries = len(n_rel)
    rel_flag = (value >= 0) & (value >= level)
    nonrel_flag = (value >= 0) & (value < level)
    pooled = value == -2
    rq = q[rel_flag]
    group = group_numbers(q)
    r = (group_rank(rq) - 1).astype(np.float64)  # the relevant rows above
    n = _before(group, nonrel_flag, rel_flag).astype(np.float64)
    p = _before(group, pooled, rel_flag).astype(np.float64)
    j = (rank[rel_flag] - 1).astype(np.float64)
    first = j == 0
    safe_j = np.where(first, 1.0, j)
    term = 1.0 / (j + 1.0) + (j / (j + 1.0)) * ((r + n + p) / safe_j) * (
        (r + INFAP_EPSILON) / (r + n + 2 * INFAP_EPSILON)
    )
    term[first] = 1.0
    total = np.bincount(rq, weights=term, minlength=n_queries)
    return ratio(total, n_rel)


def judged_at(
    q: IntArray, rank: IntArray, value: IntArray, k: int, retrieved: IntArray
) -> FloatArray:
    """Judged@k (ir_measures): the share of a query's top ``k`` documents that
    carry a judgment of 0 or more, over ``min(k, retrieved)`` (``retrieved``:
    each query's documents; the rows given may leave the unjudged ones out);
    0 when nothing is retrieved. A qrels grade below 0 (pooled but unjudged)
    is not a judgment.

    >>> judged_at(np.array([0, 0, 0]), np.array([1, 2, 3]), np.array([2, -1, 0]), 2,
    ...           np.array([3])).tolist()
    [0.5]
    """
    hits = np.bincount(q[(rank <= k) & (value >= 0)], minlength=len(retrieved))
    return ratio(hits.astype(np.float64), np.minimum(retrieved, k))
