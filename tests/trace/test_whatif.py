"""What would have kept a lost section: every suggestion is re-run through the cut."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from askkit.ranking import CutSettings, cut_len, pool_of
from askkit.retrieve import LocalIndex
from askkit.trace import smallest_changes, trace_pool, trace_queries, what_if

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture(scope="module")
def bundled() -> tuple[pd.DataFrame, LocalIndex]:
    index = LocalIndex(DATA / "vault", cache_dir=False, progress=False)
    return index.pools(DATA / "queries.tsv", progress=False), index


def test_every_cut_section_of_the_bundled_set_gets_changes_that_keep_it(
    bundled: tuple[pd.DataFrame, LocalIndex],
) -> None:
    pools, _ = bundled
    table = what_if(pools, DATA / "qrels.tsv")
    assert table["section"].nunique() == 19  # the 19 sections the default cut drops
    top_k = table[table["change"] == "top_k"]
    assert len(top_k) == 19
    assert top_k["keeps"].all()
    assert (top_k["suggested"] == "fixed top_k=" + top_k["rank"].astype(str)).all()
    for row in table[table["settings"].notna()].itertuples():
        pool = pools[pools["query_id"] == row.query_id]
        chunks = [
            replace(c, title=t, content=f"{i}")
            for i, (c, t) in enumerate(
                zip(
                    pool_of(pool["score"].tolist(), pool["path"].astype(str).tolist()),
                    pool["title"].astype(str),
                    strict=True,
                )
            )
        ]
        assert row.rank <= cut_len(chunks, row.settings)  # re-run the cut
        path, heading = row.section.split("#", 1)
        again = trace_pool(chunks, [(path, heading)], row.settings)
        assert again[again["stopped"]]["stage"].tolist() == ["context"]
    cutoff = table[(table["query_id"] == "q25") & (table["change"] == "score_range_cutoff")]
    assert cutoff["suggested"].iloc[0] == "cutoff 0.4 -> 0.379"
    assert (table["mean_chunks"].dropna() > 0).all()


def test_losses_at_the_pool_get_the_pool_size_that_reaches_them(
    bundled: tuple[pd.DataFrame, LocalIndex],
) -> None:
    pools, index = bundled
    traced = trace_queries(index, DATA / "queries.tsv", DATA / "qrels.tsv")
    table = what_if(pools, DATA / "qrels.tsv", trace=traced)
    pool_rows = table[table["change"] == "pool_size"]
    assert set(pool_rows["section"]) == {
        "journal/2026-04-21.md#2026-04-21",
        "journal/2026-04-23.md#Notes",
        "journal/2026-03-04.md#Afternoon",
        "journal/2026-02-03.md#Afternoon",
    }
    assert (  # BM25 shares no term
        pool_rows["suggested"]
        == "not ranked at all: the index scores none of its chunks for the question"
    ).all()


def test_a_reranker_loss_is_kept_by_the_vector_order() -> None:
    pool = pool_of([0.9, 0.8, 0.7, 0.2], ["/a.md", "/b.md", "/c.md", "/d.md"])
    frame = trace_pool(pool, ["/b.md"], rerank_scores=[(0, 0.9), (1, 0.0), (2, 0.8), (3, 0.85)])
    table = what_if(
        pd.DataFrame(columns=["query_id", "path", "score", "title"]), _no_qrels(), trace=frame
    )
    assert table[["change", "suggested", "keeps"]].values.tolist() == [
        ["reranker", "the vector order (no reranker) keeps it", True]
    ]


def _no_qrels() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "query_id": pd.Series([], dtype=object),
            "path": pd.Series([], dtype=object),
            "grade": pd.Series([], dtype="int64"),
        }
    )


SCORES = st.integers(-4, 40).map(lambda i: i / 40)


@given(
    st.lists(SCORES, min_size=2, max_size=40),
    st.lists(st.sampled_from("abcdefgh"), min_size=40, max_size=40),
    st.data(),
    st.sampled_from(["fixed", "score-range", "largest-drop"]),
)
def test_a_suggested_setting_keeps_its_section_when_the_cut_is_rerun(
    scores: list[float], paths: list[str], data: st.DataObject, strategy: str
) -> None:
    pool = pool_of(sorted(scores, reverse=True), [f"/{p}.md" for p in paths[: len(scores)]])
    settings = CutSettings(strategy=strategy, top_k=1, drop_window_min=2)  # type: ignore[arg-type]
    kept = cut_len(pool, settings)
    if kept >= len(pool):
        return
    position = data.draw(st.integers(kept, len(pool) - 1))
    changes = smallest_changes(pool, position, settings)
    assert changes[0][3] is not None
    for _, _, _, suggested in changes:
        if suggested is not None:
            assert position < cut_len(pool, suggested)
    cutoff = changes[1][3]
    if cutoff is not None:  # the largest such cutoff, to 3 decimals
        higher = settings.replace(
            strategy="score-range", score_range_cutoff=cutoff.score_range_cutoff + 0.001
        )
        assert cutoff.score_range_cutoff + 0.001 > 1 or position >= cut_len(pool, higher)


def test_the_suggested_cutoff_is_the_largest_even_when_f64_rounds_the_exact_one_down() -> None:
    pool = pool_of([0.2, 0.125, 0.05])  # normalised 0.49999999999999994, kept at 0.5
    cutoff = smallest_changes(pool, 1, CutSettings(score_range_cutoff=0.9))[1][3]
    assert cutoff is not None
    assert cutoff.score_range_cutoff == 0.5
    assert cut_len(pool, cutoff) == 2


def test_issue40_9_the_what_if_table_says_why_a_change_keeps_nothing_and_keeps_arrows_whole(
    bundled: tuple[pd.DataFrame, LocalIndex],
) -> None:
    """Read in a notebook: no NaN, False or bare "no window" left unexplained, and a
    setting's old and new value never wrapped inside the arrow."""
    from askkit.trace import what_if_html

    pools, index = bundled
    traced = trace_queries(index, DATA / "queries.tsv", DATA / "qrels.tsv")
    table = what_if(pools, DATA / "qrels.tsv", trace=traced)
    nothing = table[~table["keeps"]]
    assert len(nothing)
    assert nothing["mean_chunks"].isna().all()
    windows = nothing[nothing["change"] == "drop_window"]["suggested"]
    assert len(windows)
    assert all(
        w.startswith("no largest-drop window keeps it: each one's largest drop falls above rank")
        for w in windows
    )
    assert "no window" not in set(table["suggested"])
    out = what_if_html(table)
    for unexplained in ("NaN", "&lt;NA&gt;", "False"):
        assert unexplained not in out
    assert "cutoff 0.4\u00a0→\u00a00.379" in out  # one unbreakable piece, not "0.4 -" / "> 0.379"
    assert " -&gt; " not in out
    assert "—: nothing to cost, as no change of that kind keeps the section" in out
    assert "<script" not in what_if_html(table.assign(section="<script>x</script>"))


def test_issue40_9_no_cutoff_says_the_score_is_below_the_ranges_low() -> None:
    pool = pool_of([1.0 - i / 40 for i in range(21)] + [0.1])
    rows = {change: words for change, _, words, _ in smallest_changes(pool, 21)}
    assert rows["score_range_cutoff"] == (
        "no cutoff keeps it: its score 0.1 is below the range's low 0.5, where cutoff 0 cuts"
    )
