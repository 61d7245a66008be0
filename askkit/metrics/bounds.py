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
higher unjudged position never lowers any measure here, and an unjudged
document below the cutoff judged relevant never raises one (it only adds to
R and the ideal DCG). So the greatest value lies among the fillings that mark
the first ``y`` unjudged documents of the top ``D`` relevant and none below,
and the least among those that mark the last ``y`` and every one below:
``2 (u + 1)`` fillings per query (``u`` unjudged in the top ``D``), scored
with the measures' one definition
(:func:`~askkit.metrics.measures.compute`), or for AP, nDCG@k and recall@k
read from per-query prefix sums, and for precision, hit and MRR, which only
rise, the two uniform fillings.
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

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from askkit.frame.schema import STRING
from askkit.metrics.evaluate import DEFAULT_MEASURES, Missing, scorable
from askkit.metrics.ids import Level
from askkit.metrics.measures import (
    INFAP_EPSILON,
    RELEVANT,
    Measure,
    _before,
    _Counts,
    compute,
    counts_as_relevant,
    gain,
    ratio,
    relevant,
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

    lower: pd.DataFrame = field(repr=False)
    """The least value over every filling of the unjudged documents, per query."""
    upper: pd.DataFrame = field(repr=False)
    """The greatest value over every filling, per query."""
    unjudged: pd.DataFrame = field(repr=False)
    """Per query and measure: the unjudged documents the bounds depend on (in its top D)."""
    depth: pd.DataFrame = field(repr=False)
    """Per query and measure: the documents retrieved in its top D (D: cutoff, or all)."""
    measures: tuple[str, ...]
    grade: int
    level: Level
    _rows: _Listing = field(repr=False, compare=False)
    _made: dict[str, pd.DataFrame] = field(default_factory=dict, repr=False, compare=False)

    @property
    def value(self) -> pd.DataFrame:
        """Today's values (every unjudged document not relevant), as :func:`evaluate`
        gives them (scored on first use)."""
        return self._listed("value")

    @property
    def lower_fill(self) -> pd.DataFrame:
        """The judgments that reach each lower bound: measure, query_id, doc, rank, grade
        (listed on first use: millions of rows on a large run)."""
        return self._listed("lower_fill")

    @property
    def upper_fill(self) -> pd.DataFrame:
        """The judgments that reach each upper bound, as :attr:`lower_fill`."""
        return self._listed("upper_fill")

    @property
    def holes(self) -> pd.DataFrame:
        """Every unjudged document a bound depends on: query_id, doc, rank, measures (the
        names, comma-separated) and row (its position in the run frame scored), by query
        then rank: what to judge next (listed on first use)."""
        return self._listed("holes")

    def _listed(self, what: str) -> pd.DataFrame:
        if what not in self._made:
            self._made[what] = self._rows.make(what)
        return self._made[what]

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

    def today(measures: list[Measure]) -> dict[str, np.ndarray]:
        return compute(
            measures,
            n,
            r,
            prep.grade,
            qrels_query=prep.qrels_query,
            qrels_grade=prep.qrels_grade,
            relevance_level=relevance_level,
            judged=prep.judged,
            max_docs=max_docs_per_query,
        )

    judged_kind = [m for m in parsed if m.kind == "judged"]  # bounded by their value
    judged_today = today(judged_kind) if judged_kind else {}
    low: dict[str, np.ndarray] = {}
    high: dict[str, np.ndarray] = {}
    unjudged: dict[str, np.ndarray] = {}
    depth: dict[str, np.ndarray] = {}
    chosen: list[tuple[Measure, _Sweep]] = []
    rows_ = _Rows(n, q, rank, value)
    all_unjudged = np.bincount(q[value < 0], minlength=n).astype(np.int64)
    for m in parsed:
        top_d = _depth(m, rows_, all_unjudged)
        unjudged[m.name] = top_d.u_in
        depth[m.name] = np.bincount(top_d.q, minlength=n)
        if m.kind == "judged":
            low[m.name] = high[m.name] = judged_today[m.name]
            continue
        sweep = _sweep(m, top_d, grade=grade, prep=prep, level=relevance_level)
        low[m.name], high[m.name] = sweep.lower, sweep.upper
        chosen.append((m, sweep))

    def frame(values: dict[str, np.ndarray]) -> pd.DataFrame:
        return pd.DataFrame({name: np.asarray(values[name])[keep] for name in names}, index=index)

    return Bounds(
        lower=frame(low),
        upper=frame(high),
        unjudged=frame(unjudged).astype(np.int64),
        depth=frame(depth).astype(np.int64),
        measures=tuple(names),
        grade=grade,
        level=prep.level,
        _rows=_Listing(prep, rows_, rows, keep, grade, names, chosen, lambda: frame(today(parsed))),
    )


@dataclass(frozen=True, slots=True)
class _Listing:
    """What :class:`Bounds` needs to list its fillings and holes when first asked:
    the rows scored and, per measure, the filling chosen at each bound."""

    prep: Prepared
    rows_: _Rows
    rows: IntArray  # each row's position among the prepared run's ranked rows
    keep: np.ndarray  # per query code: scored
    grade: int
    names: list[str]
    chosen: list[tuple[Measure, _Sweep]]
    value: Callable[[], pd.DataFrame]  # today's values

    def make(self, what: str) -> pd.DataFrame:
        """``value``, ``lower_fill``, ``upper_fill`` or ``holes`` as a frame."""
        if what == "value":
            return self.value()
        prep, rows_ = self.prep, self.rows_
        doc_ids = prep.docs.take(pa.array(prep.ranked.doc[self.rows]))
        if what == "holes":
            return _hole_frame(self, doc_ids)
        side = what.removesuffix("_fill")
        fills = [
            _fill_frame(m, sweep, side, rows_, keep=self.keep, prep=prep, docs=doc_ids)
            for m, sweep in self.chosen
        ]
        if not fills:
            return pd.DataFrame(
                {
                    "measure": pd.array([], dtype=STRING),
                    "query_id": pd.array([], dtype=STRING),
                    "doc": pd.array([], dtype=STRING),
                    "rank": np.array([], dtype=np.int64),
                    "grade": np.array([], dtype=np.int64),
                }
            )
        out = pd.concat(fills, ignore_index=True)
        out["grade"] = np.where(out["grade"].to_numpy() > 0, self.grade, 0)
        return out


@dataclass(frozen=True, slots=True)
class _Sweep:
    """One measure's bounds per query, and per query the filling (scenario) reaching
    each: ``y`` relevant among the top D's unjudged, the first ``y`` (``top``) or the
    last, and whether the unjudged below the cutoff are relevant (``beyond``)."""

    lower: np.ndarray
    upper: np.ndarray
    pick: dict[str, tuple[IntArray, np.ndarray, np.ndarray]]  # "lower"/"upper": y, top, beyond


def _within(m: Measure, rank: IntArray) -> np.ndarray:
    """Which rows lie in measure ``m``'s top D (its cutoff, or every row)."""
    return rank <= (m.k if m.k is not None else np.iinfo(np.int64).max)


def _hole_frame(listing: _Listing, doc_ids: pa.Array | pa.ChunkedArray) -> pd.DataFrame:
    """:attr:`Bounds.holes`: the rows (by query, then rank: the rows' own order) that
    are a hole of some measure, and the measures they are a hole of."""
    rows_, prep = listing.rows_, listing.prep
    hole = (rows_.value < 0) & listing.keep[rows_.q]
    holes = {m.name: hole & _within(m, rows_.rank) for m, _ in listing.chosen}
    any_hole = np.zeros(len(rows_.q), dtype=bool)
    for mask in holes.values():
        any_hole |= mask
    at = np.flatnonzero(any_hole)
    label = pd.Series("", index=range(len(at)), dtype=object)
    for name in listing.names:
        if name in holes:
            mine = holes[name][at]
            label = label.where(~mine, label + np.where(label == "", "", ", ") + name)
    return pd.DataFrame(
        {
            "query_id": _arrow(_qid_array(prep.qids).take(pa.array(rows_.q[at]))),
            "doc": _arrow(doc_ids.take(pa.array(at))),
            "rank": rows_.rank[at].astype(np.int64),
            "measures": _arrow(pa.array(label.to_numpy(dtype=str), pa.large_string())),
            "row": prep.ranked.rows[listing.rows[at]].astype(np.int64),
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
    the first ``y`` unjudged of the top D are relevant (a candidate for the upper
    bound) or the last ``y`` (for the lower), and whether the unjudged below the
    cutoff are. Per query, the upper candidates come first, then the lower.

    >>> [a.tolist() for a in _scenarios(Measure("map@2", "map", 2), np.array([1]), np.array([3]))]
    [[0, 0, 0, 0], [0, 1, 0, 1], [True, True, False, False], [False, False, True, True]]
    """
    n = len(u_in)
    if m.kind in MONOTONE:  # only rises with each relevant filling: the two uniform ones
        scen_query, local = _expand(np.full(n, 2, dtype=np.int64))
        scen_top = local == 0
        scen_y = np.where(scen_top, u_in[scen_query], 0)
        scen_beyond = np.zeros(len(scen_query), dtype=bool)
    else:
        width = u_in + 1
        scen_query, local = _expand(2 * width)
        scen_top = local < width[scen_query]
        scen_y = np.where(scen_top, local, local - width[scen_query])
        scen_beyond = ~scen_top & (u_out[scen_query] > 0)
    return scen_query, scen_y, scen_top, scen_beyond


@dataclass(frozen=True, slots=True)
class _Depth:
    """A measure's top D: its rows (query, rank, trec_eval value; grouped by query in
    rank order), per row its number among its query's unjudged rows there (0-based;
    for any row, the unjudged rows above it), and per query its unjudged documents
    inside the top D and below it."""

    q: IntArray
    rank: IntArray
    value: IntArray
    hole_index: IntArray
    u_in: IntArray
    u_out: IntArray


def _scored(
    m: Measure,
    depth: _Depth,
    scenarios: tuple[IntArray, IntArray, np.ndarray, np.ndarray],
    *,
    grade: int,
    prep: Prepared,
    level: int,
) -> np.ndarray:
    """Each scenario's value, by the measures' one definition: each scenario is a
    query of its own, with its filled rows and judgments."""
    scen_query, scen_y, scen_top, scen_beyond = scenarios
    wq, wrank, wvalue, wrow = depth.q, depth.rank, depth.value, depth.hole_index
    u_in, u_out = depth.u_in, depth.u_out
    n = len(u_in)
    n_scen = len(scen_query)
    # the rows of each scenario: its query's rows in the top D
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
    depth: _Depth,
    scenarios: tuple[IntArray, IntArray, np.ndarray, np.ndarray],
    *,
    grade: int,
    prep: Prepared,
    level: int,
) -> np.ndarray:
    """Each scenario's value of a measure that only rises (:data:`MONOTONE`): its two
    scenarios per query are every unjudged document not relevant, then all relevant,
    each scored once on the top D's rows that can count (these measures read no
    judgments and only the relevant rows)."""
    del prep
    n, q, rank, value = len(depth.u_in), depth.q, depth.rank, depth.value
    scen_query = scenarios[0]
    none = np.zeros(0, dtype=np.int64)
    plain = Measure(m.name, m.kind, m.k)
    unj = value < 0
    sides = []
    for fill in (0, grade):
        filled = np.where(unj, fill, value)
        at = np.flatnonzero(relevant(filled, level) | (filled > 0))
        ranked = Ranked(rows=at, query=q[at], doc=at, rank=rank[at], duplicates=0)
        sides.append(
            compute(
                [plain],
                n,
                ranked,
                filled[at].astype(np.int64),
                qrels_query=none,
                qrels_grade=none,
                relevance_level=level,
                judged=np.ones(len(at), dtype=bool),
            )[m.name]
        )
    return np.where(scenarios[2], sides[1][scen_query], sides[0][scen_query])


def _closed(
    m: Measure,
    depth: _Depth,
    scenarios: tuple[IntArray, IntArray, np.ndarray, np.ndarray],
    *,
    grade: int,
    prep: Prepared,
    level: int,
) -> np.ndarray:
    """Each scenario's value of recall@k or nDCG@k in closed form, from per-query sums
    (no scenario is materialised): what :func:`_scored` gives, to rounding."""
    q, rank, value, u_in, u_out = depth.q, depth.rank, depth.value, depth.u_in, depth.u_out
    n = len(u_in)
    k = int(m.k or 0)
    scen_query, scen_y, scen_top, scen_beyond = scenarios
    unj = value < 0
    extra = np.where(scen_beyond, u_out[scen_query], 0)
    if m.kind == "recall":
        counted = grade >= 0 and grade >= level  # a relevant filling counts in R
        found = np.bincount(q[~unj & (value >= level)], minlength=n).astype(np.float64)
        rel = counts_as_relevant(prep.qrels_grade, level)
        big_r = np.bincount(prep.qrels_query[rel], minlength=n).astype(np.float64)
        if not counted:
            return ratio(found[scen_query], big_r[scen_query])
        return ratio(found[scen_query] + scen_y, big_r[scen_query] + scen_y + extra)
    # nDCG@k: DCG = judged part + the filled discounts; ideal = top k of the judged
    # positive gains and one gain of `grade` per relevant filling
    disc = 1.0 / np.log2(np.arange(2, k + 2, dtype=np.float64))
    judged = ~unj
    base_dcg = np.bincount(
        q[judged], weights=gain(value[judged]) / np.log2(rank[judged] + 1.0), minlength=n
    )
    prefix = np.zeros((n, k + 1))
    prefix[q[unj], depth.hole_index[unj] + 1] = 1.0 / np.log2(rank[unj] + 1.0)
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


def _closed_ap(
    depth: _Depth, *, prep: Prepared, level: int, kind: str = "map"
) -> tuple[np.ndarray, np.ndarray]:
    """Each candidate's AP (``map``, ``map@k``) or infAP in closed form, for a
    relevant filling that counts (``grade >= level >= 1``): what :func:`_scored`
    gives, to rounding. Per query, ``u + 1`` upper candidates (the first ``y``
    unjudged relevant, none below the cutoff) and ``u + 1`` lower ones (the last
    ``y``, every one below), both by ``y``, laid query after query.

    Once every row is judged, both are ``S / R`` with ``S`` a sum over the relevant
    rows of ``alpha + beta * r``, ``r`` the relevant rows above it and ``alpha``,
    ``beta`` set by its rank: AP's ``(r + 1) / rank``, and infAP's term (its pooled
    rows are all judged now, so ``a = r + n = j``):
    ``1/(j+1) + j/(j+1) * (r + e) / (j + 2e)``. With the first ``y`` unjudged rows
    relevant, a judged relevant row with ``c`` unjudged rows above it counts
    ``min(c, y)`` more of them, and an unjudged row of number ``h < y`` adds its own
    term; with the last ``y`` (``t = u - y`` not), ``max(0, c - t)`` and the rows
    ``h >= t``. So ``S`` is read from four per-query prefix sums over ``c`` and
    ``h``, a few lookups a candidate.
    """
    q, rank, value, hb, u_in = depth.q, depth.rank, depth.value, depth.hole_index, depth.u_in
    n = len(u_in)
    if kind == "infap":
        j = rank.astype(np.float64) - 1.0
        beta = j / ((j + 1.0) * (j + 2 * INFAP_EPSILON))
        alpha = 1.0 / (j + 1.0) + beta * INFAP_EPSILON
    else:
        alpha = beta = 1.0 / rank.astype(np.float64)
    hole = value < 0
    rel = relevant(value, level) & ~hole
    above = _before(q, rel)  # judged relevant rows above each row
    base = np.bincount(q[rel], weights=(alpha + beta * above)[rel], minlength=n)
    width = u_in + 1  # a table of u + 1 slots per query: c (or h + 1) from 0 to u
    off = np.cumsum(width) - width
    r_slot = off[q[rel]] + hb[rel]
    h_slot = off[q[hole]] + hb[hole] + 1
    size = int(width.sum())
    a_tab, b_tab, e_tab, f_tab = _segment_cumsum(
        np.stack(
            [
                np.bincount(r_slot, weights=(hb * beta)[rel], minlength=size),
                np.bincount(r_slot, weights=beta[rel], minlength=size),
                np.bincount(h_slot, weights=(alpha + beta * (above + hb))[hole], minlength=size),
                np.bincount(h_slot, weights=beta[hole], minlength=size),
            ]
        ),
        width,
    )
    # per slot off + j: S with the first j unjudged relevant (an upper candidate),
    # and with the last j (a lower one: t = u - j not relevant, read at slot off + t)
    local = np.arange(size, dtype=np.int64) - np.repeat(off, width)
    last = np.repeat(off + u_in, width)
    t_slot = last - local
    s_top = a_tab + local * (b_tab[last] - b_tab) + e_tab
    s_bottom = (
        a_tab[last]
        - a_tab[t_slot]
        - (u_in.repeat(width) - local) * (b_tab[last] - b_tab[t_slot])
        + e_tab[last]
        - e_tab[t_slot]
        - (u_in.repeat(width) - local) * (f_tab[last] - f_tab[t_slot])
    )
    counted = counts_as_relevant(prep.qrels_grade, level)
    big_r = np.bincount(prep.qrels_query[counted], minlength=n)
    base_r = np.repeat(base, width), np.repeat(big_r, width) + local
    top = ratio(base_r[0] + s_top, base_r[1].astype(np.float64))
    below = np.repeat(depth.u_out, width)
    bottom = ratio(base_r[0] + s_bottom, (base_r[1] + below).astype(np.float64))
    return top, bottom


def _closed_bpref(depth: _Depth, *, prep: Prepared, level: int) -> tuple[np.ndarray, np.ndarray]:
    """Each candidate's bpref in closed form, for a relevant filling that counts
    (``grade >= level >= 1``), laid out as :func:`_closed_ap`'s: what :func:`_scored`
    gives, to rounding.

    bpref is ``(K - G / min(N, R)) / R``: ``K`` the relevant rows, ``R`` and ``N``
    the relevant and non-relevant judgments (each filling adds one), and ``G`` the
    sum over the relevant rows of ``min(n, R)``, ``n`` the non-relevant rows above.
    A judged relevant row with ``nj`` judged non-relevant and ``c`` unjudged rows
    above it has ``n = nj + max(0, c - y)`` with the first ``y`` unjudged relevant,
    ``nj + min(c, t)`` with the last ``y`` (``t = u - y`` not); an unjudged row of
    number ``h`` filled relevant has ``nj`` (first ``y``) or ``nj + t`` (last).
    ``nj``, ``nj + c`` and ``c`` never fall down a ranking, so each part of ``G`` is
    a sum of ``min(s, T)`` over a stretch of a sorted sequence: a search and two
    prefix sums, in whole numbers.
    """
    q, value, hb, u_in = depth.q, depth.value, depth.hole_index, depth.u_in
    n = len(u_in)
    hole = value < 0
    rel = relevant(value, level) & ~hole
    nonrel = (value >= 0) & ~rel
    nj = _before(q, nonrel)
    counted = counts_as_relevant(prep.qrels_grade, level)
    big_r0 = np.bincount(prep.qrels_query[counted], minlength=n)
    not_rel = (prep.qrels_grade >= 0) & ~counted
    big_n0 = np.bincount(prep.qrels_query[not_rel], minlength=n)
    j_q, j_nj, j_c = q[rel], nj[rel], hb[rel]  # the judged relevant rows, in order
    h_q, h_nj = q[hole], nj[hole]  # the unjudged rows
    n_j = np.bincount(j_q, minlength=n)
    j_start = np.cumsum(n_j) - n_j
    h_start = np.cumsum(u_in) - u_in
    width = u_in + 1
    cq = np.repeat(np.arange(n, dtype=np.int64), width)  # each candidate's query
    y = np.arange(len(cq), dtype=np.int64) - np.repeat(np.cumsum(width) - width, width)
    u, t = u_in[cq], u_in[cq] - y
    big_r = big_r0[cq] + y
    big_n = big_n0[cq] + t
    lo_j, hi_j = j_start[cq], j_start[cq] + n_j[cq]
    lo_h = h_start[cq]
    by_c = _Sorted(j_q, j_c)
    s1, s2, s3 = _Sorted(j_q, j_nj), _Sorted(j_q, j_nj + j_c), _Sorted(h_q, h_nj)
    # the first y unjudged relevant
    m1 = by_c.count_at_most(cq, y, lo_j)
    g_top = (
        s1.sum_min(cq, lo_j, lo_j + m1, big_r)
        + s2.sum_min(cq, lo_j + m1, hi_j, big_r + y)
        - y * (n_j[cq] - m1)
        + s3.sum_min(cq, lo_h, lo_h + y, big_r)
    )
    # the last y: t = u - y first unjudged not relevant
    m2 = by_c.count_at_most(cq, t, lo_j)
    g_bottom = (
        s2.sum_min(cq, lo_j, lo_j + m2, big_r)
        + s1.sum_min(cq, lo_j + m2, hi_j, big_r - t)
        + t * (n_j[cq] - m2)
        + s3.sum_min(cq, lo_h + t, lo_h + u, big_r - t)
        + t * y
    )
    k = (n_j[cq] + y).astype(np.float64)
    m = np.minimum(big_n, big_r).astype(np.float64)
    safe = np.where(m > 0, m, 1.0)
    top = ratio(k - np.where(m > 0, g_top / safe, 0.0), big_r.astype(np.float64))
    bottom = ratio(k - np.where(m > 0, g_bottom / safe, 0.0), big_r.astype(np.float64))
    return top, bottom


@dataclass(frozen=True, slots=True)
class _Sorted:
    """Per query, a sequence of whole numbers that never falls (rows grouped by query
    in order), searchable across queries at once: each query's values are keyed
    ``query * span + value``, so one sorted array holds them all."""

    keys: IntArray
    prefix: IntArray  # the values' running sum, 0 first
    span: int

    def __init__(self, query: IntArray, values: IntArray) -> None:
        span = int(values.max()) + 2 if len(values) else 2
        object.__setattr__(self, "span", span)
        object.__setattr__(self, "keys", query * span + values)
        object.__setattr__(self, "prefix", np.r_[0, np.cumsum(values, dtype=np.int64)])

    def _first_at_least(self, query: IntArray, bound: IntArray) -> IntArray:
        """Per ask: the first position of ``query``'s values that is ``>= bound``
        (its end when none is)."""
        needle = query * self.span + np.clip(bound, -1, self.span - 1)
        return np.searchsorted(self.keys, needle, side="left").astype(np.int64)

    def count_at_most(self, query: IntArray, bound: IntArray, lo: IntArray) -> IntArray:
        """How many of ``query``'s values (from position ``lo``, its first) are ``<= bound``."""
        return self._first_at_least(query, bound + 1) - lo

    def sum_min(self, query: IntArray, lo: IntArray, hi: IntArray, cap: IntArray) -> IntArray:
        """The sum of ``min(value, cap)`` over positions ``lo`` to ``hi`` (a stretch of
        ``query``'s values)."""
        p = np.clip(self._first_at_least(query, cap), lo, np.maximum(lo, hi))
        hi = np.maximum(lo, hi)
        return self.prefix[p] - self.prefix[lo] + cap * (hi - p)


