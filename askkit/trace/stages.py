"""Follow sections of interest through every stage of kimun's Ask, one question at a time.

A trace is a frame with one row per section of interest and stage it
reached (:data:`TRACE_COLUMNS`): the stage (an ordered categorical of
:data:`STAGES`), whether the section passed it, the numbers that decided it
(its rank, score, the limit it was held against, its ``[n]``) and a
plain-words ``why``. Every decision is taken by :mod:`askkit.ranking`
(:func:`~askkit.ranking.deduplicate_chunks`, :func:`~askkit.ranking.rerank`,
:func:`~askkit.ranking.cut_len`, :func:`~askkit.ranking.why_not`,
:func:`~askkit.ranking.search_rows`, :func:`~askkit.ranking.answer_context`)
and :func:`askkit.citations.scan`; this module only follows the sections
through them.

The stages, in order (see ``docs/trace.md``):

``judged`` the section is of interest; ``sectioned`` its note is in the vault,
readable, with a section of that heading now; ``pool`` one of its chunks is among the
candidate pool; ``dedup`` (informational) its identical chunks folded;
``rerank`` the reranker did not push it out of a context the vector order
would have kept it in; ``cut`` the context cut keeps one of its chunks;
``search`` (informational) its note is a row of kimun's search; ``context``
it is in the answer's context, as ``[n]``; ``cited`` the answer cites it.

Each section has exactly one ``stopped`` row: the first stage it failed, or
the last stage it reached. A section that names no note of the vault, or no
heading of its note, names the closest ones; one lost at the pool, the
reranker or the cut says how many notes' frontmatter chunks (kimun's
``FrontMatter`` sections) rank above it, kimun's ranking kept as it is.

Examples
--------
>>> from askkit.ranking import pool_of
>>> pool = pool_of([0.9, 0.8, 0.3, 0.1], paths=["/a.md", "/a.md", "/b.md", "/c.md"])
>>> frame = trace_pool(pool, [("/b.md", None), ("/z.md", None)])
>>> stopped = frame[frame["stopped"]]
>>> list(zip(stopped["section"], stopped["stage"], stopped["passed"]))
[('/b.md', 'cut', False), ('/z.md', 'pool', False)]
>>> print(stopped["why"].iloc[0])
Answer (score-range): cut: normalised 0.25 < cutoff 0.40 (score 0.3 < threshold 0.42); the context keeps rank 1.
"""  # noqa: E501 - a doctest's output is one line

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from askkit._text import rust_trim
from askkit.citations import scan
from askkit.frame.schema import STRING
from askkit.metrics.measures import relevant, trec_values
from askkit.ranking import (
    CANDIDATE_POOL,
    CutSettings,
    answer_context,
    cut_len,
    deduplicate_chunks,
    largest_drop,
    rerank,
    score_range,
    search_rows,
    why_not,
)
from askkit.sources import FRONTMATTER, VaultPath, innermost_heading
from askkit.trace.interest import (
    Interest,
    closest_headings,
    closest_paths,
    section_id,
    sections_of,
)
from askkit.wire import ChunkResult

__all__ = [
    "FRONTMATTER_WHY",
    "FUNNEL_STAGES",
    "STAGES",
    "STAGE_DTYPE",
    "TRACE_COLUMNS",
    "UnjudgedAbove",
    "frontmatter_count",
    "is_frontmatter",
    "ranked_pool",
    "trace_frame",
    "trace_pool",
    "unjudged_above",
]

