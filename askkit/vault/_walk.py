"""kimun's single note walk (kimun 0.18), on pulldown-cmark's own events (through pyromark).

From kimun commit ``67e96640a6ceae220ba578117d14352a60658604``
(``core/src/note/walk.rs``, ``walk``) every whole-note extractor -- chunks,
headings, titles -- is a view of one walk over the note as written:

* the body is the note past a closed frontmatter block (or past an unclosed
  fence's first line, or a byte-order mark), its bytes as given: a CRLF note
  is parsed as it is, and the events are read as the same note in LF reads
  (:func:`askkit.vault._body.events`);
* the parse is plain CommonMark (``Options::empty()``); wikilinks are found
  after it, per text block (a paragraph, heading, list item or indented code
  block), with the editor's pattern ``\\[\\[([^\\]]+)\\]\\]`` over the block's own
  text (:func:`askkit.vault._wikilinks.wikilinks`): a match whose brackets are prose -- not escaped,
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

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from askkit._text import rust_trim
from askkit.vault._body import Event, events, lf
from askkit.vault._events import EMPTY, HEADER, ITEM, TEXT, str_to_bytes
from askkit.vault._note_text import label_matches
from askkit.vault._wikilinks import LINK_EVENTS, Wiki, wikilinks

__all__ = ["walk_lines", "walk_tags", "walk_title"]

#: The whitespace pulldown trims from a line of prose (Rust ``is_ascii_whitespace``).
_ASCII_WS = " \t\n\x0c\r"
_LEVELS = {"H1": 1, "H2": 2, "H3": 3, "H4": 4, "H5": 5, "H6": 6}
_BREAK_TAGS = frozenset({"<br", "<bR", "<Br", "<BR"})
_BREAKS = frozenset({"SoftBreak", "HardBreak"})
#: The events a wikilink's source may cover: its text, and code, HTML or line breaks in it.
_LEAVES = frozenset({"Text", "Code", "InlineHtml"})
#: Beyond any byte of a body.
_NOWHERE = 1 << 62


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
            if value in LINK_EVENTS:
                self.link_depth = max(self.link_depth - 1, 0)
            elif value == "CodeBlock":
                self.code_depth = max(self.code_depth - 1, 0)
        self.machine.end(value)

    def prose(self, a: int, b: int) -> None:
        """Text around a wikilink: its source, CRLF as LF, hashtags stripped."""
        data = self.data
        assert data is not None  # wikilinks are found in the body's bytes
        piece = lf(data[a:b].decode())
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
