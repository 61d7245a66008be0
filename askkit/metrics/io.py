"""Judgments and runs on disk, and the document ids metrics compare.

Document ids
------------
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
``path#heading`` with the section's innermost heading, or the path alone when
there is none (never parsed out of an id). In a sources frame that heading is
the last non-empty U+001F segment of the raw wire ``title`` (exact even when
a heading contains `` › ``; a journal section whose only heading is its date
keeps that date, as a judgment names it), and ``match_heading`` when the
frame has no title.

Writing TREC files, an id with ASCII whitespace (a section id's heading) is
percent-encoded (:func:`encode_id`) so that it stays one column; any other id
is written as it is. Readers never decode. A TSV qrels file quotes a field
holding a tab, CR, LF or ``"`` instead, so every value reads back exactly.
"""

from __future__ import annotations

import csv
import io
import os
import re
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, NamedTuple, overload

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from askkit._atomic import atomic_write_text
from askkit._text import RUST_WHITESPACE
from askkit.errors import SchemaError
from askkit.frame.load import Loaded
from askkit.frame.schema import ERROR_COLUMNS, STRING, empty_errors
from askkit.metrics._trec import read_table
from askkit.sources import BREADCRUMB_SEP, VaultPath

__all__ = [
    "QRELS_COLUMNS",
    "Ids",
    "Level",
    "Queries",
    "decode_id",
    "doc_ids",
    "encode_id",
    "qrels_doc_ids",
    "read_qrels",
    "read_queries",
    "read_trec_run",
    "trec_id",
    "write_qrels",
]

Level = Literal["note", "section"]
#: How ids in files are compared: as written, or as kimun prints vault paths.
Ids = Literal["exact", "vault"]
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
#: The characters a TREC reader splits fields on: the ones :data:`_ENCODE` encodes.
_SPLIT = "[ \t\n\r\x0b\x0c]"
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
    return _section_ids(path, heading.fillna(""))


def _section_ids(path: pd.Series, heading: pd.Series) -> pd.Series:
    """``path#heading``, or the path alone where the heading is empty (a note
    without headings; a judgment that names no section)."""
    return path.where(heading == "", path + "#" + heading)


def qrels_doc_ids(qrels: pd.DataFrame, level: Level) -> pd.Series:
    """The document id of each judgment (see the module docstring): the ``doc``
    column when there is one (TREC qrels: opaque ids, at every level)."""
    if level not in ("note", "section"):
        raise ValueError(f"level must be 'note' or 'section', got {level!r}")
    if "doc" in qrels.columns:
        return qrels["doc"].astype(STRING)
    if level == "note":
        return qrels["path"].astype(STRING)
    return _section_ids(qrels["path"].astype(STRING), qrels["heading"].astype(STRING).fillna(""))


# --------------------------------------------------------------------------- qrels


def _where(source: object, line: int | None = None) -> dict[str, Any]:
    return {"file": str(source) if source is not None else None, "line": line}


def _vault_ids(values: pd.Series) -> pd.Series:
    """Each id as :class:`~askkit.VaultPath` prints it, computed once per distinct id."""
    codes, uniques = pd.factorize(values.astype(STRING))
    printed = np.asarray([str(VaultPath(str(p))) for p in uniques], dtype=object)
    return pd.Series(pd.array(printed[codes], dtype=STRING), index=values.index)


def _check_ids(ids: str) -> None:
    if ids not in ("exact", "vault"):
        raise ValueError(f"ids must be 'exact' or 'vault', got {ids!r}")


_INTEGER = r"^[+-]?[0-9]{1,18}$"
_SURROGATE = re.compile("[\ud800-\udfff]")
_NUMBER = r"^[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|(?i:nan|inf|infinity))$"


def _pd_strings(arr: pa.Array | pa.ChunkedArray) -> Any:
    """An Arrow string column as the frame's string dtype (``large_string``: kept as
    it is; ``string``: only the offsets are widened)."""
    chunked = arr if isinstance(arr, pa.ChunkedArray) else pa.chunked_array([arr])
    if chunked.type != pa.large_string():
        chunked = chunked.cast(pa.large_string())
    return STRING.__from_arrow__(chunked)  # type: ignore[attr-defined]


