"""Hardening of the sources frame's readers: text that is not UTF-8 and raw exceptions.

Item 4: a JSONL log whose bytes are not UTF-8 is never trusted by the columnar
fast path; the line reader names the file, line, field and bytes. Item 5:
what used to escape ``sources_frame`` as ``OverflowError``, ``RecursionError``,
``UnicodeDecodeError`` or ``UnicodeEncodeError`` is a :class:`SchemaError`, and
in lenient mode one reported, skipped record. Both paths of the per-row rules
(the compiled kernels and pyarrow.compute) give the same frames and errors.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from askkit import AskSource, SchemaError, Turn, VaultPath
from askkit.frame import Loaded, kernels, sources_frame
from askkit.frame import jsonl as jsonl_module
from askkit.frame.jsonl import Fallback, _count_lines, read_columnar
from tests import strategies as st_kimun
from tests.frame.conftest import chunk

INT64_MAX = 2**63 - 1
#: A placeholder a test replaces, in the JSON text, with the bytes under test.
MARK = "@@MARK@@"
#: Byte sequences that are not UTF-8: a bad start byte, a cut character, an
#: encoded surrogate (CESU-8), an overlong "/", a code point past U+10FFFF, a
#: stray continuation byte.
NOT_UTF8 = [
    b"\xff",
    b"\xc3",
    b"\xe2\x82",
    b"\xed\xa0\x80",
    b"\xc0\xaf",
    b"\xf4\x90\x80\x80",
    b"\x80",
]
#: Lone surrogate escapes: valid JSON, but no UTF-8 text.
SURROGATES = [b"\\ud800", b"\\udfff", b"\\udc80"]

_SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def both_paths(run: Callable[[], Any]) -> tuple[Any, Any]:
    """``run()`` with the compiled kernels, then with the pyarrow.compute fallback."""
    saved = kernels.ENABLED
    try:
        kernels.ENABLED = True
        compiled = run()
        kernels.ENABLED = False
        pure = run()
    finally:
        kernels.ENABLED = saved
    return compiled, pure


def outcome(run: Callable[[], Any]) -> Any:
    """What ``run()`` returns, or the SchemaError it raises (any other error fails)."""
    try:
        return run()
    except SchemaError as exc:
        return exc


def same_outcome(compiled: Any, pure: Any) -> None:
    """Both paths gave the same frame (or Loaded), or the same SchemaError."""
    assert type(compiled) is type(pure)
    if isinstance(compiled, SchemaError):
        assert (compiled.file, compiled.line, compiled.field, compiled.message) == (
            pure.file,
            pure.line,
            pure.field,
            pure.message,
        )
    elif isinstance(compiled, Loaded):
        assert compiled.records == pure.records
        pd.testing.assert_frame_equal(compiled.frame, pure.frame, check_exact=True)
        pd.testing.assert_frame_equal(compiled.errors, pure.errors, check_exact=True)
    else:
        pd.testing.assert_frame_equal(compiled, pure, check_exact=True)


def marked_line(record: dict[str, Any], where: str, raw: bytes) -> bytes:
    """``record`` as one JSON line with the string at ``where`` (a field path such
    as ``sources[1].title``) holding ``raw`` between two letters."""
    target: Any = record
    *parents, last = where.replace("[", ".").replace("]", "").split(".")
    for part in parents:
        target = target[int(part)] if part.isdigit() else target[part]
    target[last] = MARK
    return json.dumps(record).encode().replace(MARK.encode(), b"a" + raw + b"z")


def write_lines(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def good_line(turn_id: str = "g") -> bytes:
    return json.dumps(
        {"id": turn_id, "answer": "[1]", "sources": [chunk(), chunk(ordinal=2)]}
    ).encode()


# --------------------------------------------------------------------------- item 4

FIELDS_4 = [
    "sources[0].path",
    "sources[0].title",
    "sources[1].content",
    "sources[0].hash",
    "sources[1].date",
    "id",
    "question",
    "answer",
    "sources[0].extra",  # a field askkit does not read: the line is not UTF-8 all the same
]


@pytest.mark.parametrize("raw", NOT_UTF8, ids=[b.hex() for b in NOT_UTF8])
@pytest.mark.parametrize("where", FIELDS_4)
def test_item4_invalid_utf8_in_a_jsonl_log_is_refused_naming_file_line_field(
    tmp_path: Path, where: str, raw: bytes
) -> None:
    """Hardening item 4: bytes that are not UTF-8 in any field of a JSONL log
    never reach a frame. The fast path hands the file to the line reader; strict
    mode raises a SchemaError naming file, line, field and the raw bytes, lenient
    mode skips and reports the line; the compiled and pure paths agree, and the
    frame that comes back converts to Python objects."""
    record = {
        "id": "bad",
        "question": "q",
        "answer": "a",
        "sources": [chunk(extra="x"), chunk(ordinal=2, date="2026-04-08")],
    }
    path = write_lines(
        tmp_path / "log.jsonl", [good_line("g1"), marked_line(record, where, raw), good_line("g3")]
    )
    with pytest.raises(Fallback, match="not UTF-8"):
        read_columnar(path, path.name)

    strict = both_paths(lambda: outcome(lambda: sources_frame(path)))
    same_outcome(*strict)
    err = strict[0]
    assert isinstance(err, SchemaError)
    assert (err.file, err.line, err.field) == (str(path), 2, where)
    assert "not UTF-8" in err.message
    assert err.value == b"a" + raw + b"z"
    assert str(path) in str(err)
    assert where in str(err)

    lenient = both_paths(lambda: sources_frame(path, strict=False))
    same_outcome(*lenient)
    loaded = lenient[0]
    assert loaded.records == 3
    assert loaded.records_loaded + len(loaded.errors) == 3
    assert loaded.frame["turn_id"].tolist() == ["g1", "g1", "g3", "g3"]
    assert loaded.errors[["file", "line", "field"]].values.tolist() == [[str(path), 2, where]]
    assert loaded.frame.to_dict()["text"]  # every string decodes


def test_item4_a_bare_chunk_line_that_is_not_utf8_names_its_field(tmp_path: Path) -> None:
    """Hardening item 4: a bare chunk line (no turn around it) names the chunk's
    own field, and the chunk runs on either side stay separate turns."""
    bad = json.dumps(chunk(title=MARK)).encode().replace(MARK.encode(), b"\xff")
    path = write_lines(
        tmp_path / "log.jsonl", [json.dumps(chunk()).encode(), bad, json.dumps(chunk()).encode()]
    )
    compiled, pure = both_paths(lambda: sources_frame(path, strict=False))
    same_outcome(compiled, pure)
    assert compiled.errors[["line", "field", "value"]].values.tolist() == [[2, "title", "b'\\xff'"]]
    assert compiled.frame["turn_id"].tolist() == ["log.jsonl:1", "log.jsonl:3"]


@pytest.mark.parametrize("at", [-2, -1, 0, 1])
@pytest.mark.parametrize("char", ["é", "€", "😀"])
def test_item4_characters_across_the_block_boundary_stay_on_the_fast_path(
    tmp_path: Path, char: str, at: int
) -> None:
    """Hardening item 4: a multi-byte character cut by the 1 MiB read block is
    carried into the next block, so a valid log still takes the fast path; the
    same place holding a bad byte sends it to the line reader."""
    prefix = json.dumps({"sources": [chunk(content="")]}).encode().index(b'"content": "') + 12
    filler = jsonl_module._LINE_BLOCK - prefix + at  # the character starts near the boundary
    text = "x" * filler + char + "y"
    line = json.dumps({"sources": [chunk(content=text)]}, ensure_ascii=False).encode()
    path = write_lines(tmp_path / "log.jsonl", [line, good_line()])
    frame = read_columnar(path, path.name)  # no Fallback
    assert frame["text"].tolist()[0] == text
    encoded = char.encode()
    path.write_bytes(path.read_bytes().replace(encoded, encoded[:-1] + b"x", 1))
    assert _count_lines(path) is None
    with pytest.raises(Fallback, match="not UTF-8"):
        read_columnar(path, path.name)


@pytest.mark.parametrize(
    ("text", "null_line"),
    [
        (b"null\n", 1),
        (b"\n\n  null\n", 3),
        (b"\xef\xbb\xbfnull\n", 1),
        (b"null\n" + good_line() + b"\n", 1),
    ],
    ids=["null", "after-blank-lines", "after-a-byte-order-mark", "then-a-turn"],
)
def test_item4_a_log_starting_with_null_is_read_by_the_line_reader(
    tmp_path: Path, text: bytes, null_line: int
) -> None:
    """Hardening item 4: pyarrow.json crashes the process on a file whose first
    value is null (apache/arrow issue 47409), so the fast path hands Arrow only a
    file that starts with an object; the line reader reports the null line. Run
    in a child process, so that a crash fails this test instead of the run."""
    path = tmp_path / "log.jsonl"
    path.write_bytes(text)
    code = (
        "import sys\n"
        "from askkit.frame import kernels, sources_frame\n"
        "for on in (True, False):\n"
        "    kernels.ENABLED = on\n"
        "    loaded = sources_frame(sys.argv[1], strict=False)\n"
        "    print(loaded.records, loaded.records_loaded, loaded.errors['line'].tolist())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=False
    )
    assert out.returncode == 0, out.stderr[-2000:]
    records = 2 if b"{" in text else 1
    expected = f"{records} {records - 1} [{null_line}]"
    assert out.stdout.splitlines() == [expected, expected]
    with pytest.raises(Fallback, match="not a JSON object"):  # in this process once safe
        read_columnar(path, path.name)


pieces = st.one_of(
    st.binary(max_size=5),
    st.text(max_size=4).map(str.encode),
    st.sampled_from([b"\n", "é".encode(), "€".encode(), "😀".encode(), *NOT_UTF8]),
)


@settings(max_examples=300, deadline=None)
@given(data=st.lists(pieces, max_size=14).map(b"".join), block=st.integers(1, 9))
def test_item4_property_the_fast_path_utf8_check_equals_python_decoding(
    data: bytes, block: int
) -> None:
    """Hardening item 4: the block-wise UTF-8 check of the fast path accepts
    exactly what Python's strict UTF-8 decoder accepts, whatever the block size
    (characters cut at every place), and counts the same lines when it does."""
    import tempfile

    saved = jsonl_module._LINE_BLOCK
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "log.jsonl"
        path.write_bytes(data)
        try:
            jsonl_module._LINE_BLOCK = block
            counted = _count_lines(path)
        finally:
            jsonl_module._LINE_BLOCK = saved
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        assert counted is None
    else:
        assert counted == data.count(b"\n") + (bool(data) and not data.endswith(b"\n"))


@st.composite
def logs(draw: st.DrawFn) -> tuple[list[bytes], dict[int, str]]:
    """JSONL lines, some with bytes that are not UTF-8 or a lone surrogate escape in
    one field, and blank lines; with {line number: field} of each bad line."""
    lines: list[bytes] = []
    bad: dict[int, str] = {}
    for number in range(1, draw(st.integers(1, 6)) + 1):
        if draw(st.integers(0, 9)) == 0:
            lines.append(draw(st.sampled_from([b"", b"  ", b"\t"])))
            continue
        sources = draw(st.lists(st_kimun.chunks(), min_size=1, max_size=3))
        record = {
            "id": f"t{number}",
            "question": draw(st.text(max_size=6)),
            "answer": draw(st_kimun.answers),
            "sources": [
                dict(c.to_dict(), ordinal=c.ordinal % INT64_MAX) for c in sources
            ],  # ordinals the frame's int64 holds
        }
        kind = draw(st.sampled_from(["good", "good", "bytes", "surrogate"]))
        if kind == "good":
            lines.append(json.dumps(record, ensure_ascii=draw(st.booleans())).encode())
            continue
        string_fields = ["path", "title", "content", "hash"]
        where = draw(
            st.sampled_from(
                [
                    "id",
                    "question",
                    "answer",
                    *(f"sources[{i}].{f}" for i in range(len(sources)) for f in string_fields),
                ]
            )
        )
        raw = draw(st.sampled_from(NOT_UTF8 if kind == "bytes" else SURROGATES))
        lines.append(marked_line(record, where, raw))
        bad[number] = where
    return lines, bad


@_SETTINGS
@given(log=logs())
def test_item4_property_bad_text_is_skipped_counted_and_both_paths_agree(
    tmp_path: Path, log: tuple[list[bytes], dict[int, str]]
) -> None:
    """Hardening item 4: over logs mixing good lines with lines holding bytes that
    are not UTF-8 or lone surrogate escapes, only SchemaError comes out; lenient
    mode loads every good line, reports exactly the bad ones (file, line, field)
    and loaded + skipped equals the non-blank lines; strict mode raises the first
    bad line's error; the compiled and pure paths give the same frames and errors."""
    lines, bad = log
    path = write_lines(tmp_path / "log.jsonl", lines)
    non_blank = [n for n, line in enumerate(lines, start=1) if line.strip()]

    lenient = both_paths(lambda: sources_frame(path, strict=False))
    same_outcome(*lenient)
    loaded = lenient[0]
    assert loaded.records == len(non_blank)
    assert loaded.records_loaded + len(loaded.errors) == len(non_blank)
    assert loaded.errors["line"].tolist() == sorted(bad)
    assert loaded.errors["field"].tolist() == [bad[n] for n in sorted(bad)]
    assert sorted(set(loaded.frame["line"].tolist())) == [n for n in non_blank if n not in bad]
    assert loaded.frame.to_dict()  # every string of the frame decodes

    strict = both_paths(lambda: outcome(lambda: sources_frame(path)))
    same_outcome(*strict)
    if bad:
        first = min(bad)
        assert isinstance(strict[0], SchemaError)
        assert (strict[0].file, strict[0].line, strict[0].field) == (str(path), first, bad[first])
    else:
        pd.testing.assert_frame_equal(strict[0], loaded.frame)


