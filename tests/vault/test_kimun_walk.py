"""kimun's single note walk (kimun 0.18): its extraction snapshot and its unit tests, by name.

The walk is ``core/src/note/walk.rs`` at kimun commit 67e96640a6ceae220ba578117d14352a60658604,
the newest version readable; every test here pins that commit (:data:`WALK_COMMIT`).

* **The snapshot.** kimun's conformance test, ``core/tests/extraction_snapshot.rs``, renders
  every note of a fixed corpus into ``core/tests/snapshots/extraction.txt``. The file at
  67e96640 and at 3cf2742c (abridged to its title, headings and chunks parts) and the 67
  notes it renders are read from ``../shared/corpora/kimun-walk`` (:mod:`tests.vault.
  kimun_snapshot`). ``extraction_snapshot`` holds askkit's default chunker to the newest file
  note for note; ``every_extractor_agrees_with_the_others`` is kimun's cross-check of its
  extractors, the parts askkit has.
* **The unit tests.** kimun's tests of ``walk.rs`` that check the walk's text, headings,
  titles or chunks, and the tests of ``core/src/note/content_extractor.rs`` at 67e96640 that
  are not already in ``test_kimun_content_extractor.py``, with kimun's inputs and expected
  values. The askkit names for kimun's: ``walk_text`` is the test helper ``text(&w)`` (every
  non-empty line of the walk, joined with ``\\n``), ``headers`` is ``headers(&w)`` (level,
  text and the heading's UTF-8 byte in the note), ``extract_title`` is ``NoteWalk::title``,
  ``chunk_note`` is ``get_content_chunks`` / ``into_chunks``, ``note_hashtags`` is the
  hashtag links of ``get_chunks_and_links`` (and ``tag_list``), ``rows`` is
  ``NoteWalk::headings`` (text and row). Parts of a kimun test about link records, the
  rendered markdown or timing are not askkit's and are left out.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from askkit.vault._body import body_start
from askkit.vault._events import HEADER, line_text
from askkit.vault._walk import walk_lines
from askkit.vault.chunking import (
    BREADCRUMB_SEP,
    FRONTMATTER,
    KIMUN_COMMITS,
    chunk_note,
    extract_headings,
    extract_title,
    note_hashtags,
    note_headings,
)
from askkit.vault.locate import heading_display_text, kimun_heading_section_range
from tests.corpora import SHARED_CORPORA
from tests.vault.kimun_snapshot import (
    OLDEST,
    Block,
    abridged,
    newest,
    note_file,
    note_text,
    read_abridged,
    read_snapshot,
    render_chunks,
    snapshot_names,
)

WALK_COMMIT = "67e96640a6ceae220ba578117d14352a60658604"
OLDER_SNAPSHOT_COMMIT = "3cf2742c7bceedb0537bd79c83a503de74baa099"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """``name``: each note of the newest snapshot (read at collection, never at import;
    without the corpus, one parameter whose test skips saying why)."""
    if "name" in metafunc.fixturenames:
        names = snapshot_names()
        metafunc.parametrize("name", names, ids=names)


# --- kimun's test helpers, as askkit reads them ----------------------------------------------


def walk_text(note: str) -> str:
    """kimun's ``text(&w)``: every non-empty line of the walk, joined with ``\\n``."""
    lines = walk_lines(note[body_start(note)[0] :])[0]
    return "\n".join(t for t in (line_text(line) for line in lines) if t)


def headers(note: str) -> list[tuple[int, str, int]]:
    """kimun's ``headers(&w)``: level, text and UTF-8 byte of each heading in the note."""
    start = body_start(note)[0]
    base = len(note[:start].encode())
    lines = walk_lines(note[start:])[0]
    return [(line[1], line[2], base + line[3]) for line in lines if line[0] == HEADER]


def rows(note: str) -> list[tuple[str, int]]:
    """kimun's ``NoteWalk::headings``: text and row of each heading with text."""
    return [(h.text, note.count("\n", 0, h.start)) for h in note_headings(note) if h.text]


def kimun_headings(note: str) -> list[tuple[int, int, str]]:
    """The snapshot's ``-- headings``: level, row and text of each heading with text."""
    return [(h.level, note.count("\n", 0, h.start), h.text) for h in note_headings(note) if h.text]


def texts(note: str) -> list[str]:
    return [s.text for s in chunk_note(note)]


# --- the snapshot ----------------------------------------------------------------------------


def test_the_snapshot_is_kimuns_newest_readable_and_its_corpus_is_whole() -> None:
    (commit, blocks), (abridged_commit, parts) = newest(), abridged()
    names = [b.name for b in blocks]
    assert commit == abridged_commit == WALK_COMMIT == KIMUN_COMMITS["0.18"]
    assert len(blocks) == 67
    assert sorted(names) == names  # kimun's order: the notes sorted by name
    assert all(note_file(name).is_file() for name in names)
    assert {b.name for b in blocks if b.chunks is None} == set(parts)
    assert sum(b.chunks is None for b in blocks) == 6


def _block_problems(block: Block, note: str, kimun: str = "0.18") -> list[str]:
    problems = []
    if block.title is not None and extract_title(note, kimun=kimun) != block.title:  # type: ignore[arg-type]
        problems.append(f"title {extract_title(note, kimun=kimun)!r} != {block.title!r}")  # type: ignore[arg-type]
    if block.headings is not None and kimun_headings(note) != block.headings:
        problems.append(f"headings {kimun_headings(note)} != {block.headings}")
    chunks = [(s.title, s.text) for s in chunk_note(note, kimun=kimun)]  # type: ignore[arg-type]
    if block.chunks is None:
        problems += abridged()[1][block.name].problems(render_chunks(chunks))
    elif chunks != block.chunks:
        problems.append(f"chunks {chunks} != {block.chunks}")
    return problems


