"""Ranked pools as columns: the long pool frame a sweep reads, and a sources frame's pools.

The long pool frame (:data:`POOL_COLUMNS`: ``query_id``, ``rank``, ``path``,
``score``, ``title``, ``text``, one row per pool chunk) is what
:func:`askkit.ranking.sweep_cuts` sweeps. :func:`query_pools` builds it from
any retriever's pools (:meth:`askkit.retrieve.LocalIndex.pools` and the dense
retrievers' ``pools`` do).

When a turn's sources are a whole candidate pool (chunk level, as
:meth:`askkit.retrieve.LocalIndex.pool` returns it, or a server's
``/api/embeddings`` pool), :func:`with_pool` adds where each chunk stands in
its pool and whether each of kimun's three context cuts keeps it;
:func:`pool_frame` gives the turns as the long pool frame
(``query_id`` = ``turn_id``).

A saved answer holds only the chunks the server's cut kept: such a pool is
already truncated and a sweep can only cut it further. :func:`pool_truncated`
says which turns look so (fewer sources than kimun's
:data:`~askkit.ranking.settings.CANDIDATE_POOL` chunks).

Examples
--------
>>> frame = pd.DataFrame({"turn_id": ["t"] * 6,
...                       "path": ["a.md", "a.md", "b.md", "c.md", "d.md", "e.md"],
...                       "score": [0.99, 0.98, 0.95, 0.94, 0.50, 0.45]})
>>> pooled = with_pool(frame, CutSettings(top_k=3))
>>> pooled[["pool_rank", "kept_fixed", "kept_score_range", "kept_largest_drop"]]
   pool_rank  kept_fixed  kept_score_range  kept_largest_drop
0          1        True              True               True
1          2        True              True               True
2          3        True              True               True
3          4       False              True               True
4          5       False             False               True
5          6       False             False              False
>>> pool_truncated(frame).tolist()
[True]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from askkit.errors import SchemaError
from askkit.frame.schema import STRING
from askkit.metrics.queries import Queries, read_queries
from askkit.ranking.cut import cut_len
from askkit.ranking.settings import CANDIDATE_POOL, STRATEGIES, CutSettings
from askkit.wire import ChunkResult

__all__ = [
    "POOL_COLUMNS",
    "POOL_STRATEGY_COLUMNS",
    "check_turn_ids",
    "checked_queries",
    "pool_frame",
    "pool_truncated",
    "pools_frame",
    "query_pools",
    "with_pool",
]

#: The long pool frame (what :func:`askkit.ranking.sweep_cuts` reads): column -> dtype.
POOL_COLUMNS: dict[str, Any] = {
    "query_id": STRING,
    "rank": np.dtype("int64"),
    "path": STRING,
    "score": np.dtype("float64"),
    "title": STRING,
    "text": STRING,
}
#: The column :func:`with_pool` adds for each strategy (as ``explain_cut`` names them).
POOL_STRATEGY_COLUMNS = {
    "fixed": "kept_fixed",
    "score-range": "kept_score_range",
    "largest-drop": "kept_largest_drop",
}


class _Chunk(NamedTuple):
    """What kimun's cuts read of a pool chunk (:class:`askkit.ranking.Scored`)."""

    path: str
    similarity_score: float


#: How many of a shared id's lines an error lists.
_LINES_SHOWN = 5


def check_turn_ids(frame: pd.DataFrame) -> None:
    """Refuse turns that share an id: as pools they would merge into one.

    A sources frame read from a log carries each turn's ``line``; two lines
    with one ``turn_id`` are two turns, and reading them as one pool would mix
    two rankings. A frame without a ``line`` column is not checked.

    Raises
    ------
    SchemaError
        ``field`` ``"turn_id"``; the message names the id and its lines.

    >>> frame = pd.DataFrame({"turn_id": ["q1", "q2", "q1"], "line": [1, 2, 3]})
    >>> check_turn_ids(frame)
    Traceback (most recent call last):
    ...
    askkit.errors.SchemaError: turn_id: 'q1' is the id of 2 turns (lines 1, 3): each turn's sources are one query's pool, and turns sharing an id would be merged into one; give each turn its own id
    """  # noqa: E501 - a doctest's output is one line
    if "line" not in frame.columns or "turn_id" not in frame.columns:
        return
    turns = frame[["turn_id", "line"]].drop_duplicates()
    shared = turns["turn_id"].duplicated(keep=False).to_numpy()
    if not shared.any():
        return
    turn_id = turns["turn_id"].to_numpy()[int(np.argmax(shared))]
    lines = np.sort(turns["line"].to_numpy()[turns["turn_id"].to_numpy() == turn_id])
    shown = ", ".join(str(int(line)) for line in lines[:_LINES_SHOWN])
    more = ", ..." if len(lines) > _LINES_SHOWN else ""
    raise SchemaError(
        f"{turn_id!r} is the id of {len(lines)} turns (lines {shown}{more}): each turn's "
        "sources are one query's pool, and turns sharing an id would be merged into one; "
        "give each turn its own id",
        field="turn_id",
        has_value=False,
    )


