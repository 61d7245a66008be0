"""Judgments and runs from any TREC collection, through askkit's readers.

Every file here is written by hand in the test, with ids that
:class:`~askkit.VaultPath` would change (upper case, ``:``, ``#``, URLs,
``urn:`` ids, Windows device names, a trailing dot). The expected values are
pytrec_eval's (trec_eval's C code) or trec_eval's rules worked by hand; the
same rules were checked against the trec_eval 10.0 binary on its own test
files (``test/qrels.test``, ``results.trunc`` with ``-c`` and ``-M100``,
``qrels.rel_level`` with ``-l2``, ``-l0``, ``-l-1``, ``-l-2``,
``qrels.test.with-comments``, ``qrels.comment.test``): every value equal to
the printed four decimals.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import pytrec_eval
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from askkit import SchemaError, VaultPath
from askkit.metrics import coverage, evaluate, read_qrels, read_run, write_qrels, write_run
from askkit.metrics.runs import read_trec_run

#: ids a classic collection, the web and segment corpora use; VaultPath changes each.
IDS = [
    "FT911-1",
    "CR93E-1282",
    "http://example.org/A?b=1&c=%20",
    "urn:isbn:0451450523",
    "msmarco_v2.1_doc_00_880019750#4_1633802806",
    "CON",
    "doc.",
    "Doc[1]",
]
MEASURES = {"map": "map", "mrr": "recip_rank", "ndcg": "ndcg", "recall@5": "recall_5"}


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return path


def reference(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]) -> dict:
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"map", "recip_rank", "ndcg", "recall.5"})
    return evaluator.evaluate(run)  # type: ignore[no-any-return]


def assert_pytrec_values(per_query: pd.DataFrame, want: dict, tolerance: float) -> None:
    """askkit's per-query frame holds pytrec_eval's queries and values."""
    assert sorted(per_query.index) == sorted(want)
    for qid, values in want.items():
        for ours, theirs in MEASURES.items():
            assert per_query.loc[qid, ours] == pytest.approx(values[theirs], abs=tolerance)


def test_ids_vault_path_would_change_are_kept_exact(tmp_path: Path) -> None:
    assert all(str(VaultPath(i)) != i for i in IDS)  # every id here would be rewritten
    qrels = write(
        tmp_path / "qrels",
        [f"Q1 0 {d} {g}" for d, g in zip(IDS, [2, 1, 0, 3, 1, 2, 0, 1], strict=True)],
    )
    run = write(
        tmp_path / "run",
        [f"Q1 Q0 {d} {r} {10 - r} exp" for r, d in enumerate(reversed(IDS), start=1)],
    )
    q, r = read_qrels(qrels), read_run(run)
    assert q["doc"].tolist() == IDS
    assert sorted(r["doc"]) == sorted(IDS)
    ev = evaluate(r, q, list(MEASURES))
    want = reference(
        {"Q1": dict(zip(IDS, [2, 1, 0, 3, 1, 2, 0, 1], strict=True))},
        {"Q1": {d: 10.0 - i for i, d in enumerate(reversed(IDS), start=1)}},
    )
    assert ev.mean["map"] > 0
    assert_pytrec_values(ev.per_query, want, 1e-12)


def test_ids_vault_normalises_both_sides_only_when_asked(tmp_path: Path) -> None:
    qrels = write(tmp_path / "qrels", ["q1 0 Notes/A.md 1"])
    run = write(tmp_path / "run", ["q1 Q0 notes/a.md 1 1.0 x"])
    assert evaluate(read_run(run), read_qrels(qrels), ["map"]).mean["map"] == 0.0
    both = evaluate(read_run(run, ids="vault"), read_qrels(qrels, ids="vault"), ["map"])
    assert both.mean["map"] == 1.0
    with pytest.raises(ValueError, match="ids must be"):
        read_qrels(qrels, ids="lower")  # type: ignore[call-overload]


def test_an_empty_heading_column_does_not_change_the_numbers() -> None:
    run = pd.DataFrame({"turn_id": ["q"] * 3, "doc": ["D1", "D2", "D3"], "score": [3.0, 2.0, 1.0]})
    bare = pd.DataFrame({"query_id": ["q", "q"], "path": ["D2", "D3"], "grade": [1, 2]})
    headed = bare.assign(heading="")
    for level in ("note", "section"):
        a = evaluate(run, bare, ["map", "ndcg"], level=level)  # type: ignore[arg-type]
        b = evaluate(run, headed, ["map", "ndcg"], level=level)  # type: ignore[arg-type]
        pd.testing.assert_frame_equal(a.per_query, b.per_query)
        assert a.mean["map"] > 0


def test_write_of_read_gives_the_same_bytes(tmp_path: Path) -> None:
    lines = [
        f"Q{i} {it} {d} {g}"
        for i, (it, d, g) in enumerate(
            zip(["0", "Q0", "1", "iter"] * 2, IDS, [-1, 0, 3, 2] * 2, strict=True)
        )
    ]
    source = write(tmp_path / "qrels", lines)
    target = tmp_path / "again"
    write_qrels(read_qrels(source), target, format="trec")
    assert target.read_bytes() == source.read_bytes()
    tabs = write(tmp_path / "tabs", [line.replace(" ", "\t") + "  " for line in lines])
    write_qrels(read_qrels(tabs), target, format="trec")  # whitespace normalised, ids exact
    assert target.read_bytes() == source.read_bytes()


def test_hash_ids_match_at_the_default_note_level(tmp_path: Path) -> None:
    qrels = write(tmp_path / "qrels", ["q 0 seg#1 1", "q 0 seg#2 0"])
    run = write(tmp_path / "run", ["q Q0 seg#2 1 2.0 x", "q Q0 seg#1 2 1.0 x"])
    ev = evaluate(read_run(run), read_qrels(qrels), ["mrr"])
    assert ev.mean["mrr"] == 0.5


def rel_level_case() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Ranked d1..d5: d1 judged 2, d2 not judged, d3 judged 0, d4 judged -1, d5 judged 1."""
    run = pd.DataFrame(
        {"turn_id": ["q"] * 5, "doc": ["d1", "d2", "d3", "d4", "d5"], "score": [5.0, 4, 3, 2, 1]}
    )
    qrels = pd.DataFrame(
        {"query_id": ["q"] * 4, "path": ["d1", "d3", "d4", "d5"], "grade": [2, 0, -1, 1]}
    )
    return run, qrels


