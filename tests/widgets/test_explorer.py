"""Explorer: LocalIndex, KimunClient against KimunTestServer, a plain callable, errors, the cut."""

from __future__ import annotations

import dataclasses
import threading
from typing import Any

import pytest

from askkit.ranking import CutSettings, answer_context, cut_len
from askkit.retrieve.local import LocalIndex
from askkit.testing import FAST_SETTINGS, KimunTestServer
from askkit.widgets import Explorer
from askkit.widgets._histogram import score_histogram_png
from tests.conftest import DATA

VAULT = DATA / "vault"
PNG = b"\x89PNG"


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
    assert [b.description for b in ex.history_box.children] == [
        f"how often should I feed the sourdough starter ({len(sources)} sources)"
    ]


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
    ex.query_box.value = "wireguard"  # what the front-end sends on Enter
    assert ex.wait(30)
    assert ex.history[-1].query == "wireguard"
    ex.search_button.click()  # the same query again, by the button
    assert ex.wait(30)
    assert len(ex.history) == 2
    ex.search("tomatoes")
    assert [b.description.split(" (")[0] for b in ex.history_box.children] == [
        "tomatoes",
        "wireguard",
    ]
    ex.history_box.children[1].click()
    assert ex.wait(30)
    assert ex.history[-1].query == "wireguard"
    assert ex.query_box.value == "wireguard"
    assert ex.history_box.children[0].description.startswith("wireguard")


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
    assert ex.history_box.children[0].button_style == "danger"
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
    ex.submit("slow")  # returns while the retriever still works
    assert "searching for" in ex.status_html.value
    assert not ex.wait(0.05)
    ex.submit("skipped")  # waits behind "slow", then is superseded by "last"
    ex.query_box.value = "last"  # Enter in the front end
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
    assert [b.description.split(" (")[0] for b in ex.history_box.children] == ["last", "slow"]


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
