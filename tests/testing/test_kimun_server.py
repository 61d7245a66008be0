"""askkit.testing.kimun_server: kimun's routes as kimun serves them, over real HTTP."""

from __future__ import annotations

import json
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from askkit import SchemaError
from askkit.retrieve import ClientSettings
from askkit.testing import FAST_SETTINGS, UNCONFIGURED, KimunTestServer, sample_payloads
from tests.conftest import DATA, load


@pytest.fixture
def server() -> Iterator[KimunTestServer]:
    with KimunTestServer(token="tok") as s:
        yield s


@pytest.fixture
def http(server: KimunTestServer) -> Iterator[httpx.Client]:
    with httpx.Client(
        base_url=server.url, headers={"Authorization": "Bearer tok"}, timeout=5
    ) as client:
        yield client


def query(**extra: Any) -> dict[str, Any]:
    return {"vault_id": "notes", "query": "starter", **extra}


def test_the_default_payloads_are_the_data_files() -> None:
    embeddings, answer = sample_payloads()
    assert embeddings == load("embeddings.json")
    assert answer == load("answer_job.json")["result"]
    embeddings["chunks"].clear()
    assert sample_payloads()[0] == load("embeddings.json")  # fresh copies


def test_binds_127_0_0_1_on_a_free_port() -> None:
    with KimunTestServer() as one, KimunTestServer() as two:
        assert one.address[0] == "127.0.0.1"
        assert one.address[1] != two.address[1]
        assert one.url == f"http://127.0.0.1:{one.address[1]}"
        assert repr(one) == f"<KimunTestServer {one.url}>"


def test_health_is_open(server: KimunTestServer) -> None:
    response = httpx.get(server.url + "/health")
    assert response.status_code == 200
    assert response.json() == {
        "status": "ok",
        "reranker": False,
        "reranker_error": None,
        "embedder": "askkit-test",
        "llm_provider": "askkit-test",
        "auth_required": True,
        "degraded": None,
    }


@pytest.mark.parametrize(
    ("headers", "message"),
    [({}, "missing bearer token"), ({"Authorization": "Bearer nope"}, "invalid bearer token")],
)
def test_api_routes_need_the_token(
    server: KimunTestServer, headers: dict[str, str], message: str
) -> None:
    response = httpx.post(server.url + "/api/embeddings", json=query(), headers=headers)
    assert response.status_code == 401
    assert response.json() == {"error": message}


def test_embeddings(http: httpx.Client) -> None:
    response = http.post("/api/embeddings", json=query())
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.json() == load("embeddings.json")


def test_answer_job_goes_queued_processing_completed() -> None:
    with (
        KimunTestServer(processing_polls=2) as server,
        httpx.Client(base_url=server.url) as http,
    ):
        started = http.post("/api/answer", json=query())
        assert started.status_code == 200
        body = started.json()
        assert body["message"] == "Query job started"
        job_id = body["job_id"]
        assert uuid.UUID(job_id)
        polls = [http.get(f"/api/job/{job_id}").json() for _ in range(5)]
    assert [p["status"] for p in polls] == [
        "queued",
        "processing",
        "processing",
        "completed",
        "completed",
    ]
    assert all(p["job_id"] == job_id and p["error"] is None for p in polls)
    assert [p["result"] for p in polls[:3]] == [None] * 3
    assert polls[3]["result"] == load("answer_job.json")["result"]


def test_failed_job_reports_its_error(server: KimunTestServer, http: httpx.Client) -> None:
    server.fail("job_fails", message="LLM down", times=1)
    job_id = http.post("/api/answer", json=query()).json()["job_id"]
    statuses = [http.get(f"/api/job/{job_id}").json() for _ in range(3)]
    assert statuses[-1] == {
        "job_id": job_id,
        "status": "failed",
        "result": None,
        "error": "LLM down",
    }
    # the fault was used once: the next job completes
    job_id = http.post("/api/answer", json=query()).json()["job_id"]
    assert [http.get(f"/api/job/{job_id}").json()["status"] for _ in range(3)][-1] == "completed"


