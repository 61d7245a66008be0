"""The protocol half of :mod:`askkit.retrieve.client`: requests, responses and job polling, no I/O.

:class:`_Core` builds every request and checks every response; :class:`_JobWatch`
holds the polling rules. The sync and async clients only move bytes.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import quote

import httpx

from askkit import citations
from askkit.errors import (
    AuthError,
    JobFailed,
    JobTimeout,
    ProtocolError,
    SchemaError,
    ServerError,
    ServerStatusError,
    ServerUnavailable,
)
from askkit.retrieve.settings import ClientSettings
from askkit.sources import AskSource, SourceList, Turn
from askkit.wire import AnswerResult, ChunkResult, EmbeddingsResponse

__all__ = [
    "CONTEXT_SIZES",
    "TOKEN_ENV",
    "VAULT_ID",
    "Call",
    "ContextSize",
    "Core",
    "Health",
    "HistoryItem",
    "JobWatch",
    "SearchResult",
    "check_k",
]

#: The environment variable the token is read from when ``token=None``.
TOKEN_ENV = "ASKKIT_KIMUN_TOKEN"  # noqa: S105 - a variable name, not a secret

#: kimun's ``context_size`` values and the number of chunks each asks for.
CONTEXT_SIZES: Mapping[str, int] = {"small": 10, "medium": 20, "large": 40}

ContextSize = Literal["small", "medium", "large"]

#: One earlier exchange: a :class:`Turn`, a ``(question, answer)`` pair or a
#: ``{"question": ..., "answer": ...}`` mapping.
HistoryItem = Turn | tuple[str, str] | Mapping[str, str]

#: kimun's ``CollectionKey`` rule for a vault id.
_VAULT_ID = re.compile(r"(?!__)[A-Za-z0-9._-]+")
_EXCERPT = 200


def _excerpt(data: bytes | str, limit: int = _EXCERPT) -> str:
    """The start of a payload, as a repr, with how much was cut."""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text) - limit} more characters)"


def _bool(data: Mapping[str, Any], name: str) -> bool:
    value = data.get(name)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise SchemaError("expected true, false or null", field=name, value=value)
    return value


def _optional_str(data: Mapping[str, Any], name: str, default: str | None = None) -> str | None:
    value = data.get(name)
    if value is None:
        return default
    if not isinstance(value, str):
        raise SchemaError("expected a string or null", field=name, value=value)
    return value


@dataclass(frozen=True, slots=True)
class Health:
    """``GET /health``: what the server runs. Missing or null fields take their default.

    >>> Health.from_dict({"status": "ok", "embedder": "ollama"}).capability
    'semantic_only'
    """

    status: str = ""
    reranker: bool = False
    embedder: str | None = None
    llm_provider: str | None = None
    auth_required: bool = False

    @classmethod
    def from_dict(cls, obj: object) -> Health:
        """Validate a decoded ``/health`` body (unknown fields are ignored)."""
        if not isinstance(obj, Mapping):
            raise SchemaError("expected a JSON object (a /health response)", value=obj)
        return cls(
            status=_optional_str(obj, "status", "") or "",
            reranker=_bool(obj, "reranker"),
            embedder=_optional_str(obj, "embedder"),
            llm_provider=_optional_str(obj, "llm_provider"),
            auth_required=_bool(obj, "auth_required"),
        )

    @property
    def capability(self) -> Literal["unconfigured", "semantic_only", "full"]:
        """As kimun's client reads it: no embedder, search only, or search and answers."""
        if self.embedder is None:
            return "unconfigured"
        return "semantic_only" if self.llm_provider is None else "full"


@dataclass(frozen=True, slots=True)
class SearchResult:
    """``POST /api/embeddings``: the chunks retrieved for ``query`` (best first)."""

    query: str
    chunks: tuple[ChunkResult, ...]
    query_time_ms: float = 0.0

    @property
    def sources(self) -> SourceList:
        """The chunks as the UI shows them (:class:`~askkit.AskSource`)."""
        return AskSource.from_chunks(self.chunks)

    def to_turn(self) -> Turn:
        """A turn with no answer: the question and what was retrieved for it."""
        return Turn(self.query, "", self.sources)

    def to_response(self) -> EmbeddingsResponse:
        """The wire response (for saving, or ``askkit sources``)."""
        return EmbeddingsResponse(self.chunks, self.query_time_ms)

    def _repr_html_(self) -> str:
        return self.to_turn()._repr_html_()


# --------------------------------------------------------------------------
# The shared, I/O-free part: request building, response checking, polling.


@dataclass(frozen=True, slots=True)
class _Call:
    method: str
    path: str
    body: dict[str, Any] | None = None
    api: bool = True  # /api/* carries the token
    retry: bool = False  # safe to send again after a transport failure

    @property
    def what(self) -> str:
        return f"{self.method} {self.path}"


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


