"""The tiny stand-in models' outputs computed without fastembed: references for tests.

:func:`reference_embedding` and :func:`reference_rerank_scores` run a model
folder built by :mod:`askkit.testing.models` with ``tokenizers`` and
onnxruntime alone (mean pooling, normalisation in numpy), and
:func:`numpy_embedding` computes the embedding from the graph's weights with
numpy alone, so the tests can hold fastembed's loading of the folder, and the
folder's graph, to an independent computation.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from askkit._optional import EMBED_EXTRA, optional_import
from askkit.testing.models import MODEL_FILE

__all__ = ["numpy_embedding", "reference_embedding", "reference_rerank_scores"]


def _reference_tokenizer(model_dir: Path) -> Any:
    """The folder's tokenizer, truncating and padding as its config says."""
    tk = optional_import("tokenizers", "the reference", EMBED_EXTRA)
    config = json.loads((model_dir / "tokenizer_config.json").read_text(encoding="utf-8"))
    tokenizer = tk.Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=int(config["model_max_length"]))
    pad = tokenizer.token_to_id(config["pad_token"])
    tokenizer.enable_padding(pad_id=pad, pad_token=config["pad_token"])
    return tokenizer


def _run(model_dir: Path, encodings: Sequence[Any]) -> Any:
    ort = optional_import("onnxruntime", "the reference", EMBED_EXTRA)
    session = ort.InferenceSession(str(model_dir / MODEL_FILE), providers=["CPUExecutionProvider"])
    feed = {
        "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
        "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
        "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
    }
    return session.run(None, feed)[0], feed["attention_mask"]


def reference_embedding(
    model_dir: str | os.PathLike[str], texts: Sequence[str]
) -> np.ndarray[Any, np.dtype[np.float32]]:
    """The tiny model's vectors for ``texts``, computed without fastembed.

    The folder's tokenizer (``tokenizers``), the ONNX graph (onnxruntime),
    mean pooling under the attention mask, L2 normalisation (numpy):
    float32 ``(len(texts), dim)``.
    """
    folder = Path(model_dir)
    if not texts:
        dim = json.loads((folder / "config.json").read_text(encoding="utf-8"))["hidden_size"]
        return np.zeros((0, int(dim)), dtype=np.float32)
    encodings = _reference_tokenizer(folder).encode_batch(list(texts))
    hidden, mask = _run(folder, encodings)
    weights = mask[:, :, None].astype(np.float64)
    pooled = (hidden.astype(np.float64) * weights).sum(axis=1) / np.maximum(
        weights.sum(axis=1), 1e-9
    )
    norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
    vectors: np.ndarray[Any, np.dtype[np.float32]] = (pooled / norms).astype(np.float32)
    return vectors


def numpy_embedding(
    model_dir: str | os.PathLike[str], texts: Sequence[str]
) -> np.ndarray[Any, np.dtype[np.float32]]:
    """The tiny model's vectors computed from its weights with numpy alone (no ONNX run).

    A check of the graph itself: word vectors, ``tanh`` of the linear map,
    mean over the real tokens, normalisation.
    """
    onnx = optional_import("onnx", "the reference", EMBED_EXTRA)
    folder = Path(model_dir)
    weights = {
        t.name: onnx.numpy_helper.to_array(t)
        for t in onnx.load(str(folder / MODEL_FILE)).graph.initializer
    }
    table = weights["word_vectors"].astype(np.float64)
    mixing = weights["mixing"].astype(np.float64)
    tokenizer = _reference_tokenizer(folder)
    tokenizer.no_padding()
    rows = []
    for text in texts:
        ids = tokenizer.encode(text).ids
        states = np.tanh(table[ids] @ mixing)
        mean = states.mean(axis=0)
        rows.append(mean / max(float(np.linalg.norm(mean)), 1e-12))
    return np.array(rows, dtype=np.float32).reshape(len(rows), mixing.shape[1])


def reference_rerank_scores(
    model_dir: str | os.PathLike[str], query: str, documents: Sequence[str]
) -> np.ndarray[Any, np.dtype[np.float32]]:
    """The tiny cross-encoder's raw logits for ``(query, document)`` pairs, without fastembed."""
    folder = Path(model_dir)
    if not documents:
        return np.zeros(0, dtype=np.float32)
    pairs = [(query, document) for document in documents]
    encodings = _reference_tokenizer(folder).encode_batch(pairs)
    logits, _mask = _run(folder, encodings)
    scores: np.ndarray[Any, np.dtype[np.float32]] = np.asarray(logits[:, 0], dtype=np.float32)
    return scores
