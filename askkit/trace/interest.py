"""What a trace follows: a note, or one section of it, named by path and innermost heading.

Section ids are :mod:`askkit.metrics`' (``path#heading``, the innermost
heading; the path alone for a whole note); a chunk belongs to a section when
its path is the note's and its title's innermost heading is the heading.

Examples
--------
>>> sections_of([("a.md", "Intro"), "b.md"])
[Interest(path='a.md', heading='Intro'), Interest(path='b.md', heading=None)]
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import pandas as pd

from askkit.errors import SchemaError
from askkit.sources import innermost_heading
from askkit.wire import ChunkResult

__all__ = ["Interest", "section_id", "sections_of"]


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

    A frame's blank heading means the whole note; duplicates are followed once.

    >>> sections_of([("a.md", "Intro"), "b.md", ("a.md", "Intro")])
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
        if pair not in out:
            out.append(pair)
    return out


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
