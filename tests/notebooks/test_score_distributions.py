"""notebooks/score-distributions.ipynb runs top to bottom, shows the frame and the accessor,
draws its figure and answers its own question."""

from __future__ import annotations

import pytest

from tests.nbrun import (
    NOTEBOOKS,
    assert_clean_outputs,
    assert_stored_without_outputs,
    cell_images,
    first_cell_says_run_all,
    outputs_text,
    run_notebook,
)

NAME = "score-distributions.ipynb"


def test_stored_without_outputs() -> None:
    assert_stored_without_outputs(NOTEBOOKS / NAME)
    first_cell_says_run_all(NOTEBOOKS / NAME)


def test_no_headless_backend_is_forced() -> None:
    """``matplotlib.use("Agg")`` would hide every figure in JupyterLab."""
    text = (NOTEBOOKS / NAME).read_text(encoding="utf-8")
    assert "matplotlib.use" not in text
    assert "Agg" not in text


@pytest.mark.slow
def test_notebook_runs_and_shows_the_frame() -> None:
    nb = run_notebook(NAME)
    text = outputs_text(nb)
    assert "138 sources in 24 turns" in text
    assert "score_rank" in text
    assert "datetime64[ns]" in text
    assert "turns with a tie at the top: ['q-oven']" in text
    # the markdown's answer quotes these numbers: they must still be what the cell prints
    assert "mean score cited: 0.612, uncited: 0.611" in text
    assert "0.695154" in text and "0.548520" in text  # topic notes 0.70, journal 0.55
    answer = next(c.source for c in nb.cells if "Do cited sources score higher? No." in c.source)
    assert "0.612" in answer and "0.611" in answer
    images = cell_images(nb, "fig, axes = plt.subplots")
    assert len(images) == 1
    assert images[0].startswith(b"\x89PNG")
    assert "(turn, note) pairs;" in text
    assert "Q: How long was my longest run in April?" in text
    assert "cited with no source: [6]" in text
    assert_clean_outputs(nb)
