"""The frame's fast paths (compiled and numpy) agree with the exact definitions.

Each fast path (per-row cuts, plain paths, headings, match headings, citations,
per-turn statistics) is checked against the Python definition on random input
shaped so the fast path is taken, across chunk boundaries and sliced arrays.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from askkit import AskSource, ChunkResult, VaultPath
from askkit.citations import scan
from askkit.frame import _arrow_bytes as ab
from askkit.frame.columns import (
    _dates_ns,
    _headings_bytes,
    _plain_parts_bytes,
    _score_stats,
    cited_ordinals,
    headings,
    headings_and_matches,
    map_paths,
    match_headings,
)

#: Each test runs with the compiled kernels and with the numpy paths.
pytestmark = pytest.mark.usefixtures("kernel_paths")


def _chunked(values: list[str | None], cut: int, *, sliced: bool) -> pa.ChunkedArray:
    """``values`` in two chunks split at ``cut``; ``sliced`` makes each a slice of a larger
    array, so offsets do not start at zero and data lies around the rows."""
    cut = min(cut, len(values))
    parts = [values[:cut], values[cut:]]
    if sliced:
        return pa.chunked_array(
            [pa.array(["x/y.md", *p, "zz"], pa.string()).slice(1, len(p)) for p in parts],
            pa.string(),
        )
    return pa.chunked_array([pa.array(p, pa.string()) for p in parts], pa.string())


# --------------------------------------------------------------------------- substrings


@given(
    st.lists(st.text(alphabet="ab é€\U0001f600\x1f", max_size=30), max_size=40),
    st.randoms(use_true_random=False),
)
def test_substrings_cut_each_row_at_its_own_range(values: list[str], rnd: object) -> None:
    arr = pa.array(["pad", *values], pa.string()).slice(1)
    offsets, _data = ab.offsets_and_data(arr)
    bounds = []
    for value in values:  # a random cut on character boundaries
        i = rnd.randint(0, len(value))  # type: ignore[attr-defined]
        j = rnd.randint(i, len(value))  # type: ignore[attr-defined]
        bounds.append((i, j, len(value[:i].encode()), len(value[:j].encode())))
    lo = offsets[:-1] + np.array([b[2] for b in bounds], np.int64)
    hi = offsets[:-1] + np.array([b[3] for b in bounds], np.int64)
    got = ab.substrings(arr, lo, hi).to_pylist()
    assert got == [v[i:j] for v, (i, j, _, _) in zip(values, bounds, strict=True)]


def test_substrings_near_the_end_of_the_buffer() -> None:
    arr = pa.array(["abcdefghijklmnopq", "xy", "z"], pa.string())
    offsets, _ = ab.offsets_and_data(arr)
    got = ab.substrings(arr, offsets[:-1] + np.array([3, 1, 0]), offsets[1:])
    assert got.to_pylist() == ["defghijklmnopq", "y", "z"]
    assert ab.substrings(arr, offsets[:0], offsets[:0]).to_pylist() == []


# --------------------------------------------------------------------------- paths

plain_part = st.text(alphabet="abcnlopruxtm019_-", min_size=1, max_size=6)
plain_paths = st.lists(
    st.lists(plain_part, min_size=1, max_size=3).map(".".join), min_size=1, max_size=4
).map("/".join)
device_paths = st.sampled_from(
    ["con", "con.md", "a/prn/b.md", "aux.x/y", "nul", "com1.md", "lpt9/x", "comx.md", "con1"]
)


@given(
    st.lists(st.one_of(plain_paths, device_paths), max_size=30),
    st.integers(0, 30),
    st.booleans(),
)
def test_plain_paths_are_cut_like_vault_path(raw: list[str], cut: int, sliced: bool) -> None:
    col = _chunked(list(raw), cut, sliced=sliced)
    printed, note, folder = (c.to_pylist() for c in map_paths(col))
    assert printed == [str(VaultPath(p)) for p in raw]
    assert note == [VaultPath(p).stem for p in raw]
    assert folder == [VaultPath(p).folder for p in raw]


def test_plain_path_fast_path_is_taken_only_when_safe() -> None:
    plain = pa.chunked_array(
        [["journal/2026-04-08.md", "a.md", "x/y.z/w", "contacts/con1x.md", "lpt/comx.md"]]
    )
    assert _plain_parts_bytes(plain) is not None
    for other in ["Journal/a.md", "a//b.md", "con.md", "a/lpt1", ".a", "a/", "a..b", "é.md", ""]:
        assert _plain_parts_bytes(pa.chunked_array([["a.md", other]])) is None, other
    assert _plain_parts_bytes(pa.chunked_array([["a.md", None]], pa.string())) is None


# --------------------------------------------------------------------------- headings

plain_titles = st.lists(
    st.text(alphabet="ab é€›\t", min_size=1, max_size=5).map(lambda s: f"x{s}y"),
    min_size=1,
    max_size=4,
).map("\x1f".join)


@st.composite
def titled_rows(draw: st.DrawFn) -> tuple[str, str | None]:
    date = draw(st.one_of(st.none(), st.sampled_from(["2026-04-08", "0026-12-31"])))
    title = draw(plain_titles)
    if date is not None and draw(st.booleans()):
        title = date + draw(st.sampled_from(["\x1f", "", " ", " \t\x1f", "x"])) + title
    return title, date


@given(st.lists(titled_rows(), max_size=30), st.integers(0, 30), st.booleans())
def test_headings_fast_path_equals_from_chunk(
    rows: list[tuple[str, str | None]], cut: int, sliced: bool
) -> None:
    titles = _chunked([t for t, _ in rows], cut, sliced=sliced)
    dates = _chunked([d for _, d in rows], cut, sliced=False)
    sources = [AskSource.from_chunk(0, ChunkResult("a.md", t, d, "", "", 0.0)) for t, d in rows]
    fast = _headings_bytes(titles, dates)
    if "\x1f\x1f" not in "".join(t for t, _ in rows):
        assert fast is not None
    assert headings(titles, dates).to_pylist() == [s.heading for s in sources]
    heading, match = headings_and_matches(titles, dates)
    assert heading.to_pylist() == [s.heading for s in sources]
    assert match.to_pylist() == [s.match_heading() for s in sources]


def test_headings_fast_path_steps_aside_for_whitespace_ends() -> None:
    for title in [" a", "a ", "\u3000a", "a\u00a0", "a\x1f\x1fb"]:
        col = pa.chunked_array([[title]])
        assert _headings_bytes(col, pa.chunked_array([[None]], pa.string())) is None, title


@given(
    st.lists(
        st.lists(st.sampled_from([" › ", "›", " ", "a", "é", "\x1f"]), max_size=6).map("".join)
    ),
    st.integers(0, 10),
    st.booleans(),
)
def test_match_headings_equals_rpartition(values: list[str], cut: int, sliced: bool) -> None:
    got = match_headings(_chunked(values, cut, sliced=sliced)).to_pylist()
    assert got == [v.rpartition(" › ")[2] if " › " in v else v for v in values]


# --------------------------------------------------------------------------- citations

answers = st.lists(
    st.lists(
        st.one_of(
            st.sampled_from(["[", "]", "[[", "]]", "[1]", "[02]", "[0]", "é", " ", "x", "[]"]),
            st.integers(0, 2**70).map(lambda n: f"[{n}]"),
            st.integers(0, 2**64).map(lambda n: f"[{n:030d}]"),  # leading zeros, long
        ),
        max_size=8,
    ).map("".join),
    max_size=12,
)


@given(answers, st.booleans())
def test_cited_ordinals_equal_scan(texts: list[str], sliced: bool) -> None:
    arr = pa.array(["[5]", *texts], pa.string()).slice(1) if sliced else texts
    turns, numbers = cited_ordinals(arr)
    got = set(zip(turns.tolist(), numbers.tolist(), strict=True))
    want = {(i, c.index) for i, t in enumerate(texts) for c in scan(t) if 0 < c.index < 2**63}
    assert got == want


# --------------------------------------------------------------------------- statistics


@given(
    st.lists(
        st.lists(st.sampled_from([0.1, 0.2, 0.7, 1.0, -3.5, 1e-300]), min_size=1, max_size=6),
        max_size=8,
    )
)
def test_score_stats_equal_pandas_groupby(turns: list[list[float]]) -> None:
    key = np.repeat(np.arange(len(turns)), [len(t) for t in turns]).astype(np.int64)
    score = np.array([s for t in turns for s in t], np.float64)
    stats = _score_stats(key, score)
    grouped = pd.Series(score).groupby(key)
    np.testing.assert_allclose(stats["score_gap"], grouped.transform("max") - score)
    np.testing.assert_array_equal(
        stats["score_rank"], grouped.rank(method="min", ascending=False).astype(int)
    )
    low, high = grouped.transform("min"), grouped.transform("max")
    assert (stats["score_z"][(low == high).to_numpy()] == 0).all()  # no spread: exactly 0
    mean, std = grouped.transform("mean"), grouped.transform(lambda s: s.std(ddof=0))
    spread = (low < high).to_numpy()
    np.testing.assert_allclose(
        stats["score_z"][spread], ((score - mean) / std).to_numpy()[spread], atol=1e-12
    )


def test_equal_scores_have_zero_z_despite_rounding() -> None:
    key = np.zeros(3, np.int64)
    stats = _score_stats(key, np.array([0.1, 0.1, 0.1]))  # their mean is not exactly 0.1
    assert stats["score_z"].tolist() == [0.0, 0.0, 0.0]


def test_match_heading_of_a_joiner_next_to_a_guillemet() -> None:
    titles = pa.chunked_array([["a\x1f› b", "a\x1fb", "x ›\x1fy"]])
    dates = pa.chunked_array([[None, None, None]], pa.string())
    heading, match = headings_and_matches(titles, dates)
    sources = [
        AskSource.from_chunk(0, ChunkResult("a.md", t, None, "", "", 0.0))
        for t in titles.to_pylist()
    ]
    assert heading.to_pylist() == ["a › › b", "a › b", "x › › y"]
    assert match.to_pylist() == [s.match_heading() for s in sources] == ["b", "b", "y"]


@given(
    st.lists(
        st.one_of(
            st.none(),
            st.dates(min_value=dt.date(1, 1, 1)).map(lambda d: d.isoformat()),
            st.sampled_from(["1677-09-21", "1677-09-22", "2262-04-11", "2262-04-12"]),
        ),
        max_size=30,
    ),
    st.integers(0, 30),
)
def test_dates_are_read_from_the_digits(values: list[str | None], cut: int) -> None:
    got = _dates_ns(_chunked(values, cut, sliced=False))
    low, high = np.datetime64("1677-09-22"), np.datetime64("2262-04-11")
    want = [
        np.datetime64(v, "ns") if v is not None and low <= np.datetime64(v) <= high else None
        for v in values
    ]
    assert got.dtype == np.dtype("datetime64[ns]")
    assert [None if np.isnat(g) else g for g in got] == want
