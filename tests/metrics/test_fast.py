"""askkit.metrics.fast: the faster path equals the exact one (askkit.metrics.exact.exact).

The exact path is the specification. A property test holds the fast path to it
on random runs and qrels (tied and NaN scores, repeated documents, unjudged
documents, run-only and unanswered queries, rows in any order); the fast
path may decline (None) but never differ. The hash, the sorts and the one
switch are tested on their own below.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from askkit.metrics import evaluate, fast
from askkit.metrics.exact import exact
from askkit.metrics.fast import (
    _hash_strings,
    _pair_keys,
    _radix_argsort,
    _rank_order,
    _sort_blocks,
    _tie_order,
    graded,
)
from askkit.metrics.measures import compute, parse_measure
from askkit.metrics.preparation import Judged, code, judged_run
from askkit.metrics.ranked import Coded, Graded, Ranked, query_blocks

MEASURES = [parse_measure(m) for m in ("ndcg@5", "ndcg", "map", "mrr", "recall@3", "P@2")]

#: Document ids with shared prefixes, a folder, a space, non-ASCII and digits (whose
#: byte order differs from their numeric order), long and short (under 8 bytes).
DOCS = ["notes/a.md", "notes/ab.md", "notes/b.md", "b/a.md", "é/z.md", "c d.md", "9.md", "10.md"]
QUERIES = ["q0", "q1", "q2", "q10"]


def assert_same(got: Graded, want: Graded) -> None:
    """Two preparations agree: same rows, ranks, documents, scores, grades and measures."""
    g, w = got.ranked, want.ranked
    np.testing.assert_array_equal(g.rows, w.rows)
    np.testing.assert_array_equal(g.query, w.query)
    np.testing.assert_array_equal(g.rank, w.rank)
    assert g.duplicates == w.duplicates
    # document codes differ between the paths; the documents they name do not
    assert got.docs.take(pa.array(g.doc)).to_pylist() == want.docs.take(pa.array(w.doc)).to_pylist()
    np.testing.assert_array_equal(got.score, want.score)  # NaN equals NaN here
    np.testing.assert_array_equal(got.grade, want.grade)
    np.testing.assert_array_equal(got.judged, want.judged)
    # one judgment per (query, document), in either path's order
    got_qrels = sorted(zip(got.qrels_query.tolist(), got.qrels_grade.tolist(), strict=True))
    want_qrels = sorted(zip(want.qrels_query.tolist(), want.qrels_grade.tolist(), strict=True))
    assert got_qrels == want_qrels


def assert_same_measures(got: Graded, want: Graded, n_queries: int) -> None:
    def values(p: Graded) -> dict[str, Any]:
        return compute(
            MEASURES,
            n_queries,
            p.ranked,
            p.grade,
            qrels_query=p.qrels_query,
            qrels_grade=p.qrels_grade,
        )

    a, b = values(got), values(want)
    for m in MEASURES:
        np.testing.assert_array_equal(a[m.name], b[m.name], err_msg=m.name)


def _in_rank_order(run: pd.DataFrame, ties: str) -> pd.DataFrame:
    """The rows grouped by query and in rank order, as kimun sends a run."""
    if ties == "input":
        return run.sort_values(["turn_id", "rank"], kind="stable")
    by_doc = run.sort_values("path", ascending=False, kind="stable")  # tie break: id descending
    score = by_doc["score"] + 0.0  # -0.0 ties with 0.0
    key = pd.DataFrame({"t": by_doc["turn_id"], "nan": score.isna(), "s": -score.fillna(0.0)})
    return by_doc.iloc[np.lexsort((key["s"], key["nan"], key["t"]))]


@st.composite
def runs(draw: st.DrawFn) -> tuple[pd.DataFrame, pd.DataFrame, str, str, bool]:
    """A run and qrels; the ties mode; the rows' order; whether run-only queries are kept."""
    scores = st.sampled_from([0.5, 1.0, 1.0, 2.0, -0.0, 0.0, float("nan")])  # many ties
    rows = draw(
        st.lists(
            st.tuples(
                st.sampled_from([*QUERIES, "q_run_only"]),
                st.sampled_from(DOCS),
                scores,
                st.integers(1, 5),  # the rank column, repeats included
            ),
            max_size=40,
        )
    )
    judgments = draw(
        st.lists(
            st.tuples(
                st.sampled_from([*QUERIES, "q_unanswered"]),
                st.sampled_from(DOCS),
                st.integers(-1, 3),
            ),
            max_size=30,
        )
    )
    run = pd.DataFrame(rows, columns=["turn_id", "path", "score", "rank"]).astype(
        {"turn_id": str, "path": str, "score": float, "rank": np.int64}
    )
    qrels = pd.DataFrame(judgments, columns=["query_id", "path", "grade"]).astype(
        {"query_id": str, "path": str, "grade": np.int64}
    )
    ties = draw(st.sampled_from(["trec", "input"]))
    shape = draw(st.sampled_from(["as drawn", "rank order", "shuffled"]))
    if shape == "rank order":
        run = _in_rank_order(run, ties)
    elif shape == "shuffled":
        run = run.sample(frac=1.0, random_state=draw(st.integers(0, 2**32 - 1)))
    if draw(st.booleans()):
        run = run.drop(columns="rank")
    return run.reset_index(drop=True), qrels, ties, shape, draw(st.booleans())


