"""kimun's extraction snapshot (``core/tests/snapshots/extraction.txt``), read and rendered.

kimun's ``core/tests/extraction_snapshot.rs`` renders every note of a fixed corpus
(the ``example/`` vault, ``core/benches/fixtures``, ``core/tests/fixtures/walk``)
into one text file; ``../shared/corpora/kimun-walk/`` holds the file (abridged to
its title, headings and chunks parts), the notes it renders and, for the six notes
whose chunks part is too large to keep, where that part sits in the whole file and
runs of it verbatim (see that folder's README). This module reads the file and
renders askkit's output in kimun's format, so the tests compare the two.

Nothing here reads the corpus when it is imported: a test asks for it
(:func:`kimun_walk`, :func:`newest`, :func:`abridged`), and on a clone without
``../shared`` beside it that test skips with one line (fails under ``CI=true``;
:func:`tests.corpora.corpus`).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path

import regex

from tests.corpora import corpus, has_corpus

#: The corpus's name in ``../shared/corpora``.
CORPUS = "kimun-walk"
#: The newest readable snapshot and the oldest.
NEWEST = "extraction.txt"
OLDEST = "extraction_older.txt"
#: The one parameter :func:`snapshot_names` gives without the corpus: its test skips.
MISSING = "(kimun-walk missing)"


def kimun_walk() -> Path:
    """kimun's snapshot corpus, read where it lives (never copied into the project); a test
    without it skips (fails under ``CI=true``)."""
    return corpus(CORPUS)


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "'": "'", "0": "\0"}
#: What Rust's ``{:?}`` of a ``str`` writes as ``\u{..}``: grapheme extenders and the
#: characters Rust does not print (general categories C* and Z* but the space).
_DEBUG_ESCAPE = regex.compile(r"[\p{Grapheme_Extend}\p{C}\p{Zl}\p{Zp}[\p{Zs}--\x20]]", regex.V1)


def parse_debug(text: str, at: int = 0) -> tuple[str, int]:
    """A Rust ``{:?}`` string literal starting at ``text[at]``: its value and the end."""
    if text[at] != '"':
        raise ValueError(f"no string literal at {at}: {text[at : at + 20]!r}")
    out: list[str] = []
    i = at + 1
    while True:
        ch = text[i]
        if ch == '"':
            return "".join(out), i + 1
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        code = text[i + 1]
        if code == "u":
            close = text.index("}", i)
            out.append(chr(int(text[i + 3 : close], 16)))
            i = close + 1
        else:
            out.append(_ESCAPES[code])
            i += 2


def rust_debug(text: str) -> str:
    """Rust's ``format!("{:?}", text)`` for a ``str``."""
    out = ['"']
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\0":
            out.append("\\0")
        elif _DEBUG_ESCAPE.match(ch):
            out.append(f"\\u{{{ord(ch):x}}}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


@dataclass
class Block:
    """One note's block of the snapshot: title, headings and chunks.

    ``None`` for a part the corpus does not keep: three abridged blocks kept no
    title or headings, six no chunks (see :class:`Abridged` for those).
    """

    name: str
    title: str | None
    headings: list[tuple[int, int, str]] | None = field(default_factory=list)
    chunks: list[tuple[str, str]] | None = field(default_factory=list)


@dataclass(frozen=True)
class Abridged:
    """A chunks part kept as its place in the whole snapshot and runs of it."""

    start: int
    end: int
    runs: tuple[tuple[int, str], ...]

    def problems(self, rendered: str) -> list[str]:
        """How ``rendered`` (a chunks part) differs from what is known of kimun's."""
        if len(rendered) != self.end - self.start:
            return [f"{len(rendered)} characters, kimun's has {self.end - self.start}"]
        out = []
        for offset, run in self.runs:
            a, b = max(offset, self.start), min(offset + len(run), self.end)
            if a < b and rendered[a - self.start : b - self.start] != run[a - offset : b - offset]:
                out.append(f"differs from kimun's in [{a - self.start}, {b - self.start})")
        return out


def split_chunk_line(line: str) -> tuple[str, str]:
    """``[BREADCRUMB] "TEXT"`` -> (breadcrumb, text)."""
    at = line.find('] "')
    while at >= 0:
        try:
            text, end = parse_debug(line, at + 2)
        except (ValueError, IndexError, KeyError):
            text, end = "", -1
        if end == len(line):
            return line[1:at], text
        at = line.find('] "', at + 1)
    raise ValueError(f"not a chunk line: {line[:60]!r}")


def read_snapshot(file: str = NEWEST) -> tuple[str, list[Block]]:
    """The snapshot's commit and its blocks, in its order."""
    commit = ""
    blocks: list[Block] = []
    part = ""
    for line in (kimun_walk() / file).read_text(encoding="utf-8").split("\n"):
        if line.startswith("# commit: "):
            commit = line.removeprefix("# commit: ").strip()
        elif line.startswith("=== "):
            blocks.append(Block(line[4:], ""))
            part = ""
        elif line.startswith("-- title (not read"):
            blocks[-1].title = None
        elif line.startswith("-- title "):
            blocks[-1].title = parse_debug(line, len("-- title "))[0]
        elif line.startswith("-- headings (not read"):
            blocks[-1].headings = None
            part = ""
        elif line == "-- headings":
            part = "headings"
        elif line == "-- chunks":
            part = "chunks"
        elif line.startswith("-- chunks abridged"):
            blocks[-1].chunks = None
            part = ""
        elif line.startswith("--"):
            part = ""
        elif part == "headings" and line:
            level, row, rest = line.split(" ", 2)
            headings = blocks[-1].headings
            assert headings is not None
            headings.append((int(level), int(row), parse_debug(rest)[0]))
        elif part == "chunks" and line:
            chunks = blocks[-1].chunks
            assert chunks is not None
            chunks.append(split_chunk_line(line))
    return commit, blocks


def read_abridged(file: str = "abridged.json") -> tuple[str, dict[str, Abridged]]:
    """The abridged chunks parts: the commit and, per note, where the part sits."""
    data = json.loads((kimun_walk() / file).read_text(encoding="utf-8"))
    parts = {
        name: Abridged(v["S"], v["E"], tuple((int(o), str(t)) for o, t in v["runs"]))
        for name, v in data["notes"].items()
    }
    return str(data["commit"]), parts


@functools.cache
def newest() -> tuple[str, list[Block]]:
    """The newest snapshot's commit and blocks, read once."""
    return read_snapshot(NEWEST)


@functools.cache
def abridged() -> tuple[str, dict[str, Abridged]]:
    """The newest snapshot's abridged chunks parts, read once."""
    return read_abridged("abridged.json")


def snapshot_names() -> list[str]:
    """The names of the newest snapshot's notes, to parametrize a test by; without the
    corpus, :data:`MISSING` alone, whose test skips saying why (it asks for the corpus)."""
    if not has_corpus(CORPUS):
        return [MISSING]
    return [block.name for block in newest()[1]]


def note_file(name: str) -> Path:
    """Where the corpus keeps the note the snapshot names ``name``."""
    if name.startswith("../"):
        return kimun_walk() / "corpus" / name[3:]
    return kimun_walk() / "corpus/core" / name


def note_text(name: str) -> str:
    """The note as kimun's test reads it: UTF-8, CRLF as LF."""
    return note_file(name).read_text(encoding="utf-8").replace("\r\n", "\n")


def render_chunks(chunks: list[tuple[str, str]]) -> str:
    """The chunks part as kimun's ``render`` writes it (one line per chunk)."""
    return "".join(f"[{breadcrumb}] {rust_debug(text)}\n" for breadcrumb, text in chunks)
