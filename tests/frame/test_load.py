"""askkit.frame.load: every input shape, derived columns, round trips, strict and lenient modes.

The JSONL reader itself is tested in test_jsonl.py, the schema in test_schema.py.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from askkit import AskSource, ChunkResult, SchemaError, Turn, VaultPath
from askkit.citations import scan
from askkit.frame import sources_frame, to_sources, to_turns
from askkit.payloads import read_turn
from tests.conftest import load
from tests.frame.conftest import assert_schema, chunk, jsonl
from tests.probe import HEAVY, loaded_after

# --------------------------------------------------------------------------- inputs


@pytest.mark.parametrize(
    "empty",
    [[], (), {"chunks": [], "query_time_ms": 1}, Turn("q", "a"), {"question": "q", "sources": []}],
    ids=["list", "tuple", "embeddings", "turn", "record"],
)
def test_empty_input_gives_the_full_schema(empty: Any) -> None:
    df = sources_frame(empty)
    assert df.empty
    assert_schema(df)


def test_dtypes_on_sample(data_dir: Path) -> None:
    df = sources_frame(data_dir / "turns.jsonl")
    assert_schema(df)
    assert len(df) > 100
    assert df["date"].isna().any()
    assert df["date"].notna().any()


def _objects_of(df: pd.DataFrame) -> list[tuple[Any, ...]]:
    return list(zip(df["ordinal"], df["heading"], df["path"], df["score"], strict=True))


def test_every_input_shape_agrees(data_dir: Path, tmp_path: Path) -> None:
    payload = load("embeddings.json")
    chunks = [ChunkResult.from_dict(c) for c in payload["chunks"]]
    sources = list(AskSource.from_chunks(chunks))
    turn = Turn("q", "", AskSource.from_chunks(chunks))
    as_jsonl = jsonl(tmp_path, [{"id": "x", "question": "q", "chunks": payload["chunks"]}])
    as_bare = jsonl(tmp_path, payload["chunks"], "bare.jsonl")
    frames = [
        sources_frame(payload),
        sources_frame(payload["chunks"]),
        sources_frame(chunks),
        sources_frame(sources),
        sources_frame(turn),
        sources_frame([turn]),
        sources_frame(data_dir / "embeddings.json"),
        sources_frame(str(as_jsonl)),
        sources_frame(as_bare),
    ]
    expected = [(s.ordinal, s.heading, str(s.path), s.score) for s in sources]
    for df in frames:
        assert _objects_of(df) == expected
        assert_schema(df)


def test_answer_job_and_turn_record_agree(data_dir: Path) -> None:
    job = sources_frame(data_dir / "answer_job.json")
    record = sources_frame(data_dir / "sample_turn.json")
    cols = ["ordinal", "rank", "heading", "score", "cited", "score_rank", "score_z"]
    pd.testing.assert_frame_equal(job[cols], record[cols])
    assert job["turn_id"].unique().tolist() == ["answer_job"]  # no id: the file stem
    assert record["turn_id"].unique().tolist() == ["q-starter"]


def test_turn_ids(tmp_path: Path) -> None:
    path = jsonl(tmp_path, [{"id": "a", "sources": [chunk()]}, {"sources": [chunk()]}])
    assert sources_frame(path)["turn_id"].tolist() == ["a", "log.jsonl:2"]
    turns = [Turn("q1", "", AskSource.from_chunks([ChunkResult.from_dict(chunk())]))] * 2
    assert sources_frame(turns)["turn_id"].tolist() == ["turn-1", "turn-2"]
    assert sources_frame({"k": turns[0]})["turn_id"].tolist() == ["k"]


def test_several_files(tmp_path: Path) -> None:
    a = jsonl(tmp_path, [{"sources": [chunk()]}], "a.jsonl")
    b = jsonl(tmp_path, [{"sources": [chunk(), chunk(ordinal=2)]}], "b.jsonl")
    df = sources_frame([a, b])
    assert df["turn_id"].tolist() == ["a.jsonl:1", "b.jsonl:1", "b.jsonl:1"]
    assert df.index.tolist() == [0, 1, 2]


def test_unknown_input_type() -> None:
    with pytest.raises(TypeError, match="cannot read a int"):
        sources_frame(42)


# --------------------------------------------------------------------------- values


@pytest.mark.usefixtures("kernel_paths")
@pytest.mark.parametrize(
    ("title", "date", "path", "heading", "match", "note", "folder"),
    [
        (
            "2026-04-08\x1fAfternoon",
            "2026-04-08",
            "journal/2026-04-08.md",
            "Afternoon",
            "Afternoon",
            "2026-04-08",
            "journal",
        ),
        ("A\x1fB\x1fC", None, "Projects/Deep/Note.md", "A › B › C", "C", "note", "projects/deep"),
        ("A\x1f\x1fB", None, "a//b.md", "A › B", "B", "b", "a"),
        ("\x1f Section", None, "x.md", " Section", " Section", "x", ""),
        ("2026-04-08", "2026-04-08", "journal/2026-04-08.md", "", "", "2026-04-08", "journal"),
        ("Head › Tail\x1fLast", None, "../up.md", "Head › Tail › Last", "Last", "up", ""),
    ],
    ids=["journal", "nested", "empty-segment", "rust-trim", "date-only", "joiner-in-heading"],
)
def test_from_chunk_values(
    tmp_path: Path,
    title: str,
    date: str | None,
    path: str,
    heading: str,
    match: str,
    note: str,
    folder: str,
) -> None:
    wire = chunk(title=title, date=date, path=path)
    src = AskSource.from_chunk(0, ChunkResult.from_dict(wire))
    for df in (sources_frame([wire]), sources_frame(jsonl(tmp_path, [wire]))):
        row = df.iloc[0]
        assert row["heading"] == heading == src.heading
        assert row["match_heading"] == match == src.match_heading()
        assert row["path"] == str(src.path)
        assert row["note"] == note
        assert row["folder"] == folder
        assert row["is_journal"] == (date is not None)
        assert (row["date"] == pd.Timestamp(date)) if date else pd.isna(row["date"])


def test_missing_ordinal_uses_position(data_dir: Path) -> None:
    old = sources_frame(data_dir / "embeddings_old_server.json")
    assert old["ordinal"].tolist() == [1, 2, 3, 4]
    assert old["rank"].tolist() == [1, 2, 3, 4]


@pytest.mark.usefixtures("kernel_paths")
def test_date_outside_nanoseconds_is_nat_but_kept(tmp_path: Path) -> None:
    wire = chunk(path="journal/0026-04-08.md", title="0026-04-08", date="0026-04-08")
    df = sources_frame(jsonl(tmp_path, [wire]))
    assert pd.isna(df["date"].iloc[0])
    assert df["wire_date"].iloc[0] == "0026-04-08"
    assert bool(df["is_journal"].iloc[0])
    assert to_sources(df)[0].date == "0026-04-08"


@pytest.mark.usefixtures("kernel_paths")
def test_text_chars_counts_code_points(tmp_path: Path) -> None:
    df = sources_frame(jsonl(tmp_path, [chunk(content="Café ☕")]))
    assert df["text_chars"].tolist() == [6]


# --------------------------------------------------------------------------- derived


@pytest.mark.usefixtures("kernel_paths")
@pytest.mark.parametrize(
    ("scores", "rank", "gap", "z"),
    [
        ([0.5], [1], [0.0], [0.0]),  # one source: no spread, z 0
        ([0.9, 0.5, 0.9], [1, 3, 1], [0.0, 0.4, 0.0], None),  # ties share the best rank
        ([0.7, 0.7], [1, 1], [0.0, 0.0], [0.0, 0.0]),  # all tied
        ([0.2, 0.8], [2, 1], [0.6, 0.0], [-1.0, 1.0]),  # population std (ddof=0)
    ],
    ids=["one", "tied", "all-tied", "two"],
)
def test_score_columns(
    scores: list[float], rank: list[int], gap: list[float], z: list[float] | None
) -> None:
    df = sources_frame([chunk(similarity_score=s, ordinal=i + 1) for i, s in enumerate(scores)])
    assert df["score_rank"].tolist() == rank
    np.testing.assert_allclose(df["score_gap"], gap)
    expected_z = z if z is not None else ((np.array(scores) - np.mean(scores)) / np.std(scores))
    np.testing.assert_allclose(df["score_z"], expected_z)


@pytest.mark.usefixtures("kernel_paths")
def test_score_columns_are_per_turn(data_dir: Path) -> None:
    df = sources_frame(data_dir / "turns.jsonl")
    for _, rows in df.groupby("turn_id", sort=False):
        assert rows["score_rank"].tolist() == (
            rows["score"].rank(method="min", ascending=False).astype(int).tolist()
        )
        np.testing.assert_allclose(rows["score_gap"], rows["score"].max() - rows["score"])
        std = rows["score"].std(ddof=0)
        z = (rows["score"] - rows["score"].mean()) / std if std > 0 else rows["score"] * 0
        np.testing.assert_allclose(rows["score_z"], z, atol=1e-12)


@pytest.mark.usefixtures("kernel_paths")
def test_cited_matches_scan_by_ordinal(data_dir: Path) -> None:
    df = sources_frame(data_dir / "turns.jsonl")
    assert df["cited"].any()
    assert not df["cited"].all()
    for _, rows in df.groupby("turn_id", sort=False):
        cited = {c.index for c in scan(rows["answer"].iloc[0])}
        assert rows["cited"].tolist() == [o in cited for o in rows["ordinal"]]


@pytest.mark.usefixtures("kernel_paths")
@pytest.mark.parametrize(
    ("answer", "cited"),
    [
        ("Fact [1] and [3].", [True, False, True]),
        ("Wikilink [[2]] only.", [False, False, False]),
        ("[[1][2]", [False, False, False]),  # kimun's scanner skips [2] here
        ("[0] [007]", [False, False, False]),
        ("[2]" + "[99999999999999999999999]", [False, True, False]),
        ("", [False, False, False]),
    ],
)
def test_cited_edge_cases(tmp_path: Path, answer: str, cited: list[bool]) -> None:
    record = {"answer": answer, "sources": [chunk(ordinal=i) for i in (1, 2, 3)]}
    assert sources_frame(record)["cited"].tolist() == cited
    assert sources_frame(jsonl(tmp_path, [record]))["cited"].tolist() == cited


def test_cited_pairs_by_ordinal_not_position(data_dir: Path) -> None:
    df = sources_frame(data_dir / "answer_job.json")
    turn = read_turn(data_dir / "answer_job.json")
    cited = set(turn.cited_ordinals())
    assert df["cited"].tolist() == [s.ordinal in cited for s in turn.sources]


# --------------------------------------------------------------------------- round trips


def test_to_sources_round_trip(data_dir: Path) -> None:
    turn = read_turn(data_dir / "answer_job.json")
    assert to_sources(sources_frame(turn)) == turn.sources


def test_to_sources_keeps_hand_built_sources() -> None:
    src = AskSource(VaultPath("a/ /b.md"), "Head › Tail", None, 0.25, "x", 3)  # no title
    back = to_sources(sources_frame([src]))
    assert back == (src,)
    assert back[0].title is None


def test_to_turns_round_trip(data_dir: Path) -> None:
    df = sources_frame(data_dir / "turns.jsonl")
    turns = to_turns(df)
    assert list(turns) == df["turn_id"].drop_duplicates().tolist()
    again = sources_frame(turns)
    pd.testing.assert_frame_equal(again.drop(columns="line"), df.drop(columns="line"))


def test_to_turns_refuses_ambiguous_ids(tmp_path: Path) -> None:
    path = jsonl(tmp_path, [{"id": "x", "sources": [chunk()]}, {"id": "x", "sources": [chunk()]}])
    with pytest.raises(SchemaError, match="more than one turn"):
        to_turns(sources_frame(path))


def test_to_sources_needs_a_sources_frame() -> None:
    with pytest.raises(SchemaError, match="not a sources frame"):
        to_sources(pd.DataFrame({"a": [1]}))


# --------------------------------------------------------------------------- bad input


def test_lenient_mode_on_good_input_reports_nothing(data_dir: Path) -> None:
    loaded = sources_frame(data_dir / "turns.jsonl", strict=False)
    assert loaded.errors.empty
    pd.testing.assert_frame_equal(loaded.frame, sources_frame(data_dir / "turns.jsonl"))
    assert loaded.records == 24


def test_lenient_in_memory_list() -> None:
    records = [{"sources": [chunk()]}, {"sources": [chunk(hash=5)]}, {"chunks": [chunk()]}]
    frame, errors = sources_frame(records, strict=False)
    assert frame["turn_id"].tolist() == ["turn-1", "turn-3"]
    assert errors[["line", "field", "value"]].values.tolist() == [[2, "sources[0].hash", "5"]]


def test_strict_in_memory_list_names_the_item() -> None:
    with pytest.raises(SchemaError) as info:
        sources_frame([{"sources": [chunk()]}, {"sources": [chunk(path=None)]}])
    assert info.value.line == 2
    assert info.value.field == "sources[0].path"


def test_bad_json_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text("{", encoding="utf-8")
    with pytest.raises(SchemaError, match="not valid JSON") as info:
        sources_frame(path)
    assert info.value.file == str(path)
    frame, errors = sources_frame(path, strict=False)
    assert frame.empty
    assert errors["file"].tolist() == [str(path)]


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(SchemaError, match="no such file"):
        sources_frame(tmp_path / "nope.jsonl")


def test_caller_frame_is_not_mutated(data_dir: Path) -> None:
    df = sources_frame(data_dir / "turns.jsonl")
    before = df.copy()
    df.ask.top(2)
    df.ask.by_note()
    df.ask.describe_scores()
    to_turns(df)
    pd.testing.assert_frame_equal(df, before)


def test_import_frame_is_light() -> None:
    statement = "import askkit.frame, pandas\nassert hasattr(pandas.DataFrame, 'ask')"
    assert loaded_after(statement, [*HEAVY, "dask"]) == set()


@given(st.lists(st.text(alphabet="aB/ .:\\\x00-", max_size=10), min_size=1, max_size=12))
@example([" /0/0", "/0/0", "a/b.md", "a/b.md"])  # a blank first component prints like "/0/0"
def test_note_and_folder_of_objects_equal_vault_path(kernel_paths: str, raws: list[str]) -> None:
    """From objects, plain paths are cut from the printed column and the rest
    computed once per (printed, absolute) pair: both equal ``VaultPath`` itself."""
    paths = [VaultPath(r) for r in raws]
    frame = sources_frame([AskSource(p, "H", None, 0.5, "t", i + 1) for i, p in enumerate(paths)])
    assert frame["path"].tolist() == [str(p) for p in paths]
    assert frame["note"].tolist() == [p.stem for p in paths]
    assert frame["folder"].tolist() == [p.folder for p in paths]


# --------------------------------------------------------------------------- the input rule

_READ_LOG = """
import sys
from askkit.errors import SchemaError
from askkit.frame import sources_frame
try:
    sources_frame(sys.argv[1], strict=sys.argv[2] == "strict")