def _hashable(values: pa.Array) -> bool:
    """Whether _hash_strings takes these strings (their bytes fill one 8-byte word)."""
    return len(values) == 0 or sum(len(s.encode()) for s in values.to_pylist()) >= 8


@settings(max_examples=400)
@given(runs())
def test_the_fast_path_equals_the_exact_path(
    data: tuple[pd.DataFrame, pd.DataFrame, str, str, bool],
) -> None:
    run, qrels, ties, shape, run_queries = data
    coded = code(run, qrels, "note", ties, run_queries=run_queries)  # type: ignore[arg-type]
    want = exact(coded)
    got = graded(coded)
    event(f"{shape}, {ties}: fast path {'declined' if got is None else 'taken'}")
    if got is None:  # declined: only when in doubt, never for a run in rank order
        assert not (
            shape == "rank order"
            and len(coded.query) >= 2
            and _hashable(coded.docs)
            and _hashable(coded.qrels_docs)
        )
        return
    assert_same(got, want)
    assert_same_measures(got, want, len(coded.qids))


@settings(max_examples=200)
@given(runs(), st.integers(1, 6))
def test_grading_in_slices_of_whole_queries_changes_nothing(
    data: tuple[pd.DataFrame, pd.DataFrame, str, str, bool], slice_rows: int
) -> None:
    """A large run is graded a slice of whole queries at a time; with slices of a
    few rows (every query its own slice, or several) the result is the exact path's."""
    run, qrels, ties, _, run_queries = data
    coded = code(run, qrels, "note", ties, run_queries=run_queries)  # type: ignore[arg-type]
    saved = fast._SLICE
    fast._SLICE = slice_rows
    try:
        got = graded(coded)
    finally:
        fast._SLICE = saved
    if got is not None:
        assert_same(got, exact(coded))
        assert_same_measures(got, exact(coded), len(coded.qids))


#: Every kind of measure, condensed ones and Judged@k included.
EVERY_MEASURE = [
    parse_measure(m)
    for m in ("ndcg@5", "ndcg", "map", "mrr", "recall@3", "P@2", "bpref", "infap", "judged@3")
] + [parse_measure(m) for m in ("ndcg'@3", "map'")]


