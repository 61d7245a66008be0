"""askkit.frame.jsonl: the columnar reader against the line reader and from_chunk.

The columnar path runs with the compiled kernels and with the pyarrow.compute
fallback (the ``kernel_paths`` fixture); whatever it cannot vouch for goes to
the line-by-line reader, which names the file, line and field of each problem.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from askkit import AskSource, ChunkResult, SchemaError, Turn, VaultPath
from askkit.citations import scan
from askkit.frame import Loaded, sources_frame
from askkit.frame.jsonl import Fallback, _count_lines, read_columnar, read_lines
from askkit.frame.load import _from_records
from tests import strategies as st_kimun
from tests.frame.conftest import assert_schema, chunk, jsonl

INT64_MAX = 2**63 - 1

#: Each test runs with the compiled kernels and with the pyarrow.compute fallback.
pytestmark = pytest.mark.usefixtures("kernel_paths")

# --------------------------------------------------------------------------- from_chunk

#: Plain paths exercise the compiled and pyarrow branches of the path mapping;
#: tricky ones the VaultPath one.
plain_paths = st.lists(
    st.text(alphabet="abcxyz019_-.", min_size=1, max_size=6), min_size=1, max_size=4
).map("/".join)
any_paths = st.one_of(st_kimun.paths, plain_paths, st.sampled_from(["con/a.md", "a/aux.txt"]))


@st.composite
def chunks(draw: st.DrawFn) -> ChunkResult:
    """strategies.chunks, with ordinals the frame's int64 holds and more path shapes."""
    base = draw(st_kimun.chunks())
    return ChunkResult(
        path=draw(any_paths),
        title=base.title,
        date=base.date,
        content=base.content,
        hash=base.hash,
        similarity_score=base.similarity_score,
        ordinal=draw(st.one_of(st.just(0), st.integers(min_value=0, max_value=INT64_MAX))),
    )


turn_lists = st.lists(st.lists(chunks(), min_size=0, max_size=5), min_size=1, max_size=4)


def _write(
    path: Path, turns: list[list[ChunkResult]], answers: list[str], *, ascii_only: bool
) -> None:
    lines = []
    for i, (turn, answer) in enumerate(zip(turns, answers, strict=False)):
        record = {"id": f"t{i}", "answer": answer, "sources": [c.to_dict() for c in turn]}
        for c, d in zip(turn, record["sources"], strict=True):
            if c.ordinal == 0:
                del d["ordinal"]  # an older server omits it
        lines.append(json.dumps(record, ensure_ascii=ascii_only))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _turn(chunks: list[ChunkResult], answer: str) -> Turn:
    return Turn("", answer, AskSource.from_chunks(chunks))


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    turns=turn_lists,
    answers=st.lists(st_kimun.answers, min_size=4, max_size=4),
    ascii_only=st.booleans(),
)
def test_columnar_path_equals_from_chunk(
    tmp_path: Path, turns: list[list[ChunkResult]], answers: list[str], ascii_only: bool
) -> None:
    path = tmp_path / "log.jsonl"
    _write(path, turns, answers, ascii_only=ascii_only)
    df = read_columnar(path, path.name)  # raises Fallback if the fast path gave up
    expected = [AskSource.from_chunk(i, c) for turn in turns for i, c in enumerate(turn)]
    assert len(df) == len(expected)
    assert df["path"].tolist() == [str(s.path) for s in expected]
    assert df["note"].tolist() == [s.path.stem for s in expected]
    assert df["folder"].tolist() == [s.path.folder for s in expected]
    assert df["heading"].tolist() == [s.heading for s in expected]
    assert df["match_heading"].tolist() == [s.match_heading() for s in expected]
    assert df["ordinal"].tolist() == [s.ordinal for s in expected]
    assert df["score"].tolist() == [s.score for s in expected]
    assert df["text"].tolist() == [s.text for s in expected]
    assert df["text_chars"].tolist() == [len(s.text) for s in expected]
    assert df["hash"].tolist() == [s.hash for s in expected]
    assert df["wire_date"].fillna("").tolist() == [s.date or "" for s in expected]
    assert df["is_journal"].tolist() == [s.date is not None for s in expected]
    cited = [
        s.ordinal in {c.index for c in scan(answer)}
        for turn, answer in zip(turns, answers, strict=False)
        for s in AskSource.from_chunks(turn)
    ]
    assert df["cited"].tolist() == cited
    # and the whole frame equals the object path's
    objects = sources_frame(
        {f"t{i}": _turn(t, a) for i, (t, a) in enumerate(zip(turns, answers, strict=False))}
    )
    pd.testing.assert_frame_equal(
        df.drop(columns="line"), objects.drop(columns="line"), check_exact=True
    )
    # lossless back to objects, up to kimun's own printing ambiguity (a leading blank
    # component prints like nothing or like the absolute marker; see VaultPath.from_printed)
    reprinted = [dataclasses.replace(s, path=VaultPath.from_printed(str(s.path))) for s in expected]
    assert list(df.ask.sources()) == reprinted