def test_never_completing_job(server: KimunTestServer, http: httpx.Client) -> None:
    server.fail("job_never_completes")
    job_id = http.post("/api/answer", json=query()).json()["job_id"]
    statuses = {http.get(f"/api/job/{job_id}").json()["status"] for _ in range(10)}
    assert statuses == {"queued", "processing"}


def test_unknown_and_malformed_job_ids(http: httpx.Client) -> None:
    missing = str(uuid.uuid4())
    response = http.get(f"/api/job/{missing}")
    assert (response.status_code, response.json()) == (404, {"error": f"job {missing} not found"})
    response = http.get("/api/job/not-a-uuid")
    assert response.status_code == 400
    assert response.json() == {"error": "invalid job id 'not-a-uuid': expected a UUID"}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"{not json", "Failed to parse the request body as JSON"),
        (b"[1, 2]", "the request body must be a JSON object"),
        (json.dumps({"query": "q"}).encode(), "missing field `vault_id`"),
        (json.dumps({"vault_id": "notes"}).encode(), "missing field `query`"),
        (json.dumps(query(query=3)).encode(), "invalid type for `query`"),
        (json.dumps(query(vault_id="__x")).encode(), "invalid vault_id '__x'"),
        (json.dumps(query(vault_id="a b")).encode(), "invalid vault_id 'a b'"),
        (json.dumps(query(context_size="huge")).encode(), "unknown context_size 'huge'"),
        (json.dumps(query(history=[{"question": "q"}])).encode(), "history must be a list"),
    ],
)
@pytest.mark.parametrize("route", ["/api/embeddings", "/api/answer"])
def test_bad_bodies_are_400(http: httpx.Client, route: str, body: bytes, message: str) -> None:
    response = http.post(route, content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 400
    assert message in response.json()["error"]


def test_valid_optional_fields_are_accepted(http: httpx.Client) -> None:
    body = query(context_size=None, history=[{"question": "q", "answer": "a"}])
    assert http.post("/api/embeddings", json=body).status_code == 200
    assert http.post("/api/answer", json=query(context_size="medium")).status_code == 200


def test_unknown_routes_and_methods(http: httpx.Client) -> None:
    assert http.get("/api/nothing").status_code == 404
    assert http.get("/api/job/").status_code == 404
    response = http.get("/api/embeddings")
    assert response.status_code == 405
    assert response.json() == {"error": "/api/embeddings takes POST, not GET"}
    assert http.put("/health").status_code == 405
    assert http.delete("/api/answer").status_code == 405


def test_requests_are_recorded(server: KimunTestServer, http: httpx.Client) -> None:
    http.post("/api/embeddings?x=1", json=query(), headers={"X-Test": "yes"})
    http.get("/health")
    first, second = server.requests
    assert (first.method, first.path) == ("POST", "/api/embeddings?x=1")
    assert first.json() == query()
    assert first.headers["x-test"] == "yes"
    assert first.authorization == "Bearer tok"
    assert (second.method, second.path, second.body) == ("GET", "/health", b"")
    assert server.requests_to("/api/") == [first]
    server.clear_requests()
    assert server.requests == []


def test_a_retriever_is_served(chunk_dict: dict[str, Any]) -> None:
    calls: list[tuple[str, int]] = []

    def retriever(q: str, k: int) -> list[dict[str, Any]]:
        calls.append((q, k))
        return [{**chunk_dict, "ordinal": 0, "path": f"n{i}.md"} for i in range(k)]

    with (
        KimunTestServer(retriever=retriever, top_k=3) as server,
        httpx.Client(base_url=server.url) as http,
    ):
        default = http.post("/api/embeddings", json=query()).json()
        small = http.post("/api/embeddings", json=query(context_size="small")).json()
        job_id = http.post("/api/answer", json=query()).json()["job_id"]
        job = [http.get(f"/api/job/{job_id}").json() for _ in range(3)][-1]
    assert calls == [("starter", 3), ("starter", 10), ("starter", 3)]
    assert [c["ordinal"] for c in default["chunks"]] == [1, 2, 3]
    assert [c["path"] for c in default["chunks"]] == ["n0.md", "n1.md", "n2.md"]
    assert isinstance(default["query_time_ms"], int)
    assert len(small["chunks"]) == 10
    assert job["result"]["answer"] == "An answer to 'starter' from the test server [1] [2] [3]."
    assert len(job["result"]["sources"]) == 3


def test_from_files(tmp_path: Path) -> None:
    job = load("answer_job.json")
    job["result"]["answer"] = "Changed [1]."
    path = tmp_path / "job.json"
    path.write_text(json.dumps(job))
    server = KimunTestServer.from_files(DATA / "embeddings_old_server.json", path)
    with server, httpx.Client(base_url=server.url) as http:
        assert http.post("/api/embeddings", json=query()).json() == load(
            "embeddings_old_server.json"
        )  # served as given: no ordinals added
        job_id = http.post("/api/answer", json=query()).json()["job_id"]
        last = [http.get(f"/api/job/{job_id}").json() for _ in range(3)][-1]
    assert last["result"]["answer"] == "Changed [1]."


@pytest.mark.parametrize(
    "kwargs",
    [
        {"embeddings": {"chunks": [{"path": 1}]}},
        {"answer": {"answer": "a"}},
        {"answer": {"job_id": "x", "status": "completed", "result": {"sources": []}}},
    ],
)
def test_bad_payloads_fail_at_construction(kwargs: dict[str, Any]) -> None:
    with pytest.raises(SchemaError):
        KimunTestServer(**kwargs)


def test_bad_faults_are_refused(server: KimunTestServer) -> None:
    with pytest.raises(ValueError, match="unknown fault 'explode'"):
        server.fail("explode")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown route"):
        server.fail("status", route="everything")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="an HTTP error status, got 200"):
        server.fail("status", status=200)
    with pytest.raises(ValueError, match="processing_polls"):
        KimunTestServer(processing_polls=-1)


