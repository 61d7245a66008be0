"""Bounds: what a measure could be once the unjudged documents of the ranking are judged.

On a personal vault most retrieved sections carry no judgment, and
:func:`~askkit.metrics.evaluate` counts them as not relevant, as trec_eval
does. :func:`bounds` says how far each number could move: every unjudged
document in a query's ranking (no qrels line, or a qrels grade below 0, which
trec_eval reads as pooled but unjudged) is filled either as not relevant
(grade 0) or as relevant at grade ``grade`` (default the qrels' top grade),
and the lower and upper bounds are the least and the greatest value over
*every* such filling, per query and for the mean (the queries' fillings are
independent, so the mean's bounds are the means of the bounds).

The bounds are exact, not estimates, and they are not always the two
uniform fillings: filling an unjudged document as relevant raises R (the
relevant documents there are) and the ideal DCG, so AP, recall, R-precision
and nDCG can *fall* when a deep unjudged document turns out relevant, and
today's number (every unjudged document not relevant) is then not the lower
bound. Precision, hit and MRR only rise. :func:`bounds` finds the extremes by
an exchange argument: for a fixed number ``y`` of relevant fillings among a
ranking's top ``D`` (the measure's cutoff, or all of it), moving one to a
higher unjudged position never lowers any measure here, so the extremes lie
among the fillings that mark the first ``y`` or the last ``y`` unjudged
documents of the top ``D`` relevant, with every unjudged document below the
cutoff either relevant or not (they only change R, the ideal DCG and the
non-relevant count, each monotonically). Those ``4 (u + 1)`` fillings per
query (``u`` unjudged in the top ``D``) are scored with the measures' one
definition (:func:`~askkit.metrics.measures.compute`).
``tests/metrics/test_bounds.py`` checks every filling of small rankings.

A condensed measure (``ndcg'@10``) has the bounds of its plain form: once
every document of the ranking is judged the condensed list is the ranking.
Judged@k's bounds are its value: it measures the holes, not the run.

Examples
--------
>>> import pandas as pd
>>> run = pd.DataFrame({"turn_id": ["q"] * 3, "path": ["a.md", "u.md", "b.md"],
...                     "score": [3.0, 2.0, 1.0]})
>>> qrels = pd.DataFrame({"query_id": ["q", "q"], "path": ["a.md", "b.md"], "grade": [1, 0]})
>>> b = bounds(run, qrels, ["precision@2", "map"])
>>> b.table().round(3)
             value  lower  upper
precision@2    0.5    0.5    1.0
map            1.0    1.0    1.0
>>> int(b.unjudged.loc["q", "precision@2"])
1
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from askkit.frame.schema import STRING
from askkit.metrics.evaluate import DEFAULT_MEASURES, Missing, scorable
from askkit.metrics.ids import Level
from askkit.metrics.measures import (
    RELEVANT,
    Measure,
    _before,
    compute,
    counts_as_relevant,
    gain,
    ratio,
    trec_values,
)
from askkit.metrics.preparation import Prepared, Ties
from askkit.metrics.qrels import PathOrFrame
from askkit.metrics.ranked import IntArray, Ranked, group_rank

__all__ = ["MONOTONE", "Bounds", "bounds", "format_bounds"]

#: The kinds that never fall when an unjudged document is judged relevant (they do
#: not divide by R): their bounds are the two uniform fillings.
MONOTONE = frozenset({"precision", "hit", "mrr"})


@dataclass(frozen=True, slots=True, eq=False)
class Bounds:
    """What :func:`bounds` returns: each measure's value and bounds, per query and mean."""

    value: pd.DataFrame = field(repr=False)
    """Today's values (every unjudged document not relevant), as :func:`evaluate` gives them."""
    lower: pd.DataFrame = field(repr=False)
    """The least value over every filling of the unjudged documents, per query."""
    upper: pd.DataFrame = field(repr=False)
    """The greatest value over every filling, per query."""
    unjudged: pd.DataFrame = field(repr=False)
    """Per query and measure: the unjudged documents the bounds depend on (in its top D)."""
    depth: pd.DataFrame = field(repr=False)
    """Per query and measure: the documents retrieved in its top D (D: cutoff, or all)."""
    lower_fill: pd.DataFrame = field(repr=False)
    """The judgments that reach each lower bound: measure, query_id, doc, rank, grade."""
    upper_fill: pd.DataFrame = field(repr=False)
    """The judgments that reach each upper bound, as :attr:`lower_fill`."""
    holes: pd.DataFrame = field(repr=False)
    """Every unjudged document a bound depends on: query_id, doc, rank, measures (the
    names, comma-separated) and row (its position in the run frame scored), by query
    then rank: what to judge next."""
    measures: tuple[str, ...]
    grade: int
    level: Level

    @property
    def mean(self) -> pd.DataFrame:
        """One row per measure: ``value``, ``lower``, ``upper`` (means over the queries)
        and ``share``, the share of the retrieved top D that is unjudged."""
        return self.table()

    def table(self) -> pd.DataFrame:
        """The means as a frame indexed by measure: value, lower, upper."""
        return pd.DataFrame(
            {
                "value": self.value.mean(),
                "lower": self.lower.mean(),
                "upper": self.upper.mean(),
            },
            index=list(self.measures),
        ).astype(np.float64)

    def share(self) -> pd.Series:
        """Per measure: the unjudged documents over the documents retrieved in its top D,
        summed over the queries (what the bounds depend on)."""
        total = self.depth.sum()
        return (self.unjudged.sum() / total.where(total > 0)).fillna(0.0).astype(np.float64)

    def __str__(self) -> str:
        rows = ", ".join(
            f"{m}={format_bounds(r.value, r.lower, r.upper)}" for m, r in self.table().iterrows()
        )
        return f"Bounds({len(self.value)} queries, grade {self.grade}: {rows})"