def test_the_columnar_and_line_paths_agree_on_the_sample(data_dir: Path) -> None:
    path = data_dir / "turns.jsonl"
    fast = read_columnar(path, path.name)
    records, errors, seen = read_lines(path, path.name, strict=True)
    assert errors == []
    assert seen == len(path.read_text(encoding="utf-8").splitlines())
    pd.testing.assert_frame_equal(fast, _from_records(records))


# --------------------------------------------------------------------------- lines


@pytest.mark.parametrize("text", ["", "a", "a\n", "a\n\nb", "\n", "x\n" * 700_000 + "tail"])
def test_lines_are_counted(tmp_path: Path, text: str) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text(text, encoding="utf-8")
    assert _count_lines(path) == len(text.splitlines())


def test_empty_jsonl_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("", encoding="utf-8")
    df = sources_frame(path)
    assert df.empty
    assert_schema(df)


def test_integer_ids_read_as_strings(tmp_path: Path) -> None:
    path = jsonl(tmp_path, [{"id": 7, "sources": [chunk()]}])
    assert sources_frame(path)["turn_id"].tolist() == ["7"]


def test_bare_chunk_runs_are_turns(tmp_path: Path) -> None:
    lines = [chunk(ordinal=0), chunk(ordinal=0), {"id": "t", "sources": [chunk()]}, chunk()]
    path = jsonl(tmp_path, lines)
    df = sources_frame(path)
    assert df["turn_id"].tolist() == ["log.jsonl:1", "log.jsonl:1", "t", "log.jsonl:4"]
    assert df["rank"].tolist() == [1, 2, 1, 1]
    assert df["ordinal"].tolist() == [1, 2, 1, 1]
    assert df["line"].tolist() == [1, 1, 3, 4]
    pd.testing.assert_frame_equal(read_columnar(path, path.name), df)  # no fallback


@pytest.mark.parametrize(
    "line",
    [
        '{"sources": [{"path": "a.md", "title": "ordinal", "content": "", "hash": "", '
        '"similarity_score": 1}]}',
        '{"sources": [{"path": "a.md", "title": "t", "content": "", "hash": "", '
        '"similarity_score": 1, "ordinal" : 2}, {"path": "b.md", "title": "t", "content": "", '
        '"hash": "", "similarity_score": 1}]}',
    ],
    ids=["value-looks-like-key", "space-before-colon"],
)
def test_absent_ordinals_are_not_mistaken_for_null(tmp_path: Path, line: str) -> None:
    df = sources_frame(jsonl(tmp_path, [line]))
    assert df["ordinal"].tolist()[-1] == len(df)


def test_blank_lines_keep_line_numbers(tmp_path: Path) -> None:
    path = jsonl(tmp_path, [{"sources": [chunk()]}, "", "   ", {"sources": [chunk()]}])
    with pytest.raises(Fallback, match="line count"):
        read_columnar(path, path.name)
    df = sources_frame(path)
    assert df["line"].tolist() == [1, 4]
    assert df["turn_id"].tolist() == ["log.jsonl:1", "log.jsonl:4"]


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("{not json", "JSON"),
        (json.dumps({"sources": [chunk(path=None)]}), "path"),
        (json.dumps({"sources": [chunk(ordinal=-1)]}), "ordinal"),
        (json.dumps({"sources": [chunk(ordinal=None)]}), "ordinal null"),
        (json.dumps({"sources": [chunk(date="2026-02-30")]}), "date"),
    ],
    ids=["not-json", "null-path", "negative-ordinal", "null-ordinal", "bad-date"],
)
def test_the_columnar_path_gives_up_on_what_it_cannot_vouch_for(
    tmp_path: Path, line: str, reason: str
) -> None:
    path = jsonl(tmp_path, [{"sources": [chunk()]}, line])
    with pytest.raises(Fallback, match=reason):
        read_columnar(path, path.name)


