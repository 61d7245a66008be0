"""kimun's single note walk (kimun 0.18), on pulldown-cmark's own events (through pyromark).

From kimun commit ``67e96640a6ceae220ba578117d14352a60658604``
(``core/src/note/walk.rs``, ``walk``) every whole-note extractor -- chunks,
headings, titles -- is a view of one walk over the note as written:

* the body is the note past a closed frontmatter block (or past an unclosed
  fence's first line, or a byte-order mark), its bytes as given: a CRLF note
  is parsed as it is, and the events are read as the same note in LF reads
  (:func:`events`);
* the parse is plain CommonMark (``Options::empty()``); wikilinks are found
  after it, per text block (a paragraph, heading, list item or indented code
  block), with the editor's pattern ``\\[\\[([^\\]]+)\\]\\]`` over the block's own
  text (:func:`wikilinks`): a match whose brackets are prose -- not escaped,
  neither ``[[`` nor ``]]`` inside a link, an image, a code span or inline HTML
  pulldown read, unless that link is exactly the match's inner ``[...]`` --
  and whose target (before ``|``) is not empty. ``![[`` is an embed unless the
  ``!`` is escaped;
* the text lines are kimun's ``TextLines``, where a wikilink's source events
  are replaced by its display text taken verbatim from the note
  (``[[a|*b*]]`` shows ``*b*``), a line holding one trimmed of ASCII
  whitespace at its edges when it ends, a heading trimmed when it ends, and a
  hashtag in prose text (not link or image text, not code) losing its ``#``
  when the event's source is as long as its text.

Lines are ``[kind, level, text, start]`` as in :mod:`askkit.vault._events`; a
heading line is ``[HEADER, level, text, start, end]``, the UTF-8 byte range of
its heading event in the body.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import pyromark

from askkit._text import rust_trim
from askkit.vault._events import EMPTY, HEADER, ITEM, TEXT, str_to_bytes
from askkit.vault._note_text import label_matches

__all__ = [
    "Wiki",
    "body_start",
    "events",
    "walk_lines",
    "walk_tags",
    "walk_title",
    "wikilinks",
]

#: The whitespace pulldown trims from a line of prose (Rust ``is_ascii_whitespace``).
_ASCII_WS = " \t\n\x0c\r"
#: The editor's wikilink pattern (kimun's ``WIKILINK_RX``), over bytes.
_WIKILINK = re.compile(rb"\[\[([^\]]+)\]\]")
#: The editor's link pattern (kimun's ``MD_LINK_RX``), over bytes: bang, text, link.
_MD_LINK = re.compile(rb"(!?)\[([^\]]*)\]\(([^)]+?)\)")
#: Rust's ``str::trim`` set, as UTF-8 (what it strips from a link's destination).
_RUST_WS_BYTES = b"\t\n\x0b\x0c\r "
_LEVELS = {"H1": 1, "H2": 2, "H3": 3, "H4": 4, "H5": 5, "H6": 6}
_BREAK_TAGS = frozenset({"<br", "<bR", "<Br", "<BR"})
_INLINE_STARTS = frozenset({"Emphasis", "Strong", "Strikethrough"})
_TEXT_BLOCKS = frozenset({"Paragraph", "Item"})
_LINKS = frozenset({"Link", "Image"})
_BREAKS = frozenset({"SoftBreak", "HardBreak"})
#: The events a wikilink's source may cover: its text, and code, HTML or line breaks in it.
_LEAVES = frozenset({"Text", "Code", "InlineHtml"})
_OPAQUE = frozenset({"Code", "InlineHtml"})
#: Beyond any byte of a body.
_NOWHERE = 1 << 62

Event = tuple[Any, dict[str, int]]


# ---------------------------------------------------------------------------
# Frontmatter (kimun's ``frontmatter_bounds``, ``body_start``, ``frontmatter_text``).


def _delimiter(note: str) -> tuple[str, int] | None:
    """kimun's ``frontmatter_delimiter``: the fence and the offset past the opening line."""
    bom = 1 if note.startswith("\ufeff") else 0
    newline = note.find("\n", bom)
    line_end = len(note) if newline < 0 else newline
    first = note[bom:line_end].rstrip("\r")
    if first not in {"---", "+++"}:
        return None
    return first, min(line_end + 1, len(note))