def test_faults_count_down_and_clear(server: KimunTestServer, http: httpx.Client) -> None:
    server.fail("status", route="health", times=2, status=503, message="warming up")
    got = [http.get("/health").status_code for _ in range(3)]
    assert got == [503, 503, 200]
    server.fail("status", status=500)
    assert http.get("/health").json() == {
        "error": "internal error (a fault injected by KimunTestServer)"
    }
    server.clear_faults()
    assert http.get("/health").status_code == 200


def test_invalid_json_and_body_faults(server: KimunTestServer, http: httpx.Client) -> None:
    server.fail("invalid_json", times=1)
    response = http.get("/health")
    assert response.status_code == 200
    with pytest.raises(json.JSONDecodeError):
        response.json()
    server.fail("body", times=1, body={"chunks": "nope"})
    assert http.post("/api/embeddings", json=query()).json() == {"chunks": "nope"}
    server.fail("body", times=1, status=502, body=b"<html>")
    response = http.get("/health")
    assert (response.status_code, response.content) == (502, b"<html>")


def test_drop_sends_half_the_promised_body(server: KimunTestServer) -> None:
    server.fail("drop", route="health")
    host, port = server.address
    with socket.create_connection((host, port), timeout=5) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(
        next(line for line in head.split(b"\r\n") if line.startswith(b"Content-Length")).split(
            b":"
        )[1]
    )
    assert 0 < len(body) < length
    with pytest.raises(httpx.RemoteProtocolError):
        httpx.get(server.url + "/health")


def test_slow_fault_delays_the_answer(server: KimunTestServer) -> None:
    server.fail("slow", route="health", times=1, delay=0.2)
    started = time.monotonic()
    assert httpx.get(server.url + "/health").status_code == 200
    assert time.monotonic() - started >= 0.2


