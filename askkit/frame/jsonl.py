"""Reading turn logs into the sources frame: a columnar fast path and an exact slow path.

A JSONL turn log holds one record per line: a turn
``{id?, question?, answer?, sources | chunks: [chunk, ...]}`` or a bare wire
chunk. Consecutive bare chunk lines form one result list (one turn).

The fast path parses the whole file with ``pyarrow.json`` against an explicit
schema and applies kimun's ``from_chunk`` rules with Arrow kernels
(:mod:`askkit.frame.columns`). Anything it cannot vouch for (bytes that are
not UTF-8 anywhere in the file, a first line that is not a JSON object, a
parse error, a missing or ill-typed field, a blank line, a null ordinal, an
ordinal beyond int64, an integer ``id``) sends the file to the slow path,
which reads it line by line with askkit's wire validators: that path names the
file, line, field and value of every problem and, in lenient mode, drops
exactly the bad lines.

Every open of the file goes through askkit's one input rule
(:func:`askkit._files.open_input`): a FIFO, a device or a folder is refused
with a :class:`SchemaError` naming it, never read, in strict and lenient mode
alike.

A log is UTF-8, as kimun writes it. ``pyarrow.json`` does not check that, so
the fast path validates every byte of the file (Arrow's UTF-8 validation,
while Arrow parses) before it trusts a string; the slow path refuses a line
that is not UTF-8, naming the field whose string holds the bad bytes, or a
string holding a lone surrogate escape (``"\\ud800"``, which UTF-8 cannot
encode).
"""

from __future__ import annotations

import codecs
import io
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, cast

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from askkit._files import open_input, read_input
from askkit.errors import SchemaError
from askkit.frame.columns import (
    all_valid_dates,
    finish,
    headings_and_matches,
    map_paths,
    take_rows,
)
from askkit.payloads import check_not_empty
from askkit.sources import AskSource, SourceList
from askkit.wire import ChunkResult, check_string, chunk_list, load_json, optional_string

__all__ = [
    "INPUT_NAME",
    "INT64_MAX",
    "Fallback",
    "TurnRecord",
    "decode_document",
    "read_columnar",
    "read_document",
    "read_lines",
]

#: What the input rule's errors call a log file ("the turn log file is a FIFO ...").
INPUT_NAME = "turn log"

INT64_MAX = 2**63 - 1
_BLOCK = 1 << 24
_LINE_BLOCK = 1 << 20
_NEWLINE = ord("\n")
_JSON_WHITESPACE = b" \t\r\n"
_CHUNK_FIELDS = [
    ("path", pa.string()),
    ("title", pa.string()),
    ("date", pa.string()),
    ("content", pa.string()),
    ("hash", pa.string()),
    ("similarity_score", pa.float64()),
    ("ordinal", pa.int64()),
]
_CHUNK = pa.struct(_CHUNK_FIELDS)
_LINE_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("question", pa.string()),
        ("answer", pa.string()),
        ("sources", pa.list_(_CHUNK)),
        ("chunks", pa.list_(_CHUNK)),
        *_CHUNK_FIELDS,
    ]
)
_READ = pj.ReadOptions(block_size=1 << 22)
_PARSE = pj.ParseOptions(explicit_schema=_LINE_SCHEMA, unexpected_field_behavior="ignore")
_REQUIRED = ("path", "title", "content", "hash", "similarity_score")
_TURN_KEYS = ("id", "question", "answer", "sources", "chunks")


def _open(path: Path) -> AbstractContextManager[BinaryIO]:
    """``path`` open for reading, if it is a regular file (askkit's one input rule)."""
    return open_input(path, what=INPUT_NAME)


class Fallback(Exception):
    """The fast path cannot vouch for this file; read it line by line."""


@dataclass(frozen=True, slots=True)
class TurnRecord:
    """One turn as the object path builds it."""

    turn_id: str
    question: str
    answer: str
    line: int
    sources: SourceList = field(default_factory=SourceList)


# --------------------------------------------------------------------------- fast path


