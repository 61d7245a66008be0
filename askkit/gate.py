"""A retrieval regression gate: fail only on a significant drop of at least a given size.

:func:`gate` scores a baseline and a new run on the same judged queries
(:func:`askkit.metrics.evaluate`, trec_eval-exact), tests each measure's
per-query deltas with a paired test (randomization by default, the t-test or
a paired bootstrap: the implementations in :mod:`askkit.compare`),
Holm-corrects the p-values across the measures and says whether any measure
*dropped* significantly by at least ``min_delta``. Improvements are reported,
never fail. The :class:`GateResult` carries what a reviewer reads: each
measure's means, delta with a confidence interval, p-value, wins/ties/losses
and the smallest drop the query set can detect; the regressed queries with
the relevant documents that left the top ``k`` (and, when the sides were
retrieved on the spot, at which stage); each side's judged share of its top
``k`` and its provenance. It prints as text, JSON (:meth:`GateResult.to_json`
and :meth:`GateResult.from_json` round-trip), Markdown and JUnit XML.
``askkit diff`` (:mod:`askkit.cli.diff`) is this function on the command line.

Examples
--------
>>> run = pd.DataFrame({"turn_id": ["q1", "q1", "q2", "q2"],
...                     "path": ["a", "b", "c", "d"], "score": [2.0, 1.0, 2.0, 1.0]})
>>> qrels = pd.DataFrame({"query_id": ["q1", "q2"], "path": ["a", "c"], "grade": [1, 1]})
>>> result = gate(run, run, qrels, ["mrr"])
>>> result.passed, result.exit_status, result.measures[0].delta
(True, 0, 0.0)
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from askkit.compare import _bootstrap, _randomization, _ttest, holm
from askkit.errors import SchemaError, UsageError
from askkit.metrics import Level, Prepared, evaluate, prepare, read_qrels
from askkit.metrics.measures import parse_measures
from askkit.metrics.qrels import PathOrFrame

__all__ = [
    "DEFAULT_GATE_MEASURES",
    "POWER",
    "TESTS",
    "GateResult",
    "LostDocument",
    "MeasureResult",
    "RegressedQuery",
    "Side",
    "SideReport",
    "Test",
    "file_sha256",
    "gate",
    "read_side",
]

Test = Literal["randomization", "t-test", "bootstrap"]

#: The paired tests :func:`gate` runs.
TESTS: tuple[Test, ...] = ("randomization", "t-test", "bootstrap")

#: What :func:`gate` measures when no measures are named.
DEFAULT_GATE_MEASURES = ("ndcg@10", "recall@10")

#: The power at which the minimum detectable effect is computed.
POWER = 0.8

#: ``(query id, document, level) -> (stage, detail)``: where a relevant document was lost.
Explainer = Callable[[str, str, Level], tuple[str, str]]

_FORMAT_MARK = "askkit diff"


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The sha256 of a file's bytes, read in 1 MiB blocks.

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile(delete=False) as f:
    ...     _ = f.write(b"abc")
    >>> file_sha256(f.name)[:16]
    'ba7816bf8f01cfea'
    """
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True, slots=True, eq=False)
class Side:
    """One side of a gate: a run frame, where it came from, and optionally its pools' story.

    ``frame`` is a sources frame or a run frame (:func:`askkit.metrics.read_run`);
    ``provenance`` is recorded in the output as given (strings); ``explain``,
    when the side was retrieved on the spot, says at which stage a relevant
    document was lost (``"pool"``, ``"reranker"`` or ``"cut"``) and why.
    """

    frame: pd.DataFrame
    provenance: Mapping[str, str] = field(default_factory=dict)
    explain: Explainer | None = None


