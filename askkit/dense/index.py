"""Dense retrieval as kimun's server does it: askkit's own index of a vault, or kimun's store.

:class:`DenseIndex` embeds a vault the way kimun's server indexes one
(``KimunRag::index`` in ``server/src/lib.rs`` at
:data:`~askkit.ranking.settings.KIMUN_COMMIT`): the sections kimun's core cuts,
split to the embedding window (:func:`askkit.retrieve.local.note_chunks`, the
same chunks :class:`~askkit.retrieve.LocalIndex` ranks with BM25), embedded
:data:`~askkit.dense.BATCH_SIZE` per call, kept L2-normalised in kimun's own
store schema (:class:`~askkit.dense.StoreWriter`), so kimun's store and
askkit's can be swapped: :class:`~askkit.dense.KimunStore` opens askkit's
folder, and :class:`StoreRetriever` searches either.

Re-indexing is incremental as kimun's is. A note whose size and modification
time are unchanged is not read again; a changed one is re-hashed, and only a
note whose content hash changed is re-chunked. Its stored rows are deleted, and
every new chunk whose title and text equal one of its old chunks' reuses that
chunk's stored vector (kimun's key: exactly what the embedder sees); only the
rest are embedded. Deleted notes leave the store. The store records the
embedder's fingerprint; a store built by another embedder is wiped and the
vault embedded again, with a warning, as kimun's server does at start.

Both retrievers answer a query as kimun's server does
(:class:`askkit.dense._retrieval.DenseRetrieval`): the exact best 80 chunks by
dot product, f32 scores widened to f64, de-duplicated, reranked when a
reranker is given, then one row per note.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from askkit._atomic import atomic_write_text
from askkit._cachedir import DENSE_STORE, cache_root, claim
from askkit._warn import warn_user
from askkit.dense._retrieval import CANDIDATE_POOL, ROW_COLUMNS, DenseRetrieval, Rows, rows_of
from askkit.errors import DimensionError, ProtocolError, StoreError, UsageError
from askkit.retrieve.client import VAULT_ID
from askkit.retrieve.local import IndexReport, scan_vault
from askkit.vault import Vault, content_hash
from askkit.vault.chunking import DEFAULT_KIMUN, KimunVersion, check_kimun
from askkit.wire import ChunkResult

if TYPE_CHECKING:
    import pandas as pd

    from askkit.dense._writer import StoreWriter
    from askkit.dense.embedders import Embedder
    from askkit.dense.qdrant import QdrantStore
    from askkit.dense.rerankers import Reranker
    from askkit.dense.store import KimunStore

__all__ = ["NOTES_FILE", "DenseIndex", "StoreRetriever", "default_store_folder"]

#: askkit's record, beside ``embeddings.db``, of each note's size and modification
#: time, so an unchanged note is not read again (kimun's store keeps only hashes).
NOTES_FILE = "askkit-notes.json"
_NOTES_FORMAT = 1
_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")

_EMPTY = np.empty((0, 0), dtype=np.float32)


def _check_vault_id(vault_id: str) -> str:
    """kimun's ``CollectionKey::parse``: ``[A-Za-z0-9._-]+``, not starting with ``__``."""
    if not isinstance(vault_id, str) or not VAULT_ID.fullmatch(vault_id):
        raise UsageError(
            f"invalid vault id {vault_id!r}: use letters, digits, '.', '_' or '-' "
            "and do not start with '__' (kimun's rule for a collection name)"
        )
    return vault_id


def _default_vault_id(root: Path) -> str:
    name = _NAME_UNSAFE.sub("-", root.name).lstrip("_")
    return name or "vault"


