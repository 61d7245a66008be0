"""The gate's result as JUnit XML, Markdown and HTML: their shape and escaping."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pandas as pd

from askkit.gate import Side, gate
from tests.gate.conftest import QRELS, bundled


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
