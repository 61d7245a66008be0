"""notebooks/explore.ipynb on the sample and on the Obsidian help vault: an Explorer over
kimun's dense retrieval (a real model, offline) and BM25 on the vault it is given, no stand-in
reranker, a Labeler that grades what the Explorer shows into the file ASKKIT_LABELS names, and
a TurnView of the sample's saved answer, labelled as the sample's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from askkit.metrics import read_qrels
from tests.nbrun import (
    VAULTS,
    Executed,
    askkit_widgets,
    assert_clean_outputs,
    assert_nothing_written,
    printed,
    run_on_vault,
)

NAME = "explore.ipynb"
#: What a user does after Run All: switch to BM25, then click "2 · relevant".
EXTRA_CELLS = (
    "explorer.use('BM25')\n"
    "explorer.wait()\n"
    "shown = explorer.reader.source\n"
    "print('graded:', labeler.grade(2))\n"
    "print('shown:', explorer.question, '|', shown.path, '|', shown.innermost_heading)\n",
)


@pytest.fixture(scope="module", params=VAULTS)
def executed(
    request: pytest.FixtureRequest, minilm_cache: Path, tmp_path_factory: pytest.TempPathFactory
) -> Executed:
    return run_on_vault(
        NAME,
        request.param,
        cache=minilm_cache,
        tmp=tmp_path_factory.mktemp("nb"),
        extra_cells=EXTRA_CELLS,
    )


def test_issue40_explore_runs_on_the_vault_it_is_given(executed: Executed) -> None:
    nb, text = executed.nb, executed.text
    assert_clean_outputs(nb)
    assert_nothing_written(executed)
    assert f"vault: {executed.root.resolve()}" in text
    assert f"dense: DenseIndex('{executed.root.resolve()}'" in text
    assert f"BM25: LocalIndex('{executed.root.resolve()}'" in text
    assert "model: sentence-transformers/all-MiniLM-L6-v2 built by askkit from" in text
    picked = printed(nb, "explorer = Explorer(")
    question = re.search(r"^question: (.+)$", picked, re.M)
    assert question is not None
    # the first query is the picked question, on the first retriever
    assert f"<Explorer: {question[1]!r} -> 10 sources from 'dense'" in text
    assert re.search(r"^<SourceReader: (?!no source)", text, re.M)  # the first source, open
    assert "located: " in text
    first = re.search(r"first row: \[(\d+)\] score ([\d.]+) \(best: ([\d.]+)\)", text)
    assert first is not None
    assert first[2] == first[3]
    assert len(askkit_widgets(nb)) == 3  # the Explorer, the Labeler and the TurnView


def test_issue40_no_stand_in_reranker_is_offered(executed: Executed) -> None:
    """Without ASKKIT_RERANKER the switch offers dense and BM25 only, and says why."""
    text = executed.text
    assert "reranker: none configured (ASKKIT_RERANKER), so none is offered" in text
    switched = printed(executed.nb, "for choice in explorer.retriever_names:")
    assert [line.split(":")[0] for line in switched.splitlines() if ": first [" in line] == [
        "dense",
        "BM25",
    ]
    assert "stand-in" not in text.lower()
    assert "StandInReranker" not in text


def test_issue40_the_labeler_grades_what_the_explorer_shows(executed: Executed) -> None:
    """Into the file ASKKIT_LABELS names (here the test's temporary folder), for the
    Explorer's question and the source its reader shows, after a switch of retriever."""
    text = printed(executed.nb, "print('graded:', labeler.grade(2))")
    assert "graded: True" in text
    shown = re.search(r"^shown: (.+) \| (.+) \| (.*)$", text, re.M)
    assert shown is not None
    question, path, heading = shown.groups()
    assert f"judgments file: {executed.labels}" in executed.text
    qrels = read_qrels(executed.labels)
    row = qrels.iloc[-1]
    assert (row["path"], row["heading"] or "", int(row["grade"])) == (path, heading, 2)
    if executed.sample:  # one of the user's questions: filed under its id
        assert question == "What ratio do I feed my sourdough starter at room temperature?"
        assert row["query_id"] == "q01"
    assert len(qrels) == 1  # running the notebook graded nothing itself


def test_issue40_the_turn_shown_is_the_samples_and_says_so(executed: Executed) -> None:
    text = executed.text
    assert "the sample's answer: " in text
    assert "answer_job.json" in text
    assert "<TurnView: 'How often do I feed the starter?', 5 sources, 4 cited, 1 dangling" in text
    assert "dangling: [7]" in text
