"""Columnar building blocks of the sources frame.

kimun's ``AskSource::from_chunk`` rules over whole columns (no Python loop
per chunk): askkit's compiled kernels (:mod:`askkit.frame.kernels`) where they
are built, numpy cuts of the UTF-8 bytes (:mod:`askkit.frame._arrow_bytes`) where
they are not, Arrow string kernels for input neither takes (nulls, and for
numpy whitespace or doubled separators at a title's ends), the
per-unique-path ``VaultPath`` mapping, and :func:`finish`, which derives every
remaining column (dates, citations, per-turn score statistics) from a handful
of base columns. Both the object path and the JSONL path end in
:func:`finish`, so they share one schema.
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
from askkit.frame import _arrow_bytes as ab
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
    "take_rows",
    "valid_dates",
]

#: An Arrow column (``pa.Array`` or ``pa.ChunkedArray``); pyarrow ships no type hints.
Column: TypeAlias = Any

_INT64_MAX = 2**63 - 1
#: Runs of the breadcrumb separator: empty segments are dropped.
_SEP_RUN = re.escape(BREADCRUMB_SEP) + "+"
#: Everything up to and including the last joiner (``(?s)``: headings may hold newlines).
_NOTE_SUFFIX = ".md"
_DATE_SHAPE = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
#: Bytes of a citation marker; up to 18 digits always fit int64.
_OPEN, _CLOSE, _ZERO, _NINE = ord("["), ord("]"), ord("0"), ord("9")
_SHORT_DIGITS = 18
#: Largest (turns x highest ordinal) looked up in a table instead of sorted keys.
_TABLE_CELLS = 1 << 26
#: Cells of one (turns x widest turn) matrix of scores, and the widest turn reduced so.
_PAD_CELLS = 1 << 26
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
    (:func:`askkit.frame.kernels.headings`) when built; without them, titles
    without whitespace at either end or doubled separators (nearly all) are
    cut with numpy (:func:`_headings_bytes`). Any other column goes through
    Arrow's string kernels.
    """
    return headings_and_matches(title, date)[0]


def headings_and_matches(title: Column, date: Column) -> tuple[Column, Column]:
    """(:func:`headings`, :func:`match_headings` of them), the second cut straight
    from the titles when a fast path applies."""
    fast = _headings_compiled(title, date) or _headings_bytes(title, date)
    if fast is not None:
        return fast
    heading = _headings_kernels(title, date)
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


def _headings_kernels(title: Column, date: Column) -> Column:
    """:func:`headings` with Arrow's string kernels (any input)."""
    stripped = pc.utf8_trim(title, characters=RUST_WHITESPACE)
    prefixed = pc.fill_null(pc.equal(pc.utf8_slice_codeunits(stripped, 0, 10), date), False)
    # the end is trimmed already
    rest = pc.utf8_ltrim(pc.utf8_slice_codeunits(stripped, 10), characters=RUST_WHITESPACE)
    body = pc.if_else(prefixed, rest, stripped) if pc.any(prefixed).as_py() else stripped
    if pc.any(pc.match_substring(body, BREADCRUMB_SEP * 2)).as_py():  # RE2 only when needed
        body = pc.replace_substring_regex(body, _SEP_RUN, BREADCRUMB_SEP)
    ends = pc.utf8_trim(body, characters=BREADCRUMB_SEP)
    return pc.replace_substring(ends, BREADCRUMB_SEP, HEADING_JOINER)


_SEP = ord(BREADCRUMB_SEP)
_GUILLEMET = "›".encode()
#: ASCII bytes in ``RUST_WHITESPACE``, and the lead bytes of its other characters.
_ASCII_WS = np.zeros(256, bool)
_ASCII_WS[[9, 10, 11, 12, 13, 32]] = True
_WS_LEAD = np.zeros(256, bool)
_WS_LEAD[[0xC2, 0xE1, 0xE2, 0xE3]] = True


def _chunks(col: Column) -> list[pa.Array]:
    return list(col.chunks) if isinstance(col, pa.ChunkedArray) else [col]