def test_extraction_snapshot(name: str) -> None:
    """kimun's ``extraction_snapshot``: title, headings and chunks of each note, as kimun's."""
    block = next(b for b in newest()[1] if b.name == name)
    assert _block_problems(block, note_text(block.name)) == []


def test_extraction_snapshot_renders_the_abridged_notes_too() -> None:
    """The six notes whose chunks part is abridged hold chunks, and a wrong one is caught:
    one character more, or one character changed inside a verbatim run."""
    for name, part in abridged()[1].items():
        chunks = [(s.title, s.text) for s in chunk_note(note_text(name))]
        rendered = render_chunks(chunks)
        assert chunks, name
        assert part.problems(rendered) == [], name
        assert part.problems(rendered + "x"), name
        offset = part.runs[-1][0]
        at = max(offset, part.start) - part.start  # a character of the run inside the part
        changed = rendered[:at] + ("y" if rendered[at] != "y" else "z") + rendered[at + 1 :]
        assert part.problems(changed), name


def test_extraction_snapshot_at_3cf2742c_differs_only_where_the_walk_changed_since() -> None:
    """The oldest readable snapshot (58 notes): askkit follows 67e96640, so the one line
    kimun changed after 3cf2742c (an image's alt text now keeps a wikilink as written)
    is the one difference."""
    commit, blocks = read_snapshot(OLDEST)
    _, older_parts = read_abridged("abridged_older.json")
    assert commit == OLDER_SNAPSHOT_COMMIT
    assert len(blocks) == 58
    newest_blocks = {b.name: b for b in newest()[1]}
    differing = []
    for block in blocks:
        note = note_text(block.name)
        chunks = [(s.title, s.text) for s in chunk_note(note)]
        if block.chunks is None:
            assert older_parts[block.name].problems(render_chunks(chunks)) == [], block.name
        elif chunks != block.chunks:
            differing.append(block.name)
            old_lines = "\n".join(t for _, t in block.chunks).split("\n")
            now_lines = "\n".join(t for _, t in chunks).split("\n")
            changed = [(a, b) for a, b in zip(old_lines, now_lines, strict=True) if a != b]
            assert changed == [
                ("Image alt ![x a t](p.png) degrades.", "Image alt x [[a]] #t degrades.")
            ]
            assert newest_blocks[block.name].chunks == chunks
    assert differing == ["tests/fixtures/walk/edge_cases.md"]


#: Where kimun 0.17's chunker (the content extractor at 0384739) differs from the walk on
#: kimun's corpus: (0.17's line, the walk's line), per note. Every other line is the same.
OLDER_LINES: dict[str, list[tuple[str, str]]] = {
    "tests/fixtures/walk/edge_cases.md": [
        (
            "Code span `x` and code link `[y](y.md)` stay code.",
            "Code span `[[x]]` and code link `[y](y.md)` stay code.",
        ),
        (
            "Alias tag #b and invalid #tag and empties b [[]].",
            "Alias tag #b and invalid #tag and empties [[|b]] [[]].",
        ),
        ("Embed !Picture and plain Shown.", "Embed Picture and plain Shown."),
        ("See hidden", "See [[hidden]]"),
        (
            "Alias markup Emph name and entity a & b.",
            "Alias markup *Emph* name and entity a &amp; b.",
        ),
        ("Touching tags c#t2 and t3d.", "Touching tags ct2 and t3d."),
        ("Image alt x a #t degrades.", "Image alt x [[a]] #t degrades."),
    ],
    "tests/fixtures/walk/empty_displays_and_nesting.md": [
        ("*em * tail f and x  t z", "em  tail f and x [[a|]] t z"),
        ("See x !a and !200 end", "See x ![[a]] and ![[pic.png|200]] end"),
        (
            "Inside b `c` d and <b>x</b> and see https://e.f.",
            "Inside b `c` d and <b>x</b> and see <https://e.f>.",
        ),
    ],
    "tests/fixtures/walk/html_blocks_and_embeds.md": [
        (
            "Escaped \\a x and markup a b c and section S.",
            "Escaped [[a]] x and markup a *b* c and section S.",
        ),
        (
            "Embeds !pic.png and !sub/pic.png and !sub/e.",
            "Embeds pic.png and sub/pic.png and sub/e.",
        ),
    ],
    "tests/fixtures/walk/images_and_entities.md": [
        ('a <!-- x --> b <a title="y">t</a>', 'a <!-- [[x]] --> b <a title="[[y]]">t</a>'),
    ],
    "tests/fixtures/walk/long_lines_and_reference_links.md": [
        ("A long line: a(b) a(b) a(b)", "A long line: [a] [a] [a]"),
        (
            "Spaced link around a wikilink [see a](x y.md) and [!pic.png](my page.md)",
            "Spaced link around a wikilink [see a](x y.md) and [pic.png](my page.md)",
        ),
        ("Autolink alias https://x.y", "Autolink alias <https://x.y>"),
        ("Use `` to start a link.", "Use `[[` to start a link."),
        ("See [[Note.", "See Note."),
        ("y [[ z", "y \\[[ z"),
    ],
    "tests/fixtures/walk/reference_links_and_outline.md": [
        (
            "Wrapping link see a and destination t",
            "Wrapping link see [[a]] and destination t",
        ),
        ("- Pep and A", "- [[Pep]] and [[Ann|A]]"),
        ("fenced #fencedtag", "[[fenced]] #fencedtag"),
    ],
    "tests/fixtures/walk/section_and_padded_wikilinks.md": [
        ("HTML [p]( sub/c.md ) and S", "HTML [p]( sub/c.md ) and [[note#sec|S]]"),
        ('Inline <span title="one', 'Inline <span title="[[x|one'),
        ('two">z</span> tag.', 'two]]">z</span> tag.'),
        ("    Indented [i](sub/i.md) and ind", "    Indented [i](sub/i.md) and [[ind]]"),
    ],
    "tests/fixtures/walk/unusual_destinations.md": [
        (
            "Embeds with a fragment !pic.png#x and !e^b.",
            "Embeds with a fragment pic.png#x and e^b.",
        ),
    ],
}


