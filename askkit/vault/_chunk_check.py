"""The independent check behind :func:`askkit.vault.chunking.check_note_sections`.

A separate pass over pulldown-cmark's events (not the chunker's line
machine) finds every heading of the note, with its plain text and line; the
sections the chunker cut must carry every heading that owns text, start at
heading lines and hold the words of their text.

For kimun 0.17 the pass parses the body with its wikilinks collapsed first, as
that chunker did; for 0.18 it parses the body as written, and a heading's
text is matched with or without its wikilinks read as their display text
(letters and digits only, since 0.18 shows a display text as written).
"""

from __future__ import annotations

import html
import re
from bisect import bisect_right
from collections.abc import Sequence
from typing import TYPE_CHECKING

import pyromark

from askkit.vault._note_text import (
    LineOffsets,
    collapse_wikilinks,
    newline_starts,
    process_wikilinks,
    split_note,
)
from askkit.vault.diacritics import fold

if TYPE_CHECKING:
    from askkit.vault.chunking import Section

__all__ = ["section_problems"]

_WORD = re.compile(r"[^\W_]+")
#: A wikilink opened on a line that does not close it: ``[[target|display...``.
_OPEN_WIKILINK = re.compile(r"\[\[[^\]|]*\|([^\]]*)$")
#: An HTML entity.
_ENTITY = re.compile(r"&#?\w+;")


def _words(text: str) -> set[str]:
    if "&" in text:
        text = text + " " + html.unescape(text)
    return set(_WORD.findall(fold(text).lower()))


def _letters(text: str) -> str:
    """The letters and digits of ``text``, folded and lowercased."""
    return "".join(_WORD.findall(fold(text).lower()))


def _in_order(wanted: str, source: str) -> str | None:
    """``None`` when ``wanted``'s characters appear in ``source`` in order, else the rest."""
    at = 0
    for i, ch in enumerate(wanted):
        at = source.find(ch, at) + 1
        if not at:
            return wanted[i : i + 20]
    return None


def _body_018(text: str) -> int:
    """Where kimun 0.18's body starts: after a closed frontmatter block, an unclosed
    fence's first line, or a BOM (read here on its own, not through the chunker)."""
    rest = text.removeprefix("\ufeff")
    first, newline, after = rest.partition("\n")
    fence = first.rstrip("\r")
    if fence not in {"---", "+++"}:
        return len(text) - len(rest)
    opened = len(text) - len(after) if newline else len(text)
    offset = opened
    for line in after.split("\n") if newline else []:
        if line.rstrip("\r") == fence:
            end = offset + len(line)
            return end + 1 if text[end : end + 1] == "\n" else end
        offset += len(line) + 1
    return opened


def _independent_headings(text: str, kimun: str) -> list[tuple[int, int, str]]:
    """(level, note offset of its line, plain text) of each heading pulldown-cmark reports.

    The plain text ends at a soft break: kimun's heading is the first line of a
    multi-line setext heading, the rest is body text.
    """
    if kimun == "0.18":
        return _headings_018(text)
    parts = split_note(text)
    collapsed = collapse_wikilinks(parts.body)
    parsed = collapsed.text
    data = parsed.encode()
    found: list[tuple[int, int, list[str]]] = []
    depth = 0
    broken = False  # a soft break has ended the current heading's text
    for event, span in pyromark.events_with_range(parsed):
        if isinstance(event, str):
            broken = broken or (depth > 0 and event == "SoftBreak")
            continue
        ((kind, value),) = event.items()
        if kind == "Start" and isinstance(value, dict) and "Heading" in value:
            level = int(value["Heading"]["level"][1])
            found.append((level, span["start"], []))
            depth += 1
            broken = False
        elif kind == "End" and isinstance(value, dict) and "Heading" in value:
            depth -= 1
        elif depth and not broken and kind in {"Text", "Code"}:
            found[-1][2].append(str(value))
    if not found:
        return []
    offsets = LineOffsets(collapsed, parts)
    lines = newline_starts(parsed)
    out = []
    for level, byte, pieces in found:
        at = len(data[:byte].decode())
        out.append((level, offsets.line_start(bisect_right(lines, at) - 1), "".join(pieces)))
    return out


