"""The Cut view's model: where each of kimun's context cuts lands on one pool, and its plot.

Pure functions over a ranked pool (best first, kimun's order) and a
:class:`~askkit.ranking.CutSettings`: :class:`~askkit.widgets.CutView` only
wires its controls to them. Every number comes from :mod:`askkit.ranking`
(``cut_len``, ``score_range``, ``largest_drop``, ``answer_context``,
``search_rows``); this module only lays them out as sentences, a table and
a PNG plot.

Examples
--------
>>> from askkit.ranking import CutSettings, pool_of
>>> model = cut_model(pool_of([0.99, 0.98, 0.97, 0.80, 0.70]))
>>> model.lengths
{'fixed': 5, 'score-range': 3, 'largest-drop': 4}
>>> model.summary
'score-range keeps 3 of 5 chunks (3 notes): threshold 0.8160 = low 0.7 + cutoff 0.4 × (high 0.99 − low 0.7); high: the score at rank 1, low: at rank 5 (5% and 95% of the way down the pool of 5)'
"""  # noqa: E501 - a doctest's output is one line

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from askkit.errors import SchemaError
from askkit.frame import to_sources
from askkit.ranking import (
    STRATEGIES,
    CutSettings,
    LargestDrop,
    ScoreRange,
    Strategy,
    answer_context,
    cut_len,
    largest_drop,
    score_range,
    search_rows,
)
from askkit.ranking.cut import range_ranks
from askkit.retrieve import normalize_chunks
from askkit.sources import AskSource, Turn
from askkit.wire import ChunkResult

__all__ = [
    "STRATEGY_COLORS",
    "CutModel",
    "as_pool",
    "boundary_x",
    "cut_model",
    "cut_plot_png",
    "gap_closing_index",
    "range_endpoints",
    "strategy_table",
]

#: One colour per strategy: its boundary line on the plot.
STRATEGY_COLORS: dict[Strategy, str] = {
    "fixed": "#7f7f7f",
    "score-range": "#1f77b4",
    "largest-drop": "#d62728",
}
_KEPT, _CUT, _GAP = "#4c78a8", "#c7c7c7", "#ff7f0e"
_SOURCES_COLUMNS = ("path", "heading", "wire_date", "score", "text", "ordinal", "hash", "title")


def _one_query(frame: pd.DataFrame, column: str) -> None:
    if column in frame.columns and frame[column].nunique(dropna=False) > 1:
        values = frame[column].drop_duplicates().head(3).tolist()
        raise SchemaError(
            f"a pool is one query's chunks; this frame holds several (select one: "
            f"frame[frame[{column!r}] == ...])",
            field=column,
            value=values,
        )


def _frame_pool(frame: pd.DataFrame) -> tuple[ChunkResult, ...]:
    if all(c in frame.columns for c in _SOURCES_COLUMNS):
        _one_query(frame, "turn_id")
        return tuple(s.to_chunk() for s in to_sources(frame))
    score = next((c for c in ("score", "similarity_score") if c in frame.columns), None)
    if score is None or "path" not in frame.columns:
        raise SchemaError(
            "a pool frame needs 'path' and 'score' (or 'similarity_score') columns, one row "
            "per chunk best first (LocalIndex.pools for one query, or a sources frame)",
            field="columns",
            value=list(frame.columns),
        )
    _one_query(frame, "query_id")
    n = len(frame)

    def column(name: str, default: str) -> list[str]:
        if name not in frame.columns:
            return [default] * n
        return ["" if pd.isna(v) else str(v) for v in frame[name].tolist()]

    ranks = frame["rank"].tolist() if "rank" in frame.columns else range(1, n + 1)
    return tuple(
        ChunkResult(
            path=path,
            title=title,
            date=None,
            content=text,
            hash=hash_,
            similarity_score=float(value),
            ordinal=int(rank),
        )
        for path, title, text, hash_, value, rank in zip(
            column("path", ""),
            column("title", ""),
            column("text", ""),
            column("hash", ""),
            frame[score].tolist(),
            ranks,
            strict=True,
        )
    )


