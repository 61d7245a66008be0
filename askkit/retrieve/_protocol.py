"""The protocol half of :mod:`askkit.retrieve.client`: requests, responses and job polling, no I/O.

:class:`_Core` builds every request and checks every response; a response body
is taken in chunk by chunk as it comes off the wire through :class:`_Body`,
which inflates it, caps it and watches the deadline; :class:`_JobWatch` holds
the polling rules. The sync and async clients only move bytes. Every error
leaves with the URL's password and the token replaced by ``***``
(:func:`redact_url`, :meth:`_Core.scrubbed`).
"""

from __future__ import annotations

import json
import os
import re
import time
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar
from urllib.parse import quote, unquote

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
from askkit.wire import AnswerResult, ChunkResult, EmbeddingsResponse, check_string, load_json

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
_EXCERPT = 200
_WHOLE_EXCERPT = 2**20  # bodies up to this size are decoded whole for an excerpt

#: What the clients ask for, and the only content codings they take (one layer).
ACCEPT_ENCODING = "gzip, deflate"
_DECODED = frozenset({"gzip", "deflate"})
#: A compressed body is inflated at most this much at a time (zlib's max_length):
#: one 64 KiB read of a gzip bomb would otherwise inflate to 66 MB at once.
_INFLATE_STEP = 2**20
#: An error response's body is read this far, for the message it carries.
_ERROR_BODY = 64 * 1024

#: The user info of a URL: everything before the last ``@`` of its authority.
_USERINFO = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.\-]*://|//)?(?P<userinfo>[^/?#]*)@")
_HIDDEN = "***"
_MIN_SECRET = 4  # shorter secrets are hidden in URLs, not searched for in free text

_Error = TypeVar("_Error", bound=ServerError)


def redact_url(url: str) -> str:
    """``url`` as it may be shown: the password of its user info replaced by ``***``.

    A user name alone (``https://TOKEN@host``) is hidden too, as it is often a
    token. The clients show every URL this way: in their repr, ``base_url``,
    every error message and (since credentials never go into the URL they
    request) httpx's log lines.

    >>> redact_url("http://kimun:s3cret@127.0.0.1:8080/api")
    'http://kimun:***@127.0.0.1:8080/api'
    >>> redact_url("https://ghp_0123456789@example.org")
    'https://***@example.org'
    >>> redact_url("http://127.0.0.1:8080/a@b")
    'http://127.0.0.1:8080/a@b'
    """
    match = _USERINFO.match(url)
    if match is None:
        return url
    user, colon, password = match["userinfo"].partition(":")
    if not (password if colon else user):
        return url
    shown = f"{user}:{_HIDDEN}" if colon else _HIDDEN
    return f"{match['head'] or ''}{shown}@{url[match.end() :]}"


def _excerpt(data: bytes | bytearray | str, limit: int = _EXCERPT) -> str:
    """The start of a payload, as a repr, with how much was cut."""
    if isinstance(data, bytes | bytearray) and len(data) > _WHOLE_EXCERPT:
        head = bytes(data[: limit * 4]).decode("utf-8", "replace")[:limit]
        return f"{head!r}... ({len(data):,} bytes in all)"
    text = data if isinstance(data, str) else bytes(data).decode("utf-8", "replace")
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text) - limit} more characters)"


def _printable(text: str, limit: int = 300) -> str:
    """A server's text fit for a one-line message: control characters and lone
    surrogates escaped, cut at ``limit`` characters."""
    if len(text) > limit:
        text = f"{text[:limit]}... ({len(text) - limit} more characters)"
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _size(n: int) -> str:
    return f"{n:,} bytes ({n / 2**20:.1f} MiB)" if n >= 2**20 else f"{n:,} bytes"


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
    return check_string(value, name)


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


@dataclass(slots=True)
class _Progress:
    """How far one request got, for the error when its deadline passes.

    The clients feed it httpx's ``trace`` events; :class:`_Body` counts the bytes.
    """

    connected: bool = False
    sent: bool = False
    status: int | None = None
    received: int = 0
    declared: int | None = None  # Content-Length of a body sent without a content encoding

    def trace(self, event: str) -> None:
        """Note one of httpcore's trace events (``connection.connect_tcp.complete``...)."""
        if event.endswith(("connect_tcp.complete", "send_request_headers.started")):
            self.connected = True
        elif event.endswith("receive_response_headers.started"):
            self.connected = self.sent = True

    def describe(self) -> str:
        if self.status is not None:
            of = f" of {self.declared:,}" if self.declared is not None else ""
            return f"HTTP {self.status}, {self.received:,}{of} body bytes received"
        if self.sent:
            return "request sent, no response headers"
        return "connected, request not sent" if self.connected else "not connected"


