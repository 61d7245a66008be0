"""askkit.payloads: a saved kimun payload of any shape read as one turn."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from askkit import SchemaError, Turn, read_turn, turn_from_payload
from askkit.payloads import MAX_PAYLOAD_BYTES
from tests.conftest import DATA, load


def test_an_answer_job_reads_as_its_result() -> None:
    job = load("answer_job.json")
    turn = read_turn(DATA / "answer_job.json", question="why?")
    assert turn.question == "why?"
    assert turn.answer == job["result"]["answer"]
    assert [str(s.path) for s in turn.sources] == [c["path"] for c in job["result"]["sources"]]


def test_an_answer_result_and_its_job_give_the_same_turn() -> None:
    job = load("answer_job.json")
    assert turn_from_payload(job["result"]) == turn_from_payload(job)


def test_an_embeddings_response_reads_with_no_answer() -> None:
    turn = read_turn(DATA / "embeddings.json", question="q")
    assert (turn.question, turn.answer) == ("q", "")
    assert len(turn.sources) == len(load("embeddings.json")["chunks"])


def test_a_bare_chunk_list_numbers_old_payloads_by_position(chunk_dict: dict[str, Any]) -> None:
    del chunk_dict["ordinal"]
    turn = turn_from_payload([chunk_dict, dict(chunk_dict, path="b.md")])
    assert [s.ordinal for s in turn.sources] == [1, 2]


def test_a_turn_record_keeps_its_question_over_the_default(chunk_dict: dict[str, Any]) -> None:
    turn = turn_from_payload(
        {"question": "mine", "answer": "a [2]", "chunks": [chunk_dict]}, question="x"
    )
    assert isinstance(turn, Turn)
    assert (turn.question, turn.answer) == ("mine", "a [2]")


@pytest.mark.parametrize(
    ("payload", "match"),
    [
        ({"job_id": "j", "status": "running", "result": None}, "status 'running'"),
        ({"job_id": "j", "status": "failed", "error": "boom"}, "error 'boom'"),
        ({"question": 3, "sources": []}, "question"),
        ({"question": "q", "answer": ["a"], "sources": []}, "answer"),
        ({"question": "q"}, "expected 'sources' or 'chunks'"),
        ("text", "expected a JSON object or a list of chunks"),
        ({"sources": [{"title": "x"}]}, r"sources\[0\]\.path"),
    ],
)
def test_a_bad_payload_says_what_is_wrong(payload: Any, match: str) -> None:
    with pytest.raises(SchemaError, match=match):
        turn_from_payload(payload)


def test_errors_name_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"answer": "a", "sources": [{"path": 3}]}), encoding="utf-8")
    with pytest.raises(SchemaError, match=r"bad\.json.*sources\[0\]\.path") as info:
        read_turn(bad)
    assert info.value.file == str(bad)


def test_an_unreadable_file_is_a_schema_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(SchemaError, match="cannot read the payload file: no such file") as info:
        read_turn(tmp_path / "missing.json")
    assert info.value.file == str(tmp_path / "missing.json")


def test_a_device_or_fifo_is_refused_never_read(tmp_path: Path) -> None:
    """Hardening: ``askkit sources /dev/zero`` hung reading forever; now refused at once."""
    import os

    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    for path in ("/dev/zero", fifo):
        with pytest.raises(SchemaError, match="not a regular file"):
            read_turn(path)


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("fifo", "a FIFO (named pipe)"),
        ("/dev/zero", "a character device"),
        ("/dev/null", "a character device"),
        ("folder", "a folder"),
    ],
)
def test_read_turn_says_what_a_payload_that_is_not_a_regular_file_is(
    tmp_path: Path, name: str, kind: str
) -> None:
    """The one input rule (askkit._files): the error names the file and what it is."""
    path = Path(name)
    if name == "fifo":
        path = tmp_path / "answer.json"
        os.mkfifo(path)
    elif name == "folder":
        path = tmp_path / "answer.json"
        path.mkdir()
    with pytest.raises(SchemaError) as info:
        read_turn(path)
    assert info.value.file == str(path)
    assert info.value.message == f"the payload file is {kind}, not a regular file; give a file"


def test_read_turn_refuses_a_payload_over_its_size_limit_before_reading_it(tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    with path.open("wb") as handle:  # sparse: no disk space used, and never read
        handle.truncate(MAX_PAYLOAD_BYTES + 1)
    with pytest.raises(SchemaError) as info:
        read_turn(path)
    assert info.value.file == str(path)
    assert info.value.message == (
        f"the payload file has {MAX_PAYLOAD_BYTES + 1} bytes, "
        f"over the {MAX_PAYLOAD_BYTES}-byte limit"
    )


# --------------------------------------------------------------------------- issue 41


@pytest.mark.parametrize("content", [b"", b"\n", b"  \r\n\t", b"\xef\xbb\xbf", b"\xef\xbb\xbf \n"])
def test_issue41_8_an_empty_payload_file_is_said_to_be_empty(
    tmp_path: Path, content: bytes
) -> None:
    """``askkit sources`` on an empty file said "the file is not valid JSON"."""
    path = tmp_path / "empty.json"
    path.write_bytes(content)
    with pytest.raises(SchemaError) as info:
        read_turn(path)
    state = "is empty" if not content else "is empty (whitespace only)"
    assert str(info.value) == (
        f"{path}: the file {state}: it should hold a kimun payload (an answer job, an answer "
        "result, a turn record, an /api/embeddings response or a list of chunks)"
    )
    assert "JSON" not in str(info.value)


@pytest.mark.parametrize("command", ["sources", "prompt"])
def test_issue41_8_askkit_sources_on_an_empty_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    from askkit.cli import main

    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    assert main([command, str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"askkit: error: {path}: the file is empty: it should hold")
    assert err.count("\n") == 1
