"""Explorer: LocalIndex, KimunClient against KimunTestServer, a plain callable, errors, the cut."""

from __future__ import annotations

import dataclasses
import itertools
import re
import threading
import time
import warnings
from pathlib import Path
from typing import Any

import pytest

from askkit.ranking import CutSettings, answer_context, cut_len
from askkit.retrieve.local import LocalIndex
from askkit.testing import FAST_SETTINGS, KimunTestServer
from askkit.widgets import Explorer
from askkit.widgets._histogram import draw_score_histogram, score_histogram_png
from tests.conftest import DATA
from tests.corpora import corpus

VAULT = DATA / "vault"
PNG = b"\x89PNG"


def front_end(widget: Any, data: dict[str, Any]) -> None:
    """A message from the browser to ``widget``'s model, through ipywidgets' own handler."""
    widget._handle_msg({"content": {"data": data}, "buffers": []})


def type_in(box: Any, text: str) -> None:
    """What the browser sends when the text is committed (a click takes the focus, or Enter)."""
    front_end(box, {"method": "update", "state": {"value": text}, "buffer_paths": []})


def press_enter(box: Any) -> None:
    """What the browser sends on Enter in a Text: ``{"event": "submit"}``, changed or not."""
    front_end(box, {"method": "custom", "content": {"event": "submit"}})


def click(button: Any) -> None:
    """What the browser sends on a click."""
    front_end(button, {"method": "custom", "content": {"event": "click"}})


def chunk_dict(query: str) -> dict[str, Any]:
    """One wire chunk whose note is named after the query."""
    return {
        "path": f"{query}.md",
        "title": query,
        "content": "x",
        "hash": "h",
        "similarity_score": 1,
    }


@pytest.fixture(scope="module")
def index() -> LocalIndex:
    return LocalIndex(VAULT, cache_dir=False, progress=False)


def test_histogram_png() -> None:
    assert score_histogram_png([0.1, 0.5, float("nan")]).startswith(PNG)
    assert score_histogram_png([]).startswith(PNG)


@pytest.mark.parametrize("scores", [[0.5], [0.1, 0.5], [0.1, 0.2, 0.2, 0.9], []])
def test_issue40_10_the_histogram_counts_whole_sources(scores: list[float]) -> None:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(4, 2.2), dpi=90, layout="constrained")
    ax = fig.subplots()
    draw_score_histogram(ax, scores)
    fig.canvas.draw()  # ticks as drawn
    low, high = ax.get_ylim()
    ticks = [t for t in ax.get_yticks() if low <= t <= high]
    assert ticks
    assert all(float(t).is_integer() for t in ticks), ticks  # never "0.25 sources"
    assert ax.get_ylabel() == "sources"


def test_explorer_with_local_index(index: LocalIndex) -> None:
    ex = Explorer(index, VAULT, k=5)
    assert bytes(ex.histogram.value).startswith(PNG)
    sources = ex.search("how often should I feed the sourdough starter")
    assert 0 < len(sources) <= 5
    assert ex.error is None
    assert "projects/sourdough.md" in {str(s.path) for s in sources}
    assert "for <b>how often should I feed the sourdough starter</b>" in ex.status_html.value
    assert ex.view.selected == sources[0]  # the best result opens in the reader
    assert ex.reader.source == sources[0]
    assert ex.reader.located is not None
    ex.view._rows[1].button.click()
    assert ex.reader.source == sources[1]
    assert ex.reader.query == "how often should I feed the sourdough starter"
    assert [b.description for b in ex.history_buttons] == [
        "how often should I feed the sourdough starter"
    ]
    assert f"{len(sources)} sources" in ex.history_box.children[0].children[1].value


def test_a_new_question_reads_in_the_retrievers_order_whatever_the_last_was_sorted_by(
    index: LocalIndex,
) -> None:
    ex = Explorer(index, VAULT, k=8)
    ex.search("sourdough starter feeding")
    ex.view.sort("path")
    ex.search("sourdough starter feeding")  # the same question again keeps its sort
    assert ex.view.sort_by == "path"
    shown = ex.search("tomato seedlings")
    assert ex.view.sort_by == ""
    first = ex.view.frame.iloc[ex.view.positions[0]]
    assert first["score"] == max(s.score for s in shown)


