"""askkit.cli._console: the command line's rich tables and turns."""

from __future__ import annotations

import math

import pytest
from rich.console import Console

from askkit import AskSource, Turn, VaultPath, read_turn
from askkit.cli._console import print_sources, print_turn, sources_table
from tests.conftest import DATA


def src(n: int, heading: str = "H", date: str | None = None, score: float = 0.5) -> AskSource:
    return AskSource(VaultPath(f"notes/n{n}.md"), heading, date, score, "text", n)


def render(draw: object) -> str:
    console = Console(width=160, record=True, color_system=None, highlight=False)
    if callable(draw):
        draw(console)
    else:
        console.print(draw)
    return console.export_text()


def lines_with(out: str, needle: str) -> list[str]:
    return [line for line in out.splitlines() if needle in line]


def test_sources_table_columns_and_rows() -> None:
    sources = [src(2, "Noon", "2026-04-08", 0.25), src(1, "", None, math.nan)]
    table = sources_table(sources, title="2 chunks")
    assert [c.header for c in table.columns] == ["n", "heading", "path", "date", "score"]
    out = render(table)
    assert out.splitlines()[0].startswith("2 chunks")
    row = lines_with(out, "[2]")[0]
    for shown in ("2026-04-08 · Noon", "notes/n2.md", "2026-04-08", "0.2500"):
        assert shown in row
    assert "—" in lines_with(out, "[1]")[0]  # no date
    assert "NaN" in lines_with(out, "[1]")[0]  # as every surface spells it
    assert out.index("[2]") < out.index("[1]")  # list order


def test_cited_column_marks_cited_ordinals() -> None:
    table = sources_table([src(1), src(2)], cited={2})
    assert [c.header for c in table.columns][-1] == "cited"
    out = render(table)
    assert "✓" not in lines_with(out, "[1]")[0]
    assert "✓" in lines_with(out, "[2]")[0]


@pytest.mark.parametrize("text", ["[bold]x[/bold]", "[red]", "[/]", "[link=http://e]y[/link]"])
def test_user_text_is_never_rich_markup(text: str) -> None:
    out = render(sources_table([src(1, heading=text)]))
    assert text in out
    turn_out = render(lambda c: print_turn(c, Turn(text, f"{text} [1]", [src(1)])))
    assert f"Q: {text}" in turn_out
    assert f"A: {text} [1]" in turn_out


def test_print_sources_says_when_empty() -> None:
    out = render(lambda c: print_sources(c, [], title="0 chunks", empty="nothing found"))
    assert "0 chunks" in out
    assert "nothing found" in out
    full = render(lambda c: print_sources(c, [src(1)], empty="nothing found"))
    assert "nothing found" not in full


def test_print_turn_flags_dangling_and_marks_cited() -> None:
    turn = read_turn(DATA / "answer_job.json", question="How often?")
    out = render(lambda c: print_turn(c, turn))
    assert out.startswith("Q: How often?")
    assert "cited with no source: [7]" in out
    cited = set(turn.cited_ordinals())
    for s in turn.sources:
        row = lines_with(out, f"[{s.ordinal}] ")[-1]
        assert ("✓" in row) == (s.ordinal in cited)


def test_print_turn_without_answer_has_no_cited_column() -> None:
    out = render(lambda c: print_turn(c, Turn("", "", [src(1)])))
    assert "A:" not in out
    assert "Q:" not in out
    assert "cited" not in out
