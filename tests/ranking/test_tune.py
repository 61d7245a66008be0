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


def test_every_pool_truncated_gives_no_recommendation_and_says_why() -> None:
    # the bundled run: each query's 10 best sections, as a log of answers would hold them
    frame = sources_frame(DATA / "run.jsonl")
    cut = sweep_context_cut(frame, DATA / "qrels.tsv")
    assert cut.all_truncated
    assert cut.truncated == cut.pools == 37
    assert cut.recommended is None
    assert cut.toml == ""
    note = cut.truncation_note
    assert note.startswith("The server's cut already truncated 37 of 37 pools")
    assert "how much of the judged-relevant notes a tighter cut" in note
    assert "cannot tell what a looser cut would add" in note
    assert 'context_cut = "fixed", top_k = 80' in note
    page = cut.html()
    assert "[reranker]\n" not in page
    assert "<pre>" not in page
    assert "no [reranker] block" in page
    assert esc(note) in page


def test_some_pools_truncated_still_recommend_and_say_how_they_read() -> None:
    chunks = LocalIndex(DATA / "vault", cache_dir=False, progress=False).chunks
    first = chunks["path"].eq("projects/sourdough.md").to_numpy()  # q01's judged note
    rows = pd.concat([chunks[first], chunks[~first]]).head(80)

    def pool(n: int) -> list[dict[str, Any]]:
        return [
            {"path": path, "title": title, "content": text, "hash": "h", "ordinal": i + 1,
             "similarity_score": 1.0 - i / 100}
            for i, (path, title, text) in enumerate(
                zip(rows["path"], rows["title"], rows["text"], strict=True)
            )
        ][:n]  # fmt: skip

    # q01's pool whole (80 chunks), q02's and q03's cut to 10
    records = [{"id": q, "question": q, "chunks": pool(80 if q == "q01" else 10)}
               for q in ("q01", "q02", "q03")]  # fmt: skip
    cut = sweep_context_cut(sources_frame(records), DATA / "qrels.tsv", min_recall=0.5)
    assert (cut.pools, cut.truncated) == (3, 2)
    assert not cut.all_truncated
    assert cut.recommended is not None
    assert cut.toml == cut.recommended.to_toml()
    assert cut.truncation_note.endswith(
        "Those pools read as if the server's cut were the whole pool."
    )
