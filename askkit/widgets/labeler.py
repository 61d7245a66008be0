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

With ``holes=`` (or :meth:`Labeler.from_holes`) the Labeler walks a holes file
(:func:`askkit.gate.write_holes`: the unjudged sections a gate's verdict
depends on) in its order instead of following the reader: it opens each
hole's section in the reader (:mod:`askkit.widgets._holes_model`), says which
hole of how many it is, and files each grade under the hole's own
``query_id, path, heading``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import ipywidgets as w

from askkit import _html
from askkit.errors import AskkitError, UsageError
from askkit.gate.holes import read_holes
from askkit.metrics.queries import read_queries
from askkit.sources import AskSource
from askkit.vault import Vault
from askkit.vault.chunking import DEFAULT_KIMUN, KimunVersion
from askkit.widgets._holes_model import HoleView, hole_question, hole_view, holes_of
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
    holes:
        A holes file (:func:`askkit.gate.write_holes`, ``askkit diff --holes``):
        walk its holes in order instead of following the reader. Each hole's
        section is opened in the reader (which needs a vault), for its question
        (the file's ``question``, else ``queries``' text for its id, else the id),
        and graded under the hole's ``query_id, path, heading``; the id cannot be
        edited. A hole whose note or heading is gone says so and cannot be
        graded; *next* skips it. :meth:`from_holes` builds the reader too.

    Each grade whose id is not one of ``queries``' (nor a fixed ``query_id``)
    records its question, ``query_id<TAB>question``, in :attr:`questions_path`
    beside the judgments file, atomically and under the judgments file's lock,
    before the judgment is written.

    Keys: focus the *keys* box and type ``0``-``3`` to grade, ``n``/``j`` for
    the next source in the view's table (the next hole, with ``holes``),
    ``p``/``k`` for the previous one.

    Attributes
    ----------
    judgments:
        ``{(query_id, path, heading): grade}``: the file as last read or written,
        each key's grade the one evaluate uses for it.
    questions_path:
        The queries TSV beside the judgments file (``my-qrels.queries.tsv``).
    holes:
        The holes walked (:func:`askkit.gate.read_holes`), ``None`` without ``holes``.
    hole_index:
        The position of the hole shown in :attr:`holes` (``None``: no holes).
    hole:
        The hole shown (:class:`~askkit.widgets._holes_model.HoleView`), or ``None``.
    """

    def __init__(
        self,
        qrels: str | os.PathLike[str],
        view: Any,
        *,
        query_id: str | None = None,
        queries: Mapping[str, str] | str | os.PathLike[str] | None = None,
        holes: str | os.PathLike[str] | None = None,
    ) -> None:
        self.path = Path(qrels)
        self.questions_path = questions_path(self.path)
        self.reader = _reader_of(view)
        self.table = getattr(view, "view", None) or getattr(view, "sources_view", None)
        if queries is None or isinstance(queries, Mapping):
            by_id = dict(queries or {})
        else:
            by_id = read_queries(queries)
        self._queries = by_id
        self._open_holes(holes, query_id)
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
        rows: list[Any] = [self.question_html]
        if self.holes is not None:
            self.query_id_box.disabled = True
            rows.append(w.HBox([self.prev_hole_button, self.next_hole_button, self.hole_html]))
        rows += [
            w.HBox([self.query_id_box, self.keys_box]),
            w.HBox(self.grade_buttons),
            self.status_html,
        ]
        super().__init__(rows)
        self.add_class("askkit-labeler")
        if self.hole_index is not None:
            self.go(self.hole_index)
        else:
            self._render()

    def _open_holes(self, holes: str | os.PathLike[str] | None, query_id: str | None) -> None:
        """Read the holes file (``holes=``) and make the hole navigation's widgets."""
        self.holes = None if holes is None else read_holes(holes)
        if self.holes is not None and (query_id is not None or self.reader.vault is None):
            raise UsageError(
                "holes are graded under their own query ids, in a reader with a vault: give "
                "no query_id, and a reader (or view) opened on the vault "
                "(Labeler.from_holes(holes, vault, qrels) builds one)"
            )
        self._holes = [] if self.holes is None else holes_of(self.holes)
        self.hole_index: int | None = 0 if self._holes else None
        self.hole: HoleView | None = None
        self.hole_html = w.HTML()
        self.hole_html.add_class("askkit-hole-status")
        self.prev_hole_button = w.Button(description="◀ previous hole")
        self.next_hole_button = w.Button(description="next hole ▶")
        self.prev_hole_button.add_class("askkit-prev-hole")
        self.next_hole_button.add_class("askkit-next-hole")
        self.prev_hole_button.on_click(lambda _b: self.move(-1))
        self.next_hole_button.on_click(lambda _b: self.move(1))

    @classmethod
    def from_holes(
        cls,
        holes: str | os.PathLike[str],
        vault: Vault | str | os.PathLike[str],
        qrels: str | os.PathLike[str],
        *,
        queries: Mapping[str, str] | str | os.PathLike[str] | None = None,
        kimun: KimunVersion = DEFAULT_KIMUN,
    ) -> Labeler:
        """A Labeler walking the holes file ``holes`` (see ``holes=``), with its own
        :class:`SourceReader` on ``vault`` shown below the buttons; grades go to ``qrels``.

        ``Labeler.from_holes("holes.tsv", "data/vault", "my-qrels.tsv")``
        """
        reader = SourceReader(vault, kimun=kimun)
        labeler = cls(qrels, reader, queries=queries, holes=holes)
        labeler.children = (*labeler.children, reader)
        return labeler

    def __repr__(self) -> str:
        walk = ""
        if self.holes is not None:
            at = "none" if self.hole_index is None else self.hole_index + 1
            walk = f", hole {at} of {len(self._holes)}"
        return f"<Labeler: {len(self.judgments)} judgments in {self.path}{walk}>"

    # -- state

    @property
    def source(self) -> AskSource | None:
        """The source being graded (the reader's)."""
        source: AskSource | None = self.reader.source
        return source

    @property
    def query_id(self) -> str:
        """The query id judgments go under."""
        if self.holes is not None:
            return "" if self.hole is None else self.hole.key[0]
        return str(self.query_id_box.value).strip()

    @property
    def question(self) -> str:
        """The question graded for: the reader's (the Explorer's shown question), as
        recorded (:func:`~askkit.widgets._qrels.question_text`); with ``holes``, the
        hole's (its id when no question is known)."""
        if self.holes is not None:
            return "" if self.hole is None else question_text(self.hole.question)
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
        if self.holes is not None and question == qid:  # no question known: record none
            return {}
        if self._fixed_query_id is not None or not question or qid in self._users_ids:
            return {}
        return {qid: question}

    def key(self) -> Key | None:
        """The qrels key of the shown source, ``None`` when there is nothing to grade;
        with ``holes``, the hole's ``query_id, path, heading`` as the file gives them."""
        if self.holes is not None:
            return None if self.hole is None else self.hole.key
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
        if self.hole is not None and self.hole.problem:
            self.status_html.value = _html.message(
                f"grade {grade} not saved: {self.hole.problem}", tone="error", lead="error"
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
        """Show the next (``+1``) or previous (``-1``) source of the view's table; with
        ``holes``, the next or previous hole."""
        if self.holes is not None:
            if self.hole_index is not None:
                self.go(self.hole_index + delta)
            return
        table = self.table
        if table is None or not len(table.positions):
            return
        positions = table.positions.tolist()
        current = table.selected_position
        i = positions.index(current) if current in positions else -1
        target = min(max(i + delta, 0), len(positions) - 1)
        table.select(positions[target])

    def go(self, index: int) -> None:
        """Show hole ``index`` (0-based, clamped to the holes) in the reader."""
        if not self._holes or self.reader.vault is None:
            return
        index = min(max(index, 0), len(self._holes) - 1)
        record = self._holes[index]
        qid = str(record["query_id"])
        question = hole_question(str(record["question"]), qid, self._queries)
        self.hole_index = index
        self.hole = hole_view(self.reader.vault, record, question, kimun=self.reader.kimun)
        self.query_id_box.value = qid
        self.reader.show(self.hole.source, question if question != qid else "", numbering="search")
        self._render()

    def holes_judged(self) -> int:
        """How many of the holes have a grade in the judgments file."""
        keys = [(str(h["query_id"]), str(h["path"]), str(h["heading"])) for h in self._holes]
        return sum(key in self.judgments for key in keys)

    # -- observers

    def _on_reader(self, change: dict[str, Any]) -> None:
        if self.holes is None and change["name"] == "query" and self._fixed_query_id is None:
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
        blocked = self.source is None or (self.hole is not None and bool(self.hole.problem))
        for g, button in zip(GRADES, self.grade_buttons, strict=True):
            button.button_style = "success" if g == current else ""
            button.disabled = blocked
        if self.holes is not None:
            self._render_hole()
        self.status_html.value = _html.grade_status(
            self.key(), current, saved=saved, count=len(self.judgments), file=self.path
        )

    def _render_hole(self) -> None:
        at, hole = self.hole_index, self.hole
        self.prev_hole_button.disabled = at is None or at <= 0
        self.next_hole_button.disabled = at is None or at >= len(self._holes) - 1
        self.hole_html.value = _html.hole_status(
            at,
            len(self._holes),
            self.holes_judged(),
            side=hole.side if hole else "",
            rank=hole.rank if hole else 0,
            measures=hole.measures if hole else "",
            problem=hole.problem if hole else "",
        )
