"""The sources DataFrame's schema: every column, its dtype and its meaning, in one place.

:mod:`askkit.frame` re-exports :data:`COLUMNS`, :data:`ERROR_COLUMNS` and
:func:`empty_frame`; the README's schema table is written from
:data:`DESCRIPTIONS`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "COLUMNS",
    "DESCRIPTIONS",
    "ERROR_COLUMNS",
    "SHARED_STRING",
    "STRING",
    "empty_errors",
    "empty_frame",
]

#: pandas' string dtype backed by Arrow, with NaN as the missing value (the
#: default ``str`` dtype of pandas 3): Arrow buffers are shared, not copied.
STRING = pd.StringDtype("pyarrow", na_value=np.nan)
#: The same ``str`` dtype backed by Python objects, for a value repeated on each
#: row of a turn (question and answer): the rows share one string object per
#: turn instead of holding a copy each (an answer is often as long as all its
#: chunks together).
SHARED_STRING = pd.StringDtype("python", na_value=np.nan)
_INT = np.dtype("int64")
_FLOAT = np.dtype("float64")
_BOOL = np.dtype("bool")
_DATETIME = np.dtype("datetime64[ns]")

#: Column name -> dtype, in frame order. The names in the issue's list never change.
COLUMNS: dict[str, Any] = {
    "turn_id": STRING,
    "question": SHARED_STRING,
    "ordinal": _INT,
    "rank": _INT,
    "path": STRING,
    "note": STRING,
    "folder": STRING,
    "heading": STRING,
    "match_heading": STRING,
    "date": _DATETIME,
    "is_journal": _BOOL,
    "score": _FLOAT,
    "text": STRING,
    "text_chars": _INT,
    "hash": STRING,
    "cited": _BOOL,
    "score_rank": _INT,
    "score_gap": _FLOAT,
    "score_z": _FLOAT,
    "title": STRING,
    "wire_date": STRING,
    "answer": SHARED_STRING,
    "line": _INT,
}

#: What each column holds (the README's table).
DESCRIPTIONS: dict[str, str] = {
    "turn_id": "the turn's `id`; when absent `<file name>:<line>` for a file, "
    "`turn-<n>` (1-based) for an in-memory list",
    "question": "the turn's question (`''` when unknown) on each of its rows, one shared "
    "string object per turn",
    "ordinal": "kimun's ordinal: the wire `ordinal`, or `rank` when the server omitted it (0)",
    "rank": "1-based position in the turn's source list, as received",
    "path": "the vault path as `VaultPath` prints it (kimun's sanitization)",
    "note": "the file stem (`VaultPath.stem`: name without `.md`)",
    "folder": "the flattened parent folder (`''` at the top)",
    "heading": "`AskSource.heading`: date prefix dropped, breadcrumb joined with ` › `",
    "match_heading": "`AskSource.match_heading()`: the part after the last ` › `",
    "date": "the wire date; NaT when absent or outside datetime64[ns] (1677-09-22..2262-04-11)",
    "is_journal": "the chunk has a wire date (kimun dates only `YYYY-MM-DD.md` notes)",
    "score": "`similarity_score` (higher is better)",
    "text": "the chunk text",
    "text_chars": "`len(text)` in code points (not UTF-8 bytes)",
    "hash": "the note's content hash",
    "cited": "the answer cites this ordinal (`citations.scan` semantics)",
    "score_rank": "rank by score within the turn, descending, ties share the best rank (min)",
    "score_gap": "the turn's top score minus this score (0 for the best)",
    "score_z": "z-score within the turn, population std (ddof=0); 0 when all scores "
    "are equal, a single-source turn included",
    "title": "the raw wire title (U+001F breadcrumb); kept so `to_sources` is lossless",
    "wire_date": "the wire date string verbatim (`YYYY-MM-DD`), NaN when absent",
    "answer": "the turn's answer (`''` when none) on each of its rows, one shared "
    "string object per turn",
    "line": "1-based line of the JSONL file (item number for in-memory input)",
}

#: The lenient mode's errors frame: one row per rejected record.
ERROR_COLUMNS: dict[str, Any] = {
    "file": STRING,
    "line": _INT,
    "field": STRING,
    "value": STRING,
    "message": STRING,
}


def empty_frame() -> pd.DataFrame:
    """A frame with no rows and the full schema.

    >>> empty_frame().dtypes["ordinal"], len(empty_frame().columns) == len(COLUMNS)
    (dtype('int64'), True)
    """
    return pd.DataFrame({name: pd.Series([], dtype=dtype) for name, dtype in COLUMNS.items()})


def empty_errors() -> pd.DataFrame:
    """An errors frame with no rows."""
    return pd.DataFrame({name: pd.Series([], dtype=dt) for name, dt in ERROR_COLUMNS.items()})