def test_kimun_017_chunks_kimuns_corpus_as_the_content_extractor_did() -> None:
    """``kimun="0.17"`` equals the walk's snapshot on 59 of the 67 notes; on the 8 walk
    fixtures where the walk changed the text, it differs by exactly the lines above: each
    a wikilink found before parsing (in code, HTML, a link label or alt text), an embed's
    ``!``, a display text rendered as markdown, ``[[|b]]``, or a wikilink across lines."""
    same, differing = [], []
    for block in newest()[1]:
        note = note_text(block.name)
        older = [(s.title, s.text) for s in chunk_note(note, kimun="0.17")]
        if block.chunks is None:
            assert abridged()[1][block.name].problems(render_chunks(older)) == [], block.name
            same.append(block.name)
            continue
        if older == block.chunks:
            same.append(block.name)
            continue
        differing.append(block.name)
        assert [t for t, _ in older] == [t for t, _ in block.chunks], block.name
        old_lines = "\n".join(t for _, t in older).split("\n")
        new_lines = "\n".join(t for _, t in block.chunks).split("\n")
        changed = [(a, b) for a, b in zip(old_lines, new_lines, strict=True) if a != b]
        assert changed == OLDER_LINES[block.name], block.name
    assert len(same) == 59
    assert sorted(differing) == sorted(OLDER_LINES)


def test_every_extractor_agrees_with_the_others() -> None:
    """kimun's cross-check of its extractors on its corpus, the parts askkit has: every
    breadcrumb's innermost segment is a listed heading; an ATX heading on its own row
    renders the same alone (``heading_display_text``); a note that opens with a heading
    (no frontmatter) is titled by it; each hashtag shows in a chunk or a heading.
    (kimun also compares two chunk paths, its link lists and its tag lists: askkit has one
    chunker and lists no links.)"""
    checked = 0
    for name in [b.name for b in newest()[1]]:
        text = note_text(name)
        headings = [h for h in note_headings(text) if h.text]
        texts_ = {h.text for h in headings}
        for chunk in chunk_note(text):
            if chunk.breadcrumb != (FRONTMATTER,) and chunk.heading:
                assert chunk.heading in texts_, (
                    f"{name}: breadcrumb {chunk.heading!r} is no heading"
                )
        rows_ = text.split("\n")
        for h in headings:
            row = rows_[text.count("\n", 0, h.start)]
            hashes = len(row) - len(row.lstrip("#"))
            if 1 <= hashes <= 6 and row[hashes : hashes + 1] in {"", " ", "\t"}:
                assert heading_display_text(row) == h.text, f"{name}: {row!r}"
                checked += 1
        has_frontmatter = text.startswith(("---", "+++"))
        first_row = next((i for i, r in enumerate(rows_) if r.strip()), None)
        if headings and not has_frontmatter and first_row == text.count("\n", 0, headings[0].start):
            assert extract_title(text) == headings[0].text, f"{name}: title"
        shown = [s.text for s in chunk_note(text)] + [h.text for h in headings]
        for tag in note_hashtags(text):
            assert any(tag in t for t in shown), f"{name}: #{tag}"
    assert checked > 250  # ATX heading rows checked (278 in kimun's corpus)


# --- walk.rs: the walk's lines, headings and titles --------------------------------------------


def test_offsets_are_in_the_note_as_given() -> None:
    note = "---\nt: x\n---\n# A\n"
    assert body_start(note)[0] == 13
    assert headers(note) == [(1, "A", 13)]
    assert chunk_note("---\nt: x\n---\n# A\nbody\n")[-1].text == "t: x"


def test_an_unclosed_fence_drops_only_its_first_line() -> None:
    assert body_start("---\n# A\n")[0] == 4
    assert headers("---\n# A\n") == [(1, "A", 4)]
    assert all(s.breadcrumb != (FRONTMATTER,) for s in chunk_note("---\n# A\nx\n"))


def test_a_byte_order_mark_is_not_body() -> None:
    assert body_start("\ufeff# A\n")[0] == 1  # one character: kimun's 3 bytes
    assert headers("\ufeff# A\n") == [(1, "A", 3)]


def test_crlf_is_normalized_and_offsets_stay_exact() -> None:
    note = (
        "+++\r\na = 1\r\n+++\r\n# A\r\nline one\r\n```\r\ncode\r\n```\r\n[[t|Sh\r\nown]]\r\n"
        "<div>\r\na\r\n</div>\r\n"
    )
    start = body_start(note)[0]
    assert note[start : start + 3] == "# A"
    assert headers(note) == [(1, "A", start)]
    assert "\r" not in walk_text(note)
    assert "Sh\nown" in walk_text(note)


def test_an_html_block_in_a_crlf_note_has_no_carriage_return() -> None:
    text = walk_text("<div>\r\na\r\n</div>\r\n")
    assert "\r" not in text
    assert "a" in text


