"""TREC files as columns: one pass of Arrow kernels over the whole file.

trec_eval reads a qrels line as ``qid iter docno rel`` and a run line as
``qid Q0 docno rank sim tag``, fields separated by runs of spaces or tabs.
:func:`read_table` reads either the same way, without a Python loop over the
lines: a clean file (single spaces or tabs, no blank, comment or padded line)
goes through pyarrow's multi-threaded CSV reader, which also parses the
numeric fields; any other file's bytes are checked as UTF-8 once, cut into
lines, trimmed and split on ASCII whitespace by pyarrow.compute, and every
field is a column. Ids are
kept exactly as written (case, ``#``, ``:``, ``%`` and all).

Blank lines are not records. A line whose first field starts with ``#`` is a
comment where ``comments`` says so. A line with the wrong number of fields is
an error naming its file and line, never shifted into other columns; a run
line may carry fields after the tag, which are ignored as trec_eval ignores
them.

Writing, an id is one field: :func:`trec_id` writes it as it is, or
percent-encoded (:func:`encode_id`, ``%`` included) when it holds ASCII
whitespace, which every TREC reader splits fields on. :func:`trec_columns`
also refuses a file that would not read back: an empty field, a query id a
reader takes for a comment, a value that is not text, and an id that could
not be told from an encoded one (so that ``decode=True`` reads every id
back exactly).
"""

from __future__ import annotations

import contextlib
import mmap
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from pyarrow import csv as pacsv

from askkit._files import open_input
from askkit.errors import SchemaError
from askkit.frame.schema import ERROR_COLUMNS, STRING, empty_errors

__all__ = [
    "INTEGER",
    "NUMBER",
    "Table",
    "bad_rows",
    "decode_id",
    "encode_id",
    "errors_frame",
    "numbers",
    "pd_strings",
    "read_table",
    "shown",
    "text_column",
    "trec_columns",
    "trec_id",
    "where",
]

#: How much of a line an error shows.
_SHOWN = 120
#: The CSV reader's block size: an eighth of the file, within these bounds (small
#: blocks cost a task each; large ones leave threads idle).
_MIN_BLOCK = 1 << 20
_MAX_BLOCK = 64 << 20


def _pool() -> pa.MemoryPool:
    """The pool the CSV reader fills: jemalloc where pyarrow has it, else the default.

    pyarrow's default pool on Linux is mimalloc, whose arenas are reserved with
    ``MADV_HUGEPAGE``: every first touch of one is a 2 MB page fault, which on a
    virtual machine that hands freed memory back to its host (virtio free page
    reporting) costs the host's faults as well. Reading a 180 MB run took 1.1 to
    1.6 s of kernel time that way, against 0.35 s in jemalloc's 4 kB pages.
    """
    try:
        return pa.jemalloc_memory_pool()
    except NotImplementedError:  # a pyarrow built without jemalloc
        return pa.default_memory_pool()


def shown(line: str) -> str:
    """A line as an error shows it: at most 120 characters."""
    return line if len(line) <= _SHOWN else line[:_SHOWN] + "…"


@dataclass(frozen=True, slots=True)
class Table:
    """The good rows of a TREC file as string columns, and what was not read.

    ``line`` is each row's line number; ``errors`` the rejected lines, in
    file order; ``records`` the lines that are neither blank nor comments, so
    ``records == len(line) + len(errors)``.
    """

    columns: dict[str, Any]
    """Arrow arrays or chunked arrays, strings or the ``numbers`` types."""
    line: np.ndarray[Any, Any]
    errors: list[SchemaError]
    records: int

    def keep(self, good: np.ndarray[Any, Any], new_errors: list[SchemaError]) -> Table:
        """These rows only, with ``new_errors`` (for the rows dropped) added."""
        mask = pa.array(good)
        return Table(
            {k: v.filter(mask) for k, v in self.columns.items()},
            self.line[good],
            sorted([*self.errors, *new_errors], key=lambda e: e.line or 0),
            self.records,
        )


