"""Judgments and runs on disk, and the document ids metrics compare.

Document ids
------------
Note level: the vault path as :class:`~askkit.VaultPath` prints it
(``journal/2026-04-08.md``). Section level: ``path#heading`` where heading
is the section's innermost heading (``journal/2026-04-08.md#Afternoon``).
``#`` never occurs in a printed vault path (kimun turns it into ``_``), so the
first ``#`` splits an id unambiguously. In a sources frame the innermost
heading is the last non-empty U+001F segment of the raw wire ``title``
(exact even when a heading contains `` › ``; a journal section whose only
heading is its date keeps that date, as a judgment names it), and
``match_heading`` when the frame has no title. In TREC files whitespace and
``%`` inside ids are percent-encoded (``%20``, ``%09``, ``%0A``, ``%0D``,
``%0B``, ``%0C``, ``%25``), since TREC columns are whitespace-separated.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from askkit._atomic import atomic_write_text
from askkit._text import RUST_WHITESPACE
from askkit.errors import SchemaError
from askkit.frame.schema import STRING
from askkit.sources import BREADCRUMB_SEP, VaultPath

__all__ = [
    "QRELS_COLUMNS",
    "Level",
    "Queries",
    "decode_id",
    "doc_ids",
    "encode_id",
    "qrels_doc_ids",
    "read_qrels",
    "read_queries",
    "read_trec_run",
    "write_qrels",
]

Level = Literal["note", "section"]
#: The qrels frame: column -> dtype.
QRELS_COLUMNS: dict[str, Any] = {
    "query_id": STRING,
    "path": STRING,
    "heading": STRING,
    "grade": np.dtype("int64"),
}
_ENCODE: tuple[tuple[str, str], ...] = (
    ("%", "%25"),
    (" ", "%20"),
    ("\t", "%09"),
    ("\n", "%0A"),
    ("\r", "%0D"),
    ("\x0b", "%0B"),
    ("\x0c", "%0C"),
)
PathOrFrame = str | os.PathLike[str] | pd.DataFrame


def encode_id(values: pd.Series) -> pd.Series:
    """Percent-encode ``%`` and whitespace so an id is one TREC column.

    >>> encode_id(pd.Series(["a.md#Bake log", "50%"])).tolist()
    ['a.md#Bake%20log', '50%25']
    """
    out = values.astype(STRING)
    for raw, code in _ENCODE:
        out = out.str.replace(raw, code, regex=False)
    return out


def decode_id(values: pd.Series) -> pd.Series:
    """Undo :func:`encode_id` (``%25`` last, so ``%2520`` stays ``%20``).

    >>> decode_id(pd.Series(["a.md#Bake%20log", "%2520"])).tolist()
    ['a.md#Bake log', '%20']
    """
    out = values.astype(STRING)
    for raw, code in reversed(_ENCODE):
        out = out.str.replace(code, raw, regex=False)
    return out


def _arrow(values: pd.Series) -> pa.ChunkedArray:
    return pa.chunked_array([pa.array(values.astype(STRING).to_numpy(), pa.string())])


def _innermost(title: pd.Series) -> pd.Series:
    """The last non-empty U+001F segment of each (Rust-trimmed) title."""
    arr = pc.utf8_trim(_arrow(title), characters=RUST_WHITESPACE)
    arr = pc.utf8_rtrim(arr, characters=BREADCRUMB_SEP)
    arr = pc.replace_substring_regex(arr, "(?s)^.*" + BREADCRUMB_SEP, "")
    return pd.Series(pd.array(arr, dtype=STRING), index=title.index)


def doc_ids(run: pd.DataFrame, level: Level) -> pd.Series:
    """The document id of each row of a sources frame (or of a frame with a ``doc`` column).

    >>> f = pd.DataFrame({"path": ["j/2026-04-21.md", "b.md"],
    ...                   "title": ["2026-04-21", "Bread\\x1fBake log"]})
    >>> doc_ids(f, "section").tolist(), doc_ids(f, "note").tolist()
    (['j/2026-04-21.md#2026-04-21', 'b.md#Bake log'], ['j/2026-04-21.md', 'b.md'])
    """
    if "doc" in run.columns:
        return run["doc"].astype(STRING)
    if "path" not in run.columns:
        raise SchemaError(
            "the run has no 'path' (or 'doc') column; build it with askkit.frame.sources_frame",
            field="columns",
            value=list(run.columns),
        )
    path = run["path"].astype(STRING)
    if level == "note":
        return path
    if level != "section":
        raise ValueError(f"level must be 'note' or 'section', got {level!r}")
    if "title" in run.columns:
        heading = _innermost(run["title"].fillna(""))
        if "match_heading" in run.columns:
            heading = heading.where(run["title"].notna(), run["match_heading"].astype(STRING))
    elif "match_heading" in run.columns:
        heading = run["match_heading"].astype(STRING)
    else:
        raise SchemaError(
            "section level needs a 'title' or 'match_heading' column",
            field="columns",
            value=list(run.columns),
        )
    return path + "#" + heading.fillna("")


def qrels_doc_ids(qrels: pd.DataFrame, level: Level) -> pd.Series:
    """The document id of each judgment (see the module docstring)."""
    if level == "note":
        return qrels["path"].astype(STRING)
    if level != "section":
        raise ValueError(f"level must be 'note' or 'section', got {level!r}")
    return qrels["path"].astype(STRING) + "#" + qrels["heading"].astype(STRING)


# --------------------------------------------------------------------------- qrels


def _where(source: object, line: int | None = None) -> dict[str, Any]:
    return {"file": str(source) if source is not None else None, "line": line}


def _normalise(frame: pd.DataFrame, source: object, first_line: int) -> pd.DataFrame:
    """Validate and convert to :data:`QRELS_COLUMNS` (``first_line``: file line of row 0)."""
    missing = [c for c in ("query_id", "path", "grade") if c not in frame.columns]
    if missing:
        raise SchemaError(
            "qrels need columns query_id, path, grade (and optionally heading); "
            "write a header line 'query_id<TAB>path<TAB>heading<TAB>grade'",
            field="columns",
            value=missing,
            **_where(source),
        )
    n = len(frame)
    raw_grade = frame["grade"]
    grade = pd.to_numeric(raw_grade, errors="coerce")
    bad = grade.isna().to_numpy() | (grade.to_numpy(dtype=np.float64, na_value=0.5) % 1 != 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise SchemaError(
            "a grade must be an integer (0 = not relevant, 1-3 = relevant)",
            field="grade",
            value=raw_grade.iloc[i],
            **_where(source, first_line + i if source is not None else None),
        )
    qid = frame["query_id"].astype(STRING)
    path = frame["path"].astype(STRING)
    blank = (qid.fillna("") == "").to_numpy() | (path.fillna("") == "").to_numpy()
    if blank.any():
        i = int(np.flatnonzero(blank)[0])
        raise SchemaError(
            "query_id and path must not be empty",
            field="query_id" if qid.fillna("").iloc[i] == "" else "path",
            value="",
            **_where(source, first_line + i if source is not None else None),
        )
    heading = (
        frame["heading"].astype(STRING).fillna("")
        if "heading" in frame.columns
        else pd.Series([""] * n, dtype=STRING, index=frame.index)
    )
    codes, uniques = pd.factorize(path)
    printed = np.asarray([str(VaultPath(str(p))) for p in uniques], dtype=object)[codes]
    return pd.DataFrame(
        {
            "query_id": qid.to_numpy(),
            "path": pd.array(printed, dtype=STRING),
            "heading": heading.to_numpy(),
            "grade": grade.to_numpy(dtype=np.int64),
        }
    ).astype(QRELS_COLUMNS)


def _sniff(text: str) -> Literal["tsv", "trec"]:
    for line in text.splitlines():
        if line.strip():
            return "tsv" if "query_id" in line.split("\t") else "trec"
    return "tsv"


def _read_whitespace(text: str, names: list[str], source: object) -> pd.DataFrame:
    if not text.strip():
        return pd.DataFrame({n: pd.Series([], dtype=STRING) for n in names})
    try:
        frame = pd.read_csv(
            io.StringIO(text),
            sep=r"\s+",
            header=None,
            names=names,
            dtype=str,
            keep_default_na=False,
            quoting=csv.QUOTE_NONE,
            engine="c",
        )
    except (pd.errors.ParserError, ValueError) as exc:
        raise SchemaError(
            f"not a TREC file with {len(names)} whitespace-separated columns "
            f"({' '.join(names)}): {exc}",
            has_value=False,
            **_where(source),
        ) from None
    if frame[names[-1]].eq("").any() or frame[names[-1]].isna().any():
        i = int(np.flatnonzero(frame[names[-1]].fillna("").eq("").to_numpy())[0])
        raise SchemaError(
            f"expected {len(names)} columns ({' '.join(names)})",
            field=names[-1],
            has_value=False,
            **_where(source, i + 1),
        )
    return frame


def read_qrels(
    source: PathOrFrame, *, format: Literal["auto", "tsv", "trec"] = "auto"
) -> pd.DataFrame:
    """Read judgments: columns ``query_id``, ``path``, ``heading``, ``grade`` (int64).

    Parameters
    ----------
    source:
        A frame with those columns (``heading`` optional), or a file: a TSV
        with a header line naming ``query_id``, ``path``, optionally
        ``heading``, and ``grade``; or TREC qrels, ``qid 0 docid grade``,
        where ``docid`` is a path or ``path#heading`` (percent-encoded
        whitespace, see :func:`encode_id`).
    format:
        ``"auto"`` (default): a first line with a ``query_id`` column is a
        TSV, anything else TREC.

    ``path`` is printed as :class:`~askkit.VaultPath` prints it; ``heading``
    is ``''`` when absent. Rows keep the file's order; duplicates are kept
    (scoring takes the highest grade).

    Examples
    --------
    >>> q = read_qrels("data/qrels.tsv")
    >>> q.iloc[0].astype(str).tolist()
    ['q01', 'projects/sourdough.md', 'Feeding schedule', '3']
    >>> one = read_qrels(pd.DataFrame({"query_id": [1], "path": ["A.md"], "grade": [2]}))
    >>> one.iloc[0].astype(str).tolist(), one.dtypes["grade"]
    (['1', 'a.md', '', '2'], dtype('int64'))
    """
    if isinstance(source, pd.DataFrame):
        return _normalise(source.reset_index(drop=True), None, 1)
    path = Path(source)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SchemaError(
            f"cannot read the qrels file: {exc}", has_value=False, file=str(path)
        ) from None
    kind = _sniff(text) if format == "auto" else format
    if kind == "tsv" and text.strip():  # an empty file (not even a header) has no rows: below
        frame = pd.read_csv(
            io.StringIO(text),
            sep="\t",
            dtype=str,
            keep_default_na=False,
            quoting=csv.QUOTE_MINIMAL,
            skip_blank_lines=True,
        )
        return _normalise(frame, path, 2)
    trec = _read_whitespace(text, ["query_id", "iteration", "docid", "grade"], path)
    doc = decode_id(trec["docid"])
    parts = doc.str.split("#", n=1, expand=True)
    heading = parts[1] if parts.shape[1] > 1 else pd.Series([""] * len(trec), dtype=STRING)
    frame = pd.DataFrame(
        {
            "query_id": decode_id(trec["query_id"]),
            "path": parts[0] if len(trec) else doc,
            "heading": heading.fillna("") if len(trec) else doc,
            "grade": trec["grade"],
        }
    )
    return _normalise(frame, path, 1)


def write_qrels(
    qrels: pd.DataFrame,
    path: str | os.PathLike[str],
    *,
    format: Literal["tsv", "trec"] = "tsv",
) -> None:
    """Write judgments atomically (temporary file, then rename): a reader never sees half a file.

    ``format="tsv"`` writes the header ``query_id path heading grade``
    (tab-separated; a field holding a tab, newline or quote is quoted);
    ``"trec"`` writes ``qid 0 docid grade`` with ``docid`` = ``path`` or
    ``path#heading``. Rows keep their order.

    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "qrels.tsv"
    >>> write_qrels(read_qrels("data/qrels.tsv"), target)
    >>> read_qrels(target).equals(read_qrels("data/qrels.tsv"))
    True
    """
    frame = read_qrels(qrels)
    if format == "tsv":
        text = frame.to_csv(sep="\t", index=False, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    elif format == "trec":
        heading = frame["heading"]
        doc = frame["path"].where(heading == "", frame["path"] + "#" + heading)
        lines = (
            encode_id(frame["query_id"])
            + " 0 "
            + encode_id(doc)
            + " "
            + frame["grade"].astype(str).astype(STRING)
        )
        text = "".join(line + "\n" for line in lines.tolist())
    else:
        raise ValueError(f"format must be 'tsv' or 'trec', got {format!r}")
    atomic_write_text(path, text)


def read_trec_run(source: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a TREC run (``qid Q0 docid rank score tag``) as a run frame for ``evaluate``.

    Columns: ``turn_id``, ``doc`` (decoded), ``rank`` (int64), ``score``
    (float64), ``tag``. :func:`askkit.metrics.evaluate` takes it as it takes a
    sources frame (the ``doc`` column is used as the document id at any level).
    """
    path = Path(source)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SchemaError(
            f"cannot read the run file: {exc}", has_value=False, file=str(path)
        ) from None
    raw = _read_whitespace(text, ["turn_id", "q0", "doc", "rank", "score", "tag"], path)
    rank = pd.to_numeric(raw["rank"], errors="coerce")
    score = pd.to_numeric(raw["score"], errors="coerce")
    for name, values in (("rank", rank), ("score", score)):
        bad = values.isna().to_numpy() & (raw[name].str.lower() != "nan").to_numpy()
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise SchemaError(
                f"{name} must be a number",
                field=name,
                value=raw[name].iloc[i],
                **_where(path, i + 1),
            )
    return pd.DataFrame(
        {
            "turn_id": decode_id(raw["turn_id"]),
            "doc": decode_id(raw["doc"]),
            "rank": rank.fillna(0).to_numpy(dtype=np.int64),
            "score": score.to_numpy(dtype=np.float64),
            "tag": raw["tag"].astype(STRING),
        }
    )


