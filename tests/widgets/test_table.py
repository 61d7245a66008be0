"""SourcesView and its model: filter, sort, page, select (headless, real widgets)."""

from __future__ import annotations

import datetime as dt
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from askkit import AskSource, Turn, VaultPath, _html, read_turn
from askkit.frame import sources_frame
from askkit.vault import Vault
from askkit.widgets import SourcesView
from askkit.widgets._table_model import (
    Filter,
    as_sources_frame,
    display_headings,
    filter_mask,
    has_dates,
    note_titles,
    page_count,
    page_positions,
    row_cells,
    sort_positions,
    table_html,
    titled_paths,
    visible_columns,
    visible_positions,
)
from tests.conftest import DATA


def src(
    n: int, path: str, heading: str, date: str | None, score: float, text: str = "t"
) -> AskSource:
    return AskSource(VaultPath(path), heading, date, score, text, n, hash=f"h{n}")


@pytest.fixture
def sources() -> list[AskSource]:
    return [
        src(1, "projects/sourdough.md", "Sourdough › Starter", None, 0.9, "feed the starter"),
        src(2, "journal/2026-04-08.md", "Afternoon", "2026-04-08", 0.8, "baked a loaf"),
        src(3, "journal/2026-03-29.md", "", "2026-03-29", 0.8, "rest day"),
        src(4, "garden/tomatoes.md", "Tomatoes", None, math.nan, "water daily"),
        src(5, "baking/rye.md", "Rye › Hydration", None, 0.2, "rye needs water"),
    ]


# -- model ----------------------------------------------------------------------------------


def test_as_sources_frame_takes_every_input(sources: list[AskSource]) -> None:
    frame = sources_frame(sources)
    assert len(as_sources_frame(sources)) == 5
    assert len(as_sources_frame(frame)) == 5
    turn = read_turn(DATA / "answer_job.json")
    assert as_sources_frame(turn)["cited"].tolist() == [True, True, False, True, True]
    assert len(as_sources_frame(None)) == 0
    with pytest.raises(TypeError):
        as_sources_frame(42)


def test_as_sources_frame_never_mutates_the_callers_frame(sources: list[AskSource]) -> None:
    frame = sources_frame(sources).set_index(np.array([7, 7, 7, 8, 9]))
    before = frame.copy()
    out = as_sources_frame(frame.drop(columns=["cited"]))
    assert list(out.index) == [0, 1, 2, 3, 4]
    assert not out["cited"].any()
    pd.testing.assert_frame_equal(frame, before)


def test_display_headings_follow_askSource(sources: list[AskSource]) -> None:
    frame = as_sources_frame(sources)
    assert display_headings(frame).tolist() == [s.display_heading() for s in sources]


@pytest.mark.parametrize(
    ("flt", "expected"),
    [
        (Filter(), [0, 1, 2, 3, 4]),
        (Filter(text="WATER"), [3, 4]),
        (Filter(text="starter"), [0]),
        (Filter(text="2026-03"), [2]),
        (Filter(path="journal/"), [1, 2]),
        (Filter(date_from=dt.date(2026, 4, 1)), [1]),
        (Filter(date_to=dt.date(2026, 4, 1)), [2]),
        (Filter(date_from=dt.date(2026, 3, 29), date_to=dt.date(2026, 4, 8)), [1, 2]),
        (Filter(min_score=0.8), [0, 1, 2]),
        (Filter(min_score=0.8, path="journal"), [1, 2]),
        (Filter(min_score=math.nan), [0, 1, 2, 3, 4]),
    ],
)
def test_filter(sources: list[AskSource], flt: Filter, expected: list[int]) -> None:
    frame = as_sources_frame(sources)
    assert np.flatnonzero(filter_mask(frame, flt)).tolist() == expected


