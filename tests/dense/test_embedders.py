"""askkit.dense.embedders: kimun's embedders, framing, batching, fingerprints and errors.

Pinned to kimun's server at commit f28bdd54 (``server/src/dbembeddings/embedder/
fastembedder.rs`` and ``http.rs``, ``server/src/config.rs``, ``EMBED_BATCH`` in
``server/src/lib.rs``) and to the Rust fastembed its Cargo.lock pins, 5.17.2
(fastembed-rs commit d0e8e9e9, ``src/models/text_embedding.rs``). The tests named
after kimun's own unit tests reproduce them.
"""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from askkit.dense import _fastembed
from askkit.dense.embedders import (
    BATCH_SIZE,
    DEFAULT_FASTEMBED_MODEL,
    Embedder,
    FastEmbedEmbedder,
    OllamaEmbedder,
    OpenAIEmbedder,
    document_text,
    kimun_fingerprint,
    parse_embedder,
    query_text,
    resolve_fastembed_model,
)
from askkit.errors import (
    AuthError,
    DimensionError,
    ProtocolError,
    ServerStatusError,
    ServerUnavailable,
    StoreError,
    UsageError,
)
from askkit.testing.embed_servers import EmbedTestServer, HashingEmbedding
from askkit.testing.models import (
    build_embedding_model,
    install_in_hub_cache,
    numpy_embedding,
    reference_embedding,
)
from tests.probe import loaded_after

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-embed-0123456789"


def chunks(n: int) -> list[tuple[str, str]]:
    return [(f"Note {i}\x1fSection", f"chunk number {i} about sourdough") for i in range(n)]


def http_embedder(kind: str, server: EmbedTestServer, **options: Any) -> OllamaEmbedder:
    options.setdefault("progress", False)
    if kind == "ollama":
        return OllamaEmbedder(server.url, "nomic-embed-text", **options)
    return OpenAIEmbedder(server.v1_url, "text-embedding-3-small", **options)


# --------------------------------------------------------------------- kimun's framing


def test_document_and_query_framing_are_kimuns() -> None:
    assert document_text("T", "body") == "T\nbody"
    assert document_text("T", "body", "search_document: ") == "search_document: T\nbody"
    assert query_text("find me", "query: ") == "query: find me"
    assert query_text("find me") == "find me"


# --------------------------------------------- fastembedder.rs's tests, on askkit's table


def test_resolve_default_is_bge_large_1024() -> None:
    model = resolve_fastembed_model(None)
    assert model.variant == "BGELargeENV15" == DEFAULT_FASTEMBED_MODEL
    assert model.dim == 1024
    assert model.python_model == "BAAI/bge-large-en-v1.5"


def test_resolve_by_variant_name_case_insensitive() -> None:
    model = resolve_fastembed_model("bgesmallenv15")
    assert model.variant == "BGESmallENV15"
    assert model.dim == 384


def test_resolve_by_model_code() -> None:
    assert resolve_fastembed_model("Xenova/bge-small-en-v1.5").dim == 384
    assert resolve_fastembed_model("XENOVA/BGE-SMALL-EN-V1.5").variant == "BGESmallENV15"


def test_resolve_unknown_model_errors() -> None:
    with pytest.raises(UsageError, match="variant name like 'BGESmallENV15'") as caught:
        resolve_fastembed_model("not-a-real-model")
    assert "Xenova/bge-small-en-v1.5" in str(caught.value)


def test_canonical_model_code_accepts_variant_names_and_codes() -> None:
    assert _fastembed.canonical_model_code("BGESmallENV15") == "Xenova/bge-small-en-v1.5"
    assert _fastembed.canonical_model_code("xenova/BGE-small-en-v1.5") == (
        "Xenova/bge-small-en-v1.5"
    )
    assert _fastembed.canonical_model_code("not-a-real-model") is None


def test_supported_models_is_nonempty_and_carries_dims() -> None:
    models = _fastembed.supported_models()
    assert models
    assert any(code == "Xenova/bge-small-en-v1.5" and dim == 384 for code, dim, _ in models)
    assert all(description for _, _, description in models), "every model has a description"


def test_supported_models_is_sorted_alphabetically() -> None:
    codes = [code.lower() for code, _, _ in _fastembed.supported_models()]
    assert codes == sorted(codes)


