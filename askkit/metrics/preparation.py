"""One preparation of a run and its judgments for scoring: where every measure starts.

:func:`prepare` is the one entry. It codes the run and the qrels once
(:func:`code`: query ids become integer codes in sorted order, factorized
block-wise since a run arrives grouped by turn, so only the first id of each
block is hashed; document ids stay Arrow strings), then ranks, de-duplicates
and grades the run on one of two paths, chosen here and only here:
:func:`askkit.metrics.fast.graded` when it takes the run, else
:func:`askkit.metrics.exact.exact`, the specification. Both give the same
:class:`Prepared` run.

:func:`~askkit.metrics.evaluate`, :func:`~askkit.metrics.coverage` and
:func:`~askkit.metrics.ranked_run` each take a prepared run in place of a
run and its qrels, so a report prepares its run once for all of them.

Examples
--------
>>> run = pd.DataFrame({"turn_id": ["q", "q", "q"], "path": ["a.md", "b.md", "a.md"],
...                     "score": [1.0, 1.0, 2.0]})
>>> qrels = pd.DataFrame({"query_id": ["q"], "path": ["b.md"], "grade": [2]})
>>> p = prepare(run, qrels)
>>> p.ranked.rows.tolist(), p.ranked.rank.tolist(), p.grade.tolist(), p.ranked.duplicates
([2, 1], [1, 2], [0, 2], 1)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from askkit.errors import SchemaError, UsageError
from askkit.frame.schema import STRING
from askkit.metrics import fast
from askkit.metrics._trec import text_column
from askkit.metrics.exact import exact
from askkit.metrics.ids import Level, check_level, doc_ids, qrels_doc_ids
from askkit.metrics.qrels import QRELS_COLUMNS, PathOrFrame, read_qrels
from askkit.metrics.ranked import (
    Blocked,
    BoolArray,
    Coded,
    FloatArray,
    Hits,
    IntArray,
    Ranked,
    Ties,
    dictionary_codes,
    fresh,
    take,
)

__all__ = [
    "Judged",
    "Prepared",
    "Ties",
    "as_prepared",
    "as_qrels",
    "check_options",
    "code",
    "judged_run",
    "prepare",
]


@dataclass(frozen=True, slots=True, eq=False)
class Prepared:
    """A run and its judgments, ranked, de-duplicated and graded: what :func:`prepare` returns.

    ``qids`` are the query ids (sorted) that the codes in ``ranked.query`` and
    ``qrels_query`` index; ``in_qrels`` and ``in_run`` say which were judged
    and which the run answered; ``run_only`` lists the run's queries that
    have no judgments; ``row_query`` is the query code of each run row coded
    (before de-duplication). ``ranked.rows`` are rows of ``run``; ``ranked.doc``
    indexes ``docs``; ``score``, ``grade`` (0 when unjudged) and ``judged``
    follow ``ranked``'s rows; ``qrels_query`` and ``qrels_grade`` hold one
    judgment per (query, document), the highest grade. ``run`` and ``qrels``
    are the frames it was prepared from (the qrels as
    :func:`~askkit.metrics.read_qrels` reads them), ``level`` and ``ties``
    how. ``run_queries``: every query of the run is coded, judged or not
    (else only the judged ones, all :func:`~askkit.metrics.evaluate` needs).
    """

    run: pd.DataFrame
    qrels: pd.DataFrame
    level: Level
    ties: Ties
    run_queries: bool
    qids: pd.Index
    in_qrels: BoolArray
    in_run: BoolArray
    run_only: tuple[str, ...]
    row_query: IntArray
    ranked: Ranked
    score: FloatArray
    grade: IntArray
    judged: BoolArray
    docs: pa.Array | pa.ChunkedArray
    qrels_query: IntArray
    qrels_grade: IntArray

    def chunks(self) -> IntArray:
        """Each query's rows in the run, before de-duplication."""
        return np.bincount(self.row_query, minlength=len(self.qids)).astype(np.int64)

    def duplicates(self, queries: BoolArray) -> int:
        """The rows de-duplication dropped in the ``queries`` selected (a mask over ``qids``)."""
        if bool(queries.all()):
            return self.ranked.duplicates
        retrieved = np.bincount(self.ranked.query, minlength=len(self.qids))
        return int((self.chunks() - retrieved)[queries].sum())

    def __repr__(self) -> str:
        return (
            f"Prepared({len(self.qids)} queries, {len(self.ranked.rows)} documents, "
            f"level={self.level}, ties={self.ties})"
        )


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
    check_level(level)
    if ties not in ("trec", "input"):
        raise ValueError(f"ties must be 'trec' or 'input', got {ties!r}")
    if missing is not None and missing not in ("drop", "zero"):
        raise ValueError(f"missing must be 'drop' or 'zero', got {missing!r}")


