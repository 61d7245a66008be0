"""Retrieval quality: trec_eval-exact measures over a sources frame, and the run as scored.

:func:`evaluate` scores a run (a sources frame: query = ``turn_id``,
document = ``path`` at note level, ``path#heading`` at section level)
against graded judgments (:func:`~askkit.metrics.read_qrels`);
:func:`ranked_run` shows the run as it is scored. The defaults are trec_eval's,
and the values equal pytrec_eval's to 1e-9, ties included:

* ranking: score descending, ties broken by document id descending
  (``ties="trec"``), or the rank as received (``ties="input"``);
* chunks of the same document in one query count once: the best (first in
  that order) is kept, so recall and nDCG never exceed 1;
* relevant = grade >= 1; a judged query with no relevant document scores 0
  and is averaged; queries in the run but not in the qrels are not scored;
  queries in the qrels but not in the run are left out (``missing="drop"``,
  trec_eval's default) or score 0 (``missing="zero"``, ``trec_eval -c``);
* nDCG: linear gain (the grade, negatives as 0), ``log2(rank + 1)`` discount,
  the ideal ranking built from every judged document.

The run enters through :func:`askkit.metrics.preparation.prepare` (once: a
:class:`~askkit.metrics.preparation.Prepared` run may be given in its
place), or, for :func:`evaluate` of a run frame when no unjudged row can
count, :func:`askkit.metrics.preparation.judged_run`, which hands over only
the judged rows when the fast path takes the run (both score alike); every
measure is defined in :mod:`askkit.metrics.measures`. The
computation is columnar (numpy sorts and ``bincount``): no Python loop over
queries.

Examples
--------
>>> run = pd.DataFrame({"turn_id": ["q1", "q1", "q1", "q2"],
...                     "path": ["a.md", "b.md", "a.md", "c.md"],
...                     "score": [3.0, 2.0, 1.0, 5.0]})
>>> qrels = pd.DataFrame({"query_id": ["q1", "q1", "q2"], "path": ["b.md", "z.md", "c.md"],
...                       "grade": [2, 1, 1]})
>>> ev = evaluate(run, qrels, ["precision@1", "recall@2", "mrr", "ndcg@2"])
>>> ev.per_query.round(3).to_dict("index")["q1"]
{'precision@1': 0.0, 'recall@2': 0.5, 'mrr': 0.5, 'ndcg@2': 0.48}
>>> float(ev.mean["mrr"])
0.75
"""

from __future__ import annotations

import html
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd
import pyarrow as pa

from askkit.frame.schema import STRING
from askkit.metrics.coverage import no_match_sentence
from askkit.metrics.ids import Level
from askkit.metrics.measures import RELEVANT, Measure, compute, parse_measures
from askkit.metrics.preparation import (
    Judged,
    Prepared,
    Ties,
    as_prepared,
    check_options,
    judged_run,
)
from askkit.metrics.qrels import PathOrFrame
from askkit.metrics.ranked import Ranked

__all__ = [
    "DEFAULT_MEASURES",
    "NO_JUDGED",
    "TREC_NAMES",
    "Evaluation",
    "Missing",
    "evaluate",
    "ranked_run",
]

Missing = Literal["drop", "zero"]

#: What :func:`evaluate` computes when no measures are named.
DEFAULT_MEASURES = ("ndcg@10", "mrr", "recall@10", "precision@5", "map")

#: askkit measure kind -> trec_eval / pytrec_eval measure (``{k}``: the cutoff).
TREC_NAMES = {
    "precision": "P_{k}",
    "recall": "recall_{k}",
    "hit": "success_{k}",
    "mrr": "recip_rank",
    "map": "map",
    "map@k": "map_cut_{k}",
    "ndcg": "ndcg",
    "ndcg@k": "ndcg_cut_{k}",
    "r-precision": "Rprec",
    "bpref": "bpref",
    "infap": "infAP",
}

#: What a measure cell says when no query could be scored.
NO_JUDGED = "no judged queries"


