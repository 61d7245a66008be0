"""One JSON POST to an embedding or rerank service, with askkit's errors and no secrets shown.

:class:`JsonEndpoint` is what the HTTP embedders (Ollama, OpenAI-compatible)
and the HTTP reranker share: a base URL, an optional bearer key, a timeout,
and :meth:`JsonEndpoint.post`, which sends a JSON body and returns the decoded
JSON answer. It only moves bytes: askkit's HTTP core
(:class:`askkit._http.core.Core`) checks the URL and the key, builds the
request, reads the body as it streams (at most ``max_body_bytes`` decoded,
one gzip or deflate layer, the whole request within ``timeout``) and maps
every failure to one of askkit's errors:

- the service cannot be reached, does not answer in time, or drops the
  connection: :class:`~askkit.errors.ServerUnavailable`;
- HTTP 401 or 403: :class:`~askkit.errors.AuthError`;
- any other error status: :class:`~askkit.errors.ServerStatusError`, quoting
  the service's own message (Ollama's ``{"error": "..."}``, OpenAI's
  ``{"error": {"message": "..."}}``);
- an answer that is not JSON, or not the expected shape (the callers check
  it with :meth:`JsonEndpoint.shape_error`): :class:`~askkit.errors.ProtocolError`.
  So is an answer holding what kimun's JSON parser (serde_json) refuses and
  Python's accepts (:func:`askkit._http.reading.read_strict_json`).

:meth:`JsonEndpoint.post_vectors` reads an embedding answer under a memory
bound (:func:`askkit._http.reading.read_vectors`): the caller checks the
vectors' count and widths before :meth:`~askkit._http.reading.VectorAnswer.matrix`
decodes them straight into one float32 matrix.

The key, and the password of a URL's user info, appear in no message, repr,
exception argument or httpx log line: they are replaced by ``***``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import httpx

from askkit._http.body import Progress, Received
from askkit._http.core import Bearer, Call, Core
from askkit._http.failures import HANDLED
from askkit._http.reading import Unreadable, VectorAnswer, read_strict_json, read_vectors
from askkit._http.settings import ClientSettings
from askkit.errors import ProtocolError, UsageError

__all__ = ["DEFAULT_TIMEOUT", "JsonEndpoint"]

#: Seconds one request may take as a whole. kimun's reqwest clients set no
#: timeout at all; askkit bounds every request, generously enough for a batch
#: of 100 chunks on a CPU-bound local model.
DEFAULT_TIMEOUT = 120.0

_Value = TypeVar("_Value")


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
        if api_key == "":
            raise UsageError("api_key must be non-empty printable ASCII (or None: no key)")
        ask = (f"set {key_env}" if key_env else "pass api_key=...") if takes_key else ""
        self._core = Core(
            url,
            field=field,
            example="http://127.0.0.1:11434",
            bearer=Bearer(api_key, "API key", key_env or "", ask),
            settings=ClientSettings(timeout=timeout, max_body_bytes=max_body_bytes),
            name=what,
        )
        self._http = httpx.Client(timeout=self._core.settings.timeout)

    @property
    def base_url(self) -> str:
        """The base URL, as shown (a password in it is ``***``)."""
        return self._core.base_url

    @property
    def has_key(self) -> bool:
        """Whether a bearer key is sent (the key itself is not exposed)."""
        return self._core.bearer.value is not None

    @property
    def timeout(self) -> float:
        """Seconds one request may take as a whole."""
        return self._core.settings.timeout

    def __repr__(self) -> str:
        key = "<hidden>" if self.has_key else "None"
        return f"JsonEndpoint({self.base_url!r}, api_key={key})"

    def close(self) -> None:
        """Close the HTTP connections."""
        self._http.close()

    def post(self, path: str, body: Mapping[str, Any]) -> Any:
        """POST ``body`` as JSON to ``base_url + path``; the decoded JSON answer.

        Raises
        ------
        ServerUnavailable, AuthError, ServerStatusError, ProtocolError
            As the module says.
        """
        return self._post(Call("POST", path, body), read_strict_json)

    def post_vectors(self, path: str, body: Mapping[str, Any]) -> VectorAnswer:
        """POST ``body`` as :meth:`post` does; the answer with its arrays of numbers undecoded.

        Check the count and the widths of the :class:`~askkit._http.reading.Numbers`
        in its ``value``, then decode them with
        :meth:`~askkit._http.reading.VectorAnswer.matrix`.

        Raises
        ------
        ServerUnavailable, AuthError, ServerStatusError, ProtocolError
            As the module says; a ProtocolError too for an answer holding more
            than :data:`~askkit._http.reading.MAX_SKELETON_BYTES` besides its
            arrays of numbers.
        """
        call = Call("POST", path, body)
        value, data = self._post(call, read_vectors)

        def error(why: str) -> ProtocolError:
            return self._core.unreadable(call, Unreadable("not_json", why), data)

        return VectorAnswer(value, data, error)

    def shape_error(self, path: str, why: str, obj: object) -> ProtocolError:
        """A :class:`ProtocolError` for an answer of the wrong shape, quoting its start."""
        return self._core.shape_error(Call("POST", path), why, obj)

    def _post(self, call: Call, reader: Callable[[bytes | bytearray], _Value]) -> _Value:
        """Send ``call``; its 2xx answer as ``reader`` reads it, else the error."""
        core = self._core
        progress = Progress()
        deadline = core.deadline()
        try:
            with self._http.stream(
                **core.request(call, self._http),
                extensions={"trace": lambda event, _info: progress.trace(event)},
            ) as response:
                body = core.body(call, response, progress, deadline)
                for chunk in response.iter_raw():
                    if not body.feed(chunk):
                        break
                received: Received = body.received()
        except HANDLED as exc:
            raise core.failure(call, exc) from None
        return core.read(call, received, reader)