@settings(max_examples=300)
@given(runs(), st.integers(1, 6), st.sampled_from([None, 2]), st.booleans())
def test_the_judged_rows_are_the_exact_paths(
    data: tuple[pd.DataFrame, pd.DataFrame, str, str, bool],
    slice_rows: int,
    max_docs: int | None,
    group: bool,
) -> None:
    """evaluate's lean path (judged_run: only the judged rows, the run taken in its
    own order of queries, a slice of whole queries at a time) gives the exact
    path's judged rows, ranks, grades and counts, so the same measures.
    ``group``: the rows grouped by query, queries in order of first appearance
    (not the ids' order), rows within a query in any order."""
    run, qrels, ties, shape, _ = data
    if group:
        first_seen = pd.factorize(run["turn_id"])[0]
        run = run.iloc[np.argsort(first_seen, kind="stable")].reset_index(drop=True)
        shape = f"{shape}, grouped"
    saved = fast._SLICE
    fast._SLICE = slice_rows
    try:
        got = judged_run(run, qrels, level="note", ties=ties)  # type: ignore[arg-type]
    finally:
        fast._SLICE = saved
    coded = code(run, qrels, "note", ties)  # type: ignore[arg-type]
    want = exact(coded)
    event(f"{shape}, {ties}: lean path {'taken' if isinstance(got, Judged) else 'declined'}")
    if not isinstance(got, Judged):  # declined: only for a run not grouped by query
        assert not (
            (group or shape == "rank order")
            and len(coded.query) >= 2
            and _hashable(coded.docs)
            and _hashable(coded.qrels_docs)
        )
        return
    assert got.qids.equals(coded.qids)
    np.testing.assert_array_equal(got.in_run, coded.in_run)
    assert got.run_only == coded.run_only
    h, j = got.hits, want.judged
    by_query = np.argsort(h.query, kind="stable")  # each query's rows stay in rank order
    np.testing.assert_array_equal(h.query[by_query], want.ranked.query[j])
    np.testing.assert_array_equal(h.rank[by_query], want.ranked.rank[j])
    np.testing.assert_array_equal(h.grade[by_query], want.grade[j])
    assert h.duplicates == want.ranked.duplicates
    n = len(coded.qids)
    np.testing.assert_array_equal(h.retrieved, np.bincount(want.ranked.query, minlength=n))
    got_qrels = sorted(zip(h.qrels_query.tolist(), h.qrels_grade.tolist(), strict=True))
    want_qrels = sorted(zip(want.qrels_query.tolist(), want.qrels_grade.tolist(), strict=True))
    assert got_qrels == want_qrels
    for level in (0, 1, 2):
        lean = compute(
            EVERY_MEASURE,
            n,
            Ranked(h.query, h.query, h.query, h.rank, h.duplicates),
            h.grade,
            qrels_query=h.qrels_query,
            qrels_grade=h.qrels_grade,
            relevance_level=level,
            judged=np.ones(len(h.query), dtype=bool),
            max_docs=max_docs,
            retrieved=h.retrieved,
        )
        full = compute(
            EVERY_MEASURE,
            n,
            want.ranked,
            want.grade,
            qrels_query=want.qrels_query,
            qrels_grade=want.qrels_grade,
            relevance_level=level,
            judged=want.judged,
            max_docs=max_docs,
        )
        for m in EVERY_MEASURE:
            np.testing.assert_array_equal(lean[m.name], full[m.name], err_msg=m.name)


def test_slices_are_cut_at_query_boundaries() -> None:
    block = np.array([0, 0, 0, 1, 2, 2, 2, 2, 3], dtype=np.int64)
    blocks = query_blocks(block)
    saved = fast._SLICE
    fast._SLICE = 2
    try:
        edges = fast._slices(blocks, len(block))
    finally:
        fast._SLICE = saved
    assert edges == [0, 2, 3, 4]  # blocks: a query is never split
    assert [*blocks.first.tolist(), len(block)] == [0, 3, 4, 8, 9]
    # out of query order: the blocks are cut in query order
    shuffled = np.array([2, 2, 2, 2, 0, 0, 0, 3, 1], dtype=np.int64)
    moved = query_blocks(shuffled)
    assert not moved.in_order
    assert moved.code.tolist() == [0, 1, 2, 3]
    assert moved.rows(0, 4).tolist() == [4, 5, 6, 8, 0, 1, 2, 3, 7]
    assert moved.rows(2, 3).tolist() == [0, 1, 2, 3]