@pytest.mark.parametrize(
    ("level", "relevant_ranks", "n_rel"),
    [
        (2, [1], 1),  # only d1
        (1, [1, 5], 2),  # d1, d5
        (0, [1, 3, 5], 3),  # and the judged 0; never the unjudged d2
        (-1, [1, 2, 3, 5], 3),  # and the unjudged d2 (trec_eval's -1), not counted in R
        (-2, [1, 2, 3, 4, 5], 3),  # and the negative d4 (trec_eval's -2)
    ],
)
def test_relevance_level_is_trec_evals_dash_l(
    level: int, relevant_ranks: list[int], n_rel: int
) -> None:
    run, qrels = rel_level_case()
    ev = evaluate(run, qrels, ["map", "recall@5", "precision@5", "mrr"], relevance_level=level)
    ap = sum((i + 1) / r for i, r in enumerate(relevant_ranks)) / n_rel
    row = ev.per_query.loc["q"]
    assert row["map"] == pytest.approx(ap, abs=1e-12)
    assert row["recall@5"] == pytest.approx(len(relevant_ranks) / n_rel, abs=1e-12)
    assert row["precision@5"] == pytest.approx(len(relevant_ranks) / 5, abs=1e-12)
    assert row["mrr"] == 1.0
    cov = coverage(run, qrels, k=5, relevance_level=level)
    assert cov.per_query.loc["q", "relevant"] == n_rel
    assert cov.per_query.loc["q", "relevant_at_k"] == len(relevant_ranks)


def test_ndcg_ignores_the_relevance_level() -> None:
    run, qrels = rel_level_case()
    values = {
        level: evaluate(run, qrels, ["ndcg", "ndcg@3"], relevance_level=level).per_query
        for level in (3, 1, 0, -2)
    }
    dcg = 2 / math.log2(2) + 1 / math.log2(6)
    ideal = 2 / math.log2(2) + 1 / math.log2(3)
    assert values[1].loc["q", "ndcg"] == pytest.approx(dcg / ideal, abs=1e-12)
    for other in values.values():
        pd.testing.assert_frame_equal(other, values[1])