def _cast(arr: Any, to: pa.DataType) -> np.ndarray[Any, Any] | None:
    """The column as numbers when every value parses (pyarrow's parser), else None."""
    try:
        return np.asarray(pc.cast(arr, to).to_numpy(zero_copy_only=False))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


def _bad_rows(values: pd.Series, pattern: str) -> np.ndarray[Any, Any]:
    arr = pa.array(values.astype(STRING).fillna("").array)
    return ~np.asarray(pc.match_substring_regex(arr, pattern).to_numpy(zero_copy_only=False))


def _text(
    values: pd.Series, name: str, source: object, lines: np.ndarray[Any, Any] | None
) -> pd.Series:
    """A column as the frame's string dtype; a value that is not valid Unicode text
    (a lone surrogate, as an undecodable file name gives) raises :class:`SchemaError`."""
    try:
        return values.astype(STRING)
    except UnicodeEncodeError:
        pass
    for i, value in enumerate(values.tolist()):
        if isinstance(value, str) and _SURROGATE.search(value):
            line = int(lines[i]) if lines is not None else None
            raise SchemaError(
                f"row {i}: not valid Unicode text (a lone surrogate, as an undecodable "
                "file name gives), so it cannot be written as UTF-8; rename the note or "
                "fix the value",
                field=name,
                value=value,
                **_where(source, line),
            )
    return values.astype(STRING)  # not a surrogate after all: let pandas say what it is


def _normalise(
    frame: pd.DataFrame, source: object, lines: np.ndarray[Any, Any] | None, *, strict: bool
) -> tuple[pd.DataFrame, list[SchemaError]]:
    """Validate and convert to :data:`QRELS_COLUMNS` (plus ``doc`` and ``iteration``
    when the frame has them). ``lines``: each row's line in ``source``. Bad rows
    raise (strict) or are dropped and returned as errors."""
    missing = [c for c in ("query_id", "path", "grade") if c not in frame.columns]
    if missing:
        raise SchemaError(
            "qrels need columns query_id, path, grade (and optionally heading); "
            "write a header line 'query_id<TAB>path<TAB>heading<TAB>grade'",
            field="columns",
            value=missing,
            **_where(source),
        )
    frame = frame.reset_index(drop=True)
    for name in ("query_id", "path", "heading", "doc", "iteration"):
        if name in frame.columns:
            frame[name] = _text(frame[name], name, source, lines)
    raw_grade = frame["grade"]
    if pd.api.types.is_integer_dtype(raw_grade.dtype) and not raw_grade.hasnans:
        bad_grade = raw_grade.isna().to_numpy()
    else:
        bad_grade = _bad_rows(raw_grade.astype(str).astype(STRING), _INTEGER)
    qid = frame["query_id"].astype(STRING).fillna("")
    path = frame["path"].astype(STRING).fillna("")
    blank_qid = (qid == "").to_numpy()
    blank_path = (path == "").to_numpy()
    errors: list[SchemaError] = []
    bad = bad_grade | blank_qid | blank_path
    for i in np.flatnonzero(bad).tolist():
        if bad_grade[i]:
            message, name, value = (
                "a grade must be an integer (0 = not relevant, 1-3 = relevant)",
                "grade",
                raw_grade.iloc[i],
            )
        else:
            name = "query_id" if blank_qid[i] else "path"
            message, value = "query_id and path must not be empty", ""
        line = int(lines[i]) if lines is not None else None
        error = SchemaError(message, field=name, value=value, **_where(source, line))
        if strict:
            raise error
        errors.append(error)
    if bad.any():
        keep = ~bad
        frame, qid, path = frame[keep].reset_index(drop=True), qid[keep], path[keep]
        raw_grade = frame["grade"]
    n = len(frame)
    heading = (
        frame["heading"].astype(STRING).fillna("")
        if "heading" in frame.columns
        else pd.Series(_pd_strings(pa.repeat("", n)) if n else pd.array([], dtype=STRING))
    )
    grade = (
        raw_grade.to_numpy(dtype=np.int64)
        if pd.api.types.is_integer_dtype(raw_grade.dtype)
        else pd.to_numeric(raw_grade.astype(str)).to_numpy(dtype=np.int64)
        if n
        else np.zeros(0, np.int64)
    )
    columns: dict[str, Any] = {
        "query_id": qid.array,
        "path": path.array,
        "heading": heading.array,
        "grade": grade,
    }
    for extra in ("doc", "iteration"):
        if extra in frame.columns:
            columns[extra] = frame[extra].astype(STRING).fillna("").array
    return pd.DataFrame(columns, copy=False), errors


