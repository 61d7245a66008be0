"""Dense retrieval over a kimun server's store, as the server searches it.

:class:`StoreRetriever` embeds each query with the embedder the server uses
and ranks the vault's stored chunks as kimun's server does
(:class:`askkit.dense._retrieval.DenseRetrieval`): the exact best 80 chunks by
dot product over a :class:`~askkit.dense.KimunStore` (kimun's SQLite store,
or a :class:`~askkit.dense.DenseIndex` folder), or a
:class:`~askkit.dense.QdrantStore`'s own search; f32 scores widened to f64,
de-duplicated, reranked when a reranker is given, then one row per note.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import numpy as np

from askkit.dense._retrieval import CANDIDATE_POOL, DenseRetrieval, Rows, rows_of
from askkit.errors import DimensionError, StoreError, UsageError
from askkit.wire import ChunkResult

if TYPE_CHECKING:
    import pandas as pd

    from askkit.dense.embedders import Embedder
    from askkit.dense.qdrant import QdrantStore
    from askkit.dense.rerankers import Reranker
    from askkit.dense.store import KimunStore

__all__ = ["StoreRetriever"]


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
            self._table = rows_of(
                vault.chunks, vault.matrix, f"{self._where()} ({self.vault_id!r})"
            )
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

    def _nearest_many(self, vectors: np.ndarray[Any, Any], size: int) -> list[list[ChunkResult]]:
        if self.exact:
            return super()._nearest_many(vectors, size)
        return [self._nearest(vector, size) for vector in vectors]  # the store's own search

    def __len__(self) -> int:
        return len(self._rows())

    def __repr__(self) -> str:
        return f"StoreRetriever({self._where()!r}, {self.vault_id!r}, {self.embedder.name!r})"

    @property
    def chunks(self) -> pd.DataFrame:
        """The vault's stored chunks: ``path, hash, title, date, text`` (read on first use)."""
        return self._rows().frame()