def test_embedder_fingerprint_is_provider_model_dim() -> None:
    """config.rs's test, on the one function every embedder fingerprints with."""
    assert kimun_fingerprint("fastembed", "BGESmallENV15", 384) == "fastembed:bgesmallenv15:384"
    assert kimun_fingerprint("fastembed", None, 1024) == "fastembed:default:1024"
    assert kimun_fingerprint("ollama", "Nomic-Embed-Text", 768) == "ollama:nomic-embed-text:768"


# ------------------------------------------------------------------ the model table


def test_the_table_has_every_rust_variant_of_fastembed_5_17_2() -> None:
    variants = [m.variant for m in _fastembed.EMBEDDING_MODELS]
    assert len(variants) == len(set(variants)) == 46
    assert variants[:3] == ["AllMiniLML6V2", "AllMiniLML6V2Q", "AllMiniLML12V2"]
    assert variants[-1] == "SnowflakeArcticEmbedLQ"
    assert _fastembed.FASTEMBED_RS_VERSION == "5.17.2"
    rerankers = [m.variant for m in _fastembed.RERANKER_MODELS]
    assert rerankers == [
        "BGERerankerBase",
        "BGERerankerV2M3",
        "JINARerankerV1TurboEn",
        "JINARerankerV2BaseMultiligual",
    ]


def test_every_python_twin_is_a_python_fastembed_model_of_the_same_width() -> None:
    from fastembed import TextEmbedding

    python = {m["model"]: m for m in TextEmbedding.list_supported_models()}
    for model in _fastembed.EMBEDDING_MODELS:
        if model.python_model is None:
            continue
        twin = python[model.python_model]
        assert twin["dim"] == model.dim, model.variant
        same = (
            twin["sources"]["hf"].lower() == model.code.lower()
            and twin["model_file"] == model.model_file
        )
        assert same == model.same_file, model.variant


def test_every_reranker_twin_is_a_python_cross_encoder() -> None:
    from fastembed.rerank.cross_encoder import TextCrossEncoder

    python = {m["model"]: m for m in TextCrossEncoder.list_supported_models()}
    for model in _fastembed.RERANKER_MODELS:
        twin = python[model.python_model]
        same = (
            twin["sources"]["hf"].lower() == model.code.lower()
            and twin["model_file"] == model.model_file
        )
        assert same == model.same_file, model.variant


def test_a_shared_model_code_resolves_to_the_unquantised_variant() -> None:
    assert resolve_fastembed_model("Xenova/all-MiniLM-L12-v2").variant == "AllMiniLML12V2"
    assert resolve_fastembed_model("nomic-ai/nomic-embed-text-v1.5").variant == (
        "NomicEmbedTextV15"
    )


def test_a_rust_only_model_is_refused_when_python_fastembed_is_asked_for() -> None:
    with pytest.raises(UsageError, match="Rust fastembed only"):
        FastEmbedEmbedder("GTEBaseENV15", source="python")
    with pytest.raises(UsageError, match="source must be"):
        FastEmbedEmbedder("GTEBaseENV15", source="rust")  # type: ignore[arg-type]


def test_source_kimun_loads_the_repository_and_file_kimun_loads(tmp_path: Path) -> None:
    """AllMiniLML12V2 exists in Rust fastembed only: askkit registers Rust's own file.

    A tiny model of its width stands in for it in a Hugging Face cache, at
    Rust's repository (``Xenova/all-MiniLM-L12-v2``) and path (``onnx/model.onnx``).
    """
    model = build_embedding_model(tmp_path / "model", vocabulary_texts=["rye bread"], dim=384)
    install_in_hub_cache(
        model, tmp_path / "cache", "Xenova/all-MiniLM-L12-v2", model_file="onnx/model.onnx"
    )
    embedder = FastEmbedEmbedder(
        "AllMiniLML12V2", cache_dir=tmp_path / "cache", local_files_only=True, progress=False
    )
    assert embedder.python_model == "askkit-kimun/AllMiniLML12V2"
    assert embedder.name == "fastembed:Xenova/all-MiniLM-L12-v2"
    assert embedder.fingerprint == "fastembed:allminilml12v2:384"
    got = embedder.embed_documents([("Rye", "bread")])
    reference = reference_embedding(model, ["passage: Rye\nbread"])
    np.testing.assert_allclose(got, reference, atol=1e-6, rtol=0)
    parsed = parse_embedder(
        "fastembed:xenova/all-minilm-l12-v2", cache_dir=tmp_path / "cache", local_files_only=True
    )
    assert parsed.fingerprint == "fastembed:xenova/all-minilm-l12-v2:384"
    np.testing.assert_array_equal(parsed.embed_documents([("Rye", "bread")]), got)


