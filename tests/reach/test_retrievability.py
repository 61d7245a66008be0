"""Retrievability, the Gini coefficient and the Lorenz curve against plain-Python
references (Azzopardi and Vinay 2008) on random pools."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from askkit.errors import SchemaError
from askkit.reach.retrievability import (
    compare_retrievability,
    gini,
    lorenz,
    retrievability,
)

NOTES = [f"n{i}.md" for i in range(8)]


@st.composite
def pools(draw: Any) -> pd.DataFrame:
    """Up to five queries, each a pool of up to 10 chunks (a note may come twice, as two
    sections), and what a cut kept: each query's first few."""
    rows = []
    for q in range(draw(st.integers(1, 5))):
        size = draw(st.integers(0, 10))
        cut = draw(st.integers(0, size))
        for rank in range(1, size + 1):
            note = draw(st.sampled_from(NOTES))
            heading = draw(st.sampled_from(["", "Intro", "Usage"]))
            rows.append((f"q{q}", rank, note, heading, rank <= cut))
    return pd.DataFrame(rows, columns=["query_id", "rank", "path", "title", "kept"]).astype(
        {"rank": np.int64, "kept": bool}
    )


def reference(
    frame: pd.DataFrame, k: int | None, kept: bool, beta: float | None, section: bool
) -> dict[str, float]:
    """r(d) the plain way: per query, each document's best rank within the cutoff."""
    best: dict[tuple[str, str], int] = {}
    for q, rank, path, title, was_kept in frame.itertuples(index=False):
        if k is not None and rank > k:
            continue
        if kept and not was_kept:
            continue
        doc = f"{path}#{title}" if section and title else path  # askkit's section ids
        best[(q, doc)] = min(rank, best.get((q, doc), rank))
    r: dict[str, float] = defaultdict(float)
    for (_, doc), rank in best.items():
        r[doc] += 1.0 if beta is None else rank**-beta
    return r


@settings(max_examples=150, deadline=None)
@given(
    pools(),
    st.sampled_from([None, 1, 3]),
    st.booleans(),
    st.sampled_from([None, 0.5, 1.0, 2.0]),
    st.booleans(),
)
def test_r_equals_the_plain_definition(
    frame: pd.DataFrame, k: int | None, kept: bool, beta: float | None, section: bool
) -> None:
    if k is None and not kept:
        kept = True
    level = "section" if section else "note"
    documents = [f"{n}#{t}" if t else n for n in NOTES for t in ("", "Intro", "Usage")]
    documents = documents if section else NOTES
    got = retrievability(
        frame, documents, k=k, kept="kept" if kept else None, beta=beta, level=level
    )
    want = reference(frame, k, kept, beta, section)
    assert list(got.scores.index) == documents  # every document, in the order given
    for doc in documents:
        assert got.scores[doc] == pytest.approx(want.get(doc, 0.0), abs=1e-12)
    assert got.unreachable == tuple(d for d in documents if want.get(d, 0.0) == 0)
    assert got.queries == frame["query_id"].nunique()
    assert got.unknown == ()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0, 50, allow_nan=False), min_size=1, max_size=30))
def test_gini_is_the_mean_absolute_difference_over_twice_the_mean(values: list[float]) -> None:
    x = np.array(values)
    total = sum(values)
    if total == 0:
        assert np.isnan(gini(x))
        return
    n = len(values)
    mad = sum(abs(a - b) for a in values for b in values)
    assert gini(x) == pytest.approx(mad / (2 * n * total), abs=1e-12)
    assert 0.0 <= gini(x) <= 1.0 - 1.0 / n + 1e-12


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0, 50, allow_nan=False), min_size=1, max_size=30))
def test_the_lorenz_curve_runs_from_0_0_to_1_1_below_the_diagonal(values: list[float]) -> None:
    curve = lorenz(np.array(values))
    x, y = curve["share_of_documents"].to_numpy(), curve["share_of_r"].to_numpy()
    assert (x[0], y[0]) == (0.0, 0.0)
    assert (x[-1], y[-1]) == (1.0, 1.0)
    assert len(curve) == len(values) + 1
    assert np.all(np.diff(y) >= -1e-15)  # never falls
    assert np.all(y <= x + 1e-12)  # the least retrievable first: at or below the diagonal
    if sum(values) > 0:  # twice the area between the diagonal and the curve is the Gini
        area = np.trapezoid(x - y, x)
        assert 2 * area == pytest.approx(gini(np.array(values)), abs=1e-9)


def test_a_note_in_no_pool_is_unreachable_and_one_outside_the_vault_is_named() -> None:
    frame = pd.DataFrame(
        {"query_id": ["q1", "q1", "q2"], "rank": [1, 2, 1], "path": ["a.md", "x.md", "a.md"]}
    )
    r = retrievability(frame, ["a.md", "b.md"], k=2)
    assert r.scores.to_dict() == {"a.md": 2.0, "b.md": 0.0, "x.md": 1.0}
    assert r.unknown == ("x.md",)
    assert r.unreachable == ("b.md",)
    assert r.summary()["unreachable"] == 1
    assert r.cutoff == "k=2"


def test_two_retrievers_side_by_side_say_which_notes_a_change_gains_and_loses() -> None:
    base = pd.DataFrame({"query_id": ["q"] * 2, "rank": [1, 2], "path": ["a.md", "b.md"]})
    new = pd.DataFrame({"query_id": ["q"] * 2, "rank": [1, 2], "path": ["c.md", "a.md"]})
    vault = ["a.md", "b.md", "c.md", "d.md"]
    table = compare_retrievability(
        retrievability(base, vault, k=1), retrievability(new, vault, k=1), ("bm25", "dense")
    )
    assert table["status"].to_dict() == {
        "a.md": "lost",
        "b.md": "unreachable",
        "c.md": "gained",
        "d.md": "unreachable",
    }
    assert list(table.columns) == ["bm25", "dense", "change", "status"]


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({}, ValueError, "give the cutoff"),
        ({"k": 0}, ValueError, "k must be >= 1"),
        ({"k": 3, "beta": -1.0}, ValueError, "beta must be"),
        ({"kept": "kept_fixed"}, SchemaError, "no 'kept_fixed' column"),
    ],
)
def test_bad_options_are_refused_by_name(kwargs: dict[str, Any], error: type, words: str) -> None:
    frame = pd.DataFrame({"query_id": ["q"], "rank": [1], "path": ["a.md"]})
    with pytest.raises(error, match=words):
        retrievability(frame, **kwargs)


def test_a_rank_below_1_is_refused_naming_the_value() -> None:
    frame = pd.DataFrame({"query_id": ["q", "q"], "rank": [1, 0], "path": ["a.md", "b.md"]})
    with pytest.raises(SchemaError, match="whole number >= 1") as caught:
        retrievability(frame, k=3)
    assert caught.value.value == "0"
