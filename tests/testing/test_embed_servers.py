"""askkit.testing.embed_servers: Ollama, OpenAI-compatible and rerank routes over real HTTP."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import numpy as np
import pytest

from askkit.testing.embed_servers import EmbedTestServer, HashingEmbedding, overlap_scores


@pytest.fixture
def server() -> Iterator[EmbedTestServer]:
    with EmbedTestServer(dim=4) as s:
        yield s


def post(server: EmbedTestServer, path: str, body: Any, **options: Any) -> httpx.Response:
    return httpx.post(server.url + path, json=body, timeout=options.pop("timeout", 5), **options)


def test_binds_127_0_0_1_on_a_free_port() -> None:
    with EmbedTestServer() as one, EmbedTestServer() as two:
        assert one.address[0] == "127.0.0.1"
        assert one.address[1] != two.address[1]
        assert one.v1_url == one.url + "/v1"
        assert repr(one) == f"<EmbedTestServer {one.url}>"
    assert repr(one) == "<EmbedTestServer stopped>"
    with pytest.raises(RuntimeError, match="not running"):
        _ = one.url


def test_ollama_route_answers_one_vector_per_input(server: EmbedTestServer) -> None:
    response = post(server, "/api/embed", {"model": "m", "input": ["a b", "c"]})
    assert response.status_code == 200
    body = response.json()
    assert body["model"] == "m"
    assert body["embeddings"] == HashingEmbedding(4)(["a b", "c"]).tolist()
    single = post(server, "/api/embed", {"model": "m", "input": "a b"}).json()
    assert single["embeddings"] == body["embeddings"][:1], "Ollama also takes one string"


@pytest.mark.parametrize("prefix", ["", "/v1"])
def test_openai_route_answers_indexed_data(server: EmbedTestServer, prefix: str) -> None:
    body = post(server, f"{prefix}/embeddings", {"model": "m", "input": ["a", "b"]}).json()
    assert [item["index"] for item in body["data"]] == [0, 1]
    assert [item["embedding"] for item in body["data"]] == HashingEmbedding(4)(["a", "b"]).tolist()
    assert server.requests_to("openai")[0].path == f"{prefix}/embeddings"


def test_openai_route_can_answer_in_reverse_order() -> None:
    with EmbedTestServer(openai_order="reversed") as s:
        body = post(s, "/embeddings", {"model": "m", "input": ["a", "b", "c"]}).json()
    assert [item["index"] for item in body["data"]] == [2, 1, 0]


def test_rerank_route_answers_every_document_best_first(server: EmbedTestServer) -> None:
    body = post(
        server,
        "/v1/rerank",
        {"model": "r", "query": "feed the starter", "documents": ["tomato", "the starter"]},
    ).json()
    assert body == {
        "results": [
            {"index": 1, "relevance_score": 2 / 3},
            {"index": 0, "relevance_score": 0.0},
        ],
        "model": "r",
    }


def test_rerank_route_speaks_voyage_and_score() -> None:
    with EmbedTestServer(rerank_shape="data", score_key="score") as s:
        body = post(s, "/rerank", {"query": "a", "documents": ["a", "b"]}).json()
    assert body == {"data": [{"index": 0, "score": 1.0}, {"index": 1, "score": 0.0}]}


def test_the_functions_given_compute_the_answers() -> None:
    def embed(texts: list[str]) -> np.ndarray:
        return np.array([[len(t), 1.0] for t in texts])

    with EmbedTestServer(embed=embed, rerank=lambda q, docs: [-len(d) for d in docs]) as s:
        vectors = post(s, "/api/embed", {"model": "m", "input": ["abc"]}).json()["embeddings"]
        results = post(s, "/rerank", {"query": "q", "documents": ["a", "bbb"]}).json()["results"]
    assert vectors == [[3.0, 1.0]]
    assert results == [{"index": 0, "relevance_score": -1.0}, {"index": 1, "relevance_score": -3.0}]


def test_a_failing_function_is_a_500() -> None:
    def embed(texts: list[str]) -> list[list[float]]:
        raise RuntimeError("model crashed")

    with EmbedTestServer(embed=embed) as s:
        response = post(s, "/api/embed", {"model": "m", "input": ["a"]})
    assert response.status_code == 500
    assert response.json() == {"error": "RuntimeError: model crashed"}


def test_a_token_is_required_when_set() -> None:
    with EmbedTestServer(token="sk-1") as s:
        assert post(s, "/embeddings", {"model": "m", "input": ["a"]}).status_code == 401
        wrong = {"Authorization": "Bearer sk-2"}
        assert post(s, "/embeddings", {"model": "m", "input": ["a"]}, headers=wrong).json() == {
            "error": "invalid api key"
        }
        right = {"Authorization": "Bearer sk-1"}
        assert post(s, "/rerank", {"query": "a", "documents": []}, headers=right).status_code == 200
        assert s.requests[-1].authorization == "Bearer sk-1"


def test_requests_and_inputs_are_recorded(server: EmbedTestServer) -> None:
    post(server, "/api/embed", {"model": "m", "input": ["a", "b"]})
    post(server, "/v1/embeddings", {"model": "m", "input": "c"})
    post(server, "/rerank", {"query": "q", "documents": ["d"]})
    assert server.inputs == [["a", "b"], ["c"]]
    assert [r.path for r in server.requests] == ["/api/embed", "/v1/embeddings", "/rerank"]
    assert server.requests_to("rerank")[0].json() == {"query": "q", "documents": ["d"]}
    server.clear_requests()
    assert server.requests == []


@pytest.mark.parametrize(
    ("path", "method", "body", "status"),
    [
        ("/nothing", "POST", {}, 404),
        ("/api/embed", "GET", None, 405),
        ("/api/embed", "POST", "not an object", 400),
        ("/api/embed", "POST", {"model": "m"}, 400),
        ("/api/embed", "POST", {"model": "m", "input": [1]}, 400),
        ("/rerank", "POST", {"query": "q"}, 400),
        ("/rerank", "POST", {"query": "q", "documents": [None]}, 400),
    ],
)
def test_bad_requests_are_refused(
    server: EmbedTestServer, path: str, method: str, body: Any, status: int
) -> None:
    response = httpx.request(method, server.url + path, json=body, timeout=5)
    assert response.status_code == status
    assert "error" in response.json()


# ------------------------------------------------------------------------ faults


def test_status_and_unauthorized_faults(server: EmbedTestServer) -> None:
    server.fail("status", status=503, message="loading the model", times=1)
    server.fail("unauthorized", route="rerank")
    assert post(server, "/api/embed", {"model": "m", "input": ["a"]}).status_code == 503
    assert post(server, "/api/embed", {"model": "m", "input": ["a"]}).status_code == 200
    rerank = post(server, "/rerank", {"query": "q", "documents": ["a"]})
    assert (rerank.status_code, rerank.json()) == (401, {"error": "invalid api key"})


def test_invalid_json_and_body_faults(server: EmbedTestServer) -> None:
    server.fail("invalid_json", times=1)
    with pytest.raises(json.JSONDecodeError):
        post(server, "/api/embed", {"model": "m", "input": ["a"]}).json()
    server.fail("body", body={"anything": 1}, status=202)
    response = post(server, "/api/embed", {"model": "m", "input": ["a"]})
    assert (response.status_code, response.json()) == (202, {"anything": 1})


def test_wrong_count_and_wrong_dimension_faults(server: EmbedTestServer) -> None:
    server.fail("wrong_count", times=2)
    server.fail("wrong_dimension")
    assert (
        len(post(server, "/api/embed", {"model": "m", "input": ["a", "b"]}).json()["embeddings"])
        == 1
    )
    rerank = post(server, "/rerank", {"query": "q", "documents": ["a", "b"]}).json()
    assert len(rerank["results"]) == 1
    vectors = post(server, "/embeddings", {"model": "m", "input": ["a", "b"]}).json()["data"]
    assert [len(item["embedding"]) for item in vectors] == [3, 3]


def test_skip_lets_requests_through_first(server: EmbedTestServer) -> None:
    server.fail("status", skip=2, route="ollama")
    codes = [
        post(server, "/api/embed", {"model": "m", "input": ["a"]}).status_code for _ in range(3)
    ]
    assert codes == [200, 200, 500]
    assert post(server, "/embeddings", {"model": "m", "input": ["a"]}).status_code == 200


def test_slow_and_drop_faults(server: EmbedTestServer) -> None:
    server.fail("slow", delay=2, times=1)
    with pytest.raises(httpx.ReadTimeout):
        post(server, "/api/embed", {"model": "m", "input": ["a"]}, timeout=0.2)
    server.fail("drop", times=1)
    with pytest.raises(httpx.RemoteProtocolError):
        post(server, "/api/embed", {"model": "m", "input": ["a"]})
    assert post(server, "/api/embed", {"model": "m", "input": ["a"]}).status_code == 200


def test_hostile_faults_are_kimun_test_servers(server: EmbedTestServer) -> None:
    server.fail("gzip_bomb", size=2**20, times=1)
    response = httpx.post(server.url + "/api/embed", json={"model": "m", "input": ["a"]})
    assert response.headers["content-encoding"] == "gzip"
    assert response.content == b" " * 2**20  # httpx inflated it
    server.fail("deep_json", size=50, times=1)
    raw = post(server, "/api/embed", {"model": "m", "input": ["a"]}).content
    assert raw == b"[" * 50 + b"]" * 50


def test_bad_fault_arguments_are_refused(server: EmbedTestServer) -> None:
    with pytest.raises(ValueError, match="unknown fault"):
        server.fail("explode")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown route"):
        server.fail("status", route="health")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="skip"):
        server.fail("status", skip=-1)
    with pytest.raises(ValueError, match="rerank_shape"):
        EmbedTestServer(rerank_shape="hits")  # type: ignore[arg-type]


def test_clear_faults(server: EmbedTestServer) -> None:
    server.fail("status")
    server.clear_faults()
    assert post(server, "/api/embed", {"model": "m", "input": ["a"]}).status_code == 200


def test_hashing_embedding_is_deterministic_and_lexical() -> None:
    embed = HashingEmbedding(64)
    a, b, c = embed(["feed the starter", "Feed THE starter", "tomato seedlings"])
    assert np.array_equal(a, b)
    assert a @ b > abs(a @ c)
    with pytest.raises(ValueError, match="dim"):
        HashingEmbedding(0)


def test_overlap_scores_are_the_share_of_query_words() -> None:
    assert overlap_scores("a b", ["a", "b a", "c"]) == [0.5, 1.0, 0.0]
    assert overlap_scores("", ["a"]) == [0.0]
