"""Reciprocal rank fusion: held to ranx's RRF, on random runs and on the bundled data."""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ranx import Run, fuse

from askkit.errors import SchemaError, UsageError
from askkit.frame import COLUMNS, sources_frame
from askkit.metrics import evaluate, fuse_rrf, ranked_run
from askkit.retrieve.local import LocalIndex
from tests.conftest import DATA


def run_frame(results: dict[str, list[tuple[str, float]]]) -> pd.DataFrame:
    """A minimal run: ``{query: [(path, score), ...]}`` in the order given."""
    rows = [(q, path, score) for q, hits in results.items() for path, score in hits]
    return pd.DataFrame(rows, columns=["turn_id", "path", "score"])


def by_query(fused: pd.DataFrame) -> dict[str, list[tuple[str, float]]]:
    out: dict[str, list[tuple[str, float]]] = {}
    for q, path, score in zip(fused["turn_id"], fused["path"], fused["score"], strict=True):
        out.setdefault(q, []).append((path, score))
    return out


def ranx_rrf(runs: list[dict[str, dict[str, float]]], k: float = 60) -> dict[str, dict[str, float]]:
    """ranx's RRF of the runs. Document ids travel as ids of one width (ranx compiles its
    numba functions anew for each string width), mapped back after; no score normalisation
    (RRF reads ranks only, and min-max would not change them)."""
    docs = sorted({d for run in runs for hits in run.values() for d in hits})
    alias = {d: f"d{i:05d}" for i, d in enumerate(docs)}
    back = {a: d for d, a in alias.items()}
    aliased = [
        Run({q: {alias[d]: s for d, s in hits.items()} for q, hits in run.items()}) for run in runs
    ]
    fused = fuse(runs=aliased, norm=None, method="rrf", params={"k": k})
    return {q: {back[d]: s for d, s in hits.items()} for q, hits in fused.to_dict().items()}


def assert_same_as_ranx(
    ours: dict[str, list[tuple[str, float]]], theirs: dict[str, dict[str, float]]
) -> None:
    """Same documents, scores within 1e-12, and the same order wherever ranx's is defined:
    ranx sorts with an unstable argsort, so among tied scores (within 1e-12) only the set
    of documents is compared, tie group by tie group."""
    assert set(ours) == set(theirs)
    for q, ranked in ours.items():
        assert {doc for doc, _ in ranked} == set(theirs[q])
        assert len(ranked) == len(theirs[q])
        for doc, score in ranked:
            assert score == pytest.approx(theirs[q][doc], abs=1e-12, rel=0)
        ours_scores = [s for _, s in ranked]
        assert ours_scores == sorted(ours_scores, reverse=True)
        theirs_sorted = sorted(theirs[q].items(), key=lambda item: -item[1])
        start = 0
        for end in range(1, len(theirs_sorted) + 1):
            if end == len(theirs_sorted) or (
                theirs_sorted[end - 1][1] - theirs_sorted[end][1] > 1e-12
            ):
                assert {d for d, _ in ranked[start:end]} == {
                    d for d, _ in theirs_sorted[start:end]
                }, (q, start, end)
                start = end


# -- random runs --------------------------------------------------------------------------------

#: Ids of one length: ranx compiles its numba functions anew for each string width.
DOCS = [f"d{i:02d}.md" for i in range(12)]


@st.composite
def run_sets(draw: st.DrawFn) -> list[dict[str, dict[str, float]]]:
    """2-4 runs over the same 1-4 queries; each query retrieves 1-8 documents, distinct scores."""
    queries = [f"q{i}" for i in range(draw(st.integers(1, 4)))]
    runs = []
    for _ in range(draw(st.integers(2, 4))):
        run = {}
        for q in queries:
            docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=8, unique=True))
            scores = draw(
                st.lists(
                    st.floats(-100, 100, allow_nan=False),
                    min_size=len(docs),
                    max_size=len(docs),
                    unique=True,
                )
            )
            run[q] = dict(zip(docs, scores, strict=True))
        runs.append(run)
    return runs


