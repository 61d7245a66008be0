"""kimun's SQLite store schema, its values checked, and its files: what reading and writing share.

:data:`SCHEMA` is kimun's DDL verbatim (``server/src/dbembeddings/vecsqlite.rs``);
the readers of each table here check every value's SQLite type and range as
kimun writes them, so a value kimun never writes (a text ``dimension``,
``8.7``, an integer ``path``) is a :class:`StoreError` naming the file, table,
row and column; :func:`check_files` refuses a database or side file that is a
link, a hard link or not a regular file. :class:`~askkit.dense.KimunStore`
reads through them, and :class:`~askkit.dense.StoreWriter` writes through them.
"""

from __future__ import annotations

import sqlite3
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import pandas as pd

from askkit.errors import StoreError
from askkit.frame.schema import STRING
from askkit.journal import parse_date

__all__ = [
    "COLUMNS",
    "DB_FILE",
    "FINGERPRINT_KEY",
    "MAX_DIMENSION",
    "SCHEMA",
    "SELECT_IN_ORDER",
    "SIDE_FILES",
    "Collection",
    "StoredVault",
    "bad_value",
    "check_dimension",
    "check_files",
    "check_schema",
    "collection",
    "collection_row",
    "collections",
    "describe",
    "empty_vault",
    "fingerprint",
    "first_not",
    "kind",
    "strings",
    "unknown_vault",
    "vault_from_rows",
    "wire_date",
]

#: The database file inside a store folder (vecsqlite.rs ``DB_FILE``).
DB_FILE: Final = "embeddings.db"
#: The ``meta`` key of the embedder fingerprint (vecsqlite.rs ``FINGERPRINT_KEY``).
FINGERPRINT_KEY: Final = "embedder.fingerprint"
#: kimun's schema, verbatim from ``VecSqlite::new``.
SCHEMA: Final = """CREATE TABLE IF NOT EXISTS collections (
                 id        INTEGER PRIMARY KEY,
                 name      TEXT NOT NULL UNIQUE,
                 dimension INTEGER NOT NULL
             );
             CREATE TABLE IF NOT EXISTS chunks (
                 id            INTEGER PRIMARY KEY,
                 collection_id INTEGER NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
                 path          TEXT NOT NULL,
                 hash          TEXT NOT NULL,
                 title         TEXT,
                 date          TEXT,
                 text          TEXT NOT NULL,
                 embedding     BLOB NOT NULL
             );
             CREATE INDEX IF NOT EXISTS chunks_by_path ON chunks(collection_id, path);
             CREATE TABLE IF NOT EXISTS meta (
                 key   TEXT PRIMARY KEY,
                 value TEXT NOT NULL
             );"""
#: The columns of a :attr:`StoredVault.chunks` frame, in order.
COLUMNS: Final = ("path", "hash", "title", "date", "text")

#: The tables and columns a kimun store has (more are allowed: a later kimun may add some).
TABLES: Final = {
    "collections": frozenset({"id", "name", "dimension"}),
    "chunks": frozenset(
        {"id", "collection_id", "path", "hash", "title", "date", "text", "embedding"}
    ),
    "meta": frozenset({"key", "value"}),
}
SQLITE_MAGIC: Final = b"SQLite format 3\x00"
#: The files SQLite keeps beside a database: the write-ahead log, its index, the rollback journal.
SIDE_FILES: Final = ("-wal", "-shm", "-journal")
#: The widest vector a collection may declare: kimun writes the embedder's width (a usize),
#: and no embedder comes near this.
MAX_DIMENSION: Final = 2**31 - 1


@dataclass(frozen=True, slots=True)
class Collection:
    """One vault's vectors in a store: its id, notes, chunks and vector width.

    ``notes`` counts distinct note paths, as kimun's ``list_collections`` does.
    """

    name: str
    notes: int
    chunks: int
    dimension: int


@dataclass(frozen=True)
class StoredVault:
    """One vault's stored chunks and their vectors, row ``i`` of each together.

    Attributes
    ----------
    vault_id:
        The collection's name: the vault id kimun's clients send.
    chunks:
        Columns :data:`COLUMNS` (``path``, ``hash``, ``title``, ``date``,
        ``text``) in pandas' string dtype, read as kimun's server reads them: a
        missing title is ``""``, and ``date`` is the ``YYYY-MM-DD`` journal date
        or missing.
    matrix:
        float32 ``(n, d)``, C-contiguous and read-only: the vectors as stored
        (kimun stores them L2-normalised; a zero vector stays zero).
    """

    vault_id: str
    chunks: pd.DataFrame
    matrix: np.ndarray[Any, Any]

    @property
    def dimension(self) -> int:
        """The vector width."""
        return int(self.matrix.shape[1])

    def __len__(self) -> int:
        return int(self.matrix.shape[0])

    def __repr__(self) -> str:
        return f"StoredVault({self.vault_id!r}, {len(self):,} chunks, dimension {self.dimension})"


