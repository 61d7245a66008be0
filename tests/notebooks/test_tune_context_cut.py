"""notebooks/tune-context-cut.ipynb sweeps kimun's context cuts on the bundled data."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.nbrun import (
    NOTEBOOKS,
    askkit_widgets,
    assert_clean_outputs,
    assert_stored_without_outputs,
    cell_images,
    first_cell_says_run_all,
    outputs_text,
    run_notebook,
)

NAME = "tune-context-cut.ipynb"


def test_stored_without_outputs() -> None:
    assert_stored_without_outputs(NOTEBOOKS / NAME)
    first_cell_says_run_all(NOTEBOOKS / NAME)


@pytest.mark.slow
def test_notebook_runs_and_recommends_a_cut(minilm_env: Path) -> None:
    nb = run_notebook(NAME)  # kimun's AllMiniLML6V2 from the session's model cache
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert errors == []
    text = outputs_text(nb)
    assert "Traceback" not in text
    assert "DenseIndex(" in text
    assert "all-MiniLM-L6-v2 (offline" in text
    assert "37 queries, 119 judgments" in text
    # every question's pool in one long frame
    assert "2960 pool chunks for 37 queries: 80 to 80 chunks each" in text
    # one question laid out, and why its judged note is cut under kimun's defaults
    assert "How did the knee problem change my training in March?" in text
    assert "chunks kept per strategy (defaults): {'fixed': 20, 'score-range': " in text
    # where the text says the journal entry sits
    assert "journal/2026-03-15.md is in the pool: best chunk at rank 39 of 80" in text
    assert "note 19 of" in text
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "is only 39th in its dense pool (the 19th note)" in markdown
    assert "Answer (score-range): cut: normalised" in text
    # the widgets: the first at kimun's defaults, as the text says, naming its question
    assert len(askkit_widgets(nb)) == 2
    assert (
        "<CutView pool of 'How did the knee problem change my training in March?': "
        "score-range keeps " in text
    )
    assert "settings: score-range cutoff=0.4 | kimun defaults: score-range cutoff=0.4" in text
    assert "the first widget is still at kimun's defaults: True" in text
    assert "It starts at kimun's defaults" in markdown
    # the sentence says where high and low are read
    assert "high: the score at rank 4, low: at rank 77 (5% and 95% of the way down" in text
    assert "ranks 4 and 77 of 80" in markdown
    said = re.search(r"up to about ([\d.]+) here", markdown)
    shown = re.search(r"normalised: (-?[\d.]+) to ([\d.]+)", text)
    assert said is not None and shown is not None
    assert round(float(shown[2]), 1) == float(said[1])
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
    assert len(cell_images(nb, "plots.cut_sweep(")) == 1
    assert "'fixed', 'score-range', 'largest-drop', 'recommended: " in text
    # the other choices, and the judged note kept under the recommendation
    assert "smallest largest-drop, recall >= 0.85" in text
    assert "kimun default" in text
    for goal in ("kimun default", "recommended", "smallest context, recall >= 0.95"):
        assert re.search(rf"{re.escape(goal)}: Answer \([a-z-]+\): cut: ", text), goal
    assert re.search(r"score-range, cutoff 0.2: Answer \(score-range\): kept as \[\d+\]", text)
    generous = re.search(r"score-range cutoff=0.2: mean ([\d.]+) chunks", text)
    assert generous is not None
    assert round(float(generous.group(1))) == 38  # "which keeps 38 chunks on average"
    assert "which keeps 38 chunks on average" in markdown
    assert_clean_outputs(nb)
