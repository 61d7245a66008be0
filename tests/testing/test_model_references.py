"""askkit.testing.model_references: the stand-in models computed without fastembed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from askkit.testing.model_references import (
    numpy_embedding,
    reference_embedding,
    reference_rerank_scores,
)
from askkit.testing.models import build_cross_encoder, build_embedding_model

TEXTS = (
    "Sourdough starter: feed the starter every 12 hours.",
    "Tomato seedlings go indoors six weeks before the last frost.",
    "Rye bread needs more water than wheat bread.",
)


@pytest.fixture(scope="module")
def embedding_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("models") / "embedding"
    return build_embedding_model(folder, vocabulary_texts=TEXTS, dim=16, seed=3)


@pytest.fixture(scope="module")
def cross_encoder_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("models") / "cross"
    return build_cross_encoder(folder, vocabulary_texts=TEXTS, dim=8, seed=3)


def test_the_onnx_reference_equals_numpy_on_the_weights(embedding_dir: Path) -> None:
    texts = [*TEXTS, "", "unknown words only", "starter " * 600]
    reference = reference_embedding(embedding_dir, texts)
    assert reference.shape == (6, 16)
    assert reference.dtype == np.float32
    np.testing.assert_allclose(reference, numpy_embedding(embedding_dir, texts), atol=1e-6)
    norms = np.linalg.norm(reference, axis=1)
    np.testing.assert_allclose(norms[[0, 1, 2, 5]], 1.0, atol=1e-6)
    assert norms[3] == norms[4] == 0.0, "special tokens and unknown words carry no vector"
    assert reference_embedding(embedding_dir, []).shape == (0, 16)


def test_the_cross_encoder_scores_shared_words_higher(cross_encoder_dir: Path) -> None:
    scores = reference_rerank_scores(cross_encoder_dir, "feed the starter", list(TEXTS))
    assert scores.shape == (3,)
    assert scores[0] == scores.max()
    assert scores[0] > 1.0, "a raw logit"
    assert reference_rerank_scores(cross_encoder_dir, "q", []).shape == (0,)
