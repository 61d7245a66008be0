"""Explorer with several retrievers: the switch, the history, the cut panel, compare.

Real retrievers throughout: two LocalIndex builds of data/vault (with and without
headings indexed, so their rankings and pools differ), plain functions, one that
raises, one that waits on an event, and a KimunClient against a KimunTestServer.
"""

from __future__ import annotations

import threading
from typing import Any

import ipywidgets as w
import pytest

from askkit import AskSource
from askkit.errors import UsageError
from askkit.retrieve import as_retriever
from askkit.retrieve.local import LocalIndex
from askkit.testing import KimunTestServer
from askkit.widgets import Explorer, HistoryEntry
from askkit.widgets._switch import histogram_title
from tests.conftest import DATA

VAULT = DATA / "vault"
PNG = b"\x89PNG"
QUERY = "wireguard"  # headings decide its first source: the two indexes disagree


def chunk_dict(path: str, score: float = 1.0) -> dict[str, Any]:
    return {"path": path, "title": path, "content": "x", "hash": "h", "similarity_score": score}


def listing(query: str, k: int = 10) -> list[dict[str, Any]]:
    """A plain function retriever: ``k`` notes named after the query, falling scores."""
    return [chunk_dict(f"{query}-{i}.md", 1 - i / 100) for i in range(k)]


def broken(query: str) -> list[Any]:
    raise RuntimeError(f"<b>down</b> for {query}")


@pytest.fixture(scope="module")
def index() -> LocalIndex:
    return LocalIndex(VAULT, cache_dir=False, progress=False)


@pytest.fixture(scope="module")
def plain() -> LocalIndex:
    return LocalIndex(VAULT, cache_dir=False, progress=False, index_headings=False)


def paths(sources: Any) -> list[str]:
    return [str(s.path) for s in sources]


def expected(retriever: Any, query: str, k: int) -> list[str]:
    return paths(AskSource.from_chunks(as_retriever(retriever)(query, k=k)))


def join_searches() -> None:
    """Wait for every search thread, superseded ones too."""
    for thread in threading.enumerate():
        if thread.name.startswith("askkit-explorer"):
            thread.join(30)


def descendants(widget: Any) -> list[Any]:
    out, stack = [], [widget]
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(getattr(node, "children", ()))
    return out


def test_the_two_indexes_disagree_on_the_query(index: LocalIndex, plain: LocalIndex) -> None:
    # the switch tests below tell the retrievers apart by this difference
    assert expected(index, QUERY, 5) != expected(plain, QUERY, 5)
    assert index.pool(QUERY) != plain.pool(QUERY)


# --------------------------------------------------------------------------- the switch


def test_one_retriever_shows_no_switch_and_records_no_name(index: LocalIndex) -> None:
    ex = Explorer(index, VAULT)
    assert not ex.several
    assert ex.retriever_name == "LocalIndex"
    assert ex.retriever_names == ("LocalIndex",)
    assert ex.retriever_box not in descendants(ex)
    ex.search(QUERY)
    assert ex.history[-1].retriever is None
    assert [b.description for b in ex.history_buttons] == [QUERY]
    assert f">{len(ex.sources)} sources<" in ex.history_box.children[0].children[1].value
    assert "from" not in ex.status_html.value
    assert ex.histogram_label.value == "<b>scores</b>"
    ex.use("LocalIndex")  # the only name: nothing to switch, nothing run
    assert len(ex.history) == 1


def test_retriever_names_a_plain_function_after_itself() -> None:
    assert Explorer(listing).retriever_name == "listing"


def test_a_few_retrievers_get_toggle_buttons_many_a_dropdown(
    index: LocalIndex, plain: LocalIndex
) -> None:
    ex = Explorer(retrievers={"BM25": index, "no headings": plain, "function": listing})
    assert isinstance(ex.retriever_box, w.ToggleButtons)
    assert ex.retriever_box in ex.children
    assert [value for _label, value in ex.retriever_box.options] == [
        "BM25",
        "no headings",
        "function",
    ]
    assert ex.retriever_box.value == "BM25"  # the first is chosen at start
    assert ex.retriever_name == "BM25"
    many = Explorer(retrievers={f"r{i}": listing for i in range(5)})
    assert isinstance(many.retriever_box, w.Dropdown)
    assert [value for _label, value in many.retriever_box.options] == ["r0", "r1", "r2", "r3", "r4"]
    assert many.retriever_box in many.children


