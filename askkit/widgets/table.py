"""``SourcesView``: kimun's Sources view as a sortable, filterable, paged widget.

The widget wires its controls to the pure functions of
:mod:`askkit.widgets._table_model`; it holds the frame, the current filter,
sort and page, and a fixed pool of row widgets (one per row of a page) whose
values it updates, so paging through 100,000 rows never builds new widgets.
"""

from __future__ import annotations

import datetime as dt
import math
import os
from collections.abc import Callable
from typing import Any

import ipywidgets as w
import numpy as np
import pandas as pd
import traitlets
from ipywidgets.widgets.widget_string import HTMLStyle  # not re-exported at the top level

from askkit import _html
from askkit._gc import paused_gc
from askkit.sources import AskSource
from askkit.vault import Vault
from askkit.widgets._table_model import (
    TABLE_COLUMNS,
    Filter,
    Positions,
    as_sources_frame,
    has_dates,
    note_titles,
    page_count,
    page_positions,
    parse_min_score,
    row_cells,
    source_at,
    table_html,
    titled_paths,
    top_score,
    visible_columns,
    visible_positions,
)

__all__ = ["SourcesView"]

_WIDTHS = {
    "ordinal": "64px",
    "heading": "280px",
    "path": "220px",
    "date": "96px",
    "score": "150px",
    "cited": "64px",
}
_PAGE_SIZES = (10, 20, 50, 100)


def _cell_layout(column: str) -> w.Layout:
    return w.Layout(width=_WIDTHS[column], flex="0 0 auto", margin="0 2px", overflow="hidden")


class _Shared:
    """The layouts and styles every row of one view shares.

    One layout per column (a column is shown or hidden as a whole), one style
    for every cell and one for every button: a layout or a style is a widget
    of its own, and building one per cell was most of the cost of a new view.
    """

    def __init__(self) -> None:
        self.layouts = {c: _cell_layout(c) for c in TABLE_COLUMNS}
        self.cell_style = HTMLStyle()
        self.button_style = w.ButtonStyle()


class _Row:
    """One row of the pool: a select button and one HTML widget per cell."""

    def __init__(self, on_click: Callable[[int], None], shared: _Shared) -> None:
        layouts = shared.layouts
        self.position: int | None = None
        self.button = w.Button(
            description="", layout=layouts["ordinal"], style=shared.button_style, tooltip="select"
        )
        self.button.add_class("askkit-select")
        self.cells = {
            c: w.HTML(layout=layouts[c], style=shared.cell_style)
            for c in TABLE_COLUMNS
            if c != "ordinal"
        }
        self.box = w.HBox(  # its own layout: an empty row of a page is hidden alone
            [self.button, *self.cells.values()],
            layout=w.Layout(align_items="center", border_bottom="1px solid #eee"),
        )
        self.box.add_class("askkit-row")
        self.button.on_click(lambda _b: self.position is not None and on_click(self.position))


