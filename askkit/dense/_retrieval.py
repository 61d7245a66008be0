"""The query path kimun's server runs over stored vectors, shared by every dense retriever.

kimun's ``KimunRag::retrieve`` and ``search_impl`` (``server/src/lib.rs`` at
:data:`~askkit.ranking.settings.KIMUN_COMMIT`) embed the query, pull the best
80 chunks (``CANDIDATE_POOL``) from the vector store by exact dot product over
L2-normalised vectors, de-duplicate identical chunks, rerank the pool when a
reranker is active (falling back to the vector order when it fails), and list
one row per note. :class:`DenseRetrieval` runs exactly that over a matrix of
stored vectors and gives :class:`~askkit.dense.DenseIndex` and
:class:`~askkit.dense.StoreRetriever` the surface of
:class:`~askkit.retrieve.LocalIndex`: :meth:`~DenseRetrieval.search`,
:meth:`~DenseRetrieval.pool`, :meth:`~DenseRetrieval.pools`,
:meth:`~DenseRetrieval.search_cut` and ``retriever(query, k)``.

A wire chunk is built from a stored row as kimun's handlers build a
``ChunkResult`` from a ``FlattenedChunk``: ``path``, ``title``, ``date``
(``YYYY-MM-DD`` or ``None``), the row's text as ``content``, the note's
``hash``, the f32 dot product widened to f64 as ``similarity_score``, and the
1-based rank as ``ordinal``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
from tqdm.auto import tqdm

from askkit.errors import DimensionError, ProtocolError, StoreError
from askkit.ranking.pool import deduplicate_chunks
from askkit.ranking.pools import checked_queries, pools_frame
from askkit.ranking.settings import CANDIDATE_POOL, CutSettings
from askkit.ranking.surfaces import CutPreview, cut_preview, dedupe_by_note, search_rows
from askkit.wire import ChunkResult

if TYPE_CHECKING:
    import pandas as pd

    from askkit.dense.embedders import Embedder
    from askkit.dense.rerankers import Reranker
    from askkit.metrics.queries import Queries

__all__ = ["CANDIDATE_POOL", "DenseRetrieval", "Rows", "embed_query", "rows_of"]

#: The columns of a stored chunk, as kimun's store keeps them (``chunks`` table).
ROW_COLUMNS = ("path", "hash", "title", "date", "text")


@dataclass(frozen=True, slots=True)
class Rows:
    """Stored chunks as columns, row ``i`` scored by ``matrix[i]``.

    ``matrix`` is float32 ``(n, d)``, C-contiguous, each row L2-normalised as
    kimun stores it (a zero row as is).
    """

    path: tuple[str, ...]
    hash: tuple[str, ...]
    title: tuple[str, ...]
    date: tuple[str | None, ...]
    text: tuple[str, ...]
    matrix: np.ndarray[Any, np.dtype[np.float32]]

    def __len__(self) -> int:
        return len(self.path)

    @property
    def dimension(self) -> int:
        """The vectors' width."""
        return int(self.matrix.shape[1]) if self.matrix.ndim == 2 else 0

    def frame(self) -> pd.DataFrame:
        """The chunks as a frame: ``path, hash, title, date, text`` (string dtypes, date NA)."""
        import pandas as pd

        from askkit.frame.schema import STRING

        return pd.DataFrame(
            {c: pd.Series(list(getattr(self, c)), dtype=STRING) for c in ROW_COLUMNS}
        )


def _optional(value: object) -> str | None:
    """A stored date as the wire has it: a string, or ``None`` for a missing (NA, NaN) one."""
    if value is None or not isinstance(value, str):
        return None
    return value


def rows_of(chunks: pd.DataFrame, matrix: np.ndarray[Any, Any], where: str) -> Rows:
    """:class:`Rows` from stored chunks (``path, hash, title, date, text``) and their matrix.

    Raises
    ------
    StoreError
        A stored vector holds NaN or an infinity (kimun stores what an embedder
        returned, and cannot normalise such a vector): every score against it
        would be NaN or infinite, which kimun's ranking and JSON cannot carry.
        The message names the store (``where``) and the chunk.
    """
    columns = {c: chunks[c].astype(object).tolist() for c in ROW_COLUMNS}
    finite = np.isfinite(matrix).all(axis=1) if np.ndim(matrix) == 2 else np.ones(0, bool)
    if not finite.all():
        i = int(np.flatnonzero(~finite)[0])
        raise StoreError(
            f"the store {where} holds a vector that is not finite (NaN or an infinity) for "
            f"chunk {i + 1} of {len(finite)}, {columns['path'][i]!r} ({columns['title'][i]!r}): "
            "every score against it would be NaN or infinite; index that note again with an "
            "embedder that returns finite vectors",
            path=where,
        )
    return Rows(
        path=tuple(str(v) for v in columns["path"]),
        hash=tuple(str(v) for v in columns["hash"]),
        title=tuple("" if not isinstance(v, str) else v for v in columns["title"]),
        date=tuple(_optional(v) for v in columns["date"]),
        text=tuple(str(v) for v in columns["text"]),
        matrix=np.ascontiguousarray(matrix, dtype=np.float32),
    )