def _check(frame: pd.DataFrame) -> None:
    missing = [c for c in ("turn_id", "path", "score") if c not in frame.columns]
    if missing:
        raise SchemaError(
            "a sources frame needs turn_id, path and score columns (askkit.frame.sources_frame)",
            field="columns",
            value=missing,
        )
    for column in ("turn_id", "path"):
        blank = frame[column].isna().to_numpy()
        if blank.any():
            at = int(np.argmax(blank))
            raise SchemaError("must not be missing", field=f"{column}[{at}]", has_value=False)
    scores = pd.to_numeric(frame["score"], errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isfinite(scores)
    if bad.any():
        at = int(np.argmax(bad))
        raise SchemaError(
            f"turn {frame['turn_id'].iloc[at]!r}: the score must be a finite number "
            "(kimun's cuts compare scores)",
            field=f"score[{at}]",
            value=frame["score"].iloc[at],
        )
    check_turn_ids(frame)


def _pool_order(
    frame: pd.DataFrame,
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """Turn codes, the rows in pool order (turn by first appearance, best first), the offsets.

    Ties on score keep the answer's ordinal order, then the received order.
    ``bounds[i]:bounds[i + 1]`` are the sorted rows of the ``i``-th turn.
    """
    codes, _ = pd.factorize(frame["turn_id"], sort=False)
    codes = codes.astype(np.int64)
    keys: list[np.ndarray[Any, Any]] = [np.arange(len(frame))]
    keys += [frame[c].to_numpy(dtype=np.float64) for c in ("rank", "ordinal") if c in frame]
    keys += [-frame["score"].to_numpy(dtype=np.float64), codes]
    order = np.lexsort(keys).astype(np.int64)  # the last key sorts first
    counts = np.bincount(codes, minlength=int(codes.max()) + 1 if len(codes) else 0)
    bounds = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return codes, order, bounds


def _pool_rank(codes: np.ndarray[Any, Any], order: np.ndarray[Any, Any], bounds: Any) -> Any:
    """Each row's 1-based position in its turn's pool, in the frame's row order."""
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order), dtype=np.int64) - bounds[codes[order]] + 1
    return rank


def with_pool(frame: pd.DataFrame, settings: CutSettings | None = None) -> pd.DataFrame:
    """A copy of ``frame`` with each chunk's pool position and what each cut keeps.

    Each turn's sources are read as its ranked pool (best first by ``score``;
    ties in ``ordinal``, then received, order). Added columns:

    * ``pool_rank``: the chunk's 1-based position in its turn's pool;
    * ``kept_fixed``, ``kept_score_range``, ``kept_largest_drop``: whether
      that context cut keeps the chunk, each with ``settings``' knob for it
      (``top_k``, ``score_range_cutoff``, the drop window; default kimun's).

    The cut lengths are :func:`~askkit.ranking.cut.cut_len`'s, one call per turn
    and strategy; the rest is columnar. Meaningful on whole pools: on a
    turn the server already cut (:func:`pool_truncated`) it says what a
    second cut would keep.

    Raises
    ------
    SchemaError
        A missing column, a missing ``turn_id`` or ``path``, a non-finite score,
        turns of a log that share an id (:func:`check_turn_ids`).
    """
    _check(frame)
    settings = CutSettings() if settings is None else settings
    out = frame.copy()
    codes, order, bounds = _pool_order(frame)
    pool_rank = _pool_rank(codes, order, bounds)
    out["pool_rank"] = pool_rank
    paths = frame["path"].astype(str).to_numpy(dtype=object)[order].tolist()
    scores = frame["score"].to_numpy(dtype=np.float64)[order].tolist()
    pools = [
        [_Chunk(p, s) for p, s in zip(paths[a:b], scores[a:b], strict=True)]
        for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True)
    ]
    for strategy in STRATEGIES:
        lengths = np.fromiter(
            (cut_len(pool, settings.replace(strategy=strategy)) for pool in pools),
            dtype=np.int64,
            count=len(pools),
        )
        out[POOL_STRATEGY_COLUMNS[strategy]] = pool_rank <= lengths[codes]
    return out


