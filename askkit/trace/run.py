"""Trace questions through a retriever: one question, or a judged query set, and its funnel.

:func:`trace` asks a retriever (:class:`askkit.retrieve.LocalIndex`,
:class:`askkit.dense.DenseIndex`, :class:`askkit.dense.StoreRetriever`:
anything with ``pool(text, size)``) for the question's candidate pool, reads
the sections' notes now (:func:`read_headings`: those notes alone, a note the
vault cannot read said why), optionally runs a reranker, and follows the
sections of interest through :func:`~askkit.trace.trace_pool`.
:func:`trace_queries` does it for every judged query; :func:`funnel` counts
the relevant sections that survive each stage.

Examples
--------
>>> from askkit.ranking import pool_of
>>> from askkit.trace import trace_pool
>>> pool = pool_of([0.9, 0.8, 0.2, 0.1])
>>> frame = trace_pool(pool, ["/n0.md", "/n2.md", "/x.md"], query_id="q1")
>>> funnel(frame).reset_index()[["query_id", "judged", "pool", "cut", "context", "lost"]]
  query_id  judged  pool  cut  context  lost
0       q1       3     2    1        1     2
1    total       3     2    1        1     2
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence, Sized
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from askkit.dense.rerankers import Reranker, adapted_scores, rerank_document
from askkit.errors import VaultError
from askkit.metrics.qrels import PathOrFrame
from askkit.ranking import CutSettings, deduplicate_chunks
from askkit.ranking.pools import checked_queries
from askkit.sources import Turn, VaultPath, innermost_heading
from askkit.trace.columnar import query_grades, relevant_sections
from askkit.trace.interest import Interest, printed_path, sections_of
from askkit.trace.stages import (
    FUNNEL_STAGES,
    QUERY_COLUMNS,
    STAGE_DTYPE,
    STAGES,
    TRACE_COLUMNS,
    trace_frame,
    trace_pool,
)
from askkit.vault import DEFAULT_KIMUN, KimunVersion, Vault, chunk_note
from askkit.wire import ChunkResult

__all__ = [
    "PoolRetriever",
    "VaultHeadings",
    "funnel",
    "gather",
    "read_headings",
    "trace",
    "trace_log",
    "trace_queries",
    "trace_turn",
    "unjudged_per_query",
    "vault_headings",
]


class PoolRetriever(Protocol):
    """What a trace needs of a retriever: its candidate pool for a text."""

    def pool(self, query: str, size: int | None = None) -> list[ChunkResult]: ...


@dataclass(frozen=True, slots=True)
class VaultHeadings:
    """Notes' innermost section headings now, and the notes of interest the vault cannot read.

    ``headings`` maps a note's printed vault path to its innermost headings, as
    kimun cuts the note; ``unreadable`` maps a path of interest whose note the
    vault could not read (not UTF-8, over ``max_note_bytes``, a FIFO, a link
    leaving the vault, gone since it was listed) to the vault's reason, which
    names the file; ``listing`` is every note's printed path (the vault's
    listing: no note read), from which a path that names no note gets the
    closest ones (:func:`~askkit.trace.closest_paths`). :func:`read_headings`
    makes one; a trace stops such a note at ``sectioned`` with the reason.

    >>> VaultHeadings({"a.md": {"Intro"}}, {"b.md": "/v/b.md: not valid UTF-8 at byte 3"})
    VaultHeadings(headings={'a.md': {'Intro'}}, unreadable={'b.md': '/v/b.md: not valid UTF-8 at byte 3'}, listing=())
    """  # noqa: E501 - a doctest's output is one line

    headings: Mapping[str, set[str]]
    unreadable: Mapping[str, str] = field(default_factory=dict)
    listing: Sequence[str] = ()


def _skipped(notes: Vault) -> dict[str, str]:
    """The entries the vault's listing skipped, by printed vault path: the file and why."""
    out: dict[str, str] = {}
    for file, reason in notes.skipped.items():
        try:
            key = str(VaultPath(file.relative_to(notes.root).as_posix()))
        except ValueError:  # not below the root: no vault path names it
            continue
        out.setdefault(key, f"{file}: {reason}")
    return out


