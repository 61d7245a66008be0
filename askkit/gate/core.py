"""The regression gate: fail only on a significant drop of at least a given size.

:func:`gate` scores a baseline and a new run on the same judged queries
(:func:`askkit.metrics.evaluate`, trec_eval-exact), tests each measure's
per-query deltas with a paired test and Holm-corrects the p-values across
the measures (:mod:`askkit.gate.stats`), and says whether any measure
*dropped* significantly by at least ``min_delta``. Improvements are
reported, never fail. It lists the regressed queries with the relevant
documents that left the top ``k`` (and, when the sides were retrieved on the
spot, at which stage: :attr:`askkit.gate.Side.explain`) and each side's
judged share of its top ``k``, in a :class:`askkit.gate.GateResult`.

Examples
--------
>>> import pandas as pd
>>> run = pd.DataFrame({"turn_id": ["q1", "q1", "q2", "q2"],
...                     "path": ["a", "b", "c", "d"], "score": [2.0, 1.0, 2.0, 1.0]})
>>> qrels = pd.DataFrame({"query_id": ["q1", "q2"], "path": ["a", "c"], "grade": [1, 1]})
>>> result = gate(run, run, qrels, ["mrr"])
>>> result.passed, result.exit_status, result.measures[0].delta
(True, 0, 0.0)
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from askkit.compare import holm
from askkit.errors import UsageError
from askkit.gate.holes import Hole, HoleList
from askkit.gate.result import (
    UNJUDGED_MODES,
    GateResult,
    LostDocument,
    MeasureResult,
    RegressedQuery,
    SideReport,
)
from askkit.gate.side import Explainer, Side, _side
from askkit.gate.stats import (
    MAX_RESAMPLES,
    TESTS,
    Test,
    _bootstrap_interval,
    _intervals,
    _p_values,
    constant_columns,
)
from askkit.metrics import Bounds, Level, Prepared, bounds, evaluate, prepare, read_qrels
from askkit.metrics.measures import NOT_CONDENSED, parse_measures
from askkit.metrics.qrels import PathOrFrame
from askkit.metrics.runs import check_scorable, decoded_if_encoded

__all__ = ["DEFAULT_GATE_MEASURES", "gate"]

#: What :func:`gate` measures when no measures are named.
DEFAULT_GATE_MEASURES = ("ndcg@10", "recall@10")


def _check_options(test: str, alpha: float, min_delta: float, resamples: int, k: int) -> None:
    if test not in TESTS:
        raise UsageError(f"test must be one of {', '.join(TESTS)}, got {test!r}")
    if not 0.0 < alpha < 1.0:
        raise UsageError(f"alpha must be between 0 and 1 (exclusive), got {alpha!r}")
    if not (min_delta >= 0.0 and math.isfinite(min_delta)):
        raise UsageError(f"min_delta must be a number >= 0, got {min_delta!r}")
    if not 1 <= resamples <= MAX_RESAMPLES:
        raise UsageError(
            f"resamples must be a whole number from 1 to {MAX_RESAMPLES:,}, got {resamples!r}"
        )
    if k < 1:
        raise UsageError(f"k must be at least 1, got {k!r}")


def _default_k(measures: Sequence[str]) -> int:
    cutoffs = [m.k for m in parse_measures(measures) if m.k is not None]
    return int(max(cutoffs)) if cutoffs else 10


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


def _check_scorable(
    sides: tuple[Side, Side], judgments: pd.DataFrame, qrels: PathOrFrame, names: tuple[str, str]
) -> None:
    """Refuse empty judgments, an empty side, or a side sharing no query id with the
    judgments, naming the file (:func:`askkit.metrics.runs.check_scorable`)."""
    qrels_file = None if isinstance(qrels, pd.DataFrame) else str(qrels)
    for side, name in zip(sides, names, strict=True):
        file = side.provenance.get("file")
        check_scorable(
            side.frame,
            judgments,
            run_file=file if file is not None else name,
            qrels_file=qrels_file if qrels_file is not None else "the qrels",
        )


def _decoded(side: Side, judgments: pd.DataFrame, level: Level) -> Side:
    """The side with its TREC ids decoded when the judgments hold them as paths
    (:func:`askkit.metrics.runs.decoded_if_encoded`), the note in its provenance."""
    frame, note = decoded_if_encoded(
        side.frame, judgments, level=level, run_file=side.provenance.get("file")
    )
    if note is None:
        return side
    return dataclasses.replace(side, frame=frame, provenance={**side.provenance, "ids": note})


#: Rows from which the two sides are prepared in two threads (numpy and Arrow
#: release the GIL in their long loops); below it, one after the other.
_THREADED_ROWS = 200_000
_T = TypeVar("_T")


def _prepare_both(
    base: pd.DataFrame, new: pd.DataFrame, qrels: pd.DataFrame, level: Level
) -> list[Prepared]:
    """Both sides ranked, de-duplicated and graded (:func:`askkit.metrics.prepare`), at
    once in two threads when they are large."""
    return _both(lambda frame: prepare(frame, qrels, level=level), [base, new])


def _both(work: Callable[[Any], _T], sides: list[Any], rows: int | None = None) -> list[_T]:
    """``work`` on each side, in two threads when the sides are large (``rows``: their
    rows, else their lengths; numpy and Arrow release the GIL in their long loops)."""
    if (rows if rows is not None else sum(len(s) for s in sides)) < _THREADED_ROWS:
        return [work(side) for side in sides]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="askkit-gate") as pool:
        futures = [pool.submit(work, side) for side in sides]
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
    unjudged: str = "ignore",
    fill_grade: int | None = None,
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
    unjudged:
        What the exit status rests on (:data:`~askkit.gate.result.UNJUDGED_MODES`):
        ``"ignore"`` (default) scores unjudged documents as not relevant, as
        trec_eval does; ``"condensed"`` scores every measure on the condensed
        lists (``ndcg'@10``: unjudged documents taken out); ``"bounds"`` fails
        only on a drop that stays significant when every unjudged document of
        BASE's ranking is not relevant and every one of NEW's is relevant (at
        ``fill_grade``), the best NEW could do. Whatever the mode, each
        measure says whether its verdict holds whatever the unjudged documents
        are (:attr:`MeasureResult.holds`), and :attr:`GateResult.holes` lists
        the unjudged documents its bounds depend on.
    fill_grade:
        The grade of an unjudged document filled as relevant (default: the
        qrels' top grade), for the bounds.

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
    parsed = parse_measures(measures)  # a bad name fails before any work
    if unjudged not in UNJUDGED_MODES:
        raise UsageError(f"unjudged must be one of {', '.join(UNJUDGED_MODES)}, got {unjudged!r}")
    if fill_grade is not None and fill_grade < 0:
        raise UsageError(f"fill_grade must be >= 0, got {fill_grade!r}")
    if unjudged == "condensed":  # the measures the exit status rests on: ndcg'@10
        measures = [
            m.name
            if m.condensed or m.kind in NOT_CONDENSED
            else dataclasses.replace(m, condensed=True).label
            for m in parsed
        ]
    k = _default_k(measures) if k is None else k
    _check_options(test, alpha, min_delta, resamples, k)
    if max_unjudged is not None and not 0.0 <= max_unjudged <= 1.0:
        raise UsageError(f"max_unjudged must be a share between 0 and 1, got {max_unjudged!r}")
    left, right = _side(base), _side(new)
    judgments = read_qrels(qrels)
    _check_scorable((left, right), judgments, qrels, names)
    left, right = (_decoded(side, judgments, level) for side in (left, right))
    preps = _prepare_both(left.frame, right.frame, judgments, level)
    common, notes, counts = _query_sets(preps[0], preps[1], allow_partial)
    evals = [evaluate(p, measures=measures, missing="drop") for p in preps]
    values = [e.per_query.loc[common].to_numpy(dtype=np.float64) for e in evals]
    deltas = values[1] - values[0]
    n_measures = deltas.shape[1]
    p, p_holm, why = _p_values(test, values[0], values[1], deltas, resamples=resamples, seed=seed)
    low, high, mde = _intervals(deltas, alpha, n_measures)
    mde = np.where(constant_columns(deltas), np.nan, mde)  # no spread: nothing to size a drop by
    if test == "bootstrap" and len(common) > 1:
        low, high = _bootstrap_interval(deltas, alpha, resamples, seed)
    mean_delta = deltas.mean(axis=0)
    significant = p_holm < alpha
    tol = 1e-12
    limits = _both(
        lambda p_: bounds(p_, measures=measures, grade=fill_grade, missing="drop"),
        preps,
        rows=sum(len(p_.ranked.query) for p_ in preps),
    )
    extremes = _extremes(
        limits,
        common,
        (  # today's verdicts: regressed, improved
            significant & (mean_delta < 0) & (-mean_delta >= min_delta - tol),
            significant & (mean_delta > 0) & (mean_delta >= min_delta - tol),
        ),
        test=test,
        alpha=alpha,
        min_delta=min_delta,
        seed=seed,
        resamples=resamples,
    )
    holes, depends = _holes(limits, preps, common, names, level)
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
            note=why[j],
            best_delta=float(extremes.best[j]),
            worst_delta=float(extremes.worst[j]),
            holds=bool(extremes.holds[j]),
            depends_on=depends.get(name, 0),
            regressed_bounds=bool(extremes.regressed_at_best[j]),
        )
        for j, name in enumerate(evals[0].measures)
    )
    notes += [f"{m.measure}: {m.note}" for m in results if m.note]
    shares = [_judged_share(p_, common, k) for p_ in preps]
    problems: list[str] = []
    unjudged_share = 1.0 - shares[1]
    if max_unjudged is not None and unjudged_share > max_unjudged:
        problems.append(
            f"{unjudged_share:.1%} of {names[1]}'s top {k} is unjudged (more than the "
            f"{max_unjudged:.1%} allowed): unjudged documents count as not relevant, so judge "
            "them before trusting this comparison"
        )
    elif unjudged_share > 0.5:
        notes.append(
            f"{unjudged_share:.1%} of {names[1]}'s top {k} is unjudged: unjudged documents "
            "count as not relevant, so its scores may be too low (limit it: --max-unjudged, "
            "max_unjudged; see each measure's bounds, --unjudged)"
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
        unjudged=unjudged,
        fill_grade=limits[0].grade,
        holes=holes,
    )


@dataclasses.dataclass(frozen=True, slots=True)
class _Extremes:
    """Each measure at the two extreme judgings of the unjudged documents."""

    best: np.ndarray[Any, Any]
    """Mean delta with BASE's unjudged not relevant and NEW's relevant."""
    worst: np.ndarray[Any, Any]
    """Mean delta with BASE's unjudged relevant and NEW's not relevant."""
    holds: np.ndarray[Any, Any]
    """The verdict is the same at both extremes and today."""
    regressed_at_best: np.ndarray[Any, Any]
    """A significant drop of at least min_delta even at the best extreme."""


def _verdicts(
    base: np.ndarray[Any, Any],
    new: np.ndarray[Any, Any],
    *,
    test: Test,
    alpha: float,
    min_delta: float,
    seed: int,
    resamples: int,
    families: int = 1,
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """Per measure: the mean delta, whether it regressed and whether it improved
    (significant after Holm, by at least ``min_delta``), as :func:`gate` decides.
    ``families``: the columns are that many comparisons of the same measures side by
    side, each corrected by Holm on its own."""
    deltas = new - base
    p, _, _ = _p_values(test, base, new, deltas, resamples=resamples, seed=seed)
    p_holm = np.concatenate([holm(part) for part in np.split(p, families)])
    mean = deltas.mean(axis=0)
    significant = p_holm < alpha
    tol = 1e-12
    regressed = significant & (mean < 0) & (-mean >= min_delta - tol)
    improved = significant & (mean > 0) & (mean >= min_delta - tol)
    return mean, regressed, improved


def _extremes(
    limits: list[Bounds],
    common: pd.Index,
    now: tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]],
    *,
    test: Test,
    alpha: float,
    min_delta: float,
    seed: int,
    resamples: int,
) -> _Extremes:
    """The verdicts at the two extreme judgings of both sides' unjudged documents
    (``now``: per measure, whether it regressed and whether it improved today)."""
    low = [b.lower.loc[common].to_numpy(dtype=np.float64) for b in limits]
    high = [b.upper.loc[common].to_numpy(dtype=np.float64) for b in limits]
    # both judgings in one test: every test draws the same resamples for every column
    # (and the t-test none), so each column's p-value is what a test of its own gives
    best_worst = _verdicts(
        np.hstack([low[0], high[0]]),
        np.hstack([high[1], low[1]]),
        test=test,
        alpha=alpha,
        min_delta=min_delta,
        seed=seed,
        resamples=resamples,
        families=2,
    )
    m = low[0].shape[1]
    best = tuple(v[:m] for v in best_worst)
    worst = tuple(v[m:] for v in best_worst)
    holds = np.ones(len(now[0]), dtype=bool)
    for side in (best, worst):
        holds &= (side[1] == now[0]) & (side[2] == now[1])
    return _Extremes(best=best[0], worst=worst[0], holds=holds, regressed_at_best=best[1])


def _holes(
    limits: list[Bounds],
    preps: list[Prepared],
    common: pd.Index,
    names: tuple[str, str],
    level: Level,
) -> tuple[HoleList, dict[str, int]]:
    """The unjudged documents of both sides' top k (each measure's depth) on the
    compared queries whose judging could move a bound (a query whose bounds differ),
    and per measure how many there are. They are counted here from each query's
    unjudged documents per measure (a measure's top D holds every shallower one's),
    and listed when first read (:class:`~askkit.gate.holes.HoleList`)."""
    measures = list(limits[0].measures) if limits else []
    counts = dict.fromkeys(measures, 0)
    total = 0
    for b in limits:
        compared = np.zeros(len(b.unjudged), dtype=bool)
        at = b.unjudged.index.get_indexer(common)  # (isin is slow on Arrow strings)
        compared[at[at >= 0]] = True
        moving = (b.upper.to_numpy() - b.lower.to_numpy()) > 1e-15
        mine = compared[:, None] & moving
        unjudged = np.where(mine, b.unjudged.to_numpy(), 0)
        for i, m in enumerate(measures):
            counts[m] += int(unjudged[:, i].sum())
        total += int(unjudged.max(axis=1, initial=0).sum())

    def make() -> list[Hole]:
        holes: list[Hole] = []
        labels: dict[int, str] = {}
        for b, prep, name in zip(limits, preps, names, strict=True):
            frame = b.holes
            if not len(frame):
                continue
            qids = frame["query_id"]
            moving = ((b.upper - b.lower) > 1e-15).to_numpy()
            at = b.upper.index.get_indexer(pd.Index(qids))
            wanted = np.asarray(qids.isin(common), dtype=bool) & (at >= 0)
            codes, uniques = pd.factorize(frame["measures"])
            bits = np.zeros(len(frame), dtype=np.int64)
            for i, m in enumerate(measures):
                named = np.array([m in str(u).split(", ") for u in uniques], dtype=bool)
                bits |= (named[codes] & wanted & moving[np.maximum(at, 0), i]).astype(np.int64) << i
            rows = np.flatnonzero(bits)
            frame = frame.iloc[rows]
            docs = frame["doc"].astype(str).tolist()
            run = prep.run
            paths = (
                run["path"].iloc[frame["row"].to_numpy()].astype(str).tolist()
                if "path" in run.columns
                else docs
            )
            for qid, doc, path, rank, bit in zip(
                frame["query_id"].astype(str).tolist(),
                docs,
                paths,
                frame["rank"].tolist(),
                bits[rows].tolist(),
                strict=True,
            ):
                if bit not in labels:
                    labels[bit] = ", ".join(m for i, m in enumerate(measures) if bit >> i & 1)
                heading = ""
                if level == "section" and doc.startswith(path + "#"):
                    heading = doc[len(path) + 1 :]
                holes.append(
                    Hole(
                        query_id=qid,
                        doc=doc,
                        path=path,
                        heading=heading,
                        side=name,
                        rank=rank,
                        measures=labels[bit],
                    )
                )
        holes.sort(key=lambda h: (h.query_id, h.rank, h.side, h.doc))
        return holes

    return HoleList(make=make, count=total), counts
