"""askkit.cli._console: the command line's rich tables and turns."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from askkit import AskSource, Turn, VaultPath, read_turn
from askkit.cli._console import (
    fit_widths,
    frame_table,
    note_titles,
    print_sources,
    print_turn,
    records_table,
    search_title,
    sources_table,
)
from askkit.vault import Vault
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


# Issue 41, item 5: every table fits the width it is drawn at; text wraps at its blanks,
# identifiers and numbers stay whole, and no column is cut or left out.

WHY = (
    "Answer (score-range): cut: normalised 0.32 < cutoff 0.40 (score 1.87349 < threshold "
    "2.1326); the context keeps ranks 1-20; 1 of the 24 chunks ranked above it is a note's "
    "frontmatter (kimun indexes a note's properties block as a section titled 'FrontMatter')."
)


def lost_frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "query_id": ["q01", "q02"],
            "section": ["journal/2026-01-12.md#Evening", "baking/trouble.md#Sour enough to hurt"],
            "stage": ["cut", "cut"],
            "rank": [25, 37],
            "why": [WHY, "not in the candidate pool of 13 chunks (kimun retrieves 80)"],
        }
    )


def render_at(width: int, draw: object) -> str:
    console = Console(width=width, record=True, color_system=None, highlight=False)
    console.print(draw)
    return console.export_text()


def words_of(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("width", [80, 120, 160, 200])
def test_issue41_5_a_table_wraps_its_text_and_keeps_every_value_whole(width: int) -> None:
    frame = lost_frame()
    out = render_at(width, frame_table(frame, title="lost sections"))
    lines = out.splitlines()
    assert all(len(line) <= width for line in lines), out
    header = next(line for line in lines if line.startswith("query_id"))
    assert header.split() == list(frame.columns)  # no column left out
    for value in ("q01", "journal/2026-01-12.md#Evening", "cut", "25", "37"):
        assert any(value in line.split() for line in lines), value  # whole, on one line
    for sentence in frame["why"]:
        for word in sentence.split():  # each word whole: wrapped at blanks, never cut
            assert any(word in line.split() for line in lines), (word, out)


@pytest.mark.parametrize("width", [60, 80, 160])
def test_issue41_5_below_puts_the_sentence_under_its_row_across_the_table(width: int) -> None:
    frame = lost_frame()
    out = render_at(width, frame_table(frame, below="why"))
    lines = out.splitlines()
    assert all(len(line) <= width for line in lines), out
    assert lines[0].split() == ["query_id", "section", "stage", "rank"]
    first = next(i for i, line in enumerate(lines) if line.startswith("q01"))
    second = next(i for i, line in enumerate(lines) if line.startswith("q02"))
    under = lines[first + 1 : second]
    indent = len("query_id") + 3  # the first column and the gap after it
    assert under
    assert all(line.startswith(" " * indent) and line[indent] != " " for line in under)
    assert words_of(" ".join(under)) == words_of(WHY)  # every word, in order
    assert all(line == line.rstrip() for line in under)  # no trailing blanks
    assert words_of(" ".join(lines[second:])).endswith(words_of(frame["why"][1]))


def test_issue41_5_missing_values_show_a_dash_and_numbers_stay_right_aligned() -> None:
    frame = pd.DataFrame({"change": ["a pool of 331 chunks", "fixed top_k=49"]})
    frame["chunks"] = pd.Series([None, 45.8], dtype=object)
    frame["gained"] = pd.array([pd.NA, 12], dtype="Int64")
    out = render_at(80, frame_table(frame, digits=1))
    pool = next(line for line in out.splitlines() if line.startswith("a pool"))
    assert pool.split()[-2:] == ["—", "—"]
    kept = next(line for line in out.splitlines() if line.startswith("fixed"))
    assert kept.rstrip().endswith("45.8       12")
    assert "NaN" not in out
    assert "<NA>" not in out


@given(
    st.lists(st.tuples(st.integers(1, 300), st.integers(1, 300)), min_size=1, max_size=8).map(
        lambda pairs: [(max(a, b), min(a, b)) for a, b in pairs]
    ),
    st.integers(0, 1200),
)
def test_issue41_5_fit_widths_fits_and_keeps_each_minimum_while_it_can(
    columns: list[tuple[int, int]], room: int
) -> None:
    natural = [n for n, _ in columns]
    minimum = [m for _, m in columns]
    widths = fit_widths(natural, minimum, room)
    assert all(1 <= w <= n for w, n in zip(widths, natural, strict=True))
    if sum(natural) <= room:
        assert widths == natural
    elif sum(minimum) <= room:
        assert sum(widths) == room  # the room used, no more
        assert all(w >= m for w, m in zip(widths, minimum, strict=True))
    elif len(widths) <= room:
        assert sum(widths) == room
    else:
        assert widths == [1] * len(widths)  # too narrow for anything: one cell each


def test_issue41_5_the_sources_table_keeps_paths_whole_at_80_columns() -> None:
    turn = read_turn(DATA / "answer_job.json")
    table = sources_table(turn.sources, cited=set(turn.cited_ordinals()), title="x")
    narrow = render_at(80, table)
    assert all(len(line) <= 80 for line in narrow.splitlines())
    for s in turn.sources:  # each path whole, on the row of its number
        assert str(s.path) in lines_with(narrow, f"[{s.ordinal}]")[0]
    for word in {w for s in turn.sources for w in s.shown_heading().split()}:
        assert word in narrow.split()  # headings wrap at their blanks


# Issue 41, item 8: a section with no heading is named by its note's title as on disk,
# the rule the widgets use (AskSource.shown_heading), when the vault is known.


def test_issue41_8_a_section_with_no_heading_is_named_by_its_notes_title(
    tmp_path: Path,
) -> None:
    (tmp_path / "Plugins").mkdir()
    (tmp_path / "Plugins" / "Command palette.md").write_text("Opens commands.\n\n# Use\n\nx\n")
    untitled = AskSource(VaultPath("plugins/command palette.md"), "", None, 2.0, "Opens", 1)
    gone = AskSource(VaultPath("gone/old note.md"), "", None, 1.0, "x", 2)
    titled = AskSource(VaultPath("plugins/command palette.md"), "Use", None, 1.5, "x", 3)
    sources = [untitled, gone, titled]
    out = render(lambda c: print_sources(c, sources, vault=Vault(tmp_path)))
    assert "Command palette" in lines_with(out, "[1]")[0]  # as Obsidian titles the note
    assert "old note" in lines_with(out, "[2]")[0]  # not in the vault: the path's stem
    assert "Use" in lines_with(out, "[3]")[0]
    assert note_titles(Vault(tmp_path), sources) == {
        "plugins/command palette.md": "Command palette"
    }
    bare = render(lambda c: print_sources(c, sources))  # no vault: the printed stem
    assert "command palette" in lines_with(bare, "[1]")[0]


def test_issue41_8_every_search_title_has_one_form() -> None:
    assert search_title(10, "embed a note", 0.54) == "10 chunks for 'embed a note' in 0.5 ms"
    assert search_title(1, "x", 15.0) == "1 chunk for 'x' in 15.0 ms"


def test_issue41_5_a_title_spans_the_console_not_the_narrow_table_under_it() -> None:
    """A store's path above its small table (``askkit stores``) wraps at the console's
    width, not at the table's."""
    path = "/cache/dense-14141012241744416780-fastembed_sentence-transformers_all-MiniLM-L6-v2"
    rows = [{"vault id": "obsidian-help-en", "notes": 173, "chunks": 1733, "dimension": 384}]
    out = render_at(80, records_table(rows, list(rows[0]), title=path + "/embeddings.db"))
    lines = out.splitlines()
    assert lines[0] == (path + "/embeddings.db")[:80]
    assert lines[1].rstrip() == (path + "/embeddings.db")[80:]
    assert lines[2].split() == ["vault", "id", "notes", "chunks", "dimension"]
    assert lines[-1].split() == ["obsidian-help-en", "173", "1733", "384"]
