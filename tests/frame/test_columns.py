"""The columnar JSONL path agrees exactly with AskSource.from_chunk (hypothesis)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from askkit import AskSource, ChunkResult, VaultPath
from askkit.frame import sources_frame
from askkit.frame.columns import headings, map_paths, match_headings, path_parts, valid_dates
from askkit.frame.jsonl import read_columnar
from askkit.wire import check_wire_date
from tests import strategies as st_kimun

INT64_MAX = 2**63 - 1

#: Each test runs with the compiled kernels and with the numpy paths.
pytestmark = pytest.mark.usefixtures("kernel_paths")

#: Plain paths exercise the Arrow-only branch of the path mapping; tricky ones the VaultPath one.
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


def _write(path: Path, turns: list[list[ChunkResult]], *, ascii_only: bool) -> None:
    lines = []
    for i, turn in enumerate(turns):
        record = {"id": f"t{i}", "sources": [c.to_dict() for c in turn]}
        for c, d in zip(turn, record["sources"], strict=True):
            if c.ordinal == 0:
                del d["ordinal"]  # an older server omits it
        lines.append(json.dumps(record, ensure_ascii=ascii_only))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(turns=turn_lists, ascii_only=st.booleans())
def test_columnar_path_equals_from_chunk(
    tmp_path: Path, turns: list[list[ChunkResult]], ascii_only: bool
) -> None:
    path = tmp_path / "log.jsonl"
    _write(path, turns, ascii_only=ascii_only)
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
    # and the whole frame equals the object path's
    objects = sources_frame({f"t{i}": _turn(t) for i, t in enumerate(turns)})
    pd.testing.assert_frame_equal(
        df.drop(columns="line"), objects.drop(columns="line"), check_exact=True
    )
    # lossless back to objects, up to kimun's own printing ambiguity (a leading blank
    # component prints like nothing or like the absolute marker; see VaultPath.from_printed)
    reprinted = [dataclasses.replace(s, path=VaultPath.from_printed(str(s.path))) for s in expected]
    assert list(df.ask.sources()) == reprinted


def _turn(chunks: list[ChunkResult]) -> object:
    from askkit import Turn

    return Turn("", "", AskSource.from_chunks(chunks))


@given(st.lists(st.tuples(st_kimun.titles, st_kimun.dates), max_size=30))
def test_headings_kernel_matches_heading_from_title(rows: list[tuple[str, str | None]]) -> None:
    titles = pa.array([t for t, _ in rows], pa.string())
    dates = pa.array([d for _, d in rows], pa.string())
    got = headings(titles, dates).to_pylist()
    sources = [AskSource.from_chunk(0, ChunkResult("a.md", t, d, "", "", 0.0)) for t, d in rows]
    assert got == [s.heading for s in sources]
    assert match_headings(pa.array(got, pa.string())).to_pylist() == [
        s.match_heading() for s in sources
    ]


@given(st.lists(any_paths, max_size=30))
def test_path_kernels_match_vault_path(raw: list[str]) -> None:
    printed, note, folder = (c.to_pylist() for c in map_paths(pa.array(raw, pa.string())))
    assert printed == [str(VaultPath(p)) for p in raw]
    assert note == [VaultPath(p).stem for p in raw]
    assert folder == [VaultPath(p).folder for p in raw]
    again = [c.to_pylist() for c in path_parts(pa.array(printed, pa.string()))]
    assert again == [
        [VaultPath.from_printed(p).stem for p in printed],
        [VaultPath.from_printed(p).folder for p in printed],
    ]


def _wire_ok(value: str) -> bool:
    try:
        check_wire_date(value)
    except ValueError:
        return False
    return True


@given(
    st.lists(
        st.one_of(
            st.dates(min_value=dt.date(1, 1, 1)).map(lambda d: d.isoformat()),
            st.from_regex(r"[0-9]{1,5}-[0-9]{1,2}-[0-9]{1,3}", fullmatch=True),
            st.sampled_from(
                [
                    "0000-01-01",
                    "0000-02-29",
                    "0100-02-29",
                    "2026-02-29",
                    "2024-02-29",
                    "26-04-08",
                    "",
                ]
            ),
        ),
        max_size=20,
    )
)
def test_date_validation_matches_check_wire_date(values: list[str]) -> None:
    got = valid_dates(pa.chunked_array([pa.array(values, pa.string())])).to_pylist()
    assert got == [_wire_ok(v) for v in values]


@pytest.mark.parametrize(
    ("title", "date", "heading"),
    [
        ("2026-04-08\x1fAfternoon", "2026-04-08", "Afternoon"),
        ("\x1f Section", None, " Section"),  # Rust trim keeps the space after U+001F
        ("A\x1f\x1fB", None, "A › B"),
        ("\u3000 2026-04-08 \x1fX", "2026-04-08", "X"),
        ("Chapter\x1fSection\x1fSub", None, "Chapter › Section › Sub"),
        ("\u200bA", None, "\u200bA"),  # U+200B is not White_Space
        ("2026-04-08", "2026-04-08", ""),
        ("", None, ""),
    ],
)
def test_headings_edge_cases(title: str, date: str | None, heading: str) -> None:
    got = headings(pa.array([title], pa.string()), pa.array([date], pa.string()))
    assert got.to_pylist() == [heading]
