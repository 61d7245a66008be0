"""The Source reader's model: a source in its note, as escaped HTML.

Pure functions: :class:`~askkit.widgets.SourceReader` only calls them.

Safety: note text, headings, paths and the query are user data. Query terms
are found in the **raw** text, then every piece (match or not) is escaped
with :func:`html.escape` before it is wrapped in markup, so a match can never
cut an entity (``&amp;``) or smuggle markup through. A note is shown as
escaped preformatted text; the only markup askkit adds is bold heading
lines, ``<mark>`` around query terms and a highlight around the located
section. Raw HTML in a note is shown as text, never rendered.

Scrolling: ipywidgets' ``HTML`` does not run scripts, so instead of
scrolling a long note, the reader shows a **window** that starts a few lines
above the located section: the lines before that are folded into a
``<details>`` element (expandable, no script needed), so the section is at
the top of the note view in every front-end.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from askkit._html import esc
from askkit.sources import AskSource
from askkit.vault.chunking import chunk_note, note_headings
from askkit.vault.diacritics import fold

__all__ = [
    "CONTEXT_LINES",
    "LOCATED_ID",
    "NoteSection",
    "chunk_html",
    "highlight",
    "meta_html",
    "note_html",
    "note_sections",
    "query_terms",
    "section_at",
    "title_html",
]

#: Lines shown above the located section before the rest is folded away.
CONTEXT_LINES = 2
#: The element id of the located section in the note view.
LOCATED_ID = "askkit-located"

_WORD = re.compile(r"\w{2,}")
_STOP_WORDS = (
    "a an and are as at be but by do does for from had has have how i in is it its me my "
    "no not of on or so that the their them then there these they this to was we were what "
    "when where which who why will with you your"
)
_STOP = frozenset(_STOP_WORDS.split(" "))
_MARK = '<mark style="background:#ffe066;padding:0">'
_LOCATED_STYLE = "background:#e6f0ff;box-shadow:-4px 0 0 #4c78a8;scroll-margin-top:40px"
_BOX_STYLE = (
    "white-space:pre-wrap;font-family:var(--jp-code-font-family,monospace);font-size:12px;"
    "line-height:1.45;max-height:32em;overflow:auto;border:1px solid #ddd;padding:6px"
)


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


def _terms_pattern(terms: Sequence[str]) -> re.Pattern[str] | None:
    if not terms:
        return None
    alternatives = "|".join(re.escape(t) for t in terms)
    return re.compile(rf"(?<!\w)(?:{alternatives})", re.IGNORECASE)


def highlight(text: str, terms: Sequence[str]) -> str:
    """``text`` escaped, with every word starting with a query term in ``<mark>``.

    >>> out = highlight("Feed <b>the</b> starter & feeding", ["feed"])
    >>> out.replace(_MARK, "<mark>")
    '<mark>Feed</mark> &lt;b&gt;the&lt;/b&gt; starter &amp; <mark>feed</mark>ing'
    """
    pattern = _terms_pattern(terms)
    if pattern is None:
        return esc(text)
    out: list[str] = []
    pos = 0
    for m in pattern.finditer(text):
        out.append(esc(text[pos : m.start()]))
        out.append(f"{_MARK}{esc(m.group())}</mark>")
        pos = m.end()
    out.append(esc(text[pos:]))
    return "".join(out)


def _lines_html(
    text: str, terms: Sequence[str], *, base: int = 0, headings: frozenset[int] = frozenset()
) -> str:
    """Escaped text with query terms marked and heading lines in bold.

    ``headings`` holds the note offsets where a heading line starts
    (:func:`askkit.vault.chunking.note_headings`); ``base`` is ``text``'s offset in the note.
    """
    out: list[str] = []
    offset = base
    for line in text.split("\n"):
        body = highlight(line, terms)
        if offset in headings:
            body = f'<b style="color:#1f3a68">{body}</b>'
        out.append(body)
        offset += len(line) + 1
    return "\n".join(out)


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


def note_sections(note_text: str) -> list[NoteSection]:
    """The note's sections (:func:`askkit.vault.chunking.chunk_note`) in note order."""
    sections = [NoteSection(s.breadcrumb, s.start, s.end) for s in chunk_note(note_text)]
    return sorted(sections, key=lambda s: (s.start, s.end))


