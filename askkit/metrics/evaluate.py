"""Retrieval quality: trec_eval-exact measures over a sources frame, judgments on disk, coverage.

:func:`evaluate` scores a run (a sources frame: query = ``turn_id``,
document = ``path`` at note level, ``path#heading`` at section level)
against graded judgments (:func:`read_qrels`). The defaults are trec_eval's,
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

The computation is columnar (numpy sorts and ``bincount``; see
:mod:`askkit.metrics.measures`): no Python loop over queries.

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
import re
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, overload

import numpy as np
import pandas as pd
import pyarrow as pa

from askkit.frame.load import Loaded
from askkit.frame.schema import STRING
from askkit.metrics.io import (
    QRELS_COLUMNS,
    Ids,
    Level,
    PathOrFrame,
    decode_id,
    doc_ids,
    encode_id,
    qrels_doc_ids,
    read_qrels,
    read_trec_run,
    trec_columns,
    write_qrels,
)
from askkit.metrics.measures import (
    Measure,
    compute,
    counts_as_relevant,
    parse_measure,
    parse_measures,
    trec_values,
)
from askkit.metrics.prepare import Ties, as_qrels, check_options, prepare

__all__ = [
    "DEFAULT_MEASURES",
    "QRELS_COLUMNS",
    "TREC_NAMES",
    "WHY_TOOLS_DIFFER",
    "Coverage",
    "Evaluation",
    "Ids",
    "Level",
    "Missing",
    "PathOrFrame",
    "Ties",
    "coverage",
    "decode_id",
    "encode_id",
    "evaluate",
    "no_document_sentence",
    "no_match_sentence",
    "parse_measure",
    "ranked_run",
    "read_qrels",
    "read_run",
    "write_qrels",
    "write_run",
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
}

#: Plain words on why two tools report different numbers for the same run.
WHY_TOOLS_DIFFER = (
    "Two tools can score the same run differently for four reasons. "
    "Ties: when documents share a score, trec_eval (and askkit by default) orders them by "
    "document id, descending; ranx and most Python code keep whatever order a sort leaves, "
    "so a relevant document can land above or below its tied neighbours. "
    "Missing queries: a judged query the run never answered is left out of the average by "
    "trec_eval and pytrec_eval, but counted as 0 by 'trec_eval -c' and by ranx's "
    "make_comparable; a query with no judgments is never scored. "
    "Gain: nDCG with the grade as gain (trec_eval, ranx 'ndcg') differs from 2^grade - 1 "
    "('ndcg_burges'); graded judgments make the two disagree. "
    "Duplicates: a note split into several chunks can be retrieved more than once; askkit "
    "keeps each document's best chunk, a tool fed raw chunk ids counts each one, and "
    "a tool fed a dict silently keeps the last."
)


# --------------------------------------------------------------------------- id mismatch

#: What a measure cell says when no query could be scored.
NO_JUDGED = "no judged queries"


def _digits(ident: str) -> str:
    """``ident`` lower-cased with every number's zero-padding removed."""
    return re.sub(r"\d+", lambda m: str(int(m.group())), ident.lower())


def _common_prefix(ids: list[str]) -> str:
    """The longest string every id starts with (``""`` for fewer than two ids)."""
    if len(ids) < 2:
        return ""
    first, last = min(ids), max(ids)
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    return first[:n]


def _trim(ids: list[str]) -> dict[str, str]:
    """Each id's key with its side's common prefix and suffix removed (empty cores dropped)."""
    prefix = _common_prefix(ids)
    suffix = _common_prefix([i[::-1] for i in ids])[::-1]
    out = {}
    for i in ids:
        core = i[len(prefix) : len(i) - len(suffix)]
        if core:
            out[_key(core)] = i
    return out


def _key(ident: str) -> str:
    """``ident`` without case, zero-padding or separators."""
    return re.sub(r"[^0-9a-z]", "", _digits(ident))


def _shape(ident: str) -> str:
    """``ident``'s scheme: letters as ``a``, numbers as ``9`` (``q-01`` -> ``a-9``)."""
    return re.sub(r"\d+", "9", re.sub(r"[a-z]+", "a", ident.lower()))


def _pair(run: Iterable[str], judged: Iterable[str], key: Any) -> tuple[str, str] | None:
    keyed = {key(j): j for j in judged}
    for r in run:
        if key(r) in keyed:
            return r, keyed[key(r)]
    return None


