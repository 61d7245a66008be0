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
  So is an answer holding what kimun's JSON parser (serde_json) refuses and
  Python's accepts: ``NaN``, ``Infinity``, a number beyond float64's range
  (``1e400``, a 400-digit integer) or a string with a lone surrogate
  (``"\\ud800"``), wherever it is.

:meth:`JsonEndpoint.post_vectors` reads an embedding answer under a memory
bound: each array of numbers in it is located in the body and left there
(a :class:`Numbers`), the rest is parsed as JSON (at most
:data:`MAX_SKELETON_BYTES`), and the caller checks the vectors' count and
widths before :meth:`VectorAnswer.matrix` decodes them straight into one
float32 matrix. Python's ``json`` would build a float object per number:
up to about 13 times the body's size.

The key, and the password of a URL's user info, appear in no message, repr,
exception argument or httpx log line: they are replaced by ``***``.
"""

from __future__ import annotations

import json
import math
import re
import secrets as _secrets
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx
import numpy as np

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

__all__ = ["DEFAULT_TIMEOUT", "MAX_SKELETON_BYTES", "JsonEndpoint", "Numbers", "VectorAnswer"]

#: Seconds one request may take as a whole. kimun's reqwest clients set no
#: timeout at all; askkit bounds every request, generously enough for a batch
#: of 100 chunks on a CPU-bound local model.
DEFAULT_TIMEOUT = 120.0

#: What an embedding answer may hold besides its arrays of numbers (keys, indices,
#: usage counts): Ollama and OpenAI-compatible services send a few hundred bytes.
MAX_SKELETON_BYTES = 2**20

_Error = TypeVar("_Error", bound=ServerError)
_URL = re.compile(r"https?://[^/]")
_FLOAT64_MAX = sys.float_info.max
_KEY_ARRAY = "an array where an object key belongs"

# An array of JSON numbers, after its "[" (JSON's own grammar, possessive: linear time).
_WS = rb"[ \t\n\r]*+"
_NUMBER = rb"-?+(?:0|[1-9][0-9]*+)(?:\.[0-9]++)?+(?:[eE][-+]?+[0-9]++)?+"
_NUMBERS_REST = _WS + _NUMBER + rb"(?:" + _WS + rb"," + _WS + _NUMBER + rb")*+" + _WS + rb"\]"
#: One step through an answer: everything up to the next array of numbers (a string is
#: skipped whole, so a "[" inside one is text), then that array, an unclosed string, or
#: the end. Every position matches, so the steps tile the body.
_STEP = re.compile(
    rb'(?:[^"\[]++|"(?:[^"\\]++|\\.)*+"|\[(?!' + _NUMBERS_REST + rb"))*+"
    rb"(?:(?P<numbers>\[" + _NUMBERS_REST + rb')|(?P<open>")|\Z)',
    re.DOTALL,
)
#: Numbers are decoded this many bytes of text at a time (numpy parses only whole strings).
_PIECE = 2**20


@dataclass(frozen=True, slots=True)
class Numbers:
    """An array of JSON numbers in an answer, left undecoded: where its text is, and its length.

    ``start`` and ``stop`` delimit the text between its brackets in the body.
    It prints as ``[384 numbers]`` (in a message's excerpt of the answer).
    """

    start: int
    stop: int
    count: int

    def __str__(self) -> str:
        return f"[{self.count} number{'' if self.count == 1 else 's'}]"


class VectorAnswer:
    """A JSON answer whose arrays of numbers are :class:`Numbers`, decoded only on demand.

    ``value`` is the answer as :func:`json.loads` would return it, but for
    each array of numbers, which is a :class:`Numbers` (an array with
    anything else in it, or an empty one, is a list as usual). Every array
    of JSON numbers in the answer is one.
    """

    def __init__(
        self, value: Any, body: bytes | bytearray, error: Callable[[str], ProtocolError]
    ) -> None:
        self.value = value
        self._body = body
        self._error = error

    def matrix(self, rows: Sequence[Numbers]) -> np.ndarray[Any, np.dtype[np.float32]]:
        """``rows`` (all of one length) as a float32 ``(len(rows), length)`` matrix.

        Each number is read as a float64, as :func:`json.loads` reads it, then
        rounded to float32; one beyond float32's range becomes infinite (the
        caller checks). The matrix is the only large allocation: the text is
        parsed :data:`_PIECE` bytes at a time, straight into it.
        """
        out = np.empty((len(rows), rows[0].count if rows else 0), dtype=np.float32)
        for i, row in enumerate(rows):
            self._decode_into(row, out[i])
        return out

    def _decode_into(self, numbers: Numbers, row: np.ndarray[Any, np.dtype[np.float32]]) -> None:
        body, pos, filled = self._body, numbers.start, 0
        with memoryview(body) as view:
            while pos < numbers.stop:
                cut = body.find(b",", min(pos + _PIECE, numbers.stop), numbers.stop)
                cut = numbers.stop if cut < 0 else cut
                values = np.fromstring(bytes(view[pos:cut]), dtype=np.float32, sep=",")
                row[filled : filled + values.size] = values[: numbers.count - filled]
                filled += values.size
                pos = cut + 1
        if filled != numbers.count:  # the scan and numpy disagree on what a number is
            raise self._error(f"an array of {numbers.count} numbers read as {filled}")


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
    key_env:
        The environment variable ``api_key`` was read from (the command
        line's), named by a 401's hint instead of ``api_key=``.
    takes_key:
        False for a service that takes no key (Ollama): a 401's hint then
        does not ask for one.
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
        key_env: str | None = None,
        takes_key: bool = True,
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
        self._key_env = key_env
        self._takes_key = takes_key
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
        received = self._exchange(call, body)
        try:
            value = load_json(received.body, what="the body")
        except (ValueError, RecursionError) as exc:  # SchemaError, or what json let out
            raise self._not_json(call, exc, received.body) from None
        return self._checked(call, value, None, received.body)

    def post_vectors(self, path: str, body: Mapping[str, Any]) -> VectorAnswer:
        """POST ``body`` as :meth:`post` does; the answer with its arrays of numbers undecoded.

        The body is scanned once for arrays of JSON numbers, which stay in it
        as :class:`Numbers`; everything else (at most
        :data:`MAX_SKELETON_BYTES`) is parsed as JSON. Check the count and the
        widths, then decode with :meth:`VectorAnswer.matrix`.

        Raises
        ------
        ServerUnavailable, AuthError, ServerStatusError, ProtocolError
            As the module says; a ProtocolError too for an answer holding more
            than :data:`MAX_SKELETON_BYTES` besides its arrays of numbers.
        """
        call = _Call("POST", path)
        received = self._exchange(call, body)
        data = received.body
        encoding = json.detect_encoding(data)
        if encoding not in {"utf-8", "utf-8-sig"}:  # UTF-16 or -32: scanned as UTF-8
            try:
                data = bytes(data).decode(encoding).encode("utf-8")
            except UnicodeDecodeError as exc:
                raise self._not_json(call, exc, data) from None
        skeleton, spans, marker = self._skeleton(call, data)
        try:
            value = load_json(skeleton, what="the body")
        except (ValueError, RecursionError) as exc:
            raise self._not_json(call, exc, data) from None
        arrays = [Numbers(start, stop, data.count(b",", start, stop) + 1) for start, stop in spans]
        value = self._checked(call, value, (marker, arrays), data)
        return VectorAnswer(value, data, lambda why: self._protocol(call, why, data))

    def _exchange(self, call: _Call, body: Mapping[str, Any]) -> Received:
        """Send ``body``; the whole 2xx answer, or the error for anything else."""
        path = call.path
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
        if not 200 <= received.status < 300:
            raise self.scrubbed(self._status_error(call, received))
        return received

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

    # -- the answer

    def _not_json(self, call: _Call, exc: Exception, body: bytes | bytearray) -> ProtocolError:
        why = str(exc) if isinstance(exc, SchemaError) else f"{type(exc).__name__}: {exc}"
        return self._protocol(call, re.sub(r"^line \d+: ", "", why), body)  # one document

    def _protocol(
        self, call: _Call, why: str, body: bytes | bytearray, *, sent: str | None = None
    ) -> ProtocolError:
        """The error for a body that is not JSON (``why``), or that holds what kimun's JSON
        parser refuses (``sent``)."""
        shown = excerpt(body, secrets=self._secrets)
        said = (
            f"sent {sent}, which kimun's JSON parser (serde_json) refuses too"
            if sent is not None
            else f"sent a body that is not JSON ({printable(why, secrets=self._secrets)})"
        )
        return self.scrubbed(
            ProtocolError(
                f"{call.what} to {self.base_url} ({self.what}) {said}: {shown}",
                path=call.path,
                excerpt=shown,
            )
        )

    def _skeleton(
        self, call: _Call, body: bytes | bytearray
    ) -> tuple[bytes, list[tuple[int, int]], str]:
        """``body`` (UTF-8, where no byte of a multi-byte character is ASCII) with each array
        of numbers replaced by a marker string; the arrays' spans (inside the brackets) and
        the markers' common prefix.

        The marker is ``"\\u0000<random>#<i>"``: no answer can hold it by chance
        or on purpose, and it is as much a JSON value as the array it stands for.
        """
        nonce = _secrets.token_hex(8)
        head = b'"\\u0000' + nonce.encode("ascii") + b"#"
        pieces: list[bytes] = []
        spans: list[tuple[int, int]] = []
        size = pos = 0
        with memoryview(body) as view:
            while True:
                step = _STEP.match(body, pos)
                if step is None:  # cannot happen: a step starts at every position
                    raise self._protocol(call, f"unreadable from byte {pos}", body)
                if step.start("open") >= 0:
                    where = step.start("open")
                    raise self._protocol(
                        call, f"a string opened at byte {where} never closes", body
                    )
                start = step.start("numbers")
                stop = start if start >= 0 else step.end()
                marker = head + b'%d"' % len(spans) if start >= 0 else b""
                size += stop - pos + len(marker)
                if size > MAX_SKELETON_BYTES:
                    shown = excerpt(body, secrets=self._secrets)
                    raise self.scrubbed(
                        ProtocolError(
                            f"{call.what} to {self.base_url} ({self.what}): the answer holds more "
                            f"than {MAX_SKELETON_BYTES:,} bytes besides its arrays of numbers (an "
                            f"embedding answer holds a few hundred): {shown}",
                            path=call.path,
                            excerpt=shown,
                        )
                    )
                pieces.append(bytes(view[pos:stop]))
                if start < 0:
                    break
                pieces.append(marker)
                spans.append((start + 1, step.end() - 1))
                pos = step.end()
        return b"".join(pieces), spans, "\x00" + nonce + "#"

    def _checked(
        self,
        call: _Call,
        value: Any,
        arrays: tuple[str, list[Numbers]] | None,
        body: bytes | bytearray,
    ) -> Any:
        """``value``, refused if it holds what kimun's parser refuses; the markers of
        :meth:`_skeleton` (``arrays``: their prefix and what they stand for) swapped back."""
        value, problem = _walk(value, arrays)
        if problem is not None:
            what, path = problem
            where = f" at {_field(path)}" if path else ""
            if what == _KEY_ARRAY:  # the array stood in the body where JSON has a key
                raise self._protocol(call, f"{what}{where}", body)
            raise self._protocol(call, "", body, sent=f"{what}{where}")
        return value

    def _status_error(self, call: _Call, response: Received) -> ServerError:
        status = response.status
        said = _service_message(response.body, self._secrets)
        quoted = f": {said}" if said else ""
        if status in {401, 403}:
            if not self._takes_key:
                hint = (
                    f"the service wants credentials, and {self.what} takes no API key (kimun "
                    "sends none): check the URL"
                )
            elif self._api_key is not None:
                source = f" from {self._key_env}" if self._key_env else ""
                hint = f"the service rejected the API key{source}; check its value"
            elif self._key_env:
                hint = f"the service wants an API key; set {self._key_env}"
            else:
                hint = "the service wants an API key; pass api_key=..."
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


def _walk(
    root: Any, arrays: tuple[str, list[Numbers]] | None
) -> tuple[Any, tuple[str, tuple[str | int, ...]] | None]:
    """``root`` with the markers of ``arrays`` swapped for their :class:`Numbers`, and the
    first value kimun's parser would refuse (what it is, where), if any.

    Iterative: whatever depth :func:`json.loads` reached, this reaches too.
    """
    prefix, numbers = arrays if arrays is not None else ("", [])
    holder = [root]
    stack: list[tuple[list[Any] | dict[str, Any], tuple[str | int, ...] | None]] = [(holder, None)]
    while stack:
        container, path = stack.pop()
        pairs = container.items() if isinstance(container, dict) else enumerate(container)
        for key, item in pairs:
            if isinstance(key, str):  # an object's key
                if prefix and key.startswith(prefix):
                    return root, (_KEY_ARRAY, path or ())
                what = _refused(key)
                if what is not None:
                    return root, (f"{what} as an object key", path or ())
            if isinstance(item, dict | list):
                stack.append((item, () if path is None else (*path, key)))
                continue
            if prefix and isinstance(item, str) and item.startswith(prefix):
                container[key] = numbers[int(item[len(prefix) :])]  # type: ignore[index]
                continue
            what = _refused(item)
            if what is not None:
                return root, (what, () if path is None else (*path, key))
    return holder[0], None


def _refused(value: object) -> str | None:
    """What ``value`` is when kimun's JSON parser refuses it, else None."""
    if isinstance(value, float) and not math.isfinite(value):
        if math.isnan(value):
            return "NaN"
        sign = "-" if value < 0 else ""
        return f"{sign}Infinity (or a number beyond float64's range, such as 1e400)"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > _FLOAT64_MAX:
        return f"a number beyond float64's range (a {len(str(abs(value)))}-digit integer)"
    if isinstance(value, str) and not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return "a string holding a lone surrogate (such as \\ud800)"
    return None


def _field(path: tuple[str | int, ...]) -> str:
    """``("data", 3, "index")`` -> ``data[3].index``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}" if out else part
    return out


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
