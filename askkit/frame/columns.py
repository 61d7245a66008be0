"""Columnar building blocks of the sources frame.

kimun's ``AskSource::from_chunk`` rules over whole columns (no Python loop
per chunk). Each per-row rule (headings, paths, citations, per-turn score
statistics) has one implementation and one fallback: askkit's compiled
kernels (:mod:`askkit.frame.kernels`, which decides whether they are used)
and, where they are not built or the input is outside what they handle
(nulls), pyarrow.compute (for the statistics, numpy sums in the kernels'
order, so both agree to the last bit). The Python definitions (``AskSource.from_chunk``,
``VaultPath``, :func:`askkit.citations.scan`) are the specification: the
property tests hold both paths to them, and the few values neither path
vouches for (unusual paths, answers with ``[[`` or ``]]``) go through them.
:func:`finish` derives every remaining column (dates, citations, per-turn
score statistics) from a handful of base columns; both the object path and
the JSONL path end in it, so they share one schema.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeAlias

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from askkit._text import RUST_WHITESPACE
from askkit.citations import scan
from askkit.frame import kernels as _compiled
from askkit.frame.schema import COLUMNS, SHARED_STRING, STRING
from askkit.sources import BREADCRUMB_SEP, HEADING_JOINER, VaultPath

__all__ = [
    "cited_ordinals",
    "finish",
    "headings",
    "headings_and_matches",
    "map_paths",
    "path_parts",
    "score_stats",
    "take_rows",
    "valid_dates",
]

#: An Arrow column (``pa.Array`` or ``pa.ChunkedArray``); pyarrow ships no type hints.
Column: TypeAlias = Any

_INT64_MAX = 2**63 - 1
#: Runs of the breadcrumb separator: empty segments are dropped.
_SEP_RUN = re.escape(BREADCRUMB_SEP) + "+"
_NOTE_SUFFIX = ".md"
_DATE_SHAPE = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
#: The digits of a citation marker, at the start of what follows a ``[``.
_MARKER = r"^(?P<number>[0-9]+)\]"
#: Digits of the largest number a marker may hold once its leading zeros are gone.
_MARKER_DIGITS = len(str(_INT64_MAX))
#: Largest (turns x highest ordinal) looked up in a table instead of sorted keys.
_TABLE_CELLS = 1 << 26
#: The widest turn the compiled statistics take (their rank compares every pair).
_MAX_WIDTH = 256
#: Bytes of string data per piece of a :func:`take_rows` output.
_TAKE_BYTES = 1 << 30
#: datetime64[ns] holds 1677-09-21 .. 2262-04-11; whole days inside that range.
_NS_MIN = np.datetime64("1677-09-22", "s").astype("int64")
_NS_MAX = np.datetime64("2262-04-11", "s").astype("int64")


def headings(title: Column, date: Column) -> Column:
    """``heading_from_title`` for whole columns: Rust trim, date prefix, breadcrumb join.

    ``date`` holds validated ``YYYY-MM-DD`` strings (ten code points) or nulls.
    Titles without nulls go through the compiled kernels
    (:func:`askkit.frame.kernels.headings`) when they are built; any other
    column goes through pyarrow.compute.

    >>> titles = pa.array(["2026-04-08\\x1fMorning\\x1fKitchen", " Notes "])
    >>> headings(titles, pa.array(["2026-04-08", None])).to_pylist()
    ['Morning › Kitchen', 'Notes']
    """
    return headings_and_matches(title, date)[0]


def headings_and_matches(title: Column, date: Column) -> tuple[Column, Column]:
    """(:func:`headings`, :func:`match_headings` of them), both from the compiled
    kernels in one pass when they apply."""
    compiled = _headings_compiled(title, date)
    if compiled is not None:
        return compiled
    heading = _headings_arrow(title, date)
    return heading, match_headings(heading)


def _headings_compiled(title: Column, date: Column) -> tuple[Column, Column] | None:
    """(headings, match headings) from the compiled kernels, chunk by chunk, or None."""
    if not _compiled.available():
        return None
    titles, dates = _chunks(title), _chunks(date)
    if [len(c) for c in titles] != [len(c) for c in dates]:  # misaligned: one chunk each
        titles, dates = [_combined(title)], [_combined(date)]
    out, matches = [], []
    for t_arr, d_arr in zip(titles, dates, strict=True):
        cut = _compiled.headings(t_arr, d_arr)
        if cut is None:
            return None
        out.append(cut[0])
        matches.append(cut[1])
    return pa.chunked_array(out, pa.string()), pa.chunked_array(matches, pa.string())


def _combined(col: Column) -> pa.Array:
    if isinstance(col, pa.ChunkedArray):
        return col.combine_chunks() if col.num_chunks else pa.array([], col.type)
    return col


def _chunks(col: Column) -> list[pa.Array]:
    return list(col.chunks) if isinstance(col, pa.ChunkedArray) else [col]


def _headings_arrow(title: Column, date: Column) -> Column:
    """:func:`headings` with pyarrow.compute (any input)."""
    stripped = pc.utf8_trim(title, characters=RUST_WHITESPACE)
    prefixed = pc.fill_null(pc.equal(pc.utf8_slice_codeunits(stripped, 0, 10), date), False)
    # the end is trimmed already
    rest = pc.utf8_ltrim(pc.utf8_slice_codeunits(stripped, 10), characters=RUST_WHITESPACE)
    body = pc.if_else(prefixed, rest, stripped) if pc.any(prefixed).as_py() else stripped
    if pc.any(pc.match_substring(body, BREADCRUMB_SEP * 2)).as_py():  # RE2 only when needed
        body = pc.replace_substring_regex(body, _SEP_RUN, BREADCRUMB_SEP)
    ends = pc.utf8_trim(body, characters=BREADCRUMB_SEP)
    return pc.replace_substring(ends, BREADCRUMB_SEP, HEADING_JOINER)


def _last_split(col: Column, sep: str, *, head: bool = True) -> tuple[Column, Column]:
    """(head, tail): ``col.rpartition(sep)`` per row (head ``""`` when absent), no
    regex; a null row gives nulls."""
    parts = pc.split_pattern(col, sep, max_splits=1, reverse=True)
    chunks = parts.chunks if isinstance(parts, pa.ChunkedArray) else [parts]
    heads, tails = [], []
    for chunk in chunks:
        offsets = np.asarray(chunk.offsets.to_numpy(), dtype=np.int64)
        null = np.asarray(chunk.is_null().to_numpy(zero_copy_only=False), bool)
        flat = chunk.values
        tails.append(flat.take(pa.array(offsets[1:] - 1, mask=null)))
        if head:
            found = pa.array((offsets[1:] - offsets[:-1]) == 2)
            heads.append(pc.if_else(found, flat.take(pa.array(offsets[:-1], mask=null)), ""))
    return pa.chunked_array(heads, pa.string()), pa.chunked_array(tails, pa.string())


def take_rows(values: Column, indices: Column) -> Column:
    """``pc.take(values, indices)`` as a chunked array, fast and without offset overflow.

    ``values`` is combined into one array first (a take from a chunked array
    resolves the chunk of every index, three times slower), and the output is
    cut into pieces of under 1 GiB of string data (int32 offsets).
    """
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks else pa.array([], values.type)
    pieces = indices.chunks if isinstance(indices, pa.ChunkedArray) else [indices]
    if not (pa.types.is_string(values.type) or pa.types.is_binary(values.type)):
        return pa.chunked_array([pc.take(values, piece) for piece in pieces], values.type)
    sizes = np.asarray(pc.fill_null(pc.binary_length(values), 0).to_numpy(), np.int64)
    out: list[Any] = []
    for piece in pieces:
        idx = np.asarray(pc.fill_null(piece, 0).to_numpy(), np.int64)
        total = np.cumsum(sizes[idx]) if len(idx) else np.zeros(1, np.int64)
        cuts = np.searchsorted(total, np.arange(_TAKE_BYTES, int(total[-1]), _TAKE_BYTES))
        bounds = [0, *cuts.tolist(), len(idx)]
        out.extend(
            pc.take(values, piece.slice(lo, hi - lo)) for lo, hi in itertools.pairwise(bounds)
        )
    return pa.chunked_array(out, values.type)


def match_headings(heading: Column) -> Column:
    """``AskSource.match_heading()`` for a column: the part after the last joiner.

    >>> match_headings(pa.array(["Morning › Kitchen", "Notes", None])).to_pylist()
    ['Kitchen', 'Notes', None]
    """
    return _last_split(heading, HEADING_JOINER, head=False)[1]


def valid_dates(date: Column) -> Column:
    """Whether each non-null wire date is a real ``YYYY-MM-DD`` (as ``check_wire_date``).

    Arrow's ``strptime`` is lax (``2026-02-30`` becomes March 2nd, ``26-04-08``
    parses), so the shape is checked and the parsed date must print back the same.
    Null in, true out. Checked once per distinct date.
    """
    if isinstance(date, pa.ChunkedArray) and date.num_chunks == 0:
        return pa.chunked_array([], pa.bool_())
    unique = pc.unique(date)
    ok = _valid_unique(unique)
    return pc.fill_null(pc.take(ok, pc.index_in(date, value_set=unique)), True)


def all_valid_dates(date: Column) -> bool:
    """Whether every non-null date is a real ``YYYY-MM-DD`` (see :func:`valid_dates`)."""
    return bool(pc.all(_valid_unique(pc.unique(date))).as_py() is not False)


def _valid_unique(date: Column) -> Column:
    parsed = pc.strptime(date, format="%Y-%m-%d", unit="s", error_is_null=True)
    printed = pc.strftime(parsed, format="%Y-%m-%d")
    same = pc.and_(pc.equal(printed, date), pc.match_substring_regex(date, _DATE_SHAPE))
    return pc.or_(pc.is_null(date), pc.fill_null(same, False))


def text_lengths(text: Column) -> Column:
    """``len(text)`` in code points: the byte length where a chunk is all ASCII."""
    out = []
    for chunk in _chunks(text):
        ascii_only = chunk.null_count == 0 and pa.types.is_string(chunk.type) and _all_ascii(chunk)
        out.append(pc.binary_length(chunk) if ascii_only else pc.utf8_length(chunk))
    return pa.chunked_array(out, pa.int32())


def _all_ascii(arr: pa.Array) -> bool:
    """Whether every byte of a string array's rows is ASCII: one ``max`` over its
    data buffer seen as bytes (no copy), far cheaper than a per-row check."""
    offsets = np.frombuffer(arr.buffers()[1], np.int32)
    lo, hi = int(offsets[arr.offset]), int(offsets[arr.offset + len(arr)])
    if hi == lo:
        return True
    data = pa.Array.from_buffers(pa.uint8(), hi - lo, [None, arr.buffers()[2]], offset=lo)
    return bool(pc.max(data).as_py() < 0x80)


def _dates_ns(wire_date: Column) -> np.ndarray[Any, Any]:
    """datetime64[ns] from validated wire dates; NaT when absent or outside the ns range.

    Each distinct date is parsed once (Arrow's ``strptime``: the proleptic
    Gregorian calendar, year 0 included, as kimun's chrono).
    """
    nat = np.datetime64("NaT", "ns")
    if len(wire_date) == 0 or wire_date.null_count == len(wire_date):
        return np.full(len(wire_date), nat, dtype="datetime64[ns]")
    encoded = pc.dictionary_encode(wire_date)  # one hash pass; chunks share one dictionary
    chunks = encoded.chunks if isinstance(encoded, pa.ChunkedArray) else [encoded]
    unique = chunks[-1].dictionary
    secs = _date_seconds(unique)
    inside = (secs >= _NS_MIN) & (secs <= _NS_MAX)
    per_date = np.where(inside, secs, 0).astype("datetime64[s]").astype("datetime64[ns]")
    per_date = np.append(np.where(inside, per_date, nat), nat)  # the last slot: no date
    codes = [np.asarray(pc.fill_null(c.indices, -1).to_numpy(), np.int64) for c in chunks]
    return per_date[np.concatenate(codes)]


def _date_seconds(dates: pa.Array) -> np.ndarray[Any, Any]:
    """Seconds since the epoch of each (non-null, validated) date."""
    parsed = pc.strptime(dates, format="%Y-%m-%d", unit="s")
    return np.asarray(pc.cast(parsed, pa.int64()).to_numpy(), np.int64)


#: A path ``VaultPath`` leaves unchanged: lowercase ASCII components without blank,
#: dot-led, dot-ended or ``..`` parts (a reserved name is checked separately).
_SAFE_PATH = r"^[a-z0-9_-]+(\.[a-z0-9_-]+)*(/[a-z0-9_-]+(\.[a-z0-9_-]+)*)*$"
_RESERVED_PART = r"(^|/)(con|prn|aux|nul|com[1-9]|lpt[1-9])(\.[^/]*)?(/|$)"


def _plain_parts(printed: Column) -> list[Column]:
    """[printed, stem, folder] of printed paths, with Arrow kernels (no ``..`` resolution)."""
    folder, name = _last_split(printed, "/")
    note = pc.if_else(pc.ends_with(name, _NOTE_SUFFIX), pc.utf8_slice_codeunits(name, 0, -3), name)
    return [printed, note, folder]


def _parts(value: str, *, printed: bool) -> tuple[str, str, str]:
    p = VaultPath.from_printed(value) if printed else VaultPath(value)
    return (str(p), p.stem, p.folder)


def _path_columns(col: Column, *, printed: bool) -> list[Column]:
    """[printed path, stem, folder] per row.

    A column of plain paths only (``VaultPath`` prints them unchanged), the
    usual case, is cut by the compiled kernels when they are built.
    Otherwise each distinct value is mapped once: plain ones with
    pyarrow.compute, the rest with ``VaultPath`` itself.
    """
    plain = _plain_parts_compiled(col)
    if plain is not None:
        return plain
    encoded = pc.dictionary_encode(col)  # one hash pass; chunks share one dictionary
    if isinstance(encoded, pa.ChunkedArray):
        chunks = encoded.chunks
        unique = chunks[-1].dictionary if chunks else pa.array([], pa.string())
        rows = pa.chunked_array([c.indices for c in chunks], pa.int32())
    else:
        unique, rows = encoded.dictionary, encoded.indices
    safe = pc.and_(
        pc.match_substring_regex(unique, _SAFE_PATH),
        pc.invert(pc.match_substring_regex(unique, _RESERVED_PART)),
    )
    fast = _plain_parts(unique)
    if pc.all(safe).as_py() is False:
        other = pc.filter(unique, pc.invert(safe))
        mapped = [_parts(v, printed=printed) for v in other.to_pylist()]
        where = pc.index_in(unique, value_set=other)
        fast = [
            pc.if_else(safe, f, pc.take(pa.array([m[i] for m in mapped], pa.string()), where))
            for i, f in enumerate(fast)
        ]
    return [take_rows(f, rows) for f in fast]


def _plain_parts_compiled(col: Column) -> list[Column] | None:
    """[col, stem, folder] when every row is a plain path, from the compiled kernels;
    None when they are off or a row is not plain."""
    if not _compiled.available():
        return None
    parts = []
    for chunk in _chunks(col):
        cut = _compiled.plain_paths(chunk)
        if cut is None:  # not plain: the other chunks need not be cut
            return None
        parts.append(cut)
    notes = pa.chunked_array([p[0] for p in parts], pa.string())
    folders = pa.chunked_array([p[1] for p in parts], pa.string())
    return [col, notes, folders]


def map_paths(raw: Column) -> list[Column]:
    """[``str(VaultPath(raw))``, stem, folder] per row."""
    return _path_columns(raw, printed=False)


def path_parts(printed: Column) -> list[Column]:
    """[stem, folder] of each printed path (``VaultPath.from_printed``)."""
    return _path_columns(printed, printed=True)[1:]


def cited_ordinals(
    answers: Sequence[str] | Column,
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """Every (turn index, cited number) pair with the number in 1..2**63-1, as
    :func:`askkit.citations.scan` finds them.

    ``answers`` is a sequence of strings or an Arrow string column (a null
    reads as ``""``). Every ``[`` followed by ASCII digits and ``]`` inside
    one answer is a marker, found by the compiled kernels or, without them,
    pyarrow.compute. An answer with ``[[`` or ``]]`` (where kimun's scanner
    skips adjacent markers) goes through :func:`scan` itself. Pairs may repeat.

    >>> turns, numbers = cited_ordinals(["See [2] and [10].", "[[3]] is a link, [1] is not"])
    >>> sorted(zip(turns.tolist(), numbers.tolist()))
    [(0, 2), (0, 10), (1, 1)]
    """
    arr = answers if isinstance(answers, pa.Array | pa.ChunkedArray) else pa.array(answers)
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks else pa.array([], arr.type)
    if not pa.types.is_large_string(arr.type):
        arr = pc.cast(arr, pa.string())
    if arr.null_count:
        arr = pc.fill_null(arr, "")
    if len(arr) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    found = _compiled.citations(arr) or _citations_arrow(arr)
    c_turn, c_num, skipped = found
    s_turn, s_num = _scan_answers(arr, skipped)
    return np.concatenate([c_turn, s_turn]), np.concatenate([c_num, s_num])


def _citations_arrow(
    answers: pa.Array,
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """:func:`askkit.frame.kernels.citations` with pyarrow.compute: (answer index,
    number) of the markers, and whether each answer holds ``[[`` or ``]]``."""
    skipped = pc.or_(pc.match_substring(answers, "[["), pc.match_substring(answers, "]]"))
    after_open = pc.list_slice(pc.split_pattern(answers, "["), 1)  # what follows each "["
    turn = pc.list_parent_indices(after_open)
    marker = pc.extract_regex(pc.list_flatten(after_open), _MARKER)  # null: not a marker
    digits = pc.utf8_ltrim(pc.struct_field(marker, "number"), "0")  # "" for [0], [00], ...
    size = pc.binary_length(digits)
    keep = pc.and_(
        pc.and_(pc.greater(size, 0), pc.less_equal(size, _MARKER_DIGITS)),
        pc.invert(pc.take(skipped, turn)),
    )
    number = pc.cast(pc.filter(digits, keep), pa.uint64())  # 19 digits fit in uint64
    fits = pc.less_equal(number, pa.scalar(_INT64_MAX, pa.uint64()))
    return (
        np.asarray(pc.filter(pc.filter(turn, keep), fits).to_numpy(), np.int64),
        np.asarray(pc.filter(number, fits).to_numpy(), np.int64),
        np.asarray(skipped.to_numpy(zero_copy_only=False), bool),
    )


def _scan_answers(
    answers: pa.Array, skipped: np.ndarray[Any, Any]
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """(answer index, number) of the markers :func:`scan` finds in the ``skipped``
    answers (those with ``[[`` or ``]]``), numbers in 1..2**63-1, each pair once."""
    turns: list[int] = []
    numbers: list[int] = []
    for i in np.flatnonzero(skipped).tolist():
        found = {c.index for c in scan(answers[i].as_py() or "") if 0 < c.index <= _INT64_MAX}
        turns.extend([i] * len(found))
        numbers.extend(found)
    return np.asarray(turns, np.int64), np.asarray(numbers, np.int64)


def _cited(
    turn_key: np.ndarray[Any, Any],
    ordinal: np.ndarray[Any, Any],
    answers: Sequence[str] | Column,
) -> np.ndarray[Any, Any]:
    c_turn, c_num = cited_ordinals(answers)
    if len(c_turn) == 0 or len(turn_key) == 0:
        return np.zeros(len(turn_key), dtype=bool)
    top = int(ordinal.max())
    keep = c_num <= top
    c_turn, c_num = c_turn[keep], c_num[keep]
    if len(answers) * (top + 1) <= _TABLE_CELLS:  # a (turn x number) table
        table = np.zeros((len(answers), top + 1), bool)
        table[c_turn, c_num] = True
        return np.asarray(table[turn_key, ordinal])
    if (len(answers) + 1) * (top + 1) < _INT64_MAX:  # one int64 key per (turn, number)
        return np.isin(turn_key * (top + 1) + ordinal, c_turn * (top + 1) + c_num)
    rows = pd.MultiIndex.from_arrays([turn_key, ordinal])
    return np.asarray(rows.isin(list(zip(c_turn.tolist(), c_num.tolist(), strict=True))))


def _rank(codes: np.ndarray[Any, Any], score: np.ndarray[Any, Any]) -> Any:
    """``groupby(codes).rank(method="min", ascending=False)`` of turns numbered
    ``0..k-1`` in any order; NaN scores rank after the rest of their turn, in row
    order.

    One sort of the scores (NaN last) gives each row its place in descending
    order, and one sort of ``(turn, place)`` packed in an int64 lines each
    turn's rows up in that order (cheaper than a two-key lexsort).
    """
    n = len(score)
    nan = np.isnan(score)
    descending = np.argsort(-score)  # NaN last, but in any order among themselves
    if nan.any():
        descending[n - int(nan.sum()) :] = np.flatnonzero(nan)  # in row order
    if n and codes.min() == codes.max():  # one turn (a list of sources): the first sort
        order = descending
    else:
        place = np.empty(n, np.int64)
        place[descending] = np.arange(n, dtype=np.int64)
        order = np.argsort(codes.astype(np.int64) * n + place)
    k, s = codes[order], score[order]
    idx = np.arange(n, dtype=np.int64)
    new_turn = np.ones(n, dtype=bool)
    new_turn[1:] = k[1:] != k[:-1]
    new_value = new_turn.copy()
    new_value[1:] |= s[1:] != s[:-1]
    turn_start = np.maximum.accumulate(np.where(new_turn, idx, 0))
    tie_start = np.maximum.accumulate(np.where(new_value, idx, 0))
    rank = np.empty(n, dtype=np.int64)
    rank[order] = tie_start - turn_start + 1
    return rank


def score_stats(
    turn_key: np.ndarray[Any, Any], score: np.ndarray[Any, Any]
) -> dict[str, np.ndarray[Any, Any]]:
    """Per-turn score columns: ``score_rank`` (descending, ties share the lowest),
    ``score_gap`` (to the turn's top score) and ``score_z`` (0 without spread).

    Turns whose rows are contiguous (as every reader builds them), NaN-free and
    at most :data:`_MAX_WIDTH` rows wide go through the compiled kernels; any
    other input, or any input without them, through :func:`_score_stats_grouped`.
    Both sum each turn's scores left to right with the same operations, so
    they agree to the last bit.

    >>> stats = score_stats(np.array([0, 0, 1]), np.array([0.9, 0.5, 0.7]))
    >>> stats["score_rank"].tolist(), stats["score_gap"].round(2).tolist()
    ([1, 2, 1], [0.0, 0.4, 0.0])
    """
    bounds = _turn_bounds(turn_key, score)
    compiled = None if bounds is None else _compiled.turn_stats(bounds, score)
    return compiled if compiled is not None else _score_stats_grouped(turn_key, score)


def _turn_bounds(
    turn_key: np.ndarray[Any, Any], score: np.ndarray[Any, Any]
) -> np.ndarray[Any, Any] | None:
    """Where each turn's rows start, then ``len(score)``; None unless turns are
    contiguous, NaN-free and at most :data:`_MAX_WIDTH` rows wide."""
    n = len(score)
    if not n or np.isnan(score).any() or not bool(np.all(turn_key[1:] >= turn_key[:-1])):
        return None
    starts = np.flatnonzero(np.concatenate([[True], turn_key[1:] != turn_key[:-1]]))
    bounds = np.append(starts, n).astype(np.int64)
    if int(np.diff(bounds).max()) > _MAX_WIDTH:
        return None
    return bounds


def _score_stats_grouped(
    turn_key: np.ndarray[Any, Any], score: np.ndarray[Any, Any]
) -> dict[str, np.ndarray[Any, Any]]:
    """:func:`score_stats` of any turns (any order; NaN scores are left out of
    their turn's statistics, as pandas does).

    ``np.bincount`` adds each turn's values one at a time in row order, as the
    kernels do, and infinities count as the largest finite values in the sums
    (numpy's ``nan_to_num``), as there.
    """
    codes, uniques = pd.factorize(turn_key)
    turns = len(uniques)
    top = np.full(turns, np.nan)
    low = np.full(turns, np.nan)
    np.fmax.at(top, codes, score)  # fmax and fmin skip NaN
    np.fmin.at(low, codes, score)
    with np.errstate(all="ignore"):  # scores near float max overflow the mean: inf/nan
        size = np.bincount(codes, weights=~np.isnan(score), minlength=turns)
        total = np.bincount(codes, weights=np.nan_to_num(score, nan=0.0), minlength=turns)
        mean = (total / size)[codes]
        dev = score - mean
        squares = np.bincount(codes, weights=np.nan_to_num(dev * dev, nan=0.0), minlength=turns)
        std = np.sqrt(squares / size)[codes]
        top = top[codes] + 0.0  # + 0.0: one zero
        spread = (std > 0) & (top > low[codes])  # equal scores: no spread, whatever rounding says
        z = np.zeros(len(score), dtype=np.float64)
        np.divide(dev, std, out=z, where=spread)
        gap = top - score  # a top near float max minus a negative score overflows to inf
    return {"score_rank": _rank(codes, score), "score_gap": gap, "score_z": z}


def finish(base: dict[str, Any], answers: Sequence[str] | Column) -> pd.DataFrame:
    """Derive the full frame from base columns, one row per source.

    ``base`` holds ``turn_key`` (int64 numpy: index into ``answers``, one value
    per turn), ``turn_id``, ``question`` (one per turn, like ``answers``),
    ``line``, ``rank``,
    ``ordinal``, ``path`` (printed), ``title`` (nullable), ``heading``,
    ``wire_date`` (nullable), ``score``, ``text`` and ``hash``; strings as
    Arrow arrays, numbers as numpy or Arrow. It may also hold ``note`` and
    ``folder``; any column may be a future of one, ``path`` a future of
    ``[path, note, folder]`` (as :func:`map_paths` returns) and ``heading`` a
    future of ``(heading, match_heading)`` (as :func:`headings_and_matches`).
    """
    turn_key = np.asarray(base["turn_key"], dtype=np.int64)
    ordinal = _np_int(base["ordinal"])
    score = np.asarray(_np(base["score"]), dtype=np.float64)
    wire_date = base["wire_date"]
    # the kernels and Arrow release the GIL: they run on the pool while this
    # thread makes the shared question and answer strings (Python objects, GIL-bound)
    with ThreadPoolExecutor(2) as pool:
        cited_f = pool.submit(_cited, turn_key, ordinal, answers)
        stats_f = pool.submit(score_stats, turn_key, score)
        lengths = pool.submit(text_lengths, base["text"])
        dates_f = pool.submit(_dates_ns, wire_date)
        if "note" not in base and not isinstance(base["path"], Future):
            base["note"] = pool.submit(path_parts, base["path"])
        if "match_heading" not in base and not isinstance(base["heading"], Future):
            base["match_heading"] = pool.submit(match_headings, base["heading"])
        question = shared_strings(base["question"], turn_key)
        answer = shared_strings(answers, turn_key)
        cited, stats, dates = cited_f.result(), stats_f.result(), dates_f.result()
        base = {k: v.result() if isinstance(v, Future) else v for k, v in base.items()}
    if isinstance(base["path"], list):  # a future of [path, note, folder]
        base["path"], base["note"], base["folder"] = base["path"]
    elif isinstance(base["note"], list):  # a future of [note, folder]
        base["note"], base["folder"] = base["note"]
    if isinstance(base["heading"], tuple):  # a future of (heading, match_heading)
        base["heading"], base["match_heading"] = base["heading"]
    path, note, folder = base["path"], base["note"], base["folder"]
    cols: dict[str, Any] = {
        "turn_id": base["turn_id"],
        "question": question,
        "ordinal": ordinal,
        "rank": _np_int(base["rank"]),
        "path": path,
        "note": note,
        "folder": folder,
        "heading": base["heading"],
        "match_heading": base["match_heading"],
        "date": dates,
        "is_journal": _np(pc.is_valid(wire_date)).astype(bool),
        "score": score,
        "text": base["text"],
        "text_chars": _np_int(lengths.result()),
        "hash": base["hash"],
        "cited": cited,
        **stats,
        "title": base["title"],
        "wire_date": wire_date,
        "answer": answer,
        "line": _np_int(base["line"]),
    }
    return pd.DataFrame({name: _pandas(cols[name], COLUMNS[name]) for name in COLUMNS}, copy=False)


def _pandas(col: Any, dtype: Any) -> Any:
    """One column as pandas holds it, without copying what need not be copied."""
    if dtype == STRING:  # Arrow buffers shared, not copied
        chunked = col if isinstance(col, pa.ChunkedArray) else pa.chunked_array([col])
        return dtype.__from_arrow__(chunked.cast(pa.string()))
    if isinstance(dtype, pd.StringDtype):
        return col  # shared strings, built by shared_strings
    return np.asarray(_np(col), dtype=dtype)


def shared_strings(
    per_turn: Sequence[str] | Column, turn_key: np.ndarray[Any, Any]
) -> pd.api.extensions.ExtensionArray:
    """``per_turn[turn_key]`` as a :data:`SHARED_STRING` array: the rows of a turn
    hold references to one string object, not copies (nulls read as ``""``)."""
    if isinstance(per_turn, pa.Array | pa.ChunkedArray):
        values = np.asarray(pc.fill_null(per_turn, "").to_numpy(zero_copy_only=False), object)
    else:
        values = np.empty(len(per_turn), object)
        values[:] = list(per_turn)
    # validates without copying; pandas-stubs does not know the dtype argument yet
    return pd.arrays.StringArray(values[turn_key], dtype=SHARED_STRING)  # type: ignore[call-arg]


def _np(col: Any) -> np.ndarray[Any, Any]:
    if isinstance(col, pa.ChunkedArray | pa.Array):
        return np.asarray(col.to_numpy(zero_copy_only=False))
    return np.asarray(col)


def _np_int(col: Any) -> np.ndarray[Any, Any]:
    return np.asarray(_np(col), dtype=np.int64)