# --------------------------------------------------------------------------- item 5

BIG = "1" + "0" * 400
DEEP = "[" * 100_000 + "]" * 100_000
NEAR_LIMIT = "[" * 985 + "]" * 985  # parses, then is nearly too deep to print


def _turn_text(**fields: str) -> bytes:
    """A turn line whose fields are replaced by raw JSON texts."""
    record: dict[str, Any] = {"id": "bad", "question": "q", "answer": "a", "sources": [chunk()]}
    text = json.dumps(record)
    for name, raw in fields.items():
        if name in record:
            text = text.replace(f'"{name}": {json.dumps(record[name])}', f'"{name}": {raw}', 1)
        else:
            old = f'"{name}": {json.dumps(chunk()[name])}'
            text = text.replace(old, f'"{name}": {raw}', 1)
    return text.encode()


CASES_5 = {
    "400-digit score": (_turn_text(similarity_score=BIG), "sources[0].similarity_score"),
    "negative 400-digit score": (
        _turn_text(similarity_score="-" + BIG),
        "sources[0].similarity_score",
    ),
    "400-digit ordinal": (_turn_text(ordinal=BIG), "sources[0].ordinal"),
    "nested 100k deep": (_turn_text(sources=DEEP), None),
    "a deep line": (DEEP.encode(), None),
    "not UTF-8": (
        _turn_text(title='"\xe9t"').replace("\xe9".encode(), b"\xe9"),
        "sources[0].title",
    ),
    "lone surrogate title": (_turn_text(title='"\\ud800"'), "sources[0].title"),
    "lone surrogate path": (_turn_text(path='"a\\udfff.md"'), "sources[0].path"),
    "lone surrogate content": (_turn_text(content='"\\udc80"'), "sources[0].content"),
    "lone surrogate hash": (_turn_text(hash='"\\ud800"'), "sources[0].hash"),
    "lone surrogate question": (_turn_text(question='"\\ud800"'), "question"),
    "lone surrogate answer": (_turn_text(answer='"\\ud800"'), "answer"),
    "lone surrogate id": (_turn_text(id='"\\ud800"'), "id"),
}