def test_enter_submits_and_history_reruns(index: LocalIndex) -> None:
    ex = Explorer(index, VAULT)
    ex.settle = 0.0
    type_in(ex.query_box, "wireguard")
    assert ex.wait(30)
    assert ex.history == []  # typing alone asks nothing
    press_enter(ex.query_box)
    assert ex.wait(30)
    assert ex.history[-1].query == "wireguard"
    click(ex.search_button)  # the same query again, by the button
    assert ex.wait(30)
    assert len(ex.history) == 2
    ex.search("tomatoes")
    assert [b.description for b in ex.history_buttons] == ["tomatoes", "wireguard"]
    ex.history_buttons[1].click()
    assert ex.wait(30)
    assert ex.history[-1].query == "wireguard"
    assert ex.query_box.value == "wireguard"
    assert ex.history_buttons[0].description == "wireguard"


def test_explorer_with_kimun_client(index: LocalIndex) -> None:
    with KimunTestServer(retriever=index) as server, server.client() as client:
        ex = Explorer(client, VAULT, k=3)
        sources = ex.search("feed the starter")
        assert ex.error is None
        assert len(sources) == 3
        assert [s.ordinal for s in sources] == [1, 2, 3]
        assert ex.reader.located is not None


def test_explorer_with_a_plain_callable() -> None:
    def retrieve(query: str) -> list[dict[str, Any]]:
        return [
            {
                "path": "a.md",
                "title": f"About {query}",
                "content": "x",
                "hash": "h",
                "similarity_score": 0.5,
            },
            {"path": "b.md", "title": "B", "content": "y", "hash": "h", "similarity_score": 0.25},
        ]

    ex = Explorer(retrieve)
    sources = ex.search("bread")
    assert [s.heading for s in sources] == ["About bread", "B"]
    assert ex.reader.note_html not in ex.reader.children  # no vault: no note


def test_retriever_errors_are_shown_escaped() -> None:
    def broken(query: str) -> list[Any]:
        raise RuntimeError(f"<script>alert('{query}')</script>")

    ex = Explorer(broken)
    assert ex.search("x") == ()
    assert ex.error is not None
    assert "RuntimeError" in ex.error
    assert "<script>" not in ex.error_html.value
    assert "&lt;script&gt;" in ex.error_html.value
    assert ex.history[-1].error is not None
    assert ex.history_buttons[0].button_style == "danger"
    ex2 = Explorer(lambda q: 42)  # a malformed result is an error too
    ex2.search("q")
    assert "SchemaError" in (ex2.error or "")


def test_error_then_success_clears_the_error(index: LocalIndex) -> None:
    calls = {"n": 0}

    def flaky(query: str, k: int = 10) -> Any:
        calls["n"] += 1
        if calls["n"] == 1:
            raise ConnectionError("down")
        return index(query, k=k)

    ex = Explorer(flaky)
    ex.search("rye")
    assert ex.error is not None
    ex.search("rye")
    assert ex.error is None
    assert ex.error_html.value == ""


def test_server_down_is_shown() -> None:
    server = KimunTestServer().start()
    client = server.client(settings=dataclasses.replace(FAST_SETTINGS, retries=0))
    server.stop()
    ex = Explorer(client)
    ex.search("anything")
    assert "ServerUnavailable" in (ex.error or "")
    client.close()


def test_submitted_queries_run_in_the_background() -> None:
    release = threading.Event()
    calls: list[str] = []

    def slow(query: str, k: int = 10) -> list[dict[str, Any]]:
        calls.append(query)
        if query == "slow":
            assert release.wait(30)
        return [chunk_dict(query)]

    ex = Explorer(slow)
    ex.settle = 0.0
    ex.submit("slow")  # returns while the retriever still works
    assert "searching for" in ex.status_html.value
    assert not ex.wait(0.05)
    ex.submit("skipped")  # waits behind "slow", then is superseded by "last"
    type_in(ex.query_box, "last")
    press_enter(ex.query_box)
    release.set()
    assert ex.wait(30)
    assert ex._worker is not None
    ex._worker.join(30)
    for thread in threading.enumerate():  # the superseded query's thread, too
        if thread.name == "askkit-explorer-search":
            thread.join(30)
    assert calls == ["slow", "last"]  # "skipped" never reached the retriever
    assert [e.query for e in ex.history] == ["slow", "last"]  # nothing run is lost
    assert [s.path.stem for s in ex.sources] == ["last"]  # a late result is not shown
    assert "last" in ex.status_html.value
    assert [b.description for b in ex.history_buttons] == ["last", "slow"]


