"""askkit.plots draws on the given Axes, returns it, and never shows."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.axes import Axes
from matplotlib.collections import PathCollection, PolyCollection

from askkit import plots
from askkit.compare import compare
from askkit.metrics import bounds, prepare

QRELS = pd.DataFrame(
    {"query_id": ["q1", "q1", "q2"], "path": ["a.md", "b.md", "c.md"], "grade": [1, 2, 0]}
)
RUN_A = pd.DataFrame(
    {
        "turn_id": ["q1", "q1", "q1", "q2", "q2"],
        "path": ["a.md", "x.md", "b.md", "c.md", "y.md"],
        "score": [3.0, 2.0, 1.0, 2.5, 0.5],
        "rank": [1, 2, 3, 1, 2],
    }
)
RUN_B = RUN_A.assign(score=[1.0, 2.0, 3.0, 0.5, 2.5])


@pytest.fixture(autouse=True)
def _close() -> None:
    yield
    plt.close("all")


def test_score_distributions_one_histogram_per_run() -> None:
    _, ax = plt.subplots()
    out = plots.score_distributions({"a": RUN_A, "b": RUN_B}, bins=5, ax=ax)
    assert out is ax
    assert len(ax.patches) == 2  # one step outline per run
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["a", "b"]
    assert ax.get_xlabel() == "score"


def test_relevance_histogram_three_groups() -> None:
    ax = plots.relevance_histogram(RUN_A, QRELS, bins=4)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["relevant (2)", "non-relevant (1)", "unjudged (2)"]
    assert len(ax.patches) == 12  # 3 groups x 4 bins


def test_score_vs_rank_with_and_without_qrels() -> None:
    ax = plots.score_vs_rank(RUN_A, QRELS)
    scatters = [c for c in ax.collections if isinstance(c, PathCollection)]
    assert len(scatters) == 2
    assert len(scatters[1].get_offsets()) == 2  # the relevant documents
    assert len(ax.lines) == 1  # median per rank
    ax2 = plots.score_vs_rank(RUN_A)
    assert len(ax2.collections[0].get_offsets()) == len(RUN_A)


def test_metric_curve_one_line_per_run() -> None:
    ax = plots.metric_curve({"a": RUN_A, "b": RUN_B}, QRELS, "recall", ks=[1, 2, 3])
    assert len(ax.lines) == 2
    xs, ys = ax.lines[0].get_data()
    assert list(xs) == [1, 2, 3]
    assert ys[-1] >= ys[0]  # recall@k never falls with k
    assert ax.get_ylabel() == "mean recall@k"


def test_delta_bars_one_bar_per_query() -> None:
    cmp = compare({"a": RUN_A, "b": RUN_B}, QRELS, ["mrr"], n_resamples=10)
    ax = plots.delta_bars(cmp)
    assert len(ax.patches) == 2
    heights = sorted(p.get_height() for p in ax.patches)
    expected = sorted(cmp.deltas[("b", "mrr")].tolist())
    assert heights == pytest.approx(expected)
    assert "b − a" in ax.get_title()


def test_cut_sweep_one_curve_per_strategy_and_the_recommended_star() -> None:
    from askkit.ranking import CutSettings, sweep_cuts

    pools = pd.DataFrame(
        {
            "query_id": ["q1"] * 5,
            "path": ["a.md", "a.md", "a.md", "b.md", "c.md"],
            "score": [0.99, 0.98, 0.97, 0.80, 0.70],
        }
    )
    qrels = pd.DataFrame({"query_id": ["q1", "q1"], "path": ["a.md", "b.md"], "grade": [2, 1]})
    sweep = sweep_cuts(pools, qrels)
    best = CutSettings(strategy="fixed", top_k=4)
    _, ax = plt.subplots()
    out = plots.cut_sweep(sweep, recommended=best, min_recall=0.9, ax=ax)
    assert out is ax
    labels = [line.get_label() for line in ax.get_lines()]
    assert labels[:3] == ["fixed", "score-range", "largest-drop"]
    assert labels[3] == "recommended: fixed top_k=4"
    star = ax.get_lines()[3]
    assert np.asarray(star.get_xydata()).tolist() == [[4.0, 1.0]]
    assert ax.get_xlabel() == "mean context size (chunks)"


def test_cut_sweep_refuses_other_tables() -> None:
    _, ax = plt.subplots()
    with pytest.raises(ValueError, match="not a sweep_cuts table"):
        plots.cut_sweep(pd.DataFrame({"recall": [1.0]}), ax=ax)


def texts(ax: Axes) -> str:
    return " ".join(t.get_text() for t in ax.texts)


def test_relevance_histogram_without_judged_documents_says_so() -> None:
    ax = plots.relevance_histogram(RUN_A.assign(turn_id="other"), QRELS.assign(path="z.md"))
    assert len(ax.patches) == 0
    assert "No retrieved document is judged" in texts(ax)


def test_metric_curve_without_judged_queries_says_why() -> None:
    with pytest.warns(UserWarning, match="nothing can be scored"):
        ax = plots.metric_curve(RUN_A.assign(turn_id="Q1"), QRELS, "ndcg", ks=[1, 2])
    assert len(ax.lines) == 0
    assert "No run query matches a judged query" in texts(ax)
    assert "case" in texts(ax)


@pytest.mark.parametrize("scores", [[], [float("nan")]])
def test_score_distributions_without_scores_says_so(scores: list[float]) -> None:
    run = pd.DataFrame({"turn_id": ["q1"] * len(scores), "path": ["a.md"] * len(scores)})
    ax = plots.score_distributions(run.assign(score=pd.Series(scores, dtype="float64")))
    assert len(ax.patches) == 0
    assert "No source has a score" in texts(ax)


def test_extreme_scores_plot_without_overflow() -> None:
    """Hardening item 10: scores of +-1e308 and inf draw, clipped to +-1e300, never raise."""
    extreme = RUN_A.assign(score=[1e308, -1e308, np.inf, 1.7976931348623157e308, np.nan])
    ax = plots.score_distributions({"x": extreme, "a": RUN_A}, bins=5)
    assert len(ax.patches) == 2
    ax = plots.relevance_histogram(extreme, QRELS, bins=4)
    assert len(ax.patches) == 12
    for qrels in (None, QRELS):
        ax = plots.score_vs_rank(extreme, qrels)
        ax.figure.canvas.draw()  # ticks are computed here
        offsets = np.concatenate(
            [c.get_offsets()[:, 1] for c in ax.collections if isinstance(c, PathCollection)]
        )
        assert np.nanmax(np.abs(offsets[np.isfinite(offsets)])) <= 1e300


def test_explorer_histogram_draws_extreme_scores() -> None:
    """Hardening item 10: the Explorer's score histogram takes +-1e308 and inf."""
    from askkit.widgets._histogram import score_histogram_png

    for scores in (
        [1e308, -1e308, 1e308, float("inf"), float("nan")],
        [1e308],  # one value: its range is widened around it
        [1.0, 1.0000000000000002],  # one float step apart
        [5e-324, 1e-323],
    ):
        assert score_histogram_png(scores).startswith(b"\x89PNG"), scores
    for scores in ([1e308], [1.0, 1.0000000000000002], [5e-324, 1e-323], []):
        edges = plots.histogram_edges([scores], 4)
        assert len(edges) == 5
        assert (np.diff(edges) > 0).all(), scores


