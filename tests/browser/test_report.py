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
    report = build_report(_bundled_run(), read_qrels(DATA / "qrels.tsv"), vault=DATA / "vault")
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
    page.set_viewport_size({"width": 1100, "height": 1500})
    top = {"x": 0, "y": 0, "width": 1100, "height": 1500}  # the head: summary, metrics, plots
    for folder in (SCREENSHOTS, tmp_path):
        page.screenshot(path=str(folder / "report.png"), clip=top)
    assert (tmp_path / "report.png").stat().st_size > 10_000
