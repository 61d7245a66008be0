"""TurnView: citations round-trip to the table and the reader."""

from __future__ import annotations

from typing import Any

import pytest

from askkit import AskSource, Turn, VaultPath, read_turn
from askkit.widgets import TurnView
from askkit.widgets._turn_model import answer_pieces, wrap_words
from tests.conftest import DATA


def _flow(view: TurnView) -> list[Any]:
    """The answer's widgets in order, out of the boxes that keep a citation on its line."""
    out: list[Any] = []
    for child in view.answer_box.children:
        nested = "askkit-nobreak" in child._dom_classes
        out.extend(child.children if nested else [child])
    return out


@pytest.fixture
def turn() -> Turn:
    return read_turn(DATA / "answer_job.json", question="How often do I feed the starter?")


def test_answer_pieces_resolve_by_ordinal(turn: Turn) -> None:
    pieces = answer_pieces(turn)
    cites = [(p.kind, p.ordinal) for p in pieces if p.kind in {"cite", "dangling"}]
    assert cites == [("cite", 1), ("cite", 3), ("cite", 2), ("cite", 4), ("dangling", 7)]
    text = "".join(p.text for p in pieces)
    assert text == turn.answer
    assert "projects/sourdough.md" in next(p.title for p in pieces if p.ordinal == 1)


def test_answer_pieces_keep_line_breaks() -> None:
    t = Turn("q", "one [1]\ntwo", [AskSource(VaultPath("a.md"), "A", None, 1.0, "x", 1)])
    kinds = [p.kind for p in answer_pieces(t)]
    assert kinds == ["text", "cite", "break", "text"]


def test_wrap_words() -> None:
    assert wrap_words("") == []
    assert "".join(wrap_words("a b c d e f g h", 3)) == "a b c d e f g h"
    assert wrap_words("supercalifragilistic x", 5) == ["supercalifragilistic ", "x"]


def test_turn_view_structure(turn: Turn) -> None:
    view = TurnView(turn, DATA / "vault")
    assert "How often do I feed the starter?" in view.question_html.value
    assert sorted(view.citation_buttons) == [1, 2, 3, 4]
    assert "[7]" in view.dangling_html.value
    dangling = [c for c in _flow(view) if "askkit-dangling" in c._dom_classes]
    assert len(dangling) == 1
    assert not hasattr(dangling[0], "on_click")
    assert view.sources_view.show_cited
    # the sources by [n], the numbers the answer cites (the payload lists 4, 1, 6, 2, 3)
    assert [s.ordinal for s in turn.sources] == [4, 1, 6, 2, 3]
    shown = view.sources_view.frame["ordinal"].to_numpy()[view.sources_view.positions]
    assert shown.tolist() == [1, 2, 3, 4, 6]
    assert any("by [n]" in getattr(c, "value", "") for c in view.children)


def test_clicking_a_citation_selects_and_reads(turn: Turn) -> None:
    view = TurnView(turn, DATA / "vault")
    view.citation_buttons[3][0].click()
    expected = turn.source_for_citation(3)
    assert view.sources_view.selected == expected
    assert view.reader.source == expected
    assert view.citation_buttons[3][0].button_style == "info"
    assert view.citation_buttons[1][0].button_style == ""
    assert view.reader.located is not None
    assert "acetone" in view.reader.note_html.value
    assert view.reader.query == turn.question
    # a row click updates the citation highlight too
    position = next(i for i, s in enumerate(turn.sources) if s.ordinal == 4)
    view.sources_view.select(position)
    assert view.citation_buttons[4][0].button_style == "info"
    assert view.citation_buttons[3][0].button_style == ""


def test_open_dangling_citation_returns_none(turn: Turn) -> None:
    view = TurnView(turn)
    assert view.open_citation(7) is None
    assert view.reader.source is None


def test_turn_view_rejects_other_input() -> None:
    with pytest.raises(TypeError):
        TurnView([])  # type: ignore[arg-type]


def test_issue40_10_a_citation_and_the_punctuation_after_it_stay_on_one_line() -> None:
    """``[2].`` never wraps as ``[2]`` / ``.``: the chip and what is written against it
    share one box that does not wrap; a space before a chip still lets the line break."""
    from askkit.widgets._turn_model import answer_groups

    sources = [AskSource(VaultPath("a.md"), "A", None, 0.9, "x", n) for n in (1, 2, 3)]
    turn = Turn("q?", "Point 1 [1]. Point 2 [2][3], then [9]); done", sources)
    pieces = answer_pieces(turn)
    assert "".join(p.text for p in pieces) == turn.answer
    groups = [[p.text for p in group] for group in answer_groups(pieces)]
    assert groups == [
        ["Point 1 "],
        ["[1]", "."],
        [" Point 2 "],
        ["[2]", "[3]", ","],
        [" then "],
        ["[9]", ");"],
        [" done"],
    ]
    view = TurnView(turn)
    boxes = [c for c in view.answer_box.children if "askkit-nobreak" in c._dom_classes]
    assert len(boxes) == 3
    first = boxes[0]
    assert first.layout.flex_flow == "row nowrap"
    assert first.children[0] is view.citation_buttons[1][0]
    assert first.children[1].value == "."
    assert [c.description for c in boxes[1].children[:2]] == ["[2]", "[3]"]
    assert "askkit-dangling" in boxes[2].children[0]._dom_classes  # a dangling one too
    assert view.answer_box.layout.flex_flow == "row wrap"  # the answer itself still wraps
