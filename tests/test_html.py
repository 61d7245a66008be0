"""askkit._html: static, escaped HTML for notebooks, widgets and the report."""

from __future__ import annotations

import html as stdlib_html
import math
import re

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from askkit import AskSource, ChunkResult, SourceList, Turn, VaultPath
from askkit import _html as h
from askkit.citations import scan
from tests import html_audit
from tests.conftest import load

EVIL = [
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    '<a href="javascript:alert(1)">x</a>',
]


def src(title: str = "T", text: str = "body", path: str = "a.md", ordinal: int = 1) -> AskSource:
    return AskSource.from_chunk(0, ChunkResult(path, title, None, text, "h", 0.5, ordinal))


def plain(
    n: int, heading: str = "H", date: str | None = None, score: float = 0.5, path: str = "a.md"
) -> AskSource:
    return AskSource(VaultPath(path), heading, date, score, f"text {n}", n, hash=f"h{n}")


def audit(markup: str) -> list[str]:
    return html_audit.audit(markup, stylesheet=h.CSS)


def text_of(markup: str) -> str:
    """The characters a browser shows (tags dropped, entities decoded)."""
    return stdlib_html.unescape(re.sub(r"<[^>]+>", "", markup))


# --------------------------------------------------------------------------- _repr_html_


@pytest.mark.parametrize("evil", EVIL)
def test_source_card_escapes_everything(evil: str) -> None:
    html = src(title=evil, text=evil, path=evil)._repr_html_()
    assert "<script>" not in html
    assert "<img" not in html
    assert "<a href" not in html
    assert "&lt;" in html
    assert audit(html) == []


@pytest.mark.parametrize("evil", EVIL)
def test_turn_view_escapes_question_and_answer(evil: str) -> None:
    turn = Turn(evil, f"{evil} [1] {evil}", [src(title=evil, text=evil)])
    html = turn._repr_html_()
    assert "<script>" not in html
    assert "<img" not in html
    assert '<a href="javascript' not in html
    assert audit(html) == []


def test_turn_view_links_citations_and_marks_dangling() -> None:
    job = load("answer_job.json")
    turn = Turn.from_answer("How often?", job["result"])
    html = turn._repr_html_()
    assert html.count('class="cite"') == 4
    assert html.count('class="dangling"') == 1  # the [7] marker
    assert html.count('class="askkit-dangling-note"') == 1
    assert "cited with no source: [7]" in html
    anchors = re.findall(r'href="#([^"]+)"', html)
    assert len(anchors) == 4
    for anchor in anchors:
        assert html.count(f'id="{anchor}"') == 1  # each link points at its source's row


def test_sources_table_lists_every_source() -> None:
    sources = SourceList([src(ordinal=i) for i in (3, 1, 2)])
    html = sources._repr_html_()
    assert html.count("<tr") == 4
    assert html.index("[3]") < html.index("[1]") < html.index("[2]")
    assert "<th>cited</th>" not in html  # a list has no answer


def test_empty_sources() -> None:
    assert "no sources" in SourceList()._repr_html_()


def test_notebook_outputs_carry_the_stylesheet() -> None:
    for out in (src()._repr_html_(), SourceList([src()])._repr_html_()):
        assert out.startswith(f'<div class="askkit"><style>{h.CSS}</style>')


# --------------------------------------------------------------------------- answers


def test_citation_links_bolds_or_marks_dangling() -> None:
    s = plain(2, "<i>Starter</i>", path="p/a&b.md")
    title = "&lt;i&gt;Starter&lt;/i&gt; — p/a&amp;b.md"
    link = h.citation("[2]", 2, s, anchor="t")
    assert link == f'<a class="cite" href="#t-2" title="{title}">[2]</a>'
    assert h.citation("[2]", 2, s) == f'<b class="cite" title="{title}">[2]</b>'
    dangling = h.citation("[9]", 9, None, anchor="t")
    assert 'class="dangling"' in dangling
    assert 'title="no source has ordinal 9"' in dangling
    assert "href" not in dangling


