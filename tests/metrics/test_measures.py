"""askkit.metrics.evaluate equals pytrec_eval (trec_eval's C code) on random runs, ties included."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
import pytrec_eval
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from askkit.metrics import evaluate

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


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run_and_qrels())
def test_equals_pytrec_eval_on_random_runs(data: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    run, qrels = data
    assert_equal_to_reference(run, qrels)


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
