"""Where each judged section stops, for many queries at once, columnar over the pools frame.

:func:`trace_pools` reads the long pool frame (:data:`askkit.ranking.POOL_COLUMNS`,
scores as kimun cuts them) and the judgments, and gives one row per relevant
section with the stage it stopped at (``pool``, ``cut`` or ``context``), its
best rank in its query's pool, its score and the query's cut length. The
cut lengths are :class:`askkit.ranking._columnar.Kernels`' (held equal to
:func:`askkit.ranking.cut_len` by the ranking tests); no Python loop runs
per query. :func:`trace_pools_reference` is the same, one query at a time
through :func:`~askkit.trace.trace_pool`: the specification, and the
benchmark's baseline.

Examples
--------
>>> pools = pd.DataFrame({"query_id": ["q1"] * 4, "rank": [1, 2, 3, 4],
...                       "path": ["a.md", "b.md", "c.md", "d.md"],
...                       "score": [0.9, 0.8, 0.3, 0.1], "title": ["A", "B", "C", "D"]})
>>> qrels = pd.DataFrame({"query_id": ["q1"] * 3, "path": ["a.md", "c.md", "z.md"],
...                       "heading": ["A", "C", "Z"], "grade": [2, 1, 1]})
>>> trace_pools(pools, qrels)[["section", "stopped", "rank", "cut_len"]]
  section  stopped  rank  cut_len
0  a.md#A  context     1        2
1  c.md#C      cut     3        2
2  z.md#Z     pool  <NA>        2
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from askkit.errors import SchemaError
from askkit.frame.schema import STRING
from askkit.metrics.measures import relevant
from askkit.metrics.qrels import PathOrFrame, read_qrels
from askkit.ranking import CutSettings, PoolCuts, cut_len, pool_of
from askkit.sources import innermost_heading
from askkit.trace.interest import Interest, printed_path
from askkit.trace.stages import STAGE_DTYPE, trace_pool

__all__ = [
    "SECTION_COLUMNS",
    "SectionPools",
    "graded_sections",
    "query_grades",
    "relevant_sections",
    "trace_pools",
    "trace_pools_reference",
]

#: One row per section of interest: where it stopped and the numbers that decided it.
SECTION_COLUMNS: dict[str, Any] = {
    "query_id": STRING,
    "section": STRING,
    "path": STRING,
    "heading": STRING,
    "grade": np.dtype("int64"),
    "stopped": STAGE_DTYPE,
    "passed": np.dtype("bool"),
    "rank": pd.Int64Dtype(),
    "score": np.dtype("float64"),
    "cut_len": np.dtype("int64"),
}


def graded_sections(qrels: PathOrFrame, queries: Any = None) -> pd.DataFrame:
    """Every section the qrels grade, one row per query and section, with its highest grade.

    A grade below 0 is kept: trec_eval reads it as "pooled but unjudged", so
    such a section is not judged (:func:`~askkit.trace.unjudged_above`). ``queries``
    (an iterable of ids) keeps only those queries. A blank heading stands for
    the whole note; a path is printed as kimun prints it
    (:func:`~askkit.trace.printed_path`), as :func:`~askkit.trace.sections_of` does.

    >>> qrels = pd.DataFrame({"query_id": ["q1", "q1", "q1"], "path": ["a.md", "B.md", "a.md"],
    ...                       "heading": ["A", "", "A"], "grade": [1, -1, 2]})
    >>> graded_sections(qrels)[["query_id", "section", "grade"]]
      query_id section  grade
    0       q1    b.md     -1
    1       q1  a.md#A      2
    """
    frame = read_qrels(qrels)
    if queries is not None:
        frame = frame[frame["query_id"].astype(str).isin([str(q) for q in queries])]
    heading = (
        frame["heading"].astype(object).where(frame["heading"].notna(), "")
        if "heading" in frame.columns
        else pd.Series("", index=frame.index, dtype=object)
    )
    raw = frame["path"].astype(str)
    printed = {p: printed_path(p) for p in raw.unique()}  # typed as on disk or as kimun prints
    path = raw.map(printed)
    heading = heading.astype(str)
    section = path.where(heading == "", path + "#" + heading)
    out = pd.DataFrame(
        {
            "query_id": frame["query_id"].astype(str).to_numpy(),
            "section": section.to_numpy(),
            "path": path.to_numpy(),
            "heading": heading.where(heading != "", None).to_numpy(),
            "grade": frame["grade"].to_numpy(dtype=np.int64),
        }
    )
    out = out.sort_values("grade", ascending=False, kind="stable")
    out = out.drop_duplicates(["query_id", "section"]).sort_index(kind="stable")
    return out.reset_index(drop=True).astype(
        {"query_id": STRING, "section": STRING, "path": STRING, "heading": STRING}
    )


def query_grades(qrels: PathOrFrame, queries: Any = None) -> dict[str, dict[Interest, int]]:
    """Each query's judgments as a trace takes them (``grades`` of
    :func:`~askkit.trace.trace_pool`): every graded note or section
    (:func:`graded_sections`) with its highest grade.

    >>> qrels = pd.DataFrame({"query_id": ["q1", "q1"], "path": ["a.md", "b.md"],
    ...                       "heading": ["A", ""], "grade": [1, -1]})
    >>> query_grades(qrels)
    {'q1': {Interest(path='a.md', heading='A'): 1, Interest(path='b.md', heading=None): -1}}
    """
    graded = graded_sections(qrels, queries)
    heading = graded["heading"].astype(object)
    out: dict[str, dict[Interest, int]] = {}
    for query_id, path, head, grade in zip(
        graded["query_id"].astype(str),
        graded["path"].astype(str),
        heading.where(heading.notna(), None),
        graded["grade"].to_numpy(dtype=np.int64).tolist(),
        strict=True,
    ):
        out.setdefault(query_id, {})[Interest(path, head)] = grade
    return out


def relevant_sections(qrels: PathOrFrame, queries: Any = None) -> pd.DataFrame:
    """The judged relevant sections (grade >= 1), one row per query and section.

    :func:`graded_sections` with a relevant highest grade: ``queries`` (an
    iterable of ids) keeps only those queries, a blank heading stands for the
    whole note, a path is printed as kimun prints it.

    >>> qrels = pd.DataFrame({"query_id": ["q1", "q1"], "path": ["a.md", "b.md"],
    ...                       "heading": ["A", ""], "grade": [1, 0]})
    >>> relevant_sections(qrels)[["query_id", "section", "grade"]]
      query_id section  grade
    0       q1  a.md#A      1
    """
    graded = graded_sections(qrels, queries)
    return graded[relevant(graded["grade"].to_numpy(dtype=np.int64))].reset_index(drop=True)


def _headings(titles: pd.Series) -> np.ndarray[Any, Any]:
    """Each title's innermost heading, computed once per distinct title."""
    codes, uniques = pd.factorize(titles.astype(str), sort=False)
    inner = np.array([innermost_heading(t) for t in uniques], dtype=object)
    return inner[codes] if len(codes) else np.zeros(0, dtype=object)


