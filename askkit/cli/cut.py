"""``askkit cut``: sweep kimun's context cuts over many pools and print the setting to use.

The pools come from a turn log (each turn's sources read as its ranked pool,
its ``id`` as the query id) or from a local vault (``--vault`` and
``--queries``: :meth:`askkit.retrieve.LocalIndex.pools`). The command prints
the sweep table, the best setting per strategy and the recommended
``[reranker]`` block for kimun's ``server.toml``
(:func:`askkit.ranking.sweep_context_cut`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from askkit.cli import arguments
from askkit.cli._console import frame_table
from askkit.errors import UsageError

__all__ = ["cut_command", "register"]

_OBJECTIVES = ("smallest-context", "ndcg", "precision")
_STRATEGIES = ("fixed", "score-range", "largest-drop")


def register(sub: Any) -> None:
    """Add ``askkit cut`` to the command line."""
    p = sub.add_parser(
        "cut",
        help="sweep kimun's context cuts over many queries and recommend a [reranker] setting",
        description="Replay kimun's three context cuts (fixed, score-range, largest-drop) on "
        "many ranked pools, score each setting against graded judgments, and print the "
        "[reranker] block to paste into kimun's server.toml.",
    )
    p.add_argument(
        "log",
        nargs="?",
        help="a JSONL turn log or JSON payload whose sources are the pools "
        "(turn ids must be the qrels' query ids); or use --vault and --queries",
    )
    p.add_argument(
        "--qrels", required=True, help="graded judgments (TSV: query_id, path, heading, grade)"
    )
    p.add_argument("--vault", metavar="DIR", help="build the pools with the local BM25 index")
    p.add_argument(
        "--queries", metavar="TSV", help="with --vault: the queries (TSV: query_id, question)"
    )
    p.add_argument(
        "--pool-size",
        type=arguments.whole_number(1),
        default=80,
        help="with --vault: chunks per pool (kimun: 80)",
    )
    p.add_argument("--objective", choices=_OBJECTIVES, default="smallest-context")
    p.add_argument(
        "--min-recall",
        type=arguments.fraction,
        default=0.9,
        help="consider settings keeping at least this recall of each pool's relevant notes "
        "(0..1, default 0.9)",
    )
    p.add_argument(
        "--strategies",
        default=",".join(_STRATEGIES),
        help="comma-separated strategies to sweep (default: fixed,score-range,largest-drop)",
    )
    p.add_argument("--brief", action="store_true", help="print only the best setting per strategy")
    p.set_defaults(func=cut_command)


#: The sweep's columns as the table names them: short, so an 80-column terminal shows
#: every value whole (the legend under the table says what each is).
_COLUMNS = {
    "setting": "setting",
    "mean_chunks": "chunks",
    "mean_notes": "notes",
    "recall": "recall",
    "precision": "prec.",
    "ndcg": "ndcg",
    "queries_without_relevant": "lost",
}
_LEGEND = (
    "chunks, notes: the answer's context (mean); recall, prec., ndcg: of the relevant "
    "notes each pool holds; lost: queries whose context keeps none. ★: recommended."
)


def _strategies(text: str) -> list[str]:
    chosen = [s.strip() for s in text.split(",") if s.strip()]
    unknown = [s for s in chosen if s not in _STRATEGIES]
    if unknown or not chosen:
        raise UsageError(
            f"--strategies: unknown strategy {(unknown or [text])[0]!r}; "
            f"kimun's are {', '.join(_STRATEGIES)}"
        )
    return list(dict.fromkeys(chosen))


def _check_inputs(args: argparse.Namespace) -> None:
    """The options' combination, then each input file by askkit's one rule: before any work."""
    if (args.log is None) == (args.vault is None):
        raise UsageError("give either a turn LOG or --vault DIR --queries TSV (not both)")
    if args.vault is None and args.queries is not None:
        raise UsageError("--queries goes with --vault; a LOG holds its own queries")
    if args.vault is not None and args.queries is None:
        raise UsageError("--vault needs --queries TSV (query_id, question): what to retrieve")
    arguments.check_input(args.qrels, what="qrels", option="--qrels")
    if args.log is not None:
        from askkit.frame.jsonl import INPUT_NAME

        arguments.check_input(args.log, what=INPUT_NAME)
        return
    arguments.check_input(args.queries, what="queries", option="--queries")
    if not Path(args.vault).is_dir():
        raise UsageError(f"--vault: no such folder: {args.vault}")


def _pools(args: argparse.Namespace) -> Any:
    if args.vault is None:
        from askkit.errors import SchemaError
        from askkit.metrics.runs import load_turn_log
        from askkit.ranking.pools import check_turn_ids

        frame = load_turn_log(
            args.log,
            needs="askkit cut replays each turn's candidate pool (or sweep on the spot: "
            "--vault DIR --queries TSV)",
        )
        try:
            check_turn_ids(frame)
        except SchemaError as exc:  # the frame knows lines, not its file
            raise exc.located(file=args.log) from None
        return frame
    from askkit.metrics.queries import read_queries
    from askkit.retrieve.local import LocalIndex

    queries = read_queries(args.queries)  # a bad file fails before indexing
    return LocalIndex(args.vault).pools(queries, args.pool_size)


def cut_command(args: argparse.Namespace, console: Console) -> int:
    """Run ``askkit cut``."""
    from askkit.metrics import read_qrels
    from askkit.ranking.tune import sweep_context_cut

    strategies = _strategies(args.strategies)
    _check_inputs(args)
    read_qrels(args.qrels)  # every input read and checked before any pool is built
    pools = _pools(args)
    cut = sweep_context_cut(
        pools,
        args.qrels,
        objective=args.objective,
        min_recall=args.min_recall,
        strategies=strategies,
    )
    console.print(Text(cut.summary + "."), soft_wrap=True)
    if cut.truncation_note:
        console.print(Text(cut.truncation_note, style="yellow"), soft_wrap=True)
    table = (cut.best if args.brief else cut.sweep)[list(_COLUMNS)].rename(columns=_COLUMNS)
    label = "" if cut.recommended is None else cut.recommended.label
    picked = (table["setting"] == label).to_numpy()
    # the star in the setting's cell: a column of its own costs an 80-column terminal 4
    table["setting"] = [
        ("★ " if p else "  ") + s for p, s in zip(picked, table["setting"], strict=True)
    ]
    hits = picked.nonzero()[0]
    title = "best setting per strategy" if args.brief else "context cut sweep"
    console.print(frame_table(table, title=title, highlight=int(hits[0]) if len(hits) else None))
    console.print(Text(_LEGEND, style="dim"), soft_wrap=True)
    if cut.all_truncated:  # the note above says why nothing is recommended
        return 0
    if cut.recommended is None:
        raise UsageError(f"--min-recall: {cut.problem}")
    console.print(Text(f"recommended: {cut.recommended.label}", style="bold"))
    console.print(Text("# merge into the [reranker] table of kimun's server.toml", style="dim"))
    console.print(Text(cut.recommended.to_toml()), soft_wrap=True)
    return 0
