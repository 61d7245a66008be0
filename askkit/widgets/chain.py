"""``ChainView``: one question through kimun's stages, each note of interest a row across them.

The chain is :func:`askkit.trace.chain_rows` (each section's rank or ``[n]``
at each stage, where it stopped and why) rendered by :func:`askkit.trace.trace_html`;
below it, the pool's scores with the cut drawn (the :class:`CutView`'s plot,
:func:`askkit.widgets._cut_model.cut_plot_png`), and one button per section
that opens the :class:`SourceReader` at the section's best chunk.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import ipywidgets as w
import pandas as pd

from askkit import _html
from askkit.ranking import CutSettings
from askkit.sources import AskSource
from askkit.trace import (
    ChainRow,
    Interest,
    chain_rows,
    chain_table,
    gather,
    ranked_pool,
    sections_of,
    trace_pool,
)
from askkit.vault import Vault
from askkit.widgets._cut_model import cut_model, cut_plot_png
from askkit.widgets.reader import SourceReader
from askkit.wire import ChunkResult

__all__ = ["ChainPanel", "ChainView"]


class ChainView(w.VBox):  # type: ignore[misc]
    """Where each section of interest stopped on its way to kimun's answer.

    Parameters
    ----------
    pool:
        The candidate pool as the store returned it (best first;
        ``LocalIndex.pool(question)``), or use :meth:`ask`.
    sections:
        The notes or sections to follow (:func:`askkit.trace.sections_of`).
    settings:
        kimun's cut settings (default kimun's).
    vault:
        The vault: says whether each section exists now, and the reader
        shows the note with the section located.
    question:
        Shown above the chain.
    trace_options:
        Passed on to :func:`askkit.trace.trace_pool` (``rerank_scores``,
        ``ranking``, ``answer``, ``context``, ...).

    Attributes
    ----------
    frame:
        The trace (:data:`askkit.trace.TRACE_COLUMNS`).
    rows:
        The chain model, one :class:`askkit.trace.ChainRow` per section.
    reader:
        The source reader the section buttons open.
    """

    def __init__(
        self,
        pool: Sequence[ChunkResult],
        sections: Iterable[Interest | tuple[str, str | None] | str] | pd.DataFrame,
        settings: CutSettings | None = None,
        *,
        vault: Vault | str | os.PathLike[str] | None = None,
        question: str = "",
        **trace_options: Any,
    ) -> None:
        self.settings = CutSettings() if settings is None else settings
        headings = trace_options.pop("headings", None)
        if headings is None and vault is not None:  # the sections' notes alone, as a trace reads
            from askkit.trace import read_headings, sections_of

            sections = sections_of(sections)
            now = read_headings(vault, [s.path for s in sections])
            headings = now.headings
            trace_options.setdefault("unreadable", now.unreadable)
        self.frame = trace_pool(pool, sections, self.settings, headings=headings, **trace_options)
        self.pool = ranked_pool(
            pool,
            trace_options.get("rerank_scores"),
            reranker_failed=bool(trace_options.get("reranker_failed", False)),
        )
        self.rows: list[ChainRow] = chain_rows(self.frame)
        self.chain_html = w.HTML(chain_table(self.frame, question=question))
        self.chain_html.add_class("askkit-chain")
        model = cut_model(self.pool, self.settings)
        self.plot = w.Image(value=cut_plot_png(model), format="png")
        self.plot.add_class("askkit-chain-plot")
        self.cut_label = w.HTML(_html.message(model.summary, tone="muted"))
        self.reader = SourceReader(vault)
        self.buttons: list[w.Button] = []
        for row in self.rows:
            button = w.Button(
                description=f"open {row.section}",
                tooltip=f"{row.stopped}: {row.why}",
                layout=w.Layout(width="auto"),
                disabled=self._chunk(row) is None,
            )
            button.add_class("askkit-chain-open")
            button.on_click(lambda _b, row=row: self.open_section(row.section))
            self.buttons.append(button)
        super().__init__(
            [
                self.chain_html,
                self.cut_label,
                self.plot,
                w.HBox(self.buttons, layout=w.Layout(flex_flow="row wrap")),
                self.reader,
            ]
        )
        self.add_class("askkit-chain-view")

    @classmethod
    def ask(
        cls,
        question: str,
        retriever: Any,
        sections: Iterable[Interest | tuple[str, str | None] | str] | pd.DataFrame,
        settings: CutSettings | None = None,
        *,
        vault: Vault | str | os.PathLike[str] | None = None,
        reranker: Any = None,
        answer: str | None = None,
    ) -> ChainView:
        """Trace ``question`` through ``retriever`` (its pool, the vault, a reranker)."""
        wanted = sections_of(sections)
        inputs = gather(question, retriever, wanted, vault=vault, reranker=reranker)
        pool = inputs.pop("pool")
        return cls(pool, wanted, settings, vault=vault, question=question, answer=answer, **inputs)

    def _chunk(self, row: ChainRow) -> tuple[int, ChunkResult] | None:
        interest = Interest(row.path, row.heading)
        return next(((i, c) for i, c in enumerate(self.pool) if interest.holds(c)), None)

    def open_section(self, section: str) -> AskSource | None:
        """Show ``section``'s best pool chunk in the reader; ``None`` when it is not in the pool."""
        row = next((r for r in self.rows if r.section == section), None)
        if row is None:
            raise KeyError(f"{section!r} is not a section of this chain")
        found = self._chunk(row)
        if found is None:
            self.reader.show(None)
            return None
        position, chunk = found
        source = AskSource.from_chunk(position, chunk)
        self.reader.show(source)
        return source


class ChainPanel(w.Accordion):  # type: ignore[misc]
    """The Explorer's *why not* panel: the notes to follow, a trace button, the chain.

    ``on_trace`` receives the ``(path, heading)`` pairs typed in the box
    (``path#heading``, comma-separated; no ``#``: the whole note).
    """

    def __init__(self, on_trace: Callable[[list[tuple[str, str | None]]], None]) -> None:
        self.sections_box = w.Text(
            placeholder="notes of interest: path#heading, comma-separated",
            description="follow",
            layout=w.Layout(width="60%"),
        )
        self.trace_button = w.Button(description="trace")
        self.trace_button.add_class("askkit-chain-trace")
        self.status = w.HTML(
            _html.message("run a query, name the notes to follow, click trace", tone="muted")
        )
        self.view: ChainView | None = None
        self._box = w.VBox([w.HBox([self.sections_box, self.trace_button]), self.status])
        super().__init__([self._box])
        self.set_title(0, "why not: follow notes through kimun's stages")
        self.selected_index = None
        self.add_class("askkit-chain-panel")
        self.trace_button.on_click(lambda _b: on_trace(self.pairs()))

    def pairs(self) -> list[tuple[str, str | None]]:
        """The notes typed in the box, as ``(path, heading or None)``."""
        wanted = [s.strip() for s in self.sections_box.value.split(",") if s.strip()]
        return [(s.split("#", 1)[0], s.split("#", 1)[1] if "#" in s else None) for s in wanted]

    def say(self, text: str, *, error: bool = False) -> None:
        """One status line above the chain (escaped)."""
        lead = "trace" if error else ""
        self.status.value = _html.message(text, tone="error" if error else "muted", lead=lead)

    def show(self, view: ChainView) -> ChainView:
        """Show ``view`` in the panel, and open it."""
        self.view = view
        self._box.children = [self._box.children[0], self.status, view]
        self.say(f"{len(view.rows)} notes followed")
        self.selected_index = 0  # type: ignore[assignment]
        return view
