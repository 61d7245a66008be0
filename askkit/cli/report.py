"""``askkit report``: a static HTML report for a run, without Jupyter."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from askkit.errors import UsageError

__all__ = ["register", "report_command"]


def register(sub: Any) -> None:
    """Add ``askkit report`` to the command line."""
    p = sub.add_parser("report", help="write a static HTML report for a run (no Jupyter needed)")
    p.add_argument("run", help="a JSONL turn log (or a JSON payload) of retrieved sources")
    p.add_argument(
        "--qrels", help="graded judgments (TSV: query_id, path, heading, grade; or TREC qrels)"
    )
    p.add_argument("--vault", help="the vault: show each source's section in its note")
    p.add_argument("-o", "--output", default="askkit-report.html", help="the HTML file to write")
    p.add_argument(
        "--measures",
        help="comma-separated measures, ranx names (default: ndcg@10, precision@10, "
        "recall@10, hit@10, mrr, map, r-precision)",
    )
    p.add_argument("--level", choices=["note", "section"], default="note")
    p.add_argument("--max-queries", type=int, default=200, help="queries in the drilldown")
    p.add_argument("--lenient", action="store_true", help="skip bad log records and list them")
    p.add_argument("--title", help="the report's title")
    p.add_argument(
        "--objective",
        choices=["smallest-context", "ndcg", "precision"],
        default="smallest-context",
        help="with --qrels: what the Context cut section's recommended setting optimises",
    )
    p.add_argument(
        "--min-recall",
        type=float,
        default=0.9,
        help="with --qrels: the recall (0..1) of each pool's relevant notes a recommended "
        "context cut must keep (default 0.9)",
    )
    p.set_defaults(func=report_command)


def report_command(args: argparse.Namespace, console: Console) -> int:
    """Run ``askkit report``."""
    from askkit.report import DEFAULT_MEASURES, build_report

    if not math.isfinite(args.min_recall) or not 0.0 <= args.min_recall <= 1.0:
        raise UsageError(f"--min-recall must be a number in 0..1, got {args.min_recall}")
    measures = (
        [m.strip() for m in args.measures.split(",") if m.strip()]
        if args.measures
        else list(DEFAULT_MEASURES)
    )
    report = build_report(
        args.run,
        args.qrels,
        vault=args.vault,
        measures=measures,
        level=args.level,
        max_queries=args.max_queries,
        strict=not args.lenient,
        title=args.title,
        objective=args.objective,
        min_recall=args.min_recall,
    )
    out = report.write(Path(args.output))
    if report.headline:  # one line on stderr, before the usual summary; the report is written
        Console(stderr=True, highlight=False, soft_wrap=True).print(Text(report.headline))
    console.print(
        Text(
            f"wrote {out} ({report.turns} turns, {report.sources} sources, "
            f"{report.shown} in the drilldown"
            + (f", {report.skipped} records skipped" if report.skipped else "")
            + ")"
        ),
        soft_wrap=True,
    )
    return 0
