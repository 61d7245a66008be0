"""askkit.vault.split: kimun's server-side split of long sections (byte sizes, break
priorities), and a note's chunks as the server stores them."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from askkit._text import rust_trim
from askkit.sources import VaultPath
from askkit.vault.chunking import chunk_note
from askkit.vault.split import CHUNK_COLUMNS, CHUNK_MAX, CHUNK_TARGET, note_chunks, split_for_rag


def test_kimun_repo_example() -> None:
    assert split_for_rag("First paragraph.\n\nSecond line", 10, 20) == [
        "First paragraph.",
        "Second line",
    ]


def test_empty_text_is_one_empty_piece() -> None:
    assert split_for_rag("") == [""]


def test_short_text_is_trimmed_and_kept_even_if_blank() -> None:
    assert split_for_rag("  hello \n") == ["hello"]
    assert split_for_rag("   ") == [""]


def test_defaults() -> None:
    assert (CHUNK_TARGET, CHUNK_MAX) == (800, 1536)


def test_paragraph_break_wins_after_min_size() -> None:
    para = "a" * 500 + ".\n\n" + "b" * 500 + " " + "c" * 700
    pieces = split_for_rag(para)
    assert pieces[0] == "a" * 500 + "."
    assert pieces[1].startswith("b" * 500)


def test_break_before_min_size_is_ignored() -> None:
    text = "x" * 100 + "\n\n" + "y" * 900 + ". " + "z" * 900
    pieces = split_for_rag(text)
    assert pieces[0] == "x" * 100 + "\n\n" + "y" * 900 + "."


def test_sentence_then_word_then_hard_cut() -> None:
    assert split_for_rag("w" * 600 + " " + "v" * 1200)[0] == "w" * 600
    hard = split_for_rag("h" * 4000)
    assert [len(p) for p in hard] == [1536, 1536, 928]


def test_sizes_are_utf8_bytes_and_cuts_land_on_characters() -> None:
    text = "é" * 1000  # 2000 bytes, no breaks: hard cut at 1536 bytes = 768 chars
    pieces = split_for_rag(text)
    assert [len(p) for p in pieces] == [768, 232]
    text = "a" + "€" * 700  # byte 1536 falls inside a "€": back off to 1534
    first = split_for_rag(text)[0]
    assert len(first.encode()) == 1534
    assert first == "a" + "€" * 511


@given(st.text(alphabet=st.sampled_from(list("ab .\n!é€ ")), max_size=5000))
def test_pieces_cover_the_text_in_order(text: str) -> None:
    pieces = split_for_rag(text)
    assert pieces
    joined = "".join(pieces)
    squeezed = "".join(rust_trim(text).split())
    assert "".join(joined.split()) == squeezed
    if len(text.encode()) > CHUNK_TARGET:
        assert all(len(p.encode()) <= CHUNK_MAX for p in pieces)


def test_note_chunks_are_the_sections_split_as_the_server_splits_them() -> None:
    text = f"# Bread\nshort\n## Starter\n{'word ' * 400}\n"  # 2000 bytes under Starter
    sections = chunk_note(text)
    cols = note_chunks(VaultPath("Notes/Bread.md"), text, "hash", "2026-04-08")
    assert tuple(cols) == CHUNK_COLUMNS
    expected = [
        (s.title, i, j, piece)
        for i, s in enumerate(sections)
        for j, piece in enumerate(split_for_rag(s.text, CHUNK_TARGET, CHUNK_MAX))
    ]
    got = zip(cols["title"], cols["section"], cols["piece"], cols["text"], strict=True)
    assert list(got) == expected
    assert len(cols["text"]) > len(sections)  # the long section is split
    assert set(cols["path"]) == {"notes/bread.md"}
    assert set(cols["date"]) == {"2026-04-08"}
    assert set(cols["hash"]) == {"hash"}
    assert all(text[s:e].startswith("#") for s, e in zip(cols["start"], cols["end"], strict=True))
