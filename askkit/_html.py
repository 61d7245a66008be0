"""Static, escaped HTML for notebook display (no IPython import).

Every piece of user data (note text, headings, paths, answers) goes through
:func:`html.escape` before it is placed in markup.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from askkit.sources import AskSource, Turn

__all__ = ["esc", "source_card", "sources_table", "turn_view"]

_STYLE = (
    "<style>"
    ".askkit table{border-collapse:collapse;font-size:13px}"
    ".askkit th,.askkit td{padding:2px 8px;text-align:left;vertical-align:top;"
    "border-bottom:1px solid #ddd}"
    ".askkit td.num{text-align:right;font-variant-numeric:tabular-nums}"
    ".askkit .bar{display:inline-block;height:8px;background:#4c78a8;margin-right:4px}"
    ".askkit .dangling{color:#b00;text-decoration:line-through;font-weight:bold}"
    ".askkit .cite{font-weight:bold;color:#1f5fa8;text-decoration:none}"
    ".askkit pre{white-space:pre-wrap;margin:4px 0;max-height:20em;overflow:auto}"
    ".askkit .muted{color:#777}"
    "</style>"
)

_TEXT_PREVIEW = 240


def esc(value: object) -> str:
    """Escape any value for HTML text or attribute context."""
    return html.escape(str(value), quote=True)


def _date(src: AskSource) -> str:
    return esc(src.date) if src.date is not None else '<span class="muted">—</span>'


def source_card(src: AskSource) -> str:
    """One source: its title, metadata and chunk text."""
    return (
        f'<div class="askkit">{_STYLE}'
        f"<div><b>[{src.ordinal}] {esc(src.display_heading()) or '<i>(no heading)</i>'}</b></div>"
        f'<div class="muted">{esc(src.path)} · score {src.score:.4f}'
        f"{' · hash ' + esc(src.hash) if src.hash else ''}</div>"
        f"<pre>{esc(src.text)}</pre></div>"
    )


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _TEXT_PREVIEW else flat[: _TEXT_PREVIEW - 1] + "…"


def _rows(sources: Sequence[AskSource], cited: set[int] | None, anchor: str) -> str:
    finite = [s.score for s in sources if s.score == s.score]
    top = max((abs(x) for x in finite), default=0.0) or 1.0
    out = []
    for src in sources:
        width = 0 if src.score != src.score else max(0, int(60 * abs(src.score) / top))
        mark = ""
        if cited is not None:
            mark = "<td>✓</td>" if src.ordinal in cited else '<td class="muted">·</td>'
        row_id = f' id="{esc(anchor)}-{src.ordinal}"' if anchor else ""
        out.append(
            f"<tr{row_id}><td class='num'>[{src.ordinal}]</td>"
            f"<td>{esc(src.display_heading())}</td><td>{esc(src.path)}</td>"
            f"<td>{_date(src)}</td>"
            f"<td class='num'><span class='bar' style='width:{width}px'></span>{src.score:.4f}</td>"
            f"{mark}<td>{esc(_preview(src.text))}</td></tr>"
        )
    return "".join(out)


def sources_table(
    sources: Sequence[AskSource], *, cited: set[int] | None = None, anchor: str = ""
) -> str:
    """A table with a row per source, in list order."""
    if not sources:
        return f'<div class="askkit">{_STYLE}<i>no sources</i></div>'
    cited_head = "<th>cited</th>" if cited is not None else ""
    return (
        f'<div class="askkit">{_STYLE}<table><thead><tr><th>n</th><th>heading</th>'
        f"<th>path</th><th>date</th><th>score</th>{cited_head}<th>text</th></tr></thead>"
        f"<tbody>{_rows(sources, cited, anchor)}</tbody></table></div>"
    )


def turn_view(turn: Turn) -> str:
    """The question, the answer with linked ``[n]`` markers, and the sources table."""
    anchor = f"askkit-turn-{id(turn):x}"
    parts: list[str] = []
    pos = 0
    for link in turn.citations():
        c = link.citation
        parts.append(esc(turn.answer[pos : c.start]))
        marker = esc(turn.answer[c.start : c.end])
        if link.source is None:
            parts.append(
                f'<span class="dangling" title="no source has ordinal {c.index}">{marker}</span>'
            )
        else:
            title = esc(f"{link.source.display_heading()} — {link.source.path}")
            parts.append(f'<a class="cite" href="#{anchor}-{c.index}" title="{title}">{marker}</a>')
        pos = c.end
    parts.append(esc(turn.answer[pos:]))
    dangling = turn.dangling_citations()
    warn = ""
    if dangling:
        nums = ", ".join(f"[{n}]" for n in dangling)
        warn = f'<div class="dangling">cited with no source: {esc(nums)}</div>'
    cited = set(turn.cited_ordinals())
    return (
        f'<div class="askkit">{_STYLE}<div><b>Q:</b> {esc(turn.question)}</div>'
        f'<div style="white-space:pre-wrap"><b>A:</b> {"".join(parts)}</div>{warn}'
        f"{sources_table(turn.sources, cited=cited, anchor=anchor)}</div>"
    )
