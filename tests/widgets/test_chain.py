"""ChainView: the trace's chain, the pool's cut plot, and a click that opens the reader."""

from __future__ import annotations

from pathlib import Path

from askkit.ranking import CutSettings, pool_of
from askkit.retrieve import LocalIndex
from askkit.trace import CHAIN_STAGES, trace_pool
from askkit.widgets import ChainView
from tests.widgets.test_safety import SCRIPT, _assert_safe

DATA = Path(__file__).resolve().parents[2] / "data"
QUESTION = "What ratio do I feed my sourdough starter at room temperature?"
SECTIONS = [("projects/sourdough.md", "Feeding schedule"), ("journal/2026-01-12.md", "Evening")]


def test_the_bundled_question_shows_each_section_across_the_stages() -> None:
    index = LocalIndex(DATA / "vault", cache_dir=False, progress=False)
    view = ChainView.ask(QUESTION, index, SECTIONS, vault=DATA / "vault")
    stops = {row.section: row.stopped for row in view.rows}
    assert stops == {
        "projects/sourdough.md#Feeding schedule": "context",
        "journal/2026-01-12.md#Evening": "cut",
    }
    assert "normalised 0.32 &lt; cutoff 0.40" in view.chain_html.value
    assert bytes(view.plot.value).startswith(b"\x89PNG")
    assert "score-range keeps 20 of 72 chunks" in view.cut_label.value
    assert [b.description for b in view.buttons] == [f"open {p}#{h}" for p, h in SECTIONS]
    view.buttons[1].click()  # the cut section opens in the reader at its chunk
    assert view.reader.source is not None
    assert str(view.reader.source.path) == "journal/2026-01-12.md"
    assert view.reader.source.innermost_heading == "Evening"
    assert view.reader.located is not None  # the section is highlighted in its note


def test_a_section_outside_the_pool_has_no_chunk_to_open() -> None:
    pool = pool_of([0.9, 0.5], ["/a.md", "/b.md"])
    view = ChainView(pool, ["/a.md", "/z.md"], CutSettings(strategy="fixed", top_k=1))
    assert [b.disabled for b in view.buttons] == [False, True]
    assert view.open_section("/z.md") is None
    opened = view.open_section("/a.md")
    assert opened is not None
    assert opened.ordinal == 1
    row = view.rows[1]
    assert row.cells[CHAIN_STAGES.index("pool")] == "out"


def test_the_chain_matches_the_trace_and_escapes_every_value() -> None:
    pool = pool_of([0.9, 0.5], [SCRIPT + ".md", "/b.md"])
    view = ChainView(pool, [(SCRIPT + ".md", None)], question=SCRIPT)
    _assert_safe(view.chain_html.value)
    frame = trace_pool(pool, [(SCRIPT + ".md", None)])
    assert view.frame.equals(frame)


def test_the_explorers_why_not_panel_traces_the_shown_query() -> None:
    from askkit.widgets import Explorer

    index = LocalIndex(DATA / "vault", cache_dir=False, progress=False)
    explorer = Explorer(index, vault=DATA / "vault")
    explorer.search(QUESTION)
    panel = explorer.chain_panel
    panel.sections_box.value = (
        "projects/sourdough.md#Feeding schedule, journal/2026-01-12.md#Evening"
    )
    panel.trace_button.click()
    assert panel.view is not None
    assert panel.selected_index == 0
    assert [row.stopped for row in panel.view.rows] == ["context", "cut"]
    assert "2 notes followed" in panel.status.value
    panel.view.buttons[1].click()
    assert panel.view.reader.source is not None


def test_the_why_not_panel_shows_an_error_instead_of_losing_it() -> None:
    from askkit.widgets import Explorer

    explorer = Explorer(LocalIndex(DATA / "vault", cache_dir=False, progress=False))
    explorer.chain_panel.sections_box.value = "a.md"
    explorer.chain_panel.trace_button.click()  # no query yet
    assert "run a query first" in explorer.chain_panel.status.value
    assert explorer.chain_panel.view is None


def test_hardening_39_7_a_chain_on_a_vault_with_an_unreadable_note_reads_only_its_sections(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.md").write_text("# A\n## Intro\nhello\n")
    (tmp_path / "bad.md").write_bytes(b"# Bad\n\xff\n")  # no section of interest: never read
    (tmp_path / "judged-bad.md").write_bytes(b"# Judged\n\xfe\n")
    pool = pool_of([0.9, 0.5], ["/a.md", "/judged-bad.md"])
    view = ChainView(pool, [("a.md", "Intro"), ("judged-bad.md", None)], vault=tmp_path)
    rows = view.frame[view.frame["stopped"]].set_index("section")
    assert rows.loc["a.md#Intro", "stage"] != "sectioned"
    assert rows.loc["judged-bad.md", "stage"] == "sectioned"
    assert "not valid UTF-8" in rows.loc["judged-bad.md", "why"]
