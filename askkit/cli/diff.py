"""``askkit diff BASE NEW --qrels Q``: a retrieval regression gate for CI.

Scores two runs (TREC runs or turn logs, or two configurations retrieved on
the spot from ``--vault`` with ``--queries``: :mod:`askkit.gate.vault`) on
the same judged queries, tests
each measure's per-query deltas with a paired test, Holm-corrects across the
measures and exits 0 when no measure dropped significantly by at least
``--min-delta``, 1 when one did (or NEW's top k is more unjudged than
``--max-unjudged`` allows), 2 on a bad input (one line on stderr).
``--unjudged`` chooses what the exit status rests on (unjudged documents as
not relevant, the condensed lists, or drops that hold whatever the unjudged
documents are); the report always says which, and whether each measure's
verdict could change once they are judged. The
report is text, or ``--json``, ``--markdown``, ``--junit`` (each to stdout,
or to a file given after it). :func:`askkit.gate.gate` does the work.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from askkit.cli import _terminal, arguments
from askkit.errors import UsageError

if TYPE_CHECKING:
    from askkit.gate import GateResult, Side

__all__ = ["diff_command", "register"]

_STDOUT = "-"
_FORMATS = ("json", "markdown", "junit")
#: ``--resamples``' bound: :data:`askkit.gate.stats.MAX_RESAMPLES` (not imported here, to
#: keep ``askkit --help`` light; a test holds the two equal).
_MAX_RESAMPLES = 1_000_000


def _output(text: str) -> str:
    """``-`` (stdout) or a file askkit can write."""
    return text if text == _STDOUT else arguments.output_file(text)


def _share(text: str) -> float:
    return arguments.fraction(text)


def _alpha(text: str) -> float:
    value = arguments.fraction(text)
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(
            f"must be a number between 0 and 1 (exclusive), got {text}"
        )
    return value


def _min_delta(text: str) -> float:
    return arguments.fraction(text)


def register(sub: Any) -> None:
    """Add ``askkit diff`` to the command line."""
    p = sub.add_parser(
        "diff",
        help="a regression gate: exit 1 only when NEW retrieves significantly worse than BASE",
        description="Compare two runs on the same judged queries with a paired test "
        "(Holm-corrected across measures). Exit 0: no measure dropped significantly by at "
        "least --min-delta; 1: one did (improvements never fail); 2: bad input.",
    )
    p.add_argument(
        "base", nargs="?", help="the baseline: a TREC run or a JSONL turn log (or use --vault)"
    )
    p.add_argument("new", nargs="?", help="the new run: a TREC run or a JSONL turn log")
    p.add_argument("--qrels", required=True, help="graded judgments (TREC qrels or askkit's TSV)")
    p.add_argument(
        "-m",
        "--measure",
        action="append",
        metavar="NAME",
        help="a measure (ndcg@10, recall@10, mrr, map, ...); repeat or separate with commas "
        "(default: ndcg@10,recall@10)",
    )
    p.add_argument(
        "--test",
        choices=["randomization", "t-test", "bootstrap"],
        default="randomization",
        help="the paired test (default: randomization)",
    )
    p.add_argument("--alpha", type=_alpha, default=0.05, help="significance level (0.05)")
    p.add_argument(
        "--min-delta",
        type=_min_delta,
        default=0.0,
        help="the smallest drop of a mean that counts as a regression (0..1, default 0)",
    )
    p.add_argument(
        "--level",
        choices=["note", "section"],
        default="note",
        help="score notes (the default of every askkit command) or sections "
        "(path#heading); every report format says which",
    )
    p.add_argument("--seed", type=arguments.whole_number(0), default=0, help="resampling seed")
    p.add_argument(
        "--resamples",
        type=arguments.whole_number(1, _MAX_RESAMPLES),
        default=10_000,
        help="resamples of the randomization or bootstrap test (10000; at most 1000000)",
    )
    p.add_argument(
        "-k",
        type=arguments.whole_number(1),
        help="the depth of 'top k' for the judged share and lost documents "
        "(default: the measures' largest cutoff, else 10)",
    )
    p.add_argument(
        "--allow-partial",
        action="store_true",
        help="compare on the judged queries both runs answered, even when the runs and the "
        "qrels cover different queries",
    )
    p.add_argument(
        "--max-unjudged",
        type=_share,
        metavar="SHARE",
        help="fail when more than this share (0..1) of NEW's top k is unjudged",
    )
    p.add_argument(
        "--unjudged",
        choices=["ignore", "condensed", "bounds"],
        default="ignore",
        help="what the exit status rests on: 'ignore' (default) counts unjudged documents as "
        "not relevant, as trec_eval does; 'condensed' scores the condensed lists (ndcg'@10: "
        "unjudged documents taken out); 'bounds' fails only on a drop that holds even with "
        "every unjudged document of NEW relevant and of BASE not. Whatever the mode, the "
        "report says whether each verdict holds whatever the unjudged documents are",
    )
    p.add_argument(
        "--holes",
        metavar="FILE",
        help="write the unjudged sections the verdicts depend on (each measure's bounds) as "
        "a TSV the Labeler opens (Labeler.from_holes): what to judge next",
    )
    p.add_argument(
        "--fill-grade",
        type=arguments.whole_number(),
        metavar="N",
        help="the grade of an unjudged document filled as relevant, for the bounds "
        "(default: the qrels' top grade)",
    )
    spot = p.add_argument_group(
        "configurations run on the spot",
        "retrieve --queries from --vault twice, as kimun's server would: BM25, or dense with "
        "an embedder; each side's context cut from its server.toml ([reranker] keys)",
    )
    spot.add_argument("--vault", metavar="DIR", help="the vault both configurations retrieve from")
    spot.add_argument(
        "--queries", metavar="TSV", help="with --vault: the queries (TSV: query_id, question)"
    )
    for side in ("base", "new"):
        spot.add_argument(
            f"--{side}-settings",
            metavar="TOML",
            help=f"{side.upper()}'s server.toml (default: kimun's cut, score-range 0.4)",
        )
        spot.add_argument(
            f"--{side}-embedder",
            metavar="SPEC",
            help=f"{side.upper()}'s embedder, e.g. fastembed:AllMiniLML6V2 (default: BM25)",
        )
        spot.add_argument(
            f"--{side}-reranker",
            metavar="SPEC",
            help=f"with --{side}-embedder: rerank {side.upper()}'s pools before the cut "
            "(fastembed, fastembed:MODEL or http:URL, as askkit search --reranker)",
        )
    spot.add_argument(
        "--pool-size",
        type=arguments.whole_number(1),
        default=80,
        help="with --vault: chunks per pool (kimun: 80)",
    )
    p.add_argument(
        "--show",
        type=arguments.whole_number(0),
        default=20,
        help="regressed queries listed in the text and Markdown reports (20)",
    )
    for name in _FORMATS:
        p.add_argument(
            f"--{name}",
            nargs="?",
            const=_STDOUT,
            type=_output,
            metavar="FILE",
            help=f"write the {name} report to FILE (or stdout when no FILE follows)",
        )
    p.add_argument("--force", action="store_true", help="replace output files askkit did not write")
    p.set_defaults(func=diff_command)


def _measures(given: list[str] | None) -> list[str]:
    from askkit.cli.metrics import _measures as parse
    from askkit.gate import DEFAULT_GATE_MEASURES

    return parse(given) if given else list(DEFAULT_GATE_MEASURES)


def _check_outputs(args: argparse.Namespace) -> list[tuple[str, str]]:
    """The formats asked for, with where they go, checked before any work: one format per
    file, and no file replaced that is not one of askkit's reports (unless ``--force``)."""
    from askkit._outputs import foreign_file

    outputs = [(name, getattr(args, name)) for name in _FORMATS if getattr(args, name)]
    to_stdout = [name for name, where in outputs if where == _STDOUT]
    if len(to_stdout) > 1:
        raise UsageError(
            f"--{to_stdout[0]} and --{to_stdout[1]} both go to stdout: give a FILE after one"
        )
    seen: dict[str, str] = {}
    for name, where in outputs:
        if where == _STDOUT:
            continue
        real = os.path.realpath(Path(where).expanduser())
        if real in seen:
            raise UsageError(
                f"--{seen[real]} and --{name} both write {where}: the second report would "
                "replace the first; give each format its own file"
            )
        seen[real] = name
        if not args.force and foreign_file(Path(where).expanduser()) is not None:
            raise UsageError(
                f"--{name} {where}: exists and is not an askkit report, so it is left as "
                "is: give another file, or --force to replace it"
            )
    if args.holes is not None:
        real = os.path.realpath(Path(args.holes).expanduser())
        if real in seen:
            raise UsageError(
                f"--{seen[real]} and --holes both write {args.holes}: give each its own file"
            )
        if not args.force and foreign_file(Path(args.holes).expanduser()) is not None:
            raise UsageError(
                f"--holes {args.holes}: exists and is not a holes file askkit wrote, so it is "
                "left as is: give another file, or --force to replace it"
            )
    return outputs


