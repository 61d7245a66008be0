"""``askkit why``: where each judged relevant note was lost in kimun's answer, and what keeps it.

The questions run through a local vault (``--vault`` and ``--queries``: the
BM25 index, or kimun's dense retrieval with ``--embedder``, reranked with
``--reranker``) or come from a
turn log with its answers (``LOG``: each turn's sources are the context its
answer was given, its ``id`` the query id). The command prints the funnel
(judged relevant -> in the vault -> in the pool -> after the reranker ->
after the cut -> in the context -> cited), the lost sections with the
sentence saying why, and, for a vault, the smallest setting changes that
keep each section the cut dropped, with their cost (:mod:`askkit.trace`).

Most of a personal vault is unjudged, so a relevant section lost at the cut may
have lost to sections nobody judged, which may be relevant themselves: per
question, the funnel's ``unjudged_above`` counts the unjudged sections (no
judgment of 0 or more) the cut kept above the lowest relevant section it kept
(all it kept when it kept none), and the sentence of a section the cut lost
says how many unjudged sections the cut kept above it, naming the first
(:func:`askkit.trace.unjudged_above`); ``--json`` gives both per query
(``funnel``).

Every judged query (one with a relevant section) must have its question, or
its turn in the log: as ``askkit diff`` does, a judged query they lack is
refused, naming how many, unless ``--allow-partial``; then the output says
which were left out of the funnel (a line, or ``queries`` in ``--json``).
Only the judged notes are read for their headings: a note of the vault no
judgment names may be unreadable (the index skips it with a warning), and a
judged one the vault cannot read stops at ``sectioned``, saying why.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from askkit.cli import _terminal, arguments
from askkit.cli._console import frame_table
from askkit.errors import UsageError

__all__ = ["register", "why_command"]


def register(sub: Any) -> None:
    """Add ``askkit why`` to the command line."""
    p = sub.add_parser(
        "why",
        help="follow each judged relevant note through kimun's answer: where it was lost, "
        "and which setting would keep it",
        description="Trace every judged relevant section (grade >= 1) through kimun's stages "
        "(vault, candidate pool, reranker, context cut, context, citations), print the funnel, "
        "the sections lost and why, and the smallest setting change that keeps each cut one. "
        "Every judged query (one with a relevant section) needs its question in --queries, or "
        "its turn in the LOG: one missing is refused, as askkit diff does, unless "
        "--allow-partial. Only the judged notes are read for their headings; a judged note the "
        "vault cannot read (not UTF-8, over the size cap, not a regular file, a link leaving "
        "the vault) stops at 'sectioned' with the reason.",
    )
    p.add_argument(
        "log",
        nargs="?",
        help="a JSONL turn log with answers (turn ids are the qrels' query ids); "
        "or use --vault and --queries",
    )
    p.add_argument(
        "--qrels", required=True, help="graded judgments (TSV: query_id, path, heading, grade)"
    )
    p.add_argument("--vault", metavar="DIR", help="retrieve from this vault (BM25 by default)")
    p.add_argument(
        "--queries", metavar="TSV", help="with --vault: the queries (TSV: query_id, question)"
    )
    p.add_argument(
        "--settings",
        metavar="TOML",
        help="kimun's server.toml: its [reranker] cut settings (default: kimun's defaults)",
    )
    p.add_argument(
        "--embedder",
        metavar="SPEC",
        help="with --vault: dense retrieval as kimun's server (e.g. fastembed:AllMiniLML6V2)",
    )
    p.add_argument(
        "--reranker",
        metavar="SPEC",
        help="with --embedder: rerank kimun's dense pool as its server does (fastembed, "
        "fastembed:MODEL or http:URL:MODEL, as askkit search --reranker)",
    )
    p.add_argument("--query", metavar="ID", help="trace only this query id")
    p.add_argument(
        "--top",
        type=arguments.whole_number(1),
        default=10,
        help="how many of the queries losing most, of the lost sections and of the sections "
        "whose changes are listed (the same ones) to show (default 10; --json lists all)",
    )
    p.add_argument(
        "--allow-partial",
        action="store_true",
        help="trace the judged queries that have a question (--queries) or a turn with sources "
        "(LOG) even when some have none; the output names those left out of the funnel "
        "(default: refuse, as askkit diff does)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print the trace's stop rows as JSON, the funnel per query (with the unjudged "
        "sections the cut kept above the relevant ones), and the judged queries traced and "
        "left out",
    )
    p.set_defaults(func=why_command)


def _check_inputs(args: argparse.Namespace) -> None:
    if (args.log is None) == (args.vault is None):
        raise UsageError("give either a turn LOG or --vault DIR --queries TSV (not both)")
    if args.vault is None and (
        args.queries is not None or args.embedder is not None or args.settings is not None
    ):
        raise UsageError(
            "--queries, --embedder and --settings go with --vault; a LOG holds its own answers"
        )
    if args.reranker is not None and args.embedder is None:
        raise UsageError(
            "--reranker reranks kimun's dense pool: give --vault, --queries and --embedder too"
        )
    if args.vault is not None and args.queries is None:
        raise UsageError("--vault needs --queries TSV (query_id, question): what to retrieve")
    arguments.check_input(args.qrels, what="qrels", option="--qrels")
    if args.settings is not None:
        arguments.check_input(args.settings, what="settings", option="--settings")
    if args.log is not None:
        from askkit.frame.jsonl import INPUT_NAME

        arguments.check_input(args.log, what=INPUT_NAME)
        return
    arguments.check_input(args.queries, what="queries", option="--queries")
    if not Path(args.vault).is_dir():
        raise UsageError(f"--vault: no such folder: {args.vault}")


def _only(qrels: Any, query: str | None) -> Any:
    from askkit.metrics import read_qrels

    judged = read_qrels(qrels)
    if query is None:
        return judged
    mine = judged[judged["query_id"].astype(str) == query]
    if mine.empty:
        raise UsageError(f"--query: {query!r} has no judgments in the qrels")
    return mine


def _nothing_to_trace(args: argparse.Namespace) -> UsageError:
    where = "turn id" if args.log is not None else "query"
    return UsageError(
        f"--qrels: no {where} has a judged relevant section (grade >= 1): the "
        f"{'log' if args.log is not None else 'queries'} and the qrels must use the same ids"
    )


def _coverage(qrels: Any, have: Any, args: argparse.Namespace) -> dict[str, Any]:
    """The judged queries (with a relevant section) traced and left out; refuses a judged
    query without a question (or turn) unless --allow-partial, as ``askkit diff`` does."""
    from askkit.trace import relevant_sections

    per_query = relevant_sections(qrels).groupby("query_id", sort=False, observed=True).size()
    present = {str(q) for q in have}
    missing = sorted(str(q) for q in per_query.index if str(q) not in present)
    judged = len(per_query)
    if len(missing) == judged:
        raise _nothing_to_trace(args)
    coverage = {
        "judged": judged,
        "traced": judged - len(missing),
        "left_out": missing,
        "left_out_sections": int(per_query.loc[missing].sum()) if missing else 0,
    }
    if missing and not args.allow_partial:
        raise UsageError(
            f"{_lacks(coverage, args)}: give each judged query its "
            f"{'turn and its sources' if args.log is not None else 'question'}, or trace the other "
            f"{coverage['traced']} alone with --allow-partial"
        )
    return coverage


def _lacks(coverage: dict[str, Any], args: argparse.Namespace) -> str:
    """``--queries lacks 2 of the 34 judged queries (q02, q03; 5 relevant sections)``; a
    log's turn without sources is left out as a missing one is."""
    missing: list[str] = coverage["left_out"]
    named = ", ".join(missing[:10]) + (
        f" and {len(missing) - 10} more" if len(missing) > 10 else ""
    )
    sections = coverage["left_out_sections"]
    lacks = "the log has no sources for" if args.log is not None else "--queries lacks"
    return (
        f"{lacks} {len(missing)} of the {coverage['judged']} judged "
        f"quer{'y' if coverage['judged'] == 1 else 'ies'} ({named}; "
        f"{sections} relevant section{'' if sections == 1 else 's'})"
    )