def as_pool(data: object) -> tuple[ChunkResult, ...]:
    """A ranked pool (kimun's order, not re-sorted) from what a notebook has at hand.

    ``data`` is a list of :class:`~askkit.ChunkResult` (``LocalIndex.pool``,
    :func:`askkit.ranking.pool_of`) or of wire dicts, an ``/api/embeddings``
    response, a list of :class:`~askkit.AskSource`, a :class:`~askkit.Turn`
    (its sources), a sources frame of one turn, or one query's rows of
    ``LocalIndex.pools`` (``path``, ``score``, optional ``title``, ``text``,
    ``rank``); ``None`` is the empty pool.

    >>> from askkit.ranking import pool_of
    >>> [c.path for c in as_pool(pool_of([0.9, 0.8]))], as_pool(None)
    (['/n0.md', '/n1.md'], ())
    """
    if data is None:
        return ()
    if isinstance(data, pd.DataFrame):
        return _frame_pool(data)
    if isinstance(data, Turn):
        return tuple(s.to_chunk() for s in data.sources)
    if (
        isinstance(data, Sequence)
        and not isinstance(data, str | bytes)
        and all(isinstance(s, AskSource) for s in data)
        and len(data)
    ):
        return tuple(s.to_chunk() for s in data)
    if isinstance(data, Mapping | Sequence) or hasattr(data, "chunks"):
        return normalize_chunks(data)
    raise TypeError(
        "CutView takes a ranked pool: a list of ChunkResult (LocalIndex.pool, "
        "askkit.ranking.pool_of), AskSource or wire dicts, a Turn, or a pool or sources "
        f"frame; got {type(data).__name__}"
    )


@dataclass(frozen=True, slots=True)
class CutModel:
    """Everything the Cut view shows for one pool and one set of settings.

    Attributes
    ----------
    pool:
        The ranked pool, best first.
    settings:
        The cut settings (``settings.strategy`` is the selected strategy).
    lengths:
        Each strategy's cut length (:func:`askkit.ranking.cut_len` with these
        knobs and that strategy): the boundary falls after this many chunks.
    ranged, dropped:
        The score-range and largest-drop cuts with their endpoints and gap.
    kept:
        The selected strategy's answer context (ordinals ``1..n``).
    search:
        The selected strategy's search rows (one per note).
    summary:
        One sentence: what the selected strategy keeps and why.
    """

    pool: tuple[ChunkResult, ...]
    settings: CutSettings
    lengths: dict[Strategy, int]
    ranged: ScoreRange
    dropped: LargestDrop
    kept: tuple[ChunkResult, ...]
    search: tuple[ChunkResult, ...]
    summary: str


def _g(x: float) -> str:
    return f"{x:.4g}"


def _notes(chunks: Sequence[ChunkResult]) -> int:
    return len({c.path for c in chunks})


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def range_endpoints(n: int) -> str:
    """Where the score-range cut reads its high and low in a pool of ``n`` chunks.

    >>> range_endpoints(80)
    'high: the score at rank 4, low: at rank 77 (5% and 95% of the way down the pool of 80)'
    """
    high, low = range_ranks(n)
    return (
        f"high: the score at rank {high}, low: at rank {low} "
        f"(5% and 95% of the way down the pool of {n})"
    )


def _reason(
    settings: CutSettings,
    ranged: ScoreRange,
    dropped: LargestDrop,
    search: Sequence[ChunkResult],
    n: int,
) -> str:
    if settings.strategy == "fixed":
        return f"top_k = {settings.top_k}; search lists {_count(len(search), 'note')}"
    if settings.strategy == "score-range":
        if ranged.threshold is None:
            return (
                f"the score range is flat (high {_g(ranged.high)} <= low {_g(ranged.low)}; "
                f"{range_endpoints(n)})"
            )
        if math.isnan(ranged.threshold):
            return "the score range is NaN, so kimun's cut keeps nothing"
        return (
            f"threshold {ranged.threshold:.4f} = low {_g(ranged.low)} + cutoff "
            f"{settings.score_range_cutoff:g} × (high {_g(ranged.high)} − low {_g(ranged.low)}); "
            f"{range_endpoints(n)}"
        )
    searched = f"note positions {dropped.searched.start}..{dropped.searched.stop - 1} searched"
    if not dropped.searched:
        notes = _count(len(dropped.notes), "note")
        start = dropped.searched.start
        searched = (
            f"no note position to search (the window starts at {start}, the pool has {notes})"
        )
    if dropped.keep is None:
        return f"no positive drop; {searched}"
    keep = dropped.keep
    return (
        f"largest drop {dropped.drop:.1%} from note {keep} ({_g(dropped.notes[keep - 1])}) "
        f"to note {keep + 1} ({_g(dropped.boundary)}), which closes the gap and is kept; "
        f"{searched}"
    )


