"""askkit.metrics.bounds: the bounds hold every filling of the unjudged documents,
and the fillings it names reach them exactly.

Small rankings are filled every way there is (each unjudged document not
relevant, or relevant at the bound's grade), each filling scored by
:func:`evaluate` and, for the fillings that reach the bounds, by pytrec_eval
(trec_eval's C code).
"""

from __future__ import annotations

import importlib
import itertools
import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest
import pytrec_eval
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from askkit.metrics import evaluate, ranked_run
from askkit.metrics.bounds import bounds, format_bounds
from askkit.metrics.measures import Measure

MEASURES = [
    "precision@2",
    "recall@3",
    "hit@1",
    "mrr",
    "map",
    "map@3",
    "ndcg",
    "ndcg@3",
    "r-precision",
    "bpref",
    "infap",
    "ndcg'@3",
    "map'",
    "judged@3",
]
PYTREC = {
    "precision@2": "P_2",
    "recall@3": "recall_3",
    "hit@1": "success_1",
    "mrr": "recip_rank",
    "map": "map",
    "map@3": "map_cut_3",
    "ndcg": "ndcg",
    "ndcg@3": "ndcg_cut_3",
    "r-precision": "Rprec",
    "bpref": "bpref",
    "infap": "infAP",
}
#: the module (askkit.metrics.bounds is also the name of its function)
bounds_module = importlib.import_module("askkit.metrics.bounds")
DOCS = ["a", "b", "c", "d", "e", "f", "g"]


