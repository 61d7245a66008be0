"""ChainView: the trace's chain, the pool's cut plot, and a click that opens the reader."""

from __future__ import annotations

from pathlib import Path

import pytest

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


# -- issue 40 ----------------------------------------------------------------------------

EMBED = "Linking notes and files/Embed files.md#Embed a note in another note"  # as on disk


def _typed(text: str) -> tuple[str, str | None]:
    from askkit.trace import typed_section

    return typed_section(text)


def _embed_vault(root: Path) -> Path:
    """Notes named as the Obsidian help names them: capitals and spaces on disk."""
    folder = root / "Linking notes and files"
    folder.mkdir(parents=True)
    (folder / "Embed files.md").write_text(
        "---\naliases:\n  - embed a note\ncssclasses:\n  - soft-embed\n---\n# Embed files\n"
        "## Embed a note in another note\nTo embed a note, write ![[Internal links]].\n"
        "## Embed a PDF in a note\nEmbed a PDF too.\n"
    )
    (folder / "Internal links.md").write_text(
        "---\naliases:\n  - note links\n---\n# Internal links\n## Link to a heading\nA note.\n"
    )
    (root / "Home.md").write_text("# Home\nWelcome to the notes.\n")
    return root


def test_issue40_2_the_why_not_panel_takes_a_path_as_on_disk_and_names_the_closest(
    tmp_path: Path,
) -> None:
    from askkit.widgets import Explorer

    vault = _embed_vault(tmp_path)
    explorer = Explorer(LocalIndex(vault, cache_dir=False, progress=False), vault=vault)
    explorer.search("embed a note")
    panel = explorer.chain_panel
    panel.sections_box.value = f"{EMBED}, Linking notes and files/Embed file.md"
    panel.trace_button.click()
    assert panel.view is not None
    found, typo = panel.view.rows
    assert found.section == "linking notes and files/embed files.md#Embed a note in another note"
    assert found.stopped != "sectioned"  # was: "... is not in the vault"
    assert (typo.stopped, typo.passed) == ("sectioned", False)
    status = panel.status.value
    assert (
        "2 notes followed; 1 stopped at the vault: linking notes and files/embed file.md" in status
    )
    assert "the closest notes: &#x27;linking notes and files/embed files.md&#x27;" in status
    assert panel.view.open_section(EMBED) is not None  # typed as on disk, opened
    printed = "linking notes and files/embed files.md#Embed a note in another note"
    assert panel.view.row(printed) is found  # and as kimun prints it
    with pytest.raises(KeyError, match=r"the closest: 'linking notes and files/embed files\.md#"):
        panel.view.row("Linking notes and files/Embed files.md#Embed a notes in another")


def test_issue40_2_on_the_obsidian_vault_a_section_typed_as_on_disk_is_traced() -> None:
    from tests.corpora import corpus

    vault = corpus("obsidian-help-en")
    index = LocalIndex(vault, cache_dir=False, progress=False)
    heading = "Embed a note in another note"
    view = ChainView.ask("embed a note", index, [_typed(EMBED)], vault=vault)
    (row,) = view.rows
    assert (row.section, row.stopped) == (
        f"linking notes and files/embed files.md#{heading}",
        "context",
    )
    # the frontmatter the question matches is pointed out, kimun's ranking kept as it is
    assert view.frontmatter.startswith("11 of the 33 chunks the cut keeps are notes' frontmatter")
    assert "cssclasses" in view.frontmatter_html.value


def test_issue40_6_the_chain_view_points_out_the_frontmatter_the_cut_keeps(tmp_path: Path) -> None:
    vault = _embed_vault(tmp_path)
    index = LocalIndex(vault, cache_dir=False, progress=False)
    view = ChainView.ask("note aliases", index, [_typed(EMBED)], vault=vault)
    assert "of the pool's" in view.frontmatter
    assert view.frontmatter_html in view.children
    assert "<b>frontmatter:</b>" in view.frontmatter_html.value
    plain = ChainView(pool_of([0.9, 0.5]), ["/n0.md"])
    assert (plain.frontmatter, plain.frontmatter_html.value) == ("", "")  # none: nothing said


def test_issue40_10_the_chain_reader_marks_the_question_and_says_a_pool_rank() -> None:
    from askkit.widgets import Explorer

    index = LocalIndex(DATA / "vault", cache_dir=False, progress=False)
    view = ChainView.ask(QUESTION, index, SECTIONS, vault=DATA / "vault")
    view.buttons[1].click()  # the cut section, at rank 25 of the pool
    reader = view.reader
    assert reader.query == QUESTION
    assert "<mark" in reader.chunk_html.value  # the question's terms marked, as the Explorer's
    assert "rank <code>25</code> in the pool" in reader.meta_html.value
    assert "[25]" not in reader.meta_html.value  # "[n]" reads as a citation
    assert repr(reader).startswith("<SourceReader: rank 25 in the pool 2026-01-12 · Evening")
    # the why-not panel's reader is the chain's: the shown query marked there too
    explorer = Explorer(index, vault=DATA / "vault")
    explorer.search(QUESTION)
    explorer.chain_panel.sections_box.value = "journal/2026-01-12.md#Evening"
    explorer.chain_panel.trace_button.click()
    assert explorer.chain_panel.view is not None
    explorer.chain_panel.view.buttons[0].click()
    panel_reader = explorer.chain_panel.view.reader
    assert panel_reader.query == QUESTION
    assert "<mark" in panel_reader.chunk_html.value
    assert "in the pool" in panel_reader.meta_html.value
