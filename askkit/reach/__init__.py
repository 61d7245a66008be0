"""Judgment-free checks of a vault: what can be asked of it, and what a retriever reaches.

:mod:`~askkit.reach.queries` derives known-item questions from a vault's own
sections, with no LLM and no judgments (:func:`known_items`), each recording the
section it came from, picks one good example question for a notebook
(:func:`example_question`), and gives the question set a notebook evaluates on:
the user's questions and judgments, else known items (:func:`question_set`).
:mod:`~askkit.reach.retrievability` measures how often a retriever reaches each
note or section over a question set (:func:`retrievability`, Azzopardi and
Vinay 2008), how evenly (:func:`gini`, :func:`lorenz`), and what a change of
retriever gains and loses (:func:`compare_retrievability`).
:mod:`~askkit.reach.selftest` asks a vault's known items of a retriever and
says which sections kimun's cut keeps, which it loses, where and why
(:func:`self_test`, :class:`SelfTest`).
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
from askkit.reach.retrievability import (
    Retrievability,
    compare_retrievability,
    gini,
    lorenz,
    retrievability,
)
from askkit.reach.selftest import SelfTest, self_test

__all__ = [
    "KINDS",
    "QUERY_COLUMNS",
    "Example",
    "Kind",
    "KnownItemSettings",
    "KnownItems",
    "QuestionSet",
    "Retrievability",
    "SelfTest",
    "body_sentences",
    "compare_retrievability",
    "example_question",
    "gini",
    "known_items",
    "lorenz",
    "question_set",
    "retrievability",
    "self_test",
]
