"""AskSource.from_chunk, VaultPath and Turn: kimun's rules, one named test each."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from askkit import BREADCRUMB_SEP, HEADING_JOINER, AskSource, ChunkResult, Turn, VaultPath, sources
from askkit.sources import FRONTMATTER_LABEL, heading_from_title, sanitize_component
from tests import strategies as st_kimun
from tests.conftest import load


def chunk(
    title: str = "Note",
    date: str | None = None,
    ordinal: int = 0,
    path: str = "notes/a.md",
    score: float = 0.5,
) -> ChunkResult:
    return ChunkResult(path, title, date, "body", "h", score, ordinal)


# --- constants -------------------------------------------------------------------


def test_separator_constants() -> None:
    assert BREADCRUMB_SEP == "\u001f"
    assert HEADING_JOINER == " \u203a "


# --- from_chunk: title -> heading --------------------------------------------------


def test_journal_title_loses_its_date_prefix() -> None:
    src = AskSource.from_chunk(0, chunk("2026-04-08\x1fAfternoon", "2026-04-08"))
    assert src.heading == "Afternoon"
    assert src.date == "2026-04-08"


def test_journal_title_that_is_only_the_date_gives_empty_heading() -> None:
    src = AskSource.from_chunk(0, chunk("2026-04-08", "2026-04-08"))
    assert src.heading == ""
    assert src.display_heading() == "2026-04-08"


def test_date_prefix_is_dropped_only_when_the_title_starts_with_it() -> None:
    src = AskSource.from_chunk(0, chunk("Plans for 2026-04-08", "2026-04-08"))
    assert src.heading == "Plans for 2026-04-08"


def test_title_is_trimmed_before_the_date_check() -> None:
    src = AskSource.from_chunk(0, chunk("  2026-04-08 \x1fAfternoon", "2026-04-08"))
    # trimmed, prefix dropped, trimmed again (" \x1fAfternoon" -> "\x1fAfternoon")
    assert src.heading == "Afternoon"


def test_undated_title_keeps_a_leading_date_like_text() -> None:
    src = AskSource.from_chunk(0, chunk("2026-04-08\x1fAfternoon", None))
    assert src.heading == "2026-04-08 › Afternoon"


def test_nested_breadcrumb_is_rejoined() -> None:
    src = AskSource.from_chunk(0, chunk("Chapter\x1fSection\x1fPart"))
    assert src.heading == "Chapter › Section › Part"
    assert src.match_heading() == "Part"


def test_empty_segments_are_dropped_but_not_trimmed() -> None:
    src = AskSource.from_chunk(0, chunk("A\x1f\x1fB\x1f"))
    assert src.heading == "A › B"


def test_whitespace_next_to_separator_is_kept_as_in_rust() -> None:
    # Python's str.strip() would eat U+001F; Rust's trim does not.
    assert heading_from_title("\x1f Section", None) == " Section"
    assert heading_from_title("Chapter \x1f Section", None) == "Chapter  ›  Section"


def test_unit_separator_is_not_trimmed_like_python_strip_would() -> None:
    assert "\x1f".strip() == ""  # the Python pitfall this guards against
    src = AskSource.from_chunk(0, chunk("\x1fIntro\x1f"))
    assert src.heading == "Intro"


@pytest.mark.parametrize(
    "ws",
    [
        "\t",
        "\n",
        "\x0b",
        "\x0c",
        "\r",
        " ",
        "\x85",
        "\xa0",
        "\u1680",
        "\u2000",
        "\u200a",
        "\u2028",
        "\u2029",
        "\u202f",
        "\u205f",
        "\u3000",
    ],
)
def test_rust_white_space_is_trimmed(ws: str) -> None:
    assert AskSource.from_chunk(0, chunk(f"{ws}Title{ws}")).heading == "Title"


@pytest.mark.parametrize("not_ws", ["\u200b", "\x1c", "\x1d", "\x1e"])
def test_non_white_space_is_kept(not_ws: str) -> None:
    assert AskSource.from_chunk(0, chunk(f"{not_ws}Title")).heading == f"{not_ws}Title"


def test_whitespace_after_date_prefix_is_trimmed() -> None:
    src = AskSource.from_chunk(0, chunk("2026-04-08 \u3000Morning", "2026-04-08"))
    assert src.heading == "Morning"


# --- from_chunk: other fields --------------------------------------------------------


def test_fields_are_copied() -> None:
    c = ChunkResult("Notes/Ideas.md", "Ideas", None, "text here", "hash1", 0.25, 4)
    src = AskSource.from_chunk(9, c)
    assert src.path == VaultPath("notes/ideas.md")
    assert str(src.path) == "notes/ideas.md"
    assert (src.score, src.text, src.ordinal, src.date, src.hash) == (
        0.25,
        "text here",
        4,
        None,
        "hash1",
    )


def test_server_ordinal_wins_over_position() -> None:
    assert AskSource.from_chunk(0, chunk(ordinal=7)).ordinal == 7


def test_missing_ordinal_falls_back_to_position_plus_one() -> None:
    assert AskSource.from_chunk(0, chunk(ordinal=0)).ordinal == 1
    assert AskSource.from_chunk(4, chunk(ordinal=0)).ordinal == 5


def test_from_chunks_on_old_server_payload_numbers_by_position() -> None:
    from askkit import EmbeddingsResponse

    resp = EmbeddingsResponse.from_dict(load("embeddings_old_server.json"))
    assert [s.ordinal for s in AskSource.from_chunks(resp.chunks)] == [1, 2, 3, 4]


def test_negative_position_is_refused() -> None:
    with pytest.raises(ValueError, match="0-based"):
        AskSource.from_chunk(-1, chunk())


# --- match_heading / display_heading -------------------------------------------------


def test_match_heading_without_joiner_is_whole_heading() -> None:
    assert AskSource.from_chunk(0, chunk("Solo")).match_heading() == "Solo"


def test_match_heading_of_empty_heading_is_empty() -> None:
    assert AskSource.from_chunk(0, chunk("2026-01-02", "2026-01-02")).match_heading() == ""


def test_match_heading_splits_a_heading_that_contains_the_joiner_like_kimun() -> None:
    src = AskSource.from_chunk(0, chunk("Guide\x1fTools › Hammers"))
    assert src.heading == "Guide › Tools › Hammers"
    assert src.match_heading() == "Hammers"  # kimun's known weakness, kept
    assert src.innermost_heading == "Tools › Hammers"  # askkit keeps the segment
    assert src.segments == ("Guide", "Tools › Hammers")


def test_display_heading_forms() -> None:
    dated = AskSource.from_chunk(0, chunk("2026-04-08\x1fAfternoon", "2026-04-08"))
    assert dated.display_heading() == "2026-04-08 · Afternoon"
    assert AskSource.from_chunk(0, chunk("A\x1fB")).display_heading() == "A › B"
    assert AskSource.from_chunk(0, chunk("", None)).display_heading() == ""


def test_journal_title_prints_glued_without_askkit() -> None:
    # the raw title shows the date glued to the heading: U+001F is invisible
    title = "2026-04-08\x1fAfternoon"
    assert title.replace("\x1f", "") == "2026-04-08Afternoon"
    assert AskSource.from_chunk(0, chunk(title, "2026-04-08")).display_heading() == (
        "2026-04-08 · Afternoon"
    )


def test_to_chunk_round_trips() -> None:
    c = ChunkResult("journal/2026-04-08.md", "2026-04-08\x1fA\x1fB", "2026-04-08", "t", "h", 1.5, 3)
    assert AskSource.from_chunk(0, c).to_chunk() == c


def test_to_chunk_rebuilds_title_for_a_hand_made_source() -> None:
    src = AskSource(VaultPath("j/2026-01-02.md"), "A › B", "2026-01-02", 1.0, "t", 1)
    again = AskSource.from_chunk(0, src.to_chunk())
    assert (again.heading, again.date, again.ordinal) == ("A › B", "2026-01-02", 1)


# --- VaultPath ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "printed"),
    [
        ("journal/2026-04-08.md", "journal/2026-04-08.md"),
        ("a//b", "a/b"),
        ("/a/b.md", "/a/b.md"),
        ("/", "/"),
        ("", ""),
        ("Notes/My Note.MD", "notes/my note.md"),
        ("a/ /b", "a//b"),
        ("..foo.md", "__foo_md"),
        ("a/../b", "a/../b"),
        ("./a", "./a"),
        ("...", "___"),
        ("note. .", "note. "),
        ("trailing...", "trailing"),
        ("q?:*.md", "q___.md"),
        ('a"b<c>d|e[f]g^h#i\\j', "a_b_c_d_e_f_g_h_i_j"),
        ("tab\there", "tab_here"),
        ("del\x7fx", "del_x"),
        ("unit\x1fsep", "unit_sep"),
        ("CON", "_con"),
        ("con.md", "_con.md"),
        ("Com1.txt", "_com1.txt"),
        ("lpt9", "_lpt9"),
        ("com0", "com0"),
        ("console.md", "console.md"),
        ("  spaced  ", "spaced"),
        ("\u3000wide\u3000", "wide"),
        ("Ünïcödé.md", "ünïcödé.md"),
        # Rust's "." never matches "\n": the dots stay, the newline becomes "_"
        ("..foo\n", "..foo_"),
        ("..\n", ".._"),
        ("...\n", "..._"),
        ("a/..foo\n/b", "a/..foo_/b"),
        ("..a\nb", "..a_b"),
    ],
)
def test_vault_path_sanitizes_like_kimun(raw: str, printed: str) -> None:
    assert str(VaultPath(raw)) == printed


def test_vault_path_equality_and_hash() -> None:
    assert VaultPath("A/B.md") == VaultPath("a//b.md")
    assert hash(VaultPath("A/B.md")) == hash(VaultPath("a/b.md"))
    assert VaultPath("/a") != VaultPath("a")
    assert VaultPath(VaultPath("x/y")) == VaultPath("x/y")


def test_vault_path_parts() -> None:
    p = VaultPath("journal/2026/2026-04-08.md")
    assert p.name == "2026-04-08.md"
    assert p.stem == "2026-04-08"
    assert p.folder == "journal/2026"
    assert p.is_note()
    assert not VaultPath("journal").is_note()


def test_flatten_and_escape() -> None:
    assert str(VaultPath("a/b/../c.md").flatten()) == "a/c.md"
    assert not VaultPath("a/b/../c.md").escapes_root()
    assert VaultPath("a/../../c.md").escapes_root()
    assert VaultPath("../c.md").escapes_root()
    assert str(VaultPath("../c.md").flatten()) == "c.md"  # kimun drops it silently


def test_vault_path_rejects_non_str() -> None:
    with pytest.raises(TypeError, match="VaultPath takes a str"):
        VaultPath(3)  # type: ignore[arg-type]


# kimun's own tests of these rules, core/src/nfs/filename.rs at commit
# 054e083d3403886ae5cd834023b5b4e06d83c94e, on askkit's ports of its three patterns.


def test_disallowed_chars_match_legacy_set() -> None:
    for c in ["\\", "/", ":", "*", "?", '"', "<", ">", "|", "[", "]", "^", "#"]:
        assert c in sources._INVALID, f"{c!r} should be disallowed"
    for c in ["\u0000", "\u001f", "\u007f"]:
        assert c in sources._INVALID, f"control {c!r} should be disallowed"
    for c in ["a", "1", "_", "-", ".", " ", "ñ"]:
        assert c not in sources._INVALID, f"{c!r} should be allowed"


def test_windows_reserved_detection() -> None:
    for n in ["CON", "con", "Prn.txt", "AUX", "nul", "com1", "COM9", "lpt1", "LPT9"]:
        assert sources._RESERVED.fullmatch(n), f"{n} should be reserved"
    for n in ["console", "communicator", "lptest", "foo"]:
        assert not sources._RESERVED.fullmatch(n), f"{n} should not be reserved"
    assert not sources._RESERVED.fullmatch("con.\n")  # Rust's "." stops at a newline


def test_invalid_leading_dots_detection() -> None:
    assert sources._DOTTED.fullmatch("..foo")
    assert sources._DOTTED.fullmatch("...bar")
    assert not sources._DOTTED.fullmatch(".foo")
    assert not sources._DOTTED.fullmatch("foo")
    assert not sources._DOTTED.fullmatch("..")
    assert not sources._DOTTED.fullmatch("..foo\n")  # as Rust's ^\.{2,}.+$


def test_sanitize_component_dot_prefixed_then_cleaned_like_any_other() -> None:
    # the dots become "_" first, then the usual steps run (lowercase included)
    assert sanitize_component("..Foo.MD") == "__foo_md"
    assert sanitize_component("..a:b") == "__a_b"
    assert sanitize_component("..con") == "__con"


@pytest.mark.parametrize(
    ("raw", "printed"),
    [
        (" note ", "note"),
        ("notes./sub", "notes/sub"),
        ("note\x07name", "note_name"),
        ("Some?unvalid:Chars?", "some_unvalid_chars_"),
        ("t*his/i+s/caca?/", "t_his/i+s/caca_"),
        ("test:file?.md", "test_file_.md"),
        ("/Projects/Note.md", "/projects/note.md"),
        ("...invalid", "___invalid"),
        ("/some/.../path", "/some/___/path"),
        ("a .", "a "),
        ("foo. ", "foo"),
        ("nul", "_nul"),
        ("COM1.md", "_com1.md"),
        ("lptest", "lptest"),
    ],
)
def test_vault_path_kimun_repo_cases(raw: str, printed: str) -> None:
    assert str(VaultPath(raw)) == printed


# --- Turn -----------------------------------------------------------------------------


@pytest.fixture
def sample_turn() -> Turn:
    job = load("answer_job.json")
    return Turn.from_answer("How often should I feed my sourdough starter?", job["result"])


def test_sources_arrive_shuffled(sample_turn: Turn) -> None:
    assert [s.ordinal for s in sample_turn.sources] == [4, 1, 6, 2, 3]


def test_source_for_citation_pairs_by_ordinal_not_position(sample_turn: Turn) -> None:
    s1 = sample_turn.source_for_citation(1)
    assert s1 is not None
    assert s1.path == VaultPath("projects/sourdough.md")
    s4 = sample_turn.source_for_citation(4)
    assert s4 is not None
    assert s4.heading == "Morning › Kitchen"
    assert sample_turn.sources[0] is s4  # ordinal 4 sits at position 0
    assert sample_turn.source_for_citation(7) is None
    assert sample_turn.source_for_citation(0) is None


def test_citations_resolve_each_marker(sample_turn: Turn) -> None:
    links = sample_turn.citations()
    assert [c.citation.index for c in links] == [1, 3, 2, 4, 7]
    assert [c.dangling for c in links] == [False, False, False, False, True]
    assert all(
        sample_turn.answer[c.citation.start : c.citation.end] == f"[{c.citation.index}]"
        for c in links
    )


def test_dangling_and_uncited(sample_turn: Turn) -> None:
    assert sample_turn.dangling_citations() == [7]
    assert [s.ordinal for s in sample_turn.uncited_sources()] == [6]


def test_duplicate_ordinals_resolve_to_the_first() -> None:
    a = AskSource.from_chunk(0, chunk("A", ordinal=1))
    b = AskSource.from_chunk(1, chunk("B", ordinal=1))
    t = Turn("q", "see [1] and [1]", [a, b])
    assert t.source_for_citation(1) is a
    assert [link.source for link in t.citations()] == [a, a]
    assert t.cited_ordinals() == [1]


def test_turn_with_no_sources() -> None:
    t = Turn("q", "nothing [1]")
    assert t.sources == ()
    assert t.dangling_citations() == [1]
    assert t.uncited_sources() == ()


def test_turn_from_answer_validates() -> None:
    from askkit import SchemaError

    with pytest.raises(SchemaError, match=r"sources\[0\]\.path"):
        Turn.from_answer("q", {"answer": "a", "sources": [{"title": "x"}]})


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


@given(st.text(alphabet="ab/ .:\\x00-", max_size=12))
@example(" /0/0")  # a blank first component prints like an absolute path
def test_a_printed_path_fixes_its_stem_and_folder(raw: str) -> None:
    """The frame computes note and folder once per (printed path, absolute): it
    must be enough. The printed form alone is not: ``" /0/0"`` prints ``/0/0``
    but its folder is ``/0``, the absolute ``/0/0``'s is ``0``."""
    from askkit.sources import printed_paths

    path = VaultPath(raw)
    again = VaultPath.from_printed(str(path))
    if again.is_absolute and not path.is_absolute:  # the ambiguity from_printed documents
        again = VaultPath._make(False, ("", *again.components))
    assert printed_paths([path]) == ([str(path)], [path.is_absolute])
    assert (again.stem, again.folder) == (path.stem, path.folder)


