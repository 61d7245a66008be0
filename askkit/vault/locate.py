"""Find a retrieved source inside its note: kimun's ``locate::section_range`` and askkit's.

kimun's source reader scrolls to a retrieved chunk in three steps
(``tui/src/ask/locate.rs``): the first verbatim occurrence of the chunk text;
else the first re-chunked section whose innermost heading equals the heading
(ASCII case-insensitively), found verbatim; else a line scan for a heading
line whose rendered text (``heading_display_text``) matches.
:func:`kimun_section_range` reproduces it, gaps included. :func:`section_range`
keeps the three steps and their order and closes each gap:

=====================================  ======================================
kimun                                  askkit
=====================================  ======================================
step 1 misses a chunk of an accented   step 1 also searches the note folded
or CRLF note (the text was folded,     and with CRLF read as LF, mapping the
the lines re-joined with LF)           match back to note offsets
step 2 needs the section text          step 2 uses the section's own range
verbatim in the note (fails on any     from :func:`askkit.vault.chunking.chunk_note`,
markup, accent or CRLF)                grown over the deeper sections under
                                       its heading; among sections with
                                       that heading, the one holding the
                                       chunk text wins
step 2 gives up (``None``) when no     askkit goes on to step 3
section carries the heading
step 3 misses setext headings          step 3 uses the parsed headings:
                                       setext ones count
step 3 matches ``# comment`` lines     ``#`` lines inside code are not
inside code fences                     headings
step 3 stops at a deeper heading       a deeper heading stays inside its
                                       parent's range
=====================================  ======================================

All offsets are ``str`` indices into ``note_text`` as given (kimun's are
UTF-8 byte offsets).

Examples
--------
>>> note = "# Café\\r\\nCrème brûlée\\r\\n"
>>> kimun_section_range(note, "Café", "Creme brulee")  # the whole note, by step 3
(0, 22)
>>> section_range(note, "Café", "Creme brulee")
(8, 20)
"""

from __future__ import annotations

from askkit._text import rust_trim, rust_trim_end, rust_trim_start
from askkit.sources import AskSource
from askkit.vault._events import HEADER, text_lines
from askkit.vault._note_text import cleanup_hashtags, process_wikilinks
from askkit.vault.chunking import Heading, Section, chunk_note, note_outline
from askkit.vault.diacritics import eq_ignore_ascii_case, fold, fold_ascii_lower

__all__ = [
    "atx_heading_text",
    "heading_display_text",
    "kimun_heading_section_range",
    "kimun_section_range",
    "locate_source",
    "section_range",
]

Range = tuple[int, int]


# ---------------------------------------------------------------------------
# kimun, gaps included.


def _strip_block_markers(line: str) -> str:
    """kimun's ``strip_block_markers``: indentation, list and quote markers."""
    line = rust_trim_start(line)
    while True:
        digits = len(line) - len(line.lstrip("0123456789"))
        if line.startswith(">") or (line[:1] in {"-", "*", "+"} and line[1:2] in {" ", "\t"}):
            marker = 1
        elif (
            1 <= digits <= 9
            and line[digits : digits + 1] in {".", ")"}
            and line[digits + 1 : digits + 2] in {" ", "\t"}
        ):
            marker = digits + 1
        else:
            return line
        line = rust_trim_start(line[marker:])


def heading_display_text(line: str) -> str | None:
    """kimun's ``heading_display_text``: the breadcrumb text of one ATX heading line.

    Indentation and list or quote markers go first; the rest must start with
    ``#``; its wikilinks collapse, its hashtags lose their ``#`` (kimun's
    ``cleanup_hashtags``) and the first heading of its parse is the answer.

    >>> heading_display_text("- # Setup"), heading_display_text("#tag here")
    ('Setup', None)
    """
    stripped = _strip_block_markers(line)
    if not stripped.startswith("#"):
        return None
    rendered = cleanup_hashtags(process_wikilinks(stripped))
    return next((str(x[2]) for x in text_lines(rendered) if x[0] == HEADER), None)


def atx_heading_text(line: str) -> str | None:
    """kimun's ``atx_heading_text``: the text of an ATX heading line, else ``None``.

    One to six ``#``, then a space, a tab or the end of the line; the text is
    trimmed and loses a closing ``#`` run that follows a space or a tab.

    >>> atx_heading_text("## Title ##"), atx_heading_text("## C#"), atx_heading_text("#tag")
    ('Title', 'C#', None)
    """
    trimmed = rust_trim_start(line)
    after = trimmed.lstrip("#")
    count = len(trimmed) - len(after)
    if not 1 <= count <= 6:
        return None
    if after and after[0] not in {" ", "\t"}:
        return None
    text = rust_trim(after)
    closed = text.rstrip("#")
    if closed[-1:] in {" ", "\t"}:
        return rust_trim_end(closed[:-1])
    if text and not closed:
        return ""
    return text


def kimun_heading_section_range(note_text: str, heading: str) -> Range | None:
    """kimun's ``heading_section_range``: a line scan for a heading line with that text.

    A line matches when its :func:`heading_display_text`, folded, equals the
    folded ``heading`` ASCII case-insensitively. The range runs from that line
    to the next line :func:`atx_heading_text` accepts (any level, code fences
    not recognised), or the end of the note.

    >>> note = "# a\\nfirst\\n# b\\nsecond\\n# c\\nthird\\n"
    >>> start, end = kimun_heading_section_range(note, "b")
    >>> note[start:end]
    '# b\\nsecond\\n'
    """
    needle = fold(heading)
    offset = 0
    start: int | None = None
    for line in note_text.split("\n"):
        width = len(line) + 1
        if start is None:
            title = heading_display_text(line)
            if title is not None and eq_ignore_ascii_case(fold(title), needle):
                start = offset
        elif atx_heading_text(line) is not None:
            return (start, offset)
        offset += width
    return None if start is None else (start, len(note_text))