def _cause(run: list[str], judged: list[str]) -> str:
    found = _pair(run, judged, str.lower)
    if found:
        return f"the ids differ only in case ({found[0]!r} in the run, {found[1]!r} judged)"
    found = _pair(run, judged, _digits)
    if found:
        return f"the ids differ in zero-padding ({found[0]!r} in the run, {found[1]!r} judged)"
    run_core, judged_core = _trim(run), _trim(judged)
    for left, right in (
        (run_core, judged_core),
        (run_core, {_key(j): j for j in judged}),
        ({_key(r): r for r in run}, judged_core),
        ({_key(r): r for r in run}, {_key(j): j for j in judged}),
    ):
        common = sorted(set(left) & set(right))
        if common:
            r, j = left[common[0]], right[common[0]]
            return (
                f"the ids differ by a prefix, suffix or separator ({r!r} in the run, {j!r} judged)"
            )
    if _pair(run, judged, _shape):
        return (
            "the ids follow one scheme but name different queries "
            "(are these the qrels for this run?)"
        )
    return (
        "the run and the qrels use different id schemes "
        "(the log's turn ids must be the qrels' query ids)"
    )


def no_match_sentence(run_ids: Sequence[str], judged_ids: Sequence[str]) -> str:
    """One line for a run none of whose queries is judged, or ``""`` when one is.

    It names three ids from each side and the likely cause: case, zero-padding,
    a prefix or suffix, or different id schemes.

    >>> no_match_sentence(["Q01", "Q02"], ["q01", "q02"])  # doctest: +ELLIPSIS
    "No run query matches a judged query: nothing can be scored. Run ids: Q01, Q02; ...case..."
    >>> no_match_sentence(["q01"], ["q01", "q02"])
    ''
    """
    return _mismatch(
        "No run query matches a judged query: nothing can be scored. Run ids",
        run_ids,
        judged_ids,
    )


def _mismatch(opening: str, run_ids: Sequence[str], judged_ids: Sequence[str]) -> str:
    """``opening``, three ids from each side and the likely cause; ``""`` when
    the sides share an id or one is empty."""
    run = list(dict.fromkeys(str(i) for i in run_ids))
    judged = list(dict.fromkeys(str(i) for i in judged_ids))
    if not run or not judged or set(run) & set(judged):
        return ""
    return (
        f"{opening}: {', '.join(run[:3])}; judged ids: {', '.join(judged[:3])}. "
        f"Likely cause: {_cause(run, judged)}."
    )


def no_document_sentence(retrieved: Sequence[str], judged: Sequence[str]) -> str:
    """One line for a run whose judged queries retrieved no judged document, naming
    three document ids from each side and the likely cause; ``""`` when one matches.

    >>> no_document_sentence(["ft911-1"], ["FT911-1"])  # doctest: +ELLIPSIS
    "No retrieved document is judged: every measure is 0. Retrieved ids: ft911-1; ...case..."
    """
    return _mismatch(
        "No retrieved document is judged: every measure is 0. Retrieved ids", retrieved, judged
    )


# --------------------------------------------------------------------------- evaluate


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
    """Why nothing was scored (:func:`no_match_sentence`), or ``""``."""

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


