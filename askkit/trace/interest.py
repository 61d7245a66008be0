"""What a trace follows: a note, or one section of it, named by path and innermost heading.

Section ids are :mod:`askkit.metrics`' (``path#heading``, the innermost
heading; the path alone for a whole note); a chunk belongs to a section when
its path is the note's and its title's innermost heading is the heading.

A path is taken as a user types or pastes it, as it is on disk or as kimun
prints it: :func:`sections_of` prints it through the one rule,
:class:`~askkit.VaultPath` (sanitised and lower-cased, ``.`` and ``..``
kept as printed), so both name the same note. :func:`typed_section` reads one
``path#heading`` as typed; :func:`closest_paths` and
:func:`closest_headings` name what a path or heading that matches nothing
was probably meant to be.

Examples
--------
>>> sections_of([("a.md", "Intro"), "b.md"])
[Interest(path='a.md', heading='Intro'), Interest(path='b.md', heading=None)]
>>> sections_of([typed_section("Linking notes and files/Embed files.md#Embed a note")])
[Interest(path='linking notes and files/embed files.md', heading='Embed a note')]
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

import pandas as pd

from askkit.errors import SchemaError
from askkit.sources import VaultPath, innermost_heading
from askkit.wire import ChunkResult

__all__ = [
    "Interest",
    "closest_headings",
    "closest_paths",
    "printed_path",
    "section_id",
    "sections_of",
    "typed_section",
]

#: How many close matches a suggestion names at most.
SUGGESTIONS = 3
_CLOSE = 0.6  # the least score of a suggestion (see _ratio)
_NEAR = 0.15  # and how far below the best one it may be
_NOTE_THEN_HASH = re.compile(r"\.md\s*#", re.IGNORECASE)  # where a typed note's path ends


@dataclass(frozen=True, slots=True)
class Interest:
    """A note, or one section of it (``heading``: its innermost heading), to follow.

    >>> Interest("bread.md", "Starter").section
    'bread.md#Starter'
    """

    path: str
    heading: str | None = None

    @property
    def section(self) -> str:
        return section_id(self.path, self.heading)

    def holds(self, chunk: ChunkResult) -> bool:
        """Whether ``chunk`` belongs to this note (and section)."""
        return chunk.path == self.path and (
            self.heading is None or innermost_heading(chunk.title) == self.heading
        )


def section_id(path: str, heading: str | None) -> str:
    """``path#heading``, or the path alone for a whole note (``askkit.metrics``' section ids).

    >>> section_id("a.md", "Intro"), section_id("a.md", None)
    ('a.md#Intro', 'a.md')
    """
    return path if heading is None else f"{path}#{heading}"


def sections_of(
    interests: Iterable[Interest | tuple[str, str | None] | str] | pd.DataFrame,
) -> list[Interest]:
    """Sections of interest from pairs, paths, or a qrels-shaped frame (``path``, ``heading``).

    Each path is printed as kimun prints it (:func:`printed_path`), so a path
    typed as it is on disk names the same note. A frame's blank heading means
    the whole note; duplicates are followed once.

    >>> sections_of([("a.md", "Intro"), "b.md", ("A.md", "Intro")])
    [Interest(path='a.md', heading='Intro'), Interest(path='b.md', heading=None)]
    """
    out: list[Interest] = []
    if isinstance(interests, pd.DataFrame):
        if "path" not in interests.columns:
            raise SchemaError(
                "sections of interest need a 'path' column (and optionally 'heading')",
                field="columns",
                value=list(interests.columns),
            )
        paths = interests["path"].astype(str).tolist()
        if "heading" in interests.columns:
            raw = interests["heading"].astype(object).where(interests["heading"].notna(), None)
            headings = [_heading(h) for h in raw.tolist()]
        else:
            headings = [None] * len(paths)
        pairs: list[Interest] = [Interest(p, h) for p, h in zip(paths, headings, strict=True)]
    else:
        pairs = []
        for item in interests:
            if isinstance(item, Interest):
                pairs.append(item)
            elif isinstance(item, str):
                pairs.append(Interest(item))
            else:
                path, heading = item
                pairs.append(Interest(str(path), _heading(heading)))
    for pair in pairs:
        printed = Interest(printed_path(pair.path), pair.heading)
        if printed not in out:
            out.append(printed)
    return out


def printed_path(path: str) -> str:
    """A typed vault path as kimun prints it: :class:`~askkit.VaultPath`, the one rule
    (sanitised, lower-cased; ``.`` and ``..`` kept, as printing keeps them, so a path
    that climbs out of the vault never comes to name a note in it). A printed path
    prints unchanged, but for a component kimun's trim left ending in spaces
    (``"note. ."`` prints ``"note. "``, which prints ``"note"``).

    >>> printed_path("Linking notes and files/Embed files.md"), printed_path("../A.md")
    ('linking notes and files/embed files.md', '../a.md')
    """
    return str(VaultPath(path))


def typed_section(text: str) -> tuple[str, str | None]:
    """``(path, heading or None)`` of one ``path#heading`` as a user types it (no ``#``: the
    whole note). The path ends at the first ``.md#`` (spaces allowed before the ``#``: an
    on-disk name may hold a ``#``, which kimun's printed path never does), else at the
    first ``#``; both parts trimmed.

    >>> typed_section(" C# tips.md#Generics ")
    ('C# tips.md', 'Generics')
    >>> typed_section("notes/a.md"), typed_section("a#b")
    (('notes/a.md', None), ('a', 'b'))
    """
    text = text.strip()
    note = _NOTE_THEN_HASH.search(text)
    at = note.end() - 1 if note is not None else text.find("#")
    if at < 0:
        return text, None
    return text[:at].strip(), _heading(text[at + 1 :].strip())


def _ratio(typed: str, candidate: str) -> float:
    """How close ``candidate`` is to ``typed``: difflib's ratio averaged with the share of
    ``typed`` found in it in one piece (so a heading that holds what was typed ranks
    above a shorter one that merely resembles it)."""
    if not typed or not candidate:
        return 0.0
    matcher = difflib.SequenceMatcher(None, typed, candidate, autojunk=False)
    longest = matcher.find_longest_match(0, len(typed), 0, len(candidate)).size
    return (matcher.ratio() + longest / len(typed)) / 2


def _closest(scored: Iterable[tuple[float, str]], n: int) -> list[str]:
    """The ``n`` best names scoring at least :data:`_CLOSE` and within :data:`_NEAR` of the
    best (one clear match is named alone)."""
    ranked = sorted((-score, name) for score, name in scored if score >= _CLOSE)
    if not ranked:
        return []
    best = -ranked[0][0]
    return [name for score, name in ranked[:n] if -score >= best - _NEAR]


def closest_paths(path: str, listing: Iterable[str], n: int = SUGGESTIONS) -> list[str]:
    """The ``n`` printed vault paths closest to ``path`` (difflib), best first: by the
    whole path or by the file name alone (its ``.md`` aside), whichever is closer
    (:class:`difflib.SequenceMatcher`'s ratio averaged with the share of the typed text
    found in one piece); none below 0.6, nor 0.15 below the best.

    >>> listing = ["linking notes and files/embed files.md", "plugins/canvas.md"]
    >>> closest_paths("Embed file.md", listing)
    ['linking notes and files/embed files.md']
    """
    typed = printed_path(path)
    name = _stem(typed)
    return _closest(
        (
            (max(_ratio(typed, listed), _ratio(name, _stem(listed))), listed)
            for listed in dict.fromkeys(listing)
        ),
        n,
    )


def _stem(path: str) -> str:
    """The file name without ``.md`` (every note shares the extension: it says nothing)."""
    name = path.rsplit("/", 1)[-1]
    return name.removesuffix(".md")


def closest_headings(heading: str, headings: Iterable[str], n: int = SUGGESTIONS) -> list[str]:
    """The ``n`` headings closest to ``heading`` (difflib, case aside, as
    :func:`closest_paths` scores them), best first. The headings are given back as the
    note writes them.

    >>> closest_headings("embed a note", ["Embed a note in another note", "Embed a canvas"])
    ['Embed a note in another note', 'Embed a canvas']
    """
    typed = heading.casefold()
    return _closest(((_ratio(typed, h.casefold()), h) for h in set(headings)), n)


def _heading(value: object) -> str | None:
    """A heading of interest: a blank or missing one means the whole note."""
    if (
        value is None
        or value is pd.NA
        or (isinstance(value, float) and math.isnan(value))
        or value == ""
    ):
        return None
    return str(value)
