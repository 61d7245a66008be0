"""The static HTML report in chromium: real metrics on the bundled data, and its picture."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from askkit.frame import sources_frame
from askkit.metrics import read_qrels
from askkit.report import build_report
from tests.browser.conftest import SCREENSHOTS
from tests.conftest import DATA

pytestmark = pytest.mark.browser


def _bundled_run() -> Any:
    """The bundled questions through kimun's dense retrieval with all-MiniLM-L6-v2
    (``data/run-dense.jsonl``): turn ids are the qrels' query ids."""
    return sources_frame(DATA / "run-dense.jsonl")


def test_the_report_shows_real_metrics_and_its_picture_is_taken(page: Any, tmp_path: Path) -> None:
    report = build_report(
        _bundled_run(),
        read_qrels(DATA / "qrels.tsv"),
        vault=DATA / "vault",
        title="askkit report: data/run-dense.jsonl (dense, all-MiniLM-L6-v2)",
    )
    target = report.write(tmp_path / "report.html")
    page.goto(target.resolve().as_uri())
    body = page.locator("body")
    text = body.inner_text()
    assert "ndcg@10" in text
    assert "nan" not in text.lower().split()
    tables = page.locator("table")
    assert tables.count() >= 2
    first = tables.first.inner_text()
    assert any(ch.isdigit() for ch in first)
    # the header says the level it scored at; unjudged sources read as unjudged
    assert "scored at note level" in page.locator("h1 + p").inner_text()
    assert page.locator("td i", has_text="unjudged").count() > 0
    page.set_viewport_size({"width": 1100, "height": 1500})
    top = {"x": 0, "y": 0, "width": 1100, "height": 1500}  # the head: summary, metrics, plots
    for folder in (SCREENSHOTS, tmp_path):
        page.screenshot(path=str(folder / "report.png"), clip=top)
    assert (tmp_path / "report.png").stat().st_size > 10_000


def test_two_runs_side_by_side_and_the_tables_sort_and_filter(page: Any, tmp_path: Path) -> None:
    """``askkit report run-dense.jsonl run.jsonl``: dense against BM25, with significance;
    the inline script sorts a table by a clicked header and filters it by typed text."""
    report = build_report(
        DATA / "run-dense.jsonl",  # files: the runs are named after them
        read_qrels(DATA / "qrels.tsv"),
        others=[DATA / "run.jsonl"],
        measures=["ndcg@10", "mrr", "recall@10"],
    )
    target = report.write(tmp_path / "compare.html")
    page.goto(target.resolve().as_uri())
    section = page.locator("h2", has_text="Runs compared")
    assert section.count() == 1
    # the comparison against the baseline (after the means and their bounds)
    summary = page.locator("table.askkit-sortable", has_text="p_random_holm")
    assert summary.count() == 1
    bounded = page.locator("table.askkit-sortable", has_text="0.7205 [0.6356, 0.9807]")
    assert bounded.count() >= 1  # each run's means with their bounds
    filters = page.locator("input.askkit-filter")
    assert filters.count() == page.locator("table.askkit-sortable").count() >= 4

    # sort the per-query table by ndcg@10, lowest first, then highest first
    page.locator("summary", has_text="Per-query measures").click()
    per_query = page.locator("table.askkit-sortable").last
    header = per_query.locator("th", has_text="ndcg@10")

    def column() -> list[float]:
        index = [h.inner_text() for h in per_query.locator("th").all()].index("ndcg@10")
        return [
            float(r.locator("td").nth(index).inner_text())
            for r in per_query.locator("tbody tr").all()
        ]

    header.click()
    up = column()
    assert up == sorted(up)
    header.click()
    down = column()
    assert down == sorted(down, reverse=True)
    assert len(down) == 37
    # filter: only the rows holding the typed text stay visible
    box = filters.last
    box.fill("knee problem")
    visible = [r for r in per_query.locator("tbody tr").all() if r.is_visible()]
    assert len(visible) == 1
    assert "knee problem" in visible[0].inner_text()
    box.fill("")
    assert "the baseline is run-dense" in page.locator("h2 + p").first.inner_text()
    page.set_viewport_size({"width": 1100, "height": 1200})
    top = section.evaluate("h => h.getBoundingClientRect().top + window.scrollY")
    clip = {"x": 0, "y": top - 10, "width": 1100, "height": 1000}  # page coordinates
    for folder in (SCREENSHOTS, tmp_path):
        page.screenshot(path=str(folder / "report-compare.png"), clip=clip, full_page=True)
    assert (tmp_path / "report-compare.png").stat().st_size > 10_000
