"""Build sources frames from askkit's inputs, and go back to objects.

:func:`sources_frame` reads sources, chunks, wire dicts, turns, payloads and
JSON/JSONL logs into one frame of schema :data:`askkit.frame.schema.COLUMNS`;
:func:`to_sources` and :func:`to_turns` go back without loss.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from operator import attrgetter
from pathlib import Path
from typing import Any, Literal, overload

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from askkit._gc import paused_gc
from askkit.errors import SchemaError
from askkit.frame import kernels
from askkit.frame.columns import finish
from askkit.frame.jsonl import (
    INT64_MAX,
    Fallback,
    TurnRecord,
    decode_document,
    read_columnar,
    read_document,
    read_lines,
)
from askkit.frame.schema import ERROR_COLUMNS, empty_errors, empty_frame
from askkit.payloads import turn_from_payload
from askkit.sources import AskSource, SourceList, Turn, VaultPath, printed_paths
from askkit.wire import AnswerResult, ChunkResult, EmbeddingsResponse, check_string

__all__ = [
    "Loaded",
    "PathInput",
    "sources_frame",
    "to_sources",
    "to_turns",
]

_JSONL_SUFFIXES = frozenset({".jsonl", ".ndjson"})
PathInput = str | os.PathLike[str]


@dataclass(frozen=True, slots=True)
class Loaded:
    """What lenient mode returns: the good rows and one error row per rejected record.

    Unpacks as ``frame, errors = sources_frame(x, strict=False)``. Nothing is
    dropped silently: ``records == records_loaded + len(errors)``, where a
    record is a non-blank line of a JSONL file, a JSON file, or an item of an
    in-memory list.
    """

    frame: pd.DataFrame
    errors: pd.DataFrame
    records: int

    @property
    def records_loaded(self) -> int:
        """Records that made it into :attr:`frame`."""
        return self.records - len(self.errors)

    def __iter__(self) -> Iterator[pd.DataFrame]:
        return iter((self.frame, self.errors))


@overload
def sources_frame(data: Any, *, strict: Literal[True] = ...) -> pd.DataFrame: ...
@overload
def sources_frame(data: Any, *, strict: Literal[False]) -> Loaded: ...
def sources_frame(data: Any, *, strict: bool = True) -> pd.DataFrame | Loaded:
    """One row per source from any input askkit understands; schema :data:`COLUMNS`.

    Parameters
    ----------
    data:
        A list of :class:`AskSource`, :class:`ChunkResult` or wire dicts (one
        result list); a :class:`Turn`, a list of turns or a mapping
        ``{turn_id: Turn}``; a payload (``/api/embeddings`` response, answer
        result or job, turn record), decoded or as :class:`EmbeddingsResponse`
        / :class:`AnswerResult`; a list of turn records; a path to a ``.json``
        file (one payload or a list of turn records) or a ``.jsonl``/
        ``.ndjson`` turn log; or a list of such paths.
    strict:
        ``True`` (default) raises :class:`SchemaError` naming the file, line,
        field and value of the first problem. ``False`` returns
        :class:`Loaded`: the frame of the good records and an errors frame
        (``file, line, field, value, message``), one row per rejected record.

    Examples
    --------
    >>> from askkit.frame.schema import COLUMNS
    >>> sources_frame([]).dtypes.to_dict() == COLUMNS
    True
    """
    if _is_path(data):
        return _from_files([Path(data)], strict=strict)
    if isinstance(data, Sequence) and data and all(_is_path(x) for x in data):
        return _from_files([Path(x) for x in data], strict=strict)
    with paused_gc():  # many new objects beside the caller's many sources
        items = _records_in_memory(data)
        records: list[TurnRecord] = []
        errors: list[SchemaError] = []
        for number, item in enumerate(items, start=1):
            try:
                records.append(_record(item, number))
            except SchemaError as exc:
                if strict:
                    raise exc.located(line=number) if len(items) > 1 else exc from None
                errors.append(exc.located(line=number))
        frame = _from_text_records(records, strict=strict, errors=errors, many=len(items) > 1)
    if strict:
        return frame
    return Loaded(frame, _errors_frame(errors), len(items))


def _record(item: Any, number: int) -> TurnRecord:
    """A record, or the thunk that builds it called; an error is a SchemaError.

    A value nested too deeply for ``repr`` (a JSON document near Python's
    recursion limit) cannot be printed in the error that names it: the record is
    refused all the same.
    """
    try:
        return item() if callable(item) else item  # type: ignore[no-any-return]
    except RecursionError:
        raise SchemaError(
            f"record {number} holds a value nested too deeply to read", has_value=False
        ) from None


def _is_path(x: object) -> bool:
    return isinstance(x, str | os.PathLike)


# --------------------------------------------------------------------------- in memory


def _check_int64(sources: SourceList) -> SourceList:
    if not sources or max(map(attrgetter("ordinal"), sources)) <= INT64_MAX:
        return sources
    for i, s in enumerate(sources):
        if s.ordinal > INT64_MAX:
            raise SchemaError(
                "ordinal does not fit the frame's int64 column (at most 2**63 - 1)",
                field=f"[{i}].ordinal",
                value=s.ordinal,
            )
    return sources


def _sources_of(items: Sequence[Any]) -> SourceList:
    """A list of sources, chunks or wire dicts, each at its position."""
    if set(map(type, items)) == {AskSource}:
        return _check_int64(SourceList(items))
    out: list[AskSource] = []
    for i, item in enumerate(items):
        if isinstance(item, AskSource):
            out.append(item)
        else:
            chunk = (
                item
                if isinstance(item, ChunkResult)
                else ChunkResult.from_dict(item, field=f"[{i}]")
            )
            out.append(AskSource.from_chunk(i, chunk))
    return _check_int64(SourceList(out))


def _payload_record(obj: Any, number: int, default_id: str = "") -> TurnRecord:
    raw_id = obj.get("id") if isinstance(obj, Mapping) else None
    turn = turn_from_payload(obj)
    check_string(turn.question, "question")
    check_string(turn.answer, "answer")
    turn_id = _turn_id(raw_id) if raw_id is not None else (default_id or f"turn-{number}")
    return TurnRecord(turn_id, turn.question, turn.answer, number, _check_int64(turn.sources))


def _turn_id(raw_id: object) -> str:
    """A payload's ``id`` as the frame's ``turn_id``: itself when a string, else ``str``."""
    if isinstance(raw_id, str):
        return check_string(raw_id, "id")
    try:
        printed = str(raw_id)
    except (ValueError, RecursionError):  # an int past the digit limit, a deep list
        raise SchemaError(
            "expected a string (or integer) id; this one is too large to print",
            field="id",
            has_value=False,
        ) from None
    return check_string(printed, "id")


def _is_turn_record(x: object) -> bool:
    return isinstance(x, Mapping) and any(k in x for k in ("sources", "chunks", "result"))


def _records_in_memory(data: Any) -> list[Any]:
    """Records (or thunks that build them, so errors are caught per record)."""
    if isinstance(data, Turn):
        return [TurnRecord("turn-1", data.question, data.answer, 1, _check_int64(data.sources))]
    if isinstance(data, EmbeddingsResponse | AnswerResult):
        data = data.to_dict()
    if isinstance(data, Mapping):
        if data and all(isinstance(v, Turn) for v in data.values()):
            return [
                TurnRecord(str(k), t.question, t.answer, n, _check_int64(t.sources))
                for n, (k, t) in enumerate(data.items(), start=1)
            ]
        return [lambda: _payload_record(data, 1)]
    if isinstance(data, Iterable) and not isinstance(data, str | bytes):
        items = list(data)
        if items and all(isinstance(x, Turn) for x in items):
            return [
                TurnRecord(f"turn-{n}", t.question, t.answer, n, _check_int64(t.sources))
                for n, t in enumerate(items, start=1)
            ]
        if items and all(_is_turn_record(x) for x in items):
            return [(lambda x=x, n=n: _payload_record(x, n)) for n, x in enumerate(items, start=1)]
        return [lambda: TurnRecord("turn-1", "", "", 1, _sources_of(items))] if items else []
    raise TypeError(
        f"sources_frame cannot read a {type(data).__name__}: pass sources, chunks, wire "
        "dicts, turns, a payload, or a path to a .json/.jsonl file"
    )


def _path_parts(
    paths: Sequence[VaultPath], printed: pa.Array, absolute: Sequence[bool]
) -> tuple[pa.Array, pa.Array]:
    """(note, folder) per path, each computed once per distinct (printed, absolute)
    pair: a relative path whose first component is blank prints like an absolute
    one, and the two have different folders."""
    codes = pc.dictionary_encode(printed).indices.to_numpy().astype(np.int64)
    path_key = codes * 2 + np.array(absolute, dtype=np.int64)
    # keys are dense (< 2 * distinct printed paths): one row and the number of
    # each present key by indexing, not sorting; any row of a key will do, as
    # the rows of a key share their note and folder
    row = np.full(2 * (int(codes.max()) + 1), -1, dtype=np.int64)
    row[path_key] = np.arange(len(paths), dtype=np.int64)
    present = row >= 0
    take = pa.array((np.cumsum(present) - 1)[path_key])
    distinct = [paths[i] for i in row[present].tolist()]
    note = pa.array([p.stem for p in distinct], pa.string()).take(take)
    folder = pa.array([p.folder for p in distinct], pa.string()).take(take)
    return note, folder


#: The string fields of a source the frame holds, besides its printed path.
_SOURCE_STRINGS = ("heading", "date", "text", "hash", "title")


def _from_text_records(
    records: list[TurnRecord], *, strict: bool, errors: list[SchemaError], many: bool
) -> pd.DataFrame:
    """:func:`_from_records` of the records whose every string UTF-8 can encode.

    A string holding a lone surrogate cannot go into an Arrow column (nor can
    kimun have sent it; the wire validators refuse one): its record is refused
    (strict; located when ``many``) or reported in ``errors`` and left out. A
    turn's own strings are checked here, the sources' only once building the
    columns has failed on one, so well-formed input pays nothing for them.
    """
    failure: UnicodeEncodeError | None = None
    if all(_encodable(r.turn_id, r.question, r.answer) for r in records):
        try:
            return _from_records(records)
        except UnicodeEncodeError as exc:
            failure = exc
    good: list[TurnRecord] = []
    for record in records:
        problem = _text_problem(record)
        if problem is None:
            good.append(record)
        elif strict:
            raise problem.located(line=record.line) if many else problem
        else:
            errors.append(problem.located(line=record.line))
    if failure is not None and len(good) == len(records):
        raise failure  # not a string of a record: a fault to report, not to hide
    errors.sort(key=lambda e: e.line or 0)
    return _from_records(good)


def _encodable(*texts: str) -> bool:
    """Whether UTF-8 encodes each string (no lone surrogate); ASCII is checked in O(1)."""
    for text in texts:
        if not text.isascii():
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                return False
    return True


def _text_problem(record: TurnRecord) -> SchemaError | None:
    """The error for the first string of the record UTF-8 cannot encode, or None."""
    fields: list[tuple[str, object]] = [
        ("id", record.turn_id),
        ("question", record.question),
        ("answer", record.answer),
    ]
    for i, source in enumerate(record.sources):
        fields.append((f"sources[{i}].path", str(source.path)))
        fields.extend((f"sources[{i}].{name}", getattr(source, name)) for name in _SOURCE_STRINGS)
    for field, value in fields:
        if isinstance(value, str) and not _encodable(value):
            try:
                check_string(value, field)
            except SchemaError as exc:
                return exc
    return None


def _from_records(records: Sequence[TurnRecord]) -> pd.DataFrame:
    """The object path: per-source values from the objects, then :func:`finish`."""
    sources = [s for r in records for s in r.sources]
    if not sources:
        return empty_frame()
    counts = np.array([len(r.sources) for r in records], dtype=np.int64)
    key = np.repeat(np.arange(len(records), dtype=np.int64), counts)
    starts = np.cumsum(counts) - counts
    rank = np.arange(len(sources), dtype=np.int64) - starts[key] + 1

    def per_turn(values: list[Any]) -> pa.Array:
        return pa.array(values, pa.string()).take(pa.array(key))

    def strings(values: Iterable[str | None]) -> pa.Array:
        return pa.array(list(values), pa.string())

    paths = list(map(attrgetter("path"), sources))
    texts, absolute = printed_paths(paths)
    printed = (kernels.attr_strings(texts, (None,)) or [strings(texts)])[0]
    # note and folder: cut from the printed paths when every one is plain (it then
    # prints unchanged and is relative), else once per distinct path object
    note, folder = kernels.plain_paths(printed) or _path_parts(paths, printed, absolute)

    # the string fields in one C pass each when the kernels are built
    names = ("title", "heading", "date", "text", "hash")
    fields = kernels.attr_strings(sources, names) or [
        strings(map(attrgetter(name), sources)) for name in names
    ]
    title, heading, wire_date, text, hash_ = fields

    base = {
        "turn_key": key,
        "turn_id": per_turn([r.turn_id for r in records]),
        "question": [r.question for r in records],
        "line": np.array([r.line for r in records], dtype=np.int64)[key],
        "rank": rank,
        "ordinal": np.fromiter(map(attrgetter("ordinal"), sources), np.int64, len(sources)),
        "path": printed,
        "note": note,
        "folder": folder,
        "title": title,
        "heading": heading,
        "wire_date": wire_date,
        "score": np.fromiter(map(attrgetter("score"), sources), np.float64, len(sources)),
        "text": text,
        "hash": hash_,
    }
    return finish(base, [r.answer for r in records])


def _printed_value(error: SchemaError) -> str:
    """``repr`` of the error's value; ``""`` when it has none or cannot be printed."""
    if not error.has_value:
        return ""
    try:
        return repr(error.value)
    except (ValueError, RecursionError):  # an int past the digit limit, a deep list
        return f"<a {type(error.value).__name__} too large to print>"


