"""askkit.compare: deltas, win/tie/loss, paired tests with Holm, most_changed, citations."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from askkit.compare import _randomization, citation_analysis, compare, holm
from askkit.errors import SchemaError
from askkit.frame import sources_frame
from tests.conftest import DATA


def make_runs(n: int = 30, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """A baseline that ranks the relevant doc 3rd and a better run that mostly ranks it 1st."""
    rng = np.random.default_rng(seed)
    queries = [f"q{i:02d}" for i in range(n)]
    rows_a, rows_b = [], []
    for q in queries:  # test fixture construction, not library code
        for j, doc in enumerate(["x.md", "y.md", "rel.md", "z.md"]):
            rows_a.append((q, doc, 4.0 - j))
        better = rng.random() < 0.8
        for j, doc in enumerate((["rel.md", "x.md"] if better else ["x.md", "y.md"]) + ["z.md"]):
            rows_b.append((q, doc, 4.0 - j))
    cols = ["turn_id", "path", "score"]
    qrels = pd.DataFrame({"query_id": queries, "path": "rel.md", "grade": 1})
    return pd.DataFrame(rows_a, columns=cols), pd.DataFrame(rows_b, columns=cols), qrels


def test_deltas_counts_and_tests() -> None:
    a, b, qrels = make_runs()
    cmp = compare({"base": a, "new": b}, qrels, ["mrr", "precision@1"], n_resamples=2000)
    d = cmp.deltas[("new", "mrr")]
    expected = cmp.per_query[("new", "mrr")] - cmp.per_query[("base", "mrr")]
    pd.testing.assert_series_equal(d, expected, check_names=False)
    row = cmp.summary.loc[("new", "mrr")]
    assert row["wins"] + row["ties"] + row["losses"] == 30
    assert row["wins"] == (d > 0).sum()
    t = stats.ttest_rel(cmp.per_query[("new", "mrr")], cmp.per_query[("base", "mrr")])
    assert row["p_t"] == pytest.approx(t.pvalue)
    assert row["p_random"] < 0.01
    assert row["p_t_holm"] >= row["p_t"]
    assert cmp.summary.loc[("new", "precision@1"), "delta"] > 0


def test_identical_runs_are_not_significant() -> None:
    a, _, qrels = make_runs()
    cmp = compare([a, a.copy()], qrels, ["mrr"], n_resamples=100)
    row = cmp.summary.loc[("run-2", "mrr")]
    assert row["p_t"] == 1.0
    assert row["p_random"] == 1.0
    assert row["ties"] == 30


def test_randomization_is_seeded_and_matches_exact_small_case() -> None:
    deltas = np.array([[1.0], [1.0], [1.0], [1.0]])
    # exact: of the 16 sign patterns, 2 reach |mean| = 1
    p = _randomization(deltas, 20000, np.random.default_rng(1))
    assert p[0] == pytest.approx(2 / 16, abs=0.01)
    again = _randomization(deltas, 20000, np.random.default_rng(1))
    assert p[0] == again[0]


def test_holm() -> None:
    got = holm(np.array([0.01, 0.04, 0.03, 0.5]))
    assert got.tolist() == pytest.approx([0.04, 0.09, 0.09, 0.5])


def test_most_changed_shows_both_rankings() -> None:
    a, b, qrels = make_runs()
    cmp = compare({"base": a, "new": b}, qrels, ["mrr"], n_resamples=50)
    top = cmp.most_changed(2, depth=3)
    assert top["query_id"].nunique() == 2
    # the columns name the two runs compared
    assert list(top.columns) == [
        "query_id",
        "delta",
        "rank",
        "base doc",
        "base grade",
        "new doc",
        "new grade",
    ]
    assert top.attrs == {"baseline": "base", "run": "new", "measure": "mrr"}
    first = top[top["query_id"] == top["query_id"].iloc[0]]
    assert first["rank"].tolist() == [1, 2, 3]
    assert first["base doc"].iloc[2] == "rel.md"
    assert first["base grade"].iloc[2] == 1
    # an unjudged document reads as unjudged, never as a grade
    assert first["base grade"].iloc[0] == "unjudged"
    assert -1 not in top["base grade"].tolist()
    assert -1 not in top["new grade"].tolist()
    assert abs(first["delta"].iloc[0]) == pytest.approx(2 / 3)


def test_most_changed_leaves_a_rank_without_a_document_empty() -> None:
    a, b, qrels = make_runs()
    cmp = compare({"base": a, "new": b}, qrels, ["mrr"], n_resamples=50)
    top = cmp.most_changed(1, depth=4)
    # the baseline ranks four documents, the run three: its fourth rank is empty
    fourth = top[top["rank"] == 4].iloc[0]
    assert fourth["base doc"] == "z.md"
    assert fourth["new doc"] == ""
    assert fourth["new grade"] == ""


def test_compare_needs_two_runs_and_known_baseline() -> None:
    a, b, qrels = make_runs(5)
    with pytest.raises(ValueError, match="two runs"):
        compare({"a": a}, qrels)
    with pytest.raises(KeyError):
        compare({"a": a, "b": b}, qrels, baseline="c")


@pytest.mark.parametrize("measures", [[], [""], ["ndcg@10", "nope"]])
def test_compare_refuses_an_empty_or_bad_measure_list_naming_the_valid_names(
    measures: list[str],
) -> None:
    a, b, qrels = make_runs(5)
    with pytest.raises(SchemaError, match="ndcg, ") as info:
        compare({"a": a, "b": b}, qrels, measures)
    assert info.value.field == "measures"


def test_html_is_escaped() -> None:
    a, b, qrels = make_runs(5)
    cmp = compare({"<b>base</b>": a, "new": b}, qrels, ["mrr"], n_resamples=10)
    html = cmp._repr_html_()
    assert "<b>base</b>" not in html
    assert "&lt;b&gt;base&lt;/b&gt;" in html


def test_citation_analysis_on_sample_turn() -> None:
    frame = sources_frame(DATA / "sample_turn.json")
    result = citation_analysis(frame, low_rank=1)
    cited_ranks = frame.loc[frame["cited"], "score_rank"]
    assert result.rank_by == "score"
    assert result.summary["cited"] == frame["cited"].sum()
    assert result.summary["mean_rank_cited"] == pytest.approx(cited_ranks.mean())
    assert len(result.low_ranked) == (cited_ranks > 1).sum()
    assert result.by_rank["sources"].sum() == len(frame)
    assert "Citations" in result._repr_html_()
    assert "ranked by score" in result._repr_html_()


def test_issue40_citations_are_ranked_by_score_not_by_list_position() -> None:
    """sample_turn.json lists its sources out of score order, as kimun may send them: by
    score the cited sources average rank 2.5 and the uncited one 5, whatever the order."""
    frame = sources_frame(DATA / "sample_turn.json")
    assert frame["rank"].tolist() != frame["score_rank"].tolist()  # shuffled, as received
    result = citation_analysis(frame, low_rank=3)
    assert result.summary["mean_rank_cited"] == 2.5
    assert result.summary["mean_rank_uncited"] == 5.0
    assert result.low_ranked["ordinal"].tolist() == [4]  # the one cited below rank 3, by score
    assert result.low_ranked["rank by score"].tolist() == [4]
    reordered = frame.iloc[::-1].reset_index(drop=True)  # the list order says nothing
    assert citation_analysis(reordered, low_rank=3).summary.equals(result.summary)


@pytest.mark.parametrize(
    ("scores", "rank_by", "expected"),
    [
        ([3.0, 2.0, 1.0], "score", [1, 2, 3]),
        ([1.0, 2.0, 3.0], "score", [3, 2, 1]),
        ([2.0, 2.0, 1.0], "score", [1, 1, 3]),  # ties share the best rank
        ([3.0, float("nan"), 1.0], "position", [1, 2, 3]),  # a source without a score
    ],
)
def test_citation_ranks_by_score_else_position(
    scores: list[float], rank_by: str, expected: list[int]
) -> None:
    frame = pd.DataFrame(
        {"turn_id": ["t"] * 3, "rank": [1, 2, 3], "cited": [True, True, True], "score": scores}
    )
    result = citation_analysis(frame, low_rank=0)
    assert result.rank_by == rank_by
    assert sorted(result.low_ranked[f"rank by {rank_by}"].tolist()) == sorted(expected)
    assert result.by_rank.index.tolist() == sorted(set(expected))


def test_the_comparison_renders_through_the_one_html_renderer_escaped() -> None:
    a, b, qrels = make_runs()
    cmp = compare({"<b>base</b>": a, "new": b}, qrels, ["mrr"], n_resamples=50)
    out = cmp._repr_html_()
    assert "&lt;b&gt;base&lt;/b&gt;" in out
    assert "<b>base</b>" not in out
    assert 'class="askkit-data"' in out  # askkit._html.data_table, not DataFrame.to_html
    p = float(cmp.summary["p_t"].iloc[-1])
    assert f'<td class="num">{p:.4g}</td>' in out  # p-values to 4 significant digits
