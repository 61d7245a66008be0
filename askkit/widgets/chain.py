"""``ChainView``: one question through kimun's stages, each note of interest a row across them.

The chain is :func:`askkit.trace.chain_rows` (each section's rank or ``[n]``
at each stage, where it stopped and why) rendered by :func:`askkit.trace.trace_html`;
below it, what notes' frontmatter takes of the context
(:func:`askkit.trace.frontmatter_note`), the pool's scores with the cut drawn
(the :class:`CutView`'s plot, :func:`askkit.widgets._cut_model.cut_plot_png`),
and one button per section that opens the :class:`SourceReader` at the
section's best chunk, the question's terms marked.

A section is named as a user types it, its path as it is on disk or as
kimun prints it (:func:`askkit.trace.sections_of` prints it through
:class:`~askkit.VaultPath`); one that names no note, or no heading of its
note, says which are closest.
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
    closest_paths,
    frontmatter_note,
    gather,
    ranked_pool,
    read_headings,
    sections_of,
    trace_pool,
    typed_section,
)
from askkit.vault import Vault
from askkit.widgets._cut_model import cut_model, cut_plot_png
from askkit.widgets.reader import SourceReader
from askkit.wire import ChunkResult

__all__ = ["ChainPanel", "ChainView", "chain_status"]


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
        The vault: says whether each section exists now (naming the closest
        notes or headings when it does not), and the reader shows the note
        with the section located.
    question:
        Shown above the chain; the reader marks its terms.
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
        self.question = question
        sections = sections_of(sections)  # typed paths printed as kimun prints them
        headings = trace_options.pop("headings", None)
        if headings is None and vault is not None:  # the sections' notes alone, as a trace reads
            now = read_headings(vault, [s.path for s in sections])
            headings = now.headings
            trace_options.setdefault("unreadable", now.unreadable)
            trace_options.setdefault("listing", now.listing)
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
        #: What notes' frontmatter takes of the kept context (``""`` when none).
        self.frontmatter = frontmatter_note(self.pool, self.settings)
        self.frontmatter_html = w.HTML(
            _html.message(self.frontmatter, tone="warn", lead="frontmatter")
            if self.frontmatter
            else ""
        )
        self.frontmatter_html.add_class("askkit-chain-frontmatter")
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
                self.frontmatter_html,
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

    def row(self, section: str) -> ChainRow:
        """The chain's row for ``section``, typed as in the *why not* box (``path#heading``,
        the path as on disk or as kimun prints it); a KeyError names the closest rows."""
        exact = next((r for r in self.rows if r.section == section), None)
        if exact is not None:
            return exact
        wanted = sections_of([typed_section(section)])[0]
        found = next(
            (r for r in self.rows if (r.path, r.heading) == (wanted.path, wanted.heading)), None
        )
        if found is not None:
            return found
        close = closest_paths(wanted.section, [r.section for r in self.rows])
        hint = f"; the closest: {', '.join(repr(c) for c in close)}" if close else ""
        raise KeyError(f"{section!r} is not a section of this chain{hint}")

    def open_section(self, section: str) -> AskSource | None:
        """Show ``section``'s best pool chunk in the reader, the question's terms marked and
        its number said as its rank in the pool; ``None`` when it is not in the pool.
        ``section`` is typed as in the *why not* box (:meth:`row`)."""
        row = self.row(section)
        found = self._chunk(row)
        if found is None:
            self.reader.show(None, query=self.question, numbering="pool")
            return None
        position, chunk = found
        source = AskSource.from_chunk(position, chunk)
        self.reader.show(source, query=self.question, numbering="pool")
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
        """The notes typed in the box, as ``(path, heading or None)``
        (:func:`askkit.trace.typed_section`: the path as typed, on disk or as kimun
        prints it; the trace prints it through :class:`~askkit.VaultPath`)."""
        wanted = [s.strip() for s in self.sections_box.value.split(",") if s.strip()]
        return [typed_section(s) for s in wanted]

    def say(self, text: str, *, error: bool = False) -> None:
        """One status line above the chain (escaped)."""
        lead = "trace" if error else ""
        self.status.value = _html.message(text, tone="error" if error else "muted", lead=lead)

    def show(self, view: ChainView) -> ChainView:
        """Show ``view`` in the panel, and open it; the status line names each section
        the vault stopped, and the closest ones (:func:`chain_status`)."""
        self.view = view
        self._box.children = [self._box.children[0], self.status, view]
        text, missing = chain_status(view.rows)
        self.status.value = _html.message(text, tone="warn" if missing else "muted")
        self.selected_index = 0  # type: ignore[assignment]
        return view


def chain_status(rows: Sequence[ChainRow]) -> tuple[str, bool]:
    """The *why not* panel's line for a chain: how many notes (or sections) it follows, and
    the sentence of each one the vault stopped (not in it: the closest named; its heading
    gone: the closest sections named; unreadable: why); whether the vault stopped any.

    >>> from askkit.ranking import pool_of
    >>> from askkit.trace import trace_pool
    >>> frame = trace_pool(pool_of([0.9]), ["/n0.md", "/x.md"], headings={"/n0.md": set()})
    >>> chain_status(chain_rows(frame))
    ("2 notes followed; 1 stopped at the vault: /x.md is not in the vault (paths as kimun prints them); the closest notes: '/n0.md'", True)
    """  # noqa: E501 - a doctest's output is one line
    missing = [r.why for r in rows if r.stopped == "sectioned" and not r.passed]
    said = f"{len(rows)} note{'s' if len(rows) != 1 else ''} followed"
    if missing:
        said += f"; {len(missing)} stopped at the vault: " + "; ".join(missing)
    return said, bool(missing)
