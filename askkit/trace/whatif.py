"""What would have kept a lost section: the smallest change of each setting, and its cost.

For each relevant section the context cut drops, :func:`what_if` finds, on
that query's pool and with :func:`askkit.ranking.cut_len` itself:

* ``top_k``: the fixed cut's smallest ``top_k`` that keeps it (its rank);
* ``score_range_cutoff``: the largest cutoff (3 decimals) that keeps it, if any;
* ``drop_window``: the nearest largest-drop window (``min`` or ``max``
  moved) that keeps it, if any;
* ``strategy``: another strategy, with the current knobs, that keeps it.

Each suggestion is checked by re-running the cut (``keeps``), and costed
across the whole query set with :func:`askkit.ranking.sweep_cuts`' measures
(``mean_chunks``, ``mean_notes``) and the relevant sections it gains and
loses in the other queries. From a trace (:func:`askkit.trace.trace`), a
section lost at the pool gets the pool size that would reach it, and one the
reranker pushed out gets the vector order (which keeps it, by definition of
that stage).

Examples
--------
>>> pools = pd.DataFrame({"query_id": ["q1"] * 5, "path": list("abcde"),
...                       "score": [0.9, 0.85, 0.5, 0.4, 0.1], "title": list("ABCDE")})
>>> qrels = pd.DataFrame({"query_id": ["q1"], "path": ["d"], "heading": ["D"], "grade": [1]})
>>> what_if(pools, qrels)[["section", "change", "suggested", "keeps", "mean_chunks"]]
  section              change                  suggested  keeps  mean_chunks
0     d#D               top_k              fixed top_k=4   True          4.0
1     d#D  score_range_cutoff        cutoff 0.4 -> 0.375   True          4.0
2     d#D         drop_window  largest-drop window=3..30   True          5.0
3     d#D            strategy                      fixed   True          5.0
4     d#D            strategy               largest-drop   True          5.0
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from askkit.metrics.qrels import PathOrFrame
from askkit.ranking import (
    STRATEGIES,
    CutSettings,
    Scored,
    cut_len,
    pool_of,
    score_range,
    sweep_cuts,
)
from askkit.trace.columnar import SectionPools, relevant_sections

__all__ = ["WHAT_IF_COLUMNS", "smallest_changes", "what_if"]

#: The what-if frame's columns.
WHAT_IF_COLUMNS = [
    "query_id",
    "section",
    "stopped",
    "rank",
    "change",
    "current",
    "suggested",
    "settings",
    "keeps",
    "mean_chunks",
    "mean_notes",
    "gained_elsewhere",
    "lost_elsewhere",
]

_STEP = 1000  # the cutoff's resolution: 3 decimals
_UNRANKED = "not ranked at all: the index scores none of its chunks for the question"


def _keeps(pool: Sequence[Scored], position: int, settings: CutSettings) -> bool:
    return position < cut_len(pool, settings)


def _cutoff(pool: Sequence[Scored], position: int, settings: CutSettings) -> CutSettings | None:
    """The largest cutoff (3 decimals) whose score-range cut keeps ``position``."""
    ranged = score_range(pool, settings.score_range_cutoff)
    if not ranged.scaled:
        return None
    exact = ranged.normalised(pool[position].similarity_score)
    if not exact >= 0.0:
        return None
    value = min(math.floor(exact * _STEP) + 1, _STEP)  # one step above: f64 may round down
    while value >= 0:
        candidate = settings.replace(strategy="score-range", score_range_cutoff=value / _STEP)
        if _keeps(pool, position, candidate):
            return candidate
        value -= 1
    return None


def _no_cutoff(pool: Sequence[Scored], position: int) -> str:
    """Why no score-range cutoff keeps the chunk at ``position`` (cutoff 0 keeps down to
    the range's low)."""
    ranged = score_range(pool, 0.0)
    score = pool[position].similarity_score
    if ranged.scaled and score < ranged.low:
        return (
            f"no cutoff keeps it: its score {score:.4g} is below the range's low "
            f"{ranged.low:.4g}, where cutoff 0 cuts"
        )
    return "no cutoff keeps it"


def _window(pool: Sequence[Scored], position: int, settings: CutSettings) -> CutSettings | None:
    """The nearest largest-drop window keeping ``position``: ``min`` or ``max`` moved least."""
    low, high = settings.window
    notes = len({c.path for c in pool})
    tried = [(abs(new_low - low), new_low, high) for new_low in range(1, max(high, 1) + 1)]
    tried += [(abs(new_high - high), low, new_high) for new_high in range(low, max(notes, low) + 1)]
    for _, new_low, new_high in sorted(tried):
        candidate = settings.replace(
            strategy="largest-drop", drop_window_min=new_low, drop_window_max=new_high
        )
        if _keeps(pool, position, candidate):
            return candidate
    return None


def smallest_changes(
    pool: Sequence[Scored], position: int, settings: CutSettings | None = None
) -> list[tuple[str, str, str, CutSettings | None]]:
    """The smallest change of each setting that keeps the chunk at 0-based ``position``.

    Returns ``(change, current, suggested, settings or None)`` rows: ``top_k``,
    ``score_range_cutoff``, ``drop_window``, then one per other strategy.

    >>> [row[:3] for row in smallest_changes(pool_of([0.9, 0.5, 0.1]), 1,
    ...                                      CutSettings(strategy="fixed", top_k=1))][:1]
    [('top_k', 'fixed top_k=1', 'fixed top_k=2')]
    """
    settings = CutSettings() if settings is None else settings
    rows: list[tuple[str, str, str, CutSettings | None]] = []
    fixed = settings.replace(strategy="fixed", top_k=position + 1)
    rows.append(("top_k", f"fixed top_k={settings.top_k}", fixed.label, fixed))
    cutoff = _cutoff(pool, position, settings)
    now = f"cutoff {settings.score_range_cutoff:g}"
    rows.append(
        (
            "score_range_cutoff",
            now,
            f"{now} -> {cutoff.score_range_cutoff:g}" if cutoff else _no_cutoff(pool, position),
            cutoff,
        )
    )
    window = _window(pool, position, settings)
    low, high = settings.window
    none = (
        f"no largest-drop window keeps it: each one's largest drop falls above rank {position + 1}"
    )
    rows.append(("drop_window", f"window={low}..{high}", window.label if window else none, window))
    for strategy in STRATEGIES:
        if strategy == settings.strategy:
            continue
        other = settings.replace(strategy=strategy)
        if _keeps(pool, position, other):
            rows.append(("strategy", settings.strategy, strategy, other))
    return rows


def _pool_of(pools: pd.DataFrame, query_id: str) -> list[Any]:
    rows = pools[pools["query_id"].astype(str) == query_id]
    if "rank" in rows.columns:
        rows = rows.sort_values("rank", kind="stable")
    else:
        rows = rows.sort_values("score", ascending=False, kind="stable")
    return pool_of(rows["score"].tolist(), rows["path"].astype(str).tolist())


def _costs(
    pools: pd.DataFrame, qrels: PathOrFrame, suggestions: list[CutSettings], base: CutSettings
) -> dict[str, tuple[float, float]]:
    """``label -> (mean_chunks, mean_notes)`` of each suggested setting over the query set."""
    out: dict[str, tuple[float, float]] = {}
    for strategy in STRATEGIES:
        mine = [s for s in suggestions if s.strategy == strategy]
        if not mine:
            continue
        values: list[Any] = []
        for s in mine:
            if strategy == "fixed":
                values.append(s.top_k)
            elif strategy == "score-range":
                values.append(s.score_range_cutoff)
            else:
                values.append(s.window)
        table = sweep_cuts(pools, qrels, [strategy], {strategy: values}, base=base)
        for label, chunks, notes in zip(
            table["setting"], table["mean_chunks"], table["mean_notes"], strict=True
        ):
            out[str(label)] = (float(chunks), float(notes))
    return out


def _trace_rows(trace: pd.DataFrame) -> list[dict[str, Any]]:
    """Pool and reranker losses of a trace: the pool size, the vector order."""
    rows: list[dict[str, Any]] = []
    stops = trace[trace["stopped"] & ~trace["passed"]]
    for stage, change, fix in (
        ("pool", "pool_size", "a pool of {rank} chunks"),
        ("rerank", "reranker", "the vector order (no reranker) keeps it"),
    ):
        lost = stops[stops["stage"] == stage]
        for query_id, section, rank in zip(
            lost["query_id"], lost["section"], lost["rank"], strict=True
        ):
            reaches = stage == "rerank" or not pd.isna(rank)
            rows.append(
                {
                    "query_id": query_id,
                    "section": section,
                    "stopped": stage,
                    "rank": rank,
                    "change": change,
                    "current": "80 chunks" if stage == "pool" else "reranked",
                    "suggested": fix.format(rank=rank) if reaches else _UNRANKED,
                    "settings": None,
                    "keeps": reaches,
                }
            )
    return rows


def what_if(
    pools: pd.DataFrame,
    qrels: PathOrFrame,
    settings: CutSettings | None = None,
    *,
    trace: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """For each relevant section lost at the cut, what would have kept it, and the cost.

    Parameters
    ----------
    pools:
        The long pool frame (``query_id``, ``path``, ``score``, ``title``,
        optionally ``rank``), scores as kimun cuts them.
    qrels:
        Judgments (:func:`askkit.metrics.read_qrels`).
    settings:
        The server's current settings (default kimun's).
    trace:
        A trace of the same queries (:func:`askkit.trace.trace_queries`): adds
        the sections lost at the pool and to the reranker.

    Returns
    -------
    pandas.DataFrame
        :data:`WHAT_IF_COLUMNS`, one row per lost section and change:
        ``suggested`` in words, ``settings`` the :class:`CutSettings` (or
        ``None``), ``keeps`` (the cut re-run with it keeps the section),
        ``mean_chunks`` and ``mean_notes`` (the context over the query set
        under it), ``gained_elsewhere`` and ``lost_elsewhere`` (relevant
        sections of the other queries it adds to or drops from the context).
    """
    settings = CutSettings() if settings is None else settings
    sections = relevant_sections(qrels)
    where = SectionPools(pools, sections)
    traced = where.frame(settings)
    base_kept = where.kept(settings)
    lost = traced.index[traced["stopped"] == "cut"]
    rows: list[dict[str, Any]] = []
    suggested: list[CutSettings] = []
    ranks = traced["rank"].to_numpy(dtype=np.int64, na_value=0)
    for i in lost.tolist():
        query_id = str(traced.at[i, "query_id"])
        pool = _pool_of(pools, query_id)
        position = int(ranks[i]) - 1
        for change, current, words, setting in smallest_changes(pool, position, settings):
            if setting is not None:
                suggested.append(setting)
            rows.append(
                {
                    "query_id": query_id,
                    "section": traced.at[i, "section"],
                    "stopped": "cut",
                    "rank": position + 1,
                    "change": change,
                    "current": current,
                    "suggested": words,
                    "settings": setting,
                    "keeps": setting is not None and _keeps(pool, position, setting),
                }
            )
    costs = _costs(pools, qrels, suggested, settings)
    query = traced["query_id"].astype(str).to_numpy()
    for row in rows:
        setting = row["settings"]
        if setting is None:
            row.update(mean_chunks=np.nan, mean_notes=np.nan)
            row.update(gained_elsewhere=pd.NA, lost_elsewhere=pd.NA)
            continue
        row["mean_chunks"], row["mean_notes"] = costs[setting.label]
        kept = where.kept(setting)
        other = query != row["query_id"]
        row["gained_elsewhere"] = int((kept & ~base_kept & other).sum())
        row["lost_elsewhere"] = int((~kept & base_kept & other).sum())
    if trace is not None:
        rows.extend(_trace_rows(trace))
    frame = pd.DataFrame(rows, columns=WHAT_IF_COLUMNS)
    frame["rank"] = frame["rank"].astype(pd.Int64Dtype())
    for column in ("gained_elsewhere", "lost_elsewhere"):
        frame[column] = frame[column].astype(pd.Int64Dtype())
    for column in ("mean_chunks", "mean_notes"):
        frame[column] = frame[column].astype(np.float64)
    frame["keeps"] = frame["keeps"].astype(bool)
    return frame