def format_bounds(value: float, lower: float, upper: float, digits: int = 3) -> str:
    """``0.412 [0.412, 0.655]``: a value and its bounds.

    >>> format_bounds(0.4123, 0.4123, 0.65549)
    '0.412 [0.412, 0.655]'
    """
    return f"{value:.{digits}f} [{lower:.{digits}f}, {upper:.{digits}f}]"


def bounds(
    run: pd.DataFrame | Prepared,
    qrels: PathOrFrame | None = None,
    measures: Sequence[str] | str = DEFAULT_MEASURES,
    *,
    grade: int | None = None,
    level: Level | None = None,
    ties: Ties | None = None,
    missing: Missing = "drop",
    relevance_level: int = RELEVANT,
    max_docs_per_query: int | None = None,
) -> Bounds:
    """Each measure's lower and upper bound over every judging of the run's unjudged documents.

    Takes what :func:`~askkit.metrics.evaluate` takes, and ``grade``: the
    grade a relevant filling gets (default the highest grade in the qrels,
    at least 1). Every unjudged document in a query's ranking (after
    ``max_docs_per_query``) is either not relevant (grade 0) or relevant at
    ``grade``; the bounds are exact over all those fillings (see the module).
    Queries are those :func:`evaluate` scores (``missing`` as there).
    """
    parsed, prep = scorable(
        run, qrels, measures, level=level, ties=ties, missing=missing,
        max_docs_per_query=max_docs_per_query, caller="bounds",
    )  # fmt: skip
    if grade is None:
        top = int(prep.qrels_grade.max()) if len(prep.qrels_grade) else RELEVANT
        grade = max(top, RELEVANT)
    if grade < 0:
        raise ValueError(f"grade must be >= 0, got {grade}")
    n = len(prep.qids)
    r = prep.ranked
    value = trec_values(prep.grade, prep.judged)
    q, rank = r.query, r.rank
    rows = np.arange(len(q), dtype=np.int64)
    if max_docs_per_query is not None:
        top_rows = rank <= max_docs_per_query
        q, rank, value, rows = q[top_rows], rank[top_rows], value[top_rows], rows[top_rows]
    judged_q = prep.in_qrels
    keep = judged_q & prep.in_run if missing == "drop" else judged_q
    index = prep.qids[keep]
    names = [m.name for m in parsed]
    today = compute(
        parsed,
        n,
        r,
        prep.grade,
        qrels_query=prep.qrels_query,
        qrels_grade=prep.qrels_grade,
        relevance_level=relevance_level,
        judged=prep.judged,
        max_docs=max_docs_per_query,
    )
    low: dict[str, np.ndarray] = {}
    high: dict[str, np.ndarray] = {}
    unjudged: dict[str, np.ndarray] = {}
    depth: dict[str, np.ndarray] = {}
    fills: dict[str, list[pd.DataFrame]] = {"lower": [], "upper": []}
    holes: dict[str, np.ndarray] = {}  # per measure: which rows are its holes
    doc_ids = prep.docs.take(pa.array(r.doc[rows]))
    rows_ = _Rows(n, q, rank, value)
    for m in parsed:
        within = rank <= (m.k if m.k is not None else np.iinfo(np.int64).max)
        unj = value < 0
        unjudged[m.name] = np.bincount(q[within & unj], minlength=n)
        depth[m.name] = np.bincount(q[within], minlength=n)
        if m.kind == "judged":
            low[m.name] = high[m.name] = today[m.name]
            continue
        holes[m.name] = within & unj & keep[q]
        sweep = _sweep(m, rows_, within, grade=grade, prep=prep, level=relevance_level)
        low[m.name], high[m.name] = sweep.lower, sweep.upper
        for side, chosen in (("lower", sweep.lower_scenario), ("upper", sweep.upper_scenario)):
            fill = _fill_frame(m, sweep, chosen, rows_, keep=keep, prep=prep, docs=doc_ids)
            fills[side].append(fill.assign(grade=np.where(fill["grade"] > 0, grade, 0)))

    def frame(values: dict[str, np.ndarray]) -> pd.DataFrame:
        return pd.DataFrame({name: np.asarray(values[name])[keep] for name in names}, index=index)

    hole_frame = _hole_frame(holes, names, prep=prep, doc_ids=doc_ids, rows_=rows_, rows=rows)
    empty = pd.DataFrame(
        {
            "measure": pd.array([], dtype=STRING),
            "query_id": pd.array([], dtype=STRING),
            "doc": pd.array([], dtype=STRING),
            "rank": np.array([], dtype=np.int64),
            "grade": np.array([], dtype=np.int64),
        }
    )
    return Bounds(
        value=frame(today),
        lower=frame(low),
        upper=frame(high),
        unjudged=frame(unjudged).astype(np.int64),
        depth=frame(depth).astype(np.int64),
        lower_fill=pd.concat(fills["lower"], ignore_index=True) if fills["lower"] else empty,
        upper_fill=pd.concat(fills["upper"], ignore_index=True) if fills["upper"] else empty,
        holes=hole_frame,
        measures=tuple(names),
        grade=grade,
        level=prep.level,
    )