#: Every stage of the trace, in kimun's order.
STAGES: tuple[str, ...] = (
    "judged",
    "sectioned",
    "pool",
    "dedup",
    "rerank",
    "cut",
    "search",
    "context",
    "cited",
)
#: The stages a section can stop at (``dedup`` and ``search`` inform, never remove).
FUNNEL_STAGES: tuple[str, ...] = (
    "judged",
    "sectioned",
    "pool",
    "rerank",
    "cut",
    "context",
    "cited",
)
#: The ordered categorical of the ``stage`` column.
STAGE_DTYPE = pd.CategoricalDtype(list(STAGES), ordered=True)
#: The trace frame's columns and dtypes.
TRACE_COLUMNS: dict[str, Any] = {
    "query_id": STRING,
    "section": STRING,
    "path": STRING,
    "heading": STRING,
    "stage": STAGE_DTYPE,
    "passed": np.dtype("bool"),
    "stopped": np.dtype("bool"),
    "rank": pd.Int64Dtype(),
    "rank_before": pd.Int64Dtype(),
    "score": np.dtype("float64"),
    "limit": np.dtype("float64"),
    "ordinal": pd.Int64Dtype(),
    "why": STRING,
    "unjudged_above": pd.Int64Dtype(),
    "lowest_relevant": pd.Int64Dtype(),
    "unjudged_kept": np.dtype("O"),
}
#: The columns a trace repeats on every row of a query (its :class:`UnjudgedAbove`;
#: missing when the trace was given no judgments).
QUERY_COLUMNS: tuple[str, ...] = ("unjudged_above", "lowest_relevant", "unjudged_kept")


def _num(x: float) -> str:
    return f"{x:.6g}"


def _ranks(chunks: Sequence[ChunkResult], interest: Interest) -> list[int]:
    return [i for i, c in enumerate(chunks) if interest.holds(c)]


@dataclass
class _Rows:
    query_id: str
    interest: Interest
    rows: list[dict[str, Any]] = field(default_factory=list)

    def add(self, stage: str, passed: bool, why: str, **numbers: Any) -> None:
        self.rows.append(
            {
                "query_id": self.query_id,
                "section": self.interest.section,
                "path": self.interest.path,
                "heading": self.interest.heading,
                "stage": stage,
                "passed": passed,
                "stopped": False,
                "rank": numbers.get("rank"),
                "rank_before": numbers.get("rank_before"),
                "score": numbers.get("score", np.nan),
                "limit": numbers.get("limit", np.nan),
                "ordinal": numbers.get("ordinal"),
                "why": why,
                "unjudged_above": None,
                "lowest_relevant": None,
                "unjudged_kept": None,
            }
        )

    def finish(self) -> list[dict[str, Any]]:
        """Mark the one terminal row: the first failed funnel stage, else the last reached."""
        funnel = [r for r in self.rows if r["stage"] in FUNNEL_STAGES]
        failed = next((r for r in funnel if not r["passed"]), None)
        (failed if failed is not None else funnel[-1])["stopped"] = True
        return self.rows


def _limit(pool: Sequence[ChunkResult], settings: CutSettings) -> float:
    """The number the configured cut holds a chunk against (``top_k`` for fixed)."""
    if settings.strategy == "fixed":
        return float(settings.top_k)
    if settings.strategy == "score-range":
        threshold = score_range(pool, settings.score_range_cutoff).threshold
        return np.nan if threshold is None else threshold
    dropped = largest_drop(pool, settings.window)
    return dropped.boundary if dropped.keep is not None else np.nan


def _line(text: str, head: str) -> str:
    return next((line for line in text.splitlines() if line.startswith(head)), "")


#: Why frontmatter chunks rank: said wherever a trace points them out.
FRONTMATTER_WHY = (
    "kimun indexes a note's properties block as a section titled "
    f"{FRONTMATTER!r}, and its aliases, tags and cssclasses match a question as text does"
)


def is_frontmatter(chunk: ChunkResult) -> bool:
    """Whether ``chunk`` is a note's frontmatter section (kimun titles it ``FrontMatter``).

    >>> from askkit.ranking import pool_of
    >>> is_frontmatter(pool_of([0.9], section="FrontMatter")[0]), is_frontmatter(pool_of([0.9])[0])
    (True, False)
    """
    return rust_trim(chunk.title) == FRONTMATTER