@pytest.mark.parametrize(("line", "field"), CASES_5.values(), ids=list(CASES_5))
def test_item5_sources_frame_turns_raw_exceptions_into_schema_errors(
    tmp_path: Path, line: bytes, field: str | None
) -> None:
    """Hardening item 5: a 400-digit number, nesting 100k deep (or just short of
    Python's limit), bytes that are not UTF-8 and a lone surrogate escape give a
    SchemaError naming file, line and field from a JSONL log (strict), and one
    reported, skipped line in lenient mode that never aborts the load; a .json
    file of one such payload is one reported record. Both paths agree."""
    path = write_lines(tmp_path / "log.jsonl", [good_line("g1"), line, good_line("g3")])
    strict = both_paths(lambda: outcome(lambda: sources_frame(path)))
    same_outcome(*strict)
    err = strict[0]
    assert isinstance(err, SchemaError)
    assert (err.file, err.line, err.field) == (str(path), 2, field)
    assert str(err).startswith(f"{path}:2: ")

    lenient = both_paths(lambda: sources_frame(path, strict=False))
    same_outcome(*lenient)
    loaded = lenient[0]
    assert (loaded.records, loaded.records_loaded) == (3, 2)
    assert loaded.errors[["line", "field"]].values.tolist() == [[2, field or ""]]
    assert loaded.frame["turn_id"].unique().tolist() == ["g1", "g3"]

    single = tmp_path / "payload.json"
    single.write_bytes(line)
    err = outcome(lambda: sources_frame(single))
    assert isinstance(err, SchemaError)
    assert err.file == str(single)
    one = sources_frame(single, strict=False)
    assert (one.records, one.records_loaded, len(one.errors)) == (1, 0, 1)