def test_search_from_python_supersedes_a_waiting_submit() -> None:
    release = threading.Event()

    def slow(query: str, k: int = 10) -> list[dict[str, Any]]:
        if query == "first":
            assert release.wait(30)
        return [chunk_dict(query)]

    ex = Explorer(slow)
    ex.submit("first")
    ex.submit("second")  # waits behind "first"
    threading.Timer(0.2, release.set).start()
    assert [s.path.stem for s in ex.search("third")] == ["third"]
    assert ex.wait(30)
    assert [e.query for e in ex.history] == ["first", "third"]
    assert [s.path.stem for s in ex.sources] == ["third"]


def test_a_failure_while_showing_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    ex = Explorer(lambda q, k=10: [chunk_dict(q)])

    def broken(*_args: Any) -> None:
        raise RuntimeError("<boom>")

    monkeypatch.setattr(ex.view, "set_data", broken)
    ex.submit("x")
    assert ex.wait(30)
    assert ex.error == "RuntimeError: <boom>"
    assert "showing the result failed" in ex.error_html.value
    assert "&lt;boom&gt;" in ex.error_html.value


# --------------------------------------------------------------------------- the cut panel


def test_the_cut_panel_shows_the_local_pool_and_follows_queries(index: LocalIndex) -> None:
    ex = Explorer(index, VAULT, k=5)
    assert not ex.cut_open
    assert ex.cut_panel in ex.children
    assert ex._cut_view is None  # a closed panel builds no view (and no rows in the page)
    ex.show_cut()  # no query yet: nothing to fetch
    assert ex.wait(30)
    assert ex.pool_query is None
    assert ex.cut_view.pool == ()
    first = "how often should I feed the sourdough starter"
    ex.search(first)  # the panel is open: the query's pool comes with it
    pool = index.pool(first)
    assert ex.pool_query == first
    assert ex.cut_view.pool == tuple(pool)
    assert list(ex.cut_view.kept) == answer_context(pool, ex.cut_view.settings)
    assert f"{len(pool)} chunks from LocalIndex.pool" in ex.cut_status.value
    ex.search("wireguard")
    assert ex.pool_query == "wireguard"
    assert ex.cut_view.pool == tuple(index.pool("wireguard"))
    ex.cut_view.strategy_box.value = "fixed"
    ex.cut_view.top_k_slider.value = 2
    assert len(ex.cut_view.sources_view.frame) == 2
    ex.cut_view.sources_view._rows[1].button.click()  # a kept chunk opens in the reader
    assert ex.reader.source is not None
    assert ex.reader.source.path == ex.cut_view.kept_sources[1].path
    ex.search("tomatoes")
    assert ex.cut_view.settings == CutSettings(strategy="fixed", top_k=2)  # settings stay


def test_opening_the_cut_panel_fetches_the_shown_query_in_the_background(
    index: LocalIndex,
) -> None:
    ex = Explorer(index, VAULT, cut=CutSettings(strategy="largest-drop"))
    ex.search("rye bread")
    assert ex.pool_query is None  # closed: no pool fetched
    ex.cut_panel.selected_index = 0  # what clicking its title does
    assert ex.wait(30)
    assert ex.pool_query == "rye bread"
    assert ex.cut_view.pool == tuple(index.pool("rye bread"))
    assert ex.cut_view.settings.strategy == "largest-drop"
    ex.show_cut(False)
    ex.search("tomatoes")
    assert ex.pool_query == "rye bread"  # closed again: the pool stays as it was


def test_without_a_pool_method_the_cut_panel_asks_for_80() -> None:
    calls: list[tuple[str, int]] = []

    def retrieve(query: str, k: int = 10) -> list[dict[str, Any]]:
        calls.append((query, k))
        return [{**chunk_dict(f"{query}{i}"), "similarity_score": 1 - i / 100} for i in range(k)]

    ex = Explorer(retrieve, k=4)
    ex.search("a")
    assert calls == [("a", 4)]
    ex.show_cut()
    assert ex.wait(30)
    assert calls == [("a", 4), ("a", 80)]
    assert len(ex.cut_view.pool) == 80
    assert "first 80 results" in ex.cut_status.value
    assert ex.cut_view.boundaries["score-range"] == cut_len(ex.cut_view.pool)


