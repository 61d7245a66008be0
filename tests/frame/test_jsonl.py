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

from askkit import AskSource, ChunkResult, Turn, VaultPath
from askkit.citations import scan
from askkit.frame import sources_frame
from askkit.frame.jsonl import _count_lines, read_columnar
from tests import strategies as st_kimun

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


# --------------------------------------------------------------------------- lines


@pytest.mark.parametrize("text", ["", "a", "a\n", "a\n\nb", "\n", "x\n" * 700_000 + "tail"])
def test_lines_are_counted(tmp_path: Path, text: str) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text(text, encoding="utf-8")
    assert _count_lines(path) == len(text.splitlines())