class _DeadlinePassed(Exception):
    """One request ran past its timeout (internal: the clients retry it or report it)."""

    def __init__(self, progress: _Progress) -> None:
        super().__init__(progress.describe())
        self.progress = progress


@dataclass(frozen=True, slots=True)
class _Received:
    """A whole response: its status, headers and (decoded) body."""

    status: int
    headers: httpx.Headers
    body: bytes | bytearray


class _Body:
    """One response body, taken in chunk by chunk as it comes off the wire.

    It refuses a content encoding other than one gzip or deflate layer and a
    ``Content-Length`` over the cap before any byte is read; it inflates a
    compressed body a bounded step at a time (httpx's own decoding inflates a
    whole socket read at once), stops the request as soon as the decoded bytes
    pass the cap (``max_body_bytes``) or the deadline passes, and keeps what
    came. So a body never holds more than the cap plus one step. An error
    response's body is cut at 64 KiB instead: only its message is wanted.
    """

    def __init__(
        self,
        core: _Core,
        call: _Call,
        response: httpx.Response,
        progress: _Progress,
        deadline: float,
    ) -> None:
        self.core = core
        self.call = call
        self.status = response.status_code
        self.headers = response.headers
        self.progress = progress
        self.deadline = deadline
        self.ok = 200 <= self.status < 300
        cap = core.settings.max_body_bytes
        self.limit = cap if self.ok else min(cap, _ERROR_BODY)
        self.data = bytearray()
        progress.status = self.status
        encoding = self.headers.get("content-encoding", "")
        codings = [c.strip().lower() for c in encoding.split(",")]
        codings = [c for c in codings if c not in {"", "identity"}]
        if len(codings) > 1 or not set(codings) <= _DECODED:
            raise core.scrubbed(
                ProtocolError(
                    f"{call.what} to {core.base_url}: the response is encoded {encoding!r}; "
                    f"askkit takes one gzip or deflate layer at most (it sends Accept-Encoding: "
                    f"{ACCEPT_ENCODING}), so that max_body_bytes bounds what a body inflates to",
                    path=call.path,
                )
            )
        length = self.headers.get("content-length", "")
        declared = int(length) if length.isdecimal() else None
        if not codings:
            progress.declared = declared
        if self.ok and declared is not None and declared > cap:
            raise core.oversize(call, declared, declared=True)
        self.coding = codings[0] if codings else None
        self._zlib = _inflater(self.coding)
        self._inflating = False  # deflate: zlib-wrapped, else raw (as httpx tries both)

    def feed(self, raw: bytes) -> bool:
        """Take the next chunk off the wire; False once an error body has all it needs."""
        if time.monotonic() >= self.deadline:
            raise _DeadlinePassed(self.progress)
        if self._zlib is None:
            return self._take(raw)
        return all(self._take(piece) for piece in self._inflate(raw))

    def received(self) -> _Received:
        """The whole body, once the last chunk was fed."""
        if self._zlib is not None:
            self._take(self._zlib.flush())  # the few bytes zlib may still hold
        return _Received(self.status, self.headers, self.data)

    def _take(self, data: bytes) -> bool:
        size = len(self.data) + len(data)
        if size > self.limit:
            if not self.ok:
                self.data += data[: self.limit - len(self.data)]
                return False
            raise self.core.oversize(self.call, size, declared=False)
        self.data += data
        self.progress.received = size
        return True

    def _inflate(self, data: bytes) -> Iterator[bytes]:
        while data and self._zlib is not None and not self._zlib.eof:
            try:
                piece = self._zlib.decompress(data, _INFLATE_STEP)
            except zlib.error as exc:
                if self.coding == "deflate" and not self._inflating:
                    self._inflating = True
                    self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
                    continue
                raise self.core.scrubbed(
                    ProtocolError(
                        f"{self.call.what} to {self.core.base_url}: the {self.coding} body "
                        f"does not inflate ({exc})",
                        path=self.call.path,
                    )
                ) from None
            self._inflating = True
            stuck = not piece and len(self._zlib.unconsumed_tail) >= len(data)
            data = self._zlib.unconsumed_tail
            if piece:
                yield piece
            if stuck:
                return


