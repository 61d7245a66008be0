"""askkit's dense stores in a cache folder, listed: what ``askkit stores CACHE_DIR`` shows.

:class:`~askkit.dense.DenseIndex` keeps one store per vault, model and kimun
version in askkit's cache folder (:func:`~askkit.dense.index.default_store_folder`;
the cache is :func:`askkit._cachedir.cache_root`). :func:`cached_stores` lists
the stores inside such a folder, read-only: each store's folder, the vault it
embeds and the kimun version that cut its notes (from askkit's notes record,
:data:`~askkit.dense.index.NOTES_FILE`), the embedder's name and kimun
fingerprint, and its notes, chunks and dimension (from ``embeddings.db``, read
as :class:`~askkit.dense.KimunStore` reads any kimun store). A store that
cannot be read is listed with the reason, never left out.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from askkit._cachedir import DENSE_STORE, is_ours, purpose_of
from askkit.dense.index import NOTES_FILE
from askkit.dense.store import KimunStore
from askkit.errors import StoreError

__all__ = ["CachedStore", "cached_stores", "holds_askkit_folders"]

#: The largest notes record read for the listing (a record of 100,000 notes is about 10 MB).
_RECORD_LIMIT = 64 << 20


@dataclass(frozen=True, slots=True)
class CachedStore:
    """One of askkit's dense stores: where it is, what it embeds, and how much.

    ``vault``, ``vault_id``, ``embedder`` and ``kimun`` come from askkit's
    notes record (``None`` when a store has none, as one an older askkit wrote);
    ``fingerprint``, ``notes``, ``chunks`` and ``dimension`` from the store
    itself (``notes`` counts the notes with chunks, as kimun does). ``error``
    says why the store could not be read (its counts are then 0).
    """

    folder: Path
    vault: str | None
    vault_id: str | None
    embedder: str | None
    fingerprint: str | None
    kimun: str | None
    notes: int
    chunks: int
    dimension: int | None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The store as JSON-ready values (the folder as a string)."""
        return {
            "folder": str(self.folder),
            "vault": self.vault,
            "vault_id": self.vault_id,
            "embedder": self.embedder,
            "fingerprint": self.fingerprint,
            "kimun": self.kimun,
            "notes": self.notes,
            "chunks": self.chunks,
            "dimension": self.dimension,
            "error": self.error,
        }


def _record(folder: Path) -> dict[str, Any]:
    """askkit's notes record of a store, read without following a link (empty: none)."""
    path = folder / NOTES_FILE
    try:
        st = path.lstat()
        if not stat.S_ISREG(st.st_mode) or st.st_size > _RECORD_LIMIT:
            return {}
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _read(folder: Path) -> CachedStore:
    record = _record(folder)
    known = {
        "vault": _text(record.get("vault")),
        "vault_id": _text(record.get("vault_id")),
        "embedder": _text(record.get("embedder")),
        "kimun": _text(record.get("kimun")),
    }
    try:
        with KimunStore(folder) as store:
            fingerprint = store.fingerprint
            collections = store.collections()
    except StoreError as exc:
        return CachedStore(
            folder,
            **known,
            fingerprint=None,
            notes=0,
            chunks=0,
            dimension=None,
            error=str(exc),
        )
    return CachedStore(
        folder,
        **known,
        fingerprint=fingerprint,
        notes=sum(c.notes for c in collections),
        chunks=sum(c.chunks for c in collections),
        dimension=collections[0].dimension if collections else None,
    )


def _children(folder: Path) -> list[Path]:
    try:
        return sorted(folder.iterdir())
    except OSError as exc:
        raise StoreError(f"cannot list {folder}: {exc.strerror or exc}", path=str(folder)) from None


def cached_stores(folder: str | os.PathLike[str]) -> list[CachedStore]:
    """askkit's dense stores in ``folder`` (askkit's cache, or any folder holding them),
    by folder name.

    A store is a folder askkit tagged as a dense store (its ``CACHEDIR.TAG``);
    links and other folders are passed over, and nothing is written.

    Raises
    ------
    StoreError
        ``folder`` cannot be listed.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> cached_stores(pathlib.Path(tempfile.mkdtemp()))
    []
    """
    return [
        _read(child)
        for child in _children(Path(folder))
        if not child.is_symlink() and purpose_of(child) == DENSE_STORE
    ]


def holds_askkit_folders(folder: str | os.PathLike[str]) -> bool:
    """Whether ``folder`` holds any folder askkit tagged (an index, a store, a model): a
    cache folder of askkit's, even when it holds no dense store yet."""
    try:
        return any(is_ours(child) for child in _children(Path(folder)))
    except StoreError:
        return False
