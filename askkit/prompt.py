"""The framing kimun's prompt builder gives each source, so you can see what the model saw.

Each source enters the LLM prompt as a header line ``[n] {path} — "{title}"``
(the title with its journal date prefix dropped and every U+001F replaced by
``" › "``, empty segments kept; the `` — "…"`` clause omitted when the title
is blank), then ``Date: YYYY-MM-DD`` for a dated chunk, then the chunk text,
then a blank line.

A journal title such as ``"2026-04-08\x1fAfternoon"`` loses its date but
keeps the separator that followed it (Rust's ``trim`` does not remove
U+001F), so kimun's prompt shows ``" › Afternoon"``; askkit reproduces that.

Note the two surfaces differ in kimun: the Sources view
(:meth:`askkit.AskSource.from_chunk`) drops empty breadcrumb segments, the
prompt keeps them (``"A\\x1f\\x1fB"`` is ``"A › B"`` in the view but
``"A ›  › B"`` in the prompt).

Examples
--------
>>> from askkit.wire import ChunkResult
>>> c = ChunkResult("journal/2026-04-08.md", "2026-04-08\\x1fAfternoon", "2026-04-08",
...                 "Walked to the river.", "h", 0.8, 1)
>>> print(frame_source(c), end="")
[1] journal/2026-04-08.md — " › Afternoon"
Date: 2026-04-08
Walked to the river.
<BLANKLINE>
"""

from __future__ import annotations

from collections.abc import Sequence

from askkit._text import rust_trim
from askkit.wire import ChunkResult

__all__ = ["frame_source", "frame_sources", "prompt_title"]

_SEP = "\x1f"
_JOINER = " › "


def prompt_title(title: str, date: str | None) -> str:
    """The title as the prompt shows it: date prefix dropped, U+001F -> ``" › "``.

    >>> prompt_title("A\\x1f\\x1fB", None)
    'A ›  › B'
    """
    stripped = rust_trim(title)
    if date is not None and stripped.startswith(date):
        stripped = rust_trim(stripped[len(date) :])
    return stripped.replace(_SEP, _JOINER)


def frame_source(chunk: ChunkResult, n: int | None = None) -> str:
    """The prompt block for one chunk, numbered ``n`` (default: its ordinal)."""
    number = chunk.ordinal if n is None else n
    title = prompt_title(chunk.title, chunk.date)
    header = f'[{number}] {chunk.path} — "{title}"' if title else f"[{number}] {chunk.path}"
    lines = [header]
    if chunk.date is not None:
        lines.append(f"Date: {chunk.date}")
    lines.append(chunk.content)
    return "\n".join(lines) + "\n\n"


def frame_sources(chunks: Sequence[ChunkResult]) -> str:
    """The prompt's sources section: each chunk framed, numbered by ordinal.

    A chunk without an ordinal (0) is numbered by its position + 1, as the
    Sources view numbers it.
    """
    return "".join(frame_source(c, c.ordinal if c.ordinal else i + 1) for i, c in enumerate(chunks))
