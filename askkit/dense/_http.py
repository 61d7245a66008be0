"""One JSON POST to an embedding or rerank service, with askkit's errors and no secrets shown.

:class:`JsonEndpoint` is what the HTTP embedders (Ollama, OpenAI-compatible)
and the HTTP reranker share: a base URL, an optional bearer key, a timeout,
and :meth:`JsonEndpoint.post`, which sends a JSON body and returns the decoded
JSON answer. The body is read as it streams, through the kimun client's
bounded reader (at most ``max_body_bytes`` decoded, one gzip or deflate
layer, the whole request within ``timeout``). Every failure is one of
askkit's errors:

- the service cannot be reached, does not answer in time, or drops the
  connection: :class:`~askkit.errors.ServerUnavailable`;
- HTTP 401 or 403: :class:`~askkit.errors.AuthError`;
- any other error status: :class:`~askkit.errors.ServerStatusError`, quoting
  the service's own message (Ollama's ``{"error": "..."}``, OpenAI's
  ``{"error": {"message": "..."}}``);
- an answer that is not JSON, or not the expected shape (the callers check
  it with :meth:`JsonEndpoint.shape_error`): :class:`~askkit.errors.ProtocolError`.

The key, and the password of a URL's user info, appear in no message, repr,
exception argument or httpx log line: they are replaced by ``***``.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx

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
    UsageError,
)
from askkit.retrieve.settings import ClientSettings
from askkit.wire import load_json

__all__ = ["DEFAULT_TIMEOUT", "JsonEndpoint"]

#: Seconds one request may take as a whole. kimun's reqwest clients set no
#: timeout at all; askkit bounds every request, generously enough for a batch
#: of 100 chunks on a CPU-bound local model.
DEFAULT_TIMEOUT = 120.0

_Error = TypeVar("_Error", bound=ServerError)
_URL = re.compile(r"https?://[^/]")


@dataclass(frozen=True, slots=True)
class _Call:
    """What the bounded reader needs to know of a request (as the kimun client's ``Call``)."""

    method: str
    path: str

    @property
    def what(self) -> str:
        return f"{self.method} {self.path}"


class JsonEndpoint:
    """An HTTP service askkit POSTs JSON to: an embedder's or a reranker's base URL.

    Parameters
    ----------
    url:
        The base URL (``http://127.0.0.1:11434``, ``https://api.openai.com/v1``);
        a trailing ``/`` is dropped. User info (``http://user:pw@host``) is sent
        as Basic auth (unless ``api_key`` is given: the bearer key is sent
        instead) and never shown.
    api_key:
        Sent as ``Authorization: Bearer <api_key>`` when given.
    timeout:
        Seconds one request may take as a whole (> 0).
    what:
        What the service is, for messages (``"the Ollama embedder"``).
    field:
        The argument ``url`` came from, for messages.
    max_body_bytes:
        The most bytes an answer may decode to (64 MiB).
    """

    def __init__(
        self,
        url: str,
        *,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        what: str = "the service",
        field: str = "url",
        max_body_bytes: int = 64 * 2**20,
    ) -> None:
        if not isinstance(url, str) or not _URL.match(url):
            shown = redact_url(url) if isinstance(url, str) else type(url).__name__
            raise UsageError(
                f"{field} must start with http:// or https:// (for example "
                f"http://127.0.0.1:11434), got {shown!r}"
            )
        secrets: set[str] = set()
        if api_key is not None:
            if not isinstance(api_key, str):
                raise UsageError(f"api_key must be a string, got {type(api_key).__name__}")
            if not api_key or not (api_key.isascii() and api_key.isprintable()):
                raise UsageError(
                    "api_key must be non-empty printable ASCII (it is sent in an HTTP header)"
                )
            secrets.add(api_key)
        url = url.rstrip("/")
        self._origin, credentials, url_secrets = split_userinfo(url)
        secrets |= url_secrets
        try:
            host = httpx.URL(self._origin).host
        except (httpx.InvalidURL, ValueError) as exc:
            host, why = "", str(exc)
        else:
            why = "no host"
        if not host:
            raise UsageError(f"{field} is not a valid URL ({why}): {redact_url(url)!r}")
        self.base_url = redact_url(url)
        self.what = what
        self._api_key = api_key
        self._auth = httpx.BasicAuth(*credentials) if credentials and api_key is None else None
        self.settings = ClientSettings(timeout=timeout, max_body_bytes=max_body_bytes)
        self._secrets = searchable(secrets)
        LOG_FILTER.register(self, self._secrets)
        self._http = httpx.Client(timeout=self.settings.timeout)

    @property
    def has_key(self) -> bool:
        """Whether a bearer key is sent (the key itself is not exposed)."""
        return self._api_key is not None

    @property
    def timeout(self) -> float:
        """Seconds one request may take as a whole."""
        return self.settings.timeout

    def __repr__(self) -> str:
        key = "<hidden>" if self._api_key is not None else "None"
        return f"JsonEndpoint({self.base_url!r}, api_key={key})"

    def close(self) -> None:
        """Close the HTTP connections."""
        self._http.close()

    # -- secrets (the bounded reader calls scrubbed and oversize)

    def scrub(self, text: str) -> str:
        """``text`` with the key and the URL's password replaced by ``***``."""
        return scrub(text, self._secrets)

    def scrubbed(self, error: _Error) -> _Error:
        """``error`` with every secret scrubbed from its message and text fields."""
        return scrub_error(error, self._secrets)

    def oversize(self, call: _Call, size: int, *, declared: bool) -> ProtocolError:
        limit = f"{self.settings.max_body_bytes:,} bytes"
        what = (
            f"the response declares {size:,} bytes (Content-Length), over the {limit} limit"
            if declared
            else f"the response body passed the {limit} limit ({size:,} decoded so far)"
        )
        return self.scrubbed(
            ProtocolError(f"{call.what} to {self.base_url}: {what}", path=call.path)
        )

    # -- the request

    def post(self, path: str, body: Mapping[str, Any]) -> Any:
        """POST ``body`` as JSON to ``base_url + path``; the decoded JSON answer.

        Raises
        ------
        ServerUnavailable, AuthError, ServerStatusError, ProtocolError
            As the module says.
        """
        call = _Call("POST", path)
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "Accept-Encoding": ACCEPT_ENCODING,
        }
        if self._api_key is not None:
            headers["Authorization"] = f"Bearer {self._api_key}"
        content = json.dumps(body).encode("ascii")  # ASCII escapes: any str is sent intact
        progress = Progress()
        deadline = time.monotonic() + self.settings.timeout
        try:
            with self._http.stream(
                "POST",
                self._origin + path,
                content=content,
                headers=headers,
                auth=self._auth or httpx.USE_CLIENT_DEFAULT,
                extensions={"trace": lambda event, _info: progress.trace(event)},
            ) as response:
                reader = Body(self, call, response, progress, deadline)
                for chunk in response.iter_raw():
                    if not reader.feed(chunk):
                        break
                received = reader.received()
        except (httpx.TransportError, DeadlinePassed) as exc:
            raise self._unavailable(call, exc) from None
        except (httpx.HTTPError, httpx.InvalidURL, httpx.StreamError) as exc:
            raise self.scrubbed(
                ProtocolError(
                    f"{call.what} to {self.base_url}: "
                    f"{printable(str(exc) or type(exc).__name__, secrets=self._secrets)} "
                    f"({type(exc).__name__})",
                    path=path,
                )
            ) from None
        return self._decode(call, received)

    def _unavailable(self, call: _Call, exc: Exception) -> ServerUnavailable:
        timeout = f"{self.settings.timeout:g} s timeout"
        if isinstance(exc, DeadlinePassed):
            why = f"no complete answer within the {timeout} ({exc.progress.describe()})"
        elif isinstance(exc, httpx.TimeoutException):
            why = f"no answer within the {timeout} ({type(exc).__name__})"
        elif isinstance(exc, httpx.ConnectError):
            why = f"cannot connect ({exc or type(exc).__name__}); is the service running?"
        elif isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError):
            why = f"the connection dropped mid-answer ({exc or type(exc).__name__})"
        else:
            why = f"{type(exc).__name__}: {exc}"
        return self.scrubbed(
            ServerUnavailable(
                f"{call.what} to {self.base_url} ({self.what}): "
                f"{printable(why, secrets=self._secrets)}",
                path=call.path,
            )
        )

    def _decode(self, call: _Call, response: Received) -> Any:
        status = response.status
        if not 200 <= status < 300:
            raise self.scrubbed(self._status_error(call, response))
        try:
            return load_json(response.body, what="the body")
        except (ValueError, RecursionError) as exc:  # SchemaError, or what json let out
            why = str(exc) if isinstance(exc, SchemaError) else f"{type(exc).__name__}: {exc}"
            why = re.sub(r"^line \d+: ", "", why)  # a body is one document
            shown = excerpt(response.body, secrets=self._secrets)
            raise self.scrubbed(
                ProtocolError(
                    f"{call.what} to {self.base_url} ({self.what}) sent a body that is not "
                    f"JSON ({printable(why, secrets=self._secrets)}): {shown}",
                    path=call.path,
                    excerpt=shown,
                )
            ) from None

    def _status_error(self, call: _Call, response: Received) -> ServerError:
        status = response.status
        said = _service_message(response.body, self._secrets)
        quoted = f": {said}" if said else ""
        if status in {401, 403}:
            hint = (
                "the service rejected the API key; check its value"
                if self._api_key is not None
                else "the service wants an API key; pass api_key=..."
            )
            return AuthError(
                f"{call.what} to {self.base_url} ({self.what}) was refused "
                f"(HTTP {status}{quoted}): {hint}",
                status=status,
                path=call.path,
                server_message=said,
                token_sent=self._api_key is not None,
            )
        return ServerStatusError(
            f"{call.what} to {self.base_url} ({self.what}) failed with HTTP {status}{quoted}",
            status=status,
            path=call.path,
            server_message=said,
        )

    def shape_error(self, path: str, why: str, obj: object) -> ProtocolError:
        """A :class:`ProtocolError` for an answer of the wrong shape, quoting its start."""
        try:
            text = json.dumps(obj, ensure_ascii=False, default=str)
        except (ValueError, RecursionError):
            text = f"a {type(obj).__name__} too deeply nested to print"
        shown = excerpt(text, secrets=self._secrets)
        return self.scrubbed(
            ProtocolError(
                f"POST {path} to {self.base_url} ({self.what}): "
                f"{printable(why, secrets=self._secrets)}; received {shown}",
                path=path,
                excerpt=shown,
            )
        )


def _service_message(body: bytes | bytearray, secrets: tuple[str, ...]) -> str:
    """The service's own error text: ``{"error": "..."}``, ``{"error": {"message": "..."}}``,
    ``{"message": "..."}`` or ``{"detail": "..."}``, else an excerpt of the body."""
    if not body.strip():
        return ""
    try:
        obj = load_json(body, what="the body")
    except (ValueError, RecursionError):
        return excerpt(body.strip(), 120, secrets)
    if isinstance(obj, Mapping):
        error = obj.get("error")
        if isinstance(error, Mapping):
            error = error.get("message")
        for text in (error, obj.get("message"), obj.get("detail")):
            if isinstance(text, str):
                return printable(text, secrets=secrets)
    return excerpt(body.strip(), 120, secrets)
