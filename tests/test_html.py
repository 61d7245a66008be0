"""Notebook display: static, escaped HTML."""

from __future__ import annotations

import pytest

from askkit import AskSource, ChunkResult, SourceList, Turn
from tests.conftest import load

EVIL = [
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    '<a href="javascript:alert(1)">x</a>',
]


def src(title: str = "T", text: str = "body", path: str = "a.md", ordinal: int = 1) -> AskSource:
    return AskSource.from_chunk(0, ChunkResult(path, title, None, text, "h", 0.5, ordinal))


@pytest.mark.parametrize("evil", EVIL)
def test_source_card_escapes_everything(evil: str) -> None:
    html = src(title=evil, text=evil, path=evil)._repr_html_()
    assert "<script>" not in html
    assert "<img" not in html
    assert "<a href" not in html
    assert "&lt;" in html


@pytest.mark.parametrize("evil", EVIL)
def test_turn_view_escapes_question_and_answer(evil: str) -> None:
    turn = Turn(evil, f"{evil} [1] {evil}", [src(title=evil, text=evil)])
    html = turn._repr_html_()
    assert "<script>" not in html
    assert "<img" not in html
    assert '<a href="javascript' not in html


def test_turn_view_links_citations_and_marks_dangling() -> None:
    job = load("answer_job.json")
    turn = Turn.from_answer("How often?", job["result"])
    html = turn._repr_html_()
    assert html.count('class="cite"') == 4
    assert html.count('class="dangling"') == 2  # the [7] marker and the summary line
    assert "cited with no source: [7]" in html
    anchor = html.split('href="#', 1)[1].split('"', 1)[0]
    assert f'id="{anchor}"' in html  # each link points at its source's row


def test_sources_table_lists_every_source() -> None:
    sources = SourceList([src(ordinal=i) for i in (3, 1, 2)])
    html = sources._repr_html_()
    assert html.count("<tr") == 4
    assert html.index("[3]") < html.index("[1]") < html.index("[2]")


def test_empty_sources() -> None:
    assert "no sources" in SourceList()._repr_html_()
