"""A kimun server double: real HTTP on 127.0.0.1, switchable faults.

:class:`KimunTestServer` speaks kimun's HTTP API as kimun's server does:
``GET /health``; ``POST /api/embeddings``; ``POST /api/answer`` returning
``{job_id, message}``; ``GET /api/job/{id}`` moving ``queued`` ->
``processing`` -> ``completed``; bearer auth on ``/api/*`` when a token is
set; ``400`` for a bad body or vault id, ``404`` for an unknown job, errors as
``{"error": "..."}``. Its ``/health`` carries what a newer kimun adds: a
degraded server's reason (``degraded=``: its data routes then answer 503 as
kimun's unconfigured ones do) and a reranker that failed to start
(``reranker_error=``); a version (``version=``, ``latest_version=``) only
when given, since the double is no kimun release. It serves fixed payloads
(by default askkit's sample sourdough vault, the same as ``data/embeddings.json`` and
``data/answer_job.json``) or any retriever ``query -> chunks`` (a local
index). Faults are switched on with :meth:`KimunTestServer.fail`, and every
request is recorded for assertions. Besides a server's ordinary failures
(error statuses, slow or dropped responses, failing jobs), the faults include
a hostile server's: a response dripped one byte at a time, a huge or endless
body, gzip bombs, and JSON no kimun sends (nested 100,000 deep, 400-digit
numbers, bytes that are not UTF-8, lone surrogates). They are generated as
they are sent, so the server itself stays small.

It binds 127.0.0.1 only, on a free port, in a background thread; use it as a
context manager so it always shuts down.

Examples
--------
>>> with KimunTestServer(token="s3cret") as server:
...     server.fail("status", route="embeddings", status=503, message="no embedder")
...     with server.client() as client:
...         client.health().auth_required
True
"""

from __future__ import annotations

import enum
import json
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from askkit.errors import UsageError
from askkit.retrieve import ClientSettings, as_retriever
from askkit.retrieve.client import CONTEXT_SIZES
from askkit.testing._faults import (
    JOB_FAULTS,
    Fault,
    FaultKind,
    Reply,
    Route,
    error,
    make_fault,
    send,
)
from askkit.testing._loopback import (
    LoopbackHandler,
    LoopbackServer,
    RecordedRequest,
    bearer_refusal,
)
from askkit.wire import AnswerResult, ChunkResult, EmbeddingsResponse, check_vault_id, load_json

if TYPE_CHECKING:
    import httpx

    from askkit.retrieve.client import KimunClient

__all__ = [
    "FAST_SETTINGS",
    "UNCONFIGURED",
    "FaultKind",
    "KimunTestServer",
    "RecordedRequest",
    "Route",
    "sample_payloads",
]

#: kimun's 503 answer on a data route when the server has no pipeline (unconfigured or
#: degraded: ``RagError::Unconfigured``).
UNCONFIGURED = (
    "no embedder configured; this server is unconfigured — open the web UI to configure one"
)

#: The settings :meth:`KimunTestServer.client` gives its clients unless told
#: otherwise: kimun's, but a poll and a retry every 10 ms, so tests do not wait.
#: Derive a variant with ``dataclasses.replace(FAST_SETTINGS, max_polls=3)``.
FAST_SETTINGS = ClientSettings(poll_interval=0.01, backoff=0.01)


class _ServerToken(enum.Enum):
    """The default of :meth:`KimunTestServer.client`'s ``token``: the server's own."""

    SERVER = "the server's token"


