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

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from askkit import _html
from askkit.ranking import CutSettings, cut_len
from askkit.trace.run import unjudged_per_query
from askkit.trace.stages import (
    FRONTMATTER_WHY,
    FUNNEL_STAGES,
    STAGES,
    UnjudgedAbove,
    frontmatter_count,
    is_frontmatter,
)
from askkit.wire import ChunkResult

__all__ = [
    "CHAIN_STAGES",
    "ChainRow",
    "chain_rows",
    "chain_table",
    "frontmatter_note",
    "trace_html",
    "unjudged_lines",
    "what_if_html",
]

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
    """A trace as an HTML chain (a notebook fragment): sections as rows, stages as columns,
    and under it, per question traced with its judgments, the unjudged sections the cut
    kept (:func:`unjudged_lines`). Every value escaped.

    >>> from askkit.ranking import pool_of
    >>> from askkit.trace import trace_pool
    >>> "<script>" in trace_html(trace_pool(pool_of([0.9]), ["<script>.md"]))
    False
    """
    lines = "".join(_html.message(line, tone="muted") for line in unjudged_lines(frame))
    return _html.fragment(chain_table(frame, question=question) + lines)


def unjudged_lines(frame: pd.DataFrame) -> list[str]:
    """Per question traced with its judgments, the sentence of the unjudged sections its
    cut kept (:meth:`~askkit.trace.UnjudgedAbove.sentence`), after its id when it has one.

    >>> from askkit.ranking import CutSettings, pool_of
    >>> from askkit.trace import Interest, trace_pool
    >>> frame = trace_pool(pool_of([0.9, 0.8]), ["/n1.md"], CutSettings(strategy="fixed",
    ...                    top_k=2), query_id="q1", grades={Interest("/n1.md"): 1})
    >>> print(unjudged_lines(frame)[0])
    q1: the cut kept 1 unjudged section, above the lowest relevant section it kept (rank 2): '/n0.md#s' (judge it next: it may be relevant)
    """  # noqa: E501 - a doctest's output is one line
    per_query = unjudged_per_query(frame)
    lines = []
    for query_id, above, lowest, kept in zip(
        per_query.index.astype(str),
        per_query["unjudged_above"].astype(int),
        per_query["lowest_relevant"],
        per_query["unjudged_kept"],
        strict=True,
    ):
        found = UnjudgedAbove(tuple(kept), int(above), None if pd.isna(lowest) else int(lowest))
        said = found.sentence(beside_lost=False)
        lines.append(f"{query_id}: {said}" if query_id else said)
    return lines


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


_RANKS_SHOWN = 8


def _ranks(ranks: Sequence[int]) -> str:
    """``rank 2``, ``ranks 2, 13 and 15``, ``ranks 2, 3, ... (12 in all)``."""
    if len(ranks) == 1:
        return f"rank {ranks[0]}"
    if len(ranks) > _RANKS_SHOWN:
        shown = ", ".join(str(r) for r in ranks[:_RANKS_SHOWN])
        return f"ranks {shown}, … ({len(ranks)} in all)"
    return f"ranks {', '.join(str(r) for r in ranks[:-1])} and {ranks[-1]}"


