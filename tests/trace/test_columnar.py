"""Many queries at once: the columnar trace equals the per-query trace exactly."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from askkit.errors import SchemaError
from askkit.ranking import CutSettings
from askkit.trace.columnar import relevant_sections, trace_pools, trace_pools_reference

SCORES = st.integers(-8, 32).map(lambda i: i / 32)


@st.composite
def pools_and_qrels(draw: st.DrawFn) -> tuple[pd.DataFrame, pd.DataFrame]:
    frames = []
    for q in range(draw(st.integers(0, 4))):
        n = draw(st.integers(1, 20))
        scores = sorted(draw(st.lists(SCORES, min_size=n, max_size=n)), reverse=True)
        frames.append(
            pd.DataFrame(
                {
                    "query_id": f"q{q}",
                    "rank": range(1, n + 1),
                    "path": draw(st.lists(st.sampled_from("abcd"), min_size=n, max_size=n)),
                    "score": scores,
                    "title": [
                        f"Note\x1f{h}"
                        for h in draw(st.lists(st.sampled_from("XY"), min_size=n, max_size=n))
                    ],
                }
            )
        )
    columns = ["query_id", "rank", "path", "score", "title"]
    pools = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)
    judged = draw(
        st.lists(
            st.tuples(
                st.sampled_from(["q0", "q1", "q2", "q7"]),
                st.sampled_from("abcdz"),
                st.sampled_from(["X", "Y", ""]),
                st.integers(0, 2),
            ),
            max_size=10,
        )
    )
    qrels = pd.DataFrame(judged, columns=["query_id", "path", "heading", "grade"])
    return pools, qrels


SETTINGS = st.builds(
    CutSettings,
    strategy=st.sampled_from(["fixed", "score-range", "largest-drop"]),
    top_k=st.integers(1, 12),
    score_range_cutoff=st.floats(0, 1),
    drop_window_min=st.integers(1, 5),
)


@given(pools_and_qrels(), SETTINGS)
def test_the_columnar_trace_equals_the_per_query_trace(
    case: tuple[pd.DataFrame, pd.DataFrame], settings: CutSettings
) -> None:
    pools, qrels = case
    pd.testing.assert_frame_equal(
        trace_pools(pools, qrels, settings), trace_pools_reference(pools, qrels, settings)
    )


def test_sections_stop_at_the_pool_the_cut_or_the_context() -> None:
    pools = pd.DataFrame(
        {
            "query_id": ["q1"] * 4 + ["q2"],
            "path": ["a.md", "b.md", "b.md", "c.md", "a.md"],
            "score": [0.9, 0.8, 0.7, 0.1, 0.5],
            "title": ["A", "B", "Bb", "C", "A"],
        }
    )
    qrels = pd.DataFrame(
        {
            "query_id": ["q1", "q1", "q1", "q1", "q2", "q3"],
            "path": ["a.md", "b.md", "c.md", "d.md", "a.md", "a.md"],
            "heading": ["A", "Bb", "", "D", "A", "A"],
            "grade": [1, 2, 1, 1, 1, 3],
        }
    )
    out = trace_pools(pools, qrels)
    assert out["section"].tolist() == ["a.md#A", "b.md#Bb", "c.md", "d.md#D", "a.md#A", "a.md#A"]
    assert out["stopped"].astype(str).tolist() == ["context"] * 2 + [
        "cut",
        "pool",
        "context",
        "pool",
    ]
    assert out["rank"].tolist()[:3] == [1, 3, 4]
    assert out["cut_len"].tolist() == [3] * 4 + [1, 0]


def test_relevant_sections_keep_the_relevant_rows_once() -> None:
    qrels = pd.DataFrame(
        {
            "query_id": ["q1"] * 3,
            "path": ["a.md"] * 3,
            "heading": ["A", "A", "B"],
            "grade": [1, 2, 0],
        }
    )
    out = relevant_sections(qrels)
    assert out[["section", "grade"]].values.tolist() == [["a.md#A", 2]]


def test_pools_without_titles_are_refused() -> None:
    pools = pd.DataFrame({"query_id": ["q"], "path": ["a.md"], "score": [1.0]})
    qrels = pd.DataFrame({"query_id": ["q"], "path": ["a.md"], "grade": [1]})
    with pytest.raises(SchemaError, match="title"):
        trace_pools(pools, qrels)


def test_issue42_graded_sections_keep_every_grade_and_relevant_ones_are_its_relevant_rows() -> None:
    from askkit.trace import Interest, graded_sections, query_grades

    qrels = pd.DataFrame(
        {
            "query_id": ["q1", "q1", "q1", "q1", "q2"],
            "path": ["A.md", "a.md", "b.md", "c.md", "a.md"],
            "heading": ["X", "X", "", "Y", "X"],
            "grade": [-1, 2, 0, -1, 1],
        }
    )
    graded = graded_sections(qrels)
    assert list(zip(graded["query_id"], graded["section"], graded["grade"], strict=True)) == [
        ("q1", "a.md#X", 2),  # typed A.md prints a.md: one section, its highest grade
        ("q1", "b.md", 0),
        ("q1", "c.md#Y", -1),
        ("q2", "a.md#X", 1),
    ]
    assert relevant_sections(qrels)["section"].tolist() == ["a.md#X", "a.md#X"]
    assert query_grades(qrels, ["q1"]) == {
        "q1": {Interest("a.md", "X"): 2, Interest("b.md"): 0, Interest("c.md", "Y"): -1}
    }
