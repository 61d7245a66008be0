"""Searching a kimun server's own stored vectors as the server does (StoreRetriever).

The stores here are written by :mod:`askkit.testing.stores`, a writer of kimun's
stores kept apart from askkit's own (``VecSqlite`` and ``VecQdrant`` at kimun
f28bdd5426c7c22f67601f62f588e958c35e43e1); the reference ranking is brute
force in float64.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from askkit.dense.index import DenseIndex
from askkit.dense.qdrant import QdrantStore
from askkit.dense.store import KimunStore
from askkit.dense.store_retriever import StoreRetriever
from askkit.errors import DimensionError, ProtocolError, StoreError
from askkit.ranking import deduplicate_chunks
from askkit.ranking.pools import POOL_COLUMNS
from askkit.testing.stores import random_store_rows, write_kimun_qdrant, write_kimun_sqlite
from tests.conftest import DATA

DIM = 24
FINGERPRINT = "test:queries:24"


class QueryVectors:
    """An embedder whose query vectors are given (a store's chunks are already embedded)."""

    def __init__(
        self, vectors: dict[str, np.ndarray[Any, Any]], *, fingerprint: str = FINGERPRINT
    ) -> None:
        self.name = "test:queries"
        self.fingerprint = fingerprint
        self.vectors = vectors
        self.asked: list[str] = []

    @property
    def dimension(self) -> int | None:
        widths = {len(v) for v in self.vectors.values()}
        return widths.pop() if len(widths) == 1 else None

    def embed_documents(
        self, chunks: Sequence[tuple[str, str]], *, progress: bool | None = None
    ) -> np.ndarray[Any, Any]:
        raise AssertionError("a store retriever never embeds documents")

    def embed_query(self, query: str) -> np.ndarray[Any, Any]:
        self.asked.append(query)
        return self.vectors[query]


@pytest.fixture(scope="module")
def data() -> tuple[list[dict[str, Any]], np.ndarray[Any, Any], dict[str, np.ndarray[Any, Any]]]:
    rows, vectors = random_store_rows(600, DIM, seed=7)
    rng = np.random.default_rng(11)
    queries = {f"q{i}": rng.standard_normal(DIM).astype(np.float32) * (i + 1) for i in range(5)}
    queries["near row 42"] = vectors[42] * 3 + rng.standard_normal(DIM).astype(np.float32) * 0.01
    return rows, vectors, queries


@pytest.fixture
def kimun_store(tmp_path: Path, data: Any) -> Path:
    rows, vectors, _ = data
    folder = tmp_path / "kimun-data"
    write_kimun_sqlite(
        folder,
        {"notes": (rows, vectors), "other": (rows[:9], vectors[:9])},
        fingerprint=FINGERPRINT,
    )
    return folder


def brute_force(
    rows: list[dict[str, Any]], vectors: np.ndarray[Any, Any], query: np.ndarray[Any, Any], k: int
) -> list[tuple[str, str, float]]:
    """The best ``k`` chunks by cosine similarity, in float64: (path, text, score)."""
    m = vectors.astype(np.float64)
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    q = query.astype(np.float64) / np.linalg.norm(query.astype(np.float64))
    scores = m @ q
    order = np.argsort(-scores, kind="stable")[:k]
    return [(rows[i]["path"], rows[i]["text"], float(scores[i])) for i in order]


def assert_same_ranking(got: Sequence[Any], expected: list[tuple[str, str, float]]) -> None:
    assert len(got) == len(expected)
    for chunk, (path, text, score) in zip(got, expected, strict=True):
        assert (chunk.path, chunk.content) == (path, text)
        assert chunk.similarity_score == pytest.approx(score, abs=1e-6)


def test_a_kimun_store_gives_the_brute_force_top_80_and_scores(
    kimun_store: Path, data: Any
) -> None:
    rows, vectors, queries = data
    retriever = StoreRetriever(KimunStore(kimun_store), "notes", QueryVectors(queries))
    assert len(retriever) == 600
    for text, vector in queries.items():
        pool = retriever.vector_pool(text)
        assert_same_ranking(pool, brute_force(rows, vectors, vector, 80))
        assert [c.ordinal for c in pool] == list(range(1, 81))
        assert all(np.float32(c.similarity_score) == c.similarity_score for c in pool)
        assert retriever.pool(text) == pool  # distinct chunks: de-duplication keeps them all


def test_wire_chunks_carry_the_stored_fields(kimun_store: Path, data: Any) -> None:
    rows, _, queries = data
    retriever = StoreRetriever(kimun_store, "notes", QueryVectors(queries))
    best = retriever.pool("near row 42")[0]
    assert best.path == rows[42]["path"]
    assert best.title == rows[42]["title"]
    assert best.hash == rows[42]["hash"]
    assert best.content == rows[42]["text"]
    assert best.date == rows[42]["date"]
    journal = next(c for c in retriever.pool("q1") if c.path.startswith("journal/"))
    assert journal.date is not None
    assert journal.path == f"journal/{journal.date}.md"


def test_search_is_one_row_per_note_from_the_whole_pool(kimun_store: Path, data: Any) -> None:
    _, _, queries = data
    retriever = StoreRetriever(kimun_store, "notes", QueryVectors(queries))
    pool = retriever.pool("q2")
    rows = retriever.search("q2", 10)
    seen: list[str] = []
    for chunk in pool:
        if chunk.path not in seen:
            seen.append(chunk.path)
    assert [r.path for r in rows] == seen[:10]
    assert [r.ordinal for r in rows] == list(range(1, 11))
    assert retriever("q2", 3) == rows[:3]


def test_identical_stored_chunks_are_deduplicated_keeping_the_best(tmp_path: Path) -> None:
    rows, vectors = random_store_rows(6, 4, seed=1)
    doubled = [*rows, dict(rows[0])]
    far = -vectors[0]  # the duplicate scores worse
    write_kimun_sqlite(tmp_path / "s", {"v": (doubled, np.vstack([vectors, far]))})
    retriever = StoreRetriever(tmp_path / "s", "v", QueryVectors({"q": vectors[0]}))
    raw = retriever.vector_pool("q")
    assert len(raw) == 7
    pool = retriever.pool("q")
    assert len(pool) == 6
    assert pool == [
        c.__class__(**{**c.to_dict(), "ordinal": i})
        for i, c in enumerate(deduplicate_chunks(raw), 1)
    ]
    assert pool[0].content == rows[0]["text"]
    assert pool[0].similarity_score == pytest.approx(1.0, abs=1e-6)


def test_pools_frame(kimun_store: Path, data: Any) -> None:
    _, _, queries = data
    retriever = StoreRetriever(kimun_store, "notes", QueryVectors(queries))
    frame = retriever.pools({"a": "q0", "b": "q1"}, size=5, progress=False)
    assert list(frame.columns) == list(POOL_COLUMNS)
    assert frame["query_id"].tolist() == ["a"] * 5 + ["b"] * 5
    assert frame["score"].tolist()[:5] == [c.similarity_score for c in retriever.pool("q0", 5)]


def test_another_embedders_store_is_refused_unless_told(kimun_store: Path, data: Any) -> None:
    _, _, queries = data
    embedder = QueryVectors(queries, fingerprint="fastembed:bgesmallenv15:24")
    with pytest.raises(StoreError, match="holds vectors of the embedder 'test:queries:24'"):
        StoreRetriever(kimun_store, "notes", embedder)
    retriever = StoreRetriever(kimun_store, "notes", embedder, check_fingerprint=False)
    assert len(retriever.pool("q0")) == 80


def test_a_store_without_a_fingerprint_is_searched(tmp_path: Path, data: Any) -> None:
    rows, vectors, queries = data
    write_kimun_sqlite(tmp_path / "s", {"notes": (rows[:30], vectors[:30])})
    retriever = StoreRetriever(tmp_path / "s", "notes", QueryVectors(queries))
    assert_same_ranking(
        retriever.vector_pool("q3"), brute_force(rows[:30], vectors[:30], queries["q3"], 30)
    )


def test_a_query_vector_of_another_width_is_a_dimension_error(kimun_store: Path) -> None:
    narrow = {"q": np.ones(8, dtype=np.float32)}
    with pytest.raises(DimensionError, match="8-d vectors but the store") as caught:
        StoreRetriever(kimun_store, "notes", QueryVectors(narrow), check_fingerprint=False)
    assert (caught.value.expected, caught.value.actual) == (DIM, 8)
    mixed = QueryVectors({"q": np.ones(8, dtype=np.float32), "r": np.ones(9, dtype=np.float32)})
    retriever = StoreRetriever(
        kimun_store, "notes", mixed, check_fingerprint=False
    )  # width unknown
    with pytest.raises(DimensionError, match="8-d query vectors but the stored vectors are 24-d"):
        retriever.search("q")


def test_an_unknown_vault_is_a_store_error(kimun_store: Path, data: Any) -> None:
    _, _, queries = data
    with pytest.raises(StoreError, match="nope"):
        StoreRetriever(kimun_store, "nope", QueryVectors(queries))


def test_a_missing_store_is_a_store_error(tmp_path: Path, data: Any) -> None:
    _, _, queries = data
    with pytest.raises(StoreError):
        StoreRetriever(tmp_path / "nothing", "notes", QueryVectors(queries))


def test_qdrant_gives_the_same_pool_as_kimuns_sqlite_store(kimun_store: Path, data: Any) -> None:
    """kimun's two backends, one vault: Qdrant's own cosine search and the exact dot product."""
    from qdrant_client import QdrantClient

    rows, vectors, queries = data
    client = QdrantClient(":memory:")
    write_kimun_qdrant(client, "kimun_embeddings", "notes", rows, vectors, fingerprint=FINGERPRINT)
    store = QdrantStore(client=client)
    qdrant = StoreRetriever(store, "notes", QueryVectors(queries))
    assert qdrant.exact is False
    sqlite = StoreRetriever(kimun_store, "notes", QueryVectors(queries))
    exact_qdrant = StoreRetriever(store, "notes", QueryVectors(queries), exact=True)
    for text, vector in queries.items():
        expected = brute_force(rows, vectors, vector, 80)
        assert_same_ranking(qdrant.vector_pool(text), expected)
        assert_same_ranking(exact_qdrant.vector_pool(text), expected)
        got = [(c.path, c.content, c.title, c.date, c.hash) for c in qdrant.pool(text)]
        assert got == [(c.path, c.content, c.title, c.date, c.hash) for c in sqlite.pool(text)]
    with pytest.raises(StoreError, match="no vault 'nope'"):
        StoreRetriever(store, "nope", QueryVectors(queries))


def test_kimuns_store_and_askkits_are_interchangeable(tmp_path: Path) -> None:
    """The swap: the same vault stored by kimun's writer and by DenseIndex answers identically.

    kimun's writer (askkit.testing.stores) stores the embedder's raw vectors of
    the index's chunks; searching it gives the index's pools, scores bit for bit.
    """
    from tests.dense.test_index import CountingEmbedder

    root = tmp_path / "vault"
    shutil.copytree(DATA / "vault" / "baking", root / "baking")
    shutil.copytree(DATA / "vault" / "journal", root / "journal")
    embedder = CountingEmbedder(dimension=32)
    index = DenseIndex(root, embedder, store=tmp_path / "askkit", progress=False)
    chunks = index.chunks
    rows = [
        {k: (v if isinstance(v, str) else None) for k, v in r.items()}
        for r in chunks.astype(object).to_dict("records")
    ]
    raw = np.stack([embedder.vector(f"{r['title']}\n{r['text']}") for r in rows])
    write_kimun_sqlite(tmp_path / "kimun", {"vault": (rows, raw)}, fingerprint=embedder.fingerprint)
    kimun = StoreRetriever(tmp_path / "kimun", "vault", embedder)
    askkit = StoreRetriever(tmp_path / "askkit", "vault", embedder)
    for query in ("rye starter", "brioche butter", "2026 april", "oven temperature"):
        assert kimun.pool(query) == index.pool(query) == askkit.pool(query)
        assert kimun.search(query, 5) == index.search(query, 5)


# -- non-finite vectors: a score that is no number is never returned ----------------------------


@pytest.mark.parametrize("value", [np.inf, np.nan])
def test_a_store_holding_a_non_finite_vector_is_refused_naming_the_chunk(
    tmp_path: Path, data: Any, value: float
) -> None:
    """kimun stores an embedder's NaN or infinite vector as it is (``to_blob`` cannot
    normalise it): searching such a vault would report infinite or NaN scores, which
    no JSON can carry, so the retriever names the chunk instead."""
    rows, vectors, queries = data
    poisoned = vectors[:30].copy()
    poisoned[17, 2] = value
    store = {"notes": (rows[:30], poisoned)}
    write_kimun_sqlite(tmp_path / "store", store, fingerprint=FINGERPRINT)
    with pytest.raises(StoreError, match="not finite") as err:
        StoreRetriever(tmp_path / "store", "notes", QueryVectors(queries)).search("q1")
    assert rows[17]["path"] in str(err.value)
    assert str(tmp_path / "store") in str(err.value)
    assert err.value.path is not None


def test_a_query_vector_that_is_not_finite_is_a_protocol_error(kimun_store: Path) -> None:
    queries = {"q": np.full(DIM, np.inf, dtype=np.float32)}
    retriever = StoreRetriever(kimun_store, "notes", QueryVectors(queries))
    with pytest.raises(ProtocolError, match="not finite"):
        retriever.search("q")