def test_a_prepared_run_draws_as_the_run_and_its_qrels() -> None:
    prepared = prepare(RUN_A, QRELS)
    for draw in (plots.relevance_histogram, plots.score_vs_rank):
        _, from_run = plt.subplots()
        _, from_prepared = plt.subplots()
        draw(RUN_A, QRELS, ax=from_run)
        draw(prepared, ax=from_prepared)
        assert texts(from_prepared) == texts(from_run)
        assert len(from_prepared.get_children()) == len(from_run.get_children())
    _, ax = plt.subplots()
    plots.metric_curve({"a": prepared}, ax=ax)
    assert [line.get_label() for line in ax.get_lines()] == ["a"]


def test_figure_png_draws_off_screen() -> None:
    png = plots.figure_png(lambda ax: ax.plot([1, 2, 3]), size=(3, 2), layout="tight")
    assert png.startswith(b"\x89PNG")
    assert plt.get_fignums() == []  # no pyplot figure made or left open


def test_funnel_draws_a_bar_per_stage_and_names_the_queries_losing_most() -> None:
    from askkit.ranking import pool_of
    from askkit.trace import funnel, trace_pool

    pool = pool_of([0.9, 0.8, 0.2, 0.1])
    frames = [
        trace_pool(pool, ["/n0.md", "/n2.md", "/x.md"], query_id="q1"),
        trace_pool(pool, ["/n0.md"], query_id="q2"),
    ]
    table = funnel(pd.concat(frames, ignore_index=True))
    ax = plots.funnel(table)
    heights = [p.get_height() for p in ax.patches]
    assert heights == [4, 4, 3, 3, 2, 2]
    assert ax.get_xticklabels()[0].get_text() == "judged"
    (box,) = [t for t in ax.texts if "q1: 2 lost" in t.get_text()]
    ax.figure.canvas.draw()
    assert box.get_window_extent().x0 > ax.get_window_extent().x1  # hides no bar
    assert not any("q2" in t.get_text() for t in ax.texts)
    with pytest.raises(ValueError, match="not a funnel table"):
        plots.funnel(table.drop(index="total"))


def test_one_run_is_named_in_the_title() -> None:
    assert plots.score_distributions({"bm25": RUN_A}).get_title() == "Score distribution: bm25"
    several = plots.score_distributions({"a": RUN_A, "b": RUN_B})
    assert several.get_title() == "Score distribution per run"
    hist = plots.relevance_histogram(RUN_A, QRELS, bins=4, name="dense")
    assert hist.get_title() == "Scores by judgment: dense"
    assert plots.score_vs_rank(RUN_A, QRELS, name="dense").get_title() == "Score vs rank: dense"
    assert plots.score_vs_rank(RUN_A, QRELS, name="$x$").get_title() == r"Score vs rank: \$x\$"
    assert plots.score_vs_rank(RUN_A, QRELS).get_title() == "Score vs rank"


