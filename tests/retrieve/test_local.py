"""The embedded BM25 retriever: kimun-shaped results, persistence, incremental updates."""

from __future__ import annotations

import json
import os
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from askkit import AskSource, ChunkResult
from askkit.errors import SchemaError, UsageError
from askkit.ranking import CutSettings, cut_len, recommend, sweep_cuts
from askkit.retrieve import Retriever, as_retriever
from askkit.retrieve.local import LocalIndex, _top, tokenize
from askkit.vault import Vault, content_hash

LONG = " ".join(f"Sentence {i} about sourdough hydration and crumb." for i in range(80))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / "journal").mkdir(parents=True)
    (root / "projects").mkdir()
    (root / "journal" / "2026-04-08.md").write_text(
        "# 2026-04-08\n\n## Afternoon\n\nBaked a rye loaf; the starter peaked early.\n"
    )
    (root / "journal" / "2026-04-09.md").write_text("# 2026-04-09\n\nRest day. Read a novel.\n")
    (root / "projects" / "Sourdough.md").write_text(
        "---\ntags: [bread]\n---\n# Sourdough\n\n## Starter\n\n### Feeding schedule\n\n"
        "Feed the starter every 12 hours.\n\n## Long notes\n\n" + LONG + "\n"
    )
    (root / "projects" / "garden.md").write_text(
        "# Garden\n\n## Tomatoes\n\nSeedlings under lights. Crème fraîche is not for plants.\n"
    )
    return root


@pytest.fixture
def index(root: Path, tmp_path: Path) -> LocalIndex:
    return LocalIndex(root, cache_dir=tmp_path / "cache", progress=False)


def test_results_are_shaped_like_kimun_chunks(index: LocalIndex, root: Path) -> None:
    (hit,) = [c for c in index.search("starter peaked rye") if c.path == "journal/2026-04-08.md"]
    assert hit.title == "2026-04-08\x1fAfternoon"
    assert hit.date == "2026-04-08"
    assert hit.hash == content_hash((root / "journal" / "2026-04-08.md").read_bytes())
    assert hit.content == "Baked a rye loaf; the starter peaked early."
    src = AskSource.from_chunk(0, hit)
    assert src.display_heading() == "2026-04-08 · Afternoon"


def test_ordinals_are_ranks_and_scores_descend(index: LocalIndex) -> None:
    hits = index.search("starter", k=5)
    assert [h.ordinal for h in hits] == list(range(1, len(hits) + 1))
    scores = [h.similarity_score for h in hits]
    assert scores == sorted(scores, reverse=True)
    assert all(s > 0 for s in scores)


def test_nested_breadcrumb_title(index: LocalIndex) -> None:
    hits = index.search("feed every 12 hours")
    assert hits[0].title == "Sourdough\x1fStarter\x1fFeeding schedule"
    assert hits[0].path == "projects/sourdough.md"  # sanitized as kimun prints it


def test_one_chunk_per_note_like_the_server(index: LocalIndex) -> None:
    per_note = index.search("sourdough starter crumb hydration", k=10)
    assert len({h.path for h in per_note}) == len(per_note)
    everything = index.search("sourdough starter crumb hydration", k=10, per_note=False)
    assert len(everything) > len(per_note)


def test_long_sections_are_split_like_the_server(index: LocalIndex) -> None:
    chunks = index.chunks
    long = chunks[chunks["title"] == "Sourdough\x1fLong notes"]
    assert len(long) >= 2
    assert all(len(t.encode()) <= 1536 for t in long["text"])
    assert (long["piece"].tolist()) == list(range(len(long)))


def test_frontmatter_chunk_is_indexed(index: LocalIndex) -> None:
    titles = index.chunks["title"].tolist()
    assert "FrontMatter" in titles


def test_accent_folded_matching(index: LocalIndex) -> None:
    assert index.search("creme fraiche")[0].path == "projects/garden.md"
    assert index.search("Crème Fraîche")[0].path == "projects/garden.md"


def test_query_without_known_terms_gives_nothing(index: LocalIndex) -> None:
    assert index.search("zzzqqq") == []
    assert index.search("the and of") == []


@pytest.mark.parametrize("bad", ["", "   ", "\n"])
def test_empty_query_is_refused(index: LocalIndex, bad: str) -> None:
    with pytest.raises(ValueError, match="the query is empty"):
        index.search(bad)


def test_k_is_validated_and_respected(index: LocalIndex) -> None:
    with pytest.raises(ValueError, match="k must be >= 1"):
        index.search("starter", k=0)
    assert len(index.search("sourdough starter rye garden novel", k=2)) == 2


