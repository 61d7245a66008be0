"""The report's parts about runs and queries: how the drilldown is ordered, the
per-query table, each mean's bounds (:func:`askkit.metrics.bounds`), and several
runs compared side by side (``askkit report RUN RUN``).

Every piece is :mod:`askkit._html`'s, escaped; :mod:`askkit.report` lays them out.
"""

from __future__ import annotations

import base64
import os
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from askkit import _html

if TYPE_CHECKING:
    from askkit.metrics import Bounds, Level

__all__ = [
    "LEVELS",
    "bounds_legend",
    "bounds_table",
    "comparison_section",
    "img",
    "order_note",
    "per_query_table",
    "run_name",
]

#: What the page says of each scoring level.
LEVELS = {
    "note": "<b>note</b> level (a document is a note, its path; the best chunk counts)",
    "section": (
        "<b>section</b> level (a document is a section, path#heading, as kimun cuts notes; "
        "the best chunk counts)"
    ),
}


def img(draw: Callable[[Any], Any], *, alt: str = "plot") -> str:
    """A plot as an embedded ``<img>`` (:func:`askkit.plots.figure_png`)."""
    from askkit.plots import figure_png

    png = figure_png(draw, size=(5.2, 3.4), dpi=110, layout="tight")
    return f'<img alt="{alt}" src="data:image/png;base64,{base64.b64encode(png).decode()}">'


def order_note(measure: str | None, per_query: pd.DataFrame | None, *, turns: bool = True) -> str:
    """How the drilldown is ordered, said above it (``turns``: a turn log's sources,
    in kimun's order; else a TREC run's documents, in rank order)."""
    source = "log" if turns else "run"
    within = (
        "Each query's sources are in the run's order, as kimun lists them."
        if turns
        else "Each query's documents are in rank order."
    )
    if measure is None or per_query is None:
        return f"<p class='muted'>In the {source}'s order. {within}</p>"
    return (
        f"<p class='muted'>Worst first: judged queries by {_html.esc(measure)}, lowest first "
        f"(ties in {source} order), then the queries no judgment covers, in the {source}'s "
        f"order. {within}</p>"
    )


def per_query_table(frame: pd.DataFrame, per_query: pd.DataFrame) -> str:
    """Every judged query's measures, with its question (when the run has questions):
    sortable and searchable."""
    table = per_query.copy()
    if "question" in frame.columns:
        questions = frame.drop_duplicates("turn_id").set_index("turn_id")["question"]
        table.insert(0, "question", questions.reindex(table.index).fillna("").astype(str))
    table.index.name = "query"
    return (
        "<details><summary>Per-query measures (sort by a column, filter by any text)"
        "</summary>" + _html.data_table(table, digits=3, sortable=True) + "</details>"
    )


def _bounds_row(b: Bounds, queries: pd.Index | None, digits: int) -> list[str]:
    """Each measure's mean with its bounds, ``0.4123 [0.4123, 0.6554]``, over ``queries``
    (default: every query ``b`` scores)."""
    from askkit.metrics import format_bounds

    frames = [b.value, b.lower, b.upper]
    if queries is not None:
        frames = [f.loc[queries] for f in frames]
    value, lower, upper = (f.mean().to_numpy(dtype=float) for f in frames)
    return [format_bounds(v, lo, hi, digits) for v, lo, hi in zip(value, lower, upper, strict=True)]


def bounds_table(
    runs: dict[str, Bounds],
    *,
    queries: pd.Index | None = None,
    share: bool = False,
    digits: int = 4,
) -> str:
    """Each run's means with their bounds, a row per run and a column per measure, as the
    means table beside it; with ``share``, a row more: each measure's unjudged share."""
    first = next(iter(runs.values()))
    rows = {name: _bounds_row(b, queries, digits) for name, b in runs.items()}
    if share:
        rows["unjudged share"] = [f"{s:.0%}" for s in first.share().to_numpy(dtype=float)]
    table = pd.DataFrame.from_dict(rows, orient="index", columns=list(first.measures))
    table.index.name = "run"
    return _html.data_table(table, sortable=True)


