"""askkit.metrics.evaluate: evaluate's options, levels and edge cases, ranked_run.

The values against pytrec_eval are in test_measures.py; coverage and ids that
do not meet in test_coverage.py; reading and writing qrels and runs in
test_qrels.py and test_runs.py.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from askkit.errors import SchemaError
from askkit.frame import sources_frame
from askkit.metrics import coverage, evaluate, ranked_run
from tests.conftest import DATA
from tests.probe import HEAVY, loaded_after


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


def test_nan_scores_rank_last() -> None:
    run = frame([("q1", "b.md", float("nan")), ("q1", "z.md", 0.5)])
    ev = evaluate(run, QRELS, ["mrr"])
    assert ev.per_query.loc["q1", "mrr"] == 0.5


def test_run_without_columns_is_rejected() -> None:
    with pytest.raises(SchemaError, match="turn_id"):
        evaluate(pd.DataFrame({"path": ["a.md"]}), QRELS, ["mrr"])


def test_bad_options_are_rejected_before_any_work() -> None:
    run = frame([("q1", "a.md", 1.0)])
    with pytest.raises(SchemaError, match="named twice"):
        evaluate(run, QRELS, ["mrr", "mrr"])
    with pytest.raises(ValueError, match="missing must be"):
        evaluate(run, QRELS, ["mrr"], missing="skip")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="k must be >= 1"):
        coverage(run, QRELS, k=0)


VALID = "precision@k, recall@k, hit@k, mrr, mrr@k, map, map@k, ndcg, ndcg@k, r-precision, bpref"


@pytest.mark.parametrize(
    ("measures", "value"),
    [
        ([], []),  # askkit eval -m "", askkit report --measures ","
        ([""], ""),
        (["ndcg@10", " "], " "),
        (["@5"], "@5"),
        ([None], None),
        ([5], 5),
        ((), []),
    ],
)
def test_an_empty_or_missing_measure_name_is_a_schema_error_listing_the_valid_names(
    measures: list[object], value: object
) -> None:
    """An empty measures list reached evaluate's callers as a raw ValueError (``max()``
    of nothing) or IndexError (``measures[0]``): now a typed error naming the value
    and every valid name, in the form an unknown name already had."""
    with pytest.raises(SchemaError) as info:
        evaluate(frame([("q1", "a.md", 1.0)]), QRELS, measures)  # type: ignore[arg-type]
    assert info.value.field == "measures"
    assert info.value.value == value
    assert VALID in info.value.message


def test_an_unknown_measure_names_the_value_and_the_known_ones() -> None:
    with pytest.raises(SchemaError, match="unknown measure 'nope'; known: precision") as info:
        evaluate(frame([("q1", "a.md", 1.0)]), QRELS, ["mrr", "nope"])
    assert (info.value.field, info.value.value) == ("measures", "nope")


def test_one_measure_name_given_as_a_string_is_that_measure() -> None:
    """Not its characters (``unknown measure 'n'``)."""
    ev = evaluate(frame([("q1", "a.md", 1.0)]), QRELS, "ndcg@10")  # type: ignore[arg-type]
    assert list(ev.per_query.columns) == ["ndcg@10"]


def test_relevance_level_raises_the_bar() -> None:
    run = frame([("q1", "a.md", 2.0), ("q1", "b.md", 1.0)])  # a.md graded 1, b.md 3
    assert evaluate(run, QRELS, ["mrr"]).mean["mrr"] == 1.0
    assert evaluate(run, QRELS, ["mrr"], relevance_level=2).mean["mrr"] == 0.5


def test_evaluation_prints_its_means_and_notes() -> None:
    run = frame([("q1", "b.md", 2.0), ("q1", "b.md", 1.0), ("q9", "a.md", 1.0)])
    ev = evaluate(run, QRELS, ["precision@1"], missing="zero")
    assert str(ev) == "Evaluation(2 queries, level=note: precision@1=0.5000)"
    html = ev._repr_html_()
    assert "1 judged queries not in the run (scored 0)" in html
    assert "1 run queries without judgments (not scored)" in html
    assert "1 duplicate chunks dropped (best kept)" in html


def test_ranked_run_keeps_every_query_and_the_row_labels() -> None:
    run = frame([("q9", "z.md", 1.0), ("q1", "a.md", 1.0), ("q1", "b.md", 1.0)])
    run.index = pd.Index(["r0", "r1", "r2"])
    ranked = ranked_run(run, QRELS)
    assert list(ranked.index) == ["r2", "r1", "r0"]  # q1 (ties: id descending), then q9
    assert ranked["query_id"].tolist() == ["q1", "q1", "q9"]
    assert ranked["rank"].tolist() == [1, 2, 1]
    assert ranked["grade"].tolist() == [3, 1, 0]
    assert ranked["judged"].tolist() == [True, True, False]


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


def test_import_askkit_does_not_load_matplotlib() -> None:
    assert loaded_after("import askkit, askkit.metrics, askkit.compare", HEAVY) == set()


# --------------------------------------------------------------------------- no match

NO_MATCH = "No run query matches a judged query: nothing can be scored."


def test_evaluate_says_first_that_nothing_can_be_scored() -> None:
    run = frame([("Q1", "a.md", 1.0), ("Q2", "c.md", 1.0)])
    with pytest.warns(UserWarning, match="nothing can be scored") as caught:
        ev = evaluate(run, QRELS, ["ndcg@10", "mrr"])
    assert len(caught) == 1
    assert ev.headline.startswith(NO_MATCH)
    assert "case" in ev.headline
    assert str(ev) == f"Evaluation(level=note: {ev.headline})"
    page = ev._repr_html_()
    assert page.index("nothing can be scored") < page.index("<b>Evaluation</b>")
    assert "nan" not in page.lower()
    assert page.count("no judged queries") == 2


def test_evaluate_on_matching_ids_has_no_headline() -> None:
    run = frame([("q1", "a.md", 1.0), ("q2", "c.md", 1.0)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ev = evaluate(run, QRELS, ["mrr"])
    assert ev.headline == ""
    assert "nothing can be scored" not in ev._repr_html_()
    assert float(ev.mean["mrr"]) == 1.0
