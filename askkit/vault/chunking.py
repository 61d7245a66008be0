"""The sections kimun core cuts a note into, with their place in the note.

kimun indexes a note in heading sections. :func:`chunk_note` walks the same
events kimun walks -- pulldown-cmark 0.13 with no extensions, through
pyromark -- and folds them into lines and sections as kimun does. Two kimun
generations are reproduced, chosen with ``kimun=`` (:data:`KIMUN_VERSIONS`):

* ``"0.18"`` (the default): kimun's single note walk (``core/src/note/walk.rs``
  at kimun commit ``67e96640a6ce``, local index ``VERSION`` 0.18; see
  :mod:`askkit.vault._walk`). It parses first, then finds wikilinks per text
  block: a wikilink in code, inline HTML, a link label or an image's alt text
  stays as written, an embed ``![[p.png|Pic]]`` shows ``Pic``, a display text
  is taken verbatim (``[[a|*b*]]`` shows ``*b*``), ``[[|b]]`` is text, a CRLF
  note reads as the same note in LF, headings and titles are trimmed, and a
  ``#`` right after ``&`` starts no hashtag.
* ``"0.17"``: the content extractor before it (``core/src/note/content_extractor.rs``,
  ``get_chunks_and_links``, kimun commit ``0384739416f6``), which collapsed
  wikilinks with a pattern over the raw note before parsing. kimun's server
  keeps a note's chunks until the note is edited, so a store can hold both.

The rules common to both, with the 0.17 details:

* YAML/TOML frontmatter (first line exactly ``---`` or ``+++``, a UTF-8 BOM
  allowed before it, closed by the first line equal to the opener) becomes a
  ``FrontMatter`` section, added **last**, only when closed and non-empty. Its
  text is the raw frontmatter lines joined with ``"\\n"`` (not folded).
* Wikilinks become their display text (``[[a|b]]`` -> ``b``; 0.17: before
  parsing); a hashtag's ``#`` is dropped in text events outside code blocks,
  links and images (``#tag`` -> ``tag``), with kimun's word-boundary rule; a
  hashtag wholly inside a wikilink's display text keeps it.
* Every heading (ATX or setext, also inside a list item or a quote; never a
  ``#`` line inside a code block) closes the current section. The breadcrumb
  is a stack of ``(level, heading text)``: a new heading pops every entry of
  level >= its own. Heading text keeps its accents; inline code keeps its
  backticks, emphasis and link markup go, inline HTML is dropped (``<br>`` is
  a space).
* Section text is kimun's event machine, line for line: paragraph lines and
  soft breaks become separate lines, list items ``"* item"`` indented four
  spaces per level (a wrapped item stays one line), a code block is
  ```` ```lang ````, its trimmed content, ```` ``` ````; block HTML is kept one
  line per source line; links keep their text, images their alt text. The
  lines are joined with ``"\\n"`` and folded with :func:`askkit.vault.diacritics.fold`.
* A section whose folded text is blank (Rust ``trim``) is dropped, so a
  heading with no text of its own shows up only as an ancestor in the
  breadcrumbs of the sections below it.
* A heading directly above a code block keeps its section: kimun's current
  chunker (``a_heading_directly_above_a_code_block_is_kept``) fixed older
  versions, which dropped such a heading.

``Section.start``/``Section.end`` are what kimun does not keep: the section's
range as ``str`` indices into the note **exactly as given** (a BOM and CRLF
line endings stay in it and count). ``note[start:end]`` runs from the start
of the section's heading line (the note start, or the line after the
frontmatter, for the text before the first heading) to the start of the next
heading line, or the end of the note; it holds the heading line and the body.
The frontmatter section spans the frontmatter block, delimiters included.

The work is done by private modules: ``askkit.vault._body`` (0.18: the
walked body and its events read as LF), ``askkit.vault._wikilinks`` (0.18:
wikilinks per text block), ``askkit.vault._walk`` (kimun 0.18's walk),
``askkit.vault._note_text`` (0.17: frontmatter, wikilinks, hashtags,
offsets back into the note), ``askkit.vault._events`` (0.17: pulldown-cmark's
events and kimun's line machine over them) and ``askkit.vault._chunk_check``
(the vault check, a second walk over the events).

Examples
--------
>>> note = "# Café\\nCrème brûlée.\\n\\n## Menu\\n- thé\\n"
>>> [(s.title, s.text) for s in chunk_note(note)]
[('Café', 'Creme brulee.'), ('Café\\x1fMenu', '* the')]
>>> s = chunk_note(note)[1]
>>> note[s.start:s.end]
'## Menu\\n- thé\\n'
>>> [s.text for s in chunk_note("See `[[x]]`, ![[p.png|Pic]]", kimun="0.17")]
['See `x`, !Pic']
>>> [s.text for s in chunk_note("See `[[x]]`, ![[p.png|Pic]]")]
['See `[[x]]`, Pic']
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from askkit._text import rust_trim
from askkit.errors import UsageError
from askkit.sources import BREADCRUMB_SEP, FRONTMATTER  # the frontmatter section's breadcrumb
from askkit.vault._body import body_start
from askkit.vault._chunk_check import section_problems
from askkit.vault._events import (
    EMPTY,
    HEADER,
    ITEM,
    TEXT,
    ByteOffsets,
    hashtag_stripper,
    line_text,
    text_lines,
)
from askkit.vault._note_text import (
    Body,
    Collapsed,
    LineOffsets,
    body_labels,
    collapse_wikilinks,
    newline_starts,
    split_note,
)
from askkit.vault._walk import walk_lines, walk_tags, walk_title
from askkit.vault.diacritics import fold

__all__ = [
    "BREADCRUMB_SEP",
    "DEFAULT_KIMUN",
    "FRONTMATTER",
    "KIMUN_COMMITS",
    "KIMUN_VERSIONS",
    "Heading",
    "KimunVersion",
    "Section",
    "check_kimun",
    "check_vault_sections",
    "chunk_note",
    "extract_headings",
    "extract_title",
    "note_hashtags",
    "note_headings",
    "note_outline",
    "split_frontmatter",
]


#: A kimun version whose chunker askkit reproduces.
KimunVersion = Literal["0.17", "0.18"]
#: The kimun versions whose chunker askkit reproduces, oldest first (kimun's local
#: index ``VERSION``: 0.18 is the single note walk).
KIMUN_VERSIONS: tuple[KimunVersion, ...] = ("0.17", "0.18")
#: The version reproduced unless told otherwise: kimun's newest.
DEFAULT_KIMUN: KimunVersion = "0.18"
#: The kimun commit each version follows.
KIMUN_COMMITS: dict[KimunVersion, str] = {
    "0.17": "0384739416f6230e38199dc72e7fb050e5b6f40a",
    "0.18": "67e96640a6ceae220ba578117d14352a60658604",
}


def check_kimun(kimun: object) -> KimunVersion:
    """``kimun`` as a :data:`KimunVersion`; anything else is a :class:`~askkit.errors.UsageError`.

    >>> check_kimun("0.17")
    '0.17'
    >>> check_kimun("0.19")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    askkit.errors.UsageError: kimun must be one of '0.17', '0.18' (...), got '0.19'
    """
    if kimun == "0.18":
        return "0.18"
    if kimun == "0.17":
        return "0.17"
    known = ", ".join(repr(v) for v in KIMUN_VERSIONS)
    raise UsageError(
        f"kimun must be one of {known} (the chunker versions askkit reproduces), got {kimun!r}"
    )


@dataclass(frozen=True, slots=True)
class Section:
    """One section of a note, as kimun's chunker cuts it.

    ``breadcrumb`` holds the heading texts from the outermost heading in, as
    kimun builds them (accents kept; an empty heading is an empty segment);
    ``()`` for the text before the first heading, ``("FrontMatter",)`` for
    the frontmatter. ``text`` is what kimun sends as the section text.
    ``note[start:end]`` is the section in the original note (see the module
    docstring).
    """

    breadcrumb: tuple[str, ...]
    text: str
    start: int
    end: int

    @property
    def title(self) -> str:
        """The wire title kimun sends: the breadcrumb joined with U+001F."""
        return BREADCRUMB_SEP.join(self.breadcrumb)

    @property
    def heading(self) -> str:
        """The innermost non-empty breadcrumb segment (kimun's ``breadcrumb_last``), or ``""``."""
        for segment in reversed(self.breadcrumb):
            if segment:
                return segment
        return ""

    @property
    def is_frontmatter(self) -> bool:
        """Whether this is the ``FrontMatter`` section."""
        return self.breadcrumb == (FRONTMATTER,)


@dataclass(frozen=True, slots=True)
class Heading:
    """A heading of a note outside code: its level, text and line.

    ``text`` is the heading text as kimun collects it (the breadcrumb
    segment); ``start``/``line_end`` delimit the heading's first source line
    (``line_end`` excludes the line break); ``setext`` tells the two kinds
    apart.
    """

    level: int
    text: str
    start: int
    line_end: int
    setext: bool


def split_frontmatter(text: str, *, kimun: KimunVersion = DEFAULT_KIMUN) -> tuple[str | None, str]:
    """``(frontmatter, body)``: the frontmatter text and the body kimun parses.

    The frontmatter is ``None`` when the note has none or it is never closed;
    otherwise its lines joined with ``"\\n"``. An unclosed block loses only
    its opening line. kimun 0.18 parses the body as written, from the line
    after the block (a leading BOM dropped); 0.17 (``remove_frontmatter``)
    re-joins a note's remaining lines with ``"\\n"`` when it has a block (CRLF
    becomes LF, the last line break goes) and keeps a leading BOM otherwise.

    >>> split_frontmatter("---\\ntags: [a]\\n---\\n\\nBody\\n")
    ('tags: [a]', '\\nBody\\n')
    >>> split_frontmatter("---\\ntags: [a]\\n---\\n\\nBody\\n", kimun="0.17")
    ('tags: [a]', '\\nBody')
    >>> split_frontmatter("---\\nnever closed")
    (None, 'never closed')
    """
    if check_kimun(kimun) == "0.18":
        start, frontmatter, fm_end = body_start(text)
        return (frontmatter if fm_end else None), text[start:]
    parts = split_note(text)
    return (parts.frontmatter if parts.closed else None), parts.body


# ---------------------------------------------------------------------------
# The chunker.


def _walk_017(text: str) -> tuple[Body, Collapsed, list[list[Any]], bytes | None]:
    """kimun 0.17's indexing walk over ``text``: the split, the parsed text, its lines and bytes."""
    parts = split_note(text)
    collapsed = collapse_wikilinks(parts.body)
    parsed = collapsed.text
    labels = body_labels(collapsed)
    data = parsed.encode() if labels or not parsed.isascii() else None
    if labels and data is not None:
        lines = text_lines(parsed, hashtag_stripper(parsed, data, labels))
    else:
        lines = text_lines(parsed)
    return parts, collapsed, lines, data


@dataclass(frozen=True, slots=True)
class _Walked:
    """One walk of a note, either version: what the sections are cut from."""

    lines: list[list[Any]]
    heading_starts: list[int]  # note offset of each heading line's start
    base: int  # where the text before the first heading starts
    parsed: str  # the text the events' byte ranges index
    data: bytes | None  # its bytes, when the walk needed them
    frontmatter: str  # "" without a closed, non-empty block
    fm_end: int


def _line_start(text: str, at: int) -> int:
    """The start of the line holding offset ``at`` (lines end at LF, CR or CRLF)."""
    start = text.rfind("\n", 0, at) + 1
    return text.rfind("\r", start, at) + 1 or start


def _walked(text: str, kimun: KimunVersion) -> _Walked:
    if kimun == "0.18":
        start, frontmatter, fm_end = body_start(text)
        body = text[start:]
        lines, data = walk_lines(body)
        to_str = ByteOffsets(body, data)
        starts = [
            _line_start(text, start + to_str.to_str(line[3])) for line in lines if line[0] == HEADER
        ]
        base = start if start == 0 or text[start - 1] in "\n\r" else _line_start(text, start)
        return _Walked(lines, starts, base, body, data, frontmatter, fm_end)
    parts, collapsed, lines, data = _walk_017(text)
    parsed = collapsed.text
    heads = [line for line in lines if line[0] == HEADER]
    heading_starts: list[int] = []
    if heads:
        parsed_lines = newline_starts(parsed)
        same = collapsed.segments is None and parsed is parts.body
        offsets = LineOffsets(collapsed, parts, parsed_lines if same else None)
        to_str = ByteOffsets(parsed, data)
        for line in heads:
            at = to_str.to_str(line[3])
            heading_starts.append(offsets.line_start(bisect_right(parsed_lines, at) - 1))
    frontmatter = parts.frontmatter if parts.closed else ""
    return _Walked(lines, heading_starts, parts.base, parsed, data, frontmatter, parts.fm_end)


def _analyse(
    text: str, kimun: KimunVersion, outline: bool = True
) -> tuple[list[Section], list[Heading]]:
    """The sections of ``text`` and, with ``outline``, its headings."""
    walked = _walked(text, kimun)
    heading_starts = walked.heading_starts
    data = walked.data
    sections: list[Section] = []
    headings: list[Heading] = []
    stack: list[tuple[int, str]] = []
    content: list[str] = []
    start = walked.base
    has_section = False

    def close(end: int) -> None:
        body = fold("\n".join(content))
        if rust_trim(body):
            sections.append(Section(tuple(t for _, t in stack), body, start, end))

    idx = 0
    for line in walked.lines:
        kind = line[0]
        if kind == HEADER:
            level, heading_text = line[1], line[2]
            head_start = heading_starts[idx]
            if has_section or content:
                close(head_start)
            # ``retain(lvl < level)`` keeps a strictly increasing stack, so
            # popping from the top is the same filter.
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, heading_text))
            content = []
            start = head_start
            has_section = True
            if outline:
                newline = _LINE_END.search(text, head_start)
                line_end = len(text) if newline is None else newline.start()
                if data is None:
                    data = walked.parsed.encode()
                setext = _is_setext(data, line[3], line[4])
                headings.append(Heading(level, heading_text, head_start, line_end, setext))
            idx += 1
        elif kind != EMPTY:
            content.append(line_text(line))
    if has_section or content:
        close(len(text))
    if walked.frontmatter:
        sections.append(Section((FRONTMATTER,), walked.frontmatter, 0, walked.fm_end))
    return sections, headings