def test_sort_is_stable_with_missing_last(sources: list[AskSource]) -> None:
    frame = as_sources_frame(sources)
    pos = np.arange(5, dtype=np.int64)
    assert sort_positions(frame, pos, "score", ascending=False).tolist() == [0, 1, 2, 4, 3]
    assert sort_positions(frame, pos, "score", ascending=True).tolist() == [4, 1, 2, 0, 3]
    assert sort_positions(frame, pos, "date").tolist() == [2, 1, 0, 3, 4]
    assert sort_positions(frame, pos, "path").tolist() == [4, 3, 2, 1, 0]
    assert sort_positions(frame, pos, "ordinal", ascending=False).tolist() == [4, 3, 2, 1, 0]
    assert sort_positions(frame, pos, "heading").tolist() == [2, 1, 4, 0, 3]
    assert sort_positions(frame, pos, None).tolist() == [0, 1, 2, 3, 4]
    with pytest.raises(ValueError, match="cannot sort"):
        sort_positions(frame, pos, "nope")


def test_paging() -> None:
    pos = np.arange(45, dtype=np.int64)
    assert page_count(45, 20) == 3
    assert page_positions(pos, 2, 20).tolist() == list(range(40, 45))
    assert page_positions(pos, 99, 20).tolist() == list(range(40, 45))
    assert page_positions(np.arange(0, dtype=np.int64), 0, 20).tolist() == []
    with pytest.raises(ValueError, match="page_size"):
        page_count(3, 0)


def test_row_cells_escape_and_bar(sources: list[AskSource]) -> None:
    frame = as_sources_frame(sources)
    rows = row_cells(frame, np.array([4, 0, 1, 2, 3], dtype=np.int64))
    assert [r.position for r in rows] == [4, 0, 1, 2, 3]
    cells = [r.cells for r in rows[1:]]
    assert cells[0].label == "[1]"
    assert "width:60px" in cells[0].score  # the top score fills the bar
    assert "width:53px" in cells[1].score
    assert "NaN" in cells[3].score
    assert "2026-04-08 · Afternoon" in cells[1].heading
    assert "(no heading)" not in cells[2].heading  # the date alone is the display heading
    assert "text-overflow:ellipsis" in cells[0].heading  # one line per row in the widget
    assert "width:13px" in rows[0].cells.score  # bars scale to the whole frame, not the page
    assert "width:13px" in row_cells(frame, np.array([4], dtype=np.int64))[0].cells.score
    html = table_html(frame, np.arange(5, dtype=np.int64), selected=1)
    assert html.count("<tr data-position") == 5
    assert 'data-position="1" style="background' in html
    assert "<th>cited</th>" in html
    assert "<th>cited</th>" not in table_html(frame, np.arange(5, dtype=np.int64), show_cited=False)


def test_the_view_shows_the_markup_of_html(sources: list[AskSource]) -> None:
    """Each pooled cell holds exactly _html.source_cells' markup for its row."""
    view = SourcesView(Turn("q", "see [2]", sources), page_size=3)
    top = _html.bar_scale([s.score for s in sources])
    for row, source in zip(view._rows, sources[:3], strict=True):
        expected = _html.source_cells(source, top=top, cited=source.ordinal == 2, clip=True)
        assert row.button.description == expected.label
        for column, cell in row.cells.items():
            assert cell.value == getattr(expected, column)
    assert view.html() == table_html(view.frame, view.page_rows(), top=top)


def test_the_frame_of_sources_with_repeated_paths_is_sources_frame() -> None:
    """A list of sources sharing paths builds the same frame, path parts computed per path."""
    paths = ["a.md", "j/2026-04-08.md", "/abs/n.md", "x/../y/./z.md", "a/ /b.md", " /lead.md"]
    sources = [
        AskSource(
            VaultPath(paths[i % len(paths)]),
            f"H{i % 7}",
            "2026-04-08" if i % 3 == 0 else None,
            math.nan if i == 50 else 1.0 - i / 100,
            f"text {i}",
            i + 1,
            hash=f"h{i % 5}",
        )
        for i in range(100)
    ]
    frame = as_sources_frame(sources)
    expected = sources_frame(sources)
    pd.testing.assert_frame_equal(frame[expected.columns], expected)
    assert frame["path"].tolist() == [str(s.path) for s in sources]
    assert frame["note"].tolist() == [s.path.stem for s in sources]
    assert frame["folder"].tolist() == [s.path.folder for s in sources]
    assert frame["rank"].tolist() == list(range(1, 101))
    assert not frame["cited"].any()


def test_empty_list_and_one_source() -> None:
    assert visible_positions(as_sources_frame([]), Filter(), "score").tolist() == []
    view = SourcesView([])
    assert "no sources" in view.page_label.value
    one = SourcesView([src(1, "a.md", "A", None, 0.5)])
    assert one.positions.tolist() == [0]
    assert one._rows[0].button.description == "[1]"


