"""KimunClient against a real HTTP server (askkit.testing) on 127.0.0.1."""

from __future__ import annotations

import pickle
import socket
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from askkit import ChunkResult, SchemaError, ServerError, Turn
from askkit.errors import (
    AuthError,
    JobFailed,
    JobTimeout,
    ProtocolError,
    ServerStatusError,
    ServerUnavailable,
    UsageError,
)
from askkit.retrieve import Retriever, as_retriever
from askkit.retrieve.client import TOKEN_ENV, ClientSettings, Health, KimunClient, SearchResult
from askkit.testing import FAST_SETTINGS, KimunTestServer
from askkit.wire import AnswerResult, EmbeddingsResponse
from tests.conftest import load

TOKEN = "s3cret-token-value"


@pytest.fixture
def client(server: KimunTestServer) -> Iterator[KimunClient]:
    with server.client() as c:
        yield c


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- health


def test_health_is_typed(server: KimunTestServer, client: KimunClient) -> None:
    health = client.health()
    assert health == Health("ok", False, "askkit-test", "askkit-test", auth_required=False)
    assert health.capability == "full"
    assert server.requests[0].path == "/health"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({}, Health()),
        ({"status": "ok"}, Health(status="ok")),
        (
            {"status": "ok", "reranker": None, "embedder": None, "llm_provider": None},
            Health(status="ok"),
        ),
        (
            {"status": "ok", "reranker": True, "embedder": "ollama", "extra": [1]},
            Health("ok", True, "ollama", None, False),
        ),
    ],
)
def test_health_missing_and_null_fields_default(body: dict[str, Any], expected: Health) -> None:
    with KimunTestServer(health=body) as server, server.client() as client:
        assert client.health() == expected


#: ``/health`` of kimun's server at e7518b41 (``server/src/startup.rs``, ``health_handler``).
NEWEST_HEALTH = {
    "status": "ok",
    "reranker": False,
    "reranker_error": "could not download the cross-encoder (offline?)",
    "embedder": None,
    "llm_provider": "claude",
    "auth_required": True,
    "degraded": "could not initialize the fastembed embedder",
    "version": "0.5.1",
    "latest_version": "0.6.0",
}


def test_health_carries_what_a_newer_server_adds() -> None:
    with KimunTestServer(health=NEWEST_HEALTH) as server, server.client() as client:
        health = client.health()
    assert health == Health(
        "ok",
        False,
        None,
        "claude",
        auth_required=True,
        degraded="could not initialize the fastembed embedder",
        reranker_error="could not download the cross-encoder (offline?)",
        version="0.5.1",
        latest_version="0.6.0",
    )
    assert health.is_degraded
    assert health.capability == "unconfigured"
    assert [p.split(":")[0] for p in health.problems()] == [
        "the server is degraded",
        "the server's reranker failed to start",
    ]
    assert health.update_note() == "kimun server 0.6.0 is available (this one runs 0.5.1)"


def test_absent_health_fields_stay_absent() -> None:
    """A server that sends none of the newer fields (kimun before f28bdd54), or nulls (a
    healthy newer one), gives ``None`` for each: nothing is invented."""
    for body in (
        {"status": "ok", "reranker": True, "embedder": "ollama", "llm_provider": None},
        {"status": "ok", "degraded": None, "reranker_error": None, "latest_version": None},
    ):
        with KimunTestServer(health=body) as server, server.client() as client:
            health = client.health()
        fields = (health.degraded, health.reranker_error, health.version, health.latest_version)
        assert fields == (None, None, None, None)
        assert not health.is_degraded
        assert health.problems() == []
        assert health.update_note() is None


@pytest.mark.parametrize("field", ["degraded", "reranker_error", "version", "latest_version"])
def test_a_newer_health_field_of_the_wrong_type_is_a_protocol_error(field: str) -> None:
    with (
        KimunTestServer(health={"status": "ok", field: True}) as server,
        server.client() as client,
        pytest.raises(ProtocolError, match=field),
    ):
        client.health()


