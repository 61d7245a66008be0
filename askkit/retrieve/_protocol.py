"""The protocol half of :mod:`askkit.retrieve.client`: requests, responses and job polling, no I/O.

:class:`_Core` builds every request and checks every response, mapping each
failure to an error a user can act on. Beside it, re-exported here for the
clients: the streamed, capped, inflated response body (:mod:`._body`), the
polling rules of an answer job (:mod:`._jobs`), the returned values
(:mod:`._results`) and what messages may show (:mod:`._redact`). The sync and
async clients only move bytes. Every error leaves with the URL's password and
the token replaced by ``***`` (:func:`redact_url`, :meth:`_Core.scrubbed`).
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar
from urllib.parse import quote

import httpx

from askkit import citations
from askkit._body import ACCEPT_ENCODING, Body, DeadlinePassed, Progress, Received
from askkit._redact import (
    LOG_FILTER,
    excerpt,
    printable,
    redact_url,
    scrub,
    scrub_error,
    searchable,
    split_userinfo,
)
from askkit.errors import (
    AuthError,
    ProtocolError,
    SchemaError,
    ServerError,
    ServerStatusError,
    ServerUnavailable,
)
from askkit.retrieve._jobs import JobWatch
from askkit.retrieve._results import Health, SearchResult
from askkit.retrieve.settings import ClientSettings
from askkit.sources import Turn
from askkit.wire import EmbeddingsResponse, check_string, load_json

__all__ = [
    "ACCEPT_ENCODING",
    "CONTEXT_SIZES",
    "TOKEN_ENV",
    "VAULT_ID",
    "Body",
    "Call",
    "ContextSize",
    "Core",
    "DeadlinePassed",
    "Health",
    "HistoryItem",
    "JobWatch",
    "Progress",
    "Received",
    "SearchResult",
    "check_k",
    "redact_url",
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

_Error = TypeVar("_Error", bound=ServerError)


def _size(n: int) -> str:
    return f"{n:,} bytes ({n / 2**20:.1f} MiB)" if n >= 2**20 else f"{n:,} bytes"


# --------------------------------------------------------------------------
# The shared, I/O-free part: request building, response checking, error mapping.


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
        shown = redact_url(base_url) if isinstance(base_url, str) else base_url
        if not isinstance(base_url, str) or not re.match(r"https?://[^/]", base_url):
            raise SchemaError(
                "the server URL must start with http:// or https:// "
                "(for example http://127.0.0.1:8080)",
                field="base_url",
                value=shown,
            )
        if not isinstance(vault_id, str) or not _VAULT_ID.fullmatch(vault_id):
            raise SchemaError(
                "a kimun vault id is non-empty, does not start with '__' and uses only "
                "letters, digits, '.', '_' and '-'",
                field="vault_id",
                value=vault_id,
            )
        base_url = base_url.rstrip("/")
        # Credentials never go into the URL httpx requests (httpx logs it): the
        # user info travels as the Basic auth httpx would have made of it.
        self.origin, credentials, secrets = split_userinfo(base_url)
        self.auth: httpx.BasicAuth | None = None
        if credentials is not None:
            self.auth = httpx.BasicAuth(*credentials)
        try:
            host = httpx.URL(self.origin).host
        except (httpx.InvalidURL, ValueError) as exc:
            host, why = "", str(exc)
        else:
            why = "no host"
        if not host or not re.match(r"https?://[^/]", self.origin):
            raise SchemaError(
                f"the server URL is not a valid URL ({why})",
                field="base_url",
                value=redact_url(base_url),
            )
        self.base_url = redact_url(base_url)
        self.vault_id = vault_id
        if token is None:
            token = os.environ.get(TOKEN_ENV) or None
            self.token_source = f"the {TOKEN_ENV} environment variable"
        else:
            self.token_source = "the token= argument"  # noqa: S105 - not a secret
        self.token = token or None
        if self.token is not None:
            if not (self.token.isascii() and self.token.isprintable()):
                raise SchemaError(
                    f"the token from {self.token_source} must be printable ASCII "
                    "(it is sent in an HTTP header)",
                    field="token",
                    has_value=False,
                )
            secrets.add(self.token)
        self._secrets = searchable(secrets)
        LOG_FILTER.register(self, self._secrets)
        if not isinstance(settings, ClientSettings):
            raise TypeError(
                f"settings must be an askkit.retrieve.ClientSettings, got {type(settings).__name__}"
                " (for example settings=ClientSettings(timeout=10))"
            )
        self.settings = settings

    def __repr__(self) -> str:
        token = "<hidden>" if self.token else "None"
        return f"({self.base_url!r}, vault_id={self.vault_id!r}, token={token})"

    # -- secrets

    def scrub(self, text: str) -> str:
        """``text`` with the token and the URL's password replaced by ``***``."""
        return scrub(text, self._secrets)

    def scrubbed(self, error: _Error) -> _Error:
        """``error`` with every secret scrubbed from its message and its text fields."""
        return scrub_error(error, self._secrets)

    # -- requests

    def url(self, call: _Call) -> str:
        return self.origin + call.path

    def headers(self, call: _Call) -> dict[str, str]:
        headers = {"Accept": "application/json", "Accept-Encoding": ACCEPT_ENCODING}
        if call.api and self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        return headers

    def deadline(self) -> float:
        """When a request started now must be over (``time.monotonic()``)."""
        return time.monotonic() + self.settings.timeout

    def body(
        self, call: _Call, response: httpx.Response, progress: Progress, deadline: float
    ) -> Body:
        """Start reading ``response``'s body (raises for a refused encoding or length)."""
        return Body(self, call, response, progress, deadline)

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

    def decode(self, call: _Call, response: Received) -> Any:
        """The JSON body of a 2xx response; an error for anything else."""
        status = response.status
        if not 200 <= status < 300:
            raise self.scrubbed(self._status_error(call, response))
        body = response.body
        if not body.strip():
            raise ProtocolError(
                f"{call.what} sent an empty body (HTTP {status}); kimun always sends JSON",
                path=call.path,
            )
        try:
            return load_json(body, what="the body")
        except (ValueError, RecursionError) as exc:  # SchemaError, or what json let out
            why = str(exc) if isinstance(exc, SchemaError) else f"{type(exc).__name__}: {exc}"
            why = re.sub(r"^line \d+: ", "", why)  # a body is one document
            raise self.scrubbed(
                ProtocolError(
                    f"{call.what} sent a body that is not JSON askkit can read "
                    f"({printable(why, secrets=self._secrets)}): "
                    f"{excerpt(body, secrets=self._secrets)}; is {self.base_url} a kimun server?",
                    path=call.path,
                    excerpt=excerpt(body, secrets=self._secrets),
                )
            ) from None

    def _status_error(self, call: _Call, response: Received) -> ServerError:
        status = response.status
        server_message = _server_message(response.body, self._secrets)
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
            location = printable(redact_url(response.headers["location"]), secrets=self._secrets)
            hint = f"; the server redirects to {location}: use that URL"
        elif status == 503:
            hint = "; the server has no embedder or no LLM configured (see GET /health)"
        return ServerStatusError(
            f"{call.what} failed with HTTP {status}{said}{hint}",
            status=status,
            path=call.path,
            server_message=server_message,
        )

    def unavailable(self, call: _Call, exc: Exception, attempts: int) -> ServerUnavailable:
        timeout = f"{self.settings.timeout:g} s timeout"
        if isinstance(exc, DeadlinePassed):
            why = f"no response within the {timeout} ({exc.progress.describe()})"
        elif isinstance(exc, httpx.TimeoutException):
            why = f"no response within the {timeout} ({type(exc).__name__})"
        elif isinstance(exc, httpx.ConnectError):
            why = f"cannot connect ({exc or type(exc).__name__}); is the server running?"
        elif isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError):
            why = f"the connection dropped mid-response ({exc or type(exc).__name__})"
        else:
            why = f"{type(exc).__name__}: {exc}"
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        return self.scrubbed(
            ServerUnavailable(
                f"{call.what} to {self.base_url}: {printable(why, secrets=self._secrets)}{tries}",
                path=call.path,
                attempts=attempts,
            )
        )

    def http_error(self, call: _Call, exc: Exception) -> ProtocolError:
        """httpx refused the response (a corrupt gzip body, a bad redirect...)."""
        return self.scrubbed(
            ProtocolError(
                f"{call.what} to {self.base_url}: "
                f"{printable(str(exc) or type(exc).__name__, secrets=self._secrets)} "
                f"({type(exc).__name__})",
                path=call.path,
            )
        )

    def oversize(self, call: _Call, size: int, *, declared: bool) -> ProtocolError:
        limit = _size(self.settings.max_body_bytes)
        what = (
            f"the response declares {_size(size)} (Content-Length), over the {limit} limit"
            if declared
            else f"the response body passed the {limit} limit ({_size(size)} decoded so far)"
        )
        return self.scrubbed(
            ProtocolError(
                f"{call.what} to {self.base_url}: {what}; raise max_body_bytes in the "
                "client's settings if the server is right",
                path=call.path,
            )
        )

    def shape_error(self, call: _Call, exc: SchemaError, obj: object) -> ProtocolError:
        try:
            text = json.dumps(obj, ensure_ascii=False, default=str)
        except (ValueError, RecursionError):  # nested too deeply to print here
            text = f"a {type(obj).__name__} too deeply nested to print"
        return self.scrubbed(
            ProtocolError(
                f"{call.what} sent an unexpected payload "
                f"({printable(str(exc), secrets=self._secrets)}); "
                f"received {excerpt(text, secrets=self._secrets)} from {self.base_url}",
                path=call.path,
                excerpt=excerpt(text, secrets=self._secrets),
            )
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
        try:
            return check_string(job_id, "job_id")
        except SchemaError as exc:
            raise self.shape_error(call, exc, obj) from None


def _server_message(body: bytes | bytearray, secrets: tuple[str, ...]) -> str:
    """kimun's ``{"error": "..."}``, else an excerpt of whatever the body is (secrets
    scrubbed before either is cut)."""
    if not body.strip():
        return ""
    try:
        obj = load_json(body, what="the body")
    except (ValueError, RecursionError):
        return excerpt(body.strip(), 120, secrets)
    if isinstance(obj, Mapping) and isinstance(obj.get("error"), str):
        return printable(str(obj["error"]), secrets=secrets)
    return excerpt(body.strip(), 120, secrets)


def check_k(k: object) -> int:
    """Validate a retriever's ``k``."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise SchemaError("k must be a whole number >= 0", field="k", value=k)
    return k


Call = _Call
Core = _Core
VAULT_ID = _VAULT_ID
