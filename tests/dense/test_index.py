"""askkit's dense index of a vault: kimun's chunks, kimun's incremental indexing, kimun's store.

kimun's behaviour pinned here is ``KimunRag::index`` and ``search`` in
``server/src/lib.rs`` at f28bdd5426c7c22f67601f62f588e958c35e43e1 (the
reconcile by note hash, delete-then-store, the vector cache keyed by title +
text, the fingerprint gate of ``enforce_embedder_fingerprint``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from askkit.dense.index import NOTES_FILE, DenseIndex, default_store_folder
from askkit.dense.store import DB_FILE, KimunStore
from askkit.dense.store_retriever import StoreRetriever
from askkit.dense.vectors import normalise
from askkit.errors import DimensionError, ProtocolError, SchemaError, StoreError, UsageError
from askkit.ranking import CutSettings, search_rows
from askkit.ranking.pools import POOL_COLUMNS
from askkit.retrieve import Retriever, as_retriever
from askkit.retrieve.local import LocalIndex
from askkit.wire import ChunkResult
from tests.test_cachedir import spoil

_WORD = re.compile(r"\w+")

LONG = "\n\n".join(
    f"Paragraph {i}: the rye starter rose {i} times while the oven preheated slowly." * 3
    for i in range(12)
)


class CountingEmbedder:
    """A deterministic bag-of-words embedder that records every text it embeds.

    Each word adds a signed unit to a bucket chosen by its hash, so texts that
    share words point the same way; ``salt`` changes every vector (same
    fingerprint), to tell a reused stored vector from a fresh one.
    """

    def __init__(
        self,
        dimension: int = 16,
        *,
        salt: str = "",
        name: str = "test:bag-of-words",
        fingerprint: str | None = None,
    ) -> None:
        self.name = name
        self._fingerprint = fingerprint or f"{name}:{dimension}"
        self._dimension = dimension
        self.salt = salt
        self.calls: list[list[tuple[str, str]]] = []
        self.queries: list[str] = []

    @property
    def fingerprint(self) -> str:
        return self._fingerprint

    @property
    def dimension(self) -> int | None:
        return self._dimension

    @property
    def texts(self) -> list[tuple[str, str]]:
        return [pair for call in self.calls for pair in call]

    def vector(self, text: str) -> np.ndarray[Any, Any]:
        out = np.full(self._dimension, 0.05, dtype=np.float64)
        for word in _WORD.findall((self.salt + " " + text).lower()):
            digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
            bucket = int.from_bytes(digest[:3], "little") % self._dimension
            out[bucket] += 1.0 if digest[3] & 1 else -0.5
        return out.astype(np.float32)

    def embed_documents(
        self, chunks: Sequence[tuple[str, str]], *, progress: bool | None = None
    ) -> np.ndarray[Any, Any]:
        self.calls.append(list(chunks))
        rows = [self.vector(title + "\n" + text) for title, text in chunks]
        if not rows:
            return np.empty((0, self._dimension), dtype=np.float32)
        return np.stack(rows)

    def embed_query(self, query: str) -> np.ndarray[Any, Any]:
        self.queries.append(query)
        return self.vector(query)


def reference_scores(embedder: CountingEmbedder, chunks: pd.DataFrame, query: str) -> np.ndarray:
    """Brute force in float64: cosine of the query with every chunk's own embedding."""
    docs = np.stack(
        [
            embedder.vector(t + "\n" + x)
            for t, x in zip(chunks["title"], chunks["text"], strict=True)
        ]
    ).astype(np.float64)
    docs /= np.linalg.norm(docs, axis=1, keepdims=True)
    q = embedder.vector(query).astype(np.float64)
    return docs @ (q / np.linalg.norm(q))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / "journal").mkdir(parents=True)
    (root / "projects").mkdir()
    (root / "journal" / "2026-04-08.md").write_text(
        "# 2026-04-08\n\n## Afternoon\n\nBaked a rye loaf; the starter peaked early.\n"
    )
    (root / "journal" / "2026-04-09.md").write_text("# 2026-04-09\n\nRest day. Read a novel.\n")
    (root / "projects" / "sourdough.md").write_text(
        "# Sourdough\n\n## Starter\n\nFeed the starter every 12 hours.\n\n"
        "## Long notes\n\n" + LONG + "\n\n## Baking\n\nBake at 250 C with steam.\n"
    )
    (root / "projects" / "garden.md").write_text(
        "# Garden\n\n## Tomatoes\n\nSeedlings under lights, watered daily.\n"
    )
    return root


def stored(folder: Path, vault_id: str) -> tuple[pd.DataFrame, np.ndarray]:
    """A store's rows (by KimunStore, the reader of kimun's own stores), sorted as the index."""
    with KimunStore(folder) as store:
        vault = store.load(vault_id)
    order = sorted(range(len(vault.chunks)), key=lambda i: vault.chunks["path"].iloc[i])
    return vault.chunks.iloc[order].reset_index(drop=True), np.asarray(vault.matrix)[order]


# -- the chunks and the first index -------------------------------------------------------------


def test_the_index_holds_the_chunks_the_bm25_index_holds(root: Path) -> None:
    """Dense and BM25 index the same kimun chunks (one chunking rule: note_chunks)."""
    index = DenseIndex(root, CountingEmbedder(), store=False, progress=False)
    bm25 = LocalIndex(root, cache_dir=False, progress=False).chunks
    columns = ["path", "hash", "title", "date", "text"]
    expected = bm25[columns].sort_values("path", kind="stable").reset_index(drop=True)
    got = index.chunks[columns]
    assert got["path"].tolist() == expected["path"].tolist()
    assert got["text"].tolist() == expected["text"].tolist()
    assert got["title"].tolist() == expected["title"].tolist()
    assert got["hash"].tolist() == expected["hash"].tolist()
    assert [d if isinstance(d, str) else None for d in got["date"]] == [
        d if isinstance(d, str) else None for d in expected["date"]
    ]
    assert len(index) > 4  # the long section was split into several chunks