@pytest.mark.parametrize(
    ("embedder", "llm", "capability"),
    [(None, None, "unconfigured"), ("e", None, "semantic_only"), ("e", "l", "full")],
)
def test_health_capability(embedder: str | None, llm: str | None, capability: str) -> None:
    assert Health("ok", embedder=embedder, llm_provider=llm).capability == capability


def test_health_of_the_wrong_shape_is_a_protocol_error() -> None:
    with (
        KimunTestServer(health={"status": "ok", "auth_required": "yes"}) as server,
        server.client() as client,
        pytest.raises(ProtocolError) as info,
    ):
        client.health()
    message = str(info.value)
    assert "GET /health sent an unexpected payload" in message
    assert "auth_required" in message
    assert "'yes'" in message
    assert "auth_required" in info.value.excerpt


def test_health_is_open_and_sends_no_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    with KimunTestServer(token=TOKEN) as server, KimunClient(server.url, "notes") as client:
        assert client.health().auth_required is True
        assert server.requests[-1].authorization is None


# -- search


def test_search_returns_the_servers_chunks(client: KimunClient) -> None:
    result = client.search("how often do I feed the starter?")
    expected = EmbeddingsResponse.from_dict(load("embeddings.json"))
    assert isinstance(result, SearchResult)
    assert result.chunks == expected.chunks
    assert result.query_time_ms == 42
    assert result.query == "how often do I feed the starter?"
    assert result.to_response() == expected
    assert [s.ordinal for s in result.sources] == [1, 2, 3, 4, 5, 6]
    turn = result.to_turn()
    assert (turn.question, turn.answer, len(turn.sources)) == (result.query, "", 6)
    assert "sourdough.md" in result._repr_html_()


def test_search_body_omits_empty_history_and_context_size(
    server: KimunTestServer, client: KimunClient
) -> None:
    client.search("q")
    client.search("q", history=[])
    bodies = [r.json() for r in server.requests_to("/api/embeddings")]
    assert bodies == [{"vault_id": "notes", "query": "q"}] * 2


def test_search_body_carries_history_and_context_size(
    server: KimunTestServer, client: KimunClient
) -> None:
    earlier = Turn("What ratio?", "Feed it 1:5:5 [1], twice [2].", ())
    client.search(
        "and in the fridge?",
        history=[
            ("first question", "first answer [1]"),
            {"question": "second", "answer": "2nd"},
            earlier,
        ],
        context_size="large",
    )
    body = server.requests_to("/api/embeddings")[-1].json()
    assert body == {
        "vault_id": "notes",
        "query": "and in the fridge?",
        "context_size": "large",
        "history": [
            {"question": "first question", "answer": "first answer [1]"},  # sent as given
            {"question": "second", "answer": "2nd"},
            {"question": "What ratio?", "answer": "Feed it 1:5:5, twice."},  # kimun strips
        ],
    }


@pytest.mark.parametrize(
    ("history", "field"),
    [
        ("not a list", "history"),
        ({"question": "q", "answer": "a"}, "history"),
        ([("q", "a"), ("only one",)], "history[1]"),
        ([{"question": "q"}], "history[0]"),
        ([("q", 3)], "history[0].answer"),
        ([{"question": None, "answer": "a"}], "history[0].question"),
    ],
)
def test_bad_history_names_the_item(
    server: KimunTestServer, client: KimunClient, history: Any, field: str
) -> None:
    with pytest.raises(SchemaError) as info:
        client.search("q", history=history)
    assert info.value.field == field
    assert server.requests_to("/api/") == []  # nothing was sent


def test_context_size_is_validated(server: KimunTestServer, client: KimunClient) -> None:
    with pytest.raises(SchemaError, match="small', 'medium' or 'large'") as info:
        client.search("q", context_size="huge")  # type: ignore[arg-type]
    assert info.value.field == "context_size"
    assert server.requests_to("/api/") == []


