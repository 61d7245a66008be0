"""Terminal rendering for the command line (rich): the one place that builds its tables.

Every value goes into a :class:`rich.text.Text`, so a heading or an answer
holding ``[bold]`` or ``[/]`` is shown as written, never read as rich markup.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from askkit._text import number_label
from askkit.sources import AskSource, Turn

__all__ = ["frame_table", "print_sources", "print_turn", "sources_table"]


def sources_table(
    sources: Sequence[AskSource], *, cited: set[int] | None = None, title: str = ""
) -> Table:
    """A rich table: ordinal, display heading, path, date, score (and cited).

    ``cited`` holds the cited ordinals; ``None`` leaves the cited column out.
    """
    table = Table(title=Text(title) if title else None, title_justify="left", expand=False)
    table.add_column("n", justify="right", style="bold")
    table.add_column("heading")
    table.add_column("path", style="cyan", overflow="fold", min_width=12)
    table.add_column("date")
    table.add_column("score", justify="right")
    if cited is not None:
        table.add_column("cited", justify="center")
    for s in sources:
        row = [
            Text(f"[{s.ordinal}]"),
            Text(s.shown_heading()),
            Text(str(s.path)),
            Text(s.date or "—"),
            Text(number_label(s.score)),
        ]
        if cited is not None:
            row.append(Text("✓" if s.ordinal in cited else ""))
        table.add_row(*row)
    return table


def print_sources(
    console: Console, sources: Sequence[AskSource], *, title: str = "", empty: str = ""
) -> None:
    """Print :func:`sources_table`, then ``empty`` (in yellow) when there are no sources."""
    console.print(sources_table(sources, title=title))
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


def _cell(value: Any, digits: int) -> Text:
    if isinstance(value, bool):
        return Text("✓" if value else "")
    if isinstance(value, float):
        return Text("NaN" if math.isnan(value) else f"{value:.{digits}f}")
    return Text(str(value))


def frame_table(
    frame: Any, *, title: str = "", digits: int = 3, highlight: int | None = None
) -> Table:
    """A rich table of a small frame's columns (no index): floats to ``digits``, bools as ✓.

    ``highlight`` is a row position shown in bold. Numbers are right-aligned.
    A value is never cut: in a narrow terminal the headers wrap (``mean_`` /
    ``chunks``) and each column keeps the width of its widest value.
    """
    # a light frame (a rule under the header, no outer border): more room for the values
    table = Table(
        title=Text(title) if title else None,
        title_justify="left",
        expand=False,
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
    )
    columns = [frame.iloc[:, j].tolist() for j in range(frame.shape[1])]  # Python scalars
    cells = [[_cell(v, digits) for v in values] for values in columns]
    for name, values, texts in zip(frame.columns, columns, cells, strict=True):
        numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
        table.add_column(
            Text(str(name)),
            justify="right" if numeric and values else "left",
            overflow="fold",
            min_width=max((t.cell_len for t in texts), default=1),
        )
    for i in range(frame.shape[0]):
        style = "bold" if i == highlight else None
        table.add_row(*(texts[i] for texts in cells), style=style)
    return table