def test_the_chunker_version_cuts_the_embedded_chunks(tmp_path: Path) -> None:
    """``kimun="0.17"`` embeds the chunks kimun 0.17 cut."""
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "n.md").write_text("# Links\nUse `[[x]]` here.\n", encoding="utf-8")
    older = DenseIndex(vault, CountingEmbedder(), store=False, progress=False, kimun="0.17")
    newer = DenseIndex(vault, CountingEmbedder(), store=False, progress=False)
    assert older.chunks["text"].tolist() == ["Use `x` here."]
    assert newer.chunks["text"].tolist() == ["Use `[[x]]` here."]


def test_issue41_1_a_store_never_hands_one_kimun_versions_chunks_to_another(
    tmp_path: Path,
) -> None:
    """A store another kimun version cut has every note cut again, said in a warning; a
    chunk both versions cut alike keeps its vector. Before, the 0.17 chunks stayed."""
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "n.md").write_text("# Links\nUse `[[x]]` here.\n", encoding="utf-8")
    (vault / "same.md").write_text("# Same\nNo links at all.\n", encoding="utf-8")
    folder = tmp_path / "store"
    DenseIndex(vault, CountingEmbedder(), store=folder, progress=False, kimun="0.17")
    embedder = CountingEmbedder()
    with pytest.warns(UserWarning, match=r"kimun 0\.17's chunker cut, not kimun 0\.18's"):
        newer = DenseIndex(vault, embedder, store=folder, progress=False)
    assert sorted(newer.chunks["text"]) == ["No links at all.", "Use `[[x]]` here."]
    assert embedder.texts == [("Links", "Use `[[x]]` here.")]  # the other chunk kept its vector
    with KimunStore(folder) as store:
        assert sorted(store.load("vault").chunks["text"]) == sorted(newer.chunks["text"])
    again = CountingEmbedder()
    DenseIndex(vault, again, store=folder, progress=False)  # recorded: nothing to cut again
    assert again.calls == []
    with pytest.warns(UserWarning, match=r"kimun 0\.18's chunker cut, not kimun 0\.17's"):
        back = DenseIndex(vault, CountingEmbedder(), store=folder, progress=False, kimun="0.17")
    assert back.chunks["text"].tolist().count("Use `x` here.") == 1


def test_the_first_index_embeds_every_chunk_once_in_one_call(root: Path) -> None:
    embedder = CountingEmbedder()
    index = DenseIndex(root, embedder, store=False, progress=False)
    assert len(embedder.calls) == 1
    assert embedder.texts == list(zip(index.chunks["title"], index.chunks["text"], strict=True))
    assert index.last_embedded == len(index)
    assert index.last_reused == 0
    assert sorted(index.last_report.added) == sorted(
        [
            "journal/2026-04-08.md",
            "journal/2026-04-09.md",
            "projects/sourdough.md",
            "projects/garden.md",
        ]
    )


def test_rows_are_normalised_as_kimun_stores_them(root: Path) -> None:
    embedder = CountingEmbedder()
    index = DenseIndex(root, embedder, store=False, progress=False)
    norms = np.linalg.norm(index.matrix.astype(np.float64), axis=1)
    np.testing.assert_allclose(norms, 1.0, atol=1e-6)
    assert index.matrix.dtype == np.float32
    assert index.matrix.flags.c_contiguous
    with pytest.raises(ValueError, match="read-only"):
        index.matrix[0, 0] = 2.0


# -- incremental indexing -------------------------------------------------------------------------


def test_reopening_an_unchanged_vault_embeds_nothing(root: Path, tmp_path: Path) -> None:
    folder = tmp_path / "store"
    DenseIndex(root, CountingEmbedder(), store=folder, progress=False)
    again = CountingEmbedder()
    index = DenseIndex(root, again, store=folder, progress=False)
    assert again.calls == []
    assert index.last_report.unchanged == 4
    assert not index.last_report.touched
    assert len(index) > 4