def test_client_is_a_retriever(server: KimunTestServer, client: KimunClient) -> None:
    assert isinstance(client, Retriever)
    chunks = client("starter", k=2)
    assert isinstance(chunks, tuple)
    assert all(isinstance(c, ChunkResult) for c in chunks)
    assert [c.ordinal for c in chunks] == [1, 2]
    assert len(client("starter")) == 6  # k=10 by default: the whole list
    assert client("starter", k=0) == ()
    assert [c.ordinal for c in as_retriever(client)("starter", k=3)] == [1, 2, 3]
    assert all("k" not in r.json() for r in server.requests_to("/api/embeddings"))


@pytest.mark.parametrize("k", [-1, 1.5, True])
def test_retriever_k_is_validated(client: KimunClient, k: Any) -> None:
    with pytest.raises(SchemaError, match="k must be"):
        client("q", k=k)


def test_search_serves_a_local_retriever(chunk_dict: dict[str, Any]) -> None:
    seen: list[tuple[str, int]] = []

    def retriever(query: str, k: int = 10) -> list[dict[str, Any]]:
        seen.append((query, k))
        return [{**chunk_dict, "ordinal": 0}, {**chunk_dict, "path": "b.md", "ordinal": 0}]

    with KimunTestServer(retriever=retriever) as server, server.client() as client:
        result = client.search("river", context_size="medium")
    assert seen == [("river", 20)]
    assert [(c.path, c.ordinal) for c in result.chunks] == [
        ("journal/2026-04-08.md", 1),
        ("b.md", 2),
    ]


# -- answer


def test_answer_polls_the_job_to_a_turn(server: KimunTestServer, client: KimunClient) -> None:
    turn = client.answer("How do I feed the starter?", history=[("q", "a")])
    expected = Turn.from_answer(
        "How do I feed the starter?", AnswerResult.from_dict(load("answer_job.json")["result"])
    )
    assert turn == expected
    assert turn.source_for_citation(4) is not None
    assert turn.dangling_citations() == [7]
    posts = server.requests_to("/api/answer")
    assert [p.json() for p in posts] == [
        {
            "vault_id": "notes",
            "query": "How do I feed the starter?",
            "history": [{"question": "q", "answer": "a"}],
        }
    ]
    polls = server.requests_to("/api/job/")
    assert len(polls) == 3  # queued, processing, completed
    assert {p.method for p in polls} == {"GET"}


def test_answer_result_is_the_wire_result(client: KimunClient) -> None:
    result = client.answer_result("q")
    assert result == AnswerResult.from_dict(load("answer_job.json")["result"])


def test_answer_with_a_local_retriever_cites_its_sources(chunk_dict: dict[str, Any]) -> None:
    def answerer(query: str, chunks: Any) -> str:
        return f"{query}: see [{chunks[0].ordinal}]"

    with (
        KimunTestServer(retriever=lambda q: [chunk_dict], answerer=answerer) as server,
        server.client() as client,
    ):
        turn = client.answer("river?")
    assert turn.answer == "river?: see [2]"
    assert turn.dangling_citations() == []
    assert str(turn.sources[0].path) == "journal/2026-04-08.md"


def test_answer_keeps_polling_through_statuses_it_does_not_know(
    server: KimunTestServer, client: KimunClient
) -> None:
    server.fail("body", route="job", times=2, body={"job_id": "x", "status": "paused"})
    assert client.answer("q").answer.startswith("Feed the starter")
    assert len(server.requests_to("/api/job/")) == 5


# -- the token


def test_token_goes_on_api_routes_only(server: KimunTestServer) -> None:
    with KimunClient(server.url, "notes", TOKEN, settings=FAST_SETTINGS) as client:
        client.health()
        client.search("q")
        client.answer("q")
    auth = {
        (r.method, r.path.split("/")[2] if "/api/" in r.path else r.path): r.authorization
        for r in server.requests
    }
    assert auth == {
        ("GET", "/health"): None,
        ("POST", "embeddings"): f"Bearer {TOKEN}",
        ("POST", "answer"): f"Bearer {TOKEN}",
        ("GET", "job"): f"Bearer {TOKEN}",
    }


def test_token_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    with KimunTestServer(token=TOKEN) as server, KimunClient(server.url, "notes") as client:
        assert client.has_token
        assert len(client.search("q").chunks) == 6
        assert server.requests[-1].authorization == f"Bearer {TOKEN}"


