"""Hardening of askkit._html and the views built on it: extreme scores and times."""

from __future__ import annotations

import html as stdlib_html
import math
import re

import numpy as np
import pandas as pd
from hypothesis import example, given, settings
from hypothesis import strategies as st

from askkit import AskSource, SourceList, Turn, VaultPath
from askkit import _html as h
from askkit.frame import sources_frame
from askkit.retrieve import SearchResult
from askkit.widgets import SourceReader, SourcesView
from askkit.widgets._table_model import as_sources_frame, row_cells, table_html
from tests import html_audit

EVIL = '<script>alert("x")</script> & <img src=x onerror=y>'
MAX = 1.7976931348623157e308
SUBNORMAL = 5e-324

#: Each extreme score, the label a reader expects, and its bar against a top of 1.0.
EXTREMES = [
    (1e308, "1e+308", 60),
    (-1e308, "-1e+308", 60),
    (MAX, "1.798e+308", 60),
    (-MAX, "-1.798e+308", 60),
    (math.inf, "inf", 60),
    (-math.inf, "-inf", 60),
    (math.nan, "NaN", None),
    (-0.0, "-0.0000", 0),
    (SUBNORMAL, "0.0000", 0),
    (2.2250738585072014e-308, "0.0000", 0),
    (1e15, "1e+15", 60),
]


def source(score: float, n: int = 1, text: str = "body") -> AskSource:
    return AskSource(VaultPath(f"n{n}.md"), f"H{n}", None, score, text, n, hash=f"h{n}")


def text_of(markup: str) -> str:
    """The characters a browser shows (tags dropped, entities decoded)."""
    return stdlib_html.unescape(re.sub(r"<[^>]+>", "", markup))


def widths(markup: str) -> list[int]:
    return [int(px) for px in re.findall(r'class="askkit-bar" style="[^"]*;width:(\d+)px"', markup)]


def surfaces(sources: list[AskSource], query: str, query_time_ms: float) -> dict[str, str]:
    """Every HTML surface a score or a query time reaches, rendered."""
    turn = Turn(query, "see [1]" if sources else "", SourceList(sources))
    chunks = tuple(s.to_chunk() for s in sources)
    frame = sources_frame(turn)
    view_frame = as_sources_frame(frame)
    positions = np.arange(len(view_frame), dtype=np.int64)
    out = {
        "SourceList._repr_html_": SourceList(sources)._repr_html_(),
        "Turn._repr_html_": turn._repr_html_(),
        "SearchResult._repr_html_": SearchResult(query, chunks, query_time_ms)._repr_html_(),
        "search_status": h.search_status(query, len(sources), query_time_ms / 1000),
        "table_html": table_html(view_frame, positions),
        "row_cells": "".join(
            c.cells.score + c.cells.heading for c in row_cells(view_frame, positions)
        ),
        "data_table": h.data_table(pd.DataFrame({"score": [s.score for s in sources]})),
    }
    for s in sources:
        out[f"AskSource._repr_html_ [{s.ordinal}]"] = s._repr_html_()
        out[f"source_cells [{s.ordinal}]"] = h.source_cells(s).score  # default top 1.0
    for top in (SUBNORMAL, 0.0, -1.0, math.nan, math.inf, MAX):  # no scale breaks a table
        out[f"sources_table top={top}"] = h.sources_table(sources, top=top)
    return out