# -- widget ---------------------------------------------------------------------------------


def test_view_sort_by_header_click(sources: list[AskSource]) -> None:
    view = SourcesView(sources)
    view.sort_buttons["score"].click()  # score sorts best first
    assert (view.sort_by, view.ascending) == ("score", False)
    assert view.page_rows().tolist() == [0, 1, 2, 4, 3]
    assert view.sort_buttons["score"].description == "score ▼"
    view.sort_buttons["score"].click()
    assert view.ascending
    view.sort_buttons["path"].click()
    assert [r.button.description for r in view._rows[:5]] == ["[5]", "[4]", "[3]", "[2]", "[1]"]


def test_view_filters_through_controls(sources: list[AskSource]) -> None:
    view = SourcesView(sources)
    view.text_filter.value = "water"
    assert view.positions.tolist() == [3, 4]
    assert "2 rows of 5" in view.page_label.value
    assert view._rows[2].box.layout.display == "none"
    view.min_score.value = "0.1"
    assert view.positions.tolist() == [4]
    view.date_from.value = dt.date(2026, 1, 1)
    assert view.positions.tolist() == []
    view.clear_button.click()
    assert view.positions.tolist() == [0, 1, 2, 3, 4]
    view.set_filter(path="journal", date_to=dt.date(2026, 3, 31))
    assert view.positions.tolist() == [2]
    assert view.path_filter.value == "journal"
    view.clear_filters()
    view.min_score.value = "not a number"  # ignored, not an error
    assert view.positions.tolist() == [0, 1, 2, 3, 4]
    view.set_filter(min_score=0.85)
    assert view.min_score.value == "0.85"
    assert view.positions.tolist() == [0]


def test_view_paging_and_page_size() -> None:
    many = [src(i, f"n/{i}.md", f"H{i}", None, 1 / i) for i in range(1, 46)]
    view = SourcesView(many, page_size=10)
    assert view.page_label.value.startswith("page 1 of 5")
    assert view.prev_button.disabled
    view.next_button.click()
    assert view.page == 1
    assert view._rows[0].button.description == "[11]"
    view.page = 4
    assert view.next_button.disabled
    assert [r.box.layout.display for r in view._rows[:10]].count("none") == 5
    view.page_size_box.value = 50
    assert view.page_size == 50
    assert view.page == 0
    assert view.page_label.value.startswith("page 1 of 1")
    view.page_size = 7
    assert len(view._body.children) == 7
    assert 7 in view.page_size_box.options


def test_view_select_click_and_callback(sources: list[AskSource]) -> None:
    view = SourcesView(sources)
    seen: list[AskSource | None] = []
    view.on_select(seen.append)
    view._rows[1].button.click()
    assert view.selected == sources[1]
    assert view.selected_position == 1
    assert seen == [sources[1]]
    assert view._rows[1].button.button_style == "info"
    assert view.select(ordinal=5) == sources[4]
    assert view.select(ordinal=99) is None
    assert view.selected is None
    assert seen[-1] is None
    with pytest.raises(IndexError):
        view.select(10)


def test_view_select_turns_to_the_rows_page() -> None:
    many = [src(i, f"n/{i}.md", f"H{i}", None, 1 / i) for i in range(1, 46)]
    view = SourcesView(many, page_size=10)
    view.select(ordinal=33)
    assert view.page == 3
    assert view._rows[2].button.button_style == "info"


def test_view_from_turn_and_frame_marks_cited() -> None:
    turn = read_turn(DATA / "answer_job.json")
    view = SourcesView(turn)
    assert view.show_cited
    assert "✓" in view._rows[0].cells["cited"].value
    assert "✓" not in view._rows[2].cells["cited"].value  # [6] is not cited
    plain = SourcesView(list(turn.sources))
    assert not plain.show_cited
    assert plain._rows[0].cells["cited"].layout.display == "none"
    framed = SourcesView(sources_frame(turn))
    assert framed.selected is None
    assert framed.select(ordinal=2) == turn.source_for_citation(2)


