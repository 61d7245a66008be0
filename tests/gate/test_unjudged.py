"""The gate with unjudged documents: whether a verdict holds whatever they are,
what the exit status rests on (--unjudged), and the holes it depends on.

The runs are built so that the answer is known: in ``holding`` NEW's top 10
is all judged and holds no relevant note, so no judging of BASE's unjudged
notes can save it; in ``reversing`` NEW ranks ten unjudged notes above the
relevant one, so NEW looks worse only while they count as not relevant.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from askkit.gate import gate
from askkit.gate.result import GateResult
from askkit.metrics import bounds, evaluate

N = 30  # queries: enough for the paired test to call a drop significant


def run(rows: list[tuple[str, str, float]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["turn_id", "path", "score"])


def qrels() -> pd.DataFrame:
    rows = []
    for i in range(N):
        q = f"q{i:02d}"
        rows.append((q, f"{q}/rel.md", 2))
        rows += [(q, f"{q}/judged{j}.md", 0) for j in range(12)]
    return pd.DataFrame(rows, columns=["query_id", "path", "grade"])


def base_run() -> pd.DataFrame:
    rows = []
    for i in range(N):
        q = f"q{i:02d}"
        rows.append((q, f"{q}/rel.md", 100.0))
        rows += [(q, f"{q}/unjudged{j}.md", 50.0 - j) for j in range(3)]  # BASE's own holes
        rows += [(q, f"{q}/judged{j}.md", 40.0 - j) for j in range(6)]
    return run(rows)


def holding_new() -> pd.DataFrame:
    """Top 10 all judged not relevant; the relevant note at 11."""
    rows = []
    for i in range(N):
        q = f"q{i:02d}"
        rows += [(q, f"{q}/judged{j}.md", 100.0 - j) for j in range(10)]
        rows.append((q, f"{q}/rel.md", 1.0))
    return run(rows)


def reversing_new() -> pd.DataFrame:
    """Ten unjudged notes in the top 10; the relevant note at 11."""
    rows = []
    for i in range(N):
        q = f"q{i:02d}"
        rows += [(q, f"{q}/new{j}.md", 100.0 - j) for j in range(10)]
        rows.append((q, f"{q}/rel.md", 1.0))
    return run(rows)


def verdict(new: pd.DataFrame, mode: str = "ignore") -> GateResult:
    return gate(base_run(), new, qrels(), ["ndcg@10"], test="t-test", unjudged=mode)


def test_issue42_a_drop_that_holds_whatever_the_unjudged_are() -> None:
    for mode in ("ignore", "bounds"):
        result = verdict(holding_new(), mode)
        m = result.measures[0]
        assert m.regressed
        assert m.holds is True
        assert m.regressed_bounds
        assert result.exit_status == 1
        assert m.best_delta < 0  # even at NEW's best
        assert "holds" in result.to_text()
    # NEW has no unjudged note in its top 10: only BASE's three per query are holes
    holes = verdict(holding_new()).holes
    assert {h.side for h in holes} == {"BASE"}
    assert len(holes) == 3 * N


def test_issue42_a_drop_that_reverses_once_the_unjudged_are_judged() -> None:
    result = verdict(reversing_new())
    m = result.measures[0]
    assert m.regressed  # today: unjudged counted as not relevant
    assert result.exit_status == 1
    assert m.holds is False
    assert not m.regressed_bounds
    assert m.best_delta > -1e-9  # NEW's ten unjudged notes relevant: no drop at all
    assert m.worst_delta == pytest.approx(m.delta)  # today is NEW's worst here
    new_holes = [h for h in result.holes if h.side == "NEW"]
    assert len(new_holes) == 10 * N
    assert sorted({h.rank for h in new_holes}) == list(range(1, 11))
    assert m.depends_on == len(result.holes)
    text = result.to_text()
    assert f"depends on {m.depends_on} unjudged documents in the top 10" in text
    assert "(--unjudged ignore)" in text
    # the filling that reverses it: NEW's holes judged relevant, BASE's not
    judged = pd.concat(
        [
            qrels(),
            pd.DataFrame(
                [(h.query_id, h.path, 2 if h.side == "NEW" else 0) for h in result.holes],
                columns=["query_id", "path", "grade"],
            ),
        ]
    )
    refilled = gate(base_run(), reversing_new(), judged, ["ndcg@10"], test="t-test")
    assert not refilled.measures[0].regressed
    assert refilled.exit_status == 0


def test_issue42_unjudged_bounds_passes_a_drop_that_may_not_be_one() -> None:
    result = verdict(reversing_new(), "bounds")
    assert result.measures[0].regressed  # still reported
    assert result.regressions == ()
    assert result.exit_status == 0
    assert result.verdict.startswith("PASS")
    assert "(--unjudged bounds)" in result.to_text()
    back = GateResult.from_json(result.to_json())
    assert back.unjudged == "bounds"
    assert back.holes == result.holes
    assert back.exit_status == 0


def test_issue42_unjudged_condensed_scores_the_condensed_lists() -> None:
    result = verdict(reversing_new(), "condensed")
    assert [m.measure for m in result.measures] == ["ndcg'@10"]
    m = result.measures[0]
    want = evaluate(reversing_new(), qrels(), ["ndcg'@10"]).mean["ndcg'@10"]
    assert m.new == pytest.approx(float(want))
    assert not m.regressed  # the relevant note moves up to 1 once the unjudged are out
    assert result.exit_status == 0
    assert "condensed lists" in result.to_text()


def test_issue42_extreme_deltas_are_the_bounds_of_each_side() -> None:
    result = verdict(reversing_new())
    b = bounds(base_run(), qrels(), ["ndcg@10"], grade=result.fill_grade)
    n = bounds(reversing_new(), qrels(), ["ndcg@10"], grade=result.fill_grade)
    m = result.measures[0]
    best = (n.upper - b.lower)["ndcg@10"].mean()
    worst = (n.lower - b.upper)["ndcg@10"].mean()
    assert m.best_delta == pytest.approx(best, abs=1e-12)
    assert m.worst_delta == pytest.approx(worst, abs=1e-12)
    assert result.fill_grade == 2


def test_issue42_bad_unjudged_mode_and_grade_are_usage_errors() -> None:
    from askkit.errors import UsageError

    with pytest.raises(UsageError, match="unjudged must be one of"):
        gate(base_run(), base_run(), qrels(), ["ndcg@10"], unjudged="guess")
    with pytest.raises(UsageError, match="fill_grade"):
        gate(base_run(), base_run(), qrels(), ["ndcg@10"], fill_grade=-1)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_holes_counted_are_the_holes_listed_measure_by_measure(seed: int) -> None:
    # the gate counts each measure's holes from the bounds' per-query counts and lists
    # them only when read: the count and the list must agree, for nested cutoffs too
    import numpy as np

    rng = np.random.default_rng(seed)
    docs = [f"d{j}.md" for j in range(25)]
    judged = pd.DataFrame(
        [
            (f"q{i}", d, int(rng.integers(-1, 3)))
            for i in range(12)
            for d in rng.choice(docs, 8, replace=False)
        ],
        columns=["query_id", "path", "grade"],
    )

    def side() -> pd.DataFrame:
        return run(
            [
                (f"q{i}", d, float(rng.integers(0, 5)))
                for i in range(12)
                for d in rng.choice(docs, 15, replace=False)
            ]
        )

    measures = ["ndcg@3", "recall@5", "precision@2", "map", "judged@3"]
    result = gate(side(), side(), judged, measures, resamples=200)
    counted = len(result.holes)
    listed = list(result.holes)
    assert counted == len(listed) > 0
    for m in result.measures:
        assert m.depends_on == sum(m.measure in h.measures.split(", ") for h in listed)
    assert next(m for m in result.measures if m.measure == "judged@3").depends_on == 0


@pytest.mark.parametrize("test", ["randomization", "bootstrap", "t-test"])
@pytest.mark.parametrize("queries", [6, 40])
def test_both_extremes_tested_at_once_give_each_its_own_verdicts(test: str, queries: int) -> None:
    # the gate tests the best and the worst judging in one call, Holm per judging:
    # every test draws the same resamples for each column, so the verdicts must be
    # those of a call per judging
    import numpy as np

    from askkit.gate.core import _verdicts

    rng = np.random.default_rng(queries)
    base = [rng.random((queries, 3)) for _ in range(2)]
    new = [b + rng.normal(0.05, 0.2, b.shape) for b in base]
    options: dict[str, Any] = {
        "test": test, "alpha": 0.05, "min_delta": 0.0, "seed": 7, "resamples": 500,
    }  # fmt: skip
    together = _verdicts(np.hstack(base), np.hstack(new), families=2, **options)
    for i in range(2):
        alone = _verdicts(base[i], new[i], **options)
        for got, want in zip(together, alone, strict=True):
            np.testing.assert_array_equal(got[3 * i : 3 * i + 3], want)
    if queries == 40:  # enough queries for a significant change to compare
        assert any(v.any() for v in together[1:])