def test_item_10_extreme_scores_never_overflow() -> None:
    """Hardening item 10: a score of 1e308 (or -1e308, inf, nan, a subnormal) renders in
    every surface: each bar within 0..60 px, each label as a reader expects it."""
    for score, label, width in EXTREMES:
        cells = h.source_cells(source(score))  # 1e308 over the default top raised OverflowError
        assert h.number_label(score) == label
        assert label in text_of(cells.score)
        assert widths(cells.score) == ([] if width is None else [width])
        assert f"<code>{label}</code>" in h.source_meta(source(score))
        full = 0 if width is None else width
        assert h.bar_width(score) == h.bar_width(score, math.nan) == h.bar_width(score, 0.0) == full
        tiny = h.bar_width(score, SUBNORMAL)  # |score| / 5e-324 overflows to inf: a full bar
        assert tiny == (0 if width is None or score == 0 else 60)
        for top in (SUBNORMAL, 0.0, math.nan, math.inf):  # a bad scale never raises
            assert all(0 <= px <= 60 for px in widths(h.source_cells(source(score), top=top).score))

    sources = [source(score, n) for n, (score, _, _) in enumerate(EXTREMES, start=1)]
    sources.append(source(SUBNORMAL, 99))  # a tiny top and a huge score in one table
    for name, markup in surfaces(sources, "q", 12.0).items():
        assert all(0 <= px <= 60 for px in widths(markup)), name
        assert "0" * 40 not in markup, f"{name} prints a float digit by digit"
        assert html_audit.audit(markup, stylesheet=h.CSS) == [], name
    listed = text_of(SourceList(sources)._repr_html_())
    assert all(label in listed for _, label, _ in EXTREMES)

    view = SourcesView(Turn("q", "[1]", SourceList(sources)), page_size=len(sources))
    try:
        shown = view.html()
        assert widths(shown)[:4] == [33, 33, 60, 60]  # scaled to the largest finite |score|
        assert [row.cells["score"].value for row in view._rows[:4]] == [
            h.source_cells(s, top=MAX).score for s in sources[:4]
        ]
        assert "1e+308" in text_of(shown)
        view.sort("score")  # highest first: inf first, NaN last
        assert text_of(view._rows[0].cells["score"].value) == "inf"
        assert text_of(view._rows[len(sources) - 1].cells["score"].value) == "NaN"
    finally:
        view.close()
    reader = SourceReader()
    try:
        reader.show(sources[0])
        assert "1e+308" in text_of(reader.meta_html.value)
    finally:
        reader.close()
    assert h.search_status("q", 1, 1e308) == "1 source for <b>q</b> in inf ms"
    assert h.search_status("q", 1, 1e13) == "1 source for <b>q</b> in 1e+16 ms"


scores = st.one_of(
    st.floats(),  # NaN, ±inf, subnormals and ±0.0 included
    st.sampled_from([1e308, -1e308, MAX, -MAX, math.inf, -math.inf, math.nan, -0.0, SUBNORMAL]),
)


@settings(max_examples=60)
@given(
    picked=st.lists(scores, min_size=1, max_size=4),
    query_time_ms=st.floats(),
    heading=st.sampled_from(["", "plain", EVIL]),
)
@example(picked=[1e308, SUBNORMAL], query_time_ms=math.inf, heading=EVIL)
@example(picked=[math.nan, -math.inf], query_time_ms=math.nan, heading=EVIL)
@example(picked=[-0.0], query_time_ms=-MAX, heading=EVIL)
def test_item_10_any_score_and_query_time_render_escaped(
    picked: list[float], query_time_ms: float, heading: str
) -> None:
    """Hardening item 10: any float score and any query time render in every HTML
    surface, escaped, each bar within 0..60 px and each score's label shown."""
    sources = [
        AskSource(VaultPath(f"{heading}{n}.md"), heading, None, score, heading, n)
        for n, score in enumerate(picked, start=1)
    ]
    for name, markup in surfaces(sources, heading, query_time_ms).items():
        assert "<script" not in markup, name
        assert "<img" not in markup, name
        assert html_audit.audit(markup, stylesheet=h.CSS) == [], name
        assert all(0 <= px <= 60 for px in widths(markup)), name
    shown = text_of(SourceList(sources)._repr_html_())
    assert all(h.number_label(score) in shown for score in picked)
    assert heading in shown  # escaped, not dropped
    seconds = query_time_ms / 1000
    status = text_of(h.search_status(heading, len(sources), seconds))
    assert status.endswith(f" in {h.number_label(seconds * 1000, 0)} ms")
    assert len(status) < len(heading) + 60  # never a float printed digit by digit
    view = SourcesView(sources)
    try:
        assert all(0 <= px <= 60 for px in widths(view.html()))
        assert html_audit.audit(view.html()) == []
    finally:
        view.close()
