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
UTF-8 byte offsets). ``kimun=`` picks the chunker whose sections and heading
texts are matched (:data:`askkit.vault.chunking.KIMUN_VERSIONS`, default kimun's
newest). A server's store can hold chunks an older kimun cut, or cut before
the note changed (kimun keeps a note's chunks until it is edited):
:func:`section_range` also finds a chunk in the sections an older kimun cuts,
and :func:`stored_status` says which case a stored chunk is.

Examples
--------
>>> note = "# Café\\r\\nCrème brûlée\\r\\n"
>>> kimun_section_range(note, "Café", "Creme brulee")  # the whole note, by step 3
(0, 22)
>>> section_range(note, "Café", "Creme brulee")
(8, 20)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from askkit._text import rust_trim, rust_trim_end, rust_trim_start
from askkit.sources import AskSource
from askkit.vault._body import body_start
from askkit.vault._events import HEADER, text_lines
from askkit.vault._note_text import cleanup_hashtags, process_wikilinks
from askkit.vault._walk import walk_lines
from askkit.vault.chunking import (
    DEFAULT_KIMUN,
    KIMUN_VERSIONS,
    Heading,
    KimunVersion,
    Section,
    check_kimun,
    chunk_note,
    note_outline,
)
from askkit.vault.diacritics import eq_ignore_ascii_case, fold, fold_ascii_lower

if TYPE_CHECKING:
    import pandas as pd

    from askkit.vault.notes import Vault

__all__ = [
    "CURRENT",
    "NOTE_CHANGED",
    "NOTE_MISSING",
    "OLDER_KIMUN",
    "StoredStatus",
    "atx_heading_text",
    "heading_display_text",
    "kimun_heading_section_range",
    "kimun_section_range",
    "locate_source",
    "section_range",
    "stored_message",
    "stored_status",
    "stored_statuses",
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


def heading_display_text(line: str, *, kimun: KimunVersion = DEFAULT_KIMUN) -> str | None:
    """kimun's ``heading_display_text``: the breadcrumb text of one ATX heading line.

    Indentation and list or quote markers go first; the rest must start with
    ``#``; the first heading of its walk is the answer (kimun 0.18: the line is
    walked as a note, so its text is the heading's breadcrumb segment; 0.17:
    its wikilinks collapse, its hashtags lose their ``#`` (``cleanup_hashtags``),
    then it is parsed).

    >>> heading_display_text("- # Setup"), heading_display_text("#tag here")
    ('Setup', None)
    >>> heading_display_text("# See `[[x]]`"), heading_display_text("# See `[[x]]`", kimun="0.17")
    ('See `[[x]]`', 'See `x`')
    """
    kimun = check_kimun(kimun)
    stripped = _strip_block_markers(line)
    if not stripped.startswith("#"):
        return None
    if kimun == "0.18":
        lines = walk_lines(stripped[body_start(stripped)[0] :])[0]
        return next((str(x[2]) for x in lines if x[0] == HEADER), None)
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


def kimun_heading_section_range(
    note_text: str, heading: str, *, kimun: KimunVersion = DEFAULT_KIMUN
) -> Range | None:
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
    kimun = check_kimun(kimun)
    needle = fold(heading)
    offset = 0
    start: int | None = None
    for line in note_text.split("\n"):
        width = len(line) + 1
        if start is None:
            title = heading_display_text(line, kimun=kimun)
            if title is not None and eq_ignore_ascii_case(fold(title), needle):
                start = offset
        elif atx_heading_text(line) is not None:
            return (start, offset)
        offset += width
    return None if start is None else (start, len(note_text))


def kimun_section_range(
    note_text: str, heading: str, chunk_text: str, *, kimun: KimunVersion = DEFAULT_KIMUN
) -> Range | None:
    """kimun's ``locate::section_range``, exactly, gaps included.

    >>> kimun_section_range("# A\\ntext\\n", "A", "text")
    (4, 8)
    """
    kimun = check_kimun(kimun)
    if chunk_text:
        found = note_text.find(chunk_text)
        if found >= 0:
            return (found, found + len(chunk_text))
    chunk = next(
        (
            s
            for s in chunk_note(note_text, kimun=kimun)
            if eq_ignore_ascii_case(s.heading, heading) and s.heading
        ),
        None,
    )
    if chunk is None:
        return None
    found = note_text.find(chunk.text)
    if found >= 0:
        return (found, found + len(chunk.text))
    return kimun_heading_section_range(note_text, heading, kimun=kimun)


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


def _wanted(chunk_text: str) -> str:
    """A chunk text as a section text holds it: folded, CRLF as LF, trimmed."""
    return rust_trim(fold(chunk_text.replace("\r\n", "\n")))


def _holding(sections: Sequence[Section], heading: str, wanted: str) -> Section | None:
    """The first of ``sections`` with that innermost heading (``""``: the text before the
    first heading) whose text holds ``wanted``."""
    if not heading:
        return next((s for s in sections if not s.breadcrumb and wanted in s.text), None)
    key = fold_ascii_lower(heading)
    return next(
        (s for s in sections if fold_ascii_lower(s.heading) == key and wanted in s.text), None
    )


def _pick_section(sections: list[Section], heading: str, chunk_text: str) -> Section | None:
    """Step 2, askkit: the section with that innermost heading holding the chunk."""
    key = fold_ascii_lower(heading)
    candidates = [s for s in sections if fold_ascii_lower(s.heading) == key]
    if not candidates:
        return None
    wanted = _wanted(chunk_text)
    if wanted:
        found = _holding(candidates, heading, wanted)
        if found is not None:
            return found
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


def _older_range(
    note_text: str, heading: str, chunk_text: str, kimun: KimunVersion
) -> Range | None:
    """A chunk another kimun version cut: the range of its section there, with its scope."""
    wanted = _wanted(chunk_text)
    if not wanted:
        return None
    for other in KIMUN_VERSIONS:
        if other == kimun:
            continue
        sections, headings = note_outline(note_text, kimun=other)
        section = _holding(sections, heading, wanted)
        if section is None:
            continue
        if not section.breadcrumb:
            return (section.start, section.end)
        at = next(i for i, h in enumerate(headings) if h.start == section.start)
        return (section.start, _scope_end(note_text, headings, at))
    return None


def section_range(
    note_text: str, heading: str, chunk_text: str, *, kimun: KimunVersion = DEFAULT_KIMUN
) -> Range | None:
    """Where a retrieved chunk sits in its note: ``(start, end)`` or ``None``.

    kimun's three steps in kimun's order, each with askkit's fixes (see the
    module docstring): the chunk text (verbatim, then folded and
    CRLF-insensitive); the section whose innermost heading matches (accent-
    and ASCII-case-insensitive; the section holding the chunk wins among
    duplicates), where kimun finds its text verbatim kimun's answer, else its
    heading's whole scope, deeper sections included; the heading's whole
    scope from the parsed headings. ``heading=""`` matches the text before
    the first heading in step 2. A chunk no section of ``kimun`` holds but a
    section another kimun version cuts does (one stored by an older kimun) is
    that section, with its scope.

    >>> note = "Café\\n====\\nCrème\\n\\n## Sub\\nbody\\n"
    >>> section_range(note, "Cafe", "not in the note")  # the setext section and Sub
    (0, 29)
    """
    kimun = check_kimun(kimun)
    found = _find_loose(note_text, chunk_text)
    if found is not None:
        return found
    sections, headings = note_outline(note_text, kimun=kimun)
    wanted = _wanted(chunk_text)
    if wanted and _holding(sections, heading, wanted) is None:
        older = _older_range(note_text, heading, chunk_text, kimun)
        if older is not None:
            return older
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


def locate_source(
    note_text: str, source: AskSource, *, kimun: KimunVersion = DEFAULT_KIMUN
) -> Range | None:
    """:func:`section_range` for a source, matching on its innermost heading.

    :attr:`AskSource.innermost_heading` keeps the breadcrumb's segments, so a
    heading holding ``" › "`` is matched whole, and a journal section titled
    by its date alone is found under the date heading; kimun's
    :meth:`AskSource.match_heading` is the fallback.
    """
    kimun = check_kimun(kimun)
    found = section_range(note_text, source.innermost_heading, source.text, kimun=kimun)
    if found is None and source.title is not None:
        return section_range(note_text, source.match_heading(), source.text, kimun=kimun)
    return found


# ---------------------------------------------------------------------------
# A stored chunk and the note as it is now.

#: A stored chunk's relation to its note now (:func:`stored_status`).
StoredStatus = Literal["current", "older kimun", "note changed", "note missing"]
#: The chunk is a piece of a section the note has now (as ``kimun`` cuts it).
CURRENT: StoredStatus = "current"
#: The note is as it was stored, but the chunk is cut as an older kimun cut it.
OLDER_KIMUN: StoredStatus = "older kimun"
#: The chunk was stored before the note changed: its text is in no section now.
NOTE_CHANGED: StoredStatus = "note changed"
#: The note cannot be read from the vault (:func:`stored_statuses` only).
NOTE_MISSING: StoredStatus = "note missing"

_MESSAGES: dict[str, str] = {
    CURRENT: "",
    OLDER_KIMUN: "stored by an older kimun: the note is unchanged, but its sections are "
    "cut differently now (kimun keeps a note's chunks until the note is edited)",
    NOTE_CHANGED: "stored before the note changed: the chunk's text is in no section of "
    "the note as it is now (kimun keeps a note's chunks until it re-indexes the note)",
    NOTE_MISSING: "the note cannot be read from the vault",
}


def stored_status(
    note_text: str,
    chunk_text: str,
    *,
    stored_hash: str | None = None,
    note_hash: str | None = None,
    kimun: KimunVersion = DEFAULT_KIMUN,
) -> StoredStatus:
    """How a chunk a server stored relates to its note now.

    ``stored_hash`` is the note hash the chunk carries (``AskSource.hash``),
    ``note_hash`` the note's hash now (:meth:`askkit.vault.Vault.hash`). In order:
    :data:`CURRENT` when the chunk text is a piece of a section ``kimun`` cuts
    from the note now; :data:`NOTE_CHANGED` when both hashes are known and
    differ; :data:`OLDER_KIMUN` when the text is a piece of a section another
    kimun version cuts, or the note is unchanged (equal hashes) yet no section
    holds it; :data:`NOTE_CHANGED` otherwise.

    >>> note = "# Links\\nSee `[[x]]` and [[y|Y]].\\n"
    >>> stored_status(note, "See `[[x]]` and Y."), stored_status(note, "See `x` and Y.")
    ('current', 'older kimun')
    >>> stored_status(note, "Gone.")
    'note changed'
    """
    kimun = check_kimun(kimun)
    wanted = _wanted(chunk_text)
    if any(wanted in s.text for s in chunk_note(note_text, kimun=kimun)):
        return CURRENT
    if stored_hash and note_hash and stored_hash != note_hash:
        return NOTE_CHANGED
    for other in KIMUN_VERSIONS:
        if other != kimun and any(wanted in s.text for s in chunk_note(note_text, kimun=other)):
            return OLDER_KIMUN
    if stored_hash and note_hash:
        return OLDER_KIMUN
    return NOTE_CHANGED


def stored_message(status: str) -> str:
    """What a :data:`StoredStatus` means, as the reader says it (``""`` for current).

    >>> stored_message("older kimun").split(":")[0]
    'stored by an older kimun'
    """
    return _MESSAGES.get(status, "")


def stored_statuses(
    frame: pd.DataFrame, vault: Vault, *, kimun: KimunVersion = DEFAULT_KIMUN
) -> list[StoredStatus]:
    """:func:`stored_status` of each row of a sources frame (``path``, ``text``, ``hash``).

    Each note is read and cut once, however many of its chunks the frame holds;
    a note the vault cannot give is :data:`NOTE_MISSING` for its rows.
    """
    from askkit.errors import AskkitError

    kimun = check_kimun(kimun)
    paths = frame["path"].tolist()
    texts = frame["text"].tolist()
    hashes = frame["hash"].tolist() if "hash" in frame.columns else [None] * len(paths)
    notes: dict[str, tuple[str, str] | None] = {}
    out: list[StoredStatus] = []
    for path, text, stored in zip(paths, texts, hashes, strict=True):
        if path not in notes:
            try:
                notes[path] = (vault.read(path), vault.hash(path))
            except (AskkitError, OSError):
                notes[path] = None
        note = notes[path]
        if note is None:
            out.append(NOTE_MISSING)
            continue
        stored_hash = stored if isinstance(stored, str) and stored else None
        chunk = text if isinstance(text, str) else ""
        out.append(
            stored_status(note[0], chunk, stored_hash=stored_hash, note_hash=note[1], kimun=kimun)
        )
    return out