_SAMPLE_EMBEDDINGS: dict[str, Any] = {
    "chunks": [
        {
            "path": "projects/sourdough.md",
            "title": "Sourdough\x1fStarter\x1fFeeding schedule",
            "date": None,
            "content": (
                "Feed the starter 1:5:5 (starter:flour:water) every 12 "
                "hours at room temperature. In the fridge, feed once a "
                "week and give it two feedings before baking."
            ),
            "hash": "16208981615269542107",
            "similarity_score": 0.8731,
            "ordinal": 1,
        },
        {
            "path": "journal/2026-04-08.md",
            "title": "2026-04-08\x1fAfternoon",
            "date": "2026-04-08",
            "content": (
                "Baked the second loaf. The starter peaked after 6 "
                "hours, faster than last week: the kitchen is warmer "
                "now."
            ),
            "hash": "4805820366676379946",
            "similarity_score": 0.8412,
            "ordinal": 2,
        },
        {
            "path": "projects/sourdough.md",
            "title": "Sourdough\x1fStarter\x1fFeeding schedule",
            "date": None,
            "content": (
                "If the starter smells of acetone it is hungry: feed it "
                "twice in a row at a higher ratio (1:10:10)."
            ),
            "hash": "16208981615269542107",
            "similarity_score": 0.812,
            "ordinal": 3,
        },
        {
            "path": "journal/2026-04-12.md",
            "title": "2026-04-12\x1fMorning\x1fKitchen",
            "date": "2026-04-12",
            "content": ("Discard went into pancakes. Starter doubled in 5 hours at 24 C."),
            "hash": "16481878357586701531",
            "similarity_score": 0.765,
            "ordinal": 4,
        },
        {
            "path": "garden/tomatoes.md",
            "title": "Tomatoes\x1fSeedlings",
            "date": None,
            "content": (
                "Start seeds indoors six weeks before the last frost; keep the soil at 21-24 C."
            ),
            "hash": "13923695263917013613",
            "similarity_score": 0.512,
            "ordinal": 5,
        },
        {
            "path": "journal/2026-03-29.md",
            "title": "2026-03-29",
            "date": "2026-03-29",
            "content": "Rest day. Read about hydration levels for rye bread.",
            "hash": "15125564665811204757",
            "similarity_score": 0.4475,
            "ordinal": 6,
        },
    ],
    "query_time_ms": 42,
}

_SAMPLE_ANSWER: dict[str, Any] = {
    "answer": (
        "Feed the starter 1:5:5 every 12 hours at room "
        "temperature [1], and twice in a row if it smells of "
        "acetone [3]. In a warm kitchen it peaks sooner: about 6 "
        "hours on April 8 [2] and 5 hours on April 12 [4]. Rye "
        "needs more water [7]."
    ),
    # the same chunks, shuffled relative to their ordinals: [4], [1], [6], [2], [3]
    "sources": [_SAMPLE_EMBEDDINGS["chunks"][i - 1] for i in (4, 1, 6, 2, 3)],
}


def sample_payloads() -> tuple[dict[str, Any], dict[str, Any]]:
    """Fresh copies of the default payloads: an ``/api/embeddings`` response and an answer result.

    They equal ``data/embeddings.json`` and the ``result`` of
    ``data/answer_job.json`` in askkit's repository (a test checks it).
    """
    return json.loads(json.dumps(_SAMPLE_EMBEDDINGS)), json.loads(json.dumps(_SAMPLE_ANSWER))


@dataclass(slots=True)
class _Job:
    job_id: str
    outcome: Literal["completed", "failed", "never"]
    result: dict[str, Any] | None = None
    error: str | None = None
    polls: int = 0


class _Handler(LoopbackHandler):
    server_version = "KimunTestServer/askkit"

    # kimun answers PUT and DELETE on its routes with 405
    def do_PUT(self) -> None:  # noqa: N802 - http.server's name
        self._app()._dispatch(self)

    def do_DELETE(self) -> None:  # noqa: N802 - http.server's name
        self._app()._dispatch(self)