def test_max_docs_per_query_is_dash_m_after_ranking() -> None:
    run = pd.DataFrame(
        {"turn_id": ["q"] * 4, "doc": ["d1", "d2", "d3", "d4"], "score": [1.0, 4.0, 3.0, 2.0]}
    )
    qrels = pd.DataFrame({"query_id": ["q", "q"], "path": ["d1", "d3"], "grade": [1, 1]})
    full = evaluate(run, qrels, ["map", "recall@10"]).per_query.loc["q"]
    cut = evaluate(run, qrels, ["map", "recall@10"], max_docs_per_query=2).per_query.loc["q"]
    assert full["recall@10"] == 1.0
    assert cut["recall@10"] == 0.5  # the top two by score are d2, d3: d1 was first in the file
    assert cut["map"] == pytest.approx((1 / 2) / 2)
    with pytest.raises(ValueError, match="max_docs_per_query"):
        evaluate(run, qrels, ["map"], max_docs_per_query=0)


def test_missing_drop_is_pytrec_eval_and_zero_is_dash_c() -> None:
    run = pd.DataFrame({"turn_id": ["a"], "doc": ["D"], "score": [1.0]})
    qrels = pd.DataFrame({"query_id": ["a", "b"], "path": ["D", "D"], "grade": [1, 1]})
    want = reference({"a": {"D": 1}, "b": {"D": 1}}, {"a": {"D": 1.0}})
    dropped = evaluate(run, qrels, ["map"], missing="drop")
    assert list(dropped.per_query.index) == sorted(want) == ["a"]
    assert dropped.mean["map"] == want["a"]["map"] == 1.0
    assert evaluate(run, qrels, ["map"], missing="zero").mean["map"] == 0.5  # (1 + 0) / 2


def test_negative_grades_and_any_iteration_field(tmp_path: Path) -> None:
    qrels = write(tmp_path / "qrels", ["q1 Q0 FT-1 -1", "q1 iter7 FT-2 2", "q1 0 FT-3 1"])
    q = read_qrels(qrels)
    assert q["grade"].tolist() == [-1, 2, 1]
    assert q["iteration"].tolist() == ["Q0", "iter7", "0"]
    run = read_run(write(tmp_path / "run", ["q1 Q0 FT-1 1 3 x", "q1 Q0 FT-2 2 2 x"]))
    want = reference({"q1": {"FT-1": -1, "FT-2": 2, "FT-3": 1}}, {"q1": {"FT-1": 3.0, "FT-2": 2.0}})
    assert_pytrec_values(evaluate(run, q, list(MEASURES)).per_query, want, 1e-12)


def test_comment_lines_where_trec_eval_takes_them(tmp_path: Path) -> None:
    qrels = write(tmp_path / "qrels", ["# judged by hand", "q1 0 CR#93E-1860 1", "", "q1 0 B 0"])
    run = write(tmp_path / "run", ["  # a comment after blanks", "q1 Q0 CR#93E-1860 1 1.0 x"])
    q, r = read_qrels(qrels), read_run(run)
    assert q["doc"].tolist() == ["CR#93E-1860", "B"]  # a '#' inside an id is no comment
    assert r["doc"].tolist() == ["CR#93E-1860"]
    assert evaluate(r, q, ["map"]).mean["map"] == 1.0


def test_fields_after_the_tag_are_ignored_not_shifted(tmp_path: Path) -> None:
    run = write(
        tmp_path / "run",
        ["q1 Q0 D1 1 2.0 STANDARD more junk at", "q1 Q0 D2 2 1.0 STANDARD 7", "q2 Q0 D1 1 1 x"],
    )
    r = read_trec_run(run)
    assert r["turn_id"].tolist() == ["q1", "q1", "q2"]
    assert r["tag"].tolist() == ["STANDARD", "STANDARD", "x"]
    assert r["score"].tolist() == [2.0, 1.0, 1.0]
    qrels = pd.DataFrame({"query_id": ["q1", "q2"], "path": ["D2", "D1"], "grade": [1, 1]})
    ev = evaluate(r, qrels, ["map"])
    assert ev.per_query["map"].tolist() == [0.5, 1.0]


