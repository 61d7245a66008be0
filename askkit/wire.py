"""kimun's wire JSON, in and out.

These are the payloads a kimun server sends: a retrieved chunk
(:class:`ChunkResult`), the ``/api/embeddings`` response
(:class:`EmbeddingsResponse`) and a finished answer job's result
(:class:`AnswerResult`). ``from_dict`` validates at the boundary and raises
:class:`askkit.SchemaError` naming the field (with list indices) and the value;
unknown extra fields are ignored, as kimun's own client ignores them.

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from askkit.errors import SchemaError
from askkit.journal import is_valid_date

__all__ = [
    "MAX_ORDINAL",
    "AnswerResult",
    "ChunkResult",
    "EmbeddingsResponse",
    "check_wire_date",
    "chunk_list",
    "load_json",
]

#: The largest ordinal kimun can carry (a Rust ``usize`` on a 64-bit machine).
MAX_ORDINAL = 2**64 - 1

_WIRE_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def load_json(data: str | bytes | bytearray, *, what: str = "payload") -> Any:
    """Parse JSON text, turning a syntax error into a :class:`SchemaError`."""
    try:
        return json.loads(data)
    except json.JSONDecodeError as exc:
        raise SchemaError(
            f"{what} is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})",
            line=exc.lineno,
            has_value=False,
        ) from None


def _mapping(obj: object, field: str, what: str) -> Mapping[str, Any]:
    if not isinstance(obj, Mapping):
        raise SchemaError(f"expected a JSON object ({what})", field=field or None, value=obj)
    return obj


def _required(obj: Mapping[str, Any], name: str, prefix: str) -> Any:
    if name not in obj:
        raise SchemaError(
            f"missing required field {name!r}", field=_join(prefix, name), has_value=False
        )
    return obj[name]


def _string(value: object, field: str) -> str:
    if not isinstance(value, str):
        raise SchemaError("expected a string", field=field, value=value)
    return value


def _number(value: object, field: str, *, non_negative: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise SchemaError("expected a number", field=field, value=value)
    number = float(value)
    if not math.isfinite(number):
        raise SchemaError("expected a finite number", field=field, value=value)
    if non_negative and number < 0:
        raise SchemaError("expected a number >= 0", field=field, value=value)
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
        raise SchemaError("expected a string date YYYY-MM-DD or null", field=field, value=value)
    if not _WIRE_DATE.fullmatch(value):
        raise SchemaError("expected a date written YYYY-MM-DD", field=field, value=value)
    if not is_valid_date(int(value[0:4]), int(value[5:7]), int(value[8:10])):
        raise SchemaError("not a calendar date (YYYY-MM-DD)", field=field, value=value)
    return value


def _ordinal(value: object, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SchemaError("expected a whole number >= 0", field=field, value=value)
    if value < 0:
        raise SchemaError("expected a whole number >= 0 (0 means absent)", field=field, value=value)
    if value > MAX_ORDINAL:
        raise SchemaError(
            "ordinal does not fit a 64-bit unsigned integer", field=field, value=value
        )
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
            path=_string(_required(data, "path", field), _join(field, "path")),
            title=_string(_required(data, "title", field), _join(field, "title")),
            date=check_wire_date(data.get("date"), _join(field, "date")),
            content=_string(_required(data, "content", field), _join(field, "content")),
            hash=_string(_required(data, "hash", field), _join(field, "hash")),
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
        raise SchemaError("expected a list of chunks", field=field, value=value)
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
            answer=_string(_required(data, "answer", field), _join(field, "answer")),
            sources=chunk_list(_required(data, "sources", field), _join(field, "sources")),
        )

    @classmethod
    def from_json(cls, data: str | bytes | bytearray) -> AnswerResult:
        """Parse from JSON text."""
        return cls.from_dict(load_json(data, what="answer result"))

    def to_dict(self) -> dict[str, Any]:
        """The wire JSON object."""
        return {"answer": self.answer, "sources": [c.to_dict() for c in self.sources]}