def _rust_lines(block: str) -> list[str]:
    """Rust ``str::lines``: split at LF, a CR before it dropped, no empty last line."""
    if not block:
        return []
    lines = block.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def body_start(note: str) -> tuple[int, str, int]:
    """Where the walked body starts in ``note``, the frontmatter text, and the block's end.

    The body starts after a closed frontmatter block (its closing line and line
    break included), else after an unclosed fence's first line, else after a
    byte-order mark. The frontmatter text is the lines between the fences
    joined with ``"\\n"`` (``""`` without a closed block); the block's end is 0
    without one.

    >>> body_start("---\\nt: x\\n---\\n# A\\n")
    (13, 't: x', 13)
    >>> body_start("---\\n# A\\n"), body_start("\\ufeff# A")
    ((4, '', 0), (1, '', 0))
    """
    found = _delimiter(note)
    if found is None:
        return (1 if note.startswith("\ufeff") else 0), "", 0
    delimiter, start = found
    offset = start
    for line in note[start:].split("\n"):
        if line.rstrip("\r") == delimiter:
            end = offset + len(line)
            if note[end : end + 1] == "\n":
                end += 1
            return end, "\n".join(_rust_lines(note[start:offset])), end
        offset += len(line) + 1
    return start, "", 0


# ---------------------------------------------------------------------------
# The parse, read as the same note in LF reads (kimun's ``events``).


def _lf(text: str) -> str:
    return text.replace("\r\n", "\n") if "\r" in text else text


def _prefix_run(text: str) -> int:
    return len(text) - len(text.lstrip(" \t>"))


def _rebuild_code_span(code: str, inner: str, cut: bool) -> str | None:
    """kimun's ``rebuild_code_span``: a CRLF code span's text as the same span in LF reads."""
    spaced = f" {code} " if cut else code
    out: list[str] = []
    at = 0
    lines = inner.split("\n")
    last = len(lines) - 1
    for i, line in enumerate(lines):
        crlf = line.endswith("\r")
        text = line[:-1] if crlf else line
        if i == 0:
            size = len(text)
        elif i == last:
            size = len(spaced) - at
            if size < 0:
                return None
        else:
            if at > len(spaced):
                return None
            left = min(_prefix_run(spaced[at:]), _prefix_run(text))
            size = len(text) - _prefix_run(text) + left
        if at + size > len(spaced):
            return None
        kept = spaced[at : at + size]
        if not text.endswith(kept):
            return None
        out.append(kept)
        at += size
        if i < last:
            ending = "  " if crlf else " "
            if spaced[at : at + len(ending)] != ending:
                return None
            out.append(" ")
            at += len(ending)
    joined = "".join(out)
    if (
        len(joined) > 1
        and joined.startswith(" ")
        and joined.endswith(" ")
        and joined.strip(" ") != ""
    ):
        joined = joined[1:-1]
    return joined


def _crlf_code_span(code: str, src: str) -> str | None:
    """kimun's ``crlf_code_span``: ``None`` when there is nothing to change."""
    ticks = len(src) - len(src.lstrip("`"))
    if len(src) - ticks < ticks:
        return None
    inner = src[ticks : len(src) - ticks]
    if "\r\n" not in inner:
        return None
    spaces = (" ", "\r", "\n")
    all_spaces = code.strip(" ") == ""
    cut = inner[:1] in spaces and inner[-1:] in spaces and not all_spaces
    first = _rebuild_code_span(code, inner, cut)
    if first is not None:
        return first
    return _rebuild_code_span(code, inner, not cut and not all_spaces)