def test_markup_around_or_inside_a_wikilink_keeps_the_lines_well_formed() -> None:
    note = "# [[a|*b* c]] head\n\n*x [[a* b]] y\n\n#u\n"
    assert headers(note) == [(1, "*b* c head", 0)]
    assert walk_text(note) == "# *b* c head\nx a* b y\nu"
    assert note_hashtags(note) == ["u"]


def test_degenerate_notes_walk_to_nothing() -> None:
    for note in ["", "\ufeff", "---", "---\n", "---\na: 1\n---\n", "+++\n+++"]:
        assert headers(note) == [], repr(note)
        assert note_hashtags(note) == [], repr(note)


def test_a_wikilink_shows_its_display_text_and_records_its_parts() -> None:
    assert walk_text("see [[proj|Project|extra]] now") == "see Project now"


def test_a_wikilink_in_code_is_not_a_link() -> None:
    text = walk_text("`[[x]]` and\n\n```\n[[y]]\n```\n")
    assert "`[[x]]`" in text
    assert "[[y]]" in text


def test_an_embed_is_a_wikilink_showing_its_display_text() -> None:
    assert walk_text("![[pic.png|Picture]]") == "Picture"


def test_degenerate_wikilinks_are_text() -> None:
    assert walk_text("[[|b]] and [[]]") == "[[|b]] and [[]]"


def test_an_empty_display_part_shows_nothing() -> None:
    assert walk_text("a [[t|]] b") == "a  b"


def test_a_wikilink_across_lines_keeps_later_offsets_exact() -> None:
    note = "# A\n[[target\n|Shown]]\n# B\n"
    b = headers(note)[1][2]
    assert note[b : b + 3] == "# B"


def test_a_hashtag_in_prose_is_a_tag_and_loses_its_hash() -> None:
    assert walk_text("a #one b") == "a one b"
    assert note_hashtags("a #one b") == ["one"]


def test_a_hashtag_in_link_text_or_code_is_not_a_tag() -> None:
    note = "[x #a](y.md) [[t|#b]] `#c`\n\n```\n#d\n```\n"
    assert note_hashtags(note) == []
    text = walk_text(note)
    for kept in ["x #a", "#b", "`#c`", "#d"]:
        assert kept in text, f"{kept} in {text!r}"


def test_a_hashtag_that_looks_like_a_list_marker_keeps_its_setext_heading() -> None:
    assert headers("#1. Intro\n---\n") == [(2, "1. Intro", 0)]
    assert note_hashtags("#1. Intro\n---\n")[0] == "1"


def test_multibyte_text_around_links_and_tags() -> None:
    assert walk_text("café [[ü|ö]] #a ñ [é](x.md)") == "café ö a ñ é"


def test_headings_report_rows_in_a_crlf_note() -> None:
    note = "---\r\nt: x\r\n---\r\n# A\r\nbody\r\n\r\n## B\r\n"
    assert rows(note) == [("A", 3), ("B", 6)]


def test_headings_rows_survive_a_wikilink_across_lines() -> None:
    note = "# A\n[[target\n|Shown]]\n# B\n"
    assert [row for _, row in rows(note)] == [0, 3]


def test_the_title_renders_like_the_heading() -> None:
    assert extract_title("# Sprint #42\nbody") == "Sprint 42"
    assert extract_title("# See [[proj|Project]]\n") == "See Project"


def test_a_wikilink_inside_a_markdown_link_label_is_link_text() -> None:
    assert walk_text("[see [[a]]](x.md)") == "see [[a]]"


def test_an_email_autolink_is_not_recorded() -> None:
    assert "me@x.com" in walk_text("mail <me@x.com>")


def test_a_wikilink_inside_an_html_block_is_not_a_link_anywhere() -> None:
    note = "<details>\n<summary>More</summary>\nSee [[hidden]]\n</details>\n"
    assert "See [[hidden]]" in walk_text(note)


def test_a_hashtag_split_at_an_underscore_is_not_a_tag_anywhere() -> None:
    for note in ["#my_tag_ x", "a #_x"]:
        assert note_hashtags(note) == [], repr(note)


def test_an_escaped_hashtag_is_a_tag_and_loses_its_hash() -> None:
    assert note_hashtags("x \\#tag y") == ["tag"]
    assert walk_text("x \\#tag y") == "x tag y"


def test_markup_and_entities_in_a_wikilink_alias_are_shown_as_written() -> None:
    assert walk_text("[[a|*Emph* name]] and [[c|a &amp; b]]") == "*Emph* name and a &amp; b"


def test_a_hashtag_touching_a_wikilink_is_a_tag() -> None:
    assert note_hashtags("[[c]]#t2 and #t3[[d]]") == ["t2", "t3"]


def test_a_wikilink_in_image_alt_text_is_alt_text() -> None:
    assert note_hashtags("![x [[a]] #t](p.png)") == []
    assert walk_text("![x [[a]] #t](p.png)") == "x [[a]] #t"


def test_a_url_fragment_in_an_autolink_is_not_a_tag() -> None:
    assert note_hashtags("<https://x.com/#frag>") == []


def test_a_paragraph_title_renders_like_its_line() -> None:
    assert extract_title("#inbox call [[bob|Bob]]\n") == "inbox call Bob"


def test_a_title_is_trimmed() -> None:
    assert extract_title("[[ a ]] and more\n") == "a  and more"


def test_an_escaped_wikilink_is_not_a_link_anywhere() -> None:
    assert walk_text("\\[[a]] x") == "[[a]] x"


def test_markup_inside_a_plain_wikilink_is_shown_as_written() -> None:
    assert chunk_note("[[a *b* c]]")[0].text == "a *b* c"