def _sniff(text: str) -> Literal["tsv", "trec"]:
    """``"tsv"`` when the first non-blank line (cut at LF or CR only, as both
    readers cut lines, never at U+0085 or U+2028) has a ``query_id`` column."""
    for line in text.replace("\r", "\n").split("\n"):
        if line.strip():
            return "tsv" if "query_id" in line.split("\t") else "trec"
    return "tsv"


def _errors_frame(errors: list[SchemaError]) -> pd.DataFrame:
    if not errors:
        return empty_errors()
    return pd.DataFrame(
        {
            "file": [e.file or "" for e in errors],
            "line": [e.line if e.line is not None else 0 for e in errors],
            "field": [e.field or "" for e in errors],
            "value": [repr(e.value) if e.has_value else "" for e in errors],
            "message": [e.message for e in errors],
        }
    ).astype(ERROR_COLUMNS)


#: The UTF-8 byte order mark Excel writes in front of a TSV; skipped before the header.
_BOM = b"\xef\xbb\xbf"
#: The most fields a qrels TSV header may have: a longer one is refused before parsing.
_MAX_FIELDS = 256


def _first_bytes(path: Path) -> str:
    try:
        with path.open("rb") as handle:
            head = handle.read(65536)
    except OSError as exc:
        raise SchemaError(
            f"cannot read the qrels file: {exc}", has_value=False, file=str(path)
        ) from None
    return head.removeprefix(_BOM).decode("utf-8", errors="replace")


@overload
def read_qrels(
    source: PathOrFrame,
    *,
    format: Literal["auto", "tsv", "trec"] = ...,
    ids: Ids = ...,
    strict: Literal[True] = ...,
) -> pd.DataFrame: ...
@overload
def read_qrels(
    source: PathOrFrame,
    *,
    format: Literal["auto", "tsv", "trec"] = ...,
    ids: Ids = ...,
    strict: Literal[False],
) -> Loaded: ...
def read_qrels(
    source: PathOrFrame,
    *,
    format: Literal["auto", "tsv", "trec"] = "auto",
    ids: Ids = "exact",
    strict: bool = True,
) -> pd.DataFrame | Loaded:
    """Read judgments: columns ``query_id``, ``path``, ``heading``, ``grade`` (int64).

    Parameters
    ----------
    source:
        A frame with those columns (``heading`` optional), or a file: a TSV
        with a header line naming ``query_id``, ``path``, optionally
        ``heading``, and ``grade``; or TREC qrels, ``qid iter docid grade``
        as trec_eval reads them (any iteration field, negative grades, a
        line starting with ``#`` is a comment, blank lines skipped).
    format:
        ``"auto"`` (default): a first line with a ``query_id`` column is a
        TSV, anything else TREC.
    ids:
        ``"exact"`` (default): ids as written. ``"vault"``: paths printed as
        :class:`~askkit.VaultPath` prints them (kimun's rules, as a sources
        frame built from kimun's payloads has them).
    strict:
        ``True`` (default): the first bad line raises :class:`SchemaError`
        naming the file, line, field and value. ``False``: returns
        :class:`~askkit.frame.Loaded`, the good rows and one error row per
        line left out (``records == records_loaded + len(errors)``).

    A TREC file's document ids are opaque: ``doc`` holds them, exact, and
    is the document id at every level (``path`` repeats it; ``heading`` is
    ``''``); ``iteration`` keeps the second field. Rows keep the file's
    order; duplicates are kept (scoring takes the highest grade).

    Examples
    --------
    >>> q = read_qrels("data/qrels.tsv")
    >>> q.iloc[0].astype(str).tolist()
    ['q01', 'projects/sourdough.md', 'Feeding schedule', '3']
    >>> one = read_qrels(pd.DataFrame({"query_id": [1], "path": ["A.md"], "grade": [2]}))
    >>> one.iloc[0].astype(str).tolist(), one.dtypes["grade"]
    (['1', 'A.md', '', '2'], dtype('int64'))
    >>> read_qrels(pd.DataFrame({"query_id": [1], "path": ["A.md"], "grade": [2]}),
    ...            ids="vault").iloc[0]["path"]
    'a.md'
    """
    _check_ids(ids)
    if isinstance(source, pd.DataFrame):
        frame, errors = _normalise(source, None, None, strict=strict)
        records = len(source)
    else:
        frame, errors, records = _read_qrels_file(Path(source), format, strict=strict)
    if ids == "vault" and len(frame):
        frame["path"] = _vault_ids(frame["path"])
        if "doc" in frame.columns:
            frame["doc"] = frame["path"]
    if strict:
        return frame
    return Loaded(frame, _errors_frame(errors), records)


