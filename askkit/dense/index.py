"""Dense retrieval of a vault askkit embeds itself, as kimun's server embeds one.

:class:`DenseIndex` embeds a vault the way kimun's server indexes one
(``KimunRag::index`` in ``server/src/lib.rs`` at
:data:`~askkit.ranking.settings.KIMUN_COMMIT`): the sections kimun's core cuts,
split to the embedding window (:func:`askkit.vault.note_chunks`, the same
chunks :class:`~askkit.retrieve.LocalIndex` ranks with BM25), embedded
:data:`~askkit.dense.BATCH_SIZE` per call, kept L2-normalised in kimun's own
store schema (:class:`~askkit.dense.StoreWriter`), so kimun's store and
askkit's can be swapped: :class:`~askkit.dense.KimunStore` opens askkit's
folder, and :class:`~askkit.dense.StoreRetriever` searches either.

Re-indexing is incremental as kimun's is (:func:`askkit.vault.scan_vault`
finds what changed). A note whose size and modification
time are unchanged is not read again; a changed one is re-hashed, and only a
note whose content hash changed is re-chunked. Its stored rows are deleted, and
every new chunk whose title and text equal one of its old chunks' reuses that
chunk's stored vector (kimun's key: exactly what the embedder sees); only the
rest are embedded. Deleted notes leave the store. The store records the
embedder's fingerprint; a store built by another embedder is wiped and the
vault embedded again, with a warning, as kimun's server does at start.

One vault embedded by one model is embedded once, whoever asks: the default
store (:func:`default_store_folder`) is keyed by the vault's path, the
embedder's name and fingerprint, and the kimun version whose chunker cuts the
notes, so ``askkit index``, ``search``, ``run``, ``why``, ``diff`` and the
notebooks all open the same store and only embed what changed. The store
records that kimun version beside its notes (:data:`NOTES_FILE`): a store
whose chunks another version cut (or an unknown one) has every note cut again,
each new chunk reusing the stored vector of an identical old one, so chunks
of one kimun version never stand in for another's.

It answers a query as kimun's server does (:class:`askkit.dense._retrieval.DenseRetrieval`,
as :class:`~askkit.dense.StoreRetriever` does): the exact best 80 chunks by
dot product, f32 scores widened to f64, de-duplicated, reranked when a
reranker is given, then one row per note.
"""

from __future__ import annotations

import json
import os
import re
import stat
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from askkit._atomic import atomic_write_text
from askkit._cachedir import DENSE_STORE, cache_root, claim
from askkit._warn import warn_user
from askkit.dense._retrieval import CANDIDATE_POOL, ROW_COLUMNS, DenseRetrieval, Rows, rows_of
from askkit.errors import DimensionError, ProtocolError, StoreError
from askkit.vault import IndexReport, Vault, content_hash, scan_vault
from askkit.vault.chunking import DEFAULT_KIMUN, KimunVersion, check_kimun
from askkit.wire import check_vault_id

if TYPE_CHECKING:
    import pandas as pd

    from askkit.dense._writer import StoreWriter
    from askkit.dense.embedders import Embedder
    from askkit.dense.rerankers import Reranker

__all__ = ["NOTES_FILE", "DenseIndex", "default_store_folder"]

#: askkit's record, beside ``embeddings.db``, of each note's size and modification
#: time, so an unchanged note is not read again (kimun's store keeps only hashes).
NOTES_FILE = "askkit-notes.json"
_NOTES_FORMAT = 1
_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
#: Chunks written per transaction while indexing: whole notes, at least this many. One
#: transaction per note made a large vault's index SQLite-bound; a kill loses at most the
#: batch being written, whose notes the next run indexes again.
_STORE_BATCH = 4096

_EMPTY = np.empty((0, 0), dtype=np.float32)
#: A note's record when the kimun version that cut it is not this index's: read it, cut it.
_CUT_AGAIN: dict[str, Any] = {"hash": "", "size": -1, "mtime_ns": -1}


