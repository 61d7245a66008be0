"""Columnar building blocks of the sources frame.

kimun's ``AskSource::from_chunk`` rules as Arrow compute kernels (no Python
loop per chunk), the per-unique-path ``VaultPath`` mapping, and
:func:`finish`, which derives every remaining column (dates, citations,
per-turn score statistics) from a handful of base columns. Both the object
path and the JSONL path end in :func:`finish`, so they share one schema.
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

from askkit._frame_schema import COLUMNS, STRING
from askkit._text import RUST_WHITESPACE
from askkit.citations import scan
from askkit.sources import BREADCRUMB_SEP, HEADING_JOINER, VaultPath

__all__ = [
    "cited_ordinals",
    "finish",
    "headings",
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
#: Largest (turns x widest turn x widest turn) ranked by counting instead of sorting.
_PAD_CELLS = 1 << 26
#: Bytes of string data per piece of a :func:`take_rows` output.
_TAKE_BYTES = 1 << 30
#: datetime64[ns] holds 1677-09-21 .. 2262-04-11; whole days inside that range.
_NS_MIN = np.datetime64("1677-09-22", "s").astype("int64")
_NS_MAX = np.datetime64("2262-04-11", "s").astype("int64")


def headings(title: Column, date: Column) -> Column:
    """``heading_from_title`` for whole columns: Rust trim, date prefix, breadcrumb join.

    ``date`` holds validated ``YYYY-MM-DD`` strings (ten code points) or nulls.
    """
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
    """``len(text)`` in code points."""
    return pc.utf8_length(text)


def _dates_ns(wire_date: Column) -> np.ndarray[Any, Any]:
    """datetime64[ns] from validated wire dates; NaT when absent or outside the ns range."""
    seconds = pc.cast(pc.strptime(wire_date, format="%Y-%m-%d", unit="s"), pa.int64())
    secs = np.asarray(pc.fill_null(seconds, np.iinfo(np.int64).min).to_numpy(), dtype=np.int64)
    inside = (secs >= _NS_MIN) & (secs <= _NS_MAX)
    out = np.full(len(secs), np.datetime64("NaT"), dtype="datetime64[ns]")
    out[inside] = secs[inside].astype("datetime64[s]").astype("datetime64[ns]")
    return out


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
    """[printed path, stem, folder] per row, computed once per distinct path.

    Plain paths (see ``_SAFE_PATH``) are their own printed form and are split
    with Arrow kernels; ``VaultPath`` handles every other distinct value.
    """
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
    adjacent = pc.or_(pc.match_substring(arr, "[["), pc.match_substring(arr, "]]"))
    skipped = np.asarray(pc.fill_null(adjacent, False).to_numpy(zero_copy_only=False), bool)
    turns: list[int] = []
    numbers: list[int] = []
    for i in np.flatnonzero(skipped).tolist():
        found = {c.index for c in scan(arr[i].as_py() or "")}
        turns.extend([i] * len(found))
        numbers.extend(found)
    buffers = arr.buffers()
    width = np.int64 if pa.types.is_large_string(arr.type) else np.int32
    offsets = np.frombuffer(buffers[1], width)[arr.offset : arr.offset + len(arr) + 1]
    offsets = offsets.astype(np.int64)
    data = np.frombuffer(buffers[2], np.uint8) if buffers[2] is not None else np.zeros(1, np.uint8)
    lo, hi = int(offsets[0]), int(offsets[-1])
    opens = np.flatnonzero(data[lo:hi] == _OPEN) + lo
    turn = np.searchsorted(offsets, opens, side="right") - 1
    keep = ~skipped[turn]
    opens, turn = opens[keep], turn[keep]
    value, length, closed = _read_markers(data, opens, offsets[turn + 1])
    long_ = closed & (length > _SHORT_DIGITS)
    for i in np.flatnonzero(long_).tolist():
        start = int(opens[i]) + 1
        n = int(data[start : start + int(length[i])].tobytes())
        turns.append(int(turn[i]))
        numbers.append(n if n <= _INT64_MAX else 0)
    short = closed & ~long_
    all_t = np.concatenate([turn[short].astype(np.int64), np.asarray(turns, dtype=np.int64)])
    all_n = np.concatenate([value[short], np.asarray(numbers, dtype=np.int64)])
    keep = all_n > 0
    return all_t[keep], all_n[keep]


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
    if (len(answers) + 1) * (top + 1) < _INT64_MAX:  # one int64 key per (turn, number)
        return np.isin(turn_key * (top + 1) + ordinal, c_turn * (top + 1) + c_num)
    rows = pd.MultiIndex.from_arrays([turn_key, ordinal])
    return np.asarray(rows.isin(list(zip(c_turn.tolist(), c_num.tolist(), strict=True))))


def _rank_min_desc(turn_key: np.ndarray[Any, Any], score: np.ndarray[Any, Any]) -> Any:
    """``groupby(turn).rank(method="min", ascending=False)``.

    Turns whose rows are contiguous and small (as every reader builds them) are
    ranked by counting, per row, the higher scores of its turn in a padded
    (turn x size) matrix; anything else by one lexsort.
    """
    n = len(turn_key)
    if n and not np.isnan(score).any() and bool(np.all(turn_key[1:] >= turn_key[:-1])):
        starts = np.flatnonzero(np.concatenate([[True], turn_key[1:] != turn_key[:-1]]))
        sizes = np.diff(np.append(starts, n))
        width = int(sizes.max())
        if len(starts) * width * width <= _PAD_CELLS:
            group = np.repeat(np.arange(len(starts)), sizes)
            at = np.arange(n) - starts[group]
            padded = np.full((len(starts), width), -np.inf)
            padded[group, at] = score
            higher = (padded[:, None, :] > padded[:, :, None]).sum(axis=2)
            return higher[group, at].astype(np.int64) + 1
    return _rank_lexsort(turn_key, score)


def _rank_lexsort(turn_key: np.ndarray[Any, Any], score: np.ndarray[Any, Any]) -> Any:
    """:func:`_rank_min_desc` as one lexsort (any order, NaN included)."""
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
    """Per-turn score columns: groupby aggregates taken back to the rows (no apply)."""
    grouped = pd.Series(score).groupby(turn_key, sort=False)
    codes = grouped.ngroup().to_numpy()
    with np.errstate(all="ignore"):  # scores near float max overflow the mean: inf/nan, as numpy
        top = grouped.max().to_numpy()[codes]
        mean = grouped.mean().to_numpy()[codes]
        std = grouped.std(ddof=0).to_numpy()[codes]
        spread = std > 0
        z = np.zeros(len(score), dtype=np.float64)
        np.divide(score - mean, std, out=z, where=spread)
        gap = top - score  # a top near float max minus a negative score overflows to inf
    return {
        "score_rank": _rank_min_desc(turn_key, score),
        "score_gap": gap,
        "score_z": z,
    }


def finish(base: dict[str, Any], answers: Sequence[str] | Column) -> pd.DataFrame:
    """Derive the full frame from base columns, one row per source.

    ``base`` holds ``turn_key`` (int64 numpy: index into ``answers``, one value
    per turn), ``turn_id``, ``question``, ``answer``, ``line``, ``rank``,
    ``ordinal``, ``path`` (printed), ``title`` (nullable), ``heading``,
    ``wire_date`` (nullable), ``score``, ``text`` and ``hash``; strings as
    Arrow arrays, numbers as numpy or Arrow. It may also hold ``note`` and
    ``folder``; any column may be a future of one, and ``path`` a future of
    ``[path, note, folder]`` (as :func:`map_paths` returns).
    """
    turn_key = np.asarray(base["turn_key"], dtype=np.int64)
    ordinal = _np_int(base["ordinal"])
    score = np.asarray(_np(base["score"]), dtype=np.float64)
    wire_date = base["wire_date"]
    with ThreadPoolExecutor(2) as pool:  # Arrow kernels release the GIL
        lengths = pool.submit(text_lengths, base["text"])
        if "note" not in base and not isinstance(base["path"], Future):
            base["note"] = pool.submit(path_parts, base["path"])
        if "match_heading" not in base:
            base["match_heading"] = pool.submit(match_headings, base["heading"])
        cited = _cited(turn_key, ordinal, answers)
        stats = _score_stats(turn_key, score)
        dates = _dates_ns(wire_date)
        base = {k: v.result() if isinstance(v, Future) else v for k, v in base.items()}
    if isinstance(base["path"], list):  # a future of [path, note, folder]
        base["path"], base["note"], base["folder"] = base["path"]
    elif isinstance(base["note"], list):  # a future of [note, folder]
        base["note"], base["folder"] = base["note"]
    path, note, folder = base["path"], base["note"], base["folder"]
    cols: dict[str, Any] = {
        "turn_id": base["turn_id"],
        "question": base["question"],
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
        "answer": base["answer"],
        "line": _np_int(base["line"]),
    }
    arrow = pa.table({name: _arrow(cols[name]) for name in COLUMNS})
    mapper = {pa.string(): STRING, pa.large_string(): STRING}.get
    frame: pd.DataFrame = arrow.to_pandas(
        types_mapper=mapper, self_destruct=True, split_blocks=True
    )
    return frame.astype(COLUMNS)


def _np(col: Any) -> np.ndarray[Any, Any]:
    if isinstance(col, pa.ChunkedArray | pa.Array):
        return np.asarray(col.to_numpy(zero_copy_only=False))
    return np.asarray(col)


def _np_int(col: Any) -> np.ndarray[Any, Any]:
    return np.asarray(_np(col), dtype=np.int64)


def _arrow(col: Any) -> pa.Array | pa.ChunkedArray:
    if isinstance(col, pa.ChunkedArray | pa.Array):
        return col
    arr = np.asarray(col)
    if arr.dtype.kind == "M":
        return pa.array(arr, pa.timestamp("ns"))
    return pa.array(arr)
