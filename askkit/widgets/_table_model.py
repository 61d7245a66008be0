"""The Sources view's model: a sources frame, filtered, sorted and paged.

Pure functions over a sources frame (:func:`askkit.frame.sources_frame`);
:class:`~askkit.widgets.SourcesView` only wires its controls to them, so
everything the view shows can be computed and tested without a widget.
Filtering and sorting are vectorized pandas operations on whole columns;
only the rows of the visible page become sources, shown with the cells of
:func:`askkit._html.source_cells`.

Positions
---------
The view works on **positions**: integer row numbers ``0..len(frame)-1``
into the frame (never its index labels, which a caller's frame may have
duplicated). A filter gives a boolean mask, sorting reorders the surviving
positions, and a page is a slice of them.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from askkit._html import SourceCells, bar_scale, source_cells, sources_table
from askkit.errors import SchemaError
from askkit.frame import empty_frame, sources_frame, to_sources
from askkit.sources import FRONTMATTER, FRONTMATTER_LABEL, AskSource, SourceList, Turn, VaultPath
from askkit.vault import note_titles

__all__ = [
    "SORT_KEYS",
    "TABLE_COLUMNS",
    "Filter",
    "RowCells",
    "as_sources_frame",
    "display_headings",
    "filter_mask",
    "has_dates",
    "note_titles",
    "page_count",
    "page_positions",
    "parse_min_score",
    "row_cells",
    "sort_positions",
    "source_at",
    "table_html",
    "titled_paths",
    "top_score",
    "visible_columns",
    "visible_positions",
]

Positions = npt.NDArray[np.int64]

#: The view's columns, in order: what the header shows for each.
TABLE_COLUMNS: dict[str, str] = {
    "ordinal": "n",
    "heading": "heading",
    "path": "path",
    "date": "date",
    "score": "score",
    "cited": "cited",
}

#: The frame column each view column sorts on (``heading`` sorts the display heading).
SORT_KEYS: dict[str, str] = {
    "ordinal": "ordinal",
    "heading": "display_heading",
    "path": "path",
    "date": "date",
    "score": "score",
    "cited": "cited",
    "rank": "rank",
}

_REQUIRED = ("path", "heading", "wire_date", "score", "text", "ordinal", "hash", "title")
_DATE_JOINER = " · "


def as_sources_frame(data: Any) -> pd.DataFrame:
    """A sources frame for any input the view takes, with a 0..n-1 index.

    ``data`` is a sources frame, a :class:`~askkit.Turn`, a
    :class:`~askkit.SourceList` or a list of :class:`~askkit.AskSource`
    (anything :func:`askkit.frame.sources_frame` reads). A frame is not
    copied or changed: a new frame sharing its columns is returned.

    >>> as_sources_frame([]).shape[0]
    0
    """
    if isinstance(data, pd.DataFrame):
        missing = [c for c in _REQUIRED if c not in data.columns]
        if missing:
            raise SchemaError(
                "not a sources frame (build it with askkit.frame.sources_frame)",
                field="columns",
                value=missing,
            )
        frame = data.reset_index(drop=True)
    elif data is None:
        frame = empty_frame()
    elif isinstance(data, Turn | SourceList) or (
        isinstance(data, Sequence) and not isinstance(data, str | bytes)
    ):
        frame = sources_frame(data)
    else:
        raise TypeError(
            "SourcesView takes sources (a SourceList or a list of AskSource), a Turn "
            f"or a sources frame, got {type(data).__name__}"
        )
    if "cited" not in frame.columns:
        frame = frame.assign(cited=np.zeros(len(frame), dtype=bool))
    if "date" not in frame.columns:
        frame = frame.assign(date=pd.to_datetime(frame["wire_date"], errors="coerce"))
    if "rank" not in frame.columns:
        frame = frame.assign(rank=np.arange(1, len(frame) + 1, dtype=np.int64))
    return frame


def _titled(frame: pd.DataFrame) -> npt.NDArray[np.bool_]:
    """Rows that are the text before an undated note's first heading (named by its title)."""
    heading = frame["heading"].fillna("").astype(str)
    return ((heading == "") & frame["wire_date"].isna()).to_numpy(dtype=bool)


def titled_paths(frame: pd.DataFrame) -> list[str]:
    """The distinct printed paths of the rows :meth:`AskSource.shown_heading` names by
    their note's title (a section before an undated note's first heading), in frame order.

    >>> from askkit import AskSource, VaultPath
    >>> titled_paths(as_sources_frame([AskSource(VaultPath("a.md"), "", None, 1, "t", 1),
    ...                                AskSource(VaultPath("b.md"), "B", None, 1, "t", 2)]))
    ['a.md']
    """
    paths = frame["path"].astype(str).to_numpy(dtype=object)[_titled(frame)]
    return list(dict.fromkeys(paths.tolist()))


