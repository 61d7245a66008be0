"""The reranker stage: kimun's score sanitising, validation and fallback."""

from __future__ import annotations

import math
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from askkit.errors import SchemaError
from askkit.ranking.pool import pool_of
from askkit.ranking.rerank import (
    rerank,
    sanitize_scores,
    sigmoid,
    total_order_key,
    validate_scored,
)

#: kimun's commit these tests pin (server/src/reranker/mod.rs, reranker/http.rs, lib.rs).
KIMUN_COMMIT = "f28bdd5426c7c22f67601f62f588e958c35e43e1"


# --------------------------------------------------------------------------- kimun's tests
# reranker/http.rs: validate_scored's errors and order, as its HTTP tests see them (the
# wire parsing itself is askkit.retrieve's). The pipeline tests of lib.rs that rerank
# (sigmoid, NaN, malformed, failing) are in test_surfaces.py: they assert on search/answer.


def test_cohere_jina_wire_sends_bearer_and_reorders_by_score() -> None:
    scored = [(0, 0.1), (2, 0.9), (1, 0.5)]
    assert validate_scored(scored, 3) == [(2, 0.9), (1, 0.5), (0, 0.1)]


def test_voyage_wire_parses_data_key_without_model_or_auth() -> None:
    assert validate_scored([(1, 0.8), (0, 0.2)], 2) == [(1, 0.8), (0, 0.2)]


def test_out_of_range_index_is_an_error() -> None:
    with pytest.raises(SchemaError) as info:
        validate_scored([(7, 0.9)], 1)
    assert "index 7" in str(info.value)


def test_duplicate_index_is_an_error() -> None:
    with pytest.raises(SchemaError) as info:
        validate_scored([(0, 0.9), (0, 0.8)], 2)
    assert "more than once" in str(info.value)


def test_short_response_is_an_error() -> None:
    with pytest.raises(SchemaError) as info:
        validate_scored([(0, 0.9)], 2)
    assert "1 scores for a 2-document request" in str(info.value)


# --------------------------------------------------------------------------- sigmoid


def test_sigmoid_is_kimuns_formula_and_survives_overflow() -> None:
    assert sigmoid(5.0) == 1.0 / (1.0 + math.exp(-5.0))
    assert sigmoid(-1000.0) == 0.0
    assert sigmoid(1000.0) == 1.0
    assert sigmoid(-0.0) == 0.5


# --------------------------------------------------------------------------- sanitising


@pytest.mark.parametrize(
    ("scores", "expected", "violated"),
    [
        ([], [], False),
        ([0.0, 1.0, 0.5], [0.0, 1.0, 0.5], False),
        ([-0.0], [-0.0], False),  # -0.0 is inside 0..=1 for Rust's contains
        ([5.0, 4.0, 3.0], [sigmoid(5.0), sigmoid(4.0), sigmoid(3.0)], True),
        ([0.2, 1.5], [sigmoid(0.2), sigmoid(1.5)], True),  # the whole batch, not the outlier
        ([math.nan, 0.5], [0.0, sigmoid(0.5)], True),
        ([math.inf, -math.inf], [0.0, 0.0], True),
        ([-3.0], [sigmoid(-3.0)], True),
    ],
)
def test_sanitize_scores(scores: list[float], expected: list[float], violated: bool) -> None:
    out, flag = sanitize_scores(list(enumerate(scores)))
    assert flag is violated
    assert [s for _, s in out] == expected
    assert [i for i, _ in out] == list(range(len(scores)))


# --------------------------------------------------------------------------- validation


def _bits(x: float) -> int:
    return int(struct.unpack("<Q", struct.pack("<d", x))[0])


def test_total_order_key_orders_like_rusts_total_cmp() -> None:
    neg_nan = struct.unpack("<d", struct.pack("<Q", _bits(math.nan) | (1 << 63)))[0]
    ladder = [neg_nan, -math.inf, -1.0, -5e-324, -0.0, 0.0, 5e-324, 1.0, math.inf, math.nan]
    keys = [total_order_key(x) for x in ladder]
    assert keys == sorted(keys)
    assert len(set(keys)) == len(keys)