class KimunTestServer(LoopbackServer[Fault]):
    """A real HTTP server on 127.0.0.1 that answers like kimun.

    Parameters
    ----------
    embeddings:
        The ``/api/embeddings`` response to serve (a dict or
        :class:`~askkit.EmbeddingsResponse`); default: the sample vault's.
    answer:
        The answer jobs' result, ``{answer, sources}`` (an
        :class:`~askkit.AnswerResult`, its dict, or a whole job dict with a
        ``result``); default: the sample vault's.
    retriever:
        Serve this instead of fixed payloads: any callable ``query -> chunks``
        (or ``(query, k) -> chunks``, see :func:`askkit.retrieve.as_retriever`).
        ``k`` follows ``context_size`` (small 10, medium 20, large 40) or
        ``top_k``; missing ordinals become ranks. Answer jobs cite the sources.
    answerer:
        With ``retriever``: ``(query, chunks) -> answer text``.
    token:
        Require ``Authorization: Bearer <token>`` on ``/api/*``.
    health:
        The ``/health`` body to serve as is (to test missing fields).
    degraded:
        Run degraded, as a kimun server whose embedder failed to start: ``/health``
        says why (``degraded``, ``embedder`` null) and ``/api/embeddings`` and
        ``/api/answer`` answer 503 with kimun's unconfigured error.
    reranker_error:
        Why the reranker failed to start (``/health``: ``reranker`` false and this
        reason); search still answers, as kimun's does.
    version, latest_version:
        The ``version`` and ``latest_version`` ``/health`` sends; absent unless given.
    processing_polls:
        How many polls a job reports ``processing`` after its first
        (``queued``) poll, before its outcome.
    port:
        0 (the default) picks a free port.
    """

    _name = "KimunTestServer"
    _handler = _Handler

    def __init__(
        self,
        *,
        embeddings: Mapping[str, Any] | EmbeddingsResponse | None = None,
        answer: Mapping[str, Any] | AnswerResult | None = None,
        retriever: Callable[..., Any] | None = None,
        answerer: Callable[[str, Sequence[ChunkResult]], str] | None = None,
        token: str | None = None,
        health: Mapping[str, Any] | None = None,
        processing_polls: int = 1,
        top_k: int = 10,
        port: int = 0,
        degraded: str | None = None,
        reranker_error: str | None = None,
        version: str | None = None,
        latest_version: str | None = None,
    ) -> None:
        super().__init__(port)
        sample_embeddings, sample_answer = sample_payloads()
        if isinstance(embeddings, EmbeddingsResponse):
            embeddings = embeddings.to_dict()
        if embeddings is not None:
            EmbeddingsResponse.from_dict(embeddings)  # fail now, not in a handler thread
        if processing_polls < 0:
            raise ValueError(f"processing_polls must be >= 0, got {processing_polls}")
        self._embeddings = dict(embeddings) if embeddings is not None else sample_embeddings
        self._answer = _answer_payload(answer) if answer is not None else sample_answer
        self._retriever = as_retriever(retriever) if retriever is not None else None
        self._answerer = answerer or _default_answer
        self.token = token
        self._health = dict(health) if health is not None else None
        self.degraded = degraded
        self.reranker_error = reranker_error
        self.version = version
        self.latest_version = latest_version
        self.processing_polls = processing_polls
        self.top_k = top_k
        self._jobs: dict[str, _Job] = {}  # behind self._state.lock

    @classmethod
    def from_files(
        cls,
        embeddings: str | Path | None = None,
        answer: str | Path | None = None,
        **kwargs: Any,
    ) -> KimunTestServer:
        """Serve saved payloads: an ``/api/embeddings`` response and an answer job or result."""
        emb = load_json(Path(embeddings).read_bytes(), what=str(embeddings)) if embeddings else None
        ans = load_json(Path(answer).read_bytes(), what=str(answer)) if answer else None
        return cls(embeddings=emb, answer=ans, **kwargs)

    def client(
        self,
        vault_id: str = "notes",
        *,
        token: str | _ServerToken | None = _ServerToken.SERVER,
        settings: ClientSettings = FAST_SETTINGS,
        http_client: httpx.Client | None = None,
    ) -> KimunClient:
        """A :class:`~askkit.retrieve.KimunClient` for this server.

        ``token`` defaults to this server's own token (none when it has none);
        ``None`` reads ``ASKKIT_KIMUN_TOKEN`` and ``""`` sends none, as the
        client does. ``settings`` default to :data:`FAST_SETTINGS`.
        """
        from askkit.retrieve.client import KimunClient

        if token is _ServerToken.SERVER:
            token = self.token or ""
        return KimunClient(self.url, vault_id, token, settings=settings, http_client=http_client)

    # -- faults and recorded requests

    def fail(
        self,
        kind: FaultKind,
        *,
        route: Route | Iterable[Route] | None = None,
        times: int | None = None,
        status: int | None = None,
        message: str | None = None,
        body: Any = None,
        delay: float | None = None,
        size: int | None = None,
    ) -> None:
        """Switch a fault on (see :data:`FaultKind`) until :meth:`clear_faults`.

        ``route`` limits it to some routes (default: all; the job faults act
        on the jobs ``POST /api/answer`` creates); ``times`` switches it off
        after that many uses. ``status`` defaults to 500 (``status``), 401
        (``unauthorized``) or 200 (``body``). ``delay`` is the wait of
        ``slow`` (1 s) and between two bytes of ``drip`` (0.5 s); ``size`` is
        the body size of ``huge_body``, what a gzip bomb inflates to (rounded
        up to whole MiB), the depth of ``deep_json`` or the digits of
        ``huge_number``.
        """
        fault = make_fault(
            kind,
            route=route,
            times=times,
            status=status,
            message=message,
            body=body,
            delay=delay,
            size=size,
        )
        self._switch_on(fault)

    def requests_to(self, path_prefix: str) -> list[RecordedRequest]:
        """The recorded requests whose path starts with ``path_prefix``."""
        return [r for r in self.requests if r.path.startswith(path_prefix)]

    # -- serving (called from the handler threads)

    def _dispatch(self, handler: BaseHTTPRequestHandler) -> None:
        request = self._record(handler)
        body, headers = request.body, request.headers
        path = urlsplit(handler.path).path
        route, reply = _route(handler.command, path)
        if route is None:
            send(handler, reply or error(404, "not found"))
            return
        fault = self._take(route)
        self._respond(
            handler,
            fault,
            lambda: self._auth(route, headers) or self._serve(route, path, body, fault),
        )

    def _auth(self, route: str, headers: Mapping[str, str]) -> Reply | None:
        if route == "health" or self.token is None:
            return None
        return bearer_refusal(headers, self.token, "bearer token")

    def _serve(self, route: str, path: str, body: bytes, fault: Fault | None) -> Reply:
        if route == "health":
            return Reply(200, self._health_body())
        if route == "job":
            return self._job_status(path.rsplit("/", 1)[-1])
        if self.degraded is not None:  # kimun's data routes, with no pipeline
            return error(503, UNCONFIGURED)
        query, refusal = _query_request(body)
        if refusal is not None:
            return refusal
        assert query is not None  # _query_request returns one or the other
        if route == "embeddings":
            return Reply(200, self._search(query))
        return self._start_job(query, fault)

    def _health_body(self) -> dict[str, Any]:
        if self._health is not None:
            return self._health
        body: dict[str, Any] = {
            "status": "ok",
            "reranker": False,
            "reranker_error": self.reranker_error,
            "embedder": None if self.degraded is not None else "askkit-test",
            "llm_provider": "askkit-test",
            "auth_required": self.token is not None,
            "degraded": self.degraded,
        }
        if self.version is not None or self.latest_version is not None:
            body["version"] = self.version
            body["latest_version"] = self.latest_version
        return body

    def _retrieve(self, query: Mapping[str, Any]) -> list[ChunkResult]:
        assert self._retriever is not None  # only called with a retriever
        k = CONTEXT_SIZES.get(query.get("context_size") or "", self.top_k)
        chunks = self._retriever(query["query"], k=k)
        return [c if c.ordinal else replace(c, ordinal=i) for i, c in enumerate(chunks, 1)]

    def _search(self, query: Mapping[str, Any]) -> dict[str, Any]:
        if self._retriever is None:
            return self._embeddings
        started = time.perf_counter()
        chunks = self._retrieve(query)
        elapsed = round((time.perf_counter() - started) * 1000)
        return {"chunks": [c.to_dict() for c in chunks], "query_time_ms": elapsed}

    def _start_job(self, query: Mapping[str, Any], fault: Fault | None) -> Reply:
        job_id = str(uuid.uuid4())
        job_fault = fault if fault is not None and fault.kind in JOB_FAULTS else None
        if job_fault is not None and job_fault.kind == "job_fails":
            job = _Job(job_id, "failed", error=job_fault.reply.payload["error"])
        elif job_fault is not None:
            job = _Job(job_id, "never")
        elif self._retriever is None:
            job = _Job(job_id, "completed", result=self._answer)
        else:
            chunks = self._retrieve(query)
            answer = self._answerer(query["query"], chunks)
            result = {"answer": answer, "sources": [c.to_dict() for c in chunks]}
            job = _Job(job_id, "completed", result=result)
        with self._state.lock:
            self._jobs[job_id] = job
        return Reply(200, {"job_id": job_id, "message": "Query job started"})

    def _job_status(self, job_id: str) -> Reply:
        try:
            uuid.UUID(job_id)
        except ValueError:
            return error(400, f"invalid job id {job_id!r}: expected a UUID")
        with self._state.lock:
            job = self._jobs.get(job_id)
            if job is None:
                return error(404, f"job {job_id} not found")
            job.polls += 1
            polls = job.polls
        status = "queued" if polls == 1 else "processing"
        if polls > 1 + self.processing_polls and job.outcome != "never":
            status = job.outcome
        done = status == job.outcome
        return Reply(
            200,
            {
                "job_id": job_id,
                "status": status,
                "result": job.result if done else None,
                "error": job.error if done else None,
            },
        )


