"""``askkit eval``: score a run against judgments from the command line, trec_eval's way.

Reads TREC qrels (or askkit's TSV) and a TREC run (or a JSONL turn log /
JSON payload of retrieved sources: :func:`askkit.metrics.runs.load_run`, the
one run reader of every command) and prints the means, and with ``-q`` each
query's values, in trec_eval's three-column layout (``measure  query  value``,
``all`` for the mean), after a ``level  all  note`` row that says what was
scored (as trec_eval's ``runid`` row says which run). An empty qrels or run,
or a run and qrels that share no query id, is refused (status 2) naming the
file, never scored as ``num_q 0`` and ``nan``. trec_eval's flags keep their letters and meaning:
``-q`` per query, ``-l`` relevance level, ``-M`` documents per query, ``-c``
judged queries missing from the run score 0. Ids are compared exactly as
written unless ``--ids vault`` asks for kimun's path rules on both sides.
"""

from __future__ import annotations

import argparse
import math
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

from askkit.cli import _terminal, arguments
from askkit.errors import UsageError

if TYPE_CHECKING:
    import pandas as pd

    from askkit.frame import Loaded
    from askkit.metrics import Bounds, Evaluation

__all__ = ["eval_command", "register"]


def register(sub: Any) -> None:
    """Add ``askkit eval`` to the command line."""
    p = sub.add_parser(
        "eval",
        help="score a run against judgments, as trec_eval does (TREC files or a turn log)",
        description="Score a run against graded judgments the way trec_eval does and print "
        "trec_eval's layout: measure, query ('all' for the mean), value.",
    )
    p.add_argument("qrels", help="judgments: TREC qrels (qid iter docno rel) or askkit's TSV")
    p.add_argument(
        "run", help="a TREC run (qid Q0 docno rank score tag), or a JSONL turn log / JSON payload"
    )
    p.add_argument(
        "-m",
        "--measure",
        action="append",
        metavar="NAME",
        help="a measure, ranx-style (ndcg@10, map, mrr, recall@100, precision@10, bpref, "
        "infap, judged@10, ...) or by its trec_eval name (ndcg_cut_10, P_5, infAP); a ' after "
        'the name ("ndcg\'@10") scores the condensed list, unjudged documents taken out; '
        "repeat or separate with commas (default: askkit's usual set)",
    )
    p.add_argument(
        "-J",
        action="store_true",
        help="score every measure on the condensed list: each query's ranking with its "
        "unjudged documents taken out (trec_eval -J); the names get a ' (ndcg'@10)",
    )
    p.add_argument("-q", action="store_true", help="also print each query's values")
    p.add_argument(
        "--bounds",
        action="store_true",
        help="print each value with its bounds, 0.412 [0.412, 0.655]: the least and greatest "
        "it could be once the ranking's unjudged documents are judged (each not relevant, or "
        "relevant at --grade); and the unjudged share of the top k each depends on",
    )
    p.add_argument(
        "--grade",
        type=arguments.whole_number(),
        metavar="N",
        help="with --bounds: the grade of a relevant filling (default: the qrels' top grade)",
    )
    p.add_argument(
        "-l",
        "--relevance-level",
        type=arguments.whole_number(),
        default=1,
        metavar="N",
        help="the lowest grade that counts as relevant, as trec_eval's -l (default 1)",
    )
    p.add_argument(
        "-M",
        "--max-docs",
        type=arguments.whole_number(1),
        metavar="N",
        help="score only each query's first N documents, as trec_eval's -M",
    )
    p.add_argument(
        "-c",
        action="store_true",
        help="judged queries missing from the run score 0 (trec_eval -c); default: dropped",
    )
    p.add_argument(
        "--ids",
        choices=["exact", "vault"],
        default="exact",
        help="compare ids as written (default) or as kimun prints vault paths, on both sides",
    )
    p.add_argument(
        "--level",
        choices=["note", "section"],
        default="note",
        help="score notes (a document is a note's path; the default of every askkit "
        "command) or sections (path#heading); the output's 'level all' row says which",
    )
    p.add_argument(
        "--ties",
        choices=["trec", "input"],
        default="trec",
        help="tied scores: trec_eval's order (document id descending) or the run's ranks",
    )
    p.add_argument(
        "--lenient",
        action="store_true",
        help="skip malformed lines, score the rest and say on stderr how many were skipped",
    )
    p.add_argument(
        "--digits",
        type=arguments.whole_number(0, 17),
        default=4,
        help="decimals printed, 0..17 (trec_eval: 4)",
    )
    p.set_defaults(func=eval_command)


