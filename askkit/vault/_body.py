"""The body kimun's note walk reads: past the frontmatter, parsed as the same note in LF.

From kimun commit ``67e96640a6ceae220ba578117d14352a60658604``
(``core/src/note/walk.rs``): :func:`body_start` is kimun's
``frontmatter_bounds``/``body_start``, :func:`events` its ``events``,
pulldown-cmark's events (through pyromark, no extensions) read so that a CRLF
note gives the events of the same note in LF.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, cast

import pyromark

__all__ = ["Event", "body_start", "events", "lf"]

#: One pulldown-cmark event with its byte range, as pyromark gives it.
Event = tuple[Any, dict[str, int]]


# ---------------------------------------------------------------------------
# Frontmatter (kimun's ``frontmatter_bounds``, ``body_start``, ``frontmatter_text``).


def _delimiter(note: str) -> tuple[str, int] | None:
    """kimun's ``frontmatter_delimiter``: the fence and the offset past the opening line."""
    bom = 1 if note.startswith("\ufeff") else 0
    newline = note.find("\n", bom)
    line_end = len(note) if newline < 0 else newline
    first = note[bom:line_end].rstrip("\r")
    if first not in {"---", "+++"}:
        return None
    return first, min(line_end + 1, len(note))


def _rust_lines(block: str) -> list[str]:
    """Rust ``str::lines``: split at LF, a CR before it dropped, no empty last line."""
    if not block:
        return []
    lines = block.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def body_start(note: str) -> tuple[int, str, int]:
    """Where the walked body starts in ``note``, the frontmatter text, and the block's end.

    The body starts after a closed frontmatter block (its closing line and line
    break included), else after an unclosed fence's first line, else after a
    byte-order mark. The frontmatter text is the lines between the fences
    joined with ``"\\n"`` (``""`` without a closed block); the block's end is 0
    without one.

    >>> body_start("---\\nt: x\\n---\\n# A\\n")
    (13, 't: x', 13)
    >>> body_start("---\\n# A\\n"), body_start("\\ufeff# A")
    ((4, '', 0), (1, '', 0))
    """
    found = _delimiter(note)
    if found is None:
        return (1 if note.startswith("\ufeff") else 0), "", 0
    delimiter, start = found
    offset = start
    for line in note[start:].split("\n"):
        if line.rstrip("\r") == delimiter:
            end = offset + len(line)
            if note[end : end + 1] == "\n":
                end += 1
            return end, "\n".join(_rust_lines(note[start:offset])), end
        offset += len(line) + 1
    return start, "", 0


# ---------------------------------------------------------------------------
# The parse, read as the same note in LF reads (kimun's ``events``).


def lf(text: str) -> str:
    """``text`` with each CRLF as LF (the text a CRLF note gives in LF reads)."""
    return text.replace("\r\n", "\n") if "\r" in text else text


def _prefix_run(text: str) -> int:
    return len(text) - len(text.lstrip(" \t>"))


def _rebuild_code_span(code: str, inner: str, cut: bool) -> str | None:
    """kimun's ``rebuild_code_span``: a CRLF code span's text as the same span in LF reads."""
    spaced = f" {code} " if cut else code
    out: list[str] = []
    at = 0
    lines = inner.split("\n")
    last = len(lines) - 1
    for i, line in enumerate(lines):
        crlf = line.endswith("\r")
        text = line[:-1] if crlf else line
        if i == 0:
            size = len(text)
        elif i == last:
            size = len(spaced) - at
            if size < 0:
                return None
        else:
            if at > len(spaced):
                return None
            left = min(_prefix_run(spaced[at:]), _prefix_run(text))
            size = len(text) - _prefix_run(text) + left
        if at + size > len(spaced):
            return None
        kept = spaced[at : at + size]
        if not text.endswith(kept):
            return None
        out.append(kept)
        at += size
        if i < last:
            ending = "  " if crlf else " "
            if spaced[at : at + len(ending)] != ending:
                return None
            out.append(" ")
            at += len(ending)
    joined = "".join(out)
    if (
        len(joined) > 1
        and joined.startswith(" ")
        and joined.endswith(" ")
        and joined.strip(" ") != ""
    ):
        joined = joined[1:-1]
    return joined


def _crlf_code_span(code: str, src: str) -> str | None:
    """kimun's ``crlf_code_span``: ``None`` when there is nothing to change."""
    ticks = len(src) - len(src.lstrip("`"))
    if len(src) - ticks < ticks:
        return None
    inner = src[ticks : len(src) - ticks]
    if "\r\n" not in inner:
        return None
    spaces = (" ", "\r", "\n")
    all_spaces = code.strip(" ") == ""
    cut = inner[:1] in spaces and inner[-1:] in spaces and not all_spaces
    first = _rebuild_code_span(code, inner, cut)
    if first is not None:
        return first
    return _rebuild_code_span(code, inner, not cut and not all_spaces)


def events(body: str, data: bytes | None = None, *, keep: bool = True) -> Sequence[Event]:
    """pulldown-cmark's events for ``body`` (no extensions), read as the same note in LF.

    In a CRLF body an HTML line split from its line ending (``Html("<div>")``,
    ``Html("\\n")``) is joined back, inline HTML and text lose their ``\\r``, and
    a code span over a CRLF reads as over an LF. (In an LF body pulldown never
    splits an HTML line from its line ending, so there is nothing to join.)
    Without ``keep``, an LF body's events are streamed, read once, not kept
    (keeping every event alive costs more than the parse).
    """
    stream = cast("Iterable[Event]", pyromark.events_with_range(body))
    if "\r" not in body:
        return stream if not keep else list(stream)  # type: ignore[return-value]
    raw: list[Event] = list(stream)
    out: list[Event] = []
    n = len(raw)
    i = 0
    while i < n:
        event, span = raw[i]
        i += 1
        if event.__class__ is dict:
            ((kind, value),) = event.items()
            if kind == "Html" and not value.endswith("\n"):
                if i < n and raw[i][0] == {"Html": "\n"}:
                    span = {"start": span["start"], "end": raw[i][1]["end"]}
                    event = {"Html": value + "\n"}
                    i += 1
            elif kind in {"InlineHtml", "Text"} and "\r" in value:
                event = {kind: lf(value)}
            elif kind == "Code":
                if data is None:
                    data = body.encode()
                src = data[span["start"] : span["end"]].decode()
                if "\r" in src:
                    rebuilt = _crlf_code_span(value, src)
                    if rebuilt is not None:
                        event = {"Code": rebuilt}
        out.append((event, span))
    return out