def test_empty_token_sends_none_even_with_the_variable_set(
    monkeypatch: pytest.MonkeyPatch, server: KimunTestServer
) -> None:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    with KimunClient(server.url, "notes", token="") as client:
        client.search("q")
        assert not client.has_token
    assert server.requests[-1].authorization is None


def test_repr_never_shows_the_token(monkeypatch: pytest.MonkeyPatch) -> None:
    explicit = KimunClient("http://127.0.0.1:9/", "notes", TOKEN)
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    from_env = KimunClient("http://127.0.0.1:9", "notes")
    none = KimunClient("http://127.0.0.1:9", "notes", "")
    assert repr(explicit) == "KimunClient('http://127.0.0.1:9', vault_id='notes', token=<hidden>)"
    assert TOKEN not in repr(from_env)
    assert "token=<hidden>" in repr(from_env)
    assert repr(none).endswith("token=None)")
    tuned = KimunClient("http://127.0.0.1:9", "notes", TOKEN, settings=ClientSettings(retries=0))
    assert repr(tuned) == repr(explicit)  # the settings are client.settings, not in the repr
    assert tuned.settings.retries == 0
    for c in (explicit, from_env, none, tuned):
        c.close()


def test_trailing_slashes_are_trimmed(server: KimunTestServer) -> None:
    with KimunClient(server.url + "//", "notes") as client:
        assert client.base_url == server.url
        client.health()
    assert server.requests[-1].path == "/health"


@pytest.mark.parametrize("base_url", ["127.0.0.1:8080", "ftp://host"])
def test_bad_url_fails_early(base_url: str) -> None:
    with pytest.raises(UsageError, match=r"^base_url must start with http:// or https://"):
        KimunClient(base_url, "notes")


@pytest.mark.parametrize("vault_id", ["", "__system", "my notes", "a/b"])
def test_bad_vault_id_fails_early(vault_id: str) -> None:
    with pytest.raises(SchemaError) as info:
        KimunClient("http://host", vault_id)
    assert info.value.field == "vault_id"


@pytest.mark.parametrize(
    ("option", "value"),
    [("timeout", 0), ("poll_interval", -1), ("max_polls", 0), ("retries", -1)],
)
def test_bad_options_fail_early(option: str, value: float) -> None:
    with pytest.raises(SchemaError, match=option) as info:
        KimunClient("http://host", "notes", settings=ClientSettings(**{option: value}))
    assert info.value.field == option


# -- faults: each with the error type and its message


def test_401_without_a_token_says_none_was_sent() -> None:
    with (
        KimunTestServer(token=TOKEN) as server,
        server.client(token="") as client,
        pytest.raises(AuthError) as info,
    ):
        client.search("q")
    err = info.value
    assert str(err) == (
        "POST /api/embeddings was refused (HTTP 401: missing bearer token): the server "
        f"requires a token and none was sent; pass token=... or set {TOKEN_ENV}"
    )
    assert (err.status, err.path, err.token_sent) == (401, "/api/embeddings", False)
    assert isinstance(err, ServerError)
    assert isinstance(err, PermissionError)


def test_401_with_a_wrong_token_says_it_was_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TOKEN_ENV, "wrong-token-value")
    with (
        KimunTestServer(token=TOKEN) as server,
        server.client(token=None) as client,
        pytest.raises(AuthError) as info,
    ):
        client.answer("q")
    message = str(info.value)
    assert "POST /api/answer was refused (HTTP 401: invalid bearer token)" in message
    assert f"rejected the token from the {TOKEN_ENV} environment variable" in message
    assert "wrong-token-value" not in message
    assert info.value.token_sent is True
    assert server.requests_to("/api/job/") == []


def test_unauthorized_fault(server: KimunTestServer, client: KimunClient) -> None:
    server.fail("unauthorized", route="embeddings")
    with pytest.raises(AuthError, match=r"HTTP 401: invalid bearer token"):
        client.search("q")
    assert client.health().status == "ok"  # other routes unaffected


