"""The protocol half of :mod:`askkit.retrieve.client`: kimun's requests and responses, no I/O.

:class:`KimunCore` is askkit's HTTP core (:class:`askkit._http.core.Core`)
with what only a kimun server has: a vault id, the token read from
``ASKKIT_KIMUN_TOKEN``, the query body (history, ``context_size``), the four
routes, and the shapes of ``/health``, a search and a started job. The
polling rules of an answer job are in :mod:`._jobs`, the returned values in
:mod:`._results`. The sync and async clients only move bytes. Every error
leaves with the URL's password and the token replaced by ``***``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar, Literal
from urllib.parse import quote

from askkit import citations
from askkit._http.core import Bearer, Call, Core
from askkit._http.settings import ClientSettings
from askkit.errors import SchemaError, UsageError
from askkit.retrieve import CONTEXT_SIZES, TOKEN_ENV  # the command line reads them, no httpx
from askkit.retrieve._results import Health, SearchResult
from askkit.sources import Turn
from askkit.wire import EmbeddingsResponse, check_string, check_vault_id

__all__ = [
    "CONTEXT_SIZES",
    "TOKEN_ENV",
    "ContextSize",
    "HistoryItem",
    "KimunCore",
    "check_k",
]


ContextSize = Literal["small", "medium", "large"]

#: One earlier exchange: a :class:`Turn`, a ``(question, answer)`` pair or a
#: ``{"question": ..., "answer": ...}`` mapping.
HistoryItem = Turn | tuple[str, str] | Mapping[str, str]


def _history_body(history: Iterable[HistoryItem] | None) -> list[dict[str, str]]:
    if history is None:
        return []
    if isinstance(history, str | bytes | Mapping | Turn):
        raise SchemaError(
            "history must be a list of Turns, (question, answer) pairs or "
            "{'question', 'answer'} dicts",
            field="history",
            value=history,
        )
    out = []
    for i, item in enumerate(history):
        field = f"history[{i}]"
        if isinstance(item, Turn):
            question, answer = item.question, citations.strip(item.answer)
        elif isinstance(item, Mapping):
            if "question" not in item or "answer" not in item:
                raise SchemaError(
                    "expected a dict with 'question' and 'answer'", field=field, value=item
                )
            question, answer = item["question"], item["answer"]
        elif isinstance(item, Sequence) and not isinstance(item, str | bytes) and len(item) == 2:
            question, answer = item[0], item[1]
        else:
            raise SchemaError(
                "expected a Turn, a (question, answer) pair or a {'question', 'answer'} dict",
                field=field,
                value=item,
            )
        if not isinstance(question, str):
            raise SchemaError("expected a string", field=f"{field}.question", value=question)
        if not isinstance(answer, str):
            raise SchemaError("expected a string", field=f"{field}.answer", value=answer)
        out.append({"question": question, "answer": answer})
    return out


class KimunCore(Core):
    """A kimun server's URL, vault id, token and settings, plus every rule that needs no
    network.

    The token is ``token``, or when that is None the :data:`TOKEN_ENV` variable;
    ``""`` sends none. It goes on ``/api/*`` only (``/health`` is open).
    """

    noun: ClassVar[str] = "server"
    reply: ClassVar[str] = "response"
    status_hints: ClassVar[Mapping[int, str]] = {
        503: "the server has no embedder or no LLM configured (see GET /health)"
    }
    limit_hint: ClassVar[str] = (
        "; raise max_body_bytes in the client's settings if the server is right"
    )
    not_json_hint: ClassVar[str] = "; is {url} a kimun server?"
    shape_message: ClassVar[str] = (
        "{subject} sent an unexpected payload ({why}); received {excerpt} from {url}"
    )

    def __init__(
        self,
        base_url: str,
        vault_id: str,
        token: str | None,
        settings: ClientSettings,
    ) -> None:
        if token is None:
            token, source = os.environ.get(TOKEN_ENV), f"the {TOKEN_ENV} environment variable"
        else:
            source = "the token= argument"
        bearer = Bearer(token or None, "token", source, f"pass token=... or set {TOKEN_ENV}")
        super().__init__(
            base_url,
            field="base_url",
            example="http://127.0.0.1:8080",
            bearer=bearer,
            settings=settings,
        )
        try:
            self.vault_id = check_vault_id(vault_id)
        except UsageError as exc:
            raise SchemaError(str(exc), field="vault_id", value=vault_id, has_value=False) from None
        if not isinstance(settings, ClientSettings):
            raise TypeError(
                f"settings must be an askkit.retrieve.ClientSettings, got {type(settings).__name__}"
                " (for example settings=ClientSettings(timeout=10))"
            )

    def __repr__(self) -> str:
        token = "<hidden>" if self.token else "None"
        return f"({self.base_url!r}, vault_id={self.vault_id!r}, token={token})"

    @property
    def token(self) -> str | None:
        """The bearer token sent on ``/api/*`` (None: none is sent)."""
        return self.bearer.value

    # -- requests

    def query_body(
        self,
        query: str,
        history: Iterable[HistoryItem] | None,
        context_size: ContextSize | None,
    ) -> dict[str, Any]:
        """The body of a search or an answer: vault id, query, context size, history."""
        if not isinstance(query, str):
            raise SchemaError("the query must be a string", field="query", value=query)
        body: dict[str, Any] = {"vault_id": self.vault_id, "query": query}
        if context_size is not None:
            if context_size not in CONTEXT_SIZES:
                raise SchemaError(
                    "context_size must be 'small', 'medium' or 'large' (or None for the "
                    "server's configured top_k)",
                    field="context_size",
                    value=context_size,
                )
            body["context_size"] = context_size
        turns = _history_body(history)
        if turns:  # omitted when empty, as kimun's client does
            body["history"] = turns
        return body

    def health_call(self) -> Call:
        return Call("GET", "/health", bearer=False, retry=True)

    def search_call(self, body: dict[str, Any]) -> Call:
        return Call("POST", "/api/embeddings", body, retry=True)

    def answer_call(self, body: dict[str, Any]) -> Call:
        return Call("POST", "/api/answer", body, retry=False)

    def job_call(self, job_id: str) -> Call:
        return Call("GET", f"/api/job/{quote(job_id, safe='')}", retry=False)

    def backoff_delay(self, attempt: int) -> float:
        return float(self.settings.backoff * 2 ** (attempt - 1))

    # -- responses

    def health(self, call: Call, obj: object) -> Health:
        try:
            return Health.from_dict(obj)
        except SchemaError as exc:
            raise self.shape_error(call, exc, obj) from None

    def search(self, call: Call, obj: object, query: str) -> SearchResult:
        try:
            response = EmbeddingsResponse.from_dict(obj)
        except SchemaError as exc:
            raise self.shape_error(call, exc, obj) from None
        return SearchResult(query, response.chunks, response.query_time_ms)

    def job_id(self, call: Call, obj: object) -> str:
        job_id = obj.get("job_id") if isinstance(obj, Mapping) else None
        if not isinstance(job_id, str) or not job_id:
            raise self.shape_error(
                call, SchemaError("expected a non-empty string job_id", field="job_id"), obj
            )
        try:
            return check_string(job_id, "job_id")
        except SchemaError as exc:
            raise self.shape_error(call, exc, obj) from None


def check_k(k: object) -> int:
    """Validate a retriever's ``k``.

    >>> check_k(5)
    5
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise SchemaError("k must be a whole number >= 0", field="k", value=k)
    return k
