"""askkit.metrics: options, levels, coverage (judgments and runs on disk: test_io.py)."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from askkit.errors import SchemaError
from askkit.frame import sources_frame
from askkit.metrics import (
    coverage,
    evaluate,
    parse_measure,
    ranked_run,
)
from tests.conftest import DATA, ROOT


def frame(rows: list[tuple[str, str, float]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["turn_id", "path", "score"])


QRELS = pd.DataFrame(
    {"query_id": ["q1", "q1", "q2"], "path": ["a.md", "b.md", "c.md"], "grade": [1, 3, 2]}
)


def brute_mrr_at_k(docs: list[str], relevant: set[str], k: int) -> float:
    for i, d in enumerate(docs[:k], start=1):
        if d in relevant:
            return 1.0 / i
    return 0.0


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from("abcdefgh"), st.integers(0, 5)), max_size=15),
    st.sets(st.sampled_from("abcdefgh"), min_size=1),
    st.integers(1, 6),
)
def test_mrr_at_k_matches_brute_force(
    rows: list[tuple[str, int]], relevant: set[str], k: int
) -> None:
    run = frame([("q", f"{d}.md", float(s)) for d, s in rows])
    qrels = pd.DataFrame(
        {"query_id": "q", "path": [f"{d}.md" for d in sorted(relevant)], "grade": 1}
    )
    ev = evaluate(run, qrels, [f"mrr@{k}", "mrr"], missing="zero")
    # reference: best score per doc, then score desc, doc id desc
    best: dict[str, float] = {}
    for d, s in rows:
        best[f"{d}.md"] = max(float(s), best.get(f"{d}.md", -1.0))
    docs = sorted(best, key=lambda d: (best[d], d), reverse=True)
    rel = {f"{d}.md" for d in relevant}
    assert ev.per_query.loc["q", f"mrr@{k}"] == pytest.approx(brute_mrr_at_k(docs, rel, k))
    assert ev.per_query.loc["q", "mrr"] == pytest.approx(brute_mrr_at_k(docs, rel, 10**6))


def test_missing_drop_and_zero() -> None:
    run = frame([("q1", "b.md", 1.0), ("q9", "a.md", 1.0)])
    drop = evaluate(run, QRELS, ["precision@1"])
    zero = evaluate(run, QRELS, ["precision@1"], missing="zero")
    assert list(drop.per_query.index) == ["q1"]
    assert list(zero.per_query.index) == ["q1", "q2"]
    assert zero.per_query.loc["q2", "precision@1"] == 0.0
    assert drop.mean["precision@1"] == 1.0
    assert zero.mean["precision@1"] == 0.5
    assert drop.run_only == ("q9",)
    assert drop.unanswered == ("q2",)


def test_judged_query_without_relevant_counts_as_zero() -> None:
    qrels = pd.DataFrame({"query_id": ["q1", "q2"], "path": ["a.md", "a.md"], "grade": [1, 0]})
    run = frame([("q1", "a.md", 1.0), ("q2", "a.md", 1.0)])
    ev = evaluate(run, qrels, ["ndcg@10", "recall@10"])
    assert ev.per_query.loc["q2"].tolist() == [0.0, 0.0]
    assert ev.mean["ndcg@10"] == 0.5


def test_ties_input_uses_rank_column() -> None:
    run = pd.DataFrame(
        {"turn_id": ["q1"] * 2, "path": ["a.md", "b.md"], "score": [1.0, 1.0], "rank": [1, 2]}
    )
    trec = evaluate(run, QRELS, ["precision@1"], ties="trec")  # b.md first (id descending)
    given_order = evaluate(run, QRELS, ["precision@1"], ties="input")  # a.md first
    assert trec.per_query.loc["q1", "precision@1"] == 1.0
    assert given_order.per_query.loc["q1", "precision@1"] == 1.0
    qrels = QRELS[QRELS["path"] == "a.md"]
    assert evaluate(run, qrels, ["mrr"], ties="trec").per_query.loc["q1", "mrr"] == 0.5
    assert evaluate(run, qrels, ["mrr"], ties="input").per_query.loc["q1", "mrr"] == 1.0


def test_duplicate_chunks_count_once() -> None:
    run = frame([("q1", "b.md", 3.0), ("q1", "b.md", 2.0), ("q1", "b.md", 1.0)])
    ev = evaluate(run, QRELS, ["recall@10", "ndcg@10", "precision@2"])
    assert ev.duplicates == 2
    assert ev.per_query.loc["q1", "recall@10"] == 0.5
    assert ev.per_query.loc["q1", "ndcg@10"] <= 1.0
    assert ev.per_query.loc["q1", "precision@2"] == 0.5


def test_unsorted_and_sorted_runs_agree() -> None:
    rng = np.random.default_rng(3)
    n = 400
    run = pd.DataFrame(
        {
            "turn_id": rng.integers(0, 20, n).astype(str),
            "path": [f"d{i}.md" for i in rng.integers(0, 40, n)],
            "score": rng.integers(0, 5, n).astype(float),
        }
    )
    qrels = pd.DataFrame(
        {
            "query_id": rng.integers(0, 20, 200).astype(str),
            "path": [f"d{i}.md" for i in rng.integers(0, 40, 200)],
            "grade": rng.integers(0, 4, 200),
        }
    )
    ordered = run.sort_values(["turn_id", "score", "path"], ascending=[True, False, False])
    a = evaluate(run, qrels, ["ndcg@5", "map", "mrr"]).per_query
    b = evaluate(ordered, qrels, ["ndcg@5", "map", "mrr"]).per_query
    pd.testing.assert_frame_equal(a, b)


@pytest.mark.parametrize("width", [1, 2, 8])
def test_fixed_top_k_runs_with_duplicates_agree_with_the_exact_path(
    width: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Equal-length queries take the row-by-row duplicate sort, and so does a
    shuffled copy once put in rank order; both must agree with the exact
    dictionary path, duplicates included."""
    rng = np.random.default_rng(width)
    queries = 30
    run = pd.DataFrame(
        {
            "turn_id": np.repeat([f"q{i:02d}" for i in range(queries)], width),
            "path": [f"d{i}.md" for i in rng.integers(0, 6, queries * width)],
            "score": np.tile(np.arange(width, 0, -1), queries).astype(float),
        }
    )
    qrels = pd.DataFrame(
        {
            "query_id": [f"q{i:02d}" for i in rng.integers(0, queries, 80)],
            "path": [f"d{i}.md" for i in rng.integers(0, 6, 80)],
            "grade": rng.integers(0, 4, 80),
        }
    )
    measures = ["ndcg@5", "map", "mrr", "recall@3"]
    grouped = evaluate(run, qrels, measures)
    shuffled = evaluate(run.sample(frac=1.0, random_state=1), qrels, measures)
    pd.testing.assert_frame_equal(grouped.per_query, shuffled.per_query)
    assert grouped.duplicates == shuffled.duplicates
    from askkit.metrics import prepare as _metrics_prep

    monkeypatch.setattr(_metrics_prep, "_fast", lambda *a, **k: None)
    exact = evaluate(run, qrels, measures)
    pd.testing.assert_frame_equal(grouped.per_query, exact.per_query)
    assert grouped.duplicates == exact.duplicates
    judged = run[run["turn_id"].isin(qrels["query_id"])]  # run-only queries are dropped
    assert grouped.duplicates == len(judged) - len(judged.drop_duplicates(["turn_id", "path"]))