def frontmatter_note(pool: Sequence[ChunkResult], settings: CutSettings | None = None) -> str:
    """What notes' frontmatter takes of the context the cut keeps from ``pool`` (ranked,
    kimun's order), and why; ``""`` when the cut keeps no frontmatter chunk.

    kimun indexes a note's properties block as a section (titled ``FrontMatter``), so
    a question can match its aliases, tags or ``cssclasses`` and fill the context with
    them. askkit keeps kimun's ranking as it is, and says so when it happens.

    >>> from askkit.ranking import pool_of
    >>> pool = pool_of([0.9, 0.8, 0.7]) + pool_of([0.6], ["/m.md"], section="FrontMatter")
    >>> print(frontmatter_note(pool, CutSettings(strategy="fixed", top_k=4)))
    1 of the 4 chunks the cut keeps is a note's frontmatter (rank 4; 1 of the pool's 4 chunks): kimun indexes a note's properties block as a section titled 'FrontMatter', and its aliases, tags and cssclasses match a question as text does.
    >>> frontmatter_note(pool, CutSettings(strategy="fixed", top_k=3))
    ''
    """  # noqa: E501 - a doctest's output is one line
    chunks = list(pool)
    kept = cut_len(chunks, CutSettings() if settings is None else settings)
    ranks = [i + 1 for i, c in enumerate(chunks[:kept]) if is_frontmatter(c)]
    if not ranks:
        return ""
    in_pool = sum(is_frontmatter(c) for c in chunks)
    said = frontmatter_count(len(ranks), kept, "the cut keeps")
    return (
        f"{said} ({_ranks(ranks)}; {in_pool} of the pool's {len(chunks)} chunks): "
        f"{FRONTMATTER_WHY}."
    )


#: The what-if table's columns as :func:`what_if_html` shows them, in words.
_WHAT_IF_SHOWN = {
    "query_id": "query",
    "section": "section",
    "change": "change",
    "suggested": "suggested",
    "keeps": "keeps it",
    "mean_chunks": "mean chunks",
    "mean_notes": "mean notes",
    "gained_elsewhere": "gained elsewhere",
    "lost_elsewhere": "lost elsewhere",
}
_WHAT_IF_NOTE = (
    "suggested: the smallest change of that setting that keeps the section (keeps it: the "
    "cut re-run with it keeps the section). mean chunks, mean notes: the answer's context it "
    "gives, averaged over every question. gained, lost elsewhere: the relevant sections of "
    "the other questions it adds to the context, or drops from it. —: nothing to cost, as "
    "no change of that kind keeps the section."
)


def _counts(values: Any) -> list[Any]:
    """Whole numbers as ints and missing ones as NaN (shown as the table's "—")."""
    return [math.nan if pd.isna(v) else int(v) for v in values]


def what_if_html(changes: pd.DataFrame) -> str:
    """The what-if table (:func:`~askkit.trace.what_if`) as a notebook fragment: its
    columns in words, ``keeps`` as yes or no, a setting's old and new value kept on one
    line (``cutoff 0.4 → 0.322``), a change nothing keeps shown ``—`` rather than NaN,
    and a line under the table saying what each column is. Every value escaped.

    >>> from askkit.trace import what_if
    >>> scores = [1.0 - i / 40 for i in range(21)] + [0.1]  # the last below the range's low
    >>> pools = pd.DataFrame({"query_id": "q1", "path": [f"n{i}" for i in range(22)],
    ...                       "score": scores, "title": "T"})
    >>> qrels = pd.DataFrame({"query_id": ["q1"], "path": ["n21"], "heading": ["T"], "grade": [1]})
    >>> changes = what_if(pools, qrels)
    >>> bool(changes["mean_chunks"].isna().any())  # no cutoff keeps it: nothing to cost
    True
    >>> out = what_if_html(changes)
    >>> "NaN" in out, "no cutoff keeps it" in out, "—: nothing to cost" in out
    (False, True, True)
    """
    shown = changes[[c for c in _WHAT_IF_SHOWN if c in changes.columns]].copy()
    if "suggested" in shown.columns:
        shown["suggested"] = [
            str(v).replace(" -> ", "\u00a0→\u00a0") for v in shown["suggested"].tolist()
        ]
    if "keeps" in shown.columns:
        shown["keeps"] = ["yes" if bool(v) else "no" for v in shown["keeps"].tolist()]
    for column in ("gained_elsewhere", "lost_elsewhere"):
        if column in shown.columns:
            shown[column] = pd.Series(
                _counts(shown[column].tolist()), index=shown.index, dtype=object
            )
    shown = shown.rename(columns=_WHAT_IF_SHOWN)
    table = _html.data_table(shown, digits=1, index=False, na="—")
    return _html.fragment(
        f'<div style="overflow-x:auto">{table}</div>' + _html.message(_WHAT_IF_NOTE, tone="muted")
    )
