"""notebooks/evaluate-and-compare.ipynb runs top to bottom on the bundled data:
BM25 (with and without stemming), dense retrieval with kimun's AllMiniLML6V2 (run
offline), the same reranked by the stand-in cross-encoder, and BM25 and dense fused,
compared with significance tests; the notebook's text is held to the numbers it prints."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
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

NAME = "evaluate-and-compare.ipynb"
RUNS = ("bm25", "bm25, no stemming", "dense", "dense + reranker (stand-in)", "hybrid (rrf)")
#: What the notebook's text states, (run, measure) -> the mean it quotes.
STATED = {
    ("dense", "ndcg@10"): "0.678",
    ("bm25", "ndcg@10"): "0.503",
    ("dense", "mrr"): "0.829",
    ("bm25", "mrr"): "0.661",
    ("dense", "recall@10"): "0.628",
    ("bm25", "recall@10"): "0.468",
    ("hybrid (rrf)", "ndcg@10"): "0.633",
    ("bm25, no stemming", "ndcg@10"): "0.458",
    ("dense + reranker (stand-in)", "ndcg@10"): "0.161",
}


@pytest.fixture(scope="module")
def notebook(minilm_cache: Path) -> nbformat.NotebookNode:
    """The notebook, run with the session's model cache."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ASKKIT_CACHE_DIR", str(minilm_cache))
        patch.delenv("ASKKIT_EMBEDDER", raising=False)
        patch.delenv("ASKKIT_RERANKER", raising=False)
        return run_notebook(NAME)


@pytest.fixture(scope="module")
def executed(notebook: nbformat.NotebookNode) -> tuple[str, str]:
    """The notebook's printed text and its markdown."""
    nb = notebook
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    return outputs_text(nb), markdown


def _means(text: str) -> dict[tuple[str, str], str]:
    """The means table the notebook prints (``means.round(3)``), (run, measure) -> value."""
    start = text.index("ndcg@10  ")
    lines = text[start:].splitlines()[:6]
    out = {}
    for line in lines:
        measure, *values = line.split()
        for run, value in zip(RUNS, values, strict=True):
            out[(run, measure)] = value
    return out


def test_stored_without_outputs() -> None:
    assert_stored_without_outputs(NOTEBOOKS / NAME)
    first_cell_says_run_all(NOTEBOOKS / NAME)


def test_the_runs_are_the_real_model_and_the_labelled_stand_in(executed: tuple[str, str]) -> None:
    text, _ = executed
    assert "Traceback" not in text
    assert "37 queries, 119 judgments" in text
    assert "DenseIndex(" in text
    assert "notes=154, chunks=480" in text  # dense indexes the same chunks as BM25
    assert "model: sentence-transformers/all-MiniLM-L6-v2 built by askkit from" in text
    assert "fingerprint: fastembed:allminilml6v2:384" in text
    assert "dense + reranker (stand-in): StandInReranker(" in text
    for run in ("bm25: 370 sources", "bm25, no stemming: 370 sources", "dense: 370 sources"):
        assert run in text
    assert "dense + reranker (stand-in): 370 sources" in text
    assert re.search(r"hybrid \(rrf\): \d+ sources", text)


def test_the_text_states_the_numbers_it_prints(executed: tuple[str, str]) -> None:
    text, markdown = executed
    means = _means(text)
    for (run, measure), value in STATED.items():
        assert means[(run, measure)] == value, (run, measure)
        assert value in markdown, value
    assert float(means[("dense", "ndcg@10")]) > float(means[("hybrid (rrf)", "ndcg@10")])
    assert float(means[("hybrid (rrf)", "ndcg@10")]) > float(means[("bm25", "ndcg@10")])


def test_the_comparison_is_significant_where_the_text_says_so(executed: tuple[str, str]) -> None:
    text, markdown = executed
    assert "p_random_holm" in text
    summary = text[text.index("p_random_holm") :]
    rows = re.findall(
        r"^(.*?)\s+(ndcg@10|mrr|recall@10|precision@5|map|r-precision)\s+"
        r"([\d.]+)\s+([\d.]+)\s+(-?[\d.]+)\s+(\d+)\s+(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)$",
        summary,
        re.M,
    )
    table: dict[tuple[str, str], tuple[str, ...]] = {}
    run = ""
    for row in rows:
        run = row[0].strip() or run
        table[(run, row[1])] = row[2:]
    assert len(table) == 4 * 6
    for measure in ("ndcg@10", "mrr", "recall@10", "precision@5", "map", "r-precision"):
        dense = table[("dense", measure)]
        assert float(dense[2]) > 0  # better on every measure
        assert float(dense[6]) < 0.05  # paired t, Holm
        assert float(dense[7]) < 0.05  # randomization, Holm
        stand_in = table[("dense + reranker (stand-in)", measure)]
        assert float(stand_in[2]) < 0
        assert float(stand_in[6]) < 0.05
        hybrid = table[("hybrid (rrf)", measure)]
        assert (float(hybrid[6]) < 0.05) == (measure != "r-precision")
    assert table[("dense", "ndcg@10")][3:6] == ("22", "10", "5")
    assert table[("hybrid (rrf)", "ndcg@10")][3:6:2] == ("25", "1")
    assert "(nDCG@10: 22 questions better, 10 tied, 5 worse" in markdown
    plain = [table[("bm25, no stemming", m)] for m in ("ndcg@10", "mrr", "map")]
    assert all(float(row[2]) < 0 for row in plain)
    assert float(table[("bm25, no stemming", "mrr")][6]) < 0.05
    assert float(table[("bm25, no stemming", "ndcg@10")][6]) > 0.05


def test_coverage_plots_and_citations_are_shown(executed: tuple[str, str]) -> None:
    text, markdown = executed
    shares = re.findall(r"Judged share of the top 10: ([\d.]+)%", text)
    assert [round(float(s)) for s in shares] == [15, 20]
    assert "15% (BM25) to 20% (dense)" in markdown
    # why two tools can score a run differently: said once, not once per run
    assert text.count("Two tools can score") == 1
    # the most changed queries name the runs, and unjudged reads as unjudged
    assert "ndcg@10: dense against bm25" in text
    assert "bm25 doc" in text and "dense grade" in text
    assert "unjudged" in text
    changed = text[text.index("ndcg@10: dense against bm25") :].split("\n\n")[0]
    assert " -1" not in changed
    assert "ndcg@10 per query" in text  # the delta bars were drawn
    assert "mean_rank_cited" in text


def test_each_plot_says_whose_scores_it_draws(notebook: nbformat.NotebookNode) -> None:
    text = outputs_text(notebook)
    for title in (
        "Score distribution: bm25",
        "Score distribution: dense",
        "Scores by judgment: dense",
        "Score vs rank: dense",
        "ndcg@k",
    ):
        assert f"'{title}'" in text, title
    assert "Score distribution per run" not in text  # no two scales on one axis
    images = cell_images(notebook, "fig, axes = plt.subplots(3, 2")
    assert len(images) == 1 and images[0].startswith(b"\x89PNG")
    assert_clean_outputs(notebook)
