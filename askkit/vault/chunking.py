"""The sections kimun core cuts a note into, with their place in the note.

kimun indexes a note in heading sections (``core/src/note/content_extractor.rs``,
``get_chunks_and_links``, kimun commit ``0384739416f6``). :func:`chunk_note`
walks the same events kimun walks -- pulldown-cmark 0.13 with no extensions,
through pyromark -- and folds them into lines and sections as kimun does:

* YAML/TOML frontmatter (first line exactly ``---`` or ``+++``, a UTF-8 BOM
  allowed before it, closed by the first line equal to the opener) becomes a
  ``FrontMatter`` section, added **last**, only when closed and non-empty. Its
  text is the raw frontmatter lines joined with ``"\\n"`` (not folded).
* Wikilinks become their display text before parsing (``[[a|b]]`` -> ``b``);
  a hashtag's ``#`` is dropped in text events outside code blocks, links and
  images (``#tag`` -> ``tag``), with kimun's word-boundary rule; a hashtag
  wholly inside a wikilink's display text keeps it.
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

The work is done by private modules: ``askkit.vault._note_text`` (frontmatter,
wikilinks, hashtags, offsets back into the note), ``askkit.vault._events``
(pulldown-cmark's events and kimun's line machine over them) and
``askkit.vault._chunk_check`` (the vault check, a second walk over the events).

Examples
--------
>>> note = "# Café\\nCrème brûlée.\\n\\n## Menu\\n- thé\\n"
>>> [(s.title, s.text) for s in chunk_note(note)]
[('Café', 'Creme brulee.'), ('Café\\x1fMenu', '* the')]
>>> s = chunk_note(note)[1]
>>> note[s.start:s.end]
'## Menu\\n- thé\\n'
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from askkit._text import rust_trim
from askkit.sources import BREADCRUMB_SEP
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
from askkit.vault.diacritics import fold

__all__ = [
    "BREADCRUMB_SEP",
    "FRONTMATTER",
    "Heading",
    "Section",
    "check_vault_sections",
    "chunk_note",
    "extract_headings",
    "extract_title",
    "note_headings",
    "note_outline",
    "split_frontmatter",
]

#: The breadcrumb of the frontmatter section.
FRONTMATTER = "FrontMatter"


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


def split_frontmatter(text: str) -> tuple[str | None, str]:
    """kimun's ``remove_frontmatter``: ``(frontmatter, body)``.

    The frontmatter is ``None`` when the note has none or it is never
    closed. As in kimun, the body of a note with a frontmatter block is its
    remaining lines re-joined with ``"\\n"`` (CRLF becomes LF, the last line
    break goes); an unclosed block loses only its opening line; a note without
    one is returned as it is (a leading BOM removed).

    >>> split_frontmatter("---\\ntags: [a]\\n---\\n\\nBody\\n")
    ('tags: [a]', '\\nBody')
    >>> split_frontmatter("---\\nnever closed")
    (None, 'never closed')
    """
    parts = split_note(text)
    return (parts.frontmatter if parts.closed else None), parts.body


# ---------------------------------------------------------------------------
# The chunker.


def _walk(text: str) -> tuple[Body, Collapsed, list[list[Any]], bytes | None]:
    """kimun's indexing walk over ``text``: the split, the parsed text, its lines and bytes."""
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


def _analyse(text: str, outline: bool = True) -> tuple[list[Section], list[Heading]]:
    """The sections of ``text`` and, with ``outline``, its headings."""
    parts, collapsed, lines, data = _walk(text)
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

    sections: list[Section] = []
    headings: list[Heading] = []
    stack: list[tuple[int, str]] = []
    content: list[str] = []
    start = parts.base
    has_section = False

    def close(end: int) -> None:
        body = fold("\n".join(content))
        if rust_trim(body):
            sections.append(Section(tuple(t for _, t in stack), body, start, end))

    idx = 0
    for line in lines:
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
                    data = parsed.encode()
                setext = _is_setext(data, line[3], line[4])
                headings.append(Heading(level, heading_text, head_start, line_end, setext))
            idx += 1
        elif kind != EMPTY:
            content.append(line_text(line))
    if has_section or content:
        close(len(text))
    if parts.closed and parts.frontmatter:
        sections.append(Section((FRONTMATTER,), parts.frontmatter, 0, parts.fm_end))
    return sections, headings


