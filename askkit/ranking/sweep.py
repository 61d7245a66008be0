"""Sweep kimun's context cuts over many queries, and recommend a setting.

:func:`sweep_cuts` replays every (strategy, setting) of a grid on the ranked
pools of many queries and scores each kept context against judgments:

* ``mean_chunks``, ``mean_notes``: the answer context's size (kept prefix),
  in chunks and in distinct notes; ``mean_search_rows``: the rows kimun's
  search lists (``top_k`` notes under ``fixed``, the kept notes otherwise);
* ``recall``: relevant notes kept / relevant notes in the pool (so the
  whole pool scores 1.0: a cut can only lose what retrieval found);
* ``precision``: relevant notes kept / notes kept;
* ``ndcg``: the kept notes in order (one per note, its first chunk), the
  ideal built from the relevant notes in the pool;
* ``queries_without_relevant``: queries whose pool holds a relevant note but
  whose context keeps none.

Relevance, gain, discount and each ratio are :mod:`askkit.metrics.measures`'
definitions, the ones :func:`askkit.metrics.evaluate` scores with (relevant =
grade >= 1; linear gain, the grade with negatives as 0; ``log2(rank + 1)``
discount). A note's grade is its highest over the qrels rows of that query
and path. Sizes average over every query with a pool; the
quality measures over the ``judged_queries``, those whose pool holds a
relevant note (no cut can help the others). Note paths are matched exactly,
as :mod:`askkit.metrics` matches them: give pools the paths your qrels use.

The computation is columnar (:mod:`askkit.ranking._columnar`): no Python
loop per query. :func:`sweep_cuts_reference` is the plain-Python definition,
one query at a time over :mod:`askkit.ranking.cut`, and the property tests
hold the two equal.

Examples
--------
>>> pools = pd.DataFrame({"query_id": ["q1"] * 5,
...                       "path": ["a.md", "a.md", "a.md", "b.md", "c.md"],
...                       "score": [0.99, 0.98, 0.97, 0.80, 0.70]})
>>> qrels = pd.DataFrame({"query_id": ["q1", "q1"], "path": ["a.md", "b.md"], "grade": [2, 1]})
>>> table = sweep_cuts(pools, qrels, grid={"fixed": [1, 4], "score-range": [0.4],
...                                        "largest-drop": [(3, 30)]})
>>> table[["setting", "mean_chunks", "recall"]]
                     setting  mean_chunks  recall
0              fixed top_k=1          1.0     0.5
1              fixed top_k=4          4.0     1.0
2     score-range cutoff=0.4          3.0     0.5
3  largest-drop window=3..30          5.0     1.0
>>> recommend(table).label
'fixed top_k=4'
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from askkit.errors import SchemaError
from askkit.metrics.measures import discounted, gain, ideal_dcg, ndcg, precision, recall, relevant
from askkit.metrics.qrels import PathOrFrame, read_qrels
from askkit.ranking._columnar import Kernels, order_rows, prepare
from askkit.ranking.cut import cut_len
from askkit.ranking.pool import pool_of
from askkit.ranking.settings import STRATEGIES, CutSettings, Strategy
from askkit.ranking.surfaces import dedupe_by_note, search_rows

__all__ = [
    "DEFAULT_GRID",
    "SWEEP_COLUMNS",
    "SWEEP_MEASURES",
    "Objective",
    "PoolCuts",
    "recommend",
    "settings_grid",
    "sweep_cuts",
    "sweep_cuts_reference",
]

#: The values each strategy is swept over by default: ``top_k``, the cutoff,
#: and ``(min, max)`` drop windows.
DEFAULT_GRID: dict[Strategy, tuple[Any, ...]] = {
    "fixed": (1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40),
    "score-range": tuple(round(i * 0.05, 2) for i in range(21)),
    "largest-drop": (
        *((low, 30) for low in (1, 2, 3, 4, 5, 6, 8, 10)),
        *((3, high) for high in (5, 10, 15, 20, 40, 80)),
    ),
}
#: What the sweep measures of each setting (see the module docstring), in order.
SWEEP_MEASURES = [
    "mean_chunks",
    "mean_notes",
    "mean_search_rows",
    "recall",
    "precision",
    "ndcg",
    "queries_without_relevant",
]
#: The sweep table's columns, in order: the setting, its measures, the query counts.
SWEEP_COLUMNS = [
    "strategy",
    "setting",
    "top_k",
    "score_range_cutoff",
    "drop_window_min",
    "drop_window_max",
    *SWEEP_MEASURES,
    "queries",
    "judged_queries",
]
Objective = Literal["smallest-context", "ndcg", "precision"]
_PER_QUERY = ("chunks", "notes", "search", "relevant", "dcg")


def settings_grid(
    strategies: Sequence[Strategy] = STRATEGIES,
    grid: Mapping[str, Sequence[Any]] | None = None,
    base: CutSettings | None = None,
) -> list[CutSettings]:
    """The settings a sweep tries: ``base`` with each grid value of each strategy.

    ``grid`` maps a strategy to its values (``top_k`` for ``"fixed"``, the
    cutoff for ``"score-range"``, ``(min, max)`` windows, or a bare ``min``,
    for ``"largest-drop"``); a strategy it leaves out takes
    :data:`DEFAULT_GRID`'s. Values are sanitised as kimun does.

    >>> [s.label for s in settings_grid(["largest-drop"], {"largest-drop": [(0, 2), 5]})]
    ['largest-drop window=1..2', 'largest-drop window=5..30']
    """
    base = CutSettings() if base is None else base
    grid = {} if grid is None else grid
    unknown = sorted(set(grid) - set(STRATEGIES)) + sorted(set(strategies) - set(STRATEGIES))
    if unknown:
        raise ValueError(f"unknown strategy {unknown[0]!r}; kimun's are {', '.join(STRATEGIES)}")
    out: list[CutSettings] = []
    for strategy in strategies:
        for value in grid.get(strategy, DEFAULT_GRID[strategy]):
            if strategy == "fixed":
                out.append(base.replace(strategy="fixed", top_k=value))
            elif strategy == "score-range":
                out.append(base.replace(strategy="score-range", score_range_cutoff=value))
            else:
                low, high = value if isinstance(value, tuple | list) else (value, None)
                out.append(
                    base.replace(strategy="largest-drop", drop_window_min=low, drop_window_max=high)
                )
    return out


def _check_pools(pools: pd.DataFrame) -> None:
    missing = [c for c in ("query_id", "path", "score") if c not in pools.columns]
    if missing:
        raise SchemaError(
            "pools need columns query_id, path, score (and optionally rank): one row per "
            "chunk of each query's ranked pool",
            field="columns",
            value=missing,
        )
    for column in ("query_id", "path"):
        blank = pools[column].isna().to_numpy()
        if blank.any():
            at = int(np.argmax(blank))
            raise SchemaError("must not be missing", field=f"{column}[{at}]", has_value=False)
    for column in ("score", "rank"):
        if column not in pools.columns:
            continue
        values = pd.to_numeric(pools[column], errors="coerce").to_numpy(dtype=np.float64)
        bad = ~np.isfinite(values)
        if bad.any():
            i = int(np.argmax(bad))
            hint = " (sanitise reranker scores with askkit.ranking.rerank first)"
            raise SchemaError(
                f"must be a finite number{hint if column == 'score' else ''}",
                field=f"{column}[{i}]",
                value=pools[column].iloc[i],
            )


def _aggregate(
    settings: Sequence[CutSettings],
    per_query: Mapping[str, np.ndarray[Any, Any]],
    relevant_in_pool: np.ndarray[Any, Any],
    ideal: np.ndarray[Any, Any],
) -> pd.DataFrame:
    """The sweep table from per-query arrays of shape (settings, queries)."""
    queries = len(relevant_in_pool)
    judged = relevant_in_pool > 0
    n_judged = int(judged.sum())

    def mean(values: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        if values.shape[1] == 0:
            return np.full(len(settings), math.nan)
        return np.asarray(values.mean(axis=1), dtype=np.float64)

    found = per_query["relevant"][:, judged]
    notes = per_query["notes"][:, judged]
    return pd.DataFrame(
        {
            "strategy": [s.strategy for s in settings],
            "setting": [s.label for s in settings],
            "top_k": [s.top_k for s in settings],
            "score_range_cutoff": [s.score_range_cutoff for s in settings],
            "drop_window_min": [s.drop_window_min for s in settings],
            "drop_window_max": [s.drop_window_max for s in settings],
            "mean_chunks": mean(per_query["chunks"]),
            "mean_notes": mean(per_query["notes"]),
            "mean_search_rows": mean(per_query["search"]),
            "recall": mean(recall(found, relevant_in_pool[judged])),
            "precision": mean(precision(found, notes)),
            "ndcg": mean(ndcg(per_query["dcg"][:, judged], ideal[judged])),
            "queries_without_relevant": (found == 0).sum(axis=1).astype(np.int64),
            "queries": np.full(len(settings), queries, dtype=np.int64),
            "judged_queries": np.full(len(settings), n_judged, dtype=np.int64),
        },
        columns=SWEEP_COLUMNS,
    )


class PoolCuts:
    """Many ranked pools' cut lengths under any setting, columnar (the sweep's kernels).

    ``pools`` is the long pool frame (``query_id``, ``path``, ``score``,
    optionally ``rank``), each query's pool best first. The lengths equal
    :func:`~askkit.ranking.cut.cut_len` on each pool exactly.

    >>> pools = pd.DataFrame({"query_id": ["q1"] * 3 + ["q2"],
    ...                       "path": ["a.md", "b.md", "c.md", "a.md"],
    ...                       "score": [0.9, 0.4, 0.3, 0.5]})
    >>> cuts = PoolCuts(pools)
    >>> cuts.query_ids.tolist(), cuts.cut_len(CutSettings()).tolist()
    (['q1', 'q2'], [1, 1])
    >>> cuts.begin.tolist(), cuts.order is None
    ([0, 3], True)
    """

    def __init__(self, pools: pd.DataFrame) -> None:
        _check_pools(pools)
        empty = pd.DataFrame(
            {
                "query_id": pd.Series([], dtype=object),
                "path": pd.Series([], dtype=object),
                "grade": pd.Series([], dtype=np.int64),
            }
        )
        prepared = prepare(pools, empty)
        self._kernels = Kernels(prepared)
        #: The queries in first-appearance order.
        self.query_ids = prepared.query_ids
        #: Each query's first row in pool order.
        self.begin = self._kernels.begin
        codes, _ = pd.factorize(pools["query_id"].astype(str), sort=False)
        rank = pools["rank"].to_numpy(dtype=np.float64) if "rank" in pools.columns else None
        #: The rows in pool order (``None``: already so), as ``prepare`` ordered them.
        self.order = order_rows(
            codes.astype(np.int64), pools["score"].to_numpy(dtype=np.float64), rank
        )

    def cut_len(self, settings: CutSettings) -> np.ndarray[Any, np.dtype[np.int64]]:
        """Each query's cut length (the answer's context size) under ``settings``."""
        if settings.strategy == "fixed":
            return self._kernels.fixed(settings.top_k)
        if settings.strategy == "score-range":
            return self._kernels.score_range(settings.score_range_cutoff)
        return self._kernels.largest_drop(settings.window)


def sweep_cuts(
    pools: pd.DataFrame,
    qrels: PathOrFrame,
    strategies: Sequence[Strategy] = STRATEGIES,
    grid: Mapping[str, Sequence[Any]] | None = None,
    *,
    base: CutSettings | None = None,
) -> pd.DataFrame:
    """Every strategy and setting of ``grid`` on every query's pool, scored against ``qrels``.

    Parameters
    ----------
    pools:
        The ranked pools, one row per chunk: ``query_id``, ``path`` (the
        note, as your qrels name it), ``score`` (finite; the score kimun
        cuts on: vector, or reranker after sanitising), and optionally
        ``rank`` (the pool order). Without ``rank`` each query's rows are
        sorted by score, best first (stable). Each pool must be best first.
    qrels:
        Judgments, as :func:`askkit.metrics.read_qrels` reads them (a frame
        or a file): ``query_id``, ``path``, ``grade``.
    strategies, grid, base:
        What to sweep: see :func:`settings_grid`.

    Returns
    -------
    pandas.DataFrame
        One row per setting, columns :data:`SWEEP_COLUMNS` (see the module
        docstring for each measure).
    """
    settings = settings_grid(strategies, grid, base)
    _check_pools(pools)
    judged = read_qrels(qrels)
    if pools.empty:
        empty = {name: np.zeros((len(settings), 0), dtype=np.int64) for name in _PER_QUERY}
        return _aggregate(settings, empty, np.zeros(0, dtype=np.int64), np.zeros(0))
    kernels = Kernels(prepare(pools, judged))
    shape = (len(settings), kernels.pools.queries)
    per_query: dict[str, np.ndarray[Any, Any]] = {
        name: np.zeros(shape, dtype=np.float64 if name == "dcg" else np.int64)
        for name in _PER_QUERY
    }
    for row, setting in enumerate(settings):
        if setting.strategy == "fixed":
            kept = kernels.fixed(setting.top_k)
        elif setting.strategy == "score-range":
            kept = kernels.score_range(setting.score_range_cutoff)
        else:
            kept = kernels.largest_drop(setting.window)
        measured = kernels.measures(kept)
        for name in ("chunks", "notes", "relevant", "dcg"):
            per_query[name][row] = measured[name]
        if setting.strategy == "fixed":
            per_query["search"][row] = np.minimum(setting.top_k, kernels.m)
        else:
            per_query["search"][row] = measured["notes"]
    return _aggregate(settings, per_query, kernels.rel_total, kernels.ideal)


def sweep_cuts_reference(
    pools: pd.DataFrame,
    qrels: PathOrFrame,
    strategies: Sequence[Strategy] = STRATEGIES,
    grid: Mapping[str, Sequence[Any]] | None = None,
    *,
    base: CutSettings | None = None,
) -> pd.DataFrame:
    """:func:`sweep_cuts`, one query at a time over the plain-Python cuts: the specification.

    Slow (a Python loop per query and setting); the benchmark's baseline and
    the property tests' reference.
    """
    settings = settings_grid(strategies, grid, base)
    _check_pools(pools)
    grades: dict[tuple[str, str], int] = {}
    judged = read_qrels(qrels)
    for q, p, g in zip(
        judged["query_id"].astype(str), judged["path"].astype(str), judged["grade"], strict=True
    ):
        grades[(q, p)] = max(grades.get((q, p), g), g)
    has_rank = "rank" in pools.columns
    rows: dict[str, list[tuple[float, float, str]]] = {}
    ranks = pools["rank"].tolist() if has_rank else [0.0] * len(pools)
    columns = (pools["query_id"].astype(str), pools["path"].astype(str), pools["score"], ranks)
    for q, p, s, r in zip(*columns, strict=True):
        rows.setdefault(q, []).append((float(r) if has_rank else -float(s), float(s), p))
    per_query: dict[str, list[list[float]]] = {name: [] for name in _PER_QUERY}
    relevant_in_pool: list[int] = []
    ideal: list[float] = []
    for q, chunk_rows in rows.items():
        ordered = sorted(chunk_rows, key=lambda row: row[0])
        scores = [row[1] for row in ordered]
        if any(b > a for a, b in itertools.pairwise(scores)):
            raise SchemaError(f"query {q!r}: the pool is not best first", has_value=False)
        pool = pool_of(scores, [row[2] for row in ordered])
        notes = [c.path for c in dedupe_by_note(pool)]
        note_grades = np.array([grades.get((q, p), 0) for p in notes], dtype=np.int64)
        is_relevant = relevant(note_grades)
        # the notes a cut keeps are the first of these: their sums are prefix sums
        note_relevant = is_relevant.tolist()
        terms = discounted(gain(note_grades), np.arange(1, len(notes) + 1)).tolist()
        relevant_in_pool.append(int(is_relevant.sum()))
        relevant_grades = note_grades[is_relevant]
        at_zero = np.zeros(len(relevant_grades), dtype=np.int64)  # one query: code 0
        ideal.append(float(ideal_dcg(at_zero, relevant_grades, 1)[0]))
        values: dict[str, list[float]] = {name: [] for name in _PER_QUERY}
        for setting in settings:
            kept = cut_len(pool, setting)
            kept_notes = len(dedupe_by_note(pool[:kept]))
            values["chunks"].append(kept)
            values["notes"].append(kept_notes)
            values["search"].append(len(search_rows(pool, setting)))
            values["relevant"].append(sum(note_relevant[:kept_notes]))
            values["dcg"].append(sum(terms[:kept_notes]))
        for name in _PER_QUERY:
            per_query[name].append(values[name])
    arrays = {
        name: np.array(per_query[name], dtype=np.float64 if name == "dcg" else np.int64)
        .reshape(len(rows), len(settings))
        .T
        for name in _PER_QUERY
    }
    return _aggregate(settings, arrays, np.array(relevant_in_pool, dtype=np.int64), np.array(ideal))


def recommend(
    sweep: pd.DataFrame,
    objective: Objective = "smallest-context",
    *,
    min_recall: float = 0.9,
) -> CutSettings:
    """The setting a sweep recommends; ``.to_toml()`` prints it for kimun's ``server.toml``.

    Only rows whose ``recall`` (of the pool's relevant notes) is at least
    ``min_recall`` are considered (0 considers all). Then:

    * ``"smallest-context"`` (default): the smallest ``mean_chunks``; ties
      go to the higher ``ndcg``;
    * ``"ndcg"``: the highest ``ndcg``; ties go to the smaller context;
    * ``"precision"``: the highest ``precision``; ties go to the smaller context.

    Raises
    ------
    SchemaError
        No row reaches ``min_recall`` (the message names the best recall).
    """
    keys: dict[str, tuple[list[str], list[bool]]] = {
        "smallest-context": (["mean_chunks", "ndcg"], [True, False]),
        "ndcg": (["ndcg", "mean_chunks"], [False, True]),
        "precision": (["precision", "mean_chunks"], [False, True]),
    }
    if objective not in keys:
        raise ValueError(f"objective must be one of {', '.join(keys)}, got {objective!r}")
    eligible = sweep[sweep["recall"].to_numpy(dtype=np.float64, na_value=np.nan) >= min_recall]
    if eligible.empty:
        best = sweep["recall"].max() if len(sweep) else math.nan
        raise SchemaError(
            f"no setting keeps recall >= {min_recall} (the best keeps {best:.3f}); "
            "lower min_recall or widen the grid",
            field="min_recall",
            value=min_recall,
        )
    columns, ascending = keys[objective]
    row = eligible.sort_values(columns, ascending=ascending, kind="stable").iloc[0]
    return CutSettings(
        strategy=row["strategy"],
        score_range_cutoff=float(row["score_range_cutoff"]),
        drop_window_min=int(row["drop_window_min"]),
        drop_window_max=int(row["drop_window_max"]),
        top_k=int(row["top_k"]),
    )