def default_store_folder(vault: str | os.PathLike[str], embedder: Embedder) -> Path:
    """Where a :class:`DenseIndex` of ``vault`` persists by default.

    askkit's cache folder (:func:`askkit._cachedir.cache_root`: ``$ASKKIT_CACHE_DIR``,
    else ``~/.cache/askkit``) / ``dense-<hash of the vault's path>-<embedder name>``.
    """
    parent = cache_root()
    root = Path(vault).expanduser().resolve()
    name = _NAME_UNSAFE.sub("_", embedder.name).strip("_.")[:60] or "embedder"
    tag = content_hash(embedder.name.encode())[:6]
    return parent / f"dense-{content_hash(str(root).encode())}-{name}-{tag}"


class _Note:
    """One note's stored chunks: columns and their L2-normalised vectors."""

    __slots__ = ("cols", "vectors")

    def __init__(self, cols: dict[str, list[Any]], vectors: np.ndarray[Any, Any]) -> None:
        self.cols = cols
        self.vectors = vectors

    def __len__(self) -> int:
        return len(self.cols["path"])


def _frame(cols: Mapping[str, Sequence[Any]]) -> pd.DataFrame:
    """A note's chunks as the frame :class:`~askkit.dense.StoreWriter` stores."""
    import pandas as pd

    from askkit.frame.schema import STRING

    return pd.DataFrame({c: pd.Series(list(cols[c]), dtype=STRING) for c in ROW_COLUMNS})


def _check_vectors(
    vectors: object, expected_rows: int, embedder: Embedder, dimension: int | None
) -> np.ndarray[Any, Any]:
    """The embedder's answer as float32 ``(n, d)``; a wrong count or width is a typed error."""
    array = np.asarray(vectors, dtype=np.float32)
    if array.ndim != 2 or array.shape[0] != expected_rows:
        raise ProtocolError(
            f"the embedder {embedder.name} returned vectors of shape {array.shape} "
            f"for {expected_rows} chunks"
        )
    if dimension is not None and array.shape[1] != dimension:
        raise DimensionError(
            f"the embedder {embedder.name} returned {array.shape[1]}-d vectors, "
            f"but the index holds {dimension}-d ones",
            expected=dimension,
            actual=int(array.shape[1]),
        )
    return array


