"""Tune kimun's context cut: a sweep over many pools, its summary, the setting to use.

:func:`sweep_context_cut` sweeps kimun's three context cuts over many ranked
pools (:func:`~askkit.ranking.sweep.sweep_cuts`), picks the best setting per
strategy and the one to recommend (:func:`~askkit.ranking.sweep.recommend`),
and returns a :class:`CutSweep`: the analysis ``askkit cut`` prints and the
report's Context cut section shows.

Examples
--------
>>> pools = pd.DataFrame({"query_id": ["q1"] * 5,
...                       "path": ["a.md", "a.md", "a.md", "b.md", "c.md"],
...                       "score": [0.99, 0.98, 0.97, 0.80, 0.70]})
>>> qrels = pd.DataFrame({"query_id": ["q1", "q1"], "path": ["a.md", "b.md"], "grade": [2, 1]})
>>> cut = sweep_context_cut(pools, qrels, strategies=["fixed"], grid={"fixed": [1, 4]})
>>> cut.recommended.label, cut.best["setting"].tolist()
('fixed top_k=4', ['fixed top_k=4'])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import pandas as pd

from askkit import _html
from askkit.errors import SchemaError
from askkit.ranking.pools import pool_frame, pool_truncated
from askkit.ranking.settings import CANDIDATE_POOL, STRATEGIES, CutSettings
from askkit.ranking.sweep import SWEEP_MEASURES, recommend, sweep_cuts

__all__ = ["ALL_TRUNCATED", "OBJECTIVES", "SUMMARY_COLUMNS", "CutSweep", "sweep_context_cut"]

#: What :func:`sweep_context_cut` can optimise (:func:`~askkit.ranking.sweep.recommend`'s
#: objectives).
OBJECTIVES = ("smallest-context", "ndcg", "precision")
#: The sweep columns a summary shows: each setting and what it measures.
SUMMARY_COLUMNS = ["setting", *SWEEP_MEASURES]


#: Why a sweep of pools the server had all cut recommends nothing, and what it still tells.
ALL_TRUNCATED = (
    "Every pool holds only what a cut already kept (the server's, or the run's k), so the "
    "sweep tells how much "
    "of the judged-relevant notes a tighter cut than the server's would lose, and which "
    "setting keeps them in fewer chunks; it cannot tell what a looser cut would add, "
    "since the chunks the server cut are not in the log. So no [reranker] block is "
    "recommended. To tune the cut, log answers with the server set to keep the whole "
    f'pool (context_cut = "fixed", top_k = {CANDIDATE_POOL}) and sweep that log.'
)


@dataclass(frozen=True, slots=True)
class CutSweep:
    """A context-cut sweep and what it recommends: ``askkit cut`` and the report's section.

    Attributes
    ----------
    sweep:
        :func:`~askkit.ranking.sweep.sweep_cuts`' table, one row per setting.
    best:
        Per strategy, the setting ``objective`` picks among those keeping
        ``recall >= min_recall`` (else its best-recall setting);
        ``meets_min_recall`` says which.
    recommended:
        The setting over all strategies, or ``None`` when none reaches
        ``min_recall`` (``problem`` then says so).
    pools, truncated:
        The pools swept, and how many of them a server's cut had already
        shortened (:func:`~askkit.ranking.pools.pool_truncated`).
    """

    sweep: pd.DataFrame
    best: pd.DataFrame
    recommended: CutSettings | None
    objective: str
    min_recall: float
    pools: int
    truncated: int
    problem: str = ""

    @property
    def all_truncated(self) -> bool:
        """Whether the server's cut had shortened every pool: then no setting is recommended."""
        return 0 < self.pools == self.truncated

    @property
    def truncation_note(self) -> str:
        """What truncated pools mean for the sweep, or ``""`` when none was truncated."""
        if not self.truncated:
            return ""
        head = (
            f"The server's cut already truncated {self.truncated} of {self.pools} pools "
            f"(fewer than {CANDIDATE_POOL} chunks): the sweep can only cut further."
        )
        if not self.all_truncated:
            return head + " Those pools read as if the server's cut were the whole pool."
        return head + " " + ALL_TRUNCATED

    @property
    def summary(self) -> str:
        """One line: pools, judged queries, objective and minimum recall."""
        judged = int(self.sweep["judged_queries"].iloc[0]) if len(self.sweep) else 0
        return (
            f"{self.pools} pools, {judged} with a relevant note; objective {self.objective}, "
            f"recall >= {self.min_recall:g} of the relevant notes each pool holds"
        )

    @property
    def toml(self) -> str:
        """The ``[reranker]`` block to merge into ``server.toml``, or ``""`` when there is
        no recommendation (none reaches the recall, or every pool was truncated)."""
        return "" if self.recommended is None else self.recommended.to_toml()

    def html(self, figure: str = "") -> str:
        """The report's section body (``figure``: a ready ``<img>``), every value escaped."""
        parts = [f"<p>{_html.esc(self.summary)}.</p>"]
        if self.truncation_note:
            parts.append(_html.message(self.truncation_note, tone="warn"))
        if figure:
            parts.append(f'<div class="figs">{figure}</div>')
        parts.append("<h3>Best setting per strategy</h3>")
        parts.append(_html.data_table(self.best.set_index("strategy"), digits=3))
        parts.append("<h3>Recommended</h3>")
        if self.recommended is None:
            parts.append(
                _html.message(
                    "every pool was already truncated (see above): a setting picked on "
                    "them would not be a recommendation",
                    tone="warn",
                    lead="no [reranker] block",
                )
                if self.all_truncated
                else _html.message(self.problem, tone="warn")
            )
        else:
            parts.append(
                f"<p>{_html.esc(self.recommended.label)}: merge into the [reranker] table of "
                "kimun's server.toml</p><pre>" + _html.esc(self.recommended.to_toml()) + "</pre>"
            )
        parts.append(
            f"<details><summary>Every setting ({len(self.sweep)})</summary>"
            + _html.data_table(self.sweep[SUMMARY_COLUMNS], digits=3, index=False)
            + "</details>"
        )
        return "".join(parts)

    def _repr_html_(self) -> str:
        return _html.fragment(self.html())


