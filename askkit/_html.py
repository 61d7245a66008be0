"""Static, escaped HTML: the one renderer behind ``_repr_html_``, the widgets and the report.

Every piece of user data (note text, headings, paths, hashes, answers,
queries, error messages) goes through :func:`html.escape` (:func:`esc`)
before it is placed in markup; only this module writes tags.

Markup carries inline styles for what must show anywhere (an ipywidgets
``HTML`` has no stylesheet); :data:`CSS` adds table layout where a notebook
output (:func:`fragment`) or the report's page can hold a ``<style>``.

Examples
--------
>>> from askkit import AskSource, Turn, VaultPath
>>> t = Turn("q?", "Feed it [1], not [9].",
...          [AskSource(VaultPath("a.md"), "<b>Starter</b>", None, 0.9, "feed", 1)])
>>> print(answer_html(t))  # doctest: +NORMALIZE_WHITESPACE
Feed it <b class="cite" title="&lt;b&gt;Starter&lt;/b&gt; — a.md">[1]</b>, not
<span class="dangling" style="color:#b00;text-decoration:line-through;font-weight:bold"
title="no source has ordinal 9">[9]</span>.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from askkit._text import as_float as _as_float
from askkit._text import number_label

if TYPE_CHECKING:
    from askkit.sources import AskSource, Turn

__all__ = [
    "ANSWER_LABEL",
    "CONTEXT_LINES",
    "CSS",
    "LOCATED_ID",
    "SORT_SCRIPT",
    "SOURCES_ORDER",
    "SourceCells",
    "answer_html",
    "bar_scale",
    "bar_width",
    "chunk_html",
    "citation",
    "citation_title",
    "dangling_note",
    "data_table",
    "esc",
    "fragment",
    "grade_status",
    "heading_label",
    "highlight",
    "hole_status",
    "line_start",
    "message",
    "note_html",
    "number_label",
    "page_status",
    "question_html",
    "search_status",
    "section_status",
    "source_card",
    "source_cells",
    "source_meta",
    "source_title",
    "sources_table",
    "stage_table",
    "turn_html",
    "turn_view",
]

#: Rules for the ``askkit`` class: tables in notebook outputs and the report.
CSS = (
    ".askkit table{border-collapse:collapse;font-size:13px;margin:.3em 0}"
    ".askkit th,.askkit td{padding:2px 8px;text-align:left;vertical-align:top;"
    "border-bottom:1px solid #ddd}"
    ".askkit td.num{text-align:right;font-variant-numeric:tabular-nums}"
    ".askkit .cite{font-weight:bold;color:#1f5fa8;text-decoration:none}"
)
#: What a turn's sources table says of its order.
SOURCES_ORDER = "Sources by [n], the number the answer cites them by."
#: A page's one script, for a static page such as the report: every ``askkit-sortable``
#: table (:func:`data_table`) gets a filter box (rows containing the typed text) and
#: headers that sort by their column (numbers as numbers, again to reverse). It only
#: reorders and hides the rows the page already holds (no HTML is built from text);
#: without script the tables are plain tables.
SORT_SCRIPT = (
    "<script>(function(){var A=Array.prototype;"
    "A.forEach.call(document.querySelectorAll('table.askkit-sortable'),function(t){"
    "var b=t.tBodies[0],h=t.tHead&&t.tHead.rows[0];if(!b||!h)return;"
    "var f=document.createElement('input');f.type='search';f.className='askkit-filter';"
    "f.placeholder='filter rows';f.setAttribute('aria-label','filter the rows of the table below');"
    "f.addEventListener('input',function(){var q=f.value.toLowerCase();"
    "A.forEach.call(b.rows,function(r){"
    "r.style.display=r.textContent.toLowerCase().indexOf(q)<0?'none':'';});});"
    "t.parentNode.insertBefore(f,t);"
    "A.forEach.call(h.cells,function(c,i){c.style.cursor='pointer';c.title='sort by this column';"
    "c.addEventListener('click',function(){"
    "var up=c.getAttribute('aria-sort')!=='ascending';"
    "A.forEach.call(h.cells,function(o){o.removeAttribute('aria-sort');});"
    "c.setAttribute('aria-sort',up?'ascending':'descending');"
    "function key(r){var s=r.cells[i]?r.cells[i].textContent.trim():'';"
    "return /^[-+]?[0-9][0-9,]*[.]?[0-9]*(e[-+]?[0-9]+)?$/i.test(s)?"
    "[0,parseFloat(s.replace(/,/g,''))]:[1,s.toLowerCase()];}"
    "var rows=A.slice.call(b.rows);rows.sort(function(x,y){var p=key(x),q=key(y);"
    "if(p[0]!==q[0])return p[0]-q[0];var d=p[1]<q[1]?-1:p[1]>q[1]?1:0;return up?d:-d;});"
    "rows.forEach(function(r){b.appendChild(r);});});});});})();</script>"
)
#: Lines shown above the located section before the rest of the note is folded away.
CONTEXT_LINES = 2
#: The element id of the located section in a note view.
LOCATED_ID = "askkit-located"
#: The label before an answer.
ANSWER_LABEL = "<b>A:</b>"

_MUTED = "color:#777"
_RED = "color:#b00"
_AMBER = "color:#a15c00"
_DANGLING = "color:#b00;text-decoration:line-through;font-weight:bold"
_BAR_PX = 60
_BAR = "display:inline-block;height:8px;background:#4c78a8;margin-right:6px;vertical-align:middle"
# width:0 with min-width:100% keeps the text's length out of the cell's own sizing: in a
# flex item (an ipywidgets HTML's content) the line is then cut at the cell, with an
# ellipsis, instead of widening the item past the cell and being cut mid-letter there
_CLIP = "overflow:hidden;text-overflow:ellipsis;white-space:nowrap;width:0;min-width:100%"
#: The tooltip of a section named by its note's title (:meth:`AskSource.shown_heading`).
_TITLE_NOTE = "the note's title: this section is the text before its first heading"
_BOX = (
    "white-space:pre-wrap;font-family:var(--jp-code-font-family,monospace);font-size:12px;"
    "line-height:1.45;max-height:32em;overflow:auto;border:1px solid #ddd;padding:6px"
)
_LOCATED = "background:#e6f0ff;box-shadow:-4px 0 0 #4c78a8;scroll-margin-top:40px"
_MARK = '<mark style="background:#ffe066;padding:0">'
_TEXT_PREVIEW = 240
_TONES = {"plain": "", "muted": _MUTED, "warn": _AMBER, "error": _RED}


def esc(value: object) -> str:
    """Escape any value for HTML text or attribute context.

    >>> esc('<a href="x">&</a>')
    '&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;'
    """
    return html.escape(str(value), quote=True)


def fragment(body: str) -> str:
    """A notebook output: ``body`` in an ``askkit`` block with its stylesheet."""
    return f'<div class="askkit"><style>{CSS}</style>{body}</div>'


def _muted(text: str, *, italic: bool = False) -> str:
    shown = f"<i>{esc(text)}</i>" if italic else esc(text)
    return f'<span class="muted" style="{_MUTED}">{shown}</span>'


def message(
    text: str, *, tone: Literal["plain", "muted", "warn", "error"] = "plain", lead: str = ""
) -> str:
    """One line of status: ``text`` (after a bold ``lead``), coloured by ``tone``.

    >>> message("<x>", tone="error", lead="failed")  # doctest: +ELLIPSIS
    '<div class="askkit-error" style="color:#b00;..."><b>failed:</b> &lt;x&gt;</div>'
    """
    bold = f"<b>{esc(lead)}:</b> " if lead else ""
    color = _TONES[tone] + ";" if _TONES[tone] else ""
    return f'<div class="askkit-{tone}" style="{color}white-space:pre-wrap">{bold}{esc(text)}</div>'


def heading_label(text: str, note: str = "") -> str:
    """A bold label, with an optional plain note after it (``<b>scores</b>``)."""
    return f"<b>{esc(text)}</b>" + (f" {esc(note)}" if note else "")


def search_status(query: str, count: int, seconds: float) -> str:
    """``3 sources for <b>query</b> in 12 ms`` (the Explorer's status line)."""
    plural = "s" if count != 1 else ""
    ms = number_label(_as_float(seconds) * 1000, 0)
    return f"{count} source{plural} for <b>{esc(query)}</b> in {esc(ms)} ms"


def page_status(page: int, pages: int, shown: int, total: int) -> str:
    """``page 1 of 5 · 90 rows of 100`` (1-based ``page``), or *no sources* when empty."""
    if not total:
        return "<i>no sources</i>"
    of = f" of {total:,}" if shown != total else ""
    return esc(f"page {page} of {pages} · {shown:,} rows{of}")


def section_status(index: int | None, sections: Sequence[str], *, located: bool) -> str:
    """Which section of the note is highlighted (``index`` into the ``sections`` labels)."""
    if not located:
        return message("section not found: the note is shown from the top", tone="warn")
    if index is None or not sections:
        return ""
    return f"section {index + 1} of {len(sections)}: <b>{esc(sections[index])}</b>"


def grade_status(
    key: tuple[str, str, str] | None, grade: int | None, *, saved: bool, count: int, file: object
) -> str:
    """The Labeler's line: the graded key and its grade, and the judgments file."""
    where = f"{count} judgment{'s' if count != 1 else ''} in <code>{esc(file)}</code>"
    if key is None:
        return f"<i>nothing to grade</i> · {where}"
    qid, path, heading = key
    graded = "not graded" if grade is None else f"grade <b>{grade}</b>"
    return (
        f"<code>{esc(qid)}</code> · <code>{esc(path)}</code> · "
        f"{esc(heading) or '<i>(before the first heading)</i>'}: {graded}"
        f"{' (saved)' if saved else ''} · {where}"
    )


def hole_status(
    index: int | None,
    count: int,
    judged: int,
    *,
    side: str = "",
    rank: int = 0,
    measures: str = "",
    problem: str = "",
) -> str:
    """The Labeler's line over a holes file: ``hole 3 of 12``, how many are judged, who
    ranked the hole where, what depends on it; ``problem`` (its note or heading gone) in red.

    >>> hole_status(2, 12, 5, side="BASE, NEW", rank=4, measures="ndcg@10")
    '<b>hole 3 of 12</b> · 5 judged · rank 4 on BASE, NEW · for ndcg@10'
    >>> hole_status(None, 0, 0)
    '<i>no holes: nothing to judge</i>'
    """
    if index is None or not count:
        return "<i>no holes: nothing to judge</i>"
    parts = [f"<b>hole {index + 1} of {count}</b>", f"{judged} judged"]
    if side:
        parts.append(f"rank {rank} on {esc(side)}")
    if measures:
        parts.append(f"for {esc(measures)}")
    line = " · ".join(parts)
    if problem:
        line += message(f"{problem}: it cannot be graded; skip it (next)", tone="error")
    return line


# --------------------------------------------------------------------------- answers


def citation_title(source: AskSource) -> str:
    """The plain-text tooltip of a resolving citation: display heading and path."""
    return f"{source.shown_heading()} — {source.path}"


def citation(marker: str, index: int, source: AskSource | None, *, anchor: str = "") -> str:
    """One ``[n]`` marker: a link to its source's row ``#{anchor}-{n}`` (bold text
    without an anchor), or struck through in red when no source has ordinal ``n``."""
    if source is None:
        return (
            f'<span class="dangling" style="{_DANGLING}" '
            f'title="no source has ordinal {index}">{esc(marker)}</span>'
        )
    title = esc(citation_title(source))
    if anchor:
        return f'<a class="cite" href="#{esc(anchor)}-{index}" title="{title}">{esc(marker)}</a>'
    return f'<b class="cite" title="{title}">{esc(marker)}</b>'


def answer_html(turn: Turn, *, anchor: str = "") -> str:
    """The answer, escaped, each ``[n]`` (:meth:`Turn.citations`, by ordinal) a :func:`citation`."""
    parts: list[str] = []
    pos = 0
    for link in turn.citations():
        c = link.citation
        parts.append(esc(turn.answer[pos : c.start]))
        parts.append(citation(turn.answer[c.start : c.end], c.index, link.source, anchor=anchor))
        pos = c.end
    parts.append(esc(turn.answer[pos:]))
    return "".join(parts)


def dangling_note(turn: Turn) -> str:
    """``cited with no source: [7]``, or ``""`` when every citation resolves."""
    dangling = turn.dangling_citations()
    if not dangling:
        return ""
    nums = ", ".join(f"[{n}]" for n in dangling)
    return (
        f'<div class="askkit-dangling-note" style="{_RED};font-weight:bold">'
        f"cited with no source: {esc(nums)}</div>"
    )


def question_html(question: str) -> str:
    """``Q:`` and the question (``(no question)`` when empty)."""
    shown = esc(question) or "<i>(no question)</i>"
    return f'<div class="askkit-question"><b>Q:</b> {shown}</div>'


# --------------------------------------------------------------------------- sources


def bar_scale(scores: Iterable[float]) -> float:
    """The score a full bar stands for: the largest finite ``|score|`` (1.0 when none or 0).

    >>> bar_scale([0.5, float("nan"), -2.0, float("inf")]), bar_scale([])
    (2.0, 1.0)
    """
    import numpy as np

    listed = scores if isinstance(scores, np.ndarray) else [_as_float(s) for s in scores]
    values = np.abs(np.asarray(listed, float))
    finite = values[np.isfinite(values)]
    return float(finite.max()) if finite.size and finite.max() > 0 else 1.0


def bar_width(score: float, top: float = 1.0) -> int:
    """The pixels of a score's bar: ``|score| / top`` of a full bar, always ``0..60``.

    The one place a score becomes a bar. ``±inf`` fills the bar and NaN draws
    none; a ratio too large for a float (``1e308`` over a tiny ``top``) fills
    it too; a ``top`` that is not a positive finite number counts as 1.0.

    >>> [bar_width(s, 2.0) for s in (1.0, -1e308, float("inf"), float("nan"), 5e-324)]
    [30, 60, 60, 0, 0]
    >>> bar_width(1e308, 5e-324), bar_width(0.5, float("nan")), bar_width(0.5, 0.0)
    (60, 30, 30)
    """
    value, scale = _as_float(score), _as_float(top)
    if math.isnan(value):
        return 0
    if not (math.isfinite(scale) and scale > 0):
        scale = 1.0
    ratio = abs(value) / scale  # inf when the quotient overflows: clamped here
    return round(_BAR_PX * min(ratio, 1.0))


def _score(score: float, top: float) -> str:
    label = number_label(score)
    if math.isnan(_as_float(score)):
        return _muted(label)
    return (
        f'<span style="white-space:nowrap"><span class="askkit-bar" '
        f'style="{_BAR};width:{bar_width(score, top)}px"></span>'
        f'<span style="font-variant-numeric:tabular-nums">{esc(label)}</span></span>'
    )


def _clip(text: str, shown: str) -> str:
    return f'<div style="{_CLIP}" title="{esc(text)}">{shown}</div>'


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _TEXT_PREVIEW else flat[: _TEXT_PREVIEW - 1] + "…"


@dataclass(frozen=True, slots=True)
class SourceCells:
    """One source as the cells of a sources table (escaped HTML; ``label`` is plain text)."""

    label: str
    heading: str
    path: str
    date: str
    score: str
    cited: str
    text: str


def source_cells(
    source: AskSource,
    *,
    top: float = 1.0,
    cited: bool | None = None,
    clip: bool = False,
    title: str | None = None,
) -> SourceCells:
    """The cells of one row: ``[n]``, shown heading, path, date, score bar, cited, text.

    ``top`` is the :func:`bar_scale` of the table; ``clip`` keeps heading, path
    and date on one line, cut with an ellipsis, the whole value in a tooltip.
    The heading is :meth:`AskSource.shown_heading` (``title``: the note's title
    as on disk, when the vault is known); a section before the note's first
    heading is named by its note's title, with a tooltip saying so.
    """
    heading = source.shown_heading(title)
    path = str(source.path)
    titled = source.before_first_heading and bool(heading)
    tip = f"{heading} — {_TITLE_NOTE}" if titled else heading
    heading_html = f'<span title="{esc(tip)}">{esc(heading)}</span>' if titled else esc(heading)
    cells = {
        "heading": heading_html if heading else _muted("(no heading)", italic=True),
        "path": esc(path),
        "date": (
            f'<span style="white-space:nowrap">{esc(source.date)}</span>'
            if source.date is not None
            else _muted("—")
        ),
    }
    if clip:
        values = {"heading": tip or "(no heading)", "path": path, "date": source.date or "—"}
        cells = {k: _clip(values[k], v) for k, v in cells.items()}
    mark = ""
    if cited is not None:
        mark = (
            '<span title="cited in the answer">✓</span>'
            if cited
            else '<span style="color:#999">·</span>'
        )
    return SourceCells(
        label=f"[{source.ordinal}]",
        score=_score(source.score, top),
        cited=mark,
        text=esc(_preview(source.text)),
        **cells,
    )


def sources_table(
    sources: Sequence[AskSource],
    *,
    cited: Sequence[bool] | None = None,
    top: float | None = None,
    anchor: str = "",
    positions: Sequence[int] | None = None,
    selected: int | None = None,
    extra: Sequence[tuple[str, Sequence[str]]] = (),
    below: Sequence[str] | None = None,
    titles: Mapping[str, str] | None = None,
) -> str:
    """A table with a row per source, in list order.

    Parameters
    ----------
    cited:
        Whether each row is cited; ``None`` leaves the cited column out.
    top:
        The score of a full bar (default: :func:`bar_scale` of these sources).
    anchor:
        Row ids ``{anchor}-{ordinal}``, the targets of :func:`citation` links.
    positions, selected:
        Each row's ``data-position``; the row whose position is ``selected`` is highlighted.
    extra:
        More columns: a header and one cell of escaped HTML per row.
    below:
        Escaped HTML shown under each row, across the columns after ``n``.
    titles:
        ``{printed path: the note's title as on disk}``, naming the sections before a
        note's first heading (:meth:`AskSource.shown_heading`; default: the path's stem).
    """
    if not sources:
        return f'<div class="askkit-sources">{_muted("no sources", italic=True)}</div>'
    scale = bar_scale(s.score for s in sources) if top is None else top
    heads = ["n", "heading", "path", "date", "score", *(["cited"] if cited is not None else [])]
    heads += ["text", *(h for h, _ in extra)]
    rows = []
    for i, src in enumerate(sources):
        title = titles.get(str(src.path)) if titles else None
        c = source_cells(
            src, top=scale, cited=None if cited is None else bool(cited[i]), title=title
        )
        tds = [f'<td class="num">{esc(c.label)}</td>', f"<td>{c.heading}</td>"]
        tds += [f"<td>{c.path}</td>", f"<td>{c.date}</td>", f'<td class="num">{c.score}</td>']
        tds += [f"<td>{c.cited}</td>"] if cited is not None else []
        tds += [f"<td>{c.text}</td>", *(f"<td>{cells[i]}</td>" for _, cells in extra)]
        attrs = f' id="{esc(anchor)}-{src.ordinal}"' if anchor else ""
        if positions is not None:
            attrs += f' data-position="{int(positions[i])}"'
            if positions[i] == selected:
                attrs += ' style="background:#e8f0fe"'
        rows.append(f"<tr{attrs}>{''.join(tds)}</tr>")
        if below is not None:
            span = f'<td colspan="{len(tds) - 1}">{below[i]}</td>'
            rows.append(f'<tr class="askkit-below"><td></td>{span}</tr>')
    head = "".join(f"<th>{esc(h)}</th>" for h in heads)
    return (
        f'<table class="askkit-sources"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


# --------------------------------------------------------------------------- one source


def source_title(source: AskSource | None, note_title: str | None = None) -> str:
    """A source's title: its shown heading (``no source selected`` for ``None``);
    ``note_title`` names a section before its note's first heading
    (:meth:`AskSource.shown_heading`)."""
    if source is None:
        return f'<div class="askkit-title" style="{_MUTED}"><i>no source selected</i></div>'
    title = source.shown_heading(note_title)
    shown = esc(title) if title else "<i>(no heading)</i>"
    return f'<div class="askkit-title" style="font-size:15px;font-weight:bold">{shown}</div>'


#: What a source's number is: the ``[n]`` an answer cites it by, its rank in the
#: candidate pool, or its row in a search.
Numbering = Literal["citation", "pool", "search"]
_NUMBERED: dict[str, tuple[str, str, str]] = {
    "citation": ("ordinal", "[{n}]", ""),
    "pool": ("rank", "{n}", " in the pool"),
    "search": ("search rank", "{n}", ""),
}


def ordinal_label(ordinal: int, numbering: Numbering = "citation") -> tuple[str, str, str]:
    """A source's number as words around it: ``[n]`` only for an answer's citation number.

    >>> ordinal_label(3), ordinal_label(21, "pool")
    (('ordinal', '[3]', ''), ('rank', '21', ' in the pool'))
    """
    before, number, after = _NUMBERED[numbering]
    return before, number.format(n=ordinal), after


def source_meta(
    source: AskSource, *, note_hash: str | None = None, numbering: Numbering = "citation"
) -> str:
    """Path, date, score and number (:func:`ordinal_label`: ``ordinal [n]`` for an answer's
    source, ``rank n in the pool`` for a pool chunk); a warning, with both hashes, when
    ``note_hash`` (the vault's) differs from the hash the source was indexed with. The hash
    itself is an opaque number: it is shown only there, where it means something.

    >>> from askkit.sources import AskSource, VaultPath
    >>> src = AskSource(VaultPath("a.md"), "A", None, 0.5, "x", 1, hash="111")
    >>> "111" in source_meta(src), "111" in source_meta(src, note_hash="222")
    (False, True)
    >>> "rank <code>1</code> in the pool" in source_meta(src, numbering="pool")
    True
    """
    before, number, after = ordinal_label(source.ordinal, numbering)
    items = [
        ("path", str(source.path), ""),
        ("date", source.date or "—", ""),
        ("score", number_label(source.score), ""),
        (before, number, after),
    ]
    cells = " · ".join(f"{esc(k)} <code>{esc(v)}</code>{esc(a)}" for k, v, a in items)
    warn = ""
    if note_hash is not None and source.hash and note_hash != source.hash:
        warn = (
            f'<div class="askkit-stale" style="{_AMBER}">the note in the vault has changed '
            f"since it was indexed (indexed hash <code>{esc(source.hash)}</code>, vault hash "
            f"<code>{esc(note_hash)}</code>): the section shown may not be the one retrieved"
            "</div>"
        )
    return f'<div class="askkit-meta" style="color:#555;font-size:12px">{cells}</div>{warn}'


def _terms_pattern(terms: Sequence[str]) -> re.Pattern[str] | None:
    if not terms:
        return None
    alternatives = "|".join(re.escape(t) for t in terms)
    return re.compile(rf"(?<!\w)(?:{alternatives})", re.IGNORECASE)


def highlight(text: str, terms: Sequence[str]) -> str:
    """``text`` escaped, with every word starting with a query term in ``<mark>``.

    Terms are found in the raw text, then each piece is escaped, so a match
    never cuts an entity (``&amp;``) or lets markup through.

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


def line_start(text: str, offset: int) -> int:
    """The offset where the line holding ``offset`` starts."""
    return text.rfind("\n", 0, offset) + 1


def _lines(
    text: str, terms: Sequence[str], *, base: int = 0, headings: frozenset[int] = frozenset()
) -> str:
    """Escaped lines, terms marked; a line starting at a note offset in ``headings`` in bold."""
    out: list[str] = []
    offset = base
    for line in text.split("\n"):
        body = highlight(line, terms)
        out.append(f'<b style="color:#1f3a68">{body}</b>' if offset in headings else body)
        offset += len(line) + 1
    return "\n".join(out)


def chunk_html(text: str, terms: Sequence[str] = ()) -> str:
    """A retrieved chunk's text, escaped, query terms marked."""
    return (
        f'<div class="askkit-chunk" style="{_BOX};max-height:12em;background:#fafafa">'
        f"{_lines(text, terms)}</div>"
    )


def note_html(
    note_text: str,
    located: tuple[int, int] | None,
    terms: Sequence[str] = (),
    *,
    headings: frozenset[int] = frozenset(),
    context_lines: int = CONTEXT_LINES,
) -> str:
    """A whole note, escaped, the ``located`` range highlighted near the top.

    Lines more than ``context_lines`` above the range fold into a
    ``<details>`` element (no script needed to scroll). ``headings`` holds
    the offsets of heading lines (shown bold). Without a range the note is
    shown from the top.
    """

    def lines(lo: int, hi: int) -> str:
        return _lines(note_text[lo:hi], terms, base=lo, headings=headings)

    box = f'<div class="askkit-note" style="{_BOX}">'
    if located is None:
        return f"{box}{lines(0, len(note_text))}</div>"
    start = max(0, min(located[0], len(note_text)))
    end = max(start, min(located[1], len(note_text)))
    window = line_start(note_text, start)
    for _ in range(context_lines):
        if window == 0:
            break
        window = line_start(note_text, window - 1)
    parts = []
    if window:
        count = note_text[:window].count("\n")
        parts.append(
            '<details class="askkit-earlier" style="white-space:normal;color:#555">'
            f"<summary>{count} earlier line{'s' if count != 1 else ''}</summary>"
            f'<div style="white-space:pre-wrap">{lines(0, window)}</div></details>'
        )
    parts.append(lines(window, start))
    parts.append(
        f'<span id="{LOCATED_ID}" class="askkit-located" style="{_LOCATED}">'
        f"{lines(start, end)}</span>"
    )
    parts.append(lines(end, len(note_text)))
    return f"{box}{''.join(parts)}</div>"


def source_card(source: AskSource) -> str:
    """One source as a notebook output: title, metadata and chunk text."""
    return fragment(source_title(source) + source_meta(source) + chunk_html(source.text))


# --------------------------------------------------------------------------- turns, tables


def turn_html(
    turn: Turn,
    *,
    cited: Sequence[bool] | None = None,
    anchor: str = "",
    extra: Sequence[tuple[str, Sequence[str]]] = (),
    below: Sequence[str] | None = None,
) -> str:
    """Question, answer with :func:`citation` links to the rows, dangling note, sources table.

    ``cited`` defaults to each source's ordinal being cited in the answer;
    ``extra`` and ``below`` go to :func:`sources_table` (each aligned with
    ``turn.sources``). The rows are in ``[n]`` order, the numbers the answer
    cites (a payload may list them in any order), and the table says so.
    """
    if cited is None:
        ordinals = set(turn.cited_ordinals())
        cited = [s.ordinal in ordinals for s in turn.sources]
    order = sorted(range(len(turn.sources)), key=lambda i: turn.sources[i].ordinal)
    sources = [turn.sources[i] for i in order]
    cited = [cited[i] for i in order]
    extra = [(head, [cells[i] for i in order]) for head, cells in extra]
    below = None if below is None else [below[i] for i in order]
    answer = ""
    if turn.answer:
        answer = (
            f'<div class="askkit-answer" style="white-space:pre-wrap">{ANSWER_LABEL} '
            f"{answer_html(turn, anchor=anchor)}</div>{dangling_note(turn)}"
        )
    table = sources_table(sources, cited=cited, anchor=anchor, extra=extra, below=below)
    by = _muted(SOURCES_ORDER, italic=True) if sources else ""
    return f"{question_html(turn.question)}{answer}{by}{table}"


def turn_view(turn: Turn) -> str:
    """A turn as a notebook output (:func:`turn_html`)."""
    return fragment(turn_html(turn, anchor=f"askkit-turn-{id(turn):x}"))


def _cell(value: Any, digits: int, kind: str = "f", na: str = "NaN") -> str:
    if isinstance(value, float):
        if math.isnan(value):
            if na == "NaN":
                return '<td class="num">NaN</td>'
            return f'<td class="num">{_muted(na, italic=True)}</td>'
        shown = number_label(value, digits) if kind == "f" else f"{value:.{digits}{kind}}"
        return f'<td class="num">{esc(shown)}</td>'
    if isinstance(value, int) and not isinstance(value, bool):
        return f'<td class="num">{value}</td>'
    return f"<td>{esc(value)}</td>"


def data_table(
    data: Any,
    *,
    digits: int = 4,
    significant: bool = False,
    index: bool = True,
    na: str = "NaN",
    sortable: bool = False,
) -> str:
    """A small frame (or series) as a table: index and columns escaped, floats to ``digits``.

    ``digits`` counts decimals, or significant digits when ``significant``
    (p-values); ``index=False`` leaves the index out. A NaN cell shows ``na``
    (say why the value cannot be computed, e.g. ``"no judged queries"``).
    ``sortable`` marks the table for :data:`SORT_SCRIPT` (a page that carries
    it lets a reader sort by a column and filter the rows; without a script the
    table is a plain table).

    >>> import pandas as pd
    >>> out = data_table(pd.Series([0.5], index=["<i>"], name="mean"), digits=2)
    >>> out[out.index("<tbody>") :]
    '<tbody><tr><td>&lt;i&gt;</td><td class="num">0.50</td></tr></tbody></table>'
    """
    import pandas as pd

    frame = data.to_frame() if isinstance(data, pd.Series) else data
    kind = "g" if significant else "f"
    names = [frame.index.name or "", *frame.columns] if index else list(frame.columns)
    head = "".join(f"<th>{esc(c)}</th>" for c in names)
    columns = [frame.iloc[:, j].tolist() for j in range(frame.shape[1])]  # Python scalars
    rows = [
        "<tr>"
        + (f"<td>{esc(label)}</td>" if index else "")
        + "".join(_cell(col[i], digits, kind, na) for col in columns)
        + "</tr>"
        for i, label in enumerate(frame.index.tolist())
    ]
    classes = "askkit-data askkit-sortable" if sortable else "askkit-data"
    return (
        f'<table class="{classes}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


_STAGE_TONES = {
    "pass": "background:#e8f3e8",
    "stop": "background:#e6f0ff;font-weight:bold",
    "lost": "background:#fbe3e3;font-weight:bold;color:#b00",
    "none": "color:#bbb",
}


def stage_table(
    stages: Sequence[str],
    rows: Sequence[tuple[str, Sequence[tuple[str, str, str]], str]],
    *,
    caption: str = "",
) -> str:
    """Sections as rows across stages as columns: each cell a short mark, a tone, a tooltip.

    ``rows`` are ``(label, cells, why)``, one cell per stage: ``(text, tone,
    title)`` with tone ``pass``, ``stop`` (the last stage reached),
    ``lost`` (the stage that dropped it) or ``none`` (not reached).

    >>> cells = [("#3", "pass", "x"), ("cut", "lost", "why")]
    >>> out = stage_table(["pool", "cut"], [("a<b>", cells, "w")])
    >>> "a&lt;b&gt;" in out, 'title="why"' in out
    (True, True)
    """
    head = "".join(f"<th>{esc(s)}</th>" for s in ("section", *stages, "why"))
    body = []
    for label, cells, why in rows:
        tds = "".join(
            f'<td style="{_STAGE_TONES.get(tone, "")}" title="{esc(title)}">{esc(text)}</td>'
            for text, tone, title in cells
        )
        body.append(f"<tr><td>{esc(label)}</td>{tds}<td>{esc(why)}</td></tr>")
    shown = f"<caption>{esc(caption)}</caption>" if caption else ""
    return (
        f'<table class="askkit-data askkit-trace">{shown}<thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>"
    )
