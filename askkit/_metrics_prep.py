"""Preparing a run and judgments for scoring: integer codes, ranking, grades.

:func:`prepare` turns a run frame and a qrels frame into the arrays
:mod:`askkit._metrics_core` works on. Query ids are factorized block-wise
(a run arrives grouped by turn, so only the first id of each block is
hashed), document ids with one Arrow ``dictionary_encode`` shared by run and
qrels; the document order needed for trec_eval's tie break is computed only
when tied scores need it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from askkit._frame_schema import STRING
from askkit._metrics_core import (
    BoolArray,
    FloatArray,
    IntArray,
    Ranked,
    argsort_keys,
    lookup_grades,
    rank_run,
)
from askkit._metrics_io import (
    QRELS_COLUMNS,
    Level,
    PathOrFrame,
    doc_ids,
    qrels_doc_ids,
    read_qrels,
)
from askkit.errors import SchemaError

__all__ = ["Prepared", "as_qrels", "check_options", "prepare"]

Ties = Literal["trec", "input"]


@dataclass(frozen=True, slots=True)
class Prepared:
    qids: pd.Index
    in_qrels: BoolArray
    in_run: BoolArray
    run_uniques: pd.Index
    run_index: pd.Index
    ranked: Ranked
    score: FloatArray
    grade: IntArray
    judged: BoolArray
    docs: pa.Array
    qrels_query: IntArray
    qrels_grade: IntArray


def _run_columns(run: pd.DataFrame) -> None:
    if not isinstance(run, pd.DataFrame):
        raise TypeError(
            f"a run is a sources frame (askkit.frame.sources_frame), got {type(run).__name__}"
        )
    missing = [c for c in ("turn_id", "score") if c not in run.columns]
    if missing:
        raise SchemaError(
            "not a run: it needs turn_id, score and path (or doc) columns; "
            "build it with askkit.frame.sources_frame",
            field="columns",
            value=missing,
        )


def check_options(level: str, ties: str, missing: str | None = None) -> None:
    if level not in ("note", "section"):
        raise ValueError(f"level must be 'note' or 'section', got {level!r}")
    if ties not in ("trec", "input"):
        raise ValueError(f"ties must be 'trec' or 'input', got {ties!r}")
    if missing is not None and missing not in ("drop", "zero"):
        raise ValueError(f"missing must be 'drop' or 'zero', got {missing!r}")


def as_qrels(qrels: PathOrFrame | None) -> pd.DataFrame:
    if qrels is None:
        return pd.DataFrame({c: pd.Series([], dtype=t) for c, t in QRELS_COLUMNS.items()})
    if isinstance(qrels, pd.DataFrame) and dict(qrels.dtypes) == QRELS_COLUMNS:
        return qrels
    return read_qrels(qrels)


def _arrow_strings(values: pd.Series, what: str) -> pa.Array:
    """One contiguous Arrow string array (zero-copy for pandas' Arrow strings)."""
    arr = pa.array(values.astype(STRING).array)
    arr = arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr
    if arr.null_count:
        raise SchemaError(f"{what} has missing values", field=what, value=None)
    return arr.cast(pa.large_string()) if arr.type != pa.large_string() else arr


def _encode(values: pa.Array | pa.ChunkedArray) -> tuple[IntArray, pa.Array]:
    """Dictionary codes (order of first appearance) and the dictionary.

    A chunked input is encoded without concatenating it: Arrow shares one
    hash table across chunks, and every chunk carries the final dictionary.
    """
    encoded = pc.dictionary_encode(values)
    if isinstance(encoded, pa.ChunkedArray):
        chunks = [c for c in encoded.chunks if len(c)]
        if not chunks:
            return np.empty(0, dtype=np.int64), pa.array([], pa.large_string())
        codes = np.concatenate([np.asarray(c.indices, dtype=np.int64) for c in chunks])
        return codes, chunks[-1].dictionary
    return np.asarray(encoded.indices, dtype=np.int64), encoded.dictionary


def _query_codes(turn: pa.Array) -> tuple[IntArray, pd.Index]:
    """Factorize the run's query ids, hashing only the first id of each block of equal ids."""
    n = len(turn)
    if n == 0:
        return np.empty(0, dtype=np.int64), pd.Index([], dtype=object)
    new = np.ones(n, dtype=bool)
    new[1:] = np.asarray(pc.not_equal(turn.slice(1), turn.slice(0, n - 1)))
    starts = np.flatnonzero(new)
    block_codes, uniques = pd.factorize(
        pd.Series(pd.array(turn.take(pa.array(starts)), dtype=STRING))
    )
    codes = np.repeat(block_codes.astype(np.int64), np.diff(np.append(starts, n)))
    return codes, pd.Index(np.asarray(uniques, dtype=object))


def prepare(
    run: pd.DataFrame,
    qrels: PathOrFrame | None,
    level: Level,
    ties: Ties,
    *,
    run_queries: bool = False,
) -> Prepared:
    """Integer-code the run and the qrels, rank the run, attach grades.

    Query codes cover the qrels' queries (plus the run's when ``run_queries``),
    in sorted order; run rows of other queries are dropped.
    """
    _run_columns(run)
    judgments = as_qrels(qrels)
    run_codes, run_uniques = _query_codes(_arrow_strings(run["turn_id"], "turn_id"))
    jq_codes, jq_ids = _encode(_arrow_strings(judgments["query_id"], "query_id"))
    qrels_ids = pd.Index(np.asarray(jq_ids.to_pylist(), dtype=object))
    wanted = qrels_ids.union(run_uniques) if run_queries else qrels_ids
    qids = pd.Index(np.sort(wanted.to_numpy(dtype=object)).astype(str), name="query_id")
    qmap = qids.get_indexer(run_uniques).astype(np.int64)
    rq = qmap[run_codes] if len(run_codes) else np.empty(0, dtype=np.int64)
    keep_all = bool(np.all(rq >= 0))
    keep = np.arange(len(rq), dtype=np.int64) if keep_all else np.flatnonzero(rq >= 0)
    rdoc = _arrow_strings(doc_ids(run, level), "doc")
    if not keep_all:
        rdoc = rdoc.take(pa.array(keep))
    jdoc = _arrow_strings(qrels_doc_ids(judgments, level), "doc")
    codes, dictionary = _encode(pa.chunked_array([rdoc, jdoc], pa.large_string()))
    rdoc_codes, jdoc_codes = codes[: len(keep)], codes[len(keep) :]

    def doc_rank() -> IntArray:
        by_id = np.asarray(pc.sort_indices(dictionary), dtype=np.int64)
        ranks = np.empty(len(by_id), dtype=np.int64)
        ranks[by_id] = np.arange(len(by_id), dtype=np.int64)
        return ranks

    score_all = run["score"].to_numpy(dtype=np.float64, na_value=np.nan)
    score = score_all if keep_all else score_all[keep]
    if "rank" in run.columns:
        order_all = run["rank"].to_numpy(dtype=np.int64)
        order = order_all if keep_all else order_all[keep]
    else:
        order = keep
    run_q = rq if keep_all else rq[keep]
    ranked = rank_run(run_q, rdoc_codes, score, order, ties=ties, doc_rank=doc_rank)
    # qrels: one grade per (query, document), the highest
    jq = qids.get_indexer(qrels_ids).astype(np.int64)[jq_codes] if len(jq_codes) else jq_codes
    jgrade = judgments["grade"].to_numpy(dtype=np.int64)
    n, n_docs = len(qids), len(dictionary)
    if len(jq):
        low, high = int(jgrade.min()), int(jgrade.max())
        by = argsort_keys([(jq, n), (jdoc_codes, max(n_docs, 1)), (high - jgrade, high - low + 1)])
        jq, jd, jg = jq[by], jdoc_codes[by], jgrade[by]
        first = np.ones(len(jq), dtype=bool)
        first[1:] = (jq[1:] != jq[:-1]) | (jd[1:] != jd[:-1])
        jq, jd, jg = jq[first], jd[first], jg[first]
    else:
        jd = jg = jq
    grade, judged = lookup_grades(
        n_docs, ranked.query, ranked.doc, qrels_query=jq, qrels_doc=jd, qrels_grade=jg
    )
    rows = keep[ranked.rows]
    return Prepared(
        qids=qids,
        in_qrels=np.bincount(jq, minlength=n) > 0,
        in_run=np.bincount(run_q, minlength=n) > 0,
        run_uniques=run_uniques,
        run_index=run.index[rows],
        ranked=Ranked(rows, ranked.query, ranked.doc, ranked.rank, ranked.duplicates),
        score=score[ranked.rows],
        grade=grade,
        judged=judged,
        docs=dictionary,
        qrels_query=jq,
        qrels_grade=jg,
    )
