"""``askkit report``: a static HTML report for a run, without Jupyter.

The run is read as ``eval`` and ``diff`` read it (a turn log, a JSON payload
or a TREC run: :func:`askkit.metrics.runs.load_run`) and scored at note level
unless ``--level section`` is given, as every command scores. The drilldown
shows the worst 25 queries (``--drilldown N``, ``all`` for every one); the
page says how many of how many. ``-o`` replaces an existing file only when it
is an earlier askkit report (:func:`askkit.report.is_askkit_report`), or with
``--force``. The options that only judged reports use (``--measures``,
``--level``, ``--objective``, ``--min-recall``, ``--grade``) are refused without
``--qrels``, never ignored; so is ``--vault`` with a TREC run, whose documents
carry no text.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from askkit.cli import _terminal, arguments
from askkit.errors import UsageError

__all__ = ["register", "report_command"]


def register(sub: Any) -> None:
    """Add ``askkit report`` to the command line."""
    p = sub.add_parser("report", help="write a static HTML report for a run (no Jupyter needed)")
    p.add_argument(
        "runs",
        nargs="+",
        metavar="RUN",
        help="a JSONL turn log (or a JSON payload) of retrieved sources, or a TREC run "
        "(ranked documents only: no answers or texts); several runs (with --qrels) are "
        "compared side by side against the first, which the page shows",
    )
    p.add_argument(
        "--qrels", help="graded judgments (TSV: query_id, path, heading, grade; or TREC qrels)"
    )
    p.add_argument("--vault", help="the vault: show each source's section in its note")
    p.add_argument(
        "-o",
        "--output",
        type=arguments.output_file,
        default="askkit-report.html",
        help="the HTML file to write; an existing file is replaced only when it is an "
        "earlier askkit report (or with --force)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="replace the -o file even when it is not an askkit report",
    )
    p.add_argument(
        "--measures",
        help="with --qrels: comma-separated measures, ranx names (default: ndcg@10, "
        "precision@10, recall@10, hit@10, mrr, map, r-precision)",
    )
    p.add_argument(
        "--level",
        choices=["note", "section"],
        help="with --qrels: score notes (the default, as every askkit command) or "
        "sections (path#heading); the page says which",
    )
    p.add_argument(
        "--drilldown",
        type=_drilldown,
        metavar="N",
        help=f"queries in the drilldown, the worst first (default {_DEFAULT_DRILLDOWN}; "
        "'all' for every one)",
    )
    p.add_argument(
        "--max-queries",
        type=arguments.whole_number(0),
        metavar="N",
        help="the same as --drilldown N",
    )
    p.add_argument(
        "--grade",
        type=arguments.whole_number(),
        metavar="N",
        help="with --qrels: the grade an unjudged document gets when a mean's bounds count "
        "it relevant (default: the qrels' top grade)",
    )
    p.add_argument("--lenient", action="store_true", help="skip bad log records and list them")
    p.add_argument("--title", help="the report's title")
    p.add_argument(
        "--objective",
        choices=["smallest-context", "ndcg", "precision"],
        help="with --qrels: what the Context cut section's recommended setting optimises "
        "(default smallest-context)",
    )
    p.add_argument(
        "--min-recall",
        type=arguments.fraction,
        help="with --qrels: the recall (0..1) of each pool's relevant notes a recommended "
        "context cut must keep (default 0.9)",
    )
    p.set_defaults(func=report_command)


#: ``--drilldown``'s default: :data:`askkit.report.DEFAULT_DRILLDOWN` (not imported here,
#: to keep ``askkit --help`` light; a test holds the two equal).
_DEFAULT_DRILLDOWN = 25
_ALL = "all"


def _drilldown(text: str) -> int | str:
    """``--drilldown``: a whole number >= 0, or ``all``."""
    if text.strip().lower() == _ALL:
        return _ALL
    try:
        return arguments.whole_number(0)(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"must be a whole number >= 0 or 'all', got {text!r}"
        ) from None


def _drilldown_size(args: argparse.Namespace) -> int | None:
    """The drilldown's size (``None``: every query) from ``--drilldown`` or its other
    spelling ``--max-queries``; the default when neither is given."""
    if args.drilldown is not None and args.max_queries is not None:
        raise UsageError("--drilldown and --max-queries are one option: give one of them")
    if args.max_queries is not None:
        return int(args.max_queries)
    if args.drilldown is None:
        return _DEFAULT_DRILLDOWN
    return None if args.drilldown == _ALL else int(args.drilldown)


#: The options only a judged report uses, and their defaults.
_JUDGED_OPTIONS: dict[str, Any] = {
    "measures": None,
    "level": None,
    "objective": "smallest-context",
    "min_recall": 0.9,
    "grade": None,
}


def _judged_options(args: argparse.Namespace) -> dict[str, Any]:
    """The judged report's options, defaults filled in; refused when given without --qrels."""
    given = [name for name in _JUDGED_OPTIONS if getattr(args, name) is not None]
    if args.qrels is None and given:
        flags = ", ".join("--" + name.replace("_", "-") for name in given)
        raise UsageError(
            f"{flags}: used only with --qrels (metrics and the context cut need judgments); "
            "give --qrels, or leave them out"
        )
    options: dict[str, Any] = {
        name: default if getattr(args, name) is None else getattr(args, name)
        for name, default in _JUDGED_OPTIONS.items()
    }
    if args.measures is not None:
        names = [m.strip() for m in args.measures.split(",") if m.strip()]
        if not names:
            raise UsageError(
                f"--measures names no measure (got {args.measures!r}): give e.g. ndcg@10,mrr"
            )
        options["measures"] = names
    return options


