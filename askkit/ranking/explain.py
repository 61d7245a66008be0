"""Why kimun kept or cut each chunk: a per-chunk table and a plain-words answer.

:func:`explain_cut` lays one ranked pool out as a table (one row per chunk,
every strategy side by side); :func:`why_not` says in words why a note is
missing from search or from an answer, or where it was kept.

Examples
--------
>>> from askkit.ranking.pool import pool_of
>>> pool = pool_of([0.99, 0.98, 0.97, 0.80, 0.70],
...                paths=["/a.md", "/a.md", "/a.md", "/b.md", "/c.md"])
>>> explain_cut(pool)[["rank", "path", "kept_score_range", "kept_largest_drop"]]
   rank   path  kept_score_range  kept_largest_drop
0     1  /a.md              True               True
1     2  /a.md              True               True
2     3  /a.md              True               True
3     4  /b.md             False               True
4     5  /c.md             False               True
>>> print(why_not(pool, "/b.md"))
/b.md is in the pool: best chunk at rank 4 of 5 (score 0.8), note 2 of 3.
Answer (score-range): cut: normalised 0.34 < cutoff 0.40 (score 0.8 < threshold 0.816); the context keeps ranks 1-3.
Search: not listed: its best chunk (rank 4) is cut.
"""  # noqa: E501 - a doctest's output is one line

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from askkit.errors import SchemaError
from askkit.ranking.cut import (
    LargestDrop,
    ScoreRange,
    fixed_cut_len,
    largest_drop,
    score_range,
)
from askkit.ranking.pool import Scored, pool_of
from askkit.ranking.settings import CANDIDATE_POOL, STRATEGIES, CutSettings, Strategy
from askkit.ranking.surfaces import search_rows
from askkit.wire import ChunkResult

__all__ = ["Pool", "explain_cut", "why_not"]

#: A ranked pool: scored chunks in kimun's order, or a frame with ``path`` and
#: ``score`` (or ``similarity_score``) columns in that order.
Pool = Sequence[Scored] | pd.DataFrame

_SUFFIX: dict[Strategy, str] = {
    "fixed": "fixed",
    "score-range": "score_range",
    "largest-drop": "largest_drop",
}


def _as_pool(pool: Pool) -> Sequence[Scored]:
    if not isinstance(pool, pd.DataFrame):
        return pool
    column = next((c for c in ("score", "similarity_score") if c in pool.columns), None)
    if column is None or "path" not in pool.columns:
        raise SchemaError(
            "a pool frame needs 'path' and 'score' (or 'similarity_score') columns, "
            "one row per chunk in kimun's order",
            field="columns",
            value=list(pool.columns),
        )
    scores = pool[column].to_numpy(dtype=np.float64)
    return pool_of(scores.tolist(), pool["path"].astype(str).tolist())


def _cut_lengths(
    pool: Sequence[Scored], settings: CutSettings
) -> tuple[dict[Strategy, int], ScoreRange, LargestDrop]:
    ranged = score_range(pool, settings.score_range_cutoff)
    dropped = largest_drop(pool, settings.window)
    lengths: dict[Strategy, int] = {
        "fixed": fixed_cut_len(pool, settings.top_k),
        "score-range": ranged.cut_len,
        "largest-drop": dropped.cut_len,
    }
    return lengths, ranged, dropped