def _as_read(frame: pd.DataFrame) -> bool:
    """Whether the frame has exactly the columns and dtypes :func:`~askkit.metrics.read_qrels` gives
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


def _query_codes(
    turn: pa.Array | pa.ChunkedArray,
) -> tuple[IntArray, IntArray | None, pa.Array, bool]:
    """Factorize the run's query ids, hashing only the first id of each block of equal ids.

    Returns the codes of each block of equal ids and the blocks' sizes (None:
    the codes are the rows', when there are hardly any blocks), the distinct
    ids (Arrow, in order of first appearance) and whether the run is grouped
    (each query's rows contiguous).
    """
    n = len(turn)
    if n == 0:
        return np.empty(0, dtype=np.int64), None, pa.array([], pa.large_string()), True
    # where an id differs from the one before it: a block starts after it
    changes = pc.indices_nonzero(pc.not_equal(turn.slice(1), turn.slice(0, n - 1)))
    starts = np.empty(len(changes) + 1, dtype=np.int64)
    starts[0] = 0
    np.add(np.asarray(changes), 1, out=starts[1:], casting="unsafe")
    if 2 * len(starts) > n:  # hardly any blocks (a shuffled run): hash every id in place
        codes, uniques = dictionary_codes(turn)
        return codes, None, uniques, len(uniques) == len(starts)
    block_codes, uniques = dictionary_codes(take(turn, starts))
    return block_codes, np.diff(np.append(starts, n)), uniques, len(uniques) == len(starts)


def _per_row(values: IntArray, codes: IntArray, sizes: IntArray | None) -> IntArray:
    """``values[codes]`` for every row, the codes given per block of ``sizes`` rows
    (None: per row), in :func:`~askkit.metrics.ranked.fresh` memory."""
    if sizes is None:
        return np.take(values, codes, out=fresh(len(codes), np.int64))
    out = fresh(int(sizes.sum()), np.int64)
    if len(out) == 0:
        return out
    # each block's first row steps from the previous block's value; the running sum fills in
    out.fill(0)
    out[np.cumsum(sizes) - sizes] = np.diff(values[codes], prepend=0)
    return np.cumsum(out, out=out)


def _positions(values: pa.Array, sorted_ids: pa.Array) -> IntArray:
    """Each value's position in ``sorted_ids``, -1 when absent."""
    found = pc.index_in(values, value_set=sorted_ids)
    return np.asarray(pc.fill_null(found, -1).to_numpy(), dtype=np.int64)


@dataclass(frozen=True, slots=True)
class _Read:
    """A run and its judgments read and checked, before any query is coded: the
    columns every preparation starts from (:func:`code`, :func:`judged_run`)."""

    judgments: pd.DataFrame
    run_codes: IntArray
    run_sizes: IntArray | None
    run_ids: pa.Array
    grouped: bool
    jq_block: IntArray
    jq_sizes: IntArray | None
    jq_ids: pa.Array
    score: FloatArray
    rank: IntArray | None
    docs: pa.Array | pa.ChunkedArray
    qrels_docs: pa.Array | pa.ChunkedArray
    qrels_grade: IntArray

    def judged_queries(self, codes: IntArray) -> IntArray:
        """``codes[i]`` for each judgment, ``i`` its query id's position in ``jq_ids``
        (the query ids are coded a block of equal ids at a time, as the run's)."""
        return _per_row(codes, self.jq_block, self.jq_sizes)


def _read(run: pd.DataFrame, qrels: PathOrFrame | None, level: Level) -> _Read:
    """Read and check the columns of the run and the qrels (:func:`_query_codes` of
    the run's query ids and of the judged ones)."""
    _run_columns(run)
    judgments = as_qrels(qrels)
    turn = _arrow_strings(run["turn_id"], "turn_id", contiguous=False)
    run_codes, run_sizes, run_ids, grouped = _query_codes(turn)
    jq_block, jq_sizes, jq_ids, _ = _query_codes(
        _arrow_strings(judgments["query_id"], "query_id", contiguous=False)
    )
    scores = run["score"]
    score = (  # read only: float64 scores are used in place (na_value would copy them)
        scores.to_numpy()
        if scores.dtype == np.float64
        else scores.to_numpy(dtype=np.float64, na_value=np.nan)
    )
    rank = run["rank"].to_numpy(dtype=np.int64) if "rank" in run.columns else None
    return _Read(
        judgments=judgments,
        run_codes=run_codes,
        run_sizes=run_sizes,
        run_ids=run_ids,
        grouped=grouped,
        jq_block=jq_block,
        jq_sizes=jq_sizes,
        jq_ids=jq_ids,
        score=score,
        rank=rank,
        docs=_arrow_strings(doc_ids(run, level), "doc", contiguous=False),
        qrels_docs=_arrow_strings(qrels_doc_ids(judgments, level), "doc", contiguous=False),
        qrels_grade=judgments["grade"].to_numpy(dtype=np.int64),
    )


def _sorted_ids(ids: pa.Array) -> tuple[pa.Array, pd.Index]:
    """The ids sorted (UTF-8 byte order = code point order), as Arrow and as ``qids``."""
    sorted_ids = ids.take(pc.sort_indices(ids))
    return sorted_ids, pd.Index(pd.array(sorted_ids, dtype=STRING), name="query_id")


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
    return _code(_read(run, qrels, level), ties, run_queries=run_queries)


def _code(read: _Read, ties: Ties, *, run_queries: bool) -> Coded:
    """:func:`code` of columns already read."""
    run_codes, run_sizes, run_ids = read.run_codes, read.run_sizes, read.run_ids
    jq_ids = read.jq_ids
    wanted = pc.unique(pa.concat_arrays([jq_ids, run_ids])) if run_queries else jq_ids
    sorted_ids, qids = _sorted_ids(wanted)
    qmap = _positions(run_ids, sorted_ids)
    run_only = sorted(run_ids.filter(pa.array(qmap < 0)).to_pylist())
    rq = _per_row(qmap, run_codes, run_sizes)
    keep = None if bool(np.all(qmap >= 0)) else np.flatnonzero(rq >= 0)
    jq = read.judged_queries(_positions(jq_ids, sorted_ids))
    score_all, order_all = read.score, read.rank
    if order_all is not None:
        order = order_all if keep is None else order_all[keep]
    else:
        order = np.arange(len(rq), dtype=np.int64) if keep is None else keep
    grouped = read.grouped
    if keep is not None:  # the kept rows may be grouped when the whole run is not
        # numbered in order of first appearance
        first_seen = _per_row(np.arange(len(run_ids)), run_codes, run_sizes)[keep]
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
        docs=read.docs,
        qrels_query=jq,
        qrels_docs=read.qrels_docs,
        qrels_grade=read.qrels_grade,
    )


