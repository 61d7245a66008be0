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
'score-range keeps 3 of 5 chunks from 3 notes: threshold 0.8160 = low 0.7 + cutoff 0.4 × (high 0.99 − low 0.7); high: the score at rank 1, low: at rank 5 (5% and 95% of the way down the pool of 5)'
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
from askkit.trace import is_frontmatter
from askkit.wire import ChunkResult

__all__ = [
    "STRATEGY_COLORS",
    "CutModel",
    "as_pool",
    "boundary_x",
    "cut_figure",
    "cut_model",
    "cut_plot_png",
    "gap_closing_index",
    "plot_legend",
    "range_endpoints",
    "strategy_table",
]

#: One colour per strategy: its boundary line on the plot.
STRATEGY_COLORS: dict[Strategy, str] = {
    "fixed": "#7f7f7f",
    "score-range": "#1f77b4",
    "largest-drop": "#d62728",
}
_KEPT, _CUT, _GAP, _FRONTMATTER = "#4c78a8", "#c7c7c7", "#ff7f0e", "#9467bd"
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
        return (
            f"top_k = {settings.top_k} chunks for the answer; search lists "
            f"{_count(len(search), 'note')} (up to top_k notes, read on down the whole pool)"
        )
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
    >>> [c.ordinal for c in model.kept]
    [1, 2]
    >>> print(model.summary)  # doctest: +NORMALIZE_WHITESPACE
    fixed keeps 2 of 3 chunks from 2 notes: top_k = 2 chunks for the answer;
    search lists 2 notes (up to top_k notes, read on down the whole pool)
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
            f"{settings.strategy} keeps {what} from {_count(_notes(kept), 'note')}: "
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
    """One row per strategy: its knob, the answer's context it keeps (``20 chunks from 9
    notes``), the notes its search lists, its boundary score.

    Search lists one row per note: under ``fixed``, ``top_k`` notes read on down the
    whole pool (so more notes than the context holds), under the others each note of
    the context. ``last kept score`` is the boundary chunk's score (NaN when nothing is
    kept); ``selected`` marks the strategy the settings name.

    >>> from askkit.ranking import pool_of
    >>> pool = pool_of([0.9, 0.8, 0.7, 0.3], ["/a.md", "/a.md", "/b.md", "/c.md"])
    >>> table = strategy_table(cut_model(pool, CutSettings(top_k=2)))
    >>> table["answer's context"].tolist()
    ['2 chunks from 1 note', '3 chunks from 2 notes', '4 chunks from 3 notes']
    >>> table["search lists"].tolist()
    ['2 notes', '2 notes', '3 notes']
    """
    rows = []
    for s in STRATEGIES:
        n = model.lengths[s]
        notes = _notes(model.pool[:n])
        settings = model.settings.replace(strategy=s)
        rows.append(
            {
                "strategy": s,
                "setting": settings.label,
                "answer's context": f"{_count(n, 'chunk')} from {_count(notes, 'note')}",
                "search lists": _count(len(search_rows(model.pool, settings)), "note"),
                "last kept score": model.pool[n - 1].similarity_score if n else math.nan,
                "selected": "◀" if s == model.settings.strategy else "",
            }
        )
    return pd.DataFrame(rows).set_index("strategy")


#: The cut plot's size in inches (its legend, below the axes, explains every mark).
PLOT_SIZE = (7.0, 3.9)
_DPI = 90
_LEGEND_FONT = 7.5