def as_frame(run: dict[str, dict[str, float]], *, shuffle: bool = False) -> pd.DataFrame:
    rows = {q: list(docs.items()) for q, docs in run.items()}
    frame = run_frame(rows)
    return frame.iloc[::-1].reset_index(drop=True) if shuffle else frame


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runs=run_sets(), k=st.sampled_from([1, 10, 60, 1000]))
def test_rrf_equals_ranx_on_random_runs(runs: list[dict[str, dict[str, float]]], k: int) -> None:
    fused = fuse_rrf([as_frame(r, shuffle=True) for r in runs], k, level="note")
    assert_same_as_ranx(by_query(fused), ranx_rrf(runs, k))


@settings(max_examples=40, deadline=None)
@given(runs=run_sets(), data=st.data())
def test_the_order_of_the_runs_does_not_change_the_fusion(
    runs: list[dict[str, dict[str, float]]], data: st.DataObject
) -> None:
    shuffled = data.draw(st.permutations(runs))
    a = fuse_rrf([as_frame(r) for r in runs], level="note")
    b = fuse_rrf([as_frame(r) for r in shuffled], level="note")
    key = ["turn_id", "rank", "path", "score"]
    pd.testing.assert_frame_equal(
        a[key].sort_values(["turn_id", "rank"]).reset_index(drop=True),
        b[key].sort_values(["turn_id", "rank"]).reset_index(drop=True),
    )


# -- the bundled data ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def bundled_runs() -> dict[str, pd.DataFrame]:
    """Three BM25 variants over the bundled vault and questions: each question's 30 best chunks."""
    queries = pd.read_csv(DATA / "queries.tsv", sep="\t", dtype=str)
    variants: dict[str, dict[str, Any]] = {
        "stemmed": {},
        "plain": {"stopwords": None, "stemmer": None},
        "text only": {"index_headings": False, "stemmer": None},
    }
    runs = {}
    for name, options in variants.items():
        index = LocalIndex(DATA / "vault", cache_dir=False, progress=False, **options)
        turns = [
            {
                "id": q,
                "question": text,
                "chunks": [c.to_dict() for c in index.search(text, 30, per_note=False)],
            }
            for q, text in zip(queries["query_id"], queries["question"], strict=True)
        ]
        runs[name] = sources_frame(turns)
    return runs


@pytest.mark.parametrize("level", ["section", "note"])
def test_rrf_equals_ranx_on_the_bundled_runs(
    bundled_runs: dict[str, pd.DataFrame], level: Any
) -> None:
    """ranx fuses each run as ranked_run ranks it (one row per document, best chunk kept)."""
    ranx_runs = []
    for frame in bundled_runs.values():
        ranked = ranked_run(frame, level=level)
        n = len(ranked)  # strictly decreasing scores: ranx's order is exactly ours
        scores = (n - np.arange(n)).astype(float)
        run: dict[str, dict[str, float]] = {}
        for q, doc, s in zip(ranked["query_id"], ranked["doc"], scores, strict=True):
            run.setdefault(q, {})[doc] = s
        ranx_runs.append(run)
    common = set.intersection(*(set(r) for r in ranx_runs))
    assert len(common) == 37
    fused = fuse_rrf(bundled_runs, level=level)
    ours = ranked_run(fused, level=level, ties="input")  # the fused documents, as evaluated
    assert (ours["score"].to_numpy() == fused["score"].to_numpy()).all()
    got: dict[str, list[tuple[str, float]]] = {}
    for q, doc, s in zip(ours["query_id"], ours["doc"], ours["score"], strict=True):
        got.setdefault(q, []).append((doc, s))
    assert_same_as_ranx(got, ranx_rrf(ranx_runs))
    assert len(fused) > max(len(ranked_run(r, level=level)) for r in bundled_runs.values()) // 2