def test_403_is_an_auth_error(server: KimunTestServer) -> None:
    server.fail("status", status=403, message="forbidden")
    with server.client(token="t") as client, pytest.raises(AuthError, match="HTTP 403: forbidden"):
        client.search("q")


@pytest.mark.parametrize(
    ("status", "message", "hint"),
    [
        (500, "embedding backend crashed", ""),
        (400, "invalid vault_id", ""),
        (404, "collection not found", ""),
        (503, "no LLM configured", "; the server has no embedder or no LLM configured"),
    ],
)
def test_error_status_surfaces_the_servers_message(
    server: KimunTestServer, client: KimunClient, status: int, message: str, hint: str
) -> None:
    server.fail("status", route="embeddings", status=status, message=message)
    with pytest.raises(ServerStatusError) as info:
        client.search("q")
    err = info.value
    assert str(err).startswith(f"POST /api/embeddings failed with HTTP {status}: {message}{hint}")
    assert (err.status, err.path, err.server_message) == (status, "/api/embeddings", message)
    assert not isinstance(err, AuthError)
    assert len(server.requests_to("/api/embeddings")) == 1  # statuses are not retried


def test_error_status_with_a_non_json_body(server: KimunTestServer, client: KimunClient) -> None:
    server.fail("body", status=502, body=b"<html><h1>502 Bad Gateway</h1></html>")
    with pytest.raises(ServerStatusError) as info:
        client.health()
    assert str(info.value) == (
        "GET /health failed with HTTP 502: '<html><h1>502 Bad Gateway</h1></html>'"
    )


def test_the_servers_own_400_reaches_the_caller(server: KimunTestServer) -> None:
    with server.client() as client:
        client._core.vault_id = "__hidden"  # bypass the client's own check
        with pytest.raises(ServerStatusError, match=r"HTTP 400: invalid vault_id '__hidden'"):
            client.search("q")


def test_invalid_json_is_a_protocol_error_with_an_excerpt(
    server: KimunTestServer, client: KimunClient
) -> None:
    server.fail("invalid_json")
    with pytest.raises(ProtocolError) as info:
        client.search("q")
    message = str(info.value)
    assert message.startswith(
        "POST /api/embeddings sent a body that is not JSON askkit can read "
        "(the body is not valid JSON (Unterminated"
    )
    assert '\'{"chunks": [{"path": "journal/2026-04-08.md"' in message
    assert f"is {server.url} a kimun server?" in message
    assert info.value.excerpt.startswith('\'{"chunks"')
    assert isinstance(info.value, ValueError)


def test_a_long_payload_excerpt_is_truncated(server: KimunTestServer, client: KimunClient) -> None:
    server.fail("body", body=b"x" * 5000)
    with pytest.raises(ProtocolError) as info:
        client.health()
    assert "... (4800 more characters)" in str(info.value)
    assert len(str(info.value)) < 400


def test_wrong_shape_names_the_field(server: KimunTestServer, client: KimunClient) -> None:
    server.fail("body", route="embeddings", body={"chunks": [{"path": 7}], "query_time_ms": 1})
    with pytest.raises(ProtocolError) as info:
        client.search("q")
    message = str(info.value)
    assert "POST /api/embeddings sent an unexpected payload" in message
    assert "chunks[0].path: expected a string, got 7" in message
    assert '{"chunks": [{"path": 7}]' in message


def test_empty_body_is_a_protocol_error(server: KimunTestServer, client: KimunClient) -> None:
    server.fail("body", body=b"")
    with pytest.raises(ProtocolError, match="GET /health sent an empty body"):
        client.health()


def test_answer_without_a_job_id(server: KimunTestServer, client: KimunClient) -> None:
    server.fail("body", route="answer", body={"message": "Query job started"})
    with pytest.raises(ProtocolError, match=r"POST /api/answer sent an unexpected payload.*job_id"):
        client.answer("q")