def test_answer_resolves_by_ordinal_not_position() -> None:
    turn = Turn("q", "a [2] b [1] c [[1]] d [3]", [plain(2, "Two"), plain(1, "One")])
    out = h.answer_html(turn)
    assert re.findall(r'title="(\w+) —', out) == ["Two", "One"]
    assert out.count('class="dangling"') == 1  # [3]; [[1]] is a wikilink, not a citation
    assert "[[1]]" in out


@given(
    answer=st.text(alphabet="ab [12]<&>\"'\n", max_size=40),
    ordinals=st.lists(st.integers(1, 3), max_size=3),
)
def test_answer_keeps_every_character_and_marks_each_citation(
    answer: str, ordinals: list[int]
) -> None:
    turn = Turn("q", answer, [plain(n) for n in ordinals])
    out = h.answer_html(turn, anchor="x")
    assert text_of(out) == answer
    assert out.count('class="cite"') + out.count('class="dangling"') == len(scan(answer))
    assert audit(out) == []


def test_question_and_dangling_note() -> None:
    assert "<i>(no question)</i>" in h.question_html("")
    assert "&lt;b&gt;" in h.question_html("<b>")
    assert h.dangling_note(Turn("q", "[1]", [plain(1)])) == ""
    note = h.dangling_note(Turn("q", "[4] [2] [4]", [plain(1)]))
    assert "cited with no source: [4], [2]</div>" in note


def test_turn_html_without_answer_and_with_extra_columns() -> None:
    turn = Turn("q", "", [plain(1), plain(2)])
    out = h.turn_html(turn, cited=[False, True], extra=[("grade", ["3", "<i>x</i>"])])
    assert "A:" not in out
    assert "<th>grade</th>" in out
    assert out.count("✓") == 1
    assert "<td><i>x</i></td>" in out  # extra cells are the caller's escaped HTML


# --------------------------------------------------------------------------- sources


def test_bar_scale() -> None:
    assert h.bar_scale([0.5, -2.0, math.nan, math.inf]) == 2.0
    assert h.bar_scale([]) == 1.0
    assert h.bar_scale([0.0, math.nan]) == 1.0


@pytest.mark.parametrize(
    ("score", "shown"),
    [
        (0.9, "width:60px"),
        (0.8, "width:53px"),
        (-0.45, "width:30px"),
        (math.inf, "width:60px"),
        (0.0, "width:0px"),
    ],
)
def test_score_bar_width(score: float, shown: str) -> None:
    cells = h.source_cells(plain(1, score=score), top=0.9)
    assert shown in cells.score
    assert f"{score:.4f}" in cells.score


def test_source_cells_edge_cases() -> None:
    nan = h.source_cells(plain(1, score=math.nan), top=1.0)
    assert "NaN" in nan.score
    assert "askkit-bar" not in nan.score
    no_heading = h.source_cells(plain(2, ""), top=1.0)
    assert no_heading.heading.endswith(">a</span>")  # the note's title (issue 40, item 6)
    assert "—" in no_heading.date
    journal = h.source_cells(plain(3, "Noon", "2026-04-08"), top=1.0)
    assert "2026-04-08 · Noon" in journal.heading
    assert journal.label == "[3]"
    assert h.source_cells(plain(4), cited=None).cited == ""
    assert "✓" in h.source_cells(plain(4), cited=True).cited
    assert "✓" not in h.source_cells(plain(4), cited=False).cited


def test_clipped_cells_keep_the_whole_value_in_the_tooltip() -> None:
    long = "<b>" + "x" * 300
    cells = h.source_cells(plain(1, long, path="deep/a&b.md"), clip=True)
    assert f'title="{h.esc(long)}"' in cells.heading
    assert "text-overflow:ellipsis" in cells.heading
    assert 'title="deep/a&amp;b.md">deep/a&amp;b.md</div>' in cells.path
    assert 'title="—"' in cells.date


