"""askkit.vault.chunking: kimun core's chunker, rule by rule, plus offsets and the vault check."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from askkit.errors import UsageError
from askkit.vault._chunk_check import section_problems
from askkit.vault.chunking import (
    FRONTMATTER,
    KIMUN_VERSIONS,
    KimunVersion,
    Section,
    check_kimun,
    check_note_sections,
    check_vault_sections,
    chunk_note,
    extract_title,
    note_hashtags,
    note_headings,
    split_frontmatter,
)
from tests.conftest import ROOT
from tests.corpora import corpus
from tests.vault.kimun_snapshot import kimun_walk

SEP = "\x1f"


def pairs(text: str) -> list[tuple[str, str]]:
    return [(s.title, s.text) for s in chunk_note(text)]


# --- kimun's own chunker tests (content_extractor.rs), value for value ------


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("# Top", "Top"),
        ("## **Sub** One ##", "Sub One"),
        ("# See [[other note]]", "See other note"),
        ("# See [[other note|alias]]", "See alias"),
        ("# Sprint #42", "Sprint 42"),
        ("# Docs [here](https://example.com)", "Docs here"),
        ("# Tags #planning", "Tags planning"),
        ("# Release<br>notes", "Release notes"),
        ("# Ctrl <kbd>K</kbd>", "Ctrl K"),
        ("# Use `grep`", "Use `grep`"),
        ('## <a id="x"></a>Install', "Install"),
    ],
)
def test_kimun_heading_display_text(line: str, expected: str) -> None:
    assert chunk_note(f"{line}\nbody\n")[0].heading == expected


def test_kimun_unclosed_frontmatter_is_body_without_its_opening_line() -> None:
    sections = chunk_note("---\ntitle: Hello\nSome actual content")
    assert [s.title for s in sections] == [""]
    assert sections[0].text == "title: Hello\nSome actual content"


def test_kimun_every_line_of_a_list_item_is_kept() -> None:
    note = (
        "# Lists\n\n- a long bullet that wraps\n  onto zebra line.\n- parent\n  - nested child\n"
        "    continues here\n  - second child\n- hard break  \n  after the break\n\n"
        "1. ordered one\n   wraps too\n"
    )
    assert chunk_note(note)[0].text == (
        "* a long bullet that wraps onto zebra line.\n* parent\n    * nested child continues here\n"
        "    * second child\n* hard break after the break\n* ordered one wraps too"
    )


def test_kimun_heading_inside_a_list_item_is_a_heading() -> None:
    sections = chunk_note("# Top\n\n- # Setup\n  make install\n")
    assert ("Setup", "make install") in [(s.title, s.text) for s in sections]


def test_kimun_inline_html_never_cuts_a_line() -> None:
    note = (
        "# Release <kbd>v2</kbd> notes\n\nPress <kbd>Ctrl</kbd>+K now.\n\n"
        '## <a id="x"></a>Install\nbody'
    )
    assert pairs(note) == [
        ("Release v2 notes", "Press <kbd>Ctrl</kbd>+K now."),
        (f"Release v2 notes{SEP}Install", "body"),
    ]


def test_kimun_frontmatter_after_a_byte_order_mark() -> None:
    assert split_frontmatter("\ufeff---\ntitle: x\n---\nbody") == ("title: x", "body")


# --- kimun's chunking rules, as its code has them ----------------------------


def test_heading_directly_above_a_code_block_is_kept() -> None:
    """kimun's current chunker keeps it (``a_heading_directly_above_a_code_block_is_kept``).

    Older kimun versions dropped the heading (its current source says it "used
    to be dropped here").
    """
    assert pairs("# Setup\n```sh\nmake\n```\n## Next\ntext") == [
        ("Setup", "```sh\nmake\n```"),
        (f"Setup{SEP}Next", "text"),
    ]


def test_headings_inside_code_fences_are_code() -> None:
    note = "# Real\n```\n# not a heading\n## nor this\n```\n"
    assert pairs(note) == [("Real", "```\n# not a heading\n## nor this\n```")]
    assert [h.text for h in note_headings(note)] == ["Real"]


def test_indented_code_is_code_too() -> None:
    assert pairs("# Real\n\n    # indented code\n") == [("Real", "```\n# indented code\n```")]


def test_setext_headings_are_headings() -> None:
    note = "Chapter\n=======\nintro\n\nSection\n-------\nbody\n"
    assert pairs(note) == [("Chapter", "intro"), (f"Chapter{SEP}Section", "body")]
    assert [(h.level, h.setext) for h in note_headings(note)] == [(1, True), (2, True)]


def test_multi_line_setext_heading_keeps_its_first_line() -> None:
    """A soft break inside a heading ends it: the next line is body text (derived)."""
    assert pairs("Foo\nbar\n===\nbody") == [("Foo", "bar\nbody")]


def test_text_is_folded_breadcrumb_is_not() -> None:
    assert pairs("# Café crème\nÆsir straße Œuvre\n") == [("Café crème", "Asir strase OEuvre")]


def test_frontmatter_text_is_not_folded_and_empty_frontmatter_has_no_section() -> None:
    assert pairs("---\ntitle: Café\n---\nbody") == [("", "body"), (FRONTMATTER, "title: Café")]
    assert pairs("---\n---\nbody") == [("", "body")]
    assert pairs("---\n\n\n---\nbody") == [("", "body"), (FRONTMATTER, "\n")]


def test_frontmatter_closes_at_first_equal_line_only() -> None:
    note = "---\na: 1\n---\ntext\n---\nmore\n"
    # the second ``---`` is body: here it underlines a setext heading
    assert pairs(note) == [("text", "more"), (FRONTMATTER, "a: 1")]


@pytest.mark.parametrize(
    ("note", "text"),
    [
        ("| a | b |\n|---|---|\n| 1 | 2 |\n", "| a | b |\n|---|---|\n| 1 | 2 |"),
        ("- [ ] task\n- [x] done\n", "* [ ] task\n* [x] done"),
        ("~~gone~~ text\n", "~~gone~~ text"),
        ("Note[^1]\n\n[^1]: the note\n", "Note[^1]\n[^1]: the note"),
    ],
)
def test_no_markdown_extensions(note: str, text: str) -> None:
    """pulldown-cmark runs with no options: tables, tasks, strikethrough, footnotes are text."""
    assert pairs(note) == [("", text)]


def test_loose_list_items_render_as_kimun_does() -> None:
    """A paragraph inside a loose item is its own line; the item line is ``"* "`` (derived)."""
    assert pairs("- a\n\n- b\n") == [("", "* \na\n* \nb")]


def test_block_html_is_one_line_per_source_line() -> None:
    """pulldown-cmark sends one Html event per line, each keeping its line break."""
    assert pairs("<div>\nfoo\n</div>\n\ntext") == [("", "<div>\n\nfoo\n\n</div>\n\ntext")]


def test_blockquotes_are_transparent() -> None:
    assert pairs("> quoted *text*\n> more\n") == [("", "quoted text\nmore")]


def test_rule_and_hard_break_make_new_lines() -> None:
    assert pairs("a  \nb\n\n---\n\nc\\\nd\n") == [("", "a\nb\nc\nd")]


def test_hashtags_outside_text_are_kept() -> None:
    note = (
        "x `#code` and [link #42](n.md) and ![alt #draft](i.png) and [[#wiki_tag]]\n\n"
        "```\n#fenced\n```\n\nfoo#bar ##two #tag#more #naïve #tag-dash\n"
    )
    assert chunk_note(note)[0].text == (
        "x `#code` and link #42 and alt #draft and #wiki_tag\n```\n#fenced\n```\n"
        "foo#bar ##two #tag#more #naive tag-dash"
    )


def test_hashtag_next_to_underscore_emphasis_is_not_a_tag() -> None:
    assert chunk_note("_#tag_ and *#tag*\n")[0].text == "#tag and tag"


def test_blank_section_is_dropped_with_rust_whitespace() -> None:
    """Rust ``trim`` does not strip U+001F or U+200B: such a section is kept."""
    assert chunk_note("# A\n\u3000\n# B\nx\n")[0].title == "B"
    assert [s.title for s in chunk_note("# A\n\u200b\n# B\nx\n")] == ["A", "B"]


def test_empty_heading_is_an_empty_segment() -> None:
    section = chunk_note("#\n## Sub\ntext\n")[0]
    assert section.breadcrumb == ("", "Sub")
    assert section.title == f"{SEP}Sub"
    assert section.heading == "Sub"


def test_section_properties() -> None:
    fm, body = chunk_note("---\na: 1\n---\n# T\n## U\ntext\n")[::-1]
    assert (body.title, body.heading, body.is_frontmatter) == (f"T{SEP}U", "U", False)
    assert (fm.title, fm.heading, fm.is_frontmatter) == (FRONTMATTER, FRONTMATTER, True)
    assert Section((), "x", 0, 1).heading == ""


# --- offsets ----------------------------------------------------------------


def test_offsets_span_heading_line_and_body() -> None:
    note = "intro\n\n# A\ntext a\n\n## B\ntext b\n# C\n# D\ntext d"
    got = {s.title: note[s.start : s.end] for s in chunk_note(note)}
    assert got == {
        "": "intro\n\n",
        "A": "# A\ntext a\n\n",
        f"A{SEP}B": "## B\ntext b\n",
        "D": "# D\ntext d",
    }


def test_offsets_of_frontmatter_and_preamble() -> None:
    note = "---\na: 1\n---\nhello\n"
    body, fm = chunk_note(note)
    assert note[fm.start : fm.end] == "---\na: 1\n---\n"
    assert note[body.start : body.end] == "hello\n"


def test_offsets_index_crlf_text_as_given() -> None:
    note = "# Café\r\nligne un\r\n\r\n## Deux\r\ntexte\r\n"
    first, second = chunk_note(note)
    assert (first.text, second.text) == ("ligne un", "texte")
    assert note[first.start : first.end] == "# Café\r\nligne un\r\n\r\n"
    assert note[second.start : second.end] == "## Deux\r\ntexte\r\n"


def test_offsets_with_crlf_frontmatter_and_bom() -> None:
    note = "\ufeff---\r\ntitle: x\r\n---\r\n# Café\r\nbody é\r\n"
    body, fm = chunk_note(note)
    assert (fm.text, body.text) == ("title: x", "body e")
    assert note[fm.start : fm.end] == "\ufeff---\r\ntitle: x\r\n---\r\n"
    assert note[body.start : body.end] == "# Café\r\nbody é\r\n"


def test_bom_without_frontmatter_is_text_as_in_kimun_017() -> None:
    """kimun 0.17 hands a note without frontmatter to pulldown-cmark as it is, BOM included.

    pulldown-cmark does not skip a BOM, so ``\\ufeff# T`` is a paragraph, not a
    heading (``Vault.read`` drops the BOM, so notes read from a vault are
    chunked without it).
    """
    (section,) = chunk_note("\ufeff# Title\nbody\n", kimun="0.17")
    assert (section.title, section.text, section.start) == ("", "\ufeff# Title\nbody", 0)


def test_bom_is_not_body_in_kimun_018() -> None:
    """kimun 0.18's walk starts the body past a BOM (``a_byte_order_mark_is_not_body``);
    the heading's section still starts at the note's first line."""
    (section,) = chunk_note("\ufeff# Title\nbody\n")
    assert (section.title, section.text, section.start) == ("Title", "body", 0)


def test_offsets_survive_wikilinks_spanning_lines() -> None:
    note = "[[a\nb|c]] x\n\n# H\ntext\n"
    section = chunk_note(note)[-1]
    assert note[section.start : section.end] == "# H\ntext\n"


# --- pulldown-cmark's own behaviour, where markdown-it-py differed ------------


def test_autolink_text_is_not_percent_decoded() -> None:
    assert chunk_note("<https://x.org/caf%C3%A9>\n")[0].text == "https://x.org/caf%C3%A9"


def test_nesting_deeper_than_twenty_is_kept() -> None:
    assert chunk_note(">" * 25 + " deep\n")[0].text == "deep"


def test_escaped_hash_is_still_a_hashtag_for_kimun() -> None:
    """The text event of ``\\#tag`` starts after the backslash: its source is ``#tag``."""
    assert chunk_note("a \\#tag b\n")[0].text == "a tag b"


def test_hashtag_in_entity_decoded_text_keeps_its_hash() -> None:
    """kimun strips no ``#`` from a text event whose source is longer than its text."""
    assert chunk_note("a &amp; #tag\n")[0].text == "a & tag"
    # the label ``#35`` lies in the event of ``&#35;``, whose text is ``#``
    assert chunk_note("&#35;tag x\n")[0].text == "#tag x"
    # an entity is its own text event, so a hashtag after it is stripped
    assert chunk_note("&amp;#tag x\n")[0].text == "&tag x"


def test_hashtag_that_ends_a_wikilink_display_is_stripped_in_kimun_017() -> None:
    """kimun 0.17 keeps only hashtags wholly inside a display text: ``[[x|#a]]b`` reads ``ab``."""
    assert chunk_note("[[x|#a]]b\n", kimun="0.17")[0].text == "ab"
    assert chunk_note("[[x|#a]] b\n", kimun="0.17")[0].text == "#a b"


def test_a_display_text_is_shown_as_written_in_kimun_018() -> None:
    """kimun 0.18 shows a display text as written, its hashtag included."""
    assert chunk_note("[[x|#a]]b\n")[0].text == "#ab"
    assert chunk_note("[[x|#a]] b\n")[0].text == "#a b"


# --- properties ---------------------------------------------------------------

MARKDOWN = st.lists(
    st.sampled_from(
        [
            "# ",
            "## ",
            "### ",
            "\n",
            "\n\n",
            "\r\n",
            "text ",
            "Café ",
            "- ",
            "  - ",
            "1. ",
            "> ",
            "```",
            "~~~",
            "    ",
            "===",
            "---",
            "+++",
            "*",
            "_",
            "`",
            "[",
            "]",
            "(u)",
            "[[a|b]]",
            "[[x]]",
            "#tag ",
            "<b>",
            "</b>",
            "<div>\n",
            "&amp;",
            "\\",
            "!",
            "\t",
            "\ufeff",
            "\x1f",
            "é",
            "ß",
            "|",
            ":",
        ]
    )
    | st.text(max_size=4),
    max_size=40,
).map("".join)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(MARKDOWN)
def test_chunk_note_invariants(note: str) -> None:
    sections = chunk_note(note)
    body = [s for s in sections if not s.is_frontmatter]
    last = -1
    for s in body:
        assert 0 <= s.start <= s.end <= len(note)
        assert s.start >= last  # ordered, non-overlapping
        last = s.end
    for s in sections:
        assert s.text.strip(" \t\n\r\x0b\x0c") or s.is_frontmatter or s.text
    assert all(s.is_frontmatter for s in sections[len(body) :])


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(MARKDOWN)
def test_each_section_starts_at_its_heading_line(note: str) -> None:
    headings = {h.start: h for h in note_headings(note)}
    for s in chunk_note(note):
        if s.breadcrumb and not s.is_frontmatter:
            assert s.start in headings
            assert headings[s.start].text == s.breadcrumb[-1]


LINKY = st.lists(
    st.sampled_from(
        [
            "[",
            "]",
            "(",
            ")",
            "![",
            "](",
            "[a](u)",
            "![i](s.png)",
            "[l](https://x.y/a_b)",
            "[x]: /u\n\n",
            "javascript:",
            "data:",
            "&amp;",
            "&#106;",
            "<b>",
            "\\",
            "`",
            "*",
            "_",
            " ",
            "\n",
            "#t",
            "!",
            "text",
        ]
    ),
    max_size=30,
).map("".join)


CASES = [
    "see [a](b) and ![img](x.png) #tag [!tip] x",
    "[!tip]- Use [Android](https://x.y/a_b_c) *em [l](u)* `[c](d)` end",
    "[x [a](b) y](c) and [[a](b) and ![x [a](b) y](c)",
    '[a]()  ![]() [](u) [a](<b>) [a](b "t") [a](b(c)) [a]( b )',
    "**[a](b)** _[c](d)_ #t[a](b)#u _#x[a](b)_ a*[b](c)*d __[x](y)__",
    "[foo] and [foo](u) and [bar][foo]\n\n[foo]: /url",
    "[![badge](b.svg)](https://x.y) and [![a](b)]",
    "para\n===\n",
    "a\r\n---\r\n",
    "> a\n> ---\n",
    "a\x00b\r\rc\n",
    "\t- a\n \t  - b\n\t\t",
    "# [[a|b]]text \ntext ",
    "text \ntext \n===",
]


@pytest.mark.parametrize("kimun", KIMUN_VERSIONS)
@pytest.mark.parametrize("note", CASES)
def test_independent_check_holds_on_hard_cases(note: str, kimun: KimunVersion) -> None:
    for text in (note, "# H\n" + note, "- # " + note, "> ## " + note):
        assert check_note_sections(text, kimun=kimun) == [], text


@pytest.mark.parametrize("kimun", KIMUN_VERSIONS)
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(note=MARKDOWN | LINKY)
def test_independent_check_holds_on_random_markdown(note: str, kimun: KimunVersion) -> None:
    """A second walk over pulldown-cmark's events finds every owning heading in a breadcrumb."""
    assert check_note_sections(note, kimun=kimun) == []


@given(st.text())
def test_chunk_note_never_raises(text: str) -> None:
    chunk_note(text)


def test_chunk_note_rejects_bytes() -> None:
    with pytest.raises(TypeError, match="str"):
        chunk_note(b"# x")  # type: ignore[arg-type]


# --- the whole-vault check -------------------------------------------------------


def write_vault(root: Path) -> None:
    notes = {
        "plain.md": "# Title\nSome text\n\n## Sub\nMore\n",
        "journal/2026-04-08.md": "# 2026-04-08\n## Morning\nCoffee at the café.\n## Evening\n",
        "setext.md": "Chapter\n=======\nintro\n\nPart\n----\nbody **bold**\n",
        "fences.md": "# Code\n```python\n# a comment\nprint(1)\n```\n## After\ntext\n",
        "crlf.md": "---\r\ntags: [x]\r\n---\r\n# Crème\r\nbrûlée\r\n",
        "bom.md": "\ufeff# Bom\nbody\n",
        "lists.md": "# L\n- a\n  - b #tag\n- [[Link|c]]\n\n> # Quoted\n> words\n",
        "empty.md": "",
        "headings-only.md": "# A\n## B\n### C\n",
    }
    for name, text in notes.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))