@dataclass(frozen=True, slots=True)
class _Sweep:
    """One measure's values over every candidate filling (scenario) of each query."""

    lower: np.ndarray
    upper: np.ndarray
    lower_scenario: np.ndarray  # per query: the scenario reaching the lower bound (-1: none)
    upper_scenario: np.ndarray
    scen_query: IntArray
    scen_y: IntArray
    scen_top: np.ndarray
    scen_beyond: np.ndarray
    u_in: IntArray
    # per row (of the rows given): 0-based index among its query's unjudged rows in the top D
    row_index: IntArray
    within: np.ndarray


def _hole_frame(
    holes: dict[str, np.ndarray],
    names: list[str],
    *,
    prep: Prepared,
    doc_ids: pa.Array | pa.ChunkedArray,
    rows_: _Rows,
    rows: IntArray,
) -> pd.DataFrame:
    """:attr:`Bounds.holes`: the rows (by query, then rank: the rows' own order) that
    are a hole of some measure, and the measures they are a hole of."""
    any_hole = np.zeros(len(rows_.q), dtype=bool)
    for mask in holes.values():
        any_hole |= mask
    at = np.flatnonzero(any_hole)
    label = pd.Series("", index=range(len(at)), dtype=object)
    for name in names:
        if name in holes:
            mine = holes[name][at]
            label = label.where(~mine, label + np.where(label == "", "", ", ") + name)
    return pd.DataFrame(
        {
            "query_id": _arrow(_qid_array(prep.qids).take(pa.array(rows_.q[at]))),
            "doc": _arrow(doc_ids.take(pa.array(at))),
            "rank": rows_.rank[at].astype(np.int64),
            "measures": _arrow(pa.array(label.to_numpy(dtype=str), pa.large_string())),
            "row": prep.ranked.rows[rows[at]].astype(np.int64),
        }
    )


