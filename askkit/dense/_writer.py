"""askkit's own vector store, in kimun's schema: :class:`StoreWriter`.

It writes ``embeddings.db`` as kimun's ``VecSqlite`` does (kimun's DDL, WAL,
foreign keys, vectors normalised by :func:`~askkit.dense.store.normalise`),
with kimun's store semantics, so that askkit's store and a kimun server's can
be swapped; :class:`~askkit.dense.store.KimunStore` reads either. It writes
only into a folder askkit created. Import it from :mod:`askkit.dense`.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Self

import numpy as np
import pandas as pd

from askkit.dense.store import (
    _SELECT_IN_ORDER,
    COLUMNS,
    DB_FILE,
    FINGERPRINT_KEY,
    SCHEMA,
    Collection,
    StoredVault,
    _check_schema,
    _collection,
    _collections,
    _empty_vault,
    _fingerprint,
    _vault_from_rows,
    normalise,
)
from askkit.errors import DimensionError, SchemaError, StoreError, UsageError

__all__ = ["StoreWriter"]

_BATCH: Final = 500  # SQL parameters per statement in delete and chunks_with_vectors
_SELECT_ROWS: Final = (
    "SELECT id, path, hash, title, date, text, embedding FROM chunks WHERE collection_id = ?"
)


def _placeholders(n: int) -> str:
    """A ``?, ?, ...`` list of ``n`` SQL parameters (vecsqlite.rs ``placeholders``)."""
    return ", ".join(["?"] * n)


def _claim_folder(folder: Path) -> None:
    """Create or check the store folder: askkit writes only into a folder it made."""
    from askkit._cachedir import DENSE_STORE, claim, mark

    state = claim(
        folder,
        None,
        what="store folder",
        fix="give a new or empty folder, or one askkit made",
        foreign_hint=", such as a kimun server's own store (KimunStore reads one)",
        purpose=DENSE_STORE,
    )
    if state == "ours":
        return
    folder.mkdir(parents=True, exist_ok=True)
    mark(
        folder,
        DENSE_STORE,
        lifetime="askkit re-creates it whenever it is missing",
    )


def _column(frame: pd.DataFrame, name: str) -> list[Any]:
    if name not in frame.columns:
        raise UsageError(
            f"the chunks frame has no {name!r} column (it needs {', '.join(COLUMNS)}; "
            f"it has {', '.join(map(str, frame.columns))})"
        )
    col = frame[name]
    missing = col.isna().tolist()
    return [
        None if gone else v for v, gone in zip(col.astype(object).tolist(), missing, strict=True)
    ]


class StoreWriter:
    """askkit's own vector store, in kimun's schema and with kimun's store semantics.

    It writes ``folder/embeddings.db`` exactly as kimun's ``VecSqlite`` does
    (the same DDL, WAL mode, foreign keys, normalised float32 blobs), so a
    :class:`~askkit.dense.store.KimunStore` reads it and kimun's server could serve it.

    Parameters
    ----------
    folder:
        A new or empty folder, or one askkit made before: askkit marks it with
        its cache directory tag and never writes into a folder without it.
    dimension:
        The vector width every collection is created at: the embedder's.

    Raises
    ------
    UsageError
        The folder holds files askkit did not make, is a file or a link.
    StoreError
        The folder's ``embeddings.db`` cannot be opened as a kimun store.

    Notes
    -----
    One connection, as kimun's (SQLite has one writer anyway): use a writer
    from one thread at a time. :class:`~askkit.dense.store.KimunStore` reads the same file
    meanwhile, from any thread or process.
    """

    def __init__(self, folder: str | os.PathLike[str], *, dimension: int) -> None:
        if isinstance(dimension, bool) or not isinstance(dimension, int) or dimension <= 0:
            raise UsageError(f"dimension must be a positive vector width, not {dimension!r}")
        self.folder = Path(folder)
        self.dimension = dimension
        _claim_folder(self.folder)
        self.path = self.folder / DB_FILE
        self._conn: sqlite3.Connection | None = None
        try:
            conn = sqlite3.connect(
                self.path, timeout=5.0, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open {self.path} ({exc})", path=str(self.path)) from None
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA foreign_keys = ON")
            conn.executescript(SCHEMA)
            _check_schema(conn, self.path)
        except sqlite3.Error as exc:
            conn.close()
            raise StoreError(
                f"cannot open {self.path} as a kimun store ({exc})", path=str(self.path)
            ) from None
        except StoreError:
            conn.close()
            raise
        self._conn = conn

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            raise UsageError(f"the StoreWriter of {self.path} is closed")
        return self._conn

    @contextlib.contextmanager
    def _transaction(self, kind: str = "") -> Iterator[sqlite3.Connection]:
        conn = self.conn
        try:
            conn.execute(f"BEGIN {kind}")
        except sqlite3.Error as exc:
            raise StoreError(f"cannot write {self.path} ({exc})", path=str(self.path)) from None
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        try:
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            raise StoreError(f"cannot write {self.path} ({exc})", path=str(self.path)) from None

    def store(self, collection: str, chunks: pd.DataFrame, vectors: np.ndarray[Any, Any]) -> None:
        """Append chunks and their vectors (normalised here) to a vault's collection.

        As kimun's ``store``: nothing happens for no chunks; the collection is
        created at :attr:`dimension` if absent; replacing a note's chunks is the
        caller's job (:meth:`delete` its path first).

        Raises
        ------
        DimensionError
            The collection exists at another dimension (the embedder or model
            changed: drop it and re-index), or a vector is not
            :attr:`dimension` wide.
        """
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or len(vectors) != len(chunks):
            raise UsageError(
                f"store needs one vector per chunk: {len(chunks)} chunks but vectors of shape "
                f"{vectors.shape}"
            )
        if not len(chunks):
            return
        cols = {c: _column(chunks, c) for c in COLUMNS}
        for name in ("path", "hash", "text"):
            bad = next((i for i, v in enumerate(cols[name]) if not isinstance(v, str)), None)
            if bad is not None:
                raise SchemaError(
                    "kimun stores a string here",
                    field=f"chunks[{bad}].{name}",
                    value=cols[name][bad],
                )
        titles = [t if isinstance(t, str) else "" for t in cols["title"]]
        width = vectors.shape[1]
        with self._transaction("IMMEDIATE") as conn:
            found = _collection(conn, collection)
            if found is not None and found[1] != self.dimension:
                raise DimensionError(
                    f"SQLite collection `{collection}` in {self.path} has dimension {found[1]} but "
                    f"the embedder produces {self.dimension}. The embedder or model changed; drop "
                    "the collection and re-index.",
                    expected=self.dimension,
                    actual=found[1],
                )
            if found is None:
                cid = conn.execute(
                    "INSERT INTO collections (name, dimension) VALUES (?, ?)",
                    (collection, self.dimension),
                ).lastrowid
            else:
                cid = found[0]
            if width != self.dimension:
                raise DimensionError(
                    f"Chunk of `{cols['path'][0]}` has dimension {width} but the store is at "
                    f"{self.dimension}",
                    expected=self.dimension,
                    actual=width,
                )
            blob = normalise(vectors).astype("<f4", copy=False).tobytes()
            size = 4 * width
            conn.executemany(
                "INSERT INTO chunks (collection_id, path, hash, title, date, text, embedding) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    (cid, p, h, t, d, x, blob[i * size : (i + 1) * size])
                    for i, (p, h, t, d, x) in enumerate(
                        zip(
                            cols["path"],
                            cols["hash"],
                            titles,
                            cols["date"],
                            cols["text"],
                            strict=True,
                        )
                    )
                ),
            )

    def delete(self, collection: str, paths: Sequence[str]) -> None:
        """Remove every chunk of the given note paths (a missing collection: nothing to do)."""
        paths = list(paths)
        if not paths:
            return
        with self._transaction("IMMEDIATE") as conn:
            found = _collection(conn, collection)
            if found is None:
                return
            for start in range(0, len(paths), _BATCH):
                batch = paths[start : start + _BATCH]
                conn.execute(
                    "DELETE FROM chunks WHERE collection_id = ? AND path IN "  # noqa: S608 - only
                    f"({_placeholders(len(batch))})",  # "?" placeholders are formatted in
                    (found[0], *batch),
                )

    def chunks_with_vectors(
        self, collection: str, paths: Sequence[str]
    ) -> tuple[pd.DataFrame, np.ndarray[Any, Any]]:
        """The chunks of the given note paths and their stored vectors, in stored order.

        Vectors come back as stored (normalised): kimun reuses them for unchanged
        chunks, and storing them again leaves them as they are.
        """
        vault = self._rows(collection, list(paths))
        return vault.chunks, vault.matrix

    def _rows(self, collection: str, paths: list[str] | None) -> StoredVault:
        if paths is not None and not paths:
            return _empty_vault(collection, self.dimension)
        with self._transaction() as conn:
            found = _collection(conn, collection)
            if found is None:
                return _empty_vault(collection, self.dimension)
            cid, dimension = found
            if paths is None:
                rows = conn.execute(_SELECT_IN_ORDER, (cid,)).fetchall()
            else:
                rows = []
                for start in range(0, len(paths), _BATCH):
                    batch = paths[start : start + _BATCH]
                    rows += conn.execute(
                        f"{_SELECT_ROWS} AND path IN ({_placeholders(len(batch))})",
                        (cid, *batch),
                    ).fetchall()
        rows.sort(key=lambda r: r[0])
        return _vault_from_rows(rows, collection, dimension, self.path)

    def load(self, collection: str) -> StoredVault:
        """Every chunk of a collection with its vector (empty for a missing collection)."""
        return self._rows(collection, None)

    def indexed_notes(self, collection: str) -> dict[str, str]:
        """``{note path: content hash}`` of a collection (empty for a missing one)."""
        with self._transaction() as conn:
            found = _collection(conn, collection)
            if found is None:
                return {}
            rows = conn.execute(
                "SELECT DISTINCT path, hash FROM chunks WHERE collection_id = ?", (found[0],)
            ).fetchall()
        return {str(p): str(h) for p, h in rows}

    def collections(self) -> list[Collection]:
        """Every collection, by name, with its note and chunk counts and dimension."""
        with self._transaction() as conn:
            return _collections(conn)

    def read_fingerprint(self) -> str | None:
        """The recorded embedder fingerprint (trimmed, as kimun reads it), or None."""
        with self._transaction() as conn:
            return _fingerprint(conn)

    def write_fingerprint(self, fingerprint: str) -> None:
        """Record the embedder fingerprint, replacing any previous one."""
        with self._transaction("IMMEDIATE") as conn:
            conn.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (FINGERPRINT_KEY, fingerprint),
            )

    def drop_all_collections(self) -> None:
        """Delete every collection and its chunks; the fingerprint survives (kimun's)."""
        with self._transaction("IMMEDIATE") as conn:
            conn.execute("DELETE FROM chunks")
            conn.execute("DELETE FROM collections")

    def close(self) -> None:
        """Close the database (SQLite checkpoints the log into the file); idempotent."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = " (closed)" if self._conn is None else ""
        return f"<StoreWriter {self.path}, dimension {self.dimension}{state}>"
