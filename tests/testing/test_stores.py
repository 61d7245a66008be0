"""askkit.testing.stores: stores written as kimun writes them, checked against kimun's source.

Pinned to kimun's ``server/src/dbembeddings/vecsqlite.rs`` at commit
55d17b21f70d773694ee104702380b1ae722f862 (DDL, ``to_blob``, ``store``) and
``vecqdrant.rs`` at e03e4e8bc14d453383d66c42148e4156b999fcd4 (collection
names, payload, point ids, the fingerprint collection).
"""

from __future__ import annotations

import re
import sqlite3
import uuid
from pathlib import Path

import numpy as np
import pytest
from qdrant_client import QdrantClient, models

from askkit.testing.stores import (
    FINGERPRINT_POINT_ID,
    KIMUN_DDL,
    QDRANT_BATCH,
    insert_kimun_rows,
    kimun_normalise,
    open_kimun_sqlite,
    qdrant_collection_name,
    random_store_rows,
    write_kimun_qdrant,
    write_kimun_sqlite,
)


def to_blob_scalar(vector: np.ndarray) -> np.ndarray:
    """kimun's ``to_blob`` one float32 operation at a time, as Rust runs it."""
    with np.errstate(all="ignore"):
        total = np.float32(0.0)
        for x in vector:
            total = np.float32(total + np.float32(x * x))
        norm = np.float32(np.sqrt(total))
        scale = np.float32(1.0) / norm if norm > 0 else np.float32(1.0)
        return np.array([np.float32(x * scale) for x in vector], dtype=np.float32)


def test_kimun_normalise_is_to_blob_bit_for_bit() -> None:
    _, vectors = random_store_rows(200, 24, seed=5)
    vectors[0] = 0.0  # kept as is
    vectors[1, 3] = np.nan  # NaN norm: scale 1, as "norm > 0.0" is false in Rust
    vectors[2] *= 1e20  # the squares overflow: the scale is 0
    vectors[3] *= 1e-22  # the squares underflow
    got = kimun_normalise(vectors)
    for i, vector in enumerate(vectors):
        assert got[i].view(np.uint32).tolist() == to_blob_scalar(vector).view(np.uint32).tolist()


def _statements(ddl: str) -> dict[str, str]:
    """CREATE statements by object name, whitespace collapsed, without IF NOT EXISTS."""
    out = {}
    for statement in ddl.split(";"):
        text = " ".join(statement.split()).replace(" IF NOT EXISTS", "")
        if text:
            out[text.split()[2]] = text
    return out


def test_the_sqlite_store_has_kimuns_schema_in_wal_mode(tmp_path: Path) -> None:
    rows, vectors = random_store_rows(3, 4)
    db = write_kimun_sqlite(tmp_path, {"v": (rows, vectors)})
    assert db == tmp_path / "embeddings.db"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["embeddings.db"]  # checkpointed
    header = db.read_bytes()[:100]
    assert header[:16] == b"SQLite format 3\x00"
    assert header[18:20] == b"\x02\x02"  # WAL
    conn = sqlite3.connect(db)
    stored = {
        name: " ".join(sql.split())
        for name, sql in conn.execute("SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL")
    }
    conn.close()
    assert stored == _statements(KIMUN_DDL)
    assert set(stored) == {"collections", "chunks", "chunks_by_path", "meta"}


def test_rows_are_stored_in_order_with_kimuns_blobs_and_fingerprint(tmp_path: Path) -> None:
    rows, vectors = random_store_rows(30, 6, seed=2)
    write_kimun_sqlite(
        tmp_path,
        {"a": (rows, vectors), "b": (rows[:2], vectors[:2]), "empty": ([], np.zeros((0, 6)))},
        fingerprint="fastembed:default:6",
    )
    conn = sqlite3.connect(tmp_path / "embeddings.db")
    try:
        collections = conn.execute("SELECT id, name, dimension FROM collections").fetchall()
        assert collections == [(1, "a", 6), (2, "b", 6), (3, "empty", 6)]
        stored = conn.execute(
            "SELECT path, hash, title, date, text, embedding FROM chunks WHERE collection_id = 1 "
            "ORDER BY id"
        ).fetchall()
        meta = conn.execute("SELECT key, value FROM meta").fetchall()
        assert conn.execute("SELECT COUNT(*) FROM chunks").fetchone() == (32,)
    finally:
        conn.close()
    blobs = kimun_normalise(vectors).astype("<f4")
    assert stored == [
        (r["path"], r["hash"], r["title"], r["date"], r["text"], blob.tobytes())
        for r, blob in zip(rows, blobs, strict=True)
    ]
    assert meta == [("embedder.fingerprint", "fastembed:default:6")]


