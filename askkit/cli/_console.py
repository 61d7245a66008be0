"""Terminal rendering for the command line (rich): the one place that builds its tables.

Every value goes into a :class:`rich.text.Text`, so a heading or an answer
holding ``[bold]`` or ``[/]`` is shown as written, never read as rich markup.

Every table is a :class:`FittedTable`: its columns are given their widths
when it is drawn, for the width it is drawn at (an 80-column terminal, a pipe,
which rich draws 80 wide, a 200-column one), by :func:`fit_widths`. A column
of identifiers and numbers keeps its values whole on one line; a column of
text (a heading, a path with blanks, a sentence) wraps at its blanks, never
inside a word while the table can fit; a column is never cut short, and no
column is ever left out. A long sentence about a row can go under it, across
the columns after the first (``below``), instead of a narrow column of its own.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich import box
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from askkit._text import number_label
from askkit.sources import AskSource, Turn

if TYPE_CHECKING:
    from rich.box import Box
    from rich.console import JustifyMethod

    from askkit.vault import Vault

__all__ = [
    "FittedTable",
    "TableColumn",
    "fit_widths",
    "frame_table",
    "note_titles",
    "print_sources",
    "print_turn",
    "records_table",
    "search_title",
    "sources_table",
]

#: What a missing value (``None``, ``pd.NA``) shows in a table.
MISSING = "—"


def fit_widths(natural: Sequence[int], minimum: Sequence[int], room: int) -> list[int]:
    """Column widths whose sum fits ``room`` cells, given each column's ``natural``
    width (its widest value) and its ``minimum`` (the widest it cannot wrap: its longest
    word, or its widest value for a column kept whole).

    When every column fits at its natural width, that is its width. Else the widest
    column above its minimum gives up a cell, again and again (so the widest columns
    wrap first, and evenly): no column goes below its minimum while another can still
    give. Only when every column is at its minimum and they still do not fit do the
    widest give up more, folding their longest values; a column keeps one cell at
    least, so none is ever left out.

    Examples
    --------
    >>> fit_widths([3, 40, 5], [3, 8, 5], 80)
    [3, 40, 5]
    >>> fit_widths([3, 40, 30], [3, 8, 12], 40)
    [3, 18, 19]
    >>> fit_widths([10, 10], [10, 10], 12)
    [6, 6]
    """
    widths = list(natural)
    floors = [min(m, w) for m, w in zip(minimum, widths, strict=True)]
    for floor in (floors, [1] * len(widths)):
        while (excess := sum(widths) - room) > 0:
            pool = [i for i, w in enumerate(widths) if w > floor[i]]
            if not pool:
                break
            widest = max(pool, key=lambda i: widths[i])  # the leftmost of the widest
            second = max((widths[j] for j in pool if j != widest), default=0)
            step = min(excess, widths[widest] - max(second, floor[widest]))
            widths[widest] -= max(step, 1)
    return widths


def _natural(text: Text) -> int:
    return max((Text(line).cell_len for line in text.plain.split("\n")), default=0)


def _longest_word(text: Text) -> int:
    return max((Text(word).cell_len for word in text.plain.split()), default=0)


@dataclass(frozen=True, slots=True)
class TableColumn:
    """One column of a :class:`FittedTable`: its header, its cells (one per row), how
    they align, whether they may wrap at their blanks (``wrap``; else each stays whole
    on its line), and a rich style."""

    header: str
    cells: list[Text]
    justify: JustifyMethod = "left"
    wrap: bool = False
    style: str | None = None

    def natural(self) -> int:
        """The width that shows the header and every cell on one line."""
        return max([_natural(Text(self.header)), *(_natural(c) for c in self.cells)])

    def minimum(self) -> int:
        """The narrowest width that cuts no word (``wrap``) or no value (else)."""
        header = _longest_word(Text(self.header))
        if not self.wrap:
            return max([header, *(_natural(c) for c in self.cells)])
        return max([header, *(_longest_word(c) for c in self.cells)])


@dataclass(frozen=True, slots=True)
class _Look:
    """How a table is drawn: rich's box, edges and padding."""

    box: Box | None
    show_edge: bool
    pad_edge: bool
    header_style: str = "table.header"


_HEAVY = _Look(box.HEAVY_HEAD, show_edge=True, pad_edge=True)
#: A light frame (a rule under the header, no outer border): more room for the values.
_LIGHT = _Look(box.SIMPLE_HEAD, show_edge=False, pad_edge=False)