def _best_per_strategy(sweep: pd.DataFrame, objective: Any, min_recall: float) -> pd.DataFrame:
    rows = []
    for strategy in sweep["strategy"].drop_duplicates():
        part = sweep[sweep["strategy"] == strategy]
        try:
            label = recommend(part, objective, min_recall=min_recall).label
            row = part[part["setting"] == label].head(1)
        except SchemaError:  # no setting of this strategy keeps enough recall
            row = part.sort_values(
                ["recall", "mean_chunks"], ascending=[False, True], kind="stable"
            ).head(1)
        rows.append(row)
    best: pd.DataFrame = pd.concat(rows, ignore_index=True)[["strategy", *SUMMARY_COLUMNS]]
    return best.assign(meets_min_recall=best["recall"].to_numpy(dtype=float) >= min_recall)


def sweep_context_cut(
    pools: pd.DataFrame,
    qrels: Any,
    *,
    objective: str = "smallest-context",
    min_recall: float = 0.9,
    strategies: Sequence[str] | None = None,
    grid: Any = None,
) -> CutSweep:
    """Sweep kimun's context cuts over many pools and pick a setting.

    Parameters
    ----------
    pools:
        A sources frame (``turn_id`` = the query id; each turn's sources read
        as its ranked pool, :func:`~askkit.ranking.pools.pool_frame`), or a pools
        frame as :meth:`askkit.retrieve.LocalIndex.pools` returns it.
    qrels:
        Judgments (a file or a frame, :func:`askkit.metrics.read_qrels`).
    objective, min_recall:
        How to pick (:func:`~askkit.ranking.sweep.recommend`): one of
        :data:`OBJECTIVES`, among settings keeping at least ``min_recall``
        (0..1) of the relevant notes each pool holds.
    strategies, grid:
        What to sweep (:func:`~askkit.ranking.sweep.settings_grid`; default all three).

    Raises
    ------
    SchemaError
        ``min_recall`` is not a number in 0..1, an unknown objective or
        strategy, a bad pool, or no pool holds a relevant note of the qrels
        (the query ids or paths do not match).
    """
    if objective not in OBJECTIVES:
        raise SchemaError(
            "unknown objective; one of " + ", ".join(OBJECTIVES), field="objective", value=objective
        )
    if (
        isinstance(min_recall, bool)
        or not isinstance(min_recall, int | float)
        or not 0.0 <= min_recall <= 1.0
    ):
        raise SchemaError("expected a number in 0..1", field="min_recall", value=min_recall)
    chosen = list(STRATEGIES if strategies is None else strategies)
    unknown = [s for s in chosen if s not in STRATEGIES]
    if unknown or not chosen:
        raise SchemaError(
            "unknown strategy; kimun's are " + ", ".join(STRATEGIES),
            field="strategies",
            value=unknown or chosen,
        )
    truncated = 0
    if "query_id" not in pools.columns and "turn_id" in pools.columns:
        truncated = int(pool_truncated(pools).sum())
        pools = pool_frame(pools)
    sweep = sweep_cuts(pools, qrels, cast("Any", chosen), grid)
    count = int(pools["query_id"].nunique()) if "query_id" in pools.columns else 0
    if not len(sweep) or int(sweep["judged_queries"].iloc[0]) == 0:
        ids = pools["query_id"].drop_duplicates().head(3).astype(str).tolist() if count else []
        named = "the qrels" if isinstance(qrels, pd.DataFrame) else str(qrels)
        raise SchemaError(
            f"no pool holds a relevant note of {named} ({count} pools"
            + (f", ids like {', '.join(ids)}" if ids else "")
            + "): the pools' query ids (a log's turn ids) must be the qrels' ids",
            field="qrels",
            has_value=False,
        )
    best = _best_per_strategy(sweep, objective, min_recall)
    recommended: CutSettings | None = None
    problem = ""
    if 0 < count == truncated:
        problem = ALL_TRUNCATED
    else:
        try:
            recommended = recommend(sweep, cast("Any", objective), min_recall=min_recall)
        except SchemaError as exc:
            problem = exc.message
    return CutSweep(
        sweep, best, recommended, objective, float(min_recall), count, truncated, problem
    )
