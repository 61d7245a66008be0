"""kimun's vector arithmetic: normalise (kimun's ``to_blob``) and the exact top k (its query).

Pinned to kimun's ``server/src/dbembeddings/vecsqlite.rs`` at commit
55d17b21f70d773694ee104702380b1ae722f862: ``to_blob``'s float32 normalisation,
the query's f32 dot product summed left to right, sort by ``total_cmp`` and
truncate, scores widened to f64.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from askkit.dense.store import KimunStore
from askkit.dense.vectors import exact_top_k, exact_top_k_many, normalise
from askkit.errors import DimensionError, UsageError
from askkit.testing.stores import (
    kimun_normalise,
    random_store_rows,
    write_kimun_sqlite,
)

# -- references -----------------------------------------------------------------------------


def to_blob_scalar(vector: np.ndarray) -> np.ndarray:
    """kimun's ``to_blob``, one float32 operation at a time, as Rust runs it."""
    with np.errstate(all="ignore"):  # IEEE overflow to inf, as in Rust
        return _to_blob_scalar(vector)


def _to_blob_scalar(vector: np.ndarray) -> np.ndarray:
    total = np.float32(0.0)
    for x in vector.astype(np.float32):
        total = np.float32(total + np.float32(x * x))
    norm = np.float32(np.sqrt(total))
    scale = np.float32(1.0) / norm if norm > 0 else np.float32(1.0)
    return np.array([np.float32(x * scale) for x in vector.astype(np.float32)], dtype=np.float32)


def brute_force(stored: np.ndarray, query: Any, k: int) -> tuple[list[int], list[float]]:
    """kimun's search by brute force: every stored f32 row times the normalised query, the
    float32 products accumulated left to right in float32 (``np.cumsum``, a running sum,
    as vecsqlite.rs ``score`` adds them), fully sorted best first, ties by row."""
    q = kimun_normalise(np.asarray(query, dtype=np.float32)[None, :])[0]
    with np.errstate(over="ignore", invalid="ignore"):
        running = np.cumsum(stored.astype(np.float32) * q, axis=1, dtype=np.float32)
    kimun = running[:, -1].tolist() if stored.shape[1] else [0.0] * len(stored)
    order = sorted(range(len(kimun)), key=lambda i: (-kimun[i], i))[:k]
    return order, [kimun[i] for i in order]


def exact_dots(stored: np.ndarray, query: Any, rows: list[int]) -> list[float]:
    """The exact dot products (two float32 multiply exactly in float64; math.fsum)."""
    q = kimun_normalise(np.asarray(query, dtype=np.float32)[None, :])[0].astype(np.float64)
    return [math.fsum(stored[i].astype(np.float64) * q) for i in rows]


def assert_matches_brute_force(matrix: np.ndarray, query: Any, k: int = 80) -> None:
    rows, scores = exact_top_k(matrix, query, k)
    ref_rows, ref_scores = brute_force(matrix, query, k)
    assert rows.tolist() == ref_rows
    assert scores.dtype == np.float64
    # kimun's f32 scores widened to f64, bit for bit, and within 1e-6 of the exact dot
    assert scores.tolist() == ref_scores
    np.testing.assert_allclose(scores, exact_dots(matrix, query, ref_rows), rtol=0, atol=1e-6)


# -- normalise ------------------------------------------------------------------------------


def test_normalise_is_kimuns_to_blob_bit_for_bit() -> None:
    _rows, vectors = random_store_rows(60, 37, seed=3)
    vectors[5] *= 1e-20  # tiny: the squares underflow toward subnormals
    vectors[6] *= 1e18  # huge: the squares overflow to inf, the scale is 0
    got = normalise(vectors)
    for i, vector in enumerate(vectors):
        want = to_blob_scalar(vector)
        assert got[i].view(np.uint32).tolist() == want.view(np.uint32).tolist(), i
    assert got.dtype == np.float32
    assert got.flags.c_contiguous
    assert got.shape == vectors.shape


def test_normalise_keeps_a_zero_or_nan_vector_as_kimun_does() -> None:
    zero = np.zeros(5, dtype=np.float32)
    assert normalise(zero).tolist() == [0.0] * 5
    nan = np.array([np.nan, 1.0], dtype=np.float32)  # norm NaN: "norm > 0" is false, scale 1
    out = normalise(nan)
    assert math.isnan(out[0])
    assert out[1] == 1.0


