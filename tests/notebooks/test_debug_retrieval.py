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
    # BM25's miss, shown as a lesson: its first note is not the answer; dense's is
    assert (
        "BM25 first: Bread troubleshooting › Sour enough to hurt (baking/troubleshooting.md)"
        in text
    )
    assert "the answer: BM25 chunk 3; its note is listed as Sourdough › Starter [2]" in text
    assert "dense first: Sourdough › Starter › Feeding schedule (projects/sourdough.md)" in text
    lesson = next(c.source for c in nb.cells if c.source.startswith("### BM25's miss"))
    assert "It is BM25's third chunk" in lesson
    assert "*often* included, the rarest" in lesson
    why = cell_outputs(nb, "why = index.explain(query, top)")[-1]["data"]["text/plain"]
    shares = {m[0]: float(m[1]) for m in re.findall(r"(\w+)\s+matched\s+\d+\s+([\d.]+)", why)}
    assert set(shares) == {"often", "feed", "starter", "sourdough"}
    assert max(shares, key=shares.__getitem__) == "often"  # the rarest word counts most
    assert "not in pool" in text  # a rank BM25 has none for, said in words (never NaN)
    # journal headings read as the Explorer's: the date, then the heading
    every_chunk = str(cell_outputs(nb, "all_hits = index.search(query, k=15")[0]["data"]["text/html"])
    assert "2026-02-09 · Evening › Notes" in every_chunk
    assert ">Evening › Notes<" not in every_chunk
    assert_clean_outputs(nb)
