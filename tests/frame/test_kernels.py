"""askkit.frame.kernels and the compiled kernels it wraps (askkit.frame._kernels).

The kernels must be built wherever the tests run (the install compiles them),
so these tests import them directly instead of skipping. Each kernel is
checked on random input against kimun's rules as askkit's objects apply them
(and the statistics against the fallback, to the last bit), on sliced arrays
(offsets not from zero, data around the rows), and on input the kernels must
refuse; and the one switch between them and the pyarrow.compute fallback.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given
from hypothesis import strategies as st

import askkit.frame
from askkit import AskSource, ChunkResult, VaultPath
from askkit._text import RUST_WHITESPACE
from askkit.citations import scan
from askkit.frame import _kernels, compiled_kernels
from askkit.frame import kernels as _compiled
from askkit.frame.columns import (
    _RESERVED_PART,
    _SAFE_PATH,
    _headings_compiled,
    _score_stats_grouped,
    headings_and_matches,
    score_stats,
)
from tests import strategies as st_kimun

#: Rust whitespace, and characters whose UTF-8 differs from one of them in one byte.
NEAR_WHITESPACE = (
    "\x08\x0e\x1f\x84\x86\x9f\xa1\u1681\u167f\u1fff\u200b\u2027\u202a\u2030\u205e\u2060\u3001\u2fff"
)
title_parts = st.one_of(
    st.sampled_from([*RUST_WHITESPACE, *NEAR_WHITESPACE, " › ", "›", "\x1f", "a", "é"]),
    st.sampled_from(["2026-04-08", "2026-04-0", "0001-01-01"]),
    st.text(max_size=3),
)
titles = st.lists(title_parts, max_size=10).map("".join)
dates = st.one_of(st.sampled_from([None, "2026-04-08", "0001-01-01", ""]), st_kimun.dates)


def _sliced(values: list[str | None]) -> pa.Array:
    return pa.array(["pad\x1f", *values, "tail"], pa.string()).slice(1, len(values))


def test_the_kernels_are_built_and_used() -> None:
    assert compiled_kernels()
    assert _compiled.available()
    assert _compiled.built()
    assert _kernels.__name__ == "askkit.frame._kernels"
    assert askkit.frame.compiled_kernels is _compiled.compiled_kernels
    assert sorted(n for n in dir(_kernels) if not n.startswith("_")) == [
        "attr_strings",
        "citations",
        "headings",
        "plain_paths",
        "turn_stats",
    ]


@given(st.lists(st.tuples(titles, dates), max_size=25), st.booleans())
def test_headings_equal_from_chunk(rows: list[tuple[str, str | None]], sliced: bool) -> None:
    title_list = [t for t, _ in rows]
    date_list = [d for _, d in rows]
    title = _sliced(title_list) if sliced else pa.array(title_list, pa.string())
    date = _sliced(date_list) if sliced else pa.array(date_list, pa.string())
    got = _compiled.headings(title, date)
    assert got is not None
    sources = [AskSource.from_chunk(0, ChunkResult("a.md", t, d, "", "", 0.0)) for t, d in rows]
    assert got[0].to_pylist() == [s.heading for s in sources]
    assert got[1].to_pylist() == [s.match_heading() for s in sources]
    got[0].validate(full=True)
    got[1].validate(full=True)


def test_headings_of_chunks_cut_at_different_rows() -> None:
    title = pa.chunked_array([["2026-04-08\x1fA"], ["B\x1f\x1fC", " x "]])
    date = pa.chunked_array([["2026-04-08", None], [None]], pa.string())
    heading, match = headings_and_matches(title, date)
    assert heading.to_pylist() == ["A", "B › C", "x"]
    assert match.to_pylist() == ["A", "C", "x"]
    assert _headings_compiled(title, date) is not None


def test_headings_step_aside_for_null_titles() -> None:
    title = pa.array(["a", None], pa.string())
    assert _compiled.headings(title, pa.array([None, None], pa.string())) is None
    heading, match = headings_and_matches(title, pa.array([None, None], pa.string()))
    assert heading.to_pylist() == ["a", None]
    assert match.to_pylist() == ["a", None]


plain_like = st.lists(
    st.one_of(
        st.text(alphabet="abcnlopruxtm019_-.", min_size=0, max_size=6),
        st.sampled_from(["con", "com1", "lpt9.x", "aux.md", "nul", "comx", "con1", "Con"]),
    ),
    min_size=1,
    max_size=4,
).map("/".join)


def _plain(raw: list[str]) -> bool:
    """Whether every path is plain by the pyarrow fallback's regexes (RE2)."""
    col = pa.array(raw, pa.string())
    safe = pc.and_(
        pc.match_substring_regex(col, _SAFE_PATH),
        pc.invert(pc.match_substring_regex(col, _RESERVED_PART)),
    )
    return pc.all(safe).as_py() is not False


