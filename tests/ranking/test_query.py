"""The conditioned retrieval query of a follow-up question (kimun's build_retrieval_query)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from askkit.ranking.query import ELLIPSIS, build_retrieval_query, condense_head_tail
from askkit.ranking.settings import HISTORY_ANSWER_HEAD, HISTORY_ANSWER_TAIL

#: kimun's commit these tests pin (server/src/lib.rs as of 42c2f81b).
KIMUN_COMMIT = "f28bdd5426c7c22f67601f62f588e958c35e43e1"
BUDGET = HISTORY_ANSWER_HEAD + HISTORY_ANSWER_TAIL


# --------------------------------------------------------------------------- kimun's tests


def test_conditioned_query_is_the_bare_question_without_history() -> None:
    assert build_retrieval_query("how do I deploy?", []) == "how do I deploy?"


def test_conditioned_query_folds_in_the_last_turn_and_keeps_the_question_last() -> None:
    history = [
        ("old topic", "old answer"),
        ("Should I explain the retention policy?", "It keeps snapshots for 30 days by default."),
    ]
    q = build_retrieval_query("yes", history)
    assert "retention policy" in q
    assert "30 days" in q
    assert "yes" in q
    assert "old topic" not in q, "only the most recent turn is used"
    assert q.rstrip().endswith("yes"), "question is last"


def test_conditioned_query_condenses_a_long_previous_answer_keeping_the_tail() -> None:
    long_answer = f"TOPIC_ANCHOR_OPENING{'z' * (BUDGET * 3)}WOULD_YOU_LIKE_PLANTING_TIPS"
    q = build_retrieval_query("yes", [("prev q", long_answer)])
    assert "TOPIC_ANCHOR_OPENING" in q
    assert "WOULD_YOU_LIKE_PLANTING_TIPS" in q
    assert q.count("z") < BUDGET
    assert "prev q" in q
    assert "yes" in q


def test_conditioned_query_condensing_is_utf8_safe_at_both_cuts() -> None:
    q = build_retrieval_query("yes", [("q", "é" * (BUDGET + 10))])
    assert q.count("é") == BUDGET


def test_condense_head_tail_passes_short_strings_through_whole() -> None:
    s = "short answer"
    assert condense_head_tail(s, HISTORY_ANSWER_HEAD, HISTORY_ANSWER_TAIL) == s


def test_answer_retrieves_on_the_conditioned_query_but_prompts_the_raw_question() -> None:
    # The retrieval half (kimun's RecordingEmbedder): the embedded query folds in the turn.
    history = [("What is the retention policy?", "Snapshots are kept 30 days.")]
    embedded = build_retrieval_query("yes", history)
    assert "retention policy" in embedded
    assert "yes" in embedded
    assert embedded != "yes"  # the prompt's question stays "yes": askkit.prompt's business


def test_answer_without_history_embeds_the_bare_question() -> None:
    assert build_retrieval_query("how do I deploy?") == "how do I deploy?"


# --------------------------------------------------------------------------- exact shape


def test_the_query_is_three_lines_with_the_condensed_answer_in_the_middle() -> None:
    answer = "".join(chr(ord("a") + i % 26) for i in range(BUDGET + 1))
    q = build_retrieval_query("next?", [("first?", answer)])
    assert q == f"first?\n{answer[:150]}{ELLIPSIS}{answer[-350:]}\nnext?"
    assert ELLIPSIS == " \u2026 "


@pytest.mark.parametrize(("length", "condensed"), [(499, False), (500, False), (501, True)])
def test_condensing_starts_past_500_characters(length: int, condensed: bool) -> None:
    text = "x" * length
    assert (condense_head_tail(text) != text) is condensed


def test_characters_are_code_points_not_bytes_nor_graphemes() -> None:
    flag = "\U0001f1eb\U0001f1f7"  # one grapheme, two code points, eight UTF-8 bytes
    text = flag * 300
    out = condense_head_tail(text)
    assert out == text[:150] + ELLIPSIS + text[-350:]
    assert len(out) == 150 + len(ELLIPSIS) + 350


def test_a_zero_tail_keeps_the_whole_text_after_the_ellipsis_as_kimun_does() -> None:
    assert condense_head_tail("abcdef", 2, 0) == "ab … abcdef"


def test_negative_counts_are_refused() -> None:
    with pytest.raises(ValueError, match=">= 0"):
        condense_head_tail("abc", -1, 2)


@given(st.text(max_size=800), st.integers(0, 40), st.integers(1, 40))
def test_condensing_keeps_head_and_tail(text: str, head: int, tail: int) -> None:
    out = condense_head_tail(text, head, tail)
    if len(text) <= head + tail:
        assert out == text
    else:
        assert out == text[:head] + ELLIPSIS + text[len(text) - tail :]
