"""The Turn view's model: the answer cut into text runs and ``[n]`` citations.

Pure functions: :class:`~askkit.widgets.TurnView` turns each piece into a
widget (a clickable button for a citation that resolves to a source by
ordinal, a marked, unclickable label for a dangling one), its markup from
:mod:`askkit._html`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from askkit._html import citation_title
from askkit.sources import Turn

__all__ = ["AnswerPiece", "answer_pieces", "wrap_words"]

#: Longest text run (in characters) in one flow item; longer runs are cut at spaces.
RUN_CHARS = 48
_TOKEN = re.compile(r"\s*\S+\s*|\s+")


@dataclass(frozen=True, slots=True)
class AnswerPiece:
    """A run of answer text, a line break, or a citation marker.

    ``kind`` is ``"text"``, ``"break"``, ``"cite"`` (resolves to a source,
    ``ordinal`` set, ``title`` describes the source) or ``"dangling"`` (no
    source has that ordinal).
    """

    kind: Literal["text", "break", "cite", "dangling"]
    text: str
    ordinal: int = 0
    title: str = ""


def wrap_words(text: str, width: int = RUN_CHARS) -> list[str]:
    """Cut a run of text at spaces into pieces of at most ``width`` characters
    (a longer word stays whole); every character is kept, the spaces stay with
    the word before them.

    >>> wrap_words("one two three four", 8)
    ['one two ', 'three ', 'four']
    >>> wrap_words(" lead", 8)
    [' lead']
    """
    out: list[str] = []
    current = ""
    for token in _TOKEN.findall(text):
        if current and len(current) + len(token.rstrip(" ")) > width:
            out.append(current)
            current = ""
        current += token
    if current:
        out.append(current)
    return out


def _text_pieces(text: str, width: int) -> list[AnswerPiece]:
    out: list[AnswerPiece] = []
    for i, line in enumerate(text.split("\n")):
        if i:
            out.append(AnswerPiece("break", "\n"))
        out.extend(AnswerPiece("text", run) for run in wrap_words(line, width) if run)
    return out


def answer_pieces(turn: Turn, width: int = RUN_CHARS) -> list[AnswerPiece]:
    """The answer as flow pieces; citations resolved by ordinal (never by position).

    >>> from askkit import AskSource, Turn, VaultPath
    >>> t = Turn("q?", "Feed it [1], not [9].",
    ...          [AskSource(VaultPath("a.md"), "Starter", None, 0.9, "feed", 1)])
    >>> [(p.kind, p.text) for p in answer_pieces(t)]
    [('text', 'Feed it '), ('cite', '[1]'), ('text', ', not '), ('dangling', '[9]'), ('text', '.')]
    """
    out: list[AnswerPiece] = []
    pos = 0
    answer = turn.answer
    for link in turn.citations():
        c = link.citation
        out.extend(_text_pieces(answer[pos : c.start], width))
        marker = answer[c.start : c.end]
        if link.source is None:
            out.append(AnswerPiece("dangling", marker, c.index, f"no source has ordinal {c.index}"))
        else:
            out.append(AnswerPiece("cite", marker, c.index, citation_title(link.source)))
        pos = c.end
    out.extend(_text_pieces(answer[pos:], width))
    return out