def test_view_set_data_clears_selection(sources: list[AskSource]) -> None:
    view = SourcesView(sources)
    view.select(0)
    view.sort("score")
    view.set_data(sources[:2])
    assert view.selected is None
    assert view.sort_by == "score"
    assert view.positions.tolist() == [0, 1]


def test_duplicate_ordinals_select_the_first() -> None:
    a = src(1, "a.md", "A", None, 0.5)
    b = src(1, "b.md", "B", None, 0.9)
    view = SourcesView(Turn("q", "see [1]", [a, b]))
    assert view.select(ordinal=1) == a


def test_hundred_thousand_rows_page_quickly(capsys: pytest.CaptureFixture[str]) -> None:
    """Not a timed assertion: prints the figures (see benchmarks/widgets_bench.py)."""
    import time

    n = 100_000
    rng = np.random.default_rng(0)
    frame = sources_frame([src(1, "a.md", "A", "2026-01-01", 0.5)])
    frame = frame.iloc[np.zeros(n, dtype=np.int64)].reset_index(drop=True)
    frame["score"] = rng.random(n)
    frame["ordinal"] = np.arange(1, n + 1)
    started = time.perf_counter()
    view = SourcesView(frame, page_size=50)
    built = time.perf_counter() - started
    started = time.perf_counter()
    view.sort("score")
    view.set_filter(min_score=0.5)
    filtered = time.perf_counter() - started
    assert len(view.positions) == int((frame["score"] >= 0.5).sum())
    assert view.frame["score"].iloc[view.page_rows()].is_monotonic_decreasing
    with capsys.disabled():
        print(
            f"\n100,000 rows: build + first page {built * 1000:.0f} ms, "
            f"sort + filter + page {filtered * 1000:.0f} ms"
        )


def test_rows_share_one_layout_per_column_within_a_view_only() -> None:
    from askkit import AskSource, VaultPath

    sources = [AskSource(VaultPath(f"n{i}.md"), "H", None, 0.5, "t", i + 1) for i in range(3)]
    one, two = SourcesView(sources, page_size=10), SourcesView(sources, page_size=10)
    rows = one._rows
    assert len(rows) == 10
    assert all(r.cells["path"].layout is rows[0].cells["path"].layout for r in rows)
    assert rows[0].cells["path"].layout is not rows[0].cells["score"].layout
    assert two._rows[0].cells["path"].layout is not rows[0].cells["path"].layout
    assert all(r.cells["path"].style is rows[0].cells["heading"].style for r in rows)
    assert all(r.button.style is rows[0].button.style for r in rows)
    assert two._rows[0].button.style is not rows[0].button.style


def test_closing_a_view_closes_every_widget_in_it_and_frees_its_frame() -> None:
    import gc
    import weakref

    from ipywidgets.widgets.widget import _instances

    sources = [AskSource(VaultPath(f"n{i}.md"), "H", None, 0.5, "t", i + 1) for i in range(30)]
    before = set(_instances)
    view = SourcesView(sources, page_size=10)
    view.page_size = 50  # rows past the page size stay in the pool, hidden
    view.page_size = 10
    opened = set(_instances) - before
    assert len(opened) > 100
    frame = weakref.ref(view.frame)
    view.close()
    assert not set(_instances) - before, "widgets left open"
    del view
    gc.collect()
    assert frame() is None


def test_building_a_view_leaves_the_collector_as_it_found_it() -> None:
    import gc

    from askkit import AskSource, VaultPath

    sources = [AskSource(VaultPath("a.md"), "H", None, 0.5, "t", 1)]
    SourcesView(sources)
    assert gc.isenabled()
    gc.disable()
    try:
        SourcesView(sources)
        assert not gc.isenabled()
    finally:
        gc.enable()


# -- issue 40 -------------------------------------------------------------------------------


def untitled_vault(tmp_path: Path) -> Path:
    """Notes whose first section has no heading, named as Obsidian users name them."""
    (tmp_path / "Plugins").mkdir()
    (tmp_path / "Plugins" / "Command palette.md").write_text("Press Ctrl+P.\n\n# Usage\n\nx\n")
    (tmp_path / "What's new?.md").write_text("Release notes.\n")
    return tmp_path