def _read_qrels_file(
    path: Path, format: str, *, strict: bool
) -> tuple[pd.DataFrame, list[SchemaError], int]:
    kind = _sniff(_first_bytes(path)) if format == "auto" else format
    if kind not in ("tsv", "trec"):
        raise ValueError(f"format must be 'auto', 'tsv' or 'trec', got {format!r}")
    if kind == "tsv":
        return _read_qrels_tsv(path, strict=strict)
    table = read_table(
        path,
        ("query_id", "iteration", "doc", "grade"),
        what="qrels",
        extra=False,
        comments=True,
        strict=strict,
        numbers={"grade": pa.int64()},
    )
    cols = table.columns
    doc = _pd_strings(cols["doc"])
    grade = _cast(cols["grade"], pa.int64())
    frame = pd.DataFrame(
        {
            "query_id": _pd_strings(cols["query_id"]),
            "path": doc,
            "heading": _pd_strings(pa.repeat("", len(doc))) if len(doc) else doc,
            "grade": grade if grade is not None else _pd_strings(cols["grade"]),
            "doc": doc,
            "iteration": _pd_strings(cols["iteration"]),
        },
        copy=False,
    )
    out, errors = _normalise(frame, path, table.line, strict=strict)
    every = sorted([*table.errors, *errors], key=lambda e: e.line or 0)
    return out, every, table.records