def test_text_preview_is_flattened_and_cut() -> None:
    cells = h.source_cells(AskSource(VaultPath("a.md"), "H", None, 1, "a\n  b " + "c" * 400, 1))
    assert cells.text.startswith("a b ccc")
    assert cells.text.endswith("…")
    assert len(cells.text) == 240


def test_sources_table_rows_anchor_positions_and_selection() -> None:
    rows = [plain(5), plain(6), plain(5, path="b.md")]
    out = h.sources_table(rows, cited=[True, False, True], anchor="t", positions=[7, 8, 9])
    heads = re.findall(r"<th>([^<]*)</th>", out)
    assert heads == ["n", "heading", "path", "date", "score", "cited", "text"]
    assert re.findall(r'<tr id="([^"]+)" data-position="(\d+)"', out) == [
        ("t-5", "7"),
        ("t-6", "8"),
        ("t-5", "9"),
    ]
    assert "#e8f0fe" not in out
    chosen = h.sources_table(rows, positions=[7, 8, 9], selected=8)
    assert 'data-position="8" style="background:#e8f0fe"' in chosen
    assert chosen.count("background:#e8f0fe") == 1


def test_sources_table_scales_bars_to_top() -> None:
    rows = [plain(1, score=0.5), plain(2, score=0.25)]
    assert "width:60px" in h.sources_table(rows)
    assert "width:60px" not in h.sources_table(rows, top=1.0)


# --------------------------------------------------------------------------- one source


def test_source_title_and_meta() -> None:
    assert "no source selected" in h.source_title(None)
    assert h.source_title(plain(1, "")).endswith(">a</div>")  # shown_heading: the note's title
    s = plain(2, "Noon", "2026-04-08")
    meta = h.source_meta(s)
    for shown in ("a.md", "2026-04-08", "0.5000", "[2]"):
        assert f"<code>{shown}</code>" in meta
    assert "h2" not in meta  # the hash only where it matters: the note changed
    assert "changed since" not in h.source_meta(s, note_hash="h2")
    stale = h.source_meta(s, note_hash="<new>")
    assert (
        "changed since it was indexed (indexed hash <code>h2</code>, "
        "vault hash <code>&lt;new&gt;</code>)" in stale
    )


def test_issue40_10_a_pool_rank_is_said_in_words_and_only_a_citation_is_n_in_brackets() -> None:
    s = plain(21, "Noon")
    assert "ordinal <code>[21]</code>" in h.source_meta(s)  # an answer's source: cited by [21]
    pool = h.source_meta(s, numbering="pool")
    assert "rank <code>21</code> in the pool" in pool
    assert "[21]" not in pool
    assert "search rank <code>21</code>" in h.source_meta(s, numbering="search")
    assert h.ordinal_label(21, "pool") == ("rank", "21", " in the pool")


def test_highlight_escapes_around_matches() -> None:
    out = h.highlight("a & b <feed> feeding", ["feed", "amp"])
    assert "&amp;" in out  # the entity is never cut by a match
    assert "&lt;<mark" in out
    assert out.count("<mark") == 2
    assert h.highlight("<x>", []) == "&lt;x&gt;"


def test_note_html_window_puts_the_section_first() -> None:
    note = (
        "# Top\n"
        + "".join(f"line {i}\n" for i in range(30))
        + "## Here\nthe section\n## Next\nmore\n"
    )
    headings = frozenset({0, note.index("## Here"), note.index("## Next")})
    start = note.index("the section")
    html = h.note_html(note, (start, start + len("the section")), ["section"], headings=headings)
    assert html.index("<details") < html.index("## Here") < html.index(h.LOCATED_ID)
    assert "<summary>30 earlier lines</summary>" in html  # # Top and line 0-28
    assert "</details>line 29\n" in html  # CONTEXT_LINES lines stay above the section
    assert f'id="{h.LOCATED_ID}"' in html
    assert html.count('<b style="color:#1f3a68">') == 3  # heading lines in bold
    assert text_of(html).replace("30 earlier lines", "") == note
    top = h.note_html(note, None)
    assert "<details" not in top
    assert h.LOCATED_ID not in top
    assert "<b" not in top