def _qid_array(qids: pd.Index) -> pa.Array:
    """The query ids as one Arrow string array (codes index it)."""
    return pa.array(np.asarray(qids, dtype=object).astype(str), pa.large_string())


def _arrow(values: pa.Array | pa.ChunkedArray) -> Any:
    """Arrow strings as askkit's string column, without Python strings."""
    return pd.array(values, dtype=STRING)


def _repeated(text: str, n: int) -> Any:
    """``text`` ``n`` times, as askkit's string column."""
    codes = pa.array(np.zeros(n, dtype=np.int32))
    values = pa.DictionaryArray.from_arrays(codes, pa.array([text], pa.large_string()))
    return _arrow(values.cast(pa.large_string()))


def _expand(counts: IntArray) -> tuple[IntArray, IntArray]:
    """Item ``i`` repeated ``counts[i]`` times, and each copy's 0-based number.

    >>> [a.tolist() for a in _expand(np.array([2, 0, 3]))]
    [[0, 0, 2, 2, 2], [0, 1, 0, 1, 2]]
    """
    owner = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    first = np.cumsum(counts) - counts
    return owner, np.arange(len(owner), dtype=np.int64) - first[owner]


@dataclass(frozen=True, slots=True)
class _Rows:
    """The ranked rows bounds work on: ``n`` query codes; per row its query, rank
    and trec_eval value (below 0: unjudged), after ``max_docs_per_query``."""

    n: int
    q: IntArray
    rank: IntArray
    value: IntArray


def _scenarios(
    m: Measure, u_in: IntArray, u_out: IntArray
) -> tuple[IntArray, IntArray, np.ndarray, np.ndarray]:
    """The candidate fillings of each query (see the module): its code, ``y``, whether
    the first (else the last) ``y`` unjudged of the top D are relevant, and whether
    the unjudged below the cutoff are."""
    n = len(u_in)
    if m.kind in MONOTONE:  # only rises with each relevant filling: the two uniform ones
        scen_query, local = _expand(np.full(n, 2, dtype=np.int64))
        scen_y = np.where(local == 1, u_in[scen_query], 0)
        scen_top = np.ones(len(scen_query), dtype=bool)
        scen_beyond = np.zeros(len(scen_query), dtype=bool)
    else:
        beyond_choices = np.where(u_out > 0, 2, 1)
        count = (u_in + 1) * 2 * beyond_choices
        scen_query, local = _expand(count)
        t = local % beyond_choices[scen_query]
        rest = local // beyond_choices[scen_query]
        scen_top = rest % 2 == 0
        scen_y = rest // 2
        scen_beyond = t == 1
    return scen_query, scen_y, scen_top, scen_beyond


@dataclass(frozen=True, slots=True)
class _Depth:
    """A measure's depth D over the rows: which rows are in its top D, and per query its
    unjudged documents inside and below it; per row, its number among the unjudged
    inside (0-based)."""

    within: np.ndarray
    u_in: IntArray
    u_out: IntArray
    row_index: IntArray