class _Core:
    """Where to connect, the token and the settings, plus every rule that needs no network."""

    def __init__(
        self,
        base_url: str,
        vault_id: str,
        token: str | None,
        settings: ClientSettings,
    ) -> None:
        if not isinstance(base_url, str) or not re.match(r"https?://[^/]", base_url):
            raise SchemaError(
                "the server URL must start with http:// or https:// "
                "(for example http://127.0.0.1:8080)",
                field="base_url",
                value=base_url,
            )
        if not isinstance(vault_id, str) or not _VAULT_ID.fullmatch(vault_id):
            raise SchemaError(
                "a kimun vault id is non-empty, does not start with '__' and uses only "
                "letters, digits, '.', '_' and '-'",
                field="vault_id",
                value=vault_id,
            )
        self.base_url = base_url.rstrip("/")
        self.vault_id = vault_id
        if token is None:
            token = os.environ.get(TOKEN_ENV) or None
            self.token_source = f"the {TOKEN_ENV} environment variable"
        else:
            self.token_source = "the token= argument"  # noqa: S105 - not a secret
        self.token = token or None
        if not isinstance(settings, ClientSettings):
            raise TypeError(
                f"settings must be an askkit.retrieve.ClientSettings, got {type(settings).__name__}"
                " (for example settings=ClientSettings(timeout=10))"
            )
        self.settings = settings

    def __repr__(self) -> str:
        token = "<hidden>" if self.token else "None"
        return f"({self.base_url!r}, vault_id={self.vault_id!r}, token={token})"

    # -- requests

    def url(self, call: _Call) -> str:
        return self.base_url + call.path

    def headers(self, call: _Call) -> dict[str, str]:
        headers = {"Accept": "application/json"}
        if call.api and self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        return headers

    def query_body(
        self,
        query: str,
        history: Iterable[HistoryItem] | None,
        context_size: ContextSize | None,
    ) -> dict[str, Any]:
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

    def health_call(self) -> _Call:
        return _Call("GET", "/health", api=False, retry=True)

    def search_call(self, body: dict[str, Any]) -> _Call:
        return _Call("POST", "/api/embeddings", body, retry=True)

    def answer_call(self, body: dict[str, Any]) -> _Call:
        return _Call("POST", "/api/answer", body, retry=False)

    def job_call(self, job_id: str) -> _Call:
        return _Call("GET", f"/api/job/{quote(job_id, safe='')}", retry=False)

    def backoff_delay(self, attempt: int) -> float:
        return float(self.settings.backoff * 2 ** (attempt - 1))

    # -- responses

    def decode(self, call: _Call, response: httpx.Response) -> Any:
        """The JSON body of a 2xx response; an error for anything else."""
        status = response.status_code
        if not 200 <= status < 300:
            raise self._status_error(call, response)
        body = response.content
        if not body.strip():
            raise ProtocolError(
                f"{call.what} sent an empty body (HTTP {status}); kimun always sends JSON",
                path=call.path,
            )
        try:
            return json.loads(body)
        except ValueError as exc:
            why = (
                f"{exc.msg} at line {exc.lineno} column {exc.colno}"
                if isinstance(exc, json.JSONDecodeError)
                else "not UTF-8"
            )
            raise ProtocolError(
                f"{call.what} sent a body that is not JSON ({why}): {_excerpt(body)}; "
                f"is {self.base_url} a kimun server?",
                path=call.path,
                excerpt=_excerpt(body),
            ) from None

    def _status_error(self, call: _Call, response: httpx.Response) -> ServerError:
        status = response.status_code
        server_message = _server_message(response)
        said = f": {server_message}" if server_message else ""
        if status in {401, 403}:
            if self.token is None:
                hint = (
                    f"the server requires a token and none was sent; pass token=... "
                    f"or set {TOKEN_ENV}"
                )
            else:
                hint = f"the server rejected the token from {self.token_source}; check its value"
            return AuthError(
                f"{call.what} was refused (HTTP {status}{said}): {hint}",
                status=status,
                path=call.path,
                server_message=server_message,
                token_sent=self.token is not None,
            )
        hint = ""
        if 300 <= status < 400 and "location" in response.headers:
            hint = f"; the server redirects to {response.headers['location']}: use that URL"
        elif status == 503:
            hint = "; the server has no embedder or no LLM configured (see GET /health)"
        return ServerStatusError(
            f"{call.what} failed with HTTP {status}{said}{hint}",
            status=status,
            path=call.path,
            server_message=server_message,
        )

    def unavailable(self, call: _Call, exc: Exception, attempts: int) -> ServerUnavailable:
        if isinstance(exc, httpx.TimeoutException):
            why = (
                f"no response within the {self.settings.timeout:g} s timeout ({type(exc).__name__})"
            )
        elif isinstance(exc, httpx.ConnectError):
            why = f"cannot connect ({exc or type(exc).__name__}); is the server running?"
        elif isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError):
            why = f"the connection dropped mid-response ({exc or type(exc).__name__})"
        else:
            why = f"{type(exc).__name__}: {exc}"
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        return ServerUnavailable(
            f"{call.what} to {self.base_url}: {why}{tries}", path=call.path, attempts=attempts
        )

    def shape_error(self, call: _Call, exc: SchemaError, obj: object) -> ProtocolError:
        text = json.dumps(obj, ensure_ascii=False, default=str)
        return ProtocolError(
            f"{call.what} sent an unexpected payload ({exc}); received {_excerpt(text)}",
            path=call.path,
            excerpt=_excerpt(text),
        )

    def health(self, call: _Call, obj: object) -> Health:
        try:
            return Health.from_dict(obj)
        except SchemaError as exc:
            raise self.shape_error(call, exc, obj) from None

    def search(self, call: _Call, obj: object, query: str) -> SearchResult:
        try:
            response = EmbeddingsResponse.from_dict(obj)
        except SchemaError as exc:
            raise self.shape_error(call, exc, obj) from None
        return SearchResult(query, response.chunks, response.query_time_ms)

    def job_id(self, call: _Call, obj: object) -> str:
        job_id = obj.get("job_id") if isinstance(obj, Mapping) else None
        if not isinstance(job_id, str) or not job_id:
            raise self.shape_error(
                call, SchemaError("expected a non-empty string job_id", field="job_id"), obj
            )
        return job_id