def frontmatter_count(count: int, of: int, where: str) -> str:
    """``"4 of the 7 chunks {where} are notes' frontmatter"`` (``""`` when ``count`` is 0).

    >>> frontmatter_count(1, 3, "ranked above it")
    "1 of the 3 chunks ranked above it is a note's frontmatter"
    """
    if not count:
        return ""
    chunks = f"the {of} chunk{'s' if of != 1 else ''}"
    what = "is a note's frontmatter" if count == 1 else "are notes' frontmatter"
    return f"{count} of {chunks} {where} {what}"


def _and(sentence: str, clause: str) -> str:
    """``sentence`` with ``clause`` (``"; ..."``) added before its full stop."""
    if not clause:
        return sentence
    return sentence.removesuffix(".") + clause + ("." if sentence.endswith(".") else "")


def _frontmatter_in_pool(pool: Sequence[ChunkResult]) -> str:
    """``"; 12 of the 80 chunks of the pool are notes' frontmatter (why)"``, or ``""``."""
    said = frontmatter_count(sum(is_frontmatter(c) for c in pool), len(pool), "of the pool")
    return f"; {said} ({FRONTMATTER_WHY})" if said else ""


def _frontmatter_above(chunks: Sequence[ChunkResult], position: int) -> str:
    """``"; 4 of the 7 chunks ranked above it are notes' frontmatter (why)"``, or ``""``
    when no chunk above 0-based ``position`` is a frontmatter section."""
    above = chunks[:position]
    said = frontmatter_count(sum(is_frontmatter(c) for c in above), len(above), "ranked above it")
    return f"; {said} ({FRONTMATTER_WHY})" if said else ""


#: How many unjudged sections a sentence names before "and N more".
UNJUDGED_NAMED = 3


def _counted(n: int) -> str:
    return "no unjudged section" if not n else f"{n} unjudged section{'s' if n != 1 else ''}"


def _listed(sections: Sequence[str]) -> str:
    """``'a', 'b' and 'c'``, or the first :data:`UNJUDGED_NAMED` ``and N more``."""
    shown = [repr(s) for s in sections[:UNJUDGED_NAMED]]
    more = len(sections) - len(shown)
    if more:
        return f"{', '.join(shown)} and {more} more"
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"


@dataclass(frozen=True, slots=True)
class UnjudgedAbove:
    """The unjudged sections a question's context cut kept, and how many rank above its
    relevant ones.

    ``kept`` are every unjudged section the cut kept (``path#heading``, best
    first); ``lowest`` is the rank of the lowest-ranked relevant section it kept
    (``None`` when it kept none); ``above`` is how many of ``kept`` (the first
    ones) rank above that section, or all of them when the cut kept no relevant
    section: the question's count. Every section the cut kept ranks above any
    relevant section it lost, so all of ``kept`` rank above a lost one.
    :func:`unjudged_above` makes one.

    >>> found = UnjudgedAbove(("a.md#A", "b.md", "c.md"), above=2, lowest=4)
    >>> found.sections
    ('a.md#A', 'b.md')
    >>> print(found.sentence())
    the cut kept 3 unjudged sections above it, 2 of them above the lowest relevant section it kept (rank 4): 'a.md#A', 'b.md' and 'c.md' (judge them next: they may be relevant)
    >>> print(UnjudgedAbove((), above=0, lowest=None).sentence(beside_lost=False))
    the cut kept no unjudged section, and no relevant section
    """  # noqa: E501 - a doctest's output is one line

    kept: tuple[str, ...]
    above: int
    lowest: int | None

    @property
    def sections(self) -> tuple[str, ...]:
        """The unjudged sections counted: those ranked above the lowest relevant one kept."""
        return self.kept[: self.above]

    def sentence(self, *, beside_lost: bool = True) -> str:
        """``the cut kept 4 unjudged sections above it, ...``: said next to a relevant
        section the cut lost (``beside_lost``), or alone; names the first
        :data:`UNJUDGED_NAMED` of them, to judge next."""
        n = len(self.kept)
        said = f"the cut kept {_counted(n)}{' above it' if beside_lost else ''}"
        if self.lowest is None:
            said += ", and no relevant section"
        elif n:
            which = {0: "none above", n: "all above"}.get(self.above, f"{self.above} of them above")
            if n == 1:
                which = "above" if self.above else "below"
            said += f", {which} the lowest relevant section it kept (rank {self.lowest})"
        if not n:
            return said
        them, they = ("it", "it") if n == 1 else ("them", "they")
        return f"{said}: {_listed(self.kept)} (judge {them} next: {they} may be relevant)"


