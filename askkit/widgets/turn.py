"""``TurnView``: a question, its answer with clickable ``[n]`` citations, and its sources.

The answer is laid out as a wrapping row of widgets (pieces from
:func:`askkit.widgets._turn_model.answer_pieces`): text runs as escaped
``HTML``, each resolving citation as a ``Button`` (a real round trip to
Python in any front-end), each dangling citation as a struck-through red
label that cannot be clicked (the markup of :func:`askkit._html.citation`).
A citation and the punctuation written against it
(:func:`~askkit.widgets._turn_model.answer_groups`) share one box that does
not wrap, so a line never starts with the ``.`` after ``[2]``.
Clicking a citation selects its source, by ordinal, in the linked
:class:`SourcesView`, which opens it in the :class:`SourceReader`.
"""

from __future__ import annotations

import os
from typing import Any

import ipywidgets as w

from askkit import _html
from askkit.sources import AskSource, Turn
from askkit.vault import Vault
from askkit.widgets._turn_model import AnswerPiece, answer_groups, answer_pieces
from askkit.widgets.reader import SourceReader
from askkit.widgets.table import SourcesView

__all__ = ["TurnView"]

_TEXT_LAYOUT = {"margin": "0", "padding": "0 0.3em 0 0", "width": "auto"}


class TurnView(w.VBox):  # type: ignore[misc]
    """The turn: question, answer with citations, a linked sources table and reader.

    Parameters
    ----------
    turn:
        The :class:`~askkit.Turn` to show.
    vault:
        Passed to the :class:`SourceReader` (the note around each source).
    page_size:
        Rows per page of the sources table.

    Attributes
    ----------
    sources_view, reader:
        The linked :class:`SourcesView` and :class:`SourceReader`.
    citation_buttons:
        ``{ordinal: [Button, ...]}``: the buttons of each resolving citation.
    """

    def __init__(
        self,
        turn: Turn,
        vault: Vault | str | os.PathLike[str] | None = None,
        *,
        page_size: int = 20,
    ) -> None:
        if not isinstance(turn, Turn):
            raise TypeError(f"TurnView takes a Turn, got {type(turn).__name__}")
        self.turn = turn
        self.pieces = answer_pieces(turn)
        self.sources_view = SourcesView(turn, page_size=page_size, show_cited=True)
        # by [n], the numbers the answer cites (a payload may list them in any order)
        self.sources_view.sort("ordinal", ascending=True)
        self.reader = SourceReader(vault)
        self.citation_buttons: dict[int, list[w.Button]] = {}
        self.question_html = w.HTML(_html.question_html(turn.question))
        self.answer_box = w.Box(
            [self._group_widget(g) for g in answer_groups(self.pieces)],
            layout=w.Layout(display="flex", flex_flow="row wrap", align_items="center"),
        )
        self.answer_box.add_class("askkit-answer")
        self.dangling_html = w.HTML(_html.dangling_note(turn))
        self.sources_view.on_select(self._on_select)
        super().__init__(
            [
                self.question_html,
                w.HTML(_html.ANSWER_LABEL),
                self.answer_box,
                self.dangling_html,
                w.HTML(_html.heading_label("sources", "by [n], the number the answer cites")),
                self.sources_view,
                self.reader,
            ]
        )
        self.add_class("askkit-turn")

    def __repr__(self) -> str:
        cited = len(self.citation_buttons)
        dangling = len(self.turn.dangling_citations())
        source = self.reader.source
        reading = f"; reading [{source.ordinal}]" if source is not None else ""
        return (
            f"<TurnView: {self.turn.question!r}, {len(self.turn.sources)} sources, "
            f"{cited} cited, {dangling} dangling{reading}>"
        )

    def _group_widget(self, group: list[AnswerPiece]) -> Any:
        """One piece, or pieces no line may break between in a box that does not wrap."""
        if len(group) == 1:
            return self._piece_widget(group[0])
        children = [self._piece_widget(p) for p in group]
        for child in children[:-1]:  # written against each other: no gap inside the group
            if isinstance(child, w.Button):
                child.layout.margin = "0 1px 0 0"
            else:
                child.layout.padding = "0"
        box = w.Box(
            children,
            layout=w.Layout(display="flex", flex_flow="row nowrap", align_items="center"),
        )
        box.add_class("askkit-nobreak")
        return box

    def _piece_widget(self, piece: AnswerPiece) -> Any:
        if piece.kind == "break":
            return w.Box(layout=w.Layout(width="100%", height="0px"))
        if piece.kind == "cite":
            button = w.Button(
                description=piece.text,
                tooltip=piece.title,
                layout=w.Layout(width="auto", height="24px", margin="0 0.3em 0 0", padding="0 4px"),
            )
            button.add_class("askkit-cite")
            button.on_click(lambda _b, n=piece.ordinal: self.open_citation(n))
            self.citation_buttons.setdefault(piece.ordinal, []).append(button)
            return button
        if piece.kind == "dangling":
            markup = _html.citation(piece.text, piece.ordinal, None)
        else:
            markup = _html.esc(piece.text)
        label = w.HTML(markup, layout=w.Layout(**_TEXT_LAYOUT))
        if piece.kind == "dangling":
            label.add_class("askkit-dangling")
        return label

    def open_citation(self, n: int) -> AskSource | None:
        """Select the source with ordinal ``n`` and open it in the reader (``None`` if dangling)."""
        return self.sources_view.select(ordinal=n)

    def _on_select(self, source: AskSource | None) -> None:
        active = source.ordinal if source is not None else None
        for ordinal, buttons in self.citation_buttons.items():
            for button in buttons:
                button.button_style = "info" if ordinal == active else ""
        self.reader.show(source, query=self.turn.question)
