"""What a score cannot tell by itself: coverage of the judgments, and ids that do not meet.

:func:`coverage` says how much of a run the judgments cover (the judged
share of each query's top k, queries on one side only, duplicate chunks,
tied scores); :func:`no_match_sentence` and :func:`no_document_sentence`
name the likely cause when the run's ids and the judgments' never meet;
:data:`WHY_TOOLS_DIFFER` says why two tools can score one run differently.

Examples
--------
>>> no_match_sentence(["Q01", "Q02"], ["q01", "q02"])  # doctest: +ELLIPSIS
"No run query matches a judged query: nothing can be scored. Run ids: Q01, Q02; ...case..."
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from askkit.metrics.ids import Level, doc_ids, qrels_doc_ids
from askkit.metrics.measures import RELEVANT, counts_as_relevant, relevant, trec_values
from askkit.metrics.preparation import Prepared, Ties, as_prepared
from askkit.metrics.qrels import PathOrFrame

__all__ = [
    "WHY_TOOLS_DIFFER",
    "Coverage",
    "coverage",
    "no_document_sentence",
    "no_match_sentence",
]

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

    def explain(self, *, why_tools_differ: bool = True) -> str:
        """This run's caveats (:attr:`headline` first), then :data:`WHY_TOOLS_DIFFER`.

        Explaining several runs, pass ``why_tools_differ=False`` and print that
        paragraph once: it is the same for every run.
        """
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
        if why_tools_differ:
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
    run: pd.DataFrame | Prepared,
    qrels: PathOrFrame | None = None,
    k: int = 10,
    *,
    level: Level | None = None,
    ties: Ties | None = None,
    relevance_level: int = RELEVANT,
) -> Coverage:
    """Judged share of each query's top ``k``, unmatched query ids, duplicates, ties.

    ``run`` is a run and ``qrels`` its judgments, as for
    :func:`~askkit.metrics.evaluate` (``level`` default ``"note"``, ``ties``
    ``"trec"``), or a run :func:`~askkit.metrics.preparation.prepare` prepared
    (it carries its judgments, level and ties).

    >>> run = pd.DataFrame({"turn_id": ["q1", "q1", "q9"], "path": ["a.md", "b.md", "a.md"],
    ...                     "score": [2.0, 1.0, 1.0]})
    >>> qrels = pd.DataFrame({"query_id": ["q1", "q2"], "path": ["a.md", "a.md"], "grade": [1, 0]})
    >>> c = coverage(run, qrels, k=2)
    >>> c.per_query.loc["q1", "judged_at_k"], c.run_only, c.qrels_only, c.no_relevant
    (np.float64(0.5), ('q9',), ('q2',), ('q2',))
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if qrels is None and not isinstance(run, Prepared):
        raise TypeError("coverage needs judgments: give qrels, or a run prepared with them")
    prep = as_prepared(run, qrels, level=level, ties=ties)
    n = len(prep.qids)
    r = prep.ranked
    top = r.rank <= k
    in_top = np.bincount(r.query[top], minlength=n)
    judged_top = np.bincount(r.query[top & prep.judged], minlength=n)
    value = trec_values(prep.grade, prep.judged)
    relevant_top = np.bincount(r.query[top & relevant(value, relevance_level)], minlength=n)
    same_prev = np.zeros(len(r.query), dtype=bool)
    if len(r.query) > 1:
        same_prev[1:] = (r.query[1:] == r.query[:-1]) & (prep.score[1:] == prep.score[:-1])
    tied = same_prev.copy()
    tied[:-1] |= same_prev[1:]
    counted = counts_as_relevant(prep.qrels_grade, relevance_level)
    judged_relevant = np.bincount(prep.qrels_query[counted], minlength=n)
    chunk_counts = prep.chunks()
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
            "relevant": judged_relevant,
            "relevant_at_k": relevant_top,
            "tied_at_k": np.bincount(r.query[top & tied], minlength=n),
        },
        index=prep.qids,
    )
    ids = prep.qids.to_numpy()
    unmatched = ""
    both = prep.in_run & prep.in_qrels
    if both.any() and not bool(prep.judged[both[r.query]].any()):
        asked = set(prep.qids[both].tolist())
        frame, judgments = prep.run, prep.qrels
        run_docs = doc_ids(frame, prep.level)[frame["turn_id"].astype(str).isin(asked).to_numpy()]
        judged_docs = qrels_doc_ids(judgments, prep.level)[
            judgments["query_id"].astype(str).isin(asked).to_numpy()
        ]
        unmatched = no_document_sentence(run_docs.tolist(), judged_docs.tolist())
    return Coverage(
        per_query=per_query,
        k=k,
        level=prep.level,
        no_relevant=tuple(ids[prep.in_qrels & (judged_relevant == 0)].tolist()),
        run_only=tuple(ids[prep.in_run & ~prep.in_qrels].tolist()),
        qrels_only=tuple(ids[prep.in_qrels & ~prep.in_run].tolist()),
        duplicate_chunks=prep.ranked.duplicates,
        unmatched_documents=unmatched,
    )