def display_headings(frame: pd.DataFrame, titles: Mapping[str, str] | None = None) -> pd.Series:
    """:meth:`AskSource.shown_heading` for every row, vectorized (``titles``: the notes'
    titles by printed path, :func:`note_titles`; default each path's stem).

    >>> from askkit import AskSource, VaultPath
    >>> df = as_sources_frame([AskSource(VaultPath("j/2026-04-08.md"), "Noon", "2026-04-08",
    ...                                  0.5, "t", 1),
    ...                        AskSource(VaultPath("Plugins/Palette.md"), "", None, 0.4, "t", 2)])
    >>> display_headings(df).tolist(), display_headings(df, {"plugins/palette.md": "Palette"})[1]
    (['2026-04-08 · Noon', 'palette'], 'Palette')
    """
    heading = frame["heading"].fillna("").astype(str)
    heading = heading.where(heading != FRONTMATTER, FRONTMATTER_LABEL)
    date = frame["wire_date"]
    has_date = date.notna().to_numpy()
    has_heading = (heading != "").to_numpy()
    date_str = date.fillna("").astype(str)
    joined = date_str + _DATE_JOINER + heading
    out = np.where(has_date & has_heading, joined, np.where(has_date, date_str, heading))
    titled = _titled(frame)
    if titled.any():
        paths = frame["path"].astype(str).to_numpy(dtype=object)[titled]
        known = titles or {}
        out = out.astype(object)
        out[titled] = [known.get(p) or VaultPath.from_printed(p).stem for p in paths]
    return pd.Series(out, index=frame.index, dtype=heading.dtype)


def has_dates(frame: pd.DataFrame) -> bool:
    """Whether any row has a date (a journal note): without one, the date column is
    left out, a column of dashes says nothing.

    >>> from askkit import AskSource, VaultPath
    >>> has_dates(as_sources_frame([AskSource(VaultPath("a.md"), "A", None, 1, "t", 1)]))
    False
    """
    return bool(frame["wire_date"].notna().any())


def visible_columns(frame: pd.DataFrame, *, show_cited: bool) -> tuple[str, ...]:
    """The view's columns for ``frame``, in order: the date only when a row has one, the
    cited column only when asked.

    >>> from askkit import AskSource, VaultPath
    >>> visible_columns(as_sources_frame([]), show_cited=False)
    ('ordinal', 'heading', 'path', 'score')
    """
    hidden = {"date"} if not has_dates(frame) else set()
    if not show_cited:
        hidden.add("cited")
    return tuple(c for c in TABLE_COLUMNS if c not in hidden)


@dataclass(frozen=True, slots=True)
class Filter:
    """What the view keeps: every set criterion must hold.

    ``text`` matches the heading, the chunk text or the path; ``path`` the
    path; both case-insensitively as plain substrings. ``date_from`` and
    ``date_to`` are inclusive and drop undated rows when set. ``min_score``
    keeps scores ``>=`` it and drops NaN scores when set.
    """

    text: str = ""
    path: str = ""
    date_from: dt.date | None = None
    date_to: dt.date | None = None
    min_score: float | None = None

    @property
    def active(self) -> bool:
        """Whether any criterion is set."""
        return bool(
            self.text
            or self.path
            or self.date_from is not None
            or self.date_to is not None
            or self.min_score is not None
        )


def parse_min_score(text: str) -> float | None:
    """The minimum score typed in the filter box: ``None`` when blank or not a number.

    >>> [parse_min_score(t) for t in (" 0.5 ", "", "abc", "nan")]
    [0.5, None, None, None]
    """
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return None if math.isnan(value) else value


def _contains(series: pd.Series, needle: str) -> npt.NDArray[np.bool_]:
    hit = series.str.contains(needle, case=False, regex=False)
    return hit.fillna(False).to_numpy(dtype=bool)


def filter_mask(frame: pd.DataFrame, flt: Filter) -> npt.NDArray[np.bool_]:
    """A boolean mask over the frame's rows: the rows ``flt`` keeps.

    >>> from askkit import AskSource, VaultPath
    >>> df = as_sources_frame([AskSource(VaultPath("a.md"), "Starter", None, 0.9, "feed", 1),
    ...                        AskSource(VaultPath("b.md"), "Other", None, 0.1, "rye", 2)])
    >>> filter_mask(df, Filter(text="STARTER")).tolist()
    [True, False]
    >>> filter_mask(df, Filter(min_score=0.5)).tolist()
    [True, False]
    """
    mask = np.ones(len(frame), dtype=bool)
    if flt.text:
        mask = mask & (
            _contains(frame["heading"], flt.text)
            | _contains(frame["text"], flt.text)
            | _contains(frame["path"], flt.text)
            | _contains(frame["wire_date"], flt.text)
        )
    if flt.path:
        mask = mask & _contains(frame["path"], flt.path)
    if flt.date_from is not None or flt.date_to is not None:
        dates = frame["date"]
        keep = dates.notna().to_numpy()
        if flt.date_from is not None:
            keep = keep & (dates >= pd.Timestamp(flt.date_from)).to_numpy()
        if flt.date_to is not None:
            keep = keep & (dates <= pd.Timestamp(flt.date_to)).to_numpy()
        mask = mask & keep
    if flt.min_score is not None and not math.isnan(flt.min_score):
        mask = mask & (frame["score"] >= flt.min_score).to_numpy()
    return mask


