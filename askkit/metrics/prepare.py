"""Preparing a run and judgments for scoring: integer codes, ranking, grades.

:func:`prepare` turns a run frame and a qrels frame into the arrays
:mod:`askkit.metrics.measures` works on, in two steps:

* :func:`code`, the shared set-up: query ids become integer codes in sorted
  order (factorized block-wise: a run arrives grouped by turn, so only the
  first id of each block is hashed); document ids stay Arrow strings.
* :func:`exact`, the specification: document ids get one Arrow
  ``dictionary_encode`` shared by run and qrels,
  :func:`~askkit.metrics.measures.rank_run` ranks the run and drops repeated
  documents (the document order for trec_eval's tie break is computed only
  when tied scores need it), and each row's grade comes from a merge with the
  qrels, one grade per (query, document), the highest.

:func:`prepare` first asks :func:`askkit.metrics.fast.graded`, which gives the
same result faster for the usual run and declines (None) whenever it is in
doubt or switched off; the exact path then does the work.

Examples
--------
>>> run = pd.DataFrame({"turn_id": ["q", "q", "q"], "path": ["a.md", "b.md", "a.md"],
...                     "score": [1.0, 1.0, 2.0]})
>>> qrels = pd.DataFrame({"query_id": ["q"], "path": ["b.md"], "grade": [2]})
>>> g = exact(code(run, qrels, "note", "trec"))
>>> g.ranked.rows.tolist(), g.ranked.rank.tolist(), g.grade.tolist(), g.ranked.duplicates
([2, 1], [1, 2], [0, 2], 1)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from askkit.errors import SchemaError
from askkit.frame.schema import STRING
from askkit.metrics import fast
from askkit.metrics._trec import text_column
from askkit.metrics.io import (
    QRELS_COLUMNS,
    Level,
    PathOrFrame,
    doc_ids,
    qrels_doc_ids,
    read_qrels,
)
from askkit.metrics.measures import (
    BoolArray,
    FloatArray,
    Graded,
    IntArray,
    Ranked,
    Ties,
    argsort_keys,
    fresh,
    lookup_grades,
    rank_run,
)

__all__ = ["Coded", "Prepared", "Ties", "as_qrels", "check_options", "code", "exact", "prepare"]


@dataclass(frozen=True, slots=True)
class Prepared:
    """What :func:`prepare` returns: the queries, and the run ranked and graded.

    ``qids`` are the query ids (sorted) that the codes in ``ranked.query`` and
    ``qrels_query`` index; ``in_qrels`` and ``in_run`` say which were judged
    and which the run answered; ``run_only`` lists the run's queries that
    were left out (no judgments). The other fields are :class:`Graded`'s.
    """

    qids: pd.Index
    in_qrels: BoolArray
    in_run: BoolArray
    run_only: tuple[str, ...]
    ranked: Ranked
    score: FloatArray
    grade: IntArray
    judged: BoolArray
    docs: pa.Array | pa.ChunkedArray
    qrels_query: IntArray
    qrels_grade: IntArray


@dataclass(frozen=True, slots=True)
class Coded:
    """A run and its judgments with integer query codes: where both paths start.

    Query codes index ``qids`` (sorted). The run's kept rows (those of
    ``qids``' queries) are ``query``, ``score`` and ``order``;
    ``keep`` maps them to rows of the run (None: every row) and ``docs`` holds
    the document id of every row of the run (Arrow ``large_string``, an array
    or its chunks). ``grouped``: each query's kept rows are contiguous.
    ``order`` is the input order (the ``rank``
    column, else the row number). The qrels are ``qrels_query``,
    ``qrels_docs`` and ``qrels_grade``, one row per judgment as read.
    """

    qids: pd.Index
    in_qrels: BoolArray
    in_run: BoolArray
    run_only: tuple[str, ...]
    ties: Ties
    grouped: bool
    query: IntArray
    keep: IntArray | None
    score: FloatArray
    order: IntArray
    docs: pa.Array | pa.ChunkedArray
    qrels_query: IntArray
    qrels_docs: pa.Array | pa.ChunkedArray
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


def _as_read(frame: pd.DataFrame) -> bool:
    """Whether the frame has exactly the columns and dtypes :func:`read_qrels` gives
    (a TREC file's ``doc`` and ``iteration`` included), so it needs no second pass."""
    dtypes = dict(frame.dtypes)
    extra = {c: dtypes.pop(c) for c in ("doc", "iteration") if c in dtypes}
    return dtypes == QRELS_COLUMNS and all(t == STRING for t in extra.values())


def as_qrels(qrels: PathOrFrame | None) -> pd.DataFrame:
    if qrels is None:
        return pd.DataFrame({c: pd.Series([], dtype=t) for c, t in QRELS_COLUMNS.items()})
    if isinstance(qrels, pd.DataFrame) and _as_read(qrels):
        return qrels
    return read_qrels(qrels)


def _arrow_strings(values: pd.Series, what: str, *, contiguous: bool = True) -> Any:
    """The column as Arrow ``large_string`` (zero-copy for pandas' Arrow strings): one
    contiguous array, or with ``contiguous=False`` the chunks as they are (no copy)."""
    arr = pa.array(text_column(values, what).array)
    if contiguous and isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if arr.null_count:
        raise SchemaError(f"{what} has missing values", field=what, value=None)
    return arr.cast(pa.large_string()) if arr.type != pa.large_string() else arr


def _chunks(values: pa.Array | pa.ChunkedArray) -> list[pa.Array]:
    return list(values.chunks) if isinstance(values, pa.ChunkedArray) else [values]


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


def _query_codes(turn: pa.Array | pa.ChunkedArray) -> tuple[IntArray, pa.Array, bool]:
    """Factorize the run's query ids, hashing only the first id of each block of equal ids.

    Returns the codes, the distinct ids (Arrow, in order of first appearance)
    and whether the run is grouped (each query's rows contiguous).
    """
    n = len(turn)
    if n == 0:
        return np.empty(0, dtype=np.int64), pa.array([], pa.large_string()), True
    new = np.ones(n, dtype=bool)
    new[1:] = np.asarray(pc.not_equal(turn.slice(1), turn.slice(0, n - 1)))
    starts = np.flatnonzero(new)
    if 2 * len(starts) > n:  # hardly any blocks (a shuffled run): hash every id in place
        codes, uniques = _encode(turn)
        return codes, uniques, len(uniques) == len(starts)
    block_codes, uniques = _encode(fast.take(turn, starts))
    codes = np.repeat(block_codes, np.diff(np.append(starts, n)))
    return codes, uniques, len(uniques) == len(starts)


def _positions(values: pa.Array, sorted_ids: pa.Array) -> IntArray:
    """Each value's position in ``sorted_ids``, -1 when absent."""
    found = pc.index_in(values, value_set=sorted_ids)
    return np.asarray(pc.fill_null(found, -1).to_numpy(), dtype=np.int64)


def code(
    run: pd.DataFrame,
    qrels: PathOrFrame | None,
    level: Level,
    ties: Ties,
    *,
    run_queries: bool = False,
) -> Coded:
    """Integer-code the queries of the run and the qrels; document ids stay strings.

    Query codes cover the qrels' queries (plus the run's when ``run_queries``),
    in sorted order; run rows of other queries are left out (``keep``).

    >>> run = pd.DataFrame({"turn_id": ["q2", "q2", "q9", "q1"],
    ...                     "path": ["a.md", "b.md", "c.md", "a.md"], "score": 1.0})
    >>> qrels = pd.DataFrame({"query_id": ["q1", "q2"], "path": ["a.md", "a.md"], "grade": 1})
    >>> c = code(run, qrels, "note", "trec")
    >>> list(c.qids), c.query.tolist(), c.keep.tolist(), c.run_only, c.grouped
    (['q1', 'q2'], [1, 1, 0], [0, 1, 3], ('q9',), True)
    """
    _run_columns(run)
    judgments = as_qrels(qrels)
    turn = _arrow_strings(run["turn_id"], "turn_id", contiguous=False)
    run_codes, run_ids, grouped = _query_codes(turn)
    jq_codes, jq_ids = _encode(_arrow_strings(judgments["query_id"], "query_id", contiguous=False))
    wanted = pc.unique(pa.concat_arrays([jq_ids, run_ids])) if run_queries else jq_ids
    sorted_ids = wanted.take(pc.sort_indices(wanted))  # UTF-8 byte order = code point order
    qids = pd.Index(pd.array(sorted_ids, dtype=STRING), name="query_id")
    qmap = _positions(run_ids, sorted_ids)
    run_only = sorted(run_ids.filter(pa.array(qmap < 0)).to_pylist())
    rq = np.take(qmap, run_codes, out=fresh(len(run_codes), np.int64))
    keep = None if bool(np.all(qmap >= 0)) else np.flatnonzero(rq >= 0)
    jq = _positions(jq_ids, sorted_ids)[jq_codes] if len(jq_codes) else jq_codes
    scores = run["score"]
    score_all = (  # read only: float64 scores are used in place (na_value would copy them)
        scores.to_numpy()
        if scores.dtype == np.float64
        else scores.to_numpy(dtype=np.float64, na_value=np.nan)
    )
    if "rank" in run.columns:
        order_all = run["rank"].to_numpy(dtype=np.int64)
        order = order_all if keep is None else order_all[keep]
    else:
        order = np.arange(len(rq), dtype=np.int64) if keep is None else keep
    if keep is not None:  # the kept rows may be grouped when the whole run is not
        first_seen = run_codes[keep]  # numbered in order of first appearance
        grouped = bool(np.all(first_seen[1:] >= first_seen[:-1]))
    n = len(qids)
    in_run = np.zeros(n, dtype=bool)
    in_run[qmap[qmap >= 0]] = True
    return Coded(
        qids=qids,
        in_qrels=np.bincount(jq, minlength=n) > 0,
        in_run=in_run,
        run_only=tuple(run_only),
        ties=ties,
        grouped=grouped,
        query=rq if keep is None else rq[keep],
        keep=keep,
        score=score_all if keep is None else score_all[keep],
        order=order,
        docs=_arrow_strings(doc_ids(run, level), "doc", contiguous=False),
        qrels_query=jq,
        qrels_docs=_arrow_strings(qrels_doc_ids(judgments, level), "doc", contiguous=False),
        qrels_grade=judgments["grade"].to_numpy(dtype=np.int64),
    )


def exact(coded: Coded) -> Graded:
    """Rank, de-duplicate and grade the run with one document dictionary: the specification.

    Document ids are dictionary-encoded once for run and qrels together;
    :func:`~askkit.metrics.measures.rank_run` ranks and de-duplicates (the
    codes' order by id is computed only when tied scores need it); the qrels
    keep one grade per (query, document), the highest, and
    :func:`~askkit.metrics.measures.lookup_grades` grades each kept row.
    ``ranked.rows`` are rows of the run; ``ranked.doc`` indexes ``docs``.
    """
    keep, rdoc = coded.keep, coded.docs
    if keep is None:
        keep = np.arange(len(coded.query), dtype=np.int64)
    else:
        rdoc = fast.take(rdoc, keep)
    codes, dictionary = _encode(
        pa.chunked_array([*_chunks(rdoc), *_chunks(coded.qrels_docs)], pa.large_string())
    )
    rdoc_codes, jdoc_codes = codes[: len(keep)], codes[len(keep) :]

    def doc_rank() -> IntArray:
        by_id = np.asarray(pc.sort_indices(dictionary), dtype=np.int64)
        ranks = np.empty(len(by_id), dtype=np.int64)
        ranks[by_id] = np.arange(len(by_id), dtype=np.int64)
        return ranks

    ranked = rank_run(
        coded.query, rdoc_codes, coded.score, coded.order, ties=coded.ties, doc_rank=doc_rank
    )
    # qrels: one grade per (query, document), the highest
    n, n_docs = len(coded.qids), len(dictionary)
    jq, jgrade = coded.qrels_query, coded.qrels_grade
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
    return Graded(
        ranked=Ranked(keep[ranked.rows], ranked.query, ranked.doc, ranked.rank, ranked.duplicates),
        docs=dictionary,
        score=coded.score[ranked.rows],
        grade=grade,
        judged=judged,
        qrels_query=jq,
        qrels_grade=jg,
    )


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
    in sorted order; run rows of other queries are dropped. The one choice of
    path is made here: :func:`askkit.metrics.fast.graded` when it takes the
    run, else :func:`exact`; both give the same result.
    """
    coded = code(run, qrels, level, ties, run_queries=run_queries)
    graded = fast.graded(coded)
    if graded is None:
        graded = exact(coded)
    return Prepared(
        qids=coded.qids,
        in_qrels=coded.in_qrels,
        in_run=coded.in_run,
        run_only=coded.run_only,
        ranked=graded.ranked,
        score=graded.score,
        grade=graded.grade,
        judged=graded.judged,
        docs=graded.docs,
        qrels_query=graded.qrels_query,
        qrels_grade=graded.qrels_grade,
    )
