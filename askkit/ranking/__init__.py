"""kimun's ranking stage: the pool, the reranker, the context cut and its two surfaces.

Between the vector store and ``/api/embeddings`` or ``/api/answer``, kimun's
server de-duplicates the candidate pool, optionally reranks it, cuts it to a
best-first prefix (``fixed``, ``score-range`` or ``largest-drop``) and shows
that prefix as search rows (one per note) or as an answer's numbered
context. This package reproduces each step value for value (kimun's server
code at :data:`~askkit.ranking.settings.KIMUN_COMMIT`), explains a cut
(:func:`explain_cut`, :func:`why_not`), reads ranked pools as columns
(:mod:`~askkit.ranking.pools`: :func:`with_pool`, :func:`pool_frame`,
:func:`query_pools`), and sweeps the cut settings over many queries to
recommend one (:func:`sweep_cuts`, :func:`recommend`,
:func:`sweep_context_cut`), scoring each with :mod:`askkit.metrics`'
measures.

Examples
--------
>>> from askkit.ranking import CutSettings, cut_len, pool_of
>>> pool = pool_of([1.00, 0.93, 0.88, 0.86, 0.84])
>>> cut_len(pool), cut_len(pool, CutSettings(strategy="largest-drop"))
(2, 5)
"""

from __future__ import annotations

from askkit.ranking.cut import (
    LargestDrop,
    ScoreRange,
    cut_len,
    fixed_cut_len,
    largest_drop,
    largest_drop_cut_len,
    note_best_scores,
    score_range,
    score_range_cut_len,
)
from askkit.ranking.explain import explain_cut, why_not
from askkit.ranking.pool import Scored, deduplicate_chunks, pool_of
from askkit.ranking.pools import (
    POOL_COLUMNS,
    check_turn_ids,
    pool_frame,
    pool_truncated,
    query_pools,
    with_pool,
)
from askkit.ranking.query import build_retrieval_query, condense_head_tail
from askkit.ranking.rerank import Reranked, rerank, sanitize_scores, sigmoid, validate_scored
from askkit.ranking.settings import CANDIDATE_POOL, KIMUN_COMMIT, STRATEGIES, CutSettings, Strategy
from askkit.ranking.surfaces import (
    CutPreview,
    answer_context,
    cut_preview,
    dedupe_by_note,
    search_rows,
)
from askkit.ranking.sweep import (
    SWEEP_COLUMNS,
    PoolCuts,
    recommend,
    settings_grid,
    sweep_cuts,
    sweep_cuts_reference,
)
from askkit.ranking.tune import CutSweep, sweep_context_cut

__all__ = [
    "CANDIDATE_POOL",
    "KIMUN_COMMIT",
    "POOL_COLUMNS",
    "STRATEGIES",
    "SWEEP_COLUMNS",
    "CutPreview",
    "CutSettings",
    "CutSweep",
    "LargestDrop",
    "PoolCuts",
    "Reranked",
    "ScoreRange",
    "Scored",
    "Strategy",
    "answer_context",
    "build_retrieval_query",
    "check_turn_ids",
    "condense_head_tail",
    "cut_len",
    "cut_preview",
    "dedupe_by_note",
    "deduplicate_chunks",
    "explain_cut",
    "fixed_cut_len",
    "largest_drop",
    "largest_drop_cut_len",
    "note_best_scores",
    "pool_frame",
    "pool_of",
    "pool_truncated",
    "query_pools",
    "recommend",
    "rerank",
    "sanitize_scores",
    "score_range",
    "score_range_cut_len",
    "search_rows",
    "settings_grid",
    "sigmoid",
    "sweep_context_cut",
    "sweep_cuts",
    "sweep_cuts_reference",
    "validate_scored",
    "why_not",
    "with_pool",
]