def sort_positions(
    frame: pd.DataFrame,
    positions: Positions,
    sort_by: str | None,
    *,
    ascending: bool = True,
    titles: Mapping[str, str] | None = None,
) -> Positions:
    """``positions`` reordered by a view column; stable, missing values last.

    ``sort_by`` is a key of :data:`SORT_KEYS` or ``None`` (frame order); the
    heading column sorts the headings as shown (:func:`display_headings` with ``titles``).
    """
    if sort_by is None or sort_by == "" or len(positions) == 0:
        return positions
    if sort_by not in SORT_KEYS:
        raise ValueError(f"cannot sort by {sort_by!r}: choose one of {sorted(SORT_KEYS)}")
    column = SORT_KEYS[sort_by]
    subset = frame.iloc[positions]
    values = display_headings(subset, titles) if column == "display_heading" else subset[column]
    if column in {"display_heading", "path"}:
        values = values.str.lower()
    order = values.reset_index(drop=True).sort_values(
        ascending=ascending, kind="stable", na_position="last"
    )
    reordered: Positions = positions[order.index.to_numpy()]
    return reordered


def visible_positions(
    frame: pd.DataFrame,
    flt: Filter,
    sort_by: str | None,
    *,
    ascending: bool = True,
    titles: Mapping[str, str] | None = None,
) -> Positions:
    """The positions the view shows, in display order (filtered, then sorted)."""
    positions = np.arange(len(frame), dtype=np.int64)
    if flt.active:
        positions = positions[filter_mask(frame, flt)]
    return sort_positions(frame, positions, sort_by, ascending=ascending, titles=titles)


def page_count(rows: int, page_size: int) -> int:
    """How many pages ``rows`` rows fill (at least one, even when empty).

    >>> page_count(0, 20), page_count(20, 20), page_count(21, 20)
    (1, 1, 2)
    """
    if page_size < 1:
        raise ValueError(f"page_size must be >= 1, got {page_size}")
    return max(1, -(-rows // page_size))


def page_positions(positions: Positions, page: int, page_size: int) -> Positions:
    """The positions on 0-based ``page`` (clamped to the last page)."""
    last = page_count(len(positions), page_size) - 1
    page = min(max(page, 0), last)
    return positions[page * page_size : (page + 1) * page_size]


def top_score(frame: pd.DataFrame) -> float:
    """The score of a full bar: :func:`askkit._html.bar_scale` over the whole frame."""
    return bar_scale(frame["score"].to_numpy(dtype=np.float64))


@dataclass(frozen=True, slots=True)
class RowCells:
    """One row of the view: its position in the frame and its cells (:class:`SourceCells`)."""

    position: int
    cells: SourceCells


def row_cells(
    frame: pd.DataFrame,
    positions: Positions,
    *,
    top: float | None = None,
    titles: Mapping[str, str] | None = None,
) -> list[RowCells]:
    """The cells of the rows at ``positions`` (a page), in that order, one line each.

    Only these rows become :class:`~askkit.AskSource` objects; their cells are
    :func:`askkit._html.source_cells`, the bars scaled to ``top`` (default:
    the whole frame's :func:`top_score`), a section before a note's first heading
    named by its title in ``titles`` (:func:`note_titles`), else by its path's stem.
    """
    scale = top_score(frame) if top is None else top
    rows = frame.iloc[positions]
    cited = rows["cited"].tolist()
    known = titles or {}
    return [
        RowCells(
            int(pos),
            source_cells(src, top=scale, cited=bool(c), clip=True, title=known.get(str(src.path))),
        )
        for pos, src, c in zip(positions.tolist(), to_sources(rows), cited, strict=True)
    ]


def source_at(frame: pd.DataFrame, position: int) -> AskSource:
    """The :class:`AskSource` of the row at ``position`` (lossless, see ``to_sources``)."""
    return to_sources(frame.iloc[[position]])[0]


def table_html(
    frame: pd.DataFrame,
    positions: Positions,
    *,
    selected: int | None = None,
    show_cited: bool = True,
    top: float | None = None,
    titles: Mapping[str, str] | None = None,
) -> str:
    """The rows at ``positions`` (one page) as a static, escaped table
    (:func:`askkit._html.sources_table`), each row's ``data-position`` set and
    the ``selected`` one highlighted: the page the widget shows, for tests and
    the benchmark's baseline.
    """
    rows = frame.iloc[positions]
    return sources_table(
        to_sources(rows),
        cited=rows["cited"].tolist() if show_cited else None,
        top=top_score(frame) if top is None else top,
        positions=positions.tolist(),
        selected=selected,
        titles=titles,
    )
