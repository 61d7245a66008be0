"""``Explorer``: ask a retriever, see its sources, read them, look at the scores.

Works with anything :func:`askkit.retrieve.as_retriever` adapts: a
:class:`~askkit.retrieve.LocalIndex`, a :class:`~askkit.retrieve.KimunClient`
or a plain ``f(query) -> chunks`` function. A retriever that raises is
reported in the widget (escaped), never lost. Queries typed, clicked or
picked from the history run on a background thread, so a slow server never
blocks the kernel.

Its *context cut* panel (closed at first) shows a :class:`CutView` of the
current query's candidate pool: ``LocalIndex.pool(query)`` when the retriever
has a ``pool(query)`` method, else the retriever's first
:data:`~askkit.ranking.settings.CANDIDATE_POOL` results (a kimun server's
search rows, which its own cut has already shortened). The pool is fetched
only while the panel is open, on the same background thread as the query.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import ipywidgets as w

from askkit import _html
from askkit.ranking import CutSettings
from askkit.ranking.settings import CANDIDATE_POOL
from askkit.retrieve import Retriever, as_retriever
from askkit.sources import AskSource, SourceList
from askkit.vault import Vault
from askkit.widgets._histogram import score_histogram_png
from askkit.widgets.cut import CutView
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


def _pool_source(obj: object, retriever: Retriever) -> tuple[Callable[[str], Any], str]:
    """How the cut panel gets a query's pool, and how it says so."""
    pool = getattr(obj, "pool", None)
    if callable(pool):

        def fetch(query: str) -> Any:
            return pool(query)  # the index's own pool size (kimun's 80 by default)

        return fetch, f"{type(obj).__name__}.pool"

    def first(query: str) -> Any:
        return retriever(query, k=CANDIDATE_POOL)

    return first, f"the retriever's first {CANDIDATE_POOL} results (it has no pool method)"