def test_switching_runs_the_current_query_on_the_chosen_retriever(
    index: LocalIndex, plain: LocalIndex
) -> None:
    ex = Explorer(retrievers={"BM25": index, "no headings": plain}, vault=VAULT, k=5)
    assert paths(ex.search(QUERY)) == expected(index, QUERY, 5)
    ex.retriever_box.value = "no headings"  # what clicking the toggle does
    assert ex.wait(30)
    assert ex.retriever_name == "no headings"
    assert paths(ex.sources) == expected(plain, QUERY, 5)
    assert ex.view.selected == ex.sources[0]  # its best result opens in the reader
    assert [(e.query, e.retriever) for e in ex.history] == [
        (QUERY, "BM25"),
        (QUERY, "no headings"),
    ]
    assert "from <b>no headings</b>" in ex.status_html.value
    assert ex.search("rye bread") is not None  # later queries go to the chosen one
    assert paths(ex.sources) == expected(plain, "rye bread", 5)


def test_use_switches_from_python_and_the_history_names_each_retriever(
    index: LocalIndex, plain: LocalIndex
) -> None:
    ex = Explorer(retrievers={"BM25": index, "no headings": plain, "function": listing}, k=3)
    ex.use("function")  # no query yet: nothing to run
    assert ex.wait(30)
    assert ex.history == []
    assert ex.retriever_box.value == "function"
    ex.search(QUERY)
    ex.use("BM25")
    assert ex.wait(30)
    ex.use("BM25")  # already chosen: nothing runs again
    assert ex.wait(30)
    assert [e.retriever for e in ex.history] == ["function", "BM25"]
    assert [b.description for b in ex.history_buttons] == [QUERY]  # one entry per question
    assert "function: 3 · BM25: 3" in ex.history_box.children[0].children[1].value
    ex.use("function")
    assert ex.wait(30)
    ex.history_buttons[0].click()  # asks it again on the chosen retriever
    assert ex.wait(30)
    assert ex.retriever_name == "function"
    assert ex.retriever_box.value == "function"
    assert paths(ex.sources) == expected(listing, QUERY, 3)
    assert ex.history[-1] == HistoryEntry(QUERY, 3, ex.history[-1].seconds, None, "function")
    assert repr(ex).endswith("from 'function'; 4 queries>")


def test_unknown_names_and_bad_arguments_raise_usage_errors(index: LocalIndex) -> None:
    ex = Explorer(retrievers={"BM25": index, "function": listing})
    with pytest.raises(
        UsageError,
        match=r"no retriever named 'dense'; this Explorer has "
        r"'BM25', 'function'",
    ):
        ex.use("dense")
    assert ex.retriever_name == "BM25"
    with pytest.raises(UsageError, match="not both"):
        Explorer(index, retrievers={"BM25": index})
    with pytest.raises(UsageError, match="needs a retriever"):
        Explorer()
    with pytest.raises(UsageError, match="empty"):
        Explorer(retrievers={})
    with pytest.raises(UsageError, match="non-empty string"):
        Explorer(retrievers={" ": listing})
    with pytest.raises(UsageError, match="mapping"):
        Explorer(retrievers=[index])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"retrievers\['number'\]: expected a retriever"):
        Explorer(retrievers={"BM25": index, "number": 42})


def test_a_retriever_that_raises_is_shown_and_switching_still_works(index: LocalIndex) -> None:
    ex = Explorer(retrievers={"BM25": index, "broken": broken}, k=4)
    ex.search(QUERY)
    ex.use("broken")
    assert ex.wait(30)
    assert ex.sources == ()
    assert ex.error == f"RuntimeError: <b>down</b> for {QUERY}"
    assert "<b>broken failed:</b>" in ex.error_html.value
    assert "&lt;b&gt;down&lt;/b&gt;" in ex.error_html.value
    assert ex.history[-1].retriever == "broken"
    assert "BM25: 4 · broken: error" in ex.history_box.children[0].children[1].value
    assert ex.history_buttons[0].button_style == "danger"
    ex.use("BM25")
    assert ex.wait(30)
    assert ex.error is None
    assert ex.error_html.value == ""
    assert paths(ex.sources) == expected(index, QUERY, 4)