@pytest.mark.parametrize(
    ("job", "needle"),
    [
        ({"status": "completed", "result": None}, "a completed job must carry a result"),
        ({"status": "completed", "result": {"answer": 1, "sources": []}}, "result.answer"),
        ({"status": 3}, "a string 'status'"),
        (["not", "an", "object"], "a string 'status'"),
    ],
)
def test_bad_job_status_is_a_protocol_error(
    server: KimunTestServer, client: KimunClient, job: Any, needle: str
) -> None:
    server.fail("body", route="job", body=job)
    with pytest.raises(ProtocolError, match="GET /api/job/") as info:
        client.answer("q")
    assert needle in str(info.value)
    assert len(server.requests_to("/api/job/")) == 1


def test_job_that_fails_carries_the_servers_message(
    server: KimunTestServer, client: KimunClient
) -> None:
    server.fail("job_fails", message="LLM request failed: connection refused by ollama")
    with pytest.raises(JobFailed) as info:
        client.answer("q")
    err = info.value
    job_id = err.job_id
    assert str(err) == (
        f"answer job {job_id} failed: LLM request failed: connection refused by ollama"
    )
    assert err.server_message == "LLM request failed: connection refused by ollama"
    assert server.requests_to("/api/job/")[-1].path == f"/api/job/{job_id}"


def test_job_that_fails_without_a_reason(server: KimunTestServer, client: KimunClient) -> None:
    server.fail("job_fails", message="")
    with pytest.raises(JobFailed, match="failed: the server gave no reason") as info:
        client.answer("q")
    assert info.value.server_message is None


def test_job_that_never_completes_times_out(server: KimunTestServer) -> None:
    server.fail("job_never_completes")
    with (
        server.client(settings=replace(FAST_SETTINGS, max_polls=4)) as client,
        pytest.raises(JobTimeout) as info,
    ):
        client.answer("q")
    err = info.value
    path = server.requests_to("/api/job/")[0].path
    assert path == f"/api/job/{err.job_id}"
    assert str(err).startswith(
        f"answer job {err.job_id} did not finish: still 'processing' after 4 polls over "
    )
    assert "raise max_polls (now 4) or poll_interval (now 0.01 s)" in str(err)
    assert (err.polls, err.last_status) == (4, "processing")
    assert err.waited >= 3 * 0.01
    assert len(server.requests_to("/api/job/")) == 4
    assert isinstance(err, TimeoutError)


def test_slow_response_past_the_timeout(server: KimunTestServer) -> None:
    server.fail("slow", route="embeddings", delay=5)
    started = time.monotonic()
    settings = replace(FAST_SETTINGS, timeout=0.2, retries=1)
    with server.client(settings=settings) as client, pytest.raises(ServerUnavailable) as info:
        client.search("q")
    assert time.monotonic() - started < 2
    assert str(info.value) == (
        f"POST /api/embeddings to {server.url}: no response within the 0.2 s timeout "
        "(request sent, no response headers) after 2 attempts"
    )
    assert info.value.attempts == 2
    assert isinstance(info.value, ConnectionError)


def test_dropped_connection_mid_body(server: KimunTestServer, client: KimunClient) -> None:
    server.fail("drop", route="embeddings")
    with pytest.raises(ServerUnavailable) as info:
        client.search("q")
    message = str(info.value)
    assert message.startswith(f"POST /api/embeddings to {server.url}: the connection dropped")
    assert "incomplete" in message or "expected" in message
    assert message.endswith("after 3 attempts")
    assert len(server.requests_to("/api/embeddings")) == 3  # retries=2 by default


def test_a_search_is_retried_after_a_drop(server: KimunTestServer, client: KimunClient) -> None:
    server.fail("drop", route="embeddings", times=1)
    assert len(client.search("q").chunks) == 6
    assert len(server.requests_to("/api/embeddings")) == 2


def test_health_is_retried_after_a_slow_response(server: KimunTestServer) -> None:
    server.fail("slow", route="health", times=1, delay=5)
    with server.client(settings=replace(FAST_SETTINGS, timeout=0.2)) as client:
        assert client.health().status == "ok"
    assert len(server.requests_to("/health")) == 2


