"""SourceReader and its model: the note, the located section, terms, navigation.

The markup it shows (highlight, note window) is tested in tests/test_html.py.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from askkit import AskSource, VaultPath, read_turn
from askkit._html import LOCATED_ID
from askkit.vault import Vault
from askkit.widgets import SourceReader
from askkit.widgets._reader_model import heading_lines, note_sections, query_terms, section_at
from tests.conftest import DATA

VAULT = DATA / "vault"


@pytest.fixture
def turn_sources() -> dict[int, AskSource]:
    turn = read_turn(DATA / "answer_job.json")
    return {s.ordinal: s for s in turn.sources}


def test_query_terms() -> None:
    assert query_terms("") == []
    assert query_terms("the a I") == []
    assert query_terms("Café crème") == ["creme", "crème", "cafe", "café"][:0] or set(
        query_terms("Café crème")
    ) == {"café", "cafe", "crème", "creme"}


def test_heading_lines_are_the_lines_of_headings() -> None:
    note = "intro\n# A\none\n   ## B\ntwo\n\nC\n===\n```\n# not a heading\n```\n"
    starts = heading_lines(note)
    assert starts == {note.index("# A"), note.index("   ## B"), note.index("C\n===")}
    assert heading_lines("") == frozenset()


def test_sections_and_section_at() -> None:
    note = "intro\n# A\none\n## B\ntwo\n# C\nthree\n"
    secs = note_sections(note)
    assert [s.label for s in secs] == ["(top of note)", "A", "A › B", "C"]
    assert section_at(secs, note.index("two")) == 2
    assert section_at(secs, 0) == 0
    assert section_at([], 5) is None


def test_reader_without_vault(turn_sources: dict[int, AskSource]) -> None:
    reader = SourceReader()
    assert "no source selected" in reader.title_html.value
    reader.show(turn_sources[2], query="starter kitchen")
    assert reader.title_html.value.count("2026-04-08 · Afternoon") == 1
    assert "journal/2026-04-08.md" in reader.meta_html.value
    assert "0.8412" in reader.meta_html.value
    assert "[2]" in reader.meta_html.value
    # the note's hash is an opaque number: shown only when the note changed
    assert turn_sources[2].hash not in reader.meta_html.value
    assert "hash" not in reader.meta_html.value
    assert "<mark" in reader.chunk_html.value
    assert reader.note_html not in reader.children
    reader.show(None)
    assert reader.children == (reader.title_html,)


def test_reader_with_vault_locates_and_steps(turn_sources: dict[int, AskSource]) -> None:
    reader = SourceReader(VAULT)
    reader.show(turn_sources[1], query="feed the starter")
    note = Vault(VAULT).read("projects/sourdough.md")
    assert reader.located is not None
    start, end = reader.located
    assert note[start:end] == turn_sources[1].text
    assert reader.section is not None
    assert reader.sections[reader.section].label == "Sourdough › Starter › Feeding schedule"
    assert "Feeding schedule" in reader.section_label.value
    assert f'id="{LOCATED_ID}"' in reader.note_html.value
    assert "<mark" in reader.note_html.value
    assert "changed since it was indexed" not in reader.meta_html.value  # the vault's own hash
    first = reader.section
    reader.next_button.click()
    assert reader.section == first + 1
    assert "Discard" in reader.section_label.value
    reader.prev_button.click()
    reader.prev_button.click()
    assert reader.section == first - 1
    for _ in range(20):
        reader.prev_button.click()
    assert reader.section == 0
    assert reader.prev_button.disabled


def test_reader_warns_when_the_note_changed(turn_sources: dict[int, AskSource]) -> None:
    reader = SourceReader(VAULT)
    reader.show(dataclasses.replace(turn_sources[1], hash="<b>old</b>"))
    assert "changed since it was indexed" in reader.meta_html.value
    assert f"vault hash <code>{turn_sources[1].hash}</code>" in reader.meta_html.value
    assert "<code>&lt;b&gt;old&lt;/b&gt;</code>" in reader.meta_html.value


def test_reader_shows_a_missing_note_as_an_error() -> None:
    reader = SourceReader(VAULT)
    reader.show(AskSource(VaultPath("nowhere/<b>x</b>.md"), "H", None, 0.1, "t", 1))
    assert reader.note_text is None
    assert "not found" in reader.note_html.value
    assert "<b>x</b>" not in reader.note_html.value
    assert reader.prev_button.disabled
    assert reader.next_button.disabled


def test_reader_refuses_paths_outside_the_vault(tmp_path: Path) -> None:
    (tmp_path / "vault").mkdir()
    (tmp_path / "secret.md").write_text("# Secret\nkey\n")
    reader = SourceReader(tmp_path / "vault")
    reader.show(AskSource(VaultPath("../secret.md"), "Secret", None, 0.1, "key", 1))
    assert reader.note_text is None
    assert "refused" in reader.note_html.value


def test_reader_unlocated_source_shows_the_note_from_the_top(tmp_path: Path) -> None:
    (tmp_path / "n.md").write_text("# One\nalpha\n# Two\nbeta\n")
    reader = SourceReader(tmp_path)
    reader.show(AskSource(VaultPath("n.md"), "Missing", None, 0.1, "not there", 1))
    assert reader.located is None
    assert "section not found" in reader.section_label.value
    assert reader.section is None
    assert not reader.next_button.disabled
    reader.next_button.click()
    assert reader.section == 0
    assert reader.located == (0, len("# One\nalpha\n"))


def test_query_change_rerenders(turn_sources: dict[int, AskSource]) -> None:
    reader = SourceReader()
    reader.show(turn_sources[2])
    assert "<mark" not in reader.chunk_html.value
    reader.query = "loaf"
    assert "<mark" in reader.chunk_html.value


def _chunk_source(path: str, title: str, text: str, note_hash: str) -> AskSource:
    from askkit.wire import ChunkResult

    chunk = ChunkResult(path, title, None, text, note_hash, 0.5, 1)
    return AskSource.from_chunk(0, chunk)


def test_the_reader_says_when_a_chunk_was_stored_by_an_older_kimun(tmp_path: Path) -> None:
    """A chunk kimun 0.17 cut from the unchanged note: found in its section, and said so."""
    note = "# Top\nintro\n## Use [[y|*Y*]]\nSee `[[x]]` there.\n## Next\nend\n"
    (tmp_path / "n.md").write_text(note, encoding="utf-8")
    vault = Vault(tmp_path)
    reader = SourceReader(vault)
    reader.show(_chunk_source("n.md", "Top\x1fUse Y", "See `x` there.", vault.hash("n.md")))
    assert reader.stored == "older kimun"
    assert reader.located is not None
    assert note[reader.located[0] : reader.located[1]] == "## Use [[y|*Y*]]\nSee `[[x]]` there.\n"
    assert "stored by an older kimun" in reader.stored_html.value
    assert reader.stored_html in reader.children
    current = _chunk_source("n.md", "Top\x1fUse *Y*", "See `[[x]]` there.", vault.hash("n.md"))
    reader.show(current)
    assert reader.stored == "current"
    assert reader.stored_html.value == ""


def test_the_reader_says_when_a_chunk_was_stored_before_the_note_changed(tmp_path: Path) -> None:
    (tmp_path / "n.md").write_text("# Top\n## Bread\nNow rye <b>only</b>.\n", encoding="utf-8")
    reader = SourceReader(Vault(tmp_path))
    reader.show(_chunk_source("n.md", "Top\x1fBread", "Wheat and <rye>.", "12345"))
    assert reader.stored == "note changed"
    assert reader.located is not None  # found by its heading instead
    assert "stored before the note changed" in reader.stored_html.value
    assert "<rye>" not in reader.stored_html.value + reader.chunk_html.value


def test_the_reader_cuts_with_the_kimun_version_it_is_given(tmp_path: Path) -> None:
    (tmp_path / "n.md").write_text("# A\nSee `[[x]]`.\n", encoding="utf-8")
    older = SourceReader(Vault(tmp_path), kimun="0.17")
    older.show(_chunk_source("n.md", "A", "See `x`.", Vault(tmp_path).hash("n.md")))
    assert older.stored == "current"
    newer = SourceReader(Vault(tmp_path))
    newer.show(_chunk_source("n.md", "A", "See `x`.", Vault(tmp_path).hash("n.md")))
    assert newer.stored == "older kimun"


def test_the_frontmatter_section_is_shown_as_the_notes_frontmatter() -> None:
    from askkit import ChunkResult
    from askkit.sources import FRONTMATTER_LABEL
    from askkit.widgets import SourcesView

    chunk = ChunkResult("baking/country-loaf.md", "FrontMatter", None, "tags: [bread]", "h", 0.5, 1)
    dated = ChunkResult(
        "journal/2026-02-09.md", "FrontMatter", "2026-02-09", "mood: ok", "h", 0.4, 2
    )
    sources = AskSource.from_chunks([chunk, dated])
    assert sources[0].display_heading() == "FrontMatter"  # kimun's own value, unchanged
    assert sources[0].shown_heading() == FRONTMATTER_LABEL
    assert sources[1].shown_heading() == f"2026-02-09 · {FRONTMATTER_LABEL}"
    reader = SourceReader()
    reader.show(sources[0])
    assert "(the note&#x27;s frontmatter)" in reader.title_html.value
    assert "FrontMatter" not in reader.title_html.value
    view = SourcesView(sources)
    row = view._body.children[0]
    shown = " ".join(getattr(c, "value", "") or getattr(c, "description", "") for c in row.children)
    assert "the note" in shown
    assert "FrontMatter" not in shown


def test_issue40_10_the_reader_says_what_a_sources_number_is(
    turn_sources: dict[int, AskSource],
) -> None:
    """``[n]`` only for an answer's citation number; a pool rank is said in words."""
    reader = SourceReader(VAULT)
    reader.show(turn_sources[1], query="feed")
    assert "ordinal <code>[1]</code>" in reader.meta_html.value  # an answer's source: its [n]
    reader.show(turn_sources[1], numbering="pool")
    assert "rank <code>1</code> in the pool" in reader.meta_html.value
    assert "[1]" not in reader.meta_html.value
    assert repr(reader).startswith("<SourceReader: rank 1 in the pool ")
    reader.numbering = "search"
    assert "search rank <code>1</code>" in reader.meta_html.value
    assert reader.query == "feed"  # showing with another numbering keeps the terms marked


def test_issue40_6_the_reader_names_a_heading_less_section_by_its_notes_title(
    tmp_path: Path,
) -> None:
    """As the table does: the note's file name as on disk, not kimun's lowercased stem."""
    (tmp_path / "Plugins").mkdir()
    (tmp_path / "Plugins" / "Command Palette.md").write_text("Press Ctrl+P to open it.\n")
    source = AskSource(VaultPath("Plugins/Command Palette.md"), "", None, 0.5, "Press Ctrl+P", 1)
    reader = SourceReader(tmp_path)
    reader.show(source)
    assert ">Command Palette</div>" in reader.title_html.value
    assert " Command Palette (plugins/command palette.md)" in repr(reader)
    bare = SourceReader()  # without a vault: the printed stem
    bare.show(source)
    assert ">command palette</div>" in bare.title_html.value
