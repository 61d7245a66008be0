"""notebooks/tune-context-cut.ipynb on the sample and on the Obsidian help vault: kimun's
context cuts swept over a question set's dense pools (the user's judgments, or known items
derived from the vault), one question laid out chunk by chunk, a recommendation, its plot,
and every sentence about a rank, a score or a setting held to the tables beside it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.nbrun import (
    VAULTS,
    Executed,
    askkit_widgets,
    assert_clean_outputs,
    assert_nothing_written,
    cell_images,
    printed,
    run_on_vault,
)

NAME = "tune-context-cut.ipynb"


@pytest.fixture(scope="module", params=VAULTS)
def executed(
    request: pytest.FixtureRequest, minilm_cache: Path, tmp_path_factory: pytest.TempPathFactory
) -> Executed:
    return run_on_vault(NAME, request.param, cache=minilm_cache, tmp=tmp_path_factory.mktemp("nb"))


@pytest.mark.slow
def test_issue40_tune_runs_on_the_vault_it_is_given(executed: Executed) -> None:
    nb, text = executed.nb, executed.text
    assert_clean_outputs(nb)
    assert_nothing_written(executed)
    assert f"DenseIndex('{executed.root.resolve()}'" in text
    said = printed(nb, "questions = question_set(")
    counts = re.search(r"^(\d+) queries, (\d+) judgments$", said, re.M)
    assert counts is not None
    expected = (
        "your 37 questions (" if executed.sample else "(known-item questions, not human judgments)"
    )
    assert expected in said
    pools = re.search(r"(\d+) pool chunks for (\d+) queries: (\d+) to (\d+) chunks each", text)
    assert pools is not None
    assert pools[2] == counts[1]
    assert pools[4] == "80"
    assert int(pools[1]) <= 80 * int(pools[2])


@pytest.mark.slow
def test_issue40_the_question_and_note_laid_out_are_said_as_picked(executed: Executed) -> None:
    """The question is picked by a rule true on any set, and what is said of its note is
    what the table and why_not say."""
    nb = executed.nb
    picked = printed(nb, "def dropped(query_id)")
    assert re.search(
        r"^question \((the first question whose relevant note the default cut drops|no relevant "
        r"note of any question is dropped by the default cut: the first question)\): \S+: .+$",
        picked,
        re.M,
    )
    note = re.search(r"^note \((.+)\): (.+)$", picked, re.M)
    assert note is not None
    path = note[2]
    laid = printed(nb, "print('chunks kept per strategy (defaults):'")
    kept = re.search(r"'score-range': (\d+)", laid)
    span = re.search(r"normalised: (-?[\d.]+) to (-?[\d.]+); (\d+) chunks at 1 or more", laid)
    sits = re.search(
        rf"^{re.escape(path)}: best chunk at rank (\d+) of (\d+), note (\d+) of (\d+), "
        r"normalised (-?[\d.]+); kept by the default cut: (True|False)$",
        laid,
        re.M,
    )
    assert kept is not None
    assert span is not None
    assert sits is not None
    rank, size, note_rank, notes, normalised, is_kept = sits.groups()
    assert (int(rank) <= int(kept[1])) == (is_kept == "True")
    assert float(span[1]) <= float(normalised) <= float(span[2])
    assert int(span[3]) >= 1  # the pool's high is read at a rank below the best chunk
    why = printed(nb, "print(why_not(pool, NOTE))")
    assert f"{path} is in the pool: best chunk at rank {rank} of {size}" in why
    assert f"note {note_rank} of {notes}." in why
    if note[1] == "its relevant note, dropped by the default cut":
        assert is_kept == "False"
    # the widgets: the first at kimun's defaults, the second at the setting said to keep the note
    assert len(askkit_widgets(nb)) == 2
    assert "settings: score-range cutoff=0.4 | kimun defaults: score-range cutoff=0.4" in (
        executed.text
    )
    assert "the first widget is still at kimun's defaults: True" in executed.text


@pytest.mark.slow
def test_issue40_the_sweep_recommendation_and_plot(executed: Executed) -> None:
    nb, text = executed.nb, executed.text
    sweep = re.search(r"(\d+) queries, (\d+) with a relevant note in their pool; 49 settings", text)
    assert sweep is not None
    assert int(sweep[2]) <= int(sweep[1])
    recommended = re.search(
        r"recommended: (\S+ \S+) \(mean [\d.]+ chunks, recall ([\d.]+), ndcg [\d.]+\)", text
    )
    assert recommended is not None
    assert float(recommended[2]) >= 0.9
    block = re.search(r"^\[reranker\]\ntop_k = \d+\ncontext_cut = \"([a-z-]+)\"\n", text, re.M)
    assert block is not None
    assert recommended[1].startswith(block[1])
    assert "drawn: Context cut: recall vs context size" in text
    assert len(cell_images(nb, "plots.cut_sweep(")) == 1
    assert f"'recommended: {recommended[1]}'" in text
    # back to the one note: the tightest setting said to keep it does keep it
    said = printed(nb, "generous = CutSettings(")
    tightest = re.search(
        r"^(.+): normalised (-?[\d.]+), rank (\d+): the tightest setting on the grid that keeps "
        r"it is (score-range cutoff=([\d.]+)|fixed top_k=(\d+))$",
        said,
        re.M,
    )
    assert tightest is not None
    setting = tightest[4]
    assert re.search(rf"^{re.escape(setting)}: Answer \([a-z-]+\): kept as \[\d+\]", said, re.M)
    if tightest[5] is not None:
        assert float(tightest[5]) <= float(tightest[2]) + 0.005 < float(tightest[5]) + 0.055
    else:
        assert tightest[6] == tightest[3]
    for goal in ("kimun default", "recommended", "smallest context, recall >= 0.95"):
        assert re.search(rf"^{re.escape(goal)}: Answer \([a-z-]+\): ", said, re.M), goal
