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
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from askkit.cli import arguments
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
        "the sections lost and why, and the smallest setting change that keeps each cut one.",
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
        help="how many lost sections to list (default 10)",
    )
    p.add_argument("--json", action="store_true", help="print the trace's stop rows as JSON")
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


def _retriever(args: argparse.Namespace) -> Any:
    if args.embedder is None:
        from askkit.retrieve.local import LocalIndex

        return LocalIndex(args.vault)
    from askkit.cli.dense import _open_dense_index

    return _open_dense_index(args.vault, args, progress=True)


def why_command(args: argparse.Namespace, console: Console) -> int:
    """Run ``askkit why``."""
    import pandas as pd

    from askkit.ranking import CutSettings
    from askkit.trace import funnel, trace_log, trace_queries, what_if

    _check_inputs(args)
    settings = CutSettings() if args.settings is None else CutSettings.from_file(args.settings)
    qrels = _only(args.qrels, args.query)
    table = None
    if args.log is not None:
        traced = trace_log(args.log, qrels)
    else:
        from askkit.metrics.queries import read_queries

        queries = read_queries(args.queries)
        if args.query is not None:
            if args.query not in queries:
                raise UsageError(f"--query: {args.query!r} is not in {args.queries}")
            queries = {args.query: queries[args.query]}
        retriever = _retriever(args)
        reranker = getattr(retriever, "reranker", None)  # the dense index's, from --reranker
        traced = trace_queries(
            retriever, queries, qrels, settings, vault=args.vault, reranker=reranker
        )
        table = what_if(retriever.pools(queries, progress=False), qrels, settings, trace=traced)
    if traced.empty:
        where = "turn id" if args.log is not None else "query"
        raise UsageError(
            f"--qrels: no {where} has a judged relevant section (grade >= 1): the "
            f"{'log' if args.log is not None else 'queries'} and the qrels must use the same ids"
        )
    stops = traced[traced["stopped"]]
    if args.json:
        rows = stops[["query_id", "section", "stage", "passed", "rank", "ordinal", "why"]]
        records = json.loads(rows.astype({"stage": str}).to_json(orient="records"))
        out: dict[str, Any] = {"sections": records}
        if table is not None:
            out["settings"] = settings.label
            kept = table[table["keeps"]].drop(columns=["settings"])
            out["what_if"] = json.loads(kept.to_json(orient="records"))
        console.print_json(json.dumps(out))
        return 0
    if table is not None:
        console.print(Text(f"settings: {settings.label}"), soft_wrap=True)
    counts = funnel(traced)
    worst = counts.drop(index="total").sort_values("lost", ascending=False, kind="stable")
    shown_counts = pd.concat([worst[worst["lost"] > 0].head(args.top), counts.loc[["total"]]])
    console.print(
        frame_table(
            shown_counts.reset_index(),
            title="where relevant sections stop (the queries losing most, and the total)",
        )
    )
    lost = stops[~stops["passed"]].head(args.top)
    if len(lost):
        shown = lost[["query_id", "section", "stage", "rank", "why"]].astype({"stage": str})
        console.print(frame_table(shown, title=f"lost sections (first {len(shown)})"))
    if table is not None and len(table):
        kept = table[table["keeps"]]
        columns = ["query_id", "section", "change", "suggested", "mean_chunks", "mean_notes"]
        columns += ["gained_elsewhere", "lost_elsewhere"]
        console.print(frame_table(kept[columns].head(4 * args.top), title="what would keep them"))
    return 0
