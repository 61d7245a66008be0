"""kimun's markdown event walk, on pulldown-cmark's own events (through pyromark).

kimun's chunker walks the events of pulldown-cmark 0.13 with no extensions
(``Parser::new``) and folds them into text lines (``TextLines::push``,
``parse_tag``, ``parse_tag_end`` in ``core/src/note/content_extractor.rs``).
pyromark binds the same parser, so :func:`text_lines` walks the very events
kimun walks, line for line:

* a line is ``[kind, level, text, start]``: ``kind`` one of :data:`EMPTY`,
  :data:`HEADER`, :data:`TEXT`, :data:`ITEM`; ``start`` is ``-1``, except
  that a heading line is ``[HEADER, level, text, start, end]``, the UTF-8
  byte range of its heading event in the parsed text;
* the indexing walk (``walk_indexing_events``) also drops the ``#`` of the
  hashtags it is given, in text outside code blocks, links and images, and
  only where the text event's source is as long as its text.

kimun pops a tag stack on each end event and ignores an end that does not
match; pulldown-cmark's events always nest, so the walk needs no stack.
"""

from __future__ import annotations

import json
from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from importlib import metadata
from typing import Any

import pyromark

from askkit._text import rust_trim

__all__ = [
    "EMPTY",
    "HEADER",
    "ITEM",
    "TEXT",
    "ByteOffsets",
    "Stripper",
    "code_ranges",
    "line_text",
    "pulldown_cmark_version",
    "text_lines",
]

EMPTY, HEADER, TEXT, ITEM = 0, 1, 2, 3
#: An Empty line; shared and never mutated.
_EMPTY: list[Any] = [EMPTY, 0, "", -1]
_LEVELS = {"H1": 1, "H2": 2, "H3": 3, "H4": 4, "H5": 5, "H6": 6}
_BREAK_TAGS = frozenset({"<br", "<bR", "<Br", "<BR"})

#: A ``Text`` event's text, the event's byte range, and whether it sits in a
#: link or an image: the text the line gets.
Stripper = Callable[[str, Any, bool], str]


@lru_cache(maxsize=1)
def pulldown_cmark_version() -> str:
    """The pulldown-cmark version inside the installed pyromark (from its SBOM).

    >>> pulldown_cmark_version().startswith("0.13.")
    True
    """
    dist = metadata.distribution("pyromark")
    for file in dist.files or ():
        if file.name.endswith(".cyclonedx.json"):
            bom = json.loads(file.read_text(encoding="utf-8"))
            for component in bom.get("components", ()):
                if component.get("name") == "pulldown-cmark":
                    return str(component["version"])
    raise RuntimeError(f"pyromark {dist.version} does not say which pulldown-cmark it bundles")


def _events(text: str) -> Iterable[tuple[Any, dict[str, int]]]:
    """pulldown-cmark's events for ``text`` with no extensions, with UTF-8 byte ranges."""
    events: Iterable[tuple[Any, Any]] = pyromark.events_with_range(text)
    return events


def line_text(line: Sequence[Any]) -> str:
    """kimun's ``TextLine::to_text``."""
    kind = line[0]
    level: int = line[1]
    text: str = line[2]
    if kind == TEXT:
        return text
    if kind == ITEM:
        return "    " * level + "* " + text.replace("\n", " ")
    if kind == HEADER:
        return "#" * level + " " + text
    return ""


#: What a start or end tag changes in the indexing walk's state.
_NOTHING, _CODE, _LINK = 0, 1, 2


def text_lines(text: str, strip: Stripper | None = None) -> list[list[Any]]:
    """kimun's ``TextLines`` for ``text``: ``loop_events``, or with ``strip`` the indexing walk."""
    lines: list[list[Any]] = []
    append = lines.append
    code_depth = 0
    in_link = False
    for event, span in _events(text):
        if event.__class__ is str:  # SoftBreak, HardBreak, Rule
            if event != "Rule" and lines and lines[-1][0] == ITEM:
                lines[-1][2] += "\n"  # a break continues a list item
            elif event == "HardBreak":
                append(_EMPTY)
                append(_EMPTY)
            else:
                append(_EMPTY)
            continue
        ((kind, value),) = event.items()
        if kind == "Text":
            if strip is not None and not code_depth:
                value = strip(value, span, in_link)
            _append_text(lines, value)
        elif kind == "Start":
            change = _start(lines, value, span)
            if change == _CODE:
                code_depth += 1
            elif change == _LINK:
                in_link = True
        elif kind == "End":
            change = _end(lines, value)
            if change == _CODE:
                code_depth = code_depth - 1 if code_depth else 0
            elif change == _LINK:
                in_link = False
        elif kind == "Code":
            _append_text(lines, "`" + value + "`")
        elif kind == "InlineHtml":
            cur = lines[-1] if lines else _EMPTY
            if cur[0] != HEADER:
                _append_text(lines, value)
            elif value[:3] in _BREAK_TAGS:
                cur[2] += " "
        elif kind == "TaskListMarker":
            append([TEXT, 0, "true" if value else "false", -1])
        else:  # Html, InlineMath, DisplayMath, FootnoteReference: a line of their own
            append([TEXT, 0, value, -1])
    return lines