def pool_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A sources frame's turns as the pools :func:`askkit.ranking.sweep_cuts` reads.

    ``query_id`` is the ``turn_id`` (match it to your qrels' ids), ``rank``
    the :func:`with_pool` ``pool_rank``; ``path``, ``score``, and ``title``
    and ``text`` when the frame has them.

    >>> frame = pd.DataFrame({"turn_id": ["t", "t"], "path": ["a.md", "b.md"],
    ...                       "score": [0.2, 0.9]})
    >>> pool_frame(frame)
      query_id  rank  path  score
    0        t     1  b.md    0.9
    1        t     2  a.md    0.2
    """
    _check(frame)
    codes, order, bounds = _pool_order(frame)
    ranked = frame.iloc[order]
    rank = _pool_rank(codes, order, bounds)[order]
    columns: dict[str, Any] = {
        "query_id": ranked["turn_id"].to_numpy(),
        "rank": rank,
        "path": ranked["path"].to_numpy(),
        "score": ranked["score"].to_numpy(dtype=np.float64),
    }
    for extra in ("title", "text"):
        if extra in frame.columns:
            columns[extra] = ranked[extra].to_numpy()
    return pd.DataFrame(columns)


def pool_truncated(
    frame: pd.DataFrame, size: int = CANDIDATE_POOL, *, vault_chunks: int | None = None
) -> pd.Series:
    """Per turn, whether its sources look already cut by a server (fewer than ``size``).

    kimun ranks ``min(80, chunks in the vault)`` chunks; a saved answer keeps
    only the chunks its context cut kept, so a sweep over it can only cut
    further. Pass ``vault_chunks`` (e.g. ``len(LocalIndex(...))``) so a small
    vault's whole pool is not mistaken for a cut one.

    Returns
    -------
    pandas.Series
        Boolean, indexed by ``turn_id`` in first-appearance order, named
        ``pool_truncated``.
    """
    if "turn_id" not in frame.columns:
        raise SchemaError("a sources frame needs a turn_id column", field="columns", value=[])
    if size < 1:
        raise ValueError(f"size must be >= 1, got {size}")
    limit = size if vault_chunks is None else min(size, vault_chunks)
    counts = frame.groupby("turn_id", sort=False, observed=True).size()
    return (counts < limit).rename("pool_truncated")


def query_pools(
    pool: Callable[[str, int | None], list[ChunkResult]],
    queries: Queries,
    size: int | None = None,
    *,
    progress: bool = False,
) -> pd.DataFrame:
    """Many queries' pools as one long frame: what :func:`askkit.ranking.sweep_cuts` sweeps.

    Parameters
    ----------
    pool:
        A retriever's pool: ``pool(text, size)`` gives one query's candidate
        pool, best first (:meth:`askkit.retrieve.LocalIndex.pool`).
    queries:
        ``{query_id: text}``, a frame with ``query_id`` and ``text`` (or
        ``question``) columns, or such a TSV file (``data/queries.tsv``):
        :func:`askkit.metrics.read_queries`.
    size:
        Chunks per pool (``None``: the retriever's own).
    progress:
        Show a tqdm bar over the queries.

    Returns
    -------
    pandas.DataFrame
        One row per pool chunk, queries in the given order, each pool best
        first: :data:`POOL_COLUMNS` (``query_id``, ``rank`` = the chunk's
        ordinal, ``path``, ``score``, ``title``, ``text``). A query matching
        nothing has no rows.

    >>> def pool(text, size):
    ...     return [ChunkResult(path=f"{text}.md", title="T", date=None, content="x", hash="h",
    ...                         similarity_score=0.5, ordinal=1)]
    >>> query_pools(pool, {"q1": "bread"})[["query_id", "rank", "path", "score"]]
      query_id  rank      path  score
    0       q1     1  bread.md    0.5
    """
    texts = checked_queries(queries)
    bar = tqdm(texts.items(), desc="pools", unit="query", disable=not progress or len(texts) < 2)
    return pools_frame((query_id, pool(text, size)) for query_id, text in bar)


def checked_queries(queries: Queries) -> dict[str, str]:
    """:func:`askkit.metrics.read_queries`, refusing an empty query text with a
    :class:`SchemaError` (kimun refuses an empty question).

    >>> checked_queries({"q1": " "})
    Traceback (most recent call last):
    ...
    askkit.errors.SchemaError: queries['q1']: the query text is empty, got ' '
    """
    texts = read_queries(queries)
    for query_id, text in texts.items():
        if not text.strip():
            raise SchemaError("the query text is empty", field=f"queries[{query_id!r}]", value=text)
    return texts


def pools_frame(pools: Iterable[tuple[str, Sequence[ChunkResult]]]) -> pd.DataFrame:
    """``(query_id, pool)`` pairs as one long frame of :data:`POOL_COLUMNS`, in their
    order; ``rank`` is each chunk's ordinal (a pool numbers its chunks 1..n).

    >>> chunk = ChunkResult(path="a.md", title="T", date=None, content="x", hash="h",
    ...                     similarity_score=0.9, ordinal=1)
    >>> pools_frame([("q1", [chunk])])[["query_id", "rank", "path", "score"]]
      query_id  rank  path  score
    0       q1     1  a.md    0.9
    """
    cols: dict[str, list[Any]] = {c: [] for c in POOL_COLUMNS}
    for query_id, chunks in pools:
        cols["query_id"].extend([query_id] * len(chunks))
        cols["rank"].extend(c.ordinal for c in chunks)
        cols["path"].extend(c.path for c in chunks)
        cols["score"].extend(c.similarity_score for c in chunks)
        cols["title"].extend(c.title for c in chunks)
        cols["text"].extend(c.content for c in chunks)
    return pd.DataFrame({c: pd.Series(v, dtype=POOL_COLUMNS[c]) for c, v in cols.items()})