# --------------------------------------------------------------------------- bad lines

BAD_LINES = [
    ("{not json", None, "not valid JSON"),
    ('["a list"]', None, "expected a JSON object"),
    (
        json.dumps({"sources": [chunk(similarity_score="high")]}),
        "sources[0].similarity_score",
        "expected a number",
    ),
    (json.dumps({"sources": [chunk(ordinal=-1)]}), "sources[0].ordinal", ">= 0"),
    (json.dumps({"sources": [chunk(ordinal=None)]}), "sources[0].ordinal", "whole number"),
    (json.dumps({"sources": [chunk(ordinal=2**63)]}), "sources[0].ordinal", "int64"),
    (json.dumps({"sources": [chunk(date="2026-02-30")]}), "sources[0].date", "calendar"),
    (json.dumps({"chunks": [{"path": "a.md"}]}), "chunks[0].title", "missing"),
    (json.dumps({"id": "x", "question": 3, "sources": []}), "question", "string"),
    (json.dumps({"id": "x"}), "sources", "needs a list"),
    (json.dumps(chunk(similarity_score=None)), "similarity_score", "expected a number"),
]


@pytest.mark.parametrize(("line", "field", "message"), BAD_LINES)
def test_strict_mode_names_file_line_field_value(
    tmp_path: Path, line: str, field: str | None, message: str
) -> None:
    path = jsonl(tmp_path, [{"sources": [chunk()]}, line, {"sources": [chunk()]}])
    with pytest.raises(SchemaError, match=message) as info:
        sources_frame(path)
    err = info.value
    assert err.file == str(path)
    assert err.line == 2
    assert err.field == field
    assert str(path) in str(err)


@pytest.mark.parametrize(("line", "field", "message"), BAD_LINES)
def test_lenient_mode_reports_every_bad_line(
    tmp_path: Path, line: str, field: str | None, message: str
) -> None:
    good = {"id": "g", "answer": "[1]", "sources": [chunk(), chunk(ordinal=2)]}
    path = jsonl(tmp_path, [good, line, line, good])
    loaded = sources_frame(path, strict=False)
    assert isinstance(loaded, Loaded)
    frame, errors = loaded
    assert loaded.records == 4
    assert loaded.records == loaded.records_loaded + len(errors)  # nothing dropped silently
    assert len(frame) == 4
    assert frame["line"].tolist() == [1, 1, 4, 4]
    assert frame["cited"].tolist() == [True, False, True, False]
    assert errors["line"].tolist() == [2, 3]
    assert errors["file"].tolist() == [str(path)] * 2
    assert errors["field"].tolist() == [field or ""] * 2
    assert errors["message"].str.contains(message).all()
    assert list(errors.dtypes.index) == ["file", "line", "field", "value", "message"]


def test_records_count_turns_without_sources(tmp_path: Path) -> None:
    path = jsonl(tmp_path, [{"sources": []}, {"sources": [chunk()]}, {"chunks": []}])
    loaded = sources_frame(path, strict=False)
    assert loaded.records == 3
    assert len(loaded.frame) == 1
    assert loaded.frame.attrs == {}


def test_a_file_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(json.dumps({"sources": [chunk()]}).encode() + b"\n\xff\n")
    with pytest.raises(SchemaError, match="not UTF-8") as info:
        read_lines(path, path.name, strict=True)
    assert info.value.file == str(path)


# --------------------------------------------------------------------------- issue 41


@pytest.mark.parametrize("content", [b"", b"\n\n"])
def test_issue41_8_an_empty_json_log_is_said_to_be_empty(tmp_path: Path, content: bytes) -> None:
    """A ``.json`` log that holds nothing said "not valid JSON"; lenient lists it as one
    record left out; an empty ``.jsonl`` log is an empty frame (no record in it)."""
    path = tmp_path / "log.json"
    path.write_bytes(content)
    with pytest.raises(SchemaError, match=r"the file is empty\b.*or a list of turn records$"):
        sources_frame(path)
    frame, errors = sources_frame(path, strict=False)
    assert frame.empty
    assert errors["message"].str.startswith("the file is empty").tolist() == [True]
    lines = tmp_path / "log.jsonl"
    lines.write_bytes(content)
    assert sources_frame(lines).empty
