"""kimun's ``VaultPath``, ``AskSource`` and ``Turn``, value for value.

The conversion from a wire chunk to a source (:meth:`AskSource.from_chunk`)
follows kimun's terminal UI exactly: the title is trimmed the way Rust's
``str::trim`` trims (never Python's ``str.strip``, which would eat the U+001F
breadcrumb separator), a journal date prefix is dropped, the breadcrumb is
re-joined with :data:`HEADING_JOINER`, and a missing ordinal becomes
``position + 1``.

Examples
--------
>>> from askkit.wire import ChunkResult
>>> chunk = ChunkResult(path="journal/2026-04-08.md", title="2026-04-08\\x1fAfternoon",
...                     date="2026-04-08", content="Walked.", hash="h",
...                     similarity_score=0.8)
>>> src = AskSource.from_chunk(0, chunk)
>>> src.heading, src.ordinal, src.display_heading()
('Afternoon', 1, '2026-04-08 · Afternoon')
"""

from __future__ import annotations

import operator
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from askkit import _html
from askkit._text import rust_trim
from askkit.citations import Citation, scan
from askkit.wire import AnswerResult, ChunkResult

__all__ = [
    "BREADCRUMB_SEP",
    "FRONTMATTER",
    "FRONTMATTER_LABEL",
    "HEADING_JOINER",
    "AskSource",
    "CitationLink",
    "SourceList",
    "Turn",
    "VaultPath",
    "heading_from_title",
    "innermost_heading",
    "printed_paths",
    "sanitize_component",
]

#: core's breadcrumb separator inside a chunk title (U+001F, unit separator).
BREADCRUMB_SEP = "\x1f"
#: What the UI shows between breadcrumb segments: space, U+203A, space.
HEADING_JOINER = " › "
#: What the UI puts between a journal date and its heading: space, U+00B7, space.
DATE_JOINER = " · "
#: The title core gives a note's YAML frontmatter section (indexed last, when present).
FRONTMATTER = "FrontMatter"
#: How askkit shows that section's heading: what it is, not a heading of the note.
FRONTMATTER_LABEL = "(the note's frontmatter)"

# kimun's core/src/nfs/filename.rs, used with fullmatch for its ^...$. No DOTALL: Rust's
# ``.`` never matches a newline, so "..foo\n" keeps its dots there ("..foo_").
_DOTTED = re.compile(r"\.{2,}.+")
_RESERVED = re.compile(r"(CON|PRN|AUX|NUL|COM[1-9]|LPT[1-9])(\..+)?", re.IGNORECASE)
_INVALID = frozenset('\\/:*?"<>|[]^#') | {chr(c) for c in range(0x20)} | {"\x7f"}
_NOTE_EXTENSION = ".md"


def sanitize_component(component: str) -> str:
    """Sanitize one vault path component the way kimun's ``VaultPath::new`` does.

    >>> sanitize_component("..Foo.md")
    '__foo_md'
    >>> sanitize_component('My:Note?.MD')
    'my_note_.md'
    >>> sanitize_component("note. .")
    'note. '
    >>> sanitize_component("aux.txt")
    '_aux.txt'
    """
    if _DOTTED.fullmatch(component):
        component = component.replace(".", "_")
    if component in {".", ".."}:
        return component
    replaced = "".join("_" if ch in _INVALID else ch for ch in component)
    cleaned = rust_trim(replaced.lower()).rstrip(".")
    if _RESERVED.fullmatch(cleaned):
        cleaned = "_" + cleaned
    return cleaned