def test_switching_while_a_slow_retriever_runs_supersedes_what_waits() -> None:
    release = threading.Event()
    calls: list[str] = []

    def slow(query: str, k: int = 10) -> list[dict[str, Any]]:
        calls.append(f"slow:{query}")
        assert release.wait(30)
        return [chunk_dict("slow.md")]

    def fast(query: str, k: int = 10) -> list[dict[str, Any]]:
        calls.append(f"fast:{query}")
        return [chunk_dict("fast.md")]

    def last(query: str, k: int = 10) -> list[dict[str, Any]]:
        calls.append(f"last:{query}")
        return [chunk_dict("last.md"), chunk_dict("last2.md", 0.5)]

    ex = Explorer(retrievers={"slow": slow, "fast": fast, "last": last})
    ex.submit("q")  # returns while "slow" still works
    assert not ex.wait(0.05)
    assert "searching for q with slow" in ex.status_html.value
    ex.use("fast")  # waits behind "slow", then is superseded by the next switch
    ex.retriever_box.value = "last"  # a click on the switch
    assert "searching for q with last" in ex.status_html.value
    release.set()
    assert ex.wait(30)
    join_searches()
    assert calls == ["slow:q", "last:q"]  # "fast" never ran
    assert [(e.query, e.retriever) for e in ex.history] == [("q", "slow"), ("q", "last")]
    assert paths(ex.sources) == ["last.md", "last2.md"]  # the late "slow" result is not shown
    assert "from <b>last</b>" in ex.status_html.value
    assert ex.histogram_label.value == "<b>scores</b> (last)"


def test_a_search_on_a_slow_retriever_shows_its_result_once_done() -> None:
    # switching back and forth while the slow one runs: the result shown is the last asked
    release = threading.Event()

    def slow(query: str, k: int = 10) -> list[dict[str, Any]]:
        assert release.wait(30)
        return [chunk_dict("slow.md")]

    ex = Explorer(retrievers={"fast": listing, "slow": slow}, k=2)
    ex.search("q")
    ex.use("slow")
    ex.use("fast")  # supersedes the slow run before it shows
    release.set()
    assert ex.wait(30)
    join_searches()
    assert paths(ex.sources) == ["q-0.md", "q-1.md"]
    assert ex.retriever_name == "fast"


# --------------------------------------------------------------------------- what follows it


def test_the_cut_panel_uses_the_chosen_retrievers_pool(
    index: LocalIndex, plain: LocalIndex
) -> None:
    ex = Explorer(retrievers={"BM25": index, "no headings": plain, "function": listing}, k=3)
    ex.show_cut()
    ex.search(QUERY)
    assert ex.cut_view.pool == tuple(index.pool(QUERY))
    assert (ex.pool_query, ex.pool_retriever) == (QUERY, "BM25")
    assert "<b>BM25:</b>" in ex.cut_status.value
    assert f"{len(index.pool(QUERY))} chunks from LocalIndex.pool" in ex.cut_status.value
    ex.use("no headings")
    assert ex.wait(30)
    assert ex.cut_view.pool == tuple(plain.pool(QUERY))
    assert (ex.pool_query, ex.pool_retriever) == (QUERY, "no headings")
    ex.use("function")  # no pool method: its first 80 results
    assert ex.wait(30)
    assert ex.cut_view.pool == tuple(as_retriever(listing)(QUERY, k=80))
    assert [str(c.path) for c in ex.cut_view.pool] == [f"{QUERY}-{i}.md" for i in range(80)]
    assert "first 80 results" in ex.cut_status.value


def test_opening_the_cut_panel_after_a_switch_fetches_that_retrievers_pool(
    index: LocalIndex, plain: LocalIndex
) -> None:
    ex = Explorer(retrievers={"BM25": index, "no headings": plain})
    ex.show_cut()
    ex.search(QUERY)
    assert ex.pool_retriever == "BM25"
    ex.show_cut(False)
    ex.use("no headings")
    assert ex.wait(30)
    assert ex.pool_retriever == "BM25"  # closed: the pool stays as it was
    ex.show_cut()  # the same query, another retriever: fetched again
    assert ex.wait(30)
    assert (ex.pool_query, ex.pool_retriever) == (QUERY, "no headings")
    assert ex.cut_view.pool == tuple(plain.pool(QUERY))


def test_a_failing_pool_names_its_retriever() -> None:
    class Pooled:
        def __call__(self, query: str, k: int = 10) -> list[dict[str, Any]]:
            return [chunk_dict("a.md")]

        def pool(self, query: str) -> list[Any]:
            raise RuntimeError("<pool down>")

    ex = Explorer(retrievers={"function": listing, "pooled": Pooled()})
    ex.show_cut()
    ex.search("q")
    assert len(ex.cut_view.pool) == 80
    ex.use("pooled")
    assert ex.wait(30)
    assert ex.error is None
    assert "<b>fetching the pool failed (pooled):</b>" in ex.cut_status.value
    assert "&lt;pool down&gt;" in ex.cut_status.value
    assert ex.cut_view.pool == ()


