"""askkit.testing.models: tiny ONNX models fastembed loads itself."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

from askkit.testing.model_references import reference_embedding, reference_rerank_scores
from askkit.testing.models import (
    FRAMING_WORDS,
    MODEL_FILE,
    SPECIAL_TOKENS,
    build_cross_encoder,
    build_embedding_model,
    install_in_hub_cache,
    model_name,
    register_cross_encoder,
    register_embedding_model,
    tiny_embedder,
    tiny_reranker,
    vocabulary,
)

ROOT = Path(__file__).resolve().parents[2]
TEXTS = (
    "Sourdough starter: feed the starter every 12 hours.",
    "Tomato seedlings go indoors six weeks before the last frost.",
    "Rye bread needs more water than wheat bread.",
)


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="module")
def embedding_dir(models: Path) -> Path:
    return build_embedding_model(models / "embedding", vocabulary_texts=TEXTS, dim=16, seed=3)


@pytest.fixture(scope="module")
def cross_encoder_dir(models: Path) -> Path:
    return build_cross_encoder(models / "cross", vocabulary_texts=TEXTS, dim=8, seed=3)


def test_the_vocabulary_is_the_texts_words_without_punctuation_or_framing() -> None:
    words = vocabulary(["Feed the STARTER: passage, query; 12 hours.", "Café"])
    assert words == ["12", "cafe", "feed", "hours", "starter", "the"]
    assert vocabulary(["passage query"], exclude=()) == ["passage", "query"]
    assert {"passage", "query"} == FRAMING_WORDS


def test_the_folder_holds_what_fastembed_reads(embedding_dir: Path) -> None:
    names = {p.name for p in embedding_dir.iterdir()}
    assert {
        MODEL_FILE,
        "tokenizer.json",
        "tokenizer_config.json",
        "config.json",
        "special_tokens_map.json",
    } <= names
    config = json.loads((embedding_dir / "tokenizer_config.json").read_text())
    assert config["model_max_length"] == 512
    assert config["pad_token"] == "[PAD]"
    tokenizer = json.loads((embedding_dir / "tokenizer.json").read_text())
    assert tokenizer["model"]["type"] == "WordPiece"
    assert list(tokenizer["model"]["vocab"])[: len(SPECIAL_TOKENS)] == list(SPECIAL_TOKENS)
    assert json.loads((embedding_dir / "config.json").read_text())["hidden_size"] == 16


def test_the_graph_is_bert_shaped_opset_17_ir_8(
    embedding_dir: Path, cross_encoder_dir: Path
) -> None:
    model = onnx.load(str(embedding_dir / MODEL_FILE))
    onnx.checker.check_model(model)
    assert model.ir_version == 8
    assert [o.version for o in model.opset_import] == [17]
    assert [i.name for i in model.graph.input] == ["input_ids", "attention_mask", "token_type_ids"]
    assert [o.name for o in model.graph.output] == ["last_hidden_state"]
    cross = onnx.load(str(cross_encoder_dir / MODEL_FILE))
    assert [o.name for o in cross.graph.output] == ["logits"]
    assert (embedding_dir / MODEL_FILE).stat().st_size < 64 * 1024


def test_the_same_arguments_build_the_same_model(models: Path, embedding_dir: Path) -> None:
    again = build_embedding_model(models / "again", vocabulary_texts=TEXTS, dim=16, seed=3)
    assert (again / MODEL_FILE).read_bytes() == (embedding_dir / MODEL_FILE).read_bytes()
    other = build_embedding_model(models / "other", vocabulary_texts=TEXTS, dim=16, seed=4)
    assert (other / MODEL_FILE).read_bytes() != (embedding_dir / MODEL_FILE).read_bytes()


def test_texts_that_share_words_are_closer(embedding_dir: Path) -> None:
    starter, tomato, rye = reference_embedding(embedding_dir, TEXTS)
    (query,) = reference_embedding(embedding_dir, ["when to feed the sourdough starter"])
    assert query @ starter > 0.5
    assert query @ starter > max(query @ tomato, query @ rye) + 0.3


def test_registration_is_once_per_process() -> None:
    from fastembed import TextEmbedding
    from fastembed.rerank.cross_encoder import TextCrossEncoder

    assert (
        register_embedding_model(24) == register_embedding_model(24) == model_name("embedding", 24)
    )
    assert register_cross_encoder(24) == register_cross_encoder(24)
    names = [m["model"] for m in TextEmbedding.list_supported_models()]
    assert names.count("askkit-testing/tiny-embedding-24d") == 1
    cross = [m["model"] for m in TextCrossEncoder.list_supported_models()]
    assert cross.count("askkit-testing/tiny-cross-encoder-24d") == 1


def test_fastembed_loads_the_model_from_the_folder_and_from_a_hub_cache(tmp_path: Path) -> None:
    by_folder = tiny_embedder(tmp_path / "model", TEXTS, dim=16, seed=3)
    by_cache = tiny_embedder(
        tmp_path / "model", TEXTS, dim=16, seed=3, via="hub-cache", cache_dir=tmp_path / "hub"
    )
    snapshot = next(
        (tmp_path / "hub" / "models--askkit-testing--tiny-embedding-16d").rglob("*.onnx")
    )
    assert snapshot.parent.parent.name == "snapshots"
    texts = ["feed the starter", "rye bread"]
    np.testing.assert_allclose(by_folder.embed_texts(texts), by_cache.embed_texts(texts), atol=0)
    np.testing.assert_allclose(
        by_folder.embed_texts(texts), reference_embedding(tmp_path / "model", texts), atol=1e-6
    )
    assert (tmp_path / "model" / "fastembed-cache").is_dir(), "fastembed's cache stays inside"


def test_a_model_folder_is_rebuilt_only_when_its_arguments_change(tmp_path: Path) -> None:
    tiny_embedder(tmp_path, TEXTS, dim=16)
    built = (tmp_path / MODEL_FILE).stat().st_mtime_ns
    tiny_embedder(tmp_path, TEXTS, dim=16)
    assert (tmp_path / MODEL_FILE).stat().st_mtime_ns == built
    tiny_embedder(tmp_path, [*TEXTS, "another word"], dim=16)
    assert "another" in json.loads((tmp_path / "tokenizer.json").read_text())["model"]["vocab"]


def test_the_tiny_reranker_scores_as_its_reference(tmp_path: Path) -> None:
    reranker = tiny_reranker(tmp_path, TEXTS, dim=8, seed=3)
    pairs = reranker.score("feed the starter", list(TEXTS))
    reference = reference_rerank_scores(tmp_path, "feed the starter", list(TEXTS))
    np.testing.assert_allclose([s for _, s in pairs], reference, atol=1e-6)
    by_cache = tiny_reranker(
        tmp_path, TEXTS, dim=8, seed=3, via="hub-cache", cache_dir=tmp_path / "c"
    )
    assert by_cache.score("feed the starter", list(TEXTS)) == pairs


def test_install_in_hub_cache_writes_a_hugging_face_layout(
    embedding_dir: Path, tmp_path: Path
) -> None:
    snapshot = install_in_hub_cache(embedding_dir, tmp_path, "org/name")
    repo = tmp_path / "models--org--name"
    assert (repo / "refs" / "main").read_text() == snapshot.name
    assert (snapshot / MODEL_FILE).read_bytes() == (embedding_dir / MODEL_FILE).read_bytes()


def test_a_bad_width_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="dim"):
        build_embedding_model(tmp_path, dim=0)


def test_a_missing_onnx_names_the_package() -> None:
    code = (
        "import sys, tempfile\n"
        "sys.modules['onnx'] = None\n"
        "from askkit.testing.models import build_embedding_model\n"
        "from askkit.errors import MissingDependencyError\n"
        "try:\n"
        "    build_embedding_model(tempfile.mkdtemp())\n"
        "except MissingDependencyError as exc:\n"
        "    print(exc)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert "pip install 'askkit[embed]'" in out.stdout


def test_the_tiny_models_are_labelled_stand_ins_wherever_they_are_shown(tmp_path: Path) -> None:
    from askkit.dense import FastEmbedEmbedder, FastEmbedReranker
    from askkit.testing.models import StandInEmbedder, StandInReranker

    embedder = tiny_embedder(tmp_path / "e", TEXTS, dim=16)
    reranker = tiny_reranker(tmp_path / "r", TEXTS, dim=8)
    assert isinstance(embedder, StandInEmbedder)
    assert isinstance(embedder, FastEmbedEmbedder)
    assert isinstance(reranker, StandInReranker)
    assert isinstance(reranker, FastEmbedReranker)
    assert "stand-in" in repr(embedder)
    assert "not a trained model" in embedder.model_file
    assert reranker.name.startswith("stand-in:")
    assert "stand-in cross-encoder, not a trained model" in repr(reranker)
