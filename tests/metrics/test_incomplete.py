"""Measures for incomplete judgments: bpref, infAP, condensed lists and Judged@k.

bpref, infAP and every condensed measure (``ndcg'@10``: trec_eval's ``-J``,
pytrec_eval's ``judged_docs_only_flag``) equal pytrec_eval's (trec_eval's C
code) to 1e-12 on trec_eval's own test files and on random runs with ties,
unjudged documents, negative grades and grade -1 (pooled but unjudged).
Judged@k equals ir_measures' on the runs where the two conventions agree.
Each runs on both preparation paths (the metric_paths fixture).
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import ir_measures
import numpy as np
import pandas as pd
import pytest
import pytrec_eval
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from askkit.errors import SchemaError
from askkit.metrics import evaluate, read_qrels, read_run
from askkit.metrics.measures import parse_measure

TREC = Path(__file__).parent / "trec_eval"

#: askkit name -> pytrec_eval name; each is computed twice, plain and condensed.
MEASURES: dict[str, str] = {
    "bpref": "bpref",
    "infap": "infAP",
    "ndcg@10": "ndcg_cut_10",
    "ndcg": "ndcg",
    "precision@5": "P_5",
    "recall@10": "recall_10",
    "map": "map",
    "map@10": "map_cut_10",
    "mrr": "recip_rank",
    "hit@1": "success_1",
    "r-precision": "Rprec",
}
PYTREC = {"bpref", "infAP", "ndcg_cut.10", "ndcg", "P.5", "recall.10", "map", "map_cut.10"}
PYTREC |= {"recip_rank", "success.1", "Rprec"}


def condensed(name: str) -> str:
    """``ndcg@10`` -> ``ndcg'@10``."""
    kind, _, k = name.partition("@")
    return f"{kind}'@{k}" if k else f"{kind}'"


def reference(
    qrels: dict[str, dict[str, int]],
    run: dict[str, dict[str, float]],
    *,
    judged_only: bool,
    level: int = 1,
) -> dict[str, dict[str, float]]:
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels, PYTREC, relevance_level=level, judged_docs_only_flag=judged_only
    )
    return evaluator.evaluate(run)  # type: ignore[no-any-return]


def as_dicts(
    run: pd.DataFrame, qrels: pd.DataFrame, doc: str = "path"
) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """pytrec_eval's input: one grade per (query, document), the highest, and each
    document's best score (askkit keeps a document's best chunk)."""
    q: dict[str, dict[str, int]] = {}
    for qid, d, g in zip(qrels["query_id"], qrels[doc], qrels["grade"], strict=True):
        q.setdefault(qid, {})
        q[qid][d] = max(int(g), q[qid].get(d, -(10**9)))
    r: dict[str, dict[str, float]] = {}
    qcol = "turn_id" if "turn_id" in run else "query_id"
    for qid, d, s in zip(run[qcol], run[doc], run["score"], strict=True):
        r.setdefault(qid, {})
        r[qid][d] = max(float(s), r[qid].get(d, -np.inf))
    return q, r


def assert_equal(
    run: pd.DataFrame, qrels: pd.DataFrame, *, level: int = 1, doc: str = "path"
) -> pd.DataFrame:
    names = [*MEASURES, *(condensed(m) for m in MEASURES)]
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "No run query matches a judged query", UserWarning)
        ev = evaluate(run, qrels, names, relevance_level=level)
    qd, rd = as_dicts(run, qrels, doc)
    # trec_eval (the C code) sizes an array by a query's highest grade + 1: on a
    # query whose every grade is negative pytrec_eval hangs or crashes. askkit
    # scores such a query 0 on every measure here: nothing in it is relevant.
    crashing = sorted(q for q, grades in qd.items() if max(grades.values()) < 0)
    for q in crashing:
        del qd[q]
        if q in ev.per_query.index:
            assert (ev.per_query.loc[q] == 0.0).all()
    per_query = ev.per_query.drop(index=crashing, errors="ignore")
    for judged_only in (False, True):
        want = reference(qd, rd, judged_only=judged_only, level=level)
        assert sorted(per_query.index) == sorted(want)
        for ours, theirs in MEASURES.items():
            column = condensed(ours) if judged_only else ours
            got = per_query[column]
            expected = pd.Series({q: v[theirs] for q, v in want.items()}, dtype=float)
            for qid in expected.index:
                assert got[qid] == pytest.approx(expected[qid], abs=1e-12), (qid, column)
            if len(expected) and not crashing:
                assert float(ev.mean[column]) == pytest.approx(expected.mean(), abs=1e-12)
    return ev.per_query