def bounds_legend(b: Bounds, *, asked: bool, holes: int | None, share: bool) -> str:
    """What the bracket means, said under the bounds table of ``b``'s measures."""
    grade = b.grade
    which = "as asked" if asked else "the judgments' top grade"
    count = f"the {holes} unjudged documents" if holes is not None else "the unjudged documents"
    text = (
        "Each mean with its bounds, value [lower, upper]: the least and the greatest the "
        f"mean could be once {count} these measures rest on are judged, each either not "
        f"relevant or relevant at grade {grade} ({which}). The bounds are exact "
        "(askkit.metrics.bounds; askkit eval --bounds). The value counts every unjudged "
        "document as not relevant and is not always the lower bound: an unjudged document "
        "judged relevant adds one to the relevant documents there are to find, so AP, "
        "recall, R-precision and nDCG can fall below it; precision, hit and MRR only rise. "
        "The shaded band around each ndcg@k line is its bounds at each k."
    )
    if any("'" in name for name in b.measures):
        text += (
            " A condensed measure (a prime: ndcg'@10, the ranking with its unjudged "
            "documents left out) has the bounds of its plain form, and its value need not "
            "lie between them."
        )
    if any(name.startswith("judged@") for name in b.measures):
        text += " Judged@k measures the judgments, not the run: its bounds are its value."
    if share:
        text += (
            " Unjudged share: the part of each measure's retrieved top k (everything "
            "retrieved for a measure without a cutoff) that carries no judgment."
        )
    return f'<p class="muted">{_html.esc(text)}</p>'


def run_name(run: Any, taken: set[str]) -> str:
    """A run's name in the comparison: its file's stem (its path when two stems clash)."""
    name = Path(str(run)).stem if isinstance(run, str | os.PathLike) else "run"
    if name in taken:
        name = str(run) if isinstance(run, str | os.PathLike) else f"run {len(taken) + 1}"
    while name in taken:
        name += "'"
    taken.add(name)
    return name


def comparison_section(
    frame: pd.DataFrame,
    source_name: str,
    others: Sequence[Any],
    *,
    judgments: pd.DataFrame,
    measures: Sequence[str],
    level: Level,
    grade: int | None = None,
) -> str:
    """The Runs compared section: each run's measures side by side, against the first,
    each mean with its bounds (a relevant filling at ``grade``)."""
    from askkit import plots
    from askkit.compare import compare
    from askkit.frame import sources_frame
    from askkit.metrics import bounds
    from askkit.metrics.runs import load_run

    taken: set[str] = set()
    first = run_name(source_name, taken)
    frames = {first: frame}
    for other in others:
        frames[run_name(other, taken)] = (
            other
            if isinstance(other, pd.DataFrame)
            else load_run(other)  # the one run reader: a turn log or a TREC run
            if isinstance(other, str | os.PathLike)
            else sources_frame(other)
        )
    with warnings.catch_warnings():  # a run that matches no judgment: its row says so
        warnings.simplefilter("ignore", UserWarning)
        cmp = compare(frames, judgments, list(measures), level=level, baseline=first)
        limits = {  # as compare scores: a judged query a run did not answer scores 0
            name: bounds(run, judgments, list(measures), grade=grade, level=level, missing="zero")
            for name, run in frames.items()
        }
    columns = ["mean", "delta", "wins", "ties", "losses", "p_t_holm", "p_random_holm"]
    summary = cmp.summary[[c for c in columns if c in cmp.summary.columns]].reset_index()
    counts = [c for c in ("wins", "ties", "losses") if c in summary.columns]
    summary[counts] = summary[counts].astype("int64")  # counts read as counts, not 4.0000
    means = pd.DataFrame({name: cmp.per_query[name].mean() for name in frames}).T
    means.index.name = "run"
    figure = img(
        lambda ax: plots.metric_curve(
            frames, judgments, "ndcg", level=level, band=True, grade=grade, ax=ax
        ),
        alt="ndcg@k per run",
    )
    return (
        f"<h2>Runs compared</h2><p>{len(frames)} runs on {len(cmp.per_query)} judged queries "
        f"at {LEVELS[level]}; the baseline is <b>{_html.esc(first)}</b>, the run the rest "
        "of this page shows.</p>"
        + _html.data_table(means, digits=4, sortable=True)
        + "<p>Means over every judged query (here a judged query a run did not answer "
        "scores 0, so all runs are measured on the same queries).</p>"
        + bounds_table(limits, queries=cmp.per_query.index)
        + bounds_legend(
            next(iter(limits.values())), asked=grade is not None, holes=None, share=False
        )
        + "<p>Against the baseline: "
        "mean, difference, queries better / tied / worse, and the p-values of a paired "
        "t-test and a paired randomization test (10,000 sign flips, seeded), "
        "Holm-corrected across measures (askkit.compare.compare).</p>"
        + _html.data_table(summary, digits=4, sortable=True, index=False)
        + f'<div class="figs">{figure}</div>'
    )