def events(body: str, data: bytes | None = None, *, keep: bool = True) -> Sequence[Event]:
    """pulldown-cmark's events for ``body`` (no extensions), read as the same note in LF.

    In a CRLF body an HTML line split from its line ending (``Html("<div>")``,
    ``Html("\\n")``) is joined back, inline HTML and text lose their ``\\r``, and
    a code span over a CRLF reads as over an LF. (In an LF body pulldown never
    splits an HTML line from its line ending, so there is nothing to join.)
    Without ``keep``, an LF body's events are streamed, read once, not kept
    (keeping every event alive costs more than the parse).
    """
    stream = cast("Iterable[Event]", pyromark.events_with_range(body))
    if "\r" not in body:
        return stream if not keep else list(stream)  # type: ignore[return-value]
    raw: list[Event] = list(stream)
    out: list[Event] = []
    n = len(raw)
    i = 0
    while i < n:
        event, span = raw[i]
        i += 1
        if event.__class__ is dict:
            ((kind, value),) = event.items()
            if kind == "Html" and not value.endswith("\n"):
                if i < n and raw[i][0] == {"Html": "\n"}:
                    span = {"start": span["start"], "end": raw[i][1]["end"]}
                    event = {"Html": value + "\n"}
                    i += 1
            elif kind in {"InlineHtml", "Text"} and "\r" in value:
                event = {kind: _lf(value)}
            elif kind == "Code":
                if data is None:
                    data = body.encode()
                src = data[span["start"] : span["end"]].decode()
                if "\r" in src:
                    rebuilt = _crlf_code_span(value, src)
                    if rebuilt is not None:
                        event = {"Code": rebuilt}
        out.append((event, span))
    return out


# ---------------------------------------------------------------------------
# Wikilinks, per text block (kimun's ``TextBlocks``).


@dataclass(slots=True)
class Wiki:
    """A wikilink the walk found: its bytes in the body (an embed's ``!`` included),
    its display text's, and whether it sits in an indented code block (kept as written)."""

    start: int
    end: int
    display: tuple[int, int]
    code: bool


@dataclass(slots=True)
class _Block:
    start: int
    end: int
    code: bool
    children: list[tuple[int, int]] = field(default_factory=list)
    links: list[tuple[int, int]] = field(default_factory=list)
    opaque: list[tuple[int, int]] = field(default_factory=list)


def _overlaps(ranges: Sequence[tuple[int, int]], ends: Sequence[int], start: int, end: int) -> bool:
    """Whether ``[start, end)`` overlaps one of ``ranges`` (disjoint, in order)."""
    i = bisect_right(ends, start)
    return i < len(ranges) and ranges[i][0] < end


def _escaped(data: bytes, end: int, begin: int) -> bool:
    """Whether an odd run of backslashes ends ``data[begin:end]``."""
    run = 0
    while end - run > begin and data[end - run - 1] == 0x5C:
        run += 1
    return run % 2 == 1


def _scan(
    data: bytes,
    own: tuple[int, int],
    block: _Block,
    found: list[Wiki],
    spaced: list[tuple[int, int]] | None,
) -> None:
    """kimun's ``TextBlocks::scan``: one stretch of a block's own text.

    Its wikilinks go to ``found``; with ``spaced``, the markdown links pulldown
    did not read there (a destination with spaces) go to ``spaced``.
    """
    own_start, own_end = own
    wikis_from = len(found)
    if data.find(b"[[", own_start, own_end) >= 0:
        _scan_wikilinks(data, own_start, own_end, block, found)
    if spaced is not None and not block.code and data.find(b"](", own_start, own_end) >= 0:
        wikis = [(w.start, w.end) for w in found[wikis_from:]]
        _scan_spaced(data, own, block, wikis, spaced)


def _scan_spaced(
    data: bytes,
    own: tuple[int, int],
    block: _Block,
    wikis: list[tuple[int, int]],
    spaced: list[tuple[int, int]],
) -> None:
    """The markdown links the editor's pattern finds where pulldown read none."""
    own_start, own_end = own
    links, opaque = block.links, block.opaque
    link_ends = [e for _, e in links]
    wiki_ends = [e for _, e in wikis]
    source = data[own_start:own_end]
    closers = [own_start + m.start() for m in re.finditer(rb"\]\(", source)]
    if all(_overlaps(links, link_ends, at, at + 1) for at in closers):
        return  # only parsed links' own ``](``
    for m in _MD_LINK.finditer(source):
        start, end = own_start + m.start(), own_start + m.end()
        label_start, label_end = own_start + m.start(2), own_start + m.end(2)
        target = m.group(3).strip(_RUST_WS_BYTES)
        first = bisect_right([e for _, e in opaque], start)
        code_outside_label = any(
            not (label_start <= o_start and o_end <= label_end)
            for o_start, o_end in opaque[first:]
            if o_start < end
        )
        if (
            _escaped(data, start, own_start)
            or b"\n" in target
            or b"(" in target
            or _overlaps(links, link_ends, start, end)
            or _overlaps(wikis, wiki_ends, start, end)
            or code_outside_label
        ):
            continue
        spaced.append((start, end))


