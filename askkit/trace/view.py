"""A trace as a chain: one row per section of interest, its stages left to right.

:func:`chain_rows` is the pure model (each section's mark at each stage,
where it stopped and why), shared by :func:`trace_html` and the
:class:`askkit.widgets.ChainView`; :func:`trace_html` renders it with the
one HTML renderer (:mod:`askkit._html`), every value escaped.

Examples
--------
>>> from askkit.ranking import pool_of
>>> from askkit.trace import trace_pool
>>> frame = trace_pool(pool_of([0.9, 0.8, 0.2, 0.1]), ["/n0.md", "/n2.md"])
>>> [(row.section, row.stopped, row.cells[3]) for row in chain_rows(frame)]
[('/n0.md', 'context', '#1'), ('/n2.md', 'cut', '#3 cut')]
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from askkit import _html
from askkit.trace.stages import FUNNEL_STAGES, STAGES

__all__ = ["CHAIN_STAGES", "ChainRow", "chain_rows", "chain_table", "trace_html"]

#: The stages a chain shows, left to right (the informational ``dedup`` folded into ``pool``).
CHAIN_STAGES: tuple[str, ...] = tuple(s for s in STAGES if s not in ("judged", "dedup"))


@dataclass(frozen=True, slots=True)
class ChainRow:
    """One section across the stages: a short mark, a tone and a sentence per stage."""

    query_id: str
    section: str
    path: str
    heading: str | None
    stopped: str
    passed: bool
    cells: tuple[str, ...]
    tones: tuple[str, ...]
    whys: tuple[str, ...]

    @property
    def why(self) -> str:
        """The sentence of the stage it stopped at."""
        return self.whys[CHAIN_STAGES.index(self.stopped)] if self.stopped in CHAIN_STAGES else ""


def _present(value: object) -> bool:
    return value is not None and value is not pd.NA and value == value  # noqa: PLR0124 - NaN


_LOST = {
    "sectioned": "gone",
    "pool": "out",
    "rerank": "pushed out",
    "search": "not listed",
    "context": "missing",
    "cited": "not cited",
}


def _mark(stage: str, passed: bool, rank: object, ordinal: object) -> str:
    number = ""
    if stage in ("context", "cited") and _present(ordinal):
        number = f"[{ordinal}]"
    elif stage in ("pool", "rerank", "cut", "search") and _present(rank):
        number = f"#{rank}"
    if passed:
        return number or "yes"
    word = _LOST.get(stage, stage)
    return f"{number} {word}".strip() if stage != "sectioned" else word


def chain_rows(frame: pd.DataFrame) -> list[ChainRow]:
    """The chain model of a trace: one :class:`ChainRow` per (query, section), in order."""
    rows: list[ChainRow] = []
    for (query_id, section), group in frame.groupby(["query_id", "section"], sort=False):
        by_stage = {str(r.stage): r for r in group.itertuples(index=False)}
        stop = group[group["stopped"]].iloc[0]
        cells, tones, whys = [], [], []
        for stage in CHAIN_STAGES:
            row = by_stage.get(stage)
            if row is None:
                cells.append("·")
                tones.append("none")
                whys.append("not reached")
                continue
            cells.append(_mark(stage, bool(row.passed), row.rank, row.ordinal))
            if stage == str(stop["stage"]):
                tones.append("stop" if bool(row.passed) else "lost")
            else:
                informs = stage not in FUNNEL_STAGES  # a failed search row removes nothing
                tones.append("pass" if bool(row.passed) else "none" if informs else "lost")
            whys.append(str(row.why))
        first = group.iloc[0]
        rows.append(
            ChainRow(
                query_id=str(query_id),
                section=str(section),
                path=str(first["path"]),
                heading=None if pd.isna(first["heading"]) else str(first["heading"]),
                stopped=str(stop["stage"]),
                passed=bool(stop["passed"]),
                cells=tuple(cells),
                tones=tuple(tones),
                whys=tuple(whys),
            )
        )
    return rows


def trace_html(frame: pd.DataFrame, *, question: str = "") -> str:
    """A trace as an HTML chain (a notebook fragment): sections as rows, stages as columns.

    >>> from askkit.ranking import pool_of
    >>> from askkit.trace import trace_pool
    >>> "<script>" in trace_html(trace_pool(pool_of([0.9]), ["<script>.md"]))
    False
    """
    return _html.fragment(chain_table(frame, question=question))


def chain_table(frame: pd.DataFrame, *, question: str = "") -> str:
    """The chain's table alone (no stylesheet: for a widget), every value escaped.

    >>> from askkit.ranking import pool_of
    >>> from askkit.trace import trace_pool
    >>> chain_table(trace_pool(pool_of([0.9]), ["/n0.md"])).startswith("<table")
    True
    """
    rows = [
        (
            row.section if not row.query_id else f"{row.query_id} · {row.section}",
            list(zip(row.cells, row.tones, row.whys, strict=True)),
            row.why,
        )
        for row in chain_rows(frame)
    ]
    return _html.stage_table(CHAIN_STAGES, rows, caption=question)
