"""The gate's statistics against references: scipy, Holm by hand, resampling with the same seed."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from askkit.compare import _randomization
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


# --------------------------------------------------------------------------- the edges


def _runs(deltas: list[float]) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """BASE scores 1 on every query by recall@1 of one relevant note among ten; NEW loses it
    in the queries whose delta is -1 (deltas are -1 or 0), or keeps it at rank 1."""
    ids = [f"q{i}" for i in range(len(deltas))]
    qrels = pd.DataFrame({"query_id": ids, "path": ["rel"] * len(ids), "grade": [1] * len(ids)})
    base = pd.DataFrame({"turn_id": ids, "path": ["rel"] * len(ids), "score": [1.0] * len(ids)})
    new = base.assign(path=["other" if d < 0 else "rel" for d in deltas])
    return base, new, qrels


def _graded(deltas: list[float]) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Runs whose precision@4 deltas are ``deltas`` (multiples of -0.25 between -1 and 0)."""
    ids = [f"q{i}" for i in range(len(deltas))]
    docs = [f"d{j}" for j in range(4)]
    qrels = pd.DataFrame({"query_id": np.repeat(ids, 4), "path": docs * len(ids), "grade": 1})
    base = qrels.rename(columns={"query_id": "turn_id"}).assign(
        score=[4.0, 3.0, 2.0, 1.0] * len(ids)
    )
    lost = [round(-d * 4) for d in deltas]
    paths = [d if j >= k else f"x{j}" for k in lost for j, d in enumerate(docs)]
    new = base.assign(path=paths)
    return base[["turn_id", "path", "score"]], new[["turn_id", "path", "score"]], qrels


@pytest.mark.parametrize("test", ["randomization", "t-test", "bootstrap"])
def test_hardening_39_2_one_query_is_never_a_significant_drop(test: str) -> None:
    base, new, qrels = _runs([-1.0])
    result = gate(base, new, qrels, ["recall@1"], test=test)  # type: ignore[arg-type]
    (m,) = result.measures
    assert (m.delta, m.p, m.p_holm, m.regressed) == (-1.0, 1.0, 1.0, False)
    assert result.exit_status == 0
    assert "one query" in m.note
    said = f"recall@1: {m.note}"
    assert said in result.notes
    assert said in result.to_text()
    assert json.dumps(said) in result.to_json()
    assert "one query" in result.to_junit()
    assert "one query" in result.to_markdown()


@pytest.mark.parametrize("test", ["randomization", "t-test", "bootstrap"])
@pytest.mark.parametrize("n", [2, 3, 5])
def test_hardening_39_2_equal_drops_get_the_exact_sign_flip_p_value(test: str, n: int) -> None:
    base, new, qrels = _runs([-1.0] * n)
    result = gate(base, new, qrels, ["recall@1"], test=test, resamples=2000)  # type: ignore[arg-type]
    (m,) = result.measures
    exact = 2 / 2**n  # only all-minus and all-plus reach |mean| = 1 among the 2^n flips
    assert m.p == pytest.approx(exact, rel=1e-12)
    assert m.regressed is False  # 2/2^5 = 0.0625 > 0.05
    assert result.exit_status == 0
    assert f"2/2^{n}" in m.note
    assert math.isnan(m.mde)
    if test != "randomization":
        assert "no evidence" in m.note


@pytest.mark.parametrize("test", ["randomization", "t-test", "bootstrap"])
def test_hardening_39_minor_a_t_test_on_two_identical_drops_does_not_fail(test: str) -> None:
    base, new, qrels = _graded([-0.5, -0.5])
    result = gate(base, new, qrels, ["precision@4"], test=test)  # type: ignore[arg-type]
    (m,) = result.measures
    assert m.delta == -0.5
    assert m.p == 0.5  # scipy: p = 0 (t infinite); the exact sign-flip test: 2/4
    assert result.passed


