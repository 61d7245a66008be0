"""How the HTTP embedders read an answer: as JSON reads it, under a memory bound.

:meth:`askkit.dense._http.JsonEndpoint.post_vectors` (through
:func:`askkit._http.reading.read_vectors`) leaves each array of numbers in the
body and parses the rest as JSON. Whatever the body, it reads
what :func:`askkit.wire.load_json` reads (the arrays decoded to float32), or
raises a :class:`~askkit.errors.ProtocolError` (property tests). A vector
answer may be as large as the body limit (64 MiB); parsed the usual way, as
Python lists of floats, it takes about 13 times its size. askkit checks its
vector count and widths before it decodes a number, and decodes the numbers
straight into one float32 matrix. The answers come over real HTTP from
:class:`~askkit.testing.embed_servers.EmbedTestServer`, built before
:mod:`tracemalloc` starts, so only the client's memory is counted (numpy
reports its arrays to tracemalloc).
"""

from __future__ import annotations

import json
import math
import sys
import tracemalloc
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from askkit._http.reading import Numbers, VectorAnswer
from askkit.dense._http import JsonEndpoint
from askkit.dense.embedders import OllamaEmbedder, OpenAIEmbedder
from askkit.errors import DimensionError, ProtocolError, SchemaError
from askkit.testing.embed_servers import EmbedTestServer
from askkit.wire import load_json

TEXTS = [f"text {i}" for i in range(100)]
BODY_SIZE = 24 * 2**20  # about: a quarter of the way from kimun's batches to the limit


def ollama_body(rows: int, width: int, number: bytes, *, last_width: int | None = None) -> bytes:
    row = b"[" + b",".join([number] * width) + b"]"
    rows_json = [row] * rows
    if last_width is not None:
        rows_json[-1] = b"[" + b",".join([number] * last_width) + b"]"
    return b'{"model": "m", "embeddings": [' + b",".join(rows_json) + b'], "total_duration": 7}'


def openai_body(rows: int, width: int, number: bytes) -> bytes:
    vector = b"[" + b", ".join([number] * width) + b"]"
    items = [
        b'{"object": "embedding", "index": %d, "embedding": %b}' % (i, vector)
        for i in reversed(range(rows))
    ]
    return b'{"object": "list", "data": [' + b",".join(items) + b'], "model": "m"}'


def peak_while(call: Callable[[], object]) -> tuple[object, int]:
    """What ``call()`` returns (or raises) and the most memory it held at once."""
    tracemalloc.start()
    try:
        try:
            result = call()
        except Exception as exc:  # the refusals are what some tests measure
            result = exc
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(
    ("kind", "number"), [("ollama", b"0.5"), ("ollama", b"0"), ("openai", b"-0.25")]
)
def test_a_large_vector_answer_is_decoded_in_less_than_4x_its_body(
    kind: str, number: bytes
) -> None:
    width = BODY_SIZE // (len(TEXTS) * (len(number) + 1))
    body = (ollama_body if kind == "ollama" else openai_body)(len(TEXTS), width, number)
    with EmbedTestServer() as server:
        server.fail("body", body=body)
        embedder = (
            OllamaEmbedder(server.url, "m", progress=False)
            if kind == "ollama"
            else OpenAIEmbedder(server.url, "m", progress=False)
        )
        vectors, peak = peak_while(lambda: embedder.embed_texts(TEXTS))
    assert isinstance(vectors, np.ndarray), vectors
    assert vectors.shape == (len(TEXTS), width)
    assert vectors.dtype == np.float32
    assert (vectors == np.float32(float(number))).all()
    assert peak < 4 * len(body), f"peak {peak:,} bytes for a {len(body):,}-byte body"


@pytest.mark.parametrize(
    ("rows", "last_width", "error", "match"),
    [
        (len(TEXTS) + 1, None, ProtocolError, "101 vectors for 100 texts"),
        (len(TEXTS), 3, DimensionError, "different widths"),
    ],
    ids=["one-vector-too-many", "a-short-vector"],
)
def test_a_wrong_count_or_width_is_refused_before_a_number_is_decoded(
    rows: int, last_width: int | None, error: type[Exception], match: str
) -> None:
    width = BODY_SIZE // (rows * 4)
    body = ollama_body(rows, width, b"0.5", last_width=last_width)
    with EmbedTestServer() as server:
        server.fail("body", body=body)
        embedder = OllamaEmbedder(server.url, "m", progress=False)
        refused, peak = peak_while(lambda: embedder.embed_texts(TEXTS))
    assert isinstance(refused, error), refused
    assert match in str(refused)
    assert peak < 1.5 * len(body), f"peak {peak:,} bytes for a {len(body):,}-byte body"