def unjudged_above(
    ranked: Sequence[ChunkResult], kept: int, grades: Mapping[Interest, int]
) -> UnjudgedAbove:
    """The unjudged sections among the ``kept`` first chunks of ``ranked`` (the cut's prefix
    of kimun's ranked pool), and how many rank above the lowest-ranked relevant one kept.

    ``grades`` are the question's judgments, each judged note or section
    (:class:`Interest`; a whole note's judgment covers every chunk of it) with its
    qrels grade (:func:`~askkit.trace.query_grades`). A chunk's value is trec_eval's
    (:func:`askkit.metrics.measures.trec_values`) from the highest grade of the
    judgments that hold it: it is relevant at 1 or more, and unjudged below 0 (no
    judgment holds it, or only a grade below 0, trec_eval's "pooled but unjudged"), as
    Judged@k counts. A section ranks where its best chunk does, as the trace ranks it;
    an unjudged chunk's section is its own ``path#heading`` (the path alone when it
    has no heading), counted once.

    >>> from askkit.ranking import pool_of
    >>> pool = pool_of([0.9, 0.8, 0.7, 0.6])  # /n0.md ... /n3.md, each one section "s"
    >>> grades = {Interest("/n2.md"): 2, Interest("/n1.md", "s"): -1, Interest("/n0.md"): 0}
    >>> unjudged_above(pool, 4, grades)  # /n3.md is unjudged too, but below /n2.md
    UnjudgedAbove(kept=('/n1.md#s', '/n3.md#s'), above=1, lowest=3)
    >>> unjudged_above(pool, 2, grades)  # the cut keeps no relevant section
    UnjudgedAbove(kept=('/n1.md#s',), above=1, lowest=None)
    """
    notes: dict[str, int] = {}
    sections: dict[tuple[str, str], int] = {}
    for interest, grade in grades.items():
        if interest.heading is None:
            notes[interest.path] = max(grade, notes.get(interest.path, grade))
        else:
            key = (interest.path, interest.heading)
            sections[key] = max(grade, sections.get(key, grade))
    prefix = list(ranked[: max(kept, 0)])
    heads = [innermost_heading(c.title) for c in prefix]
    found = [
        [g for g in (notes.get(c.path), sections.get((c.path, h))) if g is not None]
        for c, h in zip(prefix, heads, strict=True)
    ]
    value = trec_values(
        np.array([max(g, default=0) for g in found], dtype=np.int64),
        np.array([bool(g) for g in found], dtype=bool),
    )
    judged = list(grades.items())
    is_relevant = relevant(np.array([g for _, g in judged], dtype=np.int64))
    wanted = [i for (i, _), yes in zip(judged, is_relevant, strict=True) if yes]
    firsts = [next((r for r, c in enumerate(prefix) if w.holds(c)), None) for w in wanted]
    lowest = max((r for r in firsts if r is not None), default=None)
    best: dict[str, int] = {}  # each unjudged section at its best rank, best first
    for r in np.flatnonzero(value < 0).tolist():
        best.setdefault(section_id(prefix[r].path, heads[r] or None), r)
    limit = len(prefix) if lowest is None else lowest
    above = sum(r < limit for r in best.values())
    return UnjudgedAbove(tuple(best), above, None if lowest is None else lowest + 1)


def _cited(answer: str, context: Sequence[ChunkResult]) -> tuple[set[int], list[int]]:
    """The ordinals the answer cites, and those no chunk of the context holds (dangling)."""
    cited = {c.index for c in scan(answer)}
    held = {c.ordinal for c in context}
    return cited, sorted(n for n in cited if n not in held)


