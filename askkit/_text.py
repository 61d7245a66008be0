"""Small text helpers shared by the modules that mirror kimun's Rust code."""

from __future__ import annotations

__all__ = ["RUST_WHITESPACE", "rust_trim", "rust_trim_end", "rust_trim_start"]

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