# --------------------------------------------------------------------------- trec_eval's files


@pytest.mark.usefixtures("metric_paths")
@pytest.mark.parametrize(
    ("qrels_file", "level"),
    [("qrels.test", 1), ("qrels.rel_level", 1), ("qrels.rel_level", 2), ("qrels.rel_level", 3)],
)
def test_equal_to_pytrec_eval_on_trec_evals_own_test_files(qrels_file: str, level: int) -> None:
    qrels = read_qrels(TREC / qrels_file)
    run = read_run(TREC / "results.test")
    per_query = assert_equal(run, qrels, level=level, doc="doc")
    assert len(per_query) == 3  # the three queries of results.test, none skipped
    if qrels_file == "qrels.rel_level" and level == 1:  # -1: pooled, nobody judged
        assert (qrels["grade"] == -1).sum() == 304
        # infAP counts them as pooled; so it differs from AP on some query
        assert (per_query["infap"] - per_query["map"]).abs().max() > 1e-6


# --------------------------------------------------------------------------- random runs

DOCS = ["a.md", "b.md", "b/a.md", "c d.md", "z.md", "é.md", "ab.md", "a/z.md", "10.md", "9.md"]


@st.composite
def runs_with_holes(draw: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Few scores (many ties), documents retrieved twice, judgments with grades
    from -2 to 3 (-1: pooled but unjudged), most documents unjudged."""
    queries = [f"q{i}" for i in range(draw(st.integers(1, 5)))]
    scores = st.sampled_from([0.5, 1.0, 1.0, 2.0, 3.25, -1.0])
    rows = draw(
        st.lists(
            st.tuples(st.sampled_from([*queries, "q_extra"]), st.sampled_from(DOCS), scores),
            max_size=40,
        )
    )
    judgments = draw(
        st.lists(
            st.tuples(st.sampled_from(queries), st.sampled_from(DOCS), st.integers(-2, 3)),
            min_size=1,
            max_size=20,
        )
    )
    run = pd.DataFrame(rows, columns=["turn_id", "path", "score"]).astype(
        {"turn_id": str, "path": str, "score": float}
    )
    return run, pd.DataFrame(judgments, columns=["query_id", "path", "grade"])


@pytest.mark.usefixtures("metric_paths")
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runs_with_holes(), st.sampled_from([1, 1, 2, 3]))
def test_equal_to_pytrec_eval_on_random_runs(
    data: tuple[pd.DataFrame, pd.DataFrame], level: int
) -> None:
    run, qrels = data
    assert_equal(run, qrels, level=level)


@pytest.mark.usefixtures("metric_paths")
@pytest.mark.parametrize("seed", range(4))
def test_equal_to_pytrec_eval_on_larger_random_runs(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, m = 4000, 1200
    docs = np.array([f"doc{i:03d}.md" for i in range(300)])
    run = pd.DataFrame(
        {
            "turn_id": rng.integers(0, 50, n).astype(str),
            "path": docs[rng.integers(0, 300, n)],
            "score": rng.integers(0, 20, n) / 4.0,
        }
    )
    qrels = pd.DataFrame(
        {
            "query_id": rng.integers(0, 60, m).astype(str),
            "path": docs[rng.integers(0, 300, m)],
            "grade": rng.integers(-1, 4, m),
        }
    )
    assert_equal(run, qrels)


# --------------------------------------------------------------------------- by hand


@pytest.mark.usefixtures("metric_paths")
def test_bpref_and_infap_worked_by_hand() -> None:
    # ranking: a (rel), x (not pooled), b (nonrel), p (pooled, unjudged), c (rel)
    run = pd.DataFrame(
        {"turn_id": ["q"] * 5, "path": ["a", "x", "b", "p", "c"], "score": [5.0, 4, 3, 2, 1]}
    )
    qrels = pd.DataFrame(
        {"query_id": ["q"] * 5, "path": ["a", "b", "p", "c", "d"], "grade": [1, 0, -1, 2, 1]}
    )
    ev = evaluate(run, qrels, ["bpref", "infap", "map'", "map"])
    r = 3  # a, c, d
    # bpref: a has no nonrel above (1); c has one of min(N=1, R=3) = 1 above (0)
    assert ev.per_query.loc["q", "bpref"] == pytest.approx((1 + 0) / r, abs=1e-15)
    eps = 0.00001
    j = 4  # c is 5th; above it: 1 rel, 1 nonrel, 1 pooled, 1 outside the pool
    c_term = 1 / (j + 1) + (j / (j + 1)) * ((1 + 1 + 1) / j) * ((1 + eps) / (1 + 1 + 2 * eps))
    assert ev.per_query.loc["q", "infap"] == pytest.approx((1 + c_term) / r, abs=1e-15)
    # condensed: a, b, c -> AP = (1 + 2/3) / 3; plain: (1 + 2/5) / 3
    assert ev.per_query.loc["q", "map'"] == pytest.approx((1 + 2 / 3) / 3, abs=1e-15)
    assert ev.per_query.loc["q", "map"] == pytest.approx((1 + 2 / 5) / 3, abs=1e-15)


@pytest.mark.usefixtures("metric_paths")
def test_condensed_list_is_cut_after_max_docs_as_trec_eval_does() -> None:
    # trec_eval applies -M to the ranking first, then -J takes the unjudged out
    run = pd.DataFrame(
        {"turn_id": ["q"] * 4, "path": ["u1", "u2", "a", "b"], "score": [4.0, 3, 2, 1]}
    )
    qrels = pd.DataFrame({"query_id": ["q", "q"], "path": ["a", "b"], "grade": [1, 1]})
    full = evaluate(run, qrels, ["precision'@2", "precision@2"])
    assert full.per_query.loc["q"].tolist() == [1.0, 0.0]
    cut = evaluate(run, qrels, ["precision'@2"], max_docs_per_query=3)
    assert cut.per_query.loc["q", "precision'@2"] == 0.5


# --------------------------------------------------------------------------- Judged@k


def ir_measures_judged(
    run: pd.DataFrame, qrels: pd.DataFrame, ks: tuple[int, ...]
) -> dict[tuple[str, int], float]:
    qd, rd = as_dicts(run, qrels)
    measures = [ir_measures.Judged @ k for k in ks]
    return {
        (m.query_id, m.measure["cutoff"]): m.value for m in ir_measures.iter_calc(measures, qd, rd)
    }


@pytest.mark.usefixtures("metric_paths")
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_judged_at_k_equals_ir_measures(data: st.DataObject) -> None:
    # ir_measures breaks ties by document id ascending and counts a grade of -1 as
    # judged; trec_eval breaks them descending and counts -1 as pooled but unjudged.
    # On distinct scores and grades of 0 or more the two agree, and askkit equals both.
    queries = ["q0", "q1", "q2"]
    n = data.draw(st.integers(1, 25))
    docs = data.draw(st.lists(st.sampled_from(DOCS), min_size=n, max_size=n))
    who = data.draw(st.lists(st.sampled_from(queries), min_size=n, max_size=n))
    run = pd.DataFrame(
        {"turn_id": who, "path": docs, "score": np.arange(n, dtype=float)[::-1]}
    ).drop_duplicates(["turn_id", "path"])
    judgments = data.draw(
        st.lists(
            st.tuples(st.sampled_from(queries), st.sampled_from(DOCS), st.integers(0, 2)),
            min_size=1,
            max_size=15,
        )
    )
    qrels = pd.DataFrame(judgments, columns=["query_id", "path", "grade"])
    ks = (1, 3, 10)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "No run query matches a judged query", UserWarning)
        ev = evaluate(run, qrels, [f"judged@{k}" for k in ks], missing="zero")
    want = ir_measures_judged(run, qrels, ks)
    assert sorted({q for q, _ in want}) == sorted(ev.per_query.index)
    for (qid, k), value in want.items():
        assert ev.per_query.loc[qid, f"judged@{k}"] == pytest.approx(value, abs=1e-15)


@pytest.mark.usefixtures("metric_paths")
def test_judged_at_k_counts_a_pooled_unjudged_document_as_unjudged() -> None:
    run = pd.DataFrame({"turn_id": ["q"] * 3, "path": ["a", "p", "x"], "score": [3.0, 2, 1]})
    qrels = pd.DataFrame({"query_id": ["q", "q"], "path": ["a", "p"], "grade": [0, -1]})
    ev = evaluate(run, qrels, ["judged@2", "judged@10"], missing="zero")
    assert ev.per_query.loc["q"].tolist() == [0.5, 1 / 3]
    qrels2 = pd.concat([qrels, pd.DataFrame({"query_id": ["q2"], "path": ["a"], "grade": [1]})])
    ev2 = evaluate(run, qrels2, ["judged@2"], missing="zero")
    assert ev2.per_query.loc["q2", "judged@2"] == 0.0  # nothing retrieved


# --------------------------------------------------------------------------- names


@pytest.mark.parametrize(
    ("name", "label"),
    [
        ("bpref", "bpref"),
        ("infAP", "infap"),
        ("ndcg'@10", "ndcg'@10"),
        ("ndcg@10'", "ndcg'@10"),
        ("ndcg_cut_10", "ndcg@10"),
        ("P_5", "precision@5"),
        ("P'@5", "precision'@5"),
        ("map_cut_100", "map@100"),
        ("success_1", "hit@1"),
        ("recip_rank", "mrr"),
        ("Rprec'", "r-precision'"),
        ("Judged@10", "judged@10"),
        ("AP'", "map'"),
    ],
)
def test_measure_names_of_trec_eval_ir_measures_and_condensed_lists(name: str, label: str) -> None:
    assert parse_measure(name).label == label


@pytest.mark.parametrize(
    "bad", ["judged", "judged'@10", "bpref@10", "ndcg''@10", "'ndcg", "infap@5"]
)
def test_bad_names_of_the_new_measures(bad: str) -> None:
    with pytest.raises(SchemaError):
        parse_measure(bad)


@pytest.mark.usefixtures("metric_paths")
@pytest.mark.parametrize("level", ["note", "section"])
def test_a_turn_log_at_note_and_section_level_equals_pytrec_eval(level: str) -> None:
    from askkit.metrics import load_run, ranked_run
    from askkit.metrics.ids import qrels_doc_ids
    from tests.conftest import DATA

    run = load_run(DATA / "run.jsonl")
    qrels = read_qrels(DATA / "qrels.tsv")
    names = ["bpref", "infap", "ndcg'@10", "map'", "judged@10"]
    ev = evaluate(run, qrels, names, level=level)  # type: ignore[arg-type]
    ranked = ranked_run(run, qrels, level=level)  # type: ignore[arg-type]
    rd: dict[str, dict[str, float]] = {}
    for qid, doc, score in zip(ranked["query_id"], ranked["doc"], ranked["score"], strict=True):
        rd.setdefault(qid, {})[doc] = float(score)
    qd: dict[str, dict[str, int]] = {}
    docs = qrels_doc_ids(qrels, level)  # type: ignore[arg-type]
    for qid, doc, grade in zip(qrels["query_id"], docs, qrels["grade"], strict=True):
        qd.setdefault(qid, {})
        qd[qid][doc] = max(int(grade), qd[qid].get(doc, -(10**9)))
    plain = reference(qd, rd, judged_only=False)
    judged = reference(qd, rd, judged_only=True)
    assert len(ev.per_query) == len(plain) > 0
    for qid in plain:
        assert ev.per_query.loc[qid, "bpref"] == pytest.approx(plain[qid]["bpref"], abs=1e-12)
        assert ev.per_query.loc[qid, "infap"] == pytest.approx(plain[qid]["infAP"], abs=1e-12)
        got = ev.per_query.loc[qid, "ndcg'@10"]
        assert got == pytest.approx(judged[qid]["ndcg_cut_10"], abs=1e-12)
        assert ev.per_query.loc[qid, "map'"] == pytest.approx(judged[qid]["map"], abs=1e-12)
    assert (ev.per_query["judged@10"] < 1).any()  # the log retrieves unjudged sections
