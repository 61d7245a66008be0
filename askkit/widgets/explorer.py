"""``Explorer``: ask a retriever, see its sources, read them, look at the scores.

Works with anything :func:`askkit.retrieve.as_retriever` adapts: a
:class:`~askkit.retrieve.LocalIndex`, a :class:`~askkit.retrieve.KimunClient`
or a plain ``f(query) -> chunks`` function. A retriever that raises is
reported in the widget (escaped), never lost. Queries typed, clicked or
picked from the history run on a background thread, so a slow server never
blocks the kernel.
"""

from __future__ import annotations

import math
import os
import threading
import time
from dataclasses import dataclass
from typing import Any

import ipywidgets as w

from askkit import _html
from askkit.retrieve import Retriever, as_retriever
from askkit.sources import AskSource, SourceList
from askkit.vault import Vault
from askkit.widgets._histogram import score_histogram_png
from askkit.widgets.reader import SourceReader
from askkit.widgets.table import SourcesView

__all__ = ["Explorer", "HistoryEntry"]


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One query of the session: how many sources it found, in how long, or its error."""

    query: str
    count: int
    seconds: float
    error: str | None = None

    def label(self) -> str:
        """The history button's text."""
        outcome = "error" if self.error is not None else f"{self.count} sources"
        return f"{self.query} ({outcome})"


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


