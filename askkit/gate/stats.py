"""The regression gate's statistics: paired p-values, Holm's correction, intervals, the MDE.

Each measure's per-query deltas (NEW minus BASE) are tested with a paired
test (:func:`_p_values`: randomization by default, the t-test or a paired
bootstrap, the implementations in :mod:`askkit.compare`) and the p-values
Holm-corrected across the measures; :func:`_intervals` gives each mean
delta's t interval and the smallest drop the query set detects at
:data:`POWER`; :func:`_bootstrap_interval` the bootstrap's percentile interval.

Examples
--------
>>> import numpy as np
>>> deltas = np.array([[-0.5], [-0.25], [-0.5], [0.0]])
>>> p, p_holm = _p_values("t-test", 1 + 0 * deltas, 1 + deltas, deltas, resamples=1, seed=0)
>>> round(float(p[0]), 4) == round(float(p_holm[0]), 4)
True
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np

from askkit.compare import _bootstrap, _randomization, _ttest, holm

__all__ = ["POWER", "TESTS", "Test"]

Test = Literal["randomization", "t-test", "bootstrap"]

#: The paired tests :func:`askkit.gate.gate` runs.
TESTS: tuple[Test, ...] = ("randomization", "t-test", "bootstrap")

#: The power at which the minimum detectable effect is computed.
POWER = 0.8


def _p_values(
    test: Test,
    base: np.ndarray[Any, Any],
    new: np.ndarray[Any, Any],
    deltas: np.ndarray[Any, Any],
    *,
    resamples: int,
    seed: int,
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """Each column's paired p-value (1 where nothing differs) and its Holm-corrected one."""
    if test == "t-test":
        _, p = _ttest(new, base)
    elif test == "randomization":
        p = _randomization(deltas, resamples, np.random.default_rng(seed))
    else:
        p = _bootstrap(deltas, resamples, np.random.default_rng(seed))
    p = np.where(np.all(deltas == 0, axis=0), 1.0, p)  # no difference at all
    return p, holm(p)


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