def test_normalise_takes_one_vector_or_a_matrix_only() -> None:
    assert normalise([3.0, 4.0]).shape == (2,)
    assert normalise(np.zeros((0, 4))).shape == (0, 4)
    with pytest.raises(UsageError, match="3-d"):
        normalise(np.zeros((2, 2, 2)))


@given(
    st.lists(
        st.lists(st.floats(-1e6, 1e6, width=32), min_size=3, max_size=3), min_size=1, max_size=8
    )
)
def test_normalise_equals_the_testing_writers_cumsum_normalisation(rows: list[list[float]]) -> None:
    vectors = np.asarray(rows, dtype=np.float32)
    assert normalise(vectors).view(np.uint32).tolist() == (
        kimun_normalise(vectors).view(np.uint32).tolist()
    )


# -- exact_top_k: the done-when -----------------------------------------------------


@pytest.fixture(scope="module")
def big_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, np.ndarray]:
    """A kimun-schema store of 6,000 384-d chunks written by the testing writer."""
    folder = tmp_path_factory.mktemp("big")
    rows, vectors = random_store_rows(6000, 384, seed=11)
    write_kimun_sqlite(folder, {"vault": (rows, vectors)}, fingerprint="fastembed:x:384")
    return folder, vectors


def test_a_kimun_store_is_searched_with_the_brute_force_top_80(
    big_store: tuple[Path, np.ndarray],
) -> None:
    folder, vectors = big_store
    vault = KimunStore(folder).load("vault")
    rng = np.random.default_rng(5)
    for query in [vectors[17], vectors[4242] * 3, rng.standard_normal(384).astype(np.float32)]:
        assert_matches_brute_force(vault.matrix, query)


def test_the_top_80_breaks_ties_by_row_as_the_brute_force_does(tmp_path: Path) -> None:
    rows, vectors = random_store_rows(400, 64, seed=2)
    base = vectors[0].copy()
    for i in range(3, 400, 7):  # equal rows and power-of-two multiples: equal once normalised
        vectors[i] = base * 2.0 ** (i % 5 - 2)
    write_kimun_sqlite(tmp_path, {"v": (rows, vectors)})
    matrix = KimunStore(tmp_path).load("v").matrix
    rows_, scores = exact_top_k(matrix, base, 80)
    tied = [i for i in range(400) if i == 0 or (i >= 3 and (i - 3) % 7 == 0)]
    assert rows_[: len(tied)].tolist() == tied  # all tied at the top, lower row first
    assert len(set(scores[: len(tied)].tolist())) == 1
    assert_matches_brute_force(matrix, base)
    assert_matches_brute_force(matrix, -base)  # the tied rows are now all last


def test_zero_vectors_score_zero_and_a_zero_query_ranks_by_row(tmp_path: Path) -> None:
    rows, vectors = random_store_rows(300, 16, seed=4)
    vectors[::3] = 0.0
    write_kimun_sqlite(tmp_path, {"v": (rows, vectors)})
    matrix = KimunStore(tmp_path).load("v").matrix
    assert not matrix[::3].any()  # stored as is, as kimun does
    rows_, scores = exact_top_k(matrix, np.zeros(16), 80)
    assert rows_.tolist() == list(range(80))
    assert not scores.any()
    assert_matches_brute_force(matrix, np.zeros(16))
    assert_matches_brute_force(matrix, vectors[1])


@given(
    pool=st.lists(
        st.lists(st.integers(-3, 3).map(float), min_size=4, max_size=4), min_size=1, max_size=5
    ),
    picks=st.lists(st.integers(0, 4), min_size=1, max_size=60),
    query=st.lists(st.integers(-3, 3).map(float), min_size=4, max_size=4),
    k=st.integers(0, 70),
)
def test_exact_top_k_equals_the_brute_force_on_rows_full_of_ties(
    pool: list[list[float]], picks: list[int], query: list[float], k: int
) -> None:
    matrix = normalise(np.asarray([pool[p % len(pool)] for p in picks], dtype=np.float32))
    rows, scores = exact_top_k(matrix, query, k)
    ref_rows, ref_scores = brute_force(matrix, query, k)
    assert rows.tolist() == ref_rows
    np.testing.assert_allclose(scores, ref_scores, rtol=0, atol=1e-6)