def _read(
    notes: Vault, paths: Iterable[str] | None, kimun: KimunVersion
) -> Iterator[tuple[str, set[str] | VaultError]]:
    """Each note asked for (every listed note by default) with its headings, or why the
    vault cannot read it; a path neither listed nor skipped by the listing is left out."""
    listed = {str(p): p for p in notes.notes()}
    wanted = listed if paths is None else dict.fromkeys(printed_path(str(p)) for p in paths)
    skipped: dict[str, str] | None = None
    for path in wanted:
        note = listed.get(path)
        if note is None:
            skipped = _skipped(notes) if skipped is None else skipped
            if path in skipped:
                yield path, VaultError(skipped[path])
            continue
        try:
            text = notes.read(note)
        except VaultError as exc:
            yield path, exc
            continue
        yield path, {innermost_heading(s.title) for s in chunk_note(text, kimun=kimun)}


def read_headings(
    vault: Vault | str | os.PathLike[str],
    paths: Iterable[str] | None = None,
    *,
    kimun: KimunVersion = DEFAULT_KIMUN,
) -> VaultHeadings:
    """The headings of the notes at ``paths`` now, and why the vault cannot read the others.

    Only the notes asked for are read (every note when ``paths`` is ``None``;
    each path as typed on disk or as kimun prints it, keyed by the printed one),
    through :class:`~askkit.vault.Vault`, so nothing outside the vault is
    opened. A path the vault does not hold is in neither mapping; ``listing``
    holds every note's printed path (listed, not read).

    >>> import pathlib, tempfile
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / "bread.md").write_text("# Bread\\n## Starter\\nFeed it.\\n")
    >>> _ = (root / "bad.md").write_bytes(b"# Bad\\n\\xff\\n")
    >>> read = read_headings(root, ["bread.md", "bad.md", "gone.md"])
    >>> read.headings
    {'bread.md': {'Starter'}}
    >>> "bad.md: not valid UTF-8 at byte 6" in read.unreadable["bad.md"]
    True
    """
    notes = vault if isinstance(vault, Vault) else Vault(vault)
    headings: dict[str, set[str]] = {}
    unreadable: dict[str, str] = {}
    for path, found in _read(notes, paths, kimun):
        if isinstance(found, VaultError):
            unreadable[path] = str(found)
        else:
            headings[path] = found
    return VaultHeadings(headings, unreadable, tuple(str(p) for p in notes.notes()))


def vault_headings(
    vault: Vault | str | os.PathLike[str],
    *,
    kimun: KimunVersion = DEFAULT_KIMUN,
    paths: Iterable[str] | None = None,
) -> dict[str, set[str]]:
    """Each note's innermost section headings now, as kimun cuts the note (by printed path).

    ``paths`` reads those notes alone (default: every note). A note that
    cannot be read raises :class:`~askkit.VaultError`;
    :func:`read_headings` gives its reason instead.

    >>> import pathlib, tempfile
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / "bread.md").write_text("# Bread\\n## Starter\\nFeed it.\\n")
    >>> vault_headings(root)
    {'bread.md': {'Starter'}}
    """
    notes = vault if isinstance(vault, Vault) else Vault(vault)
    headings: dict[str, set[str]] = {}
    for path, found in _read(notes, paths, kimun):
        if isinstance(found, VaultError):
            raise found
        headings[path] = found
    return headings


def _headings_now(
    vault: Vault | str | os.PathLike[str] | Mapping[str, set[str]] | VaultHeadings | None,
    paths: Iterable[str],
) -> VaultHeadings | None:
    """The headings a trace checks its sections against: the notes at ``paths`` alone."""
    if vault is None or isinstance(vault, VaultHeadings):
        return vault
    if isinstance(vault, Vault | str | os.PathLike):
        return read_headings(vault, paths)
    return VaultHeadings(vault)