_LINE_END = re.compile(r"[\r\n]")


def _is_setext(data: bytes, start: int, end: int) -> bool:
    """Whether a heading event's byte range ``[start, end)`` spans lines: a setext heading.

    An ATX heading is one line; a setext heading's range runs over its text
    and the underline.
    """
    span = data[start:end].rstrip(b"\r\n")
    return b"\n" in span or b"\r" in span


def chunk_note(text: str, *, kimun: KimunVersion = DEFAULT_KIMUN) -> list[Section]:
    """The sections kimun core would produce for ``text``, in kimun's order.

    Body sections come first, in note order, then the ``FrontMatter``
    section (when the note has a closed, non-empty frontmatter block). See
    the module docstring for the rules and :class:`Section` for the fields;
    ``kimun`` picks the chunker version (:data:`KIMUN_VERSIONS`, default kimun's
    newest).

    >>> [s.title for s in chunk_note("---\\na: 1\\n---\\n# T\\ntext\\n### Deep\\nmore\\n")]
    ['T', 'T\\x1fDeep', 'FrontMatter']
    >>> chunk_note("# Only a title\\n")
    []
    """
    if not isinstance(text, str):
        raise TypeError(f"chunk_note takes the note text as a str, got {type(text).__name__}")
    return _analyse(text, check_kimun(kimun), outline=False)[0]


