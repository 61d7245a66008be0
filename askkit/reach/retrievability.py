"""Retrievability: how often a retriever brings each note up, over many questions.

Azzopardi and Vinay (2008) define a document's retrievability over a query set
``Q`` as ``r(d) = sum over q in Q of o(q) * f(rank of d for q, c)``: with the
**cumulative** function ``f = 1`` when ``d`` ranks within the cutoff ``c``
(else 0), ``r(d)`` counts the queries that reach ``d``; with the **gravity**
function ``f = rank ** -beta`` (within ``c``) a document ranked high counts
more. Every query weighs ``o(q) = 1`` here. The cutoff is either a fixed
``k`` or kimun's context cut (a pool frame's ``kept`` column, as
:func:`askkit.ranking.with_pool` writes ``kept_fixed`` and the others).

How evenly a retriever spreads its attention over the vault is read from the
**Lorenz curve** of ``r`` (documents sorted by ``r``, the cumulative share of
``r`` against the share of documents) and its **Gini coefficient**: 0 when
every document is as retrievable as every other, near 1 when a few take all.
A document with ``r = 0`` is **unreachable** by that query set.

A document is a note (``level="note"``, its path) or a section
(``level="section"``, ``path#heading``, :func:`askkit.metrics.ids.doc_ids`);
a note whose sections a query's pool holds twice counts once for that query,
at its best rank. ``documents`` names every document of the vault, so the
ones no query reaches count as 0: without it only documents some pool holds
are known and no document is unreachable.

Examples
--------
>>> import pandas as pd
>>> pools = pd.DataFrame({"query_id": ["q1", "q1", "q2", "q2"],
...                       "rank": [1, 2, 1, 2],
...                       "path": ["a.md", "b.md", "a.md", "c.md"]})
>>> r = retrievability(pools, ["a.md", "b.md", "c.md", "d.md"], k=1)
>>> r.scores.to_dict()
{'a.md': 2.0, 'b.md': 0.0, 'c.md': 0.0, 'd.md': 0.0}
>>> r.unreachable
('b.md', 'c.md', 'd.md')
>>> round(r.gini, 3)
0.75
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from askkit.errors import SchemaError
from askkit.frame.schema import STRING
from askkit.metrics.ids import Level, doc_ids

__all__ = ["Retrievability", "compare_retrievability", "gini", "lorenz", "retrievability"]


@dataclass(frozen=True, slots=True, eq=False)
class Retrievability:
    """What :func:`retrievability` returns: ``r(d)`` of every document, and how it spreads."""

    scores: pd.Series
    """``r(d)`` per document (the index), every document given, in their order."""
    queries: int
    """The queries counted: those with a row in the pool frame (a query that matched
    nothing has none, and reaches no document)."""
    cutoff: str
    """The cutoff: ``"k=10"``, or the name of the pool frame's column that says what
    kimun's cut kept (``"kept_fixed"``)."""
    beta: float | None
    """The gravity function's exponent; ``None``: cumulative."""
    level: Level
    unknown: tuple[str, ...]
    """Documents some pool holds that ``documents`` did not name (counted all the same:
    a stale index, or a vault walked with other rules)."""

    @property
    def gini(self) -> float:
        """The Gini coefficient of ``r`` over the documents (:func:`gini`)."""
        return gini(self.scores.to_numpy())

    @property
    def unreachable(self) -> tuple[str, ...]:
        """The documents no query reaches (``r = 0``), in the documents' order."""
        return tuple(self.scores.index[self.scores.to_numpy() == 0])

    def lorenz(self) -> pd.DataFrame:
        """The Lorenz curve of ``r`` (:func:`lorenz`)."""
        return lorenz(self.scores.to_numpy())

    def summary(self) -> dict[str, object]:
        """One line of figures: queries, documents, unreachable ones, mean ``r``, Gini."""
        values = self.scores.to_numpy()
        return {
            "queries": self.queries,
            "documents": len(values),
            "unreachable": int((values == 0).sum()),
            "mean_r": float(values.mean()) if len(values) else float("nan"),
            "gini": self.gini,
            "cutoff": self.cutoff,
            "function": "cumulative" if self.beta is None else f"gravity (beta={self.beta:g})",
        }