@pytest.mark.parametrize(
    ("lines", "line", "field", "message"),
    [
        (["q1 0 D 1", "q1 0 D"], 2, "line", "a qrels line has 4 whitespace-separated fields"),
        (["q1 0 D 1", "q1 0 D 1 extra"], 2, "line", "but this one has 5, got"),
        (["q1 0 D high"], 1, "grade", "a grade must be an integer"),
        (["q1 0 D 1.5"], 1, "grade", "a grade must be an integer"),
    ],
)
def test_bad_qrels_lines_name_file_line_field_and_value(
    tmp_path: Path, lines: list[str], line: int, field: str, message: str
) -> None:
    path = write(tmp_path / "qrels", lines)
    with pytest.raises(SchemaError, match=message) as info:
        read_qrels(path)
    assert (info.value.file, info.value.line, info.value.field) == (str(path), line, field)
    assert info.value.has_value


@pytest.mark.parametrize(
    ("lines", "line", "field", "value"),
    [
        (["q1 Q0 D 1 1.0 x", "q1 Q0 D 2 1.0"], 2, "line", "q1 Q0 D 2 1.0"),
        (["q1 Q0 D 1 high x"], 1, "score", "high"),
        (["q1 Q0 D 1 1.0.0 x"], 1, "score", "1.0.0"),
        (["q1 Q0 D one 1.0 x"], 1, "rank", "one"),
    ],
)
def test_bad_run_lines_name_file_line_field_and_value(
    tmp_path: Path, lines: list[str], line: int, field: str, value: str
) -> None:
    path = write(tmp_path / "run", lines)
    with pytest.raises(SchemaError) as info:
        read_trec_run(path)
    assert (info.value.file, info.value.line, info.value.field) == (str(path), line, field)
    assert info.value.value == value


def test_latin1_bytes_name_the_file_line_and_the_encoding(tmp_path: Path) -> None:
    for name, reader in (("qrels", read_qrels), ("run", read_trec_run)):
        path = tmp_path / name
        good = b"q1 0 D 1\n" if name == "qrels" else b"q1 Q0 D 1 1.0 x\n"
        path.write_bytes(good + good.replace(b"D", b"caf\xe9"))
        with pytest.raises(SchemaError, match=r"not UTF-8.*0xe9.*iconv") as info:
            reader(path)
        assert (info.value.file, info.value.line) == (str(path), 2)


def test_lenient_mode_accounts_for_every_line(tmp_path: Path) -> None:
    path = tmp_path / "run"
    path.write_bytes(
        b"q1 Q0 A 1 2.0 x\n\n# note\nq1 Q0 B 2 high x\nq1 Q0 C 3\nq1 Q0 caf\xe9 4 1.0 x\n"
        b"q2 Q0 D 1 1.0 x extra\n"
    )
    loaded = read_trec_run(path, strict=False)
    assert loaded.frame["doc"].tolist() == ["A", "D"]
    assert loaded.errors["line"].tolist() == [4, 5, 6]
    assert loaded.errors["field"].tolist() == ["score", "line", "line"]
    assert loaded.records == 5 == loaded.records_loaded + len(loaded.errors)
    qrels = tmp_path / "qrels"
    qrels.write_bytes(b"q1 0 A 1\nq1 0 B x\nq1 0 C\n")
    q = read_qrels(qrels, strict=False)
    assert q.frame["doc"].tolist() == ["A"]
    assert q.errors["line"].tolist() == [2, 3]
    assert q.records == 3


def test_coverage_says_when_no_retrieved_document_is_judged() -> None:
    run = pd.DataFrame(
        {"turn_id": ["q1", "q1"], "doc": ["ft911-1", "ft911-2"], "score": [2.0, 1.0]}
    )
    qrels = pd.DataFrame({"query_id": ["q1"], "path": ["FT911-1"], "grade": [1]})
    text = coverage(run, qrels).explain()
    first = text.splitlines()[0]
    assert first.startswith("No retrieved document is judged")
    assert "ft911-1" in first
    assert "FT911-1" in first
    assert "case" in first
    matched = pd.DataFrame({"query_id": ["q1"], "path": ["ft911-1"], "grade": [1]})
    assert not coverage(run, matched).explain().startswith("No retrieved document")