def _answer_payload(answer: Mapping[str, Any] | AnswerResult) -> dict[str, Any]:
    """An answer result as a dict, from a result, its dict or a whole job dict."""
    if isinstance(answer, AnswerResult):
        return answer.to_dict()
    result = answer["result"] if "result" in answer and "answer" not in answer else answer
    AnswerResult.from_dict(result)  # fail now, not in a handler thread
    return dict(result)


def _default_answer(query: str, chunks: Sequence[ChunkResult]) -> str:
    cites = " ".join(f"[{c.ordinal}]" for c in chunks[:3])
    return f"An answer to {query!r} from the test server {cites}.".replace(" .", ".")


def _route(method: str, path: str) -> tuple[str | None, Reply | None]:
    """The route name for a request, or the 404/405 reply."""
    routes = {
        "/health": ("GET", "health"),
        "/api/embeddings": ("POST", "embeddings"),
        "/api/answer": ("POST", "answer"),
    }
    if path in routes:
        want, name = routes[path]
    elif path.startswith("/api/job/") and path.count("/") == 3 and len(path) > len("/api/job/"):
        want, name = "GET", "job"
    else:
        return None, error(404, f"no route for {path}")
    if method != want:
        return None, error(405, f"{path} takes {want}, not {method}")
    return name, None