def explain_cut(pool: Pool, settings: CutSettings | None = None) -> pd.DataFrame:
    """One row per pool chunk: its rank, note, score and what each strategy does with it.

    Parameters
    ----------
    pool:
        The ranked pool, best first (kimun's order).
    settings:
        The knobs of each strategy (the ``strategy`` field itself is not used:
        every strategy is shown).

    Returns
    -------
    pandas.DataFrame
        Columns ``rank`` (1-based), ``path``, ``score``, ``normalised`` (on
        the score-range scale, ``(score - low) / (high - low)``, where high and
        low are the scores 5% and 95% of the way down the pool
        (:func:`askkit.ranking.cut.range_ranks`): the few chunks above the high
        score more than 1, those below the low less than 0; NaN for a
        flat pool or a range that overflows f64), ``note_rank`` (the note's
        position among the pool's notes), ``note_best`` (the note's first,
        best chunk), ``note_drop`` (the note's relative drop to the next note,
        ``(s - s_next) / s``, NaN for the last note or a non-positive score),
        then for each strategy
        ``kept_*`` (in the kept prefix: the answer's context),
        ``is_boundary_*`` (the last kept chunk, when the cut drops something)
        and ``in_search_*`` (a row of kimun's search). ``attrs["cut_len"]``
        maps each strategy to its cut length; ``attrs["threshold"]`` holds the
        score-range threshold and the largest-drop boundary score.

    Examples
    --------
    >>> from askkit.ranking.pool import pool_of
    >>> explain_cut(pool_of([0.9, 0.4, 0.3])).attrs["cut_len"]
    {'fixed': 3, 'score-range': 1, 'largest-drop': 3}
    """
    settings = CutSettings() if settings is None else settings
    chunks = _as_pool(pool)
    n = len(chunks)
    paths = [c.path for c in chunks]
    scores = np.array([c.similarity_score for c in chunks], dtype=np.float64)
    codes, _ = pd.factorize(pd.Series(paths, dtype=object))
    codes = np.asarray(codes, dtype=np.int64)
    first = np.zeros(n, dtype=bool)
    if n:
        first[np.unique(codes, return_index=True)[1]] = True
    lengths, ranged, dropped = _cut_lengths(chunks, settings)
    notes = np.array(dropped.notes, dtype=np.float64)
    base, after = notes[:-1], notes[1:]
    # f64 without traps, as kimun computes: a drop past the largest float is inf, as there
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        drops = np.where(base > 0, (base - after) / base, np.nan)
    note_drop = np.append(drops, np.nan)[codes] if n else np.zeros(0)
    span = ranged.high - ranged.low
    if ranged.scaled:
        with np.errstate(over="ignore"):  # a score far above high: inf, as f64 has it
            normalised = (scores - ranged.low) / span
    else:
        normalised = np.full(n, np.nan)
    frame = pd.DataFrame(
        {
            "rank": np.arange(1, n + 1, dtype=np.int64),
            "path": pd.array(paths, dtype="string"),
            "score": scores,
            "normalised": normalised,
            "note_rank": codes + 1,
            "note_best": first,
            "note_drop": note_drop,
        }
    )
    positions = np.arange(n)
    for strategy in STRATEGIES:
        kept = lengths[strategy]
        frame[f"kept_{_SUFFIX[strategy]}"] = positions < kept
        frame[f"is_boundary_{_SUFFIX[strategy]}"] = (positions == kept - 1) & (kept < n)
        # kimun's search rows: each note's first chunk, the first top_k notes under fixed,
        # the notes with a chunk in the kept prefix otherwise (see surfaces.search_rows)
        listed = codes < settings.top_k if strategy == "fixed" else positions < kept
        frame[f"in_search_{_SUFFIX[strategy]}"] = first & listed
    frame.attrs["cut_len"] = dict(lengths)
    frame.attrs["threshold"] = {
        "score-range": ranged.threshold,
        "largest-drop": dropped.boundary if dropped.keep is not None else None,
    }
    return frame


def _pair(a: float, b: float) -> tuple[str, str]:
    """Two numbers with 2 decimals, or more digits until they differ (``repr`` at worst)."""
    for digits in (2, 3, 4, 6, 9, 12):
        left, right = f"{a:.{digits}f}", f"{b:.{digits}f}"
        if left != right:
            return left, right
    return repr(a), repr(b)


def _num(x: float) -> str:
    return f"{x:.6g}"


def _nums(a: float, b: float) -> tuple[str, str]:
    """Two numbers with 6 significant digits, or ``repr`` when that prints them the same."""
    left, right = _num(a), _num(b)
    return (left, right) if left != right else (repr(a), repr(b))


def _span(ranks: Sequence[int]) -> str:
    if not ranks:
        return "none"
    if ranks == list(range(ranks[0], ranks[-1] + 1)) and len(ranks) > 2:
        return f"{ranks[0]}-{ranks[-1]}"
    return ", ".join(str(r) for r in ranks)


def _cut_reason(
    index: int,
    chunk: Scored,
    *,
    settings: CutSettings,
    kept: int,
    ranged: ScoreRange,
    dropped: LargestDrop,
) -> str:
    """Why the chunk at 0-based ``index`` (>= kept) is cut by the configured strategy."""
    rank, score = index + 1, chunk.similarity_score
    if settings.strategy == "fixed":
        return f"rank {rank} > top_k {settings.top_k}"
    if settings.strategy == "score-range":
        threshold = ranged.threshold
        if threshold is None:  # a flat pool is kept whole: not reached
            return "the pool is flat"
        if not ranged.scaled:  # high - low is inf in f64, in kimun too
            high, low = _nums(ranged.high, ranged.low)
            return (
                f"the score range high - low overflows f64 ({high} - {low} = inf), so kimun's "
                f"threshold (low + cutoff * range) is {threshold!r} and score {_num(score)} "
                "does not reach it"
            )
        if math.isnan(threshold):
            return "the score range is NaN, so kimun's cut keeps nothing"
        if not score >= threshold:
            norm, cutoff = _pair(ranged.normalised(score), settings.score_range_cutoff)
            raw, line = _nums(score, threshold)
            return f"normalised {norm} < cutoff {cutoff} (score {raw} < threshold {line})"
        return f"it comes after rank {kept + 1}, the first chunk below the threshold"
    if dropped.keep is None:  # no drop: the pool is kept whole: not reached
        return "no drop"
    keep = dropped.keep
    if score >= dropped.boundary:
        return f"it comes after rank {kept + 1}, the first chunk below the boundary"
    raw, line = _nums(score, dropped.boundary)
    return (
        f"score {raw} < boundary {line}, the best score of note {keep + 1}, which closes "
        f"the largest relative drop {dropped.drop:.3f} (from note {keep} at "
        f"{_num(dropped.notes[keep - 1])}; note positions "
        f"{dropped.searched.start}..{dropped.searched.stop - 1} searched)"
    )