@given(
    st.lists(
        st.tuples(
            st.booleans(), st.lists(st.sampled_from(["", "a", "b.md", ".", ".."]), max_size=4)
        ),
        max_size=8,
    )
)
def test_printed_form_and_absoluteness_fix_a_paths_stem_and_folder(
    specs: list[tuple[bool, list[str]]],
) -> None:
    """The frame groups paths on (printed, absolute): equal keys, equal stems and folders."""
    from askkit.frame import sources_frame
    from askkit.sources import printed_paths

    paths = [VaultPath._make(absolute, tuple(parts)) for absolute, parts in specs]
    texts, absolute = printed_paths(paths)
    seen: dict[tuple[str, bool], tuple[str, str]] = {}
    for key, path in zip(zip(texts, absolute, strict=True), paths, strict=True):
        assert seen.setdefault(key, (path.stem, path.folder)) == (path.stem, path.folder)
    frame = sources_frame([AskSource(p, "H", None, 0.5, "t", i + 1) for i, p in enumerate(paths)])
    assert frame["note"].tolist() == [p.stem for p in paths]
    assert frame["folder"].tolist() == [p.folder for p in paths]
    assert frame["path"].tolist() == [str(p) for p in paths]


def test_a_relative_path_with_a_blank_first_component_keeps_its_own_folder() -> None:
    from askkit.frame import sources_frame

    paths = [VaultPath(" /journal/journal"), VaultPath("/journal/journal")]
    assert str(paths[0]) == str(paths[1])
    frame = sources_frame([AskSource(p, "H", None, 0.5, "t", i + 1) for i, p in enumerate(paths)])
    assert frame["folder"].tolist() == [paths[0].folder, paths[1].folder] == ["/journal", "journal"]


