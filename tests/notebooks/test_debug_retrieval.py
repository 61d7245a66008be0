"""notebooks/debug-retrieval.ipynb runs top to bottom on data/vault."""

from __future__ import annotations

from tests.nbrun import NOTEBOOKS, assert_stored_without_outputs, outputs_text, run_notebook


def test_debug_retrieval_notebook_runs() -> None:
    assert_stored_without_outputs(NOTEBOOKS / "debug-retrieval.ipynb")
    nb = run_notebook("debug-retrieval.ipynb")
    text = outputs_text(nb)
    assert "LocalIndex(" in text
    assert "projects/sourdough.md" in text  # the starter question finds the sourdough note
    assert "= sum of contributions" in text
    assert "matched" in text
    assert "Feeding schedule" in text
