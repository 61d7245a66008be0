"""askkit's own vector store, in kimun's schema: :class:`StoreWriter`.

It writes ``embeddings.db`` as kimun's ``VecSqlite`` does (kimun's DDL, WAL,
foreign keys, vectors normalised by :func:`~askkit.dense.vectors.normalise`),
with kimun's store semantics, so that askkit's store and a kimun server's can
be swapped; :class:`~askkit.dense.store.KimunStore` reads either. It writes
only into a folder askkit created. Import it from :mod:`askkit.dense`.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Self

import numpy as np
import pandas as pd

from askkit.dense import _schema
from askkit.dense._schema import (
    COLUMNS,
    DB_FILE,
    FINGERPRINT_KEY,
    SCHEMA,
    Collection,
    StoredVault,
)
from askkit.dense.vectors import normalise
from askkit.errors import DimensionError, SchemaError, StoreError, UsageError

__all__ = ["STORE_UNTRUSTED_FIX", "StoreWriter"]

_BATCH: Final = 500  # SQL parameters per statement in delete and chunks_with_vectors
_NEARLY_FULL: Final = 1 << 20  # free bytes under which a disk I/O error is a full disk
_SELECT_ROWS: Final = (
    "SELECT id, path, hash, title, date, text, embedding FROM chunks WHERE collection_id = ?"
)


def _rollback(conn: sqlite3.Connection) -> None:
    """Undo the open transaction, if SQLite has not already (it does on a full disk); the
    error that led here is the one to report, so a failing rollback adds nothing."""
    if conn.in_transaction:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")


def _free_space(folder: Path) -> int | None:
    try:
        st = os.statvfs(folder)
    except (OSError, AttributeError):  # AttributeError: no statvfs on this system
        return None
    return st.f_bavail * st.f_frsize


def _bytes(count: int | None) -> str:
    if count is None:
        return "unknown space"
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if count >= size:
            return f"{count / size:.1f} {unit}"
    return f"{count} bytes"


def _placeholders(n: int) -> str:
    """A ``?, ?, ...`` list of ``n`` SQL parameters (vecsqlite.rs ``placeholders``)."""
    return ", ".join(["?"] * n)


#: What to do with a store folder askkit does not trust (another user's, writable by others).
STORE_UNTRUSTED_FIX: Final = (
    "remove that folder yourself and askkit embeds the vault into a new one, or give another "
    "store folder"
)


def _claim_folder(folder: Path) -> None:
    """Create or check the store folder: askkit writes only into a folder it made.

    A new folder, or an empty one askkit takes, is made private (mode 0700),
    so that it keeps askkit's rule for its folders
    (:func:`askkit._cachedir.untrusted`) whatever the umask gives the files
    SQLite creates in it. Failing to make it (a part of its path is a file, a
    full disk) raises :class:`~askkit.errors.StoreError` naming it.
    """
    from askkit._cachedir import DENSE_STORE, claim, mark, writing

    state = claim(
        folder,
        None,
        what="store folder",
        fix="give a new or empty folder, or one askkit made",
        foreign_hint=", such as a kimun server's own store (KimunStore reads one)",
        purpose=DENSE_STORE,
        untrusted_fix=STORE_UNTRUSTED_FIX,
    )
    if state == "ours":
        return
    with writing(
        folder,
        what="store folder",
        fix="give another store folder, or set ASKKIT_CACHE_DIR to a folder you can write",
    ):
        folder.parent.mkdir(parents=True, exist_ok=True)
        folder.mkdir(mode=0o700, exist_ok=True)
        folder.chmod(0o700)  # an empty folder askkit takes becomes private too
        mark(
            folder,
            DENSE_STORE,
            lifetime="askkit re-creates it whenever it is missing",
        )


def _unencodable(values: Sequence[str]) -> tuple[int, UnicodeEncodeError] | None:
    """The first string that has no UTF-8 form (a lone surrogate), with the error, or None.

    SQLite stores text as UTF-8; Python's sqlite3 raises a bare UnicodeEncodeError
    for a string with a lone surrogate (what ``errors="surrogateescape"`` makes of
    undecodable bytes).
    """
    try:
        "".join(values).encode("utf-8")
    except UnicodeEncodeError:
        for i, value in enumerate(values):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as exc:
                return i, exc
    return None


def _surrogate_error(field: str, value: str, exc: UnicodeEncodeError) -> SchemaError:
    char = value[exc.start]
    return SchemaError(
        f"kimun stores UTF-8 text here, and a lone surrogate (U+{ord(char):04X} at character "
        f"{exc.start}) has none: read the note as UTF-8 with errors='strict' or 'replace'",
        field=field,
        value=value,
    )


def _check_paths(paths: list[Any]) -> None:
    """Note paths given to look up or delete: strings SQLite can hold."""
    for i, path in enumerate(paths):
        if not isinstance(path, str):
            raise SchemaError("a note path is a string", field=f"paths[{i}]", value=path)
    bad = _unencodable(paths)
    if bad is not None:
        i, exc = bad
        raise _surrogate_error(f"paths[{i}]", paths[i], exc)


def _check_vault_id(collection: object) -> str:
    if not isinstance(collection, str) or _unencodable([collection]) is not None:
        raise UsageError(
            f"the vault id {collection!r} is not text SQLite can store (a string without lone "
            "surrogates)"
        )
    return collection


def _float32(vectors: object, rows: int) -> np.ndarray[Any, Any]:
    """``vectors`` as float32 ``(rows, d)``; a value out of float32's range becomes infinite."""
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            array = np.asarray(vectors, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise UsageError(
            f"store needs numeric vectors, not {type(vectors).__name__} ({exc})"
        ) from None
    if array.ndim != 2 or len(array) != rows:
        raise UsageError(
            f"store needs one vector per chunk: {rows} chunks but vectors of shape {array.shape}"
        )
    return array


def _nonfinite_error(vectors: np.ndarray[Any, Any], paths: list[Any]) -> SchemaError | None:
    """A SchemaError naming the first chunk whose vector holds NaN or an infinity, or None."""
    finite = np.isfinite(vectors).all(axis=1)
    if finite.all():
        return None
    i = int(np.flatnonzero(~finite)[0])
    value = float(vectors[i][~np.isfinite(vectors[i])][0])
    return SchemaError(
        f"the vector of chunk {i} ({paths[i]!r}) is not finite in float32 (it holds {value}): "
        "kimun's search cannot rank it; check the embedder",
        field=f"vectors[{i}]",
        value=value,
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
        The folder's ``embeddings.db`` cannot be opened as a kimun store, or it
        or a side file (``-wal``, ``-shm``, ``-journal``) is a symbolic link, not
        a regular file, or a file with other names (hard links): SQLite would
        write through it, into a kimun server's store or any other file. Any
        write raises it when SQLite fails (a full disk is named as such), and
        leaves nothing of that write behind.

    Notes
    -----
    One connection, as kimun's (SQLite has one writer anyway): use a writer
    from one thread at a time. Commits do not wait for the disk
    (``synchronous = NORMAL``): in WAL mode the file stays whole through a
    crash or a power loss, which can only take back the last writes.
    :class:`~askkit.dense.store.KimunStore` reads the same file meanwhile, from
    any thread or process.
    """

    def __init__(self, folder: str | os.PathLike[str], *, dimension: int) -> None:
        if isinstance(dimension, bool) or not isinstance(dimension, int) or dimension <= 0:
            raise UsageError(f"dimension must be a positive vector width, not {dimension!r}")
        self.folder = Path(folder)
        self.dimension = dimension
        _claim_folder(self.folder)
        self.path = self.folder / DB_FILE
        self._conn: sqlite3.Connection | None = None
        _schema.check_files(self.path, writing=True)
        try:
            conn = sqlite3.connect(
                self.path, timeout=5.0, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise self._error(exc, "open") from None
        try:
            self._check_opened(conn)
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA foreign_keys = ON")
            # A commit no longer waits for the disk: in WAL mode the file stays whole after
            # a crash or power loss, which may take back only the last batches; the next
            # index finds their notes missing from the store and writes them again.
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.executescript(SCHEMA)
            _schema.check_schema(conn, self.path)
        except sqlite3.Error as exc:
            conn.close()
            raise self._error(exc, "open") from None
        except StoreError:
            conn.close()
            raise
        self._conn = conn

    def _check_opened(self, conn: sqlite3.Connection) -> None:
        """Refuse a connection that SQLite opened on another file than the folder's own
        ``embeddings.db`` (a link made after the check), before anything is written."""
        opened = next((r[2] for r in conn.execute("PRAGMA database_list") if r[1] == "main"), "")
        expected = Path(os.path.realpath(self.folder)) / DB_FILE
        if Path(opened) != expected:
            raise StoreError(
                f"{self.path} leads to {opened}, not to the store folder's own file; askkit "
                "writes only the files of its own store folder, never through a link",
                path=str(self.path),
            )

    def _error(self, exc: sqlite3.Error, doing: str = "write") -> StoreError:
        """An SQLite failure as a StoreError naming the file and, when it is, the full disk."""
        name = getattr(exc, "sqlite_errorname", "") or ""
        db = self.path
        undone = "nothing of this write was stored" if doing == "write" else "nothing was written"
        free = _free_space(self.folder)
        if name.startswith("SQLITE_FULL") or (
            name.startswith("SQLITE_IOERR") and free is not None and free < _NEARLY_FULL
        ):
            return StoreError(
                f"cannot {doing} {db}: the disk holding it is full, or the database reached "
                f"its size limit (SQLite: {exc}; {_bytes(free)} free on its file system); "
                f"{undone}: free some space and index again",
                path=str(db),
            )
        if name.startswith("SQLITE_IOERR"):
            return StoreError(
                f"cannot {doing} {db}: disk I/O error ({name}); the disk may be full, the file "
                f"may have reached a size limit (ulimit -f), or the disk may be failing "
                f"({_bytes(free)} free on its file system); {undone}",
                path=str(db),
            )
        if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
            return StoreError(
                f"cannot {doing} {db}: another connection holds its lock (waited 5 s); {undone}: "
                "try again when the other writer is done",
                path=str(db),
            )
        if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")):
            return StoreError(
                f"cannot {doing} {db}: it is damaged or not an SQLite database ({exc}); askkit "
                "made this folder: delete it and index again",
                path=str(db),
            )
        return StoreError(f"cannot {doing} {db} ({exc}); {undone}", path=str(db))

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            raise UsageError(f"the StoreWriter of {self.path} is closed")
        return self._conn

    @contextlib.contextmanager
    def _transaction(self, kind: str = "") -> Iterator[sqlite3.Connection]:
        """One transaction: all of the block's writes, or none (rolled back on any error)."""
        conn = self.conn
        try:
            conn.execute(f"BEGIN {kind}")
        except sqlite3.Error as exc:
            raise self._error(exc) from None
        try:
            yield conn
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            _rollback(conn)
            raise self._error(exc) from None
        except BaseException:
            _rollback(conn)
            raise

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
        SchemaError
            A chunk's path, hash or text is not a string, its title or date
            neither a string nor missing, a string holds a lone surrogate (no
            UTF-8 form, so SQLite cannot store it), or its vector holds NaN or
            an infinity (kimun could not rank it). The field names the chunk
            (``chunks[3].title``, ``vectors[3]``); nothing is stored.
        StoreError
            SQLite could not write (a full disk is named as such); nothing of
            this call is stored.
        """
        collection = _check_vault_id(collection)
        vectors = _float32(vectors, len(chunks))
        if not len(chunks):
            return
        self._append(collection, {c: _column(chunks, c) for c in COLUMNS}, vectors)

    def _append(
        self, collection: str, cols: dict[str, list[Any]], vectors: np.ndarray[Any, Any]
    ) -> np.ndarray[Any, Any]:
        """:meth:`store` of columns (``COLUMNS``, one list each) and float32 vectors, checked;
        returns the vectors normalised as stored. The index calls it with a batch of notes'
        columns, which spares it a frame."""
        for name in ("path", "hash", "text"):
            bad = next((i for i, v in enumerate(cols[name]) if not isinstance(v, str)), None)
            if bad is not None:
                raise SchemaError(
                    "kimun stores a string here",
                    field=f"chunks[{bad}].{name}",
                    value=cols[name][bad],
                )
        for name in ("title", "date"):
            bad = next((i for i, v in enumerate(cols[name]) if not isinstance(v, str | None)), None)
            if bad is not None:
                raise SchemaError(
                    "kimun stores a string or nothing here",
                    field=f"chunks[{bad}].{name}",
                    value=cols[name][bad],
                )
        for name in COLUMNS:
            unencodable = _unencodable([v for v in cols[name] if v is not None])
            if unencodable is not None:
                present = [i for i, v in enumerate(cols[name]) if v is not None]
                i, exc = unencodable
                raise _surrogate_error(f"chunks[{present[i]}].{name}", cols[name][present[i]], exc)
        titles = [t if isinstance(t, str) else "" for t in cols["title"]]
        width = vectors.shape[1]
        if width != self.dimension:
            raise DimensionError(
                f"Chunk of `{cols['path'][0]}` has dimension {width} but the store is at "
                f"{self.dimension}",
                expected=self.dimension,
                actual=width,
            )
        problem = _nonfinite_error(vectors, cols["path"])
        if problem is not None:
            raise problem
        stored = normalise(vectors)
        blob = stored.astype("<f4", copy=False).tobytes()
        size = 4 * width
        with self._transaction("IMMEDIATE") as conn:
            found = _schema.collection(conn, collection, self.path)
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
            conn.executemany(
                "INSERT INTO chunks (collection_id, path, hash, title, date, text, embedding) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                zip(
                    itertools.repeat(cid),
                    cols["path"],
                    cols["hash"],
                    titles,
                    cols["date"],
                    cols["text"],
                    (blob[i : i + size] for i in range(0, len(blob), size)),
                ),
            )
        return stored

    def delete(self, collection: str, paths: Sequence[str]) -> None:
        """Remove every chunk of the given note paths (a missing collection: nothing to do)."""
        collection = _check_vault_id(collection)
        paths = list(paths)
        _check_paths(paths)
        if not paths:
            return
        with self._transaction("IMMEDIATE") as conn:
            found = _schema.collection(conn, collection, self.path)
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
        paths = list(paths)
        _check_paths(paths)
        vault = self._rows(_check_vault_id(collection), paths)
        return vault.chunks, vault.matrix

    def _rows(self, collection: str, paths: list[str] | None) -> StoredVault:
        if paths is not None and not paths:
            return _schema.empty_vault(collection, self.dimension)
        with self._transaction() as conn:
            found = _schema.collection(conn, collection, self.path)
            if found is None:
                return _schema.empty_vault(collection, self.dimension)
            cid, dimension = found
            if paths is None:
                rows = conn.execute(_schema.SELECT_IN_ORDER, (cid,)).fetchall()
            else:
                rows = []
                for start in range(0, len(paths), _BATCH):
                    batch = paths[start : start + _BATCH]
                    rows += conn.execute(
                        f"{_SELECT_ROWS} AND path IN ({_placeholders(len(batch))})",
                        (cid, *batch),
                    ).fetchall()
        rows.sort(key=lambda r: r[0])
        return _schema.vault_from_rows(rows, collection, dimension, self.path)

    def load(self, collection: str) -> StoredVault:
        """Every chunk of a collection with its vector (empty for a missing collection)."""
        return self._rows(_check_vault_id(collection), None)

    def indexed_notes(self, collection: str) -> dict[str, str]:
        """``{note path: content hash}`` of a collection (empty for a missing one)."""
        collection = _check_vault_id(collection)
        with self._transaction() as conn:
            found = _schema.collection(conn, collection, self.path)
            if found is None:
                return {}
            rows = conn.execute(
                "SELECT DISTINCT path, hash FROM chunks WHERE collection_id = ?", (found[0],)
            ).fetchall()
            for column in ("path", "hash"):
                values = [r[column == "hash"] for r in rows]
                bad = _schema.first_not(values, (str,))
                if bad is not None:
                    (row_id,) = conn.execute(
                        f"SELECT MIN(id) FROM chunks WHERE collection_id = ? "  # noqa: S608 - a
                        f"AND {column} IS ?",  # column name of two, never a value
                        (found[0], values[bad]),
                    ).fetchone()
                    where = f"table chunks, row id {row_id}"
                    raise _schema.bad_value(self.path, where, column, values[bad], "text")
        return dict(rows)

    def collections(self) -> list[Collection]:
        """Every collection, by name, with its note and chunk counts and dimension."""
        with self._transaction() as conn:
            return _schema.collections(conn, self.path)

    def read_fingerprint(self) -> str | None:
        """The recorded embedder fingerprint (trimmed, as kimun reads it), or None."""
        with self._transaction() as conn:
            return _schema.fingerprint(conn, self.path)

    def write_fingerprint(self, fingerprint: str) -> None:
        """Record the embedder fingerprint, replacing any previous one."""
        if not isinstance(fingerprint, str) or _unencodable([fingerprint]) is not None:
            raise UsageError(
                f"the fingerprint {fingerprint!r} is not text SQLite can store (a string "
                "without lone surrogates)"
            )
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
