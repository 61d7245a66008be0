"""Judgment-free checks of a vault: what can be asked of it, and what a retriever reaches.

:mod:`~askkit.reach.queries` derives known-item questions from a vault's own
sections, with no LLM and no judgments (:func:`known_items`), each recording the
section it came from, picks one good example question for a notebook
(:func:`example_question`), and gives the question set a notebook evaluates on:
the user's questions and judgments, else known items (:func:`question_set`).
Self-tests and retrievability build on it.
"""

from __future__ import annotations

from askkit.reach.queries import (
    KINDS,
    QUERY_COLUMNS,
    Example,
    Kind,
    KnownItems,
    KnownItemSettings,
    QuestionSet,
    body_sentences,
    example_question,
    known_items,
    question_set,
)

__all__ = [
    "KINDS",
    "QUERY_COLUMNS",
    "Example",
    "Kind",
    "KnownItemSettings",
    "KnownItems",
    "QuestionSet",
    "body_sentences",
    "example_question",
    "known_items",
    "question_set",
]
