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
widened to float64. :mod:`askkit.dense.vectors` does the same
(:func:`~askkit.dense.vectors.normalise`, :func:`~askkit.dense.vectors.exact_top_k`).

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
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Final, NamedTuple, Self, TypeVar

from askkit.dense import _schema
from askkit.dense._schema import (
    COLUMNS,
    DB_FILE,
    FINGERPRINT_KEY,
    SCHEMA,
    Collection,
    StoredVault,
)
from askkit.errors import StoreError, UsageError

__all__ = [
    "COLUMNS",
    "DB_FILE",
    "FINGERPRINT_KEY",
    "SCHEMA",
    "Collection",
    "KimunStore",
    "StoredVault",
]

_ATTEMPTS: Final = 3  # reads of a file that changed underneath before giving up
_T = TypeVar("_T")


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
                what = _schema.kind(st.st_mode)
                raise StoreError(
                    f"{given} is not a kimun store: its {DB_FILE} is {what}, not a regular file",
                    path=str(given),
                )
            raise StoreError(f"{db} is {_schema.kind(st.st_mode)}, not a kimun store", path=str(db))
        if st.st_size == 0:
            raise StoreError(f"{db} is empty (0 bytes), not a kimun store", path=str(db))
        return db

    def _open_check(self, conn: sqlite3.Connection) -> str | None:
        _schema.check_schema(conn, self.path)
        return _schema.fingerprint(conn, self.path)

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
        wal, shm, journal = (Path(f"{db}{s}") for s in _schema.SIDE_FILES)
        if _state(db) is None:
            raise StoreError(f"{self.path} no longer exists", path=str(self.path))
        _schema.check_files(db, writing=False)
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
            if size is not None and size.size < len(_schema.SQLITE_MAGIC):
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
        return self._read(lambda conn: _schema.collections(conn, self.path))

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
            found = _schema.collection(conn, vault_id, self.path)
            if found is None:
                names = [c.name for c in _schema.collections(conn, self.path)]
                raise _schema.unknown_vault(self.path, vault_id, names)
            cid, dimension = found
            # A scan of the table in id order: faster than the (collection, path) index
            # and its row lookups, and no sort.
            rows = conn.execute(_schema.SELECT_IN_ORDER, (cid,)).fetchall()
            return _schema.vault_from_rows(rows, vault_id, dimension, self.path)

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