@given(st.lists(plain_like, max_size=25), st.booleans())
def test_plain_paths_agree_with_the_fallback_check_and_vault_path(
    raw: list[str], sliced: bool
) -> None:
    col = _sliced(list(raw)) if sliced else pa.array(raw, pa.string())
    got = _compiled.plain_paths(col)
    assert (got is None) == (not _plain(raw))
    if got is not None:
        assert [str(VaultPath(p)) for p in raw] == raw
        assert got[0].to_pylist() == [VaultPath(p).stem for p in raw]
        assert got[1].to_pylist() == [VaultPath(p).folder for p in raw]


def test_plain_paths_refuse_what_vault_path_would_change() -> None:
    for other in ["Journal/a.md", "a//b.md", "con.md", "a/lpt1", "x/nul.txt/y", ".a", "a/", ""]:
        assert _compiled.plain_paths(pa.array(["a.md", other])) is None, other
    assert _compiled.plain_paths(pa.array(["a.md", None], pa.string())) is None
    notes, folders = _compiled.plain_paths(pa.array(["w/x.y/z.md", "con1x.md", "q"])) or ((), ())
    assert notes.to_pylist() == ["z", "con1x", "q"]
    assert folders.to_pylist() == ["w/x.y", "", ""]


def test_citations_leave_doubled_brackets_to_the_scanner() -> None:
    for answers in (
        pa.array(["see [1]", " and [[2]]x [3]"]),
        pa.array(["a", "[2] [[2]]"]).slice(1),
    ):
        got = _compiled.citations(answers.cast(pa.large_string()))
        assert got is not None
        assert [a.tolist() for a in got] == [a.tolist() for a in _compiled.citations(answers)]
    got = _compiled.citations(pa.array(["see [1]", " and [[2]]x [3]"]))
    assert got is not None
    turns, numbers, skipped = got
    assert turns.tolist() == [0]
    assert numbers.tolist() == [1]
    assert skipped.tolist() == [False, True]
    assert _compiled.citations(pa.array(["[1]", None])) is None  # nulls: the caller's fallback


@given(st.lists(st_kimun.answers, max_size=10), st.booleans())
def test_citations_equal_scan(texts: list[str], sliced: bool) -> None:
    answers = pa.array(["[7]", *texts], pa.string())
    answers = answers.slice(1) if sliced else pa.array(texts, pa.string())
    got = _compiled.citations(answers)
    assert got is not None
    turns, numbers, skipped = got
    assert skipped.tolist() == [("[[" in t or "]]" in t) for t in texts]
    want = {
        (i, c.index)
        for i, t in enumerate(texts)
        if not skipped[i]
        for c in scan(t)
        if c.index < 2**63
    }
    assert set(zip(turns.tolist(), numbers.tolist(), strict=True)) == want


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: _kernels.plain_paths(np.array([0, 5, 2], np.int32), b"abcde"), "decrease"),
        (lambda: _kernels.plain_paths(np.array([0, 9], np.int32), b"abc"), "past the data"),
        (lambda: _kernels.plain_paths(np.array([-1, 2], np.int32), b"abc"), "negative"),
        (lambda: _kernels.citations(np.array([-1, 2], np.int64), b"abc"), "negative"),
        (lambda: _kernels.plain_paths(b"\x00\x00\x00", b"abc"), "int32 offsets"),
        (lambda: _kernels.plain_paths(3, b"abc"), "contiguous buffer"),
        (lambda: _kernels.citations(np.array([4, 2], np.int64), b"abcd"), "decrease"),
        (
            lambda: _kernels.headings(
                np.array([0, 1], np.int32), b"a", np.array([0], np.int32), b"", None, 0
            ),
            "as many rows",
        ),
        (
            lambda: _kernels.headings(
                np.array([0, 1], np.int32), b"a", np.array([0, 0], np.int32), b"", b"", 0
            ),
            "bitmap",
        ),
    ],
)
def test_bad_buffers_are_refused_with_a_clear_error(call: object, message: str) -> None:
    with pytest.raises((ValueError, TypeError), match=message):
        call()  # type: ignore[operator]