def _scan_wikilinks(
    data: bytes, own_start: int, own_end: int, block: _Block, found: list[Wiki]
) -> None:
    """The wikilinks of one stretch of a block's own text."""
    links, opaque = block.links, block.opaque
    link_ends = [e for _, e in links]
    opaque_ends = [e for _, e in opaque]
    link_starts = [s for s, _ in links]

    def read(a: int, b: int) -> bool:
        return _overlaps(links, link_ends, a, b) or _overlaps(opaque, opaque_ends, a, b)

    def prose(m_start: int, m_end: int) -> bool:
        inner = (m_start + 1, m_end - 1)
        i = bisect_left(link_starts, inner[0])
        inner_link = i < len(links) and links[i] == inner
        if _escaped(data, m_start, own_start):
            return False
        return inner_link or (not read(m_start, m_start + 2) and not read(m_end - 2, m_end))

    source = data[own_start:own_end]
    for m in _WIKILINK.finditer(source):
        m_start, m_end = own_start + m.start(), own_start + m.end()
        last_line = source.rfind(b"\n", m.start(), m.end())
        chosen: tuple[int, int] | None = None
        if last_line >= 0:
            line = last_line + 1
            inner = _WIKILINK.search(source, line, m.end())
            if inner is not None:
                candidate = (own_start + inner.start(), own_start + inner.end())
                if prose(*candidate):
                    chosen = candidate
        if chosen is None:
            chosen = (m_start, m_end)
        start, end = chosen
        if not prose(start, end):
            continue
        embed = (
            start > own_start
            and data[start - 1] == 0x21  # "!"
            and not _escaped(data, start - 1, own_start)
            and not read(start - 1, start)
        )
        inner_start = start + 2
        inner_bytes = data[inner_start : end - 2]
        bar = inner_bytes.find(b"|")
        if bar < 0:
            target = inner_bytes
            display = (inner_start, end - 2)
        else:
            target = inner_bytes[:bar]
            rest = inner_bytes.find(b"|", bar + 1)
            label_end = inner_start + (len(inner_bytes) if rest < 0 else rest)
            display = (inner_start + bar + 1, label_end)
        if not target:
            continue  # ``[[|b]]``: no wikilink, its text stays as written
        found.append(Wiki(start - 1 if embed else start, end, display, block.code))


def _end_block(
    data: bytes, block: _Block, found: list[Wiki], spaced: list[tuple[int, int]] | None
) -> None:
    """kimun's ``TextBlocks::end``: the block's own text, the stretches between its children."""
    at = block.start
    for child_start, child_end in [*block.children, (block.end, block.end)]:
        if at < child_start:
            _scan(data, (at, child_start), block, found, spaced)
        at = max(at, child_end)


class _Blocks:
    """kimun's ``TextBlocks::step``: the text blocks the walk is inside, innermost last.

    A block whose bytes hold no ``[[`` (nor, with ``spaced``, ``](``) has nothing to
    find: it stands in the stack as a marker (whether it is code), nothing recorded.
    """

    __slots__ = ("data", "found", "link_depth", "open", "spaced")

    def __init__(self, data: bytes, spaced: list[tuple[int, int]] | None) -> None:
        self.data = data
        self.spaced = spaced
        self.open: list[_Block | bool] = []
        self.link_depth = 0
        self.found: list[Wiki] = []

    def top(self) -> _Block | None:
        top = self.open[-1] if self.open else None
        return top if isinstance(top, _Block) else None

    def start(self, value: Any, span: dict[str, int]) -> None:
        named = value.__class__ is str
        if named and value in _INLINE_STARTS:
            return
        top = self.top()
        if not named and ("Link" in value or "Image" in value):
            if self.link_depth == 0 and top is not None:
                top.links.append((span["start"], span["end"]))
            self.link_depth += 1
            return
        if top is not None:
            top.children.append((span["start"], span["end"]))
        code = not named and value.get("CodeBlock") == "Indented"
        if code or (value in _TEXT_BLOCKS if named else "Heading" in value):
            start, end = span["start"], span["end"]
            data = self.data
            worth = data.find(b"[[", start, end) >= 0 or (
                self.spaced is not None and data.find(b"](", start, end) >= 0
            )
            self.open.append(_Block(start, end, code) if worth else code)

    def end(self, value: Any) -> None:
        named = value.__class__ is str
        if named and value in _LINKS:
            self.link_depth = max(self.link_depth - 1, 0)
        elif value in _TEXT_BLOCKS if named else "Heading" in value:
            if self.open:
                self._close(self.open.pop())
        elif value == "CodeBlock" and self.open:
            top = self.open[-1]
            if top is True or (isinstance(top, _Block) and top.code):
                self._close(self.open.pop())

    def _close(self, block: _Block | bool) -> None:
        if isinstance(block, _Block):
            _end_block(self.data, block, self.found, self.spaced)


