"""``Labeler``: grade the source shown in a reader, 0-3, into a qrels TSV.

``Labeler(qrels_path, explorer)`` grades what an :class:`~askkit.widgets.Explorer`
shows: the source open in its reader, for its current question (the one whose
results are shown), following the user as they click through the results and
ask new questions. The judgments go to the file the user names, never a
temporary one. A question's id is the one the user's queries TSV gives it
(``queries=``), else the one recorded beside the judgments file, else
:func:`~askkit.widgets._qrels.question_id` of its text (a readable slug and 8
hex digits of a hash: stable across sessions); the question is recorded with its
id in ``<name>.queries.tsv`` beside the judgments file
(:func:`~askkit.widgets._qrels.questions_path`), so the judgments can be used
later.

Every grade is written at once, atomically (:func:`askkit.metrics.write_qrels`:
a temporary file, then a rename). Before each write the file is read again
and this grade is merged into it, while holding the file's lock
(:func:`askkit.widgets._qrels.update_judgments`), so judgments written
earlier or at the same time, by this Labeler, by another one in another
process or by hand, are never lost; the file is read when the Labeler
starts, so the grade of a source judged in an earlier session shows up
again. A save keeps every row and column of the file (a ``notes`` column, a
key judged twice); the grade shown is the one :func:`askkit.metrics.evaluate`
uses at section level (the highest of the rows naming that section). A grade
that cannot be saved (a malformed file, a full disk, a path that is not
valid text) is shown in the status line and not kept.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import ipywidgets as w

from askkit import _html
from askkit.errors import AskkitError
from askkit.metrics.queries import read_queries
from askkit.sources import AskSource
from askkit.widgets._qrels import (
    GRADES,
    Key,
    judgment_key,
    load_judgments,
    load_questions,
    question_id,
    question_key,
    question_text,
    questions_path,
    update_judgments,
)
from askkit.widgets.reader import SourceReader

__all__ = ["GRADE_LABELS", "Labeler", "read_queries"]

#: What each grade means (the buttons' captions).
GRADE_LABELS = {0: "not relevant", 1: "related", 2: "relevant", 3: "highly relevant"}
_KEYS_NEXT = frozenset("nj")
_KEYS_PREV = frozenset("pk")


def _reader_of(view: Any) -> SourceReader:
    if isinstance(view, SourceReader):
        return view
    reader = getattr(view, "reader", None)
    if isinstance(reader, SourceReader):
        return reader
    raise TypeError(
        "Labeler labels the source shown in a SourceReader: pass a SourceReader, an Explorer "
        f"or a TurnView, got {type(view).__name__}"
    )


class Labeler(w.VBox):  # type: ignore[misc]
    """Grade the source shown in a reader, 0-3, with buttons or keys.

    Parameters
    ----------
    qrels:
        The judgments file (TSV: ``query_id, path, heading, grade``), the one
        you name; read now when it exists, created on the first grade.
    view:
        An :class:`Explorer` (``Labeler(qrels_path, explorer)``: the source open
        in its reader, for its current question), a :class:`TurnView` (its
        reader) or a :class:`SourceReader`. The Labeler follows the source the
        reader shows and the question it shows it for.
    query_id:
        The query id judgments are filed under, whatever the question. When not
        given it follows the reader's question: the id ``queries`` gives it, else
        the id recorded for it in :attr:`questions_path`, else
        :func:`~askkit.widgets._qrels.question_id` of its text; a question
        matches whitespace and case aside. It can be edited in the widget.
    queries:
        ``{query_id: question}`` or a queries TSV (``data/queries.tsv``): your
        ids. It is only read.

    Each grade whose id is not one of ``queries``' (nor a fixed ``query_id``)
    records its question, ``query_id<TAB>question``, in :attr:`questions_path`
    beside the judgments file, atomically and under the judgments file's lock,
    before the judgment is written.

    Keys: focus the *keys* box and type ``0``-``3`` to grade, ``n``/``j`` for
    the next source in the view's table, ``p``/``k`` for the previous one.

    Attributes
    ----------
    judgments:
        ``{(query_id, path, heading): grade}``: the file as last read or written,
        each key's grade the one evaluate uses for it.
    questions_path:
        The queries TSV beside the judgments file (``my-qrels.queries.tsv``).
    """

    def __init__(
        self,
        qrels: str | os.PathLike[str],
        view: Any,
        *,
        query_id: str | None = None,
        queries: Mapping[str, str] | str | os.PathLike[str] | None = None,
    ) -> None:
        self.path = Path(qrels)
        self.questions_path = questions_path(self.path)
        self.reader = _reader_of(view)
        self.table = getattr(view, "view", None) or getattr(view, "sources_view", None)
        if queries is None or isinstance(queries, Mapping):
            by_id = dict(queries or {})
        else:
            by_id = read_queries(queries)
        self._users_ids = frozenset(by_id)
        self._ids_by_question: dict[str, str] = {}
        for qid, question in by_id.items():
            self._ids_by_question.setdefault(question_key(question), qid)
        self._recorded: dict[str, str] = {}
        self._remember(load_questions(self.questions_path))
        self._fixed_query_id = query_id
        self.judgments: dict[Key, int] = load_judgments(self.path)
        self.query_id_box = w.Text(
            value=query_id or self._derived_query_id(),
            description="query id",
            layout=w.Layout(width="360px"),
        )
        self.query_id_box.add_class("askkit-query-id")
        self.grade_buttons = [
            w.Button(description=f"{g} · {GRADE_LABELS[g]}", layout=w.Layout(width="150px"))
            for g in GRADES
        ]
        for g, button in zip(GRADES, self.grade_buttons, strict=True):
            button.add_class(f"askkit-grade-{g}")
            button.on_click(lambda _b, g=g: self.grade(g))
        self.keys_box = w.Text(
            placeholder="keys: 0-3 grade, n/p move",
            description="keys",
            continuous_update=True,
            layout=w.Layout(width="260px"),
        )
        self.keys_box.add_class("askkit-keys")
        self.keys_box.observe(self._on_key, names="value")
        self.status_html = w.HTML()
        self.status_html.add_class("askkit-label-status")
        self.question_html = w.HTML()
        self.question_html.add_class("askkit-label-question")
        self.reader.observe(self._on_reader, names=["source", "query"])
        super().__init__(
            [
                self.question_html,
                w.HBox([self.query_id_box, self.keys_box]),
                w.HBox(self.grade_buttons),
                self.status_html,
            ]
        )
        self.add_class("askkit-labeler")
        self._render()

    def __repr__(self) -> str:
        return f"<Labeler: {len(self.judgments)} judgments in {self.path}>"

    # -- state

    @property
    def source(self) -> AskSource | None:
        """The source being graded (the reader's)."""
        source: AskSource | None = self.reader.source
        return source

    @property
    def query_id(self) -> str:
        """The query id judgments go under."""
        return str(self.query_id_box.value).strip()

    @property
    def question(self) -> str:
        """The question graded for: the reader's (the Explorer's shown question), as
        recorded (:func:`~askkit.widgets._qrels.question_text`)."""
        return question_text(self.reader.query)

    def _remember(self, recorded: Mapping[str, str]) -> None:
        """Learn ``{query_id: question}`` recorded beside the judgments file."""
        for qid, question in recorded.items():
            self._recorded.setdefault(question_key(question), qid)

    def _derived_query_id(self) -> str:
        question = self.question
        if not question:
            return ""
        key = question_key(question)
        return self._ids_by_question.get(key) or self._recorded.get(key) or question_id(question)

    def _questions_to_record(self) -> dict[str, str]:
        """``{query_id: question}`` to record with a grade: the question graded for, unless
        its id is one the user gave (``queries`` or a fixed ``query_id``)."""
        qid, question = self.query_id, self.question
        if self._fixed_query_id is not None or not question or qid in self._users_ids:
            return {}
        return {qid: question}

    def key(self) -> Key | None:
        """The qrels key of the shown source, ``None`` when there is nothing to grade."""
        source = self.source
        if source is None or not self.query_id:
            return None
        return judgment_key(self.query_id, source)

    def current_grade(self) -> int | None:
        """The shown source's grade in the file, ``None`` when not judged."""
        key = self.key()
        return None if key is None else self.judgments.get(key)

    # -- actions

    def grade(self, grade: int) -> bool:
        """Judge the shown source ``grade`` (0-3) and save the file atomically.

        Returns ``True`` once the grade is in the file. When it cannot be saved
        (nothing shown; a malformed file, which is never overwritten; a full
        disk; a field that cannot be written), the status line says why and
        ``False`` is returned.
        """
        if grade not in GRADES:
            raise ValueError(f"grade must be one of {GRADES}, got {grade!r}")
        key = self.key()
        if key is None:
            self.status_html.value = _html.message(
                "nothing to grade: show a source and set a query id", tone="error"
            )
            return False
        questions = self._questions_to_record()
        try:
            self.judgments = update_judgments(self.path, {key: grade}, questions)
        except (AskkitError, OSError) as exc:  # a malformed file, a full disk, a link...
            self.status_html.value = _html.message(
                f"grade {grade} not saved: {exc}", tone="error", lead="error"
            )
            return False
        self._remember(questions)
        self._render(saved=True)
        return True

    def move(self, delta: int) -> None:
        """Show the next (``+1``) or previous (``-1``) source of the view's table."""
        table = self.table
        if table is None or not len(table.positions):
            return
        positions = table.positions.tolist()
        current = table.selected_position
        i = positions.index(current) if current in positions else -1
        target = min(max(i + delta, 0), len(positions) - 1)
        table.select(positions[target])

    # -- observers

    def _on_reader(self, change: dict[str, Any]) -> None:
        if change["name"] == "query" and self._fixed_query_id is None:
            self.query_id_box.value = self._derived_query_id()
        self._render()

    def _on_key(self, change: dict[str, Any]) -> None:
        typed = str(change["new"])
        if not typed:
            return
        key = typed[-1].lower()
        self.keys_box.value = ""
        if key in "0123":
            self.grade(int(key))
        elif key in _KEYS_NEXT:
            self.move(1)
        elif key in _KEYS_PREV:
            self.move(-1)

    def _render(self, *, saved: bool = False) -> None:
        question = self.question
        self.question_html.value = (
            _html.message(question, tone="muted", lead="grading for") if question else ""
        )
        current = self.current_grade()
        for g, button in zip(GRADES, self.grade_buttons, strict=True):
            button.button_style = "success" if g == current else ""
            button.disabled = self.source is None
        self.status_html.value = _html.grade_status(
            self.key(), current, saved=saved, count=len(self.judgments), file=self.path
        )
