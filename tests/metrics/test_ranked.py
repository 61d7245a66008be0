"""askkit.metrics.ranked: the integer primitives both scoring paths rank, de-duplicate
and grade with, and Arrow columns taken and encoded without joining their chunks."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from askkit.metrics.ranked import (
    argsort_keys,
    block_order,
    dictionary_codes,
    fresh,
    group_rank,
    lookup_grades,
    rank_run,
    take,
)


def test_argsort_keys_past_63_bits_sorts_key_by_key() -> None:
    big = 2**40
    first = np.array([1, 0, 1, 0], dtype=np.int64)
    second = np.array([5, big - 1, 3, 0], dtype=np.int64)
    third = np.array([2, 1, 0, 3], dtype=np.int64)
    keys = [(first, 2), (second, big), (third, big)]  # 1 + 40 + 40 bits: no packing
    assert argsort_keys(keys).tolist() == [3, 1, 2, 0]
    assert argsort_keys(keys[:2]).tolist() == [3, 1, 2, 0]  # packed, same order


def test_group_rank_writes_into_a_given_array() -> None:
    out = np.full(4, -7, dtype=np.int64)
    assert group_rank(np.array([3, 3, 0, 0]), out=out) is out
    assert out.tolist() == [1, 2, 1, 2]
    assert group_rank(np.empty(0, dtype=np.int64)).tolist() == []


@pytest.mark.parametrize("ties", ["trec", "input"])
def test_rank_run_sorts_an_ungrouped_run_and_drops_repeats(ties: str) -> None:
    query = np.array([1, 0, 1, 0, 1], dtype=np.int64)
    doc = np.array([4, 2, 4, 3, 5], dtype=np.int64)
    score = np.array([1.0, 2.0, 3.0, 2.0, np.nan])
    order = np.array([1, 2, 2, 1, 3], dtype=np.int64)
    r = rank_run(query, doc, score, order, ties=ties)  # type: ignore[arg-type]
    assert r.query.tolist() == [0, 0, 1, 1]
    if ties == "trec":  # score descending, then document code descending; NaN last
        assert r.doc.tolist() == [3, 2, 4, 5]
        assert r.rows.tolist() == [3, 1, 2, 4]  # doc 4's best chunk is row 2
    else:  # the given order
        assert r.doc.tolist() == [3, 2, 4, 5]
        assert r.rows.tolist() == [3, 1, 0, 4]  # doc 4's first chunk in that order is row 0
    assert r.rank.tolist() == [1, 2, 1, 2]
    assert r.duplicates == 1


def test_lookup_grades_only_for_judged_pairs() -> None:
    grade, judged = lookup_grades(
        4,
        np.array([0, 0, 1, 1]),
        np.array([1, 2, 1, 3]),
        qrels_query=np.array([0, 1]),
        qrels_doc=np.array([1, 3]),
        qrels_grade=np.array([2, -1]),
    )
    assert grade.tolist() == [2, 0, 0, -1]  # doc 1 is judged for query 0 only
    assert judged.tolist() == [True, False, False, True]


def test_block_order_keeps_rows_within_their_block() -> None:
    query = np.array([2, 2, 2, 0, 1, 1], dtype=np.int64)
    assert block_order(query).tolist() == [3, 4, 5, 0, 1, 2]
    ascending = np.array([0, 0, 1, 3], dtype=np.int64)
    assert block_order(ascending) is None  # already in order


@pytest.mark.parametrize("n", [0, 3, (4 << 20) // 8, (4 << 20) // 8 + 5])
def test_fresh_arrays_are_writable_and_sized_under_and_over_the_huge_page_size(n: int) -> None:
    """Long outputs are mapped in small pages; either way they are plain writable arrays."""
    for dtype in (np.int64, np.float64, bool):
        arr = fresh(n, dtype)
        assert arr.shape == (n,)
        assert arr.dtype == np.dtype(dtype)
        assert arr.flags.writeable
        arr[:] = 1
        assert int(arr.sum()) == n


def test_encode_shares_one_dictionary_across_chunks() -> None:
    chunks = pa.chunked_array([["x", "y"], [], ["y", "z"]], pa.large_string())
    codes, dictionary = dictionary_codes(chunks)
    assert codes.tolist() == [0, 1, 1, 2]
    assert dictionary.to_pylist() == ["x", "y", "z"]
    codes, dictionary = dictionary_codes(pa.chunked_array([], pa.large_string()))
    assert (len(codes), len(dictionary)) == (0, 0)


@given(
    st.lists(st.lists(st.text(max_size=4), max_size=5), min_size=1, max_size=5),
    st.data(),
)
def test_take_from_chunks_equals_arrows_take(chunks: list[list[str]], data: Any) -> None:
    """Rows in chunk order are taken chunk by chunk, others from their span; either
    way the values are Arrow's own ``take``."""
    chunked = pa.chunked_array([pa.array(c, pa.large_string()) for c in chunks])
    n = len(chunked)
    rows = np.array(
        data.draw(st.lists(st.integers(0, n - 1), max_size=12) if n else st.just([])),
        dtype=np.int64,
    )
    if data.draw(st.booleans()):
        rows = np.sort(rows)  # chunk order: the chunk-by-chunk branch
    got = take(chunked, rows)
    assert got.to_pylist() == chunked.take(pa.array(rows, pa.int64())).to_pylist()
    assert got.type == chunked.type


@pytest.mark.parametrize("row", [-1, 5])
def test_take_from_chunks_refuses_rows_out_of_range(row: int) -> None:
    """A row past either end is an error, as in Arrow's take, never a row left out."""
    chunked = pa.chunked_array([pa.array(["a", "b"]), pa.array(["c", "d", "e"])])
    with pytest.raises(IndexError, match="out of range for 5 values"):
        take(chunked, np.array([0, row], dtype=np.int64))