def test_hardening_39_2_many_equal_drops_still_fail_on_exact_evidence() -> None:
    """Ten queries that each lose their one relevant note: a sign-flip p of 2/2^10, which
    the randomization test gives and the t-test and bootstrap borrow (they have none)."""
    base, new, qrels = _runs([-1.0] * 10)
    for test in ("randomization", "t-test", "bootstrap"):
        result = gate(base, new, qrels, ["recall@1"], test=test)  # type: ignore[arg-type]
        assert result.measures[0].p == pytest.approx(2 / 1024)
        assert result.exit_status == 1


@pytest.mark.parametrize("test", ["randomization", "t-test", "bootstrap"])
def test_hardening_39_2_all_ties_give_p_1_and_no_note(test: str) -> None:
    base, _, qrels = _runs([0.0, 0.0, 0.0])
    result = gate(base, base, qrels, ["recall@1", "mrr"], test=test)  # type: ignore[arg-type]
    assert [(m.p, m.p_holm, m.note) for m in result.measures] == [(1.0, 1.0, "")] * 2
    assert result.notes == ()


def _exact_bootstrap(d: np.ndarray) -> float:
    """The shifted bootstrap's p-value over every one of the n^n equally likely resamples."""
    n = len(d)
    observed = abs(d.mean())
    centered = d - d.mean()
    hits = sum(
        abs(centered[list(pick)].mean()) >= observed - 1e-12
        for pick in itertools.product(range(n), repeat=n)
    )
    return hits / n**n


def _exact_flips(d: np.ndarray) -> float:
    observed = abs(d.mean())
    hits = sum(
        abs((d * np.array(signs)).mean()) >= observed - 1e-12
        for signs in itertools.product((1, -1), repeat=len(d))
    )
    return hits / 2 ** len(d)


@pytest.mark.parametrize(
    "deltas", [[-0.5, -0.25], [-0.75, 0.0], [-0.25, -0.5, -0.75], [-1.0, -0.5, 0.0, -0.25, -0.75]]
)
def test_hardening_39_2_each_test_at_small_n_equals_its_reference(deltas: list[float]) -> None:
    base, new, qrels = _graded(deltas)
    d = np.array(deltas)
    runs = {t: gate(base, new, qrels, ["precision@4"], test=t, resamples=20_000, seed=3)
            for t in ("randomization", "t-test", "bootstrap")}  # fmt: skip
    assert runs["randomization"].measures[0].p == pytest.approx(_exact_flips(d), rel=1e-12)
    ref = stats.ttest_rel(d, np.zeros_like(d))
    assert runs["t-test"].measures[0].p == pytest.approx(float(ref.pvalue), rel=1e-12)
    exact = _exact_bootstrap(d)
    p = runs["bootstrap"].measures[0].p
    assert (
        abs(p - (1 + exact * 20_000) / 20_001) < 4 * math.sqrt(exact * (1 - exact) / 20_000) + 1e-4
    )
    assert all(r.measures[0].note == "" for r in runs.values())


def test_hardening_39_2_randomization_is_exact_up_to_sixteen_queries() -> None:
    rng = np.random.default_rng(5)
    for n in (1, 4, 9, 13):
        d = rng.choice([-0.5, -0.25, 0.0, 0.25], size=(n, 2))
        got = _randomization(d, 2**n, np.random.default_rng(0))
        assert got.tolist() == pytest.approx([_exact_flips(d[:, j]) for j in range(2)], rel=1e-12)


def test_hardening_39_minor_resamples_are_bounded() -> None:
    from askkit.cli.diff import _MAX_RESAMPLES
    from askkit.errors import UsageError
    from askkit.gate.stats import MAX_RESAMPLES

    assert _MAX_RESAMPLES == MAX_RESAMPLES
    base, new, qrels = _runs([-1.0, 0.0])
    with pytest.raises(UsageError, match="resamples must be a whole number from 1 to 1,000,000"):
        gate(base, new, qrels, ["recall@1"], resamples=10**23)