def _headings_bytes(title: Column, date: Column) -> tuple[Column, Column] | None:
    """(headings, match headings) with numpy, or None when a title needs the
    general path: whitespace (or a character that may be whitespace) at either
    end or right after a date prefix, a doubled separator, a null, or
    misaligned chunks.

    Without a ``›`` in the titles, a heading's last joiner is its last
    separator, so the match heading is the title's bytes after that separator.
    """
    titles, dates = _chunks(title), _chunks(date)
    if [len(c) for c in titles] != [len(c) for c in dates]:
        return None
    out, matches = [], []
    for t_arr, d_arr in zip(titles, dates, strict=True):
        if t_arr.null_count:
            return None
        offsets, data = ab.offsets_and_data(t_arr)
        start, end = offsets[:-1].copy(), offsets[1:].copy()
        pad = ab.padded(data)
        size = end - start
        last = pad[np.maximum(end - 1, 0)]
        if (
            (size > 0) & (_ASCII_WS[pad[start]] | _WS_LEAD[pad[start]] | _ASCII_WS[last])
            | (size >= 2) & _WS_LEAD[pad[np.maximum(end - 2, 0)]]
            | (size >= 3) & _WS_LEAD[pad[np.maximum(end - 3, 0)]]
        ).any():
            return None  # whitespace may end a title: the general path trims it
        seps = ab.positions_of(data, _SEP, int(offsets[0]), int(offsets[-1]))
        if (np.diff(seps) == 1).any():
            return None  # a run of separators collapses: the general path
        if d_arr.null_count < len(d_arr) and not _drop_dates(pad, start, end, d_arr):
            return None
        lead = (start < end) & (pad[start] == _SEP)
        start += lead
        end -= (start < end) & (pad[np.maximum(end - 1, 0)] == _SEP)
        cut = ab.substrings(t_arr, start, end)
        out.append(pc.replace_substring(cut, BREADCRUMB_SEP, HEADING_JOINER))
        if len(ab.find_all(data, _GUILLEMET, len(_GUILLEMET) - 1)):
            matches.append(match_headings(out[-1]).combine_chunks())
        else:
            last_sep = ab.last_in_rows(seps, start, end)
            matches.append(ab.substrings(t_arr, np.where(last_sep >= 0, last_sep + 1, start), end))
    return pa.chunked_array(out, pa.string()), pa.chunked_array(matches, pa.string())


def _drop_dates(pad: ab.Bytes, start: ab.Ints, end: ab.Ints, date: pa.Array) -> bool:
    """Move ``start`` past a leading wire date and the ASCII whitespace after it;
    False when a non-ASCII character that may be whitespace follows one."""
    d_offsets, d_data = ab.offsets_and_data(date)
    d_pad = ab.padded(d_data)
    d_start = d_offsets[:-1]
    has = np.asarray(date.is_valid().to_numpy(zero_copy_only=False), bool)
    has &= end - start >= 10  # validated dates are ten ASCII bytes
    t_words, d_words = ab.words(pad), ab.words(d_pad)
    same = has & (t_words[start] == d_words[d_start])
    same &= t_words[start + 4] == d_words[d_start + 4]
    same &= (pad[start + 8] == d_pad[d_start + 8]) & (pad[start + 9] == d_pad[d_start + 9])
    start += np.where(same, 10, 0)
    active = np.flatnonzero(same)
    while len(active):  # one step per whitespace byte, over the rows still trimming
        inside = start[active] < end[active]
        byte = pad[start[active]]
        if (inside & _WS_LEAD[byte]).any():
            return False
        active = active[inside & _ASCII_WS[byte]]
        start[active] += 1
    return True