@pytest.mark.parametrize("kimun", KIMUN_VERSIONS)
def test_vault_check_on_a_small_vault(tmp_path: Path, kimun: KimunVersion) -> None:
    write_vault(tmp_path)
    assert check_vault_sections(tmp_path, kimun=kimun) == []


def test_vault_check_reports_a_broken_section() -> None:
    note = "# A\nalpha\n\n# B\nbeta\n"
    good = chunk_note(note)
    assert section_problems(note, good, "n.md") == []
    # a heading no breadcrumb carries
    renamed = [Section(("Z",), good[0].text, good[0].start, good[0].end), good[1]]
    assert section_problems(note, renamed, "n.md") == [
        "n.md: heading 'A' (offset 0) is in no breadcrumb",
        "n.md: section 'Z' [0:11]: heading line missing",
    ]
    # a range that misses its text, or does not start at a heading line
    shifted = [good[0], Section(good[1].breadcrumb, good[1].text, 2, 5)]
    problems = section_problems(note, shifted, "n.md")
    assert "n.md: section 'B' [2:5]: does not start at a heading line" in problems
    assert "n.md: section 'B' [2:5]: body text not in range from 'beta'" in problems


@pytest.mark.parametrize("kimun", KIMUN_VERSIONS)
def test_vault_check_on_the_bundled_vault(kimun: KimunVersion) -> None:
    assert check_vault_sections(ROOT / "data" / "vault", kimun=kimun) == []