# -- whatever the body: what JSON reads, or a ProtocolError --------------------------------------


@pytest.fixture(scope="module")
def endpoint() -> Iterator[tuple[EmbedTestServer, JsonEndpoint]]:
    with EmbedTestServer() as server:
        endpoint = JsonEndpoint(server.url, what="the test service")
        yield server, endpoint
        endpoint.close()


def post(pair: tuple[EmbedTestServer, JsonEndpoint], body: bytes) -> VectorAnswer:
    server, endpoint = pair
    server.clear_faults()
    server.clear_requests()
    server.fail("body", body=body)
    return endpoint.post_vectors("/api/embed", {"model": "m", "input": []})


def decoded(answer: VectorAnswer) -> Any:
    """The answer with each :class:`Numbers` decoded (float32 values, as Python floats)."""

    def walk(value: Any) -> Any:
        if isinstance(value, Numbers):
            return answer.matrix([value])[0].tolist()
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value

    return walk(answer.value)


def as_read(value: Any) -> Any:
    """``value`` as post_vectors reads it: each non-empty array of numbers as float32."""
    if isinstance(value, list):
        if value and all(type(v) in {int, float} for v in value):
            with np.errstate(over="ignore"):  # beyond float32: infinite, as read
                return [float(np.float32(float(v))) for v in value]
        return [as_read(v) for v in value]
    if isinstance(value, dict):
        return {k: as_read(v) for k, v in value.items()}
    return value


def refused(value: Any) -> bool:
    """Whether ``value`` holds what kimun's parser refuses (NaN, infinities, huge numbers)."""
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return abs(value) > sys.float_info.max
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass").decode("utf-8", "ignore") != value
    if isinstance(value, list):
        return any(refused(v) for v in value)
    if isinstance(value, dict):
        return any(refused(k) or refused(v) for k, v in value.items())
    return False


text = st.text(
    st.one_of(
        st.sampled_from('[]{}",:\\ 0123456789.-eE\n\t\u00e9\u2028'),
        st.characters(exclude_categories=["Cs"]),
    ),
    max_size=8,
)
numbers = st.one_of(
    st.integers(-(10**30), 10**30),
    st.floats(allow_nan=False, allow_infinity=False),
)
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), numbers, text),
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.lists(numbers, min_size=1, max_size=8),  # an array of numbers: a vector
        st.dictionaries(text, inner, max_size=5),
    ),
    max_leaves=30,
)


@given(
    value=json_values,
    indent=st.sampled_from([None, 0, 2, "\t"]),
    ascii_only=st.booleans(),
    encoding=st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "utf-32"]),
)
@example(value=[[1, 2], "[3, 4]", {"[5]": [6.5]}], indent=None, ascii_only=False, encoding="utf-8")
def test_an_answer_reads_as_json_reads_it(
    endpoint: tuple[EmbedTestServer, JsonEndpoint],
    value: Any,
    indent: int | str | None,
    ascii_only: bool,
    encoding: str,
) -> None:
    body = json.dumps(value, indent=indent, ensure_ascii=ascii_only).encode(encoding)
    answer = post(endpoint, body)
    assert decoded(answer) == as_read(load_json(body))


@given(
    body=st.one_of(
        st.binary(max_size=64),
        st.builds(
            lambda value, cut, junk: json.dumps(value).encode()[:cut] + junk,
            json_values,
            st.integers(0, 200),
            st.sampled_from([b"", b"]", b"NaN", b"1e400", b'"\\ud800"', b"[1,", b"\xe9", b"}"]),
        ),
    )
)
@example(body=b"{[1, 2]: 3}")
@example(body=b'{"a": [1, 2], "b": -Infinity}')
@example(body=b'["open')
def test_any_body_is_read_as_json_reads_it_or_refused_with_a_protocol_error(
    endpoint: tuple[EmbedTestServer, JsonEndpoint], body: bytes
) -> None:
    try:
        expected = load_json(body)
    except SchemaError:
        expected = ProtocolError
    if expected is not ProtocolError and refused(expected):
        expected = ProtocolError
    try:
        got = decoded(post(endpoint, body))
    except ProtocolError:
        got = ProtocolError
    assert got == (expected if expected is ProtocolError else as_read(expected))