def test_the_cut_panel_with_a_kimun_client(index: LocalIndex) -> None:
    with KimunTestServer(retriever=index) as server, server.client() as client:
        ex = Explorer(client, VAULT, k=3)
        ex.show_cut()
        ex.search("feed the starter")
        assert ex.error is None
        assert ex.cut_view.pool == tuple(client("feed the starter", k=80))
        assert "first 80 results" in ex.cut_status.value


def test_a_failing_pool_is_shown_in_the_panel_escaped() -> None:
    class Index:
        def __call__(self, query: str, k: int = 10) -> list[dict[str, Any]]:
            return [chunk_dict(query)]

        def pool(self, query: str) -> list[Any]:
            raise RuntimeError(f"<img src=x onerror=alert('{query}')>")

    ex = Explorer(Index())
    ex.show_cut()
    ex.search("q")
    assert ex.error is None  # the query itself worked
    assert "fetching the pool failed" in ex.cut_status.value
    assert "&lt;img" in ex.cut_status.value
    assert "<img" not in ex.cut_status.value
    assert ex.cut_view.pool == ()


def test_the_status_line_shows_a_degraded_server_plainly() -> None:
    with (
        KimunTestServer(degraded="model <download> failed") as server,
        server.client(settings=dataclasses.replace(FAST_SETTINGS, retries=0)) as client,
    ):
        ex = Explorer(client)
        assert ex.search("anything") == ()
    assert "ServerStatusError" in (ex.error or "")  # the query's own error, 503
    assert ex.server_health is not None
    assert ex.server_health.degraded == "model <download> failed"
    status = ex.status_html.value
    assert "the server is degraded: model &lt;download&gt; failed" in status
    assert "<download>" not in status
    assert "askkit-error" in status


def test_the_status_line_shows_a_reranker_error_and_an_update() -> None:
    with (
        KimunTestServer(reranker_error="no model", version="0.5.1", latest_version="0.6.0") as s,
        s.client() as client,
    ):
        ex = Explorer(client)
        assert len(ex.search("starter")) > 0
    assert ex.error is None
    status = ex.status_html.value
    assert "the server&#x27;s reranker failed to start: no model" in status
    assert "kimun server 0.6.0 is available (this one runs 0.5.1)" in status
    assert [r.path for r in s.requests] == ["/api/embeddings", "/health"]


def test_a_healthy_server_and_other_retrievers_add_nothing(index: LocalIndex) -> None:
    with KimunTestServer(retriever=index) as server, server.client() as client:
        ex = Explorer(client)
        ex.search("starter")
        assert ex.server_health is not None
        assert not ex.server_health.problems()
        assert "askkit-warn" not in ex.status_html.value
    local = Explorer(index)
    local.search("starter")
    assert local.server_health is None


# --------------------------------------------------------------------------- issue 40


def recording(calls: list[str]) -> Any:
    """A fast retriever that records each question it is asked."""

    def retrieve(query: str, k: int = 10) -> list[dict[str, Any]]:
        calls.append(query)
        return [chunk_dict(query.replace("/", "_") or "empty")]

    return retrieve


def test_issue40_4_a_click_sent_before_the_last_keystrokes_searches_the_box() -> None:
    # ipywidgets sends a click at once but may hold a Text's last update back until the
    # kernel answered the one before: the kernel then sees the click first
    calls: list[str] = []
    ex = Explorer(recording(calls))
    ex.search("rye bread")  # the previous question, in the box
    click(ex.search_button)  # the user typed a new question: the browser sends the click first
    time.sleep(0.05)
    type_in(ex.query_box, "wireguard peers")  # the keystrokes the browser held back
    assert ex.wait(30)
    assert calls == ["rye bread", "wireguard peers"]  # never the previous question again
    assert ex.question == ex.query_box.value == "wireguard peers"
    assert [s.path.stem for s in ex.sources] == ["wireguard peers"]
    assert "wireguard peers" in ex.status_html.value