@pytest.mark.parametrize("kimun", KIMUN_VERSIONS)
def test_vault_check_on_kimuns_walk_corpus(kimun: KimunVersion) -> None:
    """kimun's own snapshot corpus (``../shared/corpora/kimun-walk``): wikilinks in code,
    HTML, labels and alt text, across lines, in setext headings, CRLF-free edge cases."""
    assert check_vault_sections(kimun_walk() / "corpus", kimun=kimun) == []


def test_vault_check_holds_each_version_to_its_own_headings() -> None:
    """The check reads wikilinks as each version does: 0.18's heading ``# [[a|*b*]]`` is
    ``*b*`` (as written), 0.17's ``b``; each passes, and a breadcrumb of other words fails."""
    note = "# [[a|*b*]] `[[c]]`\ntext\n"
    older, newer = chunk_note(note, kimun="0.17"), chunk_note(note)
    assert (older[0].heading, newer[0].heading) == ("b `c`", "*b* `[[c]]`")
    assert section_problems(note, newer, "n.md", "0.18") == []
    assert section_problems(note, older, "n.md", "0.17") == []
    wrong = [Section(("a c",), "text", newer[0].start, newer[0].end)]
    assert section_problems(note, wrong, "n.md", "0.18")[0] == (
        "n.md: heading '[[a|b]] [[c]]' (offset 0) is in no breadcrumb"
    )