def test_the_fused_run_is_a_sources_frame_that_evaluates(
    bundled_runs: dict[str, pd.DataFrame],
) -> None:
    fused = fuse_rrf(bundled_runs)
    assert list(fused.columns) == list(COLUMNS)
    assert dict(fused.dtypes) == dict(bundled_runs["stemmed"].dtypes)
    assert (
        fused["turn_id"].unique().tolist() == bundled_runs["stemmed"]["turn_id"].unique().tolist()
    )
    for _, turn in fused.groupby("turn_id", sort=False):
        assert turn["rank"].tolist() == list(range(1, len(turn) + 1))
        assert turn["ordinal"].tolist() == turn["rank"].tolist()
        assert turn["score"].is_monotonic_decreasing
        assert (
            turn["score_rank"].tolist()
            == turn["score"].rank(method="min", ascending=False).astype(int).tolist()
        )
        assert turn["score_gap"].to_numpy() == pytest.approx(
            turn["score"].max() - turn["score"].to_numpy()
        )
    # the ranking evaluate sees is the fused frame's own order, whatever the tie rule
    trec = evaluate(fused, DATA / "qrels.tsv", ["ndcg@10", "map"], level="section")
    given_order = evaluate(
        fused, DATA / "qrels.tsv", ["ndcg@10", "map"], level="section", ties="input"
    )
    pd.testing.assert_frame_equal(trec.per_query, given_order.per_query)
    assert 0 < trec.mean["ndcg@10"] <= 1


def test_each_row_is_the_run_that_ranked_the_document_best() -> None:
    a = run_frame({"q": [("x.md", 3.0), ("y.md", 2.0)]}).assign(text=["a-x", "a-y"])
    b = run_frame({"q": [("y.md", 9.0), ("x.md", 8.0)]}).assign(text=["b-y", "b-x"])
    fused = fuse_rrf({"a": a, "b": b}, level="note")
    # both documents are ranked 1 once and 2 once: tied, so document id descending
    assert fused["path"].tolist() == ["y.md", "x.md"]
    assert fused["score"].iloc[0] == fused["score"].iloc[1]  # bit-identical
    assert fused["text"].tolist() == ["b-y", "a-x"]  # each from the run ranking it first


# -- edge cases, worked by hand -----------------------------------------------------------------


def test_a_query_in_one_run_only_keeps_that_runs_ranks() -> None:
    a = run_frame({"q1": [("x.md", 2.0), ("y.md", 1.0)], "q2": [("z.md", 1.0)]})
    b = run_frame({"q1": [("y.md", 5.0)]})
    fused = by_query(fuse_rrf({"a": a, "b": b}, level="note"))
    assert fused["q2"] == [("z.md", 1 / 61)]
    assert fused["q1"] == [("y.md", 1 / 62 + 1 / 61), ("x.md", 1 / 61)]


def test_a_query_only_the_second_run_answers_comes_after_the_first_runs_queries() -> None:
    a = run_frame({"q9": [("x.md", 1.0)]})
    b = run_frame({"q1": [("x.md", 1.0)], "q9": [("x.md", 1.0)]})
    assert fuse_rrf({"a": a, "b": b}, level="note")["turn_id"].tolist() == ["q9", "q1"]


def test_an_empty_run_adds_nothing() -> None:
    a = run_frame({"q": [("x.md", 2.0), ("y.md", 1.0)]})
    empty = a.iloc[:0]
    alone = fuse_rrf({"a": a}, level="note")
    with_empty = fuse_rrf({"empty": empty, "a": a}, level="note")
    pd.testing.assert_frame_equal(alone, with_empty)
    assert by_query(alone)["q"] == [("x.md", 1 / 61), ("y.md", 1 / 62)]


def test_only_empty_runs_give_an_empty_frame_with_the_columns() -> None:
    empty = run_frame({}).astype({"turn_id": str, "path": str, "score": float})
    fused = fuse_rrf({"a": empty, "b": empty}, level="note")
    assert len(fused) == 0
    assert {"turn_id", "path", "score", "rank"} <= set(fused.columns)


def test_duplicates_within_a_run_count_once_at_the_best_rank() -> None:
    # x.md twice (ranks 1 and 3): once at rank 1, and y.md is then 2nd, not 3rd
    a = run_frame({"q": [("x.md", 3.0), ("z.md", 2.0), ("x.md", 1.5), ("y.md", 1.0)]})
    fused = by_query(fuse_rrf({"a": a}, level="note"))
    assert fused["q"] == [("x.md", 1 / 61), ("z.md", 1 / 62), ("y.md", 1 / 63)]


