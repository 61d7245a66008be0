"""askkit.metrics.ids: the document ids metrics compare, at note and section level,
and ids encoded to stay one TREC column."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from askkit.errors import SchemaError
from askkit.metrics.ids import decode_id, doc_ids, encode_id, qrels_doc_ids
from askkit.metrics.qrels import read_qrels

QRELS = pd.DataFrame(
    {"query_id": ["q1", "q1", "q2"], "path": ["a.md", "b.md", "c.md"], "grade": [1, 3, 2]}
)


@given(st.lists(st.text(alphabet=st.sampled_from("a%20 \t\n\r\x0b\x0c#é"), max_size=8)))
def test_encoded_ids_are_one_trec_column_and_decode_back(ids: list[str]) -> None:
    encoded = encode_id(pd.Series(ids, dtype="str"))
    assert not encoded.str.contains(r"\s", regex=True).any()
    assert decode_id(encoded).tolist() == ids


def test_doc_ids_at_note_and_section_level() -> None:
    run = pd.DataFrame(
        {
            "path": ["a.md", "j/2026-04-21.md", "b.md", "c.md"],
            "title": [" A\x1fBake log\x1f ", "2026-04-21", "B \u203a C\x1fD \u203a E", None],
            "match_heading": ["x", "y", "z", "From match"],
        }
    )
    assert doc_ids(run, "note").tolist() == ["a.md", "j/2026-04-21.md", "b.md", "c.md"]
    assert doc_ids(run, "section").tolist() == [
        "a.md#Bake log",  # trimmed, then the last non-empty segment
        "j/2026-04-21.md#2026-04-21",
        "b.md#D \u203a E",  # a heading may hold the display separator
        "c.md#From match",  # no title: the frame's match_heading
    ]
    only_match = run.drop(columns="title")
    assert doc_ids(only_match, "section").tolist()[0] == "a.md#x"
    given_doc = pd.DataFrame({"doc": ["x.md#H"], "path": ["ignored.md"]})
    assert doc_ids(given_doc, "note").tolist() == ["x.md#H"]


def test_doc_ids_say_which_column_is_missing() -> None:
    with pytest.raises(SchemaError, match="no 'path'"):
        doc_ids(pd.DataFrame({"title": ["A"]}), "note")
    with pytest.raises(SchemaError, match="'title' or 'match_heading'"):
        doc_ids(pd.DataFrame({"path": ["a.md"]}), "section")
    with pytest.raises(ValueError, match="level must be"):
        doc_ids(pd.DataFrame({"path": ["a.md"]}), "page")  # type: ignore[arg-type]


def test_qrels_doc_ids() -> None:
    qrels = read_qrels(QRELS.assign(heading=["H", "", "X"]))
    assert qrels_doc_ids(qrels, "note").tolist() == ["a.md", "b.md", "c.md"]
    assert qrels_doc_ids(qrels, "section").tolist() == ["a.md#H", "b.md", "c.md#X"]
    with pytest.raises(ValueError, match="level must be"):
        qrels_doc_ids(qrels, "page")  # type: ignore[arg-type]
