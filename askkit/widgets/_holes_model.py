"""The Labeler's walk through a holes file: each hole as a source the reader can open.

Pure functions: :class:`~askkit.widgets.Labeler` (``holes=``) calls them and
shows the :class:`HoleView` in its :class:`~askkit.widgets.SourceReader`.

A hole (:mod:`askkit.gate.holes`) names a section by its note's path and
innermost heading, not by a retrieved chunk: :func:`hole_view` reads the note
from the vault now and builds the source the reader shows, the first section
of the note whose innermost heading (:func:`askkit.sources.innermost_heading`
of kimun's breadcrumb) is the hole's. A hole with no heading (note level, or
a note's text before its first heading: both are judged as ``path, ""``) is the
whole note. A note that is no longer in the vault, or no longer has the
heading, gives a view with a :attr:`HoleView.problem` saying so: the reader
still opens what it can (the note from the top) and nothing is dropped.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from askkit.errors import AskkitError
from askkit.sources import AskSource, VaultPath, heading_from_title, innermost_heading
from askkit.vault import Vault
from askkit.vault.chunking import DEFAULT_KIMUN, KimunVersion, chunk_note

__all__ = ["HoleView", "hole_question", "hole_view", "holes_of"]


@dataclass(frozen=True, slots=True)
class HoleView:
    """What the Labeler shows for a hole.

    ``key`` is where its grade goes (``query_id, path, heading``, as the holes
    file gives them); ``source`` what the reader opens; ``problem`` why it cannot be
    graded (``""`` when it can): its note or its heading is gone.
    """

    key: tuple[str, str, str]
    source: AskSource
    question: str
    side: str
    rank: int
    measures: str
    problem: str = ""


def holes_of(frame: pd.DataFrame) -> list[dict[str, object]]:
    """The holes of a :func:`~askkit.gate.read_holes` frame as records, in its order."""
    columns = ["query_id", "path", "heading", "side", "rank", "measures", "question"]
    records: list[dict[str, object]] = [
        {str(k): v for k, v in row.items()}
        for row in frame[columns].astype(object).to_dict("records")
    ]
    return records


def hole_question(question: str, query_id: str, queries: Mapping[str, str]) -> str:
    """The question a hole is judged for: the holes file's, else ``queries``' text for its
    id, else the id itself.

    >>> hole_question("", "q1", {"q1": "rye ratio?"}), hole_question("", "q2", {})
    ('rye ratio?', 'q2')
    """
    return question or queries.get(query_id, "") or query_id


def hole_view(
    vault: Vault,
    hole: Mapping[str, object],
    question: str,
    *,
    kimun: KimunVersion = DEFAULT_KIMUN,
) -> HoleView:
    """The hole's section read from ``vault`` now, as a source the reader can open."""
    path, heading = str(hole["path"]), str(hole["heading"])
    rank = int(str(hole["rank"]))

    def view(text: str, title: str, problem: str = "") -> HoleView:
        source = AskSource(
            VaultPath(path),
            heading_from_title(title, None),
            None,
            float("nan"),  # a hole has no score of its own
            text,
            rank,
            title=title,
        )
        return HoleView(
            key=(str(hole["query_id"]), path, heading),
            source=source,
            question=question,
            side=str(hole["side"]),
            rank=rank,
            measures=str(hole["measures"]),
            problem=problem,
        )

    try:
        note = vault.read(path)
    except (AskkitError, OSError) as exc:
        return view("", heading, f"the note {path} is not in the vault any more ({exc})")
    if not heading:
        return view(note, "")
    for section in chunk_note(note, kimun=kimun):
        if innermost_heading(section.title) == heading:
            return view(section.text, section.title)
    return view("", heading, f"the note {path} no longer has a section headed {heading!r}")
