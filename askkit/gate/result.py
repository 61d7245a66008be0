"""What the regression gate returns: each measure's verdict, the regressed queries, the sides.

:class:`GateResult` holds the verdict (:attr:`~GateResult.passed`,
:attr:`~GateResult.exit_status`) and everything a reviewer reads: each
measure's :class:`MeasureResult`, the :class:`RegressedQuery` list with the
relevant documents that left the top ``k`` (:class:`LostDocument`), and a
:class:`SideReport` per side. Its formats are :mod:`askkit.gate.formats`'.

Examples
--------
>>> m = MeasureResult("mrr", 0.5, 0.25, -0.25, -0.4, -0.1, 0.01, 0.01, 0, 1, 3, 0.2,
...                   regressed=True, improved=False)
>>> side = SideReport("BASE", 4, 0, 0, 1.0, {})
>>> r = GateResult(side, side, (m,), (), "t-test", 0.05, 0.0, "note", 10, 0, 1, 4)
>>> r.passed, r.exit_status, r.verdict
(False, 1, 'FAIL: mrr dropped significantly (Holm-corrected p < 0.05, drop >= 0)')
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from askkit.errors import SchemaError
from askkit.gate import formats
from askkit.gate.holes import Hole

__all__ = [
    "UNJUDGED_MODES",
    "GateResult",
    "LostDocument",
    "MeasureResult",
    "RegressedQuery",
    "SideReport",
]

#: What the exit status may rest on (``askkit diff --unjudged``): ``ignore`` counts
#: unjudged documents as not relevant (trec_eval's default, askkit's default);
#: ``condensed`` scores the condensed lists (``ndcg'@10``); ``bounds`` fails only on a
#: drop that holds whatever the unjudged documents are.
UNJUDGED_MODES = ("ignore", "condensed", "bounds")


@dataclass(frozen=True, slots=True)
class MeasureResult:
    """One measure's verdict: means, delta, its interval, the test, and the smallest drop seen."""

    measure: str
    base: float
    new: float
    delta: float
    ci_low: float
    ci_high: float
    p: float
    p_holm: float
    wins: int
    ties: int
    losses: int
    mde: float
    """The smallest mean drop the query set detects at ``alpha / measures`` with 80% power."""
    regressed: bool
    improved: bool
    note: str = ""
    """Why ``p`` is not the chosen test's own (one query, or deltas all equal: the exact
    sign-flip p-value instead); ``""`` when it is."""
    best_delta: float = math.nan
    """The mean delta with BASE's unjudged documents all not relevant and NEW's all
    relevant (at the fill grade): the best NEW could do."""
    worst_delta: float = math.nan
    """The mean delta with BASE's unjudged documents all relevant and NEW's all not."""
    holds: bool | None = None
    """Whether the verdict (regressed, improved or neither) is the same at both extremes:
    ``True`` it holds whatever the unjudged documents are; ``None`` not computed."""
    depends_on: int = 0
    """The unjudged documents (query, document, side) the bounds of this measure depend on."""
    regressed_bounds: bool = False
    """A significant drop of at least ``min_delta`` even at :attr:`best_delta`: what the
    exit status rests on with ``unjudged="bounds"``."""


@dataclass(frozen=True, slots=True)
class LostDocument:
    """A relevant document in the baseline's top ``k`` that is not in the new run's."""

    doc: str
    grade: int
    base_rank: int
    new_rank: int | None
    """Its rank in the new run (``None``: not retrieved at all)."""
    stage: str
    """``"top k"`` (only that it left the top k), or ``"pool"``, ``"reranker"``, ``"cut"``."""
    detail: str = ""


@dataclass(frozen=True, slots=True)
class RegressedQuery:
    """A query that scored lower in the new run on at least one measure."""

    query_id: str
    deltas: dict[str, float]
    lost: tuple[LostDocument, ...] = ()


@dataclass(frozen=True, slots=True)
class SideReport:
    """What the output says about one side."""

    name: str
    queries: int
    """Judged queries it answered."""
    lacks: int
    """Judged queries it did not answer."""
    unjudged_queries: int
    """Its queries with no judgments (never scored)."""
    judged_share: float
    """The share of its top-``k`` documents (on the compared queries) that are judged."""
    provenance: dict[str, str]