alphabets = st.sampled_from(["ABCXYZ-", "htps:/.?=&%", "ab#12", "urn:x:"])
ids = alphabets.flatmap(lambda a: st.text(alphabet=a, min_size=1, max_size=6))


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.tuples(st.sampled_from(["Q1", "q:2", "Q#3"]), ids, st.sampled_from([0.5, 1.0, 2.0])),
        min_size=1,
        max_size=25,
    ),
    st.lists(
        st.tuples(st.sampled_from(["Q1", "q:2", "Q#3"]), ids, st.integers(0, 3)),
        min_size=1,
        max_size=20,
    ),
)
def test_random_ids_equal_pytrec_eval_through_the_files(
    tmp_path_factory: pytest.TempPathFactory,
    run_rows: list[tuple[str, str, float]],
    judgments: list[tuple[str, str, int]],
) -> None:
    folder = tmp_path_factory.mktemp("trec")
    run_dict: dict[str, dict[str, float]] = {}
    for q, d, s in run_rows:
        run_dict.setdefault(q, {})[d] = max(s, run_dict.get(q, {}).get(d, -np.inf))
    qrels_dict: dict[str, dict[str, int]] = {}
    for q, d, g in judgments:
        qrels_dict.setdefault(q, {})[d] = g  # the file's duplicates: one grade each, below
    lines = [
        f"{q} Q0 {d} {r} {s} t"
        for q, docs in run_dict.items()
        for r, (d, s) in enumerate(docs.items(), 1)
    ]
    run = read_run(write(folder / "run", lines))
    qrels = read_qrels(
        write(
            folder / "qrels",
            [f"{q} 0 {d} {g}" for q, docs in qrels_dict.items() for d, g in docs.items()],
        )
    )
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "No run query matches", UserWarning)
        ev = evaluate(run, qrels, list(MEASURES))
    assert_pytrec_values(ev.per_query, reference(qrels_dict, run_dict), 1e-9)


def test_write_run_and_read_run_keep_opaque_ids(tmp_path: Path) -> None:
    run = pd.DataFrame({"turn_id": ["Q:1", "Q:1"], "doc": [IDS[2], IDS[4]], "score": [2.0, 1.0]})
    target = tmp_path / "run"
    write_run(run, target, tag="exp")
    assert target.read_text(encoding="utf-8").splitlines() == [
        f"Q:1 Q0 {IDS[2]} 1 2.0 exp",
        f"Q:1 Q0 {IDS[4]} 2 1.0 exp",
    ]
    assert read_run(target)["doc"].tolist() == [IDS[2], IDS[4]]


def test_the_clean_and_the_general_reader_give_the_same_frames(tmp_path: Path) -> None:
    """Single spaces take pyarrow's CSV reader, padded lines the general one."""
    run = [f"Q{i % 3} Q0 {d} {i + 1} {i / 3} tag" for i, d in enumerate(IDS)]
    qrels = [f"Q{i % 3} 0 {d} {i - 2}" for i, d in enumerate(IDS)]
    for lines, reader in ((run, read_run), (qrels, read_qrels)):
        clean = reader(write(tmp_path / "clean", lines))
        padded = reader(write(tmp_path / "padded", ["", *[f" {x}\t " for x in lines]]))
        pd.testing.assert_frame_equal(clean, padded)


@pytest.mark.parametrize(
    "line",
    [
        "Q1  FT911-1 2",  # a doubled space where the iteration is missing: 3 fields
        " Q1 FT911-1 2",  # a leading space, the same
        "Q1\t\tFT911-1 2",  # two tabs
    ],
)
def test_a_doubled_separator_never_stands_for_a_missing_field(tmp_path: Path, line: str) -> None:
    """pyarrow's CSV reader would read an empty field there; the empty field sends
    the file to the general reader, which names the line (trec_eval: 3 fields)."""
    path = write(tmp_path / "qrels.txt", ["Q1 0 FT911-2 1", line])
    with pytest.raises(SchemaError) as err:
        read_qrels(path)
    assert err.value.line == 2
    assert "but this one has 3" in err.value.message


