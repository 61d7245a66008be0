"""Retrieval quality the way trec_eval measures it.

A run enters once, through :func:`prepare` (:mod:`~askkit.metrics.preparation`):
its queries and the judgments' are coded, then the run is ranked,
de-duplicated and graded by :mod:`~askkit.metrics.exact` (the
specification) or :mod:`~askkit.metrics.fast` (faster, held to it by
property tests). :func:`evaluate` scores it with the measures
:mod:`~askkit.metrics.measures` defines, each once; :func:`coverage` says
what the judgments cover; :func:`bounds` how far each measure could move once
the unjudged documents of the ranking are judged; :func:`ranked_run` shows the run as scored. Each
takes a run and its qrels, or a prepared run. :mod:`~askkit.metrics.ids`
holds the document-id rules; :mod:`~askkit.metrics.qrels`,
:mod:`~askkit.metrics.runs` and :mod:`~askkit.metrics.queries` read and
write files; :mod:`~askkit.metrics.fusion` merges runs by reciprocal rank
fusion (:func:`fuse_rrf`); :mod:`~askkit.metrics.collections` reads a test
collection (Cranfield's, TREC's, BEIR's layout) and writes it as a vault with
its queries and qrels (:func:`read_collection`, :func:`write_collection`).
"""

from __future__ import annotations

from askkit.metrics.bounds import Bounds, bounds, format_bounds
from askkit.metrics.collections import (
    Collection,
    Document,
    Judgment,
    Query,
    read_collection,
    write_collection,
)
from askkit.metrics.coverage import WHY_TOOLS_DIFFER, Coverage, coverage
from askkit.metrics.evaluate import (
    DEFAULT_MEASURES,
    TREC_NAMES,
    Evaluation,
    Missing,
    evaluate,
    ranked_run,
)
from askkit.metrics.fusion import DEFAULT_K, FusionLevel, fuse_rrf
from askkit.metrics.ids import Ids, Level, decode_id, encode_id
from askkit.metrics.measures import parse_measure
from askkit.metrics.preparation import Prepared, Ties, prepare
from askkit.metrics.qrels import QRELS_COLUMNS, PathOrFrame, read_qrels, write_qrels
from askkit.metrics.queries import Queries, read_queries
from askkit.metrics.runs import load_run, load_turn_log, read_run, run_kind, write_run

__all__ = [
    "DEFAULT_K",
    "DEFAULT_MEASURES",
    "QRELS_COLUMNS",
    "TREC_NAMES",
    "WHY_TOOLS_DIFFER",
    "Bounds",
    "Collection",
    "Coverage",
    "Document",
    "Evaluation",
    "FusionLevel",
    "Ids",
    "Judgment",
    "Level",
    "Missing",
    "PathOrFrame",
    "Prepared",
    "Queries",
    "Query",
    "Ties",
    "bounds",
    "coverage",
    "decode_id",
    "encode_id",
    "evaluate",
    "format_bounds",
    "fuse_rrf",
    "load_run",
    "load_turn_log",
    "parse_measure",
    "prepare",
    "ranked_run",
    "read_collection",
    "read_qrels",
    "read_queries",
    "read_run",
    "run_kind",
    "write_collection",
    "write_qrels",
    "write_run",
]
