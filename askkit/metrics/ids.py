"""The document ids metrics compare, and the rules that make them.

Ids in files are opaque and exact: a TREC qrels or run file's ids, and a
TSV qrels file's paths, are kept byte for byte (case, ``#``, ``:``, ``/`` and
``%`` included) and compared as they are, as trec_eval compares them. A TREC
qrels frame keeps them in its ``doc`` column, which is the document id at
every level.

Where ids are kimun vault paths, kimun's path rules apply only when asked:
``ids="vault"`` prints every path as :class:`~askkit.VaultPath` does
(lowercase, ``:?*<>|[]^`` replaced, ...), the rule a sources frame built from
kimun's payloads already follows, so both sides are normalised the same way.

Built from columns: note level is the printed path; section level is
``path#heading`` with the section's innermost heading
(:func:`askkit.sources.innermost_heading`), or the path alone when there is
none (never parsed out of an id). In a sources frame that heading comes from
the raw wire ``title`` (exact even when a heading contains `` › ``; a journal
section whose only heading is its date is named by that date, as a judgment
names it), and is ``match_heading`` when the frame has no title.

Written to a TREC file, an id holding ASCII whitespace is percent-encoded
(:func:`trec_id`, :func:`encode_id`); :func:`decode_id` reads it back (see
:mod:`askkit.metrics.qrels`).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd

from askkit.errors import SchemaError
from askkit.frame.schema import STRING
from askkit.metrics._trec import decode_id, encode_id, text_column, trec_id
from askkit.sources import VaultPath, innermost_heading

__all__ = [
    "Ids",
    "Level",
    "check_ids",
    "check_level",
    "decode_id",
    "doc_ids",
    "encode_id",
    "judged_level",
    "qrels_doc_ids",
    "trec_id",
    "vault_ids",
]

Level = Literal["note", "section"]
#: How ids in files are compared: as written, or as kimun prints vault paths.
Ids = Literal["exact", "vault"]


def check_level(level: str) -> None:
    """Refuse a level that is neither ``"note"`` nor ``"section"``."""
    if level not in ("note", "section"):
        raise ValueError(f"level must be 'note' or 'section', got {level!r}")


def check_ids(ids: str) -> None:
    """Refuse an ``ids`` rule that is neither ``"exact"`` nor ``"vault"``."""
    if ids not in ("exact", "vault"):
        raise ValueError(f"ids must be 'exact' or 'vault', got {ids!r}")


def vault_ids(values: pd.Series) -> pd.Series:
    """Each id as :class:`~askkit.VaultPath` prints it, computed once per distinct id.

    >>> vault_ids(pd.Series(["Notes/A.md", "b.md"])).tolist()
    ['notes/a.md', 'b.md']
    """
    codes, uniques = pd.factorize(values.astype(STRING))
    printed = np.asarray([str(VaultPath(str(p))) for p in uniques], dtype=object)
    return pd.Series(pd.array(printed[codes], dtype=STRING), index=values.index)


def _innermost(title: pd.Series) -> pd.Series:
    """:func:`~askkit.sources.innermost_heading` of each title, once per distinct title."""
    codes, uniques = pd.factorize(title)
    headings = np.asarray([innermost_heading(str(t)) for t in uniques], dtype=object)
    return pd.Series(pd.array(headings[codes], dtype=STRING), index=title.index)


def doc_ids(run: pd.DataFrame, level: Level) -> pd.Series:
    """The document id of each row of a sources frame (or of a frame with a ``doc`` column).

    >>> f = pd.DataFrame({"path": ["j/2026-04-21.md", "b.md"],
    ...                   "title": ["2026-04-21", "Bread\\x1fBake log"]})
    >>> doc_ids(f, "section").tolist(), doc_ids(f, "note").tolist()
    (['j/2026-04-21.md#2026-04-21', 'b.md#Bake log'], ['j/2026-04-21.md', 'b.md'])
    """
    if "doc" in run.columns:
        return text_column(run["doc"], "doc")
    if "path" not in run.columns:
        raise SchemaError(
            "the run has no 'path' (or 'doc') column; build it with askkit.frame.sources_frame",
            field="columns",
            value=list(run.columns),
        )
    path = text_column(run["path"], "path")
    if level == "note":
        return path
    check_level(level)
    if "title" in run.columns:
        heading = _innermost(text_column(run["title"], "title").fillna(""))
        if "match_heading" in run.columns:
            match = text_column(run["match_heading"], "match_heading")
            heading = heading.where(run["title"].notna(), match)
    elif "match_heading" in run.columns:
        heading = text_column(run["match_heading"], "match_heading")
    else:
        raise SchemaError(
            "section level needs a 'title' or 'match_heading' column",
            field="columns",
            value=list(run.columns),
        )
    return _section_ids(path, heading.fillna(""))


def _section_ids(path: pd.Series, heading: pd.Series) -> pd.Series:
    """``path#heading``, or the path alone where the heading is empty (a note
    without headings; a judgment that names no section)."""
    return path.where(heading == "", path + "#" + heading)


def judged_level(qrels: pd.DataFrame) -> Level:
    """The level judgments were made at: ``"section"`` when one names a section (a
    non-empty ``heading``, or a TREC document id ``path#heading``), else ``"note"``.

    >>> judged_level(pd.DataFrame({"path": ["a.md"], "heading": ["Feeding schedule"]}))
    'section'
    >>> judged_level(pd.DataFrame({"path": ["a.md"], "heading": [""]}))
    'note'
    >>> judged_level(pd.DataFrame({"doc": ["a.md#Top"], "path": ["a.md#Top"], "heading": [""]}))
    'section'
    """
    if "heading" in qrels.columns and bool(
        qrels["heading"].astype(STRING).fillna("").str.strip().ne("").any()
    ):
        return "section"
    if "doc" in qrels.columns and bool(
        qrels["doc"].astype(STRING).str.contains("#", regex=False).fillna(False).any()
    ):
        return "section"
    return "note"


def qrels_doc_ids(qrels: pd.DataFrame, level: Level) -> pd.Series:
    """The document id of each judgment (see the module docstring): the ``doc``
    column when there is one (TREC qrels: opaque ids, at every level).

    >>> q = pd.DataFrame({"path": ["a.md", "b.md"], "heading": ["Top", ""]})
    >>> qrels_doc_ids(q, "section").tolist()
    ['a.md#Top', 'b.md']
    """
    check_level(level)
    if "doc" in qrels.columns:
        return qrels["doc"].astype(STRING)
    if level == "note":
        return qrels["path"].astype(STRING)
    return _section_ids(qrels["path"].astype(STRING), qrels["heading"].astype(STRING).fillna(""))
