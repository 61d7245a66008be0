"""Journal dates from file names, as kimun's server derives them.

The server takes the file name after the last ``/``, strips a ``.md`` suffix
(lower-case only) and parses the rest with chrono's ``%Y-%m-%d``. chrono is
laxer than Python's ``strptime``: each number may be preceded by white space,
the year may have 1-4 digits (``26-04-08`` is the year 26) and the month and
day 1-2 digits (``2026-4-8``); the date is then printed zero-padded
(``0026-04-08``, ``2026-04-08``). An impossible date such as ``2026-02-30``
gives none, and so does an upper-case ``.MD``.

askkit mirrors all of that for years 0-9999. chrono also accepts an explicitly
signed year of any length (``+12026-01-01``, ``-0044-03-15``); such dates fit
neither kimun's own ``YYYY-MM-DD`` wire format nor a pandas datetime column,
so askkit gives them no date (a documented difference).

Examples
--------
>>> journal_date("journal/2026-04-08.md")
'2026-04-08'
>>> journal_date("journal/26-4-8.md")
'0026-04-08'
>>> journal_date("journal/2026-02-30.md") is None
True
>>> journal_date("journal/2026-04-08.MD") is None
True
"""

from __future__ import annotations

import re

from askkit._text import RUST_WHITESPACE

__all__ = ["is_valid_date", "journal_date", "parse_date"]

_WS = "[" + re.escape(RUST_WHITESPACE) + "]*"
_STEM = re.compile(
    rf"{_WS}([0-9]{{1,4}})-{_WS}([0-9]{{1,2}})-{_WS}([0-9]{{1,2}})",
)
_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def is_valid_date(year: int, month: int, day: int) -> bool:
    """Whether the proleptic Gregorian date exists (year 0 included, as in chrono).

    >>> is_valid_date(0, 2, 29), is_valid_date(1900, 2, 29), is_valid_date(2024, 2, 29)
    (True, False, True)
    """
    if not 1 <= month <= 12 or day < 1:
        return False
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return day <= (29 if month == 2 and leap else _DAYS[month - 1])


def journal_date(path: str) -> str | None:
    """The ``YYYY-MM-DD`` date kimun's server gives the note at ``path``, or ``None``."""
    name = path.rsplit("/", 1)[-1]
    return parse_date(name.removesuffix(".md"))


def parse_date(text: str) -> str | None:
    """``text`` read as chrono reads it with ``%Y-%m-%d`` (kimun's ``JOURNAL_DATE_FORMAT``),
    printed ``YYYY-MM-DD``; ``None`` when chrono refuses it.

    kimun reads a vector store's ``date`` column back this way, too.

    >>> parse_date("2026-4-8"), parse_date(" 26-04-08"), parse_date("2026-04-08x")
    ('2026-04-08', '0026-04-08', None)
    """
    m = _STEM.fullmatch(text)
    if m is None:
        return None
    year, month, day = (int(g) for g in m.groups())
    if not is_valid_date(year, month, day):
        return None
    return f"{year:04d}-{month:02d}-{day:02d}"
