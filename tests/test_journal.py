"""askkit.journal: a journal note's date, as kimun's server derives it from the file name."""

from __future__ import annotations

import pytest

from askkit.journal import is_valid_date, journal_date


@pytest.mark.parametrize(
    ("path", "date"),
    [
        ("journal/2026-04-08.md", "2026-04-08"),
        ("2026-04-08.md", "2026-04-08"),
        ("a/b/2024-02-29.md", "2024-02-29"),
        ("journal/2026-02-30.md", None),
        ("journal/2023-02-29.md", None),
        ("journal/2026-13-01.md", None),
        ("journal/2026-04-08.MD", None),
        ("journal/2026-04-08-notes.md", None),
        ("journal/notes-2026-04-08.md", None),
        ("journal/26-04-08.md", "0026-04-08"),
        ("journal/2026-4-8.md", "2026-04-08"),
        ("journal/20260-04-08.md", None),
        ("journal/2026-004-08.md", None),
        ("journal/2026-04-08 .md", None),
        ("journal/ 2026-04-08.md", "2026-04-08"),
        ("journal/0000-02-29.md", "0000-02-29"),
        ("journal/+12026-01-01.md", None),
        ("journal/2026_04_08.md", None),
        ("2026-04-08", "2026-04-08"),
    ],
)
def test_journal_date_like_kimuns_server(path: str, date: str | None) -> None:
    assert journal_date(path) == date


@pytest.mark.parametrize(
    ("year", "month", "day", "valid"),
    [
        (2024, 2, 29, True),
        (1900, 2, 29, False),
        (2000, 2, 29, True),
        (0, 2, 29, True),
        (2026, 4, 31, False),
        (2026, 12, 31, True),
        (2026, 0, 1, False),
        (2026, 13, 1, False),
        (2026, 1, 0, False),
    ],
)
def test_is_valid_date_is_the_proleptic_gregorian_calendar(
    year: int, month: int, day: int, valid: bool
) -> None:
    assert is_valid_date(year, month, day) is valid
