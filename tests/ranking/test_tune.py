"""askkit.ranking.tune: a sweep over many pools, the best setting per strategy, the one
to recommend, and the summary ``askkit cut`` prints and the report shows."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from askkit._html import esc
from askkit.errors import SchemaError
from askkit.frame import sources_frame
from askkit.ranking import recommend, sweep_cuts
from askkit.ranking.tune import CutSweep, sweep_context_cut
from askkit.retrieve.local import LocalIndex
from tests.conftest import DATA


def test_sweep_context_cut_on_local_pools() -> None:
    index = LocalIndex(DATA / "vault", cache_dir=False, progress=False)
    pools = index.pools(DATA / "queries.tsv")
    # largest-drop reaches recall 0.892 at best on the stemmed pools: ask for 0.85
    cut = sweep_context_cut(
        pools, DATA / "qrels.tsv", strategies=["fixed", "largest-drop"], min_recall=0.85
    )
    sweep = sweep_cuts(pools, DATA / "qrels.tsv", ["fixed", "largest-drop"])
    pd.testing.assert_frame_equal(cut.sweep, sweep)
    assert cut.recommended == recommend(sweep, min_recall=0.85)
    assert (cut.pools, cut.truncated, cut.truncation_note) == (37, 0, "")
    assert cut.best["strategy"].tolist() == ["fixed", "largest-drop"]
    assert cut.best["meets_min_recall"].all()
    assert cut.recommended.label in cut.best["setting"].tolist()
    assert isinstance(cut, CutSweep)
    assert "<pre>[reranker]" in cut._repr_html_()


def test_best_per_strategy_falls_back_to_the_best_recall() -> None:
    index = LocalIndex(DATA / "vault", cache_dir=False, progress=False)
    pools = index.pools(DATA / "queries.tsv")
    cut = sweep_context_cut(pools, DATA / "qrels.tsv", min_recall=1.0)
    fixed = cut.best[cut.best["strategy"] == "fixed"].iloc[0]
    assert not fixed["meets_min_recall"]  # top_k=40 loses a few relevant notes
    assert fixed["setting"] == "fixed top_k=40"
    assert cut.recommended is not None  # score-range keeps the whole pool at cutoff 0
    only_fixed = sweep_context_cut(pools, DATA / "qrels.tsv", min_recall=1.0, strategies=["fixed"])
    assert only_fixed.recommended is None
    assert "no setting keeps recall >= 1.0" in only_fixed.problem
    assert esc(only_fixed.problem) in only_fixed.html()


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"objective": "recall"}, "objective"),
        ({"min_recall": float("nan")}, "min_recall"),
        ({"min_recall": 1.5}, "min_recall"),
        ({"min_recall": -0.1}, "min_recall"),
        ({"min_recall": True}, "min_recall"),
        ({"strategies": ["rerank"]}, "strategies"),
        ({"strategies": []}, "strategies"),
    ],
)
def test_sweep_context_cut_refuses_bad_options(kwargs: dict[str, Any], field: str) -> None:
    frame = sources_frame(DATA / "turns.jsonl")
    with pytest.raises(SchemaError) as info:
        sweep_context_cut(frame, DATA / "qrels.tsv", **kwargs)
    assert info.value.field == field