def note_headings(text: str, *, kimun: KimunVersion = DEFAULT_KIMUN) -> list[Heading]:
    """Every heading kimun's chunker sees in ``text``, in order.

    ATX and setext headings, also inside list items and quotes; never a
    ``#`` line inside a code block or the frontmatter. The text is the
    breadcrumb segment kimun builds; a heading with no text is listed too
    (kimun's own outline leaves it out: see :func:`extract_headings`).

    >>> note = "Intro\\n=====\\n```\\n# no\\n```\\n## Yes\\n"
    >>> [(h.level, h.text, h.setext) for h in note_headings(note)]
    [(1, 'Intro', True), (2, 'Yes', False)]
    """
    return _analyse(text, check_kimun(kimun))[1]


def note_outline(
    text: str, *, kimun: KimunVersion = DEFAULT_KIMUN
) -> tuple[list[Section], list[Heading]]:
    """:func:`chunk_note` and :func:`note_headings` of ``text`` from one parse."""
    if not isinstance(text, str):
        raise TypeError(f"note_outline takes the note text as a str, got {type(text).__name__}")
    return _analyse(text, check_kimun(kimun))


def extract_headings(text: str, *, kimun: KimunVersion = DEFAULT_KIMUN) -> list[tuple[int, str]]:
    """kimun's outline: ``(level, text)`` of every heading with text, in order.

    Frontmatter cut off, ``#`` lines in code are no headings, inline markup
    rendered to its text. kimun 0.18 (``note_headings``) renders a heading as
    its breadcrumb segment; 0.17 (``extract_headings``) kept its wikilinks and
    hashtags as written.

    >>> extract_headings("# Release<br>notes\\n## [[x]] #t\\n#\\n")
    [(1, 'Release notes'), (2, 'x t')]
    >>> extract_headings("# Release<br>notes\\n## [[x]] #t\\n#\\n", kimun="0.17")
    [(1, 'Release notes'), (2, '[[x]] #t')]
    """
    if check_kimun(kimun) == "0.18":
        lines = walk_lines(text[body_start(text)[0] :])[0]
        return [(line[1], line[2]) for line in lines if line[0] == HEADER and line[2]]
    body = split_note(text).body
    return [(line[1], line[2]) for line in text_lines(body) if line[0] == HEADER and line[2]]


