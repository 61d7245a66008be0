"""The regression gate: its verdict, the regressed queries, the query sets, the checks."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from askkit.errors import SchemaError, UsageError
from askkit.gate import gate
from askkit.metrics import read_qrels
from tests.gate.conftest import QRELS, RUN, bundled


def test_a_run_against_itself_passes() -> None:
    result = gate(RUN, RUN, QRELS)
    assert result.passed
    assert result.exit_status == 0
    assert [m.measure for m in result.measures] == ["ndcg@10", "recall@10"]
    assert all(m.delta == 0.0 and m.p == 1.0 and m.losses == 0 for m in result.measures)
    assert result.regressions == ()
    assert result.regressed_queries == ()
    assert result.queries == 37
    assert result.verdict.startswith("PASS")


def test_relevant_notes_pushed_down_in_a_third_of_the_queries_fail_and_are_listed(
    regression: tuple[pd.DataFrame, list[str]],
) -> None:
    new, chosen = regression
    assert len(chosen) >= 10
    result = gate(bundled(), new, QRELS)
    assert not result.passed
    assert result.exit_status == 1
    assert {m.measure for m in result.regressions} == {"ndcg@10", "recall@10"}
    listed = [q.query_id for q in result.regressed_queries]
    assert set(listed) == set(chosen)
    worst = [min(q.deltas.values()) for q in result.regressed_queries]
    assert worst == sorted(worst)  # worst first
    judged = read_qrels(QRELS)
    for q in result.regressed_queries:
        assert q.lost, q.query_id
        relevant = set(judged.loc[judged["query_id"] == q.query_id, "path"])
        for d in q.lost:
            assert d.doc in relevant
            assert d.base_rank <= 10
            assert d.new_rank is not None
            assert d.new_rank > 10
            assert d.stage == "top k"
            assert d.grade >= 1
    text = result.to_text(max_queries=100)
    assert text.startswith("FAIL: ndcg@10, recall@10 dropped significantly")
    assert all(f"  {q}: " in text for q in chosen)
    assert "left the top 10" in text


def test_at_section_level_the_pushed_down_sections_are_listed(
    regression: tuple[pd.DataFrame, list[str]],
) -> None:
    new, chosen = regression
    result = gate(bundled(), new, QRELS, level="section")
    assert result.exit_status == 1
    listed = {q.query_id for q in result.regressed_queries}
    assert listed <= set(chosen)
    assert len(listed) >= len(chosen) // 2
    docs = [d.doc for q in result.regressed_queries for d in q.lost]
    assert docs
    assert all("#" in d or d.endswith(".md") for d in docs)
    assert any("#" in d for d in docs)  # sections, not notes


def test_improvements_never_fail(regression: tuple[pd.DataFrame, list[str]]) -> None:
    new, _ = regression
    result = gate(new, bundled(), QRELS)
    assert result.passed
    assert result.exit_status == 0
    assert len(result.improvements) == 2
    assert result.regressions == ()


def test_a_drop_smaller_than_min_delta_passes(regression: tuple[pd.DataFrame, list[str]]) -> None:
    new, _ = regression
    drop = -min(m.delta for m in gate(bundled(), new, QRELS).measures)
    assert gate(bundled(), new, QRELS, min_delta=drop + 0.01).passed
    assert not gate(bundled(), new, QRELS, min_delta=drop - 0.01).passed


def test_runs_over_different_queries_are_refused_unless_partial(
    regression: tuple[pd.DataFrame, list[str]],
) -> None:
    frame = bundled()
    fewer = frame[~frame["turn_id"].isin(["q01", "q02", "q03"])]
    with pytest.raises(UsageError, match=r"BASE lacks 0 and NEW lacks 3.*--allow-partial"):
        gate(frame, fewer, QRELS)
    result = gate(frame, fewer, QRELS, allow_partial=True)
    assert result.queries == 34
    assert result.new.lacks == 3
    assert result.base.lacks == 0
    assert any("partial comparison on 34 queries" in n for n in result.notes)
    extra = pd.concat([frame, frame[frame["turn_id"] == "q01"].assign(turn_id="zz")])
    with pytest.raises(UsageError, match="NEW 1 queries the qrels do not judge"):
        gate(frame, extra, QRELS)
    first = frame["turn_id"] < "q19"
    with pytest.raises(UsageError, match="no judged query is answered by both"):
        gate(frame[first], frame[~first], QRELS, allow_partial=True)
    # a side that shares no query id with the judgments is named, with ids of each
    with pytest.raises(UsageError, match=r"^NEW and .*qrels.tsv share no query id.*xq01"):
        gate(frame, frame.assign(turn_id="x" + frame["turn_id"]), QRELS, allow_partial=True)


def test_an_unjudged_top_k_fails_with_max_unjudged_and_is_noted_without(
    regression: tuple[pd.DataFrame, list[str]],
) -> None:
    new, _chosen = regression
    result = gate(bundled(), new, QRELS)
    share = result.new.judged_share
    assert result.base.judged_share > share  # the filler is unjudged
    top = new.sort_values("score", ascending=False).groupby("turn_id").head(10)
    top_notes = top.drop_duplicates(["turn_id", "path"])
    judged = read_qrels(QRELS)
    keys = set(zip(judged["query_id"], judged["path"], strict=True))
    expected = np.mean(
        [k in keys for k in zip(top_notes["turn_id"], top_notes["path"], strict=True)]
    )
    assert share == pytest.approx(expected)
    assert any("unjudged" in n for n in result.notes)  # mostly unjudged: a note
    strict = gate(bundled(), new, QRELS, max_unjudged=0.5)
    assert strict.problems
    assert "unjudged" in strict.problems[0]
    assert strict.exit_status == 1
    same = gate(bundled(), bundled(), QRELS, max_unjudged=0.5)
    assert not same.passed  # the bundled run's top 10 is mostly unjudged too
    assert gate(bundled(), bundled(), QRELS, max_unjudged=0.9).passed


def test_bad_options_are_usage_errors() -> None:
    for kwargs in (
        {"alpha": 0.0},
        {"alpha": 1.5},
        {"min_delta": -0.1},
        {"min_delta": math.nan},
        {"resamples": 0},
        {"test": "z-test"},
        {"k": 0},
        {"max_unjudged": 2.0},
    ):
        with pytest.raises(UsageError):
            gate(RUN, RUN, QRELS, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(SchemaError, match="not a measure name"):
        gate(RUN, RUN, QRELS, ["ndcg@ten"])


def test_large_runs_prepared_in_two_threads_give_the_same_result(
    regression: tuple[pd.DataFrame, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    import askkit.gate.core

    new, _ = regression
    one_by_one = gate(bundled(), new, QRELS)
    monkeypatch.setattr(askkit.gate.core, "_THREADED_ROWS", 0)
    assert gate(bundled(), new, QRELS) == one_by_one
