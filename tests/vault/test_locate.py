"""askkit.vault.locate: kimun's section_range reproduced, and askkit's fix for each gap."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from askkit.sources import AskSource
from askkit.vault import Vault
from askkit.vault.chunking import chunk_note
from askkit.vault.locate import (
    CURRENT,
    NOTE_CHANGED,
    NOTE_MISSING,
    OLDER_KIMUN,
    heading_display_text,
    kimun_heading_section_range,
    kimun_section_range,
    locate_source,
    section_range,
    stored_message,
    stored_status,
    stored_statuses,
)
from askkit.vault.split import split_for_rag
from askkit.wire import ChunkResult


def span(note: str, found: tuple[int, int] | None) -> str | None:
    return None if found is None else note[found[0] : found[1]]


# --- kimun's own tests of heading_section_range --------------------------------


def test_kimun_scan_stops_at_the_next_heading() -> None:
    note = "# a\nfirst\n# b\nsecond\n# c\nthird\n"
    assert span(note, kimun_heading_section_range(note, "b")) == "# b\nsecond\n"


def test_kimun_scan_runs_to_the_end_when_last() -> None:
    note = "# a\nfirst\n# b\nsecond and third\nfourth\n"
    assert span(note, kimun_heading_section_range(note, "b")) == "# b\nsecond and third\nfourth\n"


def test_kimun_scan_none_when_absent() -> None:
    assert kimun_heading_section_range("# a\nfirst\n", "missing") is None


def test_kimun_scan_folds_accents_and_ascii_case() -> None:
    note = "# Café\nespresso and pastries\n"
    assert span(note, kimun_heading_section_range(note, "cafe")) == note


def test_kimun_scan_hashtag_line_is_not_a_heading() -> None:
    assert kimun_heading_section_range("#projects\nnot a heading\n", "projects") is None


def test_kimun_scan_strips_closing_hashes() -> None:
    note = "## Title ##\nbody\n"
    assert span(note, kimun_heading_section_range(note, "Title")) == note


def test_kimun_scan_finds_rendered_heading_text() -> None:
    note = '# a\nfirst\n## <a id="x"></a>Install\nsteps\n# c\n'
    assert span(note, kimun_heading_section_range(note, "Install")) == (
        '## <a id="x"></a>Install\nsteps\n'
    )
    assert kimun_heading_section_range("- # Setup\n  make install\n", "Setup") is not None


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("- # Setup", "Setup"),
        ("  * ## Deep", "Deep"),
        ("1. # Step", "Step"),
        ("> # Quoted", "Quoted"),
        ("- plain item", None),
        ("- #tag", None),
        ("", None),
        ("    # Nested", "Nested"),
        ("# Sprint #42", "Sprint 42"),
    ],
)
def test_kimun_heading_display_text(line: str, expected: str | None) -> None:
    assert heading_display_text(line) == expected


# --- kimun's three steps, in order --------------------------------------------


def test_step1_exact_chunk_text_wins() -> None:
    note = "# A\nsame text\n# B\nsame text\n"
    assert kimun_section_range(note, "B", "same text") == (4, 13)  # the first occurrence
    assert section_range(note, "B", "same text") == (4, 13)


def test_step2_section_found_verbatim() -> None:
    note = "# Intro\nplain words here\n"
    assert kimun_section_range(note, "intro", "a piece the server cut") == (8, 24)
    # kimun's step 2 finds the right place, so askkit gives the same range
    assert section_range(note, "intro", "a piece the server cut") == (8, 24)


def test_step2_no_section_means_none_in_kimun() -> None:
    note = "# Empty\n# Full\ntext\n"
    assert kimun_section_range(note, "Empty", "gone") is None


def test_nothing_resolves() -> None:
    assert kimun_section_range("# A\ntext\n", "Z", "nope") is None
    assert section_range("# A\ntext\n", "Z", "nope") is None


# --- each gap kimun's locate has: kimun's answer, then askkit's ----------------


def test_fix_accented_note_chunk_text_is_folded() -> None:
    """Steps 1-2 fail on accents (the chunk text was folded); step 3 gives the whole note."""
    note = "# Café\nCrème brûlée *maison*\n# Thé\nvert\n"
    chunk = "Creme brulee maison"
    assert span(note, kimun_section_range(note, "Café", chunk)) == "# Café\nCrème brûlée *maison*\n"
    # askkit: step 2 by the section's own range, same span here ...
    assert span(note, section_range(note, "Café", chunk)) == "# Café\nCrème brûlée *maison*\n"
    # ... and step 1 finds the exact chunk when it is plain text
    assert span(note, section_range(note, "Café", "Creme brulee")) == "Crème brûlée"
    assert kimun_section_range(note, "Café", "Creme brulee") == (0, 29)


def test_fix_crlf_note() -> None:
    note = "# One\r\nfirst line\r\nsecond line\r\n# Two\r\nother\r\n"
    chunk = "first line\nsecond line"  # kimun's chunk text: lines joined with LF
    assert kimun_section_range(note, "Nope", chunk) is None
    assert span(note, section_range(note, "Nope", chunk)) == "first line\r\nsecond line"


def test_fix_setext_heading() -> None:
    note = "Intro\n=====\n**Bold** start\n\nSub\n---\nbody\n"
    assert kimun_heading_section_range(note, "Intro") is None
    # kimun's step 2 finds the section but not its text verbatim, then step 3 misses
    assert kimun_section_range(note, "Intro", "x") is None
    # askkit: the setext section, with the deeper section under it
    assert span(note, section_range(note, "Intro", "x")) == note


def test_fix_hash_lines_inside_code_fences() -> None:
    note = "# Script\n```sh\n# Setup\nmake\n```\n# Setup\nreal *setup*\n"
    assert span(note, kimun_heading_section_range(note, "Setup")) == "# Setup\nmake\n```\n"
    assert span(note, section_range(note, "Setup", "x")) == "# Setup\nreal *setup*\n"


def test_fix_deeper_heading_stays_inside_its_parent() -> None:
    note = "# Parent\n## Child\nchild text\n# Next\nx\n"
    # no section carries "Parent" (it has no text of its own): kimun gives up at step 2
    assert kimun_section_range(note, "Parent", "x y") is None
    assert kimun_heading_section_range(note, "Parent") == (0, 9)  # stops at "## Child"
    assert span(note, section_range(note, "Parent", "x y")) == "# Parent\n## Child\nchild text\n"


def test_fix_accent_and_case_insensitive_heading() -> None:
    note = "# Éléments\n**liste** des éléments\n"
    # the breadcrumb keeps its accents; kimun compares ASCII case only: no section
    assert kimun_section_range(note, "elements", "z") is None
    assert section_range(note, "ELEMENTS", "z") == (0, len(note))


def test_duplicate_headings_pick_the_section_holding_the_chunk() -> None:
    note = "# Log\n*first* entry\n# Log\n*second* entry\n"
    assert span(note, kimun_section_range(note, "Log", "second entry")) == note[:20]
    assert span(note, section_range(note, "Log", "second entry")) == "# Log\n*second* entry\n"


def test_empty_heading_locates_the_preamble() -> None:
    note = "*intro* text\n# A\nbody\n"
    assert kimun_section_range(note, "", "zzz") is None
    assert span(note, section_range(note, "", "zzz")) == "*intro* text\n"


# --- locate_source ---------------------------------------------------------------


def source(title: str, content: str, path: str = "n.md", date: str | None = None) -> AskSource:
    chunk = ChunkResult(
        path=path,
        title=title,
        date=date,
        content=content,
        hash="h",
        similarity_score=1.0,
        ordinal=1,
    )
    return AskSource.from_chunk(0, chunk)


def test_locate_source_nested_breadcrumb() -> None:
    note = "# Chapter\nintro\n## Section\n*body* here\n"
    found = locate_source(note, source("Chapter\x1fSection", "no such text"))
    assert span(note, found) == "## Section\n*body* here\n"


def test_locate_source_heading_containing_the_joiner() -> None:
    note = "# A › B\n*x* y\n# B\n*z*\n"
    src = source("A › B", "nothing")
    assert src.match_heading() == "B"  # kimun splits the real heading
    assert span(note, kimun_section_range(note, src.match_heading(), src.text)) == "z"
    assert span(note, locate_source(note, src)) == "# A › B\n*x* y\n"


def test_locate_source_journal_date_heading() -> None:
    note = "# 2026-04-08\n*walked* far\n## Evening\nread\n"
    src = source("2026-04-08", "nothing", path="2026-04-08.md", date="2026-04-08")
    assert src.heading == ""
    assert span(note, locate_source(note, src)) == note


def test_fix_step_two_keeps_deeper_sections_inside_their_parent() -> None:
    """kimun's step 2 gives the section's own text; askkit's the heading's whole scope."""
    note = "# A\n*a* text\n## B\nb text\n# C\nc text\n"
    assert span(note, kimun_section_range(note, "A", "nothing")) == "# A\n*a* text\n"
    assert span(note, section_range(note, "A", "nothing")) == "# A\n*a* text\n## B\nb text\n"
    # B's text is verbatim in the note: kimun's step 2 answer stands
    assert span(note, section_range(note, "B", "nothing")) == "b text"


def test_locate_source_frontmatter() -> None:
    note = "---\r\ntags: [a]\r\n---\r\n# T\r\nx\r\n"
    src = source("FrontMatter", "tags: [a]")
    assert span(note, locate_source(note, src)) == "tags: [a]"


def test_locate_source_hand_made_source_falls_back_to_match_heading() -> None:
    note = "# A\nx\n## B\n*y*\n"
    src = AskSource(
        path=source("", "").path, heading="A › B", date=None, score=0.0, text="none", ordinal=1
    )
    assert span(note, locate_source(note, src)) == "y"


@given(st.text(max_size=200), st.text(max_size=10), st.text(max_size=20))
def test_ranges_are_within_the_note(note: str, heading: str, chunk: str) -> None:
    for found in (section_range(note, heading, chunk), kimun_section_range(note, heading, chunk)):
        if found is not None:
            assert 0 <= found[0] <= found[1] <= len(note)


# --- kimun's two chunkers, and a chunk a server stored before -----------------------------


def test_heading_display_text_follows_each_version() -> None:
    """kimun 0.18 walks the line (a wikilink in code stays as written, an alias shows as
    written); 0.17 collapsed wikilinks first."""
    line = "## See `[[x]]` and [[y|*Y*]]"
    assert heading_display_text(line) == "See `[[x]]` and *Y*"
    assert heading_display_text(line, kimun="0.17") == "See `x` and Y"


def test_the_reader_finds_a_section_by_the_walks_heading_text() -> None:
    note = "# Intro\nhi\n## Use `[[x]]`\nbody text\n## Next\nmore\n"
    assert span(note, kimun_heading_section_range(note, "Use `[[x]]`")) == (
        "## Use `[[x]]`\nbody text\n"
    )
    assert kimun_heading_section_range(note, "Use `[[x]]`", kimun="0.17") is None
    assert span(note, section_range(note, "Use `[[x]]`", "gone")) == "body text"
    assert section_range(note, "Use `x`", "gone") is None


def test_a_chunk_an_older_kimun_cut_is_found_in_its_section() -> None:
    """A chunk kimun 0.17 stored (``See x``: the code span collapsed) is in no 0.18 section,
    and not verbatim in the note: askkit finds the section 0.17 cut, under its heading."""
    note = "# Top\nintro\n## Links\nSee `[[x]]` and [[y|Y]].\n### Deeper\nmore\n## Next\nend\n"
    older = chunk_note(note, kimun="0.17")[1]
    assert (older.heading, older.text) == ("Links", "See `x` and Y.")
    assert span(note, section_range(note, "Links", older.text)) == (
        "## Links\nSee `[[x]]` and [[y|Y]].\n### Deeper\nmore\n"
    )
    # kimun's locate finds no 0.18 section with that text, then scans for the heading
    assert span(note, kimun_section_range(note, "Links", older.text)) == (
        "## Links\nSee `[[x]]` and [[y|Y]].\n"
    )


def test_stored_status_of_each_case() -> None:
    note = "# Links\nSee `[[x]]` and [[y|Y]].\n"
    assert stored_status(note, "See `[[x]]` and Y.") == CURRENT
    assert stored_status(note, "See `x` and Y.") == OLDER_KIMUN
    assert stored_status(note, "See `x` and Y.", kimun="0.17") == CURRENT
    assert stored_status(note, "See `[[x]]` and Y.", kimun="0.17") == OLDER_KIMUN
    assert stored_status(note, "Text the note no longer has.") == NOTE_CHANGED
    # an edited note: a chunk still cut so is current, one in no section now is from before
    assert stored_status(note, "See `[[x]]` and Y.", stored_hash="1", note_hash="2") == CURRENT
    assert stored_status(note, "See `x` and Y.", stored_hash="1", note_hash="2") == NOTE_CHANGED
    # an unchanged note whose chunk no reproduced version cuts: an older kimun still
    assert stored_status(note, "Cut another way.", stored_hash="7", note_hash="7") == OLDER_KIMUN


def test_stored_messages_say_what_happened() -> None:
    assert stored_message(CURRENT) == ""
    assert stored_message(OLDER_KIMUN).startswith("stored by an older kimun")
    assert stored_message(NOTE_CHANGED).startswith("stored before the note changed")
    assert stored_message(NOTE_MISSING) == "the note cannot be read from the vault"


def test_a_piece_of_a_split_section_is_current() -> None:
    """kimun's server splits a long section into pieces: each is a piece of the section."""
    body = " ".join(f"Sentence {i} about bread." for i in range(200))
    note = f"# Bread\n{body}\n"
    pieces = split_for_rag(chunk_note(note)[0].text)
    assert len(pieces) > 2
    assert {stored_status(note, p) for p in pieces} == {CURRENT}


