"""kimun's own vector store: its SQLite file ``embeddings.db``, read without writing, and written.

A kimun server with ``[vector_db] type = "sqlite"`` keeps every vault's
vectors in one file, ``embeddings.db``, in the folder its ``path`` names
(``server/src/dbembeddings/vecsqlite.rs``). The file is in WAL mode and holds
three tables (:data:`SCHEMA`, kimun's DDL verbatim): ``collections`` (one row
per vault id, with the vector width), ``chunks`` (one row per embedded chunk:
``path``, ``hash``, ``title``, ``date``, ``text`` and the ``embedding``, a
little-endian float32 blob L2-normalised at write time) and ``meta``, whose
``embedder.fingerprint`` names the embedder that wrote the vectors.

kimun answers a query by normalising the query vector, scoring every row of the
vault by dot product, sorting, and keeping the best 80; a score is a float32
widened to float64. :func:`normalise` and :func:`exact_top_k` do the same.

:class:`KimunStore` reads such a file and never writes to it, nor creates a
file beside it:

- With no write-ahead log beside the file (``embeddings.db-wal`` absent: no
  kimun server has it open, and the last one checkpointed everything into the
  file), it is opened ``immutable``: SQLite reads it without locks and without
  creating the ``-wal`` and ``-shm`` files a plain read-only connection makes
  (and, being read-only, would leave behind). The file is checked unchanged
  after the read; if a server opened it meanwhile, the read is done again the
  next way.
- With a log and its shared-memory index (``-wal`` and ``-shm``: a server is
  running, or stopped without checkpointing), the log may hold rows not yet in
  the file, and SQLite reads them only through the index. The store is opened
  read-only (``mode=ro``) with ``readonly_shm=1``, so SQLite takes its usual
  read locks but writes to neither file. This works in a folder askkit cannot
  write to, and a store locked by another connection (an exclusive lock) is
  waited for ``timeout`` seconds, then refused with a :class:`StoreError`.
- With a log but no index (a copy of the folder, or a crash leftover),
  SQLite would have to create the index to read the log, which askkit does
  not do in kimun's folder (and cannot in a folder it may not write): the
  database and its log are copied to a temporary folder and read there.

:class:`~askkit.dense.StoreWriter` (``_writer.py``) is askkit's own store in
the same schema (kimun's DDL, WAL, foreign keys), with kimun's store
semantics, so that askkit's store and a kimun server's can be swapped. It
writes only into a folder askkit created.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Final, NamedTuple, Self, TypeVar

import numpy as np
import pandas as pd

from askkit.errors import DimensionError, StoreError, UsageError
from askkit.frame.schema import STRING
from askkit.journal import parse_date

__all__ = [
    "COLUMNS",
    "DB_FILE",
    "FINGERPRINT_KEY",
    "SCHEMA",
    "Collection",
    "KimunStore",
    "StoredVault",
    "exact_top_k",
    "exact_top_k_many",
    "normalise",
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
_TABLES: Final = {
    "collections": frozenset({"id", "name", "dimension"}),
    "chunks": frozenset(
        {"id", "collection_id", "path", "hash", "title", "date", "text", "embedding"}
    ),
    "meta": frozenset({"key", "value"}),
}
_SQLITE_MAGIC: Final = b"SQLite format 3\x00"
_BLOCK: Final = 8192  # rows per block in normalise and in the exact re-scoring
_SCREEN_VALUES: Final = 1 << 24  # float32 scores screened at once by exact_top_k_many (64 MB)
_ATTEMPTS: Final = 3  # reads of a file that changed underneath before giving up
#: The files SQLite keeps beside a database: the write-ahead log, its index, the rollback journal.
SIDE_FILES: Final = ("-wal", "-shm", "-journal")
#: The widest vector a collection may declare: kimun writes the embedder's width (a usize),
#: and no embedder comes near this.
MAX_DIMENSION: Final = 2**31 - 1

_T = TypeVar("_T")


# -- vectors --------------------------------------------------------------------------------


def _sequential_sum(products: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Each row of float32 ``products`` summed left to right in float32: Rust's
    ``Iterator::sum`` over a row, bit for bit (BLAS and ``np.sum`` add in other orders)."""
    columns = np.ascontiguousarray(products.T)  # one contiguous row per column
    total: np.ndarray[Any, Any] = np.zeros(products.shape[0], dtype=np.float32)
    if len(columns):
        total = columns[0].copy()
        for column in columns[1:]:
            total += column
    return total