def test_insert_rows_stores_nothing_for_no_rows_and_refuses_another_width(tmp_path: Path) -> None:
    conn = open_kimun_sqlite(tmp_path)
    rows, vectors = random_store_rows(4, 3)
    insert_kimun_rows(conn, "v", [], np.zeros((0, 3)))
    assert conn.execute("SELECT COUNT(*) FROM collections").fetchone() == (0,)
    insert_kimun_rows(conn, "v", rows[:2], vectors[:2])
    with pytest.raises(ValueError, match="dimension 3, not 5"):
        insert_kimun_rows(conn, "v", rows[2:], np.ones((2, 5)))
    assert conn.execute("SELECT COUNT(*) FROM chunks").fetchone() == (2,)  # rolled back
    conn.close()


def test_random_store_rows_are_notes_of_three_chunks_with_journal_dates() -> None:
    rows, vectors = random_store_rows(100, 16, seed=3)
    again, same = random_store_rows(100, 16, seed=3)
    assert rows == again
    assert np.array_equal(vectors, same)
    assert random_store_rows(100, 16, seed=4)[0] != rows
    assert vectors.dtype == np.float32
    assert vectors.shape == (100, 16)
    assert not np.allclose(np.linalg.norm(vectors, axis=1), 1.0)  # raw, as an embedder gives
    assert len({r["path"] for r in rows}) == 34
    assert len({r["text"] for r in rows}) == 100
    for r in rows:
        assert set(r) == {"path", "hash", "title", "date", "text"}
        if r["date"] is not None:
            assert r["path"] == f"journal/{r['date']}.md"
            assert r["title"].startswith(r["date"] + "\x1f")
        else:
            assert re.fullmatch(r"notes/note-\d{6}\.md", r["path"])
    hashes = {r["path"]: r["hash"] for r in rows}
    assert all(hashes[r["path"]] == r["hash"] for r in rows)  # one hash per note
    assert any(r["date"] for r in rows)


def test_the_qdrant_store_is_laid_out_as_kimuns() -> None:
    client = QdrantClient(":memory:")
    rows, vectors = random_store_rows(QDRANT_BATCH + 10, 5, seed=6)
    name = write_kimun_qdrant(client, "kimun_embeddings", "v", rows, vectors, fingerprint="fp")
    assert name == "kimun_embeddings-v" == qdrant_collection_name("kimun_embeddings", "v")
    assert qdrant_collection_name("", "v") == "v"
    params = client.get_collection(name).config.params.vectors
    assert isinstance(params, models.VectorParams)
    assert (params.size, params.distance) == (5, models.Distance.COSINE)
    points, _ = client.scroll(name, limit=1000, with_payload=True, with_vectors=True)
    assert len(points) == len(rows)  # every batch was written
    by_text = {r["text"]: (r, v) for r, v in zip(rows, vectors, strict=True)}
    for point in points:
        assert uuid.UUID(str(point.id)).version == 4
        row, raw = by_text[point.payload["text"]]
        assert point.payload == {
            "path": row["path"],
            "title": row["title"],
            "date": row["date"] or "",  # kimun's get_date_string().unwrap_or_default()
            "text": row["text"],
            "hash": row["hash"],
        }
        np.testing.assert_allclose(point.vector, raw / np.linalg.norm(raw), atol=1e-6)
    fp_points, _ = client.scroll("kimun_embeddings-__fingerprint", with_payload=True)
    assert [(str(p.id), p.payload) for p in fp_points] == [
        (FINGERPRINT_POINT_ID, {"fingerprint": "fp"})
    ]
    write_kimun_qdrant(client, "kimun_embeddings", "v", rows[:2], vectors[:2], fingerprint="fp2")
    assert client.count(name).count == len(rows) + 2  # appended, as kimun's store
    fp_points, _ = client.scroll("kimun_embeddings-__fingerprint", with_payload=True)
    assert [p.payload for p in fp_points] == [{"fingerprint": "fp2"}]  # overwritten
    with pytest.raises(ValueError, match="dimension 5, not 3"):
        write_kimun_qdrant(client, "kimun_embeddings", "v", rows[:1], np.ones((1, 3)))
    client.close()


def test_qdrant_point_ids_follow_the_seed() -> None:
    rows, vectors = random_store_rows(5, 3)
    ids = []
    for _ in range(2):
        client = QdrantClient(":memory:")
        write_kimun_qdrant(client, "p", "v", rows, vectors, seed=9)
        ids.append(sorted(str(p.id) for p in client.scroll("p-v")[0]))
        client.close()
    assert ids[0] == ids[1]
    client = QdrantClient(":memory:")
    write_kimun_qdrant(client, "p", "v", rows, vectors)
    assert sorted(str(p.id) for p in client.scroll("p-v")[0]) != ids[0]
    client.close()
