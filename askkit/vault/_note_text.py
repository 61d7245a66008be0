"""The text kimun's chunker parses, and the way back to the note.

Before its pulldown-cmark walk kimun cuts the frontmatter off
(``remove_frontmatter``), collapses wikilinks to their display text
(``collapse_wikilinks_with_display_ranges``) and finds the hashtags whose
``#`` the walk drops (``label_matches_inner``). This module does the same with
:func:`split_note`, :func:`collapse_wikilinks` and :func:`body_labels`, and
keeps what kimun throws away: :class:`LineOffsets` maps a line of the parsed
text back to its offset in the note.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from itertools import accumulate, repeat
from operator import add

import regex

from askkit.vault._events import code_ranges

__all__ = [
    "Body",
    "Collapsed",
    "LineOffsets",
    "body_labels",
    "cleanup_hashtags",
    "collapse_wikilinks",
    "label_matches",
    "line_starts",
    "process_wikilinks",
    "split_note",
]


# ---------------------------------------------------------------------------
# Frontmatter (kimun's ``remove_frontmatter``), with line offsets kept.


def line_starts(lines: list[str]) -> list[int]:
    """The offset of each line in ``"\\n".join(lines)`` (summed at C speed)."""
    return list(accumulate(map(add, map(len, lines[:-1]), repeat(1)), initial=0))


def _rust_lines(text: str) -> tuple[list[str], list[int]]:
    """Rust ``str::lines`` plus each line's start offset in ``text``."""
    lines = text.split("\n")
    ends_with_newline = lines[-1] == ""
    if ends_with_newline:
        lines.pop()
    starts = line_starts(lines)
    if "\r" in text:
        last = lines[-1] if lines and not ends_with_newline else None
        lines = [line.removesuffix("\r") for line in lines]
        if last is not None:
            lines[-1] = last  # a bare CR at the very end is not a line ending
    return lines, starts


@dataclass(frozen=True, slots=True)
class Body:
    """A note split as kimun splits it: the frontmatter, and the body it parses."""

    frontmatter: str
    closed: bool
    fm_end: int  # end of the frontmatter block in the note (0 when none)
    body: str  # the text kimun parses
    base: int  # offset of body[0] in the note
    # body line starts -> note offsets (None: body is note[base:])
    line_starts: list[int] | None
    note_line_starts: list[int] | None


def split_note(text: str) -> Body:
    """kimun's ``remove_frontmatter`` on ``text``, with the body's place in the note kept."""
    newline = text.find("\n")
    first = text if newline < 0 else text[:newline]
    if newline >= 0 and first.endswith("\r"):
        first = first[:-1]
    first = first.removeprefix("\ufeff")
    if first not in {"---", "+++"}:
        # kimun parses the text as it is, a leading BOM included
        return Body("", False, 0, text, 0, None, None)
    lines, starts = _rust_lines(text)
    close = next((i for i in range(1, len(lines)) if lines[i] == first), None)
    if close is None:
        body_first, fm, closed, fm_end = 1, "", False, 0
    else:
        body_first, fm, closed = close + 1, "\n".join(lines[1:close]), True
        fm_end = starts[body_first] if body_first < len(starts) else len(text)
    body_lines = lines[body_first:]
    body_starts = line_starts(body_lines)
    base = starts[body_first] if body_first < len(starts) else len(text)
    return Body(fm, closed, fm_end, "\n".join(body_lines), base, body_starts, starts[body_first:])


# ---------------------------------------------------------------------------
# Wikilinks (collapsed before the parse, as kimun does) and hashtags.

_WIKILINK = re.compile(r"\[\[([^\]]+)\]\]")
_HASHTAG = re.compile(r"#([A-Za-z0-9_]+)")
#: kimun's ``MD_LINK_RX``: a markdown link or image, ``[text](link)``.
_MD_LINK = re.compile(r"!?\[[^\]]*\]\([^)]+?\)")


def _display(match: re.Match[str]) -> str:
    items = match.group(1).split("|")
    return items[0] if len(items) == 1 else items[1]


@dataclass(frozen=True, slots=True)
class Collapsed:
    """A body with its wikilinks collapsed to their display text.

    ``displays`` holds the ``(start, end)`` of each display text in ``text``
    (kimun's ``collapse_wikilinks_with_display_ranges``); ``segments`` maps
    ``text`` back to the body (``(out offset, in offset, copied)``) and is
    only built when a wikilink spans lines, since otherwise every line keeps
    its line number, which is all the chunker maps.
    """

    text: str
    displays: list[tuple[int, int]]
    segments: list[tuple[int, int, bool]] | None


def collapse_wikilinks(body: str) -> Collapsed:
    """Replace ``[[a|b]]`` by ``b`` (``[[a]]`` by ``a``, extra ``|`` parts dropped)."""
    if "[[" not in body:
        return Collapsed(body, [], None)
    pieces: list[str] = []
    displays: list[tuple[int, int]] = []
    segments: list[tuple[int, int, bool]] = []
    last = 0
    out = 0
    for m in _WIKILINK.finditer(body):
        a, b = m.span()
        if a > last:
            segments.append((out, last, True))
            pieces.append(body[last:a])
            out += a - last
        display = _display(m)
        segments.append((out, a, False))
        pieces.append(display)
        displays.append((out, out + len(display)))
        out += len(display)
        last = b
    segments.append((out, last, True))
    pieces.append(body[last:])
    multiline = any("\n" in m.group(0) or "\r" in m.group(0) for m in _WIKILINK.finditer(body))
    return Collapsed("".join(pieces), displays, segments if multiline else None)


