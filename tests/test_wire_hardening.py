"""Hardening of kimun's wire parsing: only SchemaError comes out of ``from_dict``,
``from_json`` and :func:`askkit.wire.load_json`, whatever the payload holds.

Item 5: what used to escape as ``OverflowError`` (a 400-digit number),
``RecursionError`` (JSON nested 100k deep), ``UnicodeDecodeError`` (bytes that
are not UTF-8) or, later, ``UnicodeEncodeError`` (a lone surrogate escape) is a
:class:`SchemaError` naming the field and the value. A lone surrogate is refused:
UTF-8 cannot encode it, so kimun, which sends UTF-8, never sent it.
"""

from __future__ import annotations

import codecs
import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from askkit import AnswerResult, ChunkResult, EmbeddingsResponse, SchemaError, Turn
from askkit.wire import check_string, load_json
from tests import strategies as st_kimun

BIG = 10**400


def _chunk(**over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "path": "journal/2026-04-08.md",
        "title": "2026-04-08\x1fAfternoon",
        "date": "2026-04-08",
        "content": "Walked.",
        "hash": "abc",
        "similarity_score": 0.75,
        "ordinal": 2,
    }
    base.update(over)
    return base


def _deep(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


FROM_DICT_5 = {
    "400-digit score": (
        lambda: ChunkResult.from_dict(_chunk(similarity_score=BIG)),
        "similarity_score",
    ),
    "negative 400-digit score": (
        lambda: ChunkResult.from_dict(_chunk(similarity_score=-BIG)),
        "similarity_score",
    ),
    "400-digit query_time_ms": (
        lambda: EmbeddingsResponse.from_dict({"chunks": [], "query_time_ms": BIG}),
        "query_time_ms",
    ),
    "5000-digit ordinal": (lambda: ChunkResult.from_dict(_chunk(ordinal=10**5000)), "ordinal"),
    "title nested 100k deep": (
        lambda: ChunkResult.from_dict(_chunk(title=_deep(100_000))),
        "title",
    ),
    "chunk nested 100k deep": (
        lambda: EmbeddingsResponse.from_dict({"chunks": _deep(100_000)}),
        "chunks[0]",
    ),
    "lone surrogate path": (lambda: ChunkResult.from_dict(_chunk(path="a\ud800.md")), "path"),
    "lone surrogate title": (lambda: ChunkResult.from_dict(_chunk(title="\udfff")), "title"),
    "lone surrogate content": (lambda: ChunkResult.from_dict(_chunk(content="x\udc80")), "content"),
    "lone surrogate hash": (lambda: ChunkResult.from_dict(_chunk(hash="\ud800")), "hash"),
    "lone surrogate date": (lambda: ChunkResult.from_dict(_chunk(date="2026-04-0\ud800")), "date"),
    "lone surrogate answer": (
        lambda: AnswerResult.from_dict({"answer": "\ud800", "sources": []}),
        "answer",
    ),
    "lone surrogate in a source": (
        lambda: AnswerResult.from_dict({"answer": "a", "sources": [_chunk(title="\ud800")]}),
        "sources[0].title",
    ),
    "Turn.from_answer": (
        lambda: Turn.from_answer("q", {"answer": "a", "sources": [_chunk(similarity_score=BIG)]}),
        "sources[0].similarity_score",
    ),
}


@pytest.mark.parametrize(("call", "field"), FROM_DICT_5.values(), ids=list(FROM_DICT_5))
def test_item5_from_dict_raises_schema_error_not_raw_exceptions(call: Any, field: str) -> None:
    """Hardening item 5: from_dict (ChunkResult, EmbeddingsResponse, AnswerResult,
    and Turn.from_answer through it) refuses a number float64 cannot hold, a value
    nested 100k deep, an integer too long to print and a lone surrogate with a
    SchemaError naming the field; the error renders."""
    with pytest.raises(SchemaError) as info:
        call()
    err = info.value
    assert err.field == field
    assert str(err).startswith(f"{field}: ")
    assert isinstance(err, ValueError)


def test_item5_a_lone_surrogate_is_refused_and_a_pair_is_text() -> None:
    """Hardening item 5: the decision, documented in askkit.wire: a lone
    surrogate escape is refused (UTF-8 cannot encode it, kimun never sends one);
    an escaped surrogate pair is one ordinary character."""
    with pytest.raises(SchemaError, match=r"lone surrogate \(U\+D800 at index 1\)") as info:
        ChunkResult.from_json(json.dumps(_chunk(title="x\ud800")))
    assert info.value.field == "title"
    assert info.value.value == "x\ud800"
    pair = ChunkResult.from_json(json.dumps(_chunk(title="x\U0001f600")))
    assert pair.title == "x😀"
    assert check_string("x😀", "title") == "x😀"


FROM_JSON_5 = {
    "400-digit score": (
        json.dumps(_chunk()).replace("0.75", "1" + "0" * 400).encode(),
        "similarity_score",
        "float64 range",
    ),
    "5000-digit integer": (
        json.dumps(_chunk()).replace("0.75", "1" * 5000).encode(),
        None,
        "number too long",
    ),
    "nested 100k deep": (b"[" * 100_000 + b"]" * 100_000, None, "nested too deeply"),
    "deep unknown field": (
        json.dumps(_chunk(extra=0)).replace("0}", "[" * 100_000 + "]" * 100_000 + "}").encode(),
        None,
        "nested too deeply",
    ),
    "title not UTF-8": (
        json.dumps(_chunk(title="@")).encode().replace(b'"@"', b'"caf\xe9"'),
        "title",
        "not UTF-8",
    ),
    "encoded surrogate (CESU-8)": (
        json.dumps(_chunk(hash="@")).encode().replace(b'"@"', b'"\xed\xa0\x80"'),
        "hash",
        "not UTF-8",
    ),
    "not UTF-8 in an unknown field": (
        json.dumps(_chunk(extra=["@"])).encode().replace(b'"@"', b'"\xff"'),
        "extra[0]",
        "not UTF-8",
    ),
    "a field name not UTF-8": (
        json.dumps(_chunk(extra=0)).encode().replace(b'"extra"', b'"ex\xfftra"'),
        None,
        "a field name is not UTF-8",
    ),
    "not UTF-8 outside a string": (b'{"path": 1\xff}', None, "not UTF-8"),
    "lone surrogate escape": (
        json.dumps(_chunk(content="@")).encode().replace(b'"@"', b'"\\ud800"'),
        "content",
        "lone surrogate",
    ),
}


@pytest.mark.parametrize(("data", "field", "message"), FROM_JSON_5.values(), ids=list(FROM_JSON_5))
def test_item5_from_json_and_load_json_raise_schema_error_naming_the_field(
    data: bytes, field: str | None, message: str
) -> None:
    """Hardening item 5: JSON bytes holding a 400-digit number, 100k levels of
    nesting, an integer past Python's digit limit, bytes that are not UTF-8 (in
    a read field, an unknown one, a field name or between values) or a lone
    surrogate escape give a SchemaError naming the field when there is one, and
    the raw bytes when they are not UTF-8."""
    with pytest.raises(SchemaError, match=message) as info:
        ChunkResult.from_json(data)
    err = info.value
    assert err.field == field
    str(err)  # renders
    if "not UTF-8" in message:
        assert isinstance(err.value, bytes)
        assert err.value in data
        with pytest.raises(UnicodeDecodeError):
            err.value.decode("utf-8")


def test_item5_load_json_names_the_line_of_bad_bytes_in_a_document() -> None:
    """Hardening item 5: bytes that are not UTF-8 in a multi-line document are
    located by line, as a syntax error is."""
    text = b'{\n  "answer": "a",\n  "sources": [\n    {"title": "\xc3("}\n  ]\n}'
    with pytest.raises(SchemaError) as info:
        load_json(text, what="job.json")
    assert (info.value.line, info.value.field, info.value.value) == (
        4,
        "sources[0].title",
        b"\xc3(",
    )
    assert str(info.value).startswith("line 4: sources[0].title: not UTF-8")


@pytest.mark.parametrize(
    "encoding", ["utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le"]
)
def test_item5_load_json_still_reads_what_the_json_standard_detects(encoding: str) -> None:
    """Hardening item 5: decoding bytes strictly keeps the encodings json.loads
    detects (a UTF-8 byte order mark, UTF-16, UTF-32)."""
    text = json.dumps({"title": "café 😀"}, ensure_ascii=False)
    data = text.encode(encoding)
    if encoding == "utf-8-sig":
        assert data.startswith(codecs.BOM_UTF8)
    assert load_json(data) == {"title": "café 😀"}


# --------------------------------------------------------------------------- properties

#: Text around lone surrogates (U+D800..U+DFFF), which st.text leaves out by default.
near_surrogates = st.text(
    alphabet=st.characters(min_codepoint=0xD7F0, max_codepoint=0xE010, exclude_categories=()),
    min_size=1,
    max_size=4,
)
#: One JSON-like scalar: huge integers, any float, lone surrogates, dates, text.
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**400), max_value=10**400),
    st.integers(min_value=10**308, max_value=10**400),
    st.floats(),
    near_surrogates,
    st.text(max_size=6),
    st_kimun.dates,
)
#: Any JSON-like value, scalars as often as containers.
values = st.one_of(
    scalars,
    st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)
        ),
        max_leaves=6,
    ),
)


