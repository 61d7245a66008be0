"""The Turn view's model: the answer cut into text runs and ``[n]`` citations.

Pure functions: :class:`~askkit.widgets.TurnView` turns each piece into a
widget (a clickable button for a citation that resolves to a source by
ordinal, a marked, unclickable label for a dangling one), its markup from
:mod:`askkit._html`. A piece ``glued`` to the one before it (the punctuation
right after a citation, a citation right after a word) stays on its line:
:func:`answer_groups` gathers them, and the view lays each group out as one
unbreakable item, so ``[2].`` never wraps as ``[2]`` / ``.``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from askkit._html import citation_title
from askkit.sources import Turn

__all__ = ["AnswerPiece", "answer_groups", "answer_pieces", "wrap_words"]

#: Longest text run (in characters) in one flow item; longer runs are cut at spaces.
RUN_CHARS = 48
_TOKEN = re.compile(r"\s*\S+\s*|\s+")
_LEADING = re.compile(r"\S+")


@dataclass(frozen=True, slots=True)
class AnswerPiece:
    """A run of answer text, a line break, or a citation marker.

    ``kind`` is ``"text"``, ``"break"``, ``"cite"`` (resolves to a source,
    ``ordinal`` set, ``title`` describes the source) or ``"dangling"`` (no
    source has that ordinal). ``glued``: no line may break between this piece
    and the one before it.
    """

    kind: Literal["text", "break", "cite", "dangling"]
    text: str
    ordinal: int = 0
    title: str = ""
    glued: bool = False


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
    """The answer as flow pieces; citations resolved by ordinal (never by position), the
    text written against a citation (``,`` ``.``) a piece of its own, glued to it.

    >>> from askkit import AskSource, Turn, VaultPath
    >>> t = Turn("q?", "Feed it [1], not [9].",
    ...          [AskSource(VaultPath("a.md"), "Starter", None, 0.9, "feed", 1)])
    >>> [(p.kind, p.text) for p in answer_pieces(t)]  # doctest: +NORMALIZE_WHITESPACE
    [('text', 'Feed it '), ('cite', '[1]'), ('text', ','), ('text', ' not '),
     ('dangling', '[9]'), ('text', '.')]
    """
    out: list[AnswerPiece] = []
    pos = 0
    answer = turn.answer
    for link in turn.citations():
        c = link.citation
        out.extend(_after_citation(out, answer[pos : c.start], width))
        marker = answer[c.start : c.end]
        # no break between a word (or another citation) and a citation written against it
        glued = bool(out) and out[-1].kind != "break" and not out[-1].text[-1:].isspace()
        if link.source is None:
            title = f"no source has ordinal {c.index}"
            out.append(AnswerPiece("dangling", marker, c.index, title, glued=glued))
        else:
            out.append(AnswerPiece("cite", marker, c.index, citation_title(link.source), glued))
        pos = c.end
    out.extend(_after_citation(out, answer[pos:], width))
    return out


def _after_citation(before: list[AnswerPiece], text: str, width: int) -> list[AnswerPiece]:
    """``text``'s pieces; right after a citation, what is written against it (``.``,
    ``),``) is its own piece, glued to the citation."""
    lead = _LEADING.match(text)
    if not before or before[-1].kind not in ("cite", "dangling") or lead is None:
        return _text_pieces(text, width)
    return [AnswerPiece("text", lead.group(), glued=True), *_text_pieces(text[lead.end() :], width)]


def answer_groups(pieces: list[AnswerPiece]) -> list[list[AnswerPiece]]:
    """The pieces in groups no line may break inside: each piece with those glued to it.

    >>> from askkit import AskSource, Turn, VaultPath
    >>> t = Turn("q?", "Point 1 [1]. Point 2 [2][3].",
    ...          [AskSource(VaultPath("a.md"), "A", None, 0.9, "x", n) for n in (1, 2, 3)])
    >>> [[p.text for p in group] for group in answer_groups(answer_pieces(t))]
    [['Point 1 '], ['[1]', '.'], [' Point 2 '], ['[2]', '[3]', '.']]
    """
    groups: list[list[AnswerPiece]] = []
    for piece in pieces:
        if piece.glued and groups:
            groups[-1].append(piece)
        else:
            groups.append([piece])
    return groups
