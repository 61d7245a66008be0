"""``[n]`` citation markers in an answer: scan, strip and link, as kimun does.

A marker is ``[`` + one or more ASCII digits + ``]``. It is not a citation
when the character before ``[`` is ``[`` or the character after ``]`` is
``]`` (wikilinks such as ``[[42]]``); ``[0]`` and numbers too large for a
64-bit unsigned integer are not citations either.

Offsets: kimun reports UTF-8 byte offsets; askkit reports **Python str
indices** (code points), so ``text[span.start:span.end]`` is the marker.

Examples
--------
>>> [(c.start, c.end, c.index) for c in scan("Fact [1] and [[2]] and [3].")]
[(5, 8, 1), (23, 26, 3)]
>>> strip("Fact [1] stands. Next [2].")
'Fact stands. Next.'
>>> link_sources("See [2].", ["a", "b"])
'See [[b]].'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Citation", "link_sources", "scan", "strip", "strip_all"]

_MAX_INDEX = 2**64 - 1
_TIDY_AFTER = frozenset(["", " ", ".", ",", ";", ":", "!", "?", "\n"])
_DIGITS = frozenset("0123456789")


@dataclass(frozen=True, slots=True)
class Citation:
    """One ``[n]`` marker: ``text[start:end]`` is the marker, ``index`` is ``n``."""

    start: int
    end: int
    index: int


def scan(text: str) -> list[Citation]:
    """Every citation marker in ``text``, left to right.

    Mirrors kimun's scanner step for step, including how it skips: after a
    bracket-adjacent candidate (``[[1]`` or ``[1]]``) it resumes two past the
    digits, so ``"[[1][2]"`` holds no marker; after ``[0]`` (or a number too
    large for 64 bits) it resumes after the ``]``.
    """
    out: list[Citation] = []
    n = len(text)
    i = 0
    while i < n:
        i = text.find("[", i)
        if i == -1:
            break
        j = i + 1
        while j < n and text[j] in _DIGITS:
            j += 1
        if j > i + 1 and j < n and text[j] == "]":
            adjacent = (i > 0 and text[i - 1] == "[") or (j + 1 < n and text[j + 1] == "]")
            if adjacent:
                i = j + 2
                continue
            value = int(text[i + 1 : j])
            if 0 < value <= _MAX_INDEX:
                out.append(Citation(i, j + 1, value))
            i = j + 1
            continue
        i += 1
    return out


def strip(text: str) -> str:
    """Remove every citation marker and tidy the space around it, as kimun does.

    When a marker is followed by the end of the text, a space, ``. , ; : ! ?``
    or a newline and the output so far ends with a space, that space is
    dropped; otherwise, when the output so far is empty or ends a line and
    the marker is followed by a space, that following space is dropped.
    """
    out = ""
    last = 0
    for c in scan(text):
        out += text[last : c.start]
        end = c.end
        following = text[end] if end < len(text) else ""
        if following in _TIDY_AFTER and out.endswith(" "):
            out = out[:-1]
        elif following == " " and (not out or out.endswith("\n")):
            end += 1
        last = end
    return out + text[last:]


def strip_all(text: str) -> str:
    """:func:`strip` until no marker is left (askkit's addition, not kimun's).

    kimun's :func:`strip` is one pass, so removing a marker can join its
    neighbours into a new one: ``strip("[1[2]3]")`` is ``"[13]"``. This
    repeats the pass until :func:`scan` finds nothing.

    >>> strip("[1[2]3]"), strip_all("[1[2]3]")
    ('[13]', '')
    """
    while scan(text):
        text = strip(text)
    return text


def link_sources(text: str, names: Sequence[str]) -> str:
    """Turn ``[n]`` into ``[[names[n-1]]]`` where that slot exists and is non-empty."""
    out: list[str] = []
    pos = 0
    for c in scan(text):
        out.append(text[pos : c.start])
        slot = c.index - 1
        name = names[slot] if slot < len(names) else ""
        out.append(f"[[{name}]]" if name else text[c.start : c.end])
        pos = c.end
    out.append(text[pos:])
    return "".join(out)