#: Column names :func:`read_queries` accepts for the query text, in preference order.
_TEXT_COLUMNS = ("text", "question", "query")
Queries = Mapping[str, str] | pd.DataFrame | str | os.PathLike[str]


def read_queries(queries: Queries) -> dict[str, str]:
    """``{query_id: text}`` from a mapping, a frame or a TSV file with a header.

    A frame (or the file, read as one) needs a ``query_id`` column and the
    text in ``text``, ``question`` (``data/queries.tsv``) or ``query``.

    >>> read_queries(pd.DataFrame({"query_id": ["q1"], "question": ["starter?"]}))
    {'q1': 'starter?'}
    """
    if isinstance(queries, Mapping):
        return {str(k): v for k, v in queries.items()}
    source: object = "queries"
    if not isinstance(queries, pd.DataFrame):
        source = os.fspath(queries)
        try:
            queries = pd.read_csv(
                source, sep="\t", dtype=str, keep_default_na=False, quoting=3, encoding="utf-8"
            )
        except FileNotFoundError:
            raise SchemaError(
                "no such queries file: give a TSV with a header query_id<TAB>question",
                value=source,
            ) from None
        except (OSError, UnicodeDecodeError, pd.errors.ParserError) as exc:
            raise SchemaError(f"cannot read the queries: {exc}", value=source) from None
    text = next((c for c in _TEXT_COLUMNS if c in queries.columns), None)
    if "query_id" not in queries.columns or text is None:
        raise SchemaError(
            "queries need a query_id column and a text (or question) column",
            field="columns",
            value=[str(c) for c in queries.columns],
        )
    ids = queries["query_id"].astype(str).tolist()
    duplicated = pd.Series(ids).duplicated()
    if duplicated.any():
        at = int(np.argmax(duplicated.to_numpy()))
        raise SchemaError("duplicate query id", field=f"query_id[{at}]", value=ids[at])
    return dict(zip(ids, queries[text].fillna("").astype(str).tolist(), strict=True))
