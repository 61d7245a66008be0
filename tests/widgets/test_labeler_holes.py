"""Labeler over a holes file (issue 42): walk the holes a gate wrote, grade each one under
its own query id, path and heading; a hole whose note or heading is gone says so."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from askkit.errors import UsageError
from askkit.gate import Hole, write_holes
from askkit.metrics import read_qrels
from askkit.vault import Vault
from askkit.widgets import Labeler, SourceReader, read_queries
from askkit.widgets._holes_model import hole_view
from askkit.widgets._qrels import load_judgments, load_questions, questions_path
from tests.conftest import DATA
from tests.corpora import corpus

SOURDOUGH = "projects/sourdough.md"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """A copy of the bundled vault (a test deletes a note from it)."""
    return Path(shutil.copytree(DATA / "vault", tmp_path / "vault"))


def hole(qid: str, path: str, heading: str, rank: int, question: str = "") -> Hole:
    doc = f"{path}#{heading}" if heading else path
    return Hole(qid, path, heading, doc, "BASE, NEW", rank, "ndcg@10", question)


def holes_file(tmp_path: Path, holes: list[Hole]) -> Path:
    target = tmp_path / "holes.tsv"
    write_holes(holes, target)
    return target


def test_issue42_grades_two_holes_into_the_judgments_file(tmp_path: Path, vault: Path) -> None:
    holes = holes_file(
        tmp_path,
        [
            hole("q01", SOURDOUGH, "Feeding schedule", 1, "How often do I feed the starter?"),
            hole("q01", SOURDOUGH, "Discard", 3, "How often do I feed the starter?"),
            hole("q02", SOURDOUGH, "Bake log", 2),
        ],
    )
    qrels = tmp_path / "my-qrels.tsv"
    lab = Labeler.from_holes(holes, vault, qrels)
    assert lab.reader in lab.children  # the reader it opened is shown with it
    assert lab.hole_index == 0
    assert "hole 1 of 3" in lab.hole_html.value
    assert "How often do I feed the starter?" in lab.question_html.value
    assert lab.reader.source is not None
    assert lab.reader.section is not None
    assert lab.reader.sections[lab.reader.section].label.endswith("Feeding schedule")
    assert lab.query_id_box.disabled
    assert lab.prev_hole_button.disabled
    lab.grade_buttons[3].click()
    lab.keys_box.value = "n"  # the keys walk the holes
    assert (lab.hole_index, lab.query_id) == (1, "q01")
    assert lab.reader.sections[lab.reader.section or 0].label.endswith("Discard")
    lab.keys_box.value = "1"
    lab.next_hole_button.click()
    assert "hole 3 of 3" in lab.hole_html.value
    assert lab.question == "q02"  # no question known: its id
    assert lab.next_hole_button.disabled
    assert read_qrels(qrels).values.tolist() == [
        ["q01", SOURDOUGH, "Feeding schedule", 3],
        ["q01", SOURDOUGH, "Discard", 1],
    ]
    assert "2 judged" in lab.hole_html.value
    assert load_questions(questions_path(qrels)) == {"q01": "How often do I feed the starter?"}
    lab.prev_hole_button.click()
    lab.prev_hole_button.click()
    assert lab.current_grade() == 3
    assert lab.grade_buttons[3].button_style == "success"
    # a Labeler opened later shows what is judged already
    again = Labeler.from_holes(holes, vault, qrels)
    assert again.current_grade() == 3
    assert "2 judged" in again.hole_html.value
    assert repr(again).endswith("hole 1 of 3>")


def test_issue42_questions_come_from_the_file_then_queries_then_the_id(
    tmp_path: Path, vault: Path
) -> None:
    holes = holes_file(
        tmp_path, [hole("q01", SOURDOUGH, "Discard", 1, "mine"), hole("q02", SOURDOUGH, "", 2)]
    )
    lab = Labeler.from_holes(holes, vault, tmp_path / "q.tsv", queries=DATA / "queries.tsv")
    assert lab.question == "mine"
    lab.move(1)
    assert lab.question == read_queries(DATA / "queries.tsv")["q02"]
    assert lab.grade(2)
    assert load_questions(questions_path(tmp_path / "q.tsv")) == {}  # the user's own id


def test_issue42_a_missing_note_says_so_and_is_skipped(tmp_path: Path, vault: Path) -> None:
    (vault / "projects" / "sourdough.md").unlink()
    holes = holes_file(
        tmp_path,
        [hole("q01", SOURDOUGH, "Discard", 1), hole("q01", "homelab/nas.md", "", 2)],
    )
    qrels = tmp_path / "q.tsv"
    lab = Labeler.from_holes(holes, vault, qrels)
    assert lab.hole is not None
    assert "not in the vault" in lab.hole.problem
    assert "not in the vault" in lab.hole_html.value
    assert "cannot be graded" in lab.hole_html.value
    assert all(b.disabled for b in lab.grade_buttons)
    assert not lab.grade(2)
    assert "not saved" in lab.status_html.value
    assert not qrels.exists()
    lab.move(1)  # skipped, not dropped: it is still hole 1 of 2
    assert "hole 2 of 2" in lab.hole_html.value
    assert lab.grade(0)
    assert load_judgments(qrels) == {("q01", "homelab/nas.md", ""): 0}


def test_issue42_a_gone_heading_shows_the_note_and_says_so(tmp_path: Path, vault: Path) -> None:
    holes = holes_file(tmp_path, [hole("q01", SOURDOUGH, "<b>Renamed</b> & gone", 1)])
    lab = Labeler.from_holes(holes, vault, tmp_path / "q.tsv")
    assert lab.hole is not None
    assert "no longer has a section" in lab.hole.problem
    assert "&lt;b&gt;Renamed&lt;/b&gt; &amp; gone" in lab.hole_html.value
    assert "<b>Renamed" not in lab.hole_html.value + lab.status_html.value
    assert lab.reader.note_text is not None  # the note is open, from the top
    assert all(b.disabled for b in lab.grade_buttons)


def test_issue42_a_note_level_hole_is_the_whole_note(tmp_path: Path, vault: Path) -> None:
    holes = holes_file(tmp_path, [hole("q01", SOURDOUGH, "", 4, "sourdough?")])
    qrels = tmp_path / "q.tsv"
    lab = Labeler.from_holes(holes, vault, qrels)
    assert lab.hole is not None
    assert lab.hole.problem == ""
    note = lab.reader.note_text
    assert note is not None
    assert lab.reader.located == (0, len(note))
    assert lab.key() == ("q01", SOURDOUGH, "")
    lab.keys_box.value = "2"
    assert read_qrels(qrels).values.tolist() == [["q01", SOURDOUGH, "", 2]]


def test_issue42_an_empty_holes_file_has_nothing_to_grade(tmp_path: Path, vault: Path) -> None:
    lab = Labeler.from_holes(holes_file(tmp_path, []), vault, tmp_path / "q.tsv")
    assert lab.hole is None
    assert "no holes" in lab.hole_html.value
    assert not lab.grade(1)
    lab.move(1)
    assert lab.hole_index is None


def test_issue42_holes_need_a_vault_and_their_own_ids(tmp_path: Path, vault: Path) -> None:
    holes = holes_file(tmp_path, [hole("q01", SOURDOUGH, "Discard", 1)])
    with pytest.raises(UsageError, match="vault"):
        Labeler(tmp_path / "q.tsv", SourceReader(), holes=holes)
    with pytest.raises(UsageError, match="query_id"):
        Labeler(tmp_path / "q.tsv", SourceReader(vault), holes=holes, query_id="q9")
    lab = Labeler(tmp_path / "q.tsv", SourceReader(vault), holes=holes)  # any reader's view
    assert lab.key() == ("q01", SOURDOUGH, "Discard")


def test_issue42_hole_view_reads_the_section_now(vault: Path) -> None:
    record = {"query_id": "q", "path": SOURDOUGH, "heading": "Discard", "side": "NEW",
              "rank": 5, "measures": "mrr", "question": ""}  # fmt: skip
    view = hole_view(Vault(vault), record, "q")
    assert (view.key, view.problem, view.source.ordinal) == (("q", SOURDOUGH, "Discard"), "", 5)
    assert view.source.innermost_heading == "Discard"
    assert view.source.text


def test_issue42_grades_a_hole_on_obsidian_help(tmp_path: Path) -> None:
    obsidian = corpus("obsidian-help-en")
    holes = holes_file(
        tmp_path,
        [
            hole("palette", "plugins/command palette.md", "", 1, "command palette shortcut"),
            hole("palette", "plugins/command palette.md", "No such heading here", 2),
        ],
    )
    qrels = tmp_path / "q.tsv"
    lab = Labeler.from_holes(holes, obsidian, qrels)
    assert lab.hole is not None
    assert lab.hole.problem == ""
    assert lab.reader.note_text
    assert lab.grade(3)
    lab.move(1)
    assert lab.hole is not None
    assert "no longer has a section" in lab.hole.problem
    assert load_judgments(qrels) == {("palette", "plugins/command palette.md", ""): 3}
