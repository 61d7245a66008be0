"""The trace of one question: hand-built pools that stop a section at each stage."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from askkit.ranking import CutSettings, answer_context, cut_len, pool_of
from askkit.trace import FUNNEL_STAGES, STAGES, Interest, trace_pool
from askkit.wire import ChunkResult


def chunk(path: str, heading: str, score: float, text: str = "") -> ChunkResult:
    return ChunkResult(
        path=path,
        title=f"Note\x1f{heading}",
        date=None,
        content=text or f"{path}#{heading}",
        hash="h",
        similarity_score=score,
    )


def stop(frame: pd.DataFrame, section: str) -> pd.Series:
    rows = frame[(frame["section"] == section) & frame["stopped"]]
    assert len(rows) == 1
    return rows.iloc[0]


POOL = [
    chunk("a.md", "Intro", 0.95),
    chunk("a.md", "Intro", 0.95),  # identical: folded by de-duplication
    chunk("a.md", "Usage", 0.90),
    chunk("b.md", "Start", 0.85),
    chunk("c.md", "Deep", 0.30),
    chunk("d.md", "Tail", 0.10),
]


def test_a_note_missing_from_the_vault_or_a_heading_gone_stops_at_sectioned() -> None:
    headings = {"a.md": {"Intro", "Usage"}}
    frame = trace_pool(POOL, [("a.md", "Gone"), ("x.md", "Any")], headings=headings)
    gone, missing = stop(frame, "a.md#Gone"), stop(frame, "x.md#Any")
    assert (gone["stage"], gone["passed"]) == ("sectioned", False)
    assert "no section headed 'Gone' now" in gone["why"]
    assert (missing["stage"], missing["why"]) == (
        "sectioned",
        "x.md is not in the vault (paths as kimun prints them); the closest notes: 'a.md'",
    )


def test_hardening_39_7_a_note_that_cannot_be_read_stops_at_sectioned_with_why() -> None:
    """A note of interest the vault cannot read stops at sectioned, its reason in the
    sentence (the note and why), whole note or one of its sections; the others go on."""
    reason = "/v/bad.md: not valid UTF-8 at byte 6 (b'\\xff'); open the vault with errors='replace'"
    frame = trace_pool(
        POOL,
        [("a.md", "Intro"), ("bad.md", "Any"), "bad.md"],
        headings={"a.md": {"Intro", "Usage"}},
        unreadable={"bad.md": reason},
    )
    for section in ("bad.md#Any", "bad.md"):
        row = stop(frame, section)
        assert (row["stage"], row["passed"]) == ("sectioned", False)
        assert row["why"] == f"bad.md cannot be read from the vault: {reason}"
    assert stop(frame, "a.md#Intro")["stage"] == "context"


def test_a_section_outside_the_pool_says_its_rank_over_the_whole_index() -> None:
    ranking = [*POOL, chunk("e.md", "Far", 0.05), chunk("f.md", "Farther", 0.01)]
    frame = trace_pool(POOL, [("f.md", "Farther")], ranking=ranking)
    row = stop(frame, "f.md#Farther")
    assert (row["stage"], row["rank"], row["score"], row["limit"]) == ("pool", 8, 0.01, 0.10)
    assert row["why"].startswith("not in the candidate pool: its best chunk ranks 8 of 8")
    without = stop(trace_pool(POOL, [("f.md", "Farther")]), "f.md#Farther")
    assert pd.isna(without["rank"])
    assert "of 6 chunks" in without["why"]


def test_folded_chunks_are_counted_and_the_section_goes_on() -> None:
    frame = trace_pool(POOL, [("a.md", "Intro")])
    dedup = frame[frame["stage"] == "dedup"].iloc[0]
    assert dedup["why"] == "1 identical chunk folded into the one at rank 1"
    assert stop(frame, "a.md#Intro")["stage"] == "context"


def test_a_cut_section_carries_why_nots_sentence_and_the_threshold() -> None:
    frame = trace_pool(POOL, [("c.md", "Deep")])
    row = stop(frame, "c.md#Deep")
    assert (row["stage"], row["passed"], row["rank"]) == ("cut", False, 4)
    # the pool after de-duplication: 0.95, 0.90, 0.85, 0.30, 0.10
    assert row["limit"] == pytest.approx(0.10 + 0.4 * 0.85)
    assert row["why"].startswith("Answer (score-range): cut: normalised 0.24 < cutoff 0.40")
    fixed = stop(trace_pool(POOL, ["c.md"], CutSettings(strategy="fixed", top_k=2)), "c.md")
    assert fixed["limit"] == 2
    assert "rank 4 > top_k 2" in fixed["why"]


def test_the_search_row_says_when_another_chunk_represents_the_note() -> None:
    frame = trace_pool(POOL, [("a.md", "Usage")])
    search = frame[frame["stage"] == "search"].iloc[0]
    assert search["why"] == "its note is search row 1, represented by another chunk ('Intro')"
    assert stop(frame, "a.md#Usage")["stage"] == "context"


def test_the_reranker_that_pushes_a_section_out_stops_it_at_rerank() -> None:
    # de-duplicated pool: a#Intro, a#Usage, b#Start, c#Deep, d#Tail
    scores = [(0, 0.9), (1, 0.1), (2, 0.8), (3, 0.85), (4, 0.05)]
    frame = trace_pool(POOL, [("a.md", "Usage"), ("c.md", "Deep")], rerank_scores=scores)
    usage = stop(frame, "a.md#Usage")
    assert (usage["stage"], usage["rank_before"], usage["rank"]) == ("rerank", 2, 4)
    assert usage["why"].endswith(
        "the vector order would keep it in the context, the reranked cut drops it"
    )
    deep = stop(frame, "c.md#Deep")  # moved up into the context by the reranker
    assert (deep["stage"], deep["passed"], deep["ordinal"]) == ("context", True, 2)


def test_a_failed_reranker_keeps_the_vector_order_and_says_so() -> None:
    frame = trace_pool(POOL, [("b.md", "Start")], reranker_failed=True)
    rerank = frame[frame["stage"] == "rerank"].iloc[0]
    assert rerank["passed"]
    assert "kimun keeps the vector order" in rerank["why"]


def test_the_answer_context_and_citations_finish_the_trace() -> None:
    answer = "Start with [3], then see [2] and [9]."
    frame = trace_pool(POOL, [("b.md", "Start"), ("a.md", "Usage")], answer=answer)
    cited = stop(frame, "b.md#Start")
    assert (cited["stage"], cited["passed"], cited["ordinal"]) == ("cited", True, 3)
    usage = stop(frame, "a.md#Usage")
    assert (usage["stage"], usage["passed"], usage["ordinal"]) == ("cited", True, 2)
    assert "dangling citation [9] matches no source of the 3-chunk context" in usage["why"]
    not_cited = stop(trace_pool(POOL, [("b.md", "Start")], answer="Only [1]."), "b.md#Start")
    assert (not_cited["stage"], not_cited["passed"]) == ("cited", False)
    assert not_cited["why"] == "in the context as [3] but the answer cites [1]"


def test_a_given_context_that_lacks_the_section_stops_it_at_context() -> None:
    context = answer_context(pool_of([0.9]), None)
    row = stop(trace_pool(POOL, [("b.md", "Start")], context=context), "b.md#Start")
    assert (row["stage"], row["passed"]) == ("context", False)


def test_a_whole_note_is_followed_by_any_of_its_chunks() -> None:
    frame = trace_pool(POOL, ["a.md", Interest("d.md")])
    assert stop(frame, "a.md")["ordinal"] == 1
    assert stop(frame, "d.md")["stage"] == "cut"


def test_the_trace_frame_is_typed_and_its_stages_ordered() -> None:
    frame = trace_pool(POOL, [("a.md", "Intro")], answer="[1]")
    assert frame["stage"].cat.ordered
    assert list(frame["stage"].cat.categories) == list(STAGES)
    assert frame["stage"].is_monotonic_increasing
    assert str(frame["rank"].dtype) == "Int64"


# -- properties ------------------------------------------------------------------------------

SCORES = st.integers(0, 32).map(lambda i: i / 32)


@st.composite
def traced(draw: st.DrawFn) -> tuple[list[ChunkResult], list[Interest], CutSettings]:
    n = draw(st.integers(0, 25))
    scores = sorted(draw(st.lists(SCORES, min_size=n, max_size=n)), reverse=True)
    paths = draw(st.lists(st.sampled_from("abcdef"), min_size=n, max_size=n))
    heads = draw(st.lists(st.sampled_from("XY"), min_size=n, max_size=n))
    pool = [
        chunk(f"{p}.md", h, s, text=f"{p}{h}{i % 3}")
        for i, (p, h, s) in enumerate(zip(paths, heads, scores, strict=True))
    ]
    wanted = draw(
        st.lists(
            st.builds(
                Interest, st.sampled_from(["a.md", "b.md", "g.md"]), st.sampled_from(["X", None])
            ),
            min_size=1,
            max_size=5,
        )
    )
    strategy = draw(st.sampled_from(["fixed", "score-range", "largest-drop"]))
    settings = CutSettings(
        strategy=strategy,
        top_k=draw(st.integers(1, 10)),
        score_range_cutoff=draw(st.floats(0, 1)),
        drop_window_min=draw(st.integers(1, 4)),
    )
    return pool, wanted, settings


@given(traced(), st.booleans(), st.none() | st.just("See [1] and [3]."))
def test_each_section_stops_once_and_passes_stages_in_order(
    case: tuple[list[ChunkResult], list[Interest], CutSettings], rerank: bool, answer: str | None
) -> None:
    pool, wanted, settings = case
    scores = [(i, 1.0 / (i + 2)) for i in reversed(range(len(pool)))] if rerank else None
    frame = trace_pool(pool, wanted, settings, rerank_scores=scores, answer=answer)
    for _, rows in frame.groupby("section", sort=False):
        assert rows["stopped"].sum() == 1
        funnel = rows[rows["stage"].isin(FUNNEL_STAGES)]
        passed = funnel["passed"].tolist()
        assert passed == sorted(passed, reverse=True)  # once failed, nothing after
        assert funnel["stage"].tolist() == list(FUNNEL_STAGES[: len(funnel)])
        last = rows[rows["stopped"]].iloc[0]
        if last["stage"] in ("context", "cited") and last["passed"]:
            kept = cut_len(_ranked(pool, scores), settings)
            assert 1 <= last["rank"] <= kept


def _ranked(pool: list[ChunkResult], scores: list[tuple[int, float]] | None) -> list[ChunkResult]:
    from askkit.ranking import deduplicate_chunks, rerank

    deduped = deduplicate_chunks(pool)
    return list(rerank(deduped, scores).pool) if scores is not None else deduped


def test_a_chunk_of_the_same_note_but_another_section_does_not_count() -> None:
    pool = [replace(POOL[0], title="Note\x1fOther")]
    assert stop(trace_pool(pool, [("a.md", "Intro")]), "a.md#Intro")["stage"] == "pool"


def test_issue40_6_a_section_that_loses_to_frontmatter_chunks_says_so() -> None:
    """kimun's ranking is kept as it is (frontmatter chunks rank like any section), and the
    trace points them out where they stand above a section that lost."""
    frontmatter = [chunk(f"{p}.md", "x", s) for p, s in (("f1", 0.9), ("f2", 0.85), ("f3", 0.8))]
    frontmatter = [replace(c, title="FrontMatter") for c in frontmatter]
    pool = [chunk("a.md", "Intro", 0.95), *frontmatter, chunk("b.md", "Start", 0.7)]
    pool.append(replace(chunk("c.md", "x", 0.6), title="FrontMatter"))
    pool.append(chunk("c.md", "Deep", 0.5))
    frame = trace_pool(pool, [("b.md", "Start"), "c.md"], CutSettings(strategy="fixed", top_k=4))
    lost = stop(frame, "b.md#Start")
    assert (lost["stage"], lost["passed"]) == ("cut", False)
    assert lost["why"].startswith("Answer (fixed): cut: rank 5 > top_k 4")
    assert (
        "; 3 of the 4 chunks ranked above it are notes' frontmatter (kimun indexes a note's "
        "properties block as a section titled 'FrontMatter', and its aliases, tags and "
        "cssclasses match a question as text does)." in lost["why"]
    )
    # a note its frontmatter represents in search says so
    wide = trace_pool(pool, [("c.md", "Deep")], CutSettings(strategy="fixed", top_k=7))
    search = wide[(wide["stage"] == "search")]["why"].iloc[0]
    assert search.startswith("its note is search row 6, represented by its frontmatter")
    # a pool without frontmatter says nothing of it
    plain = stop(
        trace_pool(POOL, [("c.md", "Deep")], CutSettings(strategy="fixed", top_k=2)), "c.md#Deep"
    )
    assert "frontmatter" not in plain["why"]


# -- issue 42, item 4: the unjudged sections the cut kept above the relevant ones ------------

#: Best first, each chunk its own score (nothing folded): kept by ``fixed top_k=7``.
JUDGING = [
    chunk("a.md", "Intro", 0.95),  # relevant (2)
    chunk("u.md", "One", 0.90),  # no qrels line: unjudged
    chunk("n.md", "Two", 0.85),  # graded -1: pooled, not judged
    chunk("u.md", "One", 0.80, text="u.md#One, its second chunk"),  # the same section again
    chunk("j.md", "Any", 0.75),  # its whole note judged 0
    chunk("b.md", "Start", 0.70),  # relevant (1): the lowest relevant section the cut keeps
    chunk("v.md", "Below", 0.65),  # unjudged, kept, but below every kept relevant section
    chunk("c.md", "Deep", 0.30),  # relevant (3), lost at the cut
]
TOP_7 = CutSettings(strategy="fixed", top_k=7)
GRADES = {
    Interest("a.md", "Intro"): 2,
    Interest("n.md", "Two"): -1,
    Interest("j.md"): 0,
    Interest("b.md", "Start"): 1,
    Interest("c.md", "Deep"): 3,
}


@pytest.mark.parametrize(
    ("judged", "above", "counted"),
    [
        ({}, 2, ("u.md#One", "n.md#Two")),  # (a) absent from the qrels, (b) graded -1
        ({Interest("u.md", "One"): 0}, 1, ("n.md#Two",)),
        # a judgment of 0 or more at the note judges its sections whatever their own -1
        ({Interest("u.md", "One"): 1, Interest("n.md"): 0}, 0, ()),
    ],
    ids=["several", "one", "none"],
)
def test_issue42_unjudged_above_counts_the_unjudged_sections_above_the_lowest_relevant_kept(
    judged: dict[Interest, int], above: int, counted: tuple[str, ...]
) -> None:
    from askkit.trace import unjudged_above

    found = unjudged_above(JUDGING, cut_len(JUDGING, TOP_7), {**GRADES, **judged})
    assert (found.above, found.lowest, found.sections) == (above, 6, counted)
    assert found.kept == (*counted, "v.md#Below")  # kept too, but below b.md#Start


def test_issue42_a_cut_keeping_no_relevant_section_counts_every_unjudged_section_it_kept() -> None:
    from askkit.trace import unjudged_above

    found = unjudged_above(JUDGING, 5, {Interest("n.md", "Two"): -1, Interest("c.md", "Deep"): 1})
    assert (found.lowest, found.above) == (None, 4)
    assert found.sections == found.kept == ("a.md#Intro", "u.md#One", "n.md#Two", "j.md#Any")
    ranked_fifth = unjudged_above(JUDGING, 5, {Interest("j.md"): 1})  # the relevant note
    assert (ranked_fifth.lowest, ranked_fifth.sections) == (
        5,
        ("a.md#Intro", "u.md#One", "n.md#Two"),
    )


def test_issue42_a_section_lost_at_the_cut_says_the_unjudged_sections_kept_above_it() -> None:
    sections = [("a.md", "Intro"), ("b.md", "Start"), ("c.md", "Deep")]
    frame = trace_pool(JUDGING, sections, TOP_7, query_id="q1", grades=GRADES)
    deep = stop(frame, "c.md#Deep")
    assert (deep["stage"], deep["passed"]) == ("cut", False)
    assert deep["why"].endswith(
        "; the cut kept 3 unjudged sections above it, 2 of them above the lowest relevant "
        "section it kept (rank 6): 'u.md#One', 'n.md#Two' and 'v.md#Below' (judge them next: "
        "they may be relevant)."
    )
    assert "unjudged" not in stop(frame, "b.md#Start")["why"]  # kept: nothing to say
    assert frame["unjudged_above"].tolist() == [2] * len(frame)
    assert frame["lowest_relevant"].tolist() == [6] * len(frame)
    assert {tuple(k) for k in frame["unjudged_kept"]} == {("u.md#One", "n.md#Two", "v.md#Below")}
    plain = trace_pool(JUDGING, sections, TOP_7)  # no judgments given: nothing said
    assert "unjudged" not in stop(plain, "c.md#Deep")["why"]
    assert plain["unjudged_above"].isna().all()
    assert plain["unjudged_kept"].isna().all()


def test_issue42_a_cut_keeping_no_relevant_section_says_so_beside_the_lost_one() -> None:
    frame = trace_pool(JUDGING, [("c.md", "Deep")], TOP_7, grades={Interest("c.md", "Deep"): 1})
    why = stop(frame, "c.md#Deep")["why"]
    assert (
        "; the cut kept 6 unjudged sections above it, and no relevant section: 'a.md#Intro'" in why
    )
    assert "and 3 more (judge them next" in why
    assert frame["lowest_relevant"].isna().all()
    assert frame["unjudged_above"].tolist() == [6] * len(frame)


def test_issue42_the_reranker_pushing_a_section_out_says_the_unjudged_sections_too() -> None:
    pool = pool_of([0.9, 0.8, 0.7, 0.6], ["/r.md", "/u.md", "/w.md", "/x.md"])
    grades = {Interest("/r.md"): 1, Interest("/w.md"): -1}
    scores = [(0, 0.1), (1, 0.9), (2, 0.8), (3, 0.7)]  # /r.md from first to last
    top3 = CutSettings(strategy="fixed", top_k=3)
    frame = trace_pool(pool, ["/r.md"], top3, rerank_scores=scores, grades=grades)
    row = stop(frame, "/r.md")
    assert (row["stage"], row["passed"]) == ("rerank", False)
    assert "the cut kept 3 unjudged sections above it, and no relevant section" in row["why"]
