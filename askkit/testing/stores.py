"""Vector stores written exactly as kimun's server writes them, for tests and benchmarks.

These writers are a second implementation of kimun's stores, kept apart from
:class:`askkit.dense.StoreWriter` on purpose, so that each can be checked
against the other and both against kimun's source:

- :func:`write_kimun_sqlite` follows ``VecSqlite`` (``server/src/dbembeddings/
  vecsqlite.rs``): kimun's DDL copied here verbatim, WAL mode, foreign keys,
  one transaction per vault and one ``INSERT`` per chunk, each embedding
  normalised by :func:`kimun_normalise` (``to_blob``: the norm summed left to
  right in float32) and stored as little-endian float32 bytes;
- :func:`write_kimun_qdrant` follows ``VecQdrant`` (``vecqdrant.rs``): one
  cosine collection per vault named ``<prefix>-<vault id>`` (the vault id alone
  for an empty prefix), a keyword index on ``path``, one point per chunk with a
  random UUID, the raw vector (Qdrant normalises it) and the payload ``path``,
  ``title``, ``date`` (``""`` when none), ``text``, ``hash``; the fingerprint
  in the reserved collection ``<prefix>-__fingerprint``. Points are upserted in
  batches (qdrant-client's local mode is slow one point at a time).

:func:`random_store_rows` makes chunks and vectors to store: notes of a few
chunks each, a quarter of them journal notes with a date, raw vectors of
varied length.

Examples
--------
>>> import tempfile
>>> rows, vectors = random_store_rows(4, 3, seed=0)
>>> rows[0]["path"], vectors.shape
('notes/note-000000.md', (4, 3))
>>> db = write_kimun_sqlite(tempfile.mkdtemp(), {"notes": (rows, vectors)}, fingerprint="fp")
>>> db.name
'embeddings.db'
"""

from __future__ import annotations

import datetime as _dt
import os
import random
import re
import sqlite3
import uuid
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from askkit.dense.store import SCHEMA
from askkit.testing.models import DEFAULT_VOCABULARY

__all__ = [
    "FINGERPRINT_POINT_ID",
    "KIMUN_DDL",
    "QDRANT_BATCH",
    "Rows",
    "insert_kimun_rows",
    "kimun_normalise",
    "open_kimun_sqlite",
    "qdrant_collection_name",
    "random_store_rows",
    "write_kimun_qdrant",
    "write_kimun_sqlite",
]

#: kimun's DDL (``VecSqlite::new`` in vecsqlite.rs), kimun's literal text; the rest of this
#: writer (row-by-row inserts, its own ``to_blob``) is independent of askkit.dense.
KIMUN_DDL = SCHEMA
#: The fixed point id of kimun's fingerprint point (an upsert overwrites it).
FINGERPRINT_POINT_ID = "00000000-0000-0000-0000-000000000001"
#: Points per upsert in :func:`write_kimun_qdrant`.
QDRANT_BATCH = 256

#: Chunks to store: mappings with ``path``, ``hash``, ``title``, ``date`` (or None), ``text``.
Rows = Sequence[Mapping[str, Any]] | pd.DataFrame

#: The words of the generated chunk texts.
_WORDS = sorted(set(re.findall(r"[a-z]+", DEFAULT_VOCABULARY.lower())))


