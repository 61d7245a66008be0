"""notebooks/debug-retrieval.ipynb runs top to bottom on data/vault: BM25 taken apart term
by term, and the same question as kimun's server ranks it with a real model, offline."""

from __future__ import annotations

import re
from pathlib import Path

from tests.nbrun import (
    NOTEBOOKS,
    assert_clean_outputs,
    assert_stored_without_outputs,
    cell_outputs,
    first_cell_says_run_all,
    outputs_text,
    run_notebook,
)


def test_debug_retrieval_notebook_runs(minilm_env: Path) -> None:
    assert_stored_without_outputs(NOTEBOOKS / "debug-retrieval.ipynb")
    first_cell_says_run_all(NOTEBOOKS / "debug-retrieval.ipynb")
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
    # the chunk table shows the breadcrumb as the Explorer does, never the raw U+001F
    chunk_table = str(cell_outputs(nb, "rows.assign(title=")[0]["data"]["text/html"])
    assert "Bread troubleshooting › Flat loaf" in chunk_table
    # journal headings read as the Explorer's: the date, then the heading
    every_chunk = str(cell_outputs(nb, "per_note=False")[0]["data"]["text/html"])
    assert "2026-02-09 · Evening › Notes" in every_chunk
    assert ">Evening › Notes<" not in every_chunk
    assert_clean_outputs(nb)