def _errors_frame(errors: Sequence[SchemaError]) -> pd.DataFrame:
    if not errors:
        return empty_errors()
    frame = pd.DataFrame(
        {
            "file": [e.file for e in errors],
            "line": [e.line if e.line is not None else 0 for e in errors],
            "field": [e.field or "" for e in errors],
            "value": [_printed_value(e) for e in errors],
            "message": [e.message for e in errors],
        }
    )
    return frame.astype(ERROR_COLUMNS)


# --------------------------------------------------------------------------- files


def _read_file(path: Path, *, strict: bool) -> Loaded:
    """One file, fast path first; the slow path for anything the fast path doubts.

    A file that cannot be read (missing, a FIFO, a device, a folder) raises in
    lenient mode too: it is no record of the log, it is the wrong input.
    """
    name = path.name
    if path.suffix.lower() not in _JSONL_SUFFIXES:
        return _read_json_file(path, strict=strict)
    try:
        frame = read_columnar(path, name)
    except Fallback:
        turns, errors, seen = read_lines(path, name, strict=strict)
        return Loaded(_from_records(turns), _errors_frame(errors), seen)
    return Loaded(frame, empty_errors(), int(frame.attrs.pop("records")))


def _read_json_file(path: Path, *, strict: bool) -> Loaded:
    """A ``.json`` file: one payload (turn id = its ``id`` or the file stem) or a list
    of turn records (ids ``<file name>#<n>`` when absent; ``line`` = item number)."""
    raw = read_document(path)
    try:
        obj = decode_document(raw, path)
    except SchemaError as exc:
        if strict:
            raise
        return Loaded(empty_frame(), _errors_frame([exc]), 1)
    many = isinstance(obj, list) and bool(obj) and all(_is_turn_record(x) for x in obj)
    items: list[Any] = obj if many else [obj]
    records: list[TurnRecord] = []
    errors: list[SchemaError] = []
    for number, item in enumerate(items, start=1):
        default = f"{path.name}#{number}" if many else path.stem
        try:
            records.append(_record(partial(_payload_record, item, number, default), number))
        except SchemaError as exc:
            located = exc.located(file=str(path), line=number if many else None)
            if strict:
                raise located from None
            errors.append(located)
    return Loaded(_from_records(records), _errors_frame(errors), len(items))