@pytest.mark.parametrize(
    ("note", "expected"),
    [
        ("---\na: 1\nb: 2\n---\nbody", "a: 1\nb: 2"),
        ("+++\na = 1\n+++\nbody", "a = 1"),
        ("---\r\na: 1\r\nb: 2\r\n---\r\nbody", "a: 1\nb: 2"),
        ("\ufeff---\na: 1\n---\nbody", "a: 1"),
        ("---\n---\nbody", ""),
        ("---\na\n\n---\n", "a\n"),
        ("---\na: 1\n---", "a: 1"),
        ("---\na: 1\nbody", ""),
        ("plain", ""),
        ("---\r\na\r\n---\r", "a"),
    ],
)
def test_the_frontmatter_is_the_text_between_its_fences(note: str, expected: str) -> None:
    assert body_start(note)[1] == expected
    fm = [s.text for s in chunk_note(note) if s.breadcrumb == (FRONTMATTER,)]
    assert fm == ([expected] if expected else [])


def test_link_syntax_reads_as_commonmark_reads_it() -> None:
    assert walk_text("a [[[tri]]] b") == "a [tri] b"


def test_a_reference_definition_to_an_anchor_is_no_tag() -> None:
    assert note_hashtags("[top]: #anchor\n\nUse [top].") == []


def test_an_empty_display_part_renders_the_target_as_link_text() -> None:
    assert walk_text("[[a#s|]]") == ""


def test_a_spaced_destination_link_is_recorded_once_and_an_image_as_an_image() -> None:
    note = "[t](x.md) and [u](a b.md) ![img](p q.png) [Dave #x](d e.md) #y"
    assert note_hashtags(note) == ["y"]
    assert walk_text(note) == "t and [u](a b.md) ![img](p q.png) [Dave x](d e.md) y"


def test_a_wrapped_wikilink_alias_drops_the_next_lines_container_prefix() -> None:
    note = "> see [[x|multi\n> line]] end"
    assert chunk_note(note)[0].text == "see multi\nline end"
    assert extract_title(note) == "see multi"
    note = "- item [[x|first\n  second]] tail"
    assert chunk_note(note)[0].text == "* item first second tail"
    assert extract_title(note) == "item first"
    note = "> Quoted [[x|setext\n> head]]\n> ---"
    assert headers(note) == [(2, "Quoted setext", 2)]
    chunks = chunk_note(note)
    assert len(chunks) == 1, chunks
    assert (chunks[0].title, chunks[0].text) == ("Quoted setext", "head")


def test_whitespace_left_by_a_wikilink_alias_is_trimmed() -> None:
    note = "# Heading [[a|]]\n"
    assert rows(note)[0][0] == "Heading"
    assert kimun_heading_section_range(note, "Heading") is not None
    assert chunk_note("see [[a|]]")[0].text == "see"
    assert rows("# [[a| ]]\n") == []


def test_a_lone_fence_without_a_newline_is_no_body() -> None:
    for note in ["+++", "---", "\ufeff+++", "\ufeff---"]:
        assert walk_text(note) == "", repr(note)
        assert extract_title(note) == "", repr(note)
        assert chunk_note(note) == [], repr(note)


def test_a_code_block_is_trimmed_of_unicode_whitespace() -> None:
    for ws in ["\u00a0", "\u3000"]:
        assert chunk_note(f"```\n{ws}x{ws}\n```\n")[0].text == "```\nx\n```", repr(ws)


def test_html_in_a_tight_list_item_keeps_its_line_break() -> None:
    chunks = chunk_note("- a\n- <Screen to the terminal>\n- b")
    assert chunks[0].text == "* a\n* \n<Screen to the terminal>\n\n* b"


@pytest.mark.parametrize(
    ("note", "title"),
    [
        ("# Title\u00a0\nbody", "Title\u00a0"),
        ("Title\u00a0\nbody", "Title\u00a0"),
        ("#   Title  \nbody", "Title"),
        ("  Title  \nbody", "Title"),
    ],
)
def test_a_title_is_trimmed_like_its_line(note: str, title: str) -> None:
    assert extract_title(note) == title
    if rows(note):
        assert rows(note)[0][0] == title


def test_a_hash_after_an_ampersand_is_not_a_tag() -> None:
    note = "it&#39;s Title&#32; a #tag &x #tag2"
    assert note_hashtags(note) == ["tag", "tag2"]


def test_an_escaped_hashtag_is_plain_text_and_still_a_tag() -> None:
    assert chunk_note("\\#esc #ok")[0].text == "esc ok"
    assert note_hashtags("\\#esc #ok") == ["esc", "ok"]


def test_inputs_that_crashed_pulldown_wikilinks_read_as_commonmark() -> None:
    for note, chunk_text in [
        ("![[a](b) c](d)]]", "a c]]"),
        ("See ![[img](a.png)](b.md)]] here", "See img]] here"),
        ("![[!](x)](x)]]", "!]]"),
        ("![[]<](x)]]", "[]<]]"),
    ]:
        assert walk_text(note) == chunk_text, repr(note)
        assert heading_display_text(f"# {note}") == chunk_text, repr(note)


def test_embeds_and_broken_embeds_keep_the_notes_text() -> None:
    note = "![[pic.png|200]] `![[a` ![[b](c)\n\n```\n![[x]y\n```\n"
    assert walk_text(note) == "200 `![[a` ![b\n```\n![[x]y\n```"


