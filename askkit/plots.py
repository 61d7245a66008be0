"""Matplotlib views of runs and comparisons. Each function draws on ``ax`` (a new figure
when ``None``), returns the Axes, and never calls ``show``.

matplotlib is imported here, and only here: ``import askkit`` never loads it.
The numbers come from :mod:`askkit.metrics` and :mod:`askkit.compare`; these
functions only draw them. A run may be given as a frame with its qrels, or
as a run :func:`askkit.metrics.prepare` prepared once for several plots.
:func:`figure_png` draws a figure off screen as PNG bytes, for the report and
the widgets.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import numpy as np
import pandas as pd

from askkit.compare import Comparison
from askkit.metrics import Level, PathOrFrame, Prepared, evaluate, ranked_run

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.lines import Line2D

    from askkit.ranking.settings import CutSettings
    from askkit.reach.retrievability import Retrievability

__all__ = [
    "cut_sweep",
    "delta_bars",
    "figure_png",
    "funnel",
    "histogram_edges",
    "lorenz_curves",
    "metric_curve",
    "relevance_histogram",
    "score_distributions",
    "score_vs_rank",
]


def _axes(ax: Axes | None) -> Axes:
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, new = plt.subplots()
    return new


def figure_png(
    draw: Callable[[Axes], object],
    *,
    size: tuple[float, float],
    dpi: int = 90,
    layout: Literal["tight", "constrained"] | None = None,
) -> bytes:
    """``draw`` on the axes of a new figure, rendered as PNG bytes.

    matplotlib's ``Figure`` and Agg, no pyplot: no global figure state,
    nothing shown, nothing left open between calls.

    >>> figure_png(lambda ax: ax.plot([1, 2]), size=(2, 1)).startswith(b"\\x89PNG")
    True
    """
    from matplotlib.figure import Figure

    fig = Figure(figsize=size, dpi=dpi, layout=layout)
    draw(fig.subplots())
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def _no_data(ax: Axes, why: str) -> None:
    """Say on ``ax`` why it has nothing to draw, instead of leaving empty axes."""
    import textwrap

    ax.text(
        0.5,
        0.5,
        textwrap.fill(why, 48),
        ha="center",
        va="center",
        transform=ax.transAxes,
        fontsize=8,
    )
    ax.set_xticks([])
    ax.set_yticks([])


#: A run frame, or a run prepared once for several plots (:func:`askkit.metrics.prepare`).
Run = pd.DataFrame | Prepared
_R = TypeVar("_R", bound=pd.DataFrame | Prepared)


def _named(runs: Mapping[str, _R] | Sequence[_R] | _R) -> dict[str, _R]:
    if isinstance(runs, pd.DataFrame | Prepared):
        return {"run": runs}
    if isinstance(runs, Mapping):
        return dict(runs)
    return {f"run-{i}": r for i, r in enumerate(runs, start=1)}


#: Finite scores beyond this are drawn at it: an axis or bin range spanning
#: +-1e308 overflows to inf in matplotlib and numpy.
_PLOT_LIMIT = 1e300


def _label(name: object) -> str:
    """A run's name as a matplotlib text shows it literally (``$`` is not mathtext)."""
    return str(name).replace("$", r"\$")


def _titled(title: str, name: str | None) -> str:
    """``title``, naming the run when one is given: ``Score vs rank: dense``."""
    return f"{title}: {_label(name)}" if name else title