@dataclass(frozen=True)
class _Query:
    """One query's pools and answer, as every stage reads them."""

    raw: Sequence[ChunkResult]
    pool: Sequence[ChunkResult]
    ranked: Sequence[ChunkResult]
    reranked: Any
    settings: CutSettings
    headings: Mapping[str, set[str]] | None
    unreadable: Mapping[str, str]
    ranking: Sequence[ChunkResult] | None
    context: Sequence[ChunkResult]
    answer: str | None
    logged: bool = False
    listing: Sequence[str] = ()
    unjudged: UnjudgedAbove | None = None


def _unjudged(q: _Query) -> str:
    """``"; the cut kept 4 unjudged sections above it ..."``, or ``""`` without judgments."""
    return "" if q.unjudged is None else "; " + q.unjudged.sentence()


def _named(items: Sequence[str]) -> str:
    """``'a'``, ``'a' or 'b'``, ``'a', 'b' or 'c'``."""
    quoted = [repr(i) for i in items]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


def _not_in_vault(interest: Interest, q: _Query) -> str:
    """The sentence of a note the vault does not hold, naming the closest notes."""
    if VaultPath(interest.path).escapes_root():  # outside the vault: nothing there is close
        return f"{interest.path} is not in the vault"
    listing = q.listing if q.listing else list(q.headings or ())
    close = closest_paths(interest.path, listing)
    said = f"{interest.path} is not in the vault (paths as kimun prints them)"
    if not close:
        return said + "; no note's path is close to it"
    return said + f"; the closest notes: {_named(close)}"


def _no_heading(interest: Interest, headings: set[str]) -> str:
    """The sentence of a heading the note does not have now, naming its closest sections."""
    heading = str(interest.heading)
    close = closest_headings(heading, headings)
    said = (
        f"{interest.path} has no section headed {heading!r} now (the note changed since it "
        "was judged, or the heading is misspelt)"
    )
    if not close:
        return said + "; no heading of the note is close to it"
    return said + f"; the closest sections: {_named([section_id(interest.path, h) for h in close])}"


def _vault_stage(rows: _Rows, q: _Query) -> bool:
    """judged, sectioned: is the section in the vault now?"""
    interest = rows.interest
    rows.add("judged", True, "of interest")
    reason = q.unreadable.get(interest.path)
    if reason is not None:
        rows.add("sectioned", False, f"{interest.path} cannot be read from the vault: {reason}")
        return False
    if q.headings is None:
        rows.add("sectioned", True, "not checked: no vault given")
    elif interest.path not in q.headings:
        rows.add("sectioned", False, _not_in_vault(interest, q))
        return False
    elif interest.heading is not None and interest.heading not in q.headings[interest.path]:
        rows.add("sectioned", False, _no_heading(interest, q.headings[interest.path]))
        return False
    else:
        rows.add("sectioned", True, "the note has this section now")
    return True


def _pool_stage(rows: _Rows, q: _Query) -> bool:
    """pool, dedup: is one of its chunks in the candidate pool?"""
    interest = rows.interest
    last = q.raw[-1].similarity_score if q.raw else np.nan
    mine = _ranks(q.raw, interest)
    if not mine:
        where = [] if q.ranking is None else _ranks(q.ranking, interest)
        if where:
            r = where[0]
            score = q.ranking[r].similarity_score  # type: ignore[index]
            why = (
                f"not in the candidate pool: its best chunk ranks {r + 1} of {len(q.ranking)} "  # type: ignore[arg-type]
                f"over the whole index (score {_num(score)} < {_num(last)}, the last score "
                f"of the pool of {len(q.raw)}; kimun's pool is {CANDIDATE_POOL})"
                + _frontmatter_in_pool(q.raw)
            )
            rows.add("pool", False, why, rank=r + 1, score=score, limit=last)
        elif q.logged:
            why = (
                f"not among the answer's {len(q.raw)} logged sources (a log holds the context "
                f"the server's cut kept, not its pool of {CANDIDATE_POOL})" + _unjudged(q)
            )
            rows.add("pool", False, why, limit=last)
        else:
            why = (
                f"not in the candidate pool of {len(q.raw)} chunks (kimun retrieves "
                f"{CANDIDATE_POOL})"
                + (
                    f"; none of its chunks is among the {len(q.ranking)} chunks the index "
                    "ranks for this question"
                    if q.ranking is not None
                    else ""
                )
                + _frontmatter_in_pool(q.raw)
            )
            rows.add("pool", False, why, limit=last)
        return False
    best = mine[0]
    rows.add(
        "pool",
        True,
        f"in the candidate pool: best chunk at rank {best + 1} of {len(q.raw)} "
        f"(score {_num(q.raw[best].similarity_score)})",
        rank=best + 1,
        score=q.raw[best].similarity_score,
        limit=last,
    )
    kept_mine = _ranks(q.pool, interest)
    folded = len(mine) - len(kept_mine)
    rows.add(
        "dedup",
        True,
        f"{folded} identical chunk{'s' if folded != 1 else ''} folded into the one at rank "
        f"{kept_mine[0] + 1}"
        if folded
        else "no chunk of it folded by de-duplication",
        rank=kept_mine[0] + 1,
        score=q.pool[kept_mine[0]].similarity_score,
    )
    return True


