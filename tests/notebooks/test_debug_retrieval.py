"""notebooks/debug-retrieval.ipynb runs top to bottom on data/vault: BM25 taken apart term
by term, and the same question as kimun's server ranks it with a real model, offline."""

from __future__ import annotations

import re
from pathlib import Path

from tests.nbrun import NOTEBOOKS, assert_stored_without_outputs, outputs_text, run_notebook


def test_debug_retrieval_notebook_runs(minilm_env: Path) -> None:
    assert_stored_without_outputs(NOTEBOOKS / "debug-retrieval.ipynb")
    nb = run_notebook("debug-retrieval.ipynb")
    text = outputs_text(nb)
    assert "LocalIndex(" in text
    assert "projects/sourdough.md" in text  # the starter question finds the sourdough note
    assert "= sum of contributions" in text
    assert "matched" in text
    assert "Feeding schedule" in text
    # the dense section: kimun's AllMiniLML6V2, its ranking beside BM25's
    assert "DenseIndex(" in text
    assert "model: sentence-transformers/all-MiniLM-L6-v2 built by askkit from" in text
    assert "BM25 rank" in text
    found = re.search(r"(\S+\.md): dense rank (\d+), BM25 rank (\d+|none)", text)
    assert found is not None
    dense_rank = int(found.group(2))
    bm25 = found.group(3)
    assert bm25 == "none" or int(bm25) > dense_rank  # the model ranks it higher than BM25
