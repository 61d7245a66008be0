"""notebooks/explore.ipynb runs top to bottom: an Explorer on data/vault and a TurnView."""

from __future__ import annotations

from tests.nbrun import NOTEBOOKS, assert_stored_without_outputs, outputs_text, run_notebook


def test_explore_notebook_runs() -> None:
    assert_stored_without_outputs(NOTEBOOKS / "explore.ipynb")
    nb = run_notebook("explore.ipynb")
    text = outputs_text(nb)
    assert "LocalIndex(" in text
    assert "<Explorer: 'how often should I feed the sourdough starter' -> 10 sources" in text
    assert "<SourceReader: [1] " in text
    assert "located: " in text
    assert "<SourcesView: " in text
    assert " of 10 rows" in text
    assert "<TurnView: 'How often do I feed the starter?', 5 sources, 4 cited, 1 dangling" in text
    assert (
        "<SourceReader: [3] Sourdough › Starter › Feeding schedule (projects/sourdough.md)" in text
    )
    assert "dangling: [7]" in text
    assert "q01\tprojects/sourdough.md\tFeeding schedule\t3" in text
    widgets = [
        out
        for cell in nb.cells
        for out in cell.get("outputs", [])
        if "application/vnd.jupyter.widget-view+json" in out.get("data", {})
    ]
    assert len(widgets) == 3  # the Explorer, the TurnView and the Labeler
