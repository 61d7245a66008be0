"""The regression gate: its verdict, its statistics against references, its formats."""

from __future__ import annotations

import hashlib
import json
import math
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from askkit.errors import SchemaError, UsageError
from askkit.frame import sources_frame
from askkit.gate import POWER, GateResult, Side, file_sha256, gate, read_side
from askkit.metrics import evaluate, read_qrels, write_run
from tests.conftest import DATA

QRELS = DATA / "qrels.tsv"
RUN = DATA / "run.jsonl"


def bundled() -> pd.DataFrame:
    return sources_frame(RUN)


def pushed_down(frame: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """The run with ten unjudged notes put above everything in every third answered query.

    The relevant notes those queries had in their top 10 fall to ranks 11 and below.
    """
    ev = evaluate(frame, QRELS, ["recall@10"])
    answered = ev.per_query.index[ev.per_query["recall@10"].to_numpy() > 0]
    chosen = sorted(answered)[::3]
    top = frame.groupby("turn_id")["score"].max()
    filler = pd.DataFrame(
        {
            "turn_id": np.repeat(chosen, 10),
            "path": [f"filler/{q}-{i}.md" for q in chosen for i in range(10)],
            "heading": "",
            "match_heading": "",
            "title": "Filler",
            "score": np.repeat(top.loc[chosen].to_numpy() + 10.0, 10),
        }
    )
    keep = frame[["turn_id", "path", "heading", "match_heading", "title", "score"]]
    return pd.concat([keep, filler], ignore_index=True), chosen


@pytest.fixture(scope="module")
def regression() -> tuple[pd.DataFrame, list[str]]:
    return pushed_down(bundled())


def test_a_run_against_itself_passes() -> None:
    result = gate(RUN, RUN, QRELS)
    assert result.passed
    assert result.exit_status == 0
    assert [m.measure for m in result.measures] == ["ndcg@10", "recall@10"]
    assert all(m.delta == 0.0 and m.p == 1.0 and m.losses == 0 for m in result.measures)
    assert result.regressions == ()
    assert result.regressed_queries == ()
    assert result.queries == 37
    assert result.verdict.startswith("PASS")


def test_relevant_notes_pushed_down_in_a_third_of_the_queries_fail_and_are_listed(
    regression: tuple[pd.DataFrame, list[str]],
) -> None:
    new, chosen = regression
    assert len(chosen) >= 10
    result = gate(bundled(), new, QRELS)
    assert not result.passed
    assert result.exit_status == 1
    assert {m.measure for m in result.regressions} == {"ndcg@10", "recall@10"}
    listed = [q.query_id for q in result.regressed_queries]
    assert set(listed) == set(chosen)
    worst = [min(q.deltas.values()) for q in result.regressed_queries]
    assert worst == sorted(worst)  # worst first
    judged = read_qrels(QRELS)
    for q in result.regressed_queries:
        assert q.lost, q.query_id
        relevant = set(judged.loc[judged["query_id"] == q.query_id, "path"])
        for d in q.lost:
            assert d.doc in relevant
            assert d.base_rank <= 10
            assert d.new_rank is not None
            assert d.new_rank > 10
            assert d.stage == "top k"
            assert d.grade >= 1
    text = result.to_text(max_queries=100)
    assert text.startswith("FAIL: ndcg@10, recall@10 dropped significantly")
    assert all(f"  {q}: " in text for q in chosen)
    assert "left the top 10" in text


def test_at_section_level_the_pushed_down_sections_are_listed(
    regression: tuple[pd.DataFrame, list[str]],
) -> None:
    new, chosen = regression
    result = gate(bundled(), new, QRELS, level="section")
    assert result.exit_status == 1
    listed = {q.query_id for q in result.regressed_queries}
    assert listed <= set(chosen)
    assert len(listed) >= len(chosen) // 2
    docs = [d.doc for q in result.regressed_queries for d in q.lost]
    assert docs
    assert all("#" in d or d.endswith(".md") for d in docs)
    assert any("#" in d for d in docs)  # sections, not notes


def test_improvements_never_fail(regression: tuple[pd.DataFrame, list[str]]) -> None:
    new, _ = regression
    result = gate(new, bundled(), QRELS)
    assert result.passed
    assert result.exit_status == 0
    assert len(result.improvements) == 2
    assert result.regressions == ()


def test_a_drop_smaller_than_min_delta_passes(regression: tuple[pd.DataFrame, list[str]]) -> None:
    new, _ = regression
    drop = -min(m.delta for m in gate(bundled(), new, QRELS).measures)
    assert gate(bundled(), new, QRELS, min_delta=drop + 0.01).passed
    assert not gate(bundled(), new, QRELS, min_delta=drop - 0.01).passed


def per_query(frame: pd.DataFrame) -> np.ndarray:
    return evaluate(frame, QRELS, ["ndcg@10", "recall@10"]).per_query.to_numpy()


def holm_by_hand(p: list[float]) -> list[float]:
    """Holm's step-down: sort ascending, multiply the i-th (0-based) by m - i, keep monotone."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    running = 0.0
    for step, i in enumerate(order):
        running = max(running, (m - step) * p[i])
        out[i] = min(1.0, running)
    return out


def test_t_test_p_values_and_intervals_equal_scipys(
    regression: tuple[pd.DataFrame, list[str]],
) -> None:
    new, _ = regression
    result = gate(bundled(), new, QRELS, test="t-test")
    base_values, new_values = per_query(bundled()), per_query(new)
    d = new_values - base_values
    n = len(d)
    for j, m in enumerate(result.measures):
        ref = stats.ttest_rel(new_values[:, j], base_values[:, j])
        assert m.p == pytest.approx(float(ref.pvalue), rel=1e-12)
        ci = stats.t.interval(0.95, n - 1, loc=d[:, j].mean(), scale=stats.sem(d[:, j]))
        assert (m.ci_low, m.ci_high) == pytest.approx(ci, rel=1e-12)
        mde = (stats.t.ppf(1 - 0.05 / 4, n - 1) + stats.t.ppf(POWER, n - 1)) * stats.sem(d[:, j])
        assert m.mde == pytest.approx(mde, rel=1e-12)
        assert (m.wins, m.ties, m.losses) == (
            int((d[:, j] > 0).sum()),
            int((d[:, j] == 0).sum()),
            int((d[:, j] < 0).sum()),
        )
    expected = holm_by_hand([m.p for m in result.measures])
    assert [m.p_holm for m in result.measures] == pytest.approx(expected, rel=1e-12)


def test_holm_equals_a_hand_computation() -> None:
    from askkit.compare import holm

    p = [0.01, 0.04, 0.03, 0.2, 0.005]
    assert holm(np.array(p)).tolist() == pytest.approx(holm_by_hand(p))
    # by hand: sorted 0.005*5, 0.01*4, 0.03*3, 0.04*2 -> 0.09 (monotone), 0.2*1 -> 0.2
    assert holm(np.array(p)).tolist() == pytest.approx([0.04, 0.09, 0.09, 0.2, 0.025])


def randomization_reference(d: np.ndarray, resamples: int, seed: int) -> list[float]:
    """Random bytes, one per eight queries, bit j (least significant first) flipping query
    8g + j (set: sign kept), drawn as one (resamples x groups) matrix; counted resample by
    resample, query by query."""
    rng = np.random.default_rng(seed)
    groups = -(-len(d) // 8)
    flips = rng.integers(0, 256, size=(resamples, groups), dtype=np.uint8)
    bits = np.unpackbits(flips, axis=1, bitorder="little")[:, : len(d)]
    out = []
    for j in range(d.shape[1]):
        observed = abs(d[:, j].mean())
        hits = 0
        for r in range(resamples):
            total = sum(d[i, j] if bits[r, i] else -d[i, j] for i in range(len(d)))
            hits += abs(total / len(d)) >= observed - 1e-12
        out.append((1 + hits) / (1 + resamples))
    return out


def bootstrap_reference(d: np.ndarray, resamples: int, seed: int) -> list[float]:
    """Queries drawn with replacement as one matrix; deltas shifted to mean 0 (the null)."""
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(d), size=(resamples, len(d)))
    out = []
    for j in range(d.shape[1]):
        observed = abs(d[:, j].mean())
        centered = d[:, j] - d[:, j].mean()
        hits = sum(abs(centered[picks[r]].mean()) >= observed - 1e-12 for r in range(resamples))
        out.append((1 + hits) / (1 + resamples))
    return out


@pytest.mark.parametrize(
    ("test", "reference"),
    [("randomization", randomization_reference), ("bootstrap", bootstrap_reference)],
)
def test_resampling_p_values_equal_a_reference_with_the_same_seed(
    regression: tuple[pd.DataFrame, list[str]], test: str, reference: object
) -> None:
    new, chosen = regression
    # a weaker change (only a few queries) so the p-values are not all at their floor
    few = new[~new["turn_id"].isin(chosen[3:]) | ~new["path"].str.startswith("filler/")]
    d = per_query(few) - per_query(bundled())
    result = gate(bundled(), few, QRELS, test=test, resamples=2000, seed=7)  # type: ignore[arg-type]
    expected = reference(d, 2000, 7)  # type: ignore[operator]
    assert [m.p for m in result.measures] == pytest.approx(expected, rel=1e-12)
    assert 1 / 2001 < max(expected) < 1.0
    again = gate(bundled(), few, QRELS, test=test, resamples=2000, seed=7)  # type: ignore[arg-type]
    assert again == result


def test_runs_over_different_queries_are_refused_unless_partial(
    regression: tuple[pd.DataFrame, list[str]],
) -> None:
    frame = bundled()
    fewer = frame[~frame["turn_id"].isin(["q01", "q02", "q03"])]
    with pytest.raises(UsageError, match=r"BASE lacks 0 and NEW lacks 3.*--allow-partial"):
        gate(frame, fewer, QRELS)
    result = gate(frame, fewer, QRELS, allow_partial=True)
    assert result.queries == 34
    assert result.new.lacks == 3
    assert result.base.lacks == 0
    assert any("partial comparison on 34 queries" in n for n in result.notes)
    extra = pd.concat([frame, frame[frame["turn_id"] == "q01"].assign(turn_id="zz")])
    with pytest.raises(UsageError, match="NEW 1 queries the qrels do not judge"):
        gate(frame, extra, QRELS)
    with pytest.raises(UsageError, match="no judged query is answered by both"):
        gate(frame, frame.assign(turn_id="x" + frame["turn_id"]), QRELS, allow_partial=True)


def test_an_unjudged_top_k_fails_with_max_unjudged_and_is_noted_without(
    regression: tuple[pd.DataFrame, list[str]],
) -> None:
    new, _chosen = regression
    result = gate(bundled(), new, QRELS)
    share = result.new.judged_share
    assert result.base.judged_share > share  # the filler is unjudged
    top = new.sort_values("score", ascending=False).groupby("turn_id").head(10)
    top_notes = top.drop_duplicates(["turn_id", "path"])
    judged = read_qrels(QRELS)
    keys = set(zip(judged["query_id"], judged["path"], strict=True))
    expected = np.mean(
        [k in keys for k in zip(top_notes["turn_id"], top_notes["path"], strict=True)]
    )
    assert share == pytest.approx(expected)
    assert any("unjudged" in n for n in result.notes)  # mostly unjudged: a note
    strict = gate(bundled(), new, QRELS, max_unjudged=0.5)
    assert strict.problems
    assert "unjudged" in strict.problems[0]
    assert strict.exit_status == 1
    same = gate(bundled(), bundled(), QRELS, max_unjudged=0.5)
    assert not same.passed  # the bundled run's top 10 is mostly unjudged too
    assert gate(bundled(), bundled(), QRELS, max_unjudged=0.9).passed


def test_provenance_records_the_run_files_sha256(tmp_path: Path) -> None:
    write_run(bundled(), tmp_path / "base.trec")
    result = gate(tmp_path / "base.trec", RUN, QRELS)
    sha = hashlib.sha256((tmp_path / "base.trec").read_bytes()).hexdigest()
    assert result.base.provenance == {
        "kind": "TREC run",
        "file": str(tmp_path / "base.trec"),
        "sha256": sha,
    }
    assert result.new.provenance["kind"] == "turn log"
    assert result.new.provenance["sha256"] == file_sha256(RUN)
    assert sha in result.to_text()
    assert sha in result.to_markdown()
    assert sha in result.to_junit()
    assert read_side(RUN).provenance["sha256"] == file_sha256(RUN)


def test_json_round_trips(regression: tuple[pd.DataFrame, list[str]]) -> None:
    new, _ = regression
    result = gate(Side(bundled(), {"kind": "test"}), new, QRELS, test="bootstrap", resamples=500)
    text = result.to_json()
    back = GateResult.from_json(text)
    assert back == result
    assert back.passed is False
    assert back.regressions == result.regressions
    data = json.loads(text)
    assert data["exit_status"] == 1
    assert data["format"] == "askkit diff"
    with pytest.raises(SchemaError, match="not an askkit diff result"):
        GateResult.from_json('{"format": "other"}')
    with pytest.raises(SchemaError, match="missing or unknown field"):
        GateResult.from_json('{"format": "askkit diff"}')


def test_junit_has_the_schema_shape(regression: tuple[pd.DataFrame, list[str]]) -> None:
    new, _ = regression
    result = gate(bundled(), new, QRELS, ["ndcg@10", "recall@10", "mrr"], max_unjudged=0.95)
    root = ET.fromstring(result.to_junit())
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == ["ndcg@10", "recall@10", "mrr", "judged share"]
    assert all(c.get("classname") and c.get("time") is not None for c in cases)
    failing = [c.get("name") for c in cases if c.find("failure") is not None]
    assert failing == [m.measure for m in result.regressions]
    assert suite.get("tests") == "4"
    assert suite.get("failures") == str(len(failing))
    for failure in suite.iter("failure"):
        assert failure.get("message")
        assert failure.get("type") == "regression"
    names = {p.get("name") for p in suite.iter("property")}
    assert {"BASE.kind", "NEW.kind"} <= names
    assert suite.find("system-out") is not None


def test_markdown_escapes_what_the_files_hold() -> None:
    qrels = pd.DataFrame({"query_id": ["q|<b>"] * 2, "path": ["a", "b"], "grade": [1, 1]})
    qrels = pd.concat([qrels, qrels.assign(query_id="q2")])
    base = pd.DataFrame(
        {"turn_id": ["q|<b>", "q|<b>", "q2"], "path": ["a", "b", "a"], "score": [2.0, 1.0, 1.0]}
    )
    new = base.assign(path=["x", "y", "a"])
    result = gate(base, new, qrels, ["recall@10"], test="t-test")
    md = result.to_markdown()
    assert md.startswith("<!-- askkit diff -->")
    assert "<b>" not in md
    assert "q\\|&lt;b&gt;" in md
    assert "| measure | base | new | delta |" in md


def test_bad_options_are_usage_errors() -> None:
    for kwargs in (
        {"alpha": 0.0},
        {"alpha": 1.5},
        {"min_delta": -0.1},
        {"min_delta": math.nan},
        {"resamples": 0},
        {"test": "z-test"},
        {"k": 0},
        {"max_unjudged": 2.0},
    ):
        with pytest.raises(UsageError):
            gate(RUN, RUN, QRELS, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(SchemaError, match="not a measure name"):
        gate(RUN, RUN, QRELS, ["ndcg@ten"])


def test_html_is_escaped_and_the_frame_holds_every_measure() -> None:
    qrels = pd.DataFrame({"query_id": ["q1", "q2"], "path": ["<i>a", "b"], "grade": [1, 1]})
    base = pd.DataFrame({"turn_id": ["q1", "q2"], "path": ["<i>a", "b"], "score": [1.0, 1.0]})
    result = gate(Side(base, {"kind": "<script>x</script>"}), base, qrels, ["mrr", "ndcg@10"])
    page = result._repr_html_()
    assert "<script>" not in page
    assert "&lt;script&gt;" in page
    frame = result.to_frame()
    assert frame.index.tolist() == ["mrr", "ndcg@10"]
    assert frame.loc["mrr", "p"] == 1.0


def test_large_runs_prepared_in_two_threads_give_the_same_result(
    regression: tuple[pd.DataFrame, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    import askkit.gate

    new, _ = regression
    one_by_one = gate(bundled(), new, QRELS)
    monkeypatch.setattr(askkit.gate, "_THREADED_ROWS", 0)
    assert gate(bundled(), new, QRELS) == one_by_one