def test_the_sort_is_stable_and_ranks_positive_zero_above_negative_zero() -> None:
    scored = [(0, 0.5), (1, -0.0), (2, 0.5), (3, 0.0), (4, 0.5)]
    assert [i for i, _ in validate_scored(scored, 5)] == [0, 2, 4, 3, 1]


@pytest.mark.parametrize(
    ("scored", "documents", "message"),
    [
        ([], 1, "rerank returned 0 scores for a 1-document request"),
        ([(0, 0.1), (1, 0.2)], 1, "rerank returned 2 scores for a 1-document request"),
        ([(-1, 0.5)], 1, "rerank returned index -1 for a 1-document request"),
        ([(1, 0.5), (1, 0.4)], 2, "rerank returned index 1 more than once"),
    ],
)
def test_malformed_answers_get_kimuns_message(
    scored: list[tuple[int, float]], documents: int, message: str
) -> None:
    with pytest.raises(SchemaError) as info:
        validate_scored(scored, documents)
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("scored", "field"), [([(True, 0.5)], "[0].index"), ([(0.0, 0.5)], "[0].index")]
)
def test_an_index_must_be_a_whole_number(scored: list[tuple[object, float]], field: str) -> None:
    with pytest.raises(SchemaError) as info:
        validate_scored(scored, 1)  # type: ignore[arg-type]
    assert info.value.field == field


def test_an_empty_pool_validates_empty() -> None:
    assert validate_scored([], 0) == []
    out = rerank([], [])
    assert out.pool == ()
    assert out.reranked


# --------------------------------------------------------------------------- rerank


def test_rerank_reorders_and_takes_the_rerankers_scores() -> None:
    pool = pool_of([0.9, 0.8, 0.7])
    out = rerank(pool, [(0, 0.2), (1, 0.7), (2, 0.4)])
    assert out.reranked
    assert not out.sanitised
    assert [(c.path, c.similarity_score) for c in out.pool] == [
        ("/n1.md", 0.7),
        ("/n2.md", 0.4),
        ("/n0.md", 0.2),
    ]


def test_rerank_sanitises_before_validating() -> None:
    out = rerank(pool_of([0.7, 0.7]), [(1, math.nan), (0, 3.0)])
    assert out.sanitised
    assert out.reranked
    assert [(c.path, c.similarity_score) for c in out.pool] == [
        ("/n0.md", sigmoid(3.0)),
        ("/n1.md", 0.0),
    ]


@pytest.mark.parametrize(
    ("scored", "reason"),
    [
        (None, "the reranker call failed; kimun keeps the vector order"),
        ([(0, 0.9)], "rerank returned 1 scores for a 2-document request; kimun keeps the"),
        ([(0, 0.5), (0, 0.5)], "rerank returned index 0 more than once; kimun keeps"),
        ([(0, 0.5), (2, 0.5)], "rerank returned index 2 for a 2-document request; kimun"),
        ([(0, "high"), (1, 0.5)], "could not convert string to float"),
        ([(0,), (1, 0.5)], "not enough values to unpack"),
    ],
)
def test_a_failed_or_malformed_rerank_keeps_the_vector_order_and_says_why(
    scored: list[tuple[int, float]] | None, reason: str
) -> None:
    pool = pool_of([0.9, 0.8])
    out = rerank(pool, scored)
    assert not out.reranked
    assert out.pool == tuple(pool)
    assert out.fallback_reason is not None
    assert out.fallback_reason.startswith(reason)


@given(
    st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), max_size=12),
    st.randoms(use_true_random=False),
)
def test_a_valid_answer_is_a_permutation_with_sane_scores_best_first(
    scores: list[float], rnd: object
) -> None:
    pool = pool_of([0.5] * len(scores))
    scored = list(enumerate(scores))
    rnd.shuffle(scored)  # type: ignore[attr-defined]
    out = rerank(pool, scored)
    assert out.reranked
    assert sorted(c.path for c in out.pool) == sorted(c.path for c in pool)
    ranked = [c.similarity_score for c in out.pool]
    assert all(math.isfinite(s) and 0.0 <= s <= 1.0 for s in ranked)
    assert [total_order_key(s) for s in ranked] == sorted(
        (total_order_key(s) for s in ranked), reverse=True
    )