@dataclass(frozen=True, slots=True, eq=False)
class Evaluation:
    """What :func:`evaluate` returns: per-query scores and their means."""

    per_query: pd.DataFrame = field(repr=False)
    """Indexed by query id (sorted), one float64 column per measure."""
    mean: pd.Series = field(repr=False)
    """The mean of each measure over :attr:`per_query`'s queries."""
    measures: tuple[str, ...]
    level: Level
    ties: Ties
    missing: Missing
    run_only: tuple[str, ...] = ()
    """Run queries with no judgments (never scored)."""
    unanswered: tuple[str, ...] = ()
    """Judged queries absent from the run (dropped, or scored 0 with ``missing="zero"``)."""
    duplicates: int = 0
    """Chunks dropped because a better chunk of the same document ranked above them."""
    headline: str = ""
    """Why nothing was scored (:func:`~askkit.metrics.coverage.no_match_sentence`), or ``""``."""

    def __str__(self) -> str:
        if self.headline:
            return f"Evaluation(level={self.level}: {self.headline})"
        means = ", ".join(f"{k}={v:.4f}" for k, v in self.mean.items())
        return f"Evaluation({len(self.per_query)} queries, level={self.level}: {means})"

    def _repr_html_(self) -> str:
        from askkit._html import data_table, fragment, message

        notes = [
            f"{len(self.per_query)} queries; level={self.level}, ties={self.ties}, "
            f"missing={self.missing}",
        ]
        if self.unanswered:
            verb = "scored 0" if self.missing == "zero" else "left out"
            notes.append(f"{len(self.unanswered)} judged queries not in the run ({verb})")
        if self.run_only:
            notes.append(f"{len(self.run_only)} run queries without judgments (not scored)")
        if self.duplicates:
            notes.append(f"{self.duplicates} duplicate chunks dropped (best kept)")
        items = "".join(f"<li>{html.escape(n)}</li>" for n in notes)
        table = data_table(self.mean.rename("mean"), na=NO_JUDGED)
        head = message(self.headline, tone="warn") if self.headline else ""
        return fragment(f"{head}<b>Evaluation</b><ul>{items}</ul>{table}")


def scorable(
    run: pd.DataFrame | Prepared,
    qrels: PathOrFrame | None,
    measures: Sequence[str] | str,
    *,
    level: Level | None,
    ties: Ties | None,
    missing: Missing,
    max_docs_per_query: int | None,
    caller: str,
) -> tuple[list[Measure], Prepared]:
    """The options of :func:`evaluate` (and of what scores as it does, ``caller``)
    checked, the measures parsed and the run prepared with its judgments."""
    parsed = _checked(
        run, qrels, measures, level=level, ties=ties, missing=missing,
        max_docs_per_query=max_docs_per_query, caller=caller,
    )  # fmt: skip
    return parsed, as_prepared(run, qrels, level=level, ties=ties, run_queries=False)


def _checked(
    run: pd.DataFrame | Prepared,
    qrels: PathOrFrame | None,
    measures: Sequence[str] | str,
    *,
    level: Level | None,
    ties: Ties | None,
    missing: Missing,
    max_docs_per_query: int | None,
    caller: str,
) -> list[Measure]:
    """:func:`scorable`'s checks of the options, and the measures parsed."""
    check_options(level or "note", ties or "trec", missing)
    if max_docs_per_query is not None and max_docs_per_query < 1:
        raise ValueError(f"max_docs_per_query must be >= 1, got {max_docs_per_query}")
    parsed = parse_measures(measures)
    if qrels is None and not isinstance(run, Prepared):
        raise TypeError(f"{caller} needs judgments: give qrels, or a run prepared with them")
    return parsed