def _start(lines: list[list[Any]], tag: Any, span: Any) -> int:
    """kimun's ``parse_tag``: the lines a start tag adds."""
    if tag.__class__ is str:
        if tag == "Paragraph":
            lines.append(_EMPTY)
        elif tag == "Item":
            cur = lines[-1] if lines else _EMPTY
            if cur[0] != ITEM:
                lines.append([ITEM, 0, "", -1])
            elif cur[2]:
                lines.append([ITEM, cur[1], "", -1])
        return _NOTHING  # Emphasis, Strong, HtmlBlock, ...: no line
    ((name, attrs),) = tag.items()
    if name == "Heading":
        lines.append([HEADER, _LEVELS[attrs["level"]], "", span["start"], span["end"]])
    elif name == "CodeBlock":
        fence = "```" if attrs == "Indented" else "```" + attrs["Fenced"]
        lines.append([TEXT, 0, fence, -1])
        lines.append(_EMPTY)
        return _CODE
    elif name == "List":
        cur = lines[-1] if lines else _EMPTY
        lines.append([ITEM, cur[1] + 1 if cur[0] == ITEM else 0, "", -1])
    elif name in {"Link", "Image"}:
        return _LINK
    return _NOTHING


def _end(lines: list[list[Any]], tag: Any) -> int:
    """kimun's ``parse_tag_end``: the lines an end tag adds or changes."""
    if tag.__class__ is str:
        if tag == "Paragraph":
            lines.append(_EMPTY)
        elif tag == "CodeBlock":
            cur = lines[-1] if lines else _EMPTY
            if cur[0] != EMPTY:
                cur[2] = rust_trim(cur[2])
            lines.append([TEXT, 0, "```", -1])
            return _CODE
        elif tag in {"Link", "Image"}:
            return _LINK
        return _NOTHING
    ((name, _),) = tag.items()
    if name == "Heading":
        lines.append(_EMPTY)
    elif name == "List":
        cur = lines.pop() if lines else _EMPTY
        if cur[0] == ITEM:
            if cur[2]:
                lines.append(cur)
            lines.append([ITEM, cur[1] - 1, "", -1] if cur[1] > 0 else _EMPTY)
        else:
            lines.append(cur)
    return _NOTHING


def _append_text(lines: list[list[Any]], value: str) -> None:
    """kimun's ``TextLine::append_text`` on the last line."""
    if lines and lines[-1][0] != EMPTY:
        lines[-1][2] += value
    elif lines:
        lines[-1] = [TEXT, 0, value, -1]
    else:
        lines.append([TEXT, 0, value, -1])


# ---------------------------------------------------------------------------
# Byte offsets.


class ByteOffsets:
    """UTF-8 byte offsets of ``text`` to ``str`` offsets, for rising byte offsets.

    kimun's ``ByteToCharCursor``: the total work over one pass is the text's
    length, however many offsets are asked for.
    """

    __slots__ = ("_ascii", "_byte", "_char", "_data")

    def __init__(self, text: str, data: bytes | None = None) -> None:
        self._ascii = text.isascii()
        self._data = b"" if self._ascii else (data if data is not None else text.encode())
        self._byte = 0
        self._char = 0

    def to_str(self, byte: int) -> int:
        """The ``str`` offset of byte offset ``byte`` (not below the last one asked)."""
        if self._ascii:
            return byte
        if byte < self._byte:
            self._byte = self._char = 0
        if byte > self._byte:
            self._char += len(self._data[self._byte : byte].decode())
            self._byte = byte
        return self._char


def str_to_bytes(text: str, offsets: Sequence[int]) -> list[int]:
    """The UTF-8 byte offsets of rising ``str`` offsets into ``text``."""
    if text.isascii():
        return list(offsets)
    out: list[int] = []
    byte = 0
    last = 0
    for pos in offsets:
        byte += len(text[last:pos].encode())
        last = pos
        out.append(byte)
    return out


# ---------------------------------------------------------------------------
# Hashtags in text events (kimun's ``strip_hashtags_in_text_event``).


def hashtag_stripper(text: str, data: bytes, labels: list[tuple[int, int]]) -> Stripper:
    """The indexing walk's text hook: drop the ``#`` of ``labels`` (``str`` spans in ``text``)."""
    flat = str_to_bytes(text, [x for span in labels for x in span])
    starts = flat[0::2]
    ends = flat[1::2]
    count = len(starts)

    def strip(decoded: str, span: Any, in_link: bool) -> str:
        lo, hi = span["start"], span["end"]
        i = bisect_left(starts, lo)
        j = i
        while j < count and ends[j] <= hi:
            j += 1
        if j == i:
            return decoded
        source = data[lo:hi]
        if len(source) != len(decoded.encode()):
            return decoded  # entities decoded: kimun keeps the text as it is
        if in_link:
            return source.decode()  # kept verbatim inside a link or an image
        pieces: list[bytes] = []
        last = lo
        for k in range(i, j):
            pieces.append(data[last : starts[k]])
            last = starts[k] + 1
        pieces.append(data[last:hi])
        return b"".join(pieces).decode()

    return strip


# ---------------------------------------------------------------------------
# Code and HTML (kimun's ``code_char_ranges``).


def code_ranges(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` ``str`` spans of code blocks, code spans and HTML in ``text``."""
    spans: list[tuple[int, int]] = []
    depth = 0
    open_at = 0
    for event, span in _events(text):
        if event.__class__ is str:
            continue
        ((kind, value),) = event.items()
        if kind == "Start" and isinstance(value, dict) and "CodeBlock" in value:
            if depth == 0:
                open_at = span["start"]
            depth += 1
        elif kind == "End" and value == "CodeBlock":
            depth = max(depth - 1, 0)
            if depth == 0:
                spans.append((open_at, span["end"]))
        elif kind in {"Code", "Html", "InlineHtml"}:
            spans.append((span["start"], span["end"]))
    if text.isascii() or not spans:
        return spans
    data = text.encode()
    return [(len(data[:a].decode()), len(data[:b].decode())) for a, b in spans]
