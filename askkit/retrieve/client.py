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
  ``/api/*`` only (``/health`` is open) and never appears in a repr or error.
- How the client waits is one frozen :class:`~askkit.retrieve.ClientSettings`
  (``settings=``): the request timeout, the retries and the polling. Its
  polling defaults are kimun's: one poll a second, give up at the 15th failed
  poll in a row, and at most 720 polls (about 12 minutes, kimun's current
  ceiling; an older kimun client used 300).
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
import time
from collections.abc import Iterable
from types import TracebackType
from typing import Any, Self

import httpx

from askkit.errors import ProtocolError, ServerError
from askkit.retrieve._protocol import (
    CONTEXT_SIZES,
    TOKEN_ENV,
    VAULT_ID,
    Call,
    ContextSize,
    Core,
    Health,
    HistoryItem,
    JobWatch,
    SearchResult,
    check_k,
)
from askkit.retrieve.settings import ClientSettings
from askkit.sources import Turn
from askkit.wire import AnswerResult, ChunkResult

__all__ = [
    "CONTEXT_SIZES",
    "TOKEN_ENV",
    "VAULT_ID",
    "AsyncKimunClient",
    "ClientSettings",
    "ContextSize",
    "Health",
    "HistoryItem",
    "KimunClient",
    "SearchResult",
]

_DEFAULT_SETTINGS = ClientSettings()


class _ClientBase:
    """What both clients share: the protocol core and its read-only settings."""

    def __init__(
        self,
        base_url: str,
        vault_id: str,
        token: str | None,
        settings: ClientSettings,
    ) -> None:
        self._core = Core(base_url, vault_id, token, settings)

    @property
    def base_url(self) -> str:
        """The server URL, without a trailing ``/``."""
        return self._core.base_url

    @property
    def vault_id(self) -> str:
        """The vault id sent with every query."""
        return self._core.vault_id

    @property
    def settings(self) -> ClientSettings:
        """The timeout, retries and polling this client uses (frozen)."""
        return self._core.settings

    @property
    def has_token(self) -> bool:
        """Whether a bearer token is sent (the token itself is not exposed)."""
        return self._core.token is not None

    def __repr__(self) -> str:
        return f"{type(self).__name__}{self._core!r}"


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
        The request timeout, the retries and the answer-job polling, one
        frozen :class:`~askkit.retrieve.ClientSettings` (kimun's defaults:
        30 s, 2 retries, a poll a second, at most 720 polls); read back as
        :attr:`settings`.
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
        self._http = http_client or httpx.Client(timeout=self._core.settings.timeout)

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
                response = self._http.request(
                    call.method,
                    self._core.url(call),
                    json=call.body,
                    headers=self._core.headers(call),
                    timeout=self._core.settings.timeout,
                )
            except httpx.TransportError as exc:
                if call.retry and attempts <= self._core.settings.retries:
                    time.sleep(self._core.backoff_delay(attempts))
                    continue
                raise self._core.unavailable(call, exc, attempts) from exc
            except httpx.DecodingError as exc:
                raise ProtocolError(f"{call.what}: {exc}", path=call.path) from exc
            return self._core.decode(call, response)

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
        self._http = http_client or httpx.AsyncClient(timeout=self._core.settings.timeout)

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

    async def _send(self, call: Call) -> Any:
        attempts = 0
        while True:
            attempts += 1
            try:
                response = await self._http.request(
                    call.method,
                    self._core.url(call),
                    json=call.body,
                    headers=self._core.headers(call),
                    timeout=self._core.settings.timeout,
                )
            except httpx.TransportError as exc:
                if call.retry and attempts <= self._core.settings.retries:
                    await asyncio.sleep(self._core.backoff_delay(attempts))
                    continue
                raise self._core.unavailable(call, exc, attempts) from exc
            except httpx.DecodingError as exc:
                raise ProtocolError(f"{call.what}: {exc}", path=call.path) from exc
            return self._core.decode(call, response)

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