def test_stored_statuses_reads_each_note_once(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A\nSee `[[x]]` now.\n", encoding="utf-8")
    (tmp_path / "b.md").write_text("# B\nnew text\n", encoding="utf-8")
    vault = Vault(tmp_path)
    frame = pd.DataFrame(
        {
            "path": ["a.md", "a.md", "b.md", "gone.md"],
            "text": ["See `[[x]]` now.", "See `x` now.", "old text", "x"],
            "hash": [vault.hash("a.md"), vault.hash("a.md"), "123", None],
        }
    )
    before = frame.copy()
    assert stored_statuses(frame, vault) == [CURRENT, OLDER_KIMUN, NOTE_CHANGED, NOTE_MISSING]
    pd.testing.assert_frame_equal(frame, before)  # the caller's frame is left alone


def test_a_heading_an_older_kimun_rendered_otherwise_is_found() -> None:
    """0.17 rendered ``## Use [[y|*Y*]]`` as ``Use Y``, 0.18 as ``Use *Y*``: a chunk stored
    under 0.17's heading is found through 0.17's sections; kimun's locate gives up."""
    note = "# Top\nintro\n## Use [[y|*Y*]]\nSee [[z|Z]] there.\n## Next\nend\n"
    older = chunk_note(note, kimun="0.17")[1]
    assert (older.heading, older.text) == ("Use Y", "See Z there.")
    assert [s.heading for s in chunk_note(note)] == ["Top", "Use *Y*", "Next"]
    assert span(note, section_range(note, "Use Y", older.text)) == (
        "## Use [[y|*Y*]]\nSee [[z|Z]] there.\n"
    )
    assert kimun_section_range(note, "Use Y", older.text) is None
    src = source(f"Top\x1f{older.heading}", older.text)
    assert span(note, locate_source(note, src)) == "## Use [[y|*Y*]]\nSee [[z|Z]] there.\n"
