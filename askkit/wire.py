"""kimun's wire JSON, in and out.

These are the payloads a kimun server sends: a retrieved chunk
(:class:`ChunkResult`), the ``/api/embeddings`` response
(:class:`EmbeddingsResponse`) and a finished answer job's result
(:class:`AnswerResult`). ``from_dict`` validates at the boundary and raises
:class:`askkit.SchemaError` naming the field (with list indices) and the value;
unknown extra fields are ignored, as kimun's own client ignores them.
:func:`load_json` parses JSON text the same way: whatever the text holds, the
only error that comes out is a :class:`askkit.SchemaError`.

kimun sends UTF-8. A string UTF-8 cannot encode (a lone surrogate, written
``"\\ud800"`` in JSON) can never have come from kimun, so every string field is
refused with one (:func:`check_string`), as are bytes that are not UTF-8.

Examples
--------
>>> c = ChunkResult.from_dict({"path": "a.md", "title": "A", "date": None,
...                            "content": "text", "hash": "h", "similarity_score": 0.5})
>>> c.ordinal  # an older server omits it: 0 means "absent"
0
>>> ChunkResult.from_dict(c.to_dict()) == c
True
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from askkit.errors import SchemaError, UsageError
from askkit.journal import is_valid_date

__all__ = [
    "MAX_ORDINAL",
    "AnswerResult",
    "ChunkResult",
    "EmbeddingsResponse",
    "check_string",
    "check_vault_id",
    "check_wire_date",
    "chunk_list",
    "load_json",
    "optional_string",
]

#: The largest ordinal kimun can carry (a Rust ``usize`` on a 64-bit machine).
MAX_ORDINAL = 2**64 - 1

_WIRE_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
#: kimun's ``CollectionKey::parse``: letters, digits, ``.``, ``_``, ``-``; not ``__`` first.
_VAULT_ID = re.compile(r"(?!__)[A-Za-z0-9._-]+")


def check_vault_id(value: object) -> str:
    """A kimun vault id, as kimun's server and stores accept one, else :class:`UsageError`.

    kimun names a vault's collection by its id (``CollectionKey::parse``): at
    least one letter, digit, ``.``, ``_`` or ``-``, and not starting with
    ``__`` (kimun keeps those names for itself).

    >>> check_vault_id("notes")
    'notes'
    >>> check_vault_id("__fingerprint")
    Traceback (most recent call last):
    ...
    askkit.errors.UsageError: invalid vault id '__fingerprint': use letters, digits, '.', '_' or '-' and do not start with '__' (kimun's rule for a collection name)
    """  # noqa: E501 - a doctest's output is one line
    if not isinstance(value, str) or not _VAULT_ID.fullmatch(value):
        raise UsageError(
            f"invalid vault id {value!r}: use letters, digits, '.', '_' or '-' "
            "and do not start with '__' (kimun's rule for a collection name)"
        )
    return value


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def load_json(data: str | bytes | bytearray, *, what: str = "payload") -> Any:
    """Parse JSON text; every way it can fail is a :class:`SchemaError`.

    ``what`` names the text in messages (``"the line"``, a file name). Bytes are
    decoded strictly: UTF-8 (with or without a byte order mark; UTF-16 and
    UTF-32 as the JSON standard detects them), and bytes that are not valid
    there are refused, naming the field whose string holds them
    (``sources[2].title``) with its raw bytes, else the line and the bytes. A
    syntax error names its line and column; nesting deeper than Python's JSON
    parser reads (about :func:`sys.getrecursionlimit` levels of arrays and
    objects) and an integer longer than :func:`sys.get_int_max_str_digits`
    digits are refused. A lone surrogate escape (``"\\ud800"``) parses: the
    validators refuse it in the fields they read (:func:`check_string`).

    >>> load_json('{"a": [1, 2]}')
    {'a': [1, 2]}
    >>> try:
    ...     load_json(b'{"title": "caf\\xe9"}', what="the line")
    ... except SchemaError as err:
    ...     print(err.field, err.value, err.message, sep="; ")
    title; b'caf\\xe9'; not UTF-8 (unexpected end of data at byte 3 of the string)
    """
    text = _decode(data, what) if isinstance(data, bytes | bytearray) else data
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise SchemaError(
            f"{what} is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})",
            line=exc.lineno,
            has_value=False,
        ) from None
    except RecursionError:
        raise SchemaError(
            f"{what} is nested too deeply: Python's JSON parser reads about "
            f"{sys.getrecursionlimit()} levels of arrays and objects, kimun sends a handful",
            has_value=False,
        ) from None
    except ValueError as exc:  # an integer past sys.get_int_max_str_digits()
        raise SchemaError(
            f"{what} holds a number too long to read ({exc})", has_value=False
        ) from None


def _decode(data: bytes | bytearray, what: str) -> str:
    """JSON bytes as text, strictly (``json.loads`` would let UTF-8-encoded surrogates in)."""
    encoding = json.detect_encoding(data)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise _not_utf8(bytes(data), exc, what) from None


def _not_utf8(data: bytes, exc: UnicodeDecodeError, what: str) -> SchemaError:
    """The error for JSON bytes that do not decode: the field whose string holds the
    first bad bytes when the text parses once they are escaped, else the line."""
    line = data.count(b"\n", 0, exc.start) + 1
    found = None
    if exc.encoding.lower().startswith("utf-8"):
        try:
            found = _escaped_string(json.loads(data.decode(exc.encoding, "surrogateescape")))
        except (ValueError, RecursionError):
            found = None  # not JSON either: name the line
    if found is None:
        encoding = "UTF-8" if exc.encoding.lower().startswith("utf-8") else exc.encoding
        return SchemaError(
            f"{what} is not {encoding} ({exc.reason} at byte {exc.start})",
            line=line,
            value=data[exc.start : exc.end],
        )
    field, raw, is_key = found
    start, reason = _first_bad_byte(raw)
    return SchemaError(
        f"{'a field name is ' if is_key else ''}not UTF-8 "
        f"({reason} at byte {start} of the {'name' if is_key else 'string'})",
        field=field or None,
        value=raw,
        line=line,
    )


def _first_bad_byte(raw: bytes) -> tuple[int, str]:
    """(offset, reason) of the first bytes of ``raw`` that are not UTF-8."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start, exc.reason
    return len(raw), "no error"  # not reached: the caller found bad bytes


def _escaped_string(obj: object) -> tuple[str, bytes, bool] | None:
    """(field, raw bytes, is a key) of the first string, in document order, that
    holds bytes ``surrogateescape`` stood in for; walked without recursion."""
    stack: list[tuple[str, object, bool]] = [("", obj, False)]
    while stack:
        field, value, is_key = stack.pop()
        if isinstance(value, str):
            raw = _escaped_bytes(value)
            if raw is not None:
                return field, raw, is_key
        elif isinstance(value, dict):
            for key, item in reversed(value.items()):
                stack.append((_join(field, key), item, False))
                stack.append((field, key, True))
        elif isinstance(value, list):
            stack.extend((f"{field}[{i}]", v, False) for i, v in reversed(list(enumerate(value))))
    return None


def _escaped_bytes(text: str) -> bytes | None:
    """The raw bytes of a string decoded with ``surrogateescape`` when it holds bytes
    that are not UTF-8; ``None`` when it holds none (or a lone surrogate escape)."""
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        try:
            return text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            return None  # a "\\ud800" escape, not a byte: check_string refuses it
    return None


def _mapping(obj: object, field: str, what: str) -> Mapping[str, Any]:
    if not isinstance(obj, Mapping):
        raise _invalid(f"expected a JSON object ({what})", field or None, obj)
    return obj


def _required(obj: Mapping[str, Any], name: str, prefix: str) -> Any:
    if name not in obj:
        raise SchemaError(
            f"missing required field {name!r}", field=_join(prefix, name), has_value=False
        )
    return obj[name]


def _invalid(message: str, field: str | None, value: object) -> SchemaError:
    """A :class:`SchemaError` for ``value``; a value ``repr`` cannot print (nested
    too deeply, or an integer of more than :func:`sys.get_int_max_str_digits`
    digits) is kept on the error but left out of the message."""
    try:
        return SchemaError(message, field=field, value=value)
    except (RecursionError, ValueError):
        return SchemaError(
            f"{message} (a value too large to print)",
            field=field,
            value=value,
            has_value=False,
        )


def check_string(value: object, field: str) -> str:
    """A wire string: a ``str`` that UTF-8 can encode, else a :class:`SchemaError`.

    kimun sends UTF-8, which cannot carry a lone surrogate (U+D800..U+DFFF,
    ``"\\ud800"`` in JSON): a string holding one never came from kimun and is
    refused, as askkit could not write it to a frame, a file or a server.

    >>> check_string("Afternoon", "title")
    'Afternoon'
    >>> try:
    ...     check_string("A\\ud800", "title")
    ... except SchemaError as err:
    ...     print(err.field, err.message, sep="; ")
    title; holds a lone surrogate (U+D800 at index 1): UTF-8 cannot encode it, kimun never sends one
    """
    if not isinstance(value, str):
        raise _invalid("expected a string", field, value)
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise SchemaError(
                f"holds a lone surrogate (U+{ord(value[exc.start]):04X} at index {exc.start}): "
                "UTF-8 cannot encode it, kimun never sends one",
                field=field,
                value=value,
            ) from None
    return value


def optional_string(obj: Mapping[str, Any], name: str, default: str | None = None) -> str | None:
    """``obj[name]`` as a wire string (:func:`check_string`), or ``default`` when missing or null.

    >>> optional_string({"status": None}, "status", ""), optional_string({"a": "x"}, "a")
    ('', 'x')
    """
    value = obj.get(name)
    if value is None:
        return default
    if not isinstance(value, str):
        raise SchemaError("expected a string or null", field=name, value=value)
    return check_string(value, name)


def _number(value: object, field: str, *, non_negative: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _invalid("expected a number", field, value)
    try:
        number = float(value)
    except OverflowError:
        raise _invalid(
            "expected a number within float64 range (about ±1.8e308)", field, value
        ) from None
    if not math.isfinite(number):
        raise _invalid("expected a finite number", field, value)
    if non_negative and number < 0:
        raise _invalid("expected a number >= 0", field, value)
    return number


def check_wire_date(value: object, field: str = "date") -> str | None:
    """Validate a wire date: ``None`` or a real calendar date written ``YYYY-MM-DD``.

    kimun's server writes dates with chrono's ``%Y-%m-%d`` (four-digit,
    zero-padded year for years 0-9999), so anything else on the wire is
    malformed.

    >>> check_wire_date("2026-04-08")
    '2026-04-08'
    >>> check_wire_date("2026-02-30")
    Traceback (most recent call last):
    ...
    askkit.errors.SchemaError: date: not a calendar date (YYYY-MM-DD), got '2026-02-30'
    """
    if value is None:
        return None
    if not isinstance(value, str):
        raise _invalid("expected a string date YYYY-MM-DD or null", field, value)
    if not _WIRE_DATE.fullmatch(value):
        raise SchemaError("expected a date written YYYY-MM-DD", field=field, value=value)
    if not is_valid_date(int(value[0:4]), int(value[5:7]), int(value[8:10])):
        raise SchemaError("not a calendar date (YYYY-MM-DD)", field=field, value=value)
    return value


def _ordinal(value: object, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _invalid("expected a whole number >= 0", field, value)
    if value < 0:
        raise _invalid("expected a whole number >= 0 (0 means absent)", field, value)
    if value > MAX_ORDINAL:
        raise _invalid("ordinal does not fit a 64-bit unsigned integer", field, value)
    return value


@dataclass(frozen=True, slots=True)
class ChunkResult:
    """One retrieved chunk as a kimun server sends it.

    Attributes
    ----------
    path:
        The vault path as sent (``journal/2026-04-08.md``); not yet sanitized.
    title:
        core's breadcrumb: the section's heading path joined with U+001F.
    date:
        ``YYYY-MM-DD`` from a journal file stem, or ``None``.
    content:
        The chunk text (diacritics folded by kimun's chunker).
    hash:
        The note's content hash.
    similarity_score:
        The retrieval score (higher is better).
    ordinal:
        1-based rank or ``[n]`` number; 0 when the server omitted it.
    """

    path: str
    title: str
    date: str | None
    content: str
    hash: str
    similarity_score: float
    ordinal: int = 0

    @classmethod
    def from_dict(cls, obj: object, *, field: str = "") -> ChunkResult:
        """Validate and build a chunk from a decoded JSON object.

        ``field`` is the location of ``obj`` inside a larger payload
        (``"sources[3]"``); error messages are prefixed with it.
        """
        data = _mapping(obj, field, "a chunk")
        ordinal_value = data.get("ordinal", 0)
        return cls(
            path=check_string(_required(data, "path", field), _join(field, "path")),
            title=check_string(_required(data, "title", field), _join(field, "title")),
            date=check_wire_date(data.get("date"), _join(field, "date")),
            content=check_string(_required(data, "content", field), _join(field, "content")),
            hash=check_string(_required(data, "hash", field), _join(field, "hash")),
            similarity_score=_number(
                _required(data, "similarity_score", field), _join(field, "similarity_score")
            ),
            ordinal=_ordinal(ordinal_value, _join(field, "ordinal")),
        )

    @classmethod
    def from_json(cls, data: str | bytes | bytearray) -> ChunkResult:
        """Parse one chunk from JSON text."""
        return cls.from_dict(load_json(data, what="chunk"))

    def to_dict(self) -> dict[str, Any]:
        """The wire JSON object (``ordinal`` included, 0 when absent)."""
        return {
            "path": self.path,
            "title": self.title,
            "date": self.date,
            "content": self.content,
            "hash": self.hash,
            "similarity_score": self.similarity_score,
            "ordinal": self.ordinal,
        }


def chunk_list(value: object, field: str) -> tuple[ChunkResult, ...]:
    """A JSON list of wire chunks, each validated; ``field`` names the list in errors."""
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise _invalid("expected a list of chunks", field, value)
    return tuple(ChunkResult.from_dict(item, field=f"{field}[{i}]") for i, item in enumerate(value))


@dataclass(frozen=True, slots=True)
class EmbeddingsResponse:
    """The ``POST /api/embeddings`` response: the retrieved chunks and the query time."""

    chunks: tuple[ChunkResult, ...]
    query_time_ms: float = 0.0

    @classmethod
    def from_dict(cls, obj: object, *, field: str = "") -> EmbeddingsResponse:
        """Validate and build from a decoded JSON object."""
        data = _mapping(obj, field, "an /api/embeddings response")
        qt = data.get("query_time_ms", 0)
        return cls(
            chunks=chunk_list(_required(data, "chunks", field), _join(field, "chunks")),
            query_time_ms=_number(qt, _join(field, "query_time_ms"), non_negative=True),
        )

    @classmethod
    def from_json(cls, data: str | bytes | bytearray) -> EmbeddingsResponse:
        """Parse from JSON text."""
        return cls.from_dict(load_json(data, what="/api/embeddings response"))

    def to_dict(self) -> dict[str, Any]:
        """The wire JSON object."""
        return {
            "chunks": [c.to_dict() for c in self.chunks],
            "query_time_ms": self.query_time_ms,
        }


@dataclass(frozen=True, slots=True)
class AnswerResult:
    """A completed answer job's ``result``: the answer text and its sources.

    The sources may arrive in any order; pair them with ``[n]`` citations by
    ordinal (see :class:`askkit.Turn`), never by list position.
    """

    answer: str
    sources: tuple[ChunkResult, ...]

    @classmethod
    def from_dict(cls, obj: object, *, field: str = "") -> AnswerResult:
        """Validate and build from a decoded JSON object."""
        data = _mapping(obj, field, "an answer result")
        return cls(
            answer=check_string(_required(data, "answer", field), _join(field, "answer")),
            sources=chunk_list(_required(data, "sources", field), _join(field, "sources")),
        )

    @classmethod
    def from_json(cls, data: str | bytes | bytearray) -> AnswerResult:
        """Parse from JSON text."""
        return cls.from_dict(load_json(data, what="answer result"))

    def to_dict(self) -> dict[str, Any]:
        """The wire JSON object."""
        return {"answer": self.answer, "sources": [c.to_dict() for c in self.sources]}
