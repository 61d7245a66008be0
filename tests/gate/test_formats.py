"""The gate's result as JUnit XML, Markdown and HTML: their shape and escaping."""

from __future__ import annotations

import dataclasses
import json
import re
import xml.etree.ElementTree as ET

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from askkit._outputs import MARKS
from askkit.errors import SchemaError
from askkit.gate import (
    GateResult,
    LostDocument,
    MeasureResult,
    RegressedQuery,
    Side,
    SideReport,
    gate,
)
from askkit.gate.formats import _xml
from tests.gate.conftest import QRELS, bundled
from tests.strategies import hostile_ids


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


# --------------------------------------------------------------------------- hostile ids


def _pipes(row: str) -> int:
    """The ``|`` of a Markdown row that are not escaped (an even run of backslashes before)."""
    return len(re.findall(r"(?<!\\)(?:\\\\)*\|", row))


@st.composite
def hostile_results(draw: st.DrawFn) -> GateResult:
    """A failed gate result whose every piece of user text is a hostile id."""
    ids = draw(st.lists(hostile_ids, min_size=1, max_size=6, unique=True))
    regressed = tuple(
        RegressedQuery(
            query_id=qid,
            deltas={"ndcg@10": -0.5, "mrr": -0.25},
            lost=tuple(
                LostDocument(doc=doc, grade=2, base_rank=1, new_rank=None, stage="cut", detail=doc)
                for doc in draw(st.lists(hostile_ids, max_size=2))
            ),
        )
        for qid in ids
    )
    measures = tuple(
        MeasureResult(name, 0.5, 0.25, -0.25, -0.4, -0.1, 0.01, 0.02, 0, 1, 3, 0.2, True, False)
        for name in ("ndcg@10", "mrr")
    )
    provenance = {"file": draw(hostile_ids), "kind": "TREC run"}
    base = SideReport(draw(hostile_ids), 4, 0, 0, 1.0, provenance)
    new = SideReport("NEW", 4, 0, 0, 0.5, {"file": draw(hostile_ids)})
    return GateResult(
        base,
        new,
        measures,
        regressed,
        "randomization",
        0.05,
        0.0,
        "note",
        10,
        0,
        1000,
        len(ids),
        problems=(draw(hostile_ids),),
        notes=(draw(hostile_ids),),
    )


@settings(max_examples=300, deadline=None)
@given(hostile_results())
def test_hardening_39_6_markdown_keeps_one_table_row_per_query_whatever_the_ids(
    result: GateResult,
) -> None:
    md = result.to_markdown(max_queries=100)
    assert md.splitlines() == md.split("\n")[:-1]  # no line boundary but the report's own LF
    assert md.encode("utf-8")  # writable: no lone surrogate left
    lines = md.split("\n")
    assert [i for i, line in enumerate(lines) if line.startswith("#")] == [1]
    start = lines.index("| query | deltas | relevant documents that left the top k |") + 2
    rows = lines[start : start + len(result.regressed_queries)]
    assert all(row.startswith("| ") and _pipes(row) == 4 for row in rows)
    assert lines[start + len(result.regressed_queries)] == ""  # nothing more in the table
    assert "<" not in md.replace("<!-- askkit diff -->", "").replace("<br>", "").replace(
        "<details><summary>", ""
    ).replace("</summary>", "").replace("</details>", "")


@settings(max_examples=300, deadline=None)
@given(hostile_results())
def test_hardening_39_5_junit_parses_back_whatever_the_ids(result: GateResult) -> None:
    xml = result.to_junit()
    root = ET.fromstring(xml.encode("utf-8"))  # well-formed XML 1.0, UTF-8
    (suite,) = root.findall("testsuite")
    properties = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert properties[_xml(f"{result.base.name}.file")] == _xml(result.base.provenance["file"])
    out = suite.find("system-out")
    assert out is not None
    assert out.text == _xml(result.to_text())  # a CR too: written as &#13;, read back as CR
    assert [c.get("name") for c in suite.findall("testcase")] == ["ndcg@10", "mrr"]