def _default_vault_id(root: Path) -> str:
    name = _NAME_UNSAFE.sub("-", root.name).lstrip("_")
    return name or "vault"


def default_store_folder(
    vault: str | os.PathLike[str], embedder: Embedder, kimun: KimunVersion = DEFAULT_KIMUN
) -> Path:
    """Where a :class:`DenseIndex` of ``vault`` persists by default: one store per vault,
    model and kimun version, shared by every command and notebook.

    askkit's cache folder (:func:`askkit._cachedir.cache_root`: ``$ASKKIT_CACHE_DIR``,
    else ``~/.cache/askkit``) / ``dense-<hash of the vault's path>-<embedder
    name>-k<kimun version>-<hash of the name, fingerprint and version>``. The
    embedder's fingerprint is asked for (an HTTP embedder whose width is not
    known probes it, as kimun's server does at start).
    """
    parent = cache_root()
    root = Path(vault).expanduser().resolve()
    version = check_kimun(kimun)
    name = _NAME_UNSAFE.sub("_", embedder.name).strip("_.")[:60] or "embedder"
    tag = content_hash(f"{embedder.name}\n{embedder.fingerprint}\n{version}".encode())[:6]
    return parent / f"dense-{content_hash(str(root).encode())}-{name}-k{version}-{tag}"


class _Note:
    """One note's stored chunks: columns and their L2-normalised vectors."""

    __slots__ = ("cols", "vectors")

    def __init__(self, cols: dict[str, list[Any]], vectors: np.ndarray[Any, Any]) -> None:
        self.cols = cols
        self.vectors = vectors

    def __len__(self) -> int:
        return len(self.cols["path"])


