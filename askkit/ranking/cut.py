"""kimun's three context cuts: how many chunks of the ranked pool a query keeps.

Every cut keeps a best-first prefix of the ranked pool, so each is a length
(``cut_len`` in ``server/src/lib.rs``):

* ``fixed``: ``top_k`` chunks, ``top_k`` floored to 1 and capped at the pool;
* ``score-range`` (kimun's default): ``high`` = the score at index
  ``floor((1.0 - 0.95) * (n - 1))``, ``low`` = the score at index
  ``ceil((1.0 - 0.05) * (n - 1))`` (f64 arithmetic as kimun writes it:
  ``1.0 - 0.95`` is 0.050000000000000044); a flat range (``high - low <= 0``)
  keeps the pool whole, otherwise the prefix of chunks scoring
  ``>= low + cutoff * (high - low)`` is kept;
* ``largest-drop``: over each note's best score, in pool order, the largest
  relative drop ``(s[k-1] - s[k]) / s[k-1]`` at note positions ``k`` in
  ``max(1, min)..=min(max, notes - 1)`` (stopping at the first non-positive
  ``s[k-1]``; the earliest of equal drops wins); every chunk scoring at least
  ``s[k]`` (the note that closes the gap) is kept. No positive drop: the
  whole pool.

These are the plain-Python specification; :mod:`askkit.ranking.sweep` computes
the same lengths column-wise and is tested against them.

Examples
--------
>>> from askkit.ranking.pool import pool_of
>>> pool = pool_of([0.99, 0.98, 0.97, 0.80, 0.70])
>>> score_range_cut_len(pool), largest_drop_cut_len(pool), fixed_cut_len(pool, 2)
(3, 4, 2)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from askkit.ranking.pool import Scored
from askkit.ranking.settings import (
    DROP_WINDOW_MAX,
    DROP_WINDOW_MIN,
    RANGE_HIGH_PERCENTILE,
    RANGE_LOW_PERCENTILE,
    SCORE_RANGE_DEFAULT_CUTOFF,
    CutSettings,
)

__all__ = [
    "HIGH_INDEX_FACTOR",
    "LOW_INDEX_FACTOR",
    "LargestDrop",
    "ScoreRange",
    "cut_len",
    "fixed_cut_len",
    "largest_drop",
    "largest_drop_cut_len",
    "note_best_scores",
    "range_ranks",
    "score_range",
    "score_range_cut_len",
]

#: ``1.0 - RANGE_HIGH_PERCENTILE`` in f64: 0.050000000000000044, not 0.05.
HIGH_INDEX_FACTOR = 1.0 - RANGE_HIGH_PERCENTILE
#: ``1.0 - RANGE_LOW_PERCENTILE`` in f64: 0.95.
LOW_INDEX_FACTOR = 1.0 - RANGE_LOW_PERCENTILE


def fixed_cut_len(pool: Sequence[Scored], top_k: int) -> int:
    """The fixed cut: ``top_k`` chunks, floored to 1, capped at the pool.

    >>> from askkit.ranking.pool import pool_of
    >>> fixed_cut_len(pool_of([0.9, 0.8, 0.7]), 0), fixed_cut_len(pool_of([0.9]), 5)
    (1, 1)
    """
    return min(max(top_k, 1), len(pool))


@dataclass(frozen=True, slots=True)
class ScoreRange:
    """Where the score-range cut lands on one pool.

    Attributes
    ----------
    high, low:
        The pool scores at the high and low percentile indices.
    threshold:
        ``low + cutoff * (high - low)``, or ``None`` when the range is flat
        (``high - low <= 0``: the pool is kept whole). A NaN range is not
        flat to kimun's ``<=``: the threshold is NaN and nothing is kept.
    cut_len:
        The kept prefix: the whole pool when flat, else the chunks before the
        first one scoring below ``threshold``.
    """

    high: float
    low: float
    threshold: float | None
    cut_len: int

    @property
    def scaled(self) -> bool:
        """Whether the range is a scale: ``high - low`` positive and finite in f64.

        A flat range keeps the pool whole; one that overflows (scores near
        the largest float) makes kimun's threshold inf, or NaN for a cutoff
        of 0, so no finite score reaches it.
        """
        return 0.0 < self.high - self.low < math.inf

    def normalised(self, score: float) -> float:
        """``(score - low) / (high - low)``: where the cutoff applies (NaN when the range
        is no scale: flat, or overflowing f64)."""
        return (score - self.low) / (self.high - self.low) if self.scaled else math.nan


def range_ranks(n: int) -> tuple[int, int]:
    """The 1-based ranks whose scores are the score-range cut's high and low, in a pool
    of ``n`` chunks (best first): 5% and 95% of the way down the pool, as kimun reads them.

    The pool's best few chunks can score above the high, so a score's place on the
    range (:meth:`ScoreRange.normalised`) can exceed 1; the last few fall below 0.

    >>> range_ranks(80), range_ranks(5), range_ranks(1)
    ((4, 77), (1, 5), (1, 1))
    """
    if n <= 0:
        return (0, 0)
    last = float(n - 1)
    return (math.floor(HIGH_INDEX_FACTOR * last) + 1, math.ceil(LOW_INDEX_FACTOR * last) + 1)


def score_range(pool: Sequence[Scored], cutoff: float = SCORE_RANGE_DEFAULT_CUTOFF) -> ScoreRange:
    """The score-range cut on ``pool`` with its endpoints (``score_range_cut_len`` in kimun).

    ``cutoff`` is used as given: sanitise it with
    :class:`~askkit.ranking.settings.CutSettings`.

    >>> from askkit.ranking.pool import pool_of
    >>> score_range(pool_of([0.90, 0.40, 0.30]))
    ScoreRange(high=0.9, low=0.3, threshold=0.54, cut_len=1)
    """
    n = len(pool)
    if n == 0:
        return ScoreRange(math.nan, math.nan, None, 0)
    high_rank, low_rank = range_ranks(n)
    high = pool[high_rank - 1].similarity_score
    low = pool[low_rank - 1].similarity_score
    span = high - low
    if span <= 0.0:
        return ScoreRange(high, low, None, n)
    threshold = low + cutoff * span
    kept = 0
    for chunk in pool:  # take_while: a prefix, even on an unsorted pool
        if not chunk.similarity_score >= threshold:
            break
        kept += 1
    return ScoreRange(high, low, threshold, kept)


def score_range_cut_len(pool: Sequence[Scored], cutoff: float = SCORE_RANGE_DEFAULT_CUTOFF) -> int:
    """kimun's ``score_range_cut_len``: the chunks the score-range cut keeps.

    >>> from askkit.ranking.pool import pool_of
    >>> score_range_cut_len(pool_of([-0.1, -0.5])), score_range_cut_len(pool_of([0.7] * 3))
    (1, 3)
    """
    return score_range(pool, cutoff).cut_len


def note_best_scores(pool: Sequence[Scored]) -> list[float]:
    """Each distinct note's first (so best) score, in pool order.

    >>> from askkit.ranking.pool import pool_of
    >>> note_best_scores(pool_of([0.9, 0.8, 0.7], paths=["a", "a", "b"]))
    [0.9, 0.7]
    """
    seen: set[str] = set()
    best: list[float] = []
    for chunk in pool:
        if chunk.path not in seen:
            seen.add(chunk.path)
            best.append(chunk.similarity_score)
    return best


@dataclass(frozen=True, slots=True)
class LargestDrop:
    """Where the largest-drop cut lands on one pool.

    Attributes
    ----------
    notes:
        Each note's best score, in pool order (what the gap is searched over).
    keep:
        The notes above the winning gap (the gap is between note ``keep`` and
        note ``keep + 1``, 1-based), or ``None`` when no positive drop exists
        in the window (the pool is kept whole).
    drop:
        The winning relative drop, ``(s[keep-1] - s[keep]) / s[keep-1]``.
    boundary:
        The best score of the note that closes the gap: every chunk scoring at
        least this is kept.
    searched:
        The note positions ``k`` actually searched (``range``), after the
        window was clipped to the pool and the search stopped at a
        non-positive base score.
    cut_len:
        The kept prefix.
    """

    notes: tuple[float, ...]
    keep: int | None
    drop: float
    boundary: float
    searched: range
    cut_len: int


def largest_drop(
    pool: Sequence[Scored], window: tuple[int, int] = (DROP_WINDOW_MIN, DROP_WINDOW_MAX)
) -> LargestDrop:
    """The largest-drop cut on ``pool`` with its gap (``largest_drop_cut_len`` in kimun).

    ``window`` is ``(min, max)`` as kimun holds it (sanitised: use
    :class:`~askkit.ranking.settings.CutSettings`); ``min`` is floored to 1
    here as kimun's loop does.

    >>> from askkit.ranking.pool import pool_of
    >>> cut = largest_drop(pool_of([0.90, 0.89, 0.88, 0.87, 0.86, 0.50, 0.49, 0.48]))
    >>> cut.keep, round(cut.drop, 3), cut.boundary, cut.cut_len
    (5, 0.419, 0.5, 6)
    """
    notes = note_best_scores(pool)
    start = max(window[0], 1)
    stop = start
    best: tuple[float, int] | None = None
    for keep in range(start, min(window[1], max(len(notes) - 1, 0)) + 1):
        base = notes[keep - 1]
        if base <= 0.0:
            break
        stop = keep + 1
        drop = (base - notes[keep]) / base
        if drop > 0.0 and (best is None or drop > best[0]):
            best = (drop, keep)
    searched = range(start, stop)
    if best is None:
        return LargestDrop(tuple(notes), None, math.nan, math.nan, searched, len(pool))
    drop, keep = best
    boundary = notes[keep]
    kept = 0
    for chunk in pool:
        if not chunk.similarity_score >= boundary:
            break
        kept += 1
    return LargestDrop(tuple(notes), keep, drop, boundary, searched, kept)


def largest_drop_cut_len(
    pool: Sequence[Scored], window: tuple[int, int] = (DROP_WINDOW_MIN, DROP_WINDOW_MAX)
) -> int:
    """kimun's ``largest_drop_cut_len``: the chunks the largest-drop cut keeps.

    >>> from askkit.ranking.pool import pool_of
    >>> largest_drop_cut_len(pool_of([0.90, 0.89, 0.80, 0.40, 0.30, 0.15, 0.10]))
    4
    """
    return largest_drop(pool, window).cut_len


def cut_len(pool: Sequence[Scored], settings: CutSettings | None = None) -> int:
    """kimun's ``cut_len``: the chunks the configured cut keeps (the answer's context size).

    >>> from askkit.ranking.pool import pool_of
    >>> pool = pool_of([1.00, 0.93, 0.88, 0.86, 0.84])
    >>> cut_len(pool), cut_len(pool, CutSettings(strategy="largest-drop"))
    (2, 5)
    """
    settings = CutSettings() if settings is None else settings
    if settings.strategy == "fixed":
        return fixed_cut_len(pool, settings.top_k)
    if settings.strategy == "score-range":
        return score_range_cut_len(pool, settings.score_range_cutoff)
    return largest_drop_cut_len(pool, settings.window)
