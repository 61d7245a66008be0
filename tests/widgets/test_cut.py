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
    assert table["chunks"].to_dict() == explained.attrs["cut_len"]
    for strategy, suffix in zip(STRATEGIES, ["fixed", "score_range", "largest_drop"], strict=True):
        assert table.loc[strategy, "search rows"] == int(explained[f"in_search_{suffix}"].sum())
        kept = explained[explained[f"kept_{suffix}"]]
        assert table.loc[strategy, "notes"] == kept["path"].nunique()
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
    assert (
        repr(view)
        == "<CutView: fixed keeps 2 of 8 chunks (2 notes): top_k = 2; search lists 2 notes>"
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

    from askkit.widgets._cut_model import _draw_cut

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
    labels = {t.get_text(): t.xy for t in ax.texts if hasattr(t, "xy")}
    assert labels["high (rank 4)"] == (4, 4.16)
    assert labels["low (rank 77)"] == (77, 0.88)