@given(
    pool=st.lists(
        st.lists(st.integers(-3, 3).map(float), min_size=4, max_size=4), min_size=1, max_size=5
    ),
    picks=st.lists(st.integers(0, 4), min_size=1, max_size=60),
    queries=st.lists(
        st.lists(st.integers(-3, 3).map(float), min_size=4, max_size=4), min_size=0, max_size=6
    ),
    k=st.integers(0, 70),
)
def test_many_queries_at_once_equal_one_at_a_time_bit_for_bit(
    pool: list[list[float]], picks: list[int], queries: list[list[float]], k: int
) -> None:
    matrix = normalise(np.asarray([pool[p % len(pool)] for p in picks], dtype=np.float32))
    many = exact_top_k_many(matrix, np.asarray(queries, dtype=np.float32).reshape(-1, 4), k)
    assert len(many) == len(queries)
    for (rows, scores), query in zip(many, queries, strict=True):
        one_rows, one_scores = exact_top_k(matrix, query, k)
        assert rows.tolist() == one_rows.tolist()
        assert scores.tobytes() == one_scores.tobytes()


def test_many_queries_over_many_rows_equal_one_at_a_time_bit_for_bit() -> None:
    """Real widths and blocks: 3,000 x 384 rows, 300 queries (two blocks of the product)."""
    rng = np.random.default_rng(7)
    matrix = normalise(rng.standard_normal((3_000, 384)).astype(np.float32))
    queries = rng.standard_normal((300, 384)).astype(np.float32)
    queries[5] = matrix[17] * 3  # a query equal to a row, scaled
    queries[6] = 0.0  # a zero query: every score 0, rows in order
    for (rows, scores), query in zip(exact_top_k_many(matrix, queries, 80), queries, strict=True):
        one_rows, one_scores = exact_top_k(matrix, query, 80)
        assert rows.tolist() == one_rows.tolist()
        assert scores.tobytes() == one_scores.tobytes()


def test_many_queries_refuse_another_dimension_or_shape() -> None:
    with pytest.raises(DimensionError) as err:
        exact_top_k_many(np.zeros((3, 4), np.float32), np.ones((2, 5)))
    assert (err.value.expected, err.value.actual) == (4, 5)
    with pytest.raises(UsageError, match="one query per row"):
        exact_top_k_many(np.zeros((3, 4), np.float32), np.ones(4))


def test_exact_top_k_puts_nan_rows_last_and_returns_at_most_n() -> None:
    matrix = normalise(np.array([[1.0, 0.0], [np.nan, 0.0], [0.0, 1.0]], dtype=np.float32))
    rows, scores = exact_top_k(matrix, [1.0, 1.0], k=10)
    assert rows.tolist() == [0, 2, 1]
    assert math.isnan(scores[2])
    assert scores[0] == scores[1]
    assert exact_top_k(matrix, [1.0, 1.0], k=0)[0].tolist() == []
    assert exact_top_k(np.zeros((0, 2), np.float32), [1.0, 0.0])[0].dtype == np.int64


def test_exact_top_k_refuses_a_query_of_another_dimension() -> None:
    with pytest.raises(DimensionError) as err:
        exact_top_k(np.zeros((3, 4), np.float32), np.ones(5))
    assert (err.value.expected, err.value.actual) == (4, 5)
    with pytest.raises(UsageError, match="k must be"):
        exact_top_k(np.zeros((3, 4), np.float32), np.ones(4), k=-1)


def _kimun_score(row: np.ndarray, query: np.ndarray) -> np.float32:
    """vecsqlite.rs ``score``, one product and one float32 addition at a time."""
    total = np.float32(0.0)
    for a, b in zip(row.tolist(), query.tolist(), strict=True):
        total = np.float32(total + np.float32(np.float32(a) * np.float32(b)))
    return total


def test_exact_top_k_scores_are_kimuns_bit_for_bit() -> None:
    # BLAS sums a row in its own order; kimun sums left to right in float32. The
    # reported scores are kimun's exactly, not merely within 1e-6.
    rng = np.random.default_rng(11)
    matrix = normalise(rng.standard_normal((3000, 96)).astype(np.float32))
    query = rng.standard_normal(96).astype(np.float32)
    rows, scores = exact_top_k(matrix, query, k=80)
    q = normalise(query)
    reference = np.array([_kimun_score(row, q) for row in matrix], dtype=np.float32)
    expected = sorted(range(len(reference)), key=lambda i: (-reference[i], i))[:80]
    assert rows.tolist() == expected
    assert scores.tolist() == reference[expected].astype(np.float64).tolist()
