"""``SourceReader``: kimun's Source reader, the retrieved chunk in its note.

The widget calls the pure functions of :mod:`askkit.widgets._reader_model`
and :func:`askkit.vault.locate.locate_source`; what it shows is the escaped
markup of :mod:`askkit._html`.
"""

from __future__ import annotations

import os
from typing import Any, cast

import ipywidgets as w
import traitlets

from askkit import _html
from askkit.errors import AskkitError
from askkit.sources import AskSource
from askkit.vault import Vault
from askkit.vault.chunking import DEFAULT_KIMUN, KimunVersion, check_kimun
from askkit.vault.locate import CURRENT, locate_source, stored_message, stored_status
from askkit.widgets._reader_model import (
    NoteSection,
    heading_lines,
    note_sections,
    query_terms,
    section_at,
)
from askkit.widgets._table_model import note_titles

__all__ = ["SourceReader"]


def _as_vault(vault: Vault | str | os.PathLike[str] | None) -> Vault | None:
    if vault is None or isinstance(vault, Vault):
        return vault
    return Vault(vault)


class SourceReader(w.VBox):  # type: ignore[misc]
    """The selected source: title, metadata, chunk text and, with a vault, the note.

    Parameters
    ----------
    vault:
        A :class:`~askkit.vault.Vault` (or its folder). With one, the reader
        shows the whole note with the located section
        (:func:`askkit.vault.locate.locate_source`) highlighted at the top of the
        note view, and previous/next buttons step through the note's sections
        (:func:`askkit.vault.chunking.chunk_note`).

    Attributes
    ----------
    source:
        The source shown (``None`` for none); set it, or call :meth:`show`.
    query:
        The query whose terms are highlighted.
    numbering:
        What the source's number is (:data:`askkit._html.Numbering`):
        ``"citation"`` (default: the ``[n]`` an answer cites it by, shown
        ``ordinal [n]``), ``"pool"`` (its rank in the candidate pool, shown
        ``rank n in the pool``) or ``"search"`` (its search rank).
    section:
        The index into :attr:`sections` of the highlighted section, ``None``
        when the note is not open; :attr:`located` is the highlighted range.
    stored:
        How the chunk relates to the note now (a
        :data:`~askkit.vault.locate.StoredStatus`: ``"current"``, ``"older kimun"``
        or ``"note changed"``), ``None`` when the note is not open.
    """

    source = traitlets.Any(None, allow_none=True)
    query = traitlets.Unicode("")
    numbering = traitlets.Enum(("citation", "pool", "search"), "citation")
    section = traitlets.Int(None, allow_none=True)

    def __init__(
        self,
        vault: Vault | str | os.PathLike[str] | None = None,
        *,
        kimun: KimunVersion = DEFAULT_KIMUN,
    ) -> None:
        self.vault = _as_vault(vault)
        self.kimun: KimunVersion = check_kimun(kimun)
        self.stored: str | None = None
        self.note_text: str | None = None
        self.note_error: str | None = None
        self.sections: list[NoteSection] = []
        self.located: tuple[int, int] | None = None
        self._headings: frozenset[int] = frozenset()
        self.title_html = w.HTML(_html.source_title(None))
        self.meta_html = w.HTML()
        self.chunk_label = w.HTML(_html.heading_label("retrieved chunk"))
        self.chunk_html = w.HTML()
        self.stored_html = w.HTML()
        self.prev_button = w.Button(description="◀ previous section", disabled=True)
        self.next_button = w.Button(description="next section ▶", disabled=True)
        self.section_label = w.HTML()
        self.note_html = w.HTML()
        for widget, cls in (
            (self.title_html, "askkit-reader-title"),
            (self.meta_html, "askkit-reader-meta"),
            (self.chunk_html, "askkit-reader-chunk"),
            (self.stored_html, "askkit-reader-stored"),
            (self.note_html, "askkit-reader-note"),
            (self.prev_button, "askkit-prev-section"),
            (self.next_button, "askkit-next-section"),
        ):
            widget.add_class(cls)
        self.prev_button.on_click(lambda _b: self.step(-1))
        self.next_button.on_click(lambda _b: self.step(1))
        self._nav = w.HBox(
            [self.prev_button, self.next_button, self.section_label],
            layout=w.Layout(align_items="center"),
        )
        super().__init__()
        self.add_class("askkit-reader")
        self._render()

    def __repr__(self) -> str:
        source = self.source
        if source is None:
            return "<SourceReader: no source>"
        where = ""
        if self.section is not None and self.sections:
            where = f", section {self.section + 1}/{len(self.sections)}"
        elif self.vault is not None:
            where = ", section not found" if self.note_text is not None else ", note not open"
        before, number, after = _html.ordinal_label(source.ordinal, self._numbering)
        if self.numbering != "citation":  # "[n]" alone reads as a citation
            number = f"{before} {number}{after}"
        title = source.shown_heading(self._note_title(source))
        return f"<SourceReader: {number} {title} ({source.path}){where}>"

    def show(
        self,
        source: AskSource | None,
        query: str | None = None,
        *,
        numbering: _html.Numbering | None = None,
    ) -> None:
        """Show ``source``; highlight ``query``'s terms and say what its number is
        (``numbering``, see :attr:`numbering`) when given."""
        with self.hold_trait_notifications():
            if query is not None:
                self.query = query
            if numbering is not None:
                self.numbering = numbering
            self.source = source

    @property
    def _numbering(self) -> _html.Numbering:
        return cast("_html.Numbering", self.numbering)  # the trait's Enum holds these alone

    @property
    def terms(self) -> list[str]:
        """The highlighted query terms."""
        return query_terms(self.query)

    def step(self, delta: int) -> None:
        """Highlight the previous (``-1``) or next (``+1``) section of the note."""
        if not self.sections or self.note_text is None:
            return
        current = self.section if self.section is not None else -1
        target = min(max(current + delta, 0), len(self.sections) - 1)
        sec = self.sections[target]
        self.located = (sec.start, sec.end)
        self.section = target
        self._render_note()

    @traitlets.observe("source")
    def _on_source(self, change: dict[str, Any]) -> None:
        self._open(change["new"])
        self._render()

    @traitlets.observe("query", "numbering")
    def _on_query(self, change: dict[str, Any]) -> None:
        self._render()

    def _open(self, source: AskSource | None) -> None:
        """Read the source's note from the vault and locate the source in it."""
        self.note_text = None
        self.note_error = None
        self.sections = []
        self.located = None
        self.stored = None
        self._headings = frozenset()
        section: int | None = None
        if source is not None and self.vault is not None:
            try:
                self.note_text = self.vault.read(source.path)
            except (AskkitError, OSError) as exc:
                self.note_error = str(exc)
            else:
                self.sections = note_sections(self.note_text, kimun=self.kimun)
                self._headings = heading_lines(self.note_text, kimun=self.kimun)
                self.located = locate_source(self.note_text, source, kimun=self.kimun)
                if self.located is not None:
                    section = section_at(self.sections, self.located[0])
                self.stored = stored_status(
                    self.note_text,
                    source.text,
                    stored_hash=source.hash,
                    note_hash=self._note_hash(source),
                    kimun=self.kimun,
                )
        self.section = section

    def _note_title(self, source: AskSource | None) -> str | None:
        """The note's title as on disk, which names a section before its first heading."""
        if source is None:
            return None
        return note_titles(self.vault, [str(source.path)]).get(str(source.path))

    def _note_hash(self, source: AskSource) -> str | None:
        if self.vault is None or self.note_text is None:
            return None
        try:
            return self.vault.hash(source.path)
        except (AskkitError, OSError):
            return None

    def _render(self) -> None:
        source = self.source
        self.title_html.value = _html.source_title(source, self._note_title(source))
        if source is None:
            self.meta_html.value = ""
            self.chunk_html.value = ""
            self.children = [self.title_html]
            return
        self.meta_html.value = _html.source_meta(
            source, note_hash=self._note_hash(source), numbering=self._numbering
        )
        self.chunk_html.value = _html.chunk_html(source.text, self.terms)
        parts: list[Any] = [self.title_html, self.meta_html, self.chunk_label, self.chunk_html]
        if self.vault is not None:
            self._render_note()
            stored = self.stored if self.stored not in {None, CURRENT} else None
            self.stored_html.value = (
                _html.message(stored_message(stored), tone="warn") if stored else ""
            )
            parts += [self.stored_html, self._nav, self.note_html]
        self.children = parts

    def _render_note(self) -> None:
        if self.note_text is None:
            message = self.note_error or "the note is not open"
            self.note_html.value = _html.message(message, tone="error")
            self.section_label.value = ""
            self.prev_button.disabled = self.next_button.disabled = True
            return
        self.note_html.value = _html.note_html(
            self.note_text, self.located, self.terms, headings=self._headings
        )
        self.section_label.value = _html.section_status(
            self.section, [s.label for s in self.sections], located=self.located is not None
        )
        at = self.section
        self.prev_button.disabled = at is None or at <= 0
        self.next_button.disabled = not self.sections or (
            at is not None and at >= len(self.sections) - 1
        )