class VaultPath:
    """A logical path inside a kimun vault, sanitized as kimun sanitizes it.

    The separator is always ``/``; empty components are dropped (``a//b`` is
    ``a/b``), a leading ``/`` marks the path absolute, and each component is
    cleaned by :func:`sanitize_component`. ``..`` and ``.`` stay as components
    until :meth:`flatten`; printing does not resolve them.

    Examples
    --------
    >>> str(VaultPath("Journal//2026-04-08.md"))
    'journal/2026-04-08.md'
    >>> str(VaultPath("/a/ /b"))
    '/a//b'
    >>> VaultPath("../secret.md").escapes_root()
    True
    """

    __slots__ = ("_absolute", "_components", "_printed")

    def __init__(self, path: str | VaultPath = "") -> None:
        if isinstance(path, VaultPath):
            self._absolute: bool = path._absolute
            self._components: tuple[str, ...] = path._components
            self._printed: str = path._printed
            return
        if not isinstance(path, str):
            raise TypeError(f"VaultPath takes a str, got {type(path).__name__}: {path!r}")
        self._absolute = path.startswith("/")
        self._components = tuple(sanitize_component(p) for p in path.split("/") if p)
        self._printed = self._print()

    @classmethod
    def _make(cls, absolute: bool, components: tuple[str, ...]) -> VaultPath:
        new = cls.__new__(cls)
        new._absolute = absolute
        new._components = components
        new._printed = new._print()
        return new

    def _print(self) -> str:
        body = "/".join(self._components)
        return "/" + body if self._absolute else body

    @property
    def components(self) -> tuple[str, ...]:
        """The sanitized components, ``..`` and ``.`` included."""
        return self._components

    @property
    def is_absolute(self) -> bool:
        """Whether the path was written with a leading ``/``."""
        return self._absolute

    @property
    def name(self) -> str:
        """The last component of the flattened path (``""`` for the root)."""
        flat = self.flatten()._components
        return flat[-1] if flat else ""

    @property
    def stem(self) -> str:
        """The file name without the ``.md`` extension (kimun's ``get_clean_name``)."""
        name = self.name
        return name[: -len(_NOTE_EXTENSION)] if name.endswith(_NOTE_EXTENSION) else name

    @property
    def folder(self) -> str:
        """The flattened parent folder as a relative string (``""`` at the top)."""
        return "/".join(self.flatten()._components[:-1])

    def is_note(self) -> bool:
        """Whether the path names a markdown note (ends with ``.md``)."""
        return self.name.endswith(_NOTE_EXTENSION)

    def flatten(self) -> VaultPath:
        """Resolve ``.`` and ``..``; a ``..`` above the root is dropped, as in kimun."""
        if "." not in self._components and ".." not in self._components:
            return self  # already flat (paths are immutable)
        out: list[str] = []
        for part in self._components:
            if part == "..":
                if out:
                    out.pop()
            elif part != ".":
                out.append(part)
        return VaultPath._make(self._absolute, tuple(out))

    def escapes_root(self) -> bool:
        """Whether resolving ``..`` would climb above the vault root.

        kimun silently drops such a ``..``; askkit's vault reader refuses the
        path instead, so nothing outside the vault is ever opened.
        """
        depth = 0
        for part in self._components:
            if part == "..":
                depth -= 1
                if depth < 0:
                    return True
            elif part != ".":
                depth += 1
        return False

    @classmethod
    def from_printed(cls, printed: str) -> VaultPath:
        """Rebuild a path from its printed form, blank components included.

        ``VaultPath(str(p))`` drops a blank component (``"a//b"`` reads as
        ``a/b``); this keeps it, so ``VaultPath.from_printed(str(p)) == p``.
        The printed form is already sanitized and is not sanitized again. One
        case is ambiguous in kimun's printing itself: a path whose first
        component is blank prints with a leading ``/`` and reads back absolute.

        >>> p = VaultPath("a/ /b")
        >>> VaultPath.from_printed(str(p)) == p
        True
        """
        absolute = printed.startswith("/")
        body = printed[1:] if absolute else printed
        return cls._make(absolute, tuple(body.split("/")) if body else ())

    def relative(self) -> str:
        """The flattened path without its leading ``/``: the key askkit joins on."""
        return "/".join(self.flatten()._components)

    def __str__(self) -> str:
        return self._printed

    def __repr__(self) -> str:
        return f"VaultPath({str(self)!r})"

    def __fspath__(self) -> str:  # pragma: no cover - convenience only
        return self.relative()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, VaultPath):
            return (self._absolute, self._components) == (other._absolute, other._components)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self._absolute, self._components))

    def __lt__(self, other: VaultPath) -> bool:
        return (self._absolute, self._components) < (other._absolute, other._components)


def _title_body(title: str, date: str | None) -> str:
    stripped = rust_trim(title)
    if date is not None and stripped.startswith(date):
        stripped = rust_trim(stripped[len(date) :])
    return stripped


def heading_from_title(title: str, date: str | None) -> str:
    """The UI heading for a wire title: date prefix dropped, breadcrumb re-joined.

    >>> heading_from_title("2026-04-08\\x1fAfternoon", "2026-04-08")
    'Afternoon'
    >>> heading_from_title("Chapter\\x1f\\x1fSection", None)
    'Chapter › Section'
    >>> heading_from_title("\\x1f Section", None)
    ' Section'
    """
    body = _title_body(title, date)
    return HEADING_JOINER.join(s for s in body.split(BREADCRUMB_SEP) if s)