# --- issue 40: a heading-less section is named by its note's title -------------------------


def test_issue40_6_shown_heading_names_a_heading_less_section_by_its_notes_title() -> None:
    # BM25's best answer on the Obsidian help vault: the text before the note's first heading
    src = AskSource.from_chunk(
        0, ChunkResult("Plugins/Command palette.md", "", None, "x", "h", 6.0)
    )
    assert src.before_first_heading
    assert src.display_heading() == ""  # kimun's own value, exact
    assert src.shown_heading() == "command palette"  # no vault: the printed path's stem
    assert src.shown_heading("Command palette") == "Command palette"  # as on disk
    assert src.shown_heading("") == "command palette"


def test_issue40_6_only_undated_heading_less_sections_take_the_title() -> None:
    journal = AskSource.from_chunk(0, chunk("2026-04-08", "2026-04-08"))
    assert not journal.before_first_heading
    assert journal.shown_heading("2026-04-08") == journal.display_heading() == "2026-04-08"
    headed = AskSource.from_chunk(0, chunk("Guide\x1fTools"))
    assert headed.shown_heading("Title") == headed.display_heading() == "Guide › Tools"
    front = AskSource.from_chunk(0, chunk("FrontMatter"))
    assert front.shown_heading("Title") == FRONTMATTER_LABEL
    nameless = AskSource(VaultPath(""), "", None, 0.5, "x", 1)
    assert nameless.shown_heading() == ""  # only a path with no file name gives nothing
