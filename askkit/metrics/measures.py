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

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from askkit.errors import SchemaError
from askkit.metrics.ranked import (
    BoolArray,
    FloatArray,
    IntArray,
    Ranked,
    argsort_keys,
    fresh,
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
    useful = relevant(value, relevance_level) | (value > 0)
    if max_docs is not None:
        useful &= ranked.rank <= max_docs
    q, rank, g = ranked.query[useful], ranked.rank[useful], value[useful]
    rel = relevant(g, relevance_level)
    n_rel = np.bincount(
        qrels_query[counts_as_relevant(qrels_grade, relevance_level)], minlength=n_queries
    )
    rel_q, rel_rank = q[rel], rank[rel]
    rel_cum = group_rank(rel_q)  # relevant retrieved so far, this one included
    inv_rank = 1.0 / rel_rank.astype(np.float64)
    terms = discounted(gain(g), rank)
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
            if k not in ideal:
                ideal[k] = ideal_dcg(qrels_query, qrels_grade, n_queries, k)
            mask = rank <= cut
            dcg = np.bincount(q[mask], weights=terms[mask], minlength=n_queries)
            out[m.name] = ndcg(dcg, ideal[k])
        else:  # r-precision: relevant in the top R, over R
            out[m.name] = ratio(per_query(rel_rank <= n_rel[rel_q]), n_rel)
    return out
