"""The embedded BM25 retriever: kimun-shaped results, persistence, incremental updates."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from askkit import AskSource, ChunkResult
from askkit.retrieve import Retriever, as_retriever
from askkit.retrieve.local import LocalIndex, tokenize
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
