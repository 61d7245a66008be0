"""How a note becomes chunks: kimun's sections, split as kimun's server splits them.

:func:`note_chunks` gives the chunks kimun's server stores for one note (the
sections :func:`askkit.vault.chunking.chunk_note` cuts, each split by
:func:`split_for_rag`), as columns; the local BM25 index and the dense index
store exactly these.

The server cuts each section's text into pieces of about ``target`` UTF-8
bytes (800) and at most ``max_size`` (1536), with no overlap: from each start
it takes the first paragraph break (``\\n\\n``, cut after it), else the first
sentence end (``. ! ? \\n``, cut after it), else the first space, found between
``start + min_size`` and ``start + max_size``, else a hard cut at
``start + max_size`` (moved back to a character boundary). ``min_size`` is
``max(target - (max - target) // 2, target // 2)``: 432 bytes by default.
Every piece is trimmed (Rust ``trim``); pieces left empty are dropped, except
that an empty section gives one empty piece and a section of at most
``target`` bytes gives its trimmed text even when that is empty.

All sizes are UTF-8 byte counts, as in kimun.

>>> split_for_rag("First paragraph.\\n\\nSecond line", 10, 20)
['First paragraph.', 'Second line']
"""

from __future__ import annotations

import re
from typing import Any

from askkit._text import rust_trim
from askkit.sources import VaultPath
from askkit.vault.chunking import DEFAULT_KIMUN, KimunVersion, chunk_note

__all__ = ["CHUNK_COLUMNS", "CHUNK_MAX", "CHUNK_TARGET", "note_chunks", "split_for_rag"]

#: The server's split: pieces of about this many UTF-8 bytes ...
CHUNK_TARGET = 800
#: ... and at most this many.
CHUNK_MAX = 1536
#: The columns of :func:`note_chunks`, in the order an index stores them.
CHUNK_COLUMNS = ("path", "title", "date", "text", "hash", "section", "piece", "start", "end")

_SENTENCE = re.compile(rb"[.!?\n]")


def _boundary(data: bytes, pos: int) -> int:
    if pos >= len(data):
        return len(data)
    while pos > 0 and 0x80 <= data[pos] <= 0xBF:
        pos -= 1
    return pos


def split_for_rag(text: str, target: int = CHUNK_TARGET, max_size: int = CHUNK_MAX) -> list[str]:
    """Split one section's text the way kimun's server does before embedding it."""
    if max_size < target or target < 1:
        raise ValueError(f"need 1 <= target <= max_size, got target={target}, max={max_size}")
    if not text:
        return [""]
    data = text.encode("utf-8")
    if len(data) <= target:
        return [rust_trim(text)]
    min_size = max(target - (max_size - target) // 2, target // 2)
    pieces: list[str] = []
    start = 0
    n = len(data)
    while start < n:
        min_end = _boundary(data, min(start + min_size, n))
        max_end = _boundary(data, min(start + max_size, n))
        if n - start <= max_size:
            piece = rust_trim(data[start:].decode("utf-8"))
            if piece:
                pieces.append(piece)
            break
        end = max_end
        if min_end < max_end:
            pos = data.find(b"\n\n", min_end, max_end)
            if pos != -1:
                end = pos + 2
            else:
                m = _SENTENCE.search(data, min_end, max_end)
                if m is not None:
                    end = m.start() + 1
                else:
                    pos = data.find(b" ", min_end, max_end)
                    if pos != -1:
                        end = pos + 1
        end = _boundary(data, end)
        piece = rust_trim(data[start:end].decode("utf-8"))
        if piece:
            pieces.append(piece)
        start = end
    return pieces


def note_chunks(
    path: VaultPath,
    text: str,
    note_hash: str,
    date: str | None,
    *,
    kimun: KimunVersion = DEFAULT_KIMUN,
) -> dict[str, list[Any]]:
    """The chunks kimun's server would store for one note, as columns (:data:`CHUNK_COLUMNS`),
    cut by ``kimun``'s chunker.

    ``title`` is the section's wire title, ``section`` its position in the
    note and ``piece`` the piece's within the section; ``start`` and ``end``
    delimit the section in ``text``.

    >>> cols = note_chunks(VaultPath("bread.md"), "# Bread\\nFeed it.\\n", "h", None)
    >>> cols["title"], cols["text"], cols["section"], cols["piece"]
    (['Bread'], ['Feed it.'], [0], [0])
    """
    cols: dict[str, list[Any]] = {c: [] for c in CHUNK_COLUMNS}
    printed = str(path)
    for i, section in enumerate(chunk_note(text, kimun=kimun)):
        for j, piece in enumerate(split_for_rag(section.text, CHUNK_TARGET, CHUNK_MAX)):
            cols["path"].append(printed)
            cols["title"].append(section.title)
            cols["date"].append(date)
            cols["text"].append(piece)
            cols["hash"].append(note_hash)
            cols["section"].append(i)
            cols["piece"].append(j)
            cols["start"].append(section.start)
            cols["end"].append(section.end)
    return cols