def _read_qrels_tsv(path: Path, *, strict: bool) -> tuple[pd.DataFrame, list[SchemaError], int]:
    """A TSV with a header line; rows are lines 2.. (blank lines skipped). A leading
    UTF-8 byte order mark is skipped; a row whose field count differs from the
    header's is refused (never shifted into an index)."""
    data = path.read_bytes().removeprefix(_BOM)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise SchemaError(
            f"not UTF-8 (byte {data[exc.start]:#04x}); qrels files are read as UTF-8: "
            "convert the file first, e.g. iconv -f latin1 -t utf-8",
            has_value=False,
            file=str(path),
            line=line,
        ) from None
    if not text.strip():
        return read_qrels(pd.DataFrame({c: [] for c in QRELS_COLUMNS})), [], 0
    records = _records(text)
    counted: list[SchemaError] = []
    lines: np.ndarray[Any, Any] | None = None
    if records:
        header = records[0]
        if header.fields > _MAX_FIELDS:
            raise SchemaError(
                f"the header line has {header.fields} fields, more than {_MAX_FIELDS}; "
                "write a header line 'query_id<TAB>path<TAB>heading<TAB>grade'",
                field="columns",
                value=header.fields,
                file=str(path),
                line=header.start,
            )
        misfits = [r for r in records[1:] if r.fields != header.fields]
        counted = [
            SchemaError(
                f"{r.fields} fields where the header has {header.fields}; each line needs "
                "the header's fields, separated by tabs, a field holding a tab, line break "
                "or quote in quotes",
                field="columns",
                value=r.fields,
                file=str(path),
                line=r.start,
            )
            for r in misfits
        ]
        if misfits:
            text = _without(text, misfits)
        lines = np.asarray(
            [r.start for r in records[1:] if r.fields == header.fields], dtype=np.int64
        )
    try:
        with warnings.catch_warnings():
            # pandas drops a long row's extra fields with a warning: refuse instead
            warnings.simplefilter("error", pd.errors.ParserWarning)
            frame = pd.read_csv(
                io.StringIO(text),
                sep="\t",
                dtype=str,
                keep_default_na=False,
                quoting=csv.QUOTE_MINIMAL,
                skip_blank_lines=True,
                index_col=False,
            )
    except (pd.errors.ParserError, pd.errors.ParserWarning) as exc:
        raise SchemaError(
            f"not a qrels TSV: {' '.join(str(exc).split())}; each line needs the header's "
            "fields, separated by tabs, a field holding a tab, line break or quote in quotes",
            has_value=False,
            file=str(path),
        ) from None
    if lines is not None and len(lines) != len(frame):
        lines = None
    out, errors = _normalise(frame, path, lines, strict=strict and not counted)
    errors = sorted([*counted, *errors], key=lambda e: e.line or 0)
    if strict and errors:
        raise errors[0]
    return out, errors, len(frame) + len(counted)


class _Record(NamedTuple):
    start: int  #: the line it starts on
    end: int  #: the line it ends on
    fields: int


def _records(text: str) -> list[_Record]:
    r"""The header and rows of a qrels TSV: the lines each spans (line 1 is the
    first) and its field count; ``[]`` when a field is over the csv module's size
    limit (lines unknown).

    Lines end as pandas ends them (LF, CRLF or CR); a quoted field may span
    lines; lines of spaces alone are blank, as pandas skips them.

    >>> [r.start for r in _records('h\tg\n\na\t"x\ny"\t1\r\nb\t2\n')]
    [1, 3, 5]
    >>> [r.fields for r in _records('h\tg\n\na\t"x\ny"\t1\r\nb\t2\n')]
    [2, 3, 2]
    """
    reader = csv.reader(io.StringIO(text, newline=""), delimiter="\t")
    records: list[_Record] = []
    previous = 0
    try:
        for row in reader:
            if row and (len(row) > 1 or row[0].strip(" ")):
                records.append(_Record(previous + 1, reader.line_num, len(row)))
            previous = reader.line_num
    except csv.Error:
        return []
    return records


def _without(text: str, records: list[_Record]) -> str:
    """``text`` without the lines of ``records`` (cut as :func:`_records` cuts them)."""
    drop = np.zeros(text.count("\n") + text.count("\r") + 2, dtype=bool)
    for record in records:
        drop[record.start - 1 : record.end] = True
    lines = io.StringIO(text, newline="").readlines()
    return "".join(line for i, line in enumerate(lines) if not drop[i])


