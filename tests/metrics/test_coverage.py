"""askkit.metrics.coverage: what the judgments cover, and the sentence that names why a
run's ids and the judgments' never meet."""

from __future__ import annotations

import pandas as pd
import pytest

from askkit.metrics import coverage
from askkit.metrics.coverage import no_match_sentence
from tests.conftest import DATA

QRELS = pd.DataFrame(
    {"query_id": ["q1", "q1", "q2"], "path": ["a.md", "b.md", "c.md"], "grade": [1, 3, 2]}
)
NO_MATCH = "No run query matches a judged query: nothing can be scored."


def frame(rows: list[tuple[str, str, float]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["turn_id", "path", "score"])


def test_coverage_on_bundled_data(local_run: pd.DataFrame) -> None:
    cov = coverage(local_run, DATA / "qrels.tsv", k=10)
    assert 0.0 < cov.judged_at_k <= 1.0
    assert set(cov.no_relevant) <= set(cov.per_query.index)
    text = cov.explain()
    assert "Ties" in text
    assert "Missing queries" in text
    assert "<script>" not in cov._repr_html_()


def test_the_paragraph_on_tools_can_be_left_for_one_print(local_run: pd.DataFrame) -> None:
    from askkit.metrics import WHY_TOOLS_DIFFER

    cov = coverage(local_run, DATA / "qrels.tsv", k=10)
    assert cov.explain().endswith(WHY_TOOLS_DIFFER)
    short = cov.explain(why_tools_differ=False)
    assert WHY_TOOLS_DIFFER not in short
    assert cov.explain().startswith(short)


def test_coverage_escapes_html() -> None:
    run = frame([("<script>alert(1)</script>", "a.md", 1.0)])
    cov = coverage(run, QRELS)
    html = cov._repr_html_()
    assert "<script>" not in html
    assert "&lt;script&gt;" in html
    assert cov.run_only == ("<script>alert(1)</script>",)


@pytest.mark.parametrize(
    ("run_ids", "judged_ids", "cause"),
    [
        (["q-starter", "q-acetone", "q-rye", "q-oven"], ["q01", "q02", "q03"], "id schemes"),
        (["Q01", "Q02"], ["q01", "q02"], "differ only in case ('Q01' in the run, 'q01' judged)"),
        (["q1", "q2"], ["q01", "q02"], "zero-padding ('q1' in the run, 'q01' judged)"),
        (["run-q01", "run-q02"], ["q01", "q02"], "prefix"),
        (["q01.run", "q02.run"], ["q01", "q02"], "suffix"),
        (["q-01"], ["q01", "q02"], "separator"),
        (["q7", "q8"], ["q01", "q02"], "one scheme but name different queries"),
    ],
)
def test_no_match_sentence_names_three_ids_and_the_cause(
    run_ids: list[str], judged_ids: list[str], cause: str
) -> None:
    line = no_match_sentence(run_ids, judged_ids)
    assert line.startswith(NO_MATCH)
    assert "\n" not in line
    assert f"Run ids: {', '.join(run_ids[:3])};" in line
    assert f"judged ids: {', '.join(judged_ids[:3])}." in line
    assert run_ids[3:] == [] or run_ids[3] not in line
    assert cause in line.split("Likely cause:")[1]


@pytest.mark.parametrize(
    ("run_ids", "judged_ids"), [(["q01", "x"], ["q01"]), ([], ["q01"]), (["q01"], [])]
)
def test_no_match_sentence_is_empty_when_something_matches_or_a_side_is_empty(
    run_ids: list[str], judged_ids: list[str]
) -> None:
    assert no_match_sentence(run_ids, judged_ids) == ""


def test_coverage_headline_comes_first() -> None:
    cov = coverage(frame([("q-1", "a.md", 1.0)]), QRELS)
    assert cov.headline.startswith(NO_MATCH)
    assert "separator" in cov.headline
    assert cov.explain().split("\n")[0] == cov.headline
    assert "nan" not in cov._repr_html_().lower()
    assert coverage(frame([("q1", "a.md", 1.0)]), QRELS).headline == ""