_SPOT = (
    "queries",
    "base_settings",
    "new_settings",
    "base_embedder",
    "new_embedder",
    "base_reranker",
    "new_reranker",
)


def _check_inputs(args: argparse.Namespace) -> None:
    """The options' combination, then each input file by askkit's one rule: before any work."""
    if args.vault is None:
        given = [name for name in _SPOT if getattr(args, name) is not None]
        if given:
            raise UsageError(f"--{given[0].replace('_', '-')} goes with --vault DIR")
        if args.base is None or args.new is None:
            raise UsageError("give BASE and NEW (two TREC runs or turn logs), or --vault DIR")
    else:
        if args.base is not None:
            raise UsageError("give either BASE and NEW or --vault DIR --queries TSV, not both")
        if args.queries is None:
            raise UsageError("--vault needs --queries TSV (query_id, question): what to retrieve")
        if not Path(args.vault).is_dir():
            raise UsageError(f"--vault: no such folder: {args.vault}")
        for side in ("base", "new"):
            if getattr(args, f"{side}_reranker") and not getattr(args, f"{side}_embedder"):
                raise UsageError(
                    f"--{side}-reranker reranks kimun's dense pool: give --{side}-embedder too"
                )
    arguments.check_input(args.qrels, what="qrels", option="--qrels")
    if args.vault is None:
        arguments.check_input(str(args.base), what="run", option="BASE")
        arguments.check_input(str(args.new), what="run", option="NEW")
        return
    arguments.check_input(args.queries, what="queries", option="--queries")
    for side in ("base", "new"):
        settings = getattr(args, f"{side}_settings")
        if settings is not None:
            arguments.check_input(settings, what="server.toml", option=f"--{side}-settings")


