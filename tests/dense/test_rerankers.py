"""askkit.dense.rerankers: kimun's cross-encoder and HTTP reranker, and its fallback.

Pinned to kimun's server at commit f28bdd54: ``server/src/reranker/mod.rs``
(``rerank_document``, ``CrossEncoderReranker``, which maps each raw logit
through the sigmoid), ``server/src/reranker/http.rs`` (``HttpReranker``) and
``KimunRag::rank`` in ``server/src/lib.rs`` (sanitise, validate, or fall back
to the vector order). The tests named after kimun's own unit tests reproduce them.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from askkit.dense.rerankers import (
    DEFAULT_RERANKER,
    FastEmbedReranker,
    HttpReranker,
    Reranker,
    apply_reranker,
    parse_reranker,
    rerank_document,
)
from askkit.errors import (
    AuthError,
    ProtocolError,
    ServerStatusError,
    ServerUnavailable,
    StoreError,
    UsageError,
)
from askkit.ranking.pool import pool_of
from askkit.ranking.rerank import sigmoid
from askkit.testing.embed_servers import EmbedTestServer
from askkit.testing.model_references import reference_rerank_scores
from askkit.testing.models import install_in_hub_cache
from askkit.wire import ChunkResult

KEY = "co-key-0123456789"


def chunk(title: str, text: str, score: float = 0.5, path: str = "/a.md") -> ChunkResult:
    return ChunkResult(path, title, None, text, "h", score)


def abc_pool() -> list[ChunkResult]:
    return [
        chunk("A", "a", 0.9, "/a.md"),
        chunk("B", "b", 0.8, "/b.md"),
        chunk("C", "c", 0.7, "/c.md"),
    ]


def fixed(payload: object) -> EmbedTestServer:
    """A rerank service (to start with ``with``) that answers ``payload`` to every request."""
    server = EmbedTestServer()
    server.fail("body", body=payload)
    return server


def test_rerank_document_is_title_newline_text() -> None:
    assert rerank_document("Sourdough\x1fStarter", "Feed it.") == "Sourdough\x1fStarter\nFeed it."


# ------------------------------------------------------- http.rs's tests, over real HTTP


def test_cohere_jina_wire_sends_bearer_and_reorders_by_score() -> None:
    payload = {
        "results": [
            {"index": 0, "relevance_score": 0.1},
            {"index": 2, "relevance_score": 0.9},
            {"index": 1, "relevance_score": 0.5},
        ]
    }
    with (
        fixed(payload) as server,
        HttpReranker(server.url, "rerank-v3.5", api_key="co-key") as reranker,
    ):
        out = apply_reranker(reranker, "q", abc_pool())
        (request,) = server.requests
    assert reranker._endpoint._http.is_closed  # the with block closed its connections
    # one score per document, sorted best first
    assert [(c.title, c.similarity_score) for c in out.pool] == [("C", 0.9), ("B", 0.5), ("A", 0.1)]
    assert out.reranked
    assert not out.sanitised
    assert request.authorization == "Bearer co-key"
    body = request.json()
    assert body["model"] == "rerank-v3.5"
    assert body["query"] == "q"
    assert body["documents"][0] == "A\na", "same title+body shape the embedder indexes"
    assert "top_n" not in body, "no server-side cut"
    assert "top_k" not in body
    assert request.path == "/rerank"


def test_voyage_wire_parses_data_key_without_model_or_auth() -> None:
    payload = {"data": [{"index": 1, "relevance_score": 0.8}, {"index": 0, "relevance_score": 0.2}]}
    with fixed(payload) as server:
        out = apply_reranker(HttpReranker(server.url), "q", abc_pool()[:2])
        (request,) = server.requests
    assert [c.title for c in out.pool] == ["B", "A"]
    assert request.authorization is None, "no key -> no bearer"
    assert "model" not in request.json(), "model omitted when unset"


def test_unreachable_endpoint_fails_the_probe() -> None:
    with pytest.raises(ServerUnavailable, match="cannot connect"):
        HttpReranker("http://127.0.0.1:1").probe()


def test_the_probe_reranks_one_document_as_kimun() -> None:
    with EmbedTestServer() as server:
        HttpReranker(server.v1_url, "m").probe()
        (request,) = server.requests
    assert request.json() == {"model": "m", "query": "probe", "documents": ["connectivity probe"]}


@pytest.mark.parametrize(
    ("results", "reason"),
    [
        ([{"index": 7, "relevance_score": 0.9}], "rerank returned index 7 for a 1-document"),
        (
            [{"index": 0, "relevance_score": 0.9}, {"index": 0, "relevance_score": 0.8}],
            "rerank returned index 0 more than once",
        ),
        ([{"index": 0, "relevance_score": 0.9}], "rerank returned 1 scores for a 2-document"),
    ],
    ids=[
        "out_of_range_index_is_an_error",
        "duplicate_index_is_an_error",
        "short_response_is_an_error",
    ],
)
def test_malformed_pairs_keep_the_vector_order_with_a_warning(
    results: list[dict[str, Any]], reason: str
) -> None:
    documents = 1 if "index 7" in reason else 2
    pool = abc_pool()[:documents]
    with fixed({"results": results}) as server, pytest.warns(UserWarning, match=reason):
        out = apply_reranker(HttpReranker(server.url), "q", pool)
    assert not out.reranked
    assert out.fallback_reason is not None
    assert reason in out.fallback_reason
    assert list(out.pool) == pool


# -------------------------------------------------------------- HTTP answer shapes


@pytest.mark.parametrize("shape", ["results", "data"])
@pytest.mark.parametrize("score_key", ["relevance_score", "score"])
def test_every_answer_shape_is_read(shape: Any, score_key: Any) -> None:
    with EmbedTestServer(rerank_shape=shape, score_key=score_key) as server:
        reranker = HttpReranker(server.v1_url, "m")
        pairs = reranker.score("feed the starter", ["tomato seeds", "the starter, fed", "starter"])
        out = apply_reranker(
            reranker,
            "feed the starter",
            [chunk("", "tomato seeds"), chunk("", "the starter, fed"), chunk("", "starter")],
        )
    assert sorted(pairs) == [(0, 0.0), (1, 2 / 3), (2, 1 / 3)]
    assert [c.content for c in out.pool] == ["the starter, fed", "starter", "tomato seeds"]
    assert [c.similarity_score for c in out.pool] == [2 / 3, 1 / 3, 0.0]


@pytest.mark.parametrize(
    ("payload", "match"),
    [
        ([], "expected"),
        ({"results": [], "data": []}, "both"),
        ({"hits": []}, "neither"),
        ({"results": {"index": 0}}, "not a list"),
        ({"results": [7]}, "not an object"),
        ({"results": [{"index": -1, "score": 0.5}]}, "index"),
        ({"results": [{"index": True, "score": 0.5}]}, "index"),
        ({"results": [{"index": 0}]}, "no relevance_score"),
        ({"results": [{"index": 0, "score": 0.1, "relevance_score": 0.2}]}, "both"),
        ({"results": [{"index": 0, "score": "0.5"}]}, "not a number"),
    ],
)
def test_a_wrong_answer_shape_is_a_protocol_error(payload: object, match: str) -> None:
    with fixed(payload) as server, pytest.raises(ProtocolError, match=match):
        HttpReranker(server.url, "m").score("q", ["a"])


DIGITS_400 = b"1" + b"0" * 399


@pytest.mark.parametrize(
    ("body", "match"),
    [
        (b'{"results": [{"index": 0, "relevance_score": ' + DIGITS_400 + b"}]}", "400-digit"),
        (b'{"results": [{"index": 0, "relevance_score": 1e400}]}', "beyond float64"),
        (b'{"results": [{"index": 0, "relevance_score": NaN}]}', "NaN"),
        (b'{"results": [{"index": 0, "score": -Infinity}]}', "Infinity"),
        (b'{"results": [{"index": 0, "score": 0.5}], "meta": {"units": NaN}}', "NaN"),
        (b'{"results": [{"index": ' + DIGITS_400 + b', "score": 0.5}]}', "400-digit"),
    ],
    ids=["400-digit", "1e400", "NaN", "minus-Infinity", "NaN-beside", "400-digit-index"],
)
def test_a_number_no_json_parser_of_kimuns_reads_is_a_protocol_error(
    body: bytes, match: str
) -> None:
    """kimun's serde_json refuses these answers (its reranker then fails and the vector
    order stays); askkit's score() raises a ProtocolError, never Python's OverflowError."""
    with fixed(body) as server:
        reranker = HttpReranker(server.url, "m")
        with pytest.raises(ProtocolError, match=match):
            reranker.score("q", ["a"])
        with pytest.warns(UserWarning, match=r"failed \(ProtocolError"):
            out = apply_reranker(reranker, "q", abc_pool()[:1])
    assert not out.reranked


@pytest.mark.parametrize("fault", ["huge_number", "deep_json", "bad_utf8", "lone_surrogate"])
def test_a_hostile_answer_is_a_protocol_error(fault: Any) -> None:
    with EmbedTestServer() as server:
        server.fail(fault)
        with pytest.raises(ProtocolError):
            HttpReranker(server.url, "m").score("q", ["a", "b"])


def test_a_401_names_the_environment_variable_the_key_comes_from() -> None:
    env = "ASKKIT_RERANK_API_KEY"
    with EmbedTestServer(token=KEY) as server:
        with pytest.raises(AuthError) as missing:
            HttpReranker(server.url, "m", key_env=env).score("q", ["a"])
        with pytest.raises(AuthError) as plain:
            HttpReranker(server.url, "m").score("q", ["a"])
    assert f"set {env}" in str(missing.value)
    assert "api_key=" not in str(missing.value)
    assert "pass api_key=" in str(plain.value)


def test_an_uncached_cross_encoder_offline_fails_with_a_hint_and_no_fastembed_log(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(StoreError) as caught:
        FastEmbedReranker("BGERerankerBase", cache_dir=tmp_path, local_files_only=True)
    assert f"not in the cache {tmp_path}" in str(caught.value)
    assert "local_files_only" in str(caught.value)
    assert capfd.readouterr().err == ""


def test_an_empty_pool_calls_no_reranker() -> None:
    with EmbedTestServer() as server:
        out = apply_reranker(HttpReranker(server.url), "q", [])
        assert server.requests == []
    assert out.pool == ()
    assert out.reranked


# ------------------------------------------------------------------------- fallback


@pytest.mark.parametrize(
    ("fault", "error"),
    [
        ("status", ServerStatusError),
        ("unauthorized", AuthError),
        ("invalid_json", ProtocolError),
        ("drop", ServerUnavailable),
    ],
)
def test_a_failing_reranker_keeps_the_vector_order_with_a_warning(
    fault: Any, error: type[Exception]
) -> None:
    pool = abc_pool()
    with EmbedTestServer() as server:
        server.fail(fault)
        with pytest.warns(UserWarning, match=f"failed \\({error.__name__}") as seen:
            out = apply_reranker(HttpReranker(server.url, "m", api_key=KEY), "q", pool)
    assert list(out.pool) == pool
    assert not out.reranked
    assert out.fallback_reason is not None
    assert "kimun keeps the vector order" in out.fallback_reason
    assert KEY not in out.fallback_reason
    assert all(KEY not in str(w.message) for w in seen)


def test_a_reranker_answering_no_pairs_keeps_the_vector_order() -> None:
    class Broken:
        name = "broken"

        def score(self, query: str, documents: Sequence[str]) -> Any:
            return None

    with pytest.warns(UserWarning, match="returned a NoneType"):
        out = apply_reranker(Broken(), "q", abc_pool())
    assert not out.reranked


def test_raw_logits_from_an_http_reranker_are_sanitised_with_a_warning() -> None:
    logits = [2.0, -1.0, 0.5]
    with (
        EmbedTestServer(rerank=lambda q, docs: logits) as server,
        pytest.warns(UserWarning, match="outside 0..1"),
    ):
        out = apply_reranker(HttpReranker(server.url), "q", abc_pool())
    assert out.sanitised
    assert out.reranked
    assert [c.title for c in out.pool] == ["A", "C", "B"]
    assert [c.similarity_score for c in out.pool] == [sigmoid(2.0), sigmoid(0.5), sigmoid(-1.0)]


def test_a_key_is_not_shown_by_the_http_reranker(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with EmbedTestServer(token=KEY) as server:
        server.fail("unauthorized", message=f"refused {KEY}")
        reranker = HttpReranker(server.url, "m", api_key=KEY)
        with pytest.raises(AuthError) as caught:
            reranker.score("q", ["a"])
        assert server.requests[0].authorization == f"Bearer {KEY}"
        url = server.url
    text = " ".join([str(caught.value), repr(caught.value.args), repr(vars(caught.value))])
    assert KEY not in text
    assert KEY not in repr(reranker)
    assert repr(reranker) == f"HttpReranker({url!r}, 'm', api_key=<hidden>)"
    assert KEY not in caplog.text


# ------------------------------------------------------------ the tiny cross-encoder


def test_fastembed_scores_equal_the_onnx_reference(
    fastembed_tiny_reranker: FastEmbedReranker, tiny_cross_encoder_dir: Path
) -> None:
    documents = [
        "Sourdough\nFeed the starter every 12 hours",
        "Garden\nTomato seedlings indoors",
        "",
        "Rye bread needs more water " * 30,
        "feed the starter",
    ]
    pairs = fastembed_tiny_reranker.score("when to feed the starter", documents)
    reference = reference_rerank_scores(
        tiny_cross_encoder_dir, "when to feed the starter", documents
    )
    assert [i for i, _ in pairs] == [0, 1, 2, 3, 4]
    np.testing.assert_allclose([s for _, s in pairs], reference, atol=1e-6, rtol=0)
    assert pairs[4][1] > 1.0, "raw logits, not probabilities"
    assert fastembed_tiny_reranker.logits is True
    assert isinstance(fastembed_tiny_reranker, Reranker)
    assert fastembed_tiny_reranker.score("q", []) == []


def test_the_cross_encoder_logits_go_through_the_sigmoid_one_by_one(
    fastembed_tiny_reranker: FastEmbedReranker, tiny_cross_encoder_dir: Path
) -> None:
    """kimun's adapter sigmoids every logit, so the pipeline's batch sanitiser has nothing to do."""
    pool = [
        chunk("Garden", "Tomato seedlings indoors", 0.9, "/garden.md"),
        chunk("Sourdough", "Feed the starter every 12 hours", 0.8, "/bread.md"),
    ]
    out = apply_reranker(fastembed_tiny_reranker, "feed the starter", pool)
    logits = reference_rerank_scores(
        tiny_cross_encoder_dir,
        "feed the starter",
        [rerank_document(c.title, c.content) for c in pool],
    )
    assert out.reranked
    assert not out.sanitised
    assert [c.path for c in out.pool] == ["/bread.md", "/garden.md"]
    expected = sorted((sigmoid(float(x)) for x in logits), reverse=True)
    np.testing.assert_allclose([c.similarity_score for c in out.pool], expected, atol=1e-6)
    assert all(0.0 <= c.similarity_score <= 1.0 for c in out.pool)


def test_reranker_basic(fastembed_tiny_reranker: FastEmbedReranker) -> None:
    """kimun's test_reranker_basic, on the tiny cross-encoder."""
    pool = [
        chunk("Python", "Python is a programming language", 0.8, "doc1.md"),
        chunk("Animals", "Snakes are reptiles", 0.7, "doc2.md"),
    ]
    out = apply_reranker(fastembed_tiny_reranker, "programming languages", pool)
    assert len(out.pool) == 2
    # the programming chunk (input index 0) ranks first, with a calibrated score in 0..1
    assert out.pool[0].path == "doc1.md"
    assert 0.0 <= out.pool[0].similarity_score <= 1.0