def process_wikilinks(text: str) -> str:
    """kimun's ``process_wikilinks`` with its dropping handler: every wikilink becomes its text."""
    return _WIKILINK.sub(_display, text) if "[[" in text else text


#: Rust's ``char::is_alphanumeric`` (the Alphabetic property or a number, Unicode
#: 16 as in the Rust standard library), ``_`` or ``#``: next to a hashtag, these
#: make it no hashtag. ``str.isalnum`` misses Other_Alphabetic marks (``\u0945``)
#: and Python 3.11's Unicode 14 misses letters added since.
_LABEL_BLOCKER = regex.compile(r"[\p{Alphabetic}\p{N}_#]")


def _blocks_label(ch: str) -> bool:
    """Rust's ``c.is_alphanumeric() || c == '_' || c == '#'`` next to a hashtag."""
    if ch.isascii():
        return ch.isalnum() or ch in {"_", "#"}
    return _LABEL_BLOCKER.match(ch) is not None


def label_matches(text: str, *, ampersand: bool = False) -> list[tuple[int, int, str]]:
    """kimun's ``label_matches_inner``: ``(start, end, name)`` of every hashtag in ``text``.

    A ``#name`` touching a letter, digit, ``_`` or ``#`` on either side is no
    hashtag (``foo#bar``, ``##h``, ``#a#b``). With ``ampersand`` (kimun 0.18),
    one right after ``&``, as in an HTML entity (``it&#39;s``), is none either.

    >>> label_matches("#first and foo#no #tag-x")
    [(0, 6, 'first'), (18, 22, 'tag')]
    >>> label_matches("it&#39;s #ok"), label_matches("it&#39;s #ok", ampersand=True)
    ([(3, 6, '39'), (9, 12, 'ok')], [(9, 12, 'ok')])
    """
    if "#" not in text:
        return []
    found: list[tuple[int, int, str]] = []
    n = len(text)
    for m in _HASHTAG.finditer(text):
        a, b = m.span()
        if a and (_blocks_label(text[a - 1]) or (ampersand and text[a - 1] == "&")):
            continue
        if b < n and _blocks_label(text[b]):
            continue
        found.append((a, b, m.group(1)))
    return found


def body_labels(collapsed: Collapsed) -> list[tuple[int, int]]:
    """The hashtags kimun's indexer strips: none lies wholly inside a wikilink's display text."""
    labels = label_matches(collapsed.text)
    if not labels or not collapsed.displays:
        return [(a, b) for a, b, _ in labels]
    displays = collapsed.displays
    starts = [s for s, _ in displays]
    kept = []
    for a, b, _ in labels:
        k = bisect_right(starts, a) - 1
        # display texts never overlap, so only the last one starting at or
        # before the label can hold it
        if k >= 0 and b <= displays[k][1]:
            continue
        kept.append((a, b))
    return kept


def cleanup_hashtags(text: str) -> str:
    """kimun's ``cleanup_hashtags``: drop each hashtag's ``#`` outside code, HTML and links.

    Code and HTML come from the parse (:func:`askkit.vault._events.code_ranges`),
    links from kimun's ``MD_LINK_RX``; a hashtag wholly inside one is kept.

    >>> cleanup_hashtags("plain #tag and `#code` mixed")
    'plain tag and `#code` mixed'
    """
    labels = label_matches(text)
    if not labels:
        return text
    zones = code_ranges(text) + [m.span() for m in _MD_LINK.finditer(text)]
    out: list[str] = []
    last = 0
    for a, b, _ in labels:
        out.append(text[last:a])
        inside = any(s <= a and b <= e for s, e in zones)
        out.append(text[a:b] if inside else text[a + 1 : b])
        last = b
    out.append(text[last:])
    return "".join(out)


# ---------------------------------------------------------------------------
# Offsets: parsed line -> note offset.

_NEWLINE = re.compile(r"\r\n?|\n")


def newline_starts(text: str) -> list[int]:
    """The offset of each line of ``text``, lines ended by LF, CRLF or a lone CR."""
    if "\r" in text:
        starts = [0]
        starts.extend(m.end() for m in _NEWLINE.finditer(text))
        return starts
    return line_starts(text.split("\n"))


class LineOffsets:
    """Maps a line of the parsed text to the offset of that line in the note."""

    __slots__ = ("_line_starts", "_parts", "_segment_starts", "_segments")

    def __init__(
        self, collapsed: Collapsed, parts: Body, body_lines: list[int] | None = None
    ) -> None:
        # Without a multi-line wikilink, collapsing kept every line in place:
        # count lines in the body itself (``body_lines``, when the caller has
        # them) and skip the segment map.
        segments = collapsed.segments
        if body_lines is None:
            body_lines = newline_starts(collapsed.text if segments is not None else parts.body)
        self._line_starts = body_lines
        self._parts = parts
        self._segments = segments
        self._segment_starts = [s[0] for s in segments] if segments is not None else []

    def line_start(self, line: int) -> int:
        """The note offset of line ``line`` (0-based) of the parsed text."""
        starts = self._line_starts
        pos = starts[line] if line < len(starts) else starts[-1]
        segments = self._segments
        if segments is not None:  # undo the wikilink collapse
            k = bisect_right(self._segment_starts, pos) - 1
            out, src, copied = segments[k]
            pos = src + (pos - out) if copied else src
        parts = self._parts
        if parts.line_starts is None or parts.note_line_starts is None:
            return parts.base + pos
        j = bisect_right(parts.line_starts, pos) - 1
        if j < 0:
            return parts.base
        return parts.note_line_starts[j] + (pos - parts.line_starts[j])