def _plottable(values: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """``values`` as float64 with finite extremes clipped to +-1e300 (inf and NaN kept)."""
    values = np.asarray(values, dtype=np.float64)
    return np.where(np.isfinite(values), np.clip(values, -_PLOT_LIMIT, _PLOT_LIMIT), values)


def histogram_edges(values: Sequence[Any], bins: int) -> np.ndarray[Any, Any]:
    """``bins + 1`` increasing bin edges over the finite ``values`` (one rule for every histogram).

    Finite extremes count at +-1e300 and a range too narrow for ``bins``
    distinct float edges (one value, or two one float step apart) is widened
    around its middle, so numpy and matplotlib never see a range they cannot
    split.

    >>> histogram_edges([1e308], 2).tolist()
    [9.990000000000001e+299, 1e+300, 1.001e+300]
    >>> histogram_edges([], 2).tolist()
    [0.0, 0.5, 1.0]
    """
    arrays = [np.asarray(v, dtype=np.float64).ravel() for v in values]
    allv = np.concatenate(arrays) if arrays else np.empty(0)
    allv = _plottable(allv[np.isfinite(allv)])
    if len(allv) == 0:
        return np.linspace(0.0, 1.0, bins + 1)
    lo, hi = float(allv.min()), float(allv.max())
    middle = lo / 2 + hi / 2
    narrow = hi - lo <= max(abs(middle) * 1e-9, 1e-300)  # subnormal steps included
    least = max(abs(middle) * 1e-3, 0.5) if narrow else 0.0
    if least:
        lo, hi = middle - least, middle + least
    return np.linspace(lo, hi, bins + 1)


def score_distributions(
    runs: Mapping[str, pd.DataFrame] | Sequence[pd.DataFrame] | pd.DataFrame,
    *,
    bins: int = 30,
    ax: Axes | None = None,
) -> Axes:
    """One step histogram of retrieved scores per run (shared bins), with a legend.

    Overlay only runs whose scores share a scale (two BM25 runs, two models'
    cosines): on one axis, BM25's unbounded sums squash a cosine run into a
    spike. Give runs of other scales each their own axes; one run's title
    names it.
    """
    ax = _axes(ax)
    named = _named(runs)
    values = [
        _plottable(f["score"].to_numpy(dtype=np.float64, na_value=np.nan)) for f in named.values()
    ]
    ax.set_title(
        f"Score distribution: {_label(next(iter(named)))}"
        if len(named) == 1
        else "Score distribution per run"
    )
    if not any(np.isfinite(v).any() for v in values):
        _no_data(ax, "No source has a score: nothing to draw.")
        return ax
    edges = histogram_edges(values, bins)
    for name, v in zip(named, values, strict=True):
        ax.hist(
            v[np.isfinite(v)], bins=edges.tolist(), histtype="step", linewidth=1.5, label=str(name)
        )
    ax.set_xlabel("score")
    ax.set_ylabel("sources")
    ax.legend()
    return ax


def relevance_histogram(
    run: Run,
    qrels: PathOrFrame | None = None,
    *,
    level: Level | None = None,
    bins: int = 30,
    relevance_level: int = 1,
    name: str | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Scores of relevant, non-relevant (judged) and unjudged documents, overlaid.

    Documents are de-duplicated as :func:`askkit.metrics.evaluate` does.
    ``run`` with ``qrels`` (``level`` default ``"note"``), or a prepared run;
    ``name`` names the run in the title.
    """
    ax = _axes(ax)
    title = _titled("Scores by judgment", name)
    ranked = ranked_run(run, qrels, level=level)
    score = _plottable(ranked["score"].to_numpy(dtype=np.float64))
    judged = ranked["judged"].to_numpy(dtype=bool)
    relevant = judged & (ranked["grade"].to_numpy() >= relevance_level)
    groups = {
        "relevant": score[relevant],
        "non-relevant": score[judged & ~relevant],
        "unjudged": score[~judged],
    }
    if not judged.any():
        ax.set_title(title)
        _no_data(ax, "No retrieved document is judged: nothing to split by judgment.")
        return ax
    edges = histogram_edges(list(groups.values()), bins)
    colors = {"relevant": "#2ca02c", "non-relevant": "#d62728", "unjudged": "#7f7f7f"}
    for label, v in groups.items():
        ax.hist(
            v[np.isfinite(v)],
            bins=edges.tolist(),
            alpha=0.5,
            color=colors[label],
            label=f"{label} ({len(v)})",
        )
    ax.set_xlabel("score")
    ax.set_ylabel("documents")
    ax.set_title(title)
    ax.legend()
    return ax


def score_vs_rank(
    run: Run,
    qrels: PathOrFrame | None = None,
    *,
    level: Level | None = None,
    relevance_level: int = 1,
    name: str | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Each source's score against its rank, plus the median score per rank.

    With ``qrels`` (or a prepared run), relevant documents are drawn in
    green, the rest in grey (documents de-duplicated as
    :func:`askkit.metrics.evaluate` does); without, the frame's own ``rank``
    is used. ``name`` names the run in the title.
    """
    ax = _axes(ax)
    if qrels is None and isinstance(run, pd.DataFrame):
        rank = run["rank"].to_numpy(dtype=np.int64)
        score = _plottable(run["score"].to_numpy(dtype=np.float64, na_value=np.nan))
        ax.scatter(rank, score, s=10, alpha=0.4, color="#4c78a8", label="source")
    else:
        ranked = ranked_run(run, qrels, level=level)
        rank = ranked["rank"].to_numpy(dtype=np.int64)
        score = _plottable(ranked["score"].to_numpy(dtype=np.float64))
        rel = ranked["judged"].to_numpy(dtype=bool) & (
            ranked["grade"].to_numpy() >= relevance_level
        )
        ax.scatter(
            rank[~rel],
            score[~rel],
            s=10,
            alpha=0.4,
            color="#7f7f7f",
            label="not relevant or unjudged",
        )
        ax.scatter(rank[rel], score[rel], s=14, alpha=0.8, color="#2ca02c", label="relevant")
    median = pd.Series(score).groupby(rank).median()
    ax.plot(
        median.index.to_numpy(), median.to_numpy(), color="black", linewidth=1.5, label="median"
    )
    ax.set_xlabel("rank")
    ax.set_ylabel("score")
    ax.set_title(_titled("Score vs rank", name))
    ax.legend()
    return ax


def metric_curve(
    runs: Mapping[str, Run] | Sequence[Run] | Run,
    qrels: PathOrFrame | None = None,
    measure: str = "ndcg",
    ks: Sequence[int] = tuple(range(1, 11)),
    *,
    level: Level | None = None,
    band: bool = False,
    grade: int | None = None,
    ax: Axes | None = None,
) -> Axes:
    """``measure@k`` (mean over queries) against k, one line per run.

    Runs with ``qrels`` (``level`` default ``"note"``), or prepared runs.
    With ``band``, each line gets a shaded band from the lower to the upper
    bound of its mean at each k (:func:`askkit.metrics.bounds`, a relevant
    filling at ``grade``): where the line could lie once the run's unjudged
    documents are judged.
    """
    ax = _axes(ax)
    ks = [int(k) for k in ks]
    names = [f"{measure}@{k}" for k in ks]
    why = []
    for name, frame in _named(runs).items():
        ev = evaluate(frame, qrels, names, level=level)
        if ev.headline or not len(ev.per_query):
            why.append(ev.headline or f"{name}: no judged queries.")
            continue
        (line,) = ax.plot(ks, ev.mean[names].to_numpy(), marker="o", label=str(name))
        if band:
            _bounds_band(ax, frame, qrels, names, ks, level=level, grade=grade, line=line)
    ax.set_title(f"{measure}@k")
    if len(why) == len(_named(runs)):
        _no_data(ax, " ".join(why) or "No run to draw.")
        return ax
    ax.set_xlabel("k")
    ax.set_ylabel(f"mean {measure}@k")
    # outside the axes, to their right: inside, "best" still covers a point
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, fontsize=8)
    return ax


def _bounds_band(
    ax: Axes,
    run: Run,
    qrels: PathOrFrame | None,
    names: Sequence[str],
    ks: Sequence[int],
    *,
    level: Level | None,
    grade: int | None,
    line: Line2D,
) -> None:
    """Shade ``line``'s bounds at each k, lower to upper, in its colour."""
    from askkit.metrics import bounds

    table = bounds(run, qrels, names, level=level, grade=grade).table()
    ax.fill_between(
        ks,
        table["lower"].to_numpy(),
        table["upper"].to_numpy(),
        color=line.get_color(),
        alpha=0.18,
        linewidth=0,
        label=f"{line.get_label()}: bounds",
    )


def delta_bars(
    comparison: Comparison,
    measure: str | None = None,
    *,
    run: str | None = None,
    ax: Axes | None = None,
) -> Axes:
    """One bar per query: the run's ``measure`` minus the baseline's, sorted (gains green)."""
    ax = _axes(ax)
    measure = measure or comparison.measures[0]
    run = run or next(r for r in comparison.runs if r != comparison.baseline)
    delta = comparison.deltas[(run, measure)].sort_values(ascending=False, kind="stable")
    values = delta.to_numpy(dtype=np.float64)
    colors = np.where(values > 0, "#2ca02c", np.where(values < 0, "#d62728", "#7f7f7f"))
    x = np.arange(len(values))
    ax.bar(x, values, color=list(colors))
    ax.set_xticks(x, [str(q) for q in delta.index], rotation=90, fontsize=7)
    ax.axhline(0.0, color="black", linewidth=0.8)
    ax.set_xlabel("query")
    ax.set_ylabel(f"Δ {measure}")
    ax.set_title(f"{run} − {comparison.baseline}: {measure} per query")
    return ax


def cut_sweep(
    sweep: pd.DataFrame,
    *,
    recommended: CutSettings | None = None,
    min_recall: float | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Recall against context size, one curve per strategy, from :func:`askkit.ranking.sweep_cuts`.

    Each point is a setting: its mean answer context (chunks) and the recall
    it keeps of the pools' relevant notes. ``recommended`` is starred;
    ``min_recall`` is drawn as a dashed line.
    """
    ax = _axes(ax)
    missing = [c for c in ("strategy", "setting", "mean_chunks", "recall") if c not in sweep]
    if missing:
        raise ValueError(f"not a sweep_cuts table: missing columns {', '.join(missing)}")
    for strategy in sweep["strategy"].drop_duplicates():
        rows = sweep[sweep["strategy"] == strategy].sort_values("mean_chunks", kind="stable")
        ax.plot(
            rows["mean_chunks"].to_numpy(dtype=np.float64),
            rows["recall"].to_numpy(dtype=np.float64, na_value=np.nan),
            marker="o",
            markersize=3,
            label=str(strategy),
        )
    if recommended is not None:
        row = sweep[sweep["setting"] == recommended.label].head(1)
        if len(row):
            ax.plot(
                row["mean_chunks"].to_numpy(dtype=np.float64),
                row["recall"].to_numpy(dtype=np.float64),
                marker="*",
                markersize=14,
                linestyle="none",
                color="black",
                label=f"recommended: {recommended.label}",
            )
    if min_recall is not None:
        ax.axhline(min_recall, color="#7f7f7f", linestyle="--", linewidth=0.8)
    ax.set_xlabel("mean context size (chunks)")
    ax.set_ylabel("recall of the pool's relevant notes")
    ax.set_title("Context cut: recall vs context size")
    ax.legend(fontsize=8)
    return ax


def funnel(table: pd.DataFrame, *, top: int = 5, ax: Axes | None = None) -> Axes:
    """The relevant sections surviving each stage, from :func:`askkit.trace.funnel`.

    One bar per stage (the ``total`` row), labelled with its count; the
    ``top`` queries that lose the most are named in a box.
    """
    from askkit.trace import FUNNEL_STAGES

    ax = _axes(ax)
    if "total" not in table.index or "judged" not in table.columns:
        raise ValueError("not a funnel table: it needs a 'total' row and a 'judged' column")
    stages = [c for c in table.columns if c in FUNNEL_STAGES]  # not lost, unjudged_above
    counts = table.loc["total", stages].to_numpy(dtype=np.float64)
    positions = np.arange(len(stages))
    ax.bar(positions, counts, color="#4c78a8")
    for x, count in zip(positions.tolist(), counts.tolist(), strict=True):
        ax.annotate(f"{count:.0f}", (x, count), ha="center", va="bottom", fontsize=8)
    ax.set_xticks(positions, stages, rotation=30, ha="right")
    ax.set_ylim(0, max(float(counts.max()) if len(counts) else 0.0, 1.0) * 1.15)
    ax.set_ylabel("relevant sections")
    ax.set_title("Where relevant sections are lost")
    queries = table.drop(index="total")
    if "lost" in queries.columns and len(queries):
        worst = queries.sort_values("lost", ascending=False, kind="stable").head(top)
        worst = worst[worst["lost"] > 0]
        if len(worst):
            lines = [f"{q}: {int(n)} lost" for q, n in zip(worst.index, worst["lost"], strict=True)]
            ax.text(  # beside the axes: over them it would hide a bar and its count
                1.02,
                1.0,
                "most lost\n" + "\n".join(lines),
                transform=ax.transAxes,
                ha="left",
                va="top",
                fontsize=8,
                bbox={"boxstyle": "round", "facecolor": "white", "alpha": 0.8},
            )
    if not counts.any():
        _no_data(ax, "no judged relevant section")
    return ax


def lorenz_curves(
    results: Mapping[str, Retrievability] | Retrievability, *, ax: Axes | None = None
) -> Axes:
    """The Lorenz curve of each retrievability (:func:`askkit.reach.retrievability`),
    its Gini coefficient and unreachable documents in the legend, and the diagonal
    of a retriever that reaches every document alike."""
    ax = _axes(ax)
    named = {"retriever": results} if not isinstance(results, Mapping) else dict(results)
    ax.plot([0, 1], [0, 1], color="#999999", linestyle="--", linewidth=1, label="equal reach")
    drawn = 0
    for name, r in named.items():
        if not len(r.scores) or not r.scores.to_numpy().any():
            continue
        curve = r.lorenz()
        unreachable = len(r.unreachable)
        ax.plot(
            curve["share_of_documents"],
            curve["share_of_r"],
            label=f"{name}: Gini {r.gini:.3f}, {unreachable:,} of {len(r.scores):,} unreachable",
        )
        drawn += 1
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("share of documents, least retrievable first")
    ax.set_ylabel("share of retrievability")
    first = next(iter(named.values()), None)
    ax.set_title(f"Retrievability ({first.cutoff})" if first is not None else "Retrievability")
    if not drawn:
        _no_data(ax, "no query reaches any document")
        return ax
    ax.legend(loc="upper left", fontsize=8)
    return ax
