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
"""

from __future__ import annotations

import contextlib
import mmap
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyarrow import csv as pacsv

from askkit.errors import SchemaError

__all__ = ["Table", "read_table", "shown"]

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
    comment or padded line. ``None`` for anything else (the general path then
    reads it, and names what is wrong).

    Only single bytes are searched for up front (``memchr``, a few ms per
    100 MB); a blank line, a doubled separator or a padded line leaves an empty
    field, which the check after the read finds, and a line with another number
    of fields fails the read itself.
    """
    if not len(data) or any(data.find(b) >= 0 for b in (b"\r", b"\x0b", b"\x0c")):
        return None
    if data.find(b"#") >= 0 and (data[:1] == b"#" or data.find(b"\n#") >= 0):
        return None  # a comment line
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
) -> Table:
    """The file's fields as string columns named ``names``.

    ``extra``: lines may have more fields than ``names`` (ignored). ``comments``:
    a line whose first field starts with ``#`` is skipped. ``numbers``: fields
    the clean path may parse as these types (a value that does not parse sends
    the file to the general path, whose columns are strings). Errors name the
    file, the line, and the line itself.
    """
    file = str(path)
    try:
        with path.open("rb") as handle:
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
        expected = f"at least {want}" if extra else f"{want}"
        for i in np.flatnonzero(bad).tolist():
            error = SchemaError(
                f"expected {expected} whitespace-separated fields ({' '.join(names)}), "
                f"got {int(counts[i])}",
                field="line",
                value=shown(lines[i].as_py()),
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