def test_issue40_4_enter_on_an_unchanged_question_asks_it_again() -> None:
    calls: list[str] = []
    ex = Explorer(recording(calls))
    ex.settle = 0.0
    type_in(ex.query_box, "embed a note")
    press_enter(ex.query_box)
    assert ex.wait(30)
    press_enter(ex.query_box)  # the same text: the browser still sends the submit
    assert ex.wait(30)
    click(ex.search_button)
    assert ex.wait(30)
    assert calls == ["embed a note"] * 3
    assert [e.query for e in ex.history] == ["embed a note"] * 3
    assert [b.description for b in ex.history_buttons] == ["embed a note"]
    type_in(ex.query_box, "   ")
    press_enter(ex.query_box)  # an empty box asks nothing, and says so
    assert ex.wait(30)
    assert len(calls) == 3
    assert "type a question" in ex.status_html.value


ORDERS = list(itertools.permutations(["type", "click", "enter"]))


def test_issue40_4_typing_clicking_and_enter_in_every_order_search_the_box() -> None:
    calls: list[str] = []
    ex = Explorer(recording(calls))
    for round_ in range(3):
        for n, order in enumerate(ORDERS):
            question = f"question {round_}-{n}"
            before = len(calls)
            for event in order:
                if event == "type":
                    for end in range(1, len(question) + 1):  # keystroke by keystroke
                        type_in(ex.query_box, question[:end])
                elif event == "click":
                    click(ex.search_button)
                else:
                    press_enter(ex.query_box)
            assert ex.wait(30)
            # one burst, one search: of the box's final question, whatever came first
            assert calls[before:] == [question], order
            assert ex.question == question
            assert [s.path.stem for s in ex.sources] == [question]
            assert ex.reader.query == question


def test_issue40_4_the_box_sends_its_text_when_committed_and_no_deprecated_on_submit() -> None:
    """Keystrokes are not sent one by one: a question typed right after a click must not
    reach the kernel while that click's search waits for its own last letters (the
    browser test types and clicks back to back)."""
    ex = Explorer(recording([]))
    assert not ex.query_box.continuous_update
    assert ex.query_box._submission_callbacks.callbacks == []  # on_submit is deprecated
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Explorer(recording([]))


def obsidian() -> Path:
    return corpus("obsidian-help-en")


@pytest.fixture(scope="module")
def obsidian_index() -> LocalIndex:
    return LocalIndex(obsidian(), cache_dir=False, progress=False)


def heading_cells(ex: Explorer) -> list[str]:
    """The heading column as shown: the text a browser displays in each visible row."""
    return [
        re.sub(r"<[^>]+>", "", row.cells["heading"].value)
        for row in ex.view._rows
        if row.position is not None
    ]


def test_issue40_6_a_heading_less_section_reads_as_its_notes_title_on_obsidian(
    obsidian_index: LocalIndex,
) -> None:
    ex = Explorer(obsidian_index, obsidian())
    sources = ex.search("keyboard shortcut for the command palette")
    assert str(sources[0].path) == "plugins/command palette.md"
    assert sources[0].display_heading() == ""  # kimun's own value is kept
    shown = heading_cells(ex)
    assert shown[0] == "Command palette"  # the file's name as on disk, as Obsidian titles it
    assert "(no heading)" not in " ".join(shown)
    assert "the note&#x27;s title" in ex.view._rows[0].cells["heading"].value  # its tooltip
    assert ex.view.titles["plugins/command palette.md"] == "Command palette"
    without_vault = Explorer(obsidian_index)
    without_vault.search("keyboard shortcut for the command palette")
    assert heading_cells(without_vault)[0] == "command palette"  # the printed stem


def test_issue40_6_a_heading_less_section_reads_as_its_notes_title_on_a_small_vault(
    tmp_path: Path,
) -> None:
    (tmp_path / "Plugins").mkdir()
    (tmp_path / "Plugins" / "Command palette.md").write_text(
        "Open the command palette with Ctrl+P.\n\n# Usage\n\nType a command.\n"
    )
    (tmp_path / "Other.md").write_text("# Other\n\nNothing about commands.\n")
    ex = Explorer(LocalIndex(tmp_path, cache_dir=False, progress=False), tmp_path)
    ex.search("open the command palette")
    assert heading_cells(ex)[0] == "Command palette"
    ex.view.sort("heading")
    assert heading_cells(ex) == sorted(heading_cells(ex), key=str.lower)