except SchemaError as exc:
    print(f"{exc.file}\\t{exc.message}")
else:
    print("read")
"""


@pytest.mark.parametrize("strict", ["strict", "lenient"])
@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("log.jsonl fifo", "a FIFO (named pipe)"),
        ("log.json fifo", "a FIFO (named pipe)"),
        ("log fifo", "a FIFO (named pipe)"),
        ("/dev/zero", "a character device"),
        ("/dev/null", "a character device"),
        ("log.jsonl folder", "a folder"),
    ],
)
def test_a_log_that_is_not_a_regular_file_is_refused_naming_what_it_is(
    tmp_path: Path, name: str, kind: str, strict: str
) -> None:
    """The one input rule (askkit._files): never blocks on a FIFO, never reads a device.

    Run in a bounded child process: without the rule a FIFO blocks its reader
    and /dev/zero is read until memory runs out, which must fail this test,
    not hang it.
    """
    from tests.cli.bounded import run_python

    path = Path(name)
    if name.endswith(" fifo"):
        path = tmp_path / name.removesuffix(" fifo")
        os.mkfifo(path)
    elif name.endswith(" folder"):
        path = tmp_path / name.removesuffix(" folder")
        path.mkdir()
    out = run_python(_READ_LOG, str(path), strict, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout == f"{path}\tthe turn log file is {kind}, not a regular file; give a file\n"


def test_a_missing_log_says_so_naming_it(tmp_path: Path) -> None:
    for name in ("nope.jsonl", "nope.json"):
        with pytest.raises(
            SchemaError, match="cannot read the turn log file: no such file"
        ) as info:
            sources_frame(tmp_path / name)
        assert info.value.file == str(tmp_path / name)