# -- reading rows ---------------------------------------------------------------------------


def wire_date(value: object) -> str | None:
    """A stored date as kimun's server reads it back (chrono's ``%Y-%m-%d``), or None."""
    return parse_date(value) if isinstance(value, str) else None


def strings(values: Sequence[object]) -> pd.api.extensions.ExtensionArray:
    """Python strings (or None) as pandas' string dtype, through one Arrow array."""
    import pyarrow as pa

    return pd.Series(pa.array(values, type=pa.large_string()), dtype=STRING).array


def empty_vault(vault_id: str, dimension: int) -> StoredVault:
    matrix = np.zeros((0, dimension), dtype=np.float32)
    matrix.flags.writeable = False
    return StoredVault(vault_id, pd.DataFrame({c: strings([]) for c in COLUMNS}), matrix)


def describe(value: object) -> str:
    """An SQLite value as a message names it: its storage class, and the value when short."""
    if value is None:
        return "NULL"
    if isinstance(value, bytes):
        return f"a blob of {len(value)} byte{'s' if len(value) != 1 else ''}"
    if isinstance(value, int):
        return f"the integer {value}"
    if isinstance(value, float):
        return f"the real number {value!r}"
    text = str(value)
    return f"the text {text[:60]!r}{'...' if len(text) > 60 else ''}"


def bad_value(db: Path, where: str, column: str, value: object, wanted: str) -> StoreError:
    """A value kimun never writes, named by file, ``where`` (``table T, row R``) and column."""
    return StoreError(
        f"{db}: {where}, column {column} holds {describe(value)}, but kimun "
        f"writes {wanted} there; the file is damaged or not kimun's",
        path=str(db),
    )


def first_not(values: Sequence[object], allowed: tuple[type, ...]) -> int | None:
    """The index of the first value whose exact type is not ``allowed`` (None: all are)."""
    if set(map(type, values)) <= set(allowed):
        return None
    return next(i for i, v in enumerate(values) if type(v) not in allowed)


def check_dimension(db: Path, row: str, value: object) -> int:
    """A collection's ``dimension`` as kimun writes it: an SQLite integer, a vector width."""
    if type(value) is not int or not 1 <= value <= MAX_DIMENSION:
        wanted = "a positive integer (the vector width)"
        raise bad_value(db, f"table collections, {row}", "dimension", value, wanted)
    return value


def collection_row(cid: object, name: object) -> str:
    return f"row id {cid} (vault {name!r})" if isinstance(name, str) else f"row id {cid}"


def vault_from_rows(
    rows: list[tuple[Any, ...]], vault_id: str, dimension: int, db: Path
) -> StoredVault:
    """``(id, path, hash, title, date, text, embedding)`` rows as a :class:`StoredVault`.

    Raises :class:`StoreError` naming ``db``, the table, the row and the column
    for a value kimun could not have written: a path, hash or text that is not
    text, a title or date that is neither text nor NULL, an embedding that is
    not a blob of ``4 * dimension`` bytes.
    """
    if not rows:
        return empty_vault(vault_id, dimension)
    ids, paths, hashes, titles, dates, texts, blobs = zip(*rows, strict=True)
    for name, column, allowed, wanted in (
        ("path", paths, (str,), "text"),
        ("hash", hashes, (str,), "text"),
        ("title", titles, (str, type(None)), "text or NULL"),
        ("date", dates, (str, type(None)), "text or NULL"),
        ("text", texts, (str,), "text"),
    ):
        bad = first_not(column, allowed)
        if bad is not None:
            raise bad_value(db, f"table chunks, row id {ids[bad]}", name, column[bad], wanted)
    width = 4 * dimension
    bad = first_not(blobs, (bytes,))
    if bad is not None:
        raise StoreError(
            f"{db}, vault {vault_id!r}: the embedding of chunk {ids[bad]} ({paths[bad]!r}) is "
            f"not a blob (table chunks, row id {ids[bad]}, column embedding holds "
            f"{describe(blobs[bad])}); the file is damaged or not kimun's",
            path=str(db),
        )
    lengths = np.fromiter(map(len, blobs), dtype=np.int64, count=len(blobs))
    wrong = np.flatnonzero(lengths != width)
    if len(wrong):
        bad = int(wrong[0])
        raise StoreError(
            f"{db}, vault {vault_id!r}: the embedding of chunk {ids[bad]} ({paths[bad]!r}) is "
            f"{lengths[bad]} bytes, but the collection's dimension {dimension} makes it {width} "
            "bytes (4 per float32); the file is damaged or not kimun's",
            path=str(db),
        )
    matrix = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(rows), dimension)
    matrix = matrix.astype(np.float32, copy=False)  # a no-op on little-endian machines
    matrix.flags.writeable = False
    known: dict[object, str | None] = {None: None}
    wire_dates = [known[d] if d in known else known.setdefault(d, wire_date(d)) for d in dates]
    chunks = pd.DataFrame(
        {
            "path": strings(paths),
            "hash": strings(hashes),
            "title": strings([t if t is not None else "" for t in titles]),
            "date": strings(wire_dates),
            "text": strings(texts),
        }
    )
    return StoredVault(vault_id, chunks, matrix)