def _parse_limit() -> int:
    """The deepest list ``json.loads`` reads from this stack depth."""
    low, high = 1, 5_000
    while low < high:
        mid = (low + high + 1) // 2
        try:
            json.loads("[" * mid + "]" * mid)
        except RecursionError:
            high = mid - 1
        else:
            low = mid
    return low


@pytest.mark.parametrize("where", ["sources", "question", "title", "line"])
def test_item5_values_nested_near_the_recursion_limit_are_schema_errors(
    tmp_path: Path, where: str
) -> None:
    """Hardening item 5: a value nested just short of what Python's JSON parser
    reads (so that printing it in an error would recurse too deep) and just past
    it: every depth gives a SchemaError at the right line, or a reported skip."""
    limit = _parse_limit()
    for depth in range(limit - 25, limit + 3, 2):
        nested = "[" * depth + "]" * depth
        line = nested.encode() if where == "line" else _turn_text(**{where: nested})
        path = write_lines(tmp_path / "log.jsonl", [good_line("g1"), line, good_line("g3")])
        err = outcome(lambda path=path: sources_frame(path))
        assert isinstance(err, SchemaError), depth
        assert (err.file, err.line) == (str(path), 2), depth
        str(err)  # renders
        loaded = sources_frame(path, strict=False)
        assert (loaded.records, loaded.records_loaded, loaded.errors["line"].tolist()) == (
            3,
            2,
            [2],
        ), depth


