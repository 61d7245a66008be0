"""Compare runs: per-query deltas, win/tie/loss, paired significance tests, what changed most.

:func:`compare` scores two or more runs with :func:`askkit.metrics.evaluate`
on the same queries and tests each run against a baseline, measure by
measure, with a paired t-test (``scipy.stats.ttest_rel``) and a paired
randomization test (random sign flips of the per-query deltas, vectorized and
seeded), both two-sided; p-values are Holm-corrected across the measures of
each run. :func:`askkit.gate.gate` adds a paired bootstrap test and turns
them into a pass or fail. :func:`citation_analysis` looks at which retrieved
sources an answer cited.

Examples
--------
>>> base = pd.DataFrame({"turn_id": ["q1", "q1", "q2", "q2"],
...                      "path": ["a.md", "b.md", "c.md", "d.md"],
...                      "score": [2.0, 1.0, 2.0, 1.0]})
>>> better = base.assign(score=[1.0, 2.0, 2.0, 1.0])
>>> qrels = pd.DataFrame({"query_id": ["q1", "q2"], "path": ["b.md", "c.md"], "grade": [1, 1]})
>>> cmp = compare({"base": base, "better": better}, qrels, ["mrr"], n_resamples=200)
>>> row = cmp.summary.loc[("better", "mrr")]
>>> float(row["delta"]), int(row["wins"]), int(row["ties"]), int(row["losses"])
(0.25, 1, 1, 0)
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from askkit.errors import SchemaError
from askkit.metrics import (
    DEFAULT_MEASURES,
    Evaluation,
    Level,
    Missing,
    PathOrFrame,
    Ties,
    evaluate,
    ranked_run,
    read_qrels,
)

__all__ = ["CitationAnalysis", "Comparison", "citation_analysis", "compare", "holm"]

_BLOCK = 4_000_000  # sign-flip matrix elements per block (32 MB of float64)


def holm(p: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Holm-Bonferroni adjusted p-values (step-down, monotone, capped at 1).

    >>> holm(np.array([0.01, 0.04, 0.03])).round(2).tolist()
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(p, dtype=np.float64)
    m = len(p)
    if m == 0:
        return p
    order = np.argsort(p, kind="stable")
    scaled = np.maximum.accumulate(p[order] * (m - np.arange(m)))
    out = np.empty(m, dtype=np.float64)
    out[order] = np.minimum(scaled, 1.0)
    return out


#: Row v: the signs (+1 or -1) that byte v gives eight queries, bit j (least
#: significant first) for query j; a set bit keeps the delta's sign.
_SIGNS8 = np.where((np.arange(256)[:, None] >> np.arange(8)) & 1, 1.0, -1.0)


#: Up to this many queries the randomization test can enumerate every sign pattern.
_EXACT_QUERIES = 16


def _exact_sign_flips(deltas: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """The exact two-sided sign-flip p-value per column: the share of all ``2^n`` sign
    patterns whose ``|mean|`` reaches the observed one (the observed pattern among them).

    >>> _exact_sign_flips(np.array([[0.5], [0.25]])).tolist()  # 2 of the 4 patterns
    [0.5]
    """
    n = deltas.shape[0]
    patterns = np.arange(2**n)[:, None]
    signs = np.where((patterns >> np.arange(n)) & 1, 1.0, -1.0)
    means = np.abs(signs @ deltas) / n
    observed = np.abs(deltas.mean(axis=0))
    tol = 1e-12 * np.maximum(1.0, observed)
    result: np.ndarray[Any, Any] = np.count_nonzero(means >= observed - tol, axis=0) / 2**n
    return result


def _randomization(
    deltas: np.ndarray[Any, Any], n_resamples: int, rng: np.random.Generator
) -> np.ndarray[Any, Any]:
    """Two-sided paired randomization p-value per column of ``deltas`` (queries x measures).

    With few queries (``2^n`` patterns no more than ``n_resamples``, and at most
    :data:`_EXACT_QUERIES` queries) every sign pattern is enumerated and the
    p-value is exact (:func:`_exact_sign_flips`; ``rng`` is not used). Otherwise
    each resample flips the sign of every query's delta at random (the same
    flips for all measures); p = (1 + #{|mean*| >= |mean|}) / (1 + resamples).
    The flips are random bytes, one per eight queries (bit j of byte g flips
    query 8g + j: set keeps the sign), drawn as ``rng.integers(0, 256,
    (resamples, groups), uint8)`` in blocks; each resample's sum is then
    ``groups`` look-ups in a (groups x 256) table of the eight queries' signed
    sums, not ``queries`` multiplications.
    """
    n, m = deltas.shape
    if n == 0:
        return np.full(m, np.nan)
    if n <= _EXACT_QUERIES and 2**n <= n_resamples:
        return _exact_sign_flips(deltas)
    observed = np.abs(deltas.mean(axis=0))
    tol = 1e-12 * np.maximum(1.0, observed)
    groups = -(-n // 8)
    padded = np.zeros((groups * 8, m))
    padded[:n] = deltas  # a zero delta adds nothing, whatever its sign
    offsets = (np.arange(groups) * 256).astype(np.intp)
    tables = [(padded[:, j].reshape(groups, 8) @ _SIGNS8.T).ravel() for j in range(m)]
    extreme = np.zeros(m, dtype=np.int64)
    per_block = max(1, _BLOCK // groups)
    done = 0
    while done < n_resamples:
        b = min(per_block, n_resamples - done)
        flips = rng.integers(0, 256, size=(b, groups), dtype=np.uint8)
        # group-major: each group's 256-entry table stays in cache while it is read
        index = np.ascontiguousarray(flips.T).astype(np.intp)
        index += offsets[:, None]
        for j, table in enumerate(tables):
            means = np.abs(np.take(table, index).sum(axis=0)) / n
            extreme[j] += np.count_nonzero(means >= observed[j] - tol[j])
        done += b
    result: np.ndarray[Any, Any] = (1.0 + extreme) / (1.0 + n_resamples)
    return result


def _bootstrap(
    deltas: np.ndarray[Any, Any], n_resamples: int, rng: np.random.Generator
) -> np.ndarray[Any, Any]:
    """Two-sided paired bootstrap p-value per column of ``deltas`` (queries x measures).

    The deltas are shifted to mean 0 (the null hypothesis), then each resample
    draws ``n`` queries with replacement (the same draw for all measures);
    p = (1 + #{|mean*| >= |mean|}) / (1 + resamples) (Efron and Tibshirani's
    shift method, as Sakai's paired bootstrap test for IR).
    """
    n, m = deltas.shape
    if n == 0:
        return np.full(m, np.nan)
    mean = deltas.mean(axis=0)
    observed = np.abs(mean)
    centered = deltas - mean
    tol = 1e-12 * np.maximum(1.0, observed)
    extreme = np.zeros(m, dtype=np.int64)
    per_block = max(1, _BLOCK // max(n, 1))
    done = 0
    while done < n_resamples:
        b = min(per_block, n_resamples - done)
        picks = rng.integers(0, n, size=(b, n))
        for j in range(m):
            means = np.abs(centered[:, j][picks].mean(axis=1))
            extreme[j] += np.count_nonzero(means >= observed[j] - tol[j])
        done += b
    result: np.ndarray[Any, Any] = (1.0 + extreme) / (1.0 + n_resamples)
    return result


def _ttest(run: np.ndarray[Any, Any], base: np.ndarray[Any, Any]) -> tuple[Any, Any]:
    from scipy import stats

    deltas = run - base
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        res = stats.ttest_rel(run, base, axis=0)
    t = np.asarray(res.statistic, dtype=np.float64)
    p = np.asarray(res.pvalue, dtype=np.float64)
    same = np.all(deltas == 0, axis=0)  # no difference at all: p = 1, not NaN
    return np.where(same, 0.0, t), np.where(same, 1.0, p)


@dataclass(frozen=True, slots=True, eq=False)
class Comparison:
    """What :func:`compare` returns."""

    baseline: str
    runs: tuple[str, ...]
    measures: tuple[str, ...]
    evaluations: dict[str, Evaluation] = field(repr=False)
    per_query: pd.DataFrame = field(repr=False)
    """Scores: index query id, columns (run, measure)."""
    deltas: pd.DataFrame = field(repr=False)
    """Each run minus the baseline: index query id, columns (run, measure)."""
    summary: pd.DataFrame = field(repr=False)
    """One row per (run, measure): baseline, mean, delta, wins, ties, losses, t, p_t,
    p_t_holm, p_random, p_random_holm."""
    frames: dict[str, pd.DataFrame] = field(repr=False)
    qrels: pd.DataFrame = field(repr=False)
    level: Level = "note"
    ties: Ties = "trec"

    def most_changed(
        self, n: int = 5, *, measure: str | None = None, run: str | None = None, depth: int = 10
    ) -> pd.DataFrame:
        """The ``n`` queries whose ``measure`` changed most, with both rankings side by side.

        One row per (query, rank <= ``depth``): ``delta`` (the run's ``measure``
        minus the baseline's), then ``<baseline> doc``/``<baseline> grade`` and
        ``<run> doc``/``<run> grade``, named after the two runs and ranked as
        :func:`askkit.metrics.ranked_run` ranks them. A grade is the judgment
        (an int), ``"unjudged"`` for a document the qrels do not judge (never 0:
        that would read as judged not relevant), and ``""`` where a run has no
        document at that rank. ``attrs`` holds ``baseline``, ``run`` and ``measure``.
        """
        measure = measure or self.measures[0]
        run = run or next(r for r in self.runs if r != self.baseline)
        if (run, measure) not in self.deltas.columns:
            raise KeyError(f"no delta for run {run!r} and measure {measure!r}")
        delta = self.deltas[(run, measure)]
        top = delta.abs().sort_values(ascending=False, kind="stable").index[:n]
        sides = []
        for name in (self.baseline, run):
            frame = self.frames[name]
            ranked = ranked_run(frame, self.qrels, level=self.level, ties=self.ties)
            ranked = ranked[ranked["query_id"].isin(top) & (ranked["rank"] <= depth)]
            grade = pd.Series(ranked["grade"].to_numpy(), dtype=object).where(
                ranked["judged"].to_numpy(), "unjudged"
            )
            sides.append(
                pd.DataFrame(
                    {
                        "query_id": ranked["query_id"].to_numpy(),
                        "rank": ranked["rank"].to_numpy(),
                        f"{name} doc": ranked["doc"].to_numpy(dtype=object),
                        f"{name} grade": grade.to_numpy(),
                    }
                )
            )
        merged = sides[0].merge(sides[1], on=["query_id", "rank"], how="outer")
        order = pd.Series(np.arange(len(top)), index=top)
        merged["delta"] = merged["query_id"].map(delta).to_numpy(dtype=np.float64)
        merged["_order"] = merged["query_id"].map(order)
        merged = merged.sort_values(["_order", "rank"], kind="stable").drop(columns="_order")
        sides_cols = [
            f"{name} {what}" for name in (self.baseline, run) for what in ("doc", "grade")
        ]
        merged[sides_cols] = merged[sides_cols].astype(object).fillna("")
        out = merged[["query_id", "delta", "rank", *sides_cols]].reset_index(drop=True)
        out.attrs.update(baseline=self.baseline, run=run, measure=measure)
        return out

    def __str__(self) -> str:
        return self.summary.round(4).to_string()

    def _repr_html_(self) -> str:
        from askkit import _html

        n = len(self.per_query)
        return _html.fragment(
            f"<b>Comparison against {_html.esc(self.baseline)}</b> "
            f"({n} queries; p-values Holm-corrected across measures)"
            + _html.data_table(self.summary, digits=4, significant=True)
        )


def compare(
    runs: Mapping[str, pd.DataFrame] | Sequence[pd.DataFrame],
    qrels: PathOrFrame,
    measures: Sequence[str] = DEFAULT_MEASURES,
    *,
    baseline: str | None = None,
    level: Level = "note",
    ties: Ties = "trec",
    missing: Missing = "zero",
    n_resamples: int = 10_000,
    seed: int = 0,
) -> Comparison:
    """Compare runs against a baseline on the same queries.

    Parameters
    ----------
    runs:
        ``{name: sources frame}``, or a list (named ``run-1``, ``run-2``, ...).
    qrels, measures, level, ties:
        As for :func:`askkit.metrics.evaluate`.
    baseline:
        The run the others are compared with (default: the first).
    missing:
        ``"zero"`` (default): a judged query a run did not answer scores 0, so
        every run is compared on all judged queries. ``"drop"``: only queries
        every run answered.
    n_resamples, seed:
        The randomization test's sign-flip resamples and its seed.
    """
    named = (
        dict(runs)
        if isinstance(runs, Mapping)
        else {f"run-{i}": r for i, r in enumerate(runs, start=1)}
    )
    if len(named) < 2:
        raise ValueError(f"compare needs at least two runs, got {len(named)}")
    base = baseline if baseline is not None else next(iter(named))
    if base not in named:
        raise KeyError(f"baseline {base!r} is not one of the runs {list(named)}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    judgments = read_qrels(qrels)
    evals = {
        name: evaluate(frame, judgments, measures, level=level, ties=ties, missing=missing)
        for name, frame in named.items()
    }
    common = evals[base].per_query.index
    for ev in evals.values():
        common = common.intersection(ev.per_query.index, sort=False)
    common = common.sort_values()
    names = list(evals[base].measures)  # evaluate refused an empty or bad list
    per_query = pd.concat({n: ev.per_query.loc[common] for n, ev in evals.items()}, axis=1)
    base_values = per_query[base].to_numpy()
    rng = np.random.default_rng(seed)
    deltas: dict[str, pd.DataFrame] = {}
    rows: list[pd.DataFrame] = []
    for name in named:
        if name == base:
            continue
        values = per_query[name].to_numpy()
        d = values - base_values
        deltas[name] = pd.DataFrame(d, index=common, columns=names)
        t, p_t = _ttest(values, base_values)
        p_r = _randomization(d, n_resamples, rng)
        rows.append(
            pd.DataFrame(
                {
                    "run": name,
                    "measure": names,
                    "baseline": base_values.mean(axis=0) if len(common) else np.nan,
                    "mean": values.mean(axis=0) if len(common) else np.nan,
                    "delta": d.mean(axis=0) if len(common) else np.nan,
                    "wins": np.count_nonzero(d > 0, axis=0),
                    "ties": np.count_nonzero(d == 0, axis=0),
                    "losses": np.count_nonzero(d < 0, axis=0),
                    "t": t,
                    "p_t": p_t,
                    "p_t_holm": holm(p_t),
                    "p_random": p_r,
                    "p_random_holm": holm(p_r),
                }
            )
        )
    summary = pd.concat(rows, ignore_index=True).set_index(["run", "measure"])
    return Comparison(
        baseline=base,
        runs=tuple(named),
        measures=tuple(names),
        evaluations=evals,
        per_query=per_query,
        deltas=pd.concat(deltas, axis=1),
        summary=summary,
        frames=named,
        qrels=judgments,
        level=level,
        ties=ties,
    )


# --------------------------------------------------------------------------- citations


@dataclass(frozen=True, slots=True, eq=False)
class CitationAnalysis:
    """Which retrieved sources the answers cited, by rank: by score, best first, when the
    sources have scores (``rank_by == "score"``), else by position as received."""

    by_rank: pd.DataFrame = field(repr=False)
    """One row per rank: ``sources``, ``cited``, ``cited_share``."""
    summary: pd.Series = field(repr=False)
    """``turns``, ``turns_citing``, ``sources``, ``cited``, ``mean_rank_cited``,
    ``mean_rank_uncited``, ``median_rank_cited``, ``median_rank_uncited``,
    ``cited_low_ranked``."""
    low_ranked: pd.DataFrame = field(repr=False)
    """The cited sources ranked below ``low_rank``."""
    low_rank: int = 5
    rank_by: str = "score"
    """``"score"`` (each turn's sources ranked by score, best first, ties sharing the
    best rank) or ``"position"`` (the order received, for sources without scores)."""

    def _repr_html_(self) -> str:
        from askkit import _html

        s = self.summary
        return _html.fragment(
            f"<b>Citations</b>: {int(s['cited'])} of {int(s['sources'])} "
            f"sources cited in {int(s['turns_citing'])} of {int(s['turns'])} turns; "
            f"ranked by {_html.esc(self.rank_by)}: mean rank cited "
            f"{s['mean_rank_cited']:.2f} vs uncited "
            f"{s['mean_rank_uncited']:.2f}; {int(s['cited_low_ranked'])} cited below rank "
            f"{self.low_rank}."
            + _html.data_table(self.by_rank)
            + _html.data_table(self.low_ranked, index=False)
        )


def _citation_ranks(frame: pd.DataFrame) -> tuple[np.ndarray[Any, Any], str]:
    """Each source's rank in its turn: by score when every source has one, else as received."""
    if "score" in frame.columns:
        score = pd.to_numeric(frame["score"], errors="coerce").to_numpy(dtype=np.float64)
        if len(score) and not np.isnan(score).any():
            if "score_rank" in frame.columns:
                return frame["score_rank"].to_numpy(dtype=np.int64), "score"
            ranked = pd.Series(score).groupby(frame["turn_id"].astype(str).to_numpy())
            return ranked.rank(method="min", ascending=False).to_numpy(dtype=np.int64), "score"
    return frame["rank"].to_numpy(dtype=np.int64), "position"


def citation_analysis(frame: pd.DataFrame, *, low_rank: int = 5) -> CitationAnalysis:
    """Rank of cited vs uncited sources, and citations to sources ranked below ``low_rank``.

    Uses the sources frame's ``cited`` column and ranks each turn's sources by
    score, best first (``score_rank``: ties share the best rank), as the
    retriever ranked them; the order a payload lists its sources in says
    nothing (kimun's may come shuffled). Sources without a score in every row
    are ranked by their ``rank``, the position received, and the result says so
    (``rank_by``).

    >>> f = pd.DataFrame({"turn_id": ["t", "t", "t"], "rank": [1, 2, 3],
    ...                   "cited": [True, False, True], "path": ["a.md", "b.md", "c.md"],
    ...                   "heading": ["", "", ""],
    ...                   "ordinal": [1, 2, 6], "score": [3.0, 2.0, 1.0]})
    >>> a = citation_analysis(f, low_rank=2)
    >>> a.rank_by, a.summary["mean_rank_cited"], a.low_ranked["path"].tolist()
    ('score', np.float64(2.0), ['c.md'])
    >>> citation_analysis(f.assign(score=[1.0, 2.0, 3.0]), low_rank=2).low_ranked["path"].tolist()
    ['a.md']
    """
    missing = [c for c in ("turn_id", "rank", "cited") if c not in frame.columns]
    if missing:
        raise SchemaError(
            "citation analysis needs a sources frame with turn_id, rank and cited",
            field="columns",
            value=missing,
        )
    rank, rank_by = _citation_ranks(frame)
    cited = frame["cited"].to_numpy(dtype=bool)
    grouped = pd.DataFrame({"rank": rank, "cited": cited}).groupby("rank")["cited"]
    by_rank = pd.DataFrame({"sources": grouped.size(), "cited": grouped.sum().astype(np.int64)})
    by_rank["cited_share"] = by_rank["cited"] / by_rank["sources"]
    turn = frame["turn_id"].astype(str)
    citing = turn[cited].nunique()
    summary = pd.Series(
        {
            "turns": float(turn.nunique()),
            "turns_citing": float(citing),
            "sources": float(len(frame)),
            "cited": float(cited.sum()),
            "mean_rank_cited": float(rank[cited].mean()) if cited.any() else np.nan,
            "mean_rank_uncited": float(rank[~cited].mean()) if (~cited).any() else np.nan,
            "median_rank_cited": float(np.median(rank[cited])) if cited.any() else np.nan,
            "median_rank_uncited": float(np.median(rank[~cited])) if (~cited).any() else np.nan,
            "cited_low_ranked": float(np.count_nonzero(cited & (rank > low_rank))),
        },
        dtype=np.float64,
    )
    keep = [c for c in ("turn_id", "ordinal", "path", "heading", "score") if c in frame]
    low = frame.loc[cited & (rank > low_rank), keep].reset_index(drop=True)
    low.insert(1, f"rank by {rank_by}", rank[cited & (rank > low_rank)])
    return CitationAnalysis(
        by_rank=by_rank, summary=summary, low_ranked=low, low_rank=low_rank, rank_by=rank_by
    )