def every_view(note: str) -> tuple[object, ...]:
    """What askkit's extractors give for a note (kimun's ``every_view``, the parts askkit has)."""
    return (
        extract_title(note),
        [(s.title, s.text) for s in chunk_note(note)],
        rows(note),
        extract_headings(note),
        note_hashtags(note),
    )


def test_a_crlf_note_reads_exactly_as_the_same_note_in_lf() -> None:
    body = (
        "# Title [[a|x\ny]]\n\nx `code\nspan` y [[a|dis\nplay]] #tag\n\n"
        "<div>\nhtml\n</div>\n\n<pre>\na\n\nb\n</pre>\n\n"
        '[l\nm](n.md) a <b\nc="d">x [p\nq](a b.md)\n\n```\nc\r\n```\n\n    i\n    j\n\n## End\n'
    )
    for note in [body, f"---\ntitle: x\n---\n{body}"]:
        lf = note.replace("\r\n", "\n")
        crlf = lf.replace("\n", "\r\n")
        assert every_view(crlf) == every_view(lf), repr(lf)


def test_a_code_span_ending_on_a_quote_marker_reads_the_same_in_crlf() -> None:
    for note in [">(\n]`\na b\n>`|", "> x `\n> a\n> `y"]:
        assert every_view(note.replace("\n", "\r\n")) == every_view(note), repr(note)


#: kimun's fuzz alphabet (``fuzz_walk``).
ALPHABET = [
    "[", "]", "(", ")", "!", "|", "#", "<", ">", "\\", "`", "a", " ", "\n", "[[", "]]",
    "![[", "](", "](x)", "|]]", "- ",
]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(ALPHABET), min_size=1, max_size=24).map("".join))
def test_random_markup_walks_without_panicking(note: str) -> None:
    """kimun's fuzz: every view walks, and the same note in CRLF gives the same output."""
    heading_display_text(f"#{note}")
    assert every_view(note.replace("\n", "\r\n")) == every_view(note)


def test_a_wikilink_holding_a_closing_bracket_is_text() -> None:
    for note, chunk_text in [
        ("[[a|b]c]] x", "[[a|b]c]] x"),
        ("[[a]b]] x", "[[a]b]] x"),
        ("![[a]b]] x", "![[a]b]] x"),
        ("[[a]|]] x", "[[a]|]] x"),
    ]:
        assert walk_text(note) == chunk_text, repr(note)
    assert walk_text("[[a|*b* #t]c]]") == "[[a|b t]c]]"
    assert note_hashtags("[[a|*b* #t]c]]") == ["t"]


def test_links_after_an_empty_display_part_are_kept() -> None:
    for note, chunk_text in [
        ("see [[a|]] and [[b|]] and [[c]]", "see  and  and c"),
        ("> [[a|]] q\n> b [[c]]", "q\nb c"),
        ("*em [[a|]]* tail [[f]]", "em  tail f"),
        ("[x [[a|]]](y.md) #t [[z]]", "x [[a|]] t z"),
    ]:
        assert walk_text(note) == chunk_text, repr(note)


def test_an_embed_inside_a_link_is_link_text() -> None:
    note = "See [x ![[a]]](y.md) and [![[pic.png|200]]](https://x.com) end"
    assert walk_text(note) == "See x ![[a]] and ![[pic.png|200]] end"


def test_an_image_whose_alt_starts_with_a_bracket_is_an_image() -> None:
    assert walk_text("See ![[1] diagram](img.png) here") == "See [1] diagram here"


def test_only_whitespace_left_by_a_wikilink_is_trimmed_from_a_line() -> None:
    assert walk_text('![](img.png) [t](x.md "T") (...)') == " t (...)"
    assert extract_title('![](img.png) [t](x.md "T") (...)') == "t (...)"
    for note, chunk_text in [
        ("see [[a|]]", "see"),
        ("[[a| b]] c", "b c"),
        ("x [[a|b ]]\ny", "x b\ny"),
        ("- [[a|]] x\n  y [[b| ]]", "* x y"),
    ]:
        assert walk_text(note) == chunk_text, repr(note)


def test_code_html_or_an_autolink_between_a_wikilinks_brackets_is_its_text() -> None:
    for note, chunk_text in [
        ("[[a|b `c` d]] x", "b `c` d x"),
        ("[[a|<b>x</b>]]", "<b>x</b>"),
        ("[[a|see <https://e.f>]]", "see <https://e.f>"),
        (
            "[[a|<https://x.y>]] [[a|<m@x.y> `<https://c.d>`]]",
            "<https://x.y> <m@x.y> `<https://c.d>`",
        ),
    ]:
        assert walk_text(note) == chunk_text, repr(note)


def test_a_tab_indented_nested_list_is_read_once() -> None:
    note = "- # Team\n\t- [[A]]\n\t- [[T]]\n\t- [[K]] [n](https://x.y)\n"
    assert walk_text(note) == "* \n# Team\n* A\n* T\n* K n"


def test_a_stray_double_bracket_does_not_swallow_a_later_lines_wikilink() -> None:
    for note, chunk_text in [
        ("Use `[[` to start a link.\nSee [[Note]].", "Use `[[` to start a link.\nSee Note."),
        ("Type [[ then pick.\nSee [[Note]].", "Type [[ then pick.\nSee Note."),
        ("Escaped \\[[ here\nSee [[Note]].", "Escaped [[ here\nSee Note."),
        ("Escaped \\\\[[ here\nSee [[Note]].", "Escaped \\[[ here\nSee Note."),
        ("[[a|x\ny [[Note]] z", "[[a|x\ny Note z"),
    ]:
        assert walk_text(note) == chunk_text, repr(note)