def test_the_fast_path_takes_kimuns_runs_and_shuffled_ones() -> None:
    """The runs the fast path is for take it to the end: a grouped run in trec_eval's
    order, tied scores included, and the same rows shuffled, ranked by their rank
    or by score with the ties put in document order (a vectorised sort, no fallback)."""
    rng = np.random.default_rng(0)
    queries, width = 50, 10
    run = pd.DataFrame(
        {
            "turn_id": np.repeat([f"q{i:02d}" for i in range(queries)], width),
            "path": [f"notes/d{i}.md" for i in rng.integers(0, 30, queries * width)],
            "score": rng.integers(0, 4, queries * width).astype(float),
        }
    )
    run = _in_rank_order(run, "trec").reset_index(drop=True)
    run["rank"] = np.tile(np.arange(1, width + 1), queries)
    qrels = pd.DataFrame(
        {
            "query_id": [f"q{i:02d}" for i in rng.integers(0, queries + 5, 300)],
            "path": [f"notes/d{i}.md" for i in rng.integers(0, 30, 300)],
            "grade": rng.integers(0, 4, 300),
        }
    )
    shuffled = run.sample(frac=1.0, random_state=1).reset_index(drop=True)
    for frame, ties in ((run, "trec"), (run, "input"), (shuffled, "input"), (shuffled, "trec")):
        coded = code(frame, qrels, "note", ties)  # type: ignore[arg-type]
        got = graded(coded)
        assert got is not None, ties
        want = exact(coded)
        assert got.ranked.duplicates > 0
        assert got.judged.any()
        assert_same(got, want)
        assert_same_measures(got, want, len(coded.qids))


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
    monkeypatch.setattr(fast, "ENABLED", False)
    exact_ev = evaluate(run, qrels, measures)
    pd.testing.assert_frame_equal(grouped.per_query, exact_ev.per_query)
    assert grouped.duplicates == exact_ev.duplicates
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
    run, qrels = _messy_run(seed, ranks=seed % 2 == 0)
    if ties == "trec":  # tied scores of distinct documents send trec ties to the exact path
        distinct = np.random.default_rng(seed).permutation(len(run)) / len(run)
        distinct[0] = np.nan  # one NaN: it ranks last, tied with nothing
        run = run.assign(score=distinct)
    measures = ["ndcg@5", "map", "mrr", "recall@3", "precision@2"]
    used = _spy(monkeypatch, fast, "_rank_order")
    fast_ran = _spy(monkeypatch, fast, "_graded")
    fast_ev = evaluate(run, qrels, measures, ties=ties)  # type: ignore[arg-type]
    assert used == [True]
    assert fast_ran == [True]  # the ranked rows took the fast path to the end
    monkeypatch.setattr(fast, "ENABLED", False)
    exact_ev = evaluate(run, qrels, measures, ties=ties)  # type: ignore[arg-type]
    pd.testing.assert_frame_equal(fast_ev.per_query, exact_ev.per_query)
    assert fast_ev.duplicates == exact_ev.duplicates > 0


def _coded(ties: str = "trec") -> Coded:
    run = pd.DataFrame(
        {
            "turn_id": ["q1", "q1", "q1", "q2", "q2"],
            "path": ["notes/b.md", "notes/a.md", "notes/b.md", "notes/c.md", "notes/a.md"],
            "score": [3.0, 2.0, 1.0, 2.0, 1.0],
        }
    )
    qrels = pd.DataFrame(
        {"query_id": ["q1", "q2", "q2"], "path": ["notes/a.md"] * 3, "grade": [2, 1, 3]}
    )
    return code(run, qrels, "note", ties)  # type: ignore[arg-type]