def test_a_failing_cross_encoder_keeps_the_vector_order(
    fastembed_tiny_reranker: FastEmbedReranker,
) -> None:
    pool = abc_pool()
    with pytest.warns(UserWarning, match="UsageError"):
        out = apply_reranker(fastembed_tiny_reranker, 7, pool)  # type: ignore[arg-type]
    assert list(out.pool) == pool


def test_a_logit_of_nan_is_sanitised_as_kimun_does() -> None:
    class Logits:
        name = "nan"
        logits = True

        def score(self, query: str, documents: Sequence[str]) -> list[tuple[int, float]]:
            return [(0, math.nan), (1, 3.0)]

    with pytest.warns(UserWarning, match="outside 0..1"):
        out = apply_reranker(Logits(), "q", abc_pool()[:2])
    # sigmoid(NaN) is NaN, so the batch is sanitised again: NaN -> 0, the rest sigmoided twice
    assert [c.similarity_score for c in out.pool] == [sigmoid(sigmoid(3.0)), 0.0]


# ------------------------------------------------------------------------ specs


def test_parse_reranker_reads_http_specs() -> None:
    cohere = parse_reranker("http:https://api.cohere.com/v2:rerank-v3.5", api_key=KEY)
    assert isinstance(cohere, HttpReranker)
    assert (cohere.url, cohere.model, cohere.has_key) == (
        "https://api.cohere.com/v2",
        "rerank-v3.5",
        True,
    )
    single = parse_reranker("http:http://127.0.0.1:7997")
    assert isinstance(single, HttpReranker)
    assert (single.url, single.model, single.name) == ("http://127.0.0.1:7997", None, "http")