def test_a_touched_but_unchanged_note_is_rehashed_not_reembedded(
    root: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "store"
    DenseIndex(root, CountingEmbedder(), store=folder, progress=False)
    note = root / "projects" / "garden.md"
    note.write_bytes(note.read_bytes())  # a new mtime, the same hash
    again = CountingEmbedder()
    index = DenseIndex(root, again, store=folder, progress=False)
    assert again.calls == []
    assert index.last_report.unchanged == 4


def test_a_note_of_the_same_size_and_mtime_is_not_read_again(root: Path, tmp_path: Path) -> None:
    """Like the BM25 index: size and modification time first, the hash only when they differ."""
    folder = tmp_path / "store"
    DenseIndex(root, CountingEmbedder(), store=folder, progress=False)
    note = root / "projects" / "garden.md"
    st = note.stat()
    note.write_text(note.read_text().replace("daily", "DAILY"))  # same size
    os.utime(note, ns=(st.st_atime_ns, st.st_mtime_ns))
    quiet = CountingEmbedder()
    index = DenseIndex(root, quiet, store=folder, progress=False)
    assert quiet.calls == []
    assert index.last_report.unchanged == 4
    (folder / NOTES_FILE).write_text("{not json")  # the record is only a shortcut
    reread = CountingEmbedder()
    index = DenseIndex(root, reread, store=folder, progress=False)
    # without the record, the kimun version that cut the store is unknown: every note is
    # read and cut again, and only the chunk that changed is embedded
    assert len(index.last_report.changed) == 4
    assert reread.texts == [("Garden\x1fTomatoes", "Seedlings under lights, watered DAILY.")]


def test_editing_one_section_embeds_only_the_changed_chunk(root: Path, tmp_path: Path) -> None:
    folder = tmp_path / "store"
    first = DenseIndex(root, CountingEmbedder(), store=folder, progress=False)
    note = root / "projects" / "sourdough.md"
    note.write_text(note.read_text().replace("Bake at 250 C", "Bake at 240 C"))
    embedder = CountingEmbedder()
    index = DenseIndex(root, embedder, store=folder, progress=False)
    assert index.last_report.changed == ("projects/sourdough.md",)
    assert embedder.texts == [("Sourdough\x1fBaking", "Bake at 240 C with steam.")]
    sourdough = index.chunks["path"] == "projects/sourdough.md"
    assert index.last_embedded == 1
    assert index.last_reused == int(sourdough.sum()) - 1
    assert len(index) == len(first)


def test_unchanged_chunks_of_a_changed_note_keep_their_stored_vectors(
    root: Path, tmp_path: Path
) -> None:
    """kimun's vector cache: a reused chunk keeps the stored vector; the embedder is not asked.

    The second embedder has the same fingerprint but makes other vectors, so a
    chunk that was embedded again would show it. kimun stores a reused vector
    through ``to_blob`` again, so it is the old one normalised once more (equal
    up to the last bit of float32).
    """
    folder = tmp_path / "store"
    first = DenseIndex(root, CountingEmbedder(), store=folder, progress=False)
    chunks = first.chunks
    old = {(t, x): v for t, x, v in zip(chunks["title"], chunks["text"], first.matrix, strict=True)}
    note = root / "projects" / "sourdough.md"
    note.write_text(note.read_text().replace("every 12 hours", "every 8 hours"))
    salted = CountingEmbedder(salt="another model build")
    index = DenseIndex(root, salted, store=folder, progress=False)
    chunks, matrix = stored(folder, index.vault_id)
    rows = zip(chunks["path"], chunks["title"], chunks["text"], matrix, strict=True)
    for path, title, text, vector in rows:
        if path != "projects/sourdough.md":  # untouched notes: their rows as they were
            np.testing.assert_array_equal(vector, old[(title, text)])
        elif (title, text) in old:  # reused: stored again, bit for bit as kimun would
            np.testing.assert_array_equal(vector, normalise(old[(title, text)]))
            np.testing.assert_allclose(vector, old[(title, text)], atol=1e-7)
        else:
            assert text == "Feed the starter every 8 hours."
            assert not np.allclose(
                vector, old[("Sourdough\x1fStarter", "Feed the starter every 12 hours.")]
            )
    assert salted.texts == [("Sourdough\x1fStarter", "Feed the starter every 8 hours.")]


def test_in_memory_reindexing_reuses_vectors_too(root: Path) -> None:
    embedder = CountingEmbedder()
    index = DenseIndex(root, embedder, store=False, progress=False)
    note = root / "projects" / "garden.md"
    note.write_text(note.read_text() + "\n## Beans\n\nSow after the frost.\n")
    embedder.calls.clear()
    report = index.update()
    assert report.changed == ("projects/garden.md",)
    assert embedder.texts == [("Garden\x1fBeans", "Sow after the frost.")]
    assert index.last_reused == 1


def test_a_new_note_is_added_and_only_it_is_embedded(root: Path, tmp_path: Path) -> None:
    folder = tmp_path / "store"
    index = DenseIndex(root, CountingEmbedder(), store=folder, progress=False)
    (root / "projects" / "oven.md").write_text("# Oven\n\nPreheat for an hour.\n")
    embedder = CountingEmbedder()
    again = DenseIndex(root, embedder, store=folder, progress=False)
    assert again.last_report.added == ("projects/oven.md",)
    assert embedder.texts == [("Oven", "Preheat for an hour.")]
    assert len(again) == len(index) + 1


def test_deleted_notes_leave_the_index_and_the_store(root: Path, tmp_path: Path) -> None:
    folder = tmp_path / "store"
    index = DenseIndex(root, CountingEmbedder(), store=folder, progress=False)
    (root / "projects" / "garden.md").unlink()
    report = index.update()
    assert report.deleted == ("projects/garden.md",)
    assert "projects/garden.md" not in set(index.chunks["path"])
    chunks, _ = stored(folder, index.vault_id)
    assert "projects/garden.md" not in set(chunks["path"])
    assert [c.path for c in index.pool("tomatoes seedlings")].count("projects/garden.md") == 0
    reopened = DenseIndex(root, CountingEmbedder(), store=folder, progress=False)
    assert not reopened.last_report.touched
    assert len(reopened) == len(index)


def test_an_empty_note_is_not_added_again_on_every_run(root: Path, tmp_path: Path) -> None:
    """kimun stores no row for a note without chunks; askkit remembers it beside the store."""
    (root / "empty.md").write_text("")
    folder = tmp_path / "store"
    DenseIndex(root, CountingEmbedder(), store=folder, progress=False)
    again = DenseIndex(root, CountingEmbedder(), store=folder, progress=False)
    assert again.last_report.added == ()
    assert again.last_report.unchanged == 5


def test_an_unreadable_note_is_skipped_with_a_warning(root: Path) -> None:
    (root / "latin1.md").write_bytes(b"# Caf\xe9\n\nNot UTF-8.\n")
    with pytest.warns(UserWarning, match=r"not indexing .*latin1\.md"):
        index = DenseIndex(root, CountingEmbedder(), store=False, progress=False)
    assert any(key.endswith("latin1.md") for key in index.last_report.skipped)
    assert "latin1.md" not in set(index.chunks["path"])


# -- the fingerprint gate -------------------------------------------------------------------------


def test_a_new_embedder_fingerprint_reembeds_everything_with_a_warning(
    root: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "store"
    first = DenseIndex(root, CountingEmbedder(), store=folder, vault_id="v1", progress=False)
    DenseIndex(root, CountingEmbedder(), store=folder, vault_id="v2", progress=False)
    other = CountingEmbedder(fingerprint="test:bag-of-words:v2:16")
    with pytest.warns(UserWarning, match="embedder changed.*dropping every collection"):
        index = DenseIndex(root, other, store=folder, vault_id="v1", progress=False)
    assert len(other.texts) == len(first) == len(index)
    assert index.last_report.added
    assert not index.last_report.unchanged
    with KimunStore(folder) as store:
        assert store.fingerprint == "test:bag-of-words:v2:16"
        assert [c.name for c in store.collections()] == ["v1"]  # kimun wipes ALL collections


def test_the_fingerprint_is_recorded_on_a_new_store(root: Path, tmp_path: Path) -> None:
    DenseIndex(root, CountingEmbedder(), store=tmp_path / "store", progress=False)
    with KimunStore(tmp_path / "store") as store:
        assert store.fingerprint == "test:bag-of-words:16"


# -- kimun's store, both ways ----------------------------------------------------------------------


def test_kimun_store_reads_the_dense_index_store_row_for_row(root: Path, tmp_path: Path) -> None:
    folder = tmp_path / "store"
    index = DenseIndex(root, CountingEmbedder(), store=folder, vault_id="my-vault", progress=False)
    note = root / "projects" / "sourdough.md"
    note.write_text(note.read_text().replace("with steam", "with a lid"))
    (root / "journal" / "2026-04-09.md").unlink()
    index.update()
    assert (folder / DB_FILE).is_file()
    chunks, matrix = stored(folder, "my-vault")
    pd.testing.assert_frame_equal(
        chunks.astype(object), index.chunks[chunks.columns].astype(object), check_dtype=False
    )
    np.testing.assert_array_equal(matrix, index.matrix)
    with KimunStore(folder) as store:
        (collection,) = store.collections()
    assert (collection.name, collection.notes, collection.chunks) == ("my-vault", 3, len(index))
    assert collection.dimension == 16


def test_a_store_retriever_over_the_index_folder_answers_as_the_index(
    root: Path, tmp_path: Path
) -> None:
    """The swap: kimun's reader of askkit's store gives the same pools, scores and rows."""
    folder = tmp_path / "store"
    embedder = CountingEmbedder()
    index = DenseIndex(root, embedder, store=folder, progress=False)
    with KimunStore(folder) as store:
        retriever = StoreRetriever(store, index.vault_id, embedder)
    for query in ("rye starter", "tomato seedlings", "oven steam", "novel"):
        assert retriever.pool(query) == index.pool(query)
        assert retriever.search(query, 3) == index.search(query, 3)


def test_the_index_refuses_a_folder_it_did_not_make(root: Path, tmp_path: Path) -> None:
    """A kimun server's own store is read with KimunStore, never written by askkit."""
    server_store = tmp_path / "kimun-data"
    DenseIndex(root, CountingEmbedder(), store=server_store, progress=False)
    (server_store / "CACHEDIR.TAG").unlink()  # now it looks like kimun's own folder
    before = sorted(p.name for p in server_store.iterdir())
    with pytest.raises(UsageError, match="askkit did not make"):
        DenseIndex(root, CountingEmbedder(), store=server_store, progress=False)
    assert sorted(p.name for p in server_store.iterdir()) == before
    with pytest.raises(UsageError, match="inside the vault"):
        DenseIndex(root, CountingEmbedder(), store=root / "cache", progress=False)
    assert not (root / "cache").exists()


def test_store_false_writes_nothing(root: Path, tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("ASKKIT_CACHE_DIR", str(tmp_path / "cache"))
    index = DenseIndex(root, CountingEmbedder(), store=False, progress=False)
    assert index.store_folder is None
    assert len(index) > 0
    assert not (tmp_path / "cache").exists()


def test_the_default_store_is_named_after_the_vault_and_the_embedder(
    root: Path, tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.setenv("ASKKIT_CACHE_DIR", str(tmp_path / "cache"))
    embedder = CountingEmbedder(name="ollama:nomic-embed-text")
    index = DenseIndex(root, embedder, progress=False)
    assert index.store_folder == default_store_folder(root, embedder)
    assert index.store_folder.parent == tmp_path / "cache"
    assert "ollama_nomic-embed-text" in index.store_folder.name
    assert (index.store_folder / DB_FILE).is_file()
    assert (index.store_folder / NOTES_FILE).is_file()
    other = DenseIndex(root, CountingEmbedder(name="fastembed:BGESmallENV15"), progress=False)
    assert other.store_folder != index.store_folder
    assert index.vault_id == "vault"  # the folder's name


def test_a_bad_vault_id_is_refused(root: Path) -> None:
    for bad in ("", "__meta", "../up", "a b"):
        with pytest.raises(UsageError, match="invalid vault id"):
            DenseIndex(root, CountingEmbedder(), store=False, vault_id=bad, progress=False)


# -- the query path --------------------------------------------------------------------------------


def test_scores_are_the_brute_force_cosines(root: Path) -> None:
    embedder = CountingEmbedder()
    index = DenseIndex(root, embedder, store=False, progress=False)
    chunks = index.chunks
    for query in ("rye starter", "tomato seedlings", "paragraph 7 oven"):
        expected = reference_scores(embedder, chunks, query)
        pool = index.vector_pool(query)
        assert len(pool) == len(chunks)  # fewer than 80 chunks: every one
        assert [c.ordinal for c in pool] == list(range(1, len(pool) + 1))
        for chunk in pool:
            row = next(
                i
                for i in range(len(chunks))
                if chunks["path"][i] == chunk.path and chunks["text"][i] == chunk.content
            )
            assert chunk.similarity_score == pytest.approx(expected[row], abs=1e-6)
        scores = [c.similarity_score for c in pool]
        assert scores == sorted(scores, reverse=True)
        assert np.float32(scores[0]) == scores[0]  # an f32 score widened to f64


def test_the_pool_is_the_best_80_and_search_is_one_row_per_note(tmp_path: Path) -> None:
    root = tmp_path / "many"
    root.mkdir()
    for i in range(30):
        body = "\n\n".join(f"## Part {j}\n\nStarter note {i} part {j} rye." for j in range(4))
        (root / f"n{i:02d}.md").write_text(f"# Note {i}\n\n{body}\n")
    embedder = CountingEmbedder()
    index = DenseIndex(root, embedder, store=False, progress=False)
    assert len(index) == 120
    pool = index.pool("starter rye part 2")
    assert len(pool) == 80
    expected = reference_scores(embedder, index.chunks, "starter rye part 2")
    assert pool[0].similarity_score == pytest.approx(expected.max(), abs=1e-6)
    assert pool[-1].similarity_score == pytest.approx(np.sort(expected)[::-1][79], abs=1e-6)
    rows = index.search("starter rye part 2", 5)
    assert [r.ordinal for r in rows] == [1, 2, 3, 4, 5]
    assert len({r.path for r in rows}) == 5
    firsts: list[ChunkResult] = []
    for chunk in pool:  # kimun's dedupe_by_note: each note's first (best) chunk
        if chunk.path not in {c.path for c in firsts}:
            firsts.append(chunk)
    assert [(r.path, r.content) for r in rows] == [(c.path, c.content) for c in firsts[:5]]
    chunks = index.search("starter rye part 2", 5, per_note=False)
    assert [(c.path, c.content) for c in chunks] == [(c.path, c.content) for c in pool[:5]]


def test_search_with_an_adaptive_cut_lists_the_notes_in_the_kept_prefix(root: Path) -> None:
    index = DenseIndex(root, CountingEmbedder(), store=False, progress=False)
    settings = CutSettings(strategy="score-range")
    rows = index.search("rye starter", 2, settings=settings)
    expected = search_rows(index.pool("rye starter"), settings)
    assert [(r.path, r.content) for r in rows] == [(c.path, c.content) for c in expected]
    preview = index.search_cut("rye starter", settings)
    assert preview.pool_chunks == len(index.pool("rye starter"))


def test_identical_chunks_are_deduplicated_in_the_pool(tmp_path: Path) -> None:
    root = tmp_path / "dup"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nSame text.\n\n# A\n\nSame text.\n")
    index = DenseIndex(root, CountingEmbedder(), store=False, progress=False)
    assert len(index) == 2
    pool = index.pool("same text")
    assert len(pool) == 1
    assert pool[0].ordinal == 1


def test_pools_frame_has_the_sweep_columns(root: Path) -> None:
    index = DenseIndex(root, CountingEmbedder(), store=False, progress=False)
    frame = index.pools({"q1": "rye starter", "q2": "tomatoes"}, size=3, progress=False)
    assert list(frame.columns) == list(POOL_COLUMNS)
    assert frame["query_id"].tolist() == ["q1"] * 3 + ["q2"] * 3
    assert frame["rank"].tolist() == [1, 2, 3, 1, 2, 3]
    pool = index.pool("tomatoes", 3)
    assert frame["score"].tolist()[3:] == [c.similarity_score for c in pool]


def test_pools_are_each_querys_pool_bit_for_bit(root: Path) -> None:
    """Many queries' pools at once (one matrix product) are the per-query pools, exactly."""
    index = DenseIndex(root, CountingEmbedder(), store=False, progress=False)
    queries = {f"q{i}": text for i, text in enumerate(["rye starter", "tomatoes", "rye", "x y"])}
    frame = index.pools(queries, size=4, progress=False)
    for query_id, text in queries.items():
        rows = frame[frame["query_id"] == query_id]
        pool = index.pool(text, 4)
        assert rows["path"].tolist() == [c.path for c in pool]
        assert rows["rank"].tolist() == [c.ordinal for c in pool]
        assert rows["score"].tolist() == [c.similarity_score for c in pool]
    assert index.pools({}, progress=False).empty
    with pytest.raises(SchemaError, match="empty"):
        index.pools({"q": " "}, progress=False)


def test_it_is_a_retriever(root: Path) -> None:
    index = DenseIndex(root, CountingEmbedder(), store=False, progress=False)
    assert isinstance(index, Retriever)
    assert as_retriever(index)("rye", k=2) == tuple(index.search("rye", 2))
    with pytest.raises(ValueError, match="query is empty"):
        index.search("  ")
    with pytest.raises(ValueError, match="k must be"):
        index.search("rye", 0)


# -- a misbehaving embedder ------------------------------------------------------------------------


class _Short(CountingEmbedder):
    def embed_documents(
        self, chunks: Sequence[tuple[str, str]], *, progress: bool | None = None
    ) -> np.ndarray[Any, Any]:
        return super().embed_documents(chunks)[:-1]


class _Narrow(CountingEmbedder):
    def embed_query(self, query: str) -> np.ndarray[Any, Any]:
        return super().embed_query(query)[:8]


def test_an_embedder_returning_too_few_vectors_is_a_protocol_error(root: Path) -> None:
    with pytest.raises(ProtocolError, match=r"shape \(8, 16\) for 9 chunks"):
        DenseIndex(root, _Short(), store=False, progress=False)


def test_a_query_vector_of_another_width_is_a_dimension_error(root: Path) -> None:
    index = DenseIndex(root, _Narrow(), store=False, progress=False)
    with pytest.raises(DimensionError, match="8-d query vectors but the stored vectors are 16-d"):
        index.search("rye")


def test_a_failed_embedding_run_leaves_a_consistent_store(root: Path, tmp_path: Path) -> None:
    """As kimun: old rows go, nothing half-stored; the next run re-adds the note."""
    folder = tmp_path / "store"
    DenseIndex(root, CountingEmbedder(), store=folder, progress=False)
    note = root / "projects" / "garden.md"
    note.write_text(note.read_text() + "\nMore.\n")
    with pytest.raises(ProtocolError):
        DenseIndex(root, _Short(), store=folder, progress=False)
    chunks, _ = stored(folder, "vault")
    assert "projects/garden.md" not in set(chunks["path"])
    embedder = CountingEmbedder()
    index = DenseIndex(root, embedder, store=folder, progress=False)
    assert index.last_report.added == ("projects/garden.md",)
    assert len(embedder.texts) == 1


def test_data_vault_indexes_with_a_store(tmp_path: Path) -> None:
    """The sample vault: hundreds of chunks through the store and back."""
    root = tmp_path / "vault"
    shutil.copytree(Path(__file__).resolve().parents[2] / "data" / "vault", root)
    embedder = CountingEmbedder(dimension=32)
    index = DenseIndex(root, embedder, store=tmp_path / "store", progress=False)
    assert len(index) == len(embedder.texts) > 400
    chunks, matrix = stored(tmp_path / "store", index.vault_id)
    np.testing.assert_array_equal(matrix, index.matrix)
    assert chunks["text"].tolist() == index.chunks["text"].tolist()


# -- the issue's done-when: a real model, scores against a reference -------------------------------


def _vault_texts(root: Path) -> list[str]:
    return [p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.md"))]


def test_tiny_model_scores_equal_the_onnx_reference(root: Path, tmp_path: Path) -> None:
    """fastembed loads a tiny ONNX model; every score equals ONNX + pooling + norm + dot, 1e-6.

    The reference frames the texts as kimun's fastembed embedder does
    (``"passage: " + title + "\\n" + text``, ``"query: " + query``), runs the
    model with tokenizers and onnxruntime, mean-pools, normalises and takes the
    dot product in float64, all without fastembed or askkit.dense.
    """
    from askkit.testing.model_references import reference_embedding
    from askkit.testing.models import tiny_embedder

    model = tmp_path / "model"
    embedder = tiny_embedder(model, vocabulary_texts=_vault_texts(root), dim=48)
    folder = tmp_path / "store"
    index = DenseIndex(root, embedder, store=folder, progress=False)
    chunks = index.chunks
    docs = reference_embedding(
        model, [f"passage: {t}\n{x}" for t, x in zip(chunks["title"], chunks["text"], strict=True)]
    ).astype(np.float64)
    with KimunStore(folder) as store:
        retriever = StoreRetriever(store, index.vault_id, embedder)
    for query in ("feeding the rye starter", "tomato seedlings under lights", "oven steam"):
        q = reference_embedding(model, [f"query: {query}"])[0].astype(np.float64)
        expected = docs @ q
        pool = index.vector_pool(query)
        assert len(pool) == len(chunks)
        got = {(c.path, c.content): c.similarity_score for c in pool}
        for path, text, score in zip(chunks["path"], chunks["text"], expected, strict=True):
            assert abs(got[(path, text)] - score) <= 1e-6
        assert [c.similarity_score for c in retriever.vector_pool(query)] == [
            c.similarity_score for c in pool
        ]
        order = np.argsort(-expected, kind="stable")
        assert [(c.path, c.content) for c in pool[:3]] == [
            (chunks["path"][i], chunks["text"][i]) for i in order[:3]
        ]


# -- rerankers -------------------------------------------------------------------------------------


class _ByLength:
    """Scores each document by its length: a reranker that disagrees with the vectors."""

    name = "test:length"

    def __init__(self) -> None:
        self.documents: list[str] = []

    def score(self, query: str, documents: Sequence[str]) -> list[tuple[int, float]]:
        self.documents = list(documents)
        longest = max(len(d) for d in documents)
        return [(i, len(d) / longest) for i, d in enumerate(documents)]


class _Down:
    name = "test:down"

    def score(self, query: str, documents: Sequence[str]) -> list[tuple[int, float]]:
        from askkit.errors import ServerUnavailable

        raise ServerUnavailable("POST /rerank: cannot connect")


def test_a_reranker_reorders_the_whole_pool(root: Path) -> None:
    reranker = _ByLength()
    index = DenseIndex(root, CountingEmbedder(), store=False, reranker=reranker, progress=False)
    plain = DenseIndex(root, CountingEmbedder(), store=False, progress=False)
    vector_pool = plain.pool("rye starter")
    pool = index.pool("rye starter")
    assert reranker.documents == [f"{c.title}\n{c.content}" for c in vector_pool]  # kimun's text
    lengths = [len(f"{c.title}\n{c.content}") for c in pool]
    assert lengths == sorted(lengths, reverse=True)
    assert {(c.path, c.content) for c in pool} == {(c.path, c.content) for c in vector_pool}
    assert pool[0].similarity_score == 1.0
    assert [c.ordinal for c in pool] == list(range(1, len(pool) + 1))
    assert index.search("rye starter", 1)[0].path == pool[0].path


def test_a_failing_reranker_falls_back_to_the_vector_order_with_a_warning(root: Path) -> None:
    index = DenseIndex(root, CountingEmbedder(), store=False, reranker=_Down(), progress=False)
    plain = DenseIndex(root, CountingEmbedder(), store=False, progress=False)
    with pytest.warns(UserWarning, match="the reranker test:down failed.*vector order"):
        pool = index.pool("rye starter")
    assert pool == plain.pool("rye starter")


def test_the_tiny_cross_encoder_ranks_the_pool_as_its_reference(root: Path, tmp_path: Path) -> None:
    from askkit.testing.model_references import reference_rerank_scores
    from askkit.testing.models import tiny_reranker

    texts = _vault_texts(root)
    reranker = tiny_reranker(tmp_path / "cross", vocabulary_texts=texts)
    index = DenseIndex(root, CountingEmbedder(), store=False, reranker=reranker, progress=False)
    vector_pool = DenseIndex(root, CountingEmbedder(), store=False, progress=False).pool("starter")
    logits = reference_rerank_scores(
        tmp_path / "cross", "starter", [f"{c.title}\n{c.content}" for c in vector_pool]
    ).astype(np.float64)
    expected = 1 / (1 + np.exp(-logits))  # kimun's cross-encoder adapter: sigmoid of the logit
    pool = index.pool("starter")
    order = sorted(range(len(vector_pool)), key=lambda i: -expected[i])
    assert [(c.path, c.content) for c in pool] == [
        (vector_pool[i].path, vector_pool[i].content) for i in order
    ]
    for chunk, i in zip(pool, order, strict=True):
        assert chunk.similarity_score == pytest.approx(expected[i], abs=1e-6)


def test_a_bm25_cache_and_a_dense_store_never_share_a_folder(tmp_path: Path) -> None:
    # Re-indexing a BM25 cache replaces its folder whole: pointed at a dense store, it
    # would delete it. Each kind of folder refuses the other, and nothing is touched.
    from askkit.retrieve.local import LocalIndex

    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "bread.md").write_text("# Bread\n## Starter\nFeed the starter daily.\n")
    dense_folder = tmp_path / "dense"
    DenseIndex(vault, CountingEmbedder(), store=dense_folder, progress=False)
    before = sorted(p.name for p in dense_folder.iterdir())
    with pytest.raises(UsageError, match="holds askkit's dense index"):
        LocalIndex(vault, cache_dir=dense_folder, progress=False)
    assert sorted(p.name for p in dense_folder.iterdir()) == before
    bm25_folder = tmp_path / "bm25"
    LocalIndex(vault, cache_dir=bm25_folder, progress=False)
    with pytest.raises(UsageError, match="holds a local index of a kimun vault"):
        DenseIndex(vault, CountingEmbedder(), store=bm25_folder, progress=False)
    assert (bm25_folder / "manifest.json").is_file()


# -- writing the store: batches of whole notes, only askkit's own files ---------------------------


def many_notes(root: Path, count: int) -> Path:
    """``count`` notes of one to three sections each (some notes split into several chunks)."""
    for i in range(count):
        folder = root / f"f{i % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        sections = "".join(
            f"## Part {j}\n\nRye starter note {i} part {j}: fed at {j + 8} with warm water.\n\n"
            for j in range(1 + i % 3)
        )
        (folder / f"note-{i:04d}.md").write_text(f"# Note {i}\n\n{sections}")
    return root


def wal_commits(wal: Path) -> int:
    """How many transactions a write-ahead log holds: its valid frames that end a commit
    (a frame header's second field, the database size after the commit, is not 0)."""
    data = wal.read_bytes()
    page = int.from_bytes(data[8:12], "big")
    salts = data[16:24]
    commits = 0
    for offset in range(32, len(data) - 23, 24 + page):
        header = data[offset : offset + 24]
        if header[8:16] != salts:
            break
        commits += int.from_bytes(header[4:8], "big") != 0
    return commits


def test_indexing_writes_the_store_in_one_transaction_per_batch_of_notes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One commit per note made indexing a large vault SQLite-bound; a batch of notes is
    one transaction. A reader holding an old snapshot keeps every frame in the log, so
    the log counts the transactions."""
    import askkit.dense.index as dense_index
    from askkit.dense import StoreWriter

    root = many_notes(tmp_path / "vault", 150)
    folder = tmp_path / "store"
    StoreWriter(folder, dimension=16).close()
    monkeypatch.setattr(dense_index, "_STORE_BATCH", 100, raising=False)
    reader = sqlite3.connect(folder / DB_FILE, isolation_level=None)
    try:
        reader.execute("BEGIN")
        assert reader.execute("SELECT COUNT(*) FROM chunks").fetchone() == (0,)
        index = DenseIndex(root, CountingEmbedder(), store=folder, progress=False)
        commits = wal_commits(folder / f"{DB_FILE}-wal")
        reader.execute("COMMIT")
    finally:
        reader.close()
    batches = -(-len(index) // 100)
    assert len(index) == 300
    assert commits <= batches + 1  # the batches, and the fingerprint
    chunks, matrix = stored(folder, "vault")
    assert chunks["text"].tolist() == index.chunks["text"].tolist()
    assert len(matrix) == 300


_KILLED = """
import os, signal, sys
from pathlib import Path
import askkit.dense.index as dense_index
from askkit.dense._writer import StoreWriter
from tests.dense.test_index import CountingEmbedder

root, folder, batch, kill_at = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
dense_index._STORE_BATCH = batch
real_append = StoreWriter._append  # what the index writes each batch with


def append(self, collection, cols, vectors):
    def die():  # SQLite's progress handler runs inside the statement, mid-transaction
        if self.conn.in_transaction and self.conn.total_changes >= kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        return 0

    self.conn.set_progress_handler(die, 20)
    return real_append(self, collection, cols, vectors)


StoreWriter._append = append
dense_index.DenseIndex(root, CountingEmbedder(), store=folder, progress=False)
print("finished", flush=True)
"""


def test_an_indexer_killed_mid_batch_leaves_whole_notes_and_the_next_run_completes_the_store(
    tmp_path: Path,
) -> None:
    """kill -9 in the middle of a batch's transaction: the batches committed before it stay
    (every note whole), the killed batch leaves nothing, and the next run embeds only the
    notes the store lacks and ends with the store a fresh index writes."""
    from tests.conftest import ROOT

    root = many_notes(tmp_path / "vault", 60)
    folder = tmp_path / "store"
    reference = DenseIndex(root, CountingEmbedder(), store=False, progress=False)
    by_note = reference.chunks.groupby("path", sort=True)["text"].apply(list).to_dict()
    batch = 40
    first_batch: list[str] = []
    for path in by_note:  # notes are stored in path order
        if sum(len(by_note[p]) for p in first_batch) >= batch:
            break
        first_batch.append(path)
    first_rows = sum(len(by_note[p]) for p in first_batch)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", _KILLED, str(root), str(folder), str(batch), str(first_rows + 5)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    chunks, matrix = stored(folder, "vault")
    kept = chunks.groupby("path", sort=True)["text"].apply(list).to_dict()
    assert sorted(kept) == first_batch  # the committed batch, and nothing of the killed one
    for path, texts in kept.items():
        assert texts == by_note[path]  # each stored note whole
    embedder = CountingEmbedder()
    resumed = DenseIndex(root, embedder, store=folder, progress=False)
    assert len(embedder.texts) == len(reference) - first_rows  # only what the store lacked
    chunks, matrix = stored(folder, "vault")
    assert chunks["text"].tolist() == reference.chunks["text"].tolist()
    np.testing.assert_array_equal(matrix, reference.matrix)
    np.testing.assert_array_equal(resumed.matrix, reference.matrix)


def test_the_index_refuses_a_linked_database_and_leaves_a_kimun_store_untouched(
    root: Path, tmp_path: Path
) -> None:
    """Pointed at a kimun server's store through a link in askkit's own folder, indexing
    with another embedder would have dropped every collection and rewritten the
    fingerprint."""
    from askkit.testing.stores import random_store_rows, write_kimun_sqlite

    kimun = tmp_path / "kimun"
    write_kimun_sqlite(kimun, {"notes": random_store_rows(9, 16)}, fingerprint="kimun:m:16")
    before = {p.name: p.read_bytes() for p in kimun.iterdir()}
    folder = tmp_path / "store"
    DenseIndex(root, CountingEmbedder(), store=folder, progress=False)
    (folder / DB_FILE).unlink()
    (folder / DB_FILE).symlink_to(kimun / DB_FILE)
    with pytest.raises(StoreError, match="symbolic link"):
        DenseIndex(root, CountingEmbedder(), store=folder, progress=False)
    assert {p.name: p.read_bytes() for p in kimun.iterdir()} == before


@pytest.mark.parametrize("link", ["symbolic", "hard"])
def test_a_linked_notes_record_is_never_written_through(
    root: Path, tmp_path: Path, link: str
) -> None:
    folder = tmp_path / "store"
    DenseIndex(root, CountingEmbedder(), store=folder, progress=False)
    outside = tmp_path / "precious.json"
    outside.write_text('{"mine": true}')
    (folder / NOTES_FILE).unlink()
    if link == "symbolic":
        (folder / NOTES_FILE).symlink_to(outside)
    else:
        (folder / NOTES_FILE).hardlink_to(outside)
    (root / "new.md").write_text("# New\n\nA new note.\n")
    with pytest.raises(StoreError, match=r"symbolic link|2 hard links") as err:
        DenseIndex(root, CountingEmbedder(), store=folder, progress=False)
    assert err.value.path == str(folder / NOTES_FILE)
    assert outside.read_text() == '{"mine": true}'
    assert (folder / NOTES_FILE).exists()  # not askkit's to delete


class _NonFinite(CountingEmbedder):
    def embed_documents(
        self, chunks: Sequence[tuple[str, str]], *, progress: bool | None = None
    ) -> np.ndarray[Any, Any]:
        vectors = super().embed_documents(chunks).copy()
        vectors[len(chunks) // 2, 1] = np.nan
        return vectors


def test_an_embedder_returning_a_non_finite_vector_is_a_protocol_error_naming_the_chunk(
    root: Path, tmp_path: Path
) -> None:
    with pytest.raises(ProtocolError, match=r"not finite.*\.md") as err:
        DenseIndex(root, _NonFinite(), store=tmp_path / "store", progress=False)
    assert "test:bag-of-words" in str(err.value)
    assert KimunStore(tmp_path / "store").collections() == []  # nothing stored


# -- issue 39: one rule for every folder askkit trusts; errors that name the folder ------------


@pytest.mark.parametrize("fault", ["writable", "other-user", "link-inside"])
def test_hardening_39_9_a_store_folder_askkit_does_not_trust_is_refused_before_any_work(
    root: Path, tmp_path: Path, fault: str
) -> None:
    folder = tmp_path / "store"
    DenseIndex(root, CountingEmbedder(), store=folder, progress=False)
    expected = spoil(folder, fault, link=folder / "planted")
    before = {p.name: p.read_bytes() for p in folder.iterdir() if not p.is_symlink()}
    embedder = CountingEmbedder()
    with pytest.raises(StoreError) as err:
        DenseIndex(root, embedder, store=folder, progress=False)
    assert str(err.value).startswith(
        f"the store folder {folder} is refused, not rebuilt: {expected}"
    )
    assert embedder.calls == []
    assert {p.name: p.read_bytes() for p in folder.iterdir() if not p.is_symlink()} == before


def test_hardening_39_minor_cache_errors_name_the_folder_when_the_cache_root_is_a_file(
    root: Path, tmp_path: Path, monkeypatch: Any
) -> None:
    (tmp_path / "a-file").write_text("x")
    monkeypatch.setenv("ASKKIT_CACHE_DIR", str(tmp_path / "a-file"))
    embedder = CountingEmbedder()
    folder = default_store_folder(root, embedder)
    with pytest.raises(StoreError) as err:
        DenseIndex(root, embedder, progress=False)
    assert str(err.value).startswith(
        f"cannot make the store folder {folder}: {tmp_path / 'a-file'} is not a folder ("
    )
    assert err.value.path == str(folder)


def test_issue41_1_the_default_store_is_keyed_by_vault_model_fingerprint_and_kimun(
    root: Path, tmp_path: Path, monkeypatch: Any
) -> None:
    """One store per vault, model and kimun version: another fingerprint under the same name,
    or another kimun version, gets its own folder; the same ones, the same folder."""
    monkeypatch.setenv("ASKKIT_CACHE_DIR", str(tmp_path / "cache"))
    one = CountingEmbedder(name="ollama:m", fingerprint="ollama:m:16")
    same = CountingEmbedder(name="ollama:m", fingerprint="ollama:m:16")
    wider = CountingEmbedder(name="ollama:m", fingerprint="ollama:m:32")
    folder = default_store_folder(root, one)
    assert folder == default_store_folder(root, same) == default_store_folder(root, one, "0.18")
    assert folder.name.startswith("dense-")
    assert "-k0.18-" in folder.name
    assert default_store_folder(root, wider) != folder
    assert "-k0.17-" in default_store_folder(root, one, "0.17").name
    with pytest.raises(UsageError, match=r"0\.16"):
        default_store_folder(root, one, "0.16")  # type: ignore[arg-type]
    index = DenseIndex(root, one, progress=False, kimun="0.17")
    assert index.store_folder == default_store_folder(root, one, "0.17")
    record = json.loads((index.store_folder / NOTES_FILE).read_text())
    assert (record["kimun"], record["embedder"]) == ("0.17", "ollama:m")