def section_at(sections: Sequence[NoteSection], offset: int) -> int | None:
    """The index of the section holding ``offset`` (the last one starting at or before it)."""
    starts = [s.start for s in sections]
    i = bisect.bisect_right(starts, offset) - 1
    if i < 0:
        return 0 if sections else None
    return i


def _line_start(text: str, offset: int) -> int:
    return text.rfind("\n", 0, offset) + 1


def note_html(
    note_text: str,
    located: tuple[int, int] | None,
    terms: Sequence[str] = (),
    *,
    context_lines: int = CONTEXT_LINES,
) -> str:
    """The whole note, escaped, the ``located`` range highlighted and at the top.

    Lines more than ``context_lines`` above the range are folded into a
    ``<details>`` element. Without a range the note is shown from the top.
    """
    starts = frozenset(_line_start(note_text, h.start) for h in note_headings(note_text))

    def lines(lo: int, hi: int) -> str:
        return _lines_html(note_text[lo:hi], terms, base=lo, headings=starts)

    if located is None:
        return f'<div class="askkit-note" style="{_BOX_STYLE}">{lines(0, len(note_text))}</div>'
    start, end = located
    start = max(0, min(start, len(note_text)))
    end = max(start, min(end, len(note_text)))
    window = _line_start(note_text, start)
    for _ in range(context_lines):
        if window == 0:
            break
        window = _line_start(note_text, window - 1)
    folded = note_text[:window]
    parts = []
    if folded:
        count = folded.count("\n")
        parts.append(
            '<details class="askkit-earlier" style="white-space:normal;color:#555">'
            f"<summary>{count} earlier line{'s' if count != 1 else ''}</summary>"
            f'<div style="white-space:pre-wrap">{lines(0, window)}</div></details>'
        )
    parts.append(lines(window, start))
    parts.append(
        f'<span id="{LOCATED_ID}" class="askkit-located" style="{_LOCATED_STYLE}">'
        f"{lines(start, end)}</span>"
    )
    parts.append(lines(end, len(note_text)))
    return f'<div class="askkit-note" style="{_BOX_STYLE}">{"".join(parts)}</div>'


def title_html(source: AskSource | None) -> str:
    """The reader's title: ``display_heading()`` (escaped)."""
    if source is None:
        return '<div class="askkit-title" style="color:#777"><i>no source selected</i></div>'
    title = source.display_heading()
    shown = esc(title) if title else "<i>(no heading)</i>"
    return f'<div class="askkit-title" style="font-size:15px;font-weight:bold">{shown}</div>'


def meta_html(source: AskSource, *, note_hash: str | None = None) -> str:
    """Path, date, score, ordinal and hash; a warning when the note changed since indexing."""
    items: Iterable[tuple[str, str]] = [
        ("path", str(source.path)),
        ("date", source.date or "—"),
        ("score", f"{source.score:.4f}"),
        ("ordinal", f"[{source.ordinal}]"),
        ("hash", source.hash or "—"),
    ]
    cells = " · ".join(f"{esc(k)} <code>{esc(v)}</code>" for k, v in items)
    warn = ""
    if note_hash is not None and source.hash and note_hash != source.hash:
        warn = (
            '<div class="askkit-stale" style="color:#a15c00">the note in the vault has changed '
            f"since it was indexed (vault hash <code>{esc(note_hash)}</code>)</div>"
        )
    return f'<div class="askkit-meta" style="color:#555;font-size:12px">{cells}</div>{warn}'


def chunk_html(source: AskSource, terms: Sequence[str] = ()) -> str:
    """The retrieved chunk text, escaped, query terms marked."""
    return (
        f'<div class="askkit-chunk" style="{_BOX_STYLE};max-height:12em;background:#fafafa">'
        f"{_lines_html(source.text, terms)}</div>"
    )
