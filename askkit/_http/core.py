"""The I/O-free half of every askkit HTTP client: requests built, responses and failures read.

A :class:`Core` holds where a client connects, its credentials and its
:class:`~askkit._http.settings.ClientSettings`, and every rule that needs no
network: the URL and credential checks, each request's URL, headers, body
and auth (:meth:`Core.request`), the bounded body reader
(:meth:`Core.body`), and the error for each way a call can fail, mapped by
the tables of :mod:`askkit._http.failures`. The clients (the kimun server
client in :mod:`askkit.retrieve.client`, the embedding and rerank endpoint in
:mod:`askkit.dense`) only move bytes.

**A bad URL is a** :class:`~askkit.errors.UsageError`. The URL is an
argument the caller wrote (or typed on the command line), not data a server
sent: it is the caller's to fix, which is what a UsageError says (and the
command line reports it as one). :class:`~askkit.errors.SchemaError` is for
data of the wrong shape, which the caller did not write. The same holds for a
credential that cannot go into a header.

**Credentials.** The user info of a URL (``http://user:PASSWORD@host``)
never goes into the URL httpx requests (httpx logs it): it is sent as the
Basic auth httpx would have made of it, unless the request carries the bearer
credential (``Authorization: Bearer``), which wins, or the caller's httpx
client has an auth of its own. Neither the password nor the bearer value
appears in a message, a repr or httpx's log lines (:mod:`askkit._http.redact`).

Examples
--------
>>> core = Core("http://u:pw@127.0.0.1:11434/", field="url", example="http://127.0.0.1:11434",
...             bearer=Bearer(), settings=ClientSettings(), name="the Ollama embedder")
>>> core.base_url, core.origin
('http://u:***@127.0.0.1:11434', 'http://127.0.0.1:11434')
>>> core.where(Call("POST", "/api/embed"))
'POST /api/embed to http://u:***@127.0.0.1:11434 (the Ollama embedder)'
>>> Core("127.0.0.1:8080", field="base_url", example="http://127.0.0.1:8080",
...      bearer=Bearer(), settings=ClientSettings())
Traceback (most recent call last):
...
askkit.errors.UsageError: base_url must start with http:// or https:// (for example http://127.0.0.1:8080), got '127.0.0.1:8080'
"""  # noqa: E501 - a doctest's output is one line

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

import httpx

from askkit._http.body import ACCEPT_ENCODING, Body, DeadlinePassed, Progress, Received
from askkit._http.failures import UNREADABLE, classify, status_row
from askkit._http.reading import Unreadable
from askkit._http.redact import (
    LOG_FILTER,
    excerpt,
    printable,
    redact_url,
    scrub,
    scrub_error,
    searchable,
    split_userinfo,
)
from askkit._http.settings import ClientSettings
from askkit.errors import (
    AuthError,
    ProtocolError,
    ServerError,
    ServerStatusError,
    ServerUnavailable,
    UsageError,
)
from askkit.wire import load_json

__all__ = ["Bearer", "Call", "Core"]

_Error = TypeVar("_Error", bound=ServerError)
_Value = TypeVar("_Value")
_URL = re.compile(r"https?://[^/]")


@dataclass(frozen=True, slots=True)
class Call:
    """One request: its method, path and JSON body, whether it carries the bearer
    credential, and whether it may be sent again after a transport failure."""

    method: str
    path: str
    body: Mapping[str, Any] | None = None
    bearer: bool = True
    retry: bool = False

    @property
    def what(self) -> str:
        """``POST /api/embeddings``: how messages name the request."""
        return f"{self.method} {self.path}"


@dataclass(frozen=True, slots=True)
class Bearer:
    """The bearer credential a client sends (``Authorization: Bearer``), and how its
    messages speak of it.

    ``value`` is None when none is sent; ``name`` is what it is (``token``,
    ``API key``); ``source`` where the value came from (``the token= argument``,
    an environment variable), named when the peer rejects it; ``ask`` how to
    give one, for a 401 when none was sent (empty when the peer takes none).
    """

    value: str | None = None
    name: str = "token"
    source: str = ""
    ask: str = ""

    @property
    def described(self) -> str:
        """``the token from the token= argument``: the credential, as messages name it."""
        return f"the {self.name}" + (f" from {self.source}" if self.source else "")