def _last_split(col: Column, sep: str, *, head: bool = True) -> tuple[Column, Column]:
    """(head, tail): ``col.rpartition(sep)`` per row (head ``""`` when absent), no regex."""
    parts = pc.split_pattern(col, sep, max_splits=1, reverse=True)
    chunks = parts.chunks if isinstance(parts, pa.ChunkedArray) else [parts]
    heads, tails = [], []
    for chunk in chunks:
        offsets = np.asarray(chunk.offsets.to_numpy(), dtype=np.int64)
        flat = chunk.values
        tails.append(flat.take(pa.array(offsets[1:] - 1)))
        if head:
            found = pa.array((offsets[1:] - offsets[:-1]) == 2)
            heads.append(pc.if_else(found, flat.take(pa.array(offsets[:-1])), ""))
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
    """``AskSource.match_heading()`` for a column: the part after the last joiner."""
    joiner = HEADING_JOINER.encode()
    anchor = joiner.index(max(joiner))  # the joiner's one non-ASCII last byte: rare in text

    def cut(arr: pa.Array, offsets: ab.Ints, data: ab.Bytes) -> pa.Array:
        seg = data[offsets[0] : offsets[-1]]
        hits = ab.find_all(seg, joiner, anchor) + offsets[0]
        last = ab.last_in_rows(hits, offsets[:-1], offsets[1:], len(joiner))
        return ab.substrings(
            arr, np.where(last >= 0, last + len(joiner), offsets[:-1]), offsets[1:]
        )

    try:
        return pa.chunked_array(ab.map_chunks(heading, cut), pa.string())
    except ValueError:  # nulls
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
        if chunk.null_count == 0:
            offsets, data = ab.offsets_and_data(chunk)
            if offsets[-1] == offsets[0] or data[offsets[0] : offsets[-1]].max() < 0x80:
                out.append(pa.array(np.diff(offsets).astype(np.int32)))
                continue
        out.append(pc.utf8_length(chunk))
    return pa.chunked_array(out, pa.int32())


