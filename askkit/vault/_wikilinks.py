"""Wikilinks per text block, found after the parse (kimun's ``TextBlocks``).

From kimun commit ``67e96640a6ceae220ba578117d14352a60658604``
(``core/src/note/walk.rs``): kimun parses with no extensions and finds
wikilinks per text block (a paragraph, heading, list item or indented code
block) with the editor's pattern over the block's own text. A match whose
brackets are prose -- not escaped, neither ``[[`` nor ``]]`` inside a link, an
image, a code span or inline HTML -- is a wikilink; an embed's ``!`` belongs to
it. :func:`wikilinks` also finds the markdown links pulldown did not read (a
destination with spaces), which the walk keeps as their labels.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from askkit.vault._body import Event

__all__ = ["LINK_EVENTS", "Wiki", "wikilinks"]

#: The editor's wikilink pattern (kimun's ``WIKILINK_RX``), over bytes.
_WIKILINK = re.compile(rb"\[\[([^\]]+)\]\]")
#: The editor's link pattern (kimun's ``MD_LINK_RX``), over bytes: bang, text, link.
_MD_LINK = re.compile(rb"(!?)\[([^\]]*)\]\(([^)]+?)\)")
#: Rust's ``str::trim`` set, as UTF-8 (what it strips from a link's destination).
_RUST_WS_BYTES = b"\t\n\x0b\x0c\r "
_INLINE_STARTS = frozenset({"Emphasis", "Strong", "Strikethrough"})
_TEXT_BLOCKS = frozenset({"Paragraph", "Item"})
#: The events that open a link's text (a link or an image).
LINK_EVENTS = frozenset({"Link", "Image"})
_OPAQUE = frozenset({"Code", "InlineHtml"})


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
        if named and value in LINK_EVENTS:
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
