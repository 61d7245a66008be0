"""``Explorer``: ask a retriever, see its sources, read them, look at the scores.

Works with anything :func:`askkit.retrieve.as_retriever` adapts: a
:class:`~askkit.retrieve.LocalIndex`, a :class:`~askkit.retrieve.KimunClient`
or a plain ``f(query) -> chunks`` function. Given several, named
(``retrievers={"BM25": index, "kimun": client}``), it shows a switch: choosing
another retriever asks it the question in the box, and the history, the score
histogram and the context cut say which retriever answered. A retriever that
raises is reported in the widget (escaped), never lost. Queries typed,
clicked, picked from the history or re-run by the switch run on a background
thread, so a slow server never blocks the kernel.

The question searched is the one in the box, whatever the order of typing,
clicking and pressing Enter. Enter (the box's ``submit`` message, sent even
when the text did not change) and the *search* button ask the box's question.
The box sends its text when it is committed, not at every keystroke
(``continuous_update=False``): a click on *search* first takes the focus from
the box, which sends the text before the click, and Enter sends it just after
its ``submit``. Were every keystroke sent, a question typed right after a click
would reach the kernel, letter by letter, while the click's search still
waited for the last letters of its own. The browser may still hold the text
back until the kernel has answered its previous message (ipywidgets' message
throttle, one message in flight per widget), so a click or Enter reads the box
only :attr:`Explorer.settle` seconds later, after any retrieval still running,
on the background thread.

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
    HistoryEntry,
    HistoryItem,
    chain_status,
    choices,
    compare,
    frontmatter_notice,
    histogram_title,
    history_items,
    pick,
    server_notices,
    switch_kind,
    switch_width,
)
from askkit.widgets._switch import describe as _describe
from askkit.widgets.chain import ChainPanel, ChainView
from askkit.widgets.cut import CutView
from askkit.widgets.reader import SourceReader
from askkit.widgets.table import SourcesView

__all__ = ["Explorer", "HistoryEntry"]

#: The history's height: the histogram's (4 x 2.2 inches at 90 dpi), so a growing
#: history scrolls in its own box and never pushes the results down.
_HISTORY_HEIGHT = "200px"


def _switch_widget(options: Sequence[Choice]) -> w.ToggleButtons | w.Dropdown:
    """The retriever switch, every label whole: toggle buttons sized to their labels when
    they fit on a line, else a dropdown as wide as the longest; each label's tooltip is
    the label (:func:`~askkit.widgets._switch.switch_kind`)."""
    labels = [c.label for c in options]
    pairs = [(c.label, c.name) for c in options]
    if switch_kind(labels) == "toggles":
        box = w.ToggleButtons(
            options=pairs,
            value=options[0].name,
            description="retriever",
            tooltips=labels,
            style={"button_width": "auto"},
        )
    else:
        box = w.Dropdown(
            options=pairs,
            value=options[0].name,
            description="retriever",
            tooltip=labels[0],
            style={"description_width": "initial"},
            layout=w.Layout(width=switch_width(labels)),
        )
    box.add_class("askkit-retriever")
    return box


class _HistoryRow:
    """One question of the history: a button that asks it again, and who answered it."""

    def __init__(self, on_click: Any) -> None:
        self.item: HistoryItem | None = None
        self.button = w.Button(layout=w.Layout(width="100%", flex="0 0 auto"))
        self.button.add_class("askkit-history-item")
        self.runs = w.HTML(layout=w.Layout(flex="0 0 auto", margin="0 0 4px 6px"))
        self.runs.add_class("askkit-history-runs")
        self.box = w.VBox([self.button, self.runs], layout=w.Layout(flex="0 0 auto"))
        self.button.on_click(lambda _b: self.item is not None and on_click(self.item))

    def show(self, item: HistoryItem, labels: dict[str, str]) -> None:
        self.item = item
        self.button.description = item.query
        self.button.tooltip = f"ask again, on the chosen retriever: {item.query}"
        self.button.button_style = "danger" if item.failed else ""
        runs = " · ".join(text for text, _failed in item.summary(labels))
        self.runs.value = _html.message(runs, tone="error" if item.failed else "muted")


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
        The vault the retrievers index: the reader shows the note around each
        source, and the results name a section before a note's first heading by
        the note's title as on disk (:meth:`AskSource.shown_heading`).
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

    Type a question and press Enter (or click *search*): the question in the box
    is asked, even unchanged (Enter again asks it again); click a row's ``[n]``
    to read it; click a past question to ask it again (on the chosen retriever).
    These run on a background thread (one retrieval at a time): the kernel
    stays free meanwhile, and a query submitted while another runs supersedes
    any still waiting; a result that arrives after a newer query was submitted
    goes to the history but is not shown. :meth:`ask` is what Enter and the
    button do (it reads the box :attr:`settle` seconds later: see the module's
    docstring), :meth:`submit` runs a given query the same way and :meth:`wait`
    waits for either; :meth:`search` runs a query in the calling thread and
    returns its sources. Choosing a retriever in the switch (or :meth:`use`)
    asks it the question in the box, in the background, by the same rules;
    :meth:`compare` asks every retriever for one query and shows their top
    ``k`` side by side. Open the *context cut* panel (or call :meth:`show_cut`)
    to see the query's candidate pool in a :class:`CutView` (from the retriever
    that answered it); while it is open, each query fetches its pool too.

    The history lists each question once, the most recent first (at most
    :data:`~askkit.widgets._switch.HISTORY_LIMIT`), with every retriever that
    answered it and how many sources each found; it scrolls in a box of fixed
    height beside the histogram, so the results never move down. When notes'
    frontmatter is among the results (kimun indexes it as a section of its
    own), a line under the table says how much of the top it takes.

    Attributes
    ----------
    sources:
        The current results (a :class:`~askkit.SourceList`).
    history:
        The session's retrievals, oldest first, one per run (:class:`HistoryEntry`);
        the widget lists them by question (:func:`~askkit.widgets._switch.history_items`).
    error:
        The last query's error message, ``None`` when it succeeded.
    server_health:
        For a kimun server (a :class:`~askkit.retrieve.KimunClient`), its
        ``/health`` read after the last query (a :class:`~askkit.retrieve.Health`);
        the status line says when it runs degraded, when its reranker failed to
        start, and when a newer release is out. ``None`` for other retrievers.
    retriever_box:
        The switch (``ToggleButtons`` sized to their labels for up to four
        retrievers whose labels fit on a line, else a ``Dropdown``); its values are
        the names, its labels the names in full (a retriever running a stand-in
        model says so: :attr:`~askkit.widgets._switch.Choice.label`), each with a
        tooltip. In the layout only when there are several.
    notice_html:
        The line under the results (notes' frontmatter among them), empty when
        there is nothing to say.
    settle:
        Seconds a click or Enter waits before reading the box (default 0.25): the
        time the browser may take to send the question's last keystrokes.
    cut_view:
        The context-cut panel's :class:`CutView` (open it with :meth:`show_cut`;
        built on first use).
    pool_query, pool_retriever:
        The query whose pool the cut panel shows, and the retriever it came
        from (``None`` before the first).
    """

    #: The default of :attr:`settle`.
    SETTLE = 0.25

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
        self._vault = vault if vault is None or isinstance(vault, Vault) else Vault(vault)
        self.settle = self.SETTLE
        self.pool_query: str | None = None
        self.pool_retriever: str | None = None
        self.sources = SourceList()
        self.history: list[HistoryEntry] = []
        self.error: str | None = None
        self.server_health: Any = None
        self.query_box = w.Text(
            placeholder="ask the retriever…",
            description="query",
            continuous_update=False,  # the text is sent before a click: see the module
            layout=w.Layout(width="460px"),
        )
        self.query_box.add_class("askkit-query")
        self.k_box = w.BoundedIntText(
            value=k, min=1, max=1000, description="k", layout=w.Layout(width="130px")
        )
        self.search_button = w.Button(description="search", button_style="primary")
        self.search_button.add_class("askkit-search")
        self.retriever_box = _switch_widget(self._choices)
        self.status_html = w.HTML()
        self.error_html = w.HTML()
        self.error_html.add_class("askkit-error")
        self._build_results(page_size)
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
        self._traced_query: str | None = None
        self._cut_worker: threading.Thread | None = None
        self._last_submitted = ""
        self._lock = threading.Lock()  # one retrieval at a time, and its display
        self._generation = 0  # bumped by every query; a result shows only if still current
        self._worker: threading.Thread | None = None
        self.query_box.on_msg(self._on_box_message)  # Enter: {"event": "submit"}
        self.search_button.on_click(lambda _b: self.ask())
        self.retriever_box.observe(self._on_switch, names="value")
        self.view.on_select(
            lambda src: self.reader.show(src, query=self._current_query(), numbering="search")
        )
        self.cut_panel.observe(self._on_cut_panel, names="selected_index")
        self.chain_panel = ChainPanel(on_trace=self._chain_clicked)
        super().__init__(self._layout())
        self.add_class("askkit-explorer")
        self._show_histogram()

    def _build_results(self, page_size: int) -> None:
        """The results, the line under them, the reader, the histogram and the history."""
        self.view = SourcesView(None, page_size=page_size, show_cited=False, vault=self._vault)
        self.notice_html = w.HTML()
        self.notice_html.add_class("askkit-notice")
        self.reader = SourceReader(self._vault)
        self.histogram = w.Image(format="png", layout=w.Layout(width="360px"))
        self.histogram.add_class("askkit-histogram")
        self.histogram_label = w.HTML(_html.heading_label("scores"))
        self.history_box = w.VBox(
            layout=w.Layout(
                height=_HISTORY_HEIGHT, width="420px", overflow="hidden auto", flex="0 0 auto"
            )
        )
        self.history_box.add_class("askkit-history")
        self._history_rows: list[_HistoryRow] = []

    def _layout(self) -> list[w.Widget]:
        history_label = _html.heading_label("history", "(click a question to ask it again)")
        side = w.HBox(
            [
                w.VBox([self.histogram_label, self.histogram]),
                w.VBox([w.HTML(history_label), self.history_box]),
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
            self.notice_html,
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

    @property
    def retriever_label(self) -> str:
        """The chosen retriever's name as shown, in full: a stand-in says so
        (:attr:`~askkit.widgets._switch.Choice.label`)."""
        return self._choice.label

    def use(self, name: str) -> None:
        """Choose the retriever called ``name`` (what the switch does) and, if the box
        holds a question, ask it on that retriever in the background (:meth:`ask`; see
        :meth:`wait`).

        Choosing the retriever already chosen does nothing. An unknown name raises a
        :class:`~askkit.errors.UsageError` that lists the known ones.
        """
        if self._select(name) and (self.query_box.value.strip() or self._last_submitted):
            self.ask()

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
        if isinstance(self.retriever_box, w.Dropdown):  # a dropdown's tooltip: its label
            self.retriever_box.tooltip = self.retriever_box.label
        if change["new"] != self._choice.name:
            self.use(str(change["new"]))

    def _run_again(self, item: HistoryItem) -> None:
        """A history button: its question, on the chosen retriever."""
        self.submit(item.query)

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

    @property
    def question(self) -> str:
        """The question whose results are shown (``""`` before the first): what the
        reader highlights and a :class:`~askkit.widgets.Labeler` grades for."""
        return self._shown_query or ""

    def _current_query(self) -> str:
        return self.question

    def _on_box_message(self, _box: Any, content: Any, _buffers: Any) -> None:
        """Enter in the box: the front end sends ``{"event": "submit"}``, changed or not."""
        if isinstance(content, dict) and content.get("event") == "submit":
            self.ask()

    def _searching(self, query: str, choice: Choice) -> str:
        on = f" with {choice.label}" if self.several else ""
        asked = f" for {query}" if query.strip() else ""
        return _html.message(f"searching{asked}{on}…", tone="muted")

    def ask(self) -> None:
        """Ask the question in the box, on the chosen retriever, in the background (what
        Enter, the *search* button and the switch do); returns at once (see :meth:`wait`).

        The box is read :attr:`settle` seconds later, once any retrieval still running is
        done, so the question's last keystrokes, which the browser may send after the
        click, are in it. An unchanged question is asked again; an empty box asks nothing.
        """
        self._generation += 1
        generation = self._generation
        self.status_html.value = self._searching(str(self.query_box.value), self._choice)
        worker = threading.Thread(
            target=self._background_ask,
            args=(generation,),
            name="askkit-explorer-search",
            daemon=True,
        )
        self._worker = worker
        worker.start()

    def _background_ask(self, generation: int) -> None:
        try:
            time.sleep(max(self.settle, 0.0))  # the last keystrokes, still on their way
            with self._lock:
                if generation != self._generation:  # superseded before it ran
                    return
                query = str(self.query_box.value)
                if not query.strip():
                    self.status_html.value = _html.message(
                        "type a question in the box first", tone="muted"
                    )
                    return
                self._last_submitted = query
                choice = self._choice
                self.status_html.value = self._searching(query, choice)
                self._run(query, int(self.k_box.value), generation, choice)
        except Exception as exc:  # showing failed: say so rather than lose it in a thread
            self._show_error(exc, "showing the result failed")

    def _begin(self, query: str) -> tuple[int, int, Choice]:
        """Make ``query`` the current one: (its generation, k, the retriever to ask)."""
        self._last_submitted = query
        if self.query_box.value != query:
            self.query_box.value = query
        self._generation += 1
        self.status_html.value = self._searching(query, self._choice)
        return self._generation, int(self.k_box.value), self._choice

    def submit(self, query: str) -> None:
        """Run ``query`` on a background thread and show it when done (what a history
        button does; the box shows it); returns at once. See :meth:`wait`."""
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
        view = self.chain_panel.show(
            ChainView(pool, sections, settings, vault=self._vault, question=query)
        )
        self._traced_query = query
        return view

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
            self.reader.show(source, query=self._current_query(), numbering="search")

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
        lead = choice.label if self.several else ""
        self.cut_status.value = _html.message(
            f"fetching the pool for {query}…", tone="muted", lead=lead
        )
        try:
            pool: Sequence[Any] = choice.fetch_pool(query)
            self.cut_view.set_pool(pool, question=query)
        except Exception as exc:  # any retriever failure is shown to the user
            self.cut_view.set_pool(None)
            by = f" ({choice.label})" if self.several else ""
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
            self._show_error(error, f"{choice.label} failed" if self.several else None)
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
            status += " from " + _html.heading_label(choice.label)
        status += "".join(_html.message(text, tone=tone) for tone, text in notices)
        self.status_html.value = status
        notice = frontmatter_notice(sources)
        self.notice_html.value = "" if notice is None else _html.message(notice, tone="warn")
        self._show_histogram()
        self._show_history()
        self.chain_panel.say(chain_status(query, self._traced_query))
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
        name = (self._shown_choice or self._choice).label if self.several else None
        self.histogram_label.value = _html.heading_label("scores", f"({name})" if name else "")
        self.histogram.value = score_histogram_png(
            scores,
            title=histogram_title(len(finite), name),
            xlabel=f"score ({name})".replace("$", r"\$") if name else "score",
        )

    @property
    def history_items(self) -> list[HistoryItem]:
        """The history as listed: one item per question, the most recent first
        (:func:`~askkit.widgets._switch.history_items`)."""
        return history_items(self.history)

    @property
    def history_buttons(self) -> list[w.Button]:
        """The history's buttons, one per question listed, in the list's order."""
        return [row.button for row in self._history_rows[: len(self.history_box.children)]]

    def _show_history(self) -> None:
        """List the history: a pool of rows (never more than the limit), each updated."""
        items = self.history_items
        labels = {c.name: c.label for c in self._choices}
        while len(self._history_rows) < len(items):
            self._history_rows.append(_HistoryRow(self._run_again))
        for row, item in zip(self._history_rows, items, strict=False):
            row.show(item, labels)
        self.history_box.children = [row.box for row in self._history_rows[: len(items)]]