def _query_request(body: bytes) -> tuple[dict[str, Any] | None, Reply | None]:
    """Validate a ``{vault_id, query, context_size?, history?}`` body as kimun does (400s)."""
    try:
        obj = json.loads(body)
    except ValueError as exc:
        return None, error(400, f"Failed to parse the request body as JSON: {exc}")
    if not isinstance(obj, dict):
        return None, error(400, "the request body must be a JSON object")
    for name in ("vault_id", "query"):
        if name not in obj:
            return None, error(400, f"missing field `{name}`")
        if not isinstance(obj[name], str):
            return None, error(400, f"invalid type for `{name}`: expected a string")
    try:
        check_vault_id(obj["vault_id"])
    except UsageError:
        return None, error(
            400,
            f"invalid vault_id {obj['vault_id']!r}: use letters, digits, '.', '_' or '-' "
            "and do not start with '__'",
        )
    size = obj.get("context_size")
    if size is not None and size not in CONTEXT_SIZES:
        return None, error(400, f"unknown context_size {size!r}: small, medium or large")
    history = obj.get("history", [])
    if not isinstance(history, list) or not all(
        isinstance(t, dict)
        and isinstance(t.get("question"), str)
        and isinstance(t.get("answer"), str)
        for t in history
    ):
        return None, error(400, "history must be a list of {question, answer} strings")
    return obj, None