def _check_output(args: argparse.Namespace) -> None:
    """Refuse, before any work, to replace a file askkit did not write (unless --force)."""
    from askkit.report import foreign_file

    foreign = None if args.force else foreign_file(args.output)
    if foreign is not None:
        raise UsageError(
            f"-o {args.output}: exists and is not an askkit report, so it is left as is: "
            "give another -o, or --force to replace it"
        )


def report_command(args: argparse.Namespace, console: Console) -> int:
    """Run ``askkit report``."""
    from askkit.frame.jsonl import INPUT_NAME

    options = _judged_options(args)
    drilldown = _drilldown_size(args)
    for run in args.runs:
        arguments.check_input(run, what=INPUT_NAME)
    if len(args.runs) > 1 and args.qrels is None:
        raise UsageError(
            f"{len(args.runs)} runs: comparing runs needs --qrels (the judgments to score them)"
        )
    if args.qrels is not None:
        arguments.check_input(args.qrels, what="qrels", option="--qrels")
    if args.vault is not None and not Path(args.vault).is_dir():
        raise UsageError(f"--vault: no such folder: {args.vault}")
    if args.vault is not None:
        from askkit.metrics.runs import run_kind

        if run_kind(args.runs[0]) == "TREC run":
            raise UsageError(
                f"--vault: {args.runs[0]} is a TREC run, whose documents carry no text to "
                "locate in their notes; give its turn log (JSONL) to see each source's "
                "section, or leave --vault out"
            )
    _check_output(args)
    from askkit.report import DEFAULT_MEASURES, build_report

    measures = options["measures"] or list(DEFAULT_MEASURES)
    report = build_report(
        args.runs[0],
        args.qrels,
        vault=args.vault,
        measures=measures,
        level=options["level"],
        max_queries=drilldown,
        strict=not args.lenient,
        title=args.title,
        objective=options["objective"],
        min_recall=options["min_recall"],
        others=args.runs[1:],
        grade=options["grade"],
    )
    try:
        out = report.write(Path(args.output), force=args.force)
    except OSError as exc:  # the writer's error names its temporary file: name -o instead
        raise UsageError(
            f"-o {args.output}: cannot write the report ({exc.strerror or exc})"
        ) from None
    if report.headline:  # one line on stderr, before the usual summary; the report is written
        _terminal.console(stderr=True, soft_wrap=True).print(Text(report.headline))
    console.print(
        Text(
            f"wrote {out} ({report.turns} queries, {report.sources} sources, "
            f"{report.shown} of {report.turns} in the drilldown"
            + (f", {report.skipped} records skipped" if report.skipped else "")
            + ")"
        ),
        soft_wrap=True,
    )
    return 0