def test_the_kimun_file_is_registered_with_rusts_repository_file_and_width() -> None:
    from fastembed import TextEmbedding

    name = _fastembed.register_kimun_file(resolve_fastembed_model("BGELargeENV15"))
    assert name == _fastembed.register_kimun_file(resolve_fastembed_model("bgelargeenv15"))
    (entry,) = [m for m in TextEmbedding.list_supported_models() if m["model"] == name]
    assert entry["sources"]["hf"] == "Xenova/bge-large-en-v1.5"
    assert (entry["model_file"], entry["dim"]) == ("onnx/model.onnx", 1024)
    bge_m3 = _fastembed.register_kimun_file(resolve_fastembed_model("BGEM3"))
    (entry,) = [m for m in TextEmbedding.list_supported_models() if m["model"] == bge_m3]
    assert entry["additional_files"] == ["onnx/model.onnx_data", "onnx/Constant_7_attr__value"]


def test_an_uncached_model_with_local_files_only_is_a_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="local_files_only") as caught:
        FastEmbedEmbedder("BGESmallENV15", cache_dir=tmp_path, local_files_only=True)
    assert caught.value.path == str(tmp_path)


@pytest.mark.parametrize("how", ["local_files_only", "HF_HUB_OFFLINE"])
def test_an_uncached_model_offline_fails_at_once_with_a_hint_and_no_fastembed_log(
    how: str, tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not cached and no download allowed: askkit's own error, before fastembed is asked.

    fastembed would log its search of the cache as two ERROR lines (and, without
    ``local_files_only``, retry the hub for about 40 s).
    """
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    if how == "HF_HUB_OFFLINE":
        monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(StoreError) as caught:
        FastEmbedEmbedder(
            "BGESmallENV15", cache_dir=tmp_path, local_files_only=how == "local_files_only"
        )
    message = str(caught.value)
    assert f"not in the cache {tmp_path}" in message
    assert how in message
    assert "Qdrant/bge-small-en-v1.5-onnx-Q" in message  # what would be downloaded
    assert "\n" not in message
    assert capfd.readouterr().err == ""  # no log line from fastembed
    assert caught.value.path == str(tmp_path)


# ------------------------------------------------------------ the tiny fastembed model


def test_fastembed_vectors_equal_the_onnx_reference(
    fastembed_tiny: FastEmbedEmbedder, tiny_embedding_dir: Path
) -> None:
    pairs = [
        ("Sourdough\x1fStarter", "Feed the starter every 12 hours."),
        ("Garden\x1fTomato", "Start seeds indoors six weeks before the last frost."),
        ("", ""),
        ("Rye", "Rye bread needs more water. " * 40),
    ]
    got = fastembed_tiny.embed_documents(pairs)
    framed = [f"passage: {title}\n{text}" for title, text in pairs]
    reference = reference_embedding(tiny_embedding_dir, framed)
    assert got.dtype == np.float32
    assert got.shape == (4, 64)
    np.testing.assert_allclose(got, reference, atol=1e-6, rtol=0)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-6)
    query = fastembed_tiny.embed_query("when to feed the starter")
    reference_query = reference_embedding(tiny_embedding_dir, ["query: when to feed the starter"])
    np.testing.assert_allclose(query, reference_query[0], atol=1e-6, rtol=0)
    np.testing.assert_allclose(got @ query, reference @ reference_query[0], atol=1e-6, rtol=0)


def test_the_onnx_reference_is_the_graph_computed_by_numpy(tiny_embedding_dir: Path) -> None:
    texts = ["passage: Sourdough\nfeed the starter", "query: rye bread"]
    np.testing.assert_allclose(
        reference_embedding(tiny_embedding_dir, texts),
        numpy_embedding(tiny_embedding_dir, texts),
        atol=1e-6,
        rtol=0,
    )


def test_fastembed_frames_documents_and_queries_as_kimun(
    fastembed_tiny: FastEmbedEmbedder, tiny_embedding_dir: Path
) -> None:
    """The vector is the framed text's, and not the bare text's: the model saw kimun's framing."""
    document = fastembed_tiny.embed_documents([("Rye", "bread needs water")])[0]
    query = fastembed_tiny.embed_query("rye bread")
    framed, bare, query_framed, query_bare = reference_embedding(
        tiny_embedding_dir,
        [
            "passage: Rye\nbread needs water",
            "Rye\nbread needs water",
            "query: rye bread",
            "rye bread",
        ],
    )
    np.testing.assert_allclose(document, framed, atol=1e-6, rtol=0)
    np.testing.assert_allclose(query, query_framed, atol=1e-6, rtol=0)
    assert np.abs(document - bare).max() > 1e-3
    assert np.abs(query - query_bare).max() > 1e-3
    np.testing.assert_allclose(fastembed_tiny.embed_texts(["rye bread"])[0], query_bare, atol=1e-6)


def test_fastembed_batches_100_and_keeps_the_order(
    fastembed_tiny: FastEmbedEmbedder, tiny_embedding_dir: Path
) -> None:
    pairs = chunks(250)
    got = fastembed_tiny.embed_documents(pairs, progress=False)
    reference = reference_embedding(tiny_embedding_dir, [f"passage: {t}\n{x}" for t, x in pairs])
    assert got.shape == (250, 64)
    np.testing.assert_allclose(got, reference, atol=1e-6, rtol=0)


def test_fastembed_tiny_fingerprint_name_and_width(fastembed_tiny: FastEmbedEmbedder) -> None:
    assert isinstance(fastembed_tiny, Embedder)
    assert fastembed_tiny.dimension == 64
    assert fastembed_tiny.name == "fastembed:askkit-testing/tiny-embedding-64d"
    assert fastembed_tiny.fingerprint == "fastembed:askkit-testing/tiny-embedding-64d:64"
    assert fastembed_tiny.model_info is None
    assert fastembed_tiny.embed_documents([]).shape == (0, 64)


def test_a_kimun_model_name_fingerprints_a_python_model_as_kimun_names_it(
    tiny_embedding_dir: Path, fastembed_tiny: FastEmbedEmbedder
) -> None:
    embedder = FastEmbedEmbedder(
        "BGESmallENV15",
        python_model=fastembed_tiny.python_model,
        cache_dir=tiny_embedding_dir / "fastembed-cache",
        specific_model_path=tiny_embedding_dir,
        progress=False,
    )
    assert embedder.fingerprint == "fastembed:bgesmallenv15:64"


def test_chunks_that_are_not_pairs_are_a_usage_error(fastembed_tiny: FastEmbedEmbedder) -> None:
    with pytest.raises(UsageError, match=r"chunks\[1\]"):
        fastembed_tiny.embed_documents([("a", "b"), ("only a title",)])  # type: ignore[list-item]
    with pytest.raises(UsageError, match="not a string"):
        fastembed_tiny.embed_documents("title and text")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="query must be a string"):
        fastembed_tiny.embed_query(b"bytes")  # type: ignore[arg-type]


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


