"""Hypothesis properties for from_chunk, VaultPath and the citation scanner."""

from __future__ import annotations

import dataclasses
import json

from hypothesis import given
from hypothesis import strategies as st

from askkit import AskSource, ChunkResult, VaultPath
from askkit.citations import link_sources, scan, strip, strip_all
from tests import strategies as st_kimun


@given(st_kimun.chunks(), st.integers(min_value=0, max_value=10_000))
def test_from_chunk_invariants(chunk: ChunkResult, position: int) -> None:
    src = AskSource.from_chunk(position, chunk)
    assert "\x1f" not in src.heading
    assert src.heading.endswith(src.match_heading())
    assert src.ordinal >= 1
    assert src.ordinal == (chunk.ordinal or position + 1)
    if src.date is not None:
        assert src.display_heading().startswith(src.date)
    else:
        assert src.display_heading() == src.heading
    assert " ›  › " not in src.heading or "›  ›" in chunk.title.replace("\x1f", " › ")


@given(st_kimun.chunks())
def test_chunk_wire_round_trip(chunk: ChunkResult) -> None:
    assert ChunkResult.from_json(json.dumps(chunk.to_dict())) == chunk


@given(st_kimun.chunks())
def test_source_to_chunk_round_trip(chunk: ChunkResult) -> None:
    src = AskSource.from_chunk(0, chunk)
    again = AskSource.from_chunk(0, src.to_chunk())
    # the printed path re-reads with blank components dropped, as kimun reads it
    assert again.path == VaultPath(str(src.path))
    assert dataclasses.replace(again, path=src.path) == src


@given(st_kimun.paths)
def test_vault_path_from_printed_is_exact(raw: str) -> None:
    p = VaultPath(raw)
    # a leading blank component prints like the absolute marker: kimun's own ambiguity
    if not p.components or p.components[0] != "":
        assert VaultPath.from_printed(str(p)) == p


@given(st_kimun.paths)
def test_vault_path_is_idempotent_and_clean(raw: str) -> None:
    p = VaultPath(raw)
    assert VaultPath(str(p)) == p or "" in p.components
    for part in p.components:
        assert "/" not in part
        assert not any(ch in part for ch in ':*?"<>|[]^#\\\x00\x1f\x7f') or part.startswith("__")


@given(st_kimun.answers)
def test_scan_finds_only_markers(text: str) -> None:
    for c in scan(text):
        marker = text[c.start : c.end]
        assert marker == f"[{c.index}]"
        assert c.index >= 1
        assert c.start == 0 or text[c.start - 1] != "["
        assert c.end == len(text) or text[c.end] != "]"


def _digit_next_to_a_marker(text: str) -> bool:
    return any(
        (c.start > 0 and text[c.start - 1].isdigit())
        or (c.end < len(text) and text[c.end].isdigit())
        for c in scan(text)
    )


@given(st_kimun.answers)
def test_strip_leaves_nothing_scan_would_find(text: str) -> None:
    out = strip(text)
    assert len(out) <= len(text)
    if not _digit_next_to_a_marker(text):
        assert scan(out) == []


@given(st_kimun.answers)
def test_strip_all_leaves_nothing_scan_would_find(text: str) -> None:
    assert scan(strip_all(text)) == []


def test_one_pass_strip_can_join_a_new_marker_like_kimun() -> None:
    assert strip("[1[2]3]") == "[13]"
    assert scan(strip("[1[2]3]")) != []
    assert strip_all("[1[2]3]") == ""


@given(st_kimun.answers, st.lists(st.text(max_size=5), max_size=5))
def test_link_sources_never_raises(text: str, names: list[str]) -> None:
    out = link_sources(text, names)
    assert isinstance(out, str)
