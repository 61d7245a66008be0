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
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any, Literal, cast, get_args
from urllib.parse import urlsplit

import numpy as np

from askkit.testing._faults import Fault, Reply, error, make_fault, send
from askkit.testing._loopback import (
    LoopbackHandler,
    LoopbackServer,
    RecordedRequest,
    bearer_refusal,
)

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
    fault: Fault | None  # the kinds askkit.testing._faults sends (reply and stream faults)
    delay: float

    def applies(self, route: str) -> bool:
        return self.routes is None or route in self.routes


class _Handler(LoopbackHandler):
    server_version = "EmbedTestServer/askkit"


class EmbedTestServer(LoopbackServer[_Switch]):
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

    _name = "EmbedTestServer"
    _handler = _Handler

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
        super().__init__(port)
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

    @property
    def v1_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``: an OpenAI-style base URL (embeddings and rerank).

        :attr:`url` is Ollama's base URL; the other routes answer there too.
        """
        return self.url + "/v1"

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
        self._switch_on(
            _Switch(kind, routes, times, skip, fault, fault.delay if fault is not None else 0.0)
        )

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

    # -- serving (called from the handler threads)

    def _passes(self, fault: _Switch) -> bool:
        if fault.skip > 0:  # let through, counting down
            fault.skip -= 1
            return True
        return False

    def _dispatch(self, handler: BaseHTTPRequestHandler) -> None:
        request = self._record(handler)
        body, headers = request.body, request.headers
        route = _route(urlsplit(handler.path).path)
        if route is None:
            send(handler, error(404, f"no route for {urlsplit(handler.path).path}"))
            return
        if handler.command != "POST":
            send(handler, error(405, f"{handler.path} takes POST, not {handler.command}"))
            return
        switch = self._take(route)
        fault = switch.fault if switch is not None else None
        self._respond(
            handler, fault, lambda: self._auth(headers) or self._serve(route, body, switch)
        )

    def _auth(self, headers: Mapping[str, str]) -> Reply | None:
        if self.token is None:
            return None
        return bearer_refusal(headers, self.token, "api key")

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