def _scored(
    m: Measure,
    rows: _Rows,
    depth: _Depth,
    scenarios: tuple[IntArray, IntArray, np.ndarray, np.ndarray],
    *,
    grade: int,
    prep: Prepared,
    level: int,
) -> np.ndarray:
    """Each scenario's value, by the measures' one definition: each scenario is a
    query of its own, with its filled rows and judgments."""
    n, q, rank, value = rows.n, rows.q, rows.rank, rows.value
    scen_query, scen_y, scen_top, scen_beyond = scenarios
    within, u_in, u_out, row_index = depth.within, depth.u_in, depth.u_out, depth.row_index
    n_scen = len(scen_query)
    # the rows of each scenario: its query's rows in the top D
    wq, wrank, wvalue, wrow = q[within], rank[within], value[within], row_index[within]
    per_query = np.bincount(wq, minlength=n).astype(np.int64)
    start = np.cumsum(per_query) - per_query
    row_scen, offset = _expand(per_query[scen_query])
    src = start[scen_query][row_scen] + offset
    v, i = wvalue[src], wrow[src]
    s_y, s_top = scen_y[row_scen], scen_top[row_scen]
    s_u = u_in[scen_query][row_scen]
    hole = v < 0
    filled = hole & np.where(s_top, i < s_y, i >= s_u - s_y)
    new_value = np.where(hole, np.where(filled, grade, 0), v).astype(np.int64)
    # judgments: the query's own (one per document), then each filling's
    jq, jg = prep.qrels_query, prep.qrels_grade
    if m.kind in MONOTONE:  # they never read the judgments: R, the ideal DCG
        jq = jg = np.zeros(0, dtype=np.int64)
    by = np.argsort(jq, kind="stable")
    jq, jg = jq[by], jg[by]
    j_per = np.bincount(jq, minlength=n).astype(np.int64)
    j_start = np.cumsum(j_per) - j_per
    j_scen, j_off = _expand(j_per[scen_query])
    own_grade = jg[j_start[scen_query][j_scen] + j_off]
    fill_scen, fill_grade = row_scen[hole], new_value[hole]
    # below the cutoff only R (and, for nDCG@k, the ideal's top k) sees a filling: a
    # filling as not relevant changes neither, and nDCG@k's ideal takes k at most
    cap = u_out if m.kind != "ndcg" or m.k is None else np.minimum(u_out, m.k)
    out_scen, _ = _expand(np.where(scen_beyond, cap[scen_query], 0))
    out_grade = np.full(len(out_scen), grade, dtype=np.int64)
    all_q = np.concatenate([j_scen, fill_scen, out_scen])
    all_g = np.concatenate([own_grade, fill_grade, out_grade])
    ranked = Ranked(rows=src, query=row_scen, doc=src, rank=wrank[src], duplicates=0)
    values = compute(
        [Measure(m.name, m.kind, m.k)],  # condensed: every filled document is judged
        n_scen,
        ranked,
        new_value,
        qrels_query=all_q,
        qrels_grade=all_g,
        relevance_level=level,
        judged=np.ones(len(new_value), dtype=bool),
    )[m.name]
    return np.asarray(values, dtype=np.float64)