def wikilinks(
    evs: Sequence[Event], data: bytes, spaced: list[tuple[int, int]] | None = None
) -> list[Wiki]:
    """The wikilinks of the body ``data`` (its events ``evs``), in document order, each once.

    Wikilinks in an indented code block are links but stay code: they are left
    out here (their text stays as written). With ``spaced``, the markdown links
    pulldown did not read (a destination with spaces) are added to it, in
    document order, each once.
    """
    blocks = _Blocks(data, spaced)
    for event, span in evs:
        if event.__class__ is str or "Text" in event:
            continue
        ((kind, value),) = event.items()
        if kind == "Start":
            blocks.start(value, span)
        elif kind == "End":
            blocks.end(value)
        elif kind in _OPAQUE:
            top = blocks.top()
            if top is not None:
                top.opaque.append((span["start"], span["end"]))
    found = blocks.found
    if spaced:
        spaced.sort()
        unique = [spaced[0]]
        for link in spaced[1:]:
            if link[0] >= unique[-1][1]:
                unique.append(link)
        spaced[:] = unique
    found.sort(key=lambda w: w.start)
    kept: list[Wiki] = []
    for wiki in found:
        if kept and wiki.start < kept[-1].end:
            continue
        kept.append(wiki)
    return [w for w in kept if not w.code]


# ---------------------------------------------------------------------------
# The lines (kimun's ``TextLines`` as the walk feeds it).


def _trim_ascii(line: list[Any]) -> None:
    if line[0] != EMPTY:
        line[2] = line[2].strip(_ASCII_WS)


def _trim_last_line(line: list[Any]) -> None:
    """kimun's ``TextLine::trim_last_line``: ASCII whitespace off its last line of text."""
    if line[0] == EMPTY:
        return
    text: str = line[2]
    cut = text.rfind("\n") + 1
    last = text[cut:].strip(_ASCII_WS)
    line[2] = text[:cut] + last


