"""kimun's vector arithmetic: vectors normalised as kimun stores them, the exact top k as it ranks.

kimun's SQLite store (``server/src/dbembeddings/vecsqlite.rs``) L2-normalises
every vector in float32 at write time, and answers a query by normalising the
query vector, scoring every row of the vault by dot product, sorting, and
keeping the best 80; a score is a float32 widened to float64.
:func:`normalise` gives kimun's stored vectors bit for bit; :func:`exact_top_k`
its ranking of one query (ties broken as kimun's sequential float32 sums break
them) and :func:`exact_top_k_many` the same for a block of queries with one
matrix product.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from askkit.errors import DimensionError, UsageError

__all__ = ["exact_top_k", "exact_top_k_many", "normalise"]

_BLOCK: Final = 8192  # rows per block in normalise and in the exact re-scoring
_SCREEN_VALUES: Final = 1 << 24  # float32 scores screened at once by exact_top_k_many (64 MB)


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
