"""kimun's own unit tests of its chunker, titles, headings and labels, name for name.

Each test is a kimun test from ``core/src/note/content_extractor.rs`` (pinned to kimun commit
0384739416f6230e38199dc72e7fb050e5b6f40a) or ``tui/src/ask/locate.rs`` (pinned to kimun commit
82257a834a86d177c7c988fea68242838677520e), with kimun's inputs and kimun's expected values.
Every test runs for both chunker versions (``kimun="0.17"`` and ``"0.18"``): the content
extractor tests are also kimun's tests at commit 67e96640a6ceae220ba578117d14352a60658604, after
the single note walk, with the same inputs and expected values (the ``cleanup_hashtags`` ones
as ``chunk_hashtags_*`` through the chunker; those of 67e96640 alone are in
``test_kimun_walk.py``).

The askkit names for kimun's: ``chunk_note`` is ``get_content_chunks`` /
``get_chunks_and_links(..).0``; a ``Section``'s ``title`` is ``get_breadcrumb()``, ``text`` is
``get_text()``, ``breadcrumb`` is ``breadcrumb_parts()`` and ``heading`` is ``breadcrumb_last()``
("" where kimun has ``None``); ``extract_title`` is ``get_content_data(..).title``;
``split_frontmatter`` is ``remove_frontmatter`` (``None`` where kimun has ""); ``split_note(..)
.fm_end`` is ``frontmatter_end_byte``; ranges are ``(start, end)`` tuples.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from askkit.vault import chunking, locate
from askkit.vault._note_text import cleanup_hashtags, label_matches, split_note
from askkit.vault.chunking import BREADCRUMB_SEP, KIMUN_VERSIONS, KimunVersion, Section
from askkit.vault.locate import atx_heading_text

#: The chunker version the running test uses (set by the ``_kimun`` fixture).
_VERSION: list[KimunVersion] = ["0.18"]


@pytest.fixture(autouse=True, params=KIMUN_VERSIONS)
def _kimun(request: pytest.FixtureRequest) -> Iterator[None]:
    _VERSION[0] = request.param
    yield
    _VERSION[0] = "0.18"


def chunk_note(text: str) -> list[Section]:
    return chunking.chunk_note(text, kimun=_VERSION[0])


def extract_headings(text: str) -> list[tuple[int, str]]:
    return chunking.extract_headings(text, kimun=_VERSION[0])


def extract_title(text: str) -> str:
    return chunking.extract_title(text, kimun=_VERSION[0])


def split_frontmatter(text: str) -> tuple[str | None, str]:
    return chunking.split_frontmatter(text, kimun=_VERSION[0])


def heading_display_text(line: str) -> str | None:
    return locate.heading_display_text(line, kimun=_VERSION[0])


def kimun_heading_section_range(note: str, heading: str) -> tuple[int, int] | None:
    return locate.kimun_heading_section_range(note, heading, kimun=_VERSION[0])


def kimun_section_range(note: str, heading: str, chunk_text: str) -> tuple[int, int] | None:
    return locate.kimun_section_range(note, heading, chunk_text, kimun=_VERSION[0])


def label_names(text: str) -> list[str]:
    return [name for _, _, name in label_matches(text)]


# --- content_extractor.rs: chunks, breadcrumbs and titles ---------------------------------


def test_check_title_yaml_frontmatter() -> None:
    markdown = "---\nsomething: nice\nother: else\n---\n\ntitle"
    content_chunks = chunk_note(markdown)

    assert content_chunks[0].title == ""
    assert content_chunks[0].text == "title"
    assert content_chunks[1].title == "FrontMatter"
    assert content_chunks[1].text == "something: nice\nother: else"


def test_check_title_toml_frontmatter() -> None:
    markdown = "+++\nsomething: nice\nother: else\n+++\n\ntitle"
    content_chunks = chunk_note(markdown)

    assert len(content_chunks) == 2
    assert extract_title(markdown) == "title"
    assert content_chunks[0].title == ""
    assert content_chunks[0].text == "title"
    assert content_chunks[1].title == "FrontMatter"
    assert content_chunks[1].text == "something: nice\nother: else"


def test_check_title_in_list() -> None:
    markdown = "- First Item\n- Second Item\n\nSome text"
    content_chunks = chunk_note(markdown)

    assert len(content_chunks) == 1
    assert extract_title(markdown) == "First Item"
    assert content_chunks[0].title == ""
    assert content_chunks[0].text == "* First Item\n* Second Item\nSome text"


def test_convert_list() -> None:
    markdown = "# Title\n\n- First *Item*\n- Second Item\n\nSome text"
    content_chunks = chunk_note(markdown)

    assert len(content_chunks) == 1
    assert extract_title(markdown) == "Title"
    assert content_chunks[0].title == "Title"
    assert content_chunks[0].text == "* First Item\n* Second Item\nSome text"


def test_convert_list_two_level() -> None:
    markdown = (
        "# Title\n"
        "\n"
        "- First Item\n"
        "    - First subitem\n"
        "    - Second subitem\n"
        "- Second Item\n"
        "\n"
        "Some text"
    )
    content_chunks = chunk_note(markdown)

    assert len(content_chunks) == 1
    assert extract_title(markdown) == "Title"
    assert content_chunks[0].title == "Title"
    assert content_chunks[0].text == (
        "* First Item\n    * First subitem\n    * Second subitem\n* Second Item\nSome text"
    )


def test_convert_list_empty_item() -> None:
    markdown = "# Title\n\n- First Item\n- Second Item\n-\n\n"
    content_chunks = chunk_note(markdown)

    assert len(content_chunks) == 1
    assert extract_title(markdown) == "Title"
    assert content_chunks[0].title == "Title"
    assert content_chunks[0].text == "* First Item\n* Second Item"


def test_check_title_no_header() -> None:
    markdown = "[No header](https://example.com)\n\nSome text"
    content_chunks = chunk_note(markdown)

    assert len(content_chunks) == 1
    assert extract_title(markdown) == "No header"
    assert content_chunks[0].title == ""
    assert content_chunks[0].text == "No header\nSome text"


def test_check_hierarchy_one() -> None:
    markdown = "# Title\nSome text"
    content_chunks = chunk_note(markdown)

    assert len(content_chunks) == 1
    assert extract_title(markdown) == "Title"
    assert content_chunks[0].title == "Title"
    assert content_chunks[0].text == "Some text"


def test_check_hierarchy_two() -> None:
    markdown = "# Title\nSome text\n\n## Subtitle\nMore text"
    content_chunks = chunk_note(markdown)

    assert len(content_chunks) == 2
    assert extract_title(markdown) == "Title"
    assert content_chunks[0].title == "Title"
    assert content_chunks[0].text == "Some text"
    assert content_chunks[1].title == f"Title{BREADCRUMB_SEP}Subtitle"
    assert content_chunks[1].text == "More text"


def test_check_hierarchy_three() -> None:
    markdown = "# Title\nSome text\n\n## Subtitle\nMore text\n\n### Subsubtitle\nEven more text"
    content_chunks = chunk_note(markdown)

    assert len(content_chunks) == 3
    assert extract_title(markdown) == "Title"
    assert content_chunks[0].title == "Title"
    assert content_chunks[0].text == "Some text"
    assert content_chunks[1].title == f"Title{BREADCRUMB_SEP}Subtitle"
    assert content_chunks[1].text == "More text"
    assert content_chunks[2].title == f"Title{BREADCRUMB_SEP}Subtitle{BREADCRUMB_SEP}Subsubtitle"
    assert content_chunks[2].text == "Even more text"


def test_check_nested_hierarchy_three() -> None:
    markdown = (
        "# Title\n"
        "Some text\n"
        "\n"
        "## Subtitle\n"
        "More text\n"
        "\n"
        "### Subsubtitle\n"
        "Even more text\n"
        "\n"
        "## Level 2 Title\n"
        "There is text here"
    )
    content_chunks = chunk_note(markdown)

    assert len(content_chunks) == 4
    assert extract_title(markdown) == "Title"
    assert content_chunks[0].title == "Title"
    assert content_chunks[0].text == "Some text"
    assert content_chunks[1].title == f"Title{BREADCRUMB_SEP}Subtitle"
    assert content_chunks[1].text == "More text"
    assert content_chunks[2].title == f"Title{BREADCRUMB_SEP}Subtitle{BREADCRUMB_SEP}Subsubtitle"
    assert content_chunks[2].text == "Even more text"
    assert content_chunks[3].title == f"Title{BREADCRUMB_SEP}Level 2 Title"
    assert content_chunks[3].text == "There is text here"


def test_check_nested_hierarchy_four() -> None:
    markdown = (
        "# Title\n"
        "Some text\n"
        "\n"
        "## Subtitle\n"
        "More text\n"
        "\n"
        "### Subsubtitle\n"
        "Even more text\n"
        "\n"
        "## Level 2 Title\n"
        "There is text here\n"
        "\n"
        "### Fourth Subsubtitle\n"
        "Before last text\n"
        "\n"
        "# Main Title\n"
        "Another main content\n"
    )
    content_chunks = chunk_note(markdown)

    assert len(content_chunks) == 6
    assert extract_title(markdown) == "Title"
    assert content_chunks[0].title == "Title"
    assert content_chunks[0].text == "Some text"
    assert content_chunks[1].title == f"Title{BREADCRUMB_SEP}Subtitle"
    assert content_chunks[1].text == "More text"
    assert content_chunks[2].title == f"Title{BREADCRUMB_SEP}Subtitle{BREADCRUMB_SEP}Subsubtitle"
    assert content_chunks[2].text == "Even more text"
    assert content_chunks[3].title == f"Title{BREADCRUMB_SEP}Level 2 Title"
    assert content_chunks[3].text == "There is text here"
    assert content_chunks[4].title == (
        f"Title{BREADCRUMB_SEP}Level 2 Title{BREADCRUMB_SEP}Fourth Subsubtitle"
    )
    assert content_chunks[4].text == "Before last text"
    assert content_chunks[5].title == "Main Title"
    assert content_chunks[5].text == "Another main content"


def test_check_nested_hierarchy_four_jump() -> None:
    markdown = (
        "# Title\n"
        "Some text\n"
        "\n"
        "### Subtitle\n"
        "More text\n"
        "\n"
        "# Subsubtitle\n"
        "Even more text\n"
        "\n"
        "#### Level 2 Title\n"
        "There is text here\n"
        "\n"
        "## Fourth Subsubtitle\n"
        "Before last text\n"
        "\n"
        "# Main Title\n"
        "Another main content\n"
    )
    content_chunks = chunk_note(markdown)

    assert len(content_chunks) == 6
    assert extract_title(markdown) == "Title"
    assert content_chunks[0].title == "Title"
    assert content_chunks[0].text == "Some text"
    assert content_chunks[1].title == f"Title{BREADCRUMB_SEP}Subtitle"
    assert content_chunks[1].text == "More text"
    assert content_chunks[2].title == "Subsubtitle"
    assert content_chunks[2].text == "Even more text"
    assert content_chunks[3].title == f"Subsubtitle{BREADCRUMB_SEP}Level 2 Title"
    assert content_chunks[3].text == "There is text here"
    assert content_chunks[4].title == f"Subsubtitle{BREADCRUMB_SEP}Fourth Subsubtitle"
    assert content_chunks[4].text == "Before last text"
    assert content_chunks[5].title == "Main Title"
    assert content_chunks[5].text == "Another main content"


def test_check_title_with_link() -> None:
    markdown = "# [Title link](https://nico.red)\nSome text"
    content_chunks = chunk_note(markdown)

    assert len(content_chunks) == 1
    assert extract_title(markdown) == "Title link"
    assert content_chunks[0].title == "Title link"
    assert content_chunks[0].text == "Some text"


def test_check_title_with_style() -> None:
    markdown = "# Title **bold** *italic*\nSome text"
    content_chunks = chunk_note(markdown)

    assert len(content_chunks) == 1
    assert extract_title(markdown) == "Title bold italic"
    assert content_chunks[0].title == "Title bold italic"
    assert content_chunks[0].text == "Some text"


def test_check_content_without_title() -> None:
    markdown = "Intro text\n\n# Title\n\nSome text"
    content_chunks = chunk_note(markdown)

    assert len(content_chunks) == 2
    assert extract_title(markdown) == "Intro text"
    assert content_chunks[0].title == ""
    assert content_chunks[0].text == "Intro text"
    assert content_chunks[1].title == "Title"
    assert content_chunks[1].text == "Some text"


def test_check_content_with_link() -> None:
    markdown = "# Title\n\n[Some text linking](www.example.com)"
    content_chunks = chunk_note(markdown)

    assert len(content_chunks) == 1
    assert extract_title(markdown) == "Title"
    assert content_chunks[0].title == "Title"
    assert content_chunks[0].text == "Some text linking"


def test_check_content_with_wikilink() -> None:
    markdown = "# Title\n\n[[Some text linking]]"
    content_chunks = chunk_note(markdown)

    assert len(content_chunks) == 1
    assert extract_title(markdown) == "Title"
    assert content_chunks[0].title == "Title"
    assert content_chunks[0].text == "Some text linking"


def test_check_content_with_hashtags() -> None:
    markdown = "# Title\n\nSome text, #hashtag and more text"
    content_chunks = chunk_note(markdown)

    assert len(content_chunks) == 1
    assert extract_title(markdown) == "Title"
    assert content_chunks[0].title == "Title"
    assert content_chunks[0].text == "Some text, hashtag and more text"


def test_check_code() -> None:
    markdown = "# Title\n\nSome text, `code` and more text"
    content_chunks = chunk_note(markdown)

    assert len(content_chunks) == 1
    assert extract_title(markdown) == "Title"
    assert content_chunks[0].title == "Title"
    assert content_chunks[0].text == "Some text, `code` and more text"


def test_check_code_block() -> None:
    markdown = "# Title\n\nSome text\n\n```bash\nmkdir test\nls -la ./test\n```"
    content_chunks = chunk_note(markdown)

    assert len(content_chunks) == 1
    assert extract_title(markdown) == "Title"
    assert content_chunks[0].title == "Title"
    assert content_chunks[0].text == "Some text\n```bash\nmkdir test\nls -la ./test\n```"


def test_empty_note_produces_no_chunks() -> None:
    chunks = chunk_note("")
    assert not chunks


def test_only_frontmatter_produces_one_chunk() -> None:
    markdown = "---\ntitle: Hello\n---"
    chunks = chunk_note(markdown)
    assert len(chunks) == 1
    assert chunks[0].title == "FrontMatter"


def test_adjacent_headers_no_empty_chunks() -> None:
    markdown = "# Title\n## Subtitle\nSome text"
    chunks = chunk_note(markdown)
    assert len(chunks) == 1
    assert chunks[0].title == f"Title{BREADCRUMB_SEP}Subtitle"
    assert chunks[0].text == "Some text"


def test_link_with_title_attribute_keeps_only_link_text() -> None:
    markdown = '# Section\n[visit here](https://example.com "My Site")'
    chunks = chunk_note(markdown)
    assert len(chunks) == 1
    assert chunks[0].text == "visit here"


def test_image_alt_text_is_kept_not_title() -> None:
    markdown = '# Section\n![an image](photo.png "Photo title")'
    chunks = chunk_note(markdown)
    assert len(chunks) == 1
    assert chunks[0].text == "an image"


def test_wikilink_multi_pipe_uses_display_text() -> None:
    markdown = "# Section\n[[note|display text|ignored extra]]"
    chunks = chunk_note(markdown)
    assert len(chunks) == 1
    assert chunks[0].text == "display text"


def test_header_only_note_no_body_chunk() -> None:
    markdown = "# Just a title"
    chunks = chunk_note(markdown)
    assert not chunks


def test_deeply_nested_headers() -> None:
    markdown = "# H1\n## H2\n### H3\n#### H4\ntext"
    chunks = chunk_note(markdown)
    assert len(chunks) == 1
    assert chunks[0].title == BREADCRUMB_SEP.join(["H1", "H2", "H3", "H4"])
    assert chunks[0].text == "text"


def test_breadcrumb_preserves_heading_with_gt_char() -> None:
    markdown = "# Foo > Bar\nbody text\n"
    chunks = chunk_note(markdown)
    assert len(chunks) == 1
    assert list(chunks[0].breadcrumb) == ["Foo > Bar"]
    assert chunks[0].heading == "Foo > Bar"


def test_unclosed_frontmatter_treated_as_body() -> None:
    markdown = "---\ntitle: Hello\nSome actual content"
    chunks = chunk_note(markdown)
    assert chunks
    assert all(c.title != "FrontMatter" for c in chunks)


# --- content_extractor.rs: labels and hashtag cleanup -------------------------------------


def test_label_matches_skips_after_label_char() -> None:
    assert label_names("foo#bar and #real") == ["real"]


def test_label_matches_at_start() -> None:
    assert label_names("#first and #second") == ["first", "second"]


def test_label_matches_skips_double_hash() -> None:
    v = label_names("##tag and ##other")
    assert not v, f"expected no labels, got {v!r}"


def test_label_matches_skips_triple_hash() -> None:
    v = label_names("###tag")
    assert not v, f"expected no labels, got {v!r}"


def test_label_matches_skips_adjacent_hash() -> None:
    v = label_names("#tag#more")
    assert not v, f"expected no labels, got {v!r}"


def test_label_matches_after_space_then_hash() -> None:
    assert label_names("# #tag") == ["tag"]


def test_cleanup_hashtags_preserves_inline_code_span() -> None:
    assert cleanup_hashtags("Use `#define X` to set X.") == "Use `#define X` to set X."


def test_cleanup_hashtags_preserves_inside_markdown_link() -> None:
    cleaned = cleanup_hashtags("see [docs](page.md#section) for details")
    assert cleaned == "see [docs](page.md#section) for details"


def test_cleanup_hashtags_strips_outside_excluded_zones() -> None:
    cleaned = cleanup_hashtags("plain #tag and `#code` mixed")
    assert cleaned == "plain tag and `#code` mixed"


def test_get_chunks_and_links_skips_hashtag_inside_image_alt() -> None:
    """The chunk-text half of kimun's test; its links half is not askkit's to check."""
    body = "preview ![alt #draft](img.png) here"
    chunks = chunk_note(body)
    body_chunk = next(c for c in chunks if c.title != "FrontMatter")
    assert "#draft" in body_chunk.text, (
        f"expected `#draft` verbatim in chunk text, got {body_chunk.text!r}"
    )


def test_get_chunks_and_links_preserves_hashtag_inside_link_body() -> None:
    """The chunk-text half of kimun's test; its links half is not askkit's to check."""
    body = "see [issue #42 board](board.md) for backlog"
    chunks = chunk_note(body)
    body_chunk = next(c for c in chunks if c.title != "FrontMatter")
    assert "#42" in body_chunk.text, (
        f"expected `#42` to survive in chunk text, got {body_chunk.text!r}"
    )


# --- content_extractor.rs: heading_section_range, atx_heading_text, heading_display_text ----


def test_heading_section_range_stops_at_the_next_heading() -> None:
    note = "# a\nfirst\n# b\nsecond\n# c\nthird\n"
    r = kimun_heading_section_range(note, "b")
    assert r is not None
    assert note[r[0] : r[1]] == "# b\nsecond\n"


def test_heading_section_range_runs_to_note_end_when_last() -> None:
    note = "# a\nfirst\n# b\nsecond and third\nfourth\n"
    r = kimun_heading_section_range(note, "b")
    assert r is not None
    assert note[r[0] : r[1]] == "# b\nsecond and third\nfourth\n"


def test_heading_section_range_none_when_heading_absent() -> None:
    assert kimun_heading_section_range("# a\nfirst\n", "missing") is None


def test_heading_section_range_matches_diacritics_stripped_and_case_insensitive() -> None:
    note = "# Café\nespresso and pastries\n"
    r = kimun_heading_section_range(note, "cafe")
    assert r is not None
    assert note[r[0] : r[1]] == "# Café\nespresso and pastries\n"


def test_heading_section_range_ignores_a_bare_hashtag_line() -> None:
    note = "#projects\nnot a heading\n"
    assert kimun_heading_section_range(note, "projects") is None


def test_heading_section_range_strips_a_closing_hash_trailer() -> None:
    note = "## Title ##\nbody\n"
    r = kimun_heading_section_range(note, "Title")
    assert r is not None
    assert note[r[0] : r[1]] == "## Title ##\nbody\n"


def test_atx_heading_text_rejects_a_bare_hashtag() -> None:
    assert atx_heading_text("#projects") is None


def test_atx_heading_text_accepts_a_plain_heading() -> None:
    assert atx_heading_text("## Title") == "Title"


def test_atx_heading_text_strips_closing_run() -> None:
    assert atx_heading_text("## Title ##") == "Title"
    assert atx_heading_text("# ###") == ""


def test_atx_heading_text_keeps_a_trailing_hash_without_preceding_space() -> None:
    assert atx_heading_text("## C#") == "C#"


def test_atx_heading_text_rejects_more_than_six_hashes() -> None:
    assert atx_heading_text("####### Title") is None


def test_heading_display_text_renders_like_the_chunker() -> None:
    cases = [
        ("# Top", "Top"),
        ("## **Sub** One ##", "Sub One"),
        ("# See [[other note]]", "See other note"),
        ("# See [[other note|alias]]", "See alias"),
        ("# Sprint #42", "Sprint 42"),
        ("# Docs [here](https://example.com)", "Docs here"),
        ("# Tags #planning", "Tags planning"),
    ]
    for line, expected in cases:
        assert heading_display_text(line) == expected, repr(line)
        chunks = chunk_note(f"{line}\nbody\n")
        assert chunks[0].heading == expected, f"chunker disagrees on {line!r}"


def test_heading_display_text_is_none_off_a_heading() -> None:
    assert heading_display_text("plain") is None
    assert heading_display_text("#tag here") is None
    assert heading_display_text("  see #tag") is None
    assert heading_display_text("") is None


def test_heading_display_text_drops_leading_indentation() -> None:
    assert heading_display_text("    # Nested") == "Nested"
    chunks = chunk_note("- item\n    # Nested\nbody\n")
    assert any(c.heading == "Nested" for c in chunks), (
        f"the chunker lists the nested heading: {chunks!r}"
    )


def test_the_title_of_a_wrapped_list_item_is_its_first_line() -> None:
    assert extract_title("- item one\n  #tag after soft break\n") == "item one"
    assert extract_title("1. one  \n   two\n") == "one"
    chunks = chunk_note("- item one\n  wraps on\n")
    assert "item one wraps on" in chunks[0].text, repr(chunks)


def test_a_line_break_tag_in_a_heading_keeps_the_words_apart() -> None:
    assert extract_headings("# Release<br>notes\n# Ctrl <kbd>K</kbd>\n") == [
        (1, "Release notes"),
        (1, "Ctrl K"),
    ]


def test_heading_display_text_renders_a_heading_inside_a_list_or_quote() -> None:
    for line, expected in [
        ("- # Setup", "Setup"),
        ("  * ## Deep", "Deep"),
        ("1. # Step", "Step"),
        ("> # Quoted", "Quoted"),
        ('## <a id="x"></a>Install', "Install"),
    ]:
        assert heading_display_text(line) == expected, repr(line)
    assert heading_display_text("- plain item") is None
    assert heading_display_text("- #tag") is None
    chunks = chunk_note("- # Setup\n  make install\n")
    assert any(c.heading == "Setup" for c in chunks), repr(chunks)


def test_heading_section_range_finds_a_heading_by_its_rendered_text() -> None:
    note = '# a\nfirst\n## <a id="x"></a>Install\nsteps\n# c\n'
    r = kimun_heading_section_range(note, "Install")
    assert r is not None
    assert note[r[0] : r[1]] == '## <a id="x"></a>Install\nsteps\n'
    note = "- # Setup\n  make install\n"
    assert kimun_heading_section_range(note, "Setup") is not None


# --- content_extractor.rs: lists, headings in blocks, inline HTML, frontmatter ------------


def test_every_line_of_a_list_item_is_kept() -> None:
    text = (
        "# Lists\n"
        "\n"
        "- a long bullet that wraps\n"
        "  onto zebra line.\n"
        "- parent\n"
        "  - nested child\n"
        "    continues here\n"
        "  - second child\n"
        "- hard break  \n"
        "  after the break\n"
        "\n"
        "1. ordered one\n"
        "   wraps too\n"
    )
    chunks = chunk_note(text)
    body = "".join(c.text for c in chunks)
    for kept in ["onto zebra line.", "continues here", "after the break", "wraps too"]:
        assert kept in body, f"{kept!r} missing from {body!r}"
    assert "    * second child" in body, (
        f"a nested item keeps its level after a wrapped sibling: {body!r}"
    )


def test_a_heading_inside_a_list_item_is_only_its_own_text() -> None:
    text = "# Top\n\n- # Setup\n  make install\n"
    assert extract_headings(text) == [(1, "Top"), (1, "Setup")]
    chunks = chunk_note(text)
    assert any(c.title == "Setup" and "make install" in c.text for c in chunks), repr(chunks)


def test_inline_html_never_cuts_a_heading_or_a_line() -> None:
    text = (
        "# Release <kbd>v2</kbd> notes\n"
        "\n"
        "Press <kbd>Ctrl</kbd>+K now.\n"
        "\n"
        '## <a id="x"></a>Install\n'
        "body"
    )
    assert extract_headings(text) == [(1, "Release v2 notes"), (2, "Install")]
    chunks = chunk_note(text)
    assert any("Press <kbd>Ctrl</kbd>+K now." in c.text for c in chunks), (
        f"a paragraph with inline HTML stays one line: {chunks!r}"
    )


def test_a_heading_directly_above_a_code_block_is_kept() -> None:
    text = "# Setup\n```sh\nmake\n```\n## Next\ntext"
    assert extract_headings(text) == [(1, "Setup"), (2, "Next")]
    chunks = chunk_note(text)
    assert any(c.title == "Setup" and "make" in c.text for c in chunks), (
        f"the code is filed under its heading: {chunks!r}"
    )


def test_frontmatter_after_a_byte_order_mark_is_still_frontmatter() -> None:
    text = "\ufeff---\ntitle: x\n---\nbody"
    assert split_frontmatter(text) == ("title: x", "body")
    assert text[split_note(text).fm_end :] == "body"


# --- tui/src/ask/locate.rs: section_range -------------------------------------------------


def test_section_range_prefers_exact_chunk_text() -> None:
    note = "# a\nalpha body\n# b\nbeta body\n"
    r = kimun_section_range(note, "b", "beta body")
    assert r is not None
    assert note[r[0] : r[1]] == "beta body"


def test_section_range_falls_back_to_heading_match() -> None:
    note = "# intro\nreal text here\n"
    r = kimun_section_range(note, "INTRO", "normalized text")
    assert r is not None
    assert "real text here" in note[r[0] : r[1]]


def test_section_range_gives_up_gracefully() -> None:
    assert kimun_section_range("# x\nbody\n", "missing", "nope") is None


def test_section_range_matches_via_chunk_when_exact_text_absent_but_chunk_matches() -> None:
    note = "# one\nfirst body\n# two\nsecond body\n"
    r = kimun_section_range(note, "two", "does not appear literally")
    assert r is not None
    assert "second body" in note[r[0] : r[1]]


def test_section_range_prefers_the_first_occurrence_on_a_duplicate_chunk_text() -> None:
    note = "# a\nshared body\n# b\nshared body\n"
    r = kimun_section_range(note, "b", "shared body")
    assert r == (4, 15), "first occurrence, under heading a, wins"