def test_a_spaced_destination_with_a_parenthesis_is_no_link() -> None:
    for note in ["[notes](My Notes (draft).md)", "![s](my (1).png) x"]:
        assert walk_text(note) == note


def test_a_wikilink_after_an_escaped_bang_is_a_link() -> None:
    assert walk_text("x \\![[a]] y") == "x !a y"


def test_a_hashtag_in_reference_link_text_is_no_tag() -> None:
    for note in ["see [about #tag][r]\n\n[r]: x.md", "[#tag]\n\n[#tag]: x.md"]:
        assert note_hashtags(note) == [], repr(note)


def test_a_wikilink_whose_name_matches_a_reference_definition_is_a_link() -> None:
    for note, chunk_text in [
        (
            "See [[docs]] for details.\n\n[docs]: https://docs.example.com\n",
            "See docs for details.",
        ),
        ("See [[Project Plan]] now.\n\n[project plan]: https://x.y\n", "See Project Plan now."),
    ]:
        assert chunk_note(note)[0].text == chunk_text, repr(note)


def test_a_wikilink_in_an_indented_block_is_a_link_but_stays_code() -> None:
    note = "# Team\n\t- [[Pep]] and [[Ann|A]] ![[pic.png]]\n\t- [x](y.md) #tag\n"
    assert chunk_note(note)[0].text == (
        "```\n- [[Pep]] and [[Ann|A]] ![[pic.png]]\n- [x](y.md) #tag\n```"
    )
    assert note_hashtags(note) == []


# --- content_extractor.rs at 67e96640: what the earlier tests do not have ---------------------


def test_a_wikilink_in_code_is_not_an_indexed_link() -> None:
    chunks = chunk_note("see `[[x]]` and [[y]]")
    assert "`[[x]]`" in chunks[0].text, chunks[0].text


def test_both_chunk_paths_render_a_tag_in_a_wikilink_alias_alike() -> None:
    assert chunk_note("see [[a|#b]]")[0].text == "see #b"


def test_a_hashtag_that_looks_like_a_list_marker_keeps_its_setext_heading_in_the_outline() -> None:
    """kimun's ``a_hashtag_that_looks_like_a_list_marker_keeps_its_setext_heading`` of
    ``content_extractor.rs`` (the outline's half; ``walk.rs`` has its own of that name)."""
    headings = [h for h in note_headings("#1. Intro\n---\n\nbody\n") if h.text]
    assert [(h.level, h.text) for h in headings] == [(2, "1. Intro")]


def test_chunk_hashtags_preserve_inline_code_span() -> None:
    assert chunk_note("Use `#define X` to set X.")[0].text == "Use `#define X` to set X."


def test_chunk_hashtags_preserve_inside_markdown_link() -> None:
    assert chunk_note("see [docs](page.md#section) for details")[0].text == "see docs for details"
    assert note_hashtags("see [docs](page.md#section) for details") == []


def test_chunk_hashtags_strip_outside_excluded_zones() -> None:
    assert chunk_note("plain #tag and `#code` mixed")[0].text == "plain tag and `#code` mixed"


def test_get_chunks_and_links_skips_hashtag_inside_image_alt() -> None:
    body = "preview ![alt #draft](img.png) here"
    assert note_hashtags(body) == [], "hashtag inside image alt must not emit"
    assert "#draft" in chunk_note(body)[0].text


def test_get_chunks_and_links_skips_hashtag_inside_invalid_wikilink() -> None:
    body = "see [[#wiki_tag]] for context and a real #real_tag"
    assert note_hashtags(body) == ["real_tag"], (
        "wikilink-derived hashtag must not leak into indexed labels"
    )


def test_get_chunks_and_links_skips_hashtag_inside_wikilink_alias() -> None:
    body = "context: [[foo|see #bar]] then a body tag #other"
    assert note_hashtags(body) == ["other"], "hashtag inside wikilink alias leaked into labels"


def test_get_chunks_and_links_preserves_hashtag_inside_link_body() -> None:
    body = "see [issue #42 board](board.md) for backlog"
    assert note_hashtags(body) == []
    assert "#42" in chunk_note(body)[0].text


@pytest.mark.parametrize(
    ("body", "names"),
    [
        ("use `#notalabel` and tag #real", ["real"]),  # hashtag_in_inline_code_is_not_extracted
        ("before\n```\n#inside\n```\nafter #outside", ["outside"]),  # ..._in_fenced_block_...
        ("x #tag-with-dash y", ["tag"]),  # hashtag_terminates_at_non_label_char
        ("see [docs](https://example.com#section) and #real", ["real"]),  # ..._markdown_link_...
        ("<!-- #internal -->\nplain #real", ["real"]),  # hashtag_inside_html_comment_...
        ('text <a data-foo="#bar">label</a> and #real', ["real"]),  # ..._inside_inline_html_...
        ("foo#bar baz#qux", []),  # hashtag_needs_word_boundary_before
        ("#first line\nsecond #second", ["first", "second"]),  # hashtag_at_start_of_line_...
        ("---\ndescription: see #wip note\n---\nbody with #real", ["real"]),  # ..._frontmatter_...
        ("café#draft and plain #real", ["real"]),  # hashtag_after_unicode_letter_...
        ("#naïve and plain #real", ["real"]),  # hashtag_followed_by_unicode_letter_...
        ("#tag-with-dash", ["tag"]),  # hashtag_followed_by_dash_still_extracted
        ("---\r\ndescription: see #wip note\r\n---\r\nbody with #real", ["real"]),  # ..._crlf_...
        ("[[#wiki_tag]] and plain #real", ["real"]),  # hashtag_inside_wikilink_is_not_extracted
        ("Some text with #hashtag and another #tag123", ["hashtag", "tag123"]),
        (
            "This is a [link](note.md) and #hashtag with [[wikilink]] and #another_tag",
            ["hashtag", "another_tag"],
        ),
    ],
)
def test_hashtags_as_kimuns_label_tests_read_them(body: str, names: list[str]) -> None:
    """The hashtag half of kimun's ``hashtag_*``, ``extract_hashtags_as_links`` and
    ``extract_mixed_links_and_hashtags`` tests (named beside each input)."""
    assert note_hashtags(body) == names