def _retriever(args: argparse.Namespace) -> Any:
    """The vault's index, BM25 or dense: with progress bars on a terminal, a line every
    few seconds on a pipe (never a bar's redraws in a log)."""
    with _terminal.progress_output() as progress:
        if args.embedder is None:
            from askkit.retrieve.local import LocalIndex

            return LocalIndex(args.vault, progress=progress)
        from askkit.cli.dense import _open_dense_index

        return _open_dense_index(args.vault, args, progress=progress)


@dataclass(frozen=True, slots=True)
class _Traced:
    """What ``askkit why`` prints: the trace, what would keep the cut sections (a vault's
    alone), and the judged queries traced and left out."""

    frame: Any
    what_if: Any
    coverage: dict[str, Any]


def _trace_log(args: argparse.Namespace, qrels: Any) -> _Traced:
    """The log's turns traced, and the judged queries traced and left out."""
    from askkit.metrics.runs import load_turn_log
    from askkit.trace import trace_log

    log = load_turn_log(
        args.log,
        needs="askkit why traces each turn's own chunks through the cut (or trace on the "
        "spot: --vault DIR --queries TSV)",
    )
    coverage = _coverage(qrels, log["turn_id"].astype(str).unique(), args)
    return _Traced(trace_log(log, qrels), None, coverage)