def _check_vectors(
    vectors: object, expected_rows: int, embedder: Embedder, dimension: int | None
) -> np.ndarray[Any, Any]:
    """The embedder's answer as float32 ``(n, d)``; a wrong count or width is a typed error."""
    with np.errstate(over="ignore"):  # out of float32's range: infinite, refused by the caller
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
        ``~/.cache/askkit``, in a folder named after the vault's path, the
        embedder and the kimun version (:func:`default_store_folder`), the one
        every command and notebook shares. ``False``: keep it in memory
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
        ``"0.17"``), kept as :attr:`kimun`. A store holds the chunks of one
        version: one whose notes another version cut has them cut again (a
        chunk whose title and text are unchanged keeps its stored vector).

    Attributes
    ----------
    last_report:
        What the last :meth:`update` did (:class:`~askkit.vault.IndexReport`).
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
        self.vault_id = check_vault_id(
            _default_vault_id(self.vault.root) if vault_id is None else vault_id
        )
        if store is None or store is True:
            self.store_folder: Path | None = default_store_folder(
                self.vault.root, embedder, self.kimun
            )
        elif store is False:
            self.store_folder = None
        else:
            self.store_folder = Path(store).expanduser()
        if self.store_folder is not None:
            from askkit.dense._writer import STORE_UNTRUSTED_FIX

            claim(  # refuse a folder askkit may not write, or may not trust
                self.store_folder,
                self.vault.root,
                what="store folder",
                fix="give another store folder: a new or empty folder, or one askkit made",
                purpose=DENSE_STORE,
                untrusted_fix=STORE_UNTRUSTED_FIX,
            )
        self._notes: dict[str, dict[str, Any]] = {}
        self._by_note: dict[str, _Note] = {}
        self._table = Rows((), (), (), (), (), _EMPTY)
        self._dimension: int | None = None
        self.last_report = IndexReport()
        self.last_embedded = 0
        self.last_reused = 0
        self._recorded = False  # the store's record (its kimun version) read or written
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

    def _notes_file(self) -> Path | None:
        """askkit's size/mtime record when it is a file of its own (None: there is none).

        Raises :class:`~askkit.errors.StoreError` for a link, a file with other names or
        anything but a regular file: a write would replace the file a link names, and a
        FIFO would block.
        """
        assert self.store_folder is not None
        path = self.store_folder / NOTES_FILE
        try:
            st = path.lstat()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StoreError(f"cannot inspect {path}: {exc.strerror}", path=str(path)) from None
        if stat.S_ISLNK(st.st_mode) or not stat.S_ISREG(st.st_mode) or st.st_nlink > 1:
            what = (
                "a symbolic link"
                if stat.S_ISLNK(st.st_mode)
                else "not a regular file"
                if not stat.S_ISREG(st.st_mode)
                else f"a file with {st.st_nlink} hard links"
            )
            raise StoreError(
                f"{path} is {what}; askkit keeps its notes record only as a file of its own in "
                "the store folder, and never writes through a link or into a file with other "
                "names: remove it (askkit writes it again)",
                path=str(path),
            )
        return path

    def _read_notes_file(self) -> tuple[dict[str, dict[str, Any]], str | None]:
        """askkit's size/mtime record, and the kimun version that cut the stored notes
        (``None``: not recorded); anything unreadable is ignored (the store is the truth)."""
        path = self._notes_file()
        if path is None:
            return {}, None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            return {}, None
        if (
            not isinstance(data, dict)
            or data.get("format") != _NOTES_FORMAT
            or data.get("vault_id") != self.vault_id
            or data.get("vault") != str(self.vault.root)
            or not isinstance(data.get("notes"), dict)
        ):
            return {}, None
        notes = {
            path: entry
            for path, entry in data["notes"].items()
            if isinstance(entry, dict)
            and isinstance(entry.get("hash"), str)
            and all(type(entry.get(k)) is int for k in ("size", "mtime_ns", "chunks"))
        }
        kimun = data.get("kimun")
        return notes, kimun if isinstance(kimun, str) else None

    def _write_notes_file(self) -> None:
        if self.store_folder is None:
            return
        self._notes_file()  # a link or a FIFO is refused, never written through
        notes = {
            path: {**entry, "chunks": len(self._by_note.get(path, ()))}
            for path, entry in sorted(self._notes.items())
        }
        data = {
            "format": _NOTES_FORMAT,
            "vault": str(self.vault.root),
            "vault_id": self.vault_id,
            "kimun": self.kimun,
            "embedder": self.embedder.name,
            "notes": notes,
        }
        atomic_write_text(self.store_folder / NOTES_FILE, json.dumps(data))

    def _load(self, writer: StoreWriter) -> None:
        """Read the collection back unless memory already holds exactly what it stores."""
        indexed = writer.indexed_notes(self.vault_id)
        held = {p: self._notes[p]["hash"] for p, note in self._by_note.items() if len(note)}
        if indexed == held and self._recorded:
            return
        by_note: dict[str, _Note] = {}
        if indexed:
            frame, vectors = writer.chunks_with_vectors(self.vault_id, sorted(indexed))
            rows = rows_of(frame, vectors, str(self.store_folder))
            positions: dict[str, list[int]] = {}
            for i, path in enumerate(rows.path):
                positions.setdefault(path, []).append(i)
            for path, where in positions.items():
                cols = {c: [getattr(rows, c)[i] for i in where] for c in ROW_COLUMNS}
                by_note[path] = _Note(cols, rows.matrix[where])
        recorded, cut_by = self._read_notes_file()
        notes: dict[str, dict[str, Any]] = {}
        for path, note_hash in indexed.items():
            entry = recorded.get(path)
            if entry is not None and entry["hash"] in (note_hash, _CUT_AGAIN["hash"]):
                notes[path] = {k: entry[k] for k in ("hash", "size", "mtime_ns")}
            else:  # read and hash it again
                notes[path] = {"hash": note_hash, "size": -1, "mtime_ns": -1}
        for path, entry in recorded.items():  # notes with no chunk are not in kimun's store
            if path not in indexed and entry["chunks"] == 0:
                notes[path] = {k: entry[k] for k in ("hash", "size", "mtime_ns")}
        if notes and cut_by != self.kimun:
            notes = self._cut_again(notes, cut_by)
        self._notes, self._by_note = notes, by_note
        self._rebuild()
        if cut_by != self.kimun:  # the gate first, before any chunk of this version is stored
            self._write_notes_file()
        self._recorded = True

    def _cut_again(
        self, notes: dict[str, dict[str, Any]], cut_by: str | None
    ) -> dict[str, dict[str, Any]]:
        """Every note marked to be cut again by this kimun version: the store's chunks
        were cut by another version (said), or by one no record names (a store whose
        record was lost, or an older askkit's). The mark is recorded, so a run stopped
        half-way leaves the rest marked."""
        if cut_by is not None:
            warn_user(
                f"the store {self.store_folder} holds the chunks kimun {cut_by}'s chunker cut, "
                f"not kimun {self.kimun}'s; cutting every note again (a chunk whose title and "
                "text are unchanged keeps its stored vector)"
            )
        return {path: dict(_CUT_AGAIN) for path in notes}

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
        scan = scan_vault(
            self.vault, self._notes, progress=self.progress, desc="reading notes", kimun=self.kimun
        )
        fresh, deleted = scan.fresh, scan.deleted
        reused, to_embed = self._reuse(fresh, scan.changed)
        stale = sorted(set(scan.changed) | set(deleted))
        if writer is not None and stale:
            writer.delete(self.vault_id, stale)  # as kimun: the old rows go before the new land
        embedded = self._embed(fresh, to_embed)  # everything, before anything is stored
        batch: list[tuple[str, dict[str, list[Any]], np.ndarray[Any, Any]]] = []
        rows = 0
        for key in sorted(fresh):
            cols = {c: list(fresh[key][c]) for c in ROW_COLUMNS}
            hits = reused[key]
            raw = self._note_vectors(
                cols,
                [hits[j] if j in hits else embedded[(key, j)] for j in range(len(cols["path"]))],
            )
            batch.append((key, cols, raw))
            rows += len(raw)
            if rows >= _STORE_BATCH:
                self._store_notes(writer, batch)
                batch, rows = [], 0
        self._store_notes(writer, batch)
        for key in deleted:
            self._by_note.pop(key, None)
        self._notes = scan.notes
        if fresh or deleted:
            self._rebuild()
        self.last_embedded = len(to_embed)
        self.last_reused = sum(len(hits) for hits in reused.values())
        self.last_report = scan.report(chunks=len(self), seconds=time.perf_counter() - t0)
        self._write_notes_file()
        return self.last_report

    def _store_notes(
        self,
        writer: StoreWriter | None,
        notes: Sequence[tuple[str, dict[str, list[Any]], np.ndarray[Any, Any]]],
    ) -> None:
        """Store whole notes in one transaction (kimun stores each note atomically; a batch
        of them is atomic too), then hold them normalised as stored."""
        from askkit.dense.vectors import normalise

        if not notes:
            return
        raw = np.concatenate([vectors for _, _, vectors in notes])
        if writer is not None and len(raw):
            cols = {c: [v for _, note, _ in notes for v in note[c]] for c in ROW_COLUMNS}
            held = writer._append(self.vault_id, cols, raw)
        else:
            held = normalise(raw) if len(raw) else raw
        start = 0
        for key, cols, vectors in notes:
            self._by_note[key] = _Note(cols, held[start : start + len(vectors)])
            start += len(vectors)

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
        finite = np.isfinite(vectors).all(axis=1)
        if not finite.all():
            i = int(np.flatnonzero(~finite)[0])
            key, j = to_embed[i]
            raise ProtocolError(
                f"the embedder {self.embedder.name} returned a vector that is not finite (it "
                f"holds NaN or an infinity) for chunk {j + 1} of {key} ({pairs[i][0]!r}); "
                "kimun's search cannot rank it; no chunk of this run was stored"
            )
        return {slot: vectors[i] for i, slot in enumerate(to_embed)}

    def note_of(self, chunk: Any) -> str:
        """The full text of the note a chunk (or a path) comes from."""
        return self.vault.read(chunk if isinstance(chunk, str) else chunk.path)
