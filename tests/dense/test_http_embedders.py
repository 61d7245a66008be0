"""askkit.dense.http_embedders: kimun's Ollama and OpenAI-compatible embedders over real HTTP.

Pinned to kimun's server at commit f28bdd54 (``server/src/dbembeddings/embedder/
http.rs``); the tests named after kimun's own unit tests reproduce them. Every
endpoint is a real loopback server (:mod:`askkit.testing.embed_servers`).
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pytest

from askkit.dense.embedders import (
    BATCH_SIZE,
    OllamaEmbedder,
    OpenAIEmbedder,
)
from askkit.errors import (
    AuthError,
    DimensionError,
    ProtocolError,
    ServerStatusError,
    ServerUnavailable,
    UsageError,
)
from askkit.testing.embed_servers import EmbedTestServer, HashingEmbedding
from tests.dense.conftest import KEY, all_text, chunks, http_embedder

# ------------------------------------------------------ http.rs's tests, over real HTTP


def test_ollama_wire_probes_dimension_and_prefixes_docs() -> None:
    with EmbedTestServer(embed=lambda texts: [[0.1, 0.2, 0.3]] * len(texts)) as server:
        embedder = OllamaEmbedder(
            server.url,
            "nomic",
            doc_prefix="search_document: ",
            query_prefix="search_query: ",
            progress=False,
        )
        assert embedder.dimension is None
        assert embedder.probe() == 3, "dimension comes from the probe"
        assert embedder.dimension == 3
        out = embedder.embed_documents([("T", "body")])
        np.testing.assert_array_equal(out, np.array([[0.1, 0.2, 0.3]], dtype=np.float32))
        probe, request = server.requests_to("ollama")
    assert probe.json() == {"model": "nomic", "input": ["dimension probe"]}
    assert request.authorization is None, "ollama sends no auth"
    assert request.json()["model"] == "nomic"
    assert request.json()["input"][0] == "search_document: T\nbody"
    assert request.path == "/api/embed"


def test_openai_wire_sends_bearer_and_sorts_by_index() -> None:
    with EmbedTestServer() as server:
        server.fail(
            "body",
            body={
                "data": [
                    {"index": 1, "embedding": [9.0, 9.0]},
                    {"index": 0, "embedding": [1.0, 1.0]},
                ]
            },
        )
        embedder = OpenAIEmbedder(
            server.url, "text-embedding-3-small", api_key="sk-embed", progress=False
        )
        out = embedder.embed_documents([("A", "a"), ("B", "b")])
        (request,) = server.requests
    np.testing.assert_array_equal(out[0], [1.0, 1.0])  # sorted back to input order
    np.testing.assert_array_equal(out[1], [9.0, 9.0])
    assert request.authorization == "Bearer sk-embed"
    assert request.path == "/embeddings"


def test_query_embedding_uses_the_query_prefix() -> None:
    with EmbedTestServer(embed=lambda texts: [[0.5]] * len(texts)) as server:
        embedder = OllamaEmbedder(
            server.url, "m", doc_prefix="doc: ", query_prefix="query: ", progress=False
        )
        vector = embedder.embed_query("find me")
        (request,) = server.requests
    np.testing.assert_array_equal(vector, np.array([0.5], dtype=np.float32))
    assert request.json()["input"][0] == "query: find me"


# ------------------------------------------------------------- HTTP embedders, more


@pytest.mark.parametrize("kind", ["ollama", "openai"])
def test_250_chunks_are_three_calls_of_100_100_and_50_in_order(
    kind: str, embed_server: EmbedTestServer
) -> None:
    embedder = http_embedder(kind, embed_server, doc_prefix="d: ")
    pairs = chunks(250)
    got = embedder.embed_documents(pairs)
    framed = [f"d: {title}\n{text}" for title, text in pairs]
    assert (
        [len(batch) for batch in embed_server.inputs]
        == [100, 100, 50]
        == [min(BATCH_SIZE, 250 - i) for i in range(0, 250, BATCH_SIZE)]
    )
    assert [t for batch in embed_server.inputs for t in batch] == framed
    np.testing.assert_array_equal(got, HashingEmbedding(8)(framed).astype(np.float32))
    assert got.dtype == np.float32
    assert got.flags.c_contiguous


def test_openai_answers_in_reverse_order_are_put_back_in_input_order() -> None:
    with EmbedTestServer(dim=8, openai_order="reversed") as server:
        embedder = OpenAIEmbedder(server.v1_url, "m", progress=False)
        got = embedder.embed_documents(chunks(5))
    expected = HashingEmbedding(8)([f"{t}\n{x}" for t, x in chunks(5)])
    np.testing.assert_array_equal(got, expected.astype(np.float32))


def test_an_http_embedder_learns_its_width_and_fingerprints_as_kimun(
    embed_server: EmbedTestServer,
) -> None:
    ollama = OllamaEmbedder(embed_server.url, "Nomic-Embed-Text", progress=False)
    assert ollama.fingerprint == "ollama:nomic-embed-text:8"
    assert embed_server.inputs == [["dimension probe"]]
    openai = OpenAIEmbedder(embed_server.v1_url, "Text-Embedding-3-Small", progress=False)
    openai.embed_query("x")
    assert openai.dimension == 8
    assert openai.fingerprint == "openai:text-embedding-3-small:8"
    assert len(embed_server.inputs) == 2, "a known width is not probed again"


def test_no_chunks_send_no_request(embed_server: EmbedTestServer) -> None:
    embedder = http_embedder("ollama", embed_server)
    assert embedder.embed_documents([]).shape == (0, 0)
    assert embed_server.requests == []


def test_a_progress_bar_is_shown_over_several_batches(
    embed_server: EmbedTestServer, capsys: pytest.CaptureFixture[str]
) -> None:
    http_embedder("ollama", embed_server, progress=True).embed_documents(chunks(150))
    assert "embedding (ollama:nomic-embed-text)" in capsys.readouterr().err
    http_embedder("ollama", embed_server, progress=True).embed_documents(
        chunks(150), progress=False
    )
    http_embedder("ollama", embed_server, progress=True).embed_documents(chunks(100))
    assert capsys.readouterr().err == ""


# -------------------------------------------------------------------- faults


@pytest.mark.parametrize("kind", ["ollama", "openai"])
def test_401_is_an_auth_error(kind: str, embed_server: EmbedTestServer) -> None:
    embed_server.fail("unauthorized", message="invalid api key")
    options = {"api_key": KEY} if kind == "openai" else {}
    with pytest.raises(AuthError, match="HTTP 401: invalid api key") as caught:
        http_embedder(kind, embed_server, **options).embed_documents(chunks(2))
    assert caught.value.status == 401
    assert caught.value.token_sent is (kind == "openai")


def test_a_missing_key_says_to_pass_one() -> None:
    with EmbedTestServer(token=KEY) as server:
        with pytest.raises(AuthError, match="pass api_key"):
            OpenAIEmbedder(server.url, "m", progress=False).embed_query("q")
        embedder = OpenAIEmbedder(server.url, "m", api_key=KEY, progress=False)
        assert embedder.embed_query("q").shape == (32,)


def test_a_401_names_the_environment_variable_the_key_comes_from() -> None:
    """The command line reads the key from $ASKKIT_EMBED_API_KEY: its hints name that."""
    env = "ASKKIT_EMBED_API_KEY"
    with EmbedTestServer(token=KEY) as server:
        with pytest.raises(AuthError) as missing:
            OpenAIEmbedder(server.url, "m", key_env=env, progress=False).embed_query("q")
        with pytest.raises(AuthError) as wrong:
            OpenAIEmbedder(
                server.url, "m", api_key="sk-wrong", key_env=env, progress=False
            ).embed_query("q")
        with pytest.raises(AuthError) as ollama:
            OllamaEmbedder(server.url, "m", progress=False).embed_query("q")
    assert f"set {env}" in str(missing.value)
    assert "api_key=" not in str(missing.value)
    assert f"the API key from {env}" in str(wrong.value)
    assert "api_key=" not in str(wrong.value)
    assert "sk-wrong" not in str(wrong.value)
    # OllamaEmbedder takes no key at all: its hint does not ask for one
    assert "api_key" not in str(ollama.value)
    assert "takes no API key" in str(ollama.value)


@pytest.mark.parametrize("kind", ["ollama", "openai"])
def test_500_is_a_server_status_error(kind: str, embed_server: EmbedTestServer) -> None:
    embed_server.fail("status", message="model not found")
    with pytest.raises(ServerStatusError, match="HTTP 500: model not found") as caught:
        http_embedder(kind, embed_server).embed_documents(chunks(2))
    assert caught.value.status == 500
    assert not isinstance(caught.value, AuthError)


def test_openai_style_error_messages_are_quoted(embed_server: EmbedTestServer) -> None:
    embed_server.fail("body", status=429, body={"error": {"message": "rate limited"}})
    with pytest.raises(ServerStatusError, match="HTTP 429: rate limited"):
        http_embedder("openai", embed_server).embed_query("q")


@pytest.mark.parametrize("kind", ["ollama", "openai"])
def test_bad_json_is_a_protocol_error(kind: str, embed_server: EmbedTestServer) -> None:
    embed_server.fail("invalid_json")
    with pytest.raises(ProtocolError, match="not JSON"):
        http_embedder(kind, embed_server).embed_documents(chunks(2))


@pytest.mark.parametrize(
    ("kind", "body", "match"),
    [
        ("ollama", {"embedding": [0.1]}, "embeddings"),
        ("ollama", {"embeddings": [["0.1"]]}, r"embeddings\[0\] is not"),
        ("ollama", {"embeddings": [[]]}, r"embeddings\[0\] is not"),
        ("ollama", {"embeddings": [[True]]}, r"embeddings\[0\] is not"),
        ("ollama", [[0.1]], "embeddings"),
        ("openai", {"data": [{"index": -1, "embedding": [0.1]}]}, "index"),
        ("openai", {"data": [{"index": 0.5, "embedding": [0.1]}]}, "index"),
        ("openai", {"data": [{"index": None, "embedding": [0.1]}]}, "index"),
        ("openai", {"data": [{"embedding": "0.1"}]}, "embedding"),
        ("openai", {"data": {"embedding": [0.1]}}, "data"),
        ("openai", {"data": [{"index": 0, "embedding": [1e39]}]}, "float32"),
    ],
)
def test_a_wrong_shape_is_a_protocol_error(
    kind: str, body: object, match: str, embed_server: EmbedTestServer
) -> None:
    embed_server.fail("body", body=body)
    with pytest.raises(ProtocolError, match=match):
        http_embedder(kind, embed_server).embed_query("q")


@pytest.mark.parametrize("kind", ["ollama", "openai"])
def test_a_wrong_vector_count_is_a_protocol_error(kind: str, embed_server: EmbedTestServer) -> None:
    embed_server.fail("wrong_count", skip=1)
    embedder = http_embedder(kind, embed_server)
    with pytest.raises(ProtocolError, match="returned 99 vectors for 100 chunks"):
        embedder.embed_documents(chunks(250))
    embed_server.clear_faults()
    embed_server.fail("wrong_count")
    with pytest.raises(ProtocolError, match="0 vectors for one query"):
        embedder.embed_query("q")


@pytest.mark.parametrize("kind", ["ollama", "openai"])
def test_a_dimension_change_between_batches_is_a_dimension_error(
    kind: str, embed_server: EmbedTestServer
) -> None:
    embed_server.fail("wrong_dimension", skip=1)
    with pytest.raises(DimensionError) as caught:
        http_embedder(kind, embed_server).embed_documents(chunks(250))
    assert (caught.value.expected, caught.value.actual) == (8, 7)
    assert len(embed_server.inputs) == 2, "the run stops at the second batch"


def test_vectors_of_two_widths_in_one_answer_are_a_dimension_error(
    embed_server: EmbedTestServer,
) -> None:
    embed_server.fail("body", body={"embeddings": [[0.1, 0.2], [0.3]]})
    with pytest.raises(DimensionError, match="different widths"):
        http_embedder("ollama", embed_server).embed_documents(chunks(2))


def test_a_query_after_a_width_change_is_a_dimension_error(
    embed_server: EmbedTestServer,
) -> None:
    embedder = http_embedder("openai", embed_server)
    embedder.embed_query("q")
    embed_server.fail("wrong_dimension")
    with pytest.raises(DimensionError, match="7-d vectors, but its vectors are 8-d"):
        embedder.embed_query("q")


@pytest.mark.parametrize("kind", ["ollama", "openai"])
def test_a_slow_answer_is_server_unavailable(kind: str, embed_server: EmbedTestServer) -> None:
    embed_server.fail("slow", delay=5)
    with pytest.raises(ServerUnavailable, match=r"within the 0\.3 s timeout"):
        http_embedder(kind, embed_server, timeout=0.3).embed_documents(chunks(2))


def test_a_dripped_answer_ends_at_the_whole_request_timeout(
    embed_server: EmbedTestServer,
) -> None:
    embed_server.fail("drip", delay=0.05)
    with pytest.raises(ServerUnavailable, match="no complete answer within"):
        http_embedder("ollama", embed_server, timeout=0.5).embed_documents(chunks(2))


@pytest.mark.parametrize("kind", ["ollama", "openai"])
def test_a_dropped_connection_is_server_unavailable(
    kind: str, embed_server: EmbedTestServer
) -> None:
    embed_server.fail("drop")
    with pytest.raises(ServerUnavailable, match="dropped"):
        http_embedder(kind, embed_server).embed_documents(chunks(2))


def test_a_refused_connection_is_server_unavailable() -> None:
    with pytest.raises(ServerUnavailable, match="cannot connect"):
        OllamaEmbedder("http://127.0.0.1:1", "m", progress=False).embed_query("q")


def test_a_gzip_bomb_is_cut_off_at_the_body_limit(embed_server: EmbedTestServer) -> None:
    embed_server.fail("gzip_bomb", size=80 * 2**20)
    with pytest.raises(ProtocolError, match="limit"):
        http_embedder("ollama", embed_server).embed_query("q")


# ---------------------------------------------- numbers no JSON parser of kimun's reads

DIGITS_400 = b"1" + b"0" * 399


@pytest.mark.parametrize(
    ("kind", "body", "match"),
    [
        ("ollama", b'{"embeddings": [[0.5, ' + DIGITS_400 + b"]]}", "beyond float32"),
        ("openai", b'{"data": [{"index": 0, "embedding": [' + DIGITS_400 + b"]}]}", "float32"),
        ("ollama", b'{"embeddings": [[1e400]]}', "beyond float32"),
        ("ollama", b'{"embeddings": [[0.5, NaN]]}', "NaN"),
        ("ollama", b'{"embeddings": [[Infinity]]}', "Infinity"),
        ("openai", b'{"data": [{"index": 0, "embedding": [-Infinity]}]}', "Infinity"),
        ("ollama", b'{"embeddings": [[0.5]], "total_duration": NaN}', "NaN"),
        ("ollama", b'{"embeddings": [[0.5]], "load_duration": ' + DIGITS_400 + b"}", "400-digit"),
        ("openai", b'{"data": [{"index": ' + DIGITS_400 + b', "embedding": [1]}]}', "400-digit"),
    ],
    ids=[
        "400-digit-in-a-vector",
        "400-digit-in-an-openai-vector",
        "1e400",
        "NaN-in-a-vector",
        "Infinity",
        "minus-Infinity",
        "NaN-beside-the-vectors",
        "400-digit-beside-the-vectors",
        "400-digit-index",
    ],
)
def test_a_number_no_json_parser_of_kimuns_reads_is_a_protocol_error(
    kind: str, body: bytes, match: str, embed_server: EmbedTestServer
) -> None:
    """kimun's serde_json refuses NaN, Infinity and numbers beyond float64; so does askkit,
    with a ProtocolError (a 400-digit integer used to escape as Python's OverflowError)."""
    embed_server.fail("body", body=body)
    with pytest.raises(ProtocolError, match=match):
        http_embedder(kind, embed_server).embed_query("q")


@pytest.mark.parametrize("kind", ["ollama", "openai"])
@pytest.mark.parametrize("fault", ["huge_number", "deep_json", "bad_utf8", "lone_surrogate"])
def test_a_hostile_answer_is_a_protocol_error(
    kind: str, fault: Any, embed_server: EmbedTestServer
) -> None:
    embed_server.fail(fault)
    with pytest.raises(ProtocolError):
        http_embedder(kind, embed_server).embed_documents(chunks(3))


@pytest.mark.parametrize(
    ("indices", "match"),
    [
        ([0, 0, 1], r"data\[1\]\.index 0 repeats data\[0\]\.index"),
        ([0, 1, 3], r"data\[2\]\.index is 3, but 3 texts were sent"),
        ([0, None, 2], r"data\[1\] has no index, but data\[0\] has one"),
    ],
    ids=["duplicate", "out-of-range", "some-missing"],
)
def test_openai_indices_that_do_not_pair_each_vector_with_one_text_are_refused(
    indices: list[int | None], match: str, embed_server: EmbedTestServer
) -> None:
    """kimun sorts by index and takes whatever comes out; a duplicate or out-of-range
    index would pair vectors with the wrong chunks without a word, so askkit refuses it."""
    data = [
        {"embedding": [float(i), 1.0]} | ({} if index is None else {"index": index})
        for i, index in enumerate(indices)
    ]
    embed_server.fail("body", body={"data": data})
    with pytest.raises(ProtocolError, match=match):
        http_embedder("openai", embed_server).embed_documents(chunks(3))


def test_openai_answers_without_any_index_keep_the_array_order(
    embed_server: EmbedTestServer,
) -> None:
    """As kimun: a missing index counts as 0, and the stable sort keeps the array order."""
    data = [{"embedding": [float(i), 1.0]} for i in range(3)]
    embed_server.fail("body", body={"data": data})
    got = http_embedder("openai", embed_server).embed_documents(chunks(3))
    np.testing.assert_array_equal(got[:, 0], [0.0, 1.0, 2.0])


def test_a_failing_run_erases_its_progress_bar(
    embed_server: EmbedTestServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """The bar is drawn while it runs; when a batch fails, it leaves no line behind, so the
    error is the only line a command line shows."""
    embed_server.fail("status", skip=1)  # the second batch fails
    with pytest.raises(ServerStatusError):
        http_embedder("ollama", embed_server, progress=True).embed_documents(chunks(250))
    err = capsys.readouterr().err
    assert "embedding (ollama:nomic-embed-text)" in err  # the bar was drawn
    assert "\n" not in err  # and taken back
    assert err.endswith("\r")


# ----------------------------------------------------------------- no key shown


@pytest.mark.parametrize(
    ("fault", "options", "error"),
    [
        ("unauthorized", {"message": f"bad key {KEY}"}, AuthError),
        ("status", {"message": f"upstream said {KEY}"}, ServerStatusError),
        ("body", {"body": f"not json {KEY}".encode()}, ProtocolError),
        ("body", {"body": {"data": [{"embedding": KEY}]}}, ProtocolError),
        ("slow", {"delay": 5}, ServerUnavailable),
        ("drop", {}, ServerUnavailable),
        ("wrong_count", {}, ProtocolError),
    ],
)
def test_the_api_key_is_in_no_message_repr_or_args(
    fault: Any,
    options: dict[str, Any],
    error: type[Exception],
    embed_server: EmbedTestServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    embed_server.fail(fault, **options)
    embedder = OpenAIEmbedder(
        f"http://user:{KEY}x@{embed_server.url[7:]}/v1",
        "m",
        api_key=KEY,
        timeout=0.3,
        progress=False,
    )
    with pytest.raises(error) as caught:
        embedder.embed_documents(chunks(2))
    assert KEY not in all_text(caught.value)
    assert KEY not in repr(embedder)
    assert KEY not in embedder.url
    assert KEY not in caplog.text
    assert embed_server.requests[-1].authorization == f"Bearer {KEY}", "the key is still sent"


def test_a_bad_url_or_key_is_a_usage_error_that_shows_no_secret() -> None:
    with pytest.raises(UsageError, match="http:// or https://") as caught:
        OpenAIEmbedder(f"ftp://user:{KEY}@host", "m")
    assert KEY not in all_text(caught.value)
    with pytest.raises(UsageError, match="printable ASCII"):
        OpenAIEmbedder("http://127.0.0.1:1", "m", api_key="key\nwith newline")
    with pytest.raises(UsageError, match="model"):
        OllamaEmbedder("http://127.0.0.1:1", "")
