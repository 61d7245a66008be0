"""The Explorer's model (askkit.widgets._switch): labels, the switch, the history, notices."""

from __future__ import annotations

import dataclasses

import pytest

from askkit import AskSource, VaultPath
from askkit.widgets._switch import (
    HISTORY_LIMIT,
    HistoryEntry,
    chain_status,
    choices,
    frontmatter_notice,
    history_items,
    switch_kind,
    switch_width,
)


def source(path: str, heading: str, n: int) -> AskSource:
    return AskSource(VaultPath(path), heading, None, 1.0 - n / 100, "x", n)


class TinyModel:
    stand_in = "the model is a tiny stand-in"


class StandInIndex:
    """A retriever whose reranker is a stand-in (as askkit's tiny test models say)."""

    reranker = TinyModel()

    def __call__(self, query: str, k: int = 10) -> list[object]:
        return []


# --------------------------------------------------------------------------- item 5


def test_issue40_5_a_stand_in_retrievers_label_says_so_in_full() -> None:
    named = choices(None, {"dense + reranker (stand-in)": StandInIndex(), "BM25": lambda q: []})
    assert [c.label for c in named] == ["dense + reranker (stand-in)", "BM25"]
    unnamed = choices(None, {"dense + reranker": StandInIndex()})[0]
    assert unnamed.stand_ins == ("the model is a tiny stand-in",)
    assert unnamed.label == "dense + reranker (stand-in)"  # never silently a real model
    assert unnamed.name == "dense + reranker"  # the key the switch and use() take


def test_issue40_5_the_switch_is_toggles_only_while_every_label_fits_whole() -> None:
    notebook = ["dense", "BM25", "dense + reranker (stand-in)", "kimun"]
    assert switch_kind(notebook) == "toggles"
    assert switch_kind([*notebook, "fifth"]) == "dropdown"
    assert switch_kind(["BM25", "x" * 33]) == "dropdown"  # one label too long for a button
    assert switch_kind(["y" * 30] * 4) == "dropdown"  # all of them too long for one line
    assert switch_kind([]) == "toggles"
    assert switch_width(["BM25", "x" * 40]) == "calc(40ch + 120px)"


# --------------------------------------------------------------------------- item 10: history


def test_issue40_10_history_items_fold_runs_into_one_item_per_question() -> None:
    runs = [
        HistoryEntry("embed a note", 10, 0.1, None, "BM25"),
        HistoryEntry("embed a note", 10, 0.2, None, "dense"),  # a switch: no new question
        HistoryEntry("command palette", 7, 0.1, None, "dense"),
        HistoryEntry("embed  a note", 0, 0.1, "RuntimeError: down", "kimun"),
        HistoryEntry("embed a note", 9, 0.1, None, "BM25"),  # asked again on BM25
    ]
    items = history_items(runs)
    assert [i.query for i in items] == ["embed a note", "command palette"]
    first = items[0]
    assert [r.retriever for r in first.runs] == ["BM25", "dense", "kimun"]  # first answer order
    assert [r.count for r in first.runs] == [9, 10, 0]  # each retriever's latest run
    assert not first.failed  # its latest run (BM25) succeeded
    labels = {"dense": "dense (stand-in)"}
    assert first.summary(labels) == [
        ("BM25: 9", False),
        ("dense (stand-in): 10", False),
        ("kimun: error", True),
    ]
    alone = history_items([HistoryEntry("q", 1, 0.0), HistoryEntry("r", 0, 0.0, "E")])
    assert [i.summary() for i in alone] == [[("error", True)], [("1 source", False)]]
    assert alone[0].failed


def test_issue40_10_the_history_is_bounded_to_the_most_recent_questions() -> None:
    runs = [HistoryEntry(f"question {i}", 1, 0.0) for i in range(HISTORY_LIMIT + 5)]
    items = history_items(runs)
    assert len(items) == HISTORY_LIMIT
    assert items[0].query == f"question {HISTORY_LIMIT + 4}"
    assert items[-1].query == "question 5"
    assert history_items(runs, limit=0) == []
    assert history_items([]) == []


def test_issue40_10_the_why_not_status_follows_the_question() -> None:
    assert chain_status(None, None) == "run a query, name the notes to follow, click trace"
    assert "run a query" not in chain_status("embed a note", None)
    assert "the stages of embed a note" in chain_status("embed a note", None)
    assert chain_status("rye", "rye") == "the chain below follows rye"
    assert chain_status("oats", "rye") == (
        "the chain below follows rye; click trace to follow the notes through oats"
    )


# --------------------------------------------------------------------------- item 6: frontmatter


@pytest.mark.parametrize(
    ("headings", "lead"),
    [
        (["A", "FrontMatter", "B", "FrontMatter"], "2 of the top 4 are notes' frontmatter"),
        (["FrontMatter"], "the top result is a note's frontmatter"),
        (["FrontMatter", "FrontMatter", "C"], "the top 2 are all notes' frontmatter"),
        (["A", "B", "FrontMatter"], "1 of the top 3 is a note's frontmatter"),
    ],
)
def test_issue40_6_the_frontmatter_notice_counts_the_top_it_takes(
    headings: list[str], lead: str
) -> None:
    sources = [source(f"n{i}.md", h, i + 1) for i, h in enumerate(headings)]
    notice = frontmatter_notice(sources)
    assert notice is not None
    assert notice.startswith(lead + ", which kimun indexes as a section of its own")
    fm = [str(s.path) for s in sources if s.heading == "FrontMatter"]
    assert notice.endswith(f"({', '.join(fm)})")


def test_issue40_6_no_frontmatter_no_notice_and_many_paths_are_cut() -> None:
    assert frontmatter_notice([]) is None
    assert frontmatter_notice([source("a.md", "A", 1), source("b.md", "", 2)]) is None
    many = [source(f"n{i}.md", "FrontMatter", i + 1) for i in range(6)]
    notice = frontmatter_notice(many)
    assert notice is not None
    assert notice.startswith("the top 6 are all notes' frontmatter")
    assert notice.endswith("(n0.md, n1.md, n2.md, n3.md and 2 more)")
    dated = dataclasses.replace(many[0], date="2026-04-08")  # a journal's frontmatter counts
    assert frontmatter_notice([dated]) is not None