def _uniform(
    m: Measure,
    rows: _Rows,
    depth: _Depth,
    scenarios: tuple[IntArray, IntArray, np.ndarray, np.ndarray],
    *,
    grade: int,
    prep: Prepared,
    level: int,
) -> np.ndarray:
    """Each scenario's value of a measure that only rises (:data:`MONOTONE`): its two
    scenarios per query are every unjudged document not relevant, then all relevant,
    each scored once on the run's own rows (these measures read no judgments)."""
    del depth, prep
    n, q, rank, value = rows.n, rows.q, rows.rank, rows.value
    scen_query, scen_y = scenarios[0], scenarios[1]
    ranked = Ranked(rows=np.arange(len(q)), query=q, doc=np.arange(len(q)), rank=rank, duplicates=0)
    none = np.zeros(0, dtype=np.int64)
    plain = Measure(m.name, m.kind, m.k)
    unj = value < 0
    sides = [
        compute(
            [plain],
            n,
            ranked,
            np.where(unj, fill, value).astype(np.int64),
            qrels_query=none,
            qrels_grade=none,
            relevance_level=level,
            judged=np.ones(len(q), dtype=bool),
        )[m.name]
        for fill in (0, grade)
    ]
    first = np.r_[True, scen_query[1:] != scen_query[:-1]] if len(scen_query) else scen_query
    del scen_y
    return np.where(first, sides[0][scen_query], sides[1][scen_query])


def _closed(
    m: Measure,
    rows: _Rows,
    depth: _Depth,
    scenarios: tuple[IntArray, IntArray, np.ndarray, np.ndarray],
    *,
    grade: int,
    prep: Prepared,
    level: int,
) -> np.ndarray:
    """Each scenario's value of recall@k or nDCG@k in closed form, from per-query sums
    (no scenario is materialised): what :func:`_scored` gives, to rounding."""
    n, q, rank, value = rows.n, rows.q, rows.rank, rows.value
    k = int(m.k or 0)
    scen_query, scen_y, scen_top, scen_beyond = scenarios
    within, u_in, u_out = depth.within, depth.u_in, depth.u_out
    unj = value < 0
    extra = np.where(scen_beyond, u_out[scen_query], 0)
    if m.kind == "recall":
        counted = grade >= 0 and grade >= level  # a relevant filling counts in R
        judged = within & ~unj
        found = np.bincount(q[judged & (value >= level)], minlength=n).astype(np.float64)
        rel = counts_as_relevant(prep.qrels_grade, level)
        big_r = np.bincount(prep.qrels_query[rel], minlength=n).astype(np.float64)
        if not counted:
            return ratio(found[scen_query], big_r[scen_query])
        return ratio(found[scen_query] + scen_y, big_r[scen_query] + scen_y + extra)
    # nDCG@k: DCG = judged part + the filled discounts; ideal = top k of the judged
    # positive gains and one gain of `grade` per relevant filling
    disc = 1.0 / np.log2(np.arange(2, k + 2, dtype=np.float64))
    judged = within & ~unj
    base_dcg = np.bincount(
        q[judged], weights=gain(value[judged]) / np.log2(rank[judged] + 1.0), minlength=n
    )
    prefix = np.zeros((n, k + 1))
    holes = within & unj
    prefix[q[holes], _before(q, holes)[holes] + 1] = 1.0 / np.log2(rank[holes] + 1.0)
    np.cumsum(prefix, axis=1, out=prefix)
    total = prefix[np.arange(n), u_in]
    g = float(max(grade, 0))
    sq = scen_query
    top_part = prefix[sq, scen_y]
    bottom_part = total[sq] - prefix[sq, u_in[sq] - scen_y]
    dcg = base_dcg[sq] + g * np.where(scen_top, top_part, bottom_part)
    ideal = _ideal_table(prep, n, k, g, disc)
    c = np.minimum(scen_y + extra, k) if g > 0 else np.zeros(len(sq), dtype=np.int64)
    return ratio(dcg, ideal[sq, c])


def _ideal_table(prep: Prepared, n: int, k: int, g: float, disc: np.ndarray) -> np.ndarray:
    """Per query and count ``c`` (0..k) of fillings at gain ``g``: the ideal DCG@k of
    its judged positive gains with ``c`` gains ``g`` added."""
    gains = gain(prep.qrels_grade)
    positive = gains > 0
    jq, jg = prep.qrels_query[positive], gains[positive]
    by = np.lexsort((-jg, jq))
    jq, jg = jq[by], jg[by]
    pos = group_rank(jq) - 1
    keep = pos < k
    best = np.zeros((n, k))
    best[jq[keep], pos[keep]] = jg[keep]
    above = (best > g).sum(axis=1)  # judged gains ranked before the fillings
    i = np.arange(k)
    table = np.empty((n, k + 1))
    for c in range(k + 1):
        shifted = best[:, np.clip(i - c, 0, k - 1)]
        merged = np.where(
            i[None, :] < above[:, None],
            best,
            np.where(i[None, :] < above[:, None] + c, g, shifted),
        )
        table[:, c] = merged @ disc
    return table


