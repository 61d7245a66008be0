"""The ``askkit`` command line.

``askkit sources FILE``  show the sources of a saved payload as a table.
``askkit prompt FILE``   show the sources framed as kimun's prompt frames them.

Errors print one line on stderr and exit with status 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from askkit.citations import scan
from askkit.errors import AskkitError
from askkit.payloads import read_turn
from askkit.prompt import frame_sources
from askkit.sources import SourceList, Turn

__all__ = ["main", "sources_table"]


def sources_table(sources: SourceList, *, cited: set[int] | None = None, title: str = "") -> Table:
    """A rich table: ordinal, display heading, path, date, score (and cited)."""
    table = Table(title=title or None, title_justify="left", expand=False)
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
            Text(s.display_heading()),
            Text(str(s.path)),
            Text(s.date or "—"),
            Text(f"{s.score:.4f}"),
        ]
        if cited is not None:
            row.append(Text("✓" if s.ordinal in cited else ""))
        table.add_row(*row)
    return table


def _print_turn(console: Console, turn: Turn) -> None:
    if turn.question:
        console.print(Text("Q: ", style="bold") + Text(turn.question))
    if turn.answer:
        console.print(Text("A: ", style="bold") + Text(turn.answer))
        dangling = turn.dangling_citations()
        if dangling:
            nums = ", ".join(f"[{n}]" for n in dangling)
            console.print(Text(f"cited with no source: {nums}", style="bold red"))
    cited = {c.index for c in scan(turn.answer)} if turn.answer else None
    console.print(sources_table(turn.sources, cited=cited))


def _cmd_sources(args: argparse.Namespace, console: Console) -> int:
    _print_turn(console, read_turn(args.file))
    return 0


def _cmd_prompt(args: argparse.Namespace, console: Console) -> int:
    turn = read_turn(args.file)
    console.print(Text(frame_sources([s.to_chunk() for s in turn.sources])), end="")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (also used to document the commands)."""
    parser = argparse.ArgumentParser(
        prog="askkit", description="Inspect what kimun's Ask feature retrieved, and why."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("sources", help="show a saved payload's sources as a table")
    p.add_argument("file", help="a JSON answer job, answer result, turn or embeddings response")
    p.set_defaults(func=_cmd_sources)
    p = sub.add_parser("prompt", help="show the sources as kimun's prompt frames them")
    p.add_argument("file", help="a JSON answer job, answer result, turn or embeddings response")
    p.set_defaults(func=_cmd_prompt)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    console = Console(highlight=False)
    try:
        return int(args.func(args, console))
    except AskkitError as exc:
        Console(stderr=True, highlight=False).print(Text(f"askkit: error: {exc}", style="red"))
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
