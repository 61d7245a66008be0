"""A score histogram as PNG bytes (:func:`askkit.plots.figure_png`: no pyplot).

No global figure state: nothing is shown, nothing leaks between calls.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

__all__ = ["draw_score_histogram", "score_histogram_png"]


def draw_score_histogram(
    ax: Any, scores: Sequence[float], *, bins: int = 20, title: str = "", xlabel: str = "score"
) -> None:
    """Draw the histogram of the finite ``scores`` on ``ax`` (a matplotlib Axes).

    The y axis counts sources, so its ticks are whole numbers: a few scores never
    read as "0.25 sources".
    """
    from matplotlib.ticker import MaxNLocator

    from askkit.plots import histogram_edges

    finite = [float(s) for s in scores if math.isfinite(float(s))]
    if finite:
        edges = histogram_edges([finite], bins)
        drawn = [min(max(s, edges[0]), edges[-1]) for s in finite]  # extremes at +-1e300
        ax.hist(drawn, bins=edges.tolist(), color="#4c78a8", edgecolor="white")
    else:
        ax.text(0.5, 0.5, "no scores", ha="center", va="center", transform=ax.transAxes)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
    ax.set_xlabel(xlabel)
    ax.set_ylabel("sources")
    if title:
        ax.set_title(title, fontsize=9)


def score_histogram_png(
    scores: Sequence[float],
    *,
    bins: int = 20,
    title: str = "",
    width: float = 4.0,
    xlabel: str = "score",
) -> bytes:
    """A PNG histogram of the finite ``scores`` (an empty axes, labelled, when none).

    ``xlabel`` names the axis: scores of different retrievers live on different
    scales (BM25 against cosine similarity), so the Explorer names the retriever.
    """
    from askkit.plots import figure_png

    def draw(ax: Any) -> None:
        draw_score_histogram(ax, scores, bins=bins, title=title, xlabel=xlabel)

    return figure_png(draw, size=(width, 2.2), layout="constrained")