class _Lines:
    """kimun's ``TextLines``: the line machine, with a wikilink's display line."""

    __slots__ = ("display", "lines")

    def __init__(self) -> None:
        self.lines: list[list[Any]] = [[EMPTY, 0, "", -1]]
        self.display: int | None = None

    def end_display(self) -> None:
        if self.display is not None:
            _trim_last_line(self.lines[self.display])
            self.display = None

    def append(self, text: str) -> None:
        """``append_text`` on the last line."""
        cur = self.lines[-1]
        if cur[0] == EMPTY:
            self.lines[-1] = [TEXT, 0, text, -1]
        else:
            cur[2] += text

    def show(self, text: str) -> None:
        """kimun's ``TextLines::display``: a wikilink's display text, as written."""
        if text:
            self.append(text)
        self.display = len(self.lines) - 1

    def after(self) -> None:
        """A line holding a display text ended when another follows it."""
        if self.display is not None and self.display + 1 < len(self.lines):
            self.end_display()

    def start(self, tag: Any, span: dict[str, int]) -> None:
        """kimun's ``parse_tag``."""
        lines = self.lines
        if tag.__class__ is str:
            if tag == "Paragraph":
                lines.append([EMPTY, 0, "", -1])
            elif tag == "Item":
                cur = lines[-1]
                if cur[0] != ITEM:
                    lines.append([ITEM, 0, "", -1])
                elif cur[2]:
                    lines.append([ITEM, cur[1], "", -1])
            return
        ((name, attrs),) = tag.items()
        if name == "Heading":
            lines.append([HEADER, _LEVELS[attrs["level"]], "", span["start"], span["end"]])
        elif name == "CodeBlock":
            fence = "```" if attrs == "Indented" else "```" + attrs["Fenced"]
            lines.append([TEXT, 0, fence, -1])
            lines.append([EMPTY, 0, "", -1])
        elif name == "List":
            cur = lines[-1]
            lines.append([ITEM, cur[1] + 1 if cur[0] == ITEM else 0, "", -1])

    def end(self, tag: Any) -> None:
        """kimun's ``parse_tag_end`` (an item's end first ends its display line)."""
        lines = self.lines
        if tag.__class__ is str:
            if tag == "Paragraph":
                lines.append([EMPTY, 0, "", -1])
            elif tag == "CodeBlock":
                cur = lines[-1]
                if cur[0] != EMPTY:
                    cur[2] = rust_trim(cur[2])
                lines.append([TEXT, 0, "```", -1])
            elif tag == "Item":
                self.end_display()
            return
        ((name, _),) = tag.items()
        if name == "Heading":
            _trim_ascii(lines[-1])
            lines.append([EMPTY, 0, "", -1])
        elif name == "List":
            cur = lines[-1]
            if cur[0] == ITEM:
                last = [ITEM, cur[1] - 1, "", -1] if cur[1] > 0 else [EMPTY, 0, "", -1]
                if cur[2]:
                    lines.append(last)
                else:
                    lines[-1] = last

    def brk(self, event: str) -> None:
        """SoftBreak, HardBreak and Rule."""
        lines = self.lines
        if event != "Rule" and lines[-1][0] == ITEM:
            self.end_display()
            lines[-1][2] += "\n"  # a break continues a list item
        elif event == "HardBreak":
            lines.append([EMPTY, 0, "", -1])
            lines.append([EMPTY, 0, "", -1])
        else:
            lines.append([EMPTY, 0, "", -1])

    def leaf(self, kind: str, value: str) -> None:
        """Code, InlineHtml and the events that are a line of their own."""
        if kind == "Code":
            self.append("`" + value + "`")
        elif kind == "InlineHtml":
            cur = self.lines[-1]
            if cur[0] != HEADER:
                self.append(value)
            elif value[:3] in _BREAK_TAGS:
                cur[2] += " "
        elif kind == "TaskListMarker":
            self.lines.append([TEXT, 0, "true" if value else "false", -1])
        else:  # Html, InlineMath, DisplayMath, FootnoteReference
            self.lines.append([TEXT, 0, value, -1])

    def push(self, event: Any, text: Callable[[str], str] | None = None) -> None:
        """Feed one event (a text event's content through ``text``)."""
        if event.__class__ is str:
            self.brk(event)
        else:
            ((kind, value),) = event.items()
            if kind == "Text":
                self.append(value if text is None else text(value))
            elif kind == "Start":
                self.start(value, {"start": -1, "end": -1})
            elif kind == "End":
                self.end(value)
            else:
                self.leaf(kind, value)
        self.after()


def _source_text(body: bytes, start: int, end: int) -> list[str | None]:
    """kimun's ``source_text``: a display text as pulldown gives text over lines.

    Each line after the first loses its container prefix (indentation, ``>``)
    and every line its ``\\r``; ``None`` stands for the soft break between lines.
    """
    out: list[str | None] = []
    at = start
    for i, line in enumerate(body[start:end].split(b"\n")):
        line_end = at + len(line)
        text = line[:-1] if line.endswith(b"\r") else line
        text_end = at + len(text)
        begin = at if i == 0 else text_end - len(text.lstrip(b" \t>"))
        if i > 0:
            out.append(None)
        if begin < text_end:
            out.append(body[begin:text_end].decode())
        at = line_end + 1
    return out


