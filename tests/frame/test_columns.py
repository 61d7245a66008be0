"""askkit.frame.columns: every per-row rule against its Python definition.

Each rule (headings and match headings, paths, citations, per-turn score
statistics, dates, lengths) is checked on random input against
``AskSource.from_chunk``, ``VaultPath``, ``citations.scan`` or pandas, across
chunk boundaries and sliced arrays. The module runs twice (the
``kernel_paths`` fixture): with the compiled kernels and with the
pyarrow.compute fallback.
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
from askkit.frame import kernels
from askkit.frame.columns import (
    _dates_ns,
    _headings_compiled,
    _plain_parts_compiled,
    cited_ordinals,
    headings,
    headings_and_matches,
    map_paths,
    match_headings,
    path_parts,
    score_stats,
    text_lengths,
    valid_dates,
)
from askkit.wire import check_wire_date
from tests import strategies as st_kimun

#: Each test runs with the compiled kernels and with the pyarrow.compute fallback.
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


# --------------------------------------------------------------------------- headings


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


plain_titles = st.lists(
    st.text(alphabet="ab é€›\t", min_size=1, max_size=5).map(lambda s: f"x{s}y"),
    min_size=1,
    max_size=4,
).map("\x1f".join)


@st.composite
def titled_rows(draw: st.DrawFn) -> tuple[str, str | None]:
    date = draw(st.one_of(st.none(), st.sampled_from(["2026-04-08", "0026-12-31"])))
    title = draw(st.one_of(plain_titles, st_kimun.titles))
    if date is not None and draw(st.booleans()):
        title = date + draw(st.sampled_from(["\x1f", "", " ", " \t\x1f", "x"])) + title
    return title, date


@given(st.lists(titled_rows(), max_size=30), st.integers(0, 30), st.booleans())
def test_headings_of_chunked_and_sliced_columns_equal_from_chunk(
    rows: list[tuple[str, str | None]], cut: int, sliced: bool
) -> None:
    titles = _chunked([t for t, _ in rows], cut, sliced=sliced)
    dates = _chunked([d for _, d in rows], cut, sliced=False)
    sources = [AskSource.from_chunk(0, ChunkResult("a.md", t, d, "", "", 0.0)) for t, d in rows]
    # the compiled kernels take every title column without nulls
    assert (_headings_compiled(titles, dates) is not None) == kernels.available()
    assert headings(titles, dates).to_pylist() == [s.heading for s in sources]
    heading, match = headings_and_matches(titles, dates)
    assert heading.to_pylist() == [s.heading for s in sources]
    assert match.to_pylist() == [s.match_heading() for s in sources]


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
        (" a", None, "a"),
        ("a ", None, "a"),
        ("\u3000a", None, "a"),
        ("a\u00a0", None, "a"),
        ("a\x1f\x1fb", None, "a › b"),
    ],
)
def test_headings_edge_cases(title: str, date: str | None, heading: str) -> None:
    got = headings(pa.array([title], pa.string()), pa.array([date], pa.string()))
    assert got.to_pylist() == [heading]
    src = AskSource.from_chunk(0, ChunkResult("a.md", title, date, "", "", 0.0))
    assert src.heading == heading


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


def test_null_titles_give_null_headings() -> None:
    title = pa.array(["a\x1fb", None, "c"], pa.string())
    heading, match = headings_and_matches(title, pa.array([None, None, None], pa.string()))
    assert heading.to_pylist() == ["a › b", None, "c"]
    assert match.to_pylist() == ["b", None, "c"]


# --------------------------------------------------------------------------- paths

#: Plain paths exercise the compiled and pyarrow branches; tricky ones the VaultPath one.
plain_paths = st.lists(
    st.text(alphabet="abcxyz019_-.", min_size=1, max_size=6), min_size=1, max_size=4
).map("/".join)
any_paths = st.one_of(st_kimun.paths, plain_paths, st.sampled_from(["con/a.md", "a/aux.txt"]))


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


def test_a_newline_after_leading_dots_keeps_the_dots_as_kimun_does() -> None:
    """Rust's ``.`` never matches a newline, so kimun keeps the dots of "..foo\n"."""
    printed, _, folder = (c.to_pylist() for c in map_paths(pa.array(["..foo\n/a.md"])))
    assert printed == ["..foo_/a.md"]
    assert folder == ["..foo_"]


plain_part = st.text(alphabet="abcnlopruxtm019_-", min_size=1, max_size=6)
dotted_paths = st.lists(
    st.lists(plain_part, min_size=1, max_size=3).map(".".join), min_size=1, max_size=4
).map("/".join)
device_paths = st.sampled_from(
    ["con", "con.md", "a/prn/b.md", "aux.x/y", "nul", "com1.md", "lpt9/x", "comx.md", "con1"]
)


