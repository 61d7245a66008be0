"""Byte-level work on Arrow string columns with numpy: find, check, cut.

Arrow's string kernels cut every row at the same place; these helpers cut each
row at its own byte range. A cut is written as a ``string_view`` array of
16-byte views into the original data buffer (no copy of the text) and cast to
a plain string array, which copies just the kept bytes once. Everything runs
per chunk of the column, so the numpy temporaries stay small.

>>> col = pa.chunked_array([["ab/cd", "ef"]])
>>> [c.to_pylist() for c in map_chunks(col, lambda a, o, d: substrings(a, o[:-1] + 1, o[1:]))]
[['b/cd', 'f']]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa

__all__ = [
    "find_all",
    "last_in_rows",
    "map_chunks",
    "offsets_and_data",
    "padded",
    "positions_of",
    "row_of",
    "substrings",
    "words",
]

#: Bytes a string view holds inline (a longer value points into a data buffer).
_INLINE = 12
#: Zero bytes after the data in :func:`padded`.
_PAD = 16
_EMPTY = np.zeros(0, np.uint8)
#: Bytes scanned at a time: temporaries stay in the CPU cache and are reused.
_BLOCK = 1 << 18

Bytes = np.ndarray[Any, np.dtype[np.uint8]]
Ints = np.ndarray[Any, np.dtype[np.int64]]


def offsets_and_data(arr: pa.Array) -> tuple[Ints, Bytes]:
    """(``len(arr) + 1`` offsets into ``data``, the data buffer as bytes) of a string array."""
    if not pa.types.is_string(arr.type):
        raise TypeError(f"expected a string array, got {arr.type}")
    buffers = arr.buffers()
    offsets = np.frombuffer(buffers[1], np.int32)[arr.offset : arr.offset + len(arr) + 1]
    data = np.frombuffer(buffers[2], np.uint8) if buffers[2] is not None else _EMPTY
    return offsets.astype(np.int64), data


def map_chunks(
    col: pa.Array | pa.ChunkedArray,
    fn: Callable[[pa.Array, Ints, Bytes], Any],
) -> list[Any]:
    """``fn(chunk, offsets, data)`` for each chunk of a string column without nulls."""
    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    out = []
    for chunk in chunks:
        if chunk.null_count:
            raise ValueError("map_chunks needs a column without nulls")
        offsets, data = offsets_and_data(chunk)
        out.append(fn(chunk, offsets, data))
    return out


def positions_of(data: Bytes, byte: int, lo: int = 0, hi: int | None = None) -> Ints:
    """Sorted positions of ``byte`` in ``data[lo:hi]``, scanned in cache-sized blocks
    (no temporary as large as the data)."""
    hi = len(data) if hi is None else hi
    found = [
        np.flatnonzero(data[at : min(at + _BLOCK, hi)] == byte) + at for at in range(lo, hi, _BLOCK)
    ]
    return np.concatenate([np.zeros(0, np.int64), *found])


def padded(data: Bytes) -> Bytes:
    """A copy of ``data`` followed by 16 zero bytes, so reads a few bytes past any
    row (word loads, lookahead) stay inside the array."""
    return np.concatenate([data, np.zeros(_PAD, np.uint8)])


def row_of(offsets: Ints, positions: Ints) -> Ints:
    """The row holding each byte position (positions inside ``offsets[0]..offsets[-1]``)."""
    return np.searchsorted(offsets, positions, side="right") - 1


def last_in_rows(positions: Ints, starts: Ints, ends: Ints, width: int = 1) -> Ints:
    """Per row, the largest of the sorted ``positions`` whose ``width`` bytes lie
    inside ``starts[i]:ends[i]``, or -1."""
    if len(positions) == 0:
        return np.full(len(starts), -1, np.int64)
    k = np.searchsorted(positions, ends - width, side="right") - 1
    found = positions[np.maximum(k, 0)]
    return np.where((k >= 0) & (found >= starts), found, -1)


def find_all(data: Bytes, needle: bytes, anchor: int) -> Ints:
    """Sorted start positions of ``needle`` in ``data``; ``anchor`` is the index of
    its rarest byte (searched first)."""
    hits = np.flatnonzero(data == needle[anchor]) - anchor
    hits = hits[(hits >= 0) & (hits <= len(data) - len(needle))]
    for i, byte in enumerate(needle):
        if i != anchor and len(hits):
            hits = hits[data[hits + i] == byte]
    return hits.astype(np.int64)


def words(data: Bytes) -> np.ndarray[Any, np.dtype[np.uint32]]:
    """Every 4-byte little-endian word of ``data``, one starting at each byte (a view)."""
    return np.ndarray((len(data) - 3,), "<u4", buffer=data, strides=(1,))


#: ``_MASKS[k][n]``: the mask of inline word ``k`` that keeps the first ``n`` bytes of 12.
_MASKS = np.array(
    [np.frombuffer(bytes([0xFF] * n + [0] * (_INLINE - n)), "<u4") for n in range(_INLINE + 1)],
    np.uint32,
).T.copy()


def substrings(arr: pa.Array, lo: Ints, hi: Ints) -> pa.Array:
    """Row ``i`` is the bytes ``lo[i]:hi[i]`` of ``arr``'s data buffer (absolute
    positions, each range inside its row and on UTF-8 character boundaries)."""
    n = len(lo)
    data_buffer = arr.buffers()[2]
    data = np.frombuffer(data_buffer, np.uint8) if data_buffer is not None else _EMPTY
    length = hi - lo
    views = np.empty((n, 4), np.uint32)  # length, then 12 inline bytes or prefix, buffer, offset
    views[:, 0] = length
    if n:
        # three unaligned word loads per row; rows in the last 12 bytes load from a copy
        if (lo > len(data) - _INLINE).any():
            data = padded(data)
        loads = words(data)
        kept = np.minimum(length, _INLINE)
        inline = length <= _INLINE
        views[:, 1] = loads[lo] & _MASKS[0].take(kept)  # a long value's prefix
        views[:, 2] = np.where(inline, loads[lo + 4] & _MASKS[1].take(kept), 0)  # or buffer 0
        views[:, 3] = np.where(inline, loads[lo + 8] & _MASKS[2].take(kept), lo)  # or offset
    buffers = [None, pa.py_buffer(views), data_buffer or pa.py_buffer(b"")]
    return pa.Array.from_buffers(pa.string_view(), n, buffers).cast(pa.string())
