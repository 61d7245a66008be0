"""Sources and turns as pandas DataFrames: one row per retrieved source.

:func:`sources_frame` reads any of askkit's inputs (sources, chunks, wire
dicts, turns, payloads, JSON and JSONL turn logs) into one frame whose schema
is :data:`COLUMNS`; :func:`to_sources` and :func:`to_turns` go back to
objects without loss. Every value agrees with :meth:`AskSource.from_chunk`.
JSONL logs are read columnar (``pyarrow.json``, then askkit's compiled kernels
or, where they are not built, pyarrow.compute: :func:`compiled_kernels`);
:func:`read_jsonl_dask` reads many files on a Dask cluster with the same
per-file function (:mod:`askkit.ranking.pools` reads a frame's turns as
kimun's ranked pools). Importing this package registers the
``df.ask`` accessor (:mod:`askkit.frame.accessor`); it loads neither
matplotlib, ipywidgets nor IPython.

Examples
--------
>>> df = sources_frame("data/sample_turn.json")
>>> df["heading"].tolist()[:2], df["ordinal"].tolist()[:2], df["cited"].tolist()[:2]
(['Morning › Kitchen', 'Sourdough › Starter › Feeding schedule'], [4, 1], [True, True])
>>> [s.ordinal for s in to_sources(df)] == [4, 1, 6, 2, 3]
True
"""

from __future__ import annotations

from askkit.frame import accessor as _accessor  # registers the df.ask accessor
from askkit.frame.kernels import compiled_kernels
from askkit.frame.load import Loaded, sources_frame, to_sources, to_turns
from askkit.frame.scale import RECORD_COLUMNS, DaskLoaded, read_jsonl_dask
from askkit.frame.schema import COLUMNS, DESCRIPTIONS, ERROR_COLUMNS, empty_frame

del _accessor

__all__ = [
    "COLUMNS",
    "DESCRIPTIONS",
    "ERROR_COLUMNS",
    "RECORD_COLUMNS",
    "DaskLoaded",
    "Loaded",
    "compiled_kernels",
    "empty_frame",
    "read_jsonl_dask",
    "sources_frame",
    "to_sources",
    "to_turns",
]