def kimun_normalise(vectors: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Rows scaled as kimun's ``to_blob`` scales them, computed with ``np.cumsum``.

    ``np.cumsum`` adds left to right, so its last column is the float32 sum of
    squares in kimun's order; the scale is ``1 / sqrt(sum)`` in float32, and a
    row of norm 0 (or NaN) is kept as it is.
    """
    rows = np.asarray(vectors, dtype=np.float32)
    if rows.ndim != 2:
        raise ValueError(f"kimun_normalise takes a matrix, not {rows.ndim}-d data")
    out = np.empty_like(rows)
    with np.errstate(all="ignore"):  # IEEE float32 as in Rust: overflow to inf is silent
        _normalise_into(rows, out)
    return out


def _normalise_into(rows: np.ndarray[Any, Any], out: np.ndarray[Any, Any]) -> None:
    for start in range(0, rows.shape[0], 4096):
        block = rows[start : start + 4096]
        if rows.shape[1]:
            sums = np.cumsum(block * block, axis=1, dtype=np.float32)[:, -1]
        else:
            sums = np.zeros(len(block), dtype=np.float32)
        norms = np.sqrt(sums)
        scale = np.where(norms > 0, np.float32(1.0) / norms, np.float32(1.0))
        out[start : start + 4096] = block * scale.astype(np.float32)[:, None]


def _records(rows: Rows) -> list[Mapping[str, Any]]:
    if isinstance(rows, pd.DataFrame):
        frame = rows.astype(object).where(rows.notna(), None)
        return [{str(k): v for k, v in r.items()} for r in frame.to_dict("records")]
    return list(rows)


def open_kimun_sqlite(folder: str | os.PathLike[str]) -> sqlite3.Connection:
    """Open (creating if needed) ``folder/embeddings.db`` as ``VecSqlite::new`` does.

    The folder is created, the database opened in WAL mode with foreign keys
    on, and kimun's DDL run. The connection is in autocommit mode.
    """
    Path(folder).mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(Path(folder) / "embeddings.db", isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.executescript(KIMUN_DDL)
    return conn


def insert_kimun_rows(
    conn: sqlite3.Connection,
    vault_id: str,
    rows: Rows,
    vectors: np.ndarray[Any, Any],
    *,
    dimension: int | None = None,
) -> None:
    """Store chunks as kimun's ``VecSqlite::store`` does: one transaction, one INSERT each.

    Nothing happens for no rows; the vault's collection is created at
    ``dimension`` (default: the vectors' width) if absent. An existing
    collection at another width raises ``ValueError``, as kimun refuses it.
    """
    records = _records(rows)
    if not records:
        return
    matrix = np.asarray(vectors, dtype=np.float32).reshape(len(records), -1)
    dim = matrix.shape[1] if dimension is None else dimension
    conn.execute("BEGIN")
    try:
        found = conn.execute(
            "SELECT id, dimension FROM collections WHERE name = ?", (vault_id,)
        ).fetchone()
        if found is not None and found[1] != dim:
            raise ValueError(f"SQLite collection `{vault_id}` has dimension {found[1]}, not {dim}")
        if found is None:
            cid = conn.execute(
                "INSERT INTO collections (name, dimension) VALUES (?, ?)", (vault_id, dim)
            ).lastrowid
        else:
            cid = found[0]
        blobs = kimun_normalise(matrix).astype("<f4")
        for record, blob in zip(records, blobs, strict=True):
            conn.execute(
                "INSERT INTO chunks (collection_id, path, hash, title, date, text, embedding)\n"
                "                 VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    cid,
                    record["path"],
                    record["hash"],
                    record.get("title", ""),
                    record.get("date"),
                    record["text"],
                    blob.tobytes(),
                ),
            )
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def write_kimun_sqlite(
    folder: str | os.PathLike[str],
    collections: Mapping[str, tuple[Rows, np.ndarray[Any, Any]]],
    *,
    fingerprint: str | None = None,
) -> Path:
    """Write a kimun SQLite store in ``folder``: ``{vault id: (rows, vectors)}``; return the file.

    Each vault is stored as kimun's server stores a batch; a vault given no
    rows gets an empty collection (as kimun leaves one whose notes were all
    deleted). ``fingerprint`` goes in ``meta``. The database is closed, so
    SQLite checkpoints the log into the file and removes it.
    """
    conn = open_kimun_sqlite(folder)
    try:
        for vault_id, (rows, vectors) in collections.items():
            matrix = np.asarray(vectors, dtype=np.float32)
            if not len(_records(rows)):
                width = matrix.shape[1] if matrix.ndim == 2 else 0
                conn.execute(
                    "INSERT OR IGNORE INTO collections (name, dimension) VALUES (?, ?)",
                    (vault_id, width),
                )
                continue
            insert_kimun_rows(conn, vault_id, rows, matrix)
        if fingerprint is not None:
            conn.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?)\n"
                "             ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                ("embedder.fingerprint", fingerprint),
            )
    finally:
        conn.close()
    return Path(folder) / "embeddings.db"


def qdrant_collection_name(prefix: str, vault_id: str) -> str:
    """kimun's Qdrant collection for a vault: ``<prefix>-<vault id>``, or the id alone."""
    return f"{prefix}-{vault_id}" if prefix else vault_id


def write_kimun_qdrant(
    client: Any,
    prefix: str,
    vault_id: str,
    rows: Rows,
    vectors: np.ndarray[Any, Any],
    *,
    fingerprint: str | None = None,
    seed: int | None = None,
) -> str:
    """Store chunks in Qdrant as kimun's ``VecQdrant::store`` does; return the collection name.

    ``client`` is a ``qdrant_client.QdrantClient`` (a server, or local mode).
    Point ids are random UUIDs as kimun's, drawn from ``seed`` when given.
    """
    from qdrant_client import models

    records = _records(rows)
    matrix = np.asarray(vectors, dtype=np.float32)
    matrix = matrix.reshape(len(records), matrix.shape[-1] if matrix.ndim else 0)
    name = qdrant_collection_name(prefix, vault_id)
    dim = matrix.shape[1]
    if client.collection_exists(name):
        existing = client.get_collection(name).config.params.vectors.size
        if existing != dim:
            raise ValueError(f"Qdrant collection `{name}` has dimension {existing}, not {dim}")
    else:
        client.create_collection(
            name, vectors_config=models.VectorParams(size=dim, distance=models.Distance.COSINE)
        )
        with warnings.catch_warnings():  # local mode: "Payload indexes have no effect"
            warnings.filterwarnings("ignore", message="Payload indexes have no effect")
            client.create_payload_index(name, "path", models.PayloadSchemaType.KEYWORD, wait=True)
    rng = random.Random(seed)  # noqa: S311 - test data, not secrets
    points = []
    for record, vector in zip(records, matrix, strict=True):
        point_id = (
            uuid.UUID(int=rng.getrandbits(128), version=4) if seed is not None else uuid.uuid4()
        )
        payload = {
            "path": record["path"],
            "title": record.get("title") or "",
            "date": record.get("date") or "",
            "text": record["text"],
            "hash": record["hash"],
        }
        points.append(models.PointStruct(id=str(point_id), vector=vector.tolist(), payload=payload))
    for start in range(0, len(points), QDRANT_BATCH):
        client.upsert(name, points=points[start : start + QDRANT_BATCH], wait=True)
    if fingerprint is not None:
        fp_name = qdrant_collection_name(prefix, "__fingerprint")
        if not client.collection_exists(fp_name):
            client.create_collection(
                fp_name, vectors_config=models.VectorParams(size=1, distance=models.Distance.COSINE)
            )
        point = models.PointStruct(
            id=FINGERPRINT_POINT_ID, vector=[0.0], payload={"fingerprint": fingerprint}
        )
        client.upsert(fp_name, points=[point], wait=True)
    return name


def random_store_rows(
    n: int, dim: int, seed: int = 0
) -> tuple[list[dict[str, Any]], np.ndarray[Any, Any]]:
    """``n`` chunks of about ``n / 3`` notes and their raw (unnormalised) float32 vectors.

    Chunk ``i`` belongs to note ``i // 3``; every fourth note is a journal note
    (``journal/YYYY-MM-DD.md`` with that ``date``), the others
    ``notes/note-NNNNNN.md`` with no date. Titles are kimun breadcrumbs
    (``\\x1f``-separated), texts a dozen random words, hashes one per note.
    Vectors are normal with a random length per row.
    """
    rng = np.random.default_rng(seed)
    notes = (n + 2) // 3
    hashes = [str(h) for h in rng.integers(0, 2**63, size=notes, dtype=np.uint64)]
    words = np.asarray(_WORDS)[rng.integers(0, len(_WORDS), size=(n, 12))]
    first_day = _dt.date(2020, 1, 1)
    rows: list[dict[str, Any]] = []
    for i in range(n):
        note = i // 3
        text = " ".join(words[i])
        if note % 4 == 3:
            date = (first_day + _dt.timedelta(days=note)).isoformat()
            rows.append(
                {
                    "path": f"journal/{date}.md",
                    "hash": hashes[note],
                    "title": f"{date}\x1fMorning",
                    "date": date,
                    "text": f"{text} ({i})",
                }
            )
        else:
            rows.append(
                {
                    "path": f"notes/note-{note:06d}.md",
                    "hash": hashes[note],
                    "title": f"Note {note}\x1fSection {i % 3}",
                    "date": None,
                    "text": f"{text} ({i})",
                }
            )
    lengths = rng.uniform(0.25, 4.0, size=(n, 1)).astype(np.float32)
    vectors = rng.standard_normal((n, dim), dtype=np.float32) * lengths
    return rows, vectors