@pytest.fixture
def obsidian_help() -> Path:
    """The real corpus beside the clone (skips without it; CI=true: fails)."""
    return corpus("obsidian-help-en")


@pytest.mark.parametrize("kimun", KIMUN_VERSIONS)
def test_vault_check_on_obsidian_help(obsidian_help: Path, kimun: KimunVersion) -> None:
    assert check_vault_sections(obsidian_help, kimun=kimun) == []


@pytest.mark.parametrize(
    ("note", "text"),
    [
        ("\u0915\u0945#tag\n", "\u0915\u0945#tag"),  # a Devanagari vowel sign: Other_Alphabetic
        ("\u24b6#tag\n", "A#tag"),  # a circled letter: Other_Alphabetic (folded to A)
        ("\u00b2#tag\n", "\u00b2#tag"),  # a superscript digit: No, numeric in Rust
        ("\u2014#tag\n", "\u2014tag"),  # an em dash: no letter, so a hashtag
        ("#tag\u0301 x\n", "tag x"),  # a combining acute is no letter: a hashtag
    ],
)
def test_hashtag_edges_use_rusts_is_alphanumeric(note: str, text: str) -> None:
    assert chunk_note(note)[0].text == text


# --- the two kimun versions ------------------------------------------------------------


def test_the_default_is_kimuns_newest_and_both_versions_are_there() -> None:
    note = "See `[[x]]` and ![[p.png|Pic]]\n"
    assert KIMUN_VERSIONS == ("0.17", "0.18")
    assert chunk_note(note) == chunk_note(note, kimun="0.18")
    assert chunk_note(note)[0].text == "See `[[x]]` and Pic"
    assert chunk_note(note, kimun="0.17")[0].text == "See `x` and !Pic"