def innermost_heading(title: str) -> str:
    """A section's innermost heading: the last non-empty segment of its wire title.

    The one meaning askkit gives "innermost heading": the heading as the note
    writes it, exact even when it contains :data:`HEADING_JOINER` (kimun's
    :meth:`AskSource.match_heading` splits there). The title is trimmed as
    Rust trims; no date is dropped, so a journal section whose only heading
    is its date is named by that date, as a judgment names it and as the note
    heads it (the UI's heading drops the date: :func:`heading_from_title`).

    >>> innermost_heading("Guide\\x1fTools › Hammers")
    'Tools › Hammers'
    >>> innermost_heading("2026-04-21"), innermost_heading("2026-04-08\\x1fAfternoon\\x1f")
    ('2026-04-21', 'Afternoon')
    >>> innermost_heading("\\x1f\\x1f")
    ''
    """
    segments = [s for s in rust_trim(title).split(BREADCRUMB_SEP) if s]
    return segments[-1] if segments else ""


_PRINTED = operator.attrgetter("_printed")
_ABSOLUTE = operator.attrgetter("_absolute")


def printed_paths(paths: Sequence[VaultPath]) -> tuple[list[str], list[bool]]:
    """``str(p)`` and ``p.is_absolute`` of every path, read in C-level passes.

    A path prints once, when it is made; ``str(p)`` would call into Python for
    every path. Both are needed to tell paths apart by their printed form: a
    relative path whose first component is blank prints like an absolute one.

    >>> printed_paths([VaultPath("a/b.md"), VaultPath("/c.md")])
    (['a/b.md', '/c.md'], [False, True])
    """
    return list(map(_PRINTED, paths)), list(map(_ABSOLUTE, paths))


@dataclass(frozen=True, slots=True)
class AskSource:
    """One retrieved chunk backing an answer: a row of kimun's Sources view.

    The first six fields are kimun's ``AskSource``. askkit also keeps the
    note's content ``hash`` and the raw wire ``title`` (the U+001F breadcrumb),
    so the breadcrumb's segments survive even when a heading itself contains
    :data:`HEADING_JOINER` (see :attr:`segments`). ``title`` is ``None`` for a
    source built by hand.
    """

    path: VaultPath
    heading: str
    date: str | None
    score: float
    text: str
    ordinal: int
    hash: str = ""
    title: str | None = field(default=None, repr=False)

    @classmethod
    def from_chunk(cls, position: int, chunk: ChunkResult) -> AskSource:
        """Build from a wire chunk at 0-based ``position`` in its list, as kimun does.

        The ordinal is normalised once here: a server that sends it wins; a 0
        (an older server that omits it) becomes ``position + 1``.
        """
        if position < 0:
            raise ValueError(f"position is 0-based and must be >= 0, got {position}")
        return cls(
            path=VaultPath(chunk.path),
            heading=heading_from_title(chunk.title, chunk.date),
            date=chunk.date,
            score=chunk.similarity_score,
            text=chunk.content,
            ordinal=chunk.ordinal if chunk.ordinal != 0 else position + 1,
            hash=chunk.hash,
            title=chunk.title,
        )

    @classmethod
    def from_chunks(cls, chunks: Iterable[ChunkResult]) -> SourceList:
        """Convert a whole list, each chunk at its position."""
        return SourceList(cls.from_chunk(i, c) for i, c in enumerate(chunks))

    def match_heading(self) -> str:
        """kimun's innermost heading: the part after the last ``" › "``.

        This is what kimun's ``locate`` matches on. A heading that itself
        contains ``" › "`` is split wrongly here, exactly as in kimun; use
        :attr:`innermost_heading` for askkit's segment-exact value.
        """
        _, sep, tail = self.heading.rpartition(HEADING_JOINER)
        return tail if sep else self.heading

    @property
    def segments(self) -> tuple[str, ...]:
        """The breadcrumb's non-empty segments, from the wire title when known."""
        if self.title is not None:
            body = _title_body(self.title, self.date)
            return tuple(s for s in body.split(BREADCRUMB_SEP) if s)
        return tuple(s for s in self.heading.split(HEADING_JOINER) if s)

    @property
    def innermost_heading(self) -> str:
        """The section's innermost heading (:func:`innermost_heading` of the wire title).

        Exact even when it contains ``" › "``: askkit's deliberate improvement
        over :meth:`match_heading`. A journal section whose only heading is
        its date is named by that date. Without a wire title (a source built
        by hand), the last segment of :attr:`heading`.
        """
        if self.title is not None:
            return innermost_heading(self.title)
        segs = self.segments
        return segs[-1] if segs else ""

    def display_heading(self) -> str:
        """The one-line title: ``"2026-04-08 · Afternoon"``, the date alone, or the heading."""
        if self.date is not None:
            return f"{self.date}{DATE_JOINER}{self.heading}" if self.heading else self.date
        return self.heading

    @property
    def before_first_heading(self) -> bool:
        """Whether this is the text before the note's first heading of an undated note:
        a section with no heading, which :meth:`shown_heading` names by the note's title."""
        return not self.heading and self.date is None

    def shown_heading(self, title: str | None = None) -> str:
        """:meth:`display_heading` as askkit's tables, widgets and report show it.

        Two sections read differently from kimun's :meth:`display_heading`, on
        purpose (``display_heading`` itself stays kimun's, value for value):

        - the note's frontmatter, which kimun titles ``FrontMatter``, is named for
          what it is (:data:`FRONTMATTER_LABEL`), after the date in a journal note;
        - the text before an undated note's first heading, which kimun shows as an
          empty heading, is named by the note's title, as Obsidian titles a note:
          ``title`` when given (the file's name without ``.md``, as on disk, which
          only the vault knows: the Explorer and ``SourcesView`` read it from
          theirs), else :attr:`VaultPath.stem`, the printed path's (lowercased) file name.
          A dated note's heading-less section shows its date, as kimun shows it (the
          date is read from the file's name: it is the note's title).

        Every other heading is kimun's. Only a path with no file name gives ``""``.

        >>> AskSource(VaultPath("a.md"), "FrontMatter", None, 0.5, "tags: [x]", 1).shown_heading()
        "(the note's frontmatter)"
        >>> untitled = AskSource(VaultPath("Plugins/Command palette.md"), "", None, 6.0, "x", 1)
        >>> untitled.display_heading(), untitled.shown_heading()
        ('', 'command palette')
        >>> untitled.shown_heading("Command palette")
        'Command palette'
        """
        if self.heading == FRONTMATTER:
            if self.date is not None:
                return f"{self.date}{DATE_JOINER}{FRONTMATTER_LABEL}"
            return FRONTMATTER_LABEL
        if self.before_first_heading:
            return title or self.path.stem
        return self.display_heading()

    def to_chunk(self) -> ChunkResult:
        """The wire chunk this source came from (title rebuilt when unknown)."""
        title = self.title
        if title is None:
            body = BREADCRUMB_SEP.join(self.heading.split(HEADING_JOINER))
            title = (
                f"{self.date}{BREADCRUMB_SEP}{body}" if self.date and body else (self.date or body)
            )
        return ChunkResult(
            path=str(self.path),
            title=title,
            date=self.date,
            content=self.text,
            hash=self.hash,
            similarity_score=self.score,
            ordinal=self.ordinal,
        )

    def _repr_html_(self) -> str:
        return _html.source_card(self)