class SourcesView(w.VBox):  # type: ignore[misc]
    """One row per source: ``[n]``, heading, path, date, score bar, cited.

    Parameters
    ----------
    data:
        A :class:`~askkit.SourceList`, a list of :class:`~askkit.AskSource`, a
        :class:`~askkit.Turn` (its ``cited`` column marks cited sources) or a
        sources frame (:func:`askkit.frame.sources_frame`; not modified).
    page_size:
        Rows per page.
    show_cited:
        Show the cited column; ``None`` shows it when a row has an answer.
    vault:
        The vault the sources come from (a :class:`~askkit.vault.Vault` or its
        folder): a section before a note's first heading is then named by the
        note's title as on disk (``Command palette``), not by kimun's lowercased
        path (``command palette``): :meth:`AskSource.shown_heading`.

    Click a column header to sort by it (again to reverse); type in the
    filter boxes to filter; click a row's ``[n]`` to select it. Cells too long
    for their column end with an ellipsis (the whole value in a tooltip); the
    date column, and its filters, show only when a source has a date.

    Attributes
    ----------
    selected:
        The selected :class:`~askkit.AskSource` (``None`` when nothing is).
    selected_position:
        Its row number in :attr:`frame`.
    """

    selected = traitlets.Any(None, allow_none=True)
    selected_position = traitlets.Int(None, allow_none=True)
    page = traitlets.Int(0)
    page_size = traitlets.Int(20)
    sort_by = traitlets.Unicode("")
    ascending = traitlets.Bool(True)

    def __init__(
        self,
        data: Any = None,
        *,
        page_size: int = 20,
        show_cited: bool | None = None,
        vault: Vault | str | os.PathLike[str] | None = None,
    ) -> None:
        with paused_gc():  # the rows' widgets, next to the caller's many sources
            self.vault = vault if vault is None or isinstance(vault, Vault) else Vault(vault)
            self._frame = as_sources_frame(data)
            self._titles = note_titles(self.vault, titled_paths(self._frame))
            self._show_cited_option = show_cited
            self._positions: Positions = np.arange(len(self._frame), dtype=np.int64)
            self._top = top_score(self._frame)
            self._callbacks: list[Callable[[AskSource | None], None]] = []
            self._rows: list[_Row] = []
            self._shared = _Shared()
            self._busy = False
            self._build_controls(page_size)
            super().__init__()
            self.add_class("askkit-sources-view")
            self.page_size = page_size
            self._resize_pool(page_size)
            self._refresh()
            self.children = [self._filters, self._header, self._body, self._pager]

    # -- construction

    def _build_controls(self, page_size: int) -> None:
        # layouts passed in, not assigned after: a replaced default layout stays open
        wide, narrow = w.Layout(width="260px"), w.Layout(width="200px")
        self.text_filter = w.Text(
            placeholder="text, heading or path",
            description="filter",
            layout=wide,
            continuous_update=True,
        )
        self.path_filter = w.Text(
            placeholder="path contains", description="path", layout=wide, continuous_update=True
        )
        self.date_from = w.DatePicker(description="from", layout=narrow)
        self.date_to = w.DatePicker(description="to", layout=narrow)
        # a Text, not a FloatText: "no minimum" is an empty box (NaN does not survive JSON)
        self.min_score = w.Text(
            placeholder="none", description="min score", layout=narrow, continuous_update=False
        )
        self.clear_button = w.Button(description="clear filters", layout=w.Layout(width="110px"))
        controls = (
            self.text_filter,
            self.path_filter,
            self.date_from,
            self.date_to,
            self.min_score,
        )
        for ctl in controls:
            ctl.observe(self._on_filter, names="value")
        self.clear_button.on_click(lambda _b: self.clear_filters())
        self._date_filters = w.HBox([self.date_from, self.date_to])
        self._filters = w.VBox(
            [
                w.HBox([self.text_filter, self.path_filter, self.clear_button]),
                w.HBox([self._date_filters, self.min_score]),
            ]
        )
        self.sort_buttons: dict[str, w.Button] = {}
        for column, label in TABLE_COLUMNS.items():
            button = w.Button(description=label, layout=_cell_layout(column), tooltip="sort")
            button.add_class("askkit-sort")
            button.on_click(lambda _b, c=column: self.sort(c))
            self.sort_buttons[column] = button
        self._header = w.HBox(list(self.sort_buttons.values()))
        self._body = w.VBox()
        self.prev_button = w.Button(description="◀ prev", layout=w.Layout(width="80px"))
        self.next_button = w.Button(description="next ▶", layout=w.Layout(width="80px"))
        self.page_label = w.HTML()
        self.page_size_box = w.Dropdown(
            options=sorted({*_PAGE_SIZES, page_size}),
            value=page_size,
            description="rows",
            layout=w.Layout(width="140px"),
        )
        self.prev_button.on_click(lambda _b: self._go(self.page - 1))
        self.next_button.on_click(lambda _b: self._go(self.page + 1))
        self.page_size_box.observe(self._on_page_size_box, names="value")
        self._pager = w.HBox(
            [self.prev_button, self.next_button, self.page_size_box, self.page_label],
            layout=w.Layout(align_items="center"),
        )

    def __repr__(self) -> str:
        selected = self.selected
        chosen = f", selected [{selected.ordinal}]" if selected is not None else ""
        return (
            f"<SourcesView: {len(self._positions):,} of {len(self._frame):,} rows, "
            f"page {self.page + 1}/{page_count(len(self._positions), self.page_size)}{chosen}>"
        )

    def close(self) -> None:
        """Close the view and every widget in it: rows, controls, layouts, styles.

        ipywidgets keeps every open widget alive, and with this view its frame;
        closing releases them all (a plain container's ``close`` closes only
        itself). A closed view cannot be shown again.
        """
        seen: set[int] = set()
        stack: list[Any] = [self.layout, *self.children, *(row.box for row in self._rows)]
        while stack:
            widget = stack.pop()
            if not isinstance(widget, w.Widget) or id(widget) in seen:
                continue
            seen.add(id(widget))
            stack.extend(getattr(widget, "children", ()))
            stack.extend(getattr(widget, name, None) for name in ("layout", "style"))
            widget.close()
        super().close()

    # -- data

    @property
    def frame(self) -> pd.DataFrame:
        """The sources frame the view shows (index ``0..n-1``)."""
        return self._frame

    @property
    def positions(self) -> Positions:
        """The visible rows' positions in display order (after filter and sort)."""
        return self._positions

    @property
    def filter(self) -> Filter:
        """The filter the controls describe."""
        return Filter(
            text=self.text_filter.value,
            path=self.path_filter.value,
            date_from=self.date_from.value,
            date_to=self.date_to.value,
            min_score=parse_min_score(self.min_score.value),
        )

    @property
    def show_cited(self) -> bool:
        """Whether the cited column is shown."""
        if self._show_cited_option is not None:
            return self._show_cited_option
        frame = self._frame
        return bool("answer" in frame.columns and frame["answer"].fillna("").ne("").any())

    @property
    def titles(self) -> dict[str, str]:
        """``{printed path: the note's title}`` of the rows named by their note's title
        (empty without a vault): :func:`askkit.widgets._table_model.note_titles`."""
        return dict(self._titles)

    @property
    def columns(self) -> tuple[str, ...]:
        """The columns shown, in order (the date only when a source has one)."""
        return visible_columns(self._frame, show_cited=self.show_cited)

    def set_data(self, data: Any) -> None:
        """Show other sources; the selection is cleared, filters and sort stay."""
        self._frame = as_sources_frame(data)
        self._titles = note_titles(self.vault, titled_paths(self._frame))
        self._top = top_score(self._frame)
        self._clear_selection()
        self.page = 0
        self._refresh()

    def on_select(self, callback: Callable[[AskSource | None], None]) -> None:
        """Call ``callback(source)`` whenever the selection changes (``None`` when cleared)."""
        self._callbacks.append(callback)

    # -- actions

    def sort(self, column: str, ascending: bool | None = None) -> None:
        """Sort by a view column; the same column again reverses the order."""
        if column not in TABLE_COLUMNS and column != "rank":
            raise ValueError(f"cannot sort by {column!r}: choose one of {list(TABLE_COLUMNS)}")
        if ascending is None:
            ascending = not self.ascending if column == self.sort_by else column != "score"
        with self.hold_trait_notifications():
            self.sort_by = column
            self.ascending = ascending
        self._refresh()

    def set_filter(
        self,
        text: str | None = None,
        path: str | None = None,
        date_from: dt.date | None = None,
        date_to: dt.date | None = None,
        min_score: float | None = None,
    ) -> None:
        """Set filter criteria (those given); the controls show them."""
        self._busy = True
        try:
            if text is not None:
                self.text_filter.value = text
            if path is not None:
                self.path_filter.value = path
            if date_from is not None:
                self.date_from.value = date_from
            if date_to is not None:
                self.date_to.value = date_to
            if min_score is not None:
                self.min_score.value = "" if math.isnan(min_score) else repr(float(min_score))
        finally:
            self._busy = False
        self.page = 0
        self._refresh()

    def clear_filters(self) -> None:
        """Show every row again."""
        self._busy = True
        try:
            self.text_filter.value = ""
            self.path_filter.value = ""
            self.date_from.value = None
            self.date_to.value = None
            self.min_score.value = ""
        finally:
            self._busy = False
        self.page = 0
        self._refresh()

    def select(
        self, position: int | None = None, *, ordinal: int | None = None
    ) -> AskSource | None:
        """Select a row by position in :attr:`frame`, or the first row with ``ordinal``.

        The view turns to the selected row's page when it is visible. Returns
        the selected source (``None`` when nothing matches).
        """
        if ordinal is not None:
            hits = np.flatnonzero(self._frame["ordinal"].to_numpy() == ordinal)
            position = int(hits[0]) if hits.size else None
        if position is None:
            self._clear_selection()
            self._render_page()
            return None
        if not 0 <= position < len(self._frame):
            raise IndexError(f"no row {position}: the view has {len(self._frame)} rows")
        where = np.flatnonzero(self._positions == position)
        if where.size:
            self.page = int(where[0]) // self.page_size
        source = source_at(self._frame, position)
        with self.hold_trait_notifications():
            self.selected_position = position
            self.selected = source
        self._render_page()
        return source

    # -- observers

    @traitlets.observe("selected")
    def _notify(self, change: dict[str, Any]) -> None:
        for callback in list(self._callbacks):
            callback(change["new"])

    @traitlets.observe("page")
    def _on_page(self, change: dict[str, Any]) -> None:
        self._render_page()

    @traitlets.observe("page_size")
    def _on_page_size(self, change: dict[str, Any]) -> None:
        size = int(change["new"])
        if size < 1:
            raise traitlets.TraitError(f"page_size must be >= 1, got {size}")
        if self.page_size_box.value != size:
            if size not in self.page_size_box.options:
                self.page_size_box.options = sorted({*self.page_size_box.options, size})
            self.page_size_box.value = size
        self._resize_pool(size)
        self.page = 0
        self._render_page()

    def _resize_pool(self, size: int) -> None:
        while len(self._rows) < size:
            self._rows.append(_Row(self._clicked, self._shared))
        self._body.children = [r.box for r in self._rows[:size]]

    def _on_page_size_box(self, change: dict[str, Any]) -> None:
        self.page_size = int(change["new"])

    def _on_filter(self, change: dict[str, Any]) -> None:
        if self._busy:
            return
        self.page = 0
        self._refresh()

    def _clicked(self, position: int) -> None:
        self.select(position)

    # -- rendering

    def _clear_selection(self) -> None:
        with self.hold_trait_notifications():
            self.selected_position = None
            self.selected = None

    def _go(self, page: int) -> None:
        last = page_count(len(self._positions), self.page_size) - 1
        self.page = min(max(page, 0), last)

    def _refresh(self) -> None:
        """Recompute the visible positions (filter + sort) and show the current page."""
        self._positions = visible_positions(
            self._frame,
            self.filter,
            self.sort_by or None,
            ascending=self.ascending,
            titles=self._titles,
        )
        last = page_count(len(self._positions), self.page_size) - 1
        if self.page > last:
            self.page = last  # re-renders through the observer
        else:
            self._render_page()

    def page_rows(self) -> Positions:
        """The positions on the current page."""
        return page_positions(self._positions, self.page, self.page_size)

    def _render_page(self) -> None:
        if not self._rows:
            return
        rows = row_cells(self._frame, self.page_rows(), top=self._top, titles=self._titles)
        columns = self.columns
        for i, row in enumerate(self._rows[: self.page_size]):
            if i >= len(rows):
                row.position = None
                row.box.layout.display = "none"
                continue
            cells = rows[i].cells
            row.position = rows[i].position
            row.box.layout.display = None
            row.button.description = cells.label
            row.button.button_style = "info" if row.position == self.selected_position else ""
            for column, cell in row.cells.items():
                cell.value = getattr(cells, column)
        for column, layout in self._shared.layouts.items():  # one per column, every row's
            layout.display = None if column in columns else "none"
        dated = has_dates(self._frame)
        filtering_dates = self.date_from.value is not None or self.date_to.value is not None
        self._date_filters.layout.display = None if dated or filtering_dates else "none"
        for column, button in self.sort_buttons.items():
            button.layout.display = None if column in columns else "none"
            arrow = (" ▲" if self.ascending else " ▼") if column == self.sort_by else ""
            button.description = TABLE_COLUMNS[column] + arrow
        total = len(self._frame)
        shown = len(self._positions)
        pages = page_count(shown, self.page_size)
        self.page_label.value = _html.page_status(self.page + 1, pages, shown, total)
        self.prev_button.disabled = self.page == 0
        self.next_button.disabled = self.page >= pages - 1

    def html(self) -> str:
        """The current page as static, escaped HTML (what the rows show)."""
        return table_html(
            self._frame,
            self.page_rows(),
            selected=self.selected_position,
            show_cited=self.show_cited,
            top=self._top,
            titles=self._titles,
        )