def test_note_html_clamps_the_range() -> None:
    html = h.note_html("one\ntwo", (2, 99))
    assert text_of(html) == "one\ntwo"
    assert "<details" not in html


@pytest.mark.parametrize("evil", EVIL)
def test_reader_markup_is_safe(evil: str) -> None:
    s = AskSource(VaultPath(f"x/{evil}.md"), evil, evil, 0.3, evil, 1, hash=evil)
    note = f"# {evil}\n{evil}\n"
    for out in (
        h.source_title(s),
        h.source_meta(s, note_hash=evil),
        h.chunk_html(evil, ["alert", "img"]),
        h.note_html(note, (2, 10), ["alert", "onerror"], headings=frozenset({0})),
        h.source_card(s),
    ):
        assert audit(out) == [], out


# --------------------------------------------------------------------------- status lines


@pytest.mark.parametrize("evil", EVIL)
def test_status_lines_escape(evil: str) -> None:
    outputs = [
        h.message(evil, tone="error", lead=evil),
        h.heading_label(evil, evil),
        h.search_status(evil, 2, 0.0123),
        h.page_status(1, 2, 3, 4),
        h.section_status(0, [evil], located=True),
        h.grade_status((evil, evil, evil), 2, saved=True, count=1, file=evil),
        h.grade_status(None, None, saved=False, count=2, file=evil),
        h.hole_status(0, 2, 1, side=evil, rank=3, measures=evil, problem=evil),
    ]
    for out in outputs:
        assert audit(out) == [], out


def test_status_lines() -> None:
    assert h.search_status("q", 1, 0.0123) == "1 source for <b>q</b> in 12 ms"
    assert h.search_status("q", 3, 0.0) == "3 sources for <b>q</b> in 0 ms"
    assert h.page_status(1, 2, 30, 30) == "page 1 of 2 · 30 rows"
    assert h.page_status(2, 2, 1_500, 2_000) == "page 2 of 2 · 1,500 rows of 2,000"
    assert h.page_status(1, 1, 0, 0) == "<i>no sources</i>"
    assert "section not found" in h.section_status(None, [], located=False)
    assert h.section_status(None, [], located=True) == ""
    assert h.section_status(1, ["A", "A › B"], located=True) == "section 2 of 2: <b>A › B</b>"
    graded = h.grade_status(("q1", "a.md", ""), 3, saved=True, count=1, file="j.tsv")
    assert graded == (
        "<code>q1</code> · <code>a.md</code> · <i>(before the first heading)</i>: grade <b>3</b> "
        "(saved) · "
        "1 judgment in <code>j.tsv</code>"
    )
    assert "not graded" in h.grade_status(("q", "a.md", "H"), None, saved=False, count=0, file="")
    assert h.message("x", tone="muted").startswith('<div class="askkit-muted" style="color:#777;')


# --------------------------------------------------------------------------- data tables


def test_data_table_formats_and_escapes() -> None:
    frame = pd.DataFrame(
        {"<m>": [0.123456, math.nan], "n": [3, 4], "flag": [True, False], "s": ["<x>", "y"]},
        index=pd.Index(["<q1>", "q2"], name="query_id"),
    )
    out = h.data_table(frame, digits=3)
    assert re.findall(r"<th>([^<]*)</th>", out) == ["query_id", "&lt;m&gt;", "n", "flag", "s"]
    assert '<td>&lt;q1&gt;</td><td class="num">0.123</td><td class="num">3</td>' in out
    assert '<td class="num">NaN</td>' in out
    assert "<td>True</td>" in out
    assert "<td>&lt;x&gt;</td>" in out
    assert audit(out) == []


