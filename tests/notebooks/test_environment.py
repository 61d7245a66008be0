"""Every bundled notebook follows the lab's contract, read from its stored source (no run).

The lab runs copies of the notebooks outside the repository, on any vault: each
notebook reads the vault and the sample's files from the environment ``askkit
lab`` sets (with the sample as the default), starts with a question cell the
user edits, holds nothing of the sample's data in its code or its prose, offers
no stand-in model, and is stored without outputs.
"""

from __future__ import annotations

import re

import nbformat
import pytest

from tests.nbrun import NOTEBOOKS, assert_stored_without_outputs, first_cell_says_run_all

NAMES = (
    "debug-retrieval.ipynb",
    "evaluate-and-compare.ipynb",
    "explore.ipynb",
    "score-distributions.ipynb",
    "tune-context-cut.ipynb",
    "why-not.ipynb",
)
#: What the sample's data looks like; none of it may be written into a notebook.
SAMPLE_DATA = ("sourdough", "Feeding schedule", "journal/2026-", "'q20'", "q-long-run", "q01")


def _cells(name: str, kind: str) -> list[str]:
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    return [c.source for c in nb.cells if c.cell_type == kind]


def test_the_bundled_notebooks_are_these() -> None:
    assert tuple(sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_stored_without_outputs(name: str) -> None:
    assert_stored_without_outputs(NOTEBOOKS / name)
    first_cell_says_run_all(NOTEBOOKS / name)


@pytest.mark.parametrize("name", NAMES)
def test_issue40_each_notebook_reads_the_lab_environment(name: str) -> None:
    """The vault and the sample's files come from the lab's environment, never from a path
    relative to the repository: the lab runs copies of the notebooks elsewhere."""
    code = "\n".join(_cells(name, "code"))
    for variable in ("VAULT", "DATA", "QUERIES", "QRELS", "EMBEDDER"):
        assert f"os.environ.get('ASKKIT_{variable}'" in code, variable
    # one relative path only: ASKKIT_DATA's default, the sample's data/ beside notebooks/
    assert re.findall(r"""['"]\.\./[^'"]*['"]""", code) == ["'../data'"]
    assert "os.environ.get('ASKKIT_DATA', '../data')" in code


@pytest.mark.parametrize("name", NAMES)
def test_issue40_each_notebook_starts_with_a_question_the_user_edits(name: str) -> None:
    first = _cells(name, "code")[0]
    assert [line for line in first.splitlines() if not line.startswith("#")] == ["QUESTION = None"]
    code = "\n".join(_cells(name, "code")[1:])
    assert "QUESTION" in code  # the question is used, or replaced by the notebook's pick


@pytest.mark.parametrize("name", NAMES)
def test_issue40_no_notebook_holds_the_samples_data(name: str) -> None:
    """Questions, headings, paths and numbers come from the vault and the outputs, not the text."""
    code = "\n".join(_cells(name, "code"))
    markdown = "\n".join(_cells(name, "markdown"))
    for text in SAMPLE_DATA:
        assert text not in code, text
        assert text not in markdown, text
    # a measured number (three decimals) written into the prose is a claim about the data
    assert re.findall(r"\b\d\.\d{3}\b", markdown) == []


@pytest.mark.parametrize("name", NAMES)
def test_issue40_no_notebook_offers_a_stand_in_model(name: str) -> None:
    """A reranker is offered only when a real one is configured (``ASKKIT_RERANKER``)."""
    code = "\n".join(_cells(name, "code"))
    assert "tiny_reranker" not in code
    assert "askkit.testing" not in code
    if "parse_reranker(" in code:
        assert "os.environ.get('ASKKIT_RERANKER')" in code


def test_issue40_the_labeler_writes_where_the_user_says() -> None:
    """Judgments go to the file ``ASKKIT_LABELS`` names, else a temporary folder: never a
    tracked file, never a made-up grade when the notebook runs."""
    code = "\n".join(_cells("explore.ipynb", "code"))
    assert "os.environ.get('ASKKIT_LABELS')" in code
    assert "tempfile.gettempdir()" in code
    assert "Labeler(LABELS, explorer" in code
    assert ".grade(" not in code