def embed_query(embedder: Embedder, query: str, dimension: int | None) -> np.ndarray[Any, Any]:
    """The query's vector (kimun's query framing is the embedder's), checked against the store.

    Raises
    ------
    ProtocolError
        The embedder answered with something that is not one vector of finite values.
    DimensionError
        The vector's width differs from the stored vectors' ``dimension``.
    """
    with np.errstate(over="ignore"):  # a value out of float32's range: refused below
        vector = np.asarray(embedder.embed_query(query), dtype=np.float32)
    if vector.ndim != 1 or vector.shape[0] == 0:
        raise ProtocolError(
            f"the embedder {embedder.name} returned a query vector of shape {vector.shape}, "
            "not one vector"
        )
    if not np.isfinite(vector).all():
        raise ProtocolError(
            f"the embedder {embedder.name} returned a query vector that is not finite (it "
            f"holds NaN or an infinity) for {query[:80]!r}: no score against it is a number"
        )
    if dimension is not None and dimension and vector.shape[0] != dimension:
        raise DimensionError(
            f"the embedder {embedder.name} makes {vector.shape[0]}-d query vectors but the "
            f"stored vectors are {dimension}-d: embed the vault with this embedder again, "
            "or query with the embedder that built the store",
            expected=dimension,
            actual=int(vector.shape[0]),
        )
    return vector


def _chunks(
    rows: Rows, indices: np.ndarray[Any, Any], scores: np.ndarray[Any, Any]
) -> list[ChunkResult]:
    """Stored rows as kimun's wire chunks, with their scores (f32 widened to f64)."""
    return [
        ChunkResult(
            path=rows.path[i],
            title=rows.title[i],
            date=rows.date[i],
            content=rows.text[i],
            hash=rows.hash[i],
            similarity_score=float(score),
        )
        for i, score in zip(indices.tolist(), scores.tolist(), strict=True)
    ]


def _numbered(chunks: Sequence[ChunkResult]) -> list[ChunkResult]:
    """``chunks`` with ordinals ``1..n`` in their order."""
    return [replace(chunk, ordinal=i) for i, chunk in enumerate(chunks, start=1)]


def _check_query(query: object) -> str:
    if not isinstance(query, str) or not query.strip():
        raise ValueError("the query is empty: give the text to search for")
    return query


