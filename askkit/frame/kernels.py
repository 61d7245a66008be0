"""The compiled kernels (``askkit.frame._kernels``, C) on Arrow string columns.

Building the sources frame applies kimun's per-row rules (the heading of a
wire title, the note and folder of a path, the citation markers of an answer,
the per-turn score statistics) to a million rows, and reads the string fields
of as many ``AskSource`` objects. :mod:`askkit.frame._kernels`
does each in one pass over the bytes without the GIL; this module hands it
Arrow buffers and wraps what it returns as Arrow arrays, without copying.

This is the one place that decides between the kernels and their fallback:
every function returns ``None`` when the kernels are not built (an install
without a C compiler), switched off (:data:`ENABLED`), or the input is
outside what they handle (nulls, a column past 2 GiB); the caller
(:mod:`askkit.frame.columns`) then takes its pyarrow.compute path, which
gives the same values, more slowly.

:data:`ENABLED` switches the kernels off (the tests run both paths).

>>> compiled_kernels() == (built() and ENABLED)
True
"""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType
from typing import Any

import numpy as np
import pyarrow as pa

_built: ModuleType | None
try:
    from askkit.frame import _kernels as _built
except ImportError:  # built without a C compiler: pyarrow.compute does the work
    _built = None

__all__ = [
    "ENABLED",
    "attr_strings",
    "available",
    "built",
    "citations",
    "compiled_kernels",
    "headings",
    "plain_paths",
    "turn_stats",
]

#: Whether to use the compiled kernels when they are built.
ENABLED = True

_EMPTY = pa.py_buffer(b"")


def built() -> bool:
    """Whether the compiled kernels were built when askkit was installed."""
    return _built is not None


def available() -> bool:
    """Whether the compiled kernels are built and enabled."""
    return built() and ENABLED


def compiled_kernels() -> bool:
    """Whether askkit's compiled kernels build the frame's string columns.

    They are compiled when askkit is installed; where no C compiler was at
    hand, pyarrow.compute does the same work, more slowly, with the same values.

    >>> isinstance(compiled_kernels(), bool)
    True
    """
    return available()


def _kernels() -> ModuleType | None:
    return _built if ENABLED else None


def _offsets(arr: pa.Array) -> np.ndarray[Any, Any]:
    width = np.int64 if pa.types.is_large_string(arr.type) else np.int32
    return np.frombuffer(arr.buffers()[1], width)[arr.offset : arr.offset + len(arr) + 1]


def _data(arr: pa.Array) -> Any:
    return arr.buffers()[2] or _EMPTY


def _string(n: int, column: tuple[bytes, bytes]) -> pa.Array:
    offsets, data = column
    return pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(data)])


def attr_strings(objects: list[Any], names: Sequence[str | None]) -> list[pa.Array] | None:
    """One Arrow string column per name: that attribute of every object (the
    object itself for ``None``), nulls for ``None`` values, in one C pass each.

    ``None`` when the kernels are off, a value is neither a ``str`` nor ``None``,
    a string holds a lone surrogate or a column would pass 2 GiB: the caller's
    ``pa.array`` then builds the columns, or raises its own error.
    """
    kernels = _kernels()
    if kernels is None:
        return None
    out = kernels.attr_strings(objects, tuple(names))
    if out is None:
        return None
    return [
        pa.Array.from_buffers(
            pa.string(),
            len(o) // 4 - 1,  # the rows read: a property may have changed the list
            [None if valid is None else pa.py_buffer(valid), pa.py_buffer(o), pa.py_buffer(d)],
        )
        for o, d, valid in out
    ]


def headings(title: pa.Array, date: pa.Array) -> tuple[pa.Array, pa.Array] | None:
    """(heading, match heading) per row of one title chunk and its date chunk.

    ``heading_from_title`` then ``match_heading``, exactly; ``None`` when the
    kernels are off, a title is null or the headings pass 2 GiB.
    """
    kernels = _kernels()
    if kernels is None or title.null_count or not pa.types.is_string(title.type):
        return None
    if pa.types.is_null(date.type):
        date = date.cast(pa.string())
    elif not pa.types.is_string(date.type):
        return None
    validity = date.buffers()[0] if date.null_count else None
    out = kernels.headings(
        _offsets(title), _data(title), _offsets(date), _data(date), validity, date.offset
    )
    if out is None:
        return None
    return _string(len(title), out[0]), _string(len(title), out[1])


def plain_paths(path: pa.Array) -> tuple[pa.Array, pa.Array] | None:
    """(note, folder) per row of a path chunk when every row is a plain path
    (``VaultPath`` prints it unchanged); ``None`` when one is not, a path is
    null or the kernels are off."""
    kernels = _kernels()
    if kernels is None or path.null_count or not pa.types.is_string(path.type):
        return None
    out = kernels.plain_paths(_offsets(path), _data(path))
    if out is None:
        return None
    return _string(len(path), out[0]), _string(len(path), out[1])


def citations(
    answers: pa.Array,
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]] | None:
    """(answer index, number) of every citation marker in a string or large
    string array without nulls, and a bool per answer holding ``[[`` or ``]]``
    (whose markers the caller scans itself); ``None`` when the kernels are off
    or an answer is null."""
    kernels = _kernels()
    large = pa.types.is_large_string(answers.type)
    if kernels is None or answers.null_count or not (large or pa.types.is_string(answers.type)):
        return None
    offsets = np.ascontiguousarray(_offsets(answers), np.int64)
    turns, numbers, skipped = kernels.citations(offsets, _data(answers))
    return (
        np.frombuffer(turns, np.int64),
        np.frombuffer(numbers, np.int64),
        np.frombuffer(skipped, np.uint8).astype(bool),
    )


def turn_stats(
    bounds: np.ndarray[Any, Any], score: np.ndarray[Any, Any]
) -> dict[str, np.ndarray[Any, Any]] | None:
    """``score_rank``, ``score_gap`` and ``score_z`` of NaN-free scores whose turns
    are the runs ``bounds[t]:bounds[t + 1]``; ``None`` when the kernels are off."""
    kernels = _kernels()
    if kernels is None:
        return None
    rank, gap, z = kernels.turn_stats(
        np.ascontiguousarray(bounds, np.int64), np.ascontiguousarray(score, np.float64)
    )
    return {
        "score_rank": np.frombuffer(rank, np.int64),
        "score_gap": np.frombuffer(gap, np.float64),
        "score_z": np.frombuffer(z, np.float64),
    }