def _size(n: int) -> str:
    return f"{n:,} bytes ({n / 2**20:.1f} MiB)" if n >= 2**20 else f"{n:,} bytes"


class Core:
    """Where a client connects, its credentials and settings, and every rule that needs
    no network.

    Parameters
    ----------
    url:
        The base URL (a trailing ``/`` is dropped); ``http://`` or ``https://``
        with a host, else a :class:`~askkit.errors.UsageError` naming ``field``
        with an ``example``.
    bearer:
        The bearer credential; its value must be printable ASCII.
    settings:
        The limits of every call.
    name:
        What the far end is (``the Ollama embedder``): named, with the URL, in
        every message. Without one (a kimun server: the client is named for
        it), a message about what the server sent names the request alone.

    The class attributes are a client's words and hints: :attr:`noun` and
    :attr:`reply` for the far end and for a whole reply, :attr:`status_hints`
    by status, :attr:`limit_hint` after an oversized body, :attr:`not_json_hint`
    after a body that is not JSON (``{url}`` is the URL as shown), and
    :attr:`shape_message`, the message for an answer of the wrong shape
    (``{subject}``, ``{why}``, ``{excerpt}`` of the answer, ``{url}``).
    """

    noun: ClassVar[str] = "service"
    reply: ClassVar[str] = "complete answer"
    status_hints: ClassVar[Mapping[int, str]] = {}
    limit_hint: ClassVar[str] = ""
    not_json_hint: ClassVar[str] = ""
    shape_message: ClassVar[str] = "{subject}: {why}; received {excerpt}"

    def __init__(
        self,
        url: object,
        *,
        field: str,
        example: str,
        bearer: Bearer,
        settings: ClientSettings,
        name: str = "",
    ) -> None:
        shown = redact_url(url) if isinstance(url, str) else type(url).__name__
        if not isinstance(url, str) or not _URL.match(url):
            raise UsageError(
                f"{field} must start with http:// or https:// (for example {example}), "
                f"got {shown!r}"
            )
        url = url.rstrip("/")
        self.origin, credentials, secrets = split_userinfo(url)
        try:
            host = httpx.URL(self.origin).host
        except (httpx.InvalidURL, ValueError) as exc:
            host, why = "", str(exc)
        else:
            why = "no host"
        if not host:
            raise UsageError(f"{field} is not a valid URL ({why}): {redact_url(url)!r}")
        if bearer.value is not None:
            if not isinstance(bearer.value, str):
                raise UsageError(
                    f"{bearer.described} must be a string, got {type(bearer.value).__name__}"
                )
            if not (bearer.value.isascii() and bearer.value.isprintable()):
                raise UsageError(
                    f"{bearer.described} must be printable ASCII (it is sent in an HTTP header)"
                )
            secrets.add(bearer.value)
        self.base_url = redact_url(url)
        self.name = name
        self.bearer = bearer
        self.auth = httpx.BasicAuth(*credentials) if credentials is not None else None
        self.settings = settings
        self.secrets = searchable(secrets)
        LOG_FILTER.register(self, self.secrets)

    # -- secrets

    def scrub(self, text: str) -> str:
        """``text`` with the bearer value and the URL's password replaced by ``***``."""
        return scrub(text, self.secrets)

    def scrubbed(self, error: _Error) -> _Error:
        """``error`` with every secret scrubbed from its message and its text fields."""
        return scrub_error(error, self.secrets)

    def printable(self, text: str, limit: int = 300) -> str:
        """A peer's text fit for a one-line message, secrets scrubbed."""
        return printable(text, limit, self.secrets)

    def excerpt(self, data: bytes | bytearray | str, limit: int = 200) -> str:
        """The start of a payload, as a repr, secrets scrubbed."""
        return excerpt(data, limit, self.secrets)

    # -- requests

    def where(self, call: Call) -> str:
        """``POST /path to URL (name)``: the request, where it went and, if named, to what."""
        named = f" ({self.name})" if self.name else ""
        return f"{call.what} to {self.base_url}{named}"

    def subject(self, call: Call) -> str:
        """How a message about what the peer sent names the request: :meth:`where` for a
        named peer, else the request alone."""
        return self.where(call) if self.name else call.what

    def request(self, call: Call, http: httpx.Client | httpx.AsyncClient) -> dict[str, Any]:
        """The keywords of ``http.stream(...)`` for ``call`` (a client adds its timeout
        and its trace). The body is JSON with ASCII escapes, so any ``str`` is sent intact."""
        headers = {"Accept": "application/json", "Accept-Encoding": ACCEPT_ENCODING}
        content = None
        if call.body is not None:
            headers["Content-Type"] = "application/json"
            content = json.dumps(call.body, separators=(",", ":")).encode("ascii")
        bearer = call.bearer and self.bearer.value is not None
        if bearer:
            headers["Authorization"] = f"Bearer {self.bearer.value}"
        basic = self.auth is not None and not bearer and http.auth is None
        return {
            "method": call.method,
            "url": self.origin + call.path,
            "content": content,
            "headers": headers,
            "auth": self.auth if basic else httpx.USE_CLIENT_DEFAULT,
        }

    def deadline(self) -> float:
        """When a request started now must be over (``time.monotonic()``)."""
        return time.monotonic() + self.settings.timeout

    def body(
        self, call: Call, response: httpx.Response, progress: Progress, deadline: float
    ) -> Body:
        """Start reading ``response``'s body (raises for a refused encoding or length)."""
        return Body(self, call, response, progress, deadline)

    # -- responses

    def read(
        self,
        call: Call,
        response: Received,
        reader: Callable[[bytes | bytearray], _Value],
    ) -> _Value:
        """The 2xx body as ``reader`` reads it (see :mod:`askkit._http.reading`); the
        error for an error status, an empty body, or a body ``reader`` refuses."""
        if not 200 <= response.status < 300:
            raise self.scrubbed(self.status_error(call, response))
        body = response.body
        hint = self.not_json_hint.format(url=self.base_url)
        if not body or body.isspace():  # not body.strip(): no copy of a large body
            raise self.scrubbed(
                ProtocolError(
                    f"{self.subject(call)} sent an empty body (HTTP {response.status}){hint}",
                    path=call.path,
                )
            )
        try:
            return reader(body)
        except Unreadable as problem:
            raise self.unreadable(call, problem, body) from None

    def unreadable(self, call: Call, problem: Unreadable, body: bytes | bytearray) -> ProtocolError:
        """The error for a body a reader refused (:data:`~askkit._http.failures.UNREADABLE`)."""
        shown = self.excerpt(problem.body if problem.body is not None else body)
        sent = UNREADABLE[problem.kind].format(why=self.printable(problem.why))
        hint = self.not_json_hint.format(url=self.base_url)
        return self.scrubbed(
            ProtocolError(
                f"{self.subject(call)} {sent}: {shown}{hint}", path=call.path, excerpt=shown
            )
        )

    def status_error(self, call: Call, response: Received) -> ServerStatusError:
        """The error for an error status (:data:`~askkit._http.failures.STATUS`), quoting
        the peer's own message."""
        status = response.status
        message = self.service_message(response.body)
        error, template = status_row(status)
        sent = self.bearer.value is not None
        if issubclass(error, AuthError):
            hint = self._auth_hint(sent)
        else:
            hint = self._status_hint(status, response.headers)
            hint = f"; {hint}" if hint else ""
        text = template.format(
            subject=self.subject(call),
            status=status,
            said=f": {message}" if message else "",
            hint=hint,
        )
        fields: dict[str, Any] = {"status": status, "path": call.path, "server_message": message}
        if issubclass(error, AuthError):
            fields["token_sent"] = sent
        return error(text, **fields)

    def _auth_hint(self, sent: bool) -> str:
        bearer = self.bearer
        if sent:
            return f"the {self.noun} rejected {bearer.described}; check its value"
        if bearer.ask:
            article = "an" if bearer.name[:1].lower() in "aeiou" else "a"
            return (
                f"the {self.noun} requires {article} {bearer.name} and none was sent; {bearer.ask}"
            )
        return (
            f"the {self.noun} wants credentials, and {self.name or 'this client'} takes no "
            f"{bearer.name}: check the URL"
        )

    def _status_hint(self, status: int, headers: httpx.Headers) -> str:
        if 300 <= status < 400 and "location" in headers:
            location = self.printable(redact_url(headers["location"]))
            return f"the {self.noun} redirects to {location}: use that URL"
        return self.status_hints.get(status, "")

    def service_message(self, body: bytes | bytearray) -> str:
        """The peer's own error text, else an excerpt of whatever the body is.

        The text is kimun's and Ollama's ``{"error": "..."}``, OpenAI's
        ``{"error": {"message": "..."}}``, or a ``{"message": "..."}`` or
        ``{"detail": "..."}``; secrets are scrubbed before it is cut.
        """
        if not body.strip():
            return ""
        try:
            obj = load_json(body, what="the body")
        except (ValueError, RecursionError):
            return self.excerpt(body.strip(), 120)
        if isinstance(obj, Mapping):
            error = obj.get("error")
            if isinstance(error, Mapping):
                error = error.get("message")
            for text in (error, obj.get("message"), obj.get("detail")):
                if isinstance(text, str):
                    return self.printable(text)
        return self.excerpt(body.strip(), 120)

    # -- failures

    def may_retry(self, call: Call, exc: BaseException, attempts: int) -> bool:
        """Whether ``call`` may be sent again after ``attempts`` failed with ``exc``:
        a transport failure, of a call safe to repeat, with retries left."""
        error, _ = classify(exc)
        return error is ServerUnavailable and call.retry and attempts <= self.settings.retries

    def failure(self, call: Call, exc: BaseException, attempts: int = 1) -> ServerError:
        """The error for a request that failed with ``exc`` after ``attempts``
        (:data:`~askkit._http.failures.TRANSPORT`)."""
        error, template = classify(exc)
        why = template.format(
            noun=self.noun,
            reply=self.reply,
            timeout=f"{self.settings.timeout:g} s timeout",
            progress=exc.progress.describe() if isinstance(exc, DeadlinePassed) else "",
            exc=str(exc) or type(exc).__name__,
            name=type(exc).__name__,
        )
        if error is ServerUnavailable:
            tries = f" after {attempts} attempts" if attempts > 1 else ""
            return self.scrubbed(
                ServerUnavailable(
                    f"{self.where(call)}: {self.printable(why)}{tries}",
                    path=call.path,
                    attempts=attempts,
                )
            )
        return self.transport_error(call, why)

    def transport_error(self, call: Call, what: str) -> ProtocolError:
        """A :class:`ProtocolError` for a response that could not be taken in (``what``)."""
        return self.scrubbed(
            ProtocolError(f"{self.where(call)}: {self.printable(what)}", path=call.path)
        )

    def oversize(self, call: Call, size: int, *, declared: bool) -> ProtocolError:
        """The error for a body over ``max_body_bytes`` (its ``Content-Length``, or what
        it decoded to so far)."""
        limit = _size(self.settings.max_body_bytes)
        what = (
            f"the response declares {_size(size)} (Content-Length), over the {limit} limit"
            if declared
            else f"the response body passed the {limit} limit ({_size(size)} decoded so far)"
        )
        return self.transport_error(call, what + self.limit_hint)

    def shape_error(self, call: Call, why: str | Exception, obj: object) -> ProtocolError:
        """The error for a JSON answer of the wrong shape (``why``), quoting its start."""
        try:
            text = json.dumps(obj, ensure_ascii=False, default=str)
        except (ValueError, RecursionError):  # nested too deeply to print here
            text = f"a {type(obj).__name__} too deeply nested to print"
        shown = self.excerpt(text)
        message = self.shape_message.format(
            subject=self.subject(call),
            why=self.printable(str(why)),
            excerpt=shown,
            url=self.base_url,
        )
        return self.scrubbed(ProtocolError(message, path=call.path, excerpt=shown))