def _deep(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


IN_MEMORY_5 = {
    "400-digit score": (chunk(similarity_score=10**400), "sources[0].similarity_score"),
    "5000-digit ordinal": (chunk(ordinal=10**5000), "sources[0].ordinal"),
    "title nested 100k deep": (chunk(title=_deep(100_000)), "sources[0].title"),
    "lone surrogate text": (chunk(content="x\ud800"), "sources[0].content"),
}


@pytest.mark.parametrize(("source", "field"), IN_MEMORY_5.values(), ids=list(IN_MEMORY_5))
def test_item5_sources_frame_of_decoded_records_reports_one_bad_record(
    source: dict[str, Any], field: str
) -> None:
    """Hardening item 5: decoded records in memory holding a number float64
    cannot hold, an ordinal too long to print, a value nested 100k deep or a lone
    surrogate are refused (strict, naming item and field) or reported and skipped
    (lenient), the other records loaded."""
    records = [{"sources": [chunk()]}, {"sources": [source]}, {"sources": [chunk()]}]
    with pytest.raises(SchemaError) as info:
        sources_frame(records)
    assert (info.value.line, info.value.field) == (2, field)
    str(info.value)  # renders
    compiled, pure = both_paths(lambda: sources_frame(records, strict=False))
    same_outcome(compiled, pure)
    assert (compiled.records, compiled.records_loaded) == (3, 2)
    assert compiled.errors[["line", "field"]].values.tolist() == [[2, field]]
    assert compiled.frame["turn_id"].tolist() == ["turn-1", "turn-3"]


def _source(**over: Any) -> AskSource:
    values: dict[str, Any] = {
        "path": VaultPath("a.md"),
        "heading": "H",
        "date": None,
        "score": 0.5,
        "text": "t",
        "ordinal": 1,
        "hash": "h",
        "title": "H",
    }
    values.update(over)
    return AskSource(**values)


HAND_BUILT_5 = {
    "path": (Turn("q", "a", [_source(path=VaultPath("a\ud800.md"))]), "sources[0].path"),
    "heading": (Turn("q", "a", [_source(heading="\udfff")]), "sources[0].heading"),
    "text": (Turn("q", "a", [_source(), _source(text="x\ud800")]), "sources[1].text"),
    "hash": (Turn("q", "a", [_source(hash="\ud800")]), "sources[0].hash"),
    "title": (Turn("q", "a", [_source(title="\ud800")]), "sources[0].title"),
    "question": (Turn("q\ud800", "a", [_source()]), "question"),
    "answer": (Turn("q", "[1] \ud800", [_source()]), "answer"),
}


@pytest.mark.parametrize(("turn", "field"), HAND_BUILT_5.values(), ids=list(HAND_BUILT_5))
def test_item5_hand_built_turns_with_a_lone_surrogate_are_refused(turn: Turn, field: str) -> None:
    """Hardening item 5: a lone surrogate in a hand-built turn or source (no wire
    validator saw it) is refused with a SchemaError naming the turn and field, or
    reported and skipped in lenient mode, on both paths; no UnicodeEncodeError."""
    turns = [Turn("q", "a", [_source()]), turn, Turn("q", "b", [_source()])]
    strict = both_paths(lambda: outcome(lambda: sources_frame(turns)))
    same_outcome(*strict)
    assert isinstance(strict[0], SchemaError)
    assert (strict[0].line, strict[0].field) == (2, field)
    assert "lone surrogate" in strict[0].message
    lenient = both_paths(lambda: sources_frame(turns, strict=False))
    same_outcome(*lenient)
    assert lenient[0].errors[["line", "field"]].values.tolist() == [[2, field]]
    assert lenient[0].frame["turn_id"].tolist() == ["turn-1", "turn-3"]
    one = outcome(lambda: sources_frame(turn))
    assert isinstance(one, SchemaError)
    assert one.field == field


#: JSON texts that once escaped as raw exceptions, and a few ordinary ones.
NASTY = st.sampled_from(
    [
        BIG,
        "-" + BIG,
        "1e400",
        "NaN",
        "-Infinity",
        DEEP,
        NEAR_LIMIT,
        '"\\ud800"',
        '"a\\udfffb"',
        '"\\ud83d\\ude00"',  # a valid pair
        "null",
        "true",
        "[]",
        "{}",
        '"2026-02-30"',
        "-1",
        "0",
        '"x"',
    ]
)
NASTY_FIELDS = st.sampled_from(
    [
        "id",
        "question",
        "answer",
        "sources",
        "path",
        "title",
        "date",
        "content",
        "hash",
        "similarity_score",
        "ordinal",
        "extra",
    ]
)


@st.composite
def nasty_logs(draw: st.DrawFn) -> list[bytes]:
    lines = []
    for _ in range(draw(st.integers(1, 5))):
        replaced = draw(st.dictionaries(NASTY_FIELDS, NASTY, max_size=2))
        raw_bytes = draw(st.sampled_from([None, *NOT_UTF8]))
        line = _turn_text(**{k: v for k, v in replaced.items() if k != "extra"})
        if "extra" in replaced:
            line = line[:-1] + b', "extra": ' + replaced["extra"].encode() + b"}"
        if raw_bytes is not None and draw(st.booleans()):
            line = line.replace(b'"q"', b'"q' + raw_bytes + b'"', 1)
        lines.append(line)
    return lines


@_SETTINGS
@given(lines=nasty_logs())
def test_item5_property_only_schema_errors_counts_add_up_paths_agree(
    tmp_path: Path, lines: list[bytes]
) -> None:
    """Hardening item 5: turn lines whose fields hold 400-digit numbers, NaN,
    nesting 100k deep, lone surrogates, bytes that are not UTF-8 or ordinary
    values: only SchemaError comes out, strict or lenient; lenient loaded +
    skipped equals the lines and every skipped line is named; strict raises
    exactly when lenient skips, at the first skipped line; both paths agree."""
    path = write_lines(tmp_path / "log.jsonl", lines)
    lenient = both_paths(lambda: sources_frame(path, strict=False))
    same_outcome(*lenient)
    loaded = lenient[0]
    assert loaded.records == len(lines)
    assert loaded.records_loaded + len(loaded.errors) == len(lines)
    skipped = loaded.errors["line"].tolist()
    assert len(set(skipped)) == len(skipped)
    assert set(loaded.frame["line"].tolist()).isdisjoint(skipped)
    assert (loaded.errors["file"] == str(path)).all()
    assert loaded.frame.to_dict() is not None  # every string decodes

    strict = both_paths(lambda: outcome(lambda: sources_frame(path)))
    same_outcome(*strict)
    if skipped:
        assert isinstance(strict[0], SchemaError)
        assert strict[0].line == min(skipped)
    else:
        pd.testing.assert_frame_equal(strict[0], loaded.frame)


NASTY_VALUES = st.one_of(
    st.integers(min_value=-(10**400), max_value=10**400),
    st.floats(),
    st.text(
        alphabet=st.characters(min_codepoint=0xD7F0, max_codepoint=0xE010, exclude_categories=()),
        max_size=3,
    ),
    st.sampled_from([None, True, [], {}, _deep(2_000), "2026-04-08", "x"]),
)


@st.composite
def nasty_records(draw: st.DrawFn) -> list[dict[str, Any]]:
    records = []
    for _ in range(draw(st.integers(1, 5))):
        source = chunk()
        source.update(
            draw(st.dictionaries(st.sampled_from(sorted(chunk())), NASTY_VALUES, max_size=2))
        )
        record: dict[str, Any] = {"id": "t", "question": "q", "answer": "a", "sources": [source]}
        record.update(
            draw(
                st.dictionaries(
                    st.sampled_from(["id", "question", "answer"]), NASTY_VALUES, max_size=1
                )
            )
        )
        records.append(record)
    return records


@settings(max_examples=80, deadline=None)
@given(records=nasty_records())
def test_item5_property_decoded_records_only_schema_errors_and_paths_agree(
    records: list[dict[str, Any]],
) -> None:
    """Hardening item 5: decoded records whose fields hold huge integers, any
    float, lone surrogates, deep lists or ordinary values: only SchemaError comes
    out; lenient loaded + skipped equals the records; strict raises exactly when
    lenient skips; both paths agree."""
    lenient = both_paths(lambda: sources_frame(records, strict=False))
    same_outcome(*lenient)
    loaded = lenient[0]
    assert loaded.records_loaded + len(loaded.errors) == len(records)
    assert loaded.frame.to_dict() is not None
    strict = both_paths(lambda: outcome(lambda: sources_frame(records)))
    same_outcome(*strict)
    assert isinstance(strict[0], SchemaError) == (len(loaded.errors) > 0)


def test_a_lone_cr_is_whitespace_inside_a_line_not_a_line_break(tmp_path: Path) -> None:
    """Hardening item 5: lines end at LF on both paths, so the record counts agree."""
    log = tmp_path / "cr.jsonl"
    turn = {"id": "q1", "question": "q", "answer": "", "sources": [chunk()]}
    log.write_bytes(json.dumps(turn).replace(", ", ",\r", 1).encode() + b"\n\x00\r\x00\n")
    saved = kernels.ENABLED
    try:
        for enabled in (True, False):
            kernels.ENABLED = enabled
            loaded = sources_frame(log, strict=False)
            assert loaded.records == 2  # the turn, and one bad line (not two)
            assert len(loaded.frame) == 1
            assert list(loaded.errors["line"]) == [2]
    finally:
        kernels.ENABLED = saved