def _trace_vault(args: argparse.Namespace, qrels: Any, settings: Any) -> _Traced:
    """The questions traced through the vault, what would keep the cut sections, and the
    judged queries traced and left out."""
    from askkit.metrics.queries import read_queries
    from askkit.trace import trace_queries, what_if
    from askkit.vault import Vault

    queries = read_queries(args.queries)
    if args.query is not None:
        if args.query not in queries:
            raise UsageError(f"--query: {args.query!r} is not in {args.queries}")
        queries = {args.query: queries[args.query]}
    coverage = _coverage(qrels, queries, args)
    retriever = _retriever(args)
    reranker = getattr(retriever, "reranker", None)  # the dense index's, from --reranker
    vault = getattr(retriever, "vault", None)  # the index's own: the vault is listed once
    traced = trace_queries(
        retriever,
        queries,
        qrels,
        settings,
        vault=vault if isinstance(vault, Vault) else args.vault,
        reranker=reranker,
    )
    table = what_if(retriever.pools(queries, progress=False), qrels, settings, trace=traced)
    return _Traced(traced, table, coverage)


#: The what-if columns as the table names them: short, so an 80-column terminal shows every
#: value whole (the legend under the table says what each is), as ``askkit cut`` does.
_CHANGE_COLUMNS = {
    "#": "#",
    "shown": "change",
    "mean_chunks": "chunks",
    "mean_notes": "notes",
    "gained_elsewhere": "gained",
    "lost_elsewhere": "lost",
}
_CHANGE_LEGEND = (
    "#: the lost section above. chunks, notes: the answer's context with that change "
    "(mean over the queries); gained, lost: the relevant sections it adds to or drops "
    "from the other queries' contexts."
)


def _lost(traced: Any, top: int) -> tuple[Any, int]:
    """The first ``top`` lost sections (numbered ``#`` from 1), and how many were lost."""
    stops = traced[traced["stopped"]]
    lost = stops[~stops["passed"]]
    shown = lost.head(top)[["query_id", "section", "stage", "rank", "why"]]
    shown = shown.astype({"stage": str}).reset_index(drop=True)
    shown.insert(0, "#", range(1, len(shown) + 1))
    return shown, len(lost)


def _changes(table: Any, lost: Any) -> Any:
    """The changes that keep each of the ``lost`` sections shown, by their ``#``, each
    named as the setting to use."""
    keys = ["query_id", "section"]
    kept = table[table["keeps"]].astype(dict.fromkeys(keys, str))
    numbered = lost[["#", *keys]].astype(dict.fromkeys(keys, str))
    mine = kept.merge(numbered, on=keys, how="inner").sort_values("#", kind="stable")
    # another strategy is named by its whole setting, not by the strategy's name alone
    other = mine["change"] == "strategy"
    labels = mine["settings"].map(lambda s: getattr(s, "label", None))
    mine["shown"] = mine["suggested"].where(~other | labels.isna(), labels)
    shown = mine[list(_CHANGE_COLUMNS)].astype(object)
    # a change no cut setting makes (a larger pool) has no cost to show: "—", not NaN
    return shown.where(shown.notna(), None).rename(columns=_CHANGE_COLUMNS)