def _sides(args: argparse.Namespace) -> tuple[Side, Side]:
    if args.vault is not None:
        return _spot_sides(args)
    from askkit.gate import read_side

    return read_side(args.base), read_side(args.new)  # errors name the file


def _spot_sides(args: argparse.Namespace) -> tuple[Side, Side]:
    from askkit.cli.dense import _reranker, open_embedder
    from askkit.gate import vault_side
    from askkit.metrics.queries import read_queries
    from askkit.ranking import CutSettings

    queries = read_queries(args.queries)  # bad files fail before any indexing
    for side in ("base", "new"):
        if getattr(args, f"{side}_settings") is not None:
            CutSettings.from_file(getattr(args, f"{side}_settings"))
    sides = []
    with _terminal.progress_output() as progress:  # on a pipe: a line every few seconds
        for side in ("base", "new"):
            spec = getattr(args, f"{side}_embedder")
            sides.append(
                vault_side(
                    args.vault,
                    queries,
                    embedder=None if spec is None else open_embedder(spec, progress=progress),
                    reranker=_reranker(getattr(args, f"{side}_reranker")),
                    settings=getattr(args, f"{side}_settings"),
                    pool_size=args.pool_size,
                    progress=progress,
                )
            )
    return sides[0], sides[1]


def _write(
    result: GateResult, outputs: list[tuple[str, str]], show: int, force: bool, console: Console
) -> None:
    from askkit._outputs import write_report

    texts = {
        "json": result.to_json,
        "markdown": lambda: result.to_markdown(max_queries=show),
        "junit": result.to_junit,
    }
    printed = False
    for name, where in outputs:
        text = texts[name]()
        if where == _STDOUT:
            console.file.write(text if name == "json" else _terminal.clean(text))
            printed = True
        else:
            write_report(
                Path(where).expanduser(), text, force=force, fix="give another file, or --force"
            )
    if not printed:
        console.file.write(_terminal.clean(result.to_text(max_queries=show)))


def diff_command(args: argparse.Namespace, console: Console) -> int:
    """Run ``askkit diff``: the gate's exit status (0 passed, 1 failed)."""
    measures = _measures(args.measure)
    outputs = _check_outputs(args)
    _check_inputs(args)
    from askkit.gate import gate

    base, new = _sides(args)
    result = gate(
        base,
        new,
        args.qrels,
        measures,
        test=args.test,
        alpha=args.alpha,
        min_delta=args.min_delta,
        level=args.level,
        seed=args.seed,
        resamples=args.resamples,
        k=args.k,
        allow_partial=args.allow_partial,
        max_unjudged=args.max_unjudged,
        unjudged=args.unjudged,
        fill_grade=args.fill_grade,
    )
    _write(result, outputs, args.show, args.force, console)
    if args.holes is not None:
        from askkit.gate import merge_holes, write_holes

        write_holes(merge_holes(result.holes), Path(args.holes).expanduser())
    return result.exit_status
