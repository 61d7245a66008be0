"""CutView: its controls give CutSettings, its boundaries and kept chunks are askkit.ranking's."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import pandas as pd
import pytest

from askkit import AskSource, ChunkResult, Turn, VaultPath
from askkit.errors import SchemaError
from askkit.frame import sources_frame
from askkit.ranking import (
    STRATEGIES,
    CutSettings,
    answer_context,
    cut_len,
    cut_preview,
    explain_cut,
    pool_of,
    search_rows,
    why_not,
)
from askkit.widgets import CutView
from askkit.widgets._cut_model import (
    as_pool,
    boundary_x,
    cut_model,
    cut_plot_png,
    gap_closing_index,
    strategy_table,
)
from tests.widgets.test_safety import IMG, LINK, SCRIPT, _assert_safe

PNG = b"\x89PNG"
NOTES = ["/a.md", "/a.md", "/b.md", "/c.md", "/d.md", "/e.md", "/e.md", "/f.md"]
POOLS: dict[str, list[ChunkResult]] = {
    "empty": [],
    "one chunk": pool_of([0.7]),
    "all ties": pool_of([0.5] * 6),
    "notes with several chunks": pool_of([0.95, 0.94, 0.93, 0.92, 0.91, 0.50, 0.49, 0.30], NOTES),
    "a gap": pool_of([0.90, 0.89, 0.88, 0.87, 0.86, 0.50, 0.49, 0.48]),
    "non-positive scores": pool_of([0.4, 0.1, -0.2, -0.5]),
    "a NaN score": pool_of([0.9, math.nan, 0.5, 0.1]),
    "a full pool": pool_of([1 - i / 100 for i in range(80)], [f"/n{i % 25}.md" for i in range(80)]),
}
SETTINGS = [
    CutSettings(),
    CutSettings(strategy="fixed", top_k=3),
    CutSettings(strategy="largest-drop", drop_window_min=1, drop_window_max=4),
    CutSettings(strategy="score-range", score_range_cutoff=0.9),
]


def _same_chunks(a: Any, b: Any) -> bool:
    """The same chunks in the same order, ordinals aside (the context renumbers them)."""
    strip = [replace(c, ordinal=0) for c in a]
    return strip == [replace(c, ordinal=0) for c in b]


@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: s.label)
@pytest.mark.parametrize("name", list(POOLS))
def test_boundaries_and_kept_are_the_ranking_functions(name: str, settings: CutSettings) -> None:
    pool = POOLS[name]
    view = CutView(pool, settings)
    assert view.settings == settings
    assert view.pool == tuple(pool)
    for strategy in STRATEGIES:
        expected = cut_len(pool, settings.replace(strategy=strategy))
        assert view.boundaries[strategy] == expected
        assert boundary_x(view.model)[strategy] == expected + 0.5
    assert list(view.kept) == answer_context(pool, settings)
    assert _same_chunks(view.kept, cut_preview(pool, settings).context)
    assert list(view.model.search) == search_rows(pool, settings)
    shown = view.sources_view.frame
    assert shown["path"].tolist() == [c.path for c in view.kept]
    assert shown["ordinal"].tolist() == list(range(1, len(view.kept) + 1))
    assert shown["score"].tolist() == pytest.approx(
        [c.similarity_score for c in view.kept], nan_ok=True
    )
    assert bytes(view.plot.value).startswith(PNG)
    assert settings.strategy in view.summary
    assert view.summary in view.summary_html.value or "&" in view.summary_html.value
    assert view.toml_box.value == settings.to_toml() == view.to_toml()
    assert CutSettings.from_toml(view.toml_box.value) == view.settings


@pytest.mark.parametrize("name", list(POOLS))
def test_the_strategy_table_agrees_with_explain_cut(name: str) -> None:
    pool = POOLS[name]
    settings = CutSettings(top_k=2)
    table = strategy_table(cut_model(pool, settings))
    explained = explain_cut(pool, settings)
    for strategy, suffix in zip(STRATEGIES, ["fixed", "score_range", "largest_drop"], strict=True):
        chunks = explained.attrs["cut_len"][strategy]
        notes = explained[explained[f"kept_{suffix}"]]["path"].nunique()
        context = f"{chunks} chunk{'s' * (chunks != 1)} from {notes} note{'s' * (notes != 1)}"
        assert table.loc[strategy, "answer's context"] == context
        rows = int(explained[f"in_search_{suffix}"].sum())
        assert table.loc[strategy, "search lists"] == f"{rows} note{'s' * (rows != 1)}"
    assert table["selected"].tolist() == ["", "◀", ""]


def test_each_control_moves_the_settings_as_cut_settings_sanitises_them() -> None:
    pool = POOLS["a full pool"]
    view = CutView(pool)
    seen: list[CutSettings] = []
    view.observe(lambda change: seen.append(change["new"]), names="settings")

    view.strategy_box.value = "largest-drop"
    assert view.settings == CutSettings(strategy="largest-drop")
    assert view.summary.startswith("largest-drop keeps")

    view.cutoff_slider.value = 0.75
    assert view.settings.score_range_cutoff == 0.75
    view.cutoff_slider.value = 1.7  # the slider clamps as CutSettings does
    assert (
        view.settings.score_range_cutoff == CutSettings(score_range_cutoff=1.7).score_range_cutoff
    )
    view.cutoff_slider.value = math.nan  # kimun ignores a NaN and keeps the previous value
    assert view.settings.score_range_cutoff == 1.0
    assert view.cutoff_slider.value == 1.0

    view.window_slider.value = (0, 2)
    assert (
        view.settings.window == CutSettings(drop_window_min=0, drop_window_max=2).window == (1, 2)
    )
    view.window_slider.value = (5, 12)
    assert view.settings.window == (5, 12)

    before = view.kept
    view.strategy_box.value = "fixed"
    view.top_k_slider.value = 0
    assert view.settings.top_k == CutSettings(top_k=0).top_k == 1
    view.top_k_slider.value = 7
    assert view.settings == CutSettings(
        strategy="fixed",
        score_range_cutoff=1.0,
        drop_window_min=5,
        drop_window_max=12,
        top_k=7,
    )
    assert view.kept != before
    assert len(view.kept) == 7 == view.boundaries["fixed"]
    assert len(view.sources_view.frame) == 7
    assert "top_k = 7" in view.summary_html.value
    assert 'context_cut = "fixed"' in view.toml_box.value
    assert seen[-1] == view.settings
    assert len(seen) == 8  # one change per applied move, none for the NaN


def test_setting_the_settings_moves_the_controls() -> None:
    view = CutView(POOLS["a gap"])
    view.settings = CutSettings(
        strategy="largest-drop", score_range_cutoff=0.2, drop_window_min=2, drop_window_max=200
    )
    assert view.strategy_box.value == "largest-drop"
    assert view.cutoff_slider.value == 0.2
    assert view.window_slider.value == (2, 200)
    assert view.window_slider.max >= 200
    assert view.boundaries["largest-drop"] == 6
    assert "which closes the gap and is kept" in view.summary


def test_the_gap_closing_note_is_marked() -> None:
    pool = POOLS["notes with several chunks"]
    model = cut_model(pool, CutSettings(strategy="largest-drop", drop_window_min=1))
    assert model.dropped.keep == 4  # notes a, b, c, d above the gap; e closes it
    index = gap_closing_index(model)
    assert index == 5
    assert pool[index].path == "/e.md"
    # every chunk scoring >= e's best (0.50) is kept: e's best, not its second chunk (0.49)
    assert model.lengths["largest-drop"] == 6
    assert gap_closing_index(cut_model(POOLS["all ties"])) is None
    assert gap_closing_index(cut_model([])) is None


@pytest.mark.parametrize("name", ["empty", "one chunk", "all ties"])
def test_small_and_flat_pools(name: str) -> None:
    pool = POOLS[name]
    view = CutView(pool)
    for strategy in STRATEGIES:
        view.strategy_box.value = strategy
        assert len(view.kept) == len(pool)  # nothing to cut: kept whole
        assert len(view.sources_view.frame) == len(pool)
        view.top_k_slider.value = 1
        assert bytes(view.plot.value).startswith(PNG)
    if not pool:
        assert view.summary == "largest-drop: the pool is empty, nothing to cut"
        assert view.why_box.options == (("(pick a note)", ""),)
    view.strategy_box.value = "score-range"
    if name == "all ties":
        assert "the score range is flat" in view.summary


def test_set_pool_keeps_the_settings() -> None:
    view = CutView(None, CutSettings(strategy="fixed", top_k=3))
    assert view.kept == ()
    big = pool_of([1 - i / 200 for i in range(120)])
    view.set_pool(big)
    assert view.settings.top_k == 3
    assert [c.path for c in view.kept] == [c.path for c in big[:3]]
    assert view.top_k_slider.max >= 120
    view.top_k_slider.value = 110
    assert len(view.kept) == 110


def test_why_follows_the_note_and_the_settings() -> None:
    pool = POOLS["notes with several chunks"]
    view = CutView(pool)
    assert view.why_html.value == ""
    assert [value for _label, value in view.why_box.options] == [
        "",
        *dict.fromkeys(c.path for c in pool),
    ]
    view.why_box.value = "/f.md"
    assert view.why("/f.md") == why_not(pool, "/f.md", view.settings)
    assert "cut:" in view.why_html.value
    view.strategy_box.value = "fixed"
    assert view.why("/f.md") in view.why_html.value.replace("&gt;", ">")
    assert "Answer (fixed): kept as [8]" in view.why_html.value


def test_accepts_the_pools_a_notebook_has() -> None:
    pool = POOLS["notes with several chunks"]
    turn = Turn("q", "a", AskSource.from_chunks(pool))
    frame = pd.DataFrame(
        {
            "query_id": "q1",
            "rank": range(1, len(pool) + 1),
            "path": [c.path for c in pool],
            "score": [c.similarity_score for c in pool],
            "title": [c.title for c in pool],
            "text": [c.content for c in pool],
        }
    )
    wire = [c.to_dict() for c in pool]
    inputs = [pool, tuple(pool), turn, turn.sources, sources_frame(turn), frame, wire]
    for data in inputs:
        got = as_pool(data)
        assert [(c.path, c.similarity_score) for c in got] == [
            (c.path, c.similarity_score) for c in pool
        ], type(data)
        assert CutView(data).boundaries == CutView(pool).boundaries
    assert as_pool(None) == as_pool([]) == ()


def test_refuses_what_is_not_a_pool() -> None:
    two = pd.DataFrame({"query_id": ["a", "b"], "path": ["x", "y"], "score": [0.5, 0.4]})
    with pytest.raises(SchemaError, match="one query"):
        CutView(two)
    with pytest.raises(SchemaError, match="'path' and 'score'"):
        CutView(pd.DataFrame({"path": ["x"]}))
    with pytest.raises(TypeError, match="ranked pool"):
        CutView(42)
    with pytest.raises(TypeError, match="CutSettings"):
        CutView([], {"top_k": 3})  # type: ignore[arg-type]


def test_hostile_titles_and_paths_are_escaped() -> None:
    pool = [
        ChunkResult(f"{SCRIPT}.md", f"{IMG}\x1f{LINK}", None, SCRIPT, IMG, 0.9),
        ChunkResult(f"x/{IMG}.md", SCRIPT, "2026-01-01", LINK, "h", 0.5),
        ChunkResult(f"{LINK}.md", LINK, None, IMG, "h", 0.1),
    ]
    view = CutView(pool, CutSettings(strategy="fixed", top_k=2))
    view.why_box.value = f"x/{IMG}.md"
    view.why_box.value = f"{LINK}.md"
    view.sources_view.select(0)
    _assert_safe(view)
    assert "&lt;a href=" in view.why_html.value
    assert "&lt;script&gt;" in view.sources_view.html()
    assert SCRIPT in view.summary or "fixed keeps 2 of 3" in view.summary


def test_the_plot_is_a_png_for_every_pool() -> None:
    for pool in POOLS.values():
        for settings in SETTINGS:
            assert cut_plot_png(cut_model(pool, settings)).startswith(PNG)
    inf = pool_of([math.inf, 0.5, -math.inf])
    assert cut_plot_png(cut_model(inf)).startswith(PNG)


def test_repr_says_what_is_kept() -> None:
    view = CutView(POOLS["a gap"], CutSettings(strategy="fixed", top_k=2))
    assert repr(view) == (
        "<CutView: fixed keeps 2 of 8 chunks from 2 notes: top_k = 2 chunks for the answer; "
        "search lists 2 notes (up to top_k notes, read on down the whole pool)>"
    )
    assert isinstance(view.kept_sources[0], AskSource)
    assert view.kept_sources[0].path == VaultPath("/n0.md")


def test_the_view_names_the_question_its_pool_came_from() -> None:
    view = CutView(POOLS["a gap"], question="<b>how often</b> do I feed it?")
    assert view.question == "<b>how often</b> do I feed it?"
    assert repr(view).startswith("<CutView pool of '<b>how often</b> do I feed it?': ")
    assert "&lt;b&gt;how often&lt;/b&gt;" in view.question_html.value
    assert "<b>how often</b>" not in view.question_html.value
    view.set_pool(POOLS["a gap"][:4], question="another")
    assert "another" in view.question_html.value
    turn = Turn(question="from the turn", answer="", sources=AskSource.from_chunks(POOLS["a gap"]))
    assert CutView(turn).question == "from the turn"
    unnamed = CutView(POOLS["a gap"])
    assert unnamed.question is None
    assert "unnamed question" in unnamed.question_html.value


def test_the_score_range_sentence_and_plot_say_where_high_and_low_are() -> None:
    from matplotlib.figure import Figure

    from askkit.widgets._cut_model import _draw_cut, plot_legend

    scores = [6.45, 5.0, 4.9, 4.16] + [3.0 - 0.03 * i for i in range(72)] + [0.88, 0.5, 0.4, 0.3]
    pool = pool_of(scores)
    model = cut_model(pool)
    # rank 4 and rank 77 of 80: 5% and 95% of the way down, where kimun reads them
    assert "high 4.16 − low 0.88" in model.summary
    assert (
        "high: the score at rank 4, low: at rank 77 (5% and 95% of the way down the pool of 80)"
        in model.summary
    )
    fig = Figure()
    ax = fig.subplots()
    _draw_cut(ax, model)
    marked = [tuple(c.get_offsets()[0]) for c in ax.collections if len(c.get_offsets()) == 1]
    assert (4, 4.16) in marked  # the high and the low, ringed where they sit
    assert (77, 0.88) in marked
    words = dict(plot_legend(model))  # and named, with their ranks, in the legend
    assert words["endpoints"] == "score-range's high and low: the scores at ranks 4 and 77"


# -- issue 40, item 9: the plot explains every mark and no label overlaps or is clipped ----


def _texts(fig: Any) -> list[tuple[str, Any]]:
    """Every text the drawn figure shows (legend, axis labels, the tick labels within the
    axes' limits, any text on the axes), with its extent in pixels."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    (ax,) = fig.axes
    texts = [*fig.legends[0].get_texts(), ax.xaxis.label, ax.yaxis.label, *ax.texts]
    for axis, (low, high) in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
        drawn = [
            t for t in axis.get_major_ticks() if min(low, high) <= t.get_loc() <= max(low, high)
        ]
        texts.extend(t.label1 for t in drawn)
    return [(t.get_text(), t.get_window_extent(renderer)) for t in texts if t.get_text().strip()]


def _drop_pool(n: int = 80, kept: int = 8) -> list[ChunkResult]:
    """A pool whose score-range cut keeps ``kept`` chunks: the shape that put the
    "score-range (8)" label on the "high (rank 4)" one."""
    top = [6.0 - 0.1 * i for i in range(kept)]
    return pool_of(top + [2.0 - 0.01 * i for i in range(n - kept)])


@pytest.mark.parametrize(
    "pool",
    [POOLS["a full pool"], _drop_pool(), _drop_pool(80, 3), POOLS["notes with several chunks"]],
    ids=["full", "score-range keeps 8", "score-range keeps 3", "notes"],
)
@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: s.label)
def test_issue40_9_no_label_of_the_cut_plot_overlaps_another_or_leaves_the_figure(
    pool: list[ChunkResult], settings: CutSettings
) -> None:
    from askkit.widgets._cut_model import cut_figure

    fig = cut_figure(cut_model(pool, settings))
    texts = _texts(fig)
    figure = fig.bbox
    for text, box in texts:  # never clipped: "low (rank 77)" once showed as "low ra"
        assert box.x0 >= figure.x0 - 0.5, text
        assert box.x1 <= figure.x1 + 0.5, text
        assert box.y0 >= figure.y0 - 0.5, text
        assert box.y1 <= figure.y1 + 0.5, text
    for i, (a, box_a) in enumerate(texts):  # never on one another
        for b, box_b in texts[i + 1 :]:
            assert not box_a.overlaps(box_b), (a, b)
    legend = fig.legends[0].get_window_extent()
    assert not legend.overlaps(fig.axes[0].get_window_extent())  # nothing written on the data