def _inflater(coding: str | None) -> Any:
    """A zlib decompressor for ``gzip`` or ``deflate`` (zlib-wrapped first), else None."""
    if coding is None:
        return None
    return zlib.decompressobj(16 + zlib.MAX_WBITS if coding == "gzip" else zlib.MAX_WBITS)


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
        match = _USERINFO.match(base_url)
        self.origin = base_url if match is None else (match["head"] or "") + base_url[match.end() :]
        secrets: set[str] = set()
        self.auth: httpx.BasicAuth | None = None
        if match is not None:
            raw_user, colon, raw_password = match["userinfo"].partition(":")
            user, password = unquote(raw_user), unquote(raw_password)
            if user or password:
                self.auth = httpx.BasicAuth(user, password)
            secrets |= {raw_password, password} if colon else {raw_user, user}
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
        self._secrets = tuple(sorted((s for s in secrets if len(s) >= _MIN_SECRET), key=len)[::-1])
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
        for secret in self._secrets:
            text = text.replace(secret, _HIDDEN)
        return text

    def scrubbed(self, error: _Error) -> _Error:
        """``error`` with every secret scrubbed from its message and its text fields."""
        if self._secrets:
            error.args = tuple(self.scrub(a) if isinstance(a, str) else a for a in error.args)
            for name, value in vars(error).items():
                if isinstance(value, str):
                    setattr(error, name, self.scrub(value))
        return error

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
        self, call: _Call, response: httpx.Response, progress: _Progress, deadline: float
    ) -> _Body:
        """Start reading ``response``'s body (raises for a refused encoding or length)."""
        return _Body(self, call, response, progress, deadline)

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

    def decode(self, call: _Call, response: _Received) -> Any:
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
                    f"({_printable(why)}): {_excerpt(body)}; is {self.base_url} a kimun server?",
                    path=call.path,
                    excerpt=_excerpt(body),
                )
            ) from None

    def _status_error(self, call: _Call, response: _Received) -> ServerError:
        status = response.status
        server_message = _server_message(response.body)
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
            location = _printable(redact_url(response.headers["location"]))
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
        if isinstance(exc, _DeadlinePassed):
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
                f"{call.what} to {self.base_url}: {_printable(why)}{tries}",
                path=call.path,
                attempts=attempts,
            )
        )

    def http_error(self, call: _Call, exc: Exception) -> ProtocolError:
        """httpx refused the response (a corrupt gzip body, a bad redirect...)."""
        return self.scrubbed(
            ProtocolError(
                f"{call.what} to {self.base_url}: "
                f"{_printable(str(exc) or type(exc).__name__)} ({type(exc).__name__})",
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
                f"{call.what} sent an unexpected payload ({_printable(str(exc))}); "
                f"received {_excerpt(text)} from {self.base_url}",
                path=call.path,
                excerpt=_excerpt(text),
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


def _server_message(body: bytes | bytearray) -> str:
    """kimun's ``{"error": "..."}``, else an excerpt of whatever the body is."""
    if not body.strip():
        return ""
    try:
        obj = load_json(body, what="the body")
    except (ValueError, RecursionError):
        return _excerpt(body.strip(), 120)
    if isinstance(obj, Mapping) and isinstance(obj.get("error"), str):
        return _printable(str(obj["error"]))
    return _excerpt(body.strip(), 120)


class _JobWatch:
    """The polling rules of one answer job; the clients only do the I/O and the sleeping."""

    def __init__(self, core: _Core, job_id: str) -> None:
        self.core = core
        self.job_id = job_id
        self.shown_id = _printable(job_id, 80)  # the server's text, in one-line messages
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
                    f"gave up on answer job {self.shown_id}: {self.errors} polls failed in a row"
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
        self.last_status = _printable(status, 80)
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
            message = _printable(error) if isinstance(error, str) and error else None
            raise self.core.scrubbed(
                JobFailed(
                    f"answer job {self.shown_id} failed: {message or 'the server gave no reason'}",
                    job_id=self.job_id,
                    server_message=message,
                )
            )
        return None  # queued, processing, or a status this client does not know: keep polling

    def timeout(self) -> JobTimeout:
        waited = time.monotonic() - self.started
        return JobTimeout(
            f"answer job {self.shown_id} did not finish: still {self.last_status or 'unknown'!r} "
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


Body = _Body
Call = _Call
Core = _Core
DeadlinePassed = _DeadlinePassed
JobWatch = _JobWatch
Progress = _Progress
Received = _Received
VAULT_ID = _VAULT_ID