def extract_outline(text: str) -> list[tuple[int, str, int]]:
    """kimun's test helper: ``note_headings`` as (level, text, row)."""
    return [(h.level, h.text, text.count("\n", 0, h.start)) for h in note_headings(text) if h.text]


def assert_outline_lines(text: str, expected: list[tuple[int, str, int]]) -> None:
    """Each outline entry is what the editor's jump looks for, on the row it claims."""
    assert extract_outline(text) == expected, repr(text)
    for _, heading, row in expected:
        assert heading_display_text(text.split("\n")[row].removesuffix("\r")) == heading


def test_the_outline_keeps_body_less_headings_rendered_like_their_lines() -> None:
    assert_outline_lines(
        "---\ntitle: x\n---\n# Title\n## [[target|Shown]] #tag\nbody\n### Empty\n",
        [(1, "Title", 3), (2, "Shown tag", 4), (3, "Empty", 6)],
    )


def test_the_outline_lines_survive_a_trailing_blank_line_after_frontmatter() -> None:
    assert_outline_lines("---\nt: x\n---\n# A\n## B\n\n", [(1, "A", 3), (2, "B", 4)])
    assert_outline_lines("---\n# A\n\n", [(1, "A", 1)])
    assert_outline_lines("---\n---\n# A\n\n\n", [(1, "A", 2)])


def test_the_outline_lines_survive_a_wikilink_broken_across_lines() -> None:
    assert_outline_lines(
        "# A\n[[target\n|Shown]]\n# B\nsee [[x\ny\nz|w]] and [[p\nq]]\n## C\n",
        [(1, "A", 0), (1, "B", 3), (2, "C", 8)],
    )


def test_every_heading_api_renders_a_heading_as_its_chunk_breadcrumb() -> None:
    text = "# See [[other|Other]] #tag\nbody\n## Docs [here](https://x.y) **now**\nmore\n"
    headings = [t for _, t in extract_headings(text)]
    assert headings == [s.heading for s in chunk_note(text)]
    atx_rows = [r for r in text.split("\n") if r.startswith("#")]
    for line, heading in zip(atx_rows, headings, strict=True):
        assert heading_display_text(line) == heading


def test_a_byte_order_mark_does_not_hide_the_first_heading() -> None:
    assert extract_outline("\ufeff# Title\n## B\n") == [(1, "Title", 0), (2, "B", 1)]
    assert extract_title("\ufeff# Title\n") == "Title"


def test_the_outline_gives_each_same_named_heading_its_own_line() -> None:
    assert_outline_lines(
        "# Notes\n## Notes\nbody\n\n## Notes\n", [(1, "Notes", 0), (2, "Notes", 1), (2, "Notes", 4)]
    )


def test_the_outline_lines_skip_code_and_count_nested_headings() -> None:
    assert_outline_lines(
        "intro\n```\n# not a heading\n```\n- # Setup\n> # Quoted\n\n# Last\n",
        [(1, "Setup", 4), (1, "Quoted", 5), (1, "Last", 7)],
    )
    assert_outline_lines("---\n# A\n", [(1, "A", 1)])
    assert_outline_lines("+++\na = 1\n+++\n\n\n# A\r\n## B\r\n", [(1, "A", 5), (2, "B", 6)])


def test_frontmatter_after_a_byte_order_mark_is_still_frontmatter_in_the_chunks() -> None:
    """kimun's ``frontmatter_after_a_byte_order_mark_is_still_frontmatter`` at 67e96640."""
    chunks = chunk_note("\ufeff---\ntitle: x\n---\nbody")
    assert [c.text for c in chunks] == ["body", "title: x"]
    text = "\ufeff---\ntitle: x\n---\nbody"
    assert text[body_start(text)[0] :] == "body"


# --- where askkit's API differs from kimun's, on purpose ---------------------------------------


def test_note_headings_lists_an_empty_heading_kimun_leaves_out() -> None:
    """askkit's ``note_headings`` lists every heading, an empty one too (its section ends the
    one before it, which locating needs); kimun's outline leaves it out, as askkit's
    ``extract_headings`` and the snapshot's headings (those with text) do."""
    note = "# Heading [[a|]]\nx\n# [[a| ]]\ny\n"
    assert [h.text for h in note_headings(note)] == ["Heading", ""]
    assert extract_headings(note) == [(1, "Heading")]
    assert [s.title for s in chunk_note(note)] == ["Heading", ""]


def test_the_breadcrumb_separator_joins_a_walked_breadcrumb() -> None:
    (chunk,) = chunk_note("# [[a|A]]\n## `[[b]]`\ntext\n")
    assert chunk.title == f"A{BREADCRUMB_SEP}`[[b]]`"


def test_the_corpus_is_read_where_it_lives() -> None:
    """The snapshot corpus is kimun's data: read from ``../shared/corpora``, never copied in."""
    here = Path(__file__).resolve().parents[2]
    assert not list(here.glob("**/extraction.txt"))
    first = newest()[1][0].name
    assert note_file(first).is_relative_to(SHARED_CORPORA / "kimun-walk")