def test_the_metric_curve_legend_covers_no_point() -> None:
    runs = {f"run {i}": RUN_A.assign(score=RUN_A["score"] * (i + 1)) for i in range(5)}
    runs["b"] = RUN_B
    fig, ax = plt.subplots(figsize=(6, 4))
    plots.metric_curve(runs, QRELS, "ndcg", ks=[1, 2, 3], ax=ax)
    fig.tight_layout()
    fig.canvas.draw()
    legend = ax.get_legend().get_window_extent()
    points = np.vstack([ax.transData.transform(line.get_xydata()) for line in ax.lines])
    inside = (
        (points[:, 0] >= legend.x0)
        & (points[:, 0] <= legend.x1)
        & (points[:, 1] >= legend.y0)
        & (points[:, 1] <= legend.y1)
    )
    assert not inside.any()
    assert legend.x0 > ax.get_window_extent().x1  # beside the axes, not over them


def band_edges(ax: Axes) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each shaded band's lower and upper edge, read back from its polygon: the
    y-values at each x, least and greatest (fill_between draws one polygon a band)."""
    bands = [c for c in ax.collections if isinstance(c, PolyCollection)]
    edges = []
    for band in bands:
        (path,) = band.get_paths()
        xs, ys = path.vertices[:, 0], path.vertices[:, 1]
        ks = np.unique(xs)
        edges.append(
            (np.array([ys[xs == k].min() for k in ks]), np.array([ys[xs == k].max() for k in ks]))
        )
    return edges


def test_issue42_metric_curve_shades_each_runs_bounds_around_its_line() -> None:
    ks = [1, 2, 3]
    names = [f"ndcg@{k}" for k in ks]
    ax = plots.metric_curve({"a": RUN_A, "b": RUN_B}, QRELS, "ndcg", ks=ks, band=True)
    edges = band_edges(ax)
    assert len(edges) == 2  # one band per run
    for (lower, upper), run, line in zip(edges, (RUN_A, RUN_B), ax.lines, strict=True):
        table = bounds(run, QRELS, names).table()
        assert lower == pytest.approx(table["lower"].to_numpy())
        assert upper == pytest.approx(table["upper"].to_numpy())
        assert line.get_ydata() == pytest.approx(table["value"].to_numpy())
        assert bool((upper > table["value"].to_numpy()).any())  # x.md, y.md are unjudged
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "a",
        "a: bounds",
        "b",
        "b: bounds",
    ]
    band = next(c for c in ax.collections if isinstance(c, PolyCollection))
    assert matplotlib.colors.same_color(band.get_facecolor()[0][:3], ax.lines[0].get_color())


def test_issue42_metric_curve_band_fills_at_the_grade_asked_and_only_when_asked() -> None:
    names = ["ndcg@1", "ndcg@2"]
    plain = plots.metric_curve(RUN_A, QRELS, "ndcg", ks=[1, 2])
    assert band_edges(plain) == []
    ax = plots.metric_curve(RUN_A, QRELS, "ndcg", ks=[1, 2], band=True, grade=1)
    ((lower, upper),) = band_edges(ax)
    table = bounds(RUN_A, QRELS, names, grade=1).table()
    assert lower == pytest.approx(table["lower"].to_numpy())
    assert upper == pytest.approx(table["upper"].to_numpy())
    assert upper != pytest.approx(bounds(RUN_A, QRELS, names).table()["upper"].to_numpy())


def test_lorenz_curves_draw_each_retriever_with_its_gini_and_the_equal_line() -> None:
    from askkit.reach import retrievability

    pools = pd.DataFrame(
        {"query_id": ["q1", "q1", "q2", "q2"], "rank": [1, 2, 1, 2],
         "path": ["a.md", "b.md", "a.md", "c.md"]}
    )  # fmt: skip
    vault = ["a.md", "b.md", "c.md", "d.md"]
    results = {"k=1": retrievability(pools, vault, k=1), "k=2": retrievability(pools, vault, k=2)}
    ax = plots.lorenz_curves(results)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == [
        "equal reach",
        "k=1: Gini 0.750, 3 of 4 unreachable",
        "k=2: Gini 0.375, 1 of 4 unreachable",
    ]
    for line in ax.get_lines()[1:]:  # each curve runs from (0, 0) to (1, 1)
        x, y = line.get_xdata(), line.get_ydata()
        assert (x[0], y[0], x[-1], y[-1]) == (0.0, 0.0, 1.0, 1.0)
    plt.close(ax.figure)
    nothing = retrievability(pools.assign(kept=False), vault, kept="kept")
    empty = plots.lorenz_curves(nothing)
    assert "no query reaches any document" in texts(empty)
    plt.close(empty.figure)
