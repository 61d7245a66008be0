"""Embedding and rerank services on 127.0.0.1 for tests and notebooks, with switchable faults.

:class:`EmbedTestServer` answers, over real HTTP, the three services kimun's
server calls besides its own store:

- Ollama's ``POST /api/embed``: ``{model, input}`` -> ``{"embeddings": [[...]]}``;
- an OpenAI-compatible ``POST /embeddings`` (also under ``/v1``): ``{model,
  input}`` -> ``{"data": [{"index", "embedding"}]}``, in input order or reversed
  (``openai_order``), as some compatible servers answer;
- a Cohere/Jina rerank ``POST /rerank`` (also under ``/v1``): ``{model?, query,
  documents}`` -> ``{"results": [{"index", "relevance_score"}]}`` best first,
  or Voyage's ``{"data": [...]}`` (``rerank_shape``), or ``score`` in place of
  ``relevance_score`` (``score_key``).

The vectors and scores are real: computed by the functions given
(``embed``: texts -> vectors, such as a
:class:`~askkit.dense.FastEmbedEmbedder`'s ``embed_texts``; ``rerank``:
``(query, documents)`` -> scores), by default :class:`HashingEmbedding` (a
deterministic bag of hashed words) and :func:`overlap_scores` (the share of
the query's words a document holds). A ``token`` makes every route require
``Authorization: Bearer <token>``. Every request is recorded
(:attr:`EmbedTestServer.requests`, :attr:`EmbedTestServer.inputs`) so a test
can check what a client sent, and :meth:`EmbedTestServer.fail` switches on a
fault (:data:`EmbedFaultKind`): an error status, a 401, a body that is not
JSON, one vector too few, vectors one number short, a slow answer (for
timeouts), a connection dropped mid-answer, and the hostile streams of
:class:`~askkit.testing.KimunTestServer` (dripped, huge or endless bodies,
gzip bombs, JSON no service sends).

It binds 127.0.0.1 only, on a free port, in a background thread; use it as
a context manager so it always shuts down.

Examples
--------
>>> from askkit.dense import OllamaEmbedder
>>> with EmbedTestServer(dim=8) as server:
...     embedder = OllamaEmbedder(server.url, "nomic-embed-text", doc_prefix="search_document: ")
...     vectors = embedder.embed_documents([("Title", "body")])
...     server.inputs
[['search_document: Title\\nbody']]
>>> vectors.shape
(1, 8)
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import re
import socket
import sys
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal, Self, cast, get_args
from urllib.parse import urlsplit

import numpy as np

from askkit._faults import Fault, Reply, error, make_fault, send, send_faulty
from askkit.testing import RecordedRequest

__all__ = [
    "EmbedFaultKind",
    "EmbedRoute",
    "EmbedTestServer",
    "HashingEmbedding",
    "overlap_scores",
]

#: The routes a fault can target: Ollama's ``/api/embed``, the OpenAI-compatible
#: ``/embeddings``, the ``/rerank`` endpoint.
EmbedRoute = Literal["ollama", "openai", "rerank"]

#: What :meth:`EmbedTestServer.fail` can break.
#:
#: - ``status``: answer with ``status`` (default 500) and ``{"error": message}``;
#: - ``unauthorized``: the same with 401;
#: - ``invalid_json``: a 200 whose body is cut-off JSON;
#: - ``body``: answer with ``status`` (default 200) and ``body`` (bytes as they
#:   are, anything else as JSON);
#: - ``wrong_count``: the last vector (or rerank result) left out;
#: - ``wrong_dimension``: every vector one number short;
#: - ``slow``: wait ``delay`` seconds (default 1) before answering;
#: - ``drop``: send the headers and half the body, then close the connection;
#: - ``drip``, ``drip_headers``, ``huge_body``, ``gzip_bomb``, ``gzip_stack``,
#:   ``endless``, ``deep_json``, ``huge_number``, ``bad_utf8``,
#:   ``lone_surrogate``: a hostile server's answers, as
#:   :meth:`askkit.testing.KimunTestServer.fail` sends them.
EmbedFaultKind = Literal[
    "status",
    "unauthorized",
    "invalid_json",
    "body",
    "wrong_count",
    "wrong_dimension",
    "slow",
    "drop",
    "drip",
    "drip_headers",
    "huge_body",
    "gzip_bomb",
    "gzip_stack",
    "endless",
    "deep_json",
    "huge_number",
    "bad_utf8",
    "lone_surrogate",
]

_ROUTES = frozenset(get_args(EmbedRoute))
_KINDS = frozenset(get_args(EmbedFaultKind))
_OWN_KINDS = frozenset({"wrong_count", "wrong_dimension"})
_REPLY_KINDS = frozenset({"status", "unauthorized", "invalid_json", "body"})
_MESSAGES = {
    "status": "internal error (a fault injected by EmbedTestServer)",
    "unauthorized": "invalid api key",
}
_WORD = re.compile(r"\w+")

Embed = Callable[[list[str]], Any]
Rerank = Callable[[str, list[str]], Sequence[float]]


class HashingEmbedding:
    """A deterministic embedding: each word (``\\w+``, lower-cased) hashed to a signed slot.

    Texts that share words get vectors with a positive dot product; the same
    text always gets the same vector, on any machine.

    >>> embed = HashingEmbedding(dim=4)
    >>> embed(["a b a", ""]).tolist()[1]
    [0.0, 0.0, 0.0, 0.0]
    """

    def __init__(self, dim: int = 32) -> None:
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
            raise ValueError(f"dim must be a whole number >= 1, got {dim!r}")
        self.dim = dim

    def __call__(self, texts: Sequence[str]) -> np.ndarray[Any, np.dtype[np.float64]]:
        out = np.zeros((len(texts), self.dim))
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                digest = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest())
                out[row, digest % self.dim] += 1.0 if digest >> 63 else -1.0
        return out

    def __repr__(self) -> str:
        return f"HashingEmbedding(dim={self.dim})"


def overlap_scores(query: str, documents: Sequence[str]) -> list[float]:
    """Each document's share of the query's distinct words (``\\w+``, lower-cased), in 0..1.

    >>> overlap_scores("feed the starter", ["Starter feeding", "the starter, fed"])
    [0.3333333333333333, 0.6666666666666666]
    """
    words = set(_WORD.findall(query.lower()))
    if not words:
        return [0.0] * len(documents)
    return [len(words & set(_WORD.findall(d.lower()))) / len(words) for d in documents]


@dataclass(slots=True)
class _Switch:
    """A fault switched on: what, where, how many more times, after how many requests."""

    kind: str
    routes: frozenset[str] | None
    remaining: int | None
    skip: int
    fault: Fault | None  # the kinds askkit._faults sends (reply and stream faults)
    delay: float

    def applies(self, route: str) -> bool:
        return self.routes is None or route in self.routes


@dataclass(slots=True)
class _State:
    lock: threading.Lock = field(default_factory=threading.Lock)
    switches: list[_Switch] = field(default_factory=list)
    requests: list[RecordedRequest] = field(default_factory=list)
    connections: set[socket.socket] = field(default_factory=set)
    stopping: threading.Event = field(default_factory=threading.Event)


class EmbedTestServer:
    """Real HTTP on 127.0.0.1 that answers like Ollama, an OpenAI-compatible API and a reranker.

    Parameters
    ----------
    embed:
        ``texts -> vectors`` (a ``(n, d)`` array or a list of lists): what the
        embedding routes answer. Default: :class:`HashingEmbedding` of ``dim``.
    rerank:
        ``(query, documents) -> scores``, one per document. Default:
        :func:`overlap_scores`.
    dim:
        The default embedding's width.
    token:
        Require ``Authorization: Bearer <token>`` on every route.
    rerank_shape:
        ``"results"`` (Cohere, Jina) or ``"data"`` (Voyage).
    score_key:
        ``"relevance_score"`` or ``"score"``.
    openai_order:
        ``"input"`` or ``"reversed"``: the order of ``data`` in an
        OpenAI-compatible answer (each item keeps its ``index``).
    port:
        0 (the default) picks a free port.
    """

    def __init__(
        self,
        *,
        embed: Embed | None = None,
        rerank: Rerank | None = None,
        dim: int = 32,
        token: str | None = None,
        rerank_shape: Literal["results", "data"] = "results",
        score_key: Literal["relevance_score", "score"] = "relevance_score",
        openai_order: Literal["input", "reversed"] = "input",
        port: int = 0,
    ) -> None:
        if rerank_shape not in {"results", "data"}:
            raise ValueError(f"rerank_shape must be 'results' or 'data', got {rerank_shape!r}")
        if score_key not in {"relevance_score", "score"}:
            raise ValueError(f"score_key must be 'relevance_score' or 'score', got {score_key!r}")
        if openai_order not in {"input", "reversed"}:
            raise ValueError(f"openai_order must be 'input' or 'reversed', got {openai_order!r}")
        self.embed: Embed = embed if embed is not None else HashingEmbedding(dim)
        self.rerank: Rerank = rerank if rerank is not None else overlap_scores
        self.token = token
        self.rerank_shape = rerank_shape
        self.score_key = score_key
        self.openai_order = openai_order
        self._port = port
        self._state = _State()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle

    def start(self) -> Self:
        """Bind 127.0.0.1 and serve in a background thread."""
        if self._httpd is not None:
            raise RuntimeError("the server is already running")
        self._state.stopping.clear()
        httpd = _HTTPServer(("127.0.0.1", self._port), _Handler)
        httpd.app = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.01},
            name=f"EmbedTestServer:{httpd.server_address[1]}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, close open connections and free the port (idempotent)."""
        httpd, thread = self._httpd, self._thread
        if httpd is None:
            return
        self._state.stopping.set()  # wakes "slow" handlers
        httpd.shutdown()
        with self._state.lock:
            connections = list(self._state.connections)
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        httpd.server_close()
        if thread is not None:
            thread.join(timeout=5)
        self._httpd = self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def address(self) -> tuple[str, int]:
        """The bound ``(host, port)``."""
        if self._httpd is None:
            raise RuntimeError("the server is not running: use it in a with block or call start()")
        host, port = self._httpd.server_address[:2]
        return str(host), int(port)

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``: Ollama's base URL; the other routes answer here too."""
        host, port = self.address
        return f"http://{host}:{port}"

    @property
    def v1_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``: an OpenAI-style base URL (embeddings and rerank)."""
        return self.url + "/v1"

    def __repr__(self) -> str:
        where = self.url if self._httpd is not None else "stopped"
        return f"<EmbedTestServer {where}>"

    # -- faults and recorded requests

    def fail(
        self,
        kind: EmbedFaultKind,
        *,
        route: EmbedRoute | Iterable[EmbedRoute] | None = None,
        times: int | None = None,
        skip: int = 0,
        status: int | None = None,
        message: str | None = None,
        body: Any = None,
        delay: float | None = None,
        size: int | None = None,
    ) -> None:
        """Switch a fault on (see :data:`EmbedFaultKind`) until :meth:`clear_faults`.

        ``route`` limits it to some routes (default: all); ``skip`` lets that
        many matching requests through first (to break the second batch);
        ``times`` switches it off after that many uses. ``status``,
        ``message``, ``body``, ``delay`` and ``size`` are as for
        :meth:`askkit.testing.KimunTestServer.fail`.
        """
        if kind not in _KINDS:
            raise ValueError(f"unknown fault {kind!r}: expected one of {sorted(_KINDS)}")
        routes = None
        if route is not None:
            routes = frozenset([route] if isinstance(route, str) else route)
            if not routes <= _ROUTES:
                raise ValueError(f"unknown route in {sorted(routes)}: expected {sorted(_ROUTES)}")
        if isinstance(skip, bool) or not isinstance(skip, int) or skip < 0:
            raise ValueError(f"skip must be a whole number >= 0, got {skip!r}")
        fault = None
        if kind not in _OWN_KINDS:
            fault = make_fault(
                cast(Any, kind),
                route=None,
                times=None,
                status=status,
                message=message if message is not None else _MESSAGES.get(kind),
                body=body,
                delay=delay,
                size=size,
            )
        switch = _Switch(
            kind, routes, times, skip, fault, fault.delay if fault is not None else 0.0
        )
        with self._state.lock:
            self._state.switches.append(switch)

    def clear_faults(self) -> None:
        """Switch every fault off."""
        with self._state.lock:
            self._state.switches.clear()

    @property
    def requests(self) -> list[RecordedRequest]:
        """The requests received so far, oldest first (a copy)."""
        with self._state.lock:
            return list(self._state.requests)

    def requests_to(self, route: EmbedRoute) -> list[RecordedRequest]:
        """The recorded requests to one route."""
        return [r for r in self.requests if _route(urlsplit(r.path).path) == route]

    @property
    def inputs(self) -> list[list[str]]:
        """The ``input`` texts of every embedding request, one list per request, in order."""
        out = []
        for request in self.requests:
            if _route(urlsplit(request.path).path) in {"ollama", "openai"}:
                with contextlib.suppress(ValueError, AttributeError, TypeError):
                    texts = request.json()["input"]
                    out.append([texts] if isinstance(texts, str) else list(texts))
        return out

    def clear_requests(self) -> None:
        """Forget the recorded requests."""
        with self._state.lock:
            self._state.requests.clear()

    # -- serving (called from the handler threads)

    def _take(self, route: str) -> _Switch | None:
        with self._state.lock:
            for switch in self._state.switches:
                if not switch.applies(route) or switch.remaining == 0:
                    continue
                if switch.skip > 0:
                    switch.skip -= 1
                    continue
                if switch.remaining is not None:
                    switch.remaining -= 1
                return switch
        return None

    def _dispatch(self, handler: _Handler) -> None:
        state = self._state
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length > 0 else b""
        headers = {k.lower(): v for k, v in handler.headers.items()}
        with state.lock:
            state.requests.append(RecordedRequest(handler.command, handler.path, headers, body))
        route = _route(urlsplit(handler.path).path)
        if route is None:
            send(handler, error(404, f"no route for {urlsplit(handler.path).path}"))
            return
        if handler.command != "POST":
            send(handler, error(405, f"{handler.path} takes POST, not {handler.command}"))
            return
        switch = self._take(route)
        fault = switch.fault if switch is not None else None
        if fault is not None and fault.kind in _REPLY_KINDS:
            send(handler, fault.reply)
            return
        if fault is not None and fault.kind == "slow" and state.stopping.wait(fault.delay):
            handler.close_connection = True
            return
        reply = self._auth(headers) or self._serve(route, body, switch)
        stream = fault if fault is not None and fault.kind != "slow" else None
        send_faulty(handler, reply, stream, state.stopping)

    def _auth(self, headers: Mapping[str, str]) -> Reply | None:
        if self.token is None:
            return None
        given = headers.get("authorization")
        if given is None:
            return error(401, "missing api key")
        if not hmac.compare_digest(given.encode(), f"Bearer {self.token}".encode()):
            return error(401, "invalid api key")
        return None

    def _serve(self, route: str, body: bytes, switch: _Switch | None) -> Reply:
        try:
            request = json.loads(body)
        except ValueError as exc:
            return error(400, f"the request body is not JSON: {exc}")
        if not isinstance(request, dict):
            return error(400, "the request body must be a JSON object")
        kind = switch.kind if switch is not None else None
        try:
            if route == "rerank":
                return self._rerank(request, kind)
            return self._embed(route, request, kind)
        except Exception as exc:  # the function given failed: a 500, as a service would
            return error(500, f"{type(exc).__name__}: {exc}")

    def _embed(self, route: str, request: dict[str, Any], kind: str | None) -> Reply:
        model, texts = request.get("model"), request.get("input")
        if isinstance(texts, str):
            texts = [texts]
        if not isinstance(model, str) or not isinstance(texts, list):
            return error(400, "expected {model: string, input: [strings]}")
        if not all(isinstance(t, str) for t in texts):
            return error(400, "every input must be a string")
        vectors = [
            [float(x) for x in row]
            for row in np.asarray(self.embed(list(texts)), dtype=np.float64).reshape(len(texts), -1)
        ]
        if kind == "wrong_count":
            vectors = vectors[:-1]
        elif kind == "wrong_dimension":
            vectors = [row[:-1] for row in vectors]
        if route == "ollama":
            return Reply(200, {"model": model, "embeddings": vectors})
        data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
        if self.openai_order == "reversed":
            data.reverse()
        return Reply(200, {"object": "list", "data": data, "model": model})

    def _rerank(self, request: dict[str, Any], kind: str | None) -> Reply:
        query, documents = request.get("query"), request.get("documents")
        if not isinstance(query, str) or not isinstance(documents, list):
            return error(400, "expected {model?, query: string, documents: [strings]}")
        if not all(isinstance(d, str) for d in documents):
            return error(400, "every document must be a string")
        scores = [float(s) for s in self.rerank(query, list(documents))]
        results = [{"index": i, self.score_key: s} for i, s in enumerate(scores)]
        results.sort(key=lambda item: -float(item[self.score_key]))
        if kind == "wrong_count":
            results = results[:-1]
        payload: dict[str, Any] = {self.rerank_shape: results}
        if "model" in request:
            payload["model"] = request["model"]
        return Reply(200, payload)


def _route(path: str) -> str | None:
    """The route for a URL path (any prefix, such as ``/v1``), or None."""
    if path.endswith("/api/embed"):
        return "ollama"
    if path.endswith("/embeddings"):
        return "openai"
    if path.endswith("/rerank"):
        return "rerank"
    return None


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    app: EmbedTestServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], OSError):
            return  # a client that hung up is not the server's error
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "EmbedTestServer/askkit"

    def _app(self) -> EmbedTestServer:
        return cast(_HTTPServer, self.server).app

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        state = self._app()._state
        with state.lock:
            state.connections.add(self.connection)

    def finish(self) -> None:
        state = self._app()._state
        with state.lock:
            state.connections.discard(self.connection)
        with contextlib.suppress(OSError):
            super().finish()

    def do_GET(self) -> None:
        self._app()._dispatch(self)

    def do_POST(self) -> None:
        self._app()._dispatch(self)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: requests are recorded in :attr:`EmbedTestServer.requests` instead."""
