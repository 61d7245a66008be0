"""The gate's statistics against references: scipy, Holm by hand, resampling with the same seed."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from askkit.gate import POWER, gate
from askkit.metrics import evaluate
from tests.gate.conftest import QRELS, bundled


def per_query(frame: pd.DataFrame) -> np.ndarray:
    return evaluate(frame, QRELS, ["ndcg@10", "recall@10"]).per_query.to_numpy()


def holm_by_hand(p: list[float]) -> list[float]:
    """Holm's step-down: sort ascending, multiply the i-th (0-based) by m - i, keep monotone."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    running = 0.0
    for step, i in enumerate(order):
        running = max(running, (m - step) * p[i])
        out[i] = min(1.0, running)
    return out


def test_t_test_p_values_and_intervals_equal_scipys(
    regression: tuple[pd.DataFrame, list[str]],
) -> None:
    new, _ = regression
    result = gate(bundled(), new, QRELS, test="t-test")
    base_values, new_values = per_query(bundled()), per_query(new)
    d = new_values - base_values
    n = len(d)
    for j, m in enumerate(result.measures):
        ref = stats.ttest_rel(new_values[:, j], base_values[:, j])
        assert m.p == pytest.approx(float(ref.pvalue), rel=1e-12)
        ci = stats.t.interval(0.95, n - 1, loc=d[:, j].mean(), scale=stats.sem(d[:, j]))
        assert (m.ci_low, m.ci_high) == pytest.approx(ci, rel=1e-12)
        mde = (stats.t.ppf(1 - 0.05 / 4, n - 1) + stats.t.ppf(POWER, n - 1)) * stats.sem(d[:, j])
        assert m.mde == pytest.approx(mde, rel=1e-12)
        assert (m.wins, m.ties, m.losses) == (
            int((d[:, j] > 0).sum()),
            int((d[:, j] == 0).sum()),
            int((d[:, j] < 0).sum()),
        )
    expected = holm_by_hand([m.p for m in result.measures])
    assert [m.p_holm for m in result.measures] == pytest.approx(expected, rel=1e-12)


def test_holm_equals_a_hand_computation() -> None:
    from askkit.compare import holm

    p = [0.01, 0.04, 0.03, 0.2, 0.005]
    assert holm(np.array(p)).tolist() == pytest.approx(holm_by_hand(p))
    # by hand: sorted 0.005*5, 0.01*4, 0.03*3, 0.04*2 -> 0.09 (monotone), 0.2*1 -> 0.2
    assert holm(np.array(p)).tolist() == pytest.approx([0.04, 0.09, 0.09, 0.2, 0.025])


def randomization_reference(d: np.ndarray, resamples: int, seed: int) -> list[float]:
    """Random bytes, one per eight queries, bit j (least significant first) flipping query
    8g + j (set: sign kept), drawn as one (resamples x groups) matrix; counted resample by
    resample, query by query."""
    rng = np.random.default_rng(seed)
    groups = -(-len(d) // 8)
    flips = rng.integers(0, 256, size=(resamples, groups), dtype=np.uint8)
    bits = np.unpackbits(flips, axis=1, bitorder="little")[:, : len(d)]
    out = []
    for j in range(d.shape[1]):
        observed = abs(d[:, j].mean())
        hits = 0
        for r in range(resamples):
            total = sum(d[i, j] if bits[r, i] else -d[i, j] for i in range(len(d)))
            hits += abs(total / len(d)) >= observed - 1e-12
        out.append((1 + hits) / (1 + resamples))
    return out


def bootstrap_reference(d: np.ndarray, resamples: int, seed: int) -> list[float]:
    """Queries drawn with replacement as one matrix; deltas shifted to mean 0 (the null)."""
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(d), size=(resamples, len(d)))
    out = []
    for j in range(d.shape[1]):
        observed = abs(d[:, j].mean())
        centered = d[:, j] - d[:, j].mean()
        hits = sum(abs(centered[picks[r]].mean()) >= observed - 1e-12 for r in range(resamples))
        out.append((1 + hits) / (1 + resamples))
    return out


@pytest.mark.parametrize(
    ("test", "reference"),
    [("randomization", randomization_reference), ("bootstrap", bootstrap_reference)],
)
def test_resampling_p_values_equal_a_reference_with_the_same_seed(
    regression: tuple[pd.DataFrame, list[str]], test: str, reference: object
) -> None:
    new, chosen = regression
    # a weaker change (only a few queries) so the p-values are not all at their floor
    few = new[~new["turn_id"].isin(chosen[3:]) | ~new["path"].str.startswith("filler/")]
    d = per_query(few) - per_query(bundled())
    result = gate(bundled(), few, QRELS, test=test, resamples=2000, seed=7)  # type: ignore[arg-type]
    expected = reference(d, 2000, 7)  # type: ignore[operator]
    assert [m.p for m in result.measures] == pytest.approx(expected, rel=1e-12)
    assert 1 / 2001 < max(expected) < 1.0
    again = gate(bundled(), few, QRELS, test=test, resamples=2000, seed=7)  # type: ignore[arg-type]
    assert again == result