def _same_chunk(a: ChunkResult, b: object) -> bool:
    return isinstance(b, ChunkResult) and (a.path, a.hash, a.title, a.content, a.date) == (
        b.path,
        b.hash,
        b.title,
        b.content,
        b.date,
    )


def why_not(pool: Pool, note: str | ChunkResult, settings: CutSettings | None = None) -> str:
    """Say in plain words why a note (or one chunk) is missing from search or an answer.

    Parameters
    ----------
    pool:
        The ranked pool, best first (kimun's order).
    note:
        A note path exactly as the pool holds it, or one chunk (then
        "folded into a better chunk of the same note" can be the answer).
    settings:
        The server's cut settings (default: kimun's defaults).

    Returns
    -------
    str
        Three lines: whether and where the note is in the pool; the answer's
        context (kept as which ``[n]``, or cut by which rule at which value);
        the search surface (listed as which row, or why not).

    Examples
    --------
    >>> from askkit.ranking.pool import pool_of
    >>> print(why_not(pool_of([0.9, 0.8]), "/x.md"))
    /x.md is not in the pool: none of its chunks is among the 2 chunks (2 notes) kimun retrieved (at most 80 before de-duplication).
    """  # noqa: E501 - a doctest's output is one line
    settings = CutSettings() if settings is None else settings
    chunks = _as_pool(pool)
    path = note.path if isinstance(note, ChunkResult) else note
    notes = list(dict.fromkeys(c.path for c in chunks))
    indices = [i for i, c in enumerate(chunks) if c.path == path]
    if not indices:
        return (
            f"{path} is not in the pool: none of its chunks is among the {len(chunks)} chunks "
            f"({len(notes)} notes) kimun retrieved (at most {CANDIDATE_POOL} before "
            "de-duplication)."
        )
    lines: list[str] = []
    target: int | None = None
    if isinstance(note, ChunkResult):
        target = next((i for i in indices if _same_chunk(note, chunks[i])), None)
        if target is None:
            lines.append(f"This chunk of {path} is not in the pool (other chunks of its note are).")
    best = indices[0]
    note_rank = notes.index(path) + 1
    lines.append(
        f"{path} is in the pool: best chunk at rank {best + 1} of {len(chunks)} "
        f"(score {_num(chunks[best].similarity_score)}), note {note_rank} of {len(notes)}."
    )
    lengths, ranged, dropped = _cut_lengths(chunks, settings)
    kept = lengths[settings.strategy]
    mine = indices if target is None else [target]
    in_context = [i + 1 for i in mine if i < kept]
    cut = [i for i in mine if i >= kept]
    head = f"Answer ({settings.strategy}): "
    if cut:
        reason = _cut_reason(
            cut[0], chunks[cut[0]], settings=settings, kept=kept, ranged=ranged, dropped=dropped
        )
        where = (
            "the context is empty"
            if not kept
            else "the context keeps rank 1"
            if kept == 1
            else f"the context keeps ranks 1-{kept}"
        )
        if in_context:
            lines.append(
                f"{head}kept as [{'], ['.join(map(str, in_context))}]; rank "
                f"{_span([i + 1 for i in cut])} cut: {reason}; {where}."
            )
        else:
            lines.append(f"{head}cut: {reason}; {where}.")
    else:
        lines.append(f"{head}kept as [{'], ['.join(map(str, in_context))}] of {kept} chunks.")
    rows = search_rows(chunks, settings)
    row = next((r + 1 for r, c in enumerate(rows) if c.path == path), None)
    if target is not None and target != best:
        folded = f"folded into a better chunk of the same note (rank {best + 1}"
        title = getattr(chunks[best], "title", "")
        folded += f", {title!r})" if title else ")"
        listed = f"; the note is row {row}." if row else "; the note is not listed either."
        lines.append(f"Search: this chunk is {folded}{listed}")
    elif row is not None:
        lines.append(f"Search: listed as row {row} (its best chunk, rank {best + 1}).")
    elif settings.strategy == "fixed":
        lines.append(f"Search: not listed: note {note_rank} > top_k {settings.top_k} notes.")
    else:
        lines.append(f"Search: not listed: its best chunk (rank {best + 1}) is cut.")
    return "\n".join(lines)
