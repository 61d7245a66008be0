"""A client for a running kimun server: health, search and answer, with real errors.

:class:`KimunClient` speaks kimun's HTTP API (``GET /health``,
``POST /api/embeddings``, ``POST /api/answer`` then ``GET /api/job/{id}``) with
httpx. It is a :class:`~askkit.retrieve.Retriever`, so ``client(query, k=10)``
feeds the widgets and metrics like a local index. :class:`AsyncKimunClient` is
the same client on ``httpx.AsyncClient``; both share the request building,
response checking and the job-polling rules below, only the I/O differs.

Choices (deliberate, where kimun's own client is silent or weaker):

- The bearer token is ``token=`` or, when that is ``None``, the environment
  variable ``ASKKIT_KIMUN_TOKEN`` (only that name: kimun keeps its token in
  the server's config file, and a token is never picked up from a variable
  named for another program). ``token=""`` sends no token. The token goes on
  ``/api/*`` only (``/health`` is open). Neither it nor the password of a URL
  (``http://user:PASSWORD@host``, sent as Basic auth, as httpx does, on a
  request that carries no token) appears in a repr, ``base_url``, an error or
  httpx's log lines: URLs are shown through :func:`redact_url`, which other
  code can use too.
- How the client waits is one frozen :class:`~askkit.retrieve.ClientSettings`
  (``settings=``): the request timeout, the retries, the polling and the
  body cap. Its polling defaults are kimun's: one poll a second, give up at
  the 15th failed poll in a row, and at most 720 polls (about 12 minutes,
  kimun's current ceiling; an older kimun client used 300).
- ``timeout`` bounds each request as a whole: connecting, sending and every
  read, however slowly a server drips its bytes (httpx's own timeouts bound
  each read, not their sum). A request with retries ends within
  ``(retries + 1) * timeout`` plus the backoff; an answer job's polls each
  get a ``timeout``, the job as a whole ``max_polls``.
- A body is read as it streams and may decode to ``max_body_bytes`` at most
  (64 MiB): a larger ``Content-Length`` is refused before reading, a body
  that grows past the cap (an endless one, a gzip bomb) is cut off as soon as
  it does, and only one gzip or deflate layer is accepted, so memory stays
  bounded. Whatever a server sends (bytes that are not UTF-8, JSON nested
  100,000 deep, numbers too large for a float, lone surrogates), the caller
  gets a :class:`~askkit.errors.ServerError`, never a raw exception.
  Unlike kimun, only errors that can heal are tolerated while polling (the
  server unreachable, a 5xx status); a 401/403, 400, 404 or a malformed
  status stops at once.
- Transport failures (connection refused, timeouts, a connection dropped
  mid-body) are retried with exponential backoff for the reads only:
  ``GET /health`` and ``POST /api/embeddings`` (a search has no side effect).
  ``POST /api/answer`` starts a job and is never retried; a job poll is
  retried by the polling loop itself. Error statuses are not retried.

Examples
--------
>>> from askkit.testing import KimunTestServer
>>> with KimunTestServer() as server, KimunClient(server.url, "notes") as client:
...     [c.ordinal for c in client("starter", k=3)]
[1, 2, 3]
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
import traceback
from collections.abc import Iterable, Mapping
from types import TracebackType
from typing import Any, Self

import httpx

from askkit._http.body import DeadlinePassed, Progress, Received
from askkit._http.core import Call
from askkit._http.failures import HANDLED
from askkit._http.reading import read_json
from askkit._http.redact import redact_url
from askkit._http.settings import ClientSettings
from askkit.errors import ServerError
from askkit.retrieve._jobs import JobWatch
from askkit.retrieve._protocol import (
    CONTEXT_SIZES,
    TOKEN_ENV,
    ContextSize,
    HistoryItem,
    KimunCore,
    check_k,
)
from askkit.retrieve._results import Health, SearchResult
from askkit.sources import Turn
from askkit.wire import AnswerResult, ChunkResult

#: The longest single wait on a worker: a timeout of 1e10 s must not overflow time_t.
_WAIT_STEP = 3600.0
#: The longest timeout handed to a socket (about 31 years): sockets overflow time_t
#: past it, and askkit's own deadline governs a call anyway.
_SOCKET_TIMEOUT_MAX = 1e9


def _socket_timeout(seconds: float) -> float:
    """``seconds``, capped where a socket timeout would overflow."""
    return min(seconds, _SOCKET_TIMEOUT_MAX)


__all__ = [
    "CONTEXT_SIZES",
    "TOKEN_ENV",
    "AsyncKimunClient",
    "ClientSettings",
    "ContextSize",
    "Health",
    "HistoryItem",
    "KimunClient",
    "SearchResult",
    "redact_url",
]

_DEFAULT_SETTINGS = ClientSettings()
#: httpx's own timeouts are set this much past the deadline: they only end a
#: request the deadline could not (see :class:`_Exchange`).
_BACKSTOP = 1.0


class _ClientBase:
    """What both clients share: the protocol core and its read-only settings."""

    def __init__(
        self,
        base_url: str,
        vault_id: str,
        token: str | None,
        settings: ClientSettings,
    ) -> None:
        self._core = KimunCore(base_url, vault_id, token, settings)

    @property
    def base_url(self) -> str:
        """The server URL, without a trailing ``/``, as shown: its password is ``***``.

        The client itself still sends the credentials of the URL it was given.
        """
        return self._core.base_url

    @property
    def vault_id(self) -> str:
        """The vault id sent with every query."""
        return self._core.vault_id

    @property
    def settings(self) -> ClientSettings:
        """The timeout, retries, polling and body cap this client uses (frozen)."""
        return self._core.settings

    @property
    def has_token(self) -> bool:
        """Whether a bearer token is sent (the token itself is not exposed)."""
        return self._core.token is not None

    def __repr__(self) -> str:
        return f"{type(self).__name__}{self._core!r}"

    def _request(
        self, http: httpx.Client | httpx.AsyncClient, call: Call, trace: Any
    ) -> dict[str, Any]:
        """The keywords of ``http.stream(...)`` for ``call``."""
        return {
            **self._core.request(call, http),
            "timeout": _socket_timeout(self._core.settings.timeout + _BACKSTOP),
            "extensions": {"trace": trace},
        }


def _shutdown(sock: socket.socket) -> None:
    """End every read and write on ``sock`` at once, from any thread."""
    with contextlib.suppress(OSError):
        # socket.socket's own shutdown, also for a TLS socket: ssl.SSLSocket's
        # drops its SSL object, which the reading thread may still be using.
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


class _Exchange:
    """One request and its whole response, read in a worker thread the caller waits for.

    The caller waits until the deadline and no longer, however slowly the
    server drips its bytes, and then gets :class:`DeadlinePassed`. The worker
    is stopped by shutting down its socket, learnt from httpx's ``trace``
    events (a new connection) or from the response (a kept-alive one); before
    the headers of a response on a kept-alive connection the socket is not
    known yet, and the worker ends by httpx's own timeouts instead.
    """

    def __init__(self, client: KimunClient, call: Call) -> None:
        self.client = client
        self.call = call
        self.deadline = client._core.deadline()
        self.progress = Progress()
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._cancelled = False
        self._sock: socket.socket | None = None
        self._outcome: Received | BaseException | None = None

    def run(self) -> Received:
        worker = threading.Thread(target=self._work, name="askkit-kimun-request", daemon=True)
        worker.start()
        try:
            # threading caps one wait (time_t): a longer timeout waits in steps
            while not self._done.wait(min(max(0.0, self.deadline - time.monotonic()), _WAIT_STEP)):
                if time.monotonic() >= self.deadline:
                    break
        finally:  # also on KeyboardInterrupt
            cancelled = self._cancel()
        if cancelled:
            raise DeadlinePassed(self.progress)
        if not isinstance(self._outcome, Received):
            raise self._outcome or RuntimeError("the request's worker left no outcome")
        return self._outcome

    def _cancel(self) -> bool:
        """Stop the worker unless it is done; whether it was still running."""
        with self._lock:
            if self._done.is_set():
                return False
            self._cancelled = True
            sock = self._sock
        if sock is not None:
            _shutdown(sock)
        return True

    def _watch(self, stream: object) -> None:
        get = getattr(stream, "get_extra_info", None)
        sock = get("socket") if callable(get) else None
        if not isinstance(sock, socket.socket):
            return
        with self._lock:
            self._sock = sock
            cancelled = self._cancelled
        if cancelled:
            _shutdown(sock)

    def _trace(self, event: str, info: Mapping[str, Any]) -> None:
        self.progress.trace(event)
        if event.endswith(("connect_tcp.complete", "start_tls.complete")):
            self._watch(info.get("return_value"))

    def _work(self) -> None:
        outcome: Received | BaseException
        try:
            outcome = self._exchange()
        except BaseException as exc:  # handed to the caller's thread
            outcome = exc
        with self._lock:
            self._outcome = outcome
            self._done.set()

    def _exchange(self) -> Received:
        client, call = self.client, self.call
        with client._http.stream(**client._request(client._http, call, self._trace)) as response:
            self._watch(response.extensions.get("network_stream"))
            body = client._core.body(call, response, self.progress, self.deadline)
            for chunk in response.iter_raw():  # inflated by body.feed, a step at a time
                if self._cancelled or not body.feed(chunk):
                    break
            return body.received()


class KimunClient(_ClientBase):
    """A kimun server's retrieval and answers, over HTTP.

    Parameters
    ----------
    base_url:
        The server, ``http://host:port`` (a trailing ``/`` is dropped).
    vault_id:
        The id the server indexes the vault under (kimun's ``CollectionKey``).
    token:
        The bearer token for ``/api/*``; ``None`` reads ``ASKKIT_KIMUN_TOKEN``,
        ``""`` sends none.
    settings:
        The request timeout, the retries, the answer-job polling and the body
        cap, one frozen :class:`~askkit.retrieve.ClientSettings` (kimun's
        defaults: 30 s, 2 retries, a poll a second, at most 720 polls; bodies
        up to 64 MiB); read back as :attr:`settings`.
    http_client:
        An httpx client to use (proxies, TLS settings); it is not closed by
        :meth:`close`.
    """

    def __init__(
        self,
        base_url: str,
        vault_id: str,
        token: str | None = None,
        *,
        settings: ClientSettings = _DEFAULT_SETTINGS,
        http_client: httpx.Client | None = None,
    ) -> None:
        super().__init__(base_url, vault_id, token, settings)
        self._owns_http = http_client is None
        self._http = http_client or httpx.Client(
            timeout=_socket_timeout(self._core.settings.timeout)
        )

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the HTTP connections (unless the httpx client was passed in)."""
        if self._owns_http:
            self._http.close()

    def _send(self, call: Call) -> Any:
        attempts = 0
        while True:
            attempts += 1
            try:
                response = _Exchange(self, call).run()
            except HANDLED as exc:
                if self._core.may_retry(call, exc, attempts):
                    time.sleep(self._core.backoff_delay(attempts))
                    continue
                error = self._core.failure(call, exc, attempts)
                raise error from (None if isinstance(exc, DeadlinePassed) else exc)
            except ServerError as exc:  # a refused body: let go of what its frames hold
                traceback.clear_frames(exc.__traceback__)
                raise
            return self._core.read(call, response, read_json)

    def health(self) -> Health:
        """``GET /health``: status, reranker, embedder, LLM provider, whether auth is on."""
        call = self._core.health_call()
        return self._core.health(call, self._send(call))

    def search(
        self,
        query: str,
        history: Iterable[HistoryItem] | None = None,
        context_size: ContextSize | None = None,
    ) -> SearchResult:
        """``POST /api/embeddings``: the chunks the server retrieves for ``query``."""
        call = self._core.search_call(self._core.query_body(query, history, context_size))
        return self._core.search(call, self._send(call), query)

    def __call__(self, query: str, k: int = 10) -> tuple[ChunkResult, ...]:
        """The :class:`~askkit.retrieve.Retriever` protocol: the best ``k`` chunks.

        The API has no ``k``: the server's list is cut to its first ``k``.
        """
        return self.search(query).chunks[: check_k(k)]

    def answer_result(
        self,
        query: str,
        history: Iterable[HistoryItem] | None = None,
        context_size: ContextSize | None = None,
    ) -> AnswerResult:
        """Start an answer job and poll it to the end; the raw ``{answer, sources}``."""
        call = self._core.answer_call(self._core.query_body(query, history, context_size))
        watch = JobWatch(self._core, self._core.job_id(call, self._send(call)))
        while True:
            try:
                status = self._send(watch.call)
            except ServerError as exc:
                watch.on_error(exc)
            else:
                result = watch.on_status(status)
                if result is not None:
                    return result
            if watch.exhausted:
                raise watch.timeout()
            time.sleep(self._core.settings.poll_interval)

    def answer(
        self,
        query: str,
        history: Iterable[HistoryItem] | None = None,
        context_size: ContextSize | None = None,
    ) -> Turn:
        """Ask the server: ``POST /api/answer``, poll the job, return the :class:`~askkit.Turn`.

        Raises :class:`~askkit.errors.JobFailed` when the job fails and
        :class:`~askkit.errors.JobTimeout` when it runs past ``max_polls``.
        """
        return Turn.from_answer(query, self.answer_result(query, history, context_size))


class AsyncKimunClient(_ClientBase):
    """The same client on ``httpx.AsyncClient``: ``await client.search(...)``.

    Not a :class:`~askkit.retrieve.Retriever` (that protocol is synchronous);
    :meth:`retrieve` is its ``client(query, k)``. The parameters are
    :class:`KimunClient`'s; ``http_client`` is an ``httpx.AsyncClient``.
    """

    def __init__(
        self,
        base_url: str,
        vault_id: str,
        token: str | None = None,
        *,
        settings: ClientSettings = _DEFAULT_SETTINGS,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        super().__init__(base_url, vault_id, token, settings)
        self._owns_http = http_client is None
        self._http = http_client or httpx.AsyncClient(
            timeout=_socket_timeout(self._core.settings.timeout)
        )

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP connections (unless the httpx client was passed in)."""
        if self._owns_http:
            await self._http.aclose()

    async def _exchange(self, call: Call) -> Received:
        """One request and its whole response, within the deadline (``asyncio.timeout``)."""
        core = self._core
        progress = Progress()
        deadline = core.deadline()

        async def trace(event: str, info: Mapping[str, Any]) -> None:
            progress.trace(event)

        timer = asyncio.timeout(core.settings.timeout)
        try:
            async with (
                timer,
                self._http.stream(**self._request(self._http, call, trace)) as response,
            ):
                body = core.body(call, response, progress, deadline)
                async for chunk in response.aiter_raw():  # inflated by body.feed
                    if not body.feed(chunk):
                        break
                return body.received()
        except TimeoutError:
            if timer.expired():
                raise DeadlinePassed(progress) from None
            raise

    async def _send(self, call: Call) -> Any:
        attempts = 0
        while True:
            attempts += 1
            try:
                response = await self._exchange(call)
            except HANDLED as exc:
                if self._core.may_retry(call, exc, attempts):
                    await asyncio.sleep(self._core.backoff_delay(attempts))
                    continue
                error = self._core.failure(call, exc, attempts)
                raise error from (None if isinstance(exc, DeadlinePassed) else exc)
            except ServerError as exc:  # a refused body: let go of what its frames hold
                traceback.clear_frames(exc.__traceback__)
                raise
            return self._core.read(call, response, read_json)

    async def health(self) -> Health:
        """``GET /health``."""
        call = self._core.health_call()
        return self._core.health(call, await self._send(call))

    async def search(
        self,
        query: str,
        history: Iterable[HistoryItem] | None = None,
        context_size: ContextSize | None = None,
    ) -> SearchResult:
        """``POST /api/embeddings``."""
        call = self._core.search_call(self._core.query_body(query, history, context_size))
        return self._core.search(call, await self._send(call), query)

    async def retrieve(self, query: str, k: int = 10) -> tuple[ChunkResult, ...]:
        """The best ``k`` chunks for ``query`` (the server's list cut to ``k``)."""
        return (await self.search(query)).chunks[: check_k(k)]

    async def answer_result(
        self,
        query: str,
        history: Iterable[HistoryItem] | None = None,
        context_size: ContextSize | None = None,
    ) -> AnswerResult:
        """Start an answer job and poll it to the end; the raw ``{answer, sources}``."""
        call = self._core.answer_call(self._core.query_body(query, history, context_size))
        watch = JobWatch(self._core, self._core.job_id(call, await self._send(call)))
        while True:
            try:
                status = await self._send(watch.call)
            except ServerError as exc:
                watch.on_error(exc)
            else:
                result = watch.on_status(status)
                if result is not None:
                    return result
            if watch.exhausted:
                raise watch.timeout()
            await asyncio.sleep(self._core.settings.poll_interval)

    async def answer(
        self,
        query: str,
        history: Iterable[HistoryItem] | None = None,
        context_size: ContextSize | None = None,
    ) -> Turn:
        """``POST /api/answer``, poll the job, return the :class:`~askkit.Turn`."""
        return Turn.from_answer(query, await self.answer_result(query, history, context_size))
