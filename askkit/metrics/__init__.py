"""Retrieval quality the way trec_eval measures it.

:mod:`~askkit.metrics.evaluate` scores a run against judgments and reports
coverage; :mod:`~askkit.metrics.io` reads and writes qrels and runs;
:mod:`~askkit.metrics.measures` is the columnar, trec_eval-exact computation;
:mod:`~askkit.metrics.prepare` turns frames into the integer arrays it needs
(the exact path, the specification), and :mod:`~askkit.metrics.fast` does the
same faster where it can vouch for the result, falling back to the exact path
otherwise; both give identical values. :mod:`~askkit.metrics.fusion` merges
runs by reciprocal rank fusion (:func:`fuse_rrf`).
"""

from __future__ import annotations

from askkit.metrics.evaluate import (
    DEFAULT_MEASURES,
    QRELS_COLUMNS,
    TREC_NAMES,
    WHY_TOOLS_DIFFER,
    Coverage,
    Evaluation,
    Ids,
    Level,
    Missing,
    PathOrFrame,
    Ties,
    coverage,
    decode_id,
    encode_id,
    evaluate,
    parse_measure,
    ranked_run,
    read_qrels,
    read_run,
    write_qrels,
    write_run,
)
from askkit.metrics.fusion import DEFAULT_K, FusionLevel, fuse_rrf

__all__ = [
    "DEFAULT_K",
    "DEFAULT_MEASURES",
    "QRELS_COLUMNS",
    "TREC_NAMES",
    "WHY_TOOLS_DIFFER",
    "Coverage",
    "Evaluation",
    "FusionLevel",
    "Ids",
    "Level",
    "Missing",
    "PathOrFrame",
    "Ties",
    "coverage",
    "decode_id",
    "encode_id",
    "evaluate",
    "fuse_rrf",
    "parse_measure",
    "ranked_run",
    "read_qrels",
    "read_run",
    "write_qrels",
    "write_run",
]
