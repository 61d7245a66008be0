"""Read a saved kimun payload of any shape into a :class:`~askkit.Turn`.

Recognised shapes (by their fields):

- an answer job (``GET /api/job/{id}``): ``{job_id, status, result: {answer, sources}}``;
- an answer result: ``{answer, sources}``;
- a turn record: ``{id?, question, answer?, sources | chunks}``;
- an ``/api/embeddings`` response: ``{chunks, query_time_ms}``;
- a bare list of chunks.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from askkit.errors import SchemaError
from askkit.sources import AskSource, Turn
from askkit.wire import AnswerResult, EmbeddingsResponse, check_string, chunk_list, load_json

__all__ = ["read_turn", "turn_from_payload"]


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


#: The largest payload file read (a payload past it is refused, never read whole).
MAX_PAYLOAD_BYTES = 256 * 1024 * 1024


def _read_regular(p: Path) -> bytes:
    """The bytes of the regular file ``p``: a FIFO or device is refused, never read."""
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise SchemaError(
            f"cannot read the file ({exc.strerror})", file=str(p), has_value=False
        ) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise SchemaError("not a regular file; refused", file=str(p), has_value=False)
        if st.st_size > MAX_PAYLOAD_BYTES:
            raise SchemaError(
                f"{st.st_size} bytes, over the {MAX_PAYLOAD_BYTES}-byte limit for a payload",
                file=str(p),
                has_value=False,
            )
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(MAX_PAYLOAD_BYTES + 1)
    except OSError as exc:
        raise SchemaError(
            f"cannot read the file ({exc.strerror})", file=str(p), has_value=False
        ) from None
    finally:
        os.close(fd)
    if len(data) > MAX_PAYLOAD_BYTES:
        raise SchemaError(
            f"over the {MAX_PAYLOAD_BYTES}-byte limit for a payload", file=str(p), has_value=False
        )
    return data


def read_turn(path: str | Path, *, question: str = "") -> Turn:
    """Read a JSON file holding one payload (see the module doc) as a turn.

    Errors name the file: ``SchemaError: data/x.json: sources[2].ordinal: ...``.
    """
    p = Path(path)
    raw = _read_regular(p)
    try:
        return turn_from_payload(load_json(raw, what="the file"), question=question)
    except SchemaError as exc:
        raise exc.located(file=str(p)) from None