def write_qrels(
    qrels: pd.DataFrame,
    path: str | os.PathLike[str],
    *,
    format: Literal["tsv", "trec"] = "tsv",
    level: Level | None = None,
) -> None:
    """Write judgments atomically (temporary file, then rename): a reader never sees half a file.

    ``format="tsv"`` writes the header ``query_id path heading grade``
    (tab-separated; a field holding a tab, CR, LF or ``"`` is quoted, its
    quotes doubled, so that :func:`read_qrels` reads every value back as it
    was, backslashes and a leading ``#`` included);
    ``"trec"`` writes ``qid iter docid grade``: ``docid`` is the ``doc``
    column when there is one (a TREC file read back gives the same lines),
    else the id at ``level`` (:func:`qrels_doc_ids`: ``path`` for notes,
    ``path#heading`` for sections; ``None``: sections when a heading is
    given, as :func:`askkit.metrics.write_run` writes a section-level run);
    ``iter`` the ``iteration`` column, else ``0``. An id with ASCII
    whitespace is percent-encoded (:func:`encode_id`), any other id written
    as it is; a line that would not read back (a query id starting with
    ``#``, a comment to TREC readers; an empty field) raises
    :class:`SchemaError` naming the row, field and value. So does a value
    that is not valid Unicode text (a lone surrogate). Rows keep their order.

    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "qrels.tsv"
    >>> write_qrels(read_qrels("data/qrels.tsv"), target)
    >>> read_qrels(target).equals(read_qrels("data/qrels.tsv"))
    True
    """
    frame = read_qrels(qrels)
    if format == "tsv":
        qid, path_, heading = (_tsv_field(frame[c]) for c in ("query_id", "path", "heading"))
        rows = qid + "\t" + path_ + "\t" + heading + "\t" + frame["grade"].astype(str)
        text = "\t".join(QRELS_COLUMNS) + "\n" + "".join(r + "\n" for r in rows.tolist())
    elif format == "trec":
        if level is None:
            level = "section" if bool((frame["heading"] != "").any()) else "note"
        doc = qrels_doc_ids(frame, level)
        iteration = (
            frame["iteration"]
            if "iteration" in frame.columns
            else pd.Series(["0"] * len(frame), dtype=STRING)
        )
        qid, it, docid = (trec_id(v) for v in (frame["query_id"], iteration, doc))
        _check_trec(qid, it, docid)
        lines = qid + " " + it + " " + docid + " " + frame["grade"].astype(str).astype(STRING)
        text = "".join(line + "\n" for line in lines.tolist())
    else:
        raise ValueError(f"format must be 'tsv' or 'trec', got {format!r}")
    atomic_write_text(path, text)


def _tsv_field(values: pd.Series) -> pd.Series:
    r"""A qrels TSV column: a value holding a tab, CR, LF or ``"`` is quoted, its
    quotes doubled (as the csv module quotes; :func:`read_qrels` reads it back
    exactly); any other value, backslashes and ``#`` included, as it is.

    >>> _tsv_field(pd.Series(["Top", "A\rB", 'a "b" c', "#1\\x"])).tolist()
    ['Top', '"A\rB"', '"a ""b"" c"', '#1\\x']
    """
    out = values.astype(STRING).reset_index(drop=True)
    special = out.str.contains('[\t\n\r"]', regex=True).to_numpy(dtype=bool)
    if special.any():
        out = out.copy()
        out[special] = '"' + out[special].str.replace('"', '""', regex=False) + '"'
    return out


def _check_trec(qid: pd.Series, iteration: pd.Series, doc: pd.Series) -> None:
    """Refuse a TREC line that would not read back as written: an empty field
    (the line would have three), or a query id starting with ``#`` (a comment)."""
    comment = qid.str.startswith("#").to_numpy(dtype=bool)
    fields = {"query_id": qid, "iteration": iteration, "doc": doc}
    empty = {name: (col == "").to_numpy(dtype=bool) for name, col in fields.items()}
    for i in np.flatnonzero(comment | np.logical_or.reduce(list(empty.values()))).tolist():
        if comment[i]:
            raise SchemaError(
                f"row {i}: a TREC qrels line whose query id starts with '#' is a comment "
                "and would be skipped; rename the query or write format='tsv'",
                field="query_id",
                value=qid.iloc[i],
            )
        name = next(n for n, bad in empty.items() if bad[i])
        raise SchemaError(f"row {i}: a TREC qrels field must not be empty", field=name, value="")