def _all_text(error: BaseException) -> str:
    return " ".join([str(error), repr(error), repr(error.args), repr(vars(error))])


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
    assert KEY not in _all_text(caught.value)
    assert KEY not in repr(embedder)
    assert KEY not in embedder.url
    assert KEY not in caplog.text
    assert embed_server.requests[-1].authorization == f"Bearer {KEY}", "the key is still sent"


def test_a_bad_url_or_key_is_a_usage_error_that_shows_no_secret() -> None:
    with pytest.raises(UsageError, match="http:// or https://") as caught:
        OpenAIEmbedder(f"ftp://user:{KEY}@host", "m")
    assert KEY not in _all_text(caught.value)
    with pytest.raises(UsageError, match="printable ASCII"):
        OpenAIEmbedder("http://127.0.0.1:1", "m", api_key="key\nwith newline")
    with pytest.raises(UsageError, match="model"):
        OllamaEmbedder("http://127.0.0.1:1", "")


# -------------------------------------------------------------------- specs


def test_parse_embedder_reads_ollama_and_openai_specs() -> None:
    ollama = parse_embedder("ollama:http://127.0.0.1:11434:nomic-embed-text:v1.5")
    assert isinstance(ollama, OllamaEmbedder)
    assert (ollama.url, ollama.model) == ("http://127.0.0.1:11434", "nomic-embed-text:v1.5")
    openai = parse_embedder("openai:https://api.openai.com/v1:text-embedding-3-small", api_key=KEY)
    assert isinstance(openai, OpenAIEmbedder)
    assert (openai.url, openai.model, openai.has_key) == (
        "https://api.openai.com/v1",
        "text-embedding-3-small",
        True,
    )
    assert repr(openai) == (
        "OpenAIEmbedder('https://api.openai.com/v1', 'text-embedding-3-small', api_key=<hidden>)"
    )
    ipv6 = parse_embedder("ollama:http://[::1]:11434:m", query_prefix="q: ")
    assert isinstance(ipv6, OllamaEmbedder)
    assert (ipv6.url, ipv6.model, ipv6.query_prefix) == ("http://[::1]:11434", "m", "q: ")