class DenseRetrieval:
    """kimun's query path over stored vectors: the surface of a dense retriever.

    A subclass sets :attr:`embedder`, :attr:`reranker`, :attr:`pool_size`
    and :attr:`progress`, and implements :meth:`_rows` (the stored chunks and
    their matrix).
    """

    embedder: Embedder
    reranker: Reranker | None
    pool_size: int
    progress: bool

    def _rows(self) -> Rows:  # pragma: no cover - every subclass implements it
        raise NotImplementedError

    # -- the pool --------------------------------------------------------------------------

    def _query_dimension(self) -> int | None:
        """The width a query vector must have (``None``: nothing stored to compare with)."""
        rows = self._rows()
        return rows.dimension if len(rows) else None

    def _nearest(self, vector: np.ndarray[Any, Any], size: int) -> list[ChunkResult]:
        """The exact best ``size`` stored chunks for a query vector, best first (kimun)."""
        from askkit.dense.vectors import exact_top_k

        rows = self._rows()
        if not len(rows):
            return []
        return _chunks(rows, *exact_top_k(rows.matrix, vector, min(size, len(rows))))

    def _nearest_many(self, vectors: np.ndarray[Any, Any], size: int) -> list[list[ChunkResult]]:
        """:meth:`_nearest` for each row of ``vectors``: one matrix product per block of them."""
        from askkit.dense.vectors import exact_top_k_many

        rows = self._rows()
        if not len(rows):
            return [[] for _ in vectors]
        found = exact_top_k_many(rows.matrix, vectors, min(size, len(rows)))
        return [_chunks(rows, indices, scores) for indices, scores in found]

    def vector_pool(self, query: str, size: int | None = None) -> list[ChunkResult]:
        """The store's answer for ``query``: the best ``size`` chunks, before de-duplication.

        Best first by dot product of the normalised query against each stored
        (normalised) row, f32 widened to f64, ordinals ``1..n``; ties keep the
        lower row first. ``size`` defaults to the pool size (kimun: 80).
        """
        _check_query(query)
        size = self._pool_size(size)
        vector = embed_query(self.embedder, query, self._query_dimension())
        return _numbered(self._nearest(vector, size))

    def _pool_size(self, size: int | None) -> int:
        size = self.pool_size if size is None else size
        if size < 1:
            raise ValueError(f"size must be >= 1, got {size}")
        return size

    def pool(self, query: str, size: int | None = None) -> list[ChunkResult]:
        """The ranked candidate pool kimun's server holds for ``query``, before its context cut.

        The exact best ``size`` chunks (default: the pool size, kimun's 80;
        chunk level), identical chunks de-duplicated as kimun does
        (:func:`askkit.ranking.deduplicate_chunks`), then reranked when a
        reranker is set (:func:`askkit.dense.apply_reranker`: a failing
        reranker keeps the vector order, with a warning). Best first, ordinals
        ``1..n``. Feed it to :mod:`askkit.ranking`.
        """
        return self._ranked(query, self.vector_pool(query, size))

    def _ranked(self, query: str, hits: Sequence[ChunkResult]) -> list[ChunkResult]:
        """The store's answer made kimun's pool: de-duplicated, reranked, numbered."""
        ranked: Sequence[ChunkResult] = deduplicate_chunks(hits)
        if self.reranker is not None and ranked:
            from askkit.dense.rerankers import apply_reranker

            ranked = apply_reranker(self.reranker, query, ranked).pool
        return _numbered(ranked)

    # -- the surfaces ----------------------------------------------------------------------

    def search(
        self,
        query: str,
        k: int = 10,
        *,
        per_note: bool = True,
        settings: CutSettings | None = None,
    ) -> list[ChunkResult]:
        """The rows kimun's ``/api/embeddings`` returns for ``query``, best first.

        Parameters
        ----------
        query:
            The search text.
        k:
            kimun's ``top_k`` (``[reranker] top_k``, or the request's
            ``context_size``: small 10, medium 20, large 40).
        per_note:
            One row per note, each note's best chunk (default), as kimun's
            search lists them; ``False``: the best ``k`` chunks of the pool.
        settings:
            The server's context cut. ``None`` (default): the best ``k``
            notes, walking the whole ranked pool (kimun's ``fixed`` cut). With
            an adaptive cut (``score-range``, ``largest-drop``), every note
            with a chunk in the kept prefix, however many (``k`` is then not
            used, as in kimun).

        Returns
        -------
        list of ChunkResult
            Ordinals ``1..n``.
        """
        _check_query(query)
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        if not per_note:
            pool = self.pool(query, max(self.pool_size, k))
            return pool[:k]
        pool = self.pool(query)
        if settings is None:
            rows = dedupe_by_note(pool, k)
        else:
            rows = search_rows(pool, settings.replace(top_k=k))
        return [replace(chunk, ordinal=i) for i, chunk in enumerate(rows, start=1)]

    def search_cut(
        self, query: str, settings: CutSettings | None = None, *, size: int | None = None
    ) -> CutPreview:
        """Where kimun's context cut lands on ``query``'s pool (:func:`askkit.ranking.cut_preview`).

        ``settings`` default to kimun's (``score-range``, cutoff 0.4).
        """
        return cut_preview(self.pool(query, size), settings)

    def pools(
        self, queries: Queries, size: int | None = None, *, progress: bool | None = None
    ) -> pd.DataFrame:
        """Many queries' pools as one long frame (:func:`askkit.ranking.query_pools`).

        What :func:`askkit.ranking.sweep_cuts` sweeps: ``queries`` is
        ``{query_id: text}``, a frame with ``query_id`` and ``text`` (or
        ``question``) columns, or such a TSV file; one row per pool chunk
        (:data:`~askkit.ranking.pools.POOL_COLUMNS`), queries in the given
        order, each pool best first.

        Each pool is :meth:`pool`'s for its query, bit for bit, but the stored
        vectors are searched with one matrix product per block of queries
        (:func:`~askkit.dense.vectors.exact_top_k_many`) rather than one per query.
        """
        texts = checked_queries(queries)
        size = self._pool_size(size)
        show = self.progress if progress is None else progress
        dimension = self._query_dimension()
        vectors = [
            embed_query(self.embedder, text, dimension)
            for text in tqdm(
                texts.values(), desc="pools", unit="query", disable=not show or len(texts) < 2
            )
        ]
        if not vectors:
            return pools_frame([])
        found = self._nearest_many(np.stack(vectors), size)
        return pools_frame(
            (query_id, self._ranked(text, _numbered(hits)))
            for (query_id, text), hits in zip(texts.items(), found, strict=True)
        )

    def __call__(self, query: str, k: int = 10) -> list[ChunkResult]:
        """The :class:`~askkit.retrieve.Retriever` protocol: :meth:`search`."""
        return self.search(query, k)