def _rerank_stage(rows: _Rows, q: _Query) -> bool:
    """rerank: did the reranker push it out of a context the vector order keeps?"""
    interest = rows.interest
    kept = cut_len(q.ranked, q.settings)
    final = _ranks(q.ranked, interest)
    kept_mine = _ranks(q.pool, interest)
    if q.reranked is None:
        rows.add("rerank", True, "no reranker: the vector order is kept", rank=final[0] + 1)
    elif not q.reranked.reranked:
        rows.add("rerank", True, q.reranked.fallback_reason, rank=final[0] + 1)
    else:
        before, after = kept_mine[0], final[0]
        vector_kept = before < cut_len(q.pool, q.settings)
        lost = after >= kept and vector_kept
        moved = "kept it at" if before == after else f"moved it from rank {before + 1} to"
        score = q.ranked[after].similarity_score
        sanitised = " after sanitising" if q.reranked.sanitised else ""
        tail = (
            "; the vector order would keep it in the context, the reranked cut drops it"
            + _frontmatter_above(q.ranked, after)
            + _unjudged(q)
            if lost
            else ""
        )
        rows.add(
            "rerank",
            not lost,
            f"the reranker {moved} rank {after + 1} (score {_num(score)}{sanitised}){tail}",
            rank=after + 1,
            rank_before=before + 1,
            score=score,
        )
        if lost:
            return False
    return True


def _cut_stage(rows: _Rows, q: _Query) -> bool:
    """cut, search: does the context cut keep it, and is its note a search row?"""
    interest = rows.interest
    kept = cut_len(q.ranked, q.settings)
    final = _ranks(q.ranked, interest)
    chunk = q.ranked[final[0]]
    said = why_not(q.ranked, chunk, q.settings)
    answer_line = _line(said, "Answer")
    inside = [i for i in final if i < kept]
    limit = _limit(q.ranked, q.settings)
    if not inside:
        rows.add(
            "cut",
            False,
            _and(answer_line, _frontmatter_above(q.ranked, final[0]) + _unjudged(q)),
            rank=final[0] + 1,
            score=chunk.similarity_score,
            limit=limit,
        )
    else:
        rows.add(
            "cut",
            True,
            answer_line,
            rank=inside[0] + 1,
            score=q.ranked[inside[0]].similarity_score,
            limit=limit,
        )
    listed = search_rows(q.ranked, q.settings)
    row = next((r for r, c in enumerate(listed) if c.path == interest.path), None)
    if row is None:
        rows.add("search", False, _line(said, "Search"))
    elif interest.holds(listed[row]):
        rows.add("search", True, f"listed as search row {row + 1} by this section", rank=row + 1)
    else:
        other = innermost_heading(listed[row].title)
        by = (
            f"its frontmatter ({other!r}: {FRONTMATTER_WHY})"
            if is_frontmatter(listed[row])
            else f"another chunk ({other!r})"
        )
        rows.add(
            "search", True, f"its note is search row {row + 1}, represented by {by}", rank=row + 1
        )
    return bool(inside)