def cut_figure(
    model: CutModel, *, width: float = PLOT_SIZE[0], height: float = PLOT_SIZE[1]
) -> Any:
    """The cut plot as a matplotlib ``Figure`` (drawn, not rendered; :func:`cut_plot_png`
    renders it): the pool's scores by rank, each strategy's boundary, and a legend below
    the axes naming every mark (:func:`plot_legend`), so no label sits on the data.

    The selected strategy's kept chunks are filled, the rest grey; each
    strategy's boundary is a vertical line (the selected one solid); the
    score-range threshold is a dotted line, its high and low diamonds, and the
    largest-drop cut's gap-closing note a ringed point. matplotlib's ``Figure``,
    no pyplot: nothing global, nothing shown.
    """
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=_DPI, layout="constrained")
    ax = fig.subplots()
    _draw_cut(ax, model)
    handles = _legend_handles(model)
    if handles:
        legend = fig.legend(
            handles=handles,
            loc="outside lower center",
            ncols=2,
            fontsize=_LEGEND_FONT,
            frameon=False,
            handlelength=2.2,
            columnspacing=1.5,
        )
        for text in legend.get_texts():
            if text.get_text().startswith(model.settings.strategy + " "):
                text.set_fontweight("bold")  # the selected strategy
    return fig


def cut_plot_png(
    model: CutModel, *, width: float = PLOT_SIZE[0], height: float = PLOT_SIZE[1]
) -> bytes:
    """The cut plot (:func:`cut_figure`) as PNG bytes."""
    import io

    buf = io.BytesIO()
    cut_figure(model, width=width, height=height).savefig(buf, format="png")
    return buf.getvalue()


def _fate(model: CutModel, position: int) -> str:
    """What the selected strategy does with the chunk at 0-based ``position``."""
    strategy = model.settings.strategy
    kept = position < model.lengths[strategy]
    return f"{strategy} {'keeps' if kept else 'cuts'} it"


def plot_legend(model: CutModel) -> list[tuple[str, str]]:
    """What the cut plot's legend says, ``(mark, words)`` in its order: the kept and cut
    points, each strategy's boundary, the score-range threshold and its high and low,
    notes' frontmatter chunks (squared, when the pool has any), the largest-drop cut's
    gap-closing note with what the selected cut does with it.

    >>> from askkit.ranking import pool_of
    >>> model = cut_model(pool_of([0.9, 0.89, 0.5, 0.4]), CutSettings(strategy="fixed", top_k=2))
    >>> for mark, words in plot_legend(model):
    ...     print(f"{mark}: {words}")
    kept: kept by fixed (2 chunks, the answer's context)
    cut: cut by fixed (2 chunks)
    fixed: fixed top_k=2: keeps 2
    score-range: score-range cutoff=0.4: keeps 2
    largest-drop: largest-drop window=3..30: keeps 4
    threshold: score-range's threshold 0.6
    endpoints: score-range's high and low: the scores at ranks 1 and 4
    gap: gap-closing note, rank 4: the first below largest-drop's
    largest drop (largest-drop keeps it); fixed cuts it
    """
    n = len(model.pool)
    if not n:
        return []
    strategy = model.settings.strategy
    kept = model.lengths[strategy]
    out = [("kept", f"kept by {strategy} ({_count(kept, 'chunk')}, the answer's context)")]
    if kept < n:
        out.append(("cut", f"cut by {strategy} ({_count(n - kept, 'chunk')})"))
    out += [
        (s, f"{model.settings.replace(strategy=s).label}: keeps {model.lengths[s]}")
        for s in STRATEGIES
    ]
    threshold = model.ranged.threshold
    if threshold is not None and math.isfinite(threshold):
        out.append(("threshold", f"score-range's threshold {threshold:.4g}"))
    high, low = range_ranks(n)
    scores = [c.similarity_score for c in model.pool]
    if math.isfinite(scores[high - 1]) or math.isfinite(scores[low - 1]):
        ranks = f"rank {high}" if high == low else f"ranks {high} and {low}"
        out.append(("endpoints", f"score-range's high and low: the scores at {ranks}"))
    frontmatter = sum(is_frontmatter(c) for c in model.pool)
    if frontmatter:
        out.append(("frontmatter", f"a note's frontmatter ({frontmatter} of the {n} chunks)"))
    gap = gap_closing_index(model)
    if gap is not None and math.isfinite(scores[gap]):
        fate = "" if strategy == "largest-drop" else f"; {_fate(model, gap)}"
        out.append(
            (
                "gap",
                f"gap-closing note, rank {gap + 1}: the first below largest-drop's\n"
                f"largest drop (largest-drop keeps it){fate}",
            )
        )
    return out