def test_equal_scores_rank_by_path_then_section_at_every_k(tmp_path: Path) -> None:
    root = tmp_path / "ties"
    root.mkdir()
    same = "# Kayak\n\nA kayak paddle.\n"
    for name in ("c.md", "a.md", "b.md"):
        (root / name).write_text(same)
    (root / "d.md").write_text("# Boat\n\n## One\n\nA kayak paddle.\n\n## Two\n\nA kayak paddle.\n")
    (root / "e.md").write_text("# Kayak kayak\n\nA kayak paddle and a kayak.\n")
    index = LocalIndex(root, cache_dir=tmp_path / "c", progress=False)
    full = index.search("kayak", k=10, per_note=False)
    assert [c.path for c in full] == ["e.md", "a.md", "b.md", "c.md", "d.md", "d.md"]
    assert len({c.similarity_score for c in full[1:4]}) == 1
    assert full[4].similarity_score == full[5].similarity_score
    assert [c.title for c in full[-2:]] == ["Boat\x1fOne", "Boat\x1fTwo"]
    for k in range(1, 7):  # the tie at the k-th score is cut in index order, not the kernel's
        assert index.search("kayak", k=k, per_note=False) == [
            replace(c, ordinal=i) for i, c in enumerate(full[:k], 1)
        ]
    (root / "aa.md").write_text(same)
    index.update()
    assert [c.path for c in index.search("kayak", k=4)] == ["e.md", "a.md", "aa.md", "b.md"]


def test_top_equals_a_full_sort_by_score_then_position() -> None:
    rng = np.random.default_rng(7)
    for _ in range(200):
        scores = rng.integers(-1, 4, size=int(rng.integers(1, 60))).astype(np.float32)
        k = int(rng.integers(1, 70))
        rows, got = _top(scores, k)
        order = [i for i in np.lexsort((np.arange(len(scores)), -scores)) if scores[i] > 0][:k]
        assert rows.tolist() == order
        assert got.tolist() == scores[order].astype(np.float64).tolist()


def test_it_is_a_retriever(index: LocalIndex) -> None:
    assert isinstance(index, Retriever)
    hits = as_retriever(index)("starter", k=1)
    assert len(hits) == 1
    assert isinstance(hits[0], ChunkResult)


def test_persists_and_reopens_without_reindexing(root: Path, tmp_path: Path) -> None:
    first = LocalIndex(root, cache_dir=tmp_path / "c", progress=False)
    assert len(first.last_report.added) == 4
    again = LocalIndex(root, cache_dir=tmp_path / "c", progress=False)
    assert not again.last_report.touched
    assert again.last_report.unchanged == 4
    assert again.search("starter") == first.search("starter")


def test_incremental_update_by_hash(root: Path, tmp_path: Path) -> None:
    index = LocalIndex(root, cache_dir=tmp_path / "c", progress=False)
    garden = root / "projects" / "garden.md"
    garden.write_text("# Garden\n\n## Peppers\n\nJalapeño plants need heat.\n")
    os.utime(garden, ns=(time.time_ns(), time.time_ns() + 5_000_000))
    (root / "journal" / "2026-04-09.md").unlink()
    (root / "new.md").write_text("# New\n\nA brand new note about kayaks.\n")
    touched = root / "journal" / "2026-04-08.md"
    os.utime(touched, ns=(time.time_ns(), time.time_ns() + 9_000_000))  # same content
    report = index.update()
    assert report.added == ("new.md",)
    assert report.changed == ("projects/garden.md",)
    assert report.deleted == ("journal/2026-04-09.md",)
    assert report.unchanged == 2
    assert index.search("kayaks")[0].path == "new.md"
    assert index.search("jalapeno")[0].title == "Garden\x1fPeppers"
    assert index.search("novel") == []
    reopened = LocalIndex(root, cache_dir=tmp_path / "c", progress=False)
    assert not reopened.last_report.touched
    assert reopened.search("kayaks")[0].path == "new.md"


def test_in_memory_index_writes_nothing(root: Path, tmp_path: Path) -> None:
    before = set(tmp_path.rglob("*"))
    LocalIndex(root, cache_dir=False, progress=False)
    assert set(tmp_path.rglob("*")) == before


def test_corrupt_cache_is_rebuilt(root: Path, tmp_path: Path) -> None:
    LocalIndex(root, cache_dir=tmp_path / "c", progress=False)
    (tmp_path / "c" / "chunks.parquet").write_bytes(b"garbage")
    with pytest.warns(UserWarning, match=r"index cache .* is damaged: chunks\.parquet"):
        index = LocalIndex(root, cache_dir=tmp_path / "c", progress=False)
    assert len(index.last_report.added) == 4
    assert index.search("starter")


