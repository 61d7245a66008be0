"""``askkit report``: a static HTML report for a run, without Jupyter."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from askkit.cli import _terminal, contract
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
    p.add_argument(
        "-o",
        "--output",
        type=contract.output_file,
        default="askkit-report.html",
        help="the HTML file to write",
    )
    p.add_argument(
        "--measures",
        help="comma-separated measures, ranx names (default: ndcg@10, precision@10, "
        "recall@10, hit@10, mrr, map, r-precision)",
    )
    p.add_argument("--level", choices=["note", "section"], default="note")
    p.add_argument(
        "--max-queries",
        type=contract.whole_number(0),
        default=200,
        help="queries in the drilldown (default 200)",
    )
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
        type=contract.fraction,
        default=0.9,
        help="with --qrels: the recall (0..1) of each pool's relevant notes a recommended "
        "context cut must keep (default 0.9)",
    )
    p.set_defaults(func=report_command)


def report_command(args: argparse.Namespace, console: Console) -> int:
    """Run ``askkit report``."""
    # checked before the slow imports; a pipe (--qrels <(...)) is fine
    if args.qrels is not None and not Path(args.qrels).exists():
        raise UsageError(f"--qrels: no such file: {args.qrels}")
    if args.qrels is not None and Path(args.qrels).is_dir():
        raise UsageError(f"--qrels: {args.qrels} is a folder, not a file")
    if args.vault is not None and not Path(args.vault).is_dir():
        raise UsageError(f"--vault: no such folder: {args.vault}")
    from askkit.report import DEFAULT_MEASURES, build_report

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
    try:
        out = report.write(Path(args.output))
    except OSError as exc:  # the writer's error names its temporary file: name -o instead
        raise UsageError(
            f"-o {args.output}: cannot write the report ({exc.strerror or exc})"
        ) from None
    if report.headline:  # one line on stderr, before the usual summary; the report is written
        _terminal.console(stderr=True, soft_wrap=True).print(Text(report.headline))
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