class _Hashtags:
    """The hashtag candidates of the body (kimun's ``label_matches_inner``), in bytes."""

    __slots__ = ("data", "ends", "names", "record", "starts")

    def __init__(self, body: str, data: bytes | None, *, record: bool = False) -> None:
        matches = label_matches(body, ampersand=True)
        flat = str_to_bytes(body, [x for a, b, _ in matches for x in (a, b)]) if matches else []
        self.starts = flat[0::2]
        self.ends = flat[1::2]
        self.names = [name for _, _, name in matches]
        self.data = data
        #: With ``record``: ``(start, end, name)`` of each tag the walk finds.
        self.record: list[tuple[int, int, str]] | None = [] if record else None

    def strip(self, decoded: str, lo: int, hi: int, in_link: bool) -> str:
        """kimun's ``prose_text``: drop the ``#`` of the candidates wholly in ``[lo, hi)``."""
        starts, ends = self.starts, self.ends
        i = bisect_left(starts, lo)
        j = i
        count = len(starts)
        while j < count and ends[j] <= hi:
            j += 1
        if j == i or in_link:
            return decoded
        if self.record is not None:
            self.record.extend((starts[k], ends[k], self.names[k]) for k in range(i, j))
        data = self.data
        assert data is not None  # candidates exist only with the body's bytes
        source = data[lo:hi]
        if len(source) != len(decoded.encode()):
            return decoded  # entities decoded: the ``#`` stays
        pieces: list[bytes] = []
        last = lo
        for k in range(i, j):
            pieces.append(data[last : starts[k]])
            last = starts[k] + 1
        pieces.append(data[last:hi])
        return b"".join(pieces).decode()


class _Walk:
    """The walk's second read of the events: into the lines, wikilinks replaced."""

    __slots__ = (
        "code_depth",
        "data",
        "link_depth",
        "machine",
        "next_start",
        "nxt",
        "shown",
        "tags",
        "wikis",
    )

    def __init__(self, data: bytes | None, wikis: list[Wiki], tags: _Hashtags | None) -> None:
        self.machine = _Lines()
        self.data = data
        self.wikis = wikis
        self.tags = tags
        self.link_depth = 0
        self.code_depth = 0
        self.nxt = 0  # the first wikilink not passed yet
        self.shown = 0  # how many wikilinks have been shown
        # where that wikilink starts: an event ending before it overlaps none
        self.next_start = wikis[0].start if wikis else _NOWHERE

    def covers(self, span: dict[str, int]) -> bool:
        """Whether a wikilink overlaps the event at ``span`` (passing those before it)."""
        if span["end"] <= self.next_start:
            return False
        wikis, count = self.wikis, len(self.wikis)
        lo = span["start"]
        while self.nxt < count and wikis[self.nxt].end <= lo:
            self.nxt += 1
        self._moved()
        return self.nxt < count and wikis[self.nxt].start < span["end"]

    def _moved(self) -> None:
        self.next_start = self.wikis[self.nxt].start if self.nxt < len(self.wikis) else _NOWHERE

    def run(self, evs: Iterable[Event]) -> list[list[Any]]:
        machine = self.machine
        lines = machine.lines
        tags = self.tags
        wikis = bool(self.wikis)
        for event, span in evs:
            if event.__class__ is str:  # SoftBreak, HardBreak, Rule
                if wikis and event in _BREAKS and self.covers(span):
                    self.replace(span, text=False)
                    continue
                machine.brk(event)
            elif (value := event.get("Text")) is not None:
                if wikis and span["end"] > self.next_start and self.covers(span):
                    self.replace(span, text=True)
                    continue
                if tags is not None and not self.code_depth:
                    value = tags.strip(value, span["start"], span["end"], self.link_depth > 0)
                cur = lines[-1]
                if cur[0] == EMPTY:
                    lines[-1] = [TEXT, 0, value, -1]
                else:
                    cur[2] += value
            else:
                ((kind, value),) = event.items()
                if kind == "Start":
                    self.start(value, span)
                elif kind == "End":
                    self.end(value)
                elif wikis and kind in _LEAVES and self.covers(span):
                    self.replace(span, text=False)
                    continue
                else:
                    machine.leaf(kind, value)
            if machine.display is not None:
                machine.after()
        machine.end_display()
        return lines

    def start(self, value: Any, span: dict[str, int]) -> None:
        if value.__class__ is dict:
            if "Link" in value or "Image" in value:
                self.link_depth += 1
            elif "CodeBlock" in value:
                self.code_depth += 1
        self.machine.start(value, span)

    def end(self, value: Any) -> None:
        if value.__class__ is str:
            if value in _LINKS:
                self.link_depth = max(self.link_depth - 1, 0)
            elif value == "CodeBlock":
                self.code_depth = max(self.code_depth - 1, 0)
        self.machine.end(value)

    def prose(self, a: int, b: int) -> None:
        """Text around a wikilink: its source, CRLF as LF, hashtags stripped."""
        data = self.data
        assert data is not None  # wikilinks are found in the body's bytes
        piece = _lf(data[a:b].decode())
        if self.tags is not None:
            piece = self.tags.strip(piece, a, b, self.link_depth > 0)
        self.machine.append(piece)
        self.machine.after()

    def replace(self, span: dict[str, int], *, text: bool) -> None:
        """An event a wikilink overlaps: its prose around the wikilink, the display text once."""
        machine, wikis = self.machine, self.wikis
        data = self.data
        assert data is not None  # wikilinks are found in the body's bytes
        lo, hi = span["start"], span["end"]
        at = lo
        count = len(wikis)
        while self.nxt < count and wikis[self.nxt].start < hi:
            wiki = wikis[self.nxt]
            if text and at < wiki.start:
                self.prose(at, wiki.start)
            if self.shown <= self.nxt:
                machine.show("")
                for piece in _source_text(data, *wiki.display):
                    if piece is None:
                        machine.push("SoftBreak")
                    else:
                        machine.show(piece)
                self.shown = self.nxt + 1
            at = max(at, wiki.end)
            if wiki.end > hi:
                break
            self.nxt += 1
        self._moved()
        if text and at < hi:
            self.prose(at, hi)