def _answer_stage(rows: _Rows, q: _Query) -> bool:
    """context, cited: its [n] in the answer's context, and whether the answer cites it."""
    interest = rows.interest
    kept = cut_len(q.ranked, q.settings)
    first = next(i for i in _ranks(q.ranked, interest) if i < kept)
    numbers = {"rank": first + 1, "score": q.ranked[first].similarity_score}
    ordinals = [c.ordinal for c in q.context if interest.holds(c) and c.ordinal is not None]
    if not ordinals:
        why = "kept by the cut, but not among the answer's context"
        rows.add("context", False, why, **numbers)
        return False
    marks = ", ".join(f"[{n}]" for n in ordinals)
    why = f"in the answer's context as {marks}"
    rows.add("context", True, why, ordinal=ordinals[0], **numbers)
    if q.answer is None:
        return False
    cited, dangling = _cited(q.answer, q.context)
    hits = [n for n in ordinals if n in cited]
    dangle = (
        f"; dangling citation{'s' if len(dangling) > 1 else ''} "
        + ", ".join(f"[{n}]" for n in dangling)
        + f" match{'' if len(dangling) > 1 else 'es'} no source of the {len(q.context)}-chunk "
        "context"
        if dangling
        else ""
    )
    if hits:
        rows.add("cited", True, f"cited as [{hits[0]}]{dangle}", ordinal=hits[0], **numbers)
    else:
        shown = ", ".join(f"[{n}]" for n in sorted(cited)) or "nothing"
        rows.add(
            "cited",
            False,
            f"in the context as {marks} but the answer cites {shown}{dangle}",
            ordinal=ordinals[0],
            **numbers,
        )
    return True


def _trace_one(rows: _Rows, q: _Query) -> None:
    for stage in (_vault_stage, _pool_stage, _rerank_stage, _cut_stage, _answer_stage):
        if not stage(rows, q):
            return


def _reranked(
    deduped: list[ChunkResult], scores: Sequence[tuple[int, float]] | None, failed: bool
) -> Any:
    if scores is None and not failed:
        return None
    return rerank(deduped, None if failed else scores)


def ranked_pool(
    pool: Sequence[ChunkResult],
    rerank_scores: Sequence[tuple[int, float]] | None = None,
    *,
    reranker_failed: bool = False,
) -> list[ChunkResult]:
    """The pool the cut reads: de-duplicated, then reranked when scores are given (kimun's order).

    >>> from askkit.ranking import pool_of
    >>> [c.path for c in ranked_pool(pool_of([0.9, 0.8]), [(0, 0.1), (1, 0.7)])]
    ['/n1.md', '/n0.md']
    """
    deduped = deduplicate_chunks(pool)
    reranked = _reranked(deduped, rerank_scores, reranker_failed)
    return list(reranked.pool) if reranked is not None else deduped