def _from_files(paths: Sequence[Path], *, strict: bool) -> pd.DataFrame | Loaded:
    loaded = [_read_file(p, strict=strict) for p in paths]
    frames = [x.frame for x in loaded if len(x.frame)]
    frame = pd.concat(frames, ignore_index=True) if frames else empty_frame()
    if strict:
        return frame
    errs = [x.errors for x in loaded if len(x.errors)]
    errors = pd.concat(errs, ignore_index=True) if errs else empty_errors()
    return Loaded(frame, errors, sum(x.records for x in loaded))


# --------------------------------------------------------------------------- back to objects


def _require(df: pd.DataFrame, names: Iterable[str]) -> None:
    missing = [n for n in names if n not in df.columns]
    if missing:
        raise SchemaError(
            "not a sources frame (build it with askkit.frame.sources_frame)",
            field="columns",
            value=missing,
        )


_OBJECT_COLUMNS = ("path", "heading", "wire_date", "score", "text", "ordinal", "hash", "title")


def to_sources(df: pd.DataFrame) -> SourceList:
    """The frame's rows as :class:`AskSource` objects, in frame order, without loss.

    Paths are rebuilt with :meth:`VaultPath.from_printed`, the raw wire title
    and date come from ``title`` and ``wire_date``.
    """
    _require(df, _OBJECT_COLUMNS)
    cols = {name: df[name].tolist() for name in _OBJECT_COLUMNS}
    return SourceList(
        AskSource(
            path=VaultPath.from_printed(path),
            heading=heading,
            date=None if _missing(date) else date,
            score=float(score),
            text=text,
            ordinal=int(ordinal),
            hash=hash_,
            title=None if _missing(title) else title,
        )
        for path, heading, date, score, text, ordinal, hash_, title in zip(
            *(cols[n] for n in _OBJECT_COLUMNS), strict=True
        )
    )


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and np.isnan(value))