def _legend_handles(model: CutModel) -> list[Any]:
    """The legend's handles: each mark of :func:`plot_legend` drawn as on the plot."""
    from matplotlib.lines import Line2D

    selected = model.settings.strategy
    handles = []
    for mark, words in plot_legend(model):
        if mark in ("kept", "cut"):
            color = _KEPT if mark == "kept" else _CUT
            handle = Line2D([], [], marker="o", linestyle="", markersize=5, color=color)
        elif mark in STRATEGY_COLORS:
            chosen = mark == selected
            handle = Line2D(
                [], [], color=STRATEGY_COLORS[mark],
                linestyle="-" if chosen else "--", linewidth=2.0 if chosen else 1.0,
            )  # fmt: skip
        elif mark == "threshold":
            color = STRATEGY_COLORS["score-range"]
            handle = Line2D([], [], color=color, linestyle=":", linewidth=1)
        elif mark == "frontmatter":
            handle = Line2D(
                [], [], marker="s", linestyle="", markersize=7, markerfacecolor="none",
                markeredgecolor=_FRONTMATTER, markeredgewidth=1.2,
            )  # fmt: skip
        elif mark == "endpoints":
            handle = Line2D(
                [], [], marker="D", linestyle="", markersize=6, markerfacecolor="none",
                markeredgecolor=STRATEGY_COLORS["score-range"], markeredgewidth=1.2,
            )  # fmt: skip
        else:  # the gap-closing note
            handle = Line2D(
                [], [], marker="o", linestyle="", markersize=10, markerfacecolor="none",
                markeredgecolor=_GAP, markeredgewidth=1.6,
            )  # fmt: skip
        handle.set_label(words)
        handles.append(handle)
    return handles


def _draw_range_endpoints(ax: Any, scores: Sequence[float]) -> None:
    """The score-range cut's high and low: the scores at 5% and 95% of the way down the
    pool, marked where they sit (the legend names their ranks; the top points can score
    above the high)."""
    color = STRATEGY_COLORS["score-range"]
    for rank in range_ranks(len(scores)):
        score = scores[rank - 1]
        if not math.isfinite(score):
            continue
        ax.scatter(
            [rank], [score], marker="D", s=36, facecolors="none", edgecolors=color,
            linewidths=1.2, zorder=3,
        )  # fmt: skip


def _draw_cut(ax: Any, model: CutModel) -> None:
    """The cut plot on ``ax``: scores by rank, each strategy's boundary (named in the
    figure's legend, never on the data)."""
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
    _draw_range_endpoints(ax, scores)
    marked = [i for i, c in enumerate(model.pool) if is_frontmatter(c) and math.isfinite(scores[i])]
    if marked:  # notes' frontmatter, which kimun ranks as any other section
        ax.scatter(
            [i + 1 for i in marked], [scores[i] for i in marked], marker="s", s=40,
            facecolors="none", edgecolors=_FRONTMATTER, linewidths=1.2, zorder=3,
        )  # fmt: skip
    gap = gap_closing_index(model)
    if gap is not None and math.isfinite(scores[gap]):
        ax.scatter(
            [gap + 1], [scores[gap]], s=90, facecolors="none", edgecolors=_GAP, linewidths=1.6,
            zorder=3,
        )  # fmt: skip
    for strategy, x in boundary_x(model).items():
        selected = strategy == model.settings.strategy
        ax.axvline(
            x,
            color=STRATEGY_COLORS[strategy],
            linestyle="-" if selected else "--",
            linewidth=2.0 if selected else 1.0,
            zorder=0,
        )
    ax.set_xlim(0, n + 1)