def test_switched_off_it_leaves_every_run_to_the_exact_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    coded = _coded()
    got = graded(coded)
    assert got is not None
    assert_same(got, exact(coded))
    assert got.grade.tolist() == [0, 2, 0, 3]  # q2's a.md: its highest grade
    monkeypatch.setattr(fast, "ENABLED", False)
    assert graded(coded) is None


def test_colliding_hashes_are_caught_on_the_strings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every document hashing alike: the strings tell the documents apart, so the
    fast path declines instead of merging them; results never depend on the hash."""
    coded = _coded()

    def collide(arr: pa.Array) -> np.ndarray[Any, np.dtype[np.uint64]]:
        return np.full(len(arr), 12345, dtype=np.uint64)

    monkeypatch.setattr(fast, "_hash_strings", collide)
    assert graded(coded) is None


def test_a_judgment_whose_hash_matches_another_document_is_not_taken(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A run document whose hash equals a judged document's is confirmed on the
    strings, so it stays unjudged."""
    run = pd.DataFrame({"turn_id": ["q", "q"], "path": ["notes/x.md", "notes/y.md"]})
    run["score"] = [2.0, 1.0]
    qrels = pd.DataFrame({"query_id": ["q"], "path": ["notes/z.md"], "grade": [3]})
    coded = code(run, qrels, "note", "trec")

    def by_last_letter_but_z_is_x(arr: pa.Array) -> np.ndarray[Any, np.dtype[np.uint64]]:
        last = [s[-4].replace("z", "x") for s in arr.to_pylist()]
        return np.array([ord(c) << 40 for c in last], dtype=np.uint64)

    monkeypatch.setattr(fast, "_hash_strings", by_last_letter_but_z_is_x)
    got = graded(coded)
    assert got is not None
    assert got.judged.tolist() == [False, False]
    assert_same(got, exact(coded))


@pytest.mark.parametrize(
    ("rows", "declines"),
    [
        ([("q", "notes/b.md", 1.0), ("q", "notes/a.md", 1.0)], False),  # trec order: b, a
        ([("q", "notes/a.md", 1.0), ("q", "notes/b.md", 1.0)], False),  # tied: put in that order
        ([("q", "notes/a.md", 1.0)], True),  # one row: nothing to gain
        ([("q", "a", 2.0), ("q", "b", 1.0)], False),  # under 8 bytes: hashed beside padding
    ],
)
def test_when_it_declines(rows: list[tuple[str, str, float]], declines: bool) -> None:
    run = pd.DataFrame(rows, columns=["turn_id", "path", "score"])
    qrels = pd.DataFrame({"query_id": ["q"], "path": ["notes/a.md"], "grade": [1]})
    coded = code(run, qrels, "note", "trec")
    got = graded(coded)
    assert (got is None) == declines
    if got is not None:
        assert_same(got, exact(coded))


# --------------------------------------------------------------------------- the hash


@given(st.lists(st.text(max_size=20), min_size=1, max_size=30), st.integers(0, 5))
def test_equal_strings_hash_alike_wherever_they_sit(values: list[str], cut: int) -> None:
    """Each string's hash depends on its bytes only: not on its neighbours, its
    position or the array's offset (a slice)."""
    cut = min(cut, len(values) - 1)
    arr = pa.array(["padding", *values, "more padding"], pa.large_string()).slice(1 + cut)
    arr = arr.slice(0, len(values) - cut)
    shuffled = pa.array(list(reversed(arr.to_pylist())), pa.large_string())
    h, r = _hash_strings(arr), _hash_strings(shuffled)
    if h is None or r is None:  # under 8 bytes in all
        assert sum(len(s.encode()) for s in arr.to_pylist()) < 8
        return
    assert h.tolist() == r.tolist()[::-1]
    strings = arr.to_pylist()
    for i, j in zip(*np.nonzero(h[:, None] == h[None, :]), strict=True):
        assert strings[i] == strings[j]  # no collision among these few