def _is_turn_log(path: Path) -> bool:
    """A JSON payload or JSONL turn log (first non-blank byte ``{`` or ``[``)."""
    from askkit._files import open_input

    if path.suffix.lower() in (".json", ".jsonl", ".ndjson"):
        return True
    try:
        with open_input(path, what="run") as handle:
            head = handle.read(4096).lstrip()
    except (SchemaError, OSError):
        return False  # the reader names the file and the reason
    return head[:1] in (b"{", b"[")


def read_side(path: str | os.PathLike[str]) -> Side:
    """Read a TREC run or a turn log (JSONL, or a JSON payload) as a :class:`Side`.

    Its provenance: the kind of file, its path and its sha256.
    """
    from askkit.frame import sources_frame
    from askkit.metrics import read_run

    source = Path(path)
    turn_log = _is_turn_log(source)
    frame = sources_frame(source) if turn_log else read_run(source)
    return Side(
        frame=frame,
        provenance={
            "kind": "turn log" if turn_log else "TREC run",
            "file": str(source),
            "sha256": file_sha256(source),
        },
    )


def _side(value: Side | pd.DataFrame | str | os.PathLike[str]) -> Side:
    if isinstance(value, Side):
        return value
    if isinstance(value, pd.DataFrame):
        return Side(frame=value, provenance={"kind": "frame", "rows": str(len(value))})
    return read_side(value)