def test_the_parse_is_columnar_and_shuffled_ties_take_the_vectorised_sort(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A clean file is read by pyarrow's CSV reader, and a run whose tied scores are in
    arbitrary order is ranked by the fast path's sort, never the exact fallback, with
    pytrec_eval's values."""
    from askkit.metrics import _trec, preparation

    rng = np.random.default_rng(7)
    queries, width = 40, 30
    run_lines, qrels_lines = [], []
    run_dict: dict[str, dict[str, float]] = {}
    qrels_dict: dict[str, dict[str, int]] = {}
    for q in range(queries):
        docs = rng.choice(len(IDS) * 10, width, replace=False)
        for pos, d in enumerate(docs):
            doc, score = f"{IDS[d % len(IDS)]}-{d}", float(rng.integers(0, 4))
            run_lines.append(f"Q{q}\tQ0\t{doc}\t{pos + 1}\t{score}\tsys")
            run_dict.setdefault(f"Q{q}", {})[doc] = score
            if rng.random() < 0.4:
                grade = int(rng.integers(0, 3))
                qrels_lines.append(f"Q{q} 0 {doc} {grade}")
                qrels_dict.setdefault(f"Q{q}", {})[doc] = grade
    clean: list[object] = []
    real_clean = _trec._clean_table
    monkeypatch.setattr(_trec, "_clean_table", lambda *a: clean.append(real_clean(*a)) or clean[-1])

    def no_fallback(*args: object) -> None:
        raise AssertionError("the exact path ran")

    monkeypatch.setattr(preparation, "exact", no_fallback)
    run = read_run(write(tmp_path / "run.txt", run_lines))
    qrels = read_qrels(write(tmp_path / "qrels.txt", qrels_lines))
    assert len(clean) == 2
    assert all(t is not None for t in clean)
    got = evaluate(run, qrels, list(MEASURES)).per_query
    assert_pytrec_values(got, reference(qrels_dict, run_dict), 1e-12)


# --------------------------------------------------------------------------- issue 41


@pytest.mark.parametrize(
    ("what", "line", "message"),
    [
        (
            "qrels",
            '{"id": "q01", "question": "a b", "chunks": []}',
            "a qrels line has 4 whitespace-separated fields (query_id iteration doc grade), "
            "but this one has 7 and looks like JSON (a turn log or a payload): the run and "
            "the qrels files may be swapped",
        ),
        (
            "qrels",
            "q1 Q0 D1 1 2.5 bm25",
            "a qrels line has 4 whitespace-separated fields (query_id iteration doc grade), "
            "but this one has 6 and looks like a TREC run line (query_id Q0 doc rank score "
            "tag): the run and the qrels files may be swapped",
        ),
        (
            "qrels",
            "q1 0 D1 2 extra",
            "a qrels line has 4 whitespace-separated fields (query_id iteration doc grade), "
            "but this one has 5",
        ),
        (
            "run",
            "q1 0 D1 2",
            "a run line has at least 6 whitespace-separated fields (query_id Q0 doc rank score "
            "tag), but this one has 4 and looks like a qrels line (query_id iteration doc "
            "grade): the run and the qrels files may be swapped",
        ),
        (
            "run",
            "query_id\tpath\theading\tgrade",
            "a run line has at least 6 whitespace-separated fields (query_id Q0 doc rank score "
            "tag), but this one has 4 and looks like a qrels line (query_id iteration doc "
            "grade): the run and the qrels files may be swapped",
        ),
        (
            "run",
            "q1 Q0 D1 1",
            "a run line has at least 6 whitespace-separated fields (query_id Q0 doc rank score "
            "tag), but this one has 4 and looks like a qrels line (query_id iteration doc "
            "grade): the run and the qrels files may be swapped",
        ),
        (
            "run",
            "q1 Q0 D1",
            "a run line has at least 6 whitespace-separated fields (query_id Q0 doc rank score "
            "tag), but this one has 3",
        ),
    ],
)
def test_issue41_8_a_line_with_the_wrong_field_count_is_one_sentence(
    tmp_path: Path, what: str, line: str, message: str
) -> None:
    """``expected 4 whitespace-separated fields (...), got 540, got '{"id": ...'``: "got"
    twice, and no word that the two files may be swapped."""
    path = tmp_path / what
    first = "q1 Q0 D0 1 9.0 x" if what == "run" else "q1 0 D0 1"
    path.write_bytes(f"{first}\n{line}\n".encode())
    reader = read_trec_run if what == "run" else read_qrels
    with pytest.raises(SchemaError) as info:
        reader(path)
    error = info.value
    assert (error.file, error.line, error.field, error.value) == (str(path), 2, "line", line)
    assert error.message == message
    assert str(error) == f"{path}:2: line: {message}, got {line!r}"
    assert str(error).count("got") == 1
    lenient = reader(path, strict=False)
    assert lenient.errors["message"].tolist() == [message]
