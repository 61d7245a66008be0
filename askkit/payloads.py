"""Read a saved kimun payload of any shape into a :class:`~askkit.Turn`.

Recognised shapes (by their fields):

- an answer job (``GET /api/job/{id}``): ``{job_id, status, result: {answer, sources}}``;
- an answer result: ``{answer, sources}``;
- a turn record: ``{id?, question, answer?, sources | chunks}``;
- an ``/api/embeddings`` response: ``{chunks, query_time_ms}``;
- a bare list of chunks.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from askkit._files import read_input
from askkit.errors import SchemaError
from askkit.sources import AskSource, Turn
from askkit.wire import AnswerResult, EmbeddingsResponse, check_string, chunk_list, load_json

__all__ = ["check_not_empty", "read_turn", "turn_from_payload"]

#: What a JSON file of askkit's inputs holds, said when one is empty.
PAYLOAD_SHAPES = (
    "a kimun payload (an answer job, an answer result, a turn record, an /api/embeddings "
    "response or a list of chunks)"
)


def turn_from_payload(obj: Any, *, question: str = "") -> Turn:
    """Build a turn from a decoded payload of any recognised shape."""
    if isinstance(obj, list):
        return Turn(question, "", AskSource.from_chunks(chunk_list(obj, "")))
    if not isinstance(obj, Mapping):
        raise SchemaError("expected a JSON object or a list of chunks", value=obj)
    if "status" in obj and "job_id" in obj:
        status = obj.get("status")
        if status != "completed" or obj.get("result") is None:
            raise SchemaError(
                f"the job has no result (status {status!r}, error {obj.get('error')!r})",
                field="result",
                value=obj.get("result"),
            )
        return Turn.from_answer(question, AnswerResult.from_dict(obj["result"], field="result"))
    if "chunks" in obj and "question" not in obj:
        resp = EmbeddingsResponse.from_dict(obj)
        return Turn(question, "", AskSource.from_chunks(resp.chunks))
    q = check_string(obj.get("question", question), "question")
    answer = check_string(obj.get("answer", ""), "answer")
    key = "sources" if "sources" in obj else "chunks"
    if key not in obj:
        raise SchemaError(
            "not a kimun payload: expected 'sources' or 'chunks' (or a job's 'result')",
            value=sorted(obj)[:10],
        )
    return Turn(q, answer, AskSource.from_chunks(chunk_list(obj[key], key)))


def check_not_empty(raw: bytes, *, holds: str = PAYLOAD_SHAPES) -> None:
    """Refuse a JSON file that holds nothing (no byte, or only whitespace and a byte
    order mark) with a :class:`SchemaError` saying it is empty and what it should
    hold, rather than a JSON syntax error at line 1, column 1.

    >>> check_not_empty(b'{"chunks": []}')
    >>> try:
    ...     check_not_empty(b"")
    ... except SchemaError as exc:
    ...     print(exc.message[:38])
    the file is empty: it should hold a ki
    """
    if not raw.removeprefix(b"\xef\xbb\xbf").strip(b" \t\r\n"):
        state = "is empty" if not raw else "is empty (whitespace only)"
        raise SchemaError(f"the file {state}: it should hold {holds}", has_value=False)


#: The largest payload file read (a payload past it is refused, never read whole).
MAX_PAYLOAD_BYTES = 256 * 1024 * 1024


def read_turn(path: str | Path, *, question: str = "") -> Turn:
    """Read a JSON file holding one payload (see the module doc) as a turn.

    Errors name the file: ``SchemaError: data/x.json: sources[2].ordinal: ...``. The
    file must be a regular file of at most :data:`MAX_PAYLOAD_BYTES` (a FIFO, a
    device or a folder is refused, never read: :func:`askkit._files.read_input`).
    """
    p = Path(path)
    raw = read_input(p, what="payload", limit=MAX_PAYLOAD_BYTES)
    try:
        check_not_empty(raw)
        return turn_from_payload(load_json(raw, what="the file"), question=question)
    except SchemaError as exc:
        raise exc.located(file=str(p)) from None
