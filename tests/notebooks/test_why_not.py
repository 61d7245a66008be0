"""notebooks/why-not.ipynb on the sample and on the Obsidian help vault: a question set's
relevant sections (the user's judgments, or known items derived from the vault) followed
through kimun's stages, the funnel drawn, lost sections traced, and what would keep them."""

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

NAME = "why-not.ipynb"


@pytest.fixture(scope="module", params=VAULTS)
def executed(
    request: pytest.FixtureRequest, minilm_cache: Path, tmp_path_factory: pytest.TempPathFactory
) -> Executed:
    return run_on_vault(NAME, request.param, cache=minilm_cache, tmp=tmp_path_factory.mktemp("nb"))


@pytest.mark.slow
def test_issue40_why_not_follows_the_vaults_questions(executed: Executed) -> None:
    nb, text = executed.nb, executed.text
    assert_clean_outputs(nb)
    assert_nothing_written(executed)
    assert f"DenseIndex('{executed.root.resolve()}'" in text
    said = printed(nb, "questions = question_set(")
    expected = (
        "your 37 questions (" if executed.sample else "(known-item questions, not human judgments)"
    )
    assert expected in said
    followed = re.search(r"(\d+) relevant sections followed", text)
    total = re.search(r"^total +((?:\d+ +){6}\d+) +\d+$", text, re.M)  # then unjudged_above
    assert followed is not None
    assert total is not None
    counts = [int(x) for x in total[1].split()]
    assert counts[0] == int(followed[1])
    assert counts[:-1] == sorted(counts[:-1], reverse=True)  # the funnel never grows
    assert counts[-1] == counts[0] - counts[-2]  # lost = judged - in the context
    # the funnel's plot, titled
    assert len(cell_images(nb, "ax = plots.funnel(table)")) == 1
    assert "drawn: Where relevant sections are lost" in text


@pytest.mark.slow
def test_issue40_the_lost_sections_traced_are_the_ones_counted(executed: Executed) -> None:
    nb, text = executed.nb, executed.text
    stages = {
        m[0]: int(m[1])
        for m in re.findall(
            r"^(\w+)\s+(\d+)$", printed(nb, "stops = traced[traced['stopped']]"), re.M
        )
    }
    lost = sum(stages.values())
    total = re.search(r"^total +((?:\d+ +){6}\d+) +\d+$", text, re.M)  # then unjudged_above
    assert total is not None
    assert lost == int(total[1].split()[-1])
    traced = re.search(r"(\d+) lost section\(s\) traced", text)
    assert traced is not None
    expected = min(1, stages.get("cut", 0)) + min(
        1, stages.get("pool", 0) or max(stages.get("cut", 0) - 1, 0)
    )
    assert int(traced[1]) == expected
    shown = re.findall(r"^  (\S.*) stopped at (\w+): ", printed(nb, "for row in picked:"), re.M)
    assert len(shown) == expected
    assert 'class="askkit-data askkit-trace"' in text  # the chains, as HTML
    assert len(askkit_widgets(nb)) == 1  # the ChainView
    changes = re.search(r"(\d+) lost sections, (\d+) changes that keep one", text)
    assert changes is not None
    assert int(changes[1]) <= lost
    # the what-if table as the trace renders it: columns in words, each explained, no NaN
    after = text.split("changes that keep one", 1)[1]
    assert "suggested: the smallest change of that setting that keeps the section" in after
    assert "NaN" not in after