class Explorer(w.VBox):  # type: ignore[misc]
    """A query box, the results in a :class:`SourcesView`, a :class:`SourceReader`,
    a score histogram and the session's query history.

    Parameters
    ----------
    retriever:
        A :class:`~askkit.retrieve.Retriever` or anything
        :func:`~askkit.retrieve.as_retriever` adapts.
    vault:
        Passed to the reader (the note around each source).
    k:
        How many sources to ask for.

    Type a query and press Enter (or click *search*); click a row's ``[n]`` to
    read it; click a past query to run it again. These run on a background
    thread (one retrieval at a time): the kernel stays free meanwhile, and a
    query submitted while another runs supersedes any still waiting; a result
    that arrives after a newer query was submitted goes to the history but is
    not shown. :meth:`submit` does the same from Python and :meth:`wait` waits
    for it; :meth:`search` runs a query in the calling thread and returns its
    sources.

    Attributes
    ----------
    sources:
        The current results (a :class:`~askkit.SourceList`).
    history:
        The session's queries, oldest first (:class:`HistoryEntry`).
    error:
        The last query's error message, ``None`` when it succeeded.
    """

    def __init__(
        self,
        retriever: Any,
        vault: Vault | str | os.PathLike[str] | None = None,
        *,
        k: int = 10,
        page_size: int = 10,
    ) -> None:
        self.retriever: Retriever = as_retriever(retriever)
        self.sources = SourceList()
        self.history: list[HistoryEntry] = []
        self.error: str | None = None
        self.query_box = w.Text(
            placeholder="ask the retriever…",
            description="query",
            continuous_update=False,
            layout=w.Layout(width="460px"),
        )
        self.query_box.add_class("askkit-query")
        self.k_box = w.BoundedIntText(
            value=k, min=1, max=1000, description="k", layout=w.Layout(width="130px")
        )
        self.search_button = w.Button(description="search", button_style="primary")
        self.search_button.add_class("askkit-search")
        self.status_html = w.HTML()
        self.error_html = w.HTML()
        self.error_html.add_class("askkit-error")
        self.view = SourcesView(None, page_size=page_size, show_cited=False)
        self.reader = SourceReader(vault)
        self.histogram = w.Image(format="png", layout=w.Layout(width="360px"))
        self.histogram.add_class("askkit-histogram")
        self.history_box = w.VBox()
        self.history_box.add_class("askkit-history")
        self._last_submitted = ""
        self._lock = threading.Lock()  # one retrieval at a time, and its display
        self._generation = 0  # bumped by every query; a result shows only if still current
        self._worker: threading.Thread | None = None
        self.query_box.observe(self._on_submit, names="value")
        self.search_button.on_click(lambda _b: self.submit(self.query_box.value))
        self.view.on_select(lambda src: self.reader.show(src, query=self._current_query()))
        side = w.HBox(
            [
                w.VBox([w.HTML(_html.heading_label("scores")), self.histogram]),
                w.VBox(
                    [
                        w.HTML(_html.heading_label("history", "(click to run again)")),
                        self.history_box,
                    ]
                ),
            ]
        )
        super().__init__(
            [
                w.HBox([self.query_box, self.k_box, self.search_button]),
                self.status_html,
                self.error_html,
                side,
                self.view,
                self.reader,
            ]
        )
        self.add_class("askkit-explorer")
        self._show_histogram()

    def __repr__(self) -> str:
        if not self.history:
            return "<Explorer: no query yet>"
        last = self.history[-1]
        outcome = f"error {last.error}" if last.error else f"{last.count} sources"
        return f"<Explorer: {last.query!r} -> {outcome}; {len(self.history)} queries>"

    def _current_query(self) -> str:
        return self.history[-1].query if self.history else ""

    def _on_submit(self, change: dict[str, Any]) -> None:
        query = str(change["new"])
        if query.strip() and query != self._last_submitted:
            self.submit(query)

    def _begin(self, query: str) -> tuple[int, int]:
        """Make ``query`` the current one: (its generation, k)."""
        self._last_submitted = query
        if self.query_box.value != query:
            self.query_box.value = query
        self._generation += 1
        self.status_html.value = _html.message(f"searching for {query}…", tone="muted")
        return self._generation, int(self.k_box.value)

    def submit(self, query: str) -> None:
        """Run ``query`` on a background thread and show it when done (what Enter,
        *search* and the history do); returns at once. See :meth:`wait`."""
        generation, k = self._begin(query)
        worker = threading.Thread(
            target=self._background,
            args=(query, k, generation),
            name="askkit-explorer-search",
            daemon=True,
        )
        self._worker = worker
        worker.start()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the last submitted query is shown (or superseded); False if
        ``timeout`` seconds pass first."""
        worker = self._worker
        if worker is not None:
            worker.join(timeout)
            return not worker.is_alive()
        return True

    def search(self, query: str) -> SourceList:
        """Run ``query`` now, in this thread, show its sources and return them
        (empty on an error, shown). It supersedes any submitted query still waiting."""
        generation, k = self._begin(query)
        with self._lock:
            return self._run(query, k, generation)

    def _background(self, query: str, k: int, generation: int) -> None:
        try:
            with self._lock:
                if generation == self._generation:  # else superseded before it ran
                    self._run(query, k, generation)
        except Exception as exc:  # showing failed: say so rather than lose it in a thread
            self._show_error(exc, "showing the result failed")

    def _run(self, query: str, k: int, generation: int) -> SourceList:
        started = time.perf_counter()
        try:
            chunks = self.retriever(query, k=k)
            sources = AskSource.from_chunks(chunks)
        except Exception as exc:  # any retriever failure is shown to the user
            error: BaseException | None = exc
            sources = SourceList()
        else:
            error = None
        seconds = time.perf_counter() - started
        message = _describe(error) if error is not None else None
        self.history.append(HistoryEntry(query, len(sources), seconds, message))
        if generation != self._generation:  # a newer query was submitted meanwhile
            self._show_history()
            return sources
        if error is not None:
            self._show_error(error)
        else:
            self.error = None
            self.error_html.value = ""
        self.sources = sources
        self.view.set_data(sources)
        self.reader.show(None, query=query)
        self.status_html.value = _html.search_status(query, len(sources), seconds)
        self._show_histogram()
        self._show_history()
        if len(sources):
            self.view.select(0)
        return sources

    def _show_error(self, exc: BaseException, what: str = "the retriever failed") -> None:
        self.error = _describe(exc)
        self.error_html.value = _html.message(self.error, tone="error", lead=what)

    def _show_histogram(self) -> None:
        scores = [s.score for s in self.sources]
        finite = [s for s in scores if not math.isnan(s)]
        title = f"{len(finite)} scores" if finite else ""
        self.histogram.value = score_histogram_png(scores, title=title)

    def _show_history(self) -> None:
        seen: dict[str, HistoryEntry] = {}
        for entry in reversed(self.history):
            seen.setdefault(entry.query, entry)
        buttons = []
        for entry in seen.values():
            button = w.Button(
                description=entry.label(),
                tooltip=f"run again: {entry.query}",
                button_style="danger" if entry.error is not None else "",
                layout=w.Layout(width="360px"),
            )
            button.add_class("askkit-history-item")
            button.on_click(lambda _b, q=entry.query: self.submit(q))
            buttons.append(button)
        self.history_box.children = buttons