class FittedTable:
    """A table whose column widths fit the width it is drawn at (:func:`fit_widths`).

    ``title`` goes above the table, wrapped at the console's width (not the
    table's); ``row_styles`` styles a row (``None``: plain); ``below`` holds, per
    row, a text drawn under that row across the columns after the first (for a
    table drawn without an outer edge, as :func:`frame_table` draws it).
    """

    def __init__(
        self,
        columns: Sequence[TableColumn],
        *,
        title: str = "",
        row_styles: Sequence[str | None] | None = None,
        below: Sequence[Text] | None = None,
        look: _Look = _LIGHT,
    ) -> None:
        self.columns = list(columns)
        self.title = title
        self.rows = len(self.columns[0].cells) if self.columns else 0
        self.row_styles = list(row_styles) if row_styles is not None else [None] * self.rows
        self.below = None if below is None else list(below)
        self.look = look

    @property
    def headers(self) -> list[str]:
        """The column headers, in order."""
        return [c.header for c in self.columns]

    def _table(self, widths: Sequence[int], rows: Sequence[int], *, header: bool) -> Table:
        look = self.look
        table = Table(
            box=look.box,
            show_edge=look.show_edge,
            pad_edge=look.pad_edge,
            show_header=header,
            header_style=look.header_style,
            expand=False,
        )
        for column, width in zip(self.columns, widths, strict=True):
            table.add_column(
                Text(column.header),
                justify=column.justify,
                style=column.style,
                width=width,
                overflow="fold",
            )
        for i in rows:
            table.add_row(*(c.cells[i] for c in self.columns), style=self.row_styles[i])
        return table

    def _overhead(self, console: Console, options: ConsoleOptions, columns: int) -> int:
        """The cells a table of ``columns`` columns takes beyond them (borders, padding)."""
        look = self.look
        table = Table(box=look.box, show_edge=look.show_edge, pad_edge=look.pad_edge)
        for _ in range(columns):
            table.add_column(width=1)
        wide = options.update(max_width=10**6)
        return Measurement.get(console, wide, table).maximum - columns

    def widths(self, console: Console, options: ConsoleOptions) -> list[int]:
        """Each column's width when drawn at ``options.max_width``."""
        overhead = self._overhead(console, options, len(self.columns))
        natural = [c.natural() for c in self.columns]
        minimum = [c.minimum() for c in self.columns]
        return fit_widths(natural, minimum, max(options.max_width - overhead, len(natural)))

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        overhead = self._overhead(console, options, len(self.columns))
        low = sum(c.minimum() for c in self.columns) + overhead
        high = sum(c.natural() for c in self.columns) + overhead
        return Measurement(low, high).with_maximum(options.max_width)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if self.title:
            yield Text(self.title, style="table.title")
        if not self.columns:
            return
        widths = self.widths(console, options)
        if self.below is None:
            yield self._table(widths, range(self.rows), header=True)
            return
        # the first column and the gap after it (no outer edge): where the text under starts
        indent = widths[0] + self._overhead(console, options, 2)
        yield self._table(widths, [], header=True)
        margin = Text(" " * indent)
        for i in range(self.rows):
            yield self._table(widths, [i], header=False)
            width = max(options.max_width - indent, 1)
            for line in self.below[i].wrap(console, width, justify="default", overflow="fold"):
                line.rstrip()
                yield margin + line


def note_titles(vault: Vault | None, sources: Sequence[AskSource]) -> dict[str, str]:
    """``{printed path: the note's title}`` for the sources a table names by their note's
    title (:meth:`AskSource.shown_heading`: a section before an undated note's first
    heading), by :func:`askkit.vault.note_titles`."""
    from askkit.vault import note_titles as titles_in

    return titles_in(vault, (str(s.path) for s in sources if s.before_first_heading))


def sources_table(
    sources: Sequence[AskSource],
    *,
    cited: set[int] | None = None,
    title: str = "",
    titles: Mapping[str, str] | None = None,
) -> FittedTable:
    """A table: ordinal, shown heading, path, date, score (and cited).

    ``cited`` holds the cited ordinals; ``None`` leaves the cited column out.
    ``titles`` (:func:`note_titles`) names a section before a note's first heading
    by its note's title, as Obsidian titles a note (default: the path's stem).
    """
    named = titles or {}
    headings = [Text(s.shown_heading(named.get(str(s.path)))) for s in sources]
    paths = [Text(str(s.path)) for s in sources]
    columns = [
        TableColumn("n", [Text(f"[{s.ordinal}]") for s in sources], "right", style="bold"),
        TableColumn("heading", headings, wrap=True),
        TableColumn("path", paths, wrap=True, style="cyan"),
        TableColumn("date", [Text(s.date or MISSING) for s in sources]),
        TableColumn("score", [Text(number_label(s.score)) for s in sources], "right"),
    ]
    if cited is not None:
        marks = [Text("✓" if s.ordinal in cited else "") for s in sources]
        columns.append(TableColumn("cited", marks, "center"))
    return FittedTable(columns, title=title, look=_HEAVY)


