"""The ``askkit`` command line.

``askkit sources FILE``  show the sources of a saved payload as a table.
``askkit prompt FILE``   show the sources framed as kimun's prompt frames them.
``askkit index PATH [--embedder SPEC]``  index a vault locally (BM25 over kimun's sections,
or embedded as kimun's server embeds it).
``askkit search QUERY --vault PATH | --server URL --vault-id ID``  retrieve; with
``--store DIR --vault-id ID --embedder SPEC``, from a kimun server's own vector store.
``askkit stores DIR``    list a vector store's vaults and its embedder fingerprint.
``askkit ask QUESTION --server URL --vault-id ID``  answer with a kimun server.
``askkit lab [--vault PATH]``  index a vault and open the notebooks in JupyterLab.
``askkit report LOG [--qrels Q] [--vault V] [-o FILE [--force]]``  a static HTML report, no
Jupyter needed (``-o`` replaces only an earlier askkit report, unless ``--force``).
``askkit cut LOG --qrels Q`` (or ``--vault DIR --queries TSV``)  sweep kimun's context
cuts and print the ``[reranker]`` setting to use.
``askkit eval QRELS RUN [-m M] [-q] [-l N] [-M N] [-c]``  score a run as trec_eval does.
``askkit diff BASE NEW --qrels Q``  a regression gate: exit 1 only on a significant drop.
``askkit run --vault DIR --queries TSV -o FILE``  retrieve a question set as kimun would, into
a TREC run or a turn log every command reads.
``askkit collection SOURCE -o DIR``  a test collection (Cranfield, TREC, BEIR) as a vault,
``queries.tsv`` and ``qrels.tsv``.

``askkit --version``     the version, and whether the compiled kernels are built.

Errors print one line on stderr (``askkit: error: ...``) and exit with status
2, never a traceback; text from payloads, vaults and servers is printed
without its terminal control sequences (:mod:`askkit.cli.errors`).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from rich.console import Console
from rich.text import Text

from askkit.cli import arguments, errors
from askkit.cli._console import print_turn
from askkit.errors import UsageError
from askkit.payloads import read_turn
from askkit.prompt import frame_sources

__all__ = ["build_parser", "main", "version_text"]


def _cmd_sources(args: argparse.Namespace, console: Console) -> int:
    print_turn(console, read_turn(args.file))
    return 0


def _cmd_prompt(args: argparse.Namespace, console: Console) -> int:
    turn = read_turn(args.file)
    console.print(Text(frame_sources([s.to_chunk() for s in turn.sources])), end="")
    return 0


def version_text() -> str:
    """``askkit --version``: the version and which way the frame's rules run."""
    from askkit import __version__
    from askkit.frame import kernels as _compiled

    kernels = (
        "compiled kernels built"
        if _compiled.built()
        else "compiled kernels not built (no C compiler at install): the frame uses pyarrow.compute"
    )
    return f"askkit {__version__} ({kernels})"


class _Version(argparse.Action):
    """``--version``, computed only when asked for."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help="show the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: object) -> None:
        print(version_text())
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (also used to document the commands)."""
    parser = arguments.Parser(
        prog="askkit", description="Inspect what kimun's Ask feature retrieved, and why."
    )
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("sources", help="show a saved payload's sources as a table")
    p.add_argument("file", help="a JSON answer job, answer result, turn or embeddings response")
    p.set_defaults(func=_cmd_sources)
    p = sub.add_parser("prompt", help="show the sources as kimun's prompt frames them")
    p.add_argument("file", help="a JSON answer job, answer result, turn or embeddings response")
    p.set_defaults(func=_cmd_prompt)

    from askkit.cli import collection as _cli_collection
    from askkit.cli import cut as _cli_cut
    from askkit.cli import dense as _cli_dense
    from askkit.cli import diff as _cli_diff
    from askkit.cli import lab as _cli_lab
    from askkit.cli import metrics as _cli_metrics
    from askkit.cli import report as _cli_report
    from askkit.cli import run as _cli_run
    from askkit.cli import server as _cli_server
    from askkit.cli import vault as _cli_vault
    from askkit.cli import why as _cli_why

    _cli_vault.register(sub)
    p = sub.add_parser("search", help="retrieve chunks for a query, locally or from a kimun server")
    p.add_argument("query", help="the question or search text")
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--vault", metavar="PATH", help="search a local vault (indexed on demand)")
    where.add_argument("--server", metavar="URL", help="search with a running kimun server")
    where.add_argument(
        "--store",
        metavar="DIR",
        type=arguments.store_location,
        help="search a kimun server's own vector store (its [vector_db] path) as it does",
    )
    p.add_argument("--vault-id", help="the vault id (with --server or --store)")
    p.add_argument(
        "-k", type=arguments.whole_number(1), default=10, help="how many chunks (default 10)"
    )
    p.add_argument("--json", action="store_true", help="print the wire JSON instead of a table")
    _cli_vault.add_search_options(p)
    _cli_server.add_search_options(p)
    _cli_dense.add_search_options(p)
    p.set_defaults(func=_cmd_search)
    _cli_server.register(sub)
    _cli_lab.register(sub)
    _cli_report.register(sub)
    _cli_cut.register(sub)
    _cli_metrics.register(sub)
    _cli_diff.register(sub)
    _cli_dense.register(sub)
    _cli_why.register(sub)
    _cli_collection.register(sub)
    _cli_run.register(sub)
    return parser


def _cmd_search(args: argparse.Namespace, console: Console) -> int:
    if not args.query.strip():
        raise UsageError("the query is empty: give the text to search for")
    from askkit.cli import dense as _cli_dense

    _cli_dense.check_search_options(args)
    from askkit.cli import vault as _cli_vault

    _cli_vault.check_kimun_option(args)
    if args.store is not None:
        return _cli_dense.search_command(args, console)
    if args.vault is not None and args.embedder:
        return _cli_dense.vault_search_command(args, console)
    if args.vault is not None:
        return _cli_vault.search_command(args, console)
    from askkit.cli import server as _cli_server

    return _cli_server.search_command(args, console)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (2 after any error, with one line)."""
    return errors.run(build_parser, argv)