def test_the_histogram_names_the_retriever_whose_scores_it_shows(
    index: LocalIndex, plain: LocalIndex
) -> None:
    ex = Explorer(retrievers={"BM25": index, "no headings": plain})
    assert ex.histogram_label.value == "<b>scores</b> (BM25)"
    ex.search(QUERY)
    bm25_png = bytes(ex.histogram.value)
    assert bm25_png.startswith(PNG)
    ex.use("no headings")
    assert ex.wait(30)
    assert ex.histogram_label.value == "<b>scores</b> (no headings)"
    assert bytes(ex.histogram.value).startswith(PNG)
    assert bytes(ex.histogram.value) != bm25_png


def test_histogram_titles_name_the_retriever_and_never_read_as_mathtext() -> None:
    assert histogram_title(4, "BM25") == "4 scores from BM25"
    assert histogram_title(4, None) == "4 scores"
    assert histogram_title(0, "BM25") == ""
    assert histogram_title(2, "$\\frac{") == "2 scores from \\$\\frac{"
    ex = Explorer(retrievers={"$\\frac{": listing, "$x$": listing})  # a bad TeX name draws
    ex.search("q")
    assert ex.error is None
    assert bytes(ex.histogram.value).startswith(PNG)


def test_a_kimun_server_is_one_of_the_retrievers(index: LocalIndex, plain: LocalIndex) -> None:
    with KimunTestServer(retriever=plain) as server, server.client() as client:
        ex = Explorer(retrievers={"BM25": index, "kimun": client}, vault=VAULT, k=3)
        ex.show_cut()
        ex.search(QUERY)
        ex.use("kimun")
        assert ex.wait(30)
        assert ex.error is None
        assert paths(ex.sources) == expected(plain, QUERY, 3)  # what the server serves
        assert ex.reader.located is not None
        assert ex.history[-1].retriever == "kimun"
        assert ex.cut_view.pool == tuple(client(QUERY, k=80))
        assert "first 80 results" in ex.cut_status.value


# --------------------------------------------------------------------------- compare


def test_compare_shows_every_retrievers_top_k_side_by_side(
    index: LocalIndex, plain: LocalIndex
) -> None:
    ex = Explorer(retrievers={"BM25": index, "no headings": plain, "broken": broken}, k=3)
    with pytest.raises(UsageError, match="needs a query"):
        ex.compare()
    ex.search(QUERY)
    result = ex.compare()  # the current query, the k box
    assert (result.query, result.k) == (QUERY, 3)
    assert [a.retriever for a in result.answers] == ["BM25", "no headings", "broken"]
    table = result.table()
    assert list(table.columns) == ["BM25", "no headings", "broken"]
    assert list(table.index) == [1, 2, 3]
    top = AskSource.from_chunks(index(QUERY, k=3))[0]
    assert table.loc[1, "BM25"] == f"{top.path} · {top.score:.3f}"
    assert [c.split(" · ")[0] for c in table["no headings"]] == expected(plain, QUERY, 3)
    assert list(table["broken"]) == ["error", "", ""]
    frame = result.frame()
    assert list(frame["retriever"]) == ["BM25"] * 3 + ["no headings"] * 3
    assert list(frame["rank"]) == [1, 2, 3, 1, 2, 3]
    assert frame["score"].tolist()[:1] == [top.score]
    html = result._repr_html_()
    assert "&lt;b&gt;down&lt;/b&gt;" in html
    assert "<b>broken:</b>" in html
    assert len(ex.history) == 1  # compare shows nothing in the widget
    assert ex.compare("rye bread", k=1).table().shape == (1, 3)
    with pytest.raises(UsageError, match="k must be >= 1, got 0"):
        ex.compare(k=0)