def _sequential_norms(rows: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Each row's L2 norm as kimun computes it: ``x * x`` summed left to right in float32."""
    norms: np.ndarray[Any, Any] = np.sqrt(_sequential_sum(rows * rows))
    return norms


def normalise(vectors: np.ndarray[Any, Any] | Sequence[float]) -> np.ndarray[Any, Any]:
    """Scale vectors to unit length exactly as kimun stores them (vecsqlite.rs ``to_blob``).

    In float32, as kimun does: the norm is the square root of the squares
    summed left to right, the scale is ``1 / norm``, and each value is
    multiplied by the scale. A zero vector (norm 0, or NaN) is kept as it is:
    it scores 0 against everything. The result is bit for bit what kimun writes.

    Parameters
    ----------
    vectors:
        One vector (1-d) or one per row (2-d); converted to float32.

    Returns
    -------
    numpy.ndarray
        A new C-contiguous float32 array of the same shape.

    Examples
    --------
    >>> normalise([3.0, 4.0]).tolist()
    [0.6000000238418579, 0.800000011920929]
    >>> normalise([[0.0, 0.0], [0.0, 2.0]]).tolist()
    [[0.0, 0.0], [0.0, 1.0]]
    """
    array = np.asarray(vectors, dtype=np.float32)
    if array.ndim not in {1, 2}:
        raise UsageError(f"normalise takes one vector or a matrix, not {array.ndim}-d data")
    rows = array.reshape(1, -1) if array.ndim == 1 else array
    out = np.empty(rows.shape, dtype=np.float32)
    one = np.float32(1.0)
    # IEEE float32 as in Rust: a huge vector's squares overflow to inf (scale 0), silently
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        for start in range(0, rows.shape[0], _BLOCK):
            block = rows[start : start + _BLOCK]
            norms = _sequential_norms(block)
            scale = np.ones_like(norms)
            np.divide(one, norms, out=scale, where=norms > 0)  # NaN > 0 is False: scale 1
            np.multiply(block, scale[:, None], out=out[start : start + _BLOCK])
    return out.reshape(array.shape)


def _kimun_scores(
    matrix: np.ndarray[Any, Any], rows: np.ndarray[Any, Any], query: np.ndarray[Any, Any]
) -> np.ndarray[Any, Any]:
    """kimun's float32 scores of ``matrix[rows]`` against ``query`` (equal rows score equal)."""
    out = np.empty(len(rows), dtype=np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        for start in range(0, len(rows), _BLOCK):
            block = matrix[rows[start : start + _BLOCK]]
            out[start : start + _BLOCK] = _sequential_sum(block * query)  # vecsqlite.rs score
    return out


def exact_top_k(
    matrix: np.ndarray[Any, Any], query: np.ndarray[Any, Any] | Sequence[float], k: int = 80
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """The ``k`` rows of ``matrix`` nearest to ``query`` by dot product, best first, as kimun.

    kimun scores every stored row by dot product with the normalised query and
    keeps the best ``k`` (80 for a search), reporting float32 scores widened to
    float64. Here the query is normalised as kimun does (:func:`normalise`);
    every row is screened in float32 (one matrix-vector product, whose summation
    order is BLAS's), and the rows that can be among the best ``k`` (every row
    within the rounding bound of the ``k``-th score) are scored again as kimun
    scores them, the float32 products summed left to right in float32, and
    ranked by that score: so each score is kimun's bit for bit, equal rows tie
    exactly, and ties go to the lower row (kimun's unstable sort leaves their
    order undefined). Rows whose score is NaN come last.

    Parameters
    ----------
    matrix:
        float32 ``(n, d)``, rows of norm at most 1 (every store holds them
        normalised).
    query:
        ``(d,)``, any scale (it is normalised; a zero query scores 0 everywhere).
    k:
        How many rows to return (fewer when the matrix has fewer rows).

    Returns
    -------
    tuple of numpy.ndarray
        Row indices (int64) and scores (float64: kimun's float32 score,
        widened, as kimun reports it), best first.

    Examples
    --------
    >>> m = normalise([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0], [1.0, 0.0]])
    >>> rows, scores = exact_top_k(m, [1.0, 0.0], k=3)
    >>> rows.tolist(), scores.tolist()
    ([0, 3, 1], [1.0, 1.0, 0.6000000238418579])
    """
    m = np.ascontiguousarray(matrix, dtype=np.float32)
    if m.ndim != 2:
        raise UsageError(f"exact_top_k takes an (n, d) matrix, not {m.ndim}-d data")
    q = normalise(query)
    if q.ndim != 1:
        raise UsageError(f"exact_top_k takes one query vector, not {q.ndim}-d data")
    n, d = m.shape
    if q.shape[0] != d:
        raise DimensionError(
            f"the query vector has dimension {q.shape[0]} but the stored vectors have {d}",
            expected=d,
            actual=int(q.shape[0]),
        )
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 0:
        raise UsageError(f"k must be a count of rows (0 or more), not {k!r}")
    k = min(int(k), n)
    if k == 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float64)
    return _best(m, m @ q, q, k)


def _best(
    m: np.ndarray[Any, Any], screen: np.ndarray[Any, Any], q: np.ndarray[Any, Any], k: int
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """kimun's best ``k`` rows of ``m`` for the normalised query ``q``, from BLAS's ``screen``
    (``m @ q`` summed in any order): the rows that can be among them, scored again as kimun."""
    n, d = m.shape
    screen = np.where(np.isnan(screen), np.float32(-np.inf), screen)
    kth = np.partition(screen, n - k)[n - k]
    # Any float32 summation order is within d * 2**-24 of the exact dot for rows and
    # query of norm <= 1 (a little over 1 after rounding), so BLAS's screen and kimun's
    # sequential sum differ by at most twice that: a row of kimun's best k screens at
    # least the k-th screened score minus the margin.
    margin = 2.5 * (d + 2) * 2.0**-24
    candidates = np.flatnonzero(screen >= kth - margin)
    scores = _kimun_scores(m, candidates, q).astype(np.float64)
    order = np.lexsort((candidates, -scores))[:k]  # NaN sorts last
    rows = candidates[order].astype(np.int64, copy=False)
    return rows, scores[order]


def exact_top_k_many(
    matrix: np.ndarray[Any, Any],
    queries: np.ndarray[Any, Any] | Sequence[Sequence[float]],
    k: int = 80,
) -> list[tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]]:
    """:func:`exact_top_k` for many queries at once: the same answers, bit for bit.

    The queries are screened a block at a time with one matrix product (BLAS
    sums in yet another order, which the screening margin covers), then each
    query's candidates are scored again as kimun scores them; so each answer
    is exactly :func:`exact_top_k`'s for that query, computed with one matrix
    product per block of queries instead of one matrix-vector product each.

    Parameters
    ----------
    matrix:
        float32 ``(n, d)``, rows of norm at most 1.
    queries:
        ``(m, d)``, one query per row, any scale.
    k:
        Rows per query (fewer when the matrix has fewer rows).

    Returns
    -------
    list of tuple of numpy.ndarray
        For each query, its row indices (int64) and scores (float64), best first.

    Examples
    --------
    >>> m = normalise([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]])
    >>> [(r.tolist(), s.tolist()) for r, s in exact_top_k_many(m, [[1.0, 0.0], [0.0, 2.0]], k=1)]
    [([0], [1.0]), ([2], [1.0])]
    """
    m = np.ascontiguousarray(matrix, dtype=np.float32)
    if m.ndim != 2:
        raise UsageError(f"exact_top_k_many takes an (n, d) matrix, not {m.ndim}-d data")
    raw = np.asarray(queries, dtype=np.float32)
    if raw.ndim != 2:
        raise UsageError(f"exact_top_k_many takes one query per row, not {raw.ndim}-d data")
    qs = normalise(raw)
    n, d = m.shape
    if qs.shape[1] != d:
        raise DimensionError(
            f"the query vectors have dimension {qs.shape[1]} but the stored vectors have {d}",
            expected=d,
            actual=int(qs.shape[1]),
        )
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 0:
        raise UsageError(f"k must be a count of rows (0 or more), not {k!r}")
    k = min(int(k), n)
    if k == 0:
        return [(np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float64)) for _ in qs]
    out: list[tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]] = []
    block = max(1, min(256, _SCREEN_VALUES // max(n, 1)))
    for start in range(0, len(qs), block):
        chunk = qs[start : start + block]
        screens = chunk @ m.T  # one product for the block: (queries, rows), each row contiguous
        out.extend(_best(m, screens[i], chunk[i], k) for i in range(len(chunk)))
    return out


# -- value types ----------------------------------------------------------------------------


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


def _wire_date(value: object) -> str | None:
    """A stored date as kimun's server reads it back (chrono's ``%Y-%m-%d``), or None."""
    return parse_date(value) if isinstance(value, str) else None


def _strings(values: Sequence[object]) -> pd.api.extensions.ExtensionArray:
    """Python strings (or None) as pandas' string dtype, through one Arrow array."""
    import pyarrow as pa

    return pd.Series(pa.array(values, type=pa.large_string()), dtype=STRING).array


def _empty_vault(vault_id: str, dimension: int) -> StoredVault:
    matrix = np.zeros((0, dimension), dtype=np.float32)
    matrix.flags.writeable = False
    return StoredVault(vault_id, pd.DataFrame({c: _strings([]) for c in COLUMNS}), matrix)


def _describe(value: object) -> str:
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


def _bad_value(db: Path, where: str, column: str, value: object, wanted: str) -> StoreError:
    """A value kimun never writes, named by file, ``where`` (``table T, row R``) and column."""
    return StoreError(
        f"{db}: {where}, column {column} holds {_describe(value)}, but kimun "
        f"writes {wanted} there; the file is damaged or not kimun's",
        path=str(db),
    )


def _first_not(values: Sequence[object], allowed: tuple[type, ...]) -> int | None:
    """The index of the first value whose exact type is not ``allowed`` (None: all are)."""
    if set(map(type, values)) <= set(allowed):
        return None
    return next(i for i, v in enumerate(values) if type(v) not in allowed)


def _check_dimension(db: Path, row: str, value: object) -> int:
    """A collection's ``dimension`` as kimun writes it: an SQLite integer, a vector width."""
    if type(value) is not int or not 1 <= value <= MAX_DIMENSION:
        wanted = "a positive integer (the vector width)"
        raise _bad_value(db, f"table collections, {row}", "dimension", value, wanted)
    return value


def _collection_row(cid: object, name: object) -> str:
    return f"row id {cid} (vault {name!r})" if isinstance(name, str) else f"row id {cid}"


def _vault_from_rows(
    rows: list[tuple[Any, ...]], vault_id: str, dimension: int, db: Path
) -> StoredVault:
    """``(id, path, hash, title, date, text, embedding)`` rows as a :class:`StoredVault`.

    Raises :class:`StoreError` naming ``db``, the table, the row and the column
    for a value kimun could not have written: a path, hash or text that is not
    text, a title or date that is neither text nor NULL, an embedding that is
    not a blob of ``4 * dimension`` bytes.
    """
    if not rows:
        return _empty_vault(vault_id, dimension)
    ids, paths, hashes, titles, dates, texts, blobs = zip(*rows, strict=True)
    for name, column, allowed, wanted in (
        ("path", paths, (str,), "text"),
        ("hash", hashes, (str,), "text"),
        ("title", titles, (str, type(None)), "text or NULL"),
        ("date", dates, (str, type(None)), "text or NULL"),
        ("text", texts, (str,), "text"),
    ):
        bad = _first_not(column, allowed)
        if bad is not None:
            raise _bad_value(db, f"table chunks, row id {ids[bad]}", name, column[bad], wanted)
    width = 4 * dimension
    bad = _first_not(blobs, (bytes,))
    if bad is not None:
        raise StoreError(
            f"{db}, vault {vault_id!r}: the embedding of chunk {ids[bad]} ({paths[bad]!r}) is "
            f"not a blob (table chunks, row id {ids[bad]}, column embedding holds "
            f"{_describe(blobs[bad])}); the file is damaged or not kimun's",
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
    wire_dates = [known[d] if d in known else known.setdefault(d, _wire_date(d)) for d in dates]
    chunks = pd.DataFrame(
        {
            "path": _strings(paths),
            "hash": _strings(hashes),
            "title": _strings([t if t is not None else "" for t in titles]),
            "date": _strings(wire_dates),
            "text": _strings(texts),
        }
    )
    return StoredVault(vault_id, chunks, matrix)


_SELECT_IN_ORDER: Final = (
    "SELECT id, path, hash, title, date, text, embedding FROM chunks NOT INDEXED "
    "WHERE collection_id = ? ORDER BY id"
)


def _collection(conn: sqlite3.Connection, name: str, db: Path) -> tuple[int, int] | None:
    """The collection's ``(id, dimension)``, or None if it was never created (kimun's)."""
    row = conn.execute("SELECT id, dimension FROM collections WHERE name = ?", (name,)).fetchone()
    if row is None:
        return None
    cid, dimension = row
    return int(cid), _check_dimension(db, _collection_row(cid, name), dimension)


def _collections(conn: sqlite3.Connection, db: Path) -> list[Collection]:
    rows = conn.execute(
        "SELECT c.id, c.name, COUNT(DISTINCT k.path), COUNT(k.id), c.dimension "
        "FROM collections c LEFT JOIN chunks k ON k.collection_id = c.id "
        "GROUP BY c.id ORDER BY c.name"
    ).fetchall()
    out = []
    for cid, name, notes, chunks, dimension in rows:
        if type(name) is not str:
            where = f"table collections, row id {cid}"
            raise _bad_value(db, where, "name", name, "text (the vault id)")
        width = _check_dimension(db, _collection_row(cid, name), dimension)
        out.append(Collection(name, int(notes), int(chunks), width))
    return out


def _fingerprint(conn: sqlite3.Connection, db: Path) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (FINGERPRINT_KEY,)).fetchone()
    if row is None:
        return None
    if type(row[0]) is not str:
        where = f"table meta, row key {FINGERPRINT_KEY!r}"
        raise _bad_value(db, where, "value", row[0], "text (the fingerprint)")
    return row[0].strip()  # kimun trims it


def _check_schema(conn: sqlite3.Connection, db: Path) -> None:
    """Raise :class:`StoreError` unless the database has kimun's tables and columns."""
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    missing = [t for t in _TABLES if t not in tables]
    if missing:
        has = ", ".join(sorted(tables)) if tables else "no tables at all"
        raise StoreError(
            f"{db} is an SQLite database but not a kimun store: it lacks the table(s) "
            f"{', '.join(missing)} (it has {has}; kimun's has collections, chunks and meta)",
            path=str(db),
        )
    for table, wanted in _TABLES.items():
        columns = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
        if not wanted <= columns:
            raise StoreError(
                f"{db} is not a kimun store: its {table} table lacks the column(s) "
                f"{', '.join(sorted(wanted - columns))}",
                path=str(db),
            )


def _unknown_vault(db: Path, vault_id: str, names: list[str]) -> StoreError:
    known = ", ".join(repr(n) for n in names) if names else "none: it holds no vault yet"
    return StoreError(f"{db} has no vault {vault_id!r}; its vault ids are {known}", path=str(db))


# -- the files of a store -------------------------------------------------------------------


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def _check_files(db: Path, *, writing: bool) -> None:
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
                f"{name} is {_kind(st.st_mode)}, not a regular file; {fix}", path=str(name)
            )
        if writing and st.st_nlink > 1:
            raise StoreError(
                f"{name} has {st.st_nlink} hard links: writing it would change the file of its "
                f"other names too; {fix}",
                path=str(name),
            )


# -- KimunStore -----------------------------------------------------------------------------


class _FileState(NamedTuple):
    """What tells whether a file changed: identity, size and modification time (or absent)."""

    ino: int
    size: int
    mtime_ns: int


def _state(path: Path) -> _FileState | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return _FileState(st.st_ino, st.st_size, st.st_mtime_ns)


class _Changed(Exception):
    """The file changed while it was read without locks: read it again."""


class KimunStore:
    """A kimun server's SQLite vector store, read-only: its vaults, fingerprint and vectors.

    Parameters
    ----------
    path:
        The store folder (kimun's ``[vector_db] path``) or its ``embeddings.db``.
    timeout:
        Seconds to wait for a lock another connection holds before giving up.

    Raises
    ------
    StoreError
        The path is missing, is a folder without ``embeddings.db``, or the file
        is locked, damaged, not an SQLite database, or an SQLite database that
        is not a kimun store; a side file (``-wal``, ``-shm``, ``-journal``) is
        a link or not a regular file. The error's ``path`` names it. Any read
        raises it too for a value kimun never writes (a text dimension, a path
        that is not text), naming the table, the row and the column.
    UsageError
        ``path`` is not a path, or ``timeout`` not a number of seconds.

    Notes
    -----
    Nothing is ever written to the folder: see the module's documentation for
    how the file is read with or without kimun's write-ahead log. Each call
    reads in its own read transaction (a consistent snapshot) and closes the
    file again, so a running kimun server is never held up for longer than one
    read. A read that fails because the server changed the files meanwhile (it
    closed, deleting its log) is made again.

    Examples
    --------
    >>> import tempfile
    >>> from askkit.testing.stores import random_store_rows, write_kimun_sqlite
    >>> folder = tempfile.mkdtemp()
    >>> _ = write_kimun_sqlite(folder, {"notes": random_store_rows(5, 8, seed=1)}, fingerprint="fp")
    >>> with KimunStore(folder) as store:
    ...     store.fingerprint, store.collections()[0].chunks, store.load("notes")
    ('fp', 5, StoredVault('notes', 5 chunks, dimension 8))
    """

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 5.0) -> None:
        if not isinstance(path, str | os.PathLike):
            raise UsageError(f"KimunStore takes a folder or a file path, not {path!r}")
        if (
            isinstance(timeout, bool)
            or not isinstance(timeout, int | float)
            or not 0 <= timeout < float("inf")
        ):
            raise UsageError(f"timeout must be a number of seconds (0 or more), not {timeout!r}")
        given = Path(path)
        db = self._locate(given)
        self.path: Path = db
        self.timeout = float(timeout)
        self._closed = False
        self._fingerprint = self._read(self._open_check)

    @staticmethod
    def _locate(given: Path) -> Path:
        """The database file of ``given`` (a folder or the file), checked to be one."""
        try:
            st = given.stat()
            db = given / DB_FILE if stat.S_ISDIR(st.st_mode) else given
            if db is not given:
                st = db.stat()
        except FileNotFoundError:
            if given.is_dir():
                raise StoreError(
                    f"{given} is not a kimun store: it holds no {DB_FILE} (kimun's SQLite store "
                    "keeps its vectors there; a Qdrant store is read with QdrantStore)",
                    path=str(given),
                ) from None
            raise StoreError(
                f"no kimun store at {given}: no such file or folder (give the folder of kimun's "
                f"[vector_db] path, or its {DB_FILE})",
                path=str(given),
            ) from None
        except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
            reason = getattr(exc, "strerror", None) or exc
            raise StoreError(f"cannot open {given}: {reason}", path=str(given)) from None
        if not stat.S_ISREG(st.st_mode):
            if db is not given:
                raise StoreError(
                    f"{given} is not a kimun store: its {DB_FILE} is {_kind(st.st_mode)}, not "
                    "a regular file",
                    path=str(given),
                )
            raise StoreError(f"{db} is {_kind(st.st_mode)}, not a kimun store", path=str(db))
        if st.st_size == 0:
            raise StoreError(f"{db} is empty (0 bytes), not a kimun store", path=str(db))
        return db

    def _open_check(self, conn: sqlite3.Connection) -> str | None:
        _check_schema(conn, self.path)
        return _fingerprint(conn, self.path)

    # -- reading

    def _read(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run ``work`` in one read transaction on a connection that writes nothing."""
        if self._closed:
            raise UsageError(f"the KimunStore of {self.path} is closed")
        for _ in range(_ATTEMPTS):
            try:
                return self._read_once(work)
            except _Changed:
                continue
        raise StoreError(
            f"{self.path} kept changing while askkit read it ({_ATTEMPTS} attempts); "
            "try again when kimun's server is idle",
            path=str(self.path),
        )

    def _read_once(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        # SQLite keeps the side files beside the file a link points to: look there.
        db = Path(os.path.realpath(self.path))
        wal, shm, journal = (Path(f"{db}{s}") for s in SIDE_FILES)
        if _state(db) is None:
            raise StoreError(f"{self.path} no longer exists", path=str(self.path))
        _check_files(db, writing=False)
        files = (db, wal, journal)
        before = tuple(map(_state, files))
        log = before[1]
        if journal.exists() or (log is not None and shm.exists()):
            # A connection is open, or one left its log: read through SQLite's locks
            # and the log's index, neither of which is written (readonly_shm).
            return self._run(db, "mode=ro&readonly_shm=1", work, before=before, verify=False)
        if log is None or not log.size:
            # Nothing outside the file: read it as it is, then check nobody changed it.
            return self._run(db, "mode=ro&immutable=1", work, before=before, verify=True)
        # A log without its index: read a copy, so SQLite builds the index elsewhere.
        with tempfile.TemporaryDirectory(prefix="askkit-kimun-store-") as tmp:
            copy = Path(tmp) / DB_FILE
            try:
                shutil.copyfile(db, copy)
                shutil.copyfile(wal, Path(f"{copy}-wal"))
            except OSError as exc:
                if self._changed(before):  # the server closed meanwhile, deleting its log
                    raise _Changed from None
                raise StoreError(
                    f"cannot read {self.path} and its write-ahead log: {exc.strerror or exc}",
                    path=str(self.path),
                ) from None
            if self._changed(before):
                raise _Changed
            return self._run(copy, "mode=ro", work, before=None, verify=False)

    def _run(
        self,
        db: Path,
        flags: str,
        work: Callable[[sqlite3.Connection], _T],
        *,
        before: tuple[_FileState | None, ...] | None,
        verify: bool,
    ) -> _T:
        """Run ``work`` on ``db``; a failure while the files changed (``before``) is retried,
        and with ``verify`` so is a success."""
        uri = f"{db.resolve().as_uri()}?{flags}"
        try:
            conn = sqlite3.connect(
                uri, uri=True, timeout=self.timeout, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise self._error(exc) from None
        try:
            conn.execute("BEGIN")
            result = work(conn)
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            busy = (getattr(exc, "sqlite_errorname", "") or "").startswith(
                ("SQLITE_BUSY", "SQLITE_LOCKED")
            )  # waited out already: reading again would only wait again
            if before is not None and not busy and self._changed(before):
                raise _Changed from None
            raise self._error(exc) from None
        except StoreError:
            if before is not None and self._changed(before):
                raise _Changed from None
            raise
        finally:
            conn.close()
        if verify and before is not None and self._changed(before):
            raise _Changed
        return result

    def _changed(self, before: tuple[_FileState | None, ...]) -> bool:
        db = Path(os.path.realpath(self.path))
        files = (db, Path(f"{db}-wal"), Path(f"{db}-journal"))
        return tuple(map(_state, files)) != before

    def _error(self, exc: sqlite3.Error) -> StoreError:
        db = self.path
        name = getattr(exc, "sqlite_errorname", "") or ""
        if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
            return StoreError(
                f"{db} is locked by another connection (waited {self.timeout:g} s): "
                "try again later, or give a longer timeout",
                path=str(db),
            )
        if name == "SQLITE_READONLY_ROLLBACK":
            journal = Path(f"{os.path.realpath(db)}-journal")
            return StoreError(
                f"{journal} lies beside {db}, and SQLite takes it for the rollback journal of a "
                "write that never finished (a hot journal), which only a writer may roll back; "
                "askkit reads kimun's store without writing. If kimun's server stopped "
                f"mid-write, start it once and it recovers the file; if {journal.name} is not "
                "SQLite's, move it away",
                path=str(journal),
            )
        if name.startswith("SQLITE_NOTADB"):
            size = _state(db)
            if size is not None and size.size < len(_SQLITE_MAGIC):
                what = "too short to be an SQLite database"
            else:
                what = "not an SQLite database"
            return StoreError(f"{db} is {what}, not a kimun store ({exc})", path=str(db))
        if name.startswith(("SQLITE_CORRUPT", "SQLITE_IOERR")):
            return StoreError(
                f"{db} is damaged ({exc}): it may be truncated or partly overwritten; "
                "kimun re-creates it if you delete the folder and re-index",
                path=str(db),
            )
        if name.startswith(("SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_READONLY", "SQLITE_AUTH")):
            return StoreError(f"cannot open {db} to read it ({exc})", path=str(db))
        return StoreError(f"cannot read {db} as a kimun store ({exc})", path=str(db))

    # -- the API

    @property
    def fingerprint(self) -> str | None:
        """The embedder fingerprint kimun recorded (``provider:model:dimension``), if any.

        As read when the store was opened.
        """
        return self._fingerprint

    def collections(self) -> list[Collection]:
        """Every vault in the store, by name, with its note and chunk counts and dimension."""
        return self._read(lambda conn: _collections(conn, self.path))

    def load(self, vault_id: str) -> StoredVault:
        """Every chunk of one vault with its stored vector, in the order kimun stored them.

        Raises
        ------
        StoreError
            The store has no such vault (the message lists the ids it has), or
            a row holds a value kimun could not have written (an embedding of
            the wrong size, a path that is not text): the message names the
            table, the row and the column.
        """

        def work(conn: sqlite3.Connection) -> StoredVault:
            found = _collection(conn, vault_id, self.path)
            if found is None:
                names = [c.name for c in _collections(conn, self.path)]
                raise _unknown_vault(self.path, vault_id, names)
            cid, dimension = found
            # A scan of the table in id order: faster than the (collection, path) index
            # and its row lookups, and no sort.
            rows = conn.execute(_SELECT_IN_ORDER, (cid,)).fetchall()
            return _vault_from_rows(rows, vault_id, dimension, self.path)

        return self._read(work)

    def close(self) -> None:
        """Forget the store (each read opens and closes the file itself); idempotent."""
        self._closed = True

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
        return f"<KimunStore {self.path}{' (closed)' if self._closed else ''}>"