def extract_title(text: str, *, kimun: KimunVersion = DEFAULT_KIMUN) -> str:
    """kimun's ``extract_title``: the text of the note's first non-empty line of content.

    A heading's text, a paragraph line, or the first line of a list item
    (frontmatter cut off, markup rendered as in :func:`extract_headings`).
    kimun 0.18 renders it as the walk does (wikilinks as their display text,
    hashtags without ``#``) and trims it of ASCII white space.

    >>> extract_title("---\\na: 1\\n---\\n- item one\\n  wraps\\n")
    'item one'
    >>> extract_title("# Sprint #42\\n"), extract_title("# Sprint #42\\n", kimun="0.17")
    ('Sprint 42', 'Sprint #42')
    """
    if check_kimun(kimun) == "0.18":
        return walk_title(walk_lines(text[body_start(text)[0] :])[0])
    for line in text_lines(split_note(text).body):
        kind = line[0]
        if kind in {HEADER, TEXT}:
            return str(line[2])
        if kind == ITEM:
            first = _rust_lines(line[2])
            if first:
                return first[0]
    return ""


def note_hashtags(text: str) -> list[str]:
    """The hashtags kimun's index records for ``text``, in note order, as written.

    kimun 0.18's walk: a ``#name`` in prose (kimun's word-boundary rule, and not
    right after ``&``), not in code, a link's or an image's text, a wikilink's
    display text or the frontmatter; the same hashtags whose ``#`` the chunks
    drop.

    >>> note_hashtags("---\\ntags: [x]\\n---\\n#one [[a|#two]] `#three` and #Four\\n")
    ['one', 'Four']
    """
    start = body_start(text)[0]
    return [name for _, _, name in walk_tags(text[start:])]


