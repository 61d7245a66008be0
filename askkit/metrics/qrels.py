"""Judgments on disk: qrels files (TSV or TREC) read into a frame and written back.

:func:`read_qrels` reads a TSV with a header line or TREC qrels (``qid iter
docid grade``) into the qrels frame (:data:`QRELS_COLUMNS`); :func:`write_qrels`
writes one back, atomically. The ids read are the document ids
:mod:`askkit.metrics.ids` describes.

Writing TREC files, an id with ASCII whitespace (a section id's heading) is
percent-encoded (:func:`~askkit.metrics.ids.encode_id`: ``%`` as ``%25``, a
space as ``%20``, ...) so that it stays one column; any other id is written
as it is, byte for byte, so that a collection's ids (``FT911-1``, URLs with
``%20`` in them, ``urn:`` ids) reach trec_eval as they came. A file in which
an id is encoded never holds an id, written as it is, that holds a percent
code: ``a b.md`` and a literal ``a%20b.md`` would be one id, so such a file is
refused with a :class:`SchemaError` naming both. So every file askkit writes
reads back to exactly the ids it was written from: readers keep ids as
written by default (a collection's own files read exactly), and
``decode=True`` (:func:`read_qrels`,
:func:`askkit.metrics.runs.read_trec_run`) decodes them, for a file askkit
wrote from ids holding whitespace. A TSV qrels file quotes a field holding a
tab, CR, LF or ``"`` instead, so every value reads back exactly, decoded or
not.
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import warnings
from pathlib import Path
from typing import Any, Literal, NamedTuple, overload

import numpy as np
import pandas as pd
import pyarrow as pa

from askkit._atomic import atomic_write_text
from askkit._files import input_error, open_input
from askkit.errors import SchemaError
from askkit.frame.load import Loaded
from askkit.frame.schema import STRING
from askkit.metrics._trec import (
    INTEGER,
    bad_rows,
    decode_id,
    errors_frame,
    numbers,
    pd_strings,
    read_table,
    text_column,
    trec_columns,
    where,
)
from askkit.metrics.ids import Ids, Level, check_ids, qrels_doc_ids, vault_ids

__all__ = ["QRELS_COLUMNS", "PathOrFrame", "read_qrels", "write_qrels"]

#: The qrels frame: column -> dtype.
QRELS_COLUMNS: dict[str, Any] = {
    "query_id": STRING,
    "path": STRING,
    "heading": STRING,
    "grade": np.dtype("int64"),
}
PathOrFrame = str | os.PathLike[str] | pd.DataFrame


def _normalise(
    frame: pd.DataFrame,
    source: object,
    lines: np.ndarray[Any, Any] | None,
    *,
    strict: bool,
    extra_columns: bool = False,
) -> tuple[pd.DataFrame, list[SchemaError]]:
    """Validate and convert to :data:`QRELS_COLUMNS` (plus ``doc`` and ``iteration``
    when the frame has them; with ``extra_columns`` every other column too, as
    text, all in the frame's order). ``lines``: each row's line in ``source``.
    Bad rows raise (strict) or are dropped and returned as errors."""
    missing = [c for c in ("query_id", "path", "grade") if c not in frame.columns]
    if missing:
        raise SchemaError(
            "qrels need columns query_id, path, grade (and optionally heading); "
            "write a header line 'query_id<TAB>path<TAB>heading<TAB>grade'",
            field="columns",
            value=missing,
            **where(source),
        )
    frame = frame.reset_index(drop=True)
    for name in ("query_id", "path", "heading", "doc", "iteration"):
        if name in frame.columns:
            frame[name] = text_column(frame[name], name, source, lines)
    raw_grade = frame["grade"]
    if pd.api.types.is_integer_dtype(raw_grade.dtype) and not raw_grade.hasnans:
        bad_grade = raw_grade.isna().to_numpy()
    else:
        bad_grade = bad_rows(raw_grade.astype(str).astype(STRING), INTEGER)
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
        error = SchemaError(message, field=name, value=value, **where(source, line))
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
        else pd.Series(pd_strings(pa.repeat("", n)) if n else pd.array([], dtype=STRING))
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
    if extra_columns:
        columns = _with_extra_columns(frame, columns, source, lines)
    return pd.DataFrame(columns, copy=False), errors


def _with_extra_columns(
    frame: pd.DataFrame,
    columns: dict[str, Any],
    source: object,
    lines: np.ndarray[Any, Any] | None,
) -> dict[str, Any]:
    """``columns`` and the frame's other columns as text (missing values as ``''``,
    as a TSV holds them), in the frame's order; ``heading`` after ``path`` when
    the frame has none."""
    names = list(frame.columns)
    twice = sorted({str(n) for n in names if names.count(n) > 1})
    if twice:
        raise SchemaError(
            "a qrels column is named twice; give each column its own name",
            field="columns",
            value=twice,
            **where(source),
        )
    if "heading" not in names:
        names.insert(names.index("path") + 1, "heading")
    out: dict[str, Any] = {}
    for name in names:
        if name in columns:
            out[name] = columns[name]
        else:
            values = text_column(frame[name], str(name), source, lines)
            out[name] = values.fillna("").array
    return out


def _sniff(text: str) -> Literal["tsv", "trec"]:
    """``"tsv"`` when the first non-blank line (cut at LF or CR only, as both
    readers cut lines, never at U+0085 or U+2028) has a ``query_id`` column,
    or the first record does (a quoted column name may hold a line break)."""
    for line in text.replace("\r", "\n").split("\n"):
        if line.strip():
            if "query_id" in line.split("\t"):
                return "tsv"
            break
    else:
        return "tsv"
    with contextlib.suppress(csv.Error):
        for row in csv.reader(io.StringIO(text, newline=""), delimiter="\t"):
            if row and (len(row) > 1 or row[0].strip()):
                return "tsv" if "query_id" in row else "trec"
    return "trec"


#: The UTF-8 byte order mark Excel writes in front of a TSV; skipped before the header.
_BOM = b"\xef\xbb\xbf"
#: The most fields a qrels TSV header may have: a longer one is refused before parsing.
_MAX_FIELDS = 256


@overload
def read_qrels(
    source: PathOrFrame,
    *,
    format: Literal["auto", "tsv", "trec"] = ...,
    ids: Ids = ...,
    strict: Literal[True] = ...,
    decode: bool = ...,
    extra_columns: bool = ...,
) -> pd.DataFrame: ...
@overload
def read_qrels(
    source: PathOrFrame,
    *,
    format: Literal["auto", "tsv", "trec"] = ...,
    ids: Ids = ...,
    strict: Literal[False],
    decode: bool = ...,
    extra_columns: bool = ...,
) -> Loaded: ...
def read_qrels(
    source: PathOrFrame,
    *,
    format: Literal["auto", "tsv", "trec"] = "auto",
    ids: Ids = "exact",
    strict: bool = True,
    decode: bool = False,
    extra_columns: bool = False,
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
    decode:
        ``False`` (default): a TREC file's ids as written. ``True``: decoded
        (:func:`~askkit.metrics.ids.decode_id`), for a TREC file askkit wrote
        from ids holding whitespace (see the module docstring); a TSV file
        and a frame are exact either way.
    extra_columns:
        ``False`` (default): only the columns above. ``True``: a TSV file's
        (or a frame's) other columns too, as text, every column in the
        source's order (``heading`` after ``path`` when there is none), so
        that :func:`write_qrels` writes them all back.

    A file must be a regular file: a folder, a FIFO or a device raises
    :class:`SchemaError` naming it and what it is (never read, never
    waited on).

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
    check_ids(ids)
    if isinstance(source, pd.DataFrame):
        frame, errors = _normalise(source, None, None, strict=strict, extra_columns=extra_columns)
        records = len(source)
    else:
        frame, errors, records = _read_qrels_file(
            Path(source), format, strict=strict, decode=decode, extra_columns=extra_columns
        )
    if ids == "vault" and len(frame):
        frame["path"] = vault_ids(frame["path"])
        if "doc" in frame.columns:
            frame["doc"] = frame["path"]
    if strict:
        return frame
    return Loaded(frame, errors_frame(errors), records)


def _read_qrels_file(
    path: Path, format: str, *, strict: bool, decode: bool, extra_columns: bool
) -> tuple[pd.DataFrame, list[SchemaError], int]:
    if format not in ("auto", "tsv", "trec"):
        raise ValueError(f"format must be 'auto', 'tsv' or 'trec', got {format!r}")
    with open_input(path, what="qrels") as handle:
        try:
            head = handle.read(65536)
        except OSError as exc:
            raise input_error(path, "qrels", exc) from None
        sniffed = head.removeprefix(_BOM).decode("utf-8", errors="replace")
        kind = _sniff(sniffed) if format == "auto" else format
        if kind == "tsv":
            try:
                data = head + handle.read()
            except OSError as exc:
                raise input_error(path, "qrels", exc) from None
            return _read_qrels_tsv(data, path, strict=strict, extra_columns=extra_columns)
        table = read_table(
            path,
            ("query_id", "iteration", "doc", "grade"),
            what="qrels",
            extra=False,
            comments=True,
            strict=strict,
            numbers={"grade": pa.int64()},
            handle=handle,
        )
    cols = table.columns
    doc = pd.Series(pd_strings(cols["doc"]))
    qid = pd.Series(pd_strings(cols["query_id"]))
    iteration = pd.Series(pd_strings(cols["iteration"]))
    if decode:
        doc, qid, iteration = decode_id(doc), decode_id(qid), decode_id(iteration)
    grade = numbers(cols["grade"], pa.int64())
    frame = pd.DataFrame(
        {
            "query_id": qid.array,
            "path": doc.array,
            "heading": pd_strings(pa.repeat("", len(doc))) if len(doc) else doc.array,
            "grade": grade if grade is not None else pd_strings(cols["grade"]),
            "doc": doc.array,
            "iteration": iteration.array,
        },
        copy=False,
    )
    out, errors = _normalise(frame, path, table.line, strict=strict)
    every = sorted([*table.errors, *errors], key=lambda e: e.line or 0)
    return out, every, table.records


def _read_qrels_tsv(
    data: bytes, path: Path, *, strict: bool, extra_columns: bool
) -> tuple[pd.DataFrame, list[SchemaError], int]:
    """A TSV with a header line; rows are lines 2.. (blank lines skipped). A leading
    UTF-8 byte order mark is skipped; a row whose field count differs from the
    header's is refused (never shifted into an index)."""
    data = data.removeprefix(_BOM)
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
    out, errors = _normalise(
        frame, path, lines, strict=strict and not counted, extra_columns=extra_columns
    )
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

    ``format="tsv"`` writes every column of the frame, in its order, under a
    header line: ``query_id path heading grade`` (``heading`` after ``path``
    when the frame has none), then any other column (a ``notes`` column, a
    TREC file's ``doc`` and ``iteration``) as text. Tab-separated; a field
    holding a tab, CR, LF or ``"`` is quoted, its quotes doubled, so that
    ``read_qrels(path, extra_columns=True)`` reads every column and value back
    as it was, backslashes and a leading ``#`` included. A column name that
    would not read back (empty, or two columns with one name) is refused.

    ``"trec"`` writes ``qid iter docid grade`` (a TREC file has no other
    field): ``docid`` is the ``doc`` column when there is one (a TREC file
    read back gives the same lines), else the id at ``level``
    (:func:`~askkit.metrics.ids.qrels_doc_ids`: ``path`` for notes, ``path#heading`` for
    sections; ``None``: sections when a heading is given, as
    :func:`askkit.metrics.write_run` writes a section-level run); ``iter``
    the ``iteration`` column, else ``0``. Ids are written as the module
    docstring says (:func:`~askkit.metrics.ids.trec_id`: percent-encoded when they hold
    whitespace; ``read_qrels(path, decode=True)`` reads them back exactly).
    A file that would not read back as written (a query id starting with
    ``#``, a comment to TREC readers; an empty field; two ids one written
    form would merge) raises :class:`SchemaError` naming the row, field and
    value, and nothing is written.

    Either format: a value that is not valid Unicode text (a lone surrogate)
    raises :class:`SchemaError`. Rows keep their order, duplicates included.

    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "qrels.tsv"
    >>> write_qrels(read_qrels("data/qrels.tsv"), target)
    >>> read_qrels(target).equals(read_qrels("data/qrels.tsv"))
    True
    """
    if format == "tsv":
        frame = read_qrels(qrels, extra_columns=True)
        names = [str(name) for name in frame.columns]
        if "" in names or len(set(names)) != len(names):
            raise SchemaError(
                "a TSV column needs a name of its own (an empty or repeated name would not "
                "read back); rename the frame's columns",
                field="columns",
                value=names,
            )
        header = "\t".join(_tsv_field(pd.Series(names, dtype=STRING)).tolist())
        fields = [
            frame[name].astype(str).astype(STRING) if name == "grade" else _tsv_field(frame[name])
            for name in frame.columns
        ]
        rows = fields[0].to_numpy(dtype=object)
        for column in fields[1:]:
            rows = rows + "\t" + column.to_numpy(dtype=object)
        text = header + "\n" + "".join(r + "\n" for r in rows.tolist())
    elif format == "trec":
        frame = read_qrels(qrels)
        if level is None:
            level = "section" if bool((frame["heading"] != "").any()) else "note"
        iteration = (
            frame["iteration"]
            if "iteration" in frame.columns
            else pd.Series(["0"] * len(frame), dtype=STRING)
        )
        written = trec_columns(
            {
                "query_id": frame["query_id"],
                "iteration": iteration,
                "doc": qrels_doc_ids(frame, level),
            },
            what="qrels",
        )
        grade = frame["grade"].astype(str).to_numpy(dtype=object)
        lines = (
            written["query_id"].to_numpy(dtype=object)
            + " "
            + written["iteration"].to_numpy(dtype=object)
            + " "
            + written["doc"].to_numpy(dtype=object)
            + " "
            + grade
        )
        text = "".join(line + "\n" for line in lines.tolist())
    else:
        raise ValueError(f"format must be 'tsv' or 'trec', got {format!r}")
    atomic_write_text(path, text)


def _tsv_field(values: pd.Series) -> pd.Series:
    r"""A qrels TSV column: a value holding a tab, CR, LF or ``"`` (or starting
    with U+FEFF) is quoted, its quotes doubled (as the csv module quotes;
    :func:`read_qrels` reads it back exactly); any other value, backslashes and
    ``#`` included, as it is. The index is kept.

    >>> _tsv_field(pd.Series(["Top", "A\rB", 'a "b" c', "#1\\x"])).tolist()
    ['Top', '"A\rB"', '"a ""b"" c"', '#1\\x']
    """
    out = values.astype(STRING).fillna("")
    # a leading U+FEFF would be read as the byte order mark a reader skips
    special = out.str.contains('[\t\n\r"]|^\ufeff', regex=True).to_numpy(dtype=bool)
    if not special.any():
        return out
    cells = out.to_numpy(dtype=object)
    quoted = '"' + out[special].str.replace('"', '""', regex=False) + '"'
    cells[special] = quoted.to_numpy(dtype=object)
    return pd.Series(pd.array(cells, dtype=STRING), index=out.index, name=out.name)