def evaluate(
    run: pd.DataFrame,
    qrels: PathOrFrame,
    measures: Sequence[str] | str = DEFAULT_MEASURES,
    *,
    level: Level = "note",
    ties: Ties = "trec",
    missing: Missing = "drop",
    relevance_level: int = 1,
    max_docs_per_query: int | None = None,
) -> Evaluation:
    """Score a run against judgments, trec_eval's way.

    Parameters
    ----------
    run:
        A sources frame (:func:`askkit.frame.sources_frame`) or any frame with
        ``turn_id``, ``score`` and ``path`` (or ``doc``, e.g. from
        :func:`read_run`); an optional ``rank`` column is the input order.
    qrels:
        A qrels frame or file (:func:`read_qrels`).
    measures:
        ranx-style names: ``precision@k``, ``recall@k``, ``hit@k``, ``mrr``,
        ``mrr@k``, ``map``, ``map@k`` (trec_eval ``map_cut``), ``ndcg``,
        ``ndcg@k``, ``r-precision``; one name alone may be a string. Column
        names are the names as given. No name, a name that is not a measure
        or a name given twice raises :class:`SchemaError` listing the valid
        names.
    level:
        ``"note"``: documents are notes (a note's grade is its best section's);
        ``"section"``: ``path#heading`` (all sections of a note sharing a
        heading are one document, as a judgment cannot tell them apart).
    ties:
        ``"trec"``: score descending, then document id descending.
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
    check_options(level, ties, missing)
    if max_docs_per_query is not None and max_docs_per_query < 1:
        raise ValueError(f"max_docs_per_query must be >= 1, got {max_docs_per_query}")
    parsed: list[Measure] = parse_measures(measures)
    names = [m.name for m in parsed]
    prep = prepare(run, qrels, level, ties)
    values = compute(
        parsed,
        len(prep.qids),
        prep.ranked,
        prep.grade,
        qrels_query=prep.qrels_query,
        qrels_grade=prep.qrels_grade,
        relevance_level=relevance_level,
        judged=prep.judged,
        max_docs=max_docs_per_query,
    )
    per_query = pd.DataFrame(values, index=prep.qids, columns=names, dtype=np.float64)
    unanswered = tuple(prep.qids[~prep.in_run])
    if missing == "drop":
        per_query = per_query.loc[prep.in_run]
    run_only = prep.run_only
    headline = ""
    if not prep.in_run.any():
        headline = no_match_sentence(run_only, prep.qids.tolist())
        if headline:
            warnings.warn(headline, UserWarning, stacklevel=2)
    return Evaluation(
        per_query=per_query,
        mean=per_query.mean().astype(np.float64),
        measures=tuple(names),
        level=level,
        ties=ties,
        missing=missing,
        run_only=run_only,
        unanswered=unanswered,
        duplicates=prep.ranked.duplicates,
        headline=headline,
    )


def ranked_run(
    run: pd.DataFrame,
    qrels: PathOrFrame | None = None,
    *,
    level: Level = "note",
    ties: Ties = "trec",
) -> pd.DataFrame:
    """The run as :func:`evaluate` sees it: one row per (query, document), best chunk kept, ranked.

    Columns: ``query_id``, ``rank`` (1-based), ``doc``, ``score``, ``grade``
    (0 when unjudged), ``judged``; the index holds the kept rows' labels in
    ``run``. Every query of the run is kept, judged or not.

    >>> run = pd.DataFrame({"turn_id": ["q", "q", "q"], "path": ["a.md", "b.md", "a.md"],
    ...                     "score": [1.0, 1.0, 2.0]})
    >>> ranked_run(run)[["rank", "doc", "score"]].to_dict("list")
    {'rank': [1, 2], 'doc': ['a.md', 'b.md'], 'score': [2.0, 1.0]}
    """
    check_options(level, ties)
    prep = prepare(run, qrels, level, ties, run_queries=True)
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
        index=run.index[r.rows],
    )


def write_run(
    run: pd.DataFrame,
    path: str | Any,
    *,
    level: Level = "note",
    ties: Ties = "trec",
    tag: str = "askkit",
) -> None:
    """Write a sources frame as a TREC run (``qid Q0 docid rank score tag``), atomically.

    Documents are de-duplicated and ranked as :func:`evaluate` does
    (:func:`ranked_run`): each line holds one (query, document) with its own
    rank and score, queries in sorted order, best first. Scores are written
    with every digit (``repr``), so they read back as the same floats. Ids are
    written as :mod:`askkit.metrics.io` says: as they are, or percent-encoded
    when they hold whitespace (:func:`askkit.metrics.io.trec_id`), and
    ``read_run(path, decode=True)`` reads those back exactly. A run that would
    not read back as written (a query id starting with ``#``, an empty id, two
    ids one written form would merge, a value that is not text) raises
    :class:`SchemaError` and nothing is written. Other columns of ``run`` have
    no place in a TREC run and are not written.

    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "run.trec"
    >>> write_run(pd.DataFrame({"turn_id": "q1", "path": ["a.md", "b.md"],
    ...                         "score": [1.0, 4.0]}), target)
    >>> print(target.read_text(), end="")
    q1 Q0 b.md 1 4.0 askkit
    q1 Q0 a.md 2 1.0 askkit
    """
    from askkit._atomic import atomic_write_text

    if not isinstance(tag, str) or not tag or any(c.isspace() for c in tag):
        raise ValueError(f"a run tag must be one word, got {tag!r}")
    ranked = ranked_run(run, level=level, ties=ties)
    # positions, not labels: ranked_run's index holds the run's own row labels
    written = trec_columns(
        {"query_id": ranked["query_id"], "doc": ranked["doc"]}, what="run", rows=False
    )
    rank = ranked["rank"].to_numpy(dtype=np.int64).astype(str).astype(object)
    score = ranked["score"].to_numpy(dtype=np.float64).astype(str).astype(object)  # repr
    lines = (
        written["query_id"].to_numpy(dtype=object)
        + " Q0 "
        + written["doc"].to_numpy(dtype=object)
        + " "
        + rank
        + " "
        + score
        + f" {tag}"
    )
    atomic_write_text(path, "".join(f"{line}\n" for line in lines.tolist()))


@overload
def read_run(
    path: str | Any, *, ids: Ids = ..., strict: Literal[True] = ..., decode: bool = ...
) -> pd.DataFrame: ...
@overload
def read_run(
    path: str | Any, *, ids: Ids = ..., strict: Literal[False], decode: bool = ...
) -> Loaded: ...
def read_run(
    path: str | Any, *, ids: Ids = "exact", strict: bool = True, decode: bool = False
) -> pd.DataFrame | Loaded:
    """Read a TREC run file as a frame :func:`evaluate` takes (see :func:`read_trec_run`).

    ``decode=True`` reads back exactly the ids of a run :func:`write_run` wrote
    from ids holding whitespace (section ids); the default keeps ids as written.
    """
    if strict:
        return read_trec_run(path, ids=ids, decode=decode)
    return read_trec_run(path, ids=ids, strict=False, decode=decode)


# --------------------------------------------------------------------------- coverage


@dataclass(frozen=True, slots=True, eq=False)
class Coverage:
    """How much of a run the judgments cover, and what tools may disagree on."""

    per_query: pd.DataFrame = field(repr=False)
    """One row per query of the run or the qrels: ``in_run``, ``in_qrels``, ``chunks``,
    ``duplicates``, ``retrieved`` (documents), ``judged_at_k`` (judged share of the
    top k, NaN when nothing was retrieved), ``relevant`` (judged relevant),
    ``relevant_at_k``, ``tied_at_k`` (top-k documents whose score another shares)."""
    k: int
    level: Level
    no_relevant: tuple[str, ...]
    run_only: tuple[str, ...]
    qrels_only: tuple[str, ...]
    duplicate_chunks: int
    unmatched_documents: str = ""
    """One line when queries match but no retrieved document is judged, else ``""``."""

    @property
    def headline(self) -> str:
        """One line when no run query is judged (:func:`no_match_sentence`), or when
        no retrieved document is (:func:`no_document_sentence`); else ``""``."""
        q = self.per_query
        if bool((q["in_run"] & q["in_qrels"]).any()):
            return self.unmatched_documents
        ids = q.index.astype(str)
        return no_match_sentence(ids[q["in_run"]].tolist(), ids[q["in_qrels"]].tolist())

    @property
    def judged_at_k(self) -> float:
        """Mean judged share of the top k over the run's queries."""
        return float(self.per_query["judged_at_k"].mean())

    def explain(self) -> str:
        """This run's caveats (:attr:`headline` first), then :data:`WHY_TOOLS_DIFFER`."""
        lines = [self.headline] if self.headline else []
        lines += [
            f"Judged share of the top {self.k}: {self.judged_at_k:.1%} on average "
            "(unjudged documents count as not relevant)."
        ]
        ties = int((self.per_query["tied_at_k"] > 0).sum())
        if ties:
            lines.append(f"{ties} queries have tied scores in the top {self.k}.")
        if self.qrels_only:
            lines.append(
                f"{len(self.qrels_only)} judged queries are not in the run: left out by "
                "missing='drop' (trec_eval, pytrec_eval), 0 with missing='zero' (trec_eval -c)."
            )
        if self.run_only:
            lines.append(f"{len(self.run_only)} run queries have no judgments: never scored.")
        if self.no_relevant:
            lines.append(
                f"{len(self.no_relevant)} judged queries have no relevant document: "
                "they score 0 on every measure and still count."
            )
        if self.duplicate_chunks:
            lines.append(
                f"{self.duplicate_chunks} chunks repeat a document already retrieved for "
                "the same query; only the best counts."
            )
        lines.append(WHY_TOOLS_DIFFER)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.explain()

    def _repr_html_(self) -> str:
        from askkit._html import data_table, fragment

        def ids(xs: tuple[str, ...]) -> str:
            shown = ", ".join(xs[:20]) + (" …" if len(xs) > 20 else "")
            return html.escape(shown) or "none"

        paras = "".join(f"<p>{html.escape(p)}</p>" for p in self.explain().split("\n"))
        return fragment(
            f"<b>Coverage (top {self.k}, level={html.escape(self.level)})"
            f"</b>{paras}<ul><li>no relevant judgment: {ids(self.no_relevant)}</li>"
            f"<li>in the run only: {ids(self.run_only)}</li>"
            f"<li>in the qrels only: {ids(self.qrels_only)}</li></ul>"
            f"{data_table(self.per_query, digits=3, na='nothing retrieved')}"
        )


