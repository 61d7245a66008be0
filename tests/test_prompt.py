"""The prompt framing kimun gives each source."""

from __future__ import annotations

from askkit import ChunkResult
from askkit.prompt import frame_source, frame_sources, prompt_title


def c(title: str, date: str | None = None, ordinal: int = 1, path: str = "a.md") -> ChunkResult:
    return ChunkResult(path, title, date, "Body text.", "h", 0.5, ordinal)


def test_header_with_title() -> None:
    assert frame_source(c("Chapter\x1fSection")) == (
        '[1] a.md — "Chapter › Section"\nBody text.\n\n'
    )


def test_blank_title_omits_the_title_clause() -> None:
    assert frame_source(c("  ")) == "[1] a.md\nBody text.\n\n"


def test_dated_chunk_gets_a_date_line() -> None:
    out = frame_source(c("2026-04-08\x1fAfternoon", "2026-04-08", 3, "journal/2026-04-08.md"))
    lines = out.split("\n")
    assert lines[0].startswith("[3] journal/2026-04-08.md — ")
    assert lines[1] == "Date: 2026-04-08"
    assert lines[2] == "Body text."
    assert out.endswith("\n\n")


def test_journal_title_only_date_omits_title() -> None:
    out = frame_source(c("2026-04-08", "2026-04-08", 2, "journal/2026-04-08.md"))
    assert out.startswith("[2] journal/2026-04-08.md\nDate: 2026-04-08\n")


def test_prompt_keeps_empty_segments_unlike_the_view() -> None:
    assert prompt_title("A\x1f\x1fB", None) == "A ›  › B"


def test_frame_sources_numbers_missing_ordinals_by_position() -> None:
    out = frame_sources([c("X", ordinal=0), c("Y", ordinal=0)])
    assert out.startswith('[1] a.md — "X"')
    assert '\n[2] a.md — "Y"' in out


def test_explicit_number_wins() -> None:
    assert frame_source(c("X", ordinal=5), n=9).startswith("[9] ")


def test_journal_title_keeps_the_separator_after_the_date_like_kimun() -> None:
    out = frame_source(c("2026-04-08\x1fAfternoon", "2026-04-08", 1, "journal/2026-04-08.md"))
    assert out.split("\n")[0] == '[1] journal/2026-04-08.md — " › Afternoon"'


def test_title_not_starting_with_the_date_is_kept_whole() -> None:
    assert prompt_title("  Plans\x1fToday ", "2026-04-08") == "Plans › Today"