def _check(pools: pd.DataFrame) -> None:
    missing = [c for c in ("query_id", "path", "score", "title") if c not in pools.columns]
    if missing:
        raise SchemaError(
            "pools need columns query_id, path, score and title (askkit.ranking.POOL_COLUMNS): "
            "one row per chunk of each query's ranked pool",
            field="columns",
            value=missing,
        )


class SectionPools:
    """Many queries' pools with each section's best position: cut them again and again.

    The cut lengths are :class:`askkit.ranking.PoolCuts`' (equal to
    :func:`askkit.ranking.cut_len`); each section's best chunk is found by
    one hash lookup over the pool rows.
    """

    def __init__(self, pools: pd.DataFrame, sections: pd.DataFrame) -> None:
        _check(pools)
        self.cuts = PoolCuts(pools) if len(pools) else None
        qids = pd.Index([] if self.cuts is None else self.cuts.query_ids)
        qcode = qids.get_indexer(pd.Index(pools["query_id"].astype(str)))
        order = None if self.cuts is None else self.cuts.order
        rows = pools if order is None else pools.iloc[order]
        qcode = qcode if order is None else qcode[order]
        begin = np.zeros(0, np.int64) if self.cuts is None else self.cuts.begin
        position = np.arange(len(rows), dtype=np.int64) - begin[qcode]
        path = rows["path"].astype(str).to_numpy(dtype=object)
        heading = _headings(rows["title"])
        score = rows["score"].to_numpy(dtype=np.float64)
        s_query = qids.get_indexer(pd.Index(sections["query_id"].astype(str)))
        s_path = sections["path"].astype(str).to_numpy(dtype=object)
        s_head = sections["heading"].astype(object).to_numpy()
        whole = np.asarray(pd.isna(s_head), dtype=bool)
        at = np.full(len(sections), -1, dtype=np.int64)
        for mask, keys, wanted in (
            (whole, [qcode, path], [s_query, s_path]),
            (~whole, [qcode, path, heading], [s_query, s_path, s_head]),
        ):
            if not mask.any() or not len(rows):
                continue
            index = pd.MultiIndex.from_arrays(keys)
            firsts = np.flatnonzero(~index.duplicated())
            found = index[firsts].get_indexer(pd.MultiIndex.from_arrays([w[mask] for w in wanted]))
            at[mask] = np.where(found >= 0, firsts[np.maximum(found, 0)], -1)
        self.sections = sections.reset_index(drop=True)
        self.query = s_query
        self.position = np.where(at >= 0, position[np.maximum(at, 0)] if len(rows) else -1, -1)
        self.score = np.where(at >= 0, score[np.maximum(at, 0)] if len(rows) else np.nan, np.nan)

    def _cut(self, settings: CutSettings) -> np.ndarray[Any, Any]:
        if self.cuts is None:
            return np.zeros(len(self.query), dtype=np.int64)
        lengths = self.cuts.cut_len(settings)
        return np.where(self.query >= 0, lengths[np.maximum(self.query, 0)], 0)

    def kept(self, settings: CutSettings) -> np.ndarray[Any, Any]:
        """Per section, whether ``settings``' cut keeps it (False when outside the pool)."""
        return np.asarray((self.position >= 0) & (self.position < self._cut(settings)))

    def frame(self, settings: CutSettings) -> pd.DataFrame:
        """:data:`SECTION_COLUMNS` under ``settings``."""
        cut = self._cut(settings)
        in_pool = self.position >= 0
        kept = in_pool & (self.position < cut)
        stopped = np.where(~in_pool, "pool", np.where(kept, "context", "cut"))
        out = self.sections.copy()
        out["stopped"] = pd.Categorical(stopped, dtype=STAGE_DTYPE)
        out["passed"] = kept
        rank = pd.array(self.position + 1, dtype=pd.Int64Dtype())
        rank[~in_pool] = pd.NA
        out["rank"] = rank
        out["score"] = self.score
        out["cut_len"] = cut.astype(np.int64)
        return out[list(SECTION_COLUMNS)].astype(SECTION_COLUMNS)


