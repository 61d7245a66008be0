"""The chain model and its HTML: every stage a cell, the stop marked, values escaped."""

from __future__ import annotations

from askkit.ranking import pool_of
from askkit.trace import CHAIN_STAGES, chain_rows, trace_html, trace_pool


def test_each_section_is_a_row_with_a_cell_per_stage() -> None:
    pool = pool_of([0.9, 0.8, 0.2, 0.1], ["/a.md", "/b.md", "/c.md", "/d.md"])
    frame = trace_pool(pool, ["/a.md", "/c.md", "/z.md"], query_id="q1", answer="[2]")
    rows = {row.section: row for row in chain_rows(frame)}
    assert rows["/a.md"].cells == ("yes", "#1", "#1", "#1", "#1", "[1]", "[1] not cited")
    assert rows["/a.md"].tones[-1] == "lost"
    assert rows["/c.md"].stopped == "cut"
    assert rows["/c.md"].tones[CHAIN_STAGES.index("cut")] == "lost"
    assert rows["/c.md"].why.startswith("Answer (score-range): cut:")
    assert rows["/z.md"].cells[CHAIN_STAGES.index("pool")] == "out"
    assert rows["/z.md"].cells[-1] == "·"


def test_the_html_escapes_paths_headings_and_sentences() -> None:
    hostile = "<img src=x onerror=alert(1)>"
    pool = pool_of([0.9, 0.1], [f"{hostile}.md", "/b.md"])
    frame = trace_pool(pool, [(f"{hostile}.md", None), ("/b.md", hostile)])
    out = trace_html(frame, question="why <not>?")
    assert "<img" not in out
    assert "_img src=x onerror=alert(1)_.md" in out  # a typed path, printed as kimun prints it
    assert "/b.md#&lt;img src=x onerror=alert(1)&gt;" in out  # a heading is the note's own
    assert "why &lt;not&gt;?" in out
    assert out.count("<tr>") == 3  # the header and two sections


def test_a_note_missing_from_search_is_not_marked_as_lost() -> None:
    pool = pool_of([0.9, 0.8, 0.2, 0.1], ["/a.md", "/b.md", "/c.md", "/d.md"])
    row = chain_rows(trace_pool(pool, ["/c.md"]))[0]
    search = CHAIN_STAGES.index("search")
    assert (row.cells[search], row.tones[search]) == ("not listed", "none")
    assert row.tones[CHAIN_STAGES.index("cut")] == "lost"


def test_issue40_6_the_chain_line_counts_the_frontmatter_the_cut_keeps() -> None:
    from askkit.ranking import CutSettings
    from askkit.trace import frontmatter_note

    pool = pool_of([0.9, 0.8, 0.7, 0.6, 0.5], section="FrontMatter")
    pool[0] = pool_of([0.95], ["/a.md"])[0]
    note = frontmatter_note(pool, CutSettings(strategy="fixed", top_k=3))
    assert note.startswith(
        "2 of the 3 chunks the cut keeps are notes' frontmatter (ranks 2 and 3; 4 of the "
        "pool's 5 chunks): kimun indexes a note's properties block as a section titled "
        "'FrontMatter'"
    )
    assert frontmatter_note(pool, CutSettings(strategy="fixed", top_k=1)) == ""
    assert frontmatter_note(pool_of([0.9, 0.8])) == ""


def test_issue42_the_html_says_each_questions_unjudged_sections_escaped() -> None:
    from askkit.ranking import CutSettings
    from askkit.trace import Interest, unjudged_lines

    hostile = "<img src=x onerror=alert(1)>"
    pool = pool_of([0.9, 0.8, 0.7, 0.1], ["/u.md", "/r.md", "/w.md", "/c.md"], section=hostile)
    grades = {Interest("/r.md"): 1, Interest("/c.md"): 2, Interest("/w.md", hostile): -1}
    top3 = CutSettings(strategy="fixed", top_k=3)
    frame = trace_pool(pool, ["/r.md", "/c.md"], top3, query_id="q<1>", grades=grades)
    assert unjudged_lines(frame) == [
        f"q<1>: the cut kept 2 unjudged sections, 1 of them above the lowest relevant section "
        f"it kept (rank 2): '/u.md#{hostile}' and '/w.md#{hostile}' (judge them next: they "
        "may be relevant)"
    ]
    out = trace_html(frame)
    assert "<img" not in out
    assert "q&lt;1&gt;: the cut kept 2 unjudged sections, 1 of them above" in out
    assert "&#x27;/w.md#&lt;img src=x onerror=alert(1)&gt;&#x27; (judge them next" in out
    assert unjudged_lines(trace_pool(pool, ["/r.md"], top3)) == []  # no judgments, no line