def cut_model(pool: Sequence[ChunkResult], settings: CutSettings | None = None) -> CutModel:
    """Where each strategy cuts ``pool``, what the selected one keeps, and why.

    >>> from askkit.ranking import pool_of
    >>> model = cut_model(pool_of([0.9, 0.4, 0.3]), CutSettings(strategy="fixed", top_k=2))
    >>> [c.ordinal for c in model.kept], model.summary
    ([1, 2], 'fixed keeps 2 of 3 chunks (2 notes): top_k = 2; search lists 2 notes')
    """
    settings = CutSettings() if settings is None else settings
    chunks = tuple(pool)
    lengths: dict[Strategy, int] = {
        s: cut_len(chunks, settings.replace(strategy=s)) for s in STRATEGIES
    }
    kept = tuple(answer_context(chunks, settings))
    ranged = score_range(chunks, settings.score_range_cutoff)
    dropped = largest_drop(chunks, settings.window)
    search = tuple(search_rows(chunks, settings))
    n = len(chunks)
    if not n:
        summary = f"{settings.strategy}: the pool is empty, nothing to cut"
    else:
        what = f"all {n} chunks" if len(kept) == n else f"{len(kept)} of {n} chunks"
        summary = (
            f"{settings.strategy} keeps {what} ({_count(_notes(kept), 'note')}): "
            f"{_reason(settings, ranged, dropped, search, n)}"
        )
    return CutModel(chunks, settings, lengths, ranged, dropped, kept, search, summary)


def gap_closing_index(model: CutModel) -> int | None:
    """The 0-based pool position of the largest-drop cut's gap-closing note's best chunk.

    That note is the first below the largest relative drop; kimun keeps it
    (and every chunk scoring at least as much). ``None`` when there is no gap.

    >>> from askkit.ranking import pool_of
    >>> gap_closing_index(cut_model(pool_of([0.90, 0.89, 0.88, 0.87, 0.50, 0.49])))
    4
    """
    keep = model.dropped.keep
    if keep is None:
        return None
    seen: set[str] = set()
    for i, chunk in enumerate(model.pool):
        if chunk.path not in seen:
            seen.add(chunk.path)
            if len(seen) == keep + 1:
                return i
    return None  # pragma: no cover - keep < notes by construction


def boundary_x(model: CutModel) -> dict[Strategy, float]:
    """Where each strategy's boundary line is drawn: between rank ``cut_len`` and the next.

    >>> from askkit.ranking import pool_of
    >>> boundary_x(cut_model(pool_of([0.9, 0.4, 0.3])))
    {'fixed': 3.5, 'score-range': 1.5, 'largest-drop': 3.5}
    """
    return {s: model.lengths[s] + 0.5 for s in STRATEGIES}


def strategy_table(model: CutModel) -> pd.DataFrame:
    """One row per strategy: its knob, the chunks and notes it keeps, its boundary score.

    ``last kept score`` is the boundary chunk's score (NaN when nothing is kept);
    ``selected`` marks the strategy the settings name.

    >>> from askkit.ranking import pool_of
    >>> strategy_table(cut_model(pool_of([0.9, 0.4, 0.3])))["chunks"].tolist()
    [3, 1, 3]
    """
    rows = []
    for s in STRATEGIES:
        n = model.lengths[s]
        settings = model.settings.replace(strategy=s)
        rows.append(
            {
                "strategy": s,
                "setting": settings.label,
                "chunks": n,
                "notes": _notes(model.pool[:n]),
                "search rows": len(search_rows(model.pool, settings)),
                "last kept score": model.pool[n - 1].similarity_score if n else math.nan,
                "selected": "◀" if s == model.settings.strategy else "",
            }
        )
    return pd.DataFrame(rows).set_index("strategy")