def test_the_level_decides_what_merges() -> None:
    chunks = pd.DataFrame(
        {
            "turn_id": ["q", "q", "q"],
            "path": ["a.md", "a.md", "a.md"],
            "title": ["A\x1fOne", "A\x1fOne", "A\x1fTwo"],
            "text": ["first piece", "second piece", "other"],
            "score": [3.0, 2.0, 1.0],
        }
    )
    assert len(fuse_rrf([chunks], level="chunk")) == 3
    assert fuse_rrf([chunks], level="section")["text"].tolist() == ["first piece", "other"]
    assert len(fuse_rrf([chunks], level="note")) == 1


def test_depth_keeps_each_runs_first_documents() -> None:
    a = run_frame({"q": [("x.md", 3.0), ("y.md", 2.0), ("z.md", 1.0)]})
    b = run_frame({"q": [("z.md", 3.0), ("w.md", 2.0)]})
    fused = by_query(fuse_rrf({"a": a, "b": b}, depth=1, level="note"))
    assert fused["q"] == [("z.md", 1 / 61), ("x.md", 1 / 61)]


def test_weights_scale_each_runs_share() -> None:
    a = run_frame({"q": [("x.md", 2.0), ("y.md", 1.0)]})
    b = run_frame({"q": [("y.md", 2.0), ("x.md", 1.0)]})
    fused = by_query(fuse_rrf({"a": a, "b": b}, 10, weights={"b": 3.0}, level="note"))
    assert fused["q"] == [("y.md", 1 / 12 + 3 / 11), ("x.md", 1 / 11 + 3 / 12)]


def test_ties_input_fuses_the_runs_own_order() -> None:
    # the run's own order disagrees with its scores: "input" follows the rank column
    a = pd.DataFrame(
        {"turn_id": ["q", "q"], "path": ["x.md", "y.md"], "score": [1.0, 2.0], "rank": [1, 2]}
    )
    assert fuse_rrf([a], level="note", ties="input")["path"].tolist() == ["x.md", "y.md"]
    assert fuse_rrf([a], level="note")["path"].tolist() == ["y.md", "x.md"]


def test_the_callers_frames_are_not_changed() -> None:
    a = run_frame({"q": [("x.md", 2.0), ("y.md", 1.0)]})
    before = a.copy()
    fuse_rrf({"a": a, "b": a}, level="note")
    pd.testing.assert_frame_equal(a, before)


@pytest.mark.parametrize("k", [0, -1, -0.5, math.nan, math.inf, "60", None, True])
def test_a_bad_k_is_refused_naming_it(k: Any) -> None:
    a = run_frame({"q": [("x.md", 1.0)]})
    with pytest.raises(
        ValueError, match=rf"k must be a finite number > 0, got {re.escape(repr(k))}"
    ):
        fuse_rrf([a], k)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"depth": 0}, "depth must be a whole number >= 1 or None, got 0"),
        ({"depth": 2.5}, "depth must be a whole number >= 1 or None, got 2.5"),
        ({"weights": {"c": 1.0}}, r"weights name runs that are not given: \['c'\]"),
        ({"weights": {"a": 0.0}}, "the weight of run 'a' must be a finite number > 0, got 0.0"),
        (
            {"weights": {"a": math.nan}},
            "the weight of run 'a' must be a finite number > 0, got nan",
        ),
        ({"level": "paragraph"}, "level must be 'chunk', 'section' or 'note', got 'paragraph'"),
        ({"ties": "random"}, "ties must be 'trec' or 'input', got 'random'"),
    ],
)
def test_bad_options_are_refused_naming_the_value(options: dict[str, Any], message: str) -> None:
    a = run_frame({"q": [("x.md", 1.0)]})
    with pytest.raises(ValueError, match=message):
        fuse_rrf({"a": a}, **options)


def test_no_run_and_a_frame_that_is_not_a_run_are_refused() -> None:
    with pytest.raises(UsageError, match="at least one run"):
        fuse_rrf({})
    with pytest.raises(SchemaError, match="run 'a' is not a run") as info:
        fuse_rrf({"a": pd.DataFrame({"turn_id": ["q"], "path": ["x.md"]})})
    assert info.value.value == ["score"]
    with pytest.raises(TypeError, match="run 'a' is a list"):
        fuse_rrf({"a": [1, 2]})  # type: ignore[dict-item]
