"""Small text helpers shared by the modules that mirror kimun's Rust code."""

from __future__ import annotations

import math

__all__ = [
    "RUST_WHITESPACE",
    "as_float",
    "number_label",
    "rust_trim",
    "rust_trim_end",
    "rust_trim_start",
]

#: Exactly the characters Rust's ``str::trim`` strips (Unicode White_Space).
#: Python's ``str.strip()`` differs: it also strips U+001C-U+001F (which would
#: eat kimun's U+001F breadcrumb separator) and leaves U+0085 alone in some
#: contexts. Always trim with this set when mirroring kimun.
RUST_WHITESPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680"
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)


def rust_trim(text: str) -> str:
    """Rust's ``str::trim``.

    >>> rust_trim("\\x1f Section \\u200b")
    '\\x1f Section \\u200b'
    >>> rust_trim("\\u3000 Section \\n")
    'Section'
    """
    return text.strip(RUST_WHITESPACE)


def rust_trim_start(text: str) -> str:
    """Rust's ``str::trim_start``."""
    return text.lstrip(RUST_WHITESPACE)


def rust_trim_end(text: str) -> str:
    """Rust's ``str::trim_end``."""
    return text.rstrip(RUST_WHITESPACE)


_FIXED_BELOW = 1e15  # from here on, fixed notation prints digits a float does not hold
_SIGNIFICANT = 4  # significant digits of a number shown in exponent form


def as_float(value: float) -> float:
    """``value`` as a float; an integer beyond the float range becomes ``±inf``."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def number_label(value: float, digits: int = 4) -> str:
    """A number as a reader expects it: ``digits`` decimals, exponent form from
    ``±1e15`` on (never hundreds of digits), and ``inf``, ``-inf``, ``NaN``.

    The one place a score or a time becomes text, in every table and status line.

    >>> [number_label(v) for v in (0.5, 1e308, -1e308, float("inf"), float("-inf"), float("nan"))]
    ['0.5000', '1e+308', '-1e+308', 'inf', '-inf', 'NaN']
    >>> number_label(12.34, 0), number_label(5e-324), number_label(1.7976931348623157e308)
    ('12', '0.0000', '1.798e+308')
    """
    number = as_float(value)
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "inf" if number > 0 else "-inf"
    if abs(number) >= _FIXED_BELOW:
        return f"{number:.{_SIGNIFICANT}g}"
    return f"{number:.{digits}f}"