def _measures(given: list[str] | None, *, condensed: bool = False) -> list[str]:
    """The measures named by ``-m`` (askkit's usual set when none), checked; with
    ``-J`` each one's condensed form (``ndcg'@10``), as trec_eval -J scores them."""
    from dataclasses import replace

    from askkit.metrics.evaluate import DEFAULT_MEASURES
    from askkit.metrics.measures import NOT_CONDENSED, parse_measure

    if not given:
        names = list(DEFAULT_MEASURES)
    else:
        names = [m.strip() for text in given for m in text.split(",") if m.strip()]
    if not names:
        shown = ", ".join(repr(text) for text in given or [])
        raise UsageError(f"-m names no measure (got {shown}): give e.g. -m ndcg@10,mrr")
    for name in names:
        try:
            parse_measure(name)
        except ValueError as exc:
            raise UsageError(f"-m {name}: {exc}") from None
    if condensed:
        parsed = [parse_measure(name) for name in names]
        names = [
            m.name if m.condensed or m.kind in NOT_CONDENSED else replace(m, condensed=True).label
            for m in parsed
        ]
    return list(dict.fromkeys(names))


def eval_command(args: argparse.Namespace, console: Console) -> int:
    """Run ``askkit eval``."""
    arguments.check_input(args.qrels, what="qrels")  # before the slow imports
    arguments.check_input(args.run, what="run")
    from askkit.metrics import bounds, evaluate, read_qrels
    from askkit.metrics.runs import check_scorable, decoded_if_encoded, load_run

    measures = _measures(args.measure, condensed=args.J)
    skipped: list[str] = []

    def report(loaded: Loaded, what: str) -> pd.DataFrame:
        if len(loaded.errors):
            first = loaded.errors.iloc[0]
            skipped.append(
                f"{what}: {len(loaded.errors)} of {loaded.records} records skipped "
                f"(first: {first['file']}:{first['line']}: {first['message']})"
            )
        return loaded.frame

    if not args.lenient:
        qrels = read_qrels(args.qrels, ids=args.ids)
        run = load_run(args.run, ids=args.ids)
    else:
        qrels = report(read_qrels(args.qrels, ids=args.ids, strict=False), "qrels")
        run = report(load_run(args.run, ids=args.ids, strict=False), "run")
    err = _terminal.console(stderr=True, soft_wrap=True)
    for line in skipped:
        err.print(Text(f"askkit: {line}"))
    check_scorable(run, qrels, run_file=args.run, qrels_file=args.qrels)
    run, decoded = decoded_if_encoded(run, qrels, level=args.level, run_file=args.run)
    if decoded:
        err.print(Text(f"askkit: {decoded}"))
    if args.grade is not None and not args.bounds:
        raise UsageError("--grade is the grade of a relevant filling: use it with --bounds")
    options: dict[str, Any] = {
        "level": args.level,
        "ties": args.ties,
        "missing": "zero" if args.c else "drop",
        "relevance_level": args.relevance_level,
        "max_docs_per_query": args.max_docs,
    }
    result = evaluate(run, qrels, measures, **options)
    limits = bounds(run, qrels, measures, grade=args.grade, **options) if args.bounds else None
    headline = result.headline
    if not headline and len(result.per_query) and not result.per_query.to_numpy().any():
        # every value 0: say so when no retrieved document is judged at all
        from askkit.metrics import coverage

        headline = coverage(run, qrels, level=args.level).headline
    if headline:
        err.print(Text(f"askkit: {headline}"))
    lines = _lines(result, limits, measures, args)
    # plain text, one write, no markup; query ids come from the files: cleaned
    console.file.write(_terminal.clean("\n".join(lines)) + "\n")
    return 0


def _lines(
    result: Evaluation, limits: Bounds | None, measures: list[str], args: argparse.Namespace
) -> list[str]:
    """trec_eval's rows (``measure  query  value``), each value with its bounds
    when there are any, then what the bounds rest on."""
    from askkit.metrics import format_bounds

    width = max(len(m) for m in [*measures, "level"]) + 2
    if limits is not None:
        width += len("unjudged:")

    lines: list[str] = []

    def row(
        measure: str,
        query: str,
        value: float | int | str,
        span: tuple[float, float] | None = None,
    ) -> None:
        shown = (
            value
            if isinstance(value, str)
            else str(value)
            if isinstance(value, int) or not math.isfinite(value)
            else f"{value:.{args.digits}f}"
            if span is None
            else format_bounds(value, span[0], span[1], args.digits)
        )
        lines.append(f"{measure:<{width}}\t{query}\t{shown}")

    if args.q:
        per_query = result.per_query[measures]
        for query, values in zip(per_query.index, per_query.to_numpy(), strict=True):
            for measure, value in zip(measures, values, strict=True):
                span: tuple[float, float] | None = None
                if limits is not None:
                    span = (
                        float(limits.lower.loc[query, measure]),
                        float(limits.upper.loc[query, measure]),
                    )
                row(measure, str(query), float(value), span)
    row("level", "all", args.level)  # as trec_eval's "runid all TAG": what was scored
    row("num_q", "all", len(result.per_query))
    for measure in measures:
        span = None
        if limits is not None:
            span = (float(limits.lower[measure].mean()), float(limits.upper[measure].mean()))
        row(measure, "all", float(result.mean[measure]), span)
    if limits is not None:
        # what the bounds rest on: the grade of a relevant filling, and per measure
        # the unjudged share of the documents retrieved in its top k
        row("fill_grade", "all", limits.grade)
        share = limits.share()
        for measure in measures:
            row(f"unjudged:{measure}", "all", float(share[measure]))
    return lines