def _plain_headings(parsed: str) -> list[tuple[int, int, str]]:
    """(level, UTF-8 byte of its event, plain text) of each heading of ``parsed``."""
    found: list[tuple[int, int, list[str]]] = []
    depth = 0
    broken = False
    for event, span in pyromark.events_with_range(parsed):
        if isinstance(event, str):
            broken = broken or (depth > 0 and event == "SoftBreak")
            continue
        ((kind, value),) = event.items()
        if kind == "Start" and isinstance(value, dict) and "Heading" in value:
            found.append((int(value["Heading"]["level"][1]), span["start"], []))
            depth += 1
            broken = False
        elif kind == "End" and isinstance(value, dict) and "Heading" in value:
            depth -= 1
        elif depth and not broken and kind in {"Text", "Code"}:
            found[-1][2].append(str(value))
    return [(level, byte, "".join(pieces)) for level, byte, pieces in found]


def _line_start(text: str, at: int) -> int:
    start = text.rfind("\n", 0, at) + 1
    return text.rfind("\r", start, at) + 1 or start


def _headings_018(text: str) -> list[tuple[int, int, str]]:
    start = _body_018(text)
    body = text[start:]
    data = body.encode()
    return [
        (level, _line_start(text, start + len(data[:byte].decode())), plain)
        for level, byte, plain in _plain_headings(body)
    ]


def _squash(text: str) -> str:
    return re.sub(r"[\s#`]+", "", text)


def _same_heading(segment: str, plain: str, kimun: str) -> bool:
    """Whether a breadcrumb segment is the heading whose plain text is ``plain``."""
    if kimun != "0.18":
        return _squash(segment) == _squash(plain)
    seg = _letters(segment)
    # a wikilink whose display text runs past the heading's line: its first part
    cut = _OPEN_WIKILINK.sub(r"\1", plain)
    return seg in {_letters(plain), _letters(process_wikilinks(plain)), _letters(cut)}


def section_problems(
    text: str, sections: Sequence[Section], name: str, kimun: str = "0.18"
) -> list[str]:
    """Problems with ``sections``, the chunker's sections of ``text``.

    See :func:`askkit.vault.chunking.check_note_sections` for what is checked.
    """
    problems: list[str] = []
    body = [s for s in sections if not s.is_frontmatter]
    heads = _independent_headings(text, kimun)
    # sections under a heading: the text before the first heading is under none
    starts = sorted(s.start for s in body if s.breadcrumb)
    for k, (level, start, plain) in enumerate(heads):
        scope_end = next((st for lv, st, _ in heads[k + 1 :] if lv <= level), len(text) + 1)
        i = bisect_right(starts, start - 1)
        if i == len(starts) or starts[i] >= scope_end:
            continue  # no non-blank section under this heading
        if not any(_same_heading(seg, plain, kimun) for s in body for seg in s.breadcrumb):
            problems.append(f"{name}: heading {plain!r} (offset {start}) is in no breadcrumb")
    head_starts = {st for _, st, _ in heads}
    for s in sections:
        chunk = text[s.start : s.end]
        where = f"{name}: section {s.title!r} [{s.start}:{s.end}]"
        if not 0 <= s.start <= s.end <= len(text):
            problems.append(f"{where}: range outside the note")
            continue
        if s.is_frontmatter:
            if s.text not in chunk.replace("\r\n", "\n"):
                problems.append(f"{where}: frontmatter text not in its range")
            continue
        if s.breadcrumb:
            if s.start not in head_starts:
                problems.append(f"{where}: does not start at a heading line")
            first_line = chunk.split("\n", 1)[0]
            # as written, and with its wikilinks shown as their display text
            # (``[[a|b]]text`` reads "btext"), as the chunker reads the heading
            line_words = _words(first_line) | _words(collapse_wikilinks(first_line).text)
            if not _words(s.breadcrumb[-1]) <= line_words:
                problems.append(f"{where}: heading line missing")
        wanted = _letters(s.text)
        missing = _in_order(wanted, _letters(chunk))
        if missing is not None and "&" in chunk:  # entities, or escaped ones
            # each entity as written and as decoded, since code spans and
            # backslashes keep some entities as written
            decoded = _ENTITY.sub(lambda m: m.group(0) + html.unescape(m.group(0)), chunk)
            missing = _in_order(wanted, _letters(decoded)) and missing
        if missing is not None:
            problems.append(f"{where}: body text not in range from {missing!r}")
    return problems
