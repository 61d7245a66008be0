"""The numpy kernels behind :func:`askkit.ranking.sweep.sweep_cuts`: many pools at once.

The pools are one long, query-grouped, best-first array of scores with
per-query segment offsets (``starts``). No Python loop runs per query:

* a "count the prefix scoring >= t" for every query at once is one
  ``searchsorted`` on a non-decreasing int64 key, ``query * U + (U - 1 -
  rank of the score among the U distinct scores)``;
* the largest-drop search is a masked ``np.maximum.reduceat`` over the
  notes' best scores, then a ``np.minimum.reduceat`` for the earliest tie;
* kept notes, relevant notes and DCG are prefix counts (a padded
  ``cumsum``) or a ``bincount`` over the few relevant notes, in row order
  (the same summation order as the plain-Python reference).

The arithmetic is kimun's, in float64, operation for operation, overflow to
inf and ``0 * inf`` = NaN included (without NumPy's warnings): the lengths
equal :mod:`askkit.ranking.cut`'s exactly (tested in
``tests/ranking/test_sweep.py``). Relevance, gain, discount and the ideal DCG
are :mod:`askkit.metrics.measures`'.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from askkit.errors import SchemaError
from askkit.metrics.measures import discounted, gain, ideal_dcg, relevant
from askkit.ranking.cut import HIGH_INDEX_FACTOR, LOW_INDEX_FACTOR

__all__ = ["Kernels", "Pools", "order_rows", "prepare"]

IntArray = np.ndarray[Any, np.dtype[np.int64]]
FloatArray = np.ndarray[Any, np.dtype[np.float64]]
BoolArray = np.ndarray[Any, np.dtype[np.bool_]]


def _padded_cumsum(values: np.ndarray[Any, Any]) -> IntArray:
    out = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum(values, out=out[1:])
    return out


def order_rows(query: IntArray, score: FloatArray, rank: FloatArray | None) -> IntArray | None:
    """Row order: grouped by query (first appearance), then by rank, else by score descending.

    ``None`` when the rows are already in that order (kimun's pools arrive
    grouped and ranked): one vectorized check instead of a sort.
    """
    second = rank if rank is not None else -score
    same = query[1:] == query[:-1]
    grouped = bool(np.all(query[1:] >= query[:-1]))
    if grouped and not np.any(same & (second[1:] < second[:-1])):
        return None
    return np.lexsort((second, query)).astype(np.int64)  # lexsort is stable


def _codes(pool_values: pd.Series, qrels_values: pd.Series) -> tuple[IntArray, IntArray, pd.Index]:
    """Shared integer codes of the pool's and the qrels' strings, pool first."""
    both = pd.concat([pool_values.astype(str), qrels_values.astype(str)], ignore_index=True)
    codes, uniques = pd.factorize(both, sort=False)
    codes = codes.astype(np.int64)
    n = len(pool_values)
    return codes[:n], codes[n:], uniques


@dataclass(frozen=True, slots=True)
class Pools:
    """Query-grouped, best-first pools as flat arrays (built by :func:`prepare`)."""

    query_ids: np.ndarray[Any, np.dtype[np.object_]]  # (Q,) in first-appearance order
    starts: IntArray  # (Q + 1,) row offsets
    score: FloatArray  # (N,)
    first: BoolArray  # (N,) the first (best) chunk of its note in its query
    grade: IntArray  # (N,) the note's grade, 0 when unjudged (first rows only)
    relevant: BoolArray  # (N,) first row of a relevant note

    @property
    def queries(self) -> int:
        return len(self.starts) - 1

    @property
    def sizes(self) -> IntArray:
        return np.diff(self.starts)


def prepare(pools: pd.DataFrame, qrels: pd.DataFrame) -> Pools:
    """Order, check and annotate the long pool frame; ``qrels`` as ``read_qrels`` returns it.

    Query ids and paths become integer codes shared with the qrels (one
    ``factorize`` of each column, Arrow's dictionary encoding for string
    columns), so grades are found by an int64 key, not by strings.
    """
    qcode, qrels_q, qids = _codes(pools["query_id"], qrels["query_id"])
    pcode, qrels_p, paths = _codes(pools["path"], qrels["path"])
    score = pools["score"].to_numpy(dtype=np.float64)
    rank = pools["rank"].to_numpy(dtype=np.float64) if "rank" in pools.columns else None
    order = order_rows(qcode, score, rank)
    if order is not None:
        qcode, pcode, score = qcode[order], pcode[order], score[order]
    same = qcode[1:] == qcode[:-1]
    rises = np.flatnonzero(same & (score[1:] > score[:-1]))
    if len(rises):
        i = int(rises[0]) + 1
        raise SchemaError(
            f"query {qids[qcode[i]]!r}: the pool is not best first (score {score[i]!r} after "
            f"{score[i - 1]!r}); kimun's ranked pool is sorted by score: drop the 'rank' column "
            "to sort by score",
            field="rank",
            has_value=False,
        )
    starts = np.concatenate([[0], np.flatnonzero(~same) + 1, [len(score)]]).astype(np.int64)
    width = len(paths) + 1
    key = qcode * width + pcode
    first = ~pd.Series(key).duplicated().to_numpy()
    firsts = np.flatnonzero(first)
    grades = pd.Series(qrels["grade"].to_numpy(dtype=np.int64)).groupby(qrels_q * width + qrels_p)
    grade = np.zeros(len(score), dtype=np.int64)
    grade[firsts] = grades.max().reindex(key[firsts], fill_value=0).to_numpy(dtype=np.int64)
    is_relevant = np.zeros(len(score), dtype=bool)
    is_relevant[firsts] = relevant(grade[firsts])
    n_queries = len(starts) - 1
    qid_array = np.asarray(qids[:n_queries], dtype=object)
    return Pools(qid_array, starts, score, first, grade, is_relevant)


class Kernels:
    """Per-query quantities shared by every setting of a sweep."""

    def __init__(self, pools: Pools) -> None:
        self.pools = pools
        starts, score = pools.starts, pools.score
        n_queries = pools.queries
        self.begin = starts[:-1]
        self.n = pools.sizes
        self.row_query = np.repeat(np.arange(n_queries, dtype=np.int64), self.n)
        # the prefix count: key non-decreasing along the rows
        self.distinct = np.unique(score)
        size = len(self.distinct)
        urank = np.searchsorted(self.distinct, score).astype(np.int64)
        self.key = self.row_query * size + (size - 1 - urank)
        # score-range endpoints, f64 as kimun writes them
        last = (self.n - 1).astype(np.float64)
        high = score[self.begin + np.floor(HIGH_INDEX_FACTOR * last).astype(np.int64)]
        low = score[self.begin + np.ceil(LOW_INDEX_FACTOR * last).astype(np.int64)]
        with np.errstate(over="ignore"):  # f64 without traps: inf past the largest float
            self.low, self.span = low, high - low
        # notes: each query's best chunk per note, in pool order
        notes_before = _padded_cumsum(pools.first)
        self.note_starts = notes_before[starts]
        self.m = np.diff(self.note_starts)
        note_rows = np.flatnonzero(pools.first)
        self.note_score = score[note_rows]
        note_query = self.row_query[note_rows]
        self.note_query = note_query
        self.note_k = np.arange(len(note_rows), dtype=np.int64) - self.note_starts[note_query]
        base = np.concatenate([[np.nan], self.note_score[:-1]])
        ok = (self.note_k >= 1) & (base > 0)
        drop = np.full(len(note_rows), -np.inf)
        with np.errstate(over="ignore"):  # a drop past the largest float is inf, as in kimun
            drop[ok] = (base[ok] - self.note_score[ok]) / base[ok]
        self.note_drop = drop
        positive = (self.note_score > 0).astype(np.float64)
        self.positive = np.bincount(note_query, positive, n_queries).astype(np.int64)
        # relevance: prefix counts of notes, and the relevant notes' rows for DCG
        self.notes_before = notes_before
        rel_rows = np.flatnonzero(pools.relevant)
        self.rel_query = self.row_query[rel_rows]
        self.rel_pos = rel_rows - self.begin[self.rel_query]
        note_rank = notes_before[rel_rows + 1] - notes_before[self.begin[self.rel_query]]
        rel_grade = pools.grade[rel_rows]
        self.rel_term = discounted(gain(rel_grade), note_rank)
        self.rel_total = np.bincount(self.rel_query, minlength=n_queries).astype(np.int64)
        self.ideal = ideal_dcg(self.rel_query, rel_grade, n_queries)

    def count_at_least(self, threshold: FloatArray) -> IntArray:
        """Per query, the rows scoring ``>= threshold[q]`` (a prefix: pools are best first)."""
        size = len(self.distinct)
        below = np.searchsorted(self.distinct, threshold, side="left")  # NaN -> size
        target = np.arange(len(threshold), dtype=np.int64) * size + (size - 1 - below)
        return np.searchsorted(self.key, target, side="right") - self.begin

    def fixed(self, top_k: int) -> IntArray:
        return np.minimum(max(top_k, 1), self.n)

    def score_range(self, cutoff: float) -> IntArray:
        with np.errstate(over="ignore", invalid="ignore"):  # kimun's f64: inf, 0 * inf = NaN
            threshold = self.low + cutoff * self.span
        return np.where(self.span <= 0, self.n, self.count_at_least(threshold))

    def largest_drop(self, window: tuple[int, int]) -> IntArray:
        start = max(window[0], 1)
        stop = np.minimum(np.minimum(window[1], self.m - 1), self.positive)
        inside = (self.note_k >= start) & (self.note_k <= stop[self.note_query])
        drops = np.where(inside, self.note_drop, -np.inf)
        heads = self.note_starts[:-1]
        largest = np.maximum.reduceat(drops, heads)
        found = largest > 0
        ties = np.where(inside & (drops == largest[self.note_query]), self.note_k, 1 << 62)
        keep = np.where(found, np.minimum.reduceat(ties, heads), 0)
        boundary = self.note_score[heads + keep]
        return np.where(found, self.count_at_least(boundary), self.n)

    def measures(self, kept: IntArray) -> dict[str, np.ndarray[Any, Any]]:
        """Per-query counts and DCG of the kept prefixes (``kept[q]`` chunks)."""
        notes = self.notes_before[self.begin + kept] - self.notes_before[self.begin]
        inside = self.rel_pos < kept[self.rel_query]
        queries = len(kept)
        return {
            "chunks": kept,
            "notes": notes,
            "relevant": np.bincount(self.rel_query[inside], minlength=queries).astype(np.int64),
            "dcg": np.bincount(self.rel_query[inside], self.rel_term[inside], minlength=queries),
        }
