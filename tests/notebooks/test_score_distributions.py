"""notebooks/score-distributions.ipynb runs top to bottom and shows the frame and the accessor."""

from __future__ import annotations

import pytest

from tests.nbrun import NOTEBOOKS, assert_stored_without_outputs, outputs_text, run_notebook

NAME = "score-distributions.ipynb"


def test_stored_without_outputs() -> None:
    assert_stored_without_outputs(NOTEBOOKS / NAME)


@pytest.mark.slow
def test_notebook_runs_and_shows_the_frame() -> None:
    nb = run_notebook(NAME)
    text = outputs_text(nb)
    assert "138 sources in 24 turns" in text
    assert "score_rank" in text
    assert "datetime64[ns]" in text
    assert "turns with a tie at the top: ['q-oven']" in text
    assert "mean score cited:" in text
    assert "plotted 138 sources" in text
    assert "(turn, note) pairs;" in text
    assert "Q: How long was my longest run in April?" in text
    assert "cited with no source: [6]" in text
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert errors == []
