"""Queries on disk: ``{query_id: text}`` from a mapping, a frame or a TSV file.

What :meth:`askkit.retrieve.LocalIndex.pools`, the dense retrievers' ``pools``
and the Labeler read their questions from (``data/queries.tsv``).
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Mapping

import numpy as np
import pandas as pd

from askkit._files import read_input
from askkit.errors import SchemaError

__all__ = ["Queries", "read_queries"]

#: Column names :func:`read_queries` accepts for the query text, in preference order.
_TEXT_COLUMNS = ("text", "question", "query")
Queries = Mapping[str, str] | pd.DataFrame | str | os.PathLike[str]


def read_queries(queries: Queries) -> dict[str, str]:
    """``{query_id: text}`` from a mapping, a frame or a TSV file with a header.

    A frame (or the file, read as one) needs a ``query_id`` column and the
    text in ``text``, ``question`` (``data/queries.tsv``) or ``query``. A file
    must be a regular UTF-8 file holding at least one query: an empty one (or
    a header alone), a folder, a FIFO or a device raises :class:`SchemaError`
    naming it.

    >>> read_queries(pd.DataFrame({"query_id": ["q1"], "question": ["starter?"]}))
    {'q1': 'starter?'}
    """
    if isinstance(queries, Mapping):
        return {str(k): v for k, v in queries.items()}
    source: str | None = None
    if not isinstance(queries, pd.DataFrame):
        source = os.fspath(queries)
        queries = _queries_file(source)
    text = next((c for c in _TEXT_COLUMNS if c in queries.columns), None)
    if "query_id" not in queries.columns or text is None:
        raise SchemaError(
            "queries need a query_id column and a text (or question) column",
            field="columns",
            value=[str(c) for c in queries.columns],
            file=source,
        )
    ids = queries["query_id"].astype(str).tolist()
    duplicated = pd.Series(ids).duplicated()
    if duplicated.any():
        at = int(np.argmax(duplicated.to_numpy()))
        raise SchemaError("duplicate query id", field=f"query_id[{at}]", value=ids[at], file=source)
    return dict(zip(ids, queries[text].fillna("").astype(str).tolist(), strict=True))


_QUERIES_FORMAT = "give a TSV with a header line query_id<TAB>question and one line per query"


def _queries_file(source: str) -> pd.DataFrame:
    """A queries TSV as a frame of strings, through the one input-file rule."""
    if not os.path.lexists(source):
        raise SchemaError(f"no such queries file: {_QUERIES_FORMAT}", value=source, file=source)
    data = read_input(source, what="queries")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SchemaError(
            f"not UTF-8 (byte {data[exc.start]:#04x}); queries files are read as UTF-8: "
            "convert the file first, e.g. iconv -f latin1 -t utf-8",
            has_value=False,
            file=source,
            line=data.count(b"\n", 0, exc.start) + 1,
        ) from None
    if not text.strip():
        raise SchemaError(
            f"the queries file is empty (no queries): {_QUERIES_FORMAT}",
            has_value=False,
            file=source,
        )
    try:
        frame = pd.read_csv(
            io.StringIO(text), sep="\t", dtype=str, keep_default_na=False, quoting=csv.QUOTE_NONE
        )
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise SchemaError(
            f"not a queries TSV: {' '.join(str(exc).split())}; {_QUERIES_FORMAT}",
            has_value=False,
            file=source,
        ) from None
    if frame.empty:
        raise SchemaError(
            f"the queries file has a header line but no queries: {_QUERIES_FORMAT}",
            value=[str(c) for c in frame.columns],
            field="columns",
            file=source,
        )
    return frame