def _rerank_scores(
    reranker: Reranker | None, question: str, pool: Sequence[ChunkResult]
) -> tuple[list[tuple[int, float]] | None, bool]:
    if reranker is None:
        return None, False
    documents = [rerank_document(c.title, c.content) for c in deduplicate_chunks(pool)]
    try:
        scored = list(reranker.score(question, documents))
    except Exception:  # kimun keeps the vector order on any reranker failure
        return None, True
    # a cross-encoder's logits through kimun's adapter, as DenseIndex's pools take them
    return list(adapted_scores(reranker, scored)), False  # type: ignore[call-overload]


def trace(
    question: str,
    retriever: PoolRetriever,
    sections: Iterable[Interest | tuple[str, str | None] | str] | pd.DataFrame,
    settings: CutSettings | None = None,
    *,
    vault: Vault | str | os.PathLike[str] | Mapping[str, set[str]] | VaultHeadings | None = None,
    reranker: Reranker | None = None,
    answer: str | None = None,
    context: Sequence[ChunkResult] | None = None,
    query_id: str = "",
    grades: Mapping[Interest, int] | None = None,
) -> pd.DataFrame:
    """Follow the sections of interest through kimun's answer to ``question``.

    Parameters
    ----------
    question:
        The question, as kimun's retrieval query.
    retriever:
        Gives the candidate pool (``pool(text, size)``, in vector order: give
        the reranker here, not to the retriever). With ``len(retriever)`` a
        section outside the pool gets its rank over the whole index.
    sections:
        The notes or sections of interest (:func:`~askkit.trace.sections_of`).
    settings:
        kimun's cut settings (``CutSettings.from_file("server.toml")``).
    vault:
        The vault (or headings read already: :func:`read_headings`,
        :func:`vault_headings`), to say whether each section still exists;
        ``None`` skips that check. Only the notes of ``sections`` are read; one
        the vault cannot read stops at ``sectioned``, saying why.
    reranker:
        A reranker as kimun's server runs it (:mod:`askkit.dense.rerankers`);
        a failing one leaves the vector order, as kimun does.
    answer, context:
        An answer's text (its ``[n]`` citations) and the context it was
        given; see :func:`~askkit.trace.trace_pool`.
    query_id:
        Copied to every row.
    grades:
        The question's judgments (:func:`~askkit.trace.query_grades`): then each row
        says how many unjudged sections the cut kept above the relevant ones
        (:func:`~askkit.trace.unjudged_above`; see :func:`~askkit.trace.trace_pool`).

    Returns
    -------
    pandas.DataFrame
        The trace (:data:`~askkit.trace.TRACE_COLUMNS`).
    """
    wanted = sections_of(sections)
    inputs = gather(question, retriever, wanted, vault=vault, reranker=reranker)
    return trace_pool(
        inputs.pop("pool"),
        wanted,
        settings,
        query_id=query_id,
        context=context,
        answer=answer,
        grades=grades,
        **inputs,
    )


def gather(
    question: str,
    retriever: PoolRetriever,
    sections: Sequence[Interest],
    *,
    vault: Vault | str | os.PathLike[str] | Mapping[str, set[str]] | VaultHeadings | None = None,
    reranker: Reranker | None = None,
) -> dict[str, Any]:
    """What :func:`~askkit.trace.trace_pool` needs of a retriever, a vault and a reranker.

    ``pool`` (the store's pool before de-duplication when the retriever has
    ``vector_pool``, as the dense ones do; else its ``pool``), ``headings``
    and ``unreadable`` (of the sections' notes alone, :func:`read_headings`),
    ``listing`` (every note's printed path, for the closest to one that is not there),
    ``ranking`` (the whole index, asked only when a
    section is outside the pool and the retriever has a length),
    ``rerank_scores`` and ``reranker_failed``.
    """
    # the store's pool before de-duplication, when the retriever gives it (dense retrievers)
    vector_pool = getattr(retriever, "vector_pool", None)
    ranked = vector_pool if callable(vector_pool) else retriever.pool
    pool = ranked(question)
    now = _headings_now(vault, [w.path for w in sections])
    ranking = None
    if isinstance(retriever, Sized) and any(not any(w.holds(c) for c in pool) for w in sections):
        ranking = ranked(question, max(len(retriever), 1))
    scores, failed = _rerank_scores(reranker, question, pool)
    return {
        "pool": pool,
        "headings": None if now is None else now.headings,
        "unreadable": None if now is None else now.unreadable,
        "listing": None if now is None or not now.listing else now.listing,
        "ranking": ranking,
        "rerank_scores": scores,
        "reranker_failed": failed,
    }