_LINE_END = re.compile(r"[\r\n]")


def _is_setext(data: bytes, start: int, end: int) -> bool:
    """Whether a heading event's byte range ``[start, end)`` spans lines: a setext heading.

    An ATX heading is one line; a setext heading's range runs over its text
    and the underline.
    """
    span = data[start:end].rstrip(b"\r\n")
    return b"\n" in span or b"\r" in span


def chunk_note(text: str) -> list[Section]:
    """The sections kimun core would produce for ``text``, in kimun's order.

    Body sections come first, in note order, then the ``FrontMatter``
    section (when the note has a closed, non-empty frontmatter block). See
    the module docstring for the rules and :class:`Section` for the fields.

    >>> [s.title for s in chunk_note("---\\na: 1\\n---\\n# T\\ntext\\n### Deep\\nmore\\n")]
    ['T', 'T\\x1fDeep', 'FrontMatter']
    >>> chunk_note("# Only a title\\n")
    []
    """
    if not isinstance(text, str):
        raise TypeError(f"chunk_note takes the note text as a str, got {type(text).__name__}")
    return _analyse(text, outline=False)[0]


def note_headings(text: str) -> list[Heading]:
    """Every heading kimun's chunker sees in ``text``, in order.

    ATX and setext headings, also inside list items and quotes; never a
    ``#`` line inside a code block or the frontmatter. The text is the
    breadcrumb segment kimun builds.

    >>> note = "Intro\\n=====\\n```\\n# no\\n```\\n## Yes\\n"
    >>> [(h.level, h.text, h.setext) for h in note_headings(note)]
    [(1, 'Intro', True), (2, 'Yes', False)]
    """
    return _analyse(text)[1]


def note_outline(text: str) -> tuple[list[Section], list[Heading]]:
    """:func:`chunk_note` and :func:`note_headings` of ``text`` from one parse."""
    if not isinstance(text, str):
        raise TypeError(f"note_outline takes the note text as a str, got {type(text).__name__}")
    return _analyse(text)


def extract_headings(text: str) -> list[tuple[int, str]]:
    """kimun's ``extract_headings``: ``(level, text)`` of every heading with text, in order.

    The outline kimun shows: frontmatter cut off, ``#`` lines in code are no
    headings, inline markup rendered to its text. Unlike the breadcrumbs,
    wikilinks and hashtags stay as written.

    >>> extract_headings("# Release<br>notes\\n## [[x]] #t\\n#\\n")
    [(1, 'Release notes'), (2, '[[x]] #t')]
    """
    body = split_note(text).body
    return [(line[1], line[2]) for line in text_lines(body) if line[0] == HEADER and line[2]]


def extract_title(text: str) -> str:
    """kimun's ``extract_title``: the text of the note's first non-empty line of content.

    A heading's text, a paragraph line, or the first line of a list item
    (frontmatter cut off, markup rendered as in :func:`extract_headings`).

    >>> extract_title("---\\na: 1\\n---\\n- item one\\n  wraps\\n")
    'item one'
    """
    for line in text_lines(split_note(text).body):
        kind = line[0]
        if kind in {HEADER, TEXT}:
            return str(line[2])
        if kind == ITEM:
            first = _rust_lines(line[2])
            if first:
                return first[0]
    return ""


def _rust_lines(text: str) -> list[str]:
    """Rust ``str::lines``: split on LF, a CR before it dropped, no empty last line."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


# ---------------------------------------------------------------------------
# Whole-vault check (issue 4, item 8).


def check_note_sections(text: str, name: str = "<note>") -> list[str]:
    """Problems with ``chunk_note(text)`` found by an independent parse.

    * every heading pulldown-cmark reports (found by a separate walk over its
      events) that owns or encloses a non-blank section appears in some
      section's breadcrumb (kimun drops blank sections, so an empty heading
      appears only as an ancestor);
    * every section's ``text[start:end]`` starts at its heading line, holds
      the words of its heading on that line and, in order, every letter and
      digit of the section text.
    """
    return section_problems(text, chunk_note(text), name)


def _iter_notes(root: Path) -> Iterator[Path]:
    yield from sorted(p for p in root.rglob("*.md") if p.is_file())


def check_vault_sections(root: str | Path) -> list[str]:
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
        problems.extend(check_note_sections(text, str(path.relative_to(root))))
    return problems