def prepare(
    run: pd.DataFrame,
    qrels: PathOrFrame | None = None,
    *,
    level: Level = "note",
    ties: Ties = "trec",
    run_queries: bool = True,
) -> Prepared:
    """Prepare a run for scoring, once: code it and its judgments, rank it, attach grades.

    Parameters
    ----------
    run:
        A sources frame (:func:`askkit.frame.sources_frame`), or any frame with
        ``turn_id``, ``score`` and ``path`` (or ``doc``); an optional ``rank``
        column is the input order.
    qrels:
        Judgments, a frame or a file (:func:`~askkit.metrics.read_qrels`);
        ``None``: none.
    level, ties:
        What a document is and how ties rank, as for
        :func:`~askkit.metrics.evaluate`.
    run_queries:
        ``True`` (default): every query of the run, judged or not (what
        :func:`~askkit.metrics.coverage` and :func:`~askkit.metrics.ranked_run`
        need). ``False``: the judged queries only; the run's other rows are
        left out (all :func:`~askkit.metrics.evaluate` needs).

    The one choice of path is made here: :func:`askkit.metrics.fast.graded`
    when it takes the run, else :func:`askkit.metrics.exact.exact`; both give
    the same result.
    """
    check_options(level, ties)
    _run_columns(run)
    return _prepared(run, _read(run, as_qrels(qrels), level), level, ties, run_queries)


def _prepared(
    run: pd.DataFrame, read: _Read, level: Level, ties: Ties, run_queries: bool
) -> Prepared:
    """:func:`prepare` of columns already read."""
    judgments = read.judgments
    coded = _code(read, ties, run_queries=run_queries)
    graded = fast.graded(coded)
    if graded is None:
        graded = exact(coded)
    return Prepared(
        run=run,
        qrels=judgments,
        level=level,
        ties=ties,
        run_queries=run_queries,
        qids=coded.qids,
        in_qrels=coded.in_qrels,
        in_run=coded.in_run,
        # the run's unjudged queries: left out by code(), or kept (run_queries)
        run_only=coded.run_only or tuple(coded.qids[coded.in_run & ~coded.in_qrels]),
        row_query=coded.query,
        ranked=graded.ranked,
        score=graded.score,
        grade=graded.grade,
        judged=graded.judged,
        docs=graded.docs,
        qrels_query=graded.qrels_query,
        qrels_grade=graded.qrels_grade,
    )