SELECT_IN_ORDER: Final = (
    "SELECT id, path, hash, title, date, text, embedding FROM chunks NOT INDEXED "
    "WHERE collection_id = ? ORDER BY id"
)


def collection(conn: sqlite3.Connection, name: str, db: Path) -> tuple[int, int] | None:
    """The collection's ``(id, dimension)``, or None if it was never created (kimun's)."""
    row = conn.execute("SELECT id, dimension FROM collections WHERE name = ?", (name,)).fetchone()
    if row is None:
        return None
    cid, dimension = row
    return int(cid), check_dimension(db, collection_row(cid, name), dimension)


def collections(conn: sqlite3.Connection, db: Path) -> list[Collection]:
    rows = conn.execute(
        "SELECT c.id, c.name, COUNT(DISTINCT k.path), COUNT(k.id), c.dimension "
        "FROM collections c LEFT JOIN chunks k ON k.collection_id = c.id "
        "GROUP BY c.id ORDER BY c.name"
    ).fetchall()
    out = []
    for cid, name, notes, chunks, dimension in rows:
        if type(name) is not str:
            where = f"table collections, row id {cid}"
            raise bad_value(db, where, "name", name, "text (the vault id)")
        width = check_dimension(db, collection_row(cid, name), dimension)
        out.append(Collection(name, int(notes), int(chunks), width))
    return out


def fingerprint(conn: sqlite3.Connection, db: Path) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (FINGERPRINT_KEY,)).fetchone()
    if row is None:
        return None
    if type(row[0]) is not str:
        where = f"table meta, row key {FINGERPRINT_KEY!r}"
        raise bad_value(db, where, "value", row[0], "text (the fingerprint)")
    return row[0].strip()  # kimun trims it


def check_schema(conn: sqlite3.Connection, db: Path) -> None:
    """Raise :class:`StoreError` unless the database has kimun's tables and columns."""
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    missing = [t for t in TABLES if t not in tables]
    if missing:
        has = ", ".join(sorted(tables)) if tables else "no tables at all"
        raise StoreError(
            f"{db} is an SQLite database but not a kimun store: it lacks the table(s) "
            f"{', '.join(missing)} (it has {has}; kimun's has collections, chunks and meta)",
            path=str(db),
        )
    for table, wanted in TABLES.items():
        columns = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
        if not wanted <= columns:
            raise StoreError(
                f"{db} is not a kimun store: its {table} table lacks the column(s) "
                f"{', '.join(sorted(wanted - columns))}",
                path=str(db),
            )


def unknown_vault(db: Path, vault_id: str, names: list[str]) -> StoreError:
    known = ", ".join(repr(n) for n in names) if names else "none: it holds no vault yet"
    return StoreError(f"{db} has no vault {vault_id!r}; its vault ids are {known}", path=str(db))


# -- the files of a store -------------------------------------------------------------------


def kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def check_files(db: Path, *, writing: bool) -> None:
    """Refuse, naming the file, what SQLite would follow, block on or share beside ``db``.

    SQLite resolves a linked database and writes beside its target, so a writer
    refuses a database that is a symbolic link (it could point at a kimun
    server's store, or any database), that is not a regular file (a FIFO would
    block the open) or that has other names (hard links). Its side files
    (:data:`SIDE_FILES`) are refused the same way, for writing and for reading:
    SQLite never makes them links, refuses to open a linked one with a bare
    "unable to open database file", and would block on a FIFO.
    """
    names = ([db] if writing else []) + [Path(f"{db}{suffix}") for suffix in SIDE_FILES]
    for name in names:
        try:
            st = name.lstat()
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise StoreError(
                f"cannot inspect {name}: {exc.strerror or exc}", path=str(name)
            ) from None
        fix = (
            "askkit writes only the files of its own store folder, never through a link or "
            "into a file with other names: remove it (askkit makes the store again)"
            if writing
            else "SQLite never makes one, and kimun's store cannot be read through it: remove it"
        )
        if stat.S_ISLNK(st.st_mode):
            raise StoreError(
                f"{name} is a symbolic link (to {name.readlink()}); {fix}", path=str(name)
            )
        if not stat.S_ISREG(st.st_mode):
            raise StoreError(
                f"{name} is {kind(st.st_mode)}, not a regular file; {fix}", path=str(name)
            )
        if writing and st.st_nlink > 1:
            raise StoreError(
                f"{name} has {st.st_nlink} hard links: writing it would change the file of its "
                f"other names too; {fix}",
                path=str(name),
            )