@pytest.mark.parametrize(
    ("where", "question", "lead"),
    [
        ("sample", "tags baking bread", "notes' frontmatter"),
        ("obsidian", "embed a note", "4 of the top 10 are notes' frontmatter"),
    ],
)
def test_issue40_6_the_explorer_points_out_frontmatter_among_the_results(
    index: LocalIndex, where: str, question: str, lead: str
) -> None:
    retriever, vault = (index, VAULT)
    if where == "obsidian":
        retriever = LocalIndex(obsidian(), cache_dir=False, progress=False)
        vault = obsidian()
    ex = Explorer(retriever, vault)
    sources = ex.search(question)
    frontmatter = [s for s in sources if s.heading == "FrontMatter"]
    assert frontmatter  # kimun's behaviour, kept: frontmatter is a section like any other
    notice = ex.notice_html.value
    assert lead in notice.replace("&#x27;", "'")
    assert "which kimun indexes as a section of its own" in notice
    for source in frontmatter[:4]:
        assert str(source.path) in notice
    assert ex.children.index(ex.notice_html) == ex.children.index(ex.view) + 1  # under them
    ex.search("wireguard tunnel")  # no frontmatter among these: the line goes
    assert not any(s.heading == "FrontMatter" for s in ex.sources)
    assert ex.notice_html.value == ""


def test_issue40_10_switching_retrievers_adds_no_history_entry_and_it_never_grows_down(
    index: LocalIndex,
) -> None:
    ex = Explorer(retrievers={"BM25": index, "function": recording([])}, vault=VAULT, k=3)
    ex.settle = 0.0
    ex.search("rye bread")
    ex.use("function")
    assert ex.wait(30)
    ex.use("BM25")
    assert ex.wait(30)
    assert len(ex.history) == 3
    assert [b.description for b in ex.history_buttons] == ["rye bread"]  # one per question
    runs = ex.history_box.children[0].children[1].value
    assert "BM25: 3" in runs
    assert "function: 1" in runs  # every retriever that answered, whole, not cut
    layout = ex.history_box.layout
    assert (layout.height, layout.overflow) == ("200px", "hidden auto")  # scrolls in place
    for i in range(25):
        ex.search(f"question {i}")
    assert len(ex.history_buttons) == 20  # bounded
    assert ex.history_buttons[0].description == "question 24"
    assert len(ex.history_box.children) == 20
    assert ex._history_rows[:20] == ex._history_rows  # rows reused, never rebuilt


def test_issue40_10_the_date_column_shows_only_when_a_source_has_a_date(
    index: LocalIndex, tmp_path: Path
) -> None:
    (tmp_path / "a.md").write_text("# Alpha\n\nrye\n")
    (tmp_path / "b.md").write_text("# Beta\n\nrye and oats\n")
    ex = Explorer(LocalIndex(tmp_path, cache_dir=False, progress=False), tmp_path)
    ex.search("rye")
    assert "date" not in ex.view.columns
    assert ex.view._shared.layouts["date"].display == "none"
    assert ex.view.sort_buttons["date"].layout.display == "none"
    assert ex.view._date_filters.layout.display == "none"
    journal = Explorer(index, VAULT)
    journal.search("baked a loaf in the afternoon")
    assert any(s.date for s in journal.sources)
    assert "date" in journal.view.columns
    assert journal.view._shared.layouts["date"].display is None
    assert journal.view.sort_buttons["date"].layout.display is None


def test_issue40_10_the_why_not_panel_follows_the_explorers_state(index: LocalIndex) -> None:
    ex = Explorer(index, VAULT)
    assert "run a query" in ex.chain_panel.status.value
    ex.search("how often should I feed the sourdough starter")
    status = ex.chain_panel.status.value
    assert "run a query" not in status
    assert "how often should I feed the sourdough starter" in status
    ex.chain_panel.sections_box.value = "projects/sourdough.md#Feeding schedule"
    ex.chain_panel.trace_button.click()
    assert ex.chain_panel.view is not None
    ex.search("rye bread")
    assert "the chain below follows how often should I feed" in ex.chain_panel.status.value
    assert "through rye bread" in ex.chain_panel.status.value


def test_issue40_10_the_explorers_reader_says_a_search_rank_not_a_citation() -> None:
    index = LocalIndex(DATA / "vault", cache_dir=False, progress=False)
    explorer = Explorer(index, vault=DATA / "vault")
    explorer.search("how often should I feed the sourdough starter")
    assert "search rank <code>1</code>" in explorer.reader.meta_html.value
    assert "ordinal" not in explorer.reader.meta_html.value