def coverage(
    run: pd.DataFrame,
    qrels: PathOrFrame,
    k: int = 10,
    *,
    level: Level = "note",
    ties: Ties = "trec",
    relevance_level: int = 1,
) -> Coverage:
    """Judged share of each query's top ``k``, unmatched query ids, duplicates, ties.

    >>> run = pd.DataFrame({"turn_id": ["q1", "q1", "q9"], "path": ["a.md", "b.md", "a.md"],
    ...                     "score": [2.0, 1.0, 1.0]})
    >>> qrels = pd.DataFrame({"query_id": ["q1", "q2"], "path": ["a.md", "a.md"], "grade": [1, 0]})
    >>> c = coverage(run, qrels, k=2)
    >>> c.per_query.loc["q1", "judged_at_k"], c.run_only, c.qrels_only, c.no_relevant
    (np.float64(0.5), ('q9',), ('q2',), ('q2',))
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    check_options(level, ties)
    prep = prepare(run, qrels, level, ties, run_queries=True)
    n = len(prep.qids)
    r = prep.ranked
    top = r.rank <= k
    in_top = np.bincount(r.query[top], minlength=n)
    judged_top = np.bincount(r.query[top & prep.judged], minlength=n)
    value = trec_values(prep.grade, prep.judged)
    relevant_top = np.bincount(r.query[top & (value >= relevance_level)], minlength=n)
    same_prev = np.zeros(len(r.query), dtype=bool)
    if len(r.query) > 1:
        same_prev[1:] = (r.query[1:] == r.query[:-1]) & (prep.score[1:] == prep.score[:-1])
    tied = same_prev.copy()
    tied[:-1] |= same_prev[1:]
    counted = counts_as_relevant(prep.qrels_grade, relevance_level)
    relevant = np.bincount(prep.qrels_query[counted], minlength=n)
    chunks = run.groupby(run["turn_id"].astype(str), sort=False).size()
    chunk_counts = chunks.reindex(prep.qids, fill_value=0).to_numpy(dtype=np.int64)
    retrieved = np.bincount(r.query, minlength=n)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(in_top > 0, judged_top / np.maximum(in_top, 1), np.nan)
    per_query = pd.DataFrame(
        {
            "in_run": prep.in_run,
            "in_qrels": prep.in_qrels,
            "chunks": chunk_counts,
            "duplicates": chunk_counts - retrieved,
            "retrieved": retrieved,
            "judged_at_k": share.astype(np.float64),
            "relevant": relevant,
            "relevant_at_k": relevant_top,
            "tied_at_k": np.bincount(r.query[top & tied], minlength=n),
        },
        index=prep.qids,
    )
    ids = prep.qids.to_numpy()
    unmatched = ""
    both = prep.in_run & prep.in_qrels
    if both.any() and not bool(prep.judged[both[r.query]].any()):
        judgments = as_qrels(qrels)
        asked = set(prep.qids[both].tolist())
        run_docs = doc_ids(run, level)[run["turn_id"].astype(str).isin(asked).to_numpy()]
        judged_docs = qrels_doc_ids(judgments, level)[
            judgments["query_id"].astype(str).isin(asked).to_numpy()
        ]
        unmatched = no_document_sentence(run_docs.tolist(), judged_docs.tolist())
    return Coverage(
        per_query=per_query,
        k=k,
        level=level,
        no_relevant=tuple(ids[prep.in_qrels & (relevant == 0)].tolist()),
        run_only=tuple(ids[prep.in_run & ~prep.in_qrels].tolist()),
        qrels_only=tuple(ids[prep.in_qrels & ~prep.in_run].tolist()),
        duplicate_chunks=prep.ranked.duplicates,
        unmatched_documents=unmatched,
    )