def test_stop_is_prompt_with_a_slow_request_in_flight() -> None:
    server = KimunTestServer().start()
    server.fail("slow", delay=30)
    errors: list[BaseException] = []

    def request() -> None:
        try:
            httpx.get(server.url + "/health", timeout=10)
        except httpx.HTTPError as exc:
            errors.append(exc)

    thread = threading.Thread(target=request)
    thread.start()
    deadline = time.monotonic() + 5
    while not server.requests and time.monotonic() < deadline:
        time.sleep(0.005)
    started = time.monotonic()
    server.stop()
    thread.join(timeout=5)
    assert time.monotonic() - started < 2
    assert not thread.is_alive()
    assert len(errors) == 1  # the client saw the connection close


def test_stop_frees_the_port_and_is_idempotent() -> None:
    server = KimunTestServer().start()
    url = server.url
    with httpx.Client() as keep_alive:
        assert keep_alive.get(url + "/health").status_code == 200
        server.stop()
        server.stop()
        with pytest.raises(httpx.ConnectError):
            httpx.get(url + "/health")
    with pytest.raises(RuntimeError, match="not running"):
        _ = server.url


def test_start_twice_is_an_error() -> None:
    with KimunTestServer() as server, pytest.raises(RuntimeError, match="already running"):
        server.start()


def test_the_server_restarts_after_stop() -> None:
    server = KimunTestServer()
    for _ in range(2):
        with server:
            assert httpx.get(server.url + "/health").status_code == 200


def test_client_helper_uses_the_servers_token(server: KimunTestServer) -> None:
    with server.client() as client:
        assert client.has_token
        assert len(client("starter", k=1)) == 1
    assert server.requests[-1].authorization == "Bearer tok"


def test_client_helper_polls_fast_unless_told_otherwise(server: KimunTestServer) -> None:
    assert ClientSettings(poll_interval=0.01, backoff=0.01) == FAST_SETTINGS
    with server.client() as client:
        assert client.settings is FAST_SETTINGS
        assert client.vault_id == "notes"
    settings = ClientSettings(timeout=5, max_polls=2)
    with server.client("other", token="", settings=settings) as client:
        assert client.settings is settings
        assert (client.vault_id, client.has_token) == ("other", False)


def test_client_helper_uses_a_given_http_client(server: KimunTestServer) -> None:
    with httpx.Client() as http:
        with server.client(http_client=http) as client:
            assert client.health().auth_required
        assert not http.is_closed


def test_health_says_what_a_newer_kimun_adds_and_no_version_unless_given() -> None:
    with KimunTestServer() as server:
        body = httpx.get(f"{server.url}/health").json()
    assert body["degraded"] is None
    assert body["reranker_error"] is None
    assert "version" not in body  # the double is no kimun release
    assert "latest_version" not in body
    with KimunTestServer(version="0.5.1", latest_version="0.6.0") as server:
        body = httpx.get(f"{server.url}/health").json()
    assert (body["version"], body["latest_version"]) == ("0.5.1", "0.6.0")


def test_a_degraded_server_answers_503_as_kimuns_unconfigured_one() -> None:
    with KimunTestServer(degraded="model download failed", token="t") as server:
        health = httpx.get(f"{server.url}/health").json()
        assert (health["degraded"], health["embedder"]) == ("model download failed", None)
        headers = {"Authorization": "Bearer t"}
        for route in ("/api/embeddings", "/api/answer"):
            reply = httpx.post(
                f"{server.url}{route}", json={"vault_id": "v", "query": "q"}, headers=headers
            )
            assert reply.status_code == 503
            assert reply.json() == {"error": UNCONFIGURED}
        assert httpx.post(f"{server.url}/api/embeddings", json={}).status_code == 401


def test_a_reranker_error_is_reported_and_search_still_answers() -> None:
    with KimunTestServer(reranker_error="no model") as server:
        health = httpx.get(f"{server.url}/health").json()
        assert (health["reranker"], health["reranker_error"]) == (False, "no model")
        reply = httpx.post(f"{server.url}/api/embeddings", json={"vault_id": "v", "query": "q"})
        assert reply.status_code == 200
        assert reply.json()["chunks"]