def trec_id(values: pd.Series) -> pd.Series:
    r"""Ids as a TREC file's column: as they are, but percent-encoded
    (:func:`encode_id`) when they hold ASCII whitespace, which trec_eval and
    :func:`read_qrels` split fields on (other characters, U+001F or a
    no-break space, stay in one field). An id read back is written the same.

    >>> trec_id(pd.Series(["FT911-1", "a.md#Bake log", "50%", "A\x1fB%"])).tolist()
    ['FT911-1', 'a.md#Bake%20log', '50%', 'A\x1fB%']
    """
    out = values.astype(STRING).reset_index(drop=True)
    spaced = out.str.contains(_SPLIT, regex=True).fillna(False).to_numpy(dtype=bool)
    if spaced.any():
        out = out.copy()
        out[spaced] = encode_id(out[spaced])
    return out


@overload
def read_trec_run(
    source: str | os.PathLike[str], *, ids: Ids = ..., strict: Literal[True] = ...
) -> pd.DataFrame: ...
@overload
def read_trec_run(
    source: str | os.PathLike[str], *, ids: Ids = ..., strict: Literal[False]
) -> Loaded: ...
def read_trec_run(
    source: str | os.PathLike[str], *, ids: Ids = "exact", strict: bool = True
) -> pd.DataFrame | Loaded:
    """Read a TREC run (``qid Q0 docid rank score tag``) as a run frame for ``evaluate``.

    Columns: ``turn_id``, ``doc`` (exact, or printed as a vault path with
    ``ids="vault"``), ``rank`` (int64), ``score`` (float64), ``tag``.
    :func:`askkit.metrics.evaluate` takes it as it takes a sources frame (the
    ``doc`` column is the document id at any level). As trec_eval reads runs:
    fields after the tag are ignored, a line whose first field starts with
    ``#`` is a comment, blank lines are skipped. A line with fewer than six
    fields, a score that is not a number or a rank that is not an integer
    raises :class:`SchemaError` naming the file and line (``strict=False``:
    the line is left out and reported, see :func:`read_qrels`).
    """
    _check_ids(ids)
    path = Path(source)
    names = ("turn_id", "q0", "doc", "rank", "score", "tag")
    table = read_table(
        path,
        names,
        what="run",
        extra=True,
        comments=True,
        strict=strict,
        numbers={"rank": pa.int64(), "score": pa.float64()},
    )
    cols = table.columns
    score, rank = _cast(cols["score"], pa.float64()), _cast(cols["rank"], pa.int64())
    if score is None or rank is None:
        score_text = pd.Series(_pd_strings(cols["score"]))
        rank_text = pd.Series(_pd_strings(cols["rank"]))
        bad_score = _bad_rows(score_text, _NUMBER)
        bad_rank = _bad_rows(rank_text, _INTEGER)
        errors: list[SchemaError] = []
        for i in np.flatnonzero(bad_score | bad_rank).tolist():
            name = "score" if bad_score[i] else "rank"
            kind = "a number" if name == "score" else "an integer"
            error = SchemaError(
                f"{name} must be {kind}",
                field=name,
                value=(score_text if name == "score" else rank_text).iloc[i],
                file=str(path),
                line=int(table.line[i]),
            )
            if strict:
                raise error
            errors.append(error)
        table = table.keep(~(bad_score | bad_rank), errors)
        cols = table.columns
        score = np.array([float(x) for x in cols["score"].to_pylist()], dtype=np.float64)
        rank = np.array([int(x) for x in cols["rank"].to_pylist()], dtype=np.int64)
    doc = pd.Series(_pd_strings(cols["doc"]))
    frame = pd.DataFrame(
        {
            "turn_id": _pd_strings(cols["turn_id"]),
            "doc": _vault_ids(doc).array if ids == "vault" and len(doc) else doc.array,
            "rank": rank,
            "score": score,
            "tag": _pd_strings(cols["tag"]),
        },
        copy=False,
    )
    if strict:
        return frame
    return Loaded(frame, _errors_frame(table.errors), table.records)


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