@pytest.fixture
def untitled() -> list[AskSource]:
    return [
        src(1, "Plugins/Command palette.md", "", None, 6.0),
        src(2, "What's new?.md", "", None, 5.0),
        src(3, "gone.md", "", None, 4.0),  # not in the vault (deleted since indexed)
        src(4, "plugins/command palette.md", "Usage", None, 3.0),
        src(5, "journal/2026-03-29.md", "", "2026-03-29", 2.0),
    ]


def test_issue40_6_the_model_names_heading_less_sections_by_their_notes_title(
    tmp_path: Path, untitled: list[AskSource]
) -> None:
    frame = as_sources_frame(untitled)
    assert titled_paths(frame) == ["plugins/command palette.md", "what's new_.md", "gone.md"]
    titles = note_titles(Vault(untitled_vault(tmp_path)), titled_paths(frame))
    assert titles == {
        "plugins/command palette.md": "Command palette",
        "what's new_.md": "What's new?",  # as on disk, where kimun prints `_`
    }
    assert note_titles(None, titled_paths(frame)) == {}
    expected = ["Command palette", "What's new?", "gone", "Usage", "2026-03-29"]
    assert display_headings(frame, titles).tolist() == expected
    assert display_headings(frame, titles).tolist() == [
        s.shown_heading(titles.get(str(s.path))) for s in untitled
    ]
    assert display_headings(frame).tolist()[:3] == ["command palette", "what's new_", "gone"]
    cells = [r.cells.heading for r in row_cells(frame, np.arange(5, dtype=np.int64), titles=titles)]
    assert ">Command palette</span>" in cells[0]
    assert "the note&#x27;s title" in cells[0]  # the tooltip says what the name is
    assert all("(no heading)" not in c for c in cells)
    by_heading = sort_positions(frame, np.arange(5, dtype=np.int64), "heading", titles=titles)
    assert by_heading.tolist() == [4, 0, 2, 3, 1]
    assert ">What&#x27;s new?</span>" in table_html(
        frame, np.arange(5, dtype=np.int64), titles=titles
    )


def test_issue40_6_the_view_reads_titles_from_its_vault(
    tmp_path: Path, untitled: list[AskSource]
) -> None:
    view = SourcesView(untitled, vault=untitled_vault(tmp_path))
    shown = [row.cells["heading"].value for row in view._rows[:2]]
    assert "Command palette" in shown[0]
    assert "What&#x27;s new?" in shown[1]
    view.set_data(untitled[3:])
    assert view.titles == {}
    assert "command palette" in SourcesView(untitled)._rows[0].cells["heading"].value


def test_issue40_10_the_date_column_is_left_out_when_no_source_has_a_date(
    sources: list[AskSource],
) -> None:
    undated = [s for s in sources if s.date is None]
    frame = as_sources_frame(undated)
    assert not has_dates(frame)
    assert visible_columns(frame, show_cited=True) == (
        "ordinal",
        "heading",
        "path",
        "score",
        "cited",
    )
    assert "date" in visible_columns(as_sources_frame(sources), show_cited=False)
    view = SourcesView(undated)
    assert "date" not in view.columns
    assert view._rows[0].cells["date"].layout.display == "none"
    assert view.sort_buttons["date"].layout.display == "none"
    assert view._date_filters.layout.display == "none"
    view.set_data(sources)  # a journal note among them: the column comes back
    assert "date" in view.columns
    assert view._rows[0].cells["date"].layout.display is None
    assert view.sort_buttons["date"].layout.display is None
    assert view._date_filters.layout.display is None


def test_issue40_10_a_cut_cell_ends_with_an_ellipsis_inside_its_column(
    sources: list[AskSource],
) -> None:
    # ipywidgets puts a cell's HTML in a flex item that grows to its text unless the
    # text's length is kept out of its sizing: then the cell cut it mid-letter
    long = src(1, "a/" + "deep/" * 40 + "note.md", "Heading " * 40, None, 0.5)
    view = SourcesView([long])
    for column in ("heading", "path"):
        value = view._rows[0].cells[column].value
        style = re.search(r'<div style="([^"]+)"', value)
        assert style is not None
        rules = dict(rule.split(":", 1) for rule in style.group(1).split(";"))
        assert rules["text-overflow"] == "ellipsis"
        assert rules["white-space"] == "nowrap"
        assert (rules["width"], rules["min-width"]) == ("0", "100%")