class DenseIndex(DenseRetrieval):
    """A vault embedded as kimun's server embeds it; a :class:`~askkit.retrieve.Retriever`.

    Parameters
    ----------
    vault:
        A :class:`~askkit.vault.Vault` or its folder.
    embedder:
        An :class:`~askkit.dense.Embedder` (fastembed, Ollama, OpenAI-compatible).
    store:
        Where the vectors persist, in kimun's SQLite store schema
        (``embeddings.db``). ``None`` (default): ``$ASKKIT_CACHE_DIR`` or
        ``~/.cache/askkit``, in a folder named after the vault's path and the
        embedder (:func:`default_store_folder`). ``False``: keep it in memory
        only. The folder must be new, empty, or one askkit made; anything else
        (a folder of other files, a file, the vault, a folder inside the vault
        or holding it) raises :class:`~askkit.errors.UsageError` and nothing
        is touched.
    vault_id:
        The store's collection for this vault (kimun's vault id). Default: the
        vault folder's name, made a valid id.
    reranker:
        An optional :class:`~askkit.dense.Reranker` applied to every pool.
    pool:
        The candidate pool (kimun: 80), kept as :attr:`pool_size`.
    progress:
        Show progress bars while reading notes and embedding chunks.
    kimun:
        The kimun version whose chunker cuts the notes (``"0.18"``, default, or
        ``"0.17"``), kept as :attr:`kimun`. As on kimun's server, a stored note
        keeps the chunks it was stored with until its content changes.

    Attributes
    ----------
    last_report:
        What the last :meth:`update` did (:class:`~askkit.retrieve.local.IndexReport`).
    last_embedded, last_reused:
        How many chunks the last :meth:`update` embedded, and how many reused
        a stored vector.

    Examples
    --------
    >>> import tempfile, pathlib, numpy as np
    >>> class Letters:  # a toy embedder: counts of a, b, c
    ...     name = fingerprint = "letters"
    ...     dimension = 3
    ...     def embed_documents(self, chunks, *, progress=None):
    ...         return np.array([self.embed_query(t + "\\n" + x) for t, x in chunks], "f4")
    ...     def embed_query(self, query):
    ...         return np.array([query.count(c) + 0.1 for c in "abc"], "f4")
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / "a.md").write_text("# Aaa\\naaa a\\n")
    >>> _ = (root / "c.md").write_text("# Ccc\\ncc cc\\n")
    >>> index = DenseIndex(root, Letters(), store=False, progress=False)
    >>> [(c.ordinal, c.path) for c in index.search("cc")]
    [(1, 'c.md'), (2, 'a.md')]
    """

    def __init__(
        self,
        vault: Vault | str | os.PathLike[str],
        embedder: Embedder,
        *,
        store: str | os.PathLike[str] | bool | None = None,
        vault_id: str | None = None,
        reranker: Reranker | None = None,
        pool: int = CANDIDATE_POOL,
        progress: bool = True,
        kimun: KimunVersion = DEFAULT_KIMUN,
    ) -> None:
        for method in ("embed_documents", "embed_query"):
            if not callable(getattr(embedder, method, None)):
                raise TypeError(
                    f"expected an Embedder (with embed_documents and embed_query), "
                    f"got {type(embedder).__name__}"
                )
        if pool < 1:
            raise ValueError(f"pool must be >= 1, got {pool}")
        self.kimun: KimunVersion = check_kimun(kimun)
        self.vault = vault if isinstance(vault, Vault) else Vault(vault)
        self.embedder = embedder
        self.reranker = reranker
        self.pool_size = pool
        self.progress = progress
        self.vault_id = _check_vault_id(
            _default_vault_id(self.vault.root) if vault_id is None else vault_id
        )
        if store is None or store is True:
            self.store_folder: Path | None = default_store_folder(self.vault.root, embedder)
        elif store is False:
            self.store_folder = None
        else:
            self.store_folder = Path(store).expanduser()
        if self.store_folder is not None:
            claim(  # refuse a folder askkit may not write
                self.store_folder,
                self.vault.root,
                what="store folder",
                fix="give another store folder: a new or empty folder, or one askkit made",
                purpose=DENSE_STORE,
            )
        self._notes: dict[str, dict[str, Any]] = {}
        self._by_note: dict[str, _Note] = {}
        self._table = Rows((), (), (), (), (), _EMPTY)
        self._dimension: int | None = None
        self.last_report = IndexReport()
        self.last_embedded = 0
        self.last_reused = 0
        if self.store_folder is None:
            self._dimension = self._embedder_dimension()  # the store's run does it otherwise
        self.update()

    def __repr__(self) -> str:
        where = "memory" if self.store_folder is None else str(self.store_folder)
        return (
            f"DenseIndex({str(self.vault.root)!r}, {self.embedder.name!r}, "
            f"notes={len(self._notes)}, chunks={len(self)}, store={where!r})"
        )

    def __len__(self) -> int:
        return len(self._table)

    def _rows(self) -> Rows:
        return self._table

    @property
    def dimension(self) -> int | None:
        """The vectors' width (``None`` until the embedder has been asked)."""
        return self._dimension

    @property
    def chunks(self) -> pd.DataFrame:
        """Every indexed chunk, as kimun stores it: ``path, hash, title, date, text``."""
        return self._table.frame()

    @property
    def matrix(self) -> np.ndarray[Any, np.dtype[np.float32]]:
        """The stored vectors, L2-normalised (row ``i`` is :attr:`chunks` row ``i``); read-only."""
        view = self._table.matrix.view()
        view.flags.writeable = False
        return view

    # -- the embedder and the store -----------------------------------------------------------

    def _embedder_dimension(self) -> int:
        """The embedder's width: known, or probed as kimun probes an HTTP embedder at start.

        Its fingerprint is asked first (an HTTP embedder probes its width for
        it), so an unreachable endpoint fails here, before any work.
        """
        self.embedder.fingerprint  # noqa: B018 - probes an HTTP embedder's width
        known = self.embedder.dimension
        if known is None:
            from askkit.dense.embedders import PROBE_TEXT

            known = int(np.asarray(self.embedder.embed_query(PROBE_TEXT)).shape[-1])
        return int(known)

    def _open_store(self) -> StoreWriter | None:
        """The store, opened for this run, with kimun's embedder-fingerprint gate applied."""
        if self.store_folder is None:
            return None
        from askkit.dense._writer import StoreWriter

        dimension = self._embedder_dimension()
        fingerprint = self.embedder.fingerprint
        writer = StoreWriter(self.store_folder, dimension=dimension)
        try:
            stored = writer.read_fingerprint()
            if stored is not None and stored != fingerprint:
                warn_user(
                    f"the embedder changed: the store {self.store_folder} holds vectors of "
                    f"{stored!r}, not {fingerprint!r}; dropping every collection in it and "
                    "embedding the vault again, as kimun's server does"
                )
                writer.drop_all_collections()
                self._forget()
            if stored != fingerprint:
                writer.write_fingerprint(fingerprint)
            self._load(writer)
        except BaseException:
            writer.close()
            raise
        self._dimension = dimension
        return writer

    def _forget(self) -> None:
        self._notes, self._by_note = {}, {}
        self._table = Rows((), (), (), (), (), _EMPTY)

    def _read_notes_file(self) -> dict[str, dict[str, Any]]:
        """askkit's size/mtime record; anything unreadable is ignored (the store is the truth)."""
        assert self.store_folder is not None
        try:
            data = json.loads((self.store_folder / NOTES_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if (
            not isinstance(data, dict)
            or data.get("format") != _NOTES_FORMAT
            or data.get("vault_id") != self.vault_id
            or data.get("vault") != str(self.vault.root)
            or not isinstance(data.get("notes"), dict)
        ):
            return {}
        return {
            path: entry
            for path, entry in data["notes"].items()
            if isinstance(entry, dict)
            and isinstance(entry.get("hash"), str)
            and all(type(entry.get(k)) is int for k in ("size", "mtime_ns", "chunks"))
        }

    def _write_notes_file(self) -> None:
        if self.store_folder is None:
            return
        notes = {
            path: {**entry, "chunks": len(self._by_note.get(path, ()))}
            for path, entry in sorted(self._notes.items())
        }
        data = {
            "format": _NOTES_FORMAT,
            "vault": str(self.vault.root),
            "vault_id": self.vault_id,
            "notes": notes,
        }
        atomic_write_text(self.store_folder / NOTES_FILE, json.dumps(data))

    def _load(self, writer: StoreWriter) -> None:
        """Read the collection back unless memory already holds exactly what it stores."""
        indexed = writer.indexed_notes(self.vault_id)
        held = {p: self._notes[p]["hash"] for p, note in self._by_note.items() if len(note)}
        if indexed == held:
            return
        by_note: dict[str, _Note] = {}
        if indexed:
            frame, vectors = writer.chunks_with_vectors(self.vault_id, sorted(indexed))
            rows = rows_of(frame, vectors)
            positions: dict[str, list[int]] = {}
            for i, path in enumerate(rows.path):
                positions.setdefault(path, []).append(i)
            for path, where in positions.items():
                cols = {c: [getattr(rows, c)[i] for i in where] for c in ROW_COLUMNS}
                by_note[path] = _Note(cols, rows.matrix[where])
        recorded = self._read_notes_file()
        notes: dict[str, dict[str, Any]] = {}
        for path, note_hash in indexed.items():
            entry = recorded.get(path)
            if entry is not None and entry["hash"] == note_hash:
                notes[path] = {k: entry[k] for k in ("hash", "size", "mtime_ns")}
            else:  # read and hash it again
                notes[path] = {"hash": note_hash, "size": -1, "mtime_ns": -1}
        for path, entry in recorded.items():  # notes with no chunk are not in kimun's store
            if path not in indexed and entry["chunks"] == 0:
                notes[path] = {k: entry[k] for k in ("hash", "size", "mtime_ns")}
        self._notes, self._by_note = notes, by_note
        self._rebuild()

    def _rebuild(self) -> None:
        cols: dict[str, list[Any]] = {c: [] for c in ROW_COLUMNS}
        blocks = []
        for path in sorted(self._by_note):
            note = self._by_note[path]
            if not len(note):
                continue
            for c in ROW_COLUMNS:
                cols[c].extend(note.cols[c])
            blocks.append(note.vectors)
        if blocks:
            matrix = np.ascontiguousarray(np.concatenate(blocks), dtype=np.float32)
        else:
            matrix = np.empty((0, self._dimension or 0), dtype=np.float32)
        self._table = Rows(
            path=tuple(cols["path"]),
            hash=tuple(cols["hash"]),
            title=tuple(cols["title"]),
            date=tuple(cols["date"]),
            text=tuple(cols["text"]),
            matrix=matrix,
        )

    # -- indexing ------------------------------------------------------------------------------

    def update(self) -> IndexReport:
        """Bring the index (and its store) up to date with the vault; return what changed.

        Only chunks whose title and text are new are embedded; a changed
        note's unchanged chunks keep their stored vectors. A note that cannot
        be read now is skipped with a warning naming the file, listed in the
        report's ``skipped``, and leaves the index.
        """
        t0 = time.perf_counter()
        writer = self._open_store()
        try:
            report = self._update(writer, t0)
        finally:
            if writer is not None:
                writer.close()
        return report

    def _reuse(
        self, fresh: Mapping[str, dict[str, list[Any]]], changed: Sequence[str]
    ) -> tuple[dict[str, dict[int, np.ndarray[Any, Any]]], list[tuple[str, int]]]:
        """kimun's vector cache: each new chunk's old vector if a changed note had it, or a slot.

        The cache holds every old chunk of the changed notes keyed by title +
        text (a later duplicate replaces an earlier one); a hit is taken out,
        so a chunk repeated in one note is embedded again, as in kimun.
        """
        cache: dict[tuple[str, str], np.ndarray[Any, Any]] = {}
        for key in changed:
            old = self._by_note.get(key)
            if old is not None:
                for title, text, vector in zip(
                    old.cols["title"], old.cols["text"], old.vectors, strict=True
                ):
                    cache[(title, text)] = vector
        reused: dict[str, dict[int, np.ndarray[Any, Any]]] = {}
        to_embed: list[tuple[str, int]] = []
        for key in sorted(fresh):
            cols = fresh[key]
            hits: dict[int, np.ndarray[Any, Any]] = {}
            for j, (title, text) in enumerate(zip(cols["title"], cols["text"], strict=True)):
                vector = cache.pop((title, text), None)
                if vector is None:
                    to_embed.append((key, j))
                else:
                    hits[j] = vector
            reused[key] = hits
        return reused, to_embed

    def _note_vectors(
        self, cols: Mapping[str, Sequence[Any]], vectors: Sequence[np.ndarray[Any, Any]]
    ) -> np.ndarray[Any, Any]:
        """One note's raw vectors as a matrix of the index's width (a DimensionError otherwise)."""
        if not vectors:
            return np.empty((0, self._dimension or 0), dtype=np.float32)
        raw = np.ascontiguousarray(np.stack(vectors), dtype=np.float32)
        if self._dimension is not None and raw.shape[1] != self._dimension:
            raise DimensionError(
                f"the embedder {self.embedder.name} returned {raw.shape[1]}-d vectors for "
                f"{cols['path'][0]}, but the index holds {self._dimension}-d ones",
                expected=self._dimension,
                actual=int(raw.shape[1]),
            )
        self._dimension = int(raw.shape[1])
        return raw

    def _update(self, writer: StoreWriter | None, t0: float) -> IndexReport:
        from askkit.dense.store import normalise

        scan = scan_vault(
            self.vault, self._notes, progress=self.progress, desc="reading notes", kimun=self.kimun
        )
        notes, fresh, added, changed, unchanged, failed = (
            scan.notes,
            scan.fresh,
            scan.added,
            scan.changed,
            scan.unchanged,
            scan.failed,
        )
        deleted = sorted(set(self._notes) - set(notes))
        reused, to_embed = self._reuse(fresh, changed)
        stale = sorted(set(changed) | set(deleted))
        if writer is not None and stale:
            writer.delete(self.vault_id, stale)  # as kimun: the old rows go before the new land
        embedded = self._embed(fresh, to_embed)  # everything, before anything is stored
        for key in sorted(fresh):
            cols = {c: list(fresh[key][c]) for c in ROW_COLUMNS}
            hits = reused[key]
            raw = self._note_vectors(
                cols,
                [hits[j] if j in hits else embedded[(key, j)] for j in range(len(cols["path"]))],
            )
            if writer is not None and len(raw):  # one atomic store per note, as kimun
                writer.store(self.vault_id, _frame(cols), raw)
            self._by_note[key] = _Note(cols, normalise(raw) if len(raw) else raw)
        for key in deleted:
            self._by_note.pop(key, None)
        self._notes = notes
        if fresh or deleted:
            self._rebuild()
        self.last_embedded = len(to_embed)
        self.last_reused = sum(len(hits) for hits in reused.values())
        self.last_report = IndexReport(
            added=tuple(added),
            changed=tuple(changed),
            deleted=tuple(deleted),
            unchanged=unchanged,
            chunks=len(self),
            seconds=time.perf_counter() - t0,
            skipped={**{str(k): v for k, v in self.vault.skipped.items()}, **failed},
        )
        self._write_notes_file()
        return self.last_report

    def _embed(
        self, fresh: Mapping[str, dict[str, list[Any]]], to_embed: Sequence[tuple[str, int]]
    ) -> dict[tuple[str, int], np.ndarray[Any, Any]]:
        """Embed the new chunks (the embedder batches them, 100 per call, with a bar)."""
        if not to_embed:
            return {}
        pairs = [(fresh[key]["title"][j], fresh[key]["text"][j]) for key, j in to_embed]
        vectors = _check_vectors(
            self.embedder.embed_documents(pairs, progress=self.progress),
            len(pairs),
            self.embedder,
            self._dimension,
        )
        return {slot: vectors[i] for i, slot in enumerate(to_embed)}

    def note_of(self, chunk: Any) -> str:
        """The full text of the note a chunk (or a path) comes from."""
        return self.vault.read(chunk if isinstance(chunk, str) else chunk.path)


class StoreRetriever(DenseRetrieval):
    """A kimun server's stored vectors, searched as the server searches them.

    askkit embeds the query (with the embedder the server uses), and ranks the
    vault's stored chunks as kimun's server does.

    Parameters
    ----------
    store:
        A :class:`~askkit.dense.KimunStore` (or its folder: kimun's
        ``[vector_db] path``, or a :class:`DenseIndex` folder) or a
        :class:`~askkit.dense.QdrantStore`.
    vault_id:
        The vault's collection (kimun's vault id).
    embedder:
        The embedder the store was built with.
    reranker:
        An optional :class:`~askkit.dense.Reranker` applied to every pool.
    pool:
        The candidate pool (kimun: 80).
    check_fingerprint:
        Refuse (:class:`~askkit.errors.StoreError`) a store whose recorded
        embedder fingerprint is not ``embedder``'s: its scores would mean
        nothing. ``False`` skips the check (the dimension is checked anyway).
    exact:
        Rank by askkit's exact dot product over the vault's vectors, loaded
        once, as kimun's SQLite store does. ``None`` (default): exact for a
        :class:`~askkit.dense.KimunStore`, and the store's own search for a
        :class:`~askkit.dense.QdrantStore` (Qdrant's cosine search, which
        kimun's Qdrant backend uses; the vectors are then not loaded).

    Raises
    ------
    StoreError
        The store is missing, not kimun's, has no such vault, or was built by
        another embedder.
    DimensionError
        The embedder's vectors do not have the stored vectors' width.
    """

    def __init__(
        self,
        store: KimunStore | QdrantStore | str | os.PathLike[str],
        vault_id: str,
        embedder: Embedder,
        *,
        reranker: Reranker | None = None,
        pool: int = CANDIDATE_POOL,
        check_fingerprint: bool = True,
        exact: bool | None = None,
        progress: bool = True,
    ) -> None:
        if pool < 1:
            raise ValueError(f"pool must be >= 1, got {pool}")
        if isinstance(store, str | os.PathLike):
            from askkit.dense.store import KimunStore

            store = KimunStore(store)
        self.store = store
        self.vault_id = vault_id
        self.embedder = embedder
        self.reranker = reranker
        self.pool_size = pool
        self.progress = progress
        self.check_fingerprint = check_fingerprint
        searches = callable(getattr(store, "query", None))
        self.exact = not searches if exact is None else exact
        if not self.exact and not searches:
            raise UsageError(f"{type(store).__name__} has no search of its own: use exact=True")
        self._table: Rows | None = None
        self._dimension = 0
        self.refresh()

    def _where(self) -> str:
        for name in ("path", "where", "url"):
            where = getattr(self.store, name, None)
            if where is not None:
                return str(where)
        return type(self.store).__name__

    def refresh(self) -> None:
        """Check the store again and re-read the vault's chunks (after the server re-indexed)."""
        if self.check_fingerprint:
            stored = self.store.fingerprint
            mine = self.embedder.fingerprint
            if stored is not None and stored != mine:
                raise StoreError(
                    f"the store {self._where()} holds vectors of the embedder {stored!r}, not "
                    f"{mine!r} ({self.embedder.name}): search it with the embedder kimun's "
                    "server uses (or pass check_fingerprint=False)",
                    path=self._where(),
                )
        self._table = None
        if self.exact:
            self._dimension = self._rows().dimension
        else:
            collections = {c.name: c for c in self.store.collections()}
            if self.vault_id not in collections:
                names = ", ".join(sorted(collections)) or "none"
                raise StoreError(
                    f"the store {self._where()} has no vault {self.vault_id!r} (it has: {names})",
                    path=self._where(),
                )
            self._dimension = collections[self.vault_id].dimension
        known = self.embedder.dimension
        if known is not None and self._dimension and known != self._dimension:
            raise DimensionError(
                f"the embedder {self.embedder.name} makes {known}-d vectors but the store "
                f"{self._where()} holds {self._dimension}-d ones for {self.vault_id!r}",
                expected=self._dimension,
                actual=known,
            )

    def _rows(self) -> Rows:
        if self._table is None:
            vault = self.store.load(self.vault_id)
            self._table = rows_of(vault.chunks, vault.matrix)
        return self._table

    def _query_dimension(self) -> int | None:
        return self._dimension or None

    def _nearest(self, vector: np.ndarray[Any, Any], size: int) -> list[ChunkResult]:
        if self.exact:
            return super()._nearest(vector, size)
        hits = self.store.query(self.vault_id, vector, size)  # type: ignore[union-attr]
        return [
            ChunkResult(
                path=chunk["path"],
                title=chunk["title"],
                date=chunk["date"],
                content=chunk["text"],
                hash=chunk["hash"],
                similarity_score=float(score),
            )
            for score, chunk in hits
        ]

    def __len__(self) -> int:
        return len(self._rows())

    def __repr__(self) -> str:
        return f"StoreRetriever({self._where()!r}, {self.vault_id!r}, {self.embedder.name!r})"

    @property
    def chunks(self) -> pd.DataFrame:
        """The vault's stored chunks: ``path, hash, title, date, text`` (read on first use)."""
        return self._rows().frame()
