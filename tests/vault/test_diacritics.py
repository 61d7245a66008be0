"""kimun's diacritics table (core/src/note/diacritics.rs), value for value."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from askkit.vault.diacritics import (
    COMBINING_RANGES,
    FOLD_TABLE,
    ascii_lower,
    eq_ignore_ascii_case,
    fold,
    fold_ascii_lower,
)

# --- the three tests in kimun's repository -----------------------------------


def test_repo_uppercase_nordic() -> None:
    assert fold("TÅRÖÄÆØ") == "TAROAAO"


def test_repo_lowercase_mixed() -> None:
    assert fold("čďêƒíó") == "cdefio"


def test_repo_combining_mark_is_dropped() -> None:
    assert fold("e\u0300") == "e"


# --- notable entries: kimun's table is not Unicode decomposition ------------


@pytest.mark.parametrize(
    ("char", "expected"),
    [
        ("Æ", "A"),  # one letter, not "AE"
        ("æ", "a"),
        ("ß", "s"),  # not "ss"
        ("ẞ", "S"),
        ("Œ", "OE"),
        ("œ", "oe"),
        ("\x8c", "OE"),
        ("\x9c", "oe"),
        ("þ", "b"),
        ("ſ", "l"),
        ("ı", "i"),
        ("ŉ", "n"),
        ("Ꜳ", "AA"),
        ("Ǳ", "DZ"),
        ("ǲ", "Dz"),
        ("ǆ", "dz"),
        ("Ǉ", "LJ"),
        ("ǈ", "Lj"),
        ("ǌ", "nj"),
        ("ƕ", "hv"),
        ("Ⓐ", "A"),
        ("ｚ", "z"),
    ],
)
def test_notable_outputs(char: str, expected: str) -> None:
    assert fold(char) == expected


@pytest.mark.parametrize("text", ["Ωμέγα", "Привет", "日本語", "😀", "\u200b", "“quotes”"])
def test_characters_outside_the_table_are_kept(text: str) -> None:
    """Greek, Cyrillic, CJK, emoji: untouched (precomposed Greek accents too)."""
    assert fold(text) == text


def test_every_combining_range_is_dropped_whole() -> None:
    for low, high in COMBINING_RANGES:
        assert fold(chr(low) + "x" + chr(high)) == "x"
    assert fold("\u02ff\u0370") == "\u02ff\u0370"  # just outside the first range


def test_no_normalisation_decomposed_and_precomposed_agree() -> None:
    assert fold("Cafe\u0301") == fold("Café") == "Cafe"


def test_table_size_matches_kimun() -> None:
    """823 non-identity arms plus the three combining ranges (875 entries with identities)."""
    ranges = sum(high - low + 1 for low, high in COMBINING_RANGES)
    assert len(FOLD_TABLE) == 823 + ranges
    assert all(ord(ch) > 0x7F for ch in map(chr, FOLD_TABLE))


def test_ascii_case_helpers_fold_ascii_only() -> None:
    assert ascii_lower("ÀB") == "Àb"
    assert eq_ignore_ascii_case("Notes", "nOTES")
    assert not eq_ignore_ascii_case("É", "é")
    assert fold_ascii_lower("Ébène") == "ebene"


@given(st.text())
def test_fold_is_idempotent(text: str) -> None:
    assert fold(fold(text)) == fold(text)


@given(st.text())
def test_fast_path_equals_the_table(text: str) -> None:
    assert fold(text) == text.translate(FOLD_TABLE)


@given(st.text(alphabet=st.characters(codec="ascii")))
def test_ascii_is_never_changed(text: str) -> None:
    assert fold(text) == text