@given(st.lists(st.lists(st.text(max_size=12), max_size=6), min_size=1, max_size=5))
def test_a_chunked_column_hashes_as_the_joined_one(chunks: list[list[str]]) -> None:
    """The readers' columns arrive in chunks; each chunk is hashed in place, and a
    chunk too small to hash alone is hashed with the others joined."""
    chunked = pa.chunked_array([pa.array(c, pa.large_string()) for c in chunks])
    whole = _hash_strings(chunked.combine_chunks())
    got = _hash_strings(chunked)
    if whole is None:
        assert got is None
    else:
        assert got is not None
        assert got.tolist() == whole.tolist()


def test_short_strings_hash_their_own_bytes_only() -> None:
    arr = pa.array(["ab", "abc", "ab", "", "abcdefgh", "abcdefghi", ""], pa.large_string())
    h = _hash_strings(arr)
    assert h is not None
    assert h[0] == h[2] != h[1]
    assert h[3] == h[6]
    assert len(set(h.tolist())) == 5


@pytest.mark.parametrize(
    "arr",
    [
        pa.array(["ab", "cd"], pa.large_string()),  # 4 bytes
        pa.array(["abcdefgh", None], pa.large_string()),
        pa.array(["abcdefgh"], pa.string()),  # 32-bit offsets
        pa.array([], pa.large_string()),
    ],
)
def test_strings_it_does_not_hash(arr: pa.Array) -> None:
    assert _hash_strings(arr) is None


def test_pair_keys_put_the_query_in_the_high_bits() -> None:
    h = np.array([2**64 - 1, 0, 2**63], dtype=np.uint64)
    keys = _pair_keys(np.array([2, 0, 1], dtype=np.int64), h, 3)
    assert (keys >= 0).all()
    assert (keys >> 61).tolist() == [2, 0, 1]


# --------------------------------------------------------------------------- the sorts


def test_rank_order_groups_then_ranks() -> None:
    codes = np.array([70_000, 3, 70_000, 0, 3, 5], dtype=np.int64)  # two radix passes
    assert _radix_argsort(codes).tolist() == [3, 1, 4, 5, 0, 2]
    query = np.array([1, 0, 1, 0, 1])
    score = np.array([0.2, 0.5, np.nan, 0.9, 0.7])
    order = np.array([3, 2, 1, 1, 2])
    assert _rank_order(query, score, order, "trec").tolist() == [3, 1, 4, 0, 2]
    assert _rank_order(query, score, order, "input").tolist() == [3, 1, 2, 4, 0]
    lopsided = np.concatenate([np.arange(1, 2001), np.zeros(5000, np.int64)])
    n = len(lopsided)  # a matrix that would be mostly padding is not built: one sort
    rng = np.random.default_rng(0)
    lop_score = rng.integers(0, 5, n).astype(float)
    lop_score[::7] = np.nan
    got = _rank_order(lopsided, lop_score, np.zeros(n, np.int64), "trec")
    assert got.tolist() == np.lexsort((-lop_score, lopsided)).tolist()
    assert lopsided[got[0]] == 0
    assert lop_score[got[0]] == 4.0
    assert np.isnan(lop_score[got[4999]])
    assert lopsided[got[-1]] == 2000


@pytest.mark.parametrize("grouped", [False, True])
def test_ties_are_put_in_document_order_descending(grouped: bool) -> None:
    """trec_eval's order for tied scores, by one sort of the tied rows only;
    a document repeated with the same score keeps its rows' order."""
    query = np.array([1, 1, 1, 1, 0, 0, 0])
    score = np.array([2.0, 1.0, 2.0, 2.0, -0.0, 0.0, 5.0])
    docs = pa.array(["b", "z", "c", "b", "x", "y", "a"], pa.large_string())
    order = np.arange(7, dtype=np.int64)
    by = _rank_order(query, score, order, "trec", grouped)
    fix = _tie_order(by, query[by], score[by], docs, None)
    assert fix is not None
    pos, perm = fix
    by[pos] = by[pos][perm]
    assert by.tolist() == [6, 5, 4, 2, 0, 3, 1]  # q0: a, y, x (-0.0 ties 0.0); q1: c, b, b, z
    assert _tie_order(by, query[by], score[by], docs, None) is None  # in order: nothing moves