def trace_pools(
    pools: pd.DataFrame, qrels: PathOrFrame, settings: CutSettings | None = None
) -> pd.DataFrame:
    """Where each judged relevant section stops in its query's pool, for every query at once.

    Parameters
    ----------
    pools:
        The long pool frame: ``query_id``, ``path``, ``score`` (as kimun cuts:
        the vector score, or the reranker's), ``title``, optionally ``rank``.
        Each query's rows are its pool (de-duplicated), best first.
    qrels:
        Judgments (:func:`askkit.metrics.read_qrels`); the relevant rows of
        the queries with a pool row or a judgment are followed.
    settings:
        The server's cut settings (default kimun's).

    Returns
    -------
    pandas.DataFrame
        :data:`SECTION_COLUMNS`, one row per relevant section: ``stopped``
        (``pool``: no chunk of it in the pool; ``cut``: the cut drops its best
        chunk; ``context``: it is in the answer's context, ``passed``),
        ``rank`` (its best chunk's pool rank), ``score``, ``cut_len`` (the
        query's context size).
    """
    settings = CutSettings() if settings is None else settings
    sections = relevant_sections(qrels)
    return SectionPools(pools, sections).frame(settings)


def trace_pools_reference(
    pools: pd.DataFrame, qrels: PathOrFrame, settings: CutSettings | None = None
) -> pd.DataFrame:
    """:func:`trace_pools`, one query at a time through :func:`~askkit.trace.trace_pool`.

    The specification :func:`trace_pools` is held equal to (and the
    benchmark's baseline): slow, a Python loop per query.
    """
    settings = CutSettings() if settings is None else settings
    _check(pools)
    sections = relevant_sections(qrels)
    ordered = pools
    if "rank" in pools.columns:
        ordered = pools.sort_values(["rank"], kind="stable")
    grouped = {str(q): group for q, group in ordered.groupby("query_id", sort=False, observed=True)}
    rows: list[pd.DataFrame] = []
    for query_id, wanted in sections.groupby("query_id", sort=False, observed=True):
        group = grouped.get(str(query_id))
        if group is None:
            pool = []
        else:
            if "rank" not in group.columns:
                group = group.sort_values("score", ascending=False, kind="stable")
            pool = pool_of(group["score"].tolist(), group["path"].astype(str).tolist())
            for i, title in enumerate(group["title"].astype(str).tolist()):
                pool[i] = _titled(pool[i], title, i)
        interests = list(
            zip(wanted["path"].tolist(), wanted["heading"].astype(object).tolist(), strict=True)
        )
        traced = trace_pool(pool, interests, settings, query_id=str(query_id))
        stops = traced[traced["stopped"]]
        kept = cut_len(pool, settings)
        frame = wanted.copy()
        frame["stopped"] = stops["stage"].to_numpy()
        frame["passed"] = stops["passed"].to_numpy()
        frame["rank"] = stops["rank"].to_numpy()
        frame["score"] = stops["score"].to_numpy()
        frame["cut_len"] = kept
        rows.append(frame)
    if not rows:
        return trace_pools(pools, qrels, settings).iloc[0:0]
    out = pd.concat(rows).sort_index(kind="stable").reset_index(drop=True)
    out["rank"] = out["rank"].astype(pd.Int64Dtype())
    return out[list(SECTION_COLUMNS)].astype(SECTION_COLUMNS)


def _titled(chunk: Any, title: str, i: int) -> Any:
    """A pool chunk with its title (distinct text, so no two are folded as identical)."""
    return replace(chunk, title=title, content=f"{chunk.path}#{title}#{i}")
