"""notebooks/score-distributions.ipynb on the sample and on the Obsidian help vault: the
sample's turn log, labelled as the sample's, as a frame; every column and dtype; the plots;
sentences computed from the numbers they state; and one question's scores on the vault."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from askkit.frame import sources_frame
from tests.conftest import DATA
from tests.nbrun import (
    NOTEBOOKS,
    VAULTS,
    Executed,
    assert_clean_outputs,
    assert_nothing_written,
    cell_images,
    html_table,
    printed,
    run_on_vault,
)

NAME = "score-distributions.ipynb"
NUMBER = r"(-?[\d.]+)"


@pytest.fixture(scope="module", params=VAULTS)
def executed(
    request: pytest.FixtureRequest, minilm_cache: Path, tmp_path_factory: pytest.TempPathFactory
) -> Executed:
    return run_on_vault(NAME, request.param, cache=minilm_cache, tmp=tmp_path_factory.mktemp("nb"))


def test_no_headless_backend_is_forced() -> None:
    """``matplotlib.use("Agg")`` would hide every figure in JupyterLab."""
    text = (NOTEBOOKS / NAME).read_text(encoding="utf-8")
    assert "matplotlib.use" not in text
    assert "Agg" not in text


@pytest.mark.slow
def test_issue40_score_distributions_reads_the_samples_log_and_says_so(executed: Executed) -> None:
    nb, text = executed.nb, executed.text
    assert_clean_outputs(nb)
    assert_nothing_written(executed)
    log = sources_frame(DATA / "turns.jsonl")
    assert (
        f"the sample's turn log ({DATA / 'turns.jsonl'}): {len(log)} sources in "
        f"{log.turn_id.nunique()} turns" in text
    )
    # every column and its dtype, none cut
    dtypes = html_table(nb, "display(df.dtypes")
    assert f"{len(log.columns)} columns" in text
    assert {row[""]: row["dtype"] for row in dtypes} == {c: str(t) for c, t in log.dtypes.items()}
    assert "turns with a tie at the top: ['q-oven']" in text
    assert "(turn, note) pairs;" in text
    # the turn rebuilt is one whose answer cites a number no source carries
    assert re.search(r"cited with no source: \[\d+\]", text)


@pytest.mark.slow
def test_issue40_the_plots_are_drawn_and_read_from_the_numbers(executed: Executed) -> None:
    nb = executed.nb
    images = cell_images(nb, "fig, axes = plt.subplots")
    assert len(images) == 1
    assert images[0].startswith(b"\x89PNG")
    assert "drawn: ['score by note kind', 'z-score within the turn (green: cited)']" in printed(
        nb, "fig, axes = plt.subplots"
    )
    table = printed(nb, 'by_kind = df.groupby("is_journal")')
    means = re.search(rf"mean score cited: {NUMBER}, uncited: {NUMBER}", table)
    kinds = {
        m[1]: float(m[2]) for m in re.finditer(rf"^(True|False)\s+[\d.]+\s+{NUMBER}", table, re.M)
    }
    assert means is not None
    assert set(kinds) == {"True", "False"}
    said = printed(nb, "def than(a, b")
    cited = re.search(
        rf"Cited sources score {NUMBER} on average, (higher than|lower than|the same as) "
        rf"uncited ones \({NUMBER}\): a difference of ([+-][\d.]+)\.",
        said,
    )
    assert cited is not None
    c, u = float(cited[1]), float(cited[3])
    assert (cited[1], cited[3]) == (means[1], means[2])
    assert cited[2] == ("higher than" if c > u else "lower than" if c < u else "the same as")
    journal = re.search(
        rf"Journal entries score {NUMBER} on average \(median {NUMBER}\), "
        rf"(higher than|lower than|the same as) other notes \({NUMBER}, median {NUMBER}\)",
        said,
    )
    assert journal is not None
    j, o = float(journal[1]), float(journal[4])
    assert (round(kinds["True"], 3), round(kinds["False"], 3)) == (j, o)
    assert journal[3] == ("higher than" if j > o else "lower than" if j < o else "the same as")
    # the left plot: where the two histograms overlap, computed from the log
    log = sources_frame(DATA / "turns.jsonl")
    js, os_ = log.score[log.is_journal], log.score[~log.is_journal]
    low, high = max(js.min(), os_.min()), min(js.max(), os_.max())
    overlap = re.search(rf"overlap from {NUMBER} to {NUMBER}, where (\d+)% of all sources", said)
    assert overlap is not None
    assert (float(overlap[1]), float(overlap[2])) == (round(low, 3), round(high, 3))
    assert int(overlap[3]) == round(100 * log.score.between(low, high).mean())
    assert "two humps" not in executed.markdown


@pytest.mark.slow
def test_issue40_the_question_is_ranked_on_the_vault_it_is_given(executed: Executed) -> None:
    nb = executed.nb
    said = printed(nb, "yours = sources_frame(")
    assert re.search(r"^question: .+$", said, re.M)
    found = re.search(
        rf"^(\d+) sources from {re.escape(executed.root.name)}: "
        rf"best score {NUMBER}, lowest {NUMBER}$",
        said,
        re.M,
    )
    assert found is not None
    summary = html_table(nb, "yours = sources_frame(")
    assert len(summary) == 1
    assert int(summary[0]["sources"]) == int(found[1])
    assert round(float(summary[0]["top"]), 3) == float(found[2])
    assert round(float(summary[0]["min"]), 3) == float(found[3])