@given(st.lists(st.integers(0, 2**40), max_size=60))
def test_radix_argsort_is_a_stable_argsort(codes: list[int]) -> None:
    arr = np.array(codes, dtype=np.int64)
    assert _radix_argsort(arr).tolist() == np.argsort(arr, kind="stable").tolist()


@given(st.lists(st.integers(1, 6), min_size=1, max_size=20), st.integers(0, 2**32))
def test_sort_blocks_sorts_within_each_block(sizes: list[int], seed: int) -> None:
    """Equal blocks (one matrix row each) and ragged ones (one sort) alike."""
    block = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)
    values = np.random.default_rng(seed).integers(0, 1000, len(block))
    packed = (block << 40) | values
    _sort_blocks(packed, block)
    assert packed.tolist() == sorted(((block << 40) | values).tolist())


@pytest.mark.parametrize("ties", ["trec", "input"])
def test_evaluate_scores_chunked_columns_in_run_order_as_the_exact_path(
    ties: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run built by concatenating frames (Arrow columns in several chunks, queries
    not in the order of their ids, one query cut across two chunks, ties,
    duplicates, unjudged and run-only queries), graded a few queries at a time:
    evaluate's judged rows (judged_run) give the exact path's values and counts."""
    rng = np.random.default_rng(7)
    sizes = rng.integers(3, 9, 30)
    turn = np.repeat([f"q{i}" for i in rng.permutation(len(sizes))], sizes)
    run = pd.DataFrame(
        {
            "turn_id": pd.array(turn, dtype="str"),
            "path": pd.array(
                [f"notes/d{i}.md" for i in rng.integers(0, 12, len(turn))], dtype="str"
            ),
            "score": rng.choice([0.25, 0.5, 0.5, 1.0], len(turn)),
            "rank": np.arange(len(turn), dtype=np.int64) % 5,
        }
    )
    cut = int(sizes[:7].sum()) + 2  # inside the eighth query
    run = pd.concat([run.iloc[:cut], run.iloc[cut:]], ignore_index=True)
    assert pa.array(run["path"].array).num_chunks == 2
    qrels = pd.DataFrame(
        {
            "query_id": [f"q{i}" for i in rng.integers(0, 33, 150)],  # some not in the run
            "path": [f"notes/d{i}.md" for i in rng.integers(0, 12, 150)],
            "grade": rng.integers(-1, 4, 150),
        }
    ).iloc[3:]
    run = run[run["turn_id"] != "q5"].reset_index(drop=True)  # a judged query unanswered
    measures = ["ndcg@5", "map", "mrr", "recall@3", "bpref", "infap", "judged@3", "ndcg'@3"]
    monkeypatch.setattr(fast, "_SLICE", 20)
    prepared = judged_run(run, qrels, level="note", ties=ties)  # type: ignore[arg-type]
    assert isinstance(prepared, Judged)
    got = evaluate(run, qrels, measures, ties=ties, missing="zero")  # type: ignore[arg-type]
    monkeypatch.setattr(fast, "ENABLED", False)
    want = evaluate(run, qrels, measures, ties=ties, missing="zero")  # type: ignore[arg-type]
    pd.testing.assert_frame_equal(got.per_query, want.per_query, check_exact=True)
    assert (got.duplicates, got.run_only, got.unanswered) == (
        want.duplicates,
        want.run_only,
        want.unanswered,
    )
    assert got.duplicates > 0
    assert got.run_only
    assert got.unanswered