def _count_lines(path: Path) -> int | None:
    """Lines in the file (a last line without a newline counts), or ``None`` when
    the file is not UTF-8.

    Read in 1 MiB blocks into reused buffers, which stay in the CPU cache:
    newlines are counted with numpy and each block's bytes validated as UTF-8
    with Arrow (the few bytes of a character cut by the block's end are carried
    into the next block), while ``pyarrow.json`` parses the file on other
    threads.
    """
    newlines = 0
    last = _NEWLINE
    carry = 0  # bytes of an incomplete character at the start of the block
    block = np.empty(_LINE_BLOCK + 3, np.uint8)
    found = np.empty(_LINE_BLOCK, bool)
    with _open(path) as handle:
        f = cast("io.BufferedReader", handle)  # what open_input opens: it reads into a buffer
        while size := f.readinto(block[carry : carry + _LINE_BLOCK].data):
            new = block[carry : carry + size]
            np.equal(new, _NEWLINE, out=found[:size])
            newlines += int(np.count_nonzero(found[:size]))
            last = int(new[-1])
            end = carry + size
            cut = _complete_prefix(block, end)
            if not _utf8(block[:cut]):
                return None
            carry = end - cut
            block[:carry] = block[cut:end]
    if carry:  # the file ends inside a character
        return None
    return newlines + (last != _NEWLINE)


def _complete_prefix(block: np.ndarray[Any, Any], end: int) -> int:
    """Where the last UTF-8 character that ``block[:end]`` holds only in part starts
    (``end`` when none is cut): only its lead byte and continuation bytes are looked
    at; whether they are valid is :func:`_utf8`'s question."""
    for back in range(1, min(3, end) + 1):
        byte = int(block[end - back])
        if byte < 0x80:  # ASCII: nothing is cut
            return end
        if byte >= 0xC0:  # a lead byte: 2, 3 or 4 bytes long
            size = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return end - back if back < size else end
    return end


def _utf8(data: np.ndarray[Any, Any]) -> bool:
    """Whether the bytes are valid UTF-8: Arrow's validation of a one-row string
    array over them (no copy; the GIL is released)."""
    offsets = pa.py_buffer(np.array([0, len(data)], np.int32))
    try:
        pa.Array.from_buffers(pa.string(), 1, [None, offsets, pa.py_buffer(data)]).validate(
            full=True
        )
    except pa.ArrowInvalid:
        return False
    return True


def _count_ordinal_keys(path: Path) -> int:
    """Occurrences of ``"ordinal"`` followed by ``:`` or whitespace: the ``ordinal`` keys.

    A key is always followed by one of these; a string value ``"ordinal"`` is
    followed by ``,``, ``}`` or ``]`` in what JSON writers produce, so it only
    rarely over-counts (which merely sends the file to the slow path). Never
    under-counts.
    """
    keys = [b'"ordinal"' + end for end in (b":", b" ", b"\t", b"\n", b"\r")]
    count = 0
    tail = b""
    with _open(path) as f:
        while block := f.read(_BLOCK):
            joined = tail + block
            count += sum(joined.count(key) for key in keys)
            tail = joined[-(len(keys[0]) - 1) :]
    return count


def _field(items: pa.Array, name: str) -> pa.Array:
    return pc.struct_field(items, name)