def as_prepared(
    run: pd.DataFrame | Prepared,
    qrels: PathOrFrame | None,
    *,
    level: Level | None,
    ties: Ties | None,
    run_queries: bool = True,
) -> Prepared:
    """``run`` itself when it is already prepared, else :func:`prepare` of it.

    A prepared run carries its judgments, level and ties: ``qrels`` must then
    be ``None``, and ``level`` and ``ties`` ``None`` or its own. ``level`` and
    ``ties`` default to ``"note"`` and ``"trec"`` for a frame.
    """
    if not isinstance(run, Prepared):
        return prepare(
            run,
            qrels,
            level=level or "note",
            ties=ties or "trec",
            run_queries=run_queries,
        )
    if qrels is not None:
        raise UsageError("a prepared run carries its judgments: give no qrels with it")
    for name, given, own in (("level", level, run.level), ("ties", ties, run.ties)):
        if given is not None and given != own:
            raise UsageError(f"{name}={given!r}, but the run was prepared with {name}={own!r}")
    if run_queries and not run.run_queries:
        raise UsageError(
            "the run was prepared with run_queries=False (judged queries only); "
            "prepare it with run_queries=True"
        )
    return run


@dataclass(frozen=True, slots=True, eq=False)
class Judged:
    """What :func:`judged_run` returns when the fast path takes the run: its judged
    rows (:class:`~askkit.metrics.ranked.Hits`) and the queries, as a
    :class:`Prepared` run with ``run_queries=False`` has them (``qids``: the
    judged queries, sorted; every one is in the qrels)."""

    level: Level
    ties: Ties
    qids: pd.Index
    in_run: BoolArray
    run_only: tuple[str, ...]
    hits: Hits


def _blocked(read: _Read, ties: Ties) -> tuple[Blocked, BoolArray, tuple[str, ...]] | None:
    """The run's blocks of judged queries (:class:`~askkit.metrics.ranked.Blocked`),
    which queries the run answers and its queries without judgments; None when a
    query's rows are not all in one block."""
    if not read.grouped or len(read.score) < 2:
        return None
    sorted_ids, qids = _sorted_ids(read.jq_ids)
    qmap = _positions(read.run_ids, sorted_ids)
    run_only = tuple(sorted(read.run_ids.filter(pa.array(qmap < 0)).to_pylist()))
    block_ids, size = read.run_codes, read.run_sizes
    if size is None:  # the codes are the rows': find the blocks
        at = np.flatnonzero(np.concatenate([[True], block_ids[1:] != block_ids[:-1]]))
        block_ids, size = block_ids[at], np.diff(np.append(at, len(block_ids)))
    codes = qmap[block_ids]  # each block's query, -1 when not judged
    start = np.cumsum(size) - size
    judged = codes >= 0
    if not bool(judged.all()):
        start, size, codes = start[judged], size[judged], codes[judged]
    n = len(qids)
    in_run = np.zeros(n, dtype=bool)
    in_run[codes] = True
    blocked = Blocked(
        qids=qids,
        ties=ties,
        start=start,
        size=size,
        code=codes,
        score=read.score,
        rank=read.rank,
        docs=read.docs,
        qrels_query=read.judged_queries(_positions(read.jq_ids, sorted_ids)),
        qrels_docs=read.qrels_docs,
        qrels_grade=read.qrels_grade,
    )
    return blocked, in_run, run_only


def judged_run(
    run: pd.DataFrame, qrels: PathOrFrame | None, *, level: Level, ties: Ties
) -> Judged | Prepared:
    """What :func:`~askkit.metrics.evaluate` scores when no unjudged row can count:
    the judged rows of the run (:func:`askkit.metrics.fast.judged_rows`) when the
    fast path takes the run (grouped by query), else :func:`prepare` of it with
    ``run_queries=False``. Both score the same.
    """
    check_options(level, ties)
    _run_columns(run)
    read = _read(run, as_qrels(qrels), level)
    blocked = _blocked(read, ties)
    if blocked is not None:
        hits = fast.judged_rows(blocked[0])
        if hits is not None:
            return Judged(level, ties, blocked[0].qids, blocked[1], blocked[2], hits)
    return _prepared(run, read, level, ties, run_queries=False)
