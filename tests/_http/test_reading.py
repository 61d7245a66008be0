"""A body read as JSON: as load_json reads it, strictly as kimun's parser does, or with its
arrays of numbers left in the body (the server round trips are in
tests/dense/test_vector_answers.py)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from askkit._http.reading import (
    MAX_SKELETON_BYTES,
    Numbers,
    Unreadable,
    VectorAnswer,
    read_json,
    read_strict_json,
    read_vectors,
)
from askkit.errors import ProtocolError

DIGITS_400 = b"1" + b"0" * 399
INFINITY = "Infinity (or a number beyond float64's range, such as 1e400)"


def test_read_json_reads_what_load_json_reads() -> None:
    assert read_json(b'{"a": [1, 2.5, "x"]}') == {"a": [1, 2.5, "x"]}
    assert read_json(b'{"a": NaN}')["a"] != 0  # lenient: NaN is Python's NaN


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b'{"chunks": [', "not valid JSON"),
        (b'{"a": "caf\xe9"}', "not UTF-8"),
        (b"[" * 100_000 + b"]" * 100_000, "deep"),
    ],
)
def test_read_json_refuses_what_is_not_json(body: bytes, why: str) -> None:
    with pytest.raises(Unreadable) as info:
        read_json(body)
    assert info.value.kind == "not_json"
    assert why in info.value.why
    assert not info.value.why.startswith("line ")  # a body is one document


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b'{"a": NaN}', "NaN at a"),
        (b'{"a": [0, -Infinity]}', f"-{INFINITY} at a[1]"),
        (b'{"a": {"b": 1e400}}', f"{INFINITY} at a.b"),
        (
            b'{"n": ' + DIGITS_400 + b"}",
            "a number beyond float64's range (a 400-digit integer) at n",
        ),
        (b'["\\ud800"]', "a string holding a lone surrogate (such as \\ud800) at [0]"),
        (b'{"\\udc00": 1}', "a string holding a lone surrogate (such as \\ud800) as an object key"),
        (b'{"data": [{"index": 0}, {"x": NaN}]}', "NaN at data[1].x"),
    ],
)
def test_read_strict_json_refuses_what_kimuns_parser_refuses(body: bytes, why: str) -> None:
    with pytest.raises(Unreadable) as info:
        read_strict_json(body)
    assert info.value.kind == "refused"
    assert info.value.why == why
    with pytest.raises(Unreadable, match=r"at|key") as vectors:
        read_vectors(body)
    assert vectors.value.kind == "refused"


def test_read_strict_json_takes_ordinary_json() -> None:
    assert read_strict_json(b'{"results": [{"index": 0, "score": 0.5}]}') == {
        "results": [{"index": 0, "score": 0.5}]
    }


def test_read_vectors_leaves_every_array_of_numbers_in_the_body() -> None:
    body = b'{"embeddings": [[0.5, -1e2], [3]], "mixed": [1, "a"], "empty": [], "s": "[1, 2]"}'
    value, data = read_vectors(body)
    assert data is body
    first, second = value["embeddings"]
    assert (first.count, second.count) == (2, 1)
    assert body[first.start : first.stop] == b"0.5, -1e2"
    assert (value["mixed"], value["empty"], value["s"]) == ([1, "a"], [], "[1, 2]")
    assert str(first) == "[2 numbers]"
    assert str(second) == "[1 number]"
    matrix = VectorAnswer(value, data, ProtocolError).matrix([first])
    assert matrix.dtype == np.float32
    assert matrix.tolist() == [[0.5, -100.0]]


def test_read_vectors_reads_utf16_as_its_utf8_transcoding() -> None:
    text = '{"embeddings": [[1, 2]], "model": "modèle"}'
    value, data = read_vectors(text.encode("utf-16"))
    assert bytes(data) == text.encode("utf-8")
    assert value["model"] == "modèle"
    assert VectorAnswer(value, data, ProtocolError).matrix(value["embeddings"]).tolist() == [
        [1.0, 2.0]
    ]


@pytest.mark.parametrize(
    ("body", "kind", "why"),
    [
        (b'{"a": "open', "not_json", "a string opened at byte 6 never closes"),
        (b"{[1, 2]: 3}", "not_json", "an array where an object key belongs"),
        (b'{"a": [1, 2]', "not_json", "not valid JSON"),
        (b'{"pad": "' + b"p" * MAX_SKELETON_BYTES + b'"}', "bulky", "more than 1,048,576 bytes"),
    ],
)
def test_read_vectors_refuses_a_body_it_cannot_read(body: bytes, kind: str, why: str) -> None:
    with pytest.raises(Unreadable) as info:
        read_vectors(body)
    assert info.value.kind == kind
    assert why in info.value.why


def test_the_numbers_of_a_vector_answer_may_fill_the_whole_body() -> None:
    row = b"[" + b",".join([b"0.25"] * 1000) + b"]"
    body = b'{"embeddings": [' + b",".join([row] * 2000) + b"]}"  # 10 MB, a tiny skeleton
    value, data = read_vectors(body)
    matrix = VectorAnswer(value, data, ProtocolError).matrix(value["embeddings"])
    assert matrix.shape == (2000, 1000)
    assert (matrix == 0.25).all()


def test_a_matrix_that_disagrees_with_the_scan_is_the_callers_error() -> None:
    def error(why: str) -> ProtocolError:
        return ProtocolError(why)

    body = b"[1, 2, 3]"
    with pytest.raises(ProtocolError, match="an array of 4 numbers read as 3"):
        VectorAnswer(None, body, error).matrix([Numbers(1, 8, 4)])


numbers = st.one_of(
    st.integers(-(10**30), 10**30), st.floats(allow_nan=False, allow_infinity=False)
)
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), numbers, st.text(max_size=6)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(numbers, min_size=1, max_size=6),
        st.dictionaries(st.text(max_size=6), inner, max_size=4),
    ),
    max_leaves=20,
)


def decoded(value: Any, data: bytes | bytearray) -> Any:
    answer = VectorAnswer(value, data, ProtocolError)
    if isinstance(value, Numbers):
        return answer.matrix([value])[0].tolist()
    if isinstance(value, dict):
        return {k: decoded(v, data) for k, v in value.items()}
    if isinstance(value, list):
        return [decoded(v, data) for v in value]
    return value


def as_float32(value: Any) -> Any:
    if isinstance(value, list):
        if value and all(type(v) in {int, float} for v in value):
            with np.errstate(over="ignore"):
                return [float(np.float32(float(v))) for v in value]
        return [as_float32(v) for v in value]
    if isinstance(value, dict):
        return {k: as_float32(v) for k, v in value.items()}
    return value


@given(value=json_values, indent=st.sampled_from([None, 1]), ascii_only=st.booleans())
def test_read_vectors_reads_what_json_reads(
    value: Any, indent: int | None, ascii_only: bool
) -> None:
    body = json.dumps(value, indent=indent, ensure_ascii=ascii_only).encode()
    read, data = read_vectors(body)
    assert decoded(read, data) == as_float32(read_strict_json(body))
