"""kimun's wire JSON: validation at the boundary, forward compatibility, round trips."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given

from askkit import AnswerResult, ChunkResult, EmbeddingsResponse, SchemaError
from askkit.errors import UsageError
from askkit.wire import check_vault_id
from tests import strategies as st_kimun
from tests.conftest import load


def test_chunk_from_dict_reads_every_field(chunk_dict: dict[str, Any]) -> None:
    c = ChunkResult.from_dict(chunk_dict)
    assert c == ChunkResult(
        "journal/2026-04-08.md",
        "2026-04-08\x1fAfternoon",
        "2026-04-08",
        "Walked to the river.",
        "abc123",
        0.75,
        2,
    )


def test_missing_ordinal_reads_as_zero_meaning_absent(chunk_dict: dict[str, Any]) -> None:
    del chunk_dict["ordinal"]
    assert ChunkResult.from_dict(chunk_dict).ordinal == 0


def test_missing_or_null_date_is_none(chunk_dict: dict[str, Any]) -> None:
    chunk_dict["date"] = None
    assert ChunkResult.from_dict(chunk_dict).date is None
    del chunk_dict["date"]
    assert ChunkResult.from_dict(chunk_dict).date is None


def test_unknown_fields_are_ignored(chunk_dict: dict[str, Any]) -> None:
    chunk_dict["rerank_score"] = 0.1
    chunk_dict["future"] = {"nested": [1, 2]}
    assert ChunkResult.from_dict(chunk_dict).path == "journal/2026-04-08.md"


def test_integer_score_is_accepted_as_float(chunk_dict: dict[str, Any]) -> None:
    chunk_dict["similarity_score"] = 1
    c = ChunkResult.from_dict(chunk_dict)
    assert c.similarity_score == 1.0
    assert isinstance(c.similarity_score, float)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("path", 3, "expected a string"),
        ("title", None, "expected a string"),
        ("content", ["x"], "expected a string"),
        ("hash", 1.5, "expected a string"),
        ("similarity_score", "0.5", "expected a number"),
        ("similarity_score", True, "expected a number"),
        ("similarity_score", math.nan, "expected a finite number"),
        ("similarity_score", math.inf, "expected a finite number"),
        ("similarity_score", -math.inf, "expected a finite number"),
        ("ordinal", -1, "expected a whole number >= 0"),
        ("ordinal", 1.0, "expected a whole number >= 0"),
        ("ordinal", "1", "expected a whole number >= 0"),
        ("ordinal", False, "expected a whole number >= 0"),
        ("ordinal", 2**64, "64-bit"),
        ("date", "2026-4-8", "YYYY-MM-DD"),
        ("date", "2026-02-30", "not a calendar date"),
        ("date", "08/04/2026", "YYYY-MM-DD"),
        ("date", 20260408, "expected a string date"),
    ],
)
def test_bad_field_names_field_and_value(
    chunk_dict: dict[str, Any], field: str, value: object, message: str
) -> None:
    chunk_dict[field] = value
    with pytest.raises(SchemaError) as info:
        ChunkResult.from_dict(chunk_dict)
    err = info.value
    assert err.field == field
    assert message in str(err)
    assert str(err).startswith(f"{field}: ")
    assert repr(value)[:20] in str(err)
    assert isinstance(err, ValueError)


@pytest.mark.parametrize("field", ["path", "title", "content", "hash", "similarity_score"])
def test_missing_required_field(chunk_dict: dict[str, Any], field: str) -> None:
    del chunk_dict[field]
    with pytest.raises(SchemaError, match=f"missing required field '{field}'") as info:
        ChunkResult.from_dict(chunk_dict)
    assert info.value.field == field


def test_error_in_a_list_names_the_index(chunk_dict: dict[str, Any]) -> None:
    bad = dict(chunk_dict, similarity_score=None)
    with pytest.raises(SchemaError) as info:
        AnswerResult.from_dict({"answer": "x", "sources": [chunk_dict, chunk_dict, bad]})
    assert info.value.field == "sources[2].similarity_score"
    assert "sources[2].similarity_score: expected a number, got None" in str(info.value)


def test_chunk_that_is_not_an_object() -> None:
    with pytest.raises(SchemaError, match=r"chunks\[0\]: expected a JSON object"):
        EmbeddingsResponse.from_dict({"chunks": ["nope"], "query_time_ms": 3})


def test_sources_must_be_a_list() -> None:
    with pytest.raises(SchemaError, match="sources: expected a list of chunks"):
        AnswerResult.from_dict({"answer": "x", "sources": "abc"})


def test_from_json_rejects_invalid_json() -> None:
    with pytest.raises(SchemaError, match="not valid JSON"):
        ChunkResult.from_json("{nope")


def test_embeddings_response_sample_file() -> None:
    resp = EmbeddingsResponse.from_dict(load("embeddings.json"))
    assert len(resp.chunks) == 6
    assert resp.query_time_ms == 42
    assert [c.ordinal for c in resp.chunks] == [1, 2, 3, 4, 5, 6]


def test_old_server_payload_has_no_ordinals() -> None:
    resp = EmbeddingsResponse.from_dict(load("embeddings_old_server.json"))
    assert [c.ordinal for c in resp.chunks] == [0, 0, 0, 0]


def test_query_time_must_be_non_negative() -> None:
    with pytest.raises(SchemaError, match="query_time_ms"):
        EmbeddingsResponse.from_dict({"chunks": [], "query_time_ms": -1})


@pytest.mark.parametrize("name", ["embeddings.json", "embeddings_old_server.json"])
def test_embeddings_round_trip(name: str) -> None:
    resp = EmbeddingsResponse.from_dict(load(name))
    again = EmbeddingsResponse.from_json(json.dumps(resp.to_dict()))
    assert again == resp


def test_answer_round_trip() -> None:
    result = AnswerResult.from_dict(load("answer_job.json")["result"])
    assert AnswerResult.from_json(json.dumps(result.to_dict())) == result
    assert ChunkResult.from_dict(result.sources[0].to_dict()) == result.sources[0]


def test_values_are_frozen(chunk_dict: dict[str, Any]) -> None:
    c = ChunkResult.from_dict(chunk_dict)
    with pytest.raises(AttributeError):
        c.path = "other.md"  # type: ignore[misc]


@given(st_kimun.chunks())
def test_chunk_wire_round_trip(chunk: ChunkResult) -> None:
    assert ChunkResult.from_json(json.dumps(chunk.to_dict())) == chunk


@pytest.mark.parametrize("good", ["notes", "my-vault_2.0", "a", "x__y", "_notes"])
def test_check_vault_id_takes_what_kimuns_collection_key_takes(good: str) -> None:
    assert check_vault_id(good) == good


@pytest.mark.parametrize("bad", ["", "__fingerprint", "my vault", "a/b", "caf\u00e9", 7, None])
def test_check_vault_id_refuses_what_kimuns_collection_key_refuses(bad: object) -> None:
    with pytest.raises(UsageError, match=r"invalid vault id .*do not start with '__'"):
        check_vault_id(bad)