def _texts(value: object) -> list[str]:
    """Every text inside a result (its ids, files, details), recursively."""
    if isinstance(value, str):
        return [value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [t for f in dataclasses.fields(value) for t in _texts(getattr(value, f.name))]
    if isinstance(value, dict):
        return [t for k, v in value.items() for t in (*_texts(k), *_texts(v))]
    if isinstance(value, list | tuple):
        return [t for item in value for t in _texts(item)]
    return []


def test_hardening_39_two_lone_surrogates_are_refused_not_joined() -> None:
    """JSON writes a lone high surrogate followed by a lone low one as it writes one
    astral character, and reads that character back: refused, naming the field."""
    qrels = pd.DataFrame({"query_id": ["q1", "q2"], "path": ["a", "b"], "grade": 1})
    base = pd.DataFrame({"turn_id": ["q1", "q2"], "path": ["a", "b"], "score": 1.0})
    result = gate(base, base.assign(path=["x", "b"]), qrels, ["mrr"], test="t-test")
    joined = RegressedQuery(query_id="q\ud800\udfff", deltas={"mrr": -1.0}, lost=())
    result = dataclasses.replace(result, regressed_queries=(joined,))
    with pytest.raises(SchemaError, match="lone high surrogate") as info:
        result.to_json()
    assert info.value.field == "regressed_queries[0].query_id"


@settings(max_examples=300, deadline=None)
@given(hostile_results())
def test_hardening_39_json_reads_back_exactly_whatever_the_ids(result: GateResult) -> None:
    joined = re.compile("[\ud800-\udbff][\udc00-\udfff]")
    if any(joined.search(text) for text in _texts(result)):  # JSON would give one character
        with pytest.raises(SchemaError, match="lone high surrogate followed by a lone low"):
            result.to_json()
        return
    text = result.to_json()
    assert GateResult.from_json(text) == result
    assert GateResult.from_json(result.to_json(indent=None)) == result
    assert MARKS["json"].match(text.encode("ascii"))  # the mark: the first key


def test_hardening_39_5_an_id_holding_u_ffff_is_replaced_in_junit() -> None:
    qrels = pd.DataFrame({"query_id": ["q\uffff1", "q2"], "path": ["a", "b"], "grade": [1, 1]})
    base = pd.DataFrame({"turn_id": ["q\uffff1", "q2"], "path": ["a", "b"], "score": [1.0, 1.0]})
    new = base.assign(path=["x", "b"])
    result = gate(Side(base, {"file": "run\ufffe.trec"}), new, qrels, ["mrr"], test="t-test")
    root = ET.fromstring(result.to_junit().encode("utf-8"))
    out = root.find("testsuite/system-out")
    assert out is not None
    assert out.text is not None
    assert "q\ufffd1" in out.text
    assert "\uffff" not in result.to_junit()
    assert {p.get("value") for p in root.iter("property")} >= {"run\ufffd.trec"}


def test_hardening_39_6_a_query_id_with_cr_or_u2028_injects_no_markdown() -> None:
    ids = ["q1\r# INJECTED heading", "q2\u2028# INJECTED", "q3\n| x | y | z |", "q4`|`"]
    qrels = pd.DataFrame({"query_id": ids, "path": ["a"] * 4, "grade": [1] * 4})
    base = pd.DataFrame({"turn_id": ids, "path": ["a"] * 4, "score": [1.0] * 4})
    new = base.assign(path=["x", "y", "z", "w"])
    md = gate(base, new, qrels, ["mrr"]).to_markdown()
    assert not any(line.startswith("# INJECTED") for line in md.splitlines())
    rows = [line for line in md.split("\n") if line.startswith("| q") and "| deltas |" not in line]
    assert len(rows) == 4
    assert all(_pipes(row) == 4 for row in rows)
    assert "q4\\`\\|\\`" in md


# --------------------------------------------------------------------------- issue 41


def test_issue41_4_every_format_states_the_level() -> None:
    for level in ("note", "section"):
        result = gate(bundled(), bundled(), QRELS, ["ndcg@10"], level=level)
        said = f"37 queries scored at {level} level"
        assert said in result.to_text()
        assert said in result.to_markdown()
        assert json.loads(result.to_json())["level"] == level
        props = ET.fromstring(result.to_junit()).iter("property")
        assert {p.get("name"): p.get("value") for p in props}["level"] == level


def test_issue41_8_an_empty_gate_json_is_said_to_be_empty() -> None:
    for text in ("", "  \n"):
        with pytest.raises(SchemaError, match=r"^json: empty: expected the JSON askkit diff"):
            GateResult.from_json(text)