@dataclass(frozen=True, slots=True)
class GateResult:
    """What :func:`gate` returns: the verdict and everything a reviewer needs to read it."""

    base: SideReport
    new: SideReport
    measures: tuple[MeasureResult, ...]
    regressed_queries: tuple[RegressedQuery, ...]
    test: str
    alpha: float
    min_delta: float
    level: str
    k: int
    seed: int
    resamples: int
    queries: int
    """The queries compared."""
    max_unjudged: float | None = None
    problems: tuple[str, ...] = ()
    """Reasons the gate failed besides a regression (NEW's top k mostly unjudged)."""
    notes: tuple[str, ...] = ()
    """Warnings that do not fail the gate."""
    unjudged: str = "ignore"
    """What the exit status rests on (:data:`UNJUDGED_MODES`)."""
    fill_grade: int = 0
    """The grade an unjudged document gets when filled as relevant, for the bounds."""
    holes: Sequence[Hole] = ()
    """Every unjudged document a measure's bounds depend on, one per side that ranked
    it (:func:`~askkit.gate.holes.merge_holes` makes one row of each): what to judge next."""

    @property
    def regressions(self) -> tuple[MeasureResult, ...]:
        """The measures that dropped significantly by at least ``min_delta`` (with
        ``unjudged="bounds"``: even at NEW's best, :attr:`MeasureResult.regressed_bounds`)."""
        if self.unjudged == "bounds":
            return tuple(m for m in self.measures if m.regressed_bounds)
        return tuple(m for m in self.measures if m.regressed)

    @property
    def improvements(self) -> tuple[MeasureResult, ...]:
        """The measures that rose significantly by at least ``min_delta`` (never a failure)."""
        return tuple(m for m in self.measures if m.improved)

    @property
    def passed(self) -> bool:
        """No significant regression and no failed check."""
        return not self.regressions and not self.problems

    @property
    def exit_status(self) -> int:
        """``askkit diff``'s status: 0 passed, 1 failed (2 is a bad input, raised before)."""
        return 0 if self.passed else 1

    @property
    def verdict(self) -> str:
        """One sentence: what the gate decided."""
        if self.regressions:
            names = ", ".join(m.measure for m in self.regressions)
            return (
                f"FAIL: {names} dropped significantly (Holm-corrected p < {self.alpha:g}, "
                f"drop >= {self.min_delta:g})"
            )
        if self.problems:
            return "FAIL: " + "; ".join(self.problems)
        return (
            f"PASS: no measure dropped significantly by at least {self.min_delta:g} "
            f"(Holm-corrected p < {self.alpha:g}, {self.queries} queries)"
        )

    # ------------------------------------------------------------------ formats

    def to_dict(self) -> dict[str, Any]:
        """Plain data (what :meth:`to_json` writes)."""
        return formats.to_dict(self)

    def to_json(self, indent: int | None = 2) -> str:
        """The result as JSON; :meth:`from_json` reads it back."""
        return formats.to_json(self, indent)

    @classmethod
    def from_json(cls, text: str) -> GateResult:
        """Read back what :meth:`to_json` wrote.

        Raises :class:`SchemaError` naming the field when the text is not a gate result.
        """
        data = formats.read_json(text)
        try:
            return cls(
                base=SideReport(**formats.float_fields(SideReport, data["base"])),
                new=SideReport(**formats.float_fields(SideReport, data["new"])),
                measures=tuple(
                    MeasureResult(**formats.float_fields(MeasureResult, m))
                    for m in data["measures"]
                ),
                regressed_queries=tuple(
                    RegressedQuery(
                        query_id=q["query_id"],
                        deltas=dict(q["deltas"]),
                        lost=tuple(LostDocument(**d) for d in q["lost"]),
                    )
                    for q in data["regressed_queries"]
                ),
                test=data["test"],
                alpha=data["alpha"],
                min_delta=data["min_delta"],
                level=data["level"],
                k=data["k"],
                seed=data["seed"],
                resamples=data["resamples"],
                queries=data["queries"],
                max_unjudged=data["max_unjudged"],
                problems=tuple(data["problems"]),
                notes=tuple(data["notes"]),
                unjudged=data.get("unjudged", "ignore"),
                fill_grade=data.get("fill_grade", 0),
                holes=tuple(Hole(**h) for h in data.get("holes", ())),
            )
        except (KeyError, TypeError) as exc:
            raise SchemaError(
                "an askkit diff result with a missing or unknown field",
                field="json",
                value=str(exc),
            ) from None

    def to_text(self, max_queries: int = 20) -> str:
        """The plain-text report (``askkit diff``'s default output)."""
        return formats.to_text(self, max_queries)

    def __str__(self) -> str:
        return self.to_text()

    def to_frame(self) -> pd.DataFrame:
        """One row per measure: every field of :class:`MeasureResult`."""
        rows = [dataclasses.asdict(m) for m in self.measures]
        return pd.DataFrame(rows).set_index("measure")

    def _repr_html_(self) -> str:
        return formats.to_html(self)

    def to_markdown(self, max_queries: int = 20) -> str:
        """The report as GitHub Markdown, for a pull-request comment (text escaped)."""
        return formats.to_markdown(self, max_queries)

    def to_junit(self) -> str:
        """JUnit XML: one test case per measure (a regression is a ``<failure>``), plus checks."""
        return formats.to_junit(self)
