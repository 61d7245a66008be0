"""The independent check behind :func:`askkit.vault.chunking.check_note_sections`.

A second, full markdown-it parse of the note finds its headings; the sections
the chunker cut must carry every heading that owns text, start at heading
lines and hold the words of their text.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from typing import TYPE_CHECKING

from markdown_it import MarkdownIt

from askkit.vault._note_text import SENTINEL, LineOffsets, collapse_wikilinks, split_note
from askkit.vault.diacritics import fold

if TYPE_CHECKING:
    from askkit.vault.chunking import Section

__all__ = ["section_problems"]

_WORD = re.compile(r"[^\W_]+")
_FULL_MD = MarkdownIt("commonmark")


_LINK_DESTINATION = re.compile(r"\]\([^)\n]*\)")
_INLINE_MARKUP = re.compile(r"[*_`\[\]]+")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(fold(text).lower()))


def _source_words(text: str) -> set[str]:
    """Words of raw markdown, also as they read once inline markup is gone (``**S**ave``)."""
    bare = _INLINE_MARKUP.sub("", _LINK_DESTINATION.sub("", text))
    return _words(text) | _words(bare)


def _independent_headings(text: str) -> list[tuple[int, int, str]]:
    """(level, note offset, plain text) of each heading, from a separate full parse."""
    parts = split_note(text)
    parsed, segments, _ = collapse_wikilinks(parts.body)
    tokens = _FULL_MD.parse(parsed)
    offsets = LineOffsets(parsed, parts, segments)
    out = []
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.map is not None:
            inline = tokens[i + 1]
            plain = "".join(
                c.content for c in inline.children or [] if c.type in {"text", "code_inline"}
            ).replace(SENTINEL, "#")
            out.append((int(tok.tag[1]), offsets.line_start(tok.map[0]), plain))
    return out


def _squash(text: str) -> str:
    return re.sub(r"[\s#`]+", "", text)


def section_problems(text: str, sections: Sequence[Section], name: str) -> list[str]:
    """Problems with ``sections``, the chunker's sections of ``text``.

    See :func:`askkit.vault.chunking.check_note_sections` for what is checked.
    """
    problems: list[str] = []
    body = [s for s in sections if not s.is_frontmatter]
    heads = _independent_headings(text)
    starts = sorted(s.start for s in body)
    for k, (level, start, plain) in enumerate(heads):
        scope_end = next((st for lv, st, _ in heads[k + 1 :] if lv <= level), len(text) + 1)
        i = bisect_right(starts, start - 1)
        if i == len(starts) or starts[i] >= scope_end:
            continue  # no non-blank section under this heading
        wanted = _squash(plain)
        if not any(_squash(seg) == wanted for s in body for seg in s.breadcrumb):
            problems.append(f"{name}: heading {plain!r} (offset {start}) is in no breadcrumb")
    head_starts = {st for _, st, _ in heads}
    for s in sections:
        chunk = text[s.start : s.end]
        where = f"{name}: section {s.title!r} [{s.start}:{s.end}]"
        if not 0 <= s.start <= s.end <= len(text):
            problems.append(f"{where}: range outside the note")
            continue
        if s.is_frontmatter:
            if s.text not in chunk.replace("\r\n", "\n"):
                problems.append(f"{where}: frontmatter text not in its range")
            continue
        if s.breadcrumb:
            if s.start not in head_starts:
                problems.append(f"{where}: does not start at a heading line")
            first_line = chunk.split("\n", 1)[0]
            if not _words(s.breadcrumb[-1]) <= _words(first_line):
                problems.append(f"{where}: heading line missing")
        missing = _words(s.text) - _source_words(chunk)
        if missing:
            problems.append(f"{where}: body words not in range: {sorted(missing)[:5]}")
    return problems
