"""The Source reader's model: query terms, the note's sections and its heading lines.

Pure functions: :class:`~askkit.widgets.SourceReader` calls them, and shows
what they find with the markup of :mod:`askkit._html` (:func:`~askkit._html.note_html`,
:func:`~askkit._html.chunk_html`, :func:`~askkit._html.source_meta`).

Safety: note text, headings, paths and the query are user data. Query terms
are found in the **raw** text and every piece is escaped before it is
wrapped in markup (:func:`askkit._html.highlight`); raw HTML in a note is
shown as text, never rendered.

Scrolling: ipywidgets' ``HTML`` does not run scripts, so instead of
scrolling a long note, the reader shows a **window** that starts a few lines
above the located section: the lines before that are folded into a
``<details>`` element (expandable, no script needed), so the section is at
the top of the note view in every front-end.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass

from askkit._html import line_start
from askkit.vault.chunking import DEFAULT_KIMUN, KimunVersion, chunk_note, note_headings
from askkit.vault.diacritics import fold

__all__ = ["NoteSection", "heading_lines", "note_sections", "query_terms", "section_at"]

_WORD = re.compile(r"\w{2,}")
_STOP_WORDS = (
    "a an and are as at be but by do does for from had has have how i in is it its me my "
    "no not of on or so that the their them then there these they this to was we were what "
    "when where which who why will with you your"
)
_STOP = frozenset(_STOP_WORDS.split(" "))


def query_terms(query: str) -> list[str]:
    """The words of a query worth highlighting: 2+ characters, common words dropped.

    Longest first, so a longer term wins where two overlap; each term also in
    its accent-folded form (chunk texts are folded).

    >>> query_terms("How often do I feed the Sourdough starter?")
    ['sourdough', 'starter', 'often', 'feed']
    """
    words = [w.lower() for w in _WORD.findall(query)]
    terms = [w for w in words if w not in _STOP]
    terms += [fold(w) for w in terms]
    return sorted(dict.fromkeys(terms), key=len, reverse=True)


def heading_lines(note_text: str, *, kimun: KimunVersion = DEFAULT_KIMUN) -> frozenset[int]:
    """The offsets where the note's heading lines start (shown bold in the note view).

    >>> sorted(heading_lines("intro\\n# Title\\ntext\\n## Sub\\n"))
    [6, 19]
    """
    return frozenset(line_start(note_text, h.start) for h in note_headings(note_text, kimun=kimun))


@dataclass(frozen=True, slots=True)
class NoteSection:
    """A section of the note the reader can step to: its breadcrumb and range."""

    breadcrumb: tuple[str, ...]
    start: int
    end: int

    @property
    def label(self) -> str:
        """The breadcrumb as the UI prints it, or ``(top of note)``."""
        return " › ".join(s for s in self.breadcrumb if s) or "(top of note)"


def note_sections(note_text: str, *, kimun: KimunVersion = DEFAULT_KIMUN) -> list[NoteSection]:
    """The note's sections (:func:`askkit.vault.chunking.chunk_note`) in note order."""
    chunks = chunk_note(note_text, kimun=kimun)
    sections = [NoteSection(s.breadcrumb, s.start, s.end) for s in chunks]
    return sorted(sections, key=lambda s: (s.start, s.end))


def section_at(sections: Sequence[NoteSection], offset: int) -> int | None:
    """The index of the section holding ``offset`` (the last one starting at or before it)."""
    starts = [s.start for s in sections]
    i = bisect.bisect_right(starts, offset) - 1
    if i < 0:
        return 0 if sections else None
    return i