def _batch_items(
    batch: pa.RecordBatch,
) -> tuple[pa.Array, np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """(chunk structs, 0-based row in the batch, 0-based position in the list)."""
    sources, chunks = batch.column("sources"), batch.column("chunks")
    if chunks.null_count == len(chunks):
        lists = sources
    elif sources.null_count == len(sources):
        lists = chunks
    else:
        lists = pc.coalesce(sources, chunks)
    is_turn = np.asarray(lists.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    lengths = np.asarray(pc.fill_null(pc.list_value_length(lists), 0).to_numpy(), dtype=np.int64)
    items = pc.list_flatten(lists)
    rows = np.repeat(np.arange(len(lists), dtype=np.int64), lengths)
    starts = np.cumsum(lengths) - lengths
    position = np.arange(len(rows), dtype=np.int64) - starts[rows]
    if is_turn.all():
        return items, rows, position
    bare_rows = np.flatnonzero(~is_turn).astype(np.int64)
    bare = pa.StructArray.from_arrays(
        [batch.column(name).take(bare_rows) for name, _ in _CHUNK_FIELDS],
        fields=list(_CHUNK),
    )
    if len(rows) == 0:
        return bare, bare_rows, np.zeros(len(bare_rows), dtype=np.int64)
    both = pa.concat_arrays([items.cast(_CHUNK), bare])
    all_rows = np.concatenate([rows, bare_rows])
    order = np.argsort(all_rows, kind="stable")
    position = np.concatenate([position, np.zeros(len(bare_rows), dtype=np.int64)])
    return both.take(pa.array(order)), all_rows[order], position[order]


def _check(items: pa.ChunkedArray) -> None:
    for name in _REQUIRED:
        if _field(items, name).null_count:
            raise Fallback(name)
    scores = _field(items, "similarity_score")
    if pc.all(pc.is_finite(scores)).as_py() is False:
        raise Fallback("similarity_score")
    ordinal = _field(items, "ordinal")
    if pc.any(pc.less(ordinal, 0)).as_py() is True:
        raise Fallback("ordinal")
    if not all_valid_dates(_field(items, "date")):
        raise Fallback("date")


def _starts_with_object(path: Path) -> bool:
    """Whether the file's first value starts with ``{`` (after a UTF-8 byte order
    mark and JSON whitespace), as a log's first line does.

    ``pyarrow.json`` crashes the process (a null pointer dereference, apache/arrow
    issue 47409) on a file whose first value is ``null``; it is only ever handed
    a file that starts with an object.
    """
    with _open(path) as f:
        head = f.read(len(codecs.BOM_UTF8))
        if not head.startswith(codecs.BOM_UTF8):
            f.seek(0)
        while block := f.read(_LINE_BLOCK):
            rest = block.lstrip(_JSON_WHITESPACE)
            if rest:
                return rest.startswith(b"{")
    return False


def _parse(path: Path) -> pa.Table:
    """The file through ``pyarrow.json``, one row per line, or :class:`Fallback`."""
    if not _starts_with_object(path):
        raise Fallback("the first line is not a JSON object")
    with ThreadPoolExecutor(1) as pool, _open(path) as handle:  # count lines while Arrow parses
        n_lines = pool.submit(_count_lines, path)
        try:
            table = pj.read_json(handle, read_options=_READ, parse_options=_PARSE)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            raise Fallback(str(exc)) from None
    lines = n_lines.result()
    if lines is None:  # pyarrow.json does not validate UTF-8: the slow path names the line
        raise Fallback("not UTF-8")
    # blank lines (or, with as many blank lines, two records on one line) shift line numbers
    if table.num_rows != lines:
        raise Fallback("line count")
    return table


def _items(
    table: pa.Table,
) -> tuple[pa.ChunkedArray, np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """Every chunk of the file: (structs, 0-based line, 0-based position in its list)."""
    items, rows, pos = [], [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    offset = 0
    for batch in table.to_batches():
        b_items, b_rows, b_pos = _batch_items(batch)
        items.append(b_items)
        rows.append(b_rows + offset)
        pos.append(b_pos)
        offset += batch.num_rows
    return pa.chunked_array(items, _CHUNK), np.concatenate(rows), np.concatenate(pos)


def _turns(
    table: pa.Table, rows: np.ndarray[Any, Any], pos: np.ndarray[Any, Any], name: str
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], pa.Array, pa.Array, pa.Array]:
    """(turn key per chunk, position per chunk, then id, question, answer per line).

    A turn line is its own turn; a run of bare chunk lines is one turn keyed by
    its first line, each chunk at its position in the run.
    """
    n_rows = table.num_rows
    is_turn_row = np.asarray(
        pc.or_(table.column("sources").is_valid(), table.column("chunks").is_valid()).to_numpy(
            zero_copy_only=False
        ),
        dtype=bool,
    )
    prev_bare = np.concatenate([[False], ~is_turn_row[:-1]])
    run_start = np.where(~is_turn_row & ~prev_bare, np.arange(n_rows), -1)
    start_of = np.where(is_turn_row, np.arange(n_rows), np.maximum.accumulate(run_start))
    key = start_of[rows]
    pos = np.where(~is_turn_row[rows], rows - key, pos)
    ids = table.column("id")
    if ids.null_count or not is_turn_row.all():
        generated = pa.array([f"{name}:{i + 1}" for i in range(n_rows)], pa.string())
        ids = pc.if_else(pc.and_(is_turn_row, ids.is_valid()), ids, generated)
    turn_mask = pa.array(is_turn_row)
    question = pc.if_else(turn_mask, pc.fill_null(table.column("question"), ""), "")
    answer = pc.if_else(turn_mask, pc.fill_null(table.column("answer"), ""), "")
    return key, pos, ids, question, answer


def read_columnar(path: Path, name: str) -> pd.DataFrame:
    """The fast path: the whole file through Arrow; raises :class:`Fallback` when unsure.

    The frame's ``attrs["records"]`` is the number of lines read.
    """
    table = _parse(path)
    records = table.num_rows
    items, rows, pos = _items(table)
    # the compiled kernels and Arrow release the GIL: the string columns are cut
    # while the file is checked and citations and scores are scanned (work that a
    # Fallback makes moot is merely wasted)
    pool = ThreadPoolExecutor(2)
    title, date = pc.struct_field(items, "title"), pc.struct_field(items, "date")
    heading = pool.submit(headings_and_matches, title, date)
    paths = pool.submit(map_paths, pc.struct_field(items, "path"))
    wire_ordinal = pc.struct_field(items, "ordinal")
    try:
        _check(items)
        if wire_ordinal.null_count:  # absent is fine, an explicit "ordinal": null is not
            present = len(rows) - wire_ordinal.null_count
            if _count_ordinal_keys(path) != present:
                raise Fallback("ordinal null")
    except Fallback:
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    key, pos, ids, question, answer = _turns(table, rows, pos, name)
    ordinal = np.asarray(pc.fill_null(wire_ordinal, 0).to_numpy(), dtype=np.int64)
    turn_ids = pool.submit(take_rows, ids, pa.array(key))
    pool.shutdown(wait=False)
    base = {
        "turn_key": key,
        "turn_id": turn_ids,
        "question": question,
        "line": key + 1,
        "rank": pos + 1,
        "ordinal": np.where(ordinal == 0, pos + 1, ordinal),
        "path": paths,
        "title": title,
        "heading": heading,
        "wire_date": date,
        "score": pc.struct_field(items, "similarity_score"),
        "text": pc.struct_field(items, "content"),
        "hash": pc.struct_field(items, "hash"),
    }
    del table, items
    frame = finish(base, answer)
    frame.attrs["records"] = records
    return frame


# --------------------------------------------------------------------------- slow path


def _lines(path: Path) -> Iterator[tuple[int, str | bytes]]:
    """(line number, text) of each line; a line that is not UTF-8 comes as its bytes,
    for :func:`askkit.wire.load_json` to name the field that holds them.

    Lines end at LF only, as JSON Lines and the fast path have it: a lone CR
    is JSON whitespace inside a line, not a line break.
    """
    with _open(path) as f:
        for number, raw in enumerate(f, start=1):
            try:
                yield number, raw.decode("utf-8")
            except UnicodeDecodeError:
                yield number, raw


def _check_ordinals(sources: SourceList, prefix: str) -> None:
    for i, s in enumerate(sources):
        if s.ordinal > INT64_MAX:
            raise SchemaError(
                "ordinal does not fit the frame's int64 column (at most 2**63 - 1)",
                field=f"{prefix}[{i}].ordinal" if prefix else "ordinal",
                value=s.ordinal,
            )


def parse_record(obj: Any) -> tuple[str, tuple[str | None, str, str, SourceList] | ChunkResult]:
    """Validate one decoded line: ``("turn", (id, question, answer, sources))`` or a chunk."""
    if not isinstance(obj, dict):
        raise SchemaError("expected a JSON object (a turn or a chunk)", value=obj)
    if obj.get("sources") is not None or obj.get("chunks") is not None:
        key = "sources" if obj.get("sources") is not None else "chunks"
        raw_id = obj.get("id")
        if raw_id is not None and (isinstance(raw_id, bool) or not isinstance(raw_id, str | int)):
            raise SchemaError("expected a string (or integer) id", field="id", value=raw_id)
        if isinstance(raw_id, str):
            check_string(raw_id, "id")
        question = optional_string(obj, "question") or ""
        answer = optional_string(obj, "answer") or ""
        sources = AskSource.from_chunks(chunk_list(obj[key], key))
        _check_ordinals(sources, key)
        return "turn", (None if raw_id is None else str(raw_id), question, answer, sources)
    if "path" not in obj and any(k in obj for k in _TURN_KEYS):
        raise SchemaError(
            "a turn line needs a list of chunks in 'sources' or 'chunks'",
            field="sources",
            value=obj.get("sources"),
        )
    chunk = ChunkResult.from_dict(obj)
    if chunk.ordinal > INT64_MAX:
        _check_ordinals(SourceList([AskSource.from_chunk(0, chunk)]), "")
    return "chunk", chunk


def _parse_line(text: str | bytes) -> tuple[str, Any]:
    """:func:`parse_record` of one line's JSON; every error is a :class:`SchemaError`."""
    try:
        return parse_record(load_json(text, what="the line"))
    except RecursionError:  # a value near the recursion limit, too deep to print
        raise SchemaError("the line is nested too deeply to read", has_value=False) from None


@dataclass
class _Run:
    line: int
    chunks: list[ChunkResult] = field(default_factory=list)


def read_lines(
    path: Path, name: str, *, strict: bool
) -> tuple[list[TurnRecord], list[SchemaError], int]:
    """The slow path: (turns, located errors, records read). Strict mode raises the first error."""
    records: list[TurnRecord] = []
    errors: list[SchemaError] = []
    run: _Run | None = None
    seen = 0

    def close_run() -> None:
        nonlocal run
        if run is not None:
            sources = AskSource.from_chunks(run.chunks)
            records.append(TurnRecord(f"{name}:{run.line}", "", "", run.line, sources))
            run = None

    for number, text in _lines(path):
        if isinstance(text, str) and not text.strip(" \t\r\n"):
            continue  # a blank line (a line that is not UTF-8 is never blank)
        seen += 1
        try:
            _kind, value = _parse_line(text)
        except SchemaError as exc:
            located = exc.located(file=str(path), line=number)
            if strict:
                raise located from None
            errors.append(located)
            close_run()
            continue
        if isinstance(value, ChunkResult):
            if run is None:
                run = _Run(number)
            run.chunks.append(value)
            continue
        close_run()
        turn_id, question, answer, sources = value
        turn_id = turn_id if turn_id is not None else f"{name}:{number}"
        records.append(TurnRecord(turn_id, question, answer, number, sources))
    close_run()
    return records, errors, seen


def read_document(path: Path) -> bytes:
    """The bytes of a whole ``.json`` file; a file that is not a regular one raises."""
    return read_input(path, what=INPUT_NAME)


#: What a ``.json`` turn log holds, said when one is empty.
_DOCUMENT = (
    "one kimun payload (an answer job, an answer result, a turn record, an "
    "/api/embeddings response) or a list of turn records"
)


def decode_document(raw: bytes, path: Path) -> Any:
    """A whole ``.json`` file's bytes, decoded; errors name the file (an empty
    file is said to be empty: :func:`askkit.payloads.check_not_empty`)."""
    try:
        check_not_empty(raw, holds=_DOCUMENT)
        return load_json(raw, what="the file")
    except SchemaError as exc:
        raise exc.located(file=str(path)) from None