def test_starting_an_answer_job_is_never_retried(
    server: KimunTestServer, client: KimunClient
) -> None:
    server.fail("drop", route="answer", times=1)
    with pytest.raises(ServerUnavailable, match=r"POST /api/answer .* dropped") as info:
        client.answer("q")
    assert info.value.attempts == 1
    assert "attempts" not in str(info.value)
    assert len(server.requests_to("/api/answer")) == 1
    assert server.requests_to("/api/job/") == []


def test_connection_refused_after_bounded_retries() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    started = time.monotonic()
    with (
        KimunClient(url, "notes", settings=ClientSettings(retries=2, backoff=0.05)) as client,
        pytest.raises(ServerUnavailable) as info,
    ):
        client.health()
    elapsed = time.monotonic() - started
    assert str(info.value).startswith(f"GET /health to {url}: cannot connect (")
    assert "is the server running? after 3 attempts" in str(info.value)
    assert info.value.attempts == 3
    assert elapsed >= 0.05 + 0.1  # backoff doubled between the attempts


def test_a_stopped_server_is_unavailable() -> None:
    with KimunTestServer() as server:
        client = server.client(settings=replace(FAST_SETTINGS, retries=0))
        client.health()
    with client, pytest.raises(ServerUnavailable, match="cannot connect"):
        client.search("q")


def test_poll_errors_that_heal_are_tolerated(server: KimunTestServer) -> None:
    server.fail("status", route="job", times=3, status=500, message="busy")
    server.fail("drop", route="job", times=2)
    with server.client(settings=replace(FAST_SETTINGS, max_poll_errors=6)) as client:
        assert client.answer("q").answer.startswith("Feed the starter")
    # 3 errors, then 2 polls the server answered (queued, processing) but whose
    # responses were dropped, then the completed one.
    assert len(server.requests_to("/api/job/")) == 3 + 2 + 1


def test_too_many_poll_errors_in_a_row(server: KimunTestServer) -> None:
    server.fail("status", route="job", status=500, message="busy")
    settings = replace(FAST_SETTINGS, max_poll_errors=3)
    with server.client(settings=settings) as client, pytest.raises(ServerStatusError) as info:
        client.answer("q")
    assert str(info.value).startswith("GET /api/job/")
    assert "failed with HTTP 500: busy" in str(info.value)
    assert any("3 polls failed in a row" in note for note in info.value.__notes__)
    assert len(server.requests_to("/api/job/")) == 3


@pytest.mark.parametrize(("status", "error"), [(404, ServerStatusError), (401, AuthError)])
def test_poll_errors_that_cannot_heal_stop_at_once(
    server: KimunTestServer, status: int, error: type[Exception]
) -> None:
    server.fail("status", route="job", status=status, message="job not found")
    with server.client() as client, pytest.raises(error, match=f"HTTP {status}: job not found"):
        client.answer("q")
    assert len(server.requests_to("/api/job/")) == 1


def test_job_ids_are_quoted_into_the_path(server: KimunTestServer, client: KimunClient) -> None:
    server.fail("body", route="answer", times=1, body={"job_id": "../../health?x=1"})
    with pytest.raises(ServerStatusError, match="HTTP 400: invalid job id"):
        client.answer("q")
    assert server.requests_to("/api/job/")[0].path == "/api/job/..%2F..%2Fhealth%3Fx%3D1"


# -- the error types themselves


@pytest.mark.parametrize(
    "err",
    [
        AuthError("m", status=401, path="/p", server_message="s", token_sent=True),
        ServerStatusError("m", status=500, path="/p", server_message="s"),
        ProtocolError("m", path="/p", excerpt="'x'"),
        JobFailed("m", job_id="j", server_message="s"),
        JobTimeout("m", job_id="j", polls=3, waited=1.5, last_status="queued"),
        ServerUnavailable("m", path="/p", attempts=3),
    ],
)
def test_errors_pickle_with_their_fields(err: ServerError) -> None:
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is type(err)
    assert str(again) == "m"
    assert vars(again) == vars(err)
    assert isinstance(again, ServerError)
