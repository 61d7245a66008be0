"""The regression gate's statistics: paired p-values, Holm's correction, intervals, the MDE.

Each measure's per-query deltas (NEW minus BASE) are tested with a paired
test (:func:`_p_values`: randomization by default, exact for few queries, the
t-test or a paired bootstrap, the implementations in :mod:`askkit.compare`;
deltas that are all equal, which leave the t-test and the bootstrap nothing to
test, get the exact sign-flip p-value, :func:`sign_flip_p`) and the p-values
Holm-corrected across the measures; :func:`_intervals` gives each mean
delta's t interval and the smallest drop the query set detects at
:data:`POWER`; :func:`_bootstrap_interval` the bootstrap's percentile interval.

Examples
--------
>>> import numpy as np
>>> deltas = np.array([[-0.5], [-0.25], [-0.5], [0.0]])
>>> p, p_holm, _ = _p_values("t-test", 1 + 0 * deltas, 1 + deltas, deltas, resamples=1, seed=0)
>>> round(float(p[0]), 4) == round(float(p_holm[0]), 4)
True
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np

from askkit.compare import _bootstrap, _randomization, _ttest, holm

__all__ = ["MAX_RESAMPLES", "POWER", "TESTS", "Test", "constant_columns", "sign_flip_p"]

Test = Literal["randomization", "t-test", "bootstrap"]

#: The paired tests :func:`askkit.gate.gate` runs.
TESTS: tuple[Test, ...] = ("randomization", "t-test", "bootstrap")

#: The power at which the minimum detectable effect is computed.
POWER = 0.8

#: The most resamples a resampling test takes (the bootstrap interval keeps one mean per
#: resample and measure: 8 MB per measure at this bound).
MAX_RESAMPLES = 1_000_000


def constant_columns(deltas: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Whether each column's deltas take fewer than two distinct values (up to rounding).

    >>> constant_columns(np.array([[0.1, 0.5], [0.3 - 0.2, 0.25]])).tolist()
    [True, False]
    """
    if deltas.shape[0] == 0:
        return np.ones(deltas.shape[1], dtype=bool)
    spread = deltas.max(axis=0) - deltas.min(axis=0)
    result: np.ndarray[Any, Any] = spread <= 1e-12 * np.maximum(1.0, np.abs(deltas).max(axis=0))
    return result


def sign_flip_p(n: int) -> float:
    """The exact two-sided sign-flip p-value of ``n`` equal non-zero deltas: ``2 / 2^n``
    (only the two patterns with every sign alike reach the observed mean; 1 for one query).

    >>> sign_flip_p(1), sign_flip_p(3)
    (1.0, 0.25)
    """
    return min(1.0, 2.0 ** (1 - n))


def _why_constant(test: Test, n: int, delta: float) -> str:
    """Why a measure whose deltas are all equal gets the exact sign-flip p-value."""
    if n == 1:
        return (
            "one query: a paired test cannot tell a change from chance with one query, so p = 1 "
            "and this measure cannot fail the gate"
        )
    if delta == 0:
        return ""  # nothing changed: p = 1, said by the ties
    if test == "randomization":
        return (
            f"all {n} deltas equal {delta:+.4f}: p is the exact sign-flip p-value, "
            f"2/2^{n} = {sign_flip_p(n):.4g}"
        )
    lacks = (
        "the t-test has no variance to work with (scipy would say p = 0)"
        if test == "t-test"
        else "every bootstrap resample's mean is the observed one"
    )
    return (
        f"all {n} deltas equal {delta:+.4f}, so {lacks}: with fewer than two distinct deltas "
        f"the {test} has no evidence, and p is the exact sign-flip (randomization) p-value "
        f"instead, 2/2^{n} = {sign_flip_p(n):.4g}"
    )


def _p_values(
    test: Test,
    base: np.ndarray[Any, Any],
    new: np.ndarray[Any, Any],
    deltas: np.ndarray[Any, Any],
    *,
    resamples: int,
    seed: int,
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], list[str]]:
    """Each column's paired p-value, its Holm-corrected one, and why a column's p-value
    is not the test's own (``""`` where it is).

    A column whose deltas take fewer than two distinct values gives the t-test no
    variance and the bootstrap no resample that differs from the observed mean:
    neither has evidence. Its p-value is then the exact sign-flip one
    (:func:`sign_flip_p`: 1 for one query, 1 when nothing changed), which the
    randomization test gives too, so one query or a few equal drops never
    fail the gate.
    """
    if test == "t-test":
        _, p = _ttest(new, base)
    elif test == "randomization":
        p = _randomization(deltas, resamples, np.random.default_rng(seed))
    else:
        p = _bootstrap(deltas, resamples, np.random.default_rng(seed))
    n = deltas.shape[0]
    constant = constant_columns(deltas)
    unchanged = np.all(deltas == 0, axis=0)
    p = np.where(unchanged, 1.0, np.where(constant, sign_flip_p(n), p))
    why = [
        _why_constant(test, n, float(deltas[0, j])) if constant[j] and n else ""
        for j in range(deltas.shape[1])
    ]
    return p, holm(p), why


def _intervals(
    deltas: np.ndarray[Any, Any], alpha: float, m: int
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """The t interval of each column's mean delta, and the minimum detectable drop.

    MDE = (t[1 - alpha/(2m), n-1] + t[POWER, n-1]) * sd / sqrt(n): the mean
    drop a paired t-test at Holm's strictest level (alpha / m) detects with
    probability ``POWER``, for the observed per-query standard deviation.
    """
    from scipy.special import stdtrit  # the t quantile, without loading scipy.stats

    n = deltas.shape[0]
    if n < 2:
        nan = np.full(deltas.shape[1], np.nan)
        return nan, nan, nan
    mean = deltas.mean(axis=0)
    se = deltas.std(axis=0, ddof=1) / math.sqrt(n)
    half = float(stdtrit(n - 1, 1 - alpha / 2)) * se
    mde = (float(stdtrit(n - 1, 1 - alpha / (2 * m))) + float(stdtrit(n - 1, POWER))) * se
    return mean - half, mean + half, mde


def _bootstrap_interval(
    deltas: np.ndarray[Any, Any], alpha: float, resamples: int, seed: int
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """The percentile bootstrap interval of each column's mean delta."""
    n, m = deltas.shape
    rng = np.random.default_rng([seed, 1])  # a stream apart from the test's
    means = np.empty((resamples, m))
    per_block = max(1, 4_000_000 // max(n, 1))
    for start in range(0, resamples, per_block):
        b = min(per_block, resamples - start)
        picks = rng.integers(0, n, size=(b, n))
        for j in range(m):
            means[start : start + b, j] = deltas[:, j][picks].mean(axis=1)
    low = np.quantile(means, alpha / 2, axis=0)
    high = np.quantile(means, 1 - alpha / 2, axis=0)
    return low, high