@pytest.mark.parametrize(
    ("spec", "options", "match"),
    [
        ("ollama:127.0.0.1:11434:m", {}, "not an embedder spec"),
        ("ollama:http://127.0.0.1:11434", {}, "not an embedder spec"),
        ("openai:", {}, "not an embedder spec"),
        ("bert:model", {}, "not an embedder spec"),
        ("ollama:http://127.0.0.1:11434:m", {"api_key": KEY}, "takes no API key"),
        ("fastembed:BGESmallENV15", {"api_key": KEY}, "takes no API key"),
        ("fastembed:not-a-real-model", {}, "unknown fastembed model"),
    ],
)
def test_a_bad_spec_is_a_usage_error(spec: str, options: dict[str, Any], match: str) -> None:
    with pytest.raises(UsageError, match=match) as caught:
        parse_embedder(spec, **options)
    assert KEY not in _all_text(caught.value)


# ------------------------------------------------------------ the extra and the imports


@pytest.mark.parametrize(
    ("module", "cls", "parse", "spec"),
    [
        ("embedders", "FastEmbedEmbedder", "parse_embedder", "fastembed:BGESmallENV15"),
        ("rerankers", "FastEmbedReranker", "parse_reranker", "fastembed"),
    ],
    ids=["embedder", "reranker"],
)
def test_a_missing_fastembed_names_the_extra(module: str, cls: str, parse: str, spec: str) -> None:
    code = (
        "import sys\n"
        "sys.modules['fastembed'] = None\n"
        f"from askkit.dense.{module} import {cls}, {parse}\n"
        "from askkit.errors import MissingDependencyError\n"
        f"for make in ({cls}, lambda: {parse}({spec!r})):\n"
        "    try:\n"
        "        make()\n"
        "    except MissingDependencyError as exc:\n"
        "        print(exc)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 2
    assert all("pip install 'askkit[embed]'" in line for line in lines)


def test_importing_askkit_and_its_dense_modules_loads_no_model_library() -> None:
    statement = (
        "import askkit, askkit.dense, askkit.dense.embedders, askkit.dense.rerankers\n"
        "import askkit.testing.models, askkit.testing.embed_servers"
    )
    heavy = ("fastembed", "onnx", "onnxruntime", "tokenizers", "huggingface_hub")
    assert loaded_after(statement, heavy) == set()


def test_a_bad_spec_never_shows_a_url_password() -> None:
    from askkit.dense import parse_embedder, parse_reranker

    for parse, spec in [
        (parse_embedder, "openai:https://bob:s3cretpw@host/v1"),
        (parse_embedder, "ollama:http://bob:s3cretpw@127.0.0.1:11434"),
        (parse_reranker, "http:ftp://bob:s3cretpw@host"),
    ]:
        with pytest.raises(UsageError) as err:
            parse(spec)
        assert "s3cretpw" not in str(err.value)
        assert "s3cretpw" not in repr(err.value.args)
        assert "***@" in str(err.value)
