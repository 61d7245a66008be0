"""Reciprocal rank fusion: many runs of the same queries merged into one, by rank alone.

:func:`fuse_rrf` merges runs (sources frames, :func:`askkit.frame.sources_frame`)
the way Cormack, Clarke and Büttcher's reciprocal rank fusion does: each
run ranks its documents as :func:`askkit.metrics.ranked_run` (and so
:func:`askkit.metrics.evaluate`) ranks them, and a document's fused score is
the sum over the runs that retrieved it of ``weight / (k + rank)``. Scores
on different scales (BM25 and cosine similarity) never meet: only ranks do,
which is why it is the usual way to make a hybrid of a lexical and a dense
retriever.

Examples
--------
>>> bm25 = pd.DataFrame({"turn_id": ["q", "q", "q"], "path": ["a.md", "b.md", "c.md"],
...                      "score": [9.0, 7.0, 5.0]})
>>> dense = pd.DataFrame({"turn_id": ["q", "q"], "path": ["c.md", "a.md"],
...                       "score": [0.8, 0.6]})
>>> fused = fuse_rrf({"bm25": bm25, "dense": dense}, level="note")
>>> fused["path"].tolist(), fused["rank"].tolist()
(['a.md', 'c.md', 'b.md'], [1, 2, 3])
>>> round(float(fused["score"].iloc[0]), 6) == round(1 / 61 + 1 / 62, 6)
True
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from askkit.errors import SchemaError, UsageError
from askkit.frame.columns import score_stats
from askkit.frame.schema import STRING
from askkit.metrics.evaluate import ranked_run
from askkit.metrics.ids import Level
from askkit.metrics.preparation import Ties, check_options

__all__ = ["DEFAULT_K", "FusionLevel", "fuse_rrf"]

#: The RRF constant of Cormack, Clarke and Büttcher (and ranx's default).
DEFAULT_K = 60
#: The document a fused row stands for: a note, a section (``path#heading``,
#: as :func:`~askkit.metrics.evaluate` judges it) or one chunk (path, title, text).
FusionLevel = Literal["chunk", "section", "note"]

_RANKING = ("score", "rank", "ordinal", "score_rank", "score_gap", "score_z")


def _positive(value: object) -> float | None:
    """``value`` as a float when it is a finite real number > 0 (not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        return None
    number = float(value)
    return number if math.isfinite(number) and number > 0 else None


def _check_k(k: object) -> float:
    value = _positive(k)
    if value is None:
        raise UsageError(f"k must be a finite number > 0, got {k!r}")
    return value


def _check_depth(depth: object) -> int | None:
    if depth is None:
        return None
    if isinstance(depth, bool) or not isinstance(depth, int | np.integer) or depth < 1:
        raise UsageError(f"depth must be a whole number >= 1 or None, got {depth!r}")
    return int(depth)


def _check_weights(weights: Mapping[str, float] | None, names: list[str]) -> list[float]:
    if weights is None:
        return [1.0] * len(names)
    unknown = [name for name in weights if name not in names]
    if unknown:
        raise UsageError(f"weights name runs that are not given: {unknown}; the runs are {names}")
    out = []
    for name in names:
        w = weights.get(name, 1.0)
        value = _positive(w)
        if value is None:
            raise UsageError(f"the weight of run {name!r} must be a finite number > 0, got {w!r}")
        out.append(value)
    return out


def _named(runs: Mapping[str, pd.DataFrame] | Sequence[pd.DataFrame]) -> dict[str, pd.DataFrame]:
    named = (
        dict(runs)
        if isinstance(runs, Mapping)
        else {f"run-{i}": r for i, r in enumerate(runs, start=1)}
    )
    if not named:
        raise UsageError("fuse_rrf needs at least one run")
    for name, frame in named.items():
        if not isinstance(frame, pd.DataFrame):
            raise TypeError(
                f"run {name!r} is a {type(frame).__name__}, not a sources frame "
                "(askkit.frame.sources_frame)"
            )
        missing = [c for c in ("turn_id", "score") if c not in frame.columns]
        if "path" not in frame.columns and "doc" not in frame.columns:
            missing.append("path")
        if missing:
            raise SchemaError(
                f"run {name!r} is not a run: it needs turn_id, score and path (or doc) "
                "columns; build it with askkit.frame.sources_frame",
                field=f"runs[{name!r}].columns",
                value=missing,
            )
    return named


def _with_chunk_ids(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with a ``doc`` column naming each chunk: path, title and text."""
    if "doc" in frame.columns:
        return frame
    parts = [frame["path"].astype(STRING)]
    parts += [frame[c].astype(STRING).fillna("") for c in ("title", "text") if c in frame.columns]
    doc = parts[0]
    for part in parts[1:]:
        doc = doc + "\x00" + part
    return frame.assign(doc=doc)


def _contributions(
    frames: list[pd.DataFrame],
    weights: list[float],
    k: float,
    depth: int | None,
    *,
    level: str,
    ties: Ties,
) -> pd.DataFrame:
    """One row per (run, query, document) that takes part: its rank and ``weight / (k + rank)``."""
    parts = []
    for i, (frame, weight) in enumerate(zip(frames, weights, strict=True)):
        if not len(frame):
            continue
        source = _with_chunk_ids(frame) if level == "chunk" else frame
        doc_level: Level = "note" if level == "chunk" else level  # type: ignore[assignment]
        ranked = ranked_run(source, level=doc_level, ties=ties)
        if depth is not None:
            ranked = ranked[ranked["rank"].to_numpy() <= depth]
        rank = ranked["rank"].to_numpy(dtype=np.int64)
        parts.append(
            pd.DataFrame(
                {
                    "query_id": ranked["query_id"].to_numpy(dtype=object),
                    "doc": ranked["doc"].to_numpy(dtype=object),
                    "rank": rank,
                    "run": np.full(len(rank), i, dtype=np.int64),
                    "row": ranked.index.to_numpy(dtype=np.int64),
                    "part": weight / (k + rank.astype(np.float64)),
                }
            )
        )
    if not parts:
        return pd.DataFrame(
            {
                "query_id": pd.Series([], dtype=object),
                "doc": pd.Series([], dtype=object),
                **{c: pd.Series([], dtype=np.int64) for c in ("rank", "run", "row")},
                "part": pd.Series([], dtype=np.float64),
            }
        )
    return pd.concat(parts, ignore_index=True)


def _positions(values: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Each distinct string's place in code point order (equal strings, equal places)."""
    codes, _ = pd.factorize(values, sort=True)
    return np.asarray(codes, dtype=np.int64)


def fuse_rrf(
    runs: Mapping[str, pd.DataFrame] | Sequence[pd.DataFrame],
    k: float = DEFAULT_K,
    *,
    depth: int | None = None,
    weights: Mapping[str, float] | None = None,
    level: FusionLevel = "section",
    ties: Ties = "trec",
) -> pd.DataFrame:
    """Merge runs by reciprocal rank fusion: ``score = sum of weight / (k + rank)``.

    Parameters
    ----------
    runs:
        ``{name: sources frame}`` (:func:`askkit.frame.sources_frame`, or any
        frame :func:`askkit.metrics.evaluate` takes: ``turn_id``, ``score``,
        ``path`` or ``doc``), or a list of them. A run may miss queries the
        others answer, and may be empty.
    k:
        The RRF constant, a finite number > 0 (default 60, as in the paper and
        ranx). Anything else raises :class:`~askkit.errors.UsageError` (a
        ``ValueError``) naming the value.
    depth:
        Only each run's first ``depth`` documents take part (``None``: all).
    weights:
        ``{name: weight}``, each finite and > 0; a run not named weighs 1.
    level:
        What one document is, as :func:`~askkit.metrics.evaluate` identifies it:
        ``"section"`` (default; ``path#heading``: the pieces of one section
        merge), ``"note"`` (the path) or ``"chunk"`` (path, title and text:
        only identical chunks merge). A ``doc`` column, when a run has one,
        names the document at every level.
    ties:
        How each run is ranked before fusing, as in
        :func:`~askkit.metrics.ranked_run`: ``"trec"`` (score descending, then
        document id descending) or ``"input"`` (the ``rank`` column, else row
        order: the run's own order).

    Returns
    -------
    pandas.DataFrame
        One row per (query, document) any run retrieved, with the columns of
        the runs (their union, in order of first appearance), queries in order
        of first appearance (the first run's, then new ones from the next
        runs), best first. ``score`` is the fused score, ``rank`` 1..n per
        query (added when the runs have none), and where the runs have them
        ``ordinal`` = ``rank`` and ``score_rank``, ``score_gap``, ``score_z``
        recomputed from the fused scores as :func:`~askkit.frame.sources_frame`
        computes them. Every other value is the row of the run that ranked the
        document best (the first such run when two tie): its path, title,
        text, and its ``cited`` (whether that run's answer cited it).

    Notes
    -----
    A document retrieved more than once by one run (two chunks of a section)
    counts once, at its best rank, as trec-style fusion (ranx, trec_eval)
    sees a run; ranks are then positions among the run's distinct documents,
    exactly as :func:`~askkit.metrics.ranked_run` gives them. A document's
    contributions are added smallest first, so two documents with the same
    ranks in the same runs get bit-identical scores. Ties are broken by
    document id, descending (trec_eval's rule): the fused frame's order is the
    one :func:`~askkit.metrics.evaluate` sees with ``ties="trec"`` and with
    ``ties="input"`` alike.
    """
    named = _named(runs)
    names = list(named)
    k_value = _check_k(k)
    cut = _check_depth(depth)
    w = _check_weights(weights, names)
    if level not in ("chunk", "section", "note"):
        raise UsageError(f"level must be 'chunk', 'section' or 'note', got {level!r}")
    check_options("note", ties)
    frames = [frame.reset_index(drop=True) for frame in named.values()]
    parts = _contributions(frames, w, k_value, cut, level=level, ties=ties)
    everything = pd.concat(frames, ignore_index=True)
    if not len(parts):
        empty: pd.DataFrame = everything.iloc[:0].assign(
            score=np.empty(0, dtype=np.float64), rank=np.empty(0, dtype=np.int64)
        )
        return empty

    # -- one group per (query, document): the fused score and the best row
    query_ids = pd.unique(
        pd.concat([f["turn_id"].astype(STRING) for f in frames], ignore_index=True)
    )
    query_order = pd.Series(np.arange(len(query_ids)), index=pd.Index(query_ids, dtype=object))
    q = query_order.reindex(parts["query_id"].to_numpy()).to_numpy(dtype=np.int64)
    d = _positions(parts["doc"].to_numpy(dtype=object))
    key = q * (int(d.max()) + 1) + d
    part = parts["part"].to_numpy(dtype=np.float64)
    by_value = np.lexsort((part, key))  # within a document: smallest contribution first
    sorted_key = key[by_value]
    starts = np.flatnonzero(np.r_[True, sorted_key[1:] != sorted_key[:-1]])
    fused = np.add.reduceat(part[by_value], starts)
    run_no, rank = parts["run"].to_numpy(), parts["rank"].to_numpy()
    by_best = np.lexsort((run_no, rank, key))  # best rank, then the first run
    best = by_best[np.flatnonzero(np.r_[True, key[by_best][1:] != key[by_best][:-1]])]
    # both orders sort by key first: group i is the same (query, document) in each
    gq, gd = q[best], d[best]
    order = np.lexsort((-gd, -fused, gq))  # query, fused score descending, doc id descending

    # -- the output rows: each group's best row, in fused order
    offsets = np.cumsum([0] + [len(f) for f in frames])
    rows = offsets[run_no[best][order]] + parts["row"].to_numpy()[best][order]
    out: pd.DataFrame = everything.iloc[rows].reset_index(drop=True)
    score = fused[order]
    turn = gq[order]
    new_turn = np.r_[True, turn[1:] != turn[:-1]]
    idx = np.arange(len(turn), dtype=np.int64)
    first = np.maximum.accumulate(np.where(new_turn, idx, 0))
    fused_rank = idx - first + 1
    out["score"] = score
    out["rank"] = fused_rank
    if "ordinal" in out.columns:
        out["ordinal"] = fused_rank
    stats = [c for c in ("score_rank", "score_gap", "score_z") if c in out.columns]
    if stats:
        values = score_stats(turn, score)
        for c in stats:
            out[c] = values[c]
    return out