def kimun_section_range(note_text: str, heading: str, chunk_text: str) -> Range | None:
    """kimun's ``locate::section_range``, exactly, gaps included.

    >>> kimun_section_range("# A\\ntext\\n", "A", "text")
    (4, 8)
    """
    if chunk_text:
        found = note_text.find(chunk_text)
        if found >= 0:
            return (found, found + len(chunk_text))
    chunk = next(
        (
            s
            for s in chunk_note(note_text)
            if eq_ignore_ascii_case(s.heading, heading) and s.heading
        ),
        None,
    )
    if chunk is None:
        return None
    found = note_text.find(chunk.text)
    if found >= 0:
        return (found, found + len(chunk.text))
    return kimun_heading_section_range(note_text, heading)


# ---------------------------------------------------------------------------
# askkit.


def _normalised(note_text: str) -> tuple[str, list[int]]:
    """The note folded, CRLF read as LF, with each output character's note offset."""
    out: list[str] = []
    where: list[int] = []
    for i, ch in enumerate(note_text):
        if ch == "\r" and note_text[i + 1 : i + 2] == "\n":
            continue
        folded = fold(ch)
        out.append(folded)
        where.extend([i] * len(folded))
    where.append(len(note_text))
    return "".join(out), where


def _find_loose(note_text: str, chunk_text: str) -> Range | None:
    """Step 1, askkit: verbatim, else folded and CRLF-insensitive."""
    if not chunk_text:
        return None
    found = note_text.find(chunk_text)
    if found >= 0:
        return (found, found + len(chunk_text))
    wanted = fold(chunk_text.replace("\r\n", "\n"))
    if not wanted:
        return None
    text, where = _normalised(note_text)
    found = text.find(wanted)
    if found < 0:
        return None
    end = where[found + len(wanted) - 1] + 1
    return (where[found], end)


def _pick_section(sections: list[Section], heading: str, chunk_text: str) -> Section | None:
    """Step 2, askkit: the section with that innermost heading holding the chunk."""
    key = fold_ascii_lower(heading)
    candidates = [s for s in sections if fold_ascii_lower(s.heading) == key]
    if not candidates:
        return None
    wanted = rust_trim(fold(chunk_text.replace("\r\n", "\n")))
    if wanted:
        for s in candidates:
            if wanted in s.text:
                return s
    return candidates[0]


def _scope_end(note_text: str, headings: list[Heading], i: int) -> int:
    """Where heading ``i``'s scope ends: the next heading of its level or above, or the end."""
    level = headings[i].level
    return next((o.start for o in headings[i + 1 :] if o.level <= level), len(note_text))


def _heading_range(note_text: str, headings: list[Heading], heading: str) -> Range | None:
    """Step 3, askkit: parsed headings (setext too, none in code), parent keeps children."""
    key = fold_ascii_lower(heading)
    for i, h in enumerate(headings):
        if fold_ascii_lower(h.text) == key:
            return (h.start, _scope_end(note_text, headings, i))
    return None


def section_range(note_text: str, heading: str, chunk_text: str) -> Range | None:
    """Where a retrieved chunk sits in its note: ``(start, end)`` or ``None``.

    kimun's three steps in kimun's order, each with askkit's fixes (see the
    module docstring): the chunk text (verbatim, then folded and
    CRLF-insensitive); the section whose innermost heading matches (accent-
    and ASCII-case-insensitive; the section holding the chunk wins among
    duplicates), where kimun finds its text verbatim kimun's answer, else its
    heading's whole scope, deeper sections included; the heading's whole
    scope from the parsed headings. ``heading=""`` matches the text before
    the first heading in step 2.

    >>> note = "Café\\n====\\nCrème\\n\\n## Sub\\nbody\\n"
    >>> section_range(note, "Cafe", "not in the note")  # the setext section and Sub
    (0, 29)
    """
    found = _find_loose(note_text, chunk_text)
    if found is not None:
        return found
    sections, headings = note_outline(note_text)
    if heading:
        section = _pick_section(sections, heading, chunk_text)
    else:
        section = next((s for s in sections if not s.breadcrumb), None)
    if section is not None and section is _kimun_pick(sections, heading):
        verbatim = note_text.find(section.text)
        if verbatim >= 0:  # kimun's step 2 finds this place too
            return (verbatim, verbatim + len(section.text))
    if section is not None and not section.breadcrumb:
        return (section.start, section.end)
    if section is not None:
        # the section's own text, then every deeper section under its heading
        at = next(i for i, h in enumerate(headings) if h.start == section.start)
        return (section.start, _scope_end(note_text, headings, at))
    if not heading:
        return None
    return _heading_range(note_text, headings, heading)


def _kimun_pick(sections: list[Section], heading: str) -> Section | None:
    """kimun's step 2 choice: the first section whose innermost heading matches."""
    return next(
        (s for s in sections if s.heading and eq_ignore_ascii_case(s.heading, heading)), None
    )


def locate_source(note_text: str, source: AskSource) -> Range | None:
    """:func:`section_range` for a source, matching on its innermost heading.

    :attr:`AskSource.innermost_heading` keeps the breadcrumb's segments, so a
    heading holding ``" › "`` is matched whole, and a journal section titled
    by its date alone is found under the date heading; kimun's
    :meth:`AskSource.match_heading` is the fallback.
    """
    found = section_range(note_text, source.innermost_heading, source.text)
    if found is None and source.title is not None:
        return section_range(note_text, source.match_heading(), source.text)
    return found