def walk_lines(body: str) -> tuple[list[list[Any]], bytes | None]:
    """kimun's walk over ``body``: its text lines (and the body's bytes, when they were needed).

    >>> [line[2] for line in walk_lines("# [[a|*b*]] #t\\n")[0] if line[0]]
    ['*b* t']
    """
    data: bytes | None = None
    if "#" in body or "[[" in body or not body.isascii():
        data = body.encode()
    # Read twice only when there are wikilinks to find: first for them, then the lines.
    find = data is not None and b"[[" in data
    evs = events(body, data, keep=find)
    wikis = wikilinks(evs, data) if find and data is not None else []
    tags = _Hashtags(body, data) if "#" in body else None
    if tags is not None and not tags.starts:
        tags = None  # no hashtag candidate: no text to strip
    return _Walk(data, wikis, tags).run(evs), data


def walk_tags(body: str) -> list[tuple[int, int, str]]:
    """The hashtags kimun's walk records in ``body``: ``(start, end, name)``, UTF-8 bytes.

    A hashtag in prose text: not in code, a link's or an image's text, a
    wikilink's display text, or the text of a markdown link pulldown did not
    read (a destination with spaces).

    >>> [name for _, _, name in walk_tags("#a [[x|#b]] `#c` [d #e](f g.md) &#39; #h")]
    ['a', 'h']
    """
    if "#" not in body:
        return []
    data = body.encode()
    evs = events(body, data)
    spaced: list[tuple[int, int]] = []
    wikis = wikilinks(evs, data, spaced) if b"[[" in data or b"](" in data else []
    tags = _Hashtags(body, data, record=True)
    _Walk(data, wikis, tags).run(evs)
    found = tags.record or []
    if spaced:
        ends = [e for _, e in spaced]
        found = [
            t
            for t in found
            if not (
                (i := bisect_right(ends, t[0])) < len(spaced)
                and spaced[i][0] <= t[0]
                and t[1] <= spaced[i][1]
            )
        ]
    return found


def walk_title(lines: Sequence[Sequence[Any]]) -> str:
    """kimun's ``NoteWalk::title``: the first non-empty line, trimmed of ASCII whitespace.

    A heading's text, a paragraph line's, or a list item's first line.
    """
    for line in lines:
        kind = line[0]
        if kind == EMPTY:
            continue
        if kind == ITEM:
            text: str = line[2]
            if not text:
                continue
            first = text.split("\n", 1)[0].removesuffix("\r")
            return first.strip(_ASCII_WS)
        return str(line[2]).strip(_ASCII_WS)
    return ""