def _utf8(data: bytes, file: str, *, strict: bool) -> tuple[pa.Array, list[SchemaError]]:
    """The file as one Arrow string; lines that are not UTF-8 raise (strict) or are
    blanked and reported (lenient)."""
    try:
        return pa.array([data], pa.large_binary()).cast(pa.large_string()), []
    except (pa.ArrowInvalid, UnicodeDecodeError):
        pass
    errors: list[SchemaError] = []
    lines = data.split(b"\n")
    for number, raw in enumerate(lines, start=1):
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            error = SchemaError(
                f"not UTF-8 (byte {raw[exc.start]:#04x} at column {exc.start + 1}); TREC "
                "files are read as UTF-8: convert the file first, e.g. "
                "iconv -f latin1 -t utf-8",
                field="line",
                value=raw[:_SHOWN],
                file=file,
                line=number,
            )
            if strict:
                raise error from None
            errors.append(error)
            lines[number - 1] = b""
    return pa.array([b"\n".join(lines)], pa.large_binary()).cast(pa.large_string()), errors


def _clean_table(
    data: bytes | mmap.mmap, names: tuple[str, ...], numbers: dict[str, pa.DataType]
) -> Table | None:
    """The usual file, read by pyarrow's multi-threaded CSV reader: UTF-8, every
    line holding exactly ``names`` separated by single spaces or tabs, no blank,
    comment or padded line, every float field finite. ``None`` for anything else
    (the general path then reads it as text, and names what is wrong: a NaN or
    infinite float is refused as written, ``1e999`` and all).

    Only single bytes are searched for up front (``memchr``, a few ms per
    100 MB); a blank line, a doubled separator or a padded line leaves an empty
    field, which the check after the read finds, and a line with another number
    of fields fails the read itself.
    """
    if not len(data) or any(data.find(b) >= 0 for b in (b"\r", b"\x0b", b"\x0c")):
        return None
    if data.find(b"#") >= 0 and (data[:1] == b"#" or data.find(b"\n#") >= 0):
        return None  # a comment line
    if data[:3] == b"\xef\xbb\xbf":
        return None  # pyarrow would drop a leading U+FEFF; trec_eval keeps it in the id
    if data.find(b"\t") >= 0:
        data = bytes(data).replace(b"\t", b" ")
    buffer = pa.py_buffer(data)
    try:
        table = pacsv.read_csv(
            buffer,
            read_options=pacsv.ReadOptions(
                column_names=list(names),
                use_threads=True,
                block_size=min(max(len(data) // 8, _MIN_BLOCK), _MAX_BLOCK),
            ),
            parse_options=pacsv.ParseOptions(
                delimiter=" ",
                quote_char=False,
                escape_char=False,
                double_quote=False,
                newlines_in_values=False,
                ignore_empty_lines=False,
            ),
            convert_options=pacsv.ConvertOptions(
                column_types={n: numbers.get(n, pa.large_string()) for n in names},
                null_values=[],
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
            memory_pool=_pool(),
        )
    except (pa.ArrowInvalid, UnicodeDecodeError):
        return None
    finally:
        buffer = None  # the map may be closed once the read is done
    columns: dict[str, Any] = {n: table.column(n) for n in names}  # chunked: no copy
    n = table.num_rows
    for name, column in columns.items():
        if name not in numbers and n and pc.min(pc.binary_length(column)).as_py() == 0:
            return None  # an empty field: a blank, padded or doubly separated line
        if pa.types.is_floating(column.type) and n and not pc.all(pc.is_finite(column)).as_py():
            return None  # NaN or infinite: the error shows the field as written
    return Table(columns, np.arange(1, n + 1, dtype=np.int64), [], n)


def read_table(
    path: Path,
    names: tuple[str, ...],
    *,
    what: str,
    extra: bool,
    comments: bool,
    strict: bool,
    numbers: dict[str, pa.DataType] | None = None,
    handle: BinaryIO | None = None,
) -> Table:
    """The file's fields as string columns named ``names``.

    ``extra``: lines may have more fields than ``names`` (ignored). ``comments``:
    a line whose first field starts with ``#`` is skipped. ``numbers``: fields
    the clean path may parse as these types (a value that does not parse, or a
    float that is NaN or infinite, sends the file to the general path, whose
    columns are strings). Errors name the file, the line, and the line itself.
    The file is opened by the one input rule (:func:`askkit._files.open_input`:
    a regular file, or a :class:`SchemaError` naming what it is), unless
    ``handle`` is a file it already opened.
    """
    file = str(path)
    if handle is None:
        with open_input(path, what=what) as opened:
            return read_table(
                path,
                names,
                what=what,
                extra=extra,
                comments=comments,
                strict=strict,
                numbers=numbers,
                handle=opened,
            )
    try:
        # mapped, not read: the CSV reader reads the page cache in place
        size = os.fstat(handle.fileno()).st_size
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) if size else None
    except (OSError, ValueError) as exc:
        raise SchemaError(
            f"cannot read the {what} file: {exc}", has_value=False, file=file
        ) from None
    try:
        fast = _clean_table(mapped if mapped is not None else b"", names, numbers or {})
        if fast is not None:
            return fast
        data = bytes(mapped) if mapped is not None else b""
    finally:
        if mapped is not None:
            # the CSV reader's threads may still hold it: then it is freed with them
            with contextlib.suppress(BufferError):
                mapped.close()
    text, errors = _utf8(data, file, strict=strict)
    lines = pc.split_pattern(text, "\n").flatten()
    lines = pc.ascii_trim_whitespace(lines)
    number = np.arange(1, len(lines) + 1, dtype=np.int64)
    keep = pc.greater(pc.binary_length(lines), 0)
    if comments:
        keep = pc.and_(keep, pc.invert(pc.starts_with(lines, "#")))
    keep_np = keep.to_numpy(zero_copy_only=False)
    lines, number = lines.filter(keep), number[keep_np]
    fields = pc.ascii_split_whitespace(lines)
    counts = pc.list_value_length(fields).to_numpy(zero_copy_only=False)
    want = len(names)
    bad = counts < want if extra else counts != want
    if bad.any():
        for i in np.flatnonzero(bad).tolist():
            text = lines[i].as_py()
            error = SchemaError(
                field_count_message(what, names, extra=extra, text=text, count=int(counts[i])),
                field="line",
                value=shown(text),
                file=file,
                line=int(number[i]),
            )
            if strict:
                raise error
            errors.append(error)
        good = ~bad
        fields, number = fields.filter(pa.array(good)), number[good]
    columns = {name: pc.list_element(fields, i) for i, name in enumerate(names)}
    records = len(number) + len(errors)
    return Table(columns, number, sorted(errors, key=lambda e: e.line or 0), records)


#: How an error names a TREC run's first two fields (a run frame's ``turn_id``, and ``Q0``).
_FIELD_NAMES = {"turn_id": "query_id", "q0": "Q0"}
#: A run line's fields (trec_eval's), and a qrels line's: what a line of the other file has.
_RUN_FIELDS = 6
_QRELS_FIELDS = 4


def _looks_like(text: str, count: int) -> str:
    """What a line that does not fit its file looks like: ``"json"``, ``"run"``
    (six fields, or more with ``Q0`` second), ``"qrels"`` (four fields, or
    askkit's qrels TSV header) or ``""``."""
    if text[:1] in ("{", "["):
        return "json"
    fields = text.split()
    if count == _RUN_FIELDS or (count > _RUN_FIELDS and fields[1].upper() == "Q0"):
        return "run"
    if count == _QRELS_FIELDS or "query_id" in text.split("\t"):
        return "qrels"
    return ""


def field_count_message(
    what: str, names: tuple[str, ...], *, extra: bool, text: str, count: int
) -> str:
    """What a TREC ``what`` line with the wrong number of fields is told, in one
    sentence (the line itself follows as the error's value): the fields
    expected, how many the line has, and, when the line looks like JSON or
    like a line of the other TREC file (a run line in qrels, a qrels line in a
    run), that the two files may be swapped.

    >>> print(field_count_message("qrels", ("query_id", "iteration", "doc", "grade"),
    ...                           extra=False, text="q1 Q0 d1 1 2.5 bm25", count=6))
    a qrels line has 4 whitespace-separated fields (query_id iteration doc grade), but this one has 6 and looks like a TREC run line (query_id Q0 doc rank score tag): the run and the qrels files may be swapped
    """  # noqa: E501 - a doctest's output is one line
    expected = f"at least {len(names)}" if extra else f"{len(names)}"
    fields = " ".join(_FIELD_NAMES.get(name, name) for name in names)
    message = (
        f"a {what} line has {expected} whitespace-separated fields ({fields}), "
        f"but this one has {count}"
    )
    swapped = "the run and the qrels files may be swapped"
    looks = _looks_like(text, count)
    if looks == "json":
        if what == "qrels":
            return f"{message} and looks like JSON (a turn log or a payload): {swapped}"
        return (
            f"{message} and looks like JSON (a turn log is JSON from its first line, or "
            "named .jsonl)"
        )
    if looks == "run" and what == "qrels":
        return (
            f"{message} and looks like a TREC run line (query_id Q0 doc rank score tag): {swapped}"
        )
    if looks == "qrels" and what == "run":
        return f"{message} and looks like a qrels line (query_id iteration doc grade): {swapped}"
    return message


# --------------------------------------------------------------------------- writing ids

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
_SURROGATE = re.compile("[\ud800-\udfff]")


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


def _spaced(values: pd.Series) -> np.ndarray[Any, Any]:
    return np.asarray(values.str.contains(_SPLIT, regex=True).fillna(False), dtype=bool)


def trec_id(values: pd.Series) -> pd.Series:
    r"""Ids as a TREC file's column: as they are, but percent-encoded
    (:func:`encode_id`) when they hold ASCII whitespace, which trec_eval and
    :func:`askkit.metrics.read_qrels` split fields on (other characters,
    U+001F or a no-break space, stay in one field). An id read back is
    written the same. The index is kept: each id stays on its own row.

    >>> trec_id(pd.Series(["FT911-1", "a.md#Bake log", "50%", "A\x1fB%"])).tolist()
    ['FT911-1', 'a.md#Bake%20log', '50%', 'A\x1fB%']
    """
    out = values.astype(STRING)
    spaced = _spaced(out)
    if not spaced.any():
        return out
    cells = out.to_numpy(dtype=object)
    cells[spaced] = encode_id(out[spaced]).to_numpy(dtype=object)
    return pd.Series(pd.array(cells, dtype=STRING), index=out.index, name=out.name)


def where(file: object, line: int | None = None) -> dict[str, Any]:
    """An error's ``file`` and ``line`` fields (:class:`SchemaError`'s keywords)."""
    return {"file": str(file) if file is not None else None, "line": line}


#: A field that reads as an int64 (what a grade or a rank must be).
INTEGER = r"^[+-]?[0-9]{1,18}$"
#: A field that reads as a float64 (a score must also be finite: ``nan``, ``inf`` and
#: ``1e999`` read, and :func:`askkit.metrics.read_trec_run` refuses them).
NUMBER = r"^[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|(?i:nan|inf|infinity))$"


def pd_strings(arr: pa.Array | pa.ChunkedArray) -> Any:
    """An Arrow string column as the frame's string dtype (``large_string``: kept as
    it is; ``string``: only the offsets are widened)."""
    chunked = arr if isinstance(arr, pa.ChunkedArray) else pa.chunked_array([arr])
    if chunked.type != pa.large_string():
        chunked = chunked.cast(pa.large_string())
    return STRING.__from_arrow__(chunked)  # type: ignore[attr-defined]


def numbers(arr: Any, to: pa.DataType) -> np.ndarray[Any, Any] | None:
    """The column as numbers when every value parses (pyarrow's parser), else None."""
    try:
        return np.asarray(pc.cast(arr, to).to_numpy(zero_copy_only=False))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


def bad_rows(values: pd.Series, pattern: str) -> np.ndarray[Any, Any]:
    """Which values do not match ``pattern`` (:data:`INTEGER`, :data:`NUMBER`)."""
    arr = pa.array(values.astype(STRING).fillna("").array)
    return ~np.asarray(pc.match_substring_regex(arr, pattern).to_numpy(zero_copy_only=False))


def errors_frame(errors: list[SchemaError]) -> pd.DataFrame:
    """The lines a lenient reader left out, one row each (``ERROR_COLUMNS``)."""
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


def text_column(
    values: pd.Series,
    name: str,
    source: object = None,
    lines: np.ndarray[Any, Any] | None = None,
) -> pd.Series:
    """A column as the frame's string dtype; a value that is not valid Unicode text
    (a lone surrogate, as an undecodable file name gives) raises :class:`SchemaError`
    naming the row (and ``source``'s line when ``lines`` gives them)."""
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
                **where(source, line),
            )
    return values.astype(STRING)  # not a surrogate after all: let pandas say what it is


def trec_columns(
    fields: Mapping[str, pd.Series], *, what: str, rows: bool = True
) -> dict[str, pd.Series]:
    """The fields of a TREC ``what`` file (``"qrels"``, ``"run"``) as written, each
    by :func:`trec_id`, with a RangeIndex, checked to read back as written.

    ``fields`` maps a field name to its values, row for row, ``query_id``
    among them; with ``rows`` errors name the row (its position in
    ``fields``). Refused with :class:`SchemaError` naming the field and
    value: a value that is not text, an empty field (the line would lose a
    field), a query id starting with ``#`` (a comment to TREC readers), and,
    when one id of the file is percent-encoded, an id written as it is that
    holds a percent code (``%20``, ``%25``, ...): it could not be told from
    an encoded id (``a%20b.md`` beside ``a b.md`` would be one document),
    and decoding the file would change it.

    >>> trec_columns({"query_id": pd.Series(["q 1"]), "doc": pd.Series(["a.md"])},
    ...              what="run")["query_id"].tolist()
    ['q%201']
    """
    texts = {
        name: text_column(values.reset_index(drop=True), name) for name, values in fields.items()
    }
    _check_fields(texts, what, rows)
    spaced = {name: _spaced(values) for name, values in texts.items()}
    written = {name: trec_id(values) for name, values in texts.items()}
    if any(s.any() for s in spaced.values()):
        for name, values in texts.items():
            _check_decodable(name, values, written[name], spaced[name], rows)
    return written


def _row(i: int, rows: bool) -> str:
    return f"row {i}: " if rows else ""


def _check_fields(texts: Mapping[str, pd.Series], what: str, rows: bool) -> None:
    """Refuse a line that would not read back as written: an empty field (the
    line would have one field fewer), or a query id starting with ``#``."""
    qid = texts["query_id"]
    comment = np.asarray(qid.str.startswith("#").fillna(False), dtype=bool)
    empty = {name: np.asarray((col.fillna("") == ""), dtype=bool) for name, col in texts.items()}
    bad = comment | np.logical_or.reduce(list(empty.values()))
    for i in np.flatnonzero(bad).tolist():
        if comment[i]:
            raise SchemaError(
                f"{_row(i, rows)}a TREC {what} line whose query id starts with '#' is a comment "
                "and would be skipped; rename the query"
                + (" or write format='tsv'" if what == "qrels" else ""),
                field="query_id",
                value=qid.iloc[i],
            )
        name = next(n for n, col in empty.items() if col[i])
        raise SchemaError(
            f"{_row(i, rows)}a TREC {what} field must not be empty", field=name, value=""
        )


def _check_decodable(
    name: str, values: pd.Series, written: pd.Series, spaced: np.ndarray[Any, Any], rows: bool
) -> None:
    """In a file that percent-encodes ids, refuse an id written as it is that
    decoding would change: the first such id, named with the encoded id it
    collides with when there is one."""
    maybe = np.flatnonzero(~spaced & np.asarray(values.str.contains("%", regex=False), bool))
    if not len(maybe):
        return
    raw = values.iloc[maybe]
    decoded = decode_id(raw)
    changed = np.asarray(decoded != raw, dtype=bool)
    if not changed.any():
        return
    first = int(maybe[np.argmax(changed)])
    value = str(values.iloc[first])
    twins = np.flatnonzero(spaced & np.asarray(written == value, dtype=bool))
    if len(twins):
        other = int(twins[0])
        raise SchemaError(
            f"{_row(first, rows)}the {name} {shown(repr(value))} and the {name} "
            f"{shown(repr(values.iloc[other]))}{f' (row {other})' if rows else ''} would "
            f"both be written {shown(repr(value))} in a TREC file, where ids holding "
            "whitespace are percent-encoded, and read back as one; rename one of them",
            field=name,
            value=value,
        )
    decoded_value = str(decoded.iloc[int(np.argmax(changed))])
    raise SchemaError(
        f"{_row(first, rows)}the {name} {shown(repr(value))} would read back as "
        f"{shown(repr(decoded_value))}: this TREC file percent-encodes "
        "ids holding whitespace, so an id holding a percent code (%20, %25, %09, ...) "
        "cannot be told from an encoded one; rename it, or keep whitespace out of the "
        "file's ids",
        field=name,
        value=value,
    )