def retrievability(
    pools: pd.DataFrame,
    documents: Iterable[str] | None = None,
    *,
    k: int | None = None,
    kept: str | None = None,
    beta: float | None = None,
    level: Level = "note",
) -> Retrievability:
    """``r(d)`` of every document over the queries of a long pool frame.

    ``pools`` is a long pool frame (:data:`askkit.ranking.POOL_COLUMNS`:
    ``query_id``, ``rank``, ``path`` and, at section level, ``title``; or a
    ``doc`` column), one row per retrieved chunk. Give the cutoff as ``k``
    (rank at most ``k``) or ``kept``, a boolean column saying what kimun's cut
    kept (:func:`askkit.ranking.with_pool`'s ``kept_fixed``, ...); both: kept
    and within ``k``. ``beta``: the gravity function's exponent (``None``:
    cumulative). ``documents``: every document of the vault, so unreached ones
    count 0 (see the module).
    """
    if k is None and kept is None:
        raise ValueError("give the cutoff: k (a rank), or kept (the column of what the cut kept)")
    if k is not None and k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if beta is not None and not (np.isfinite(beta) and beta >= 0):
        raise ValueError(f"beta must be a finite number >= 0, got {beta}")
    for column in ("query_id", "rank"):
        if column not in pools.columns:
            raise SchemaError(
                f"the pool frame has no {column!r} column; build it with "
                "askkit.ranking.query_pools",
                field=column,
            )
    if kept is not None and kept not in pools.columns:
        raise SchemaError(
            f"the pool frame has no {kept!r} column; add it with askkit.ranking.with_pool",
            field=kept,
        )
    rank = pools["rank"].to_numpy()
    if len(rank) and (not np.issubdtype(rank.dtype, np.integer) or rank.min() < 1):
        bad = pools["rank"][~(pd.to_numeric(pools["rank"], errors="coerce") >= 1)]
        raise SchemaError(
            "a pool rank must be a whole number >= 1",
            field="rank",
            value=str(bad.iloc[0]) if len(bad) else str(pools["rank"].dtype),
        )
    docs = doc_ids(pools, level).astype(STRING)
    queries = pools["query_id"].astype(STRING)
    n_queries = int(queries.nunique())
    within = np.ones(len(pools), dtype=bool)
    if k is not None:
        within &= rank <= k
    if kept is not None:
        within &= pools[kept].fillna(False).to_numpy(dtype=bool)
    frame = pd.DataFrame({"q": queries[within], "d": docs[within], "rank": rank[within]})
    best = frame.groupby(["q", "d"], sort=False, observed=True)["rank"].min()  # once a query
    weight = np.ones(len(best)) if beta is None else best.to_numpy(dtype=np.float64) ** -float(beta)
    per_doc = pd.Series(weight, index=best.index.get_level_values("d")).groupby(level=0).sum()
    seen: pd.Index = pd.Index(pd.unique(docs.to_numpy()), dtype=STRING)
    order: pd.Index = seen
    unknown: tuple[str, ...] = ()
    if documents is not None:
        named: pd.Index = pd.Index(list(dict.fromkeys(str(d) for d in documents)), dtype=STRING)
        extra = seen[~seen.isin(named)]
        unknown = tuple(map(str, extra))
        order = named.append(extra)
    scores = per_doc.reindex(order, fill_value=0.0).astype(np.float64)
    scores.index.name = "doc"
    scores.name = "r"
    parts = ([f"k={k}"] if k is not None else []) + ([kept] if kept is not None else [])
    return Retrievability(
        scores=scores,
        queries=n_queries,
        cutoff=" and ".join(parts),
        beta=beta,
        level=level,
        unknown=unknown,
    )


def gini(values: np.ndarray) -> float:
    """The Gini coefficient of non-negative values: ``sum_i (2i - n - 1) x_(i) / (n sum x)``
    over the values sorted ascending (``i`` from 1), the mean absolute difference
    over twice the mean. NaN when there are none or they sum to 0 (nothing is
    retrieved: no spread to measure).

    >>> gini(np.array([1.0, 1.0, 1.0])), gini(np.array([0.0, 0.0, 3.0]))
    (0.0, 0.6666666666666666)
    """
    x = np.sort(np.asarray(values, dtype=np.float64))
    n, total = len(x), float(x.sum())
    if n == 0 or total == 0:
        return float("nan")
    if x[0] < 0:
        raise ValueError(f"retrievability values are >= 0, got {x[0]}")
    i = np.arange(1, n + 1, dtype=np.float64)
    return float(((2 * i - n - 1) * x).sum() / (n * total))


def lorenz(values: np.ndarray) -> pd.DataFrame:
    """The Lorenz curve of non-negative values: ``share_of_documents`` (0 to 1) and
    ``share_of_r`` (the least retrievable documents' share of all ``r``), from
    (0, 0) to (1, 1). With every value 0, the diagonal (no spread to draw).

    >>> lorenz(np.array([3.0, 1.0])).values.tolist()
    [[0.0, 0.0], [0.5, 0.25], [1.0, 1.0]]
    """
    x = np.sort(np.asarray(values, dtype=np.float64))
    n = len(x)
    share_docs = np.arange(n + 1, dtype=np.float64) / max(n, 1)
    total = float(x.sum())
    if total > 0:
        share_r = np.r_[0.0, np.cumsum(x) / total]
        share_r[-1] = 1.0  # the whole, exactly
    else:
        share_r = share_docs.copy()
    return pd.DataFrame({"share_of_documents": share_docs, "share_of_r": share_r})


def compare_retrievability(
    before: Retrievability, after: Retrievability, names: tuple[str, str] = ("before", "after")
) -> pd.DataFrame:
    """Two retrievabilities of the same documents side by side: ``r`` of each, the
    change, and ``status``: ``"gained"`` (unreachable before, reached after),
    ``"lost"`` (the reverse), ``"reached"`` (by both), ``"unreachable"`` (by
    neither). Documents only one side knows count 0 on the other.

    >>> pools = pd.DataFrame({"query_id": ["q"] * 2, "rank": [1, 2], "path": ["a.md", "b.md"]})
    >>> table = compare_retrievability(retrievability(pools, k=1), retrievability(pools, k=2))
    >>> table.reset_index().values.tolist()
    [['a.md', 1.0, 1.0, 0.0, 'reached'], ['b.md', 0.0, 1.0, 1.0, 'gained']]
    """
    if before.level != after.level:
        raise ValueError(f"compare documents of one level: {before.level} against {after.level}")
    order = before.scores.index.append(
        after.scores.index[~after.scores.index.isin(before.scores.index)]
    )
    a = before.scores.reindex(order, fill_value=0.0)
    b = after.scores.reindex(order, fill_value=0.0)
    was, now = a.to_numpy() > 0, b.to_numpy() > 0
    status = np.select(
        [was & now, ~was & now, was & ~now], ["reached", "gained", "lost"], "unreachable"
    )
    out = pd.DataFrame(
        {
            names[0]: a.to_numpy(),
            names[1]: b.to_numpy(),
            "change": b.to_numpy() - a.to_numpy(),
            "status": status,
        },
        index=order,
    )
    out.index.name = "doc"
    return out