def test_issue40_9_the_legend_explains_the_gap_closing_note_and_what_the_cut_does_with_it() -> None:
    from askkit.widgets._cut_model import cut_figure, plot_legend

    pool = POOLS["a gap"]  # largest-drop's gap closes at rank 6
    for settings, fate in [
        (CutSettings(strategy="fixed", top_k=2), "fixed cuts it"),
        (CutSettings(strategy="fixed", top_k=7), "fixed keeps it"),
        (CutSettings(strategy="largest-drop"), "(largest-drop keeps it)"),
    ]:
        model = cut_model(pool, settings)
        words = dict(plot_legend(model))
        assert words["gap"].startswith("gap-closing note, rank 6: the first below largest-drop's")
        assert words["gap"].endswith(fate)
        shown = [t.get_text() for t in cut_figure(model).legends[0].get_texts()]
        assert shown == [w for _, w in plot_legend(model)]  # every mark is named
    words = dict(plot_legend(cut_model(_drop_pool())))
    assert words["endpoints"] == "score-range's high and low: the scores at ranks 4 and 77"
    assert words["score-range"] == "score-range cutoff=0.4: keeps 8"


def test_issue40_9_the_strategy_table_says_chunks_from_notes_and_what_search_lists() -> None:
    # 20 chunks of 9 notes: fixed top_k=20 keeps them all and search reads on for 20 notes
    paths = [f"/n{i % 9}.md" for i in range(20)] + [f"/m{i}.md" for i in range(30)]
    model = cut_model(
        pool_of([1 - i / 100 for i in range(50)], paths), CutSettings(strategy="fixed")
    )
    row = strategy_table(model).loc["fixed"]
    assert row["answer's context"] == "20 chunks from 9 notes"
    assert row["search lists"] == "20 notes"
    assert model.summary.startswith("fixed keeps 20 of 50 chunks from 9 notes: top_k = 20 chunks")
    assert "search lists 20 notes (up to top_k notes, read on down the whole pool)" in model.summary