# --------------------------------------------------------------------------- the result


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

    @property
    def regressions(self) -> tuple[MeasureResult, ...]:
        """The measures that dropped significantly by at least ``min_delta``."""
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
        data = dataclasses.asdict(self)
        data["format"] = _FORMAT_MARK
        data["passed"] = self.passed
        data["exit_status"] = self.exit_status
        return data

    def to_json(self, indent: int | None = 2) -> str:
        """The result as JSON; :meth:`from_json` reads it back."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=True) + "\n"

    @classmethod
    def from_json(cls, text: str) -> GateResult:
        """Read back what :meth:`to_json` wrote.

        Raises :class:`SchemaError` naming the field when the text is not a gate result.
        """
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise SchemaError("not JSON", field="json", value=str(exc)) from None
        if not isinstance(data, dict) or data.get("format") != _FORMAT_MARK:
            raise SchemaError(
                "not an askkit diff result (no format: 'askkit diff')",
                field="format",
                value=data.get("format") if isinstance(data, dict) else type(data).__name__,
            )
        try:
            return cls(
                base=SideReport(**data["base"]),
                new=SideReport(**data["new"]),
                measures=tuple(MeasureResult(**m) for m in data["measures"]),
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
            )
        except (KeyError, TypeError) as exc:
            raise SchemaError(
                "an askkit diff result with a missing or unknown field",
                field="json",
                value=str(exc),
            ) from None

    def _measure_rows(self) -> list[list[str]]:
        rows = []
        for m in self.measures:
            flag = "REGRESSED" if m.regressed else ("improved" if m.improved else "")
            rows.append(
                [
                    m.measure,
                    _num(m.base),
                    _num(m.new),
                    f"{m.delta:+.4f}",
                    f"[{m.ci_low:+.4f}, {m.ci_high:+.4f}]",
                    _p(m.p_holm),
                    f"{m.wins}/{m.ties}/{m.losses}",
                    _num(m.mde),
                    flag,
                ]
            )
        return rows

    _HEADER = (
        "measure",
        "base",
        "new",
        "delta",
        "CI",
        "p (Holm)",
        "W/T/L",
        "min. detectable drop",
        "",
    )

    def _lines_about(self) -> list[str]:
        pct = f"{1 - self.alpha:.0%}"
        name = self.test.replace("-test", "")
        return [
            f"{self.queries} queries, level {self.level}, paired {name} test"
            + (f" ({self.resamples} resamples, seed {self.seed})" if self.test != "t-test" else "")
            + f", alpha {self.alpha:g}, min delta {self.min_delta:g}; "
            f"CI: {pct} interval of the mean delta; p-values Holm-corrected across measures; "
            f"min. detectable drop: at {POWER:.0%} power and alpha/{len(self.measures)}",
        ]

    def _side_lines(self) -> list[str]:
        out = []
        for s in (self.base, self.new):
            prov = ", ".join(f"{k} {v}" for k, v in s.provenance.items())
            out.append(
                f"{s.name}: {s.queries} judged queries answered, {s.lacks} lacking, "
                f"{s.unjudged_queries} unjudged; judged share of top {self.k}: "
                f"{s.judged_share:.1%}; {prov}"
            )
        return out

    def _lost_text(self, d: LostDocument) -> str:
        where = "not retrieved" if d.new_rank is None else f"rank {d.new_rank}"
        text = f"{d.doc} (grade {d.grade}): rank {d.base_rank} -> {where}"
        if d.stage != "top k":
            text += f"; lost at the {d.stage}"
        if d.detail:
            text += f": {d.detail}"
        return text

    def to_text(self, max_queries: int = 20) -> str:
        """The plain-text report (``askkit diff``'s default output)."""
        lines = [self.verdict, *self._lines_about(), ""]
        rows = [list(self._HEADER), *self._measure_rows()]
        widths = [max(len(r[i]) for r in rows) for i in range(len(self._HEADER))]
        lines += [
            "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows
        ]
        lines += ["", *self._side_lines()]
        lines += [f"problem: {p}" for p in self.problems]
        lines += [f"note: {n}" for n in self.notes]
        if self.regressed_queries:
            shown = self.regressed_queries[:max_queries]
            lines += ["", f"regressed queries ({len(self.regressed_queries)}, worst first):"]
            for q in shown:
                deltas = ", ".join(f"{k} {v:+.4f}" for k, v in q.deltas.items())
                lines.append(f"  {q.query_id}: {deltas}")
                lines += [f"    left the top {self.k}: {self._lost_text(d)}" for d in q.lost]
            if len(self.regressed_queries) > len(shown):
                lines.append(f"  ... and {len(self.regressed_queries) - len(shown)} more")
        return "\n".join(lines) + "\n"

    def __str__(self) -> str:
        return self.to_text()

    def to_frame(self) -> pd.DataFrame:
        """One row per measure: every field of :class:`MeasureResult`."""
        rows = [dataclasses.asdict(m) for m in self.measures]
        return pd.DataFrame(rows).set_index("measure")

    def _repr_html_(self) -> str:
        from askkit import _html

        lines = "".join(
            f"<li>{_html.esc(line)}</li>" for line in [*self._side_lines(), *self.problems]
        )
        return _html.fragment(
            _html.message(self.verdict, tone="plain" if self.passed else "error")
            + _html.data_table(self.to_frame(), digits=4)
            + f"<ul>{lines}</ul>"
        )

    def to_markdown(self, max_queries: int = 20) -> str:
        """The report as GitHub Markdown, for a pull-request comment (text escaped)."""
        icon = "✅" if self.passed else "❌"
        lines = [f"<!-- {_FORMAT_MARK} -->", f"### {icon} {_md(self.verdict)}", ""]
        lines += [_md(line) for line in self._lines_about()]
        lines += ["", "| " + " | ".join(self._HEADER[:-1]) + " | |"]
        lines.append("|" + " --- |" * len(self._HEADER))
        for row in self._measure_rows():
            row[-1] = f"**{row[-1]}**" if row[-1] else ""
            lines.append("| " + " | ".join(_md(c) if "*" not in c else c for c in row) + " |")
        lines.append("")
        lines += [f"- {_md(line)}" for line in self._side_lines()]
        lines += [f"- **problem**: {_md(p)}" for p in self.problems]
        lines += [f"- note: {_md(n)}" for n in self.notes]
        if self.regressed_queries:
            shown = self.regressed_queries[:max_queries]
            lines += [
                "",
                f"<details><summary>{len(self.regressed_queries)} regressed queries</summary>",
                "",
                "| query | deltas | relevant documents that left the top k |",
                "| --- | --- | --- |",
            ]
            for q in shown:
                deltas = ", ".join(f"{k} {v:+.4f}" for k, v in q.deltas.items())
                lost = "<br>".join(_md(self._lost_text(d)) for d in q.lost) or "-"
                lines.append(f"| {_md(q.query_id)} | {_md(deltas)} | {lost} |")
            if len(self.regressed_queries) > len(shown):
                lines.append(f"\n... and {len(self.regressed_queries) - len(shown)} more")
            lines += ["", "</details>"]
        return "\n".join(lines) + "\n"

    def to_junit(self) -> str:
        """JUnit XML: one test case per measure (a regression is a ``<failure>``), plus checks."""
        failures = len(self.regressions) + len(self.problems)
        tests = len(self.measures) + (1 if self.max_unjudged is not None else 0)
        suites = ET.Element(
            "testsuites", name=_FORMAT_MARK, tests=str(tests), failures=str(failures), errors="0"
        )
        suite = ET.SubElement(
            suites,
            "testsuite",
            name=f"{_FORMAT_MARK}: {self.base.name} -> {self.new.name}",
            tests=str(tests),
            failures=str(failures),
            errors="0",
            skipped="0",
        )
        props = ET.SubElement(suite, "properties")
        for side in (self.base, self.new):
            for key, value in side.provenance.items():
                ET.SubElement(props, "property", name=f"{side.name}.{key}", value=_xml(value))
        for m in self.measures:
            case = ET.SubElement(
                suite, "testcase", classname="askkit.diff", name=m.measure, time="0"
            )
            text = (
                f"{m.measure}: {_num(m.base)} -> {_num(m.new)} (delta {m.delta:+.4f}, "
                f"CI [{m.ci_low:+.4f}, {m.ci_high:+.4f}], p (Holm) {_p(m.p_holm)}, "
                f"W/T/L {m.wins}/{m.ties}/{m.losses}, min. detectable drop {_num(m.mde)})"
            )
            if m.regressed:
                failure = ET.SubElement(case, "failure", message=_xml(text), type="regression")
                failure.text = _xml(self.to_text())
            else:
                ET.SubElement(case, "system-out").text = _xml(text)
        if self.max_unjudged is not None:
            case = ET.SubElement(
                suite, "testcase", classname="askkit.diff", name="judged share", time="0"
            )
            for p in self.problems:
                ET.SubElement(case, "failure", message=_xml(p), type="unjudged")
        ET.SubElement(suite, "system-out").text = _xml(self.to_text())
        ET.indent(suites)
        body = ET.tostring(suites, encoding="unicode")
        return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"


def _num(x: float) -> str:
    return "nan" if not math.isfinite(x) else f"{x:.4f}"


def _p(x: float) -> str:
    return "nan" if not math.isfinite(x) else (f"{x:.4f}" if x >= 1e-4 else f"{x:.1e}")


def _md(text: str) -> str:
    """Text safe in a Markdown table cell and as HTML (GitHub renders both)."""
    out = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    for ch in "\\|`*_[]":
        out = out.replace(ch, "\\" + ch)
    return out.replace("\n", " ")


def _xml(text: str) -> str:
    """Text XML 1.0 can carry (control characters other than tab and newline dropped)."""
    return "".join(c for c in text if c in "\t\n\r" or ord(c) >= 0x20)


# --------------------------------------------------------------------------- the gate


def _check_options(test: str, alpha: float, min_delta: float, resamples: int, k: int) -> None:
    if test not in TESTS:
        raise UsageError(f"test must be one of {', '.join(TESTS)}, got {test!r}")
    if not 0.0 < alpha < 1.0:
        raise UsageError(f"alpha must be between 0 and 1 (exclusive), got {alpha!r}")
    if not (min_delta >= 0.0 and math.isfinite(min_delta)):
        raise UsageError(f"min_delta must be a number >= 0, got {min_delta!r}")
    if resamples < 1:
        raise UsageError(f"resamples must be at least 1, got {resamples!r}")
    if k < 1:
        raise UsageError(f"k must be at least 1, got {k!r}")


def _default_k(measures: Sequence[str]) -> int:
    cutoffs = [m.k for m in parse_measures(measures) if m.k is not None]
    return int(max(cutoffs)) if cutoffs else 10


def _intervals(
    deltas: np.ndarray[Any, Any], alpha: float, m: int
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """The t interval of each column's mean delta, and the minimum detectable drop.

    MDE = (t[1 - alpha/(2m), n-1] + t[POWER, n-1]) * sd / sqrt(n): the mean
    drop a paired t-test at Holm's strictest level (alpha / m) detects with
    probability ``POWER``, for the observed per-query standard deviation.
    """
    from scipy.special import stdtrit  # the t quantile, without loading scipy.stats

    n = deltas.shape[0]
    if n < 2:
        nan = np.full(deltas.shape[1], np.nan)
        return nan, nan, nan
    mean = deltas.mean(axis=0)
    se = deltas.std(axis=0, ddof=1) / math.sqrt(n)
    half = float(stdtrit(n - 1, 1 - alpha / 2)) * se
    mde = (float(stdtrit(n - 1, 1 - alpha / (2 * m))) + float(stdtrit(n - 1, POWER))) * se
    return mean - half, mean + half, mde


def _bootstrap_interval(
    deltas: np.ndarray[Any, Any], alpha: float, resamples: int, seed: int
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """The percentile bootstrap interval of each column's mean delta."""
    n, m = deltas.shape
    rng = np.random.default_rng([seed, 1])  # a stream apart from the test's
    means = np.empty((resamples, m))
    per_block = max(1, 4_000_000 // max(n, 1))
    for start in range(0, resamples, per_block):
        b = min(per_block, resamples - start)
        picks = rng.integers(0, n, size=(b, n))
        for j in range(m):
            means[start : start + b, j] = deltas[:, j][picks].mean(axis=1)
    low = np.quantile(means, alpha / 2, axis=0)
    high = np.quantile(means, 1 - alpha / 2, axis=0)
    return low, high


def _query_sets(
    base: Prepared, new: Prepared, allow_partial: bool
) -> tuple[pd.Index, list[str], tuple[int, int, int, int]]:
    """The judged queries both sides answered; refuses other query sets unless allowed."""
    judged = base.qids[base.in_qrels]
    base_has = pd.Index(base.qids[base.in_qrels & base.in_run])
    new_has = pd.Index(new.qids[new.in_qrels & new.in_run])
    base_lacks, new_lacks = len(judged) - len(base_has), len(judged) - len(new_has)
    base_extra, new_extra = len(base.run_only), len(new.run_only)
    common = base_has.intersection(new_has).sort_values()
    notes = []
    if base_lacks or new_lacks or base_extra or new_extra:
        sentence = (
            f"of the {len(judged)} judged queries BASE lacks {base_lacks} and NEW lacks "
            f"{new_lacks}; BASE has {base_extra} and NEW {new_extra} queries the qrels do not judge"
        )
        if not allow_partial:
            raise UsageError(
                f"the runs and the qrels cover different queries: {sentence}; compare runs "
                "over the qrels' queries, or allow a partial comparison (--allow-partial) "
                f"on the {len(common)} judged queries both answered"
            )
        notes.append(f"partial comparison on {len(common)} queries: {sentence}")
    if len(common) == 0:
        raise UsageError(
            "no judged query is answered by both runs: check that the runs' query ids are "
            "the qrels' (and --level)"
        )
    return common, notes, (base_lacks, new_lacks, base_extra, new_extra)


#: Rows from which the two sides are prepared in two threads (numpy and Arrow
#: release the GIL in their long loops); below it, one after the other.
_THREADED_ROWS = 200_000


def _prepare_both(
    base: pd.DataFrame, new: pd.DataFrame, qrels: pd.DataFrame, level: Level
) -> list[Prepared]:
    """Both sides ranked, de-duplicated and graded (:func:`askkit.metrics.prepare`), at
    once in two threads when they are large."""
    if len(base) + len(new) < _THREADED_ROWS:
        return [prepare(frame, qrels, level=level) for frame in (base, new)]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="askkit-gate") as pool:
        futures = [pool.submit(prepare, frame, qrels, level=level) for frame in (base, new)]
        return [future.result() for future in futures]


def _query_codes(prep: Prepared, queries: Sequence[str] | pd.Index) -> np.ndarray[Any, Any]:
    """The codes ``prep.ranked.query`` gives ``queries`` (-1: not one of its queries)."""
    codes: np.ndarray[Any, Any] = prep.qids.get_indexer(pd.Index(queries, dtype=object))
    return codes


def _judged_share(prep: Prepared, queries: pd.Index, k: int) -> float:
    """The judged share of the documents ranked 1..k for ``queries``."""
    r = prep.ranked
    wanted = np.zeros(len(prep.qids), dtype=bool)
    codes = _query_codes(prep, queries)
    wanted[codes[codes >= 0]] = True
    top = wanted[r.query] & (r.rank <= k)
    return float(prep.judged[top].mean()) if top.any() else math.nan


def _lost_documents(  # noqa: PLR0917 - private, called once
    base: Prepared,
    new: Prepared,
    queries: Sequence[str],
    k: int,
    explain: Explainer | None,
    level: Level,
) -> dict[str, list[LostDocument]]:
    """Per query: relevant documents in BASE's top k but not in NEW's, columnar.

    BASE's relevant top-k rows of ``queries`` are the candidates; NEW's rows of
    the same queries are looked up by (query, document id), the ids coded
    against the candidates' distinct ids (:func:`pyarrow.compute.index_in`).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if not queries:
        return {}
    rb, rn = base.ranked, new.ranked
    wanted = np.zeros(len(base.qids), dtype=bool)
    codes = _query_codes(base, queries)
    wanted[codes[codes >= 0]] = True
    pick = wanted[rb.query] & (rb.rank <= k) & base.judged & (base.grade >= 1)
    if not pick.any():
        return {}
    q_base = rb.query[pick]
    grade, rank = base.grade[pick], rb.rank[pick]
    query_ids = base.qids.to_numpy(dtype=object)[q_base]
    docs = base.docs.take(pa.array(rb.doc[pick]))
    distinct = pc.unique(docs)
    cand_doc = pc.index_in(docs, value_set=distinct).to_numpy(zero_copy_only=False)
    q_new = _query_codes(new, pd.Index(query_ids))
    width = np.int64(len(distinct))
    keys = np.where(q_new >= 0, q_new.astype(np.int64) * width + cand_doc, -1)
    in_new = np.zeros(len(new.qids), dtype=bool)
    in_new[q_new[q_new >= 0]] = True
    rows = np.flatnonzero(in_new[rn.query])
    new_doc = pc.index_in(new.docs.take(pa.array(rn.doc[rows])), value_set=distinct)
    known = new_doc.is_valid().to_numpy(zero_copy_only=False)
    rows = rows[known]
    new_keys = rn.query[rows].astype(np.int64) * width + new_doc.drop_null().to_numpy()
    found = pd.Index(new_keys).get_indexer(keys)
    new_rank = np.zeros(len(keys), dtype=np.int64)  # 0: not retrieved
    new_rank[found >= 0] = rn.rank[rows][found[found >= 0]]
    lost = (found < 0) | (new_rank > k)
    out: dict[str, list[LostDocument]] = {}
    for qid, doc, g, r_base, r_new in zip(
        query_ids[lost].tolist(),
        docs.filter(pa.array(lost)).to_pylist(),
        grade[lost].tolist(),
        rank[lost].tolist(),
        new_rank[lost].tolist(),
        strict=True,
    ):
        stage, detail = ("top k", "") if explain is None else explain(qid, doc, level)
        out.setdefault(qid, []).append(
            LostDocument(
                doc=doc,
                grade=int(g),
                base_rank=int(r_base),
                new_rank=int(r_new) if r_new > 0 else None,
                stage=stage,
                detail=detail,
            )
        )
    return out


def gate(
    base: Side | pd.DataFrame | str | os.PathLike[str],
    new: Side | pd.DataFrame | str | os.PathLike[str],
    qrels: PathOrFrame,
    measures: Sequence[str] = DEFAULT_GATE_MEASURES,
    *,
    test: Test = "randomization",
    alpha: float = 0.05,
    min_delta: float = 0.0,
    level: Level = "note",
    seed: int = 0,
    resamples: int = 10_000,
    k: int | None = None,
    allow_partial: bool = False,
    max_unjudged: float | None = None,
    names: tuple[str, str] = ("BASE", "NEW"),
) -> GateResult:
    """Decide whether ``new`` retrieves significantly worse than ``base``.

    Parameters
    ----------
    base, new:
        Runs: a :class:`Side`, a run or sources frame, or the path of a TREC
        run or turn log (:func:`read_side`, which records its sha256).
    qrels:
        The judgments, a frame or a file (:func:`askkit.metrics.read_qrels`).
    measures:
        Measure names as :func:`askkit.metrics.evaluate` takes them
        (default nDCG@10 and recall@10).
    test:
        ``"randomization"`` (paired sign flips, default), ``"t-test"``
        (``scipy.stats.ttest_rel``) or ``"bootstrap"`` (paired, shifted).
    alpha:
        The significance level; the p-values are Holm-corrected across the measures.
    min_delta:
        The smallest drop that counts: a measure regresses when its mean drops
        by at least this much *and* its Holm-corrected p-value is below ``alpha``.
    level:
        ``"note"`` or ``"section"`` (as for :func:`askkit.metrics.evaluate`).
    seed, resamples:
        The resampling tests' seed and number of resamples.
    k:
        The depth of "top k" for the judged share and the lost documents
        (default: the largest cutoff among the measures, else 10).
    allow_partial:
        Compare on the judged queries both runs answered, even when the runs
        and the qrels cover different queries (else :class:`UsageError`).
    max_unjudged:
        Fail when more than this share of NEW's top ``k`` is unjudged (``None``:
        only a note when most of it is).
    names:
        What the output calls the two sides.

    Returns
    -------
    GateResult
        ``.passed``, ``.regressions``, ``.exit_status`` and the report formats.

    Examples
    --------
    >>> run = pd.DataFrame({"turn_id": ["q1", "q2", "q3"], "path": ["a", "c", "e"],
    ...                     "score": [1.0, 1.0, 1.0]})
    >>> qrels = pd.DataFrame({"query_id": ["q1", "q2", "q3"], "path": ["a", "c", "e"],
    ...                       "grade": [1, 1, 1]})
    >>> worse = run.assign(path=["b", "d", "f"])
    >>> r = gate(run, worse, qrels, ["mrr"], test="t-test")
    >>> r.measures[0].delta, r.measures[0].losses
    (-1.0, 3)
    """
    measures = list(measures)
    parse_measures(measures)  # a bad name fails before any work
    k = _default_k(measures) if k is None else k
    _check_options(test, alpha, min_delta, resamples, k)
    if max_unjudged is not None and not 0.0 <= max_unjudged <= 1.0:
        raise UsageError(f"max_unjudged must be a share between 0 and 1, got {max_unjudged!r}")
    left, right = _side(base), _side(new)
    judgments = read_qrels(qrels)
    preps = _prepare_both(left.frame, right.frame, judgments, level)
    common, notes, counts = _query_sets(preps[0], preps[1], allow_partial)
    evals = [evaluate(p, measures=measures, missing="drop") for p in preps]
    values = [e.per_query.loc[common].to_numpy(dtype=np.float64) for e in evals]
    deltas = values[1] - values[0]
    n_measures = deltas.shape[1]
    if test == "t-test":
        _, p = _ttest(values[1], values[0])
    elif test == "randomization":
        p = _randomization(deltas, resamples, np.random.default_rng(seed))
    else:
        p = _bootstrap(deltas, resamples, np.random.default_rng(seed))
    p = np.where(np.all(deltas == 0, axis=0), 1.0, p)  # no difference at all
    p_holm = holm(p)
    low, high, mde = _intervals(deltas, alpha, n_measures)
    if test == "bootstrap" and len(common) > 1:
        low, high = _bootstrap_interval(deltas, alpha, resamples, seed)
    mean_delta = deltas.mean(axis=0)
    significant = p_holm < alpha
    tol = 1e-12
    results = tuple(
        MeasureResult(
            measure=name,
            base=float(values[0][:, j].mean()),
            new=float(values[1][:, j].mean()),
            delta=float(mean_delta[j]),
            ci_low=float(low[j]),
            ci_high=float(high[j]),
            p=float(p[j]),
            p_holm=float(p_holm[j]),
            wins=int(np.count_nonzero(deltas[:, j] > 0)),
            ties=int(np.count_nonzero(deltas[:, j] == 0)),
            losses=int(np.count_nonzero(deltas[:, j] < 0)),
            mde=float(mde[j]),
            regressed=bool(
                significant[j] and mean_delta[j] < 0 and -mean_delta[j] >= min_delta - tol
            ),
            improved=bool(
                significant[j] and mean_delta[j] > 0 and mean_delta[j] >= min_delta - tol
            ),
        )
        for j, name in enumerate(evals[0].measures)
    )
    shares = [_judged_share(p_, common, k) for p_ in preps]
    problems: list[str] = []
    unjudged = 1.0 - shares[1]
    if max_unjudged is not None and unjudged > max_unjudged:
        problems.append(
            f"{unjudged:.1%} of {names[1]}'s top {k} is unjudged (more than the "
            f"{max_unjudged:.1%} allowed): unjudged documents count as not relevant, so judge "
            "them before trusting this comparison"
        )
    elif unjudged > 0.5:
        notes.append(
            f"{unjudged:.1%} of {names[1]}'s top {k} is unjudged: unjudged documents count as "
            "not relevant, so its scores may be too low (limit it: --max-unjudged, max_unjudged)"
        )
    worst = deltas.min(axis=1)
    order = np.argsort(worst, kind="stable")
    regressed_idx = [i for i in order.tolist() if worst[i] < 0]
    regressed_ids = [str(common[i]) for i in regressed_idx]
    lost = _lost_documents(preps[0], preps[1], regressed_ids, k, right.explain, level)
    regressed_queries = tuple(
        RegressedQuery(
            query_id=qid,
            deltas={name: float(deltas[i, j]) for j, name in enumerate(evals[0].measures)},
            lost=tuple(lost.get(qid, ())),
        )
        for qid, i in zip(regressed_ids, regressed_idx, strict=True)
    )
    sides = tuple(
        SideReport(
            name=names[i],
            queries=len(evals[i].per_query),
            lacks=counts[i],
            unjudged_queries=counts[2 + i],
            judged_share=shares[i],
            provenance={str(a): str(b) for a, b in s.provenance.items()},
        )
        for i, s in enumerate((left, right))
    )
    return GateResult(
        base=sides[0],
        new=sides[1],
        measures=results,
        regressed_queries=regressed_queries,
        test=test,
        alpha=float(alpha),
        min_delta=float(min_delta),
        level=level,
        k=int(k),
        seed=int(seed),
        resamples=int(resamples),
        queries=len(common),
        max_unjudged=max_unjudged,
        problems=tuple(problems),
        notes=tuple(notes),
    )