def search_title(count: int, query: str, elapsed_ms: float, *, where: str = "") -> str:
    """A search's title, the same for every retriever: ``10 chunks for 'q' in 0.5 ms``;
    ``where`` names what was searched when it is not the vault the user named (a
    server's store: ``in /var/lib/kimun/vectors``).

    >>> search_title(3, "embed a note", 15.83)
    "3 chunks for 'embed a note' in 15.8 ms"
    >>> search_title(1, "x", 2.0, where="in /srv/vectors")
    "1 chunk for 'x' in /srv/vectors in 2.0 ms"
    """
    place = f" {where}" if where else ""
    return f"{count} chunk{'' if count == 1 else 's'} for {query!r}{place} in {elapsed_ms:.1f} ms"


def print_sources(
    console: Console,
    sources: Sequence[AskSource],
    *,
    title: str = "",
    empty: str = "",
    vault: Vault | None = None,
) -> None:
    """Print :func:`sources_table`, then ``empty`` (in yellow) when there are no sources.

    With the ``vault`` they came from, a section before a note's first heading is
    named by the note's title as on disk (:func:`note_titles`).
    """
    console.print(sources_table(sources, title=title, titles=note_titles(vault, sources)))
    if not sources and empty:
        console.print(Text(empty, style="yellow"))


def print_turn(console: Console, turn: Turn) -> None:
    """Print the question, the answer (dangling citations flagged) and the sources table."""
    if turn.question:
        console.print(Text("Q: ", style="bold") + Text(turn.question))
    if turn.answer:
        console.print(Text("A: ", style="bold") + Text(turn.answer))
        dangling = turn.dangling_citations()
        if dangling:
            nums = ", ".join(f"[{n}]" for n in dangling)
            console.print(Text(f"cited with no source: {nums}", style="bold red"))
    cited = set(turn.cited_ordinals()) if turn.answer else None
    # by [n], the numbers the answer cites (a payload may list them in any order)
    by_number = sorted(turn.sources, key=lambda s: s.ordinal)
    console.print(sources_table(by_number, cited=cited, title="sources, by [n]"))


def _missing(value: Any) -> bool:
    """``None`` or pandas' ``NA`` (checked by name: this module does not import pandas)."""
    return value is None or type(value).__name__ == "NAType"


def _cell(value: Any, digits: int) -> Text:
    if _missing(value):
        return Text(MISSING)
    if isinstance(value, bool):
        return Text("✓" if value else "")
    if isinstance(value, float):
        return Text("NaN" if math.isnan(value) else f"{value:.{digits}f}")
    return Text(str(value))


def _numeric(values: list[Any]) -> bool:
    shown = [v for v in values if not _missing(v)]
    return bool(shown) and all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in shown
    )


def frame_table(
    frame: Any,
    *,
    title: str = "",
    digits: int = 3,
    highlight: int | None = None,
    below: str | None = None,
) -> FittedTable:
    """A table of a small frame's columns (no index): floats to ``digits``, bools as ✓,
    a missing value (``None``, ``pd.NA``) as ``—``.

    ``highlight`` is a row position shown in bold. Numbers are right-aligned. A
    column whose values hold blanks wraps at them; any other column keeps each
    value whole on its line (:class:`FittedTable`). ``below`` names a column of
    long text (a sentence per row) drawn under each row, across the other
    columns after the first, rather than as a narrow column of its own.
    """
    names = [str(name) for name in frame.columns]
    values = {name: frame.iloc[:, j].tolist() for j, name in enumerate(names)}  # Python scalars
    return _values_table(
        values, frame.shape[0], title=title, digits=digits, highlight=highlight, below=below
    )


def records_table(
    records: Sequence[Mapping[str, Any]], columns: Sequence[str], *, title: str = ""
) -> FittedTable:
    """:func:`frame_table` of a few records (dicts), without pandas: ``columns`` names
    the keys shown, in order.

    >>> table = records_table([{"vault id": "notes", "chunks": 480}], ["vault id", "chunks"])
    >>> table.headers
    ['vault id', 'chunks']
    """
    values = {name: [record[name] for record in records] for name in columns}
    return _values_table(values, len(records), title=title, digits=3, highlight=None, below=None)


def _values_table(
    values: Mapping[str, list[Any]],
    rows: int,
    *,
    title: str,
    digits: int,
    highlight: int | None,
    below: str | None,
) -> FittedTable:
    columns = []
    for name, column in values.items():
        if name == below:
            continue
        texts = [_cell(v, digits) for v in column]
        numeric = _numeric(column)
        wrap = not numeric and any(any(ch.isspace() for ch in t.plain) for t in texts)
        columns.append(TableColumn(name, texts, "right" if numeric else "left", wrap=wrap))
    styles = ["bold" if i == highlight else None for i in range(rows)]
    under = None if below is None else [_cell(v, digits) for v in values[below]]
    return FittedTable(columns, title=title, row_styles=styles, below=under)