def _server_message(response: httpx.Response) -> str:
    """kimun's ``{"error": "..."}``, else an excerpt of whatever the body is."""
    body = response.content
    if not body.strip():
        return ""
    try:
        obj = json.loads(body)
    except ValueError:
        return _excerpt(body.strip(), 120)
    if isinstance(obj, Mapping) and isinstance(obj.get("error"), str):
        return str(obj["error"])
    return _excerpt(body.strip(), 120)


class _JobWatch:
    """The polling rules of one answer job; the clients only do the I/O and the sleeping."""

    def __init__(self, core: _Core, job_id: str) -> None:
        self.core = core
        self.job_id = job_id
        self.call = core.job_call(job_id)
        self.polls = 0
        self.errors = 0
        self.started = time.monotonic()
        self.last_status: str | None = None

    @property
    def exhausted(self) -> bool:
        return self.polls >= self.core.settings.max_polls

    def on_error(self, exc: ServerError) -> None:
        """Count a failed poll; re-raise it when it cannot heal or too many came in a row."""
        self.polls += 1
        healable = isinstance(exc, ServerUnavailable) or (
            isinstance(exc, ServerStatusError)
            and not isinstance(exc, AuthError)
            and (exc.status or 0) >= 500
        )
        self.errors += 1
        if not healable or self.errors >= self.core.settings.max_poll_errors:
            if healable:
                exc.add_note(
                    f"gave up on answer job {self.job_id}: {self.errors} polls failed in a row"
                )
            raise exc

    def on_status(self, obj: object) -> AnswerResult | None:
        """The answer when the job completed, None while it runs; raises when it failed."""
        self.polls += 1
        self.errors = 0
        status = obj.get("status") if isinstance(obj, Mapping) else None
        if not isinstance(status, str) or not isinstance(obj, Mapping):
            raise self.core.shape_error(
                self.call,
                SchemaError("expected a job status with a string 'status'", field="status"),
                obj,
            )
        self.last_status = status
        if status == "completed":
            result = obj.get("result")
            if result is None:
                raise self.core.shape_error(
                    self.call,
                    SchemaError("a completed job must carry a result", field="result"),
                    obj,
                )
            try:
                return AnswerResult.from_dict(result, field="result")
            except SchemaError as exc:
                raise self.core.shape_error(self.call, exc, obj) from None
        if status == "failed":
            error = obj.get("error")
            message = error if isinstance(error, str) and error else None
            raise JobFailed(
                f"answer job {self.job_id} failed: {message or 'the server gave no reason'}",
                job_id=self.job_id,
                server_message=message,
            )
        return None  # queued, processing, or a status this client does not know: keep polling

    def timeout(self) -> JobTimeout:
        waited = time.monotonic() - self.started
        return JobTimeout(
            f"answer job {self.job_id} did not finish: still {self.last_status or 'unknown'!r} "
            f"after {self.polls} polls over {waited:.2f} s; raise max_polls "
            f"(now {self.core.settings.max_polls}) or poll_interval "
            f"(now {self.core.settings.poll_interval:g} s) in the client's settings to wait longer",
            job_id=self.job_id,
            polls=self.polls,
            waited=waited,
            last_status=self.last_status,
        )


def check_k(k: object) -> int:
    """Validate a retriever's ``k``."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise SchemaError("k must be a whole number >= 0", field="k", value=k)
    return k


Call = _Call
Core = _Core
JobWatch = _JobWatch
VAULT_ID = _VAULT_ID
