"""The report's parts about runs and queries: how the drilldown is ordered, the
per-query table, and several runs compared side by side (``askkit report RUN RUN``).

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
    from askkit.metrics import Level

__all__ = [
    "LEVELS",
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
) -> str:
    """The Runs compared section: each run's measures side by side, against the first."""
    from askkit import plots
    from askkit.compare import compare
    from askkit.frame import sources_frame
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
    columns = ["mean", "delta", "wins", "ties", "losses", "p_t_holm", "p_random_holm"]
    summary = cmp.summary[[c for c in columns if c in cmp.summary.columns]].reset_index()
    counts = [c for c in ("wins", "ties", "losses") if c in summary.columns]
    summary[counts] = summary[counts].astype("int64")  # counts read as counts, not 4.0000
    means = pd.DataFrame({name: cmp.per_query[name].mean() for name in frames}).T
    means.index.name = "run"
    figure = img(
        lambda ax: plots.metric_curve(frames, judgments, "ndcg", level=level, ax=ax),
        alt="ndcg@k per run",
    )
    return (
        f"<h2>Runs compared</h2><p>{len(frames)} runs on {len(cmp.per_query)} judged queries "
        f"at {LEVELS[level]}; the baseline is <b>{_html.esc(first)}</b>, the run the rest "
        "of this page shows.</p>"
        + _html.data_table(means, digits=4, sortable=True)
        + "<p>Means over every judged query (here a judged query a run did not answer "
        "scores 0, so all runs are measured on the same queries). Against the baseline: "
        "mean, difference, queries better / tied / worse, and the p-values of a paired "
        "t-test and a paired randomization test (10,000 sign flips, seeded), "
        "Holm-corrected across measures (askkit.compare.compare).</p>"
        + _html.data_table(summary, digits=4, sortable=True, index=False)
        + f'<div class="figs">{figure}</div>'
    )