class SourceList(tuple[AskSource, ...]):
    """A tuple of sources that displays as a table in a notebook."""

    __slots__ = ()

    def _repr_html_(self) -> str:
        return _html.fragment(_html.sources_table(self))


@dataclass(frozen=True, slots=True)
class CitationLink:
    """A ``[n]`` marker in an answer and the source it resolves to (or ``None``)."""

    citation: Citation
    source: AskSource | None

    @property
    def dangling(self) -> bool:
        """The answer cites a number no source carries."""
        return self.source is None


@dataclass(frozen=True, slots=True)
class Turn:
    """One question, its answer and the sources behind it.

    Citations pair with sources by ordinal, never by list position.
    """

    question: str
    answer: str
    sources: SourceList = field(default_factory=SourceList)

    def __post_init__(self) -> None:
        if not isinstance(self.sources, SourceList):
            object.__setattr__(self, "sources", SourceList(self.sources))

    @classmethod
    def from_answer(cls, question: str, result: AnswerResult | dict[str, Any]) -> Turn:
        """Build a turn from a completed answer job's result."""
        if not isinstance(result, AnswerResult):
            result = AnswerResult.from_dict(result)
        return cls(question, result.answer, AskSource.from_chunks(result.sources))

    def source_for_citation(self, n: int) -> AskSource | None:
        """The source whose ordinal is ``n`` (the first such), else ``None``."""
        return next((s for s in self.sources if s.ordinal == n), None)

    def citations(self) -> list[CitationLink]:
        """Every ``[n]`` marker in the answer with the source it resolves to."""
        by_ordinal: dict[int, AskSource] = {}
        for s in self.sources:
            by_ordinal.setdefault(s.ordinal, s)
        return [CitationLink(c, by_ordinal.get(c.index)) for c in scan(self.answer)]

    def cited_ordinals(self) -> list[int]:
        """The distinct cited numbers, in order of first citation."""
        return list(dict.fromkeys(c.index for c in scan(self.answer)))

    def dangling_citations(self) -> list[int]:
        """Cited numbers that no source carries, in order of first citation."""
        have = {s.ordinal for s in self.sources}
        return [n for n in self.cited_ordinals() if n not in have]

    def uncited_sources(self) -> SourceList:
        """Sources the answer never cites, in list order."""
        cited = set(self.cited_ordinals())
        return SourceList(s for s in self.sources if s.ordinal not in cited)

    def _repr_html_(self) -> str:
        return _html.turn_view(self)