def evaluate(
    run: pd.DataFrame | Prepared,
    qrels: PathOrFrame | None = None,
    measures: Sequence[str] | str = DEFAULT_MEASURES,
    *,
    level: Level | None = None,
    ties: Ties | None = None,
    missing: Missing = "drop",
    relevance_level: int = RELEVANT,
    max_docs_per_query: int | None = None,
) -> Evaluation:
    """Score a run against judgments, trec_eval's way.

    Parameters
    ----------
    run:
        A sources frame (:func:`askkit.frame.sources_frame`) or any frame with
        ``turn_id``, ``score`` and ``path`` (or ``doc``, e.g. from
        :func:`~askkit.metrics.read_run`); an optional ``rank`` column is the
        input order. Or a run :func:`~askkit.metrics.preparation.prepare`
        prepared: it carries its judgments, level and ties (give no ``qrels``,
        and no other ``level`` or ``ties``).
    qrels:
        A qrels frame or file (:func:`~askkit.metrics.read_qrels`).
    measures:
        ranx-style names: ``precision@k``, ``recall@k``, ``hit@k``, ``mrr``,
        ``mrr@k``, ``map``, ``map@k`` (trec_eval ``map_cut``), ``ndcg``,
        ``ndcg@k``, ``r-precision``, ``bpref``, ``infap``, ``judged@k``
        (the share of the top k that is judged), each also by its trec_eval
        name (``P_5``, ``ndcg_cut_10``, ``infAP``); a ``'`` after the kind
        (``ndcg'@10``, ``map'``) scores the condensed list: the ranking with
        its unjudged documents taken out (trec_eval ``-J``). One name alone may be a string. Column
        names are the names as given. No name, a name that is not a measure
        or a name given twice raises :class:`SchemaError` listing the valid
        names.
    level:
        ``"note"`` (default): documents are notes (a note's grade is its best section's);
        ``"section"``: ``path#heading`` (all sections of a note sharing a
        heading are one document, as a judgment cannot tell them apart).
    ties:
        ``"trec"`` (default): score descending, then document id descending.
        ``"input"``: the ``rank`` column (else row order), as the system ranked.
    missing:
        Judged queries absent from the run: ``"drop"`` them (trec_eval,
        pytrec_eval) or score them ``"zero"`` (``trec_eval -c``).
    relevance_level:
        The lowest grade that counts as relevant, exactly as trec_eval's
        ``-l``: at 0 a judged 0 is relevant, below 0 unjudged documents are
        too (as in trec_eval, recall and AP can then pass 1); nDCG ignores it.
    max_docs_per_query:
        Score only each query's first ``max_docs_per_query`` documents, after
        ranking (trec_eval's ``-M``); ``None``: all.

    Warns
    -----
    UserWarning
        No run query is judged (:attr:`Evaluation.headline` says why).
    """
    parsed = _checked(
        run, qrels, measures, level=level, ties=ties, missing=missing,
        max_docs_per_query=max_docs_per_query, caller="evaluate",
    )  # fmt: skip
    names = [m.name for m in parsed]
    prep: Prepared | Judged
    if isinstance(run, Prepared) or relevance_level <= -1:  # unjudged rows may count
        prep = as_prepared(run, qrels, level=level, ties=ties, run_queries=False)
    else:  # only the judged rows count: the fast path may hand over just those
        prep = judged_run(run, qrels, level=level or "note", ties=ties or "trec")
    n = len(prep.qids)
    if isinstance(prep, Judged):
        hits = prep.hits
        values = compute(
            parsed,
            n,
            Ranked(hits.query, hits.query, hits.query, hits.rank, hits.duplicates),
            hits.grade,
            qrels_query=hits.qrels_query,
            qrels_grade=hits.qrels_grade,
            relevance_level=relevance_level,
            judged=np.ones(len(hits.query), dtype=bool),
            max_docs=max_docs_per_query,
            retrieved=hits.retrieved,
        )
        judged = np.ones(n, dtype=bool)  # the judged queries only were coded
        duplicates = hits.duplicates
    else:
        values = compute(
            parsed,
            n,
            prep.ranked,
            prep.grade,
            qrels_query=prep.qrels_query,
            qrels_grade=prep.qrels_grade,
            relevance_level=relevance_level,
            judged=prep.judged,
            max_docs=max_docs_per_query,
        )
        judged = prep.in_qrels
        duplicates = prep.duplicates(judged)
    per_query = pd.DataFrame(values, index=prep.qids, columns=names, dtype=np.float64)
    answered = judged & prep.in_run
    unanswered = tuple(prep.qids[judged & ~prep.in_run])
    per_query = per_query.loc[answered if missing == "drop" else judged]
    run_only = prep.run_only
    headline = ""
    if not answered.any():
        headline = no_match_sentence(run_only, prep.qids[judged].tolist())
        if headline:
            warnings.warn(headline, UserWarning, stacklevel=2)
    return Evaluation(
        per_query=per_query,
        mean=per_query.mean().astype(np.float64),
        measures=tuple(names),
        level=prep.level,
        ties=prep.ties,
        missing=missing,
        run_only=run_only,
        unanswered=unanswered,
        duplicates=duplicates,
        headline=headline,
    )


def ranked_run(
    run: pd.DataFrame | Prepared,
    qrels: PathOrFrame | None = None,
    *,
    level: Level | None = None,
    ties: Ties | None = None,
) -> pd.DataFrame:
    """The run as :func:`evaluate` sees it: one row per (query, document), best chunk kept, ranked.

    Columns: ``query_id``, ``rank`` (1-based), ``doc``, ``score``, ``grade``
    (0 when unjudged), ``judged``; the index holds the kept rows' labels in
    ``run``. Every query of the run is kept, judged or not. ``run`` may be a
    prepared run, as for :func:`evaluate` (``level`` default ``"note"``,
    ``ties`` ``"trec"``).

    >>> run = pd.DataFrame({"turn_id": ["q", "q", "q"], "path": ["a.md", "b.md", "a.md"],
    ...                     "score": [1.0, 1.0, 2.0]})
    >>> ranked_run(run)[["rank", "doc", "score"]].to_dict("list")
    {'rank': [1, 2], 'doc': ['a.md', 'b.md'], 'score': [2.0, 1.0]}
    """
    prep = as_prepared(run, qrels, level=level, ties=ties)
    r = prep.ranked
    return pd.DataFrame(
        {
            "query_id": pd.array(prep.qids.to_numpy()[r.query], dtype=STRING),
            "rank": r.rank,
            "doc": pd.array(prep.docs.take(pa.array(r.doc)), dtype=STRING),
            "score": prep.score,
            "grade": prep.grade,
            "judged": prep.judged,
        },
        index=prep.run.index[r.rows],
    )