class Explorer(w.VBox):  # type: ignore[misc]
    """A query box, the results in a :class:`SourcesView`, a :class:`SourceReader`,
    a score histogram, the session's query history and a context-cut panel.

    Parameters
    ----------
    retriever:
        A :class:`~askkit.retrieve.Retriever` or anything
        :func:`~askkit.retrieve.as_retriever` adapts.
    vault:
        Passed to the reader (the note around each source).
    k:
        How many sources to ask for.
    page_size:
        Rows per page of the results (and of the cut panel's kept chunks).
    cut:
        The cut panel's starting :class:`~askkit.ranking.CutSettings`
        (kimun's defaults).

    Type a query and press Enter (or click *search*); click a row's ``[n]`` to
    read it; click a past query to run it again. These run on a background
    thread (one retrieval at a time): the kernel stays free meanwhile, and a
    query submitted while another runs supersedes any still waiting; a result
    that arrives after a newer query was submitted goes to the history but is
    not shown. :meth:`submit` does the same from Python and :meth:`wait` waits
    for it; :meth:`search` runs a query in the calling thread and returns its
    sources. Open the *context cut* panel (or call :meth:`show_cut`) to see the
    query's candidate pool in a :class:`CutView`; while it is open, each query
    fetches its pool too.

    Attributes
    ----------
    sources:
        The current results (a :class:`~askkit.SourceList`).
    history:
        The session's queries, oldest first (:class:`HistoryEntry`).
    error:
        The last query's error message, ``None`` when it succeeded.
    cut_view:
        The context-cut panel's :class:`CutView` (open it with :meth:`show_cut`;
        built on first use).
    pool_query:
        The query whose pool the cut panel shows (``None`` before the first).
    """

    def __init__(
        self,
        retriever: Any,
        vault: Vault | str | os.PathLike[str] | None = None,
        *,
        k: int = 10,
        page_size: int = 10,
        cut: CutSettings | None = None,
    ) -> None:
        self.retriever: Retriever = as_retriever(retriever)
        self._fetch_pool, self._pool_from = _pool_source(retriever, self.retriever)
        self.pool_query: str | None = None
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
        self._cut_settings = cut
        self._page_size = page_size
        self._cut_view: CutView | None = None  # built when the panel first opens
        self.cut_status = w.HTML(_html.message("run a query to see its pool", tone="muted"))
        self._cut_box = w.VBox([self.cut_status])
        self.cut_panel = w.Accordion([self._cut_box])
        self.cut_panel.set_title(0, "context cut")
        self.cut_panel.selected_index = None
        self.cut_panel.add_class("askkit-cut-panel")
        self._shown_query: str | None = None
        self._cut_worker: threading.Thread | None = None
        self._last_submitted = ""
        self._lock = threading.Lock()  # one retrieval at a time, and its display
        self._generation = 0  # bumped by every query; a result shows only if still current
        self._worker: threading.Thread | None = None
        self.query_box.observe(self._on_submit, names="value")
        self.search_button.on_click(lambda _b: self.submit(self.query_box.value))
        self.view.on_select(lambda src: self.reader.show(src, query=self._current_query()))
        self.cut_panel.observe(self._on_cut_panel, names="selected_index")
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
                self.cut_panel,
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
        """Block until the last submitted query is shown (or superseded), and the cut
        panel's pool with it; False if ``timeout`` seconds pass first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        for worker in (self._worker, self._cut_worker):
            if worker is not None:
                worker.join(None if deadline is None else max(deadline - time.monotonic(), 0))
                if worker.is_alive():
                    return False
        return True

    @property
    def cut_view(self) -> CutView:
        """The context-cut panel's :class:`CutView`, built on first use."""
        if self._cut_view is None:
            view = CutView(None, self._cut_settings, page_size=self._page_size)
            view.sources_view.on_select(self._read_kept)
            self._cut_view = view
            self._cut_box.children = [self.cut_status, view]
        return self._cut_view

    @property
    def cut_open(self) -> bool:
        """Whether the context-cut panel is open (its pool follows each query)."""
        return bool(self.cut_panel.selected_index == 0)

    def show_cut(self, show: bool = True) -> None:
        """Open (or close) the context-cut panel; opening fetches the shown query's pool."""
        self.cut_panel.selected_index = 0 if show else None

    def _read_kept(self, source: AskSource | None) -> None:
        if source is not None:  # a kept chunk clicked in the cut panel opens in the reader
            self.reader.show(source, query=self._current_query())

    def _on_cut_panel(self, change: dict[str, Any]) -> None:
        if change["new"] != 0:
            return
        _ = self.cut_view  # built here, in the kernel's thread
        query = self._shown_query
        if query is None or query == self.pool_query:
            return
        generation = self._generation
        worker = threading.Thread(
            target=self._background_pool,
            args=(query, generation),
            name="askkit-explorer-pool",
            daemon=True,
        )
        self._cut_worker = worker
        worker.start()

    def _background_pool(self, query: str, generation: int) -> None:
        try:
            with self._lock:
                if generation == self._generation:  # else a newer query will show its own
                    self._show_pool(query)
        except Exception as exc:  # showing failed: say so rather than lose it in a thread
            self.cut_status.value = _html.message(_describe(exc), tone="error", lead="the cut")

    def _show_pool(self, query: str) -> None:
        """Fetch ``query``'s pool and show it in the cut panel (an error is shown there)."""
        self.cut_status.value = _html.message(f"fetching the pool for {query}…", tone="muted")
        try:
            pool: Sequence[Any] = self._fetch_pool(query)
            self.cut_view.set_pool(pool)
        except Exception as exc:  # any retriever failure is shown to the user
            self.cut_view.set_pool(None)
            self.cut_status.value = _html.message(
                _describe(exc), tone="error", lead="fetching the pool failed"
            )
        else:
            self.cut_status.value = _html.message(
                f"pool for {query}: {len(self.cut_view.pool)} chunks from {self._pool_from}",
                tone="muted",
            )
        self.pool_query = query

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
        self._shown_query = query
        self.view.set_data(sources)
        self.reader.show(None, query=query)
        if self.cut_open:
            self._show_pool(query)
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