def test_data_table_of_a_series_and_of_nothing() -> None:
    out = h.data_table(pd.Series({"ndcg@10": 0.5}, name="mean"))
    assert re.findall(r"<th>([^<]*)</th>", out) == ["", "mean"]
    assert '<td>ndcg@10</td><td class="num">0.5000</td>' in out
    empty = h.data_table(pd.DataFrame({"a": []}))
    assert "<tbody></tbody>" in empty


def test_data_table_says_why_a_value_is_missing() -> None:
    series = pd.Series([0.5, math.nan], index=["mrr", "ndcg"], name="mean")
    assert "NaN" in h.data_table(series)  # the default is unchanged
    out = h.data_table(series, na="no <judged> queries")
    assert "NaN" not in out
    assert "nan" not in out.lower()
    assert "<i>no &lt;judged&gt; queries</i>" in out
    assert '<td class="num">0.5000</td>' in out


def test_a_turns_sources_table_is_in_citation_order_with_its_columns_aligned() -> None:
    import re

    from askkit import read_turn
    from askkit._html import SOURCES_ORDER, turn_html
    from tests.conftest import DATA

    turn = read_turn(DATA / "answer_job.json")
    assert [s.ordinal for s in turn.sources] == [4, 1, 6, 2, 3]
    extra = [("mark", [f"m{s.ordinal}" for s in turn.sources])]
    below = [f"b{s.ordinal}" for s in turn.sources]
    html = turn_html(turn, anchor="t", extra=extra, below=below)
    assert SOURCES_ORDER in html
    rows = re.findall(
        r'<tr id="t-(\d+)">(.*?)</tr><tr class="askkit-below"><td></td><td[^>]*>(.*?)</td>', html
    )
    assert [r[0] for r in rows] == ["1", "2", "3", "4", "6"]
    for ordinal, cells, under in rows:  # each row keeps its own extra cell and below
        assert f"<td>m{ordinal}</td>" in cells
        assert under == f"b{ordinal}"
    cited = {r[0]: "✓" in r[1] for r in rows}
    assert cited == {"1": True, "2": True, "3": True, "4": True, "6": False}


# --------------------------------------------------------------------------- issue 40


def test_issue40_6_a_heading_less_section_is_named_by_its_notes_title() -> None:
    untitled = plain(1, "", path="Plugins/Command palette.md")
    cells = h.source_cells(untitled, title="Command palette")
    assert cells.heading == (
        '<span title="Command palette — the note&#x27;s title: this section is the text '
        'before its first heading">Command palette</span>'
    )
    assert h.source_cells(untitled).heading.endswith(">command palette</span>")  # no vault
    clipped = h.source_cells(untitled, title="<b>Palette</b>", clip=True)
    assert 'title="&lt;b&gt;Palette&lt;/b&gt; — the note&#x27;s title' in clipped.heading
    assert "<b>Palette" not in clipped.heading
    assert audit(clipped.heading) == []
    table = h.sources_table(
        [untitled, plain(2, "", path="b.md")], titles={"plugins/command palette.md": "Palette"}
    )
    assert ">Palette</span>" in table
    assert ">b</span>" in table
    assert "(no heading)" not in table
    journal = h.source_cells(plain(3, "", "2026-04-08"), title="ignored")
    assert "2026-04-08" in journal.heading
    assert "title" not in journal.heading  # a journal section keeps its date, as kimun shows it


def test_issue40_10_clipped_cells_end_with_an_ellipsis_within_their_column() -> None:
    clipped = h.source_cells(plain(1, "H" * 300, path="deep/" * 50 + "a.md"), clip=True)
    for cell in (clipped.heading, clipped.path, clipped.date):
        assert "text-overflow:ellipsis;white-space:nowrap;width:0;min-width:100%" in cell