@st.composite
def payloads(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """A chunk, an embeddings response or an answer result with some fields replaced."""
    chunk = draw(st_kimun.chunks()).to_dict()
    chunk.update(draw(st.dictionaries(st.sampled_from(sorted(chunk)), values, max_size=3)))
    kind = draw(st.sampled_from(["chunk", "embeddings", "answer"]))
    if kind == "chunk":
        return kind, chunk
    top: dict[str, Any] = (
        {"chunks": [chunk], "query_time_ms": 1.0}
        if kind == "embeddings"
        else {"answer": "a", "sources": [chunk]}
    )
    top.update(draw(st.dictionaries(st.sampled_from(sorted(top)), values, max_size=1)))
    return kind, top


_TYPES = {"chunk": ChunkResult, "embeddings": EmbeddingsResponse, "answer": AnswerResult}


def _strings(obj: Any) -> list[str]:
    if isinstance(obj, str):
        return [obj]
    if isinstance(obj, dict):
        return [s for v in obj.values() for s in _strings(v)]
    if isinstance(obj, list | tuple):
        return [s for v in obj for s in _strings(v)]
    return []


def _outcome(call: Any) -> Any:
    """What ``call()`` returns, or the SchemaError it raises (any other error fails)."""
    try:
        return call()
    except SchemaError as exc:
        return exc


def _chunks_of(value: Any) -> tuple[ChunkResult, ...]:
    if isinstance(value, ChunkResult):
        return (value,)
    return value.chunks if isinstance(value, EmbeddingsResponse) else value.sources


@settings(max_examples=300)
@given(payloads())
def test_item5_property_from_dict_gives_a_value_or_a_schema_error(
    payload: tuple[str, dict[str, Any]],
) -> None:
    """Hardening item 5: from_dict of payloads whose fields hold anything JSON
    (or Python) can: a value whose every string UTF-8 encodes and whose numbers
    are finite, or a SchemaError that renders; never another exception. The
    value goes through to_dict, json.dumps and from_json unchanged."""
    kind, obj = payload
    cls = _TYPES[kind]
    value = _outcome(lambda: cls.from_dict(obj))
    if isinstance(value, SchemaError):
        assert str(value).startswith(f"{value.field}: " if value.field else "")
        return
    wire = value.to_dict()
    for text in _strings(wire):
        text.encode("utf-8")  # no lone surrogate got through
    assert all(math.isfinite(c.similarity_score) for c in _chunks_of(value))
    assert cls.from_json(json.dumps(wire, ensure_ascii=False).encode()) == value


def _spliced(payload: tuple[str, dict[str, Any]], noise: bytes, at: int) -> bytes:
    """A payload's JSON bytes with ``noise`` spliced in at ``at``."""
    text = json.dumps(payload[1], default=str).encode()
    return text[:at] + noise + text[at:]


@settings(max_examples=300)
@given(
    st.one_of(
        st.binary(max_size=60),
        payloads().map(lambda p: json.dumps(p[1], default=str).encode()),
        st.builds(_spliced, payloads(), st.binary(min_size=1, max_size=3), st.integers(0, 200)),
    )
)
def test_item5_property_from_json_of_any_bytes_gives_only_schema_errors(data: bytes) -> None:
    """Hardening item 5: from_json of any bytes (payloads with bytes spliced in,
    noise) returns a value or raises a SchemaError that renders; bytes that are
    not UTF-8 are never accepted."""
    for cls in _TYPES.values():
        value = _outcome(lambda cls=cls: cls.from_json(data))
        if isinstance(value, SchemaError):
            assert str(value).endswith(value.message) or value.has_value
        else:
            data.decode(json.detect_encoding(data))  # accepted bytes decode strictly
