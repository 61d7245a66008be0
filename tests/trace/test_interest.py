"""What a trace follows: notes and sections by path and innermost heading."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from askkit.errors import SchemaError
from askkit.trace import Interest, section_id, sections_of
from askkit.wire import ChunkResult


def chunk(path: str, title: str) -> ChunkResult:
    return ChunkResult(
        path=path, title=title, date=None, content="x", hash="h", similarity_score=1.0
    )


def test_sections_of_reads_a_qrels_frame_and_refuses_one_without_paths() -> None:
    qrels = pd.DataFrame({"path": ["a.md", "a.md", "b.md"], "heading": ["A", "A", None]})
    assert sections_of(qrels) == [Interest("a.md", "A"), Interest("b.md")]
    with pytest.raises(SchemaError, match="need a 'path' column"):
        sections_of(pd.DataFrame({"heading": ["A"]}))


def test_a_section_holds_the_chunks_of_its_innermost_heading_only() -> None:
    section = Interest("a.md", "Starter")
    assert section.holds(chunk("a.md", "Bread\x1fStarter"))
    assert not section.holds(chunk("a.md", "Starter\x1fFeeding"))
    assert not section.holds(chunk("b.md", "Bread\x1fStarter"))
    assert Interest("a.md").holds(chunk("a.md", "anything"))
    assert section_id("a.md", "Starter") == section.section == "a.md#Starter"


def test_blank_missing_and_nan_headings_mean_the_whole_note() -> None:
    pairs = [("a.md", ""), ("b.md", None), ("c.md", pd.NA), ("d.md", math.nan)]
    assert [s.heading for s in sections_of(pairs)] == [None, None, None, None]
    assert [s.section for s in sections_of(pairs)] == ["a.md", "b.md", "c.md", "d.md"]
