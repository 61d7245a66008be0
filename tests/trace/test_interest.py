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


def test_issue40_2_a_path_typed_as_on_disk_names_the_note_kimun_prints() -> None:
    """The why-not box's input: the path as on disk or as kimun prints it, one note either
    way (VaultPath's rule; a ``..`` kept, as kimun prints it); a ``#`` in an on-disk name
    does not end the path."""
    from askkit.trace import printed_path, typed_section

    on_disk = "Linking notes and files/Embed files.md#Embed a note in another note"
    printed = "linking notes and files/embed files.md#Embed a note in another note"
    assert typed_section(on_disk) == ("Linking notes and files/Embed files.md", printed[39:])
    assert sections_of([typed_section(on_disk)]) == sections_of([typed_section(printed)])
    assert sections_of([typed_section(on_disk)])[0].section == printed
    assert typed_section(" C# Tips.md # Generics ") == ("C# Tips.md", "Generics")
    assert typed_section("Notes/a.md#") == ("Notes/a.md", None)  # no heading: the whole note
    assert sections_of(["../Outside/A.md"]) == [Interest("../outside/a.md")]  # kept outside
    frame = pd.DataFrame({"path": ["Projects/Sourdough.md"], "heading": ["Feeding schedule"]})
    assert sections_of(frame) == [Interest("projects/sourdough.md", "Feeding schedule")]
    assert printed_path("projects/sourdough.md") == "projects/sourdough.md"


def test_issue40_2_the_closest_paths_and_headings_are_named_best_first() -> None:
    from askkit.trace import closest_headings, closest_paths

    listing = [
        "linking notes and files/embed files.md",
        "editing and formatting/embed web pages.md",
        "plugins/command palette.md",
        "home.md",
    ]
    assert closest_paths("Linking notes and files/Embed file.md", listing) == [listing[0]]
    assert closest_paths("Plugins/Command Pallete.md", listing) == ["plugins/command palette.md"]
    assert closest_paths("embed", listing) == listing[:2]
    assert closest_paths("sourdough.md", listing) == []  # nothing close: nothing named
    headings = {"Embed a note in another note", "Embed a PDF in a note", "Embed a canvas in a note"}
    assert closest_headings("Embed a note", headings)[0] == "Embed a note in another note"
    assert closest_headings("embed a NOTE in anther note", headings) == [
        "Embed a note in another note"
    ]
