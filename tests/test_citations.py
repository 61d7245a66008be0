"""Citation markers: kimun's scan / strip / link_sources rules."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from askkit.citations import Citation, link_sources, scan, strip, strip_all
from tests import strategies as st_kimun


def indices(text: str) -> list[int]:
    return [c.index for c in scan(text)]


def test_scan_reports_str_offsets_and_index() -> None:
    assert scan("ab [12] cd") == [Citation(3, 7, 12)]


def test_offsets_are_code_points_not_utf8_bytes() -> None:
    text = "café 🌱 [2]"
    (c,) = scan(text)
    assert text[c.start : c.end] == "[2]"
    assert c.start == 7  # kimun would report byte offset 11
    assert len(text[: c.start].encode("utf-8")) == 11


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[1]", [1]),
        ("[1][2]", [1, 2]),
        ("a[3]b", [3]),
        ("[007]", [7]),
        ("[[42]]", []),
        ("[[42]", []),
        ("[42]]", []),
        ("x [[1]] y [2]", [2]),
        ("[0]", []),
        ("[00]", []),
        ("[tag]", []),
        ("[1a]", []),
        ("[ 1]", []),
        ("[1 ]", []),
        ("[]", []),
        ("[-1]", []),
        ("[１]", []),  # fullwidth digit is not ASCII
        ("[٣]", []),  # Arabic-Indic digit
        (f"[{2**64 - 1}]", [2**64 - 1]),
        (f"[{2**64}]", []),
        ("[" * 3 + "1" + "]", []),
        ("[[1][2]", []),  # kimun skips two past a wikilink-adjacent candidate
        ("[1]][2]", [2]),  # resumes after "]]", so [2] counts
        ("[[1]] [2]", [2]),
        ("a [[wikilink]] and [tag] and [1a]", []),
        ("see [[1]] and [[42]]", []),
        ("[0][3]", [3]),
        ("", []),
    ],
)
def test_what_counts_as_a_marker(text: str, expected: list[int]) -> None:
    assert indices(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Fact [1] stands. Next [2].", "Fact stands. Next."),
        ("[1] Hello", "Hello"),
        ("Hello [1]", "Hello"),
        ("A [1], b [2]; c [3]: d [4]! e [5]? f", "A, b; c: d! e? f"),
        ("line one [1]\n[2] line two", "line one\nline two"),
        ("[1][2] x", "x"),
        ("word[1] next", "word next"),
        ("a [1]b", "a b"),
        ("keep [[1]] wikilinks", "keep [[1]] wikilinks"),
        ("no markers", "no markers"),
        ("[1]", ""),
        ("  [1] x", "  x"),
        ("a\n[1] b", "a\nb"),
        ("tail [3]", "tail"),
        ("[[1][2] stays", "[[1][2] stays"),
    ],
)
def test_strip(text: str, expected: str) -> None:
    assert strip(text) == expected


def test_strip_tidies_only_one_space() -> None:
    assert strip("a  [1].") == "a ."


def test_link_sources_kimun_example() -> None:
    assert link_sources("See [1] not [7].", ["alpha"]) == "See [[alpha]] not [7]."


def test_link_sources() -> None:
    names = ["Alpha", "", "Gamma"]
    assert (
        link_sources("see [1], [2], [3] and [4]", names) == "see [[Alpha]], [2], [[Gamma]] and [4]"
    )
    assert link_sources("[[1]] stays", names) == "[[1]] stays"
    assert link_sources("", names) == ""
    assert link_sources("[1]", []) == "[1]"


@given(st_kimun.answers)
def test_scan_finds_only_markers(text: str) -> None:
    for c in scan(text):
        marker = text[c.start : c.end]
        assert marker == f"[{c.index}]"
        assert c.index >= 1
        assert c.start == 0 or text[c.start - 1] != "["
        assert c.end == len(text) or text[c.end] != "]"


def _digit_next_to_a_marker(text: str) -> bool:
    return any(
        (c.start > 0 and text[c.start - 1].isdigit())
        or (c.end < len(text) and text[c.end].isdigit())
        for c in scan(text)
    )


@given(st_kimun.answers)
def test_strip_leaves_nothing_scan_would_find(text: str) -> None:
    out = strip(text)
    assert len(out) <= len(text)
    if not _digit_next_to_a_marker(text):
        assert scan(out) == []


@given(st_kimun.answers)
def test_strip_all_leaves_nothing_scan_would_find(text: str) -> None:
    assert scan(strip_all(text)) == []


def test_one_pass_strip_can_join_a_new_marker_like_kimun() -> None:
    assert strip("[1[2]3]") == "[13]"
    assert scan(strip("[1[2]3]")) != []
    assert strip_all("[1[2]3]") == ""


@given(st_kimun.answers, st.lists(st.text(max_size=5), max_size=5))
def test_link_sources_never_raises(text: str, names: list[str]) -> None:
    out = link_sources(text, names)
    assert isinstance(out, str)
