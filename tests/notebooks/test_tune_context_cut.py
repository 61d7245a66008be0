"""notebooks/tune-context-cut.ipynb sweeps kimun's context cuts on the bundled data."""

from __future__ import annotations

import re

import pytest

from tests.nbrun import NOTEBOOKS, assert_stored_without_outputs, outputs_text, run_notebook

NAME = "tune-context-cut.ipynb"


def test_stored_without_outputs() -> None:
    assert_stored_without_outputs(NOTEBOOKS / NAME)


@pytest.mark.slow
def test_notebook_runs_and_recommends_a_cut() -> None:
    nb = run_notebook(NAME)
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert errors == []
    text = outputs_text(nb)
    assert "Traceback" not in text
    assert "LocalIndex(" in text
    assert "37 queries, 119 judgments" in text
    # every question's pool in one long frame
    assert re.search(r"\d+ pool chunks for 37 queries: \d+ to 80 chunks each", text)
    # one question laid out, and why its judged note is cut under kimun's defaults
    assert "How did the knee problem change my training in March?" in text
    assert "chunks kept per strategy (defaults): {'fixed': 20, 'score-range': " in text
    assert "journal/2026-03-15.md is in the pool: best chunk at rank" in text
    assert "Answer (score-range): cut: normalised" in text
    # the widget, displayed once, and its state printed
    widgets = [
        out
        for cell in nb.cells
        for out in cell.get("outputs", [])
        if "application/vnd.jupyter.widget-view+json" in out.get("data", {})
    ]
    assert len(widgets) == 1
    assert "<CutView: score-range keeps " in text
    # the sweep over every question
    assert "37 queries, 34 with a relevant note in their pool; 49 settings" in text
    # the recommendation and the [reranker] block to paste into server.toml
    recommended = re.search(
        r"recommended: (\S+ \S+) \(mean [\d.]+ chunks, recall ([\d.]+), ndcg [\d.]+\)", text
    )
    assert recommended is not None
    assert float(recommended.group(2)) >= 0.9
    block = re.search(r"^\[reranker\]\ntop_k = \d+\ncontext_cut = \"([a-z-]+)\"\n", text, re.M)
    assert block is not None
    assert recommended.group(1).startswith(block.group(1))
    assert "score_range_cutoff = " in text
    assert "drop_window_min = " in text
    # the curves, the recommendation starred
    assert "drawn: Context cut: recall vs context size" in text
    assert "'fixed', 'score-range', 'largest-drop', 'recommended: " in text
    # the other choices, and the judged note kept under the recommendation
    assert "smallest largest-drop, recall >= 0.85" in text
    assert "kimun default" in text
    assert re.search(r"Answer \([a-z-]+\): kept as \[\d+\]", text)
