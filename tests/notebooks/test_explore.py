"""notebooks/explore.ipynb runs top to bottom: an Explorer switching between kimun's dense
retrieval with a real model (run offline), BM25 and the stand-in reranker, and a TurnView."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.nbrun import (
    NOTEBOOKS,
    PROGRESS,
    askkit_widgets,
    assert_clean_outputs,
    assert_stored_without_outputs,
    first_cell_says_run_all,
    outputs_text,
    run_notebook,
)


def test_explore_notebook_runs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """On a fresh askkit cache: the model is built and the vault embedded, with progress bars."""
    assert_stored_without_outputs(NOTEBOOKS / "explore.ipynb")
    first_cell_says_run_all(NOTEBOOKS / "explore.ipynb")
    monkeypatch.setenv("ASKKIT_CACHE_DIR", str(tmp_path / "cache"))
    for name in ("ASKKIT_EMBEDDER", "ASKKIT_RERANKER", "ASKKIT_SERVER", "ASKKIT_VAULT"):
        monkeypatch.delenv(name, raising=False)
    nb = run_notebook("explore.ipynb")
    text = outputs_text(nb)
    assert "DenseIndex(" in text
    assert "LocalIndex(" in text
    assert "model: sentence-transformers/all-MiniLM-L6-v2 built by askkit from" in text
    assert "dense + reranker (stand-in): StandInReranker(" in text
    bars = [line for line in text.splitlines() if PROGRESS.search(line)]
    assert any("building sentence-transformers/all-MiniLM-L6-v2 for fastembed" in b for b in bars)
    assert any("embedding (fastembed:sentence-transformers/all-MiniLM-L6-v2" in b for b in bars)
    # the first query goes to kimun's dense retrieval, the first of the switch
    assert (
        "<Explorer: 'how often should I feed the sourdough starter' -> 10 sources from 'dense'"
        in text
    )
    assert "<SourceReader: [1] " in text
    assert "located: " in text
    assert "<SourcesView: " in text
    assert " of 10 rows" in text
    # after Run All the Explorer is left best first: its first row holds the best score
    first = re.search(r"first row: \[(\d+)\] score ([\d.]+) \(best: ([\d.]+)\)", text)
    assert first is not None
    assert first[2] == first[3]
    # the switch: each retriever answers, then the Explorer goes back to the first
    assert "dense: first [1] " in text
    assert "BM25: first [1] " in text
    assert "dense + reranker (stand-in): first [1] " in text
    assert (
        "<Explorer: 'how often should I feed the sourdough starter' -> 10 sources from 'dense'; "
        "4 queries>" in text
    )
    assert "<TurnView: 'How often do I feed the starter?', 5 sources, 4 cited, 1 dangling" in text
    assert (
        "<SourceReader: [3] Sourdough › Starter › Feeding schedule (projects/sourdough.md)" in text
    )
    assert "dangling: [7]" in text
    assert "q01\tprojects/sourdough.md\tFeeding schedule\t3" in text
    assert len(askkit_widgets(nb)) == 3  # the Explorer, the TurnView and the Labeler
    assert_clean_outputs(nb)
