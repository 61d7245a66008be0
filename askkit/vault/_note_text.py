"""The text kimun's chunker parses, and the way back to the note.

Before its pulldown-cmark walk kimun cuts the frontmatter off
(``remove_frontmatter``), collapses wikilinks to their display text and,
during the walk, drops the ``#`` of hashtags. :mod:`askkit.vault.chunking` does the
same with :func:`split_note`, :func:`collapse_wikilinks` and
:func:`strip_hashtags`, and keeps what kimun throws away: :class:`LineOffsets`
maps a line of the parsed text back to its offset in the note.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from itertools import accumulate, repeat
from operator import add

__all__ = [
    "SENTINEL",
    "Body",
    "LineOffsets",
    "collapse_wikilinks",
    "line_starts",
    "split_note",
    "strip_hashtags",
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
        base = 1 if text.startswith("\ufeff") else 0
        return Body("", False, 0, text[base:], base, None, None)
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
#: Stands in for a ``#`` that came from a wikilink's display text, which
#: kimun never treats as a hashtag; restored to ``#`` in every output.
SENTINEL = "\ue000"
_SENTINEL_LABEL = re.compile(r"#(?=[A-Za-z0-9_])")
_MASKABLE = re.compile(r"\[\[[^\]]*#[A-Za-z0-9_][^\]]*\]\]")
_MULTILINE_WIKILINK = re.compile(r"\[\[[^\]\n]*\n[^\]]*\]\]")


def _display(match: re.Match[str]) -> str:
    items = match.group(1).split("|")
    return items[0] if len(items) == 1 else items[1]


def _masked_display(match: re.Match[str]) -> str:
    return _SENTINEL_LABEL.sub(SENTINEL, _display(match))


def collapse_wikilinks(body: str) -> tuple[str, list[tuple[int, int, bool]] | None, bool]:
    """Replace ``[[a|b]]`` by ``b``: the text, an offset map, and whether ``#`` was masked.

    The offset map (``(out offset, in offset, copied)`` segments) is only
    built when a wikilink spans lines; otherwise every line starts at the
    same line number in both texts, which is all the chunker maps.
    """
    if "[[" not in body:
        return body, None, False
    # a ``#`` in a wikilink's display text is never a hashtag for kimun
    mask = SENTINEL not in body and _MASKABLE.search(body) is not None
    if not _MULTILINE_WIKILINK.search(body):
        return _WIKILINK.sub(_masked_display if mask else _display, body), None, mask
    pieces: list[str] = []
    segments: list[tuple[int, int, bool]] = []
    last = 0
    out = 0
    for m in _WIKILINK.finditer(body):
        a, b = m.span()
        if a > last:
            segments.append((out, last, True))
            pieces.append(body[last:a])
            out += a - last
        display = _masked_display(m) if mask else _display(m)
        segments.append((out, a, False))
        pieces.append(display)
        out += len(display)
        last = b
    segments.append((out, last, True))
    pieces.append(body[last:])
    return "".join(pieces), segments, mask


def _label_blocks(ch: str) -> bool:
    return ch.isalnum() or ch in "_#" or ch == SENTINEL


def strip_hashtags(text: str, prev_blocks: bool, next_blocks: bool) -> str:
    """Drop the ``#`` of every hashtag in ``text`` (kimun's ``label_matches_inner``)."""
    out: list[str] = []
    last = 0
    n = len(text)
    for m in _HASHTAG.finditer(text):
        a, b = m.span()
        if (a and _label_blocks(text[a - 1])) or (not a and prev_blocks):
            continue
        if (b < n and _label_blocks(text[b])) or (b == n and next_blocks):
            continue
        out.append(text[last:a])
        last = a + 1
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


# ---------------------------------------------------------------------------
# Offsets: parsed line -> note offset.

_NEWLINE = re.compile(r"\r\n?|\n")


class LineOffsets:
    """Maps a line of the parsed text (markdown-it's line numbers) to its note offset."""

    __slots__ = ("_line_starts", "_parts", "_segment_starts", "_segments")

    def __init__(
        self, parsed: str, parts: Body, segments: list[tuple[int, int, bool]] | None
    ) -> None:
        # Without a multi-line wikilink, collapsing kept every line in place:
        # count lines in the body itself and skip the segment map.
        counted = parsed if segments is not None else parts.body
        if "\r" in counted:
            self._line_starts = [0]
            self._line_starts.extend(m.end() for m in _NEWLINE.finditer(counted))
        else:
            self._line_starts = line_starts(counted.split("\n"))
        self._parts = parts
        self._segments = segments
        self._segment_starts = [s[0] for s in segments] if segments is not None else []

    def line_start(self, line: int) -> int:
        starts = self._line_starts
        pos = starts[line] if line < len(starts) else starts[-1]
        segments = self._segments
        if segments is not None:  # undo the wikilink collapse
            k = bisect_right(self._segment_starts, pos) - 1
            out, src, copied = segments[k]
            pos = src + (pos - out) if copied else src
        parts = self._parts
        if parts.line_starts is None or parts.note_line_starts is None:
            return parts.base + pos if pos else 0  # a leading BOM belongs to line 0
        j = bisect_right(parts.line_starts, pos) - 1
        if j < 0:
            return parts.base
        return parts.note_line_starts[j] + (pos - parts.line_starts[j])