def trace_queries(
    retriever: PoolRetriever,
    queries: Any,
    qrels: PathOrFrame,
    settings: CutSettings | None = None,
    *,
    vault: Vault | str | os.PathLike[str] | Mapping[str, set[str]] | VaultHeadings | None = None,
    reranker: Reranker | None = None,
    answers: Mapping[str, str] | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Trace every judged query's relevant sections (grade >= 1) through ``retriever``.

    ``queries`` as :func:`askkit.metrics.read_queries` reads them; the
    queries without a relevant judgment are skipped. ``answers`` maps a
    query id to its answer's text (then ``cited`` is traced). The vault is
    read once, and only the judged notes (:func:`read_headings`): a note no
    judgment names is never read, and a judged one the vault cannot read stops
    at ``sectioned``, saying why. Every row carries its query's unjudged
    sections the cut kept above its relevant ones (``unjudged_above``,
    ``lowest_relevant``, ``unjudged``: :func:`~askkit.trace.unjudged_above`, from
    every grade of the qrels, :func:`~askkit.trace.query_grades`).
    """
    texts = checked_queries(queries)
    sections = relevant_sections(qrels, texts)
    grades = query_grades(qrels, texts)
    headings = _headings_now(vault, dict.fromkeys(sections["path"].astype(str)))
    frames: list[pd.DataFrame] = []
    groups = list(sections.groupby("query_id", sort=False, observed=True))
    bar = tqdm(groups, desc="trace", unit="query", disable=not progress or len(groups) < 2)
    for query_id, wanted in bar:
        frames.append(
            trace(
                texts[str(query_id)],
                retriever,
                wanted,
                settings,
                vault=headings,
                reranker=reranker,
                answer=None if answers is None else answers.get(str(query_id)),
                query_id=str(query_id),
                grades=grades.get(str(query_id), {}),
            )
        )
    return pd.concat(frames, ignore_index=True) if frames else trace_frame([])


def _logged_chunks(turn: pd.DataFrame) -> list[ChunkResult]:
    """A logged turn's sources as the chunks its answer was given, by ordinal."""
    ordered = turn.sort_values(["ordinal"], kind="stable")
    dates = ordered["wire_date"] if "wire_date" in ordered.columns else None
    return [
        ChunkResult(
            path=str(path),
            title=str(title),
            date=None if dates is None or pd.isna(date) else str(date),
            content=str(text),
            hash=str(digest),
            similarity_score=float(score),
            ordinal=int(ordinal),
        )
        for path, title, date, text, digest, score, ordinal in zip(
            ordered["path"],
            ordered["title"],
            dates if dates is not None else [None] * len(ordered),
            ordered["text"],
            ordered["hash"],
            ordered["score"],
            ordered["ordinal"],
            strict=True,
        )
    ]


def trace_log(log: Any, qrels: PathOrFrame, *, progress: bool = False) -> pd.DataFrame:
    """Trace each logged answer's relevant sections: in its context as ``[n]``, cited or not.

    ``log`` is a turn log (a JSONL file or a sources frame,
    :func:`askkit.frame.sources_frame`) whose turn ids are the qrels' query
    ids. A log holds the context the server's cut kept, not the pool, so
    its sources stand for the pool and the cut keeps them all; a relevant
    section missing from them stops at ``pool`` and says so, with how many
    unjudged sections that context holds above its relevant ones (the
    ``unjudged_above``, ``lowest_relevant`` and ``unjudged`` of every row, as
    :func:`trace_queries` gives them).
    """
    from askkit.frame import sources_frame
    from askkit.ranking.pools import check_turn_ids

    frame = log if isinstance(log, pd.DataFrame) else sources_frame(log)
    check_turn_ids(frame)
    turns = {str(t): group for t, group in frame.groupby("turn_id", sort=False, observed=True)}
    sections = relevant_sections(qrels, turns)
    grades = query_grades(qrels, turns)
    frames: list[pd.DataFrame] = []
    groups = list(sections.groupby("query_id", sort=False, observed=True))
    bar = tqdm(groups, desc="trace", unit="turn", disable=not progress or len(groups) < 2)
    for query_id, wanted in bar:
        turn = turns[str(query_id)]
        chunks = _logged_chunks(turn)
        answer = turn["answer"].iloc[0] if "answer" in turn.columns else None
        answer = None if answer is None or pd.isna(answer) or not str(answer).strip() else answer
        said = None if answer is None else str(answer)
        frames.append(
            _trace_answer(chunks, wanted, said, str(query_id), grades.get(str(query_id), {}))
        )
    return pd.concat(frames, ignore_index=True) if frames else trace_frame([])


def trace_turn(
    turn: Turn,
    sections: Iterable[Interest | tuple[str, str | None] | str] | pd.DataFrame,
    *,
    query_id: str = "",
    grades: Mapping[Interest, int] | None = None,
) -> pd.DataFrame:
    """Trace one answer (a kimun server's answer job, :meth:`askkit.Turn.from_answer`, or a
    saved payload, :func:`askkit.read_turn`): its sources are the context it was given.

    As :func:`trace_log` for one turn: the cut keeps the sources all, a section
    missing from them stops at ``pool`` (and says the pool is not logged), one
    in them gets its ``[n]`` and whether the answer cites it (dangling citations named).
    ``grades`` (:func:`~askkit.trace.query_grades`) add the unjudged sections its
    context holds above the relevant ones, as :func:`trace_log` does.

    >>> from askkit import read_turn
    >>> turn = read_turn("data/answer_job.json")
    >>> frame = trace_turn(turn, [("journal/2026-03-29.md", None)])
    >>> print(frame[frame["stopped"]]["why"].iloc[0])
    in the context as [6] but the answer cites [1], [2], [3], [4], [7]; dangling citation [7] matches no source of the 5-chunk context
    """  # noqa: E501 - a doctest's output is one line
    chunks = [source.to_chunk() for source in turn.sources]
    chunks.sort(key=lambda c: c.ordinal if c.ordinal is not None else 0)
    answer = turn.answer if turn.answer.strip() else None
    return _trace_answer(chunks, sections, answer, query_id, grades)


def _trace_answer(
    chunks: list[ChunkResult],
    sections: Any,
    answer: str | None,
    query_id: str,
    grades: Mapping[Interest, int] | None = None,
) -> pd.DataFrame:
    """An answer's sources stand for the pool; the cut (fixed, all of them) keeps them all."""
    return trace_pool(
        chunks,
        sections,
        CutSettings(strategy="fixed", top_k=max(len(chunks), 1)),
        query_id=query_id,
        context=chunks,
        answer=answer,
        logged=True,
        grades=grades,
    )


def _stops(frame: pd.DataFrame) -> pd.DataFrame:
    """Per section: the query, its terminal stage and whether it passed it."""
    if "stage" in frame.columns:
        stopped = frame[frame["stopped"]]
        return pd.DataFrame(
            {
                "query_id": stopped["query_id"].to_numpy(),
                "stop": stopped["stage"].astype(STAGE_DTYPE).to_numpy(),
                "passed": stopped["passed"].to_numpy(dtype=bool),
                "answered": bool((frame["stage"] == "cited").any()),
            }
        )
    return pd.DataFrame(
        {
            "query_id": frame["query_id"].to_numpy(),
            "stop": frame["stopped"].astype(STAGE_DTYPE).to_numpy(),
            "passed": frame["passed"].to_numpy(dtype=bool),
            "answered": False,
        }
    )


def funnel(frame: pd.DataFrame) -> pd.DataFrame:
    """How many sections survive each stage, per query and in total.

    ``frame`` is a trace (:func:`trace_queries`) or the columnar sections
    frame (:func:`~askkit.trace.trace_pools`). A section counts at a stage
    when it passed it: it stopped later, or stopped there having passed it
    (the last stage reached). The counts never grow from one stage to the
    next. ``cited`` is shown only when an answer was traced; ``lost`` is
    ``judged`` minus the last stage's count. ``unjudged_above`` is shown when
    the trace was given the judgments (:func:`trace_queries`, :func:`trace_log`):
    per query, how many unjudged sections the cut kept above the lowest relevant
    section it kept, or all it kept when it kept none (:func:`unjudged_per_query`);
    its total is their sum. The last row is the ``total``.
    """
    stops = _stops(frame)
    answered = bool(stops["answered"].any()) if len(stops) else False
    stages = list(FUNNEL_STAGES if answered else FUNNEL_STAGES[:-1])
    code = pd.Categorical(stops["stop"], dtype=STAGE_DTYPE).codes.astype(np.int64)
    passed = stops["passed"].to_numpy(dtype=bool)
    columns = {}
    for stage in stages:
        at = STAGES.index(stage)
        columns[stage] = ((code > at) | ((code == at) & passed)).astype(np.int64)
    counts = pd.DataFrame(columns, index=pd.Index(stops["query_id"].astype(str), name="query_id"))
    per_query = counts.groupby(level=0, sort=False).sum()
    per_query.loc["total"] = per_query.sum(axis=0)
    per_query = per_query.astype(np.int64)
    per_query["lost"] = per_query[stages[0]] - per_query[stages[-1]]
    unjudged = unjudged_per_query(frame)
    if len(unjudged):
        count = unjudged["unjudged_above"].reindex(per_query.index[:-1])
        per_query["unjudged_above"] = pd.array(
            [*count.tolist(), count.sum(skipna=False)], dtype=pd.Int64Dtype()
        )
    return per_query


def unjudged_per_query(frame: pd.DataFrame) -> pd.DataFrame:
    """Per query of a trace: the unjudged sections its context cut kept, and how many rank
    above its relevant ones.

    One row per query traced with its judgments (:func:`trace_queries`,
    :func:`trace_log`, or ``grades`` given), indexed by ``query_id``:
    ``unjudged_above``, how many unjudged sections (no judgment of 0 or more) the
    cut kept above the lowest-ranked relevant section it kept, or every one it kept
    when it kept no relevant section; ``lowest_relevant``, that section's rank
    (missing when there is none); ``unjudged_kept``, every unjudged section the
    cut kept, best first (the first ``unjudged_above`` of them are counted; all
    rank above a relevant section the cut lost). :func:`~askkit.trace.unjudged_above`
    has the rule. A frame without them (a trace given no judgments, the columnar
    sections frame) gives no row.

    >>> from askkit.ranking import CutSettings, pool_of
    >>> from askkit.trace import Interest, trace_pool
    >>> grades = {Interest("/n2.md"): 1, Interest("/n1.md"): -1}  # the others: no judgment
    >>> top4 = CutSettings(strategy="fixed", top_k=4)
    >>> pool = pool_of([0.9, 0.8, 0.7, 0.6])
    >>> frame = trace_pool(pool, ["/n2.md"], top4, query_id="q1", grades=grades)
    >>> row = unjudged_per_query(frame).loc["q1"]
    >>> int(row["unjudged_above"]), int(row["lowest_relevant"]), row["unjudged_kept"]
    (2, 3, ('/n0.md#s', '/n1.md#s', '/n3.md#s'))
    """
    columns = list(QUERY_COLUMNS)
    if not set(columns) <= set(frame.columns):
        return pd.DataFrame(
            {c: pd.Series(dtype=TRACE_COLUMNS[c]) for c in columns},
            index=pd.Index([], dtype=object, name="query_id"),
        )
    firsts = frame.drop_duplicates("query_id")
    firsts = firsts[firsts["unjudged_above"].notna()]
    out = firsts[columns].astype({c: TRACE_COLUMNS[c] for c in columns})
    out.index = pd.Index(firsts["query_id"].astype(str).to_numpy(), dtype=object, name="query_id")
    return out