def test_default_cache_location_honours_env(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASKKIT_CACHE_DIR", str(tmp_path / "envcache"))
    index = LocalIndex(root, progress=False)
    assert index.cache_dir is not None
    assert index.cache_dir.parent == tmp_path / "envcache"
    assert (index.cache_dir / "manifest.json").is_file()


def test_explain_sums_to_the_score(index: LocalIndex) -> None:
    hit = index.search("starter rye zzz the")[0]
    table = index.explain("starter rye zzz the", hit)
    assert table["contribution"].sum() == pytest.approx(hit.similarity_score, rel=1e-5)
    status = dict(zip(table["term"], table["status"], strict=True))
    assert status["zzz"] == "not in the vault"
    assert status["the"] == "stop word"
    assert status["rye"] == "matched"


def test_tokenize_folds_and_drops_stopwords() -> None:
    # kimun's folding table maps ß to "s"
    assert tokenize("The Größe of São Paulo, a 2026 trip") == [
        "grose",
        "sao",
        "paulo",
        "2026",
        "trip",
    ]


def test_empty_vault(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    index = LocalIndex(Vault(tmp_path / "empty"), cache_dir=False, progress=False)
    assert len(index) == 0
    assert index.search("anything") == []


# -- the candidate pool ------------------------------------------------------------------


@pytest.fixture
def twins(root: Path) -> Path:
    """A note with two identical sections: kimun's pool de-duplicates them."""
    (root / "twins.md").write_text(
        "# Twins\n\n## Same\n\nKayak paddle strokes.\n\n## Same\n\nKayak paddle strokes.\n"
    )
    return root


def test_pool_is_best_first_chunk_level_with_ordinals(index: LocalIndex) -> None:
    pool = index.pool("sourdough starter crumb hydration")
    scores = [c.similarity_score for c in pool]
    assert scores == sorted(scores, reverse=True)
    assert [c.ordinal for c in pool] == list(range(1, len(pool) + 1))
    paths = [c.path for c in pool]
    assert len(set(paths)) < len(paths)  # a note appears more than once


def test_pool_equals_the_chunk_level_search(index: LocalIndex) -> None:
    query = "sourdough starter crumb hydration rye"
    assert index.pool(query) == index.search(query, k=80, per_note=False)
    assert index.pool(query, size=3) == index.search(query, k=3, per_note=False)


@pytest.mark.parametrize("size", [1, 2, 5, 80])
def test_pool_holds_at_most_size_chunks(index: LocalIndex, size: int) -> None:
    pool = index.pool("sourdough starter crumb hydration", size)
    assert 1 <= len(pool) <= size


def test_pool_size_defaults_to_the_index_pool(root: Path) -> None:
    index = LocalIndex(root, cache_dir=False, progress=False, pool=2)
    assert index.pool_size == 2
    assert len(index.pool("sourdough starter crumb hydration")) == 2


def test_pool_deduplicates_identical_chunks(twins: Path) -> None:
    index = LocalIndex(twins, cache_dir=False, progress=False)
    raw = index.search("kayak paddle", k=80, per_note=False)
    assert [c.path for c in raw] == ["twins.md", "twins.md"]
    (only,) = index.pool("kayak paddle")
    assert (only.path, only.ordinal, only.similarity_score) == (
        "twins.md",
        1,
        raw[0].similarity_score,
    )


def test_pool_validates_its_input(index: LocalIndex) -> None:
    with pytest.raises(ValueError, match="size must be >= 1"):
        index.pool("starter", 0)
    with pytest.raises(ValueError, match="the query is empty"):
        index.pool("  ")
    assert index.pool("zzzqqq") == []


def test_pools_frame_from_a_mapping(index: LocalIndex) -> None:
    frame = index.pools({"b": "starter rye", "a": "garden tomatoes", "z": "zzzqqq"}, size=3)
    assert list(frame.columns) == ["query_id", "rank", "path", "score", "title", "text"]
    assert list(dict.fromkeys(frame["query_id"])) == ["b", "a"]  # given order; no match, no rows
    first = frame[frame["query_id"] == "b"]
    pool = index.pool("starter rye", 3)
    assert first["rank"].tolist() == [c.ordinal for c in pool]
    assert first["path"].tolist() == [c.path for c in pool]
    assert first["score"].tolist() == [c.similarity_score for c in pool]
    assert first["text"].tolist() == [c.content for c in pool]
    assert frame.dtypes["rank"] == "int64"
    assert frame.dtypes["score"] == "float64"


def test_pools_from_a_frame_or_a_tsv(index: LocalIndex, tmp_path: Path) -> None:
    queries = pd.DataFrame({"query_id": ["q1", "q2"], "question": ["starter", "garden"]})
    tsv = tmp_path / "queries.tsv"
    queries.to_csv(tsv, sep="\t", index=False)
    by_frame = index.pools(queries)
    pd.testing.assert_frame_equal(by_frame, index.pools(tsv))
    pd.testing.assert_frame_equal(by_frame, index.pools({"q1": "starter", "q2": "garden"}))
    renamed = queries.rename(columns={"question": "text"})
    pd.testing.assert_frame_equal(by_frame, index.pools(renamed))


def test_pools_of_no_queries_is_empty_with_the_schema(index: LocalIndex) -> None:
    frame = index.pools({})
    assert frame.empty
    assert list(frame.columns) == ["query_id", "rank", "path", "score", "title", "text"]


@pytest.mark.parametrize(
    ("queries", "message"),
    [
        (pd.DataFrame({"id": ["q1"], "text": ["x"]}), "query_id column"),
        (pd.DataFrame({"query_id": ["q1", "q1"], "text": ["x", "y"]}), "duplicate query id"),
        ({"q1": "   "}, "the query text is empty"),
    ],
)
def test_pools_refuses_bad_queries(index: LocalIndex, queries: Any, message: str) -> None:
    with pytest.raises(SchemaError, match=message):
        index.pools(queries)


def test_pools_refuses_a_missing_queries_file(index: LocalIndex, tmp_path: Path) -> None:
    with pytest.raises(SchemaError, match="no such queries file"):
        index.pools(tmp_path / "nope.tsv")


def test_bundled_pools_feed_sweep_cuts(data_dir: Path) -> None:
    index = LocalIndex(data_dir / "vault", cache_dir=False, progress=False)
    pools = index.pools(data_dir / "queries.tsv")
    assert pools.groupby("query_id").size().max() <= 80
    sweep = sweep_cuts(pools, data_dir / "qrels.tsv")
    assert sweep["judged_queries"].iloc[0] > 0
    whole = sweep[(sweep["strategy"] == "score-range") & (sweep["score_range_cutoff"] == 0.0)]
    assert whole["recall"].iloc[0] == 1.0
    assert recommend(sweep).strategy in ("fixed", "score-range", "largest-drop")


def test_search_cut_previews_the_cut_on_the_pool(index: LocalIndex) -> None:
    query = "sourdough starter crumb hydration rye"
    pool = index.pool(query)
    preview = index.search_cut(query)
    assert preview.pool_chunks == len(pool)
    assert list(preview.context) == pool[: cut_len(pool)]
    fixed = index.search_cut(query, CutSettings(strategy="fixed", top_k=2))
    assert list(fixed.context) == pool[:2]
    assert fixed.boundary == (pool[1].similarity_score, pool[2].similarity_score)


# --- kimun's chunker versions -------------------------------------------------------------


def test_the_chunker_version_cuts_the_notes(tmp_path: Path) -> None:
    """kimun 0.18 (default) keeps a wikilink in code as written, 0.17 collapsed it; a server
    holding either answers with its own chunk texts, and so does the local index."""
    (tmp_path / "n.md").write_text("# Links\nUse `[[x]]` and [[y|Y]] here.\n", encoding="utf-8")
    newer = LocalIndex(tmp_path, cache_dir=False, progress=False)
    older = LocalIndex(tmp_path, cache_dir=False, progress=False, kimun="0.17")
    assert (newer.kimun, older.kimun) == ("0.18", "0.17")
    assert [c.content for c in newer.search("here")] == ["Use `[[x]]` and Y here."]
    assert [c.content for c in older.search("here")] == ["Use `x` and Y here."]


def test_the_chunker_version_is_part_of_the_cache_key(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "n.md").write_text("# Links\nUse `[[x]]` here.\n", encoding="utf-8")
    cache = tmp_path / "cache"
    LocalIndex(vault, cache_dir=cache, progress=False, kimun="0.17")
    manifest = json.loads((cache / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["params"]["kimun"] == "0.17"
    reopened = LocalIndex(vault, cache_dir=cache, progress=False)
    assert reopened.last_report.added == ("n.md",)  # 0.17's cache was not read: rebuilt
    assert [c.content for c in reopened.search("here")] == ["Use `[[x]]` here."]
    again = LocalIndex(vault, cache_dir=cache, progress=False)
    assert not again.last_report.touched  # its own cache is read


def test_an_unknown_chunker_version_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="kimun must be one of"):
        LocalIndex(tmp_path, cache_dir=False, progress=False, kimun="0.16")  # type: ignore[arg-type]