def _rust_lines(text: str) -> list[str]:
    """Rust ``str::lines``: split on LF, a CR before it dropped, no empty last line."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


# ---------------------------------------------------------------------------
# Whole-vault check.


def check_note_sections(
    text: str, name: str = "<note>", *, kimun: KimunVersion = DEFAULT_KIMUN
) -> list[str]:
    """Problems with ``chunk_note(text)`` found by an independent parse.

    * every heading pulldown-cmark reports (found by a separate walk over its
      events) that owns or encloses a non-blank section appears in some
      section's breadcrumb (kimun drops blank sections, so an empty heading
      appears only as an ancestor);
    * every section's ``text[start:end]`` starts at its heading line, holds
      the words of its heading on that line and, in order, every letter and
      digit of the section text.
    """
    kimun = check_kimun(kimun)
    return section_problems(text, chunk_note(text, kimun=kimun), name, kimun)


def _iter_notes(root: Path) -> Iterator[Path]:
    yield from sorted(p for p in root.rglob("*.md") if p.is_file())


def check_vault_sections(root: str | Path, *, kimun: KimunVersion = DEFAULT_KIMUN) -> list[str]:
    """Run :func:`check_note_sections` over every ``*.md`` note under ``root``.

    Returns the problems found (empty when every note checks out). Files are
    read as UTF-8 (a BOM is kept in the text, as a vault reader gives it).
    """
    root = Path(root)
    if not root.is_dir():
        raise NotADirectoryError(f"not a vault folder: {root}")
    problems: list[str] = []
    for path in _iter_notes(root):
        text = path.read_text(encoding="utf-8")
        problems.extend(check_note_sections(text, str(path.relative_to(root)), kimun=kimun))
    return problems