@pytest.mark.parametrize("bad", ["0.19", "", "latest", 0.18, None])
def test_an_unknown_kimun_version_is_a_usage_error(bad: object) -> None:
    with pytest.raises(UsageError, match=r"kimun must be one of '0\.17', '0\.18'"):
        check_kimun(bad)
    with pytest.raises(UsageError, match="got"):
        chunk_note("# x\ny\n", kimun=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("note", "older", "newer"),
    [
        ("# Sprint #42\n", "Sprint #42", "Sprint 42"),
        ("See [[proj|Project]]\n", "See [[proj|Project]]", "See Project"),
    ],
)
def test_titles_of_each_version(note: str, older: str, newer: str) -> None:
    assert (extract_title(note, kimun="0.17"), extract_title(note)) == (older, newer)


def test_a_crlf_note_chunks_as_the_same_note_in_lf_with_offsets_into_the_crlf_note() -> None:
    lf = "---\nt: x\n---\n# A [[a|b\nc]]\nx `y\nz`\n\n## B\n<div>\nq\n</div>\n"
    crlf = lf.replace("\n", "\r\n")
    assert [(s.title, s.text) for s in chunk_note(crlf)] == [
        (s.title, s.text) for s in chunk_note(lf)
    ]
    assert [crlf[s.start : s.end] for s in chunk_note(crlf)] == [
        "# A [[a|b\r\nc]]\r\nx `y\r\nz`\r\n\r\n",
        "## B\r\n<div>\r\nq\r\n</div>\r\n",
        "---\r\nt: x\r\n---\r\n",
    ]


def test_note_hashtags_are_the_walks() -> None:
    note = "---\ntags: [fm]\n---\n# Plan #q3\n#one [[a|#two]] `#three` [x #four](y.md) #Five\n"
    assert note_hashtags(note) == ["q3", "one", "Five"]
    assert chunk_note(note)[0].text == "one #two `#three` x #four Five"
