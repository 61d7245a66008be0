"""notebooks/evaluate-and-compare.ipynb runs top to bottom on the bundled data."""

from __future__ import annotations

from tests.nbrun import NOTEBOOKS, assert_stored_without_outputs, outputs_text, run_notebook


def test_evaluate_and_compare_notebook_runs() -> None:
    assert_stored_without_outputs(NOTEBOOKS / "evaluate-and-compare.ipynb")
    nb = run_notebook("evaluate-and-compare.ipynb")
    text = outputs_text(nb)
    assert "37 queries, 119 judgments" in text
    assert "per note (kimun)" in text
    assert "ndcg@10" in text
    assert "p_random_holm" in text
    assert "Judged share of the top 10" in text
    assert "baseline_doc" in text
    assert "ndcg@10 per query" in text  # the delta bars were drawn
    assert "mean_rank_cited" in text
    assert "Traceback" not in text
