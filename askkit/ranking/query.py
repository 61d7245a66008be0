"""The retrieval query of a follow-up question (``build_retrieval_query`` in kimun).

With conversation history, kimun retrieves and reranks on
``"{previous question}\\n{condensed previous answer}\\n{question}"``: only the
last turn, its answer condensed to its first 150 and last 350 characters
(Unicode code points, as Rust's ``chars()``; Python's ``str`` indexes the same
way) when it is longer than 500. Without history the query is the question.
The LLM prompt still gets the bare question.

Examples
--------
>>> build_retrieval_query("yes", [("Explain retention?", "Snapshots live 30 days.")])
'Explain retention?\\nSnapshots live 30 days.\\nyes'
"""

from __future__ import annotations

from collections.abc import Sequence

from askkit.ranking.settings import HISTORY_ANSWER_HEAD, HISTORY_ANSWER_TAIL

__all__ = ["ELLIPSIS", "build_retrieval_query", "condense_head_tail"]

#: What joins the kept head and tail: space, U+2026, space.
ELLIPSIS = " … "


def condense_head_tail(
    text: str, head: int = HISTORY_ANSWER_HEAD, tail: int = HISTORY_ANSWER_TAIL
) -> str:
    """kimun's ``condense_head_tail``: the first ``head`` + last ``tail`` characters.

    A text of at most ``head + tail`` characters passes through whole. As in
    kimun, ``tail=0`` keeps the whole text after the ellipsis (its
    ``char_indices().nth(total)`` finds nothing and falls back to 0); kimun
    itself always passes 150 and 350.

    >>> condense_head_tail("abcdefgh", 2, 3)
    'ab … fgh'
    >>> condense_head_tail("short answer")
    'short answer'
    """
    if head < 0 or tail < 0:
        raise ValueError(f"head and tail are counts of characters (>= 0), got {head}, {tail}")
    total = len(text)
    if total <= head + tail:
        return text
    tail_start = total - tail if tail > 0 else 0
    return f"{text[:head]}{ELLIPSIS}{text[tail_start:]}"


def build_retrieval_query(question: str, history: Sequence[tuple[str, str]] = ()) -> str:
    """The text kimun embeds (and reranks against) for ``question`` after ``history``.

    ``history`` is the conversation's ``(question, answer)`` pairs, oldest
    first, as the client sends them (citation markers already stripped).

    >>> build_retrieval_query("how do I deploy?")
    'how do I deploy?'
    """
    if not history:
        return question
    previous_question, previous_answer = history[-1]
    return f"{previous_question}\n{condense_head_tail(previous_answer)}\n{question}"
