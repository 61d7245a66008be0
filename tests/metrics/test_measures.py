"""askkit.metrics.measures: the values equal pytrec_eval's (trec_eval's C code) on random
runs, ties included, whichever path prepared the run; and each measure's definition.

The reference tests run twice (the metric_paths fixture): with askkit.metrics.fast
allowed, and with the exact path, the specification, doing all the work.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest
import pytrec_eval
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from askkit.errors import SchemaError
from askkit.metrics import evaluate
from askkit.metrics.measures import (
    compute,
    discounted,
    gain,
    ideal_dcg,
    ndcg,
    parse_measure,
    precision,
    ratio,
    recall,
    relevant,
)
from askkit.metrics.ranked import rank_run

#: Vault paths that VaultPath prints unchanged, with non-ASCII and folders, so the
#: docid-descending tie break is tested on code-point (= UTF-8 byte) order.
DOCS = ["a.md", "b.md", "b/a.md", "c d.md", "z.md", "é.md", "ab.md", "a/z.md", "10.md", "9.md"]
KS = (1, 2, 3, 5, 10)

#: askkit name -> pytrec_eval name.
MEASURES: dict[str, str] = {
    **{f"precision@{k}": f"P_{k}" for k in KS},
    **{f"recall@{k}": f"recall_{k}" for k in KS},
    **{f"hit@{k}": f"success_{k}" for k in KS},
    **{f"ndcg@{k}": f"ndcg_cut_{k}" for k in KS},
    **{f"map@{k}": f"map_cut_{k}" for k in KS},
    "mrr": "recip_rank",
    "map": "map",
    "ndcg": "ndcg",
    "r-precision": "Rprec",
}
TREC_MEASURES = {
    "P",
    "recall",
    "success",
    "ndcg_cut",
    "map_cut",
    "recip_rank",
    "map",
    "ndcg",
    "Rprec",
}


def trec_reference(run: pd.DataFrame, qrels: pd.DataFrame) -> dict[str, dict[str, float]]:
    """pytrec_eval on the same data; a document retrieved twice keeps its best score."""
    qrel_dict: dict[str, dict[str, int]] = {}
    for q, p, g in zip(qrels["query_id"], qrels["path"], qrels["grade"], strict=True):
        qrel_dict.setdefault(q, {})
        qrel_dict[q][p] = max(int(g), qrel_dict[q].get(p, -(10**9)))
    run_dict: dict[str, dict[str, float]] = {}
    for q, p, s in zip(run["turn_id"], run["path"], run["score"], strict=True):
        run_dict.setdefault(q, {})
        run_dict[q][p] = max(float(s), run_dict[q].get(p, -np.inf))
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrel_dict,
        {
            f"{m}.{','.join(map(str, KS))}"
            if m in {"P", "recall", "success", "ndcg_cut", "map_cut"}
            else m
            for m in TREC_MEASURES
        },
    )
    result: dict[str, dict[str, float]] = evaluator.evaluate(run_dict)
    return result


@st.composite
def run_and_qrels(draw: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
    n_queries = draw(st.integers(1, 6))
    queries = [f"q{i}" for i in range(n_queries)]
    scores = st.sampled_from([0.5, 1.0, 1.0, 2.0, 3.25, -1.0])  # few values: many ties
    rows = draw(
        st.lists(
            st.tuples(st.sampled_from([*queries, "q_extra"]), st.sampled_from(DOCS), scores),
            max_size=40,
        )
    )
    # Grades 0-3 here: with negative grades pytrec-eval-terrier 0.5.11 sometimes hangs in C
    # after many evaluators in one process (not reproducible in isolation); negative grades
    # are checked by the seeded tests below, which never hit it.
    judgments = draw(
        st.lists(
            st.tuples(st.sampled_from(queries), st.sampled_from(DOCS), st.integers(0, 3)),
            min_size=1,
            max_size=30,
        )
    )
    run = pd.DataFrame(rows, columns=["turn_id", "path", "score"]).astype(
        {"turn_id": str, "path": str, "score": float}
    )
    qrels = pd.DataFrame(judgments, columns=["query_id", "path", "grade"])
    return run, qrels


def assert_equal_to_reference(run: pd.DataFrame, qrels: pd.DataFrame) -> None:
    with warnings.catch_warnings():
        # a random run may match no judged query: askkit says so, pytrec_eval says nothing
        warnings.filterwarnings("ignore", "No run query matches a judged query", UserWarning)
        ev = evaluate(run, qrels, list(MEASURES))
    reference = trec_reference(run, qrels)
    assert sorted(ev.per_query.index) == sorted(reference)
    for q, values in reference.items():
        for ours, theirs in MEASURES.items():
            assert ev.per_query.loc[q, ours] == pytest.approx(values[theirs], abs=1e-9), (
                q,
                ours,
            )
    values = ev.per_query.to_numpy()
    assert ((values >= 0.0) & (values <= 1.0 + 1e-12)).all()


@pytest.mark.usefixtures("metric_paths")
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run_and_qrels())
def test_equals_pytrec_eval_on_random_runs(data: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    run, qrels = data
    assert_equal_to_reference(run, qrels)


@pytest.mark.usefixtures("metric_paths")
@pytest.mark.parametrize("seed", range(8))
def test_equals_pytrec_eval_on_larger_random_runs(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 3000
    docs = np.array([f"doc{i:03d}.md" for i in range(300)])
    run = pd.DataFrame(
        {
            "turn_id": rng.integers(0, 60, n).astype(str),
            "path": docs[rng.integers(0, 300, n)],
            "score": rng.integers(0, 20, n) / 4.0,  # many ties
        }
    )
    m = 1500
    qrels = pd.DataFrame(
        {
            "query_id": rng.integers(0, 70, m).astype(str),
            "path": docs[rng.integers(0, 300, m)],
            "grade": rng.integers(-1, 4, m),
        }
    )
    assert_equal_to_reference(run, qrels)


@pytest.mark.usefixtures("metric_paths")
def test_ties_follow_trec_eval_docid_descending() -> None:
    run = pd.DataFrame(
        {"turn_id": ["q"] * 4, "path": ["a.md", "b.md", "c.md", "d.md"], "score": [1.0] * 4}
    )
    qrels = pd.DataFrame({"query_id": ["q", "q"], "path": ["a.md", "c.md"], "grade": [1, 2]})
    ev = evaluate(run, qrels, ["precision@1", "precision@2", "mrr"])
    # trec_eval order: d, c, b, a
    assert ev.per_query.loc["q"].tolist() == [0.0, 0.5, 0.5]
    ref = trec_reference(run, qrels)["q"]
    assert ref["P_2"] == 0.5
    assert ref["recip_rank"] == 0.5


@pytest.mark.parametrize(
    ("name", "kind", "k"),
    [
        ("ndcg@10", "ndcg", 10),
        ("P@5", "precision", 5),
        ("hit_rate@3", "hit", 3),
        ("map", "map", None),
    ],
)
def test_parse_measure(name: str, kind: str, k: int | None) -> None:
    m = parse_measure(name)
    assert (m.kind, m.k) == (kind, k)


@pytest.mark.parametrize("bad", ["precision", "r-precision@5", "bleu@4", "ndcg@0", "ndcg@x"])
def test_bad_measure_names(bad: str) -> None:
    with pytest.raises(SchemaError):
        parse_measure(bad)


# --------------------------------------------------------------------------- computed by hand


def test_compute_by_hand() -> None:
    """One query, ranks 1-3 graded 0, 2, 1; three relevant judged (one not retrieved)."""
    scores = np.array([3.0, 2.0, 1.0])
    r = rank_run(np.zeros(3, np.int64), np.arange(3), scores, np.arange(3), ties="trec")
    measures = [parse_measure(m) for m in ("P@2", "recall@3", "mrr", "map", "r-precision")]
    out = compute(
        [*measures, parse_measure("ndcg@2")],
        1,
        r,
        np.array([0, 2, 1]),
        qrels_query=np.zeros(3, np.int64),
        qrels_grade=np.array([2, 1, 3]),
    )
    assert out["P@2"].tolist() == [0.5]
    assert out["recall@3"].tolist() == [pytest.approx(2 / 3)]
    assert out["mrr"].tolist() == [0.5]
    assert out["map"].tolist() == [pytest.approx((1 / 2 + 2 / 3) / 3)]
    assert out["r-precision"].tolist() == [pytest.approx(2 / 3)]
    ideal = 3 + 2 / np.log2(3)
    assert out["ndcg@2"].tolist() == [pytest.approx((2 / np.log2(3)) / ideal)]


# --------------------------------------------------------------------------- one definition each


def test_relevance_gain_and_discount() -> None:
    grades = np.array([3, 1, 0, -2])
    assert relevant(grades).tolist() == [True, True, False, False]
    assert relevant(grades, level=0).tolist() == [True, True, True, False]
    assert gain(grades).tolist() == [3.0, 1.0, 0.0, 0.0]
    assert discounted(gain(grades), np.arange(1, 5)).tolist() == [3.0, 1 / np.log2(3), 0.0, 0.0]


def test_ideal_dcg_ranks_each_querys_positive_gains_best_first() -> None:
    query = np.array([1, 0, 0, 0, 1])
    grade = np.array([2, 1, 3, -1, 0])
    got = ideal_dcg(query, grade, 3)
    assert got.tolist() == [pytest.approx(3 + 1 / np.log2(3)), 2.0, 0.0]
    assert ideal_dcg(query, grade, 3, k=1).tolist() == [3.0, 2.0, 0.0]


def test_ratios_score_zero_when_there_is_nothing_to_find() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no division by zero
        assert recall(np.array([1.0, 0.0]), np.array([2, 0])).tolist() == [0.5, 0.0]
        assert precision(np.array([[1, 0]]), np.array([[4, 0]])).tolist() == [[0.25, 0.0]]
        assert ndcg(np.array([1.0, 0.0]), np.array([2.0, 0.0])).tolist() == [0.5, 0.0]
        assert ratio(np.array([3.0]), 4.0).tolist() == [0.75]