def test_switched_off_the_kernels_give_way() -> None:
    saved = _compiled.ENABLED
    _compiled.ENABLED = False
    try:
        assert not _compiled.available()
        assert _compiled.headings(pa.array(["a"]), pa.array([None], pa.string())) is None
        assert _compiled.plain_paths(pa.array(["a.md"])) is None
        assert _compiled.citations(pa.array(["[1]"])) is None
        assert _compiled.turn_stats(np.array([0, 1], np.int64), np.zeros(1)) is None
        assert _compiled.attr_strings(["a"], [None]) is None
        assert not compiled_kernels()
        heading, _ = headings_and_matches(pa.array(["a\x1fb"]), pa.array([None], pa.string()))
        assert heading.to_pylist() == ["a › b"]
    finally:
        _compiled.ENABLED = saved


scores = st.sampled_from(
    [0.0, -0.0, 0.1, 0.2, 0.7, 1.0, -3.5, 1e-300, 5e-324, 1e308, -1e308, np.inf, -np.inf]
)


@given(st.lists(st.lists(scores, min_size=1, max_size=7), max_size=8))
def test_turn_stats_equal_the_fallback_to_the_last_bit(turns: list[list[float]]) -> None:
    key = np.repeat(np.arange(len(turns)), [len(t) for t in turns]).astype(np.int64)
    score = np.array([s for t in turns for s in t], np.float64)
    saved = _compiled.ENABLED
    try:
        _compiled.ENABLED = True
        fast = score_stats(key, score)
        _compiled.ENABLED = False
        fallback = score_stats(key, score)
    finally:
        _compiled.ENABLED = saved
    for name in ("score_rank", "score_gap", "score_z"):
        assert fast[name].dtype == fallback[name].dtype
        assert fast[name].tobytes() == fallback[name].tobytes(), name  # NaN and -0.0 included


def test_turn_stats_refuse_bounds_that_do_not_cover_the_scores() -> None:
    with pytest.raises(ValueError, match="from 0 to len"):
        _kernels.turn_stats(np.array([0, 2], np.int64), np.zeros(3))
    with pytest.raises(ValueError, match="must not decrease"):
        _kernels.turn_stats(np.array([0, 3, 2, 3], np.int64), np.zeros(3))
    with pytest.raises(ValueError, match="float64"):
        _kernels.turn_stats(np.array([0, 1], np.int64), b"\x00" * 9)


def test_turn_stats_of_wide_and_narrow_turns_equal_the_fallback_to_the_last_bit() -> None:
    """The widest turn the kernels take, among many narrow ones; one wider goes to the
    fallback alone, with the same values."""
    sizes = np.array([256, 1, 3, 1, 7, *([2] * 300), 1], np.int64)
    key = np.repeat(np.arange(len(sizes)), sizes)
    score = np.random.default_rng(0).random(len(key))
    bounds = np.append(np.cumsum(sizes) - sizes, len(key)).astype(np.int64)
    fast = _compiled.turn_stats(bounds, score)
    assert fast is not None
    fallback = _score_stats_grouped(key, score)
    for name in ("score_rank", "score_gap", "score_z"):
        assert fast[name].tobytes() == fallback[name].tobytes(), name
    wide = np.zeros(257, np.int64)
    assert score_stats(wide, score[:257])["score_z"].tobytes() == (
        _score_stats_grouped(wide, score[:257])["score_z"].tobytes()
    )


def test_headings_bitmap_offset_past_the_bitmap_is_refused() -> None:
    offsets = np.array([0, 1], np.int32)
    with pytest.raises(ValueError, match="bitmap"):
        _kernels.headings(offsets, b"a", offsets, b"a", b"\x01", 2**63 - 8)
    with pytest.raises(ValueError, match="bitmap"):
        _kernels.headings(offsets, b"a", offsets, b"a", b"\x01", 8)


