"""notebooks/evaluate-and-compare.ipynb runs top to bottom on the bundled data:
BM25 (with and without stemming), dense retrieval and their reciprocal rank fusion,
compared with significance tests (the dense run on the notebook's offline stand-in model)."""

from __future__ import annotations

import re

from tests.nbrun import NOTEBOOKS, assert_stored_without_outputs, outputs_text, run_notebook


def test_evaluate_and_compare_notebook_runs() -> None:
    assert_stored_without_outputs(NOTEBOOKS / "evaluate-and-compare.ipynb")
    nb = run_notebook("evaluate-and-compare.ipynb")
    text = outputs_text(nb)
    assert "Traceback" not in text
    assert "37 queries, 119 judgments" in text
    assert "stand-in model" in text  # no ASKKIT_EMBEDDER in the test environment
    assert "DenseIndex(" in text
    assert "notes=154, chunks=480" in text  # dense indexes the same chunks as BM25
    for run in ("bm25: 370 sources", "bm25, no stemming: 370 sources", "dense: 370 sources"):
        assert run in text
    assert re.search(r"hybrid \(rrf\): \d+ sources", text)
    assert "ndcg@10" in text
    assert "p_random_holm" in text
    for compared in ("bm25, no stemming ndcg@10", "dense             ndcg@10", "hybrid (rrf)"):
        assert compared in text  # each run compared against the BM25 baseline
    assert "Judged share of the top 10" in text
    assert "baseline_doc" in text
    assert "ndcg@10 per query" in text  # the delta bars were drawn
    assert "mean_rank_cited" in text
