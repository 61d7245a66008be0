"""askkit.vault._events: kimun's line machine on pulldown-cmark's own events."""

from __future__ import annotations

from importlib import metadata

import pyromark
from hypothesis import given
from hypothesis import strategies as st

from askkit.vault._events import (
    EMPTY,
    HEADER,
    ITEM,
    TEXT,
    ByteOffsets,
    code_ranges,
    hashtag_stripper,
    line_text,
    pulldown_cmark_version,
    str_to_bytes,
    text_lines,
)


def test_the_bundled_parser_is_pulldown_cmark_0_13() -> None:
    """kimun's Cargo.lock pins pulldown-cmark 0.13.4; an upgrade past 0.13 must fail here."""
    version = pulldown_cmark_version()
    assert version.split(".")[:2] == ["0", "13"], version
    assert metadata.version("pyromark").startswith("0.10."), metadata.version("pyromark")


def test_events_run_with_no_extensions() -> None:
    """kimun's ``Parser::new``: tables, strikethrough and footnotes stay text."""
    kinds = [
        next(iter(e)) if isinstance(e, dict) else e
        for e, _ in pyromark.events_with_range("~~a~~ | b |\n|---|\n")
    ]
    assert "Start" in kinds
    assert all(k in {"Start", "End", "Text", "SoftBreak"} for k in kinds)


def kinds(text: str) -> list[tuple[int, int, str]]:
    return [(line[0], line[1], line[2]) for line in text_lines(text) if line[0] != EMPTY]


def test_lines_of_headings_lists_and_code() -> None:
    note = "# T *x*\n\n- a\n  - b\n    c\n\n```py\n  code  \n```\n"
    assert kinds(note) == [
        (HEADER, 1, "T x"),
        (ITEM, 0, "a"),
        (ITEM, 1, "b\nc"),
        (TEXT, 0, "```py"),
        (TEXT, 0, "code"),
        (TEXT, 0, "```"),
    ]


def test_heading_lines_carry_their_byte_range() -> None:
    note = "é\n\n  ## Café ##\nbody\n"
    (head,) = [line for line in text_lines(note) if line[0] == HEADER]
    data = note.encode()
    assert data[head[3] : head[4]] == "## Café ##\n".encode()


def test_line_text_renders_as_kimun() -> None:
    assert line_text([ITEM, 2, "a\nb", -1]) == "        * a b"
    assert line_text([HEADER, 3, "H", 0, 1]) == "### H"
    assert line_text([TEXT, 0, "t", -1]) == "t"
    assert line_text([EMPTY, 0, "", -1]) == ""


def test_inline_html_in_a_heading_is_dropped_but_br_is_a_space() -> None:
    assert kinds("# a<BR>b <kbd>c</kbd>\n") == [(HEADER, 1, "a b c")]
    assert kinds("a <kbd>c</kbd>\n") == [(TEXT, 0, "a <kbd>c</kbd>")]


def test_breaks_inside_and_outside_list_items() -> None:
    assert kinds("a  \nb\n") == [(TEXT, 0, "a"), (TEXT, 0, "b")]
    assert kinds("- a  \n  b\n") == [(ITEM, 0, "a\nb")]
    assert kinds("a\n\n***\n\nb") == [(TEXT, 0, "a"), (TEXT, 0, "b")]


def test_the_hashtag_hook_sees_links_and_skips_code() -> None:
    seen: list[tuple[str, bool]] = []

    def hook(text: str, span: dict[str, int], in_link: bool) -> str:
        seen.append((text, in_link))
        return text.upper()

    lines = text_lines("x [l](u) ![i](p)\n\n    code\n", hook)
    assert seen == [("x ", False), ("l", True), (" ", False), ("i", True)]
    assert next(line[2] for line in lines if line[0] == TEXT) == "X L I"


def test_hashtag_stripper_keeps_links_and_entities() -> None:
    text = "a #t [#u](x) &#35;v"
    data = text.encode()
    labels = [(2, 4), (6, 8)]
    strip = hashtag_stripper(text, data, labels)
    assert strip("a #t ", {"start": 0, "end": 5}, False) == "a t "
    assert strip("#u", {"start": 6, "end": 8}, True) == "#u"
    assert strip("#", {"start": 13, "end": 18}, False) == "#"  # no label there


def test_byte_offsets_round_trip() -> None:
    text = "aé🎯b\nc"
    starts = str_to_bytes(text, [0, 1, 2, 3, 4, 6])
    assert starts == [0, 1, 3, 7, 8, 10]
    cursor = ByteOffsets(text)
    assert [cursor.to_str(b) for b in starts] == [0, 1, 2, 3, 4, 6]
    assert cursor.to_str(1) == 1  # going back restarts the cursor


@given(st.text(max_size=40))
def test_byte_offsets_match_encoding(text: str) -> None:
    offsets = list(range(len(text) + 1))
    data = text.encode()
    as_bytes = str_to_bytes(text, offsets)
    assert as_bytes == [len(text[:i].encode()) for i in offsets]
    cursor = ByteOffsets(text, data)
    assert [cursor.to_str(b) for b in as_bytes] == offsets


def test_code_ranges_cover_code_and_html() -> None:
    text = "é `#a` <b>#c</b>\n\n```\n#d\n```\n"
    spans = [text[a:b] for a, b in code_ranges(text)]
    assert spans == ["`#a`", "<b>", "</b>", "```\n#d\n```"]