def test_the_explorer_switches_between_bm25_dense_reranked_dense_and_a_server(
    index: LocalIndex, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # The four retrievers issue 19 names, each real: askkit's BM25 index, a dense index
    # on a tiny fastembed model, the same with a tiny cross-encoder reranking its pool,
    # and a kimun server (the test double).
    import warnings

    from askkit.dense import DenseIndex
    from askkit.testing.models import tiny_embedder, tiny_reranker

    folder = tmp_path_factory.mktemp("models")
    texts = index.chunks["text"]
    embedder = tiny_embedder(folder / "embedder", texts, dim=64)
    dense = DenseIndex(VAULT, embedder, store=False, progress=False)
    reranked = DenseIndex(
        VAULT,
        embedder,
        store=False,
        progress=False,
        reranker=tiny_reranker(folder / "reranker", texts),
    )
    with KimunTestServer() as server, server.client() as client:
        ex = Explorer(
            retrievers={
                "BM25": index,
                "dense": dense,
                "dense + reranker": reranked,
                "kimun": client,
            }
        )
        shown: dict[str, list[str]] = {}
        status: dict[str, str] = {}
        with warnings.catch_warnings():
            # the tiny cross-encoder's raw logits leave 0..1: kimun squashes them, with a warning
            warnings.simplefilter("ignore", UserWarning)
            for name in ex.retriever_names:
                ex.use(name)
                if name == "BM25":
                    ex.search(QUERY)
                ex.wait()
                assert ex.error is None, ex.error
                assert ex.history[-1].retriever == name
                shown[name] = paths(ex.sources)
                status[name] = ex.status_html.value
        join_searches()
    assert shown["BM25"] == expected(index, QUERY, 10)  # the Explorer asks for 10
    assert shown["dense"] == [c.path for c in dense.search(QUERY, 10)]
    assert shown["dense + reranker"] != shown["dense"]  # the cross-encoder reordered the pool
    assert shown["kimun"]  # the server's fixed sample answer
    assert [e.retriever for e in ex.history[-4:]] == list(ex.retriever_names)
    # wherever a stand-in model runs, the status line says so; real retrievers say nothing
    embedding_note = "stand-in: the embedding model is askkit&#x27;s tiny stand-in"
    reranker_note = "stand-in: the reranker is askkit&#x27;s tiny stand-in cross-encoder"
    assert embedding_note in status["dense"]
    assert reranker_note not in status["dense"]
    assert embedding_note in status["dense + reranker"]
    assert reranker_note in status["dense + reranker"]
    assert "stand-in" not in status["BM25"]
    assert "stand-in" not in status["kimun"]


# --------------------------------------------------------------------------- issue 40


class TinyReranker:
    stand_in = "the reranker is a tiny stand-in"


class StandIn:
    """A retriever whose reranker is a stand-in, named without saying so."""

    reranker = TinyReranker()

    def __call__(self, query: str, k: int = 10) -> list[dict[str, Any]]:
        return listing(query, k)


def test_issue40_5_the_switch_shows_every_name_whole_with_a_tooltip(index: LocalIndex) -> None:
    ex = Explorer(
        retrievers={
            "dense": listing,
            "BM25": index,
            "dense + reranker (stand-in)": StandIn(),
            "reranked": StandIn(),
        },
        k=2,
    )
    box = ex.retriever_box
    assert isinstance(box, w.ToggleButtons)
    labels = ["dense", "BM25", "dense + reranker (stand-in)", "reranked (stand-in)"]
    assert [label for label, _value in box.options] == labels  # nothing cut, nothing added
    assert box.style.button_width == "auto"  # each button as wide as its label
    assert list(box.tooltips) == labels
    ex.search(QUERY)
    ex.retriever_box.value = "reranked"  # a click on the stand-in's button
    assert ex.wait(30)
    assert ex.retriever_name == "reranked"
    assert ex.retriever_label == "reranked (stand-in)"
    assert "from <b>reranked (stand-in)</b>" in ex.status_html.value
    assert "stand-in: the reranker is a tiny stand-in" in ex.status_html.value
    assert ex.histogram_label.value == "<b>scores</b> (reranked (stand-in))"
    assert "reranked (stand-in): 2" in ex.history_box.children[0].children[1].value


def test_issue40_5_names_too_long_for_buttons_get_a_dropdown_as_wide_as_the_longest() -> None:
    long = "dense retrieval with kimun's reranker from the hub"
    ex = Explorer(retrievers={"BM25": listing, long: listing})
    box = ex.retriever_box
    assert isinstance(box, w.Dropdown)
    assert box.layout.width == f"calc({len(long)}ch + 120px)"
    assert box.tooltip == "BM25"
    box.value = long
    assert ex.wait(30)
    assert box.tooltip == long  # the tooltip names the chosen one in full
