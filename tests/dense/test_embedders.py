"""askkit.dense.embedders: kimun's embedders, framing, batching, fingerprints and errors.

Pinned to kimun's server at commit f28bdd54 (``server/src/dbembeddings/embedder/
fastembedder.rs`` and ``http.rs``, ``server/src/config.rs``, ``EMBED_BATCH`` in
``server/src/lib.rs``) and to the Rust fastembed its Cargo.lock pins, 5.17.2
(fastembed-rs commit d0e8e9e9, ``src/models/text_embedding.rs``). The tests named
after kimun's own unit tests reproduce them.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from askkit.dense import _fastembed, _fastembed_models
from askkit.dense.embedders import (
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
    StoreError,
    UsageError,
)
from askkit.testing.model_references import numpy_embedding, reference_embedding
from askkit.testing.models import build_embedding_model, install_in_hub_cache
from tests.dense.conftest import KEY, all_text, chunks
from tests.probe import loaded_after

ROOT = Path(__file__).resolve().parents[2]


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
    assert _fastembed_models.canonical_model_code("BGESmallENV15") == "Xenova/bge-small-en-v1.5"
    assert _fastembed_models.canonical_model_code("xenova/BGE-small-en-v1.5") == (
        "Xenova/bge-small-en-v1.5"
    )
    assert _fastembed_models.canonical_model_code("not-a-real-model") is None


def test_supported_models_is_nonempty_and_carries_dims() -> None:
    models = _fastembed_models.supported_models()
    assert models
    assert any(code == "Xenova/bge-small-en-v1.5" and dim == 384 for code, dim, _ in models)
    assert all(description for _, _, description in models), "every model has a description"


def test_supported_models_is_sorted_alphabetically() -> None:
    codes = [code.lower() for code, _, _ in _fastembed_models.supported_models()]
    assert codes == sorted(codes)


def test_embedder_fingerprint_is_provider_model_dim() -> None:
    """config.rs's test, on the one function every embedder fingerprints with."""
    assert kimun_fingerprint("fastembed", "BGESmallENV15", 384) == "fastembed:bgesmallenv15:384"
    assert kimun_fingerprint("fastembed", None, 1024) == "fastembed:default:1024"
    assert kimun_fingerprint("ollama", "Nomic-Embed-Text", 768) == "ollama:nomic-embed-text:768"


# ------------------------------------------------------------------ the model table


def test_the_table_has_every_rust_variant_of_fastembed_5_17_2() -> None:
    variants = [m.variant for m in _fastembed_models.EMBEDDING_MODELS]
    assert len(variants) == len(set(variants)) == 46
    assert variants[:3] == ["AllMiniLML6V2", "AllMiniLML6V2Q", "AllMiniLML12V2"]
    assert variants[-1] == "SnowflakeArcticEmbedLQ"
    assert _fastembed_models.FASTEMBED_RS_VERSION == "5.17.2"
    rerankers = [m.variant for m in _fastembed_models.RERANKER_MODELS]
    assert rerankers == [
        "BGERerankerBase",
        "BGERerankerV2M3",
        "JINARerankerV1TurboEn",
        "JINARerankerV2BaseMultiligual",
    ]


def test_every_python_twin_is_a_python_fastembed_model_of_the_same_width() -> None:
    from fastembed import TextEmbedding

    python = {m["model"]: m for m in TextEmbedding.list_supported_models()}
    for model in _fastembed_models.EMBEDDING_MODELS:
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
    for model in _fastembed_models.RERANKER_MODELS:
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
    assert KEY not in all_text(caught.value)


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
