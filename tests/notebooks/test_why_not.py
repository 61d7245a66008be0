"""notebooks/why-not.ipynb follows the bundled questions' relevant notes through kimun's stages."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.nbrun import (
    NOTEBOOKS,
    askkit_widgets,
    assert_stored_without_outputs,
    outputs_text,
    run_notebook,
)

NAME = "why-not.ipynb"


def test_stored_without_outputs() -> None:
    assert_stored_without_outputs(NOTEBOOKS / NAME)


@pytest.mark.slow
def test_notebook_runs_the_funnel_two_traces_and_the_what_if(minilm_env: Path) -> None:
    nb = run_notebook(NAME)  # kimun's AllMiniLML6V2 from the session's model cache
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert errors == []
    text = outputs_text(nb)
    assert "Traceback" not in text
    assert "all-MiniLM-L6-v2 (offline" in text
    assert "37 queries, 119 judgments" in text
    assert "104 relevant sections followed" in text
    total = re.search(r"^total +((?:\d+ +){6}\d+)$", text, re.M)
    assert total is not None
    counts = [int(x) for x in total.group(1).split()]
    assert counts[0] == 104
    assert counts[:-1] == sorted(counts[:-1], reverse=True)  # the funnel never grows
    assert counts[-1] == counts[0] - counts[-2]  # lost = judged - in the context
    # the first lost section: the evening journal entry of q01, cut from the context
    assert "q01: What ratio do I feed my sourdough starter at room temperature?" in text
    assert "journal/2026-01-12.md#Evening stopped at cut" in text
    assert text.count("stopped at cut: Answer (score-range): cut: normalised") >= 1
    assert 'class="askkit-data askkit-trace"' in text  # the chains, as HTML
    assert len(askkit_widgets(nb)) == 1  # the ChainView
    assert "changes that keep one" in text
    assert "fixed top_k=" in text