def _dates_ns(wire_date: Column) -> np.ndarray[Any, Any]:
    """datetime64[ns] from validated wire dates; NaT when absent or outside the ns range.

    Each distinct date is converted once: its digits are read straight from
    the bytes (validated dates are ten ASCII bytes ``YYYY-MM-DD``) and turned
    into days with the proleptic Gregorian calendar.
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
    offsets, data = ab.offsets_and_data(dates)
    at = offsets[:-1]
    if not (np.diff(offsets) == 10).all():
        parsed = pc.strptime(dates, format="%Y-%m-%d", unit="s")
        return np.asarray(pc.cast(parsed, pa.int64()).to_numpy(), np.int64)
    words = ab.words(ab.padded(data))
    ymd = [words[at + k].astype(np.int64) for k in (0, 4, 8)]  # "YYYY", "-MM-", "DD.."

    def digit(word: int, byte: int) -> np.ndarray[Any, Any]:
        return np.asarray(((ymd[word] >> (8 * byte)) & 0xFF) - ord("0"), np.int64)

    year = digit(0, 0) * 1000 + digit(0, 1) * 100 + digit(0, 2) * 10 + digit(0, 3)
    month = digit(1, 1) * 10 + digit(1, 2)
    day = digit(2, 0) * 10 + digit(2, 1)
    return np.asarray(_days_from_civil(year, month, day) * 86400, np.int64)


def _days_from_civil(
    year: np.ndarray[Any, Any], month: np.ndarray[Any, Any], day: np.ndarray[Any, Any]
) -> np.ndarray[Any, Any]:
    """Days since 1970-01-01 of proleptic Gregorian dates (H. Hinnant's algorithm)."""
    year = year - (month <= 2)
    era = year // 400
    yoe = year - era * 400
    doy = (153 * np.where(month > 2, month - 3, month + 9) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return np.asarray(era * 146097 + doe - 719468, np.int64)


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

    A column of plain paths only (see :func:`_plain_rows`), the usual case, is
    its own printed form and is cut by the compiled kernels, or with numpy
    when they are not built; otherwise each distinct value is mapped once:
    plain ones with Arrow kernels, the rest with ``VaultPath``.
    """
    plain = _plain_parts_compiled(col) if _compiled.available() else _plain_parts_bytes(col)
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


_SLASH, _DOT = ord("/"), ord(".")
#: Windows device names (``_RESERVED_PART``) as the little-endian value of their
#: three bytes; COM and LPT take a digit.
_DEVICES = [int.from_bytes(n, "little") for n in (b"con", b"prn", b"aux", b"nul")]
_NUMBERED_DEVICES = [int.from_bytes(n, "little") for n in (b"com", b"lpt")]


def _plain_rows(offsets: ab.Ints, data: ab.Bytes, slashes: ab.Ints) -> bool:
    """Whether every row matches ``_SAFE_PATH`` and none ``_RESERVED_PART``, in numpy.

    ``slashes`` are the positions of every ``/``. Conservative like the
    regexes: ``False`` only means the slow path.
    """
    starts, ends = offsets[:-1], offsets[1:]
    if len(starts) == 0:
        return True
    if (ends <= starts).any():
        return False
    seg = data[offsets[0] : offsets[-1]]
    # "-./0-9" are 45..57; the rest of a plain path is a-z and "_"
    if not ((seg - np.uint8(45) < 13) | (seg - np.uint8(97) < 26) | (seg == 95)).all():
        return False
    punct = seg - np.uint8(_DOT) < 2  # "." or "/"
    if punct[starts - offsets[0]].any() or punct[ends - 1 - offsets[0]].any():
        return False  # a blank or dot-led first part, a dot-ended or blank last part
    if (punct[:-1] & punct[1:]).any():
        return False  # "//", "/.", "./", "..": a blank, dot-led or dot-ended part
    # a device name: three bytes at a part's start, then a digit for COM and LPT
    part = np.concatenate([starts, slashes + 1])
    pad = ab.padded(data)
    code = ab.words(pad)[part] & 0xFFFFFF
    three = np.zeros(len(part), bool)
    for device in _DEVICES:
        three |= code == device
    four = np.zeros(len(part), bool)
    for device in _NUMBERED_DEVICES:
        four |= code == device
    if not (three.any() or four.any()):
        return True
    at = part[three | four]
    end = ends[ab.row_of(offsets, at)]
    after3 = np.where(at + 3 < end, pad[at + 3], _SLASH)
    after4 = np.where(at + 4 < end, pad[at + 4], _SLASH)
    digit = (after3 >= ord("1")) & (after3 <= ord("9"))
    device3 = three[three | four] & ((after3 == _SLASH) | (after3 == _DOT))
    device4 = four[three | four] & digit & ((after4 == _SLASH) | (after4 == _DOT))
    return not (device3 | device4).any()


def _plain_parts_bytes(col: Column) -> list[Column] | None:
    """[col, stem, folder] when every row is a plain path, cut with numpy; else None."""

    def cut(arr: pa.Array, offsets: ab.Ints, data: ab.Bytes) -> tuple[pa.Array, pa.Array] | None:
        if len(arr) == 0:
            return arr, arr
        starts, ends = offsets[:-1], offsets[1:]
        slashes = ab.positions_of(data, _SLASH, int(offsets[0]), int(offsets[-1]))
        if not _plain_rows(offsets, data, slashes):
            return None
        last = ab.last_in_rows(slashes, starts, ends)
        has = last >= 0
        name = np.where(has, last + 1, starts)
        tail = data[np.clip(ends[:, None] + np.arange(-3, 0), 0, len(data) - 1)]
        md = (ends - name >= 3) & (tail == np.frombuffer(b".md", np.uint8)).all(axis=1)
        note = ab.substrings(arr, name, np.where(md, ends - 3, ends))
        return note, ab.substrings(arr, starts, np.where(has, last, starts))

    try:
        parts = ab.map_chunks(col, cut)
    except ValueError:  # nulls
        return None
    return _with_parts(col, parts)


def _plain_parts_compiled(col: Column) -> list[Column] | None:
    """[col, stem, folder] when every row is a plain path, from the compiled kernels."""
    parts = []
    for chunk in _chunks(col):
        parts.append(_compiled.plain_paths(chunk))
        if parts[-1] is None:  # not plain: the other chunks need not be cut
            return None
    return _with_parts(col, parts)


def _with_parts(col: Column, parts: list[Any]) -> list[Column] | None:
    """[col, notes, folders] from each chunk's (notes, folders), or None if one is None."""
    if any(p is None for p in parts):
        return None
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

    ``answers`` is a sequence of strings or an Arrow string column without nulls.
    The UTF-8 bytes of all answers are scanned at once with numpy: every ``[``
    followed by ASCII digits and ``]`` inside one answer is a marker. An answer
    with ``[[`` or ``]]`` (where kimun's scanner skips adjacent markers) goes
    through :func:`scan` itself. Pairs may repeat.
    """
    arr = answers if isinstance(answers, pa.Array | pa.ChunkedArray) else pa.array(answers)
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks else pa.array([], arr.type)
    if not pa.types.is_large_string(arr.type):
        arr = pc.cast(arr, pa.string())
    if len(arr) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    buffers = arr.buffers()
    width = np.int64 if pa.types.is_large_string(arr.type) else np.int32
    raw = np.frombuffer(buffers[1], width)[arr.offset : arr.offset + len(arr) + 1]
    offsets: ab.Ints = raw.astype(np.int64)
    data = np.frombuffer(buffers[2], np.uint8) if buffers[2] is not None else np.zeros(1, np.uint8)
    compiled = _compiled.citations(offsets, data)
    if compiled is not None:
        c_turn, c_num, skipped = compiled
        s_turn, s_num = _scan_answers(arr, skipped)
        return np.concatenate([c_turn, s_turn]), np.concatenate([c_num, s_num])
    lo, hi = int(offsets[0]), int(offsets[-1])
    opens = ab.positions_of(data, _OPEN, lo, hi)
    turn = ab.row_of(offsets, opens)
    closes = ab.positions_of(data, _CLOSE, lo, hi)
    skipped = np.zeros(len(arr), bool)  # answers with "[[" or "]]"
    for marks, byte in ((opens, _OPEN), (closes, _CLOSE)):
        pair = marks[:-1][(marks[1:] == marks[:-1] + 1) & (data[marks[1:]] == byte)]
        rows = ab.row_of(offsets, pair)
        skipped[rows[pair + 1 < offsets[rows + 1]]] = True  # both bytes in one answer
    turns, numbers = _scan_answers(arr, skipped)
    keep = ~skipped[turn]
    opens, turn = opens[keep], turn[keep]
    value, length, closed = _read_markers(data, opens, offsets[turn + 1])
    long_ = closed & (length > _SHORT_DIGITS)
    long_t: list[int] = []
    long_n: list[int] = []
    for i in np.flatnonzero(long_).tolist():
        start = int(opens[i]) + 1
        n = int(data[start : start + int(length[i])].tobytes())
        long_t.append(int(turn[i]))
        long_n.append(n if n <= _INT64_MAX else 0)
    short = closed & ~long_
    all_t = np.concatenate([turn[short].astype(np.int64), turns, np.asarray(long_t, np.int64)])
    all_n = np.concatenate([value[short], numbers, np.asarray(long_n, np.int64)])
    keep = all_n > 0
    return all_t[keep], all_n[keep]


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


def _read_markers(
    data: np.ndarray[Any, Any], opens: np.ndarray[Any, Any], end: np.ndarray[Any, Any]
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """(value of the first 18 digits, digit count, whether ``]`` follows) after each
    ``[`` at ``opens``, reading no further than ``end``."""
    value = np.zeros(len(opens), np.int64)
    length = np.zeros(len(opens), np.int64)
    closed = np.zeros(len(opens), bool)
    active = np.arange(len(opens))
    k = 1
    while len(active):  # one step per digit, over the markers still reading digits
        at = opens[active] + k
        inside = at < end[active]
        byte = np.where(inside, data[np.minimum(at, len(data) - 1)], 0)
        digit = inside & (byte >= _ZERO) & (byte <= _NINE)
        done = active[~digit]
        closed[done] = (byte[~digit] == _CLOSE) & (k > 1)
        length[done] = k - 1
        active = active[digit]
        if k <= _SHORT_DIGITS:
            value[active] = value[active] * 10 + (byte[digit].astype(np.int64) - _ZERO)
        k += 1
    return value, length, closed


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


def _rank_lexsort(turn_key: np.ndarray[Any, Any], score: np.ndarray[Any, Any]) -> Any:
    """``groupby(turn).rank(method="min", ascending=False)`` as one lexsort (any
    order, NaN included)."""
    order = np.lexsort((-score, turn_key))
    k, s = turn_key[order], score[order]
    n = len(order)
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


def _score_stats(
    turn_key: np.ndarray[Any, Any], score: np.ndarray[Any, Any]
) -> dict[str, np.ndarray[Any, Any]]:
    """Per-turn score columns: per-turn aggregates taken back to the rows (no apply).

    Turns whose rows are contiguous (as every reader builds them) and not too
    wide go through the compiled kernels or, without them, are laid out as
    (turn x position) matrices of at most :data:`_PAD_CELLS` cells and reduced
    column by column. Both sum each turn left to right, so a turn's values
    depend on its own scores only and the two agree to the last bit. Anything
    else goes through a pandas groupby.
    """
    bounds = _turn_bounds(turn_key, score)
    if bounds is None:
        return _score_stats_grouped(turn_key, score)
    compiled = _compiled.turn_stats(bounds, score)
    if compiled is not None:
        return compiled
    width = int(np.diff(bounds).max())
    per_block = max(1, _PAD_CELLS // width)  # turns per matrix
    blocks = [
        _matrix_stats(score[b[0] : b[-1]], b - b[0])
        for b in (bounds[t : t + per_block + 1] for t in range(0, len(bounds) - 1, per_block))
    ]
    return {name: np.concatenate([b[name] for b in blocks]) for name in blocks[0]}


def _matrix_stats(
    score: np.ndarray[Any, Any], bounds: np.ndarray[Any, Any]
) -> dict[str, np.ndarray[Any, Any]]:
    """:func:`_score_stats` of contiguous turns ``bounds[t]:bounds[t + 1]``, no NaN."""
    m, back = _turn_matrix(score, bounds)
    width = m.shape[1]
    with np.errstate(all="ignore"):  # scores near float max overflow the mean: inf/nan, as numpy
        top = np.fmax.reduce(m, axis=1)[:, None] + 0.0  # NaN is padding; + 0.0: one zero
        low = np.fmin.reduce(m, axis=1)[:, None]
        size = np.zeros(len(m))
        total = np.zeros(len(m))
        for j in range(width):  # left to right, as a running sum
            size += ~np.isnan(m[:, j])
            total += np.nan_to_num(m[:, j], nan=0.0)
        mean = (total / size)[:, None]
        squares = np.zeros(len(m))
        higher = np.zeros(m.shape, np.int64)
        for j in range(width):
            dev = m[:, j] - mean[:, 0]
            squares += np.nan_to_num(dev * dev, nan=0.0)
            higher += m[:, j : j + 1] > m
        std = np.sqrt(squares / size)[:, None]
        spread = (std > 0) & (top > low)  # equal scores: no spread, even if rounding says some
        z = np.zeros(m.shape)
        np.divide(m - mean, std, out=z, where=spread)
        gap = top - m  # a top near float max minus a negative score overflows to inf
    return {"score_rank": back(higher + 1), "score_gap": back(gap), "score_z": back(z)}


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


def _turn_matrix(
    score: np.ndarray[Any, Any], bounds: np.ndarray[Any, Any]
) -> tuple[np.ndarray[Any, Any], Any]:
    """(turn x position matrix of scores, NaN-padded; a function from such a matrix
    back to rows) of the turns ``bounds[t]:bounds[t + 1]``."""
    n = len(score)
    starts, sizes = bounds[:-1], np.diff(bounds)
    width = int(sizes.max())
    if (sizes == width).all():  # every turn as wide: a view, no copy
        return score.reshape(len(starts), width), lambda m: np.ascontiguousarray(m).reshape(-1)
    group = np.repeat(np.arange(len(starts)), sizes)
    at = np.arange(n) - starts[group]
    padded = np.full((len(starts), width), np.nan)
    padded[group, at] = score
    return padded, lambda m: m[group, at]


def _score_stats_grouped(
    turn_key: np.ndarray[Any, Any], score: np.ndarray[Any, Any]
) -> dict[str, np.ndarray[Any, Any]]:
    """:func:`_score_stats` with a pandas groupby: any order, NaN included."""
    grouped = pd.Series(score).groupby(turn_key, sort=False)
    codes = grouped.ngroup().to_numpy()
    with np.errstate(all="ignore"):
        top = grouped.max().to_numpy()[codes]
        low = grouped.min().to_numpy()[codes]
        mean = grouped.mean().to_numpy()[codes]
        std = grouped.std(ddof=0).to_numpy()[codes]
        spread = (std > 0) & (top > low)
        z = np.zeros(len(score), dtype=np.float64)
        np.divide(score - mean, std, out=z, where=spread)
        gap = top - score
    return {"score_rank": _rank_lexsort(turn_key, score), "score_gap": gap, "score_z": z}


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
    # the kernels, numpy and Arrow release the GIL: they run on the pool while this
    # thread makes the shared question and answer strings (Python objects, GIL-bound)
    with ThreadPoolExecutor(2) as pool:
        cited_f = pool.submit(_cited, turn_key, ordinal, answers)
        stats_f = pool.submit(_score_stats, turn_key, score)
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