def trace_pool(
    pool: Sequence[ChunkResult],
    sections: Iterable[Interest | tuple[str, str | None] | str] | pd.DataFrame,
    settings: CutSettings | None = None,
    *,
    query_id: str = "",
    rerank_scores: Sequence[tuple[int, float]] | None = None,
    reranker_failed: bool = False,
    headings: Mapping[str, set[str]] | None = None,
    unreadable: Mapping[str, str] | None = None,
    ranking: Sequence[ChunkResult] | None = None,
    context: Sequence[ChunkResult] | None = None,
    answer: str | None = None,
    logged: bool = False,
    listing: Sequence[str] | None = None,
    grades: Mapping[Interest, int] | None = None,
) -> pd.DataFrame:
    """Follow each section of interest through kimun's stages on one query's candidate pool.

    Parameters
    ----------
    pool:
        The candidate pool as the vector store returned it (best first, at
        most :data:`~askkit.ranking.CANDIDATE_POOL` chunks; de-duplicated
        here as kimun does).
    sections:
        The notes or sections to follow (:func:`sections_of`).
    settings:
        The server's cut settings (default kimun's).
    query_id:
        The query's id, copied to every row.
    rerank_scores:
        The reranker's ``(index into the de-duplicated pool, score)`` pairs,
        as its backend returned them (:func:`askkit.ranking.rerank`);
        ``reranker_failed`` when the reranker call failed.
    headings:
        Each note's innermost headings now (:func:`vault_headings`); ``None``
        does not check the vault.
    unreadable:
        Notes the vault cannot read, each with the reason naming the file
        (:func:`~askkit.trace.read_headings`): a section of one stops at
        ``sectioned`` and says why.
    ranking:
        The whole index ranked for this query (best first): gives a section
        outside the pool its own rank and score.
    context:
        The answer's context as the server sent it (chunks with ordinals);
        default: the cut's own (:func:`askkit.ranking.answer_context`).
    answer:
        The answer's text: its ``[n]`` citations make the ``cited`` stage.
    logged:
        ``pool`` is a logged answer's sources (the context the server's cut
        kept, not its whole pool): said so when a section is missing.
    listing:
        Every note's printed path (:attr:`~askkit.trace.VaultHeadings.listing`):
        a section whose note is not in the vault names the closest of them
        (:func:`~askkit.trace.closest_paths`; default: the notes of ``headings``).
        A section whose heading the note lacks names the note's closest headings.
    grades:
        The question's judgments: each judged note or section with its qrels grade
        (a grade below 0: pooled, not judged). Gives every row the query's
        :class:`UnjudgedAbove` (:func:`unjudged_above` of the cut's prefix):
        ``unjudged_kept`` (every unjudged section the cut kept, best first),
        ``lowest_relevant`` (the rank of the lowest relevant section the cut kept;
        missing when it kept none) and ``unjudged_above`` (how many of them rank
        above it: all when there is none), and a section the cut lost (at ``cut``, at
        ``rerank``, or missing from a logged context) says them in its ``why``.
        ``None`` (the default): those columns are missing.

    Returns
    -------
    pandas.DataFrame
        :data:`TRACE_COLUMNS`, one row per section and stage reached.

    Examples
    --------
    >>> from askkit.ranking import pool_of
    >>> frame = trace_pool(pool_of([0.9, 0.5, 0.1]), ["/n0.md"], answer="Yes [1].")
    >>> for stage, why in zip(frame["stage"].tail(2), frame["why"].tail(2)):
    ...     print(stage, "|", why)
    context | in the answer's context as [1]
    cited | cited as [1]
    """
    settings = CutSettings() if settings is None else settings
    raw = list(pool)
    deduped = deduplicate_chunks(raw)
    reranked = _reranked(deduped, rerank_scores, reranker_failed)
    ranked = list(reranked.pool) if reranked is not None else deduped
    shown = answer_context(ranked, settings) if context is None else list(context)
    above = None if grades is None else unjudged_above(ranked, cut_len(ranked, settings), grades)
    rows: list[dict[str, Any]] = []
    for interest in sections_of(sections):
        one = _Rows(query_id, interest)
        _trace_one(
            one,
            _Query(
                raw=raw,
                pool=deduped,
                ranked=ranked,
                reranked=reranked,
                settings=settings,
                headings=headings,
                unreadable={} if unreadable is None else unreadable,
                ranking=ranking,
                context=shown,
                answer=answer,
                logged=logged,
                listing=() if listing is None else listing,
                unjudged=above,
            ),
        )
        rows.extend(one.finish())
    if above is not None:
        for row in rows:
            row.update(
                unjudged_above=above.above, lowest_relevant=above.lowest, unjudged_kept=above.kept
            )
    return trace_frame(rows)


def trace_frame(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """Rows as the typed trace frame (:data:`TRACE_COLUMNS`).

    >>> trace_frame([]).columns.tolist()[:5]
    ['query_id', 'section', 'path', 'heading', 'stage']
    """
    return pd.DataFrame(
        {
            name: pd.Series([r[name] for r in rows], dtype=dtype)
            for name, dtype in TRACE_COLUMNS.items()
        }
    )