@given(
    st.lists(st.one_of(dotted_paths, device_paths), max_size=30),
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
    assert (_plain_parts_compiled(plain) is not None) == kernels.available()
    for other in ["Journal/a.md", "a//b.md", "con.md", "a/lpt1", ".a", "a/", "a..b", "é.md", ""]:
        assert _plain_parts_compiled(pa.chunked_array([["a.md", other]])) is None, other
    assert _plain_parts_compiled(pa.chunked_array([["a.md", None]], pa.string())) is None


# --------------------------------------------------------------------------- citations

answers = st.lists(
    st.lists(
        st.one_of(
            st.sampled_from(["[", "]", "[[", "]]", "[1]", "[02]", "[0]", "é", " ", "x", "[]"]),
            st.sampled_from([2**63 - 1, 2**63, 2**64 - 1, 2**64, 10**19]).map(lambda n: f"[{n}]"),
            st.integers(0, 2**70).map(lambda n: f"[{n}]"),
            st.integers(0, 2**64).map(lambda n: f"[{n:030d}]"),  # leading zeros, long
        ),
        max_size=8,
    ).map("".join),
    max_size=12,
)


@given(st.one_of(answers, st.lists(st_kimun.answers, max_size=8)), st.booleans())
def test_cited_ordinals_equal_scan(texts: list[str], sliced: bool) -> None:
    arr = pa.array(["[5]", *texts], pa.string()).slice(1) if sliced else texts
    turns, numbers = cited_ordinals(arr)
    got = set(zip(turns.tolist(), numbers.tolist(), strict=True))
    want = {(i, c.index) for i, t in enumerate(texts) for c in scan(t) if 0 < c.index < 2**63}
    assert got == want


def test_cited_ordinals_of_chunked_large_and_null_answers() -> None:
    chunked = pa.chunked_array([["[1] [2]"], [None, "[[3]] [4]", "[9223372036854775808] [5]"]])
    want = [(0, 1), (0, 2), (2, 4), (3, 5)]  # [[3]] is a wikilink, not a marker
    for arr in (chunked, chunked.cast(pa.large_string())):
        turns, numbers = cited_ordinals(arr)
        assert sorted(zip(turns.tolist(), numbers.tolist(), strict=True)) == want
    assert [len(x) for x in cited_ordinals([])] == [0, 0]


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
    stats = score_stats(key, score)
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


@given(
    st.lists(
        st.tuples(st.integers(0, 4), st.sampled_from([0.1, 0.2, 0.7, 1.0, -3.5, np.nan])),
        max_size=30,
    )
)
def test_score_stats_of_interleaved_turns_with_nan_equal_pandas(
    rows: list[tuple[int, float]],
) -> None:
    """Turns out of order or with a NaN score (no kernel takes them): NaN scores are
    left out of their turn's statistics and rank after the rest, in row order."""
    key = np.array([k for k, _ in rows], np.int64)
    score = np.array([s for _, s in rows], np.float64)
    stats = score_stats(key, score)
    grouped = pd.Series(score).groupby(key)
    np.testing.assert_allclose(stats["score_gap"], grouped.transform("max") - score)
    want_rank = grouped.rank(method="min", ascending=False)
    nan = np.isnan(score)
    np.testing.assert_array_equal(stats["score_rank"][~nan], want_rank[~nan].astype(int))
    later = [
        int(
            (~np.isnan(score[key == k])).sum()
            + (np.isnan(score[: i + 1]) & (key[: i + 1] == k)).sum()
        )
        for i, k in enumerate(key.tolist())
    ]
    np.testing.assert_array_equal(stats["score_rank"][nan], np.array(later, np.int64)[nan])
    mean, std = grouped.transform("mean"), grouped.transform(lambda s: s.std(ddof=0))
    spread = (grouped.transform("min") < grouped.transform("max")).to_numpy()
    z = np.where(spread, (score - mean) / std, 0.0)
    np.testing.assert_allclose(stats["score_z"], z, atol=1e-12)


def test_equal_scores_have_zero_z_despite_rounding() -> None:
    key = np.zeros(3, np.int64)
    stats = score_stats(key, np.array([0.1, 0.1, 0.1]))  # their mean is not exactly 0.1
    assert stats["score_z"].tolist() == [0.0, 0.0, 0.0]


# --------------------------------------------------------------------------- dates, lengths


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


@given(st.lists(st.text(alphabet="ab \x7f\x80é€\U0001f600", max_size=8)), st.integers(0, 10))
def test_text_lengths_count_code_points(values: list[str], cut: int) -> None:
    for sliced in (False, True):
        got = text_lengths(_chunked(list(values), cut, sliced=sliced))
        assert got.type == pa.int32()
        assert got.to_pylist() == [len(v) for v in values]


def test_score_rank_of_one_wide_turn_with_ties_and_nan_equals_pandas() -> None:
    """One turn wider than the kernels take (a list of sources) ranks with one sort."""
    rng = np.random.default_rng(3)
    score = rng.choice([0.1, 0.5, 0.9, np.nan], size=1000)
    key = np.full(1000, 7, np.int64)
    rank = score_stats(key, score)["score_rank"]
    nan = np.isnan(score)
    want = pd.Series(score).rank(method="min", ascending=False).to_numpy()
    np.testing.assert_array_equal(rank[~nan], want[~nan].astype(int))
    np.testing.assert_array_equal(rank[nan], np.arange(1, nan.sum() + 1) + (~nan).sum())