def to_turns(df: pd.DataFrame) -> dict[str, Turn]:
    """``{turn_id: Turn}`` in order of first appearance, sources in frame order.

    A turn is the rows sharing ``(turn_id, line)``; a ``turn_id`` naming two
    turns (two lines) raises :class:`SchemaError`. Turns with no sources have
    no rows, so they do not come back.
    """
    _require(df, (*_OBJECT_COLUMNS, "turn_id", "question", "answer", "line"))
    keys = df[["turn_id", "line"]].drop_duplicates()
    dup = keys["turn_id"].duplicated(keep=False)
    if dup.any():
        first = keys[dup].iloc[0]
        raise SchemaError(
            "turn_id names more than one turn (different lines); make the ids unique",
            field="turn_id",
            value=first["turn_id"],
        )
    sources = to_sources(df)
    positions = pd.Series(np.arange(len(df)), index=df.index).groupby(
        df["turn_id"].to_numpy(), sort=False
    )
    out: dict[str, Turn] = {}
    questions = df["question"].tolist()
    answers = df["answer"].tolist()
    for turn_id, pos in positions.indices.items():
        idx = [int(i) for i in pos]
        first_row = idx[0]
        out[str(turn_id)] = Turn(
            questions[first_row], answers[first_row], SourceList(sources[i] for i in idx)
        )
    return out