def _messy_run(seed: int, *, ranks: bool) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A run of ragged queries with duplicate documents, tied and NaN scores, in any order."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 12, 40)
    turn = np.repeat([f"q{i:02d}" for i in range(len(sizes))], sizes)
    run = pd.DataFrame(
        {
            "turn_id": turn,
            "path": [f"d{i}.md" for i in rng.integers(0, 9, len(turn))],
            "score": rng.choice([0.1, 0.5, 0.5, 0.9, -0.0, 0.0, np.nan], len(turn)),
        }
    )
    if ranks:
        run["rank"] = rng.integers(1, 6, len(turn))
    qrels = pd.DataFrame(
        {
            "query_id": [f"q{i:02d}" for i in rng.integers(0, 45, 120)],  # some not in the run
            "path": [f"d{i}.md" for i in rng.integers(0, 9, 120)],
            "grade": rng.integers(0, 4, 120),
        }
    )
    return run.sample(frac=1.0, random_state=seed), qrels


def _spy(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[bool]:
    """Wrap ``module.name``; the list records, per call, whether it returned a value."""
    real = getattr(module, name)
    calls: list[bool] = []

    def spy(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        calls.append(out is not None)
        return out

    monkeypatch.setattr(module, name, spy)
    return calls


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("ties", ["trec", "input"])
def test_unordered_runs_ranked_by_the_matrix_sort_agree_with_the_exact_path(
    seed: int, ties: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An ungrouped run is put in rank order and takes the fast path; the exact
    dictionary path (the fast path switched off) is the reference."""
    from askkit.metrics import prepare as _metrics_prep

    run, qrels = _messy_run(seed, ranks=seed % 2 == 0)
    if ties == "trec":  # tied scores of distinct documents send trec ties to the exact path
        distinct = np.random.default_rng(seed).permutation(len(run)) / len(run)
        distinct[0] = np.nan  # one NaN: it ranks last, tied with nothing
        run = run.assign(score=distinct)
    measures = ["ndcg@5", "map", "mrr", "recall@3", "precision@2"]
    used = _spy(monkeypatch, _metrics_prep, "_rank_order")
    fast_ran = _spy(monkeypatch, _metrics_prep, "_fast")
    fast = evaluate(run, qrels, measures, ties=ties)  # type: ignore[arg-type]
    assert used == [True]
    assert fast_ran == [True]  # the ranked rows took the fast path to the end
    monkeypatch.setattr(_metrics_prep, "_fast", lambda *a, **k: None)
    exact = evaluate(run, qrels, measures, ties=ties)  # type: ignore[arg-type]
    pd.testing.assert_frame_equal(fast.per_query, exact.per_query)
    assert fast.duplicates == exact.duplicates > 0


def test_rank_order_groups_then_ranks() -> None:
    from askkit.metrics.prepare import _radix_argsort, _rank_order

    codes = np.array([70_000, 3, 70_000, 0, 3, 5], dtype=np.int64)  # two radix passes
    assert _radix_argsort(codes).tolist() == [3, 1, 4, 5, 0, 2]
    query = np.array([1, 0, 1, 0, 1])
    score = np.array([0.2, 0.5, np.nan, 0.9, 0.7])
    order = np.array([3, 2, 1, 1, 2])
    assert _rank_order(query, score, order, "trec").tolist() == [3, 1, 4, 0, 2]
    assert _rank_order(query, score, order, "input").tolist() == [3, 1, 2, 4, 0]
    lopsided = np.concatenate([np.zeros(5000, np.int64), np.arange(1, 2001)])
    n = len(lopsided)  # a matrix that would be mostly padding is not built
    assert _rank_order(lopsided, np.zeros(n), np.zeros(n, np.int64), "trec") is None


def test_nan_scores_rank_last() -> None:
    run = frame([("q1", "b.md", float("nan")), ("q1", "z.md", 0.5)])
    ev = evaluate(run, QRELS, ["mrr"])
    assert ev.per_query.loc["q1", "mrr"] == 0.5


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


def test_run_without_columns_is_rejected() -> None:
    with pytest.raises(SchemaError, match="turn_id"):
        evaluate(pd.DataFrame({"path": ["a.md"]}), QRELS, ["mrr"])


# --------------------------------------------------------------------------- real data


def test_section_level_matches_journal_date_heading() -> None:
    # journal/2026-04-21.md has only its date heading: kimun's heading (date prefix dropped)
    # is empty, but the judgment names the date; askkit keeps the innermost title segment.
    chunks = [
        {
            "path": "journal/2026-04-21.md",
            "title": "2026-04-21",
            "date": "2026-04-21",
            "content": "Atlas weekly.",
            "hash": "h",
            "similarity_score": 2.0,
            "ordinal": 1,
        },
        {
            "path": "journal/2026-04-08.md",
            "title": "2026-04-08\x1fAfternoon",
            "date": "2026-04-08",
            "content": "Baked.",
            "hash": "h",
            "similarity_score": 1.0,
            "ordinal": 2,
        },
    ]
    run = sources_frame([{"id": "q04", "question": "?", "chunks": chunks}])
    assert run["match_heading"].tolist() == ["", "Afternoon"]
    ranked = ranked_run(run, DATA / "qrels.tsv", level="section")
    assert ranked["doc"].tolist() == [
        "journal/2026-04-21.md#2026-04-21",
        "journal/2026-04-08.md#Afternoon",
    ]
    assert ranked["grade"].tolist() == [1, 1]
    assert ranked["judged"].all()


def test_note_and_section_levels_on_bundled_data(local_run: pd.DataFrame) -> None:
    note = evaluate(local_run, DATA / "qrels.tsv", ["ndcg@10", "recall@10"])
    section = evaluate(local_run, DATA / "qrels.tsv", ["ndcg@10", "recall@10"], level="section")
    assert 0.3 < note.mean["ndcg@10"] <= 1.0
    assert section.mean["recall@10"] <= note.mean["recall@10"] + 1e-12
    assert (note.per_query.to_numpy() <= 1.0).all()
    html = note._repr_html_()
    assert "ndcg@10" in html


def test_coverage_on_bundled_data(local_run: pd.DataFrame) -> None:
    cov = coverage(local_run, DATA / "qrels.tsv", k=10)
    assert 0.0 < cov.judged_at_k <= 1.0
    assert set(cov.no_relevant) <= set(cov.per_query.index)
    text = cov.explain()
    assert "Ties" in text
    assert "Missing queries" in text
    assert "<script>" not in cov._repr_html_()


def test_coverage_escapes_html() -> None:
    run = frame([("<script>alert(1)</script>", "a.md", 1.0)])
    cov = coverage(run, QRELS)
    html = cov._repr_html_()
    assert "<script>" not in html
    assert "&lt;script&gt;" in html
    assert cov.run_only == ("<script>alert(1)</script>",)


def test_import_askkit_does_not_load_matplotlib() -> None:
    code = "import sys, askkit, askkit.metrics, askkit.compare; print('matplotlib' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], check=False, cwd=ROOT, capture_output=True, text=True
    )
    assert out.stdout.strip() == "False", out.stderr
