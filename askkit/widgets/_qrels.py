"""The Labeler's judgments file: a qrels TSV through :mod:`askkit.metrics`.

The format is the one :func:`askkit.metrics.read_qrels` and
:func:`askkit.metrics.write_qrels` read and write (``data/qrels.tsv``)::

    query_id<TAB>path<TAB>heading<TAB>grade

``heading`` is the source's innermost heading (may be empty), ``grade`` an
integer 0-3. A field holding a tab, line break or quote is quoted, so any
heading reads back as written. ``write_qrels`` writes atomically (a temporary
file in the same folder, then a rename, via :mod:`askkit._atomic`), so a
reader, or a writer killed mid-write, never leaves a half-written file.

:func:`update_judgments` re-reads the file, merges new grades and writes it
back while holding the file's lock (:func:`askkit._atomic.locked`, a
``flock`` on ``.<name>.lock`` beside it): Labelers in several processes
writing one file take turns, and none loses another's judgments.
:func:`save_judgments` takes the same lock. This module only turns the
metrics frame into the Labeler's ``{(query_id, path, heading): grade}`` and
back.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from askkit._atomic import locked
from askkit.metrics import read_qrels, write_qrels
from askkit.sources import AskSource, VaultPath

__all__ = [
    "GRADES",
    "Key",
    "judgment_key",
    "load_judgments",
    "save_judgments",
    "update_judgments",
]

#: The grades a judgment may take.
GRADES = (0, 1, 2, 3)
Key = tuple[str, str, str]


def judgment_key(query_id: str, source: AskSource) -> Key:
    """The qrels key of a source: query id, path as the qrels file prints it, innermost heading."""
    return (query_id, str(VaultPath(str(source.path))), source.innermost_heading)


def load_judgments(path: str | os.PathLike[str]) -> dict[Key, int]:
    """``{(query_id, path, heading): grade}`` in file order (a later duplicate wins);
    ``{}`` when the file is absent or empty. A malformed file raises
    :class:`~askkit.SchemaError` (it is never overwritten)."""
    file = Path(path)
    if not file.exists() or not file.read_bytes().strip():
        return {}
    frame = read_qrels(file, format="tsv")
    keys = zip(
        frame["query_id"].tolist(),
        frame["path"].tolist(),
        frame["heading"].tolist(),
        strict=True,
    )
    return {
        (str(q), str(p), str(h)): int(g)
        for (q, p, h), g in zip(keys, frame["grade"].tolist(), strict=True)
    }


def save_judgments(path: str | os.PathLike[str], judgments: Mapping[Key, int]) -> None:
    """Replace ``path`` with ``judgments`` atomically (header first, given order).

    A field that cannot be written (not valid Unicode text) raises
    :class:`~askkit.SchemaError` naming it; the file is then left as it was.
    """
    _check_grades(judgments)
    with locked(path):
        _write(path, judgments)


def update_judgments(path: str | os.PathLike[str], changes: Mapping[Key, int]) -> dict[Key, int]:
    """Merge ``changes`` into the judgments file and return the file's judgments.

    The file is read again, ``changes`` merged in (a regrade replaces the old
    grade, in place) and the result written atomically, all under the file's
    lock: concurrent updates from other processes take turns, so every
    judgment an update returns is in the file. A malformed file raises
    :class:`~askkit.SchemaError` and is never overwritten.
    """
    _check_grades(changes)
    with locked(path):
        merged = load_judgments(path)
        merged.update(changes)
        _write(path, merged)
    return merged


def _check_grades(judgments: Mapping[Key, int]) -> None:
    bad = {k: g for k, g in judgments.items() if g not in GRADES}
    if bad:
        raise ValueError(f"grades must be 0-3, got {bad}")


def _write(path: str | os.PathLike[str], judgments: Mapping[Key, int]) -> None:
    keys = list(judgments)
    # object columns: a value that is not valid text reaches write_qrels, which
    # names it in a SchemaError, instead of failing in pandas' Arrow conversion
    frame = pd.DataFrame(
        {
            "query_id": pd.Series([k[0] for k in keys], dtype=object),
            "path": pd.Series([k[1] for k in keys], dtype=object),
            "heading": pd.Series([k[2] for k in keys], dtype=object),
            "grade": pd.Series([judgments[k] for k in keys], dtype="int64"),
        }
    )
    write_qrels(frame, path, format="tsv")