def _print_text(args: argparse.Namespace, console: Console, why: _Traced, settings: Any) -> None:
    """The funnel, the first ``--top`` lost sections with their sentence under each, and
    what would keep those same sections."""
    import pandas as pd

    from askkit.trace import funnel

    traced, table, coverage = why.frame, why.what_if, why.coverage
    if table is not None:
        console.print(Text(f"settings: {settings.label}"), soft_wrap=True)
    if coverage["left_out"]:
        console.print(
            Text(
                f"partial: {_lacks(coverage, args)}, left out of the funnel, which counts "
                f"the other {coverage['traced']}"
            ),
            soft_wrap=True,
        )
    counts = funnel(traced)
    worst = counts.drop(index="total").sort_values("lost", ascending=False, kind="stable")
    losing = worst[worst["lost"] > 0]
    shown_counts = pd.concat([losing.head(args.top), counts.loc[["total"]]])
    which = (
        f"the {min(args.top, len(losing))} of the {len(losing)} queries losing some, worst "
        "first, and the total"
        if len(losing)
        else "no query loses any: the total"
    )
    console.print(
        frame_table(shown_counts.reset_index(), title=f"where relevant sections stop ({which})")
    )
    lost, how_many = _lost(traced, args.top)
    if not len(lost):
        return
    more = f" of {how_many} (--top N for more, --json for all)" if how_many > len(lost) else ""
    title = f"lost sections and why: the first {len(lost)}{more}"
    console.print(frame_table(lost, title=title, below="why"))
    if table is None:
        return
    changes = _changes(table, lost)
    if len(changes):
        console.print(frame_table(changes, title="what would keep them", digits=1))
        console.print(Text(_CHANGE_LEGEND, style="dim"))


def _funnel_records(traced: Any) -> list[dict[str, Any]]:
    """The funnel per query and its total, as JSON records: each query with the unjudged
    sections its cut kept (``unjudged_kept``, best first) and the rank of the lowest
    relevant section it kept (``lowest_relevant``), of which ``unjudged_above`` counts
    those ranked above it."""
    from askkit.trace import funnel, unjudged_per_query

    counts = funnel(traced)
    unjudged = unjudged_per_query(traced)[["lowest_relevant", "unjudged_kept"]]
    table = counts.join(unjudged.astype(object), how="left").reset_index()
    records: list[dict[str, Any]] = json.loads(table.to_json(orient="records"))
    return records


def why_command(args: argparse.Namespace, console: Console) -> int:
    """Run ``askkit why``."""
    from askkit.ranking import CutSettings

    _check_inputs(args)
    settings = CutSettings() if args.settings is None else CutSettings.from_file(args.settings)
    qrels = _only(args.qrels, args.query)
    why = _trace_log(args, qrels) if args.log is not None else _trace_vault(args, qrels, settings)
    if why.frame.empty:
        raise _nothing_to_trace(args)
    if not args.json:
        _print_text(args, console, why, settings)
        return 0
    stops = why.frame[why.frame["stopped"]]
    rows = stops[["query_id", "section", "stage", "passed", "rank", "ordinal", "why"]]
    records = json.loads(rows.astype({"stage": str}).to_json(orient="records"))
    out: dict[str, Any] = {
        "sections": records,
        "funnel": _funnel_records(why.frame),
        "queries": why.coverage,
    }
    if why.what_if is not None:
        out["settings"] = settings.label
        kept = why.what_if[why.what_if["keeps"]].drop(columns=["settings"])
        out["what_if"] = json.loads(kept.to_json(orient="records"))
    console.print_json(json.dumps(out))
    return 0
