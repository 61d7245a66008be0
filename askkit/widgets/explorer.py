"""``Explorer``: ask a retriever, see its sources, read them, look at the scores.

Works with anything :func:`askkit.retrieve.as_retriever` adapts: a
:class:`~askkit.retrieve.LocalIndex`, a :class:`~askkit.retrieve.KimunClient`
or a plain ``f(query) -> chunks`` function. Given several, named
(``retrievers={"BM25": index, "kimun": client}``), it shows a switch: choosing
another retriever runs the current query on it, and the history, the score
histogram and the context cut say which retriever answered. A retriever that
raises is reported in the widget (escaped), never lost. Queries typed,
clicked, picked from the history or re-run by the switch run on a background
thread, so a slow server never blocks the kernel.

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import ipywidgets as w

from askkit import _html
from askkit.errors import UsageError
from askkit.ranking import CutSettings
from askkit.retrieve import Retriever
from askkit.sources import AskSource, SourceList
from askkit.vault import Vault
from askkit.widgets._histogram import score_histogram_png
from askkit.widgets._switch import (
    Choice,
    Comparison,
    choices,
    compare,
    histogram_title,
    pick,
    server_notices,
)
from askkit.widgets._switch import describe as _describe
from askkit.widgets.chain import ChainPanel, ChainView
from askkit.widgets.cut import CutView
from askkit.widgets.reader import SourceReader
from askkit.widgets.table import SourcesView

__all__ = ["Explorer", "HistoryEntry"]

#: Up to this many retrievers the switch is a row of toggle buttons, else a dropdown.
_TOGGLES_UP_TO = 4


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One query of the session: how many sources it found, in how long, or its error,
    and which retriever answered (``None`` when the Explorer has only one).

    >>> HistoryEntry("rye", 3, 0.01, retriever="BM25").label()
    'rye (3 sources from BM25)'
    """

    query: str
    count: int
    seconds: float
    error: str | None = None
    retriever: str | None = None

    def label(self) -> str:
        """The history button's text."""
        outcome = "error" if self.error is not None else f"{self.count} sources"
        by = f" from {self.retriever}" if self.retriever is not None else ""
        return f"{self.query} ({outcome}{by})"


def _switch_widget(names: Sequence[str]) -> w.ToggleButtons | w.Dropdown:
    """The retriever switch: toggle buttons for a few names, a dropdown for more."""
    switch = w.ToggleButtons if len(names) <= _TOGGLES_UP_TO else w.Dropdown
    box = switch(options=list(names), value=names[0], description="retriever")
    box.add_class("askkit-retriever")
    return box