def cut_plot_png(model: CutModel, *, width: float = 7.0, height: float = 2.8) -> bytes:
    """The pool's scores by rank with each strategy's boundary, as PNG bytes.

    The selected strategy's kept chunks are filled, the rest grey; each
    strategy's boundary is a labelled vertical line (the selected one solid);
    the score-range threshold is a dotted line and the largest-drop cut's
    gap-closing note a ringed point (:func:`askkit.plots.figure_png`: no pyplot).
    """
    from askkit.plots import figure_png

    def draw(ax: Any) -> None:
        ax.figure.subplots_adjust(left=0.09, right=0.98, top=0.96, bottom=0.17)
        _draw_cut(ax, model)

    return figure_png(draw, size=(width, height))


def _draw_range_endpoints(ax: Any, model: CutModel, scores: Sequence[float]) -> None:
    """The score-range cut's high and low: the scores at 5% and 95% of the way down the
    pool, marked where they sit and named with their ranks (the top points can score
    above the high)."""
    color = STRATEGY_COLORS["score-range"]
    for label, rank in zip(("high", "low"), range_ranks(len(scores)), strict=True):
        score = scores[rank - 1]
        if not math.isfinite(score):
            continue
        ax.scatter(
            [rank], [score], marker="D", s=36, facecolors="none", edgecolors=color,
            linewidths=1.2, zorder=3,
        )  # fmt: skip
        ax.annotate(
            f"{label} (rank {rank})",
            (rank, score),
            xytext=(6, 6 if label == "high" else -11),
            textcoords="offset points",
            fontsize=7,
            color=color,
        )


def _draw_cut(ax: Any, model: CutModel) -> None:
    """The cut plot on ``ax``: scores by rank, each strategy's boundary."""
    n = len(model.pool)
    ax.set_xlabel("rank in the pool (best first)")
    ax.set_ylabel("score")
    if not n:
        ax.text(0.5, 0.5, "empty pool", ha="center", va="center", transform=ax.transAxes)
        return
    ranks = list(range(1, n + 1))
    scores = [c.similarity_score for c in model.pool]
    shown = [s if math.isfinite(s) else math.nan for s in scores]
    kept = model.lengths[model.settings.strategy]
    ax.plot(ranks, shown, color="#999999", linewidth=0.8, zorder=1)
    colors = [_KEPT if i < kept else _CUT for i in range(n)]
    ax.scatter(ranks, shown, c=colors, s=14, zorder=2)
    threshold = model.ranged.threshold
    if threshold is not None and math.isfinite(threshold):
        ax.axhline(threshold, color=STRATEGY_COLORS["score-range"], linestyle=":", linewidth=1)
    _draw_range_endpoints(ax, model, scores)
    gap = gap_closing_index(model)
    if gap is not None and math.isfinite(scores[gap]):
        ax.scatter(
            [gap + 1], [scores[gap]], s=90, facecolors="none", edgecolors=_GAP, linewidths=1.6,
            zorder=3, label="gap-closing note (kept)",
        )  # fmt: skip
    for row, (strategy, x) in enumerate(boundary_x(model).items()):
        selected = strategy == model.settings.strategy
        ax.axvline(
            x,
            color=STRATEGY_COLORS[strategy],
            linestyle="-" if selected else "--",
            linewidth=2.0 if selected else 1.0,
            zorder=0,
        )
        ax.text(
            x,
            0.97 - 0.11 * row,
            f" {strategy} ({model.lengths[strategy]})",
            color=STRATEGY_COLORS[strategy],
            fontsize=8,
            fontweight="bold" if selected else "normal",
            transform=ax.get_xaxis_transform(),
            va="top",
            ha="left" if x < n * 0.75 else "right",
        )
    ax.set_xlim(0, n + 1)
    if gap is not None:
        ax.legend(loc="lower left", fontsize=7, frameon=False)
