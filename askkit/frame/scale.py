"""Read many JSONL turn logs on a Dask cluster, one partition per file.

Each partition is :func:`askkit.frame.sources_frame` of one file, so the
schema and every value are those of the pandas path.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from askkit._optional import optional_import
from askkit.errors import SchemaError
from askkit.frame.load import Loaded, PathInput, sources_frame
from askkit.frame.schema import empty_errors, empty_frame

__all__ = ["RECORD_COLUMNS", "DaskLoaded", "read_jsonl_dask"]

#: One row per file of a lenient :func:`read_jsonl_dask`: records read and loaded.
RECORD_COLUMNS = {"file": "str", "records": "int64", "records_loaded": "int64"}


def _load_partition(path: str) -> pd.DataFrame:
    return sources_frame(Path(path))


def _load_lenient(path: str) -> Loaded:
    return sources_frame(Path(path), strict=False)


def _loaded_part(loaded: Loaded, part: str, path: str) -> pd.DataFrame:
    if part == "records":
        counts = {"records": [loaded.records], "records_loaded": [loaded.records_loaded]}
        return pd.DataFrame({"file": [str(Path(path))], **counts}).astype(RECORD_COLUMNS)
    frame: pd.DataFrame = getattr(loaded, part)
    return frame


@dataclass(frozen=True)
class DaskLoaded:
    """What ``read_jsonl_dask(..., strict=False)`` returns: three lazy dask frames,
    one partition per file.

    ``frame`` holds the good rows (:data:`COLUMNS`), ``errors`` one row per
    rejected record (:data:`ERROR_COLUMNS`) and ``records`` one row per file
    (:data:`RECORD_COLUMNS`: ``file``, ``records``, ``records_loaded``). As
    with :class:`Loaded`, nothing is dropped silently: per file, ``records ==
    records_loaded + `` its rows in ``errors``. Unpacks as ``frame, errors``.
    Compute them together (``dask.compute(loaded.frame, loaded.errors,
    loaded.records)``) to read each file once.
    """

    frame: Any
    errors: Any
    records: Any

    def __iter__(self) -> Iterator[Any]:
        return iter((self.frame, self.errors))


def _files(paths: PathInput | Sequence[PathInput]) -> list[str]:
    """The files named, patterns expanded (sorted); a pattern matching nothing is an error."""
    items: list[PathInput] = [paths] if isinstance(paths, str | os.PathLike) else list(paths)
    files: list[str] = []
    for p in items:
        text = os.fspath(p)
        if not glob.has_magic(text):
            files.append(text)
            continue
        matches = sorted(glob.glob(text))  # noqa: PTH207 - absolute patterns
        if not matches:
            raise SchemaError("the pattern matches no file", field="paths", value=text)
        files.extend(matches)
    if not files:
        raise SchemaError("no JSONL files to read", field="paths", value=paths)
    return files


def read_jsonl_dask(paths: PathInput | Sequence[PathInput], *, strict: bool = True) -> Any:
    """A ``dask.dataframe.DataFrame`` over JSONL turn logs: one partition per file.

    Each partition is :func:`sources_frame` of one file, so the schema and
    every value are those of the pandas path. Per-turn columns
    (``score_rank``, ``score_gap``, ``score_z``, ``cited``) need whole turns
    in a partition; one JSONL line is one whole turn, and a file is never
    split, so they are exact. Strings may hold glob patterns
    (``"logs/*.jsonl"``); a pattern that matches no file raises
    :class:`SchemaError` at once. Needs the ``askkit[scale]`` extra (dask,
    distributed).

    ``strict=True`` (default): computing a partition raises
    :class:`SchemaError` naming the file, line, field and value of the first
    bad record. ``strict=False``: returns a :class:`DaskLoaded` of the good
    rows, an errors frame and per-file record counts, each file read once
    when they are computed together.
    """
    optional_import("dask.dataframe", "read_jsonl_dask", "pip install 'askkit[scale]'")
    import dask
    import dask.dataframe as dd
    from dask.delayed import delayed

    files = _files(paths)
    # keep askkit's string dtype (dask would convert it to NA-valued string[pyarrow])
    with dask.config.set({"dataframe.convert-string": False}):
        if strict:
            return dd.from_map(  # type: ignore[no-untyped-call]
                _load_partition, files, meta=empty_frame(), enforce_metadata=True
            )
        loads = [
            delayed(_load_lenient, pure=True)(f, dask_key_name=f"askkit-load-{i}-{f}")
            for i, f in enumerate(files)
        ]
        metas = {
            "frame": empty_frame(),
            "errors": empty_errors(),
            "records": pd.DataFrame({k: pd.Series(dtype=v) for k, v in RECORD_COLUMNS.items()}),
        }
        parts = {
            part: dd.from_delayed(
                [
                    delayed(_loaded_part, pure=True)(x, part, f)
                    for x, f in zip(loads, files, strict=True)
                ],
                meta=meta,
                verify_meta=True,
            )
            for part, meta in metas.items()
        }
    return DaskLoaded(**parts)