def _sweep(
    m: Measure, rows: _Rows, within: np.ndarray, *, grade: int, prep: Prepared, level: int
) -> _Sweep:
    """Score measure ``m`` on every candidate filling of each query (see the module)."""
    n, q, value = rows.n, rows.q, rows.value
    unj = value < 0
    u_in = np.bincount(q[within & unj], minlength=n).astype(np.int64)
    u_out = np.bincount(q[~within & unj], minlength=n).astype(np.int64)
    row_index = _before(q, unj & within)
    depth = _Depth(within, u_in, u_out, row_index)
    # scenarios: y relevant fillings among the top D's unjudged (the first y, or the
    # last y), and the unjudged below the cutoff all relevant or all not
    scen_query, scen_y, scen_top, scen_beyond = _scenarios(m, u_in, u_out)
    closed = m.k is not None and m.kind in ("ndcg", "recall")
    score = _uniform if m.kind in MONOTONE else _closed if closed else _scored
    values = score(
        m,
        rows,
        depth,
        (scen_query, scen_y, scen_top, scen_beyond),
        grade=grade,
        prep=prep,
        level=level,
    )
    lower = np.full(n, np.inf)
    upper = np.full(n, -np.inf)
    np.minimum.at(lower, scen_query, values)
    np.maximum.at(upper, scen_query, values)
    lower_scen = np.full(n, -1, dtype=np.int64)
    upper_scen = np.full(n, -1, dtype=np.int64)
    # the first scenario reaching each bound (scenarios run in order per query)
    at_low = np.flatnonzero(values == lower[scen_query])
    at_high = np.flatnonzero(values == upper[scen_query])
    lower_scen[scen_query[at_low[::-1]]] = at_low[::-1]
    upper_scen[scen_query[at_high[::-1]]] = at_high[::-1]
    return _Sweep(
        lower=lower,
        upper=upper,
        lower_scenario=lower_scen,
        upper_scenario=upper_scen,
        scen_query=scen_query,
        scen_y=scen_y,
        scen_top=scen_top,
        scen_beyond=scen_beyond,
        u_in=u_in,
        row_index=row_index,
        within=within,
    )


def _fill_frame(
    m: Measure,
    sweep: _Sweep,
    chosen: np.ndarray,
    rows: _Rows,
    *,
    keep: np.ndarray,
    prep: Prepared,
    docs: pa.Array | pa.ChunkedArray,
) -> pd.DataFrame:
    """The judgments of every unjudged row that reach a bound: one per row, its grade
    (1 where the filling marks it relevant; the caller puts the grade in)."""
    q, rank, value, qids, doc_ids = rows.q, rows.rank, rows.value, prep.qids, docs
    at = np.flatnonzero((value < 0) & keep[q])
    s = chosen[q[at]]
    idx, inside = sweep.row_index[at], sweep.within[at]
    y, top, beyond = sweep.scen_y[s], sweep.scen_top[s], sweep.scen_beyond[s]
    u = sweep.u_in[q[at]]
    relevant = np.where(inside, np.where(top, idx < y, idx >= u - y), beyond)
    return pd.DataFrame(
        {
            "measure": _repeated(m.name, len(at)),
            "query_id": _arrow(_qid_array(qids).take(pa.array(q[at]))),
            "doc": _arrow(doc_ids.take(pa.array(at))),
            "rank": rank[at].astype(np.int64),
            "grade": relevant.astype(np.int64),
        }
    )