def test_parse_reranker_reads_fastembed_specs(
    fastembed_tiny_reranker: FastEmbedReranker, tiny_cross_encoder_dir: Path, tmp_path: Path
) -> None:
    name = fastembed_tiny_reranker.python_model
    install_in_hub_cache(tiny_cross_encoder_dir, tmp_path, name)
    reranker = parse_reranker(f"fastembed:{name}", cache_dir=tmp_path, local_files_only=True)
    assert isinstance(reranker, FastEmbedReranker)
    assert reranker.name == f"fastembed:{name}"
    assert fastembed_tiny_reranker.name == f"stand-in:{name}"  # labelled wherever it is shown
    assert reranker.score("feed the starter", ["the starter"]) == fastembed_tiny_reranker.score(
        "feed the starter", ["the starter"]
    )


@pytest.mark.parametrize(
    ("spec", "options", "match"),
    [
        ("cohere:rerank-v3.5", {}, "not a reranker spec"),
        ("http:api.cohere.com", {}, "not a reranker spec"),
        ("fastembed", {"api_key": KEY}, "takes no API key"),
        ("fastembed:not-a-cross-encoder", {}, "no cross-encoder named"),
    ],
)
def test_a_bad_reranker_spec_is_a_usage_error(
    spec: str, options: dict[str, Any], match: str
) -> None:
    with pytest.raises(UsageError, match=match):
        parse_reranker(spec, **options)


def test_kimuns_cross_encoder_is_the_default() -> None:
    assert DEFAULT_RERANKER == "BAAI/bge-reranker-base"


def test_pool_of_chunks_rerank_by_title_and_content() -> None:
    seen: list[list[str]] = []

    class Spy:
        name = "spy"

        def score(self, query: str, documents: Sequence[str]) -> list[tuple[int, float]]:
            seen.append(list(documents))
            return [(i, 0.5) for i in range(len(documents))]

    pool = pool_of([0.9, 0.8])
    apply_reranker(Spy(), "q", pool)
    assert seen == [[f"{c.title}\n{c.content}" for c in pool]]
