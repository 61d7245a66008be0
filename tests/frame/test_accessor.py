"""The df.ask accessor on a sources frame."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from askkit import Turn
from askkit.frame import sources_frame, to_sources
from askkit.payloads import read_turn


@pytest.fixture
def df(data_dir: Path) -> pd.DataFrame:
    return sources_frame(data_dir / "turns.jsonl")


def test_accessor_needs_a_sources_frame() -> None:
    with pytest.raises(AttributeError, match="sources frame"):
        _ = pd.DataFrame({"a": [1]}).ask


def test_sources_and_turn(df: pd.DataFrame, data_dir: Path) -> None:
    assert df.ask.sources() == to_sources(df)
    starter = sources_frame(data_dir / "sample_turn.json")
    turn = starter.ask.turn("q-starter")
    assert isinstance(turn, Turn)
    assert turn == read_turn(data_dir / "sample_turn.json")
    assert turn.dangling_citations() == [7]
    with pytest.raises(KeyError, match="no turn 'nope'"):
        df.ask.turn("nope")


@pytest.mark.parametrize("k", [0, 1, 2, 100])
def test_top_k(df: pd.DataFrame, k: int) -> None:
    top = df.ask.top(k)
    sizes = df.groupby("turn_id", sort=False).size()
    assert top.groupby("turn_id", sort=False).size().reindex(
        sizes.index, fill_value=0
    ).tolist() == [min(k, n) for n in sizes]
    for turn_id, rows in top.groupby("turn_id", sort=False):
        best = df[df["turn_id"] == turn_id]["score"].nlargest(len(rows)).tolist()
        assert rows["score"].tolist() == best
    if k:
        assert top["turn_id"].drop_duplicates().tolist() == df["turn_id"].drop_duplicates().tolist()


def test_top_keeps_list_order_on_ties() -> None:
    wire = [
        {"path": f"{n}.md", "title": n, "content": "", "hash": "", "similarity_score": s}
        for n, s in [("a", 0.5), ("b", 0.9), ("c", 0.9)]
    ]
    assert sources_frame(wire).ask.top(2)["path"].tolist() == ["b.md", "c.md"]


def test_top_rejects_negative_k(df: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match="k must be"):
        df.ask.top(-1)


def test_by_note_deduplicates_split_chunks(data_dir: Path) -> None:
    df = sources_frame(data_dir / "embeddings.json")
    notes = df.ask.by_note()
    sourdough = notes[notes["path"] == "projects/sourdough.md"].iloc[0]
    assert sourdough["chunks"] == 2  # one section split into two chunks
    assert sourdough["sections"] == 1
    assert sourdough["ordinals"] == [1, 3]
    assert sourdough["best_score"] == df["score"].max()
    assert notes["best_score"].is_monotonic_decreasing
    assert notes["chunks"].sum() == len(df)
    assert len(notes) == df["path"].nunique()


def test_by_note_per_turn(df: pd.DataFrame) -> None:
    notes = df.ask.by_note()
    assert notes["chunks"].sum() == len(df)
    assert len(notes) == len(df[["turn_id", "path"]].drop_duplicates())
    cited = df.groupby(["turn_id", "path"])["cited"].any()
    assert notes.set_index(["turn_id", "path"])["cited"].sort_index().tolist() == (
        cited.sort_index().tolist()
    )


def test_describe_scores(df: pd.DataFrame) -> None:
    summary = df.ask.describe_scores()
    assert summary.index.tolist() == df["turn_id"].drop_duplicates().tolist()
    grouped = df.groupby("turn_id", sort=False)["score"]
    pd.testing.assert_series_equal(summary["top"], grouped.max(), check_names=False)
    pd.testing.assert_series_equal(summary["std"], grouped.std(ddof=0), check_names=False)
    assert summary["sources"].sum() == len(df)
    assert summary["cited"].sum() == df["cited"].sum()
    two = df.groupby("turn_id", sort=False)["score"].apply(
        lambda s: s.nlargest(2).iloc[0] - s.nlargest(2).iloc[-1] if len(s) > 1 else float("nan")
    )
    pd.testing.assert_series_equal(summary["top_gap"], two, check_names=False)
    assert (summary.loc["q-oven", "top_gap"]) == 0.0  # a tie at the top


def test_describe_scores_single_source() -> None:
    one = sources_frame(
        [{"path": "a.md", "title": "A", "content": "", "hash": "", "similarity_score": 0.3}]
    )
    row = one.ask.describe_scores().iloc[0]
    assert row["sources"] == 1
    assert row["std"] == 0.0
    assert pd.isna(row["top_gap"])


def test_stored_says_how_each_chunk_relates_to_its_note_now(tmp_path: Path) -> None:
    """A chunk kimun cuts from the note now, one cut before the note changed, one an older
    kimun cut from the unchanged note, and one whose note is gone."""
    from askkit import AskSource, ChunkResult
    from askkit.vault import Vault

    (tmp_path / "links.md").write_text("# Links\nSee `[[x]]` and [[y|Y]].\n", encoding="utf-8")
    (tmp_path / "bread.md").write_text("# Bread\nRye only now.\n", encoding="utf-8")
    vault = Vault(tmp_path)
    links = vault.hash("links.md")
    chunks = [
        ChunkResult("links.md", "Links", None, "See `[[x]]` and Y.", links, 0.9, 1),
        ChunkResult("bread.md", "Bread", None, "Wheat and rye.", "42", 0.8, 2),
        ChunkResult("links.md", "Links", None, "See `x` and Y.", links, 0.7, 3),
        ChunkResult("gone.md", "Gone", None, "text", "7", 0.6, 4),
    ]
    frame = sources_frame([Turn("q", "", AskSource.from_chunks(chunks))])
    before = frame.copy()
    out = frame.ask.stored(tmp_path)
    assert out["stored"].tolist() == ["current", "note changed", "older kimun", "note missing"]
    assert out.drop(columns="stored").equals(frame)
    pd.testing.assert_frame_equal(frame, before)  # the caller's frame is not modified
    older = frame.ask.stored(vault, kimun="0.17")["stored"].tolist()
    assert older == ["older kimun", "note changed", "current", "note missing"]