@st.composite
def small_runs(draw: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One or two queries, up to 7 documents each, ties, most of them unjudged."""
    rows = []
    judgments = []
    for qid in draw(st.sampled_from([["q1"], ["q1", "q2"]])):
        docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=7, unique=True))
        rows.extend((qid, d, draw(st.sampled_from([1.0, 2.0, 2.0, 3.0, 4.0]))) for d in docs)
        judged = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=4, unique=True))
        judgments.extend((qid, d, draw(st.sampled_from([-1, 0, 0, 1, 2, 3]))) for d in judged)
    run = pd.DataFrame(rows, columns=["turn_id", "path", "score"])
    return run, pd.DataFrame(judgments, columns=["query_id", "path", "grade"])


def holes(run: pd.DataFrame, qrels: pd.DataFrame) -> list[tuple[str, str]]:
    """The unjudged (query, document) pairs of the ranking, as trec_eval sees them."""
    ranked = ranked_run(run, qrels)
    unj = ~ranked["judged"] | (ranked["grade"] < 0)
    return list(zip(ranked["query_id"][unj], ranked["doc"][unj], strict=True))


def filled(qrels: pd.DataFrame, fill: dict[tuple[str, str], int]) -> pd.DataFrame:
    extra = pd.DataFrame(
        [(q, d, g) for (q, d), g in fill.items()], columns=["query_id", "path", "grade"]
    )
    return pd.concat([qrels, extra], ignore_index=True)


def scored(run: pd.DataFrame, qrels: pd.DataFrame) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "No run query matches", UserWarning)
        return evaluate(run, qrels, MEASURES).per_query


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_runs(), st.sampled_from([None, 1, 2]))
def test_every_filling_lies_within_the_bounds_and_the_extremes_reach_them(
    data: tuple[pd.DataFrame, pd.DataFrame], grade: int | None
) -> None:
    run, qrels = data
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "No run query matches", UserWarning)
        b = bounds(run, qrels, MEASURES, grade=grade)
    today = scored(run, qrels)
    pd.testing.assert_frame_equal(b.value, today)
    top = b.grade
    gaps = holes(run, qrels)
    assert len(gaps) <= 14
    judged_cols = [m for m in MEASURES if m.startswith("judged")]  # measures the holes
    rest = [m for m in MEASURES if m not in judged_cols]
    seen_low = pd.DataFrame(np.inf, index=b.value.index, columns=rest)
    seen_high = -seen_low
    for choice in itertools.product([0, top], repeat=len(gaps)):
        values = scored(run, filled(qrels, dict(zip(gaps, choice, strict=True))))
        values = values.reindex(b.value.index)[rest]
        assert (values >= b.lower[rest] - 1e-12).all().all(), choice
        assert (values <= b.upper[rest] + 1e-12).all().all(), choice
        seen_low = np.minimum(seen_low, values)
        seen_high = np.maximum(seen_high, values)
    # the bounds are reached: they are the least and greatest values, not wider
    pd.testing.assert_frame_equal(seen_low[rest], b.lower[rest], atol=1e-12, rtol=0)
    pd.testing.assert_frame_equal(seen_high[rest], b.upper[rest], atol=1e-12, rtol=0)
    assert (b.lower[judged_cols] == b.value[judged_cols]).all().all()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_runs())
def test_fillings_at_other_grades_stay_within_the_bounds_of_binary_measures(
    data: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    # a relevant filling at any grade >= 1 is as relevant as one at the top grade
    # for every measure but nDCG: those stay inside the bounds too
    run, qrels = data
    binary = ["precision@2", "recall@3", "mrr", "map", "r-precision", "bpref", "infap"]
    b = bounds(run, qrels, binary, grade=3)
    gaps = holes(run, qrels)
    rng = np.random.default_rng(len(gaps))
    for _ in range(10):
        choice = rng.integers(0, 4, len(gaps))
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "No run query matches", UserWarning)
            values = evaluate(run, filled(qrels, dict(zip(gaps, choice, strict=True))), binary)
        v = values.per_query.reindex(b.value.index)
        assert (v >= b.lower - 1e-12).all().all()
        assert (v <= b.upper + 1e-12).all().all()


def trec_measure(name: str) -> str:
    """pytrec_eval's measure for a result key: ``ndcg_cut_3`` -> ``ndcg_cut.3``."""
    head, _, tail = name.rpartition("_")
    return f"{head}.{tail}" if tail.isdigit() else name


@pytest.mark.parametrize("side", ["lower", "upper"])
@pytest.mark.parametrize("seed", range(6))
def test_the_named_fillings_reach_the_bounds_in_pytrec_eval(side: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    docs = np.array([f"d{i}" for i in range(40)])
    run = pd.DataFrame(
        {
            "turn_id": rng.integers(0, 8, 200).astype(str),
            "path": docs[rng.integers(0, 40, 200)],
            "score": rng.integers(0, 10, 200) / 2.0,
        }
    )
    qrels = pd.DataFrame(
        {
            "query_id": rng.integers(0, 8, 60).astype(str),
            "path": docs[rng.integers(0, 40, 60)],
            "grade": rng.integers(-1, 4, 60),
        }
    )
    qrels = qrels[qrels.groupby("query_id")["grade"].transform("max") >= 0]  # see test_incomplete
    b = bounds(run, qrels, list(PYTREC))
    fill = b.lower_fill if side == "lower" else b.upper_fill
    want = b.lower if side == "lower" else b.upper
    for name, theirs in PYTREC.items():
        judgments: dict[str, dict[str, int]] = {}
        for qid, d, g in zip(qrels["query_id"], qrels["path"], qrels["grade"], strict=True):
            judgments.setdefault(qid, {})
            judgments[qid][d] = max(int(g), judgments[qid].get(d, -9))
        rows = fill[fill["measure"] == name]
        for qid, d, g in zip(rows["query_id"], rows["doc"], rows["grade"], strict=True):
            judgments[qid][d] = int(g)
        scores: dict[str, dict[str, float]] = {}
        for qid, d, s in zip(run["turn_id"], run["path"], run["score"], strict=True):
            scores.setdefault(qid, {})
            scores[qid][d] = max(float(s), scores[qid].get(d, -np.inf))
        ref = pytrec_eval.RelevanceEvaluator(judgments, {trec_measure(theirs)}).evaluate(scores)
        for qid in want.index:
            assert want.loc[qid, name] == pytest.approx(ref[qid][theirs], abs=1e-12), (qid, name)


def test_a_deep_relevant_filling_lowers_ap_below_todays_number() -> None:
    # a relevant at 1, an unjudged document at 3: judged relevant it raises R to 2
    run = pd.DataFrame({"turn_id": ["q"] * 3, "path": ["a", "x", "u"], "score": [3.0, 2, 1]})
    qrels = pd.DataFrame({"query_id": ["q", "q"], "path": ["a", "x"], "grade": [1, 0]})
    b = bounds(run, qrels, ["map", "precision@3", "ndcg"])
    assert b.value.loc["q", "map"] == 1.0
    assert b.lower.loc["q", "map"] == pytest.approx((1 + 2 / 3) / 2)
    assert b.upper.loc["q", "map"] == 1.0
    assert b.lower.loc["q", "precision@3"] == pytest.approx(1 / 3)  # today's, the least
    assert b.upper.loc["q", "precision@3"] == pytest.approx(2 / 3)
    assert b.holes[["query_id", "doc", "rank"]].values.tolist() == [["q", "u", 3]]
    assert format_bounds(*b.table().loc["map"]) == "1.000 [0.833, 1.000]"
    assert b.share()["map"] == pytest.approx(1 / 3)


@st.composite
def wide_runs(draw: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Up to four queries of up to 30 documents, ties, most of them unjudged: more
    holes than an exhaustive check can fill."""
    rows: list[tuple[str, str, float]] = []
    judgments: list[tuple[str, str, int]] = []
    pool = [f"d{i}" for i in range(40)]
    for qid in ["q1", "q2", "q3", "q4"][: draw(st.integers(1, 4))]:
        docs = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=30, unique=True))
        rows.extend((qid, d, float(draw(st.integers(0, 6)))) for d in docs)
        judged = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=15, unique=True))
        judgments.extend((qid, d, draw(st.sampled_from([-1, 0, 0, 1, 2, 3]))) for d in judged)
    return (
        pd.DataFrame(rows, columns=["turn_id", "path", "score"]),
        pd.DataFrame(judgments, columns=["query_id", "path", "grade"]),
    )


CLOSED = [
    "map",
    "map@5",
    "map'",
    "infap",
    "bpref",
    "ndcg@5",
    "recall@5",
    "precision@5",
    "hit@3",
    "mrr",
]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    wide_runs(),
    st.sampled_from([None, 1, 2, 3]),
    st.sampled_from([1, 2]),
    st.sampled_from([None, 8]),
)
def test_the_closed_forms_equal_scoring_every_filling(
    data: tuple[pd.DataFrame, pd.DataFrame], grade: int | None, level: int, depth: int | None
) -> None:
    # bounds reads AP, infAP, bpref, nDCG@k and recall@k from prefix sums and precision, hit and
    # MRR from two fillings; scoring every candidate filling as a query of its own
    # (the measures' one definition) must give the same bounds and fillings
    run, qrels = data
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "No run query matches", UserWarning)
        options: dict[str, Any] = {"grade": grade, "relevance_level": level}
        fast = bounds(run, qrels, CLOSED, max_docs_per_query=depth, **options)
        scored = bounds_module._scored

        def ap_by_scoring(d: Any, *, prep: Any, level: int, kind: str = "bpref") -> tuple[Any, Any]:
            # the rows given are the top D already: AP over them is AP@D
            plain = Measure(kind, kind, None)
            scen = bounds_module._scenarios(plain, d.u_in, d.u_out)
            values = scored(plain, d, scen, grade=fast.grade, prep=prep, level=level)
            return values[scen[2]], values[~scen[2]]

        with pytest.MonkeyPatch.context() as patch:
            for name in ("_closed", "_uniform"):
                patch.setattr(bounds_module, name, scored)
            patch.setattr(bounds_module, "_closed_ap", ap_by_scoring)
            patch.setattr(bounds_module, "_closed_bpref", ap_by_scoring)
            slow = bounds(run, qrels, CLOSED, max_docs_per_query=depth, **options)
    for side in ("lower", "upper"):
        pd.testing.assert_frame_equal(
            getattr(fast, side), getattr(slow, side), atol=1e-12, rtol=0, check_exact=False
        )
    for name in CLOSED:  # each named filling reaches its bound in the measure itself
        for side in ("lower", "upper"):
            fill = getattr(fast, f"{side}_fill")
            mine = fill[fill["measure"] == name].rename(columns={"doc": "path"})
            mine = mine[["query_id", "path", "grade"]]
            filled_pairs = set(zip(mine["query_id"], mine["path"], strict=True))
            kept = [
                pair not in filled_pairs
                for pair in zip(qrels["query_id"], qrels["path"], strict=True)
            ]
            judged = pd.concat([qrels[kept], mine], ignore_index=True)
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", "No run query matches", UserWarning)
                got = evaluate(
                    run,
                    judged,
                    [name.replace("'", "")],
                    relevance_level=level,
                    max_docs_per_query=depth,
                ).per_query.iloc[:, 0]
            want = getattr(fast, side)[name]
            assert np.allclose(got.reindex(want.index), want, atol=1e-12, rtol=0), (name, side)