def _segment_cumsum(values: np.ndarray, width: IntArray) -> np.ndarray:
    """The running sums of each row of ``values`` within each segment (``width``
    slots each, laid end to end), each from its own segment's start: summed as rows
    of a table, so no segment carries another's rounding.

    >>> _segment_cumsum(np.array([[1.0, 2, 3, 4, 5]]), np.array([2, 0, 3])).tolist()
    [[1.0, 3.0, 3.0, 7.0, 12.0]]
    """
    out = np.empty_like(values)
    widest = int(width.max()) if len(width) else 0
    if widest == 0:
        return out
    step = max(1, (1 << 22) // (widest * len(values)))  # some 4 million cells a table
    edges = np.cumsum(width) - width
    for a in range(0, len(width), step):
        w = width[a : a + step]
        lo, hi = int(edges[a]), int(edges[a] + w.sum())
        wide = int(w.max())
        # each slot's cell: its segment's row, its place in the segment
        cell = np.repeat(np.arange(len(w), dtype=np.int64) * wide - (edges[a : a + step] - lo), w)
        cell += np.arange(hi - lo, dtype=np.int64)
        flat = np.zeros((len(values), len(w) * wide))
        flat[:, cell] = values[:, lo:hi]
        table = flat.reshape(len(values), len(w), wide)  # a view: summed in place
        np.cumsum(table, axis=2, out=table)
        out[:, lo:hi] = flat[:, cell]
    return out


def _ideal_table(prep: Prepared, n: int, k: int, g: float, disc: np.ndarray) -> np.ndarray:
    """Per query and count ``c`` (0..k) of fillings at gain ``g``: the ideal DCG@k of
    its judged positive gains with ``c`` gains ``g`` added."""
    # each query's judgments with a gain, best first, k at most (as the ideal DCG takes them)
    jq, grades = _Counts.of(prep.qrels_query, prep.qrels_grade, n, RELEVANT).best_first(k)
    positive = grades > 0
    jq, jg = jq[positive], gain(grades[positive])
    dq, dg = np.diff(jq), np.diff(jg)
    if not np.all((dq > 0) | ((dq == 0) & (dg <= 0))):  # too many grades to count
        by = np.lexsort((-jg, jq))
        jq, jg = jq[by], jg[by]
    pos = group_rank(jq) - 1
    keep = pos < k
    best = np.zeros((n, k))
    best[jq[keep], pos[keep]] = jg[keep]
    above = (best > g).sum(axis=1)  # judged gains ranked before the fillings
    i = np.arange(k)
    before = i[None, :] < above[:, None]
    # ideal(c) = the gains above g in place + c gains g after them + the rest moved
    # down c places (the first k - c of them)
    head = np.where(before, best, 0.0) @ disc
    rest = np.where(before, 0.0, best)  # the gains of g and below, still in place
    # the rest moved c places down: column j to j + c (columns before `above` are 0
    # in it), the last c falling out of the top k; one product for every c
    shift = i[:, None] + np.arange(k + 1)[None, :]
    moved = rest @ np.where(shift < k, disc[np.minimum(shift, k - 1)], 0.0)
    cum = np.r_[0.0, np.cumsum(disc)]
    ends = np.minimum(above[:, None] + np.arange(k + 1)[None, :], k)
    filled = g * (cum[ends] - cum[above][:, None])
    return np.asarray(head[:, None] + filled + moved, dtype=np.float64)


def _depth(m: Measure, rows: _Rows, all_unjudged: IntArray) -> _Depth:
    """Measure ``m``'s top D over the rows (``all_unjudged``: each query's unjudged rows)."""
    q, value = rows.q, rows.value
    if m.k is None:  # every row
        wq, wrank, wvalue = q, rows.rank, value
    else:
        at = np.flatnonzero(rows.rank <= m.k)
        wq, wrank, wvalue = q[at], rows.rank[at], value[at]
    wunj = wvalue < 0
    u_in = np.bincount(wq[wunj], minlength=rows.n).astype(np.int64)
    return _Depth(wq, wrank, wvalue, _before(wq, wunj), u_in, all_unjudged - u_in)


def _sweep(m: Measure, depth: _Depth, *, grade: int, prep: Prepared, level: int) -> _Sweep:
    """Score measure ``m`` on every candidate filling of each query (see the module)."""
    u_in, u_out = depth.u_in, depth.u_out
    n = len(u_in)
    # the candidates: y relevant fillings among the top D's unjudged, the first y
    # (upper) or the last y (lower); per query u + 1 of each, by y (one of each for
    # the measures that only rise)
    monotone = m.kind in MONOTONE
    width = np.ones(n, dtype=np.int64) if monotone else u_in + 1
    if m.kind in ("map", "infap") and grade >= level >= 1:
        upper_v, lower_v = _closed_ap(depth, prep=prep, level=level, kind=m.kind)
    elif m.kind == "bpref" and grade >= level >= 1:
        upper_v, lower_v = _closed_bpref(depth, prep=prep, level=level)
    else:
        scen = _scenarios(m, u_in, u_out)
        closed = m.k is not None and m.kind in ("ndcg", "recall")
        score = _uniform if monotone else _closed if closed else _scored
        values = score(m, depth, scen, grade=grade, prep=prep, level=level)
        upper_v, lower_v = values[scen[2]], values[~scen[2]]  # each in query order, by y
    if not n:
        return _Sweep(lower=np.zeros(0), upper=np.zeros(0), pick={})
    off = np.cumsum(width) - width
    lower = np.minimum.reduceat(lower_v, off)
    upper = np.maximum.reduceat(upper_v, off)
    local = np.arange(int(width.sum()), dtype=np.int64) - np.repeat(off, width)
    pick: dict[str, tuple[IntArray, np.ndarray, np.ndarray]] = {}
    for side, v, bound in (("lower", lower_v, lower), ("upper", upper_v, upper)):
        # the side's first candidate (least y) reaching the bound
        first = np.minimum.reduceat(
            np.where(v == np.repeat(bound, width), local, np.iinfo(np.int64).max), off
        )
        top = side == "upper"
        y = (u_in if top else np.zeros(n, dtype=np.int64)) if monotone else first
        beyond = np.zeros(n, dtype=bool) if top or monotone else u_out > 0
        pick[side] = (y, np.full(n, top), beyond)
    return _Sweep(lower=lower, upper=upper, pick=pick)


def _fill_frame(
    m: Measure,
    sweep: _Sweep,
    side: str,
    rows: _Rows,
    *,
    keep: np.ndarray,
    prep: Prepared,
    docs: pa.Array | pa.ChunkedArray,
) -> pd.DataFrame:
    """The judgments of every unjudged row that reach ``side``'s bound: one per row,
    its grade (1 where the filling marks it relevant; the caller puts the grade in)."""
    q, rank, value, qids, doc_ids = rows.q, rows.rank, rows.value, prep.qids, docs
    unj = value < 0
    within = _within(m, rank)
    row_index = _before(q, unj & within)
    u_in = np.bincount(q[within & unj], minlength=rows.n)
    at = np.flatnonzero(unj & keep[q])
    qa = q[at]
    y_, top_, beyond_ = sweep.pick[side]
    y, top, beyond = y_[qa], top_[qa], beyond_[qa]
    idx, inside, u = row_index[at], within[at], u_in[qa]
    relevant = np.where(inside, np.where(top, idx < y, idx >= u - y), beyond)
    return pd.DataFrame(
        {
            "measure": _repeated(m.name, len(at)),
            "query_id": _arrow(_qid_array(qids).take(pa.array(qa))),
            "doc": _arrow(doc_ids.take(pa.array(at))),
            "rank": rank[at].astype(np.int64),
            "grade": relevant.astype(np.int64),
        }
    )