def test_running_out_of_memory_raises_memory_error_not_a_crash() -> None:
    """Output buffers that cannot be had (or grown) end in MemoryError, each freed once."""
    script = """
import resource, numpy as np
from askkit.frame import _kernels as K
n = 5_000_000
off = np.arange(n + 1, dtype=np.int32)
data = b"\\x1f" * n
texts = ["a" * 64] * 1_000_000  # 64 MB of column data: past every headroom below
status = open("/proc/self/status").read().splitlines()
vm = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize"))
for headroom in (20, 25, 30, 35, 40):
    resource.setrlimit(resource.RLIMIT_AS, (vm + headroom * 2**20, resource.RLIM_INFINITY))
    for call in (lambda: K.headings(off, data, off, data, None, 0),
                 lambda: K.plain_paths(off, b"a" * n),
                 lambda: K.attr_strings(texts, (None,))):
        try:
            call()
        except MemoryError:
            print("MemoryError")
"""
    out = subprocess.run(
        [sys.executable, "-c", script], check=False, capture_output=True, text=True
    )
    assert out.returncode == 0, (out.returncode, out.stderr[-2000:])
    assert out.stdout.split().count("MemoryError") == 15


class _Fields:
    """An object with two attributes, one a property that runs Python code."""

    def __init__(self, a: object, b: object) -> None:
        self.a = a
        self._b = b

    @property
    def b(self) -> object:
        return self._b


@given(st.lists(st.tuples(st.one_of(st.none(), st.text()), st.text()), max_size=40))
def test_attr_strings_equal_pa_array(rows: list[tuple[str | None, str]]) -> None:
    """Every attribute, nulls and non-ASCII text included, as ``pa.array`` builds it."""
    objects = [_Fields(a, b) for a, b in rows]
    try:
        expected_a = pa.array([a for a, _ in rows], pa.string())
        expected_b = pa.array([b for _, b in rows], pa.string())
    except UnicodeEncodeError:  # a lone surrogate: the kernel gives way to pa.array's error
        assert _compiled.attr_strings(objects, ["a", "b"]) is None
        return
    out = _compiled.attr_strings(objects, ["a", "b"])
    assert out is not None
    assert out[0].equals(expected_a)
    assert out[1].equals(expected_b)
    assert out[0].null_count == sum(a is None for a, _ in rows)
    out[0].validate(full=True)
    itself = _compiled.attr_strings([b for _, b in rows], [None])
    assert itself is not None
    assert itself[0].equals(expected_b)


def test_attr_strings_give_way_to_pa_array_on_anything_but_str_and_none() -> None:
    assert _compiled.attr_strings([_Fields(1, "x")], ["a"]) is None
    assert _compiled.attr_strings([_Fields(b"x", "x")], ["a"]) is None
    assert _compiled.attr_strings([_Fields("\ud800", "x")], ["a"]) is None
    assert _compiled.attr_strings([_Fields("x", "x")], ["missing"]) is None
    with pytest.raises(TypeError, match="str or None"):
        _kernels.attr_strings([], (1,))
    with pytest.raises(TypeError):
        _kernels.attr_strings((), ("a",))  # a list, not any sequence


def test_attr_strings_hold_the_objects_while_a_property_empties_the_list() -> None:
    objects: list[Any] = []

    class Clearing:
        @property
        def a(self) -> str:
            objects.clear()  # the kernel reads a copy: no object is freed under it
            return "x" * 100

    objects.extend(Clearing() for _ in range(50))
    out = _compiled.attr_strings(objects, ["a"])
    assert out is not None
    assert out[0].to_pylist() == ["x" * 100] * 50


def test_attr_strings_grow_past_their_first_guess() -> None:
    """The data buffer starts at 16 bytes a row; long strings make it grow."""
    texts = ["é" * 1000, "", None, "b" * 70_000]
    out = _compiled.attr_strings([_Fields(t, "") for t in texts], ["a"])
    assert out is not None
    assert out[0].to_pylist() == texts


def test_attr_strings_of_sources_build_the_frame_both_ways() -> None:
    """sources_frame from objects: the kernel's columns equal the fallback's."""
    from askkit.frame import sources_frame

    sources = [
        AskSource(
            VaultPath(f"a/{i % 7}.md"),
            f"H{i} é",
            None if i % 3 else "2026-01-0" + str(i % 9 + 1),
            i / 10,
            f"t{i}",
            i + 1,
            f"h{i % 2}",
            None if i % 4 else "T\x1fH",
        )
        for i in range(60)
    ]
    saved = _compiled.ENABLED
    try:
        _compiled.ENABLED = True
        fast = sources_frame(sources)
        _compiled.ENABLED = False
        fallback = sources_frame(sources)
    finally:
        _compiled.ENABLED = saved
    import pandas.testing as pdt

    pdt.assert_frame_equal(fast, fallback)
    assert fast["title"].isna().sum() == 45
    assert fast["wire_date"].notna().sum() == 20