class Explorer(w.VBox):  # type: ignore[misc]
    """A query box, the results in a :class:`SourcesView`, a :class:`SourceReader`,
    a score histogram, the session's query history and a context-cut panel; with
    several retrievers, a switch between them.

    Parameters
    ----------
    retriever:
        A :class:`~askkit.retrieve.Retriever` or anything
        :func:`~askkit.retrieve.as_retriever` adapts. Give this or ``retrievers``.
    vault:
        Passed to the reader (the note around each source).
    retrievers:
        ``{name: retriever}`` to switch between (BM25, dense, dense with a
        reranker, a kimun server...), the first chosen at start. Names are
        shown as text; the switch appears when there are two or more.
    k:
        How many sources to ask for.
    page_size:
        Rows per page of the results (and of the cut panel's kept chunks).
    cut:
        The cut panel's starting :class:`~askkit.ranking.CutSettings`
        (kimun's defaults).

    Type a query and press Enter (or click *search*); click a row's ``[n]`` to
    read it; click a past query to run it again (on the retriever that answered
    it). These run on a background thread (one retrieval at a time): the kernel
    stays free meanwhile, and a query submitted while another runs supersedes
    any still waiting; a result that arrives after a newer query was submitted
    goes to the history but is not shown. :meth:`submit` does the same from
    Python and :meth:`wait` waits for it; :meth:`search` runs a query in the
    calling thread and returns its sources. Choosing a retriever in the switch
    (or :meth:`use`) runs the current query again on it, in the background, by
    the same rules; :meth:`compare` asks every retriever for one query and
    shows their top ``k`` side by side. Open the *context cut* panel (or call
    :meth:`show_cut`) to see the query's candidate pool in a :class:`CutView`
    (from the retriever that answered it); while it is open, each query
    fetches its pool too.

    Attributes
    ----------
    sources:
        The current results (a :class:`~askkit.SourceList`).
    history:
        The session's queries, oldest first (:class:`HistoryEntry`).
    error:
        The last query's error message, ``None`` when it succeeded.
    server_health:
        For a kimun server (a :class:`~askkit.retrieve.KimunClient`), its
        ``/health`` read after the last query (a :class:`~askkit.retrieve.Health`);
        the status line says when it runs degraded, when its reranker failed to
        start, and when a newer release is out. ``None`` for other retrievers.
    retriever_box:
        The switch (``ToggleButtons`` for up to four retrievers, else a
        ``Dropdown``); in the layout only when there are several.
    cut_view:
        The context-cut panel's :class:`CutView` (open it with :meth:`show_cut`;
        built on first use).
    pool_query, pool_retriever:
        The query whose pool the cut panel shows, and the retriever it came
        from (``None`` before the first).
    """

    def __init__(
        self,
        retriever: Any = None,
        vault: Vault | str | os.PathLike[str] | None = None,
        *,
        retrievers: Mapping[str, Any] | None = None,
        k: int = 10,
        page_size: int = 10,
        cut: CutSettings | None = None,
    ) -> None:
        self._choices = choices(retriever, retrievers)
        self._choice = self._choices[0]
        self._shown_choice: Choice | None = None
        self.pool_query: str | None = None
        self.pool_retriever: str | None = None
        self.sources = SourceList()
        self.history: list[HistoryEntry] = []
        self.error: str | None = None
        self.server_health: Any = None
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
        self.retriever_box = _switch_widget(self.retriever_names)
        self.status_html = w.HTML()
        self.error_html = w.HTML()
        self.error_html.add_class("askkit-error")
        self.view = SourcesView(None, page_size=page_size, show_cited=False)
        self.reader = SourceReader(vault)
        self.histogram = w.Image(format="png", layout=w.Layout(width="360px"))
        self.histogram.add_class("askkit-histogram")
        self.histogram_label = w.HTML(_html.heading_label("scores"))
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
        self.retriever_box.observe(self._on_switch, names="value")
        self.view.on_select(lambda src: self.reader.show(src, query=self._current_query()))
        self.cut_panel.observe(self._on_cut_panel, names="selected_index")
        self._vault = vault
        self.chain_panel = ChainPanel(on_trace=self._chain_clicked)
        super().__init__(self._layout())
        self.add_class("askkit-explorer")
        self._show_histogram()

    def _layout(self) -> list[w.Widget]:
        side = w.HBox(
            [
                w.VBox([self.histogram_label, self.histogram]),
                w.VBox(
                    [
                        w.HTML(_html.heading_label("history", "(click to run again)")),
                        self.history_box,
                    ]
                ),
            ]
        )
        top = [w.HBox([self.query_box, self.k_box, self.search_button])]
        if self.several:
            top.append(self.retriever_box)
        return [
            *top,
            self.status_html,
            self.error_html,
            side,
            self.view,
            self.reader,
            self.cut_panel,
            self.chain_panel,
        ]

    def __repr__(self) -> str:
        if not self.history:
            return "<Explorer: no query yet>"
        last = self.history[-1]
        outcome = f"error {last.error}" if last.error else f"{last.count} sources"
        by = f" from {last.retriever!r}" if last.retriever is not None else ""
        return f"<Explorer: {last.query!r} -> {outcome}{by}; {len(self.history)} queries>"

    # ----------------------------------------------------------------------- retrievers

    @property
    def several(self) -> bool:
        """Whether there are retrievers to switch between."""
        return len(self._choices) > 1

    @property
    def retriever_names(self) -> tuple[str, ...]:
        """The retrievers' names, in the switch's order."""
        return tuple(c.name for c in self._choices)

    @property
    def retriever_name(self) -> str:
        """The chosen retriever's name (a single retriever is named after its type or
        function)."""
        return self._choice.name

    @property
    def retriever(self) -> Retriever:
        """The chosen retriever, adapted to the :class:`~askkit.retrieve.Retriever` protocol."""
        return self._choice.retriever

    def use(self, name: str) -> None:
        """Choose the retriever called ``name`` (what the switch does) and, if a query was
        asked, run it again on that retriever in the background (see :meth:`wait`).

        Choosing the retriever already chosen does nothing. An unknown name raises a
        :class:`~askkit.errors.UsageError` that lists the known ones.
        """
        if self._select(name):
            query = self._last_submitted
            if query.strip():
                self.submit(query)

    def _select(self, name: str) -> bool:
        """Make ``name`` the chosen retriever, the switch with it; False if it already was."""
        choice = pick(self._choices, name)
        if choice is self._choice:
            return False
        self._choice = choice
        if self.retriever_box.value != name:
            self.retriever_box.value = name  # its observer sees the choice already made
        return True

    def _on_switch(self, change: dict[str, Any]) -> None:
        if change["new"] != self._choice.name:
            self.use(str(change["new"]))

    def _run_again(self, entry: HistoryEntry) -> None:
        """A history button: its query, on the retriever that answered it."""
        if entry.retriever is not None and entry.retriever in self.retriever_names:
            self._select(entry.retriever)
        self.submit(entry.query)

    def compare(self, query: str | None = None, *, k: int | None = None) -> Comparison:
        """Ask every retriever for ``query`` (default: the current query) in this thread and
        return their top ``k`` (default: the *k* box) side by side; a retriever that raises
        is shown as its error. It waits for a retrieval still running, and shows nothing
        in the widget: display the result (it renders as an escaped table).
        """
        asked = self._last_submitted if query is None else query
        if not asked.strip():
            raise UsageError("compare needs a query: none was asked yet, pass one")
        top = int(self.k_box.value if k is None else k)
        if top < 1:
            raise UsageError(f"compare's k must be >= 1, got {k!r}")
        with self._lock:
            return compare(self._choices, asked, top)

    # ----------------------------------------------------------------------- queries

    def _current_query(self) -> str:
        return self.history[-1].query if self.history else ""

    def _on_submit(self, change: dict[str, Any]) -> None:
        query = str(change["new"])
        if query.strip() and query != self._last_submitted:
            self.submit(query)

    def _begin(self, query: str) -> tuple[int, int, Choice]:
        """Make ``query`` the current one: (its generation, k, the retriever to ask)."""
        self._last_submitted = query
        if self.query_box.value != query:
            self.query_box.value = query
        self._generation += 1
        on = f" with {self._choice.name}" if self.several else ""
        self.status_html.value = _html.message(f"searching for {query}{on}…", tone="muted")
        return self._generation, int(self.k_box.value), self._choice

    def submit(self, query: str) -> None:
        """Run ``query`` on a background thread and show it when done (what Enter,
        *search* and the history do); returns at once. See :meth:`wait`."""
        generation, k, choice = self._begin(query)
        worker = threading.Thread(
            target=self._background,
            args=(query, k, generation, choice),
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

    # --------------------------------------------------------------------- the chain panel

    def trace(self, sections: Any, query: str | None = None) -> ChainView:
        """Follow ``sections`` through the stages of ``query`` (default: the shown query).

        The pool is the retriever's (as the cut panel's); the chain opens in
        the *why not* panel, built by :class:`ChainView` with the cut panel's
        settings and the Explorer's vault.
        """
        query = self._shown_query if query is None else query
        choice = self._shown_choice or self._choice
        if not query:
            raise ValueError("run a query first, or give one: trace(sections, query)")
        pool = list(choice.fetch_pool(query))
        settings = self._cut_view.settings if self._cut_view is not None else self._cut_settings
        return self.chain_panel.show(
            ChainView(pool, sections, settings, vault=self._vault, question=query)
        )

    def _chain_clicked(self, pairs: list[tuple[str, str | None]]) -> None:
        try:
            self.trace(pairs)
        except Exception as exc:  # shown in the panel, never lost
            self.chain_panel.say(_describe(exc), error=True)

    # ----------------------------------------------------------------------- the cut panel

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
        query, choice = self._shown_query, self._shown_choice
        if query is None or choice is None:
            return
        if (query, choice.name) == (self.pool_query, self.pool_retriever):
            return
        worker = threading.Thread(
            target=self._background_pool,
            args=(query, choice, self._generation),
            name="askkit-explorer-pool",
            daemon=True,
        )
        self._cut_worker = worker
        worker.start()

    def _background_pool(self, query: str, choice: Choice, generation: int) -> None:
        try:
            with self._lock:
                if generation == self._generation:  # else a newer query will show its own
                    self._show_pool(query, choice)
        except Exception as exc:  # showing failed: say so rather than lose it in a thread
            self.cut_status.value = _html.message(_describe(exc), tone="error", lead="the cut")

    def _show_pool(self, query: str, choice: Choice) -> None:
        """Fetch ``query``'s pool from ``choice`` and show it in the cut panel (an error is
        shown there)."""
        lead = choice.name if self.several else ""
        self.cut_status.value = _html.message(
            f"fetching the pool for {query}…", tone="muted", lead=lead
        )
        try:
            pool: Sequence[Any] = choice.fetch_pool(query)
            self.cut_view.set_pool(pool, question=query)
        except Exception as exc:  # any retriever failure is shown to the user
            self.cut_view.set_pool(None)
            by = f" ({choice.name})" if self.several else ""
            self.cut_status.value = _html.message(
                _describe(exc), tone="error", lead=f"fetching the pool failed{by}"
            )
        else:
            self.cut_status.value = _html.message(
                f"pool for {query}: {len(self.cut_view.pool)} chunks from {choice.pool_from}",
                tone="muted",
                lead=lead,
            )
        self.pool_query = query
        self.pool_retriever = choice.name

    # ----------------------------------------------------------------------- running

    def search(self, query: str) -> SourceList:
        """Run ``query`` now, in this thread, on the chosen retriever, show its sources and
        return them (empty on an error, shown). It supersedes any submitted query still
        waiting."""
        generation, k, choice = self._begin(query)
        with self._lock:
            return self._run(query, k, generation, choice)

    def _background(self, query: str, k: int, generation: int, choice: Choice) -> None:
        try:
            with self._lock:
                if generation == self._generation:  # else superseded before it ran
                    self._run(query, k, generation, choice)
        except Exception as exc:  # showing failed: say so rather than lose it in a thread
            self._show_error(exc, "showing the result failed")

    def _run(self, query: str, k: int, generation: int, choice: Choice) -> SourceList:
        started = time.perf_counter()
        try:
            chunks = choice.retriever(query, k=k)
            sources = AskSource.from_chunks(chunks)
        except Exception as exc:  # any retriever failure is shown to the user
            error: BaseException | None = exc
            sources = SourceList()
        else:
            error = None
        seconds = time.perf_counter() - started
        message = _describe(error) if error is not None else None
        by = choice.name if self.several else None
        self.history.append(HistoryEntry(query, len(sources), seconds, message, by))
        if generation != self._generation:  # a newer query was submitted meanwhile
            self._show_history()
            return sources
        notices = self._server_notices(choice, failed=error is not None)
        notices += [("warn", f"stand-in: {note}") for note in choice.stand_ins]
        if error is not None:
            self._show_error(error, f"{choice.name} failed" if self.several else None)
        else:
            self.error = None
            self.error_html.value = ""
        if (query, choice) != (self._shown_query, self._shown_choice):
            # a new question reads in the retriever's order, whatever the last one was sorted by
            with self.view.hold_trait_notifications():
                self.view.sort_by = ""
                self.view.ascending = True
        self.sources = sources
        self._shown_query = query
        self._shown_choice = choice
        self.view.set_data(sources)
        self.reader.show(None, query=query)
        if self.cut_open:
            self._show_pool(query, choice)
        status = _html.search_status(query, len(sources), seconds)
        if self.several:
            status += " from " + _html.heading_label(choice.name)
        status += "".join(_html.message(text, tone=tone) for tone, text in notices)
        self.status_html.value = status
        self._show_histogram()
        self._show_history()
        if len(sources):
            self.view.select(0)
        return sources

    def _server_notices(self, choice: Choice, *, failed: bool) -> list[tuple[Any, str]]:
        """A kimun server's ``/health`` as the status line says it (nothing for other
        retrievers): degraded, a reranker that failed to start, a newer release.

        Read after each query, so the line follows the server; when the query failed,
        a health that cannot be read either adds nothing to the query's own error.
        """
        if choice.health is None:
            return []
        try:
            health = choice.health()
        except Exception as exc:  # the query's own error says more when it failed too
            self.server_health = None
            return [] if failed else [("warn", f"could not read the server's health: {exc}")]
        self.server_health = health
        return server_notices(health)

    def _show_error(self, exc: BaseException, what: str | None = None) -> None:
        self.error = _describe(exc)
        lead = what or "the retriever failed"
        self.error_html.value = _html.message(self.error, tone="error", lead=lead)

    def _show_histogram(self) -> None:
        scores = [s.score for s in self.sources]
        finite = [s for s in scores if not math.isnan(s)]
        name = (self._shown_choice or self._choice).name if self.several else None
        self.histogram_label.value = _html.heading_label("scores", f"({name})" if name else "")
        self.histogram.value = score_histogram_png(
            scores,
            title=histogram_title(len(finite), name),
            xlabel=f"score ({name})".replace("$", r"\$") if name else "score",
        )

    def _show_history(self) -> None:
        seen: dict[tuple[str, str | None], HistoryEntry] = {}
        for entry in reversed(self.history):
            seen.setdefault((entry.query, entry.retriever), entry)
        buttons = []
        for entry in seen.values():
            on = f" on {entry.retriever}" if entry.retriever is not None else ""
            button = w.Button(
                description=entry.label(),
                tooltip=f"run again: {entry.query}{on}",
                button_style="danger" if entry.error is not None else "",
                layout=w.Layout(width="360px"),
            )
            button.add_class("askkit-history-item")
            button.on_click(lambda _b, e=entry: self._run_again(e))
            buttons.append(button)
        self.history_box.children = buttons
