"""``askkit run``: retrieve a question set from a vault as kimun would, and write the run.

``askkit run --vault DIR --queries TSV -o FILE`` retrieves every question of a
query TSV (:func:`askkit.metrics.read_queries`) the way kimun's server would,
BM25 (:class:`askkit.retrieve.LocalIndex`) or, with ``--embedder SPEC``,
kimun's dense retrieval (:class:`askkit.dense.DenseIndex`, reranked with
``--reranker SPEC``), cuts each pool with the settings' context cut
(``--settings server.toml``, :class:`askkit.ranking.CutSettings`; kimun's
defaults otherwise), and writes what each answer's context would hold: the
retrieval is :func:`askkit.gate.vault_side`'s, the one ``askkit diff --vault``
runs, so the same vault, questions and settings give the same run here and in
the gate. The index is the vault's shared one in askkit's cache: a vault
embedded once by any command is not embedded again.

The output's name says its format:

- ``.trec``, ``.run`` or ``.txt``: a TREC run (``qid Q0 doc rank score askkit``,
  :func:`askkit.metrics.write_run`), at note level (``--level section``: one
  line per section, ``path#heading``);
- ``.jsonl``: a turn log, one turn per question, in the queries' order, with
  the query id as turn id, as ``data/run.jsonl`` is
  (``{"format": "askkit run", "id", "question", "answer": "", "chunks"}``; a
  question that retrieved nothing has no chunks) (:func:`turn_log`).

:func:`write_output` writes either; both read back to what was written.

``askkit eval``, ``diff``, ``report`` and ``why`` read either. An existing
file is replaced only when askkit's ``run`` wrote it (a turn log starting with
``{"format": "askkit run"``, or a TREC run whose first line's tag is
``askkit``), or with ``--force``. Every input is checked before any work: the
output's name, the vault, the queries file, the settings.

Embedding shows its progress (a line every few seconds on a pipe), and the
command ends with one paragraph: the questions, the retriever, the cut, what
was retrieved and embedded, and where the run was written.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

from askkit._outputs import RUN_FORMAT, TREC_TAG, is_askkit_output
from askkit.cli import _terminal, arguments
from askkit.errors import SchemaError, UsageError

if TYPE_CHECKING:
    import pandas as pd

    from askkit.gate import Side
    from askkit.metrics import Level

__all__ = [
    "JSONL_MARK",
    "TREC_SUFFIXES",
    "is_run_output",
    "register",
    "run_command",
    "turn_log",
    "write_output",
]

#: The names of a TREC run's file; ``.jsonl`` is a turn log.
TREC_SUFFIXES = (".trec", ".run", ".txt")
#: The run tag of every line of a TREC run ``askkit run`` writes (askkit's mark).
_TAG = TREC_TAG
#: How every record of a turn log ``askkit run`` writes starts: its mark.
JSONL_MARK = f'{{"format": "{RUN_FORMAT}"'
_FORMATS = "name it .trec, .run or .txt (a TREC run) or .jsonl (a turn log)"


def register(sub: Any) -> None:
    """Add ``askkit run`` to the command line."""
    p = sub.add_parser(
        "run",
        help="retrieve every question of a query TSV from a vault as kimun would, and write "
        "a TREC run or a turn log that eval, diff, report and why read",
        description="Retrieve every question of --queries from --vault as kimun's server "
        "would (BM25, or dense with --embedder), cut each pool with the settings' context "
        "cut, and write the context each answer would be given: a TREC run (-o "
        "FILE.trec, .run or .txt) or a turn log (-o FILE.jsonl). The vault's index is the "
        "one every command shares in askkit's cache: a vault embedded once is not embedded "
        "again.",
    )
    p.add_argument("--vault", metavar="DIR", required=True, help="the vault to retrieve from")
    p.add_argument(
        "--queries",
        metavar="TSV",
        required=True,
        help="the questions (TSV with a header: query_id, question)",
    )
    p.add_argument(
        "--embedder",
        metavar="SPEC",
        help="dense retrieval as kimun's server (e.g. fastembed:AllMiniLML6V2; default: BM25)",
    )
    p.add_argument(
        "--reranker",
        metavar="SPEC",
        help="with --embedder: rerank each pool as kimun does (fastembed[:MODEL] or "
        "http:URL:MODEL, as askkit search --reranker)",
    )
    p.add_argument(
        "--settings",
        metavar="TOML",
        help="kimun's server.toml: its [reranker] context cut (default: kimun's, score-range 0.4)",
    )
    p.add_argument(
        "-k",
        type=arguments.whole_number(1),
        metavar="N",
        help="at most this many chunks per question, after the cut (default: all it keeps)",
    )
    p.add_argument(
        "--pool-size",
        type=arguments.whole_number(1),
        default=80,
        metavar="N",
        help="chunks per pool before the cut (kimun: 80)",
    )
    p.add_argument(
        "--level",
        choices=["note", "section"],
        help="a TREC run's documents: notes (default) or sections (path#heading); a turn "
        "log keeps every chunk, read at either level",
    )
    from askkit.cli.vault import add_kimun_option

    add_kimun_option(p)
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        required=True,
        type=arguments.output_file,
        help=f"where to write the run: {_FORMATS}",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="replace FILE even when askkit run did not write it",
    )
    p.set_defaults(func=run_command)


# -- the output -------------------------------------------------------------------------------


def _format(output: str) -> str:
    """``"trec"`` or ``"jsonl"``, from the output's name (a UsageError for another)."""
    suffix = Path(output).suffix.lower()
    if suffix in TREC_SUFFIXES:
        return "trec"
    if suffix == ".jsonl":
        return "jsonl"
    raise UsageError(f"-o {output}: unknown format {suffix or '(no suffix)'!r}: {_FORMATS}")


def is_run_output(path: str | Path) -> bool:
    """Whether ``path`` is a regular file askkit wrote (:func:`askkit._outputs.is_askkit_output`:
    a turn log starting with :data:`JSONL_MARK`, a TREC run tagged ``askkit``, or one of
    askkit's reports), which ``askkit run`` may replace.

    >>> import tempfile, pathlib
    >>> run = pathlib.Path(tempfile.mkdtemp()) / "r.trec"
    >>> _ = run.write_text("q1 Q0 a.md 1 2.5 askkit\\n")
    >>> is_run_output(run), is_run_output("README.md")
    (True, False)
    """
    return is_askkit_output(path)


def _check_output(output: str, force: bool) -> None:
    """Refuse to replace a file ``askkit run`` did not write, unless ``force``."""
    from askkit._atomic import followed

    target = followed(output)  # a dangling link is refused
    if force or not target.exists() or is_run_output(target):
        return
    raise UsageError(
        f"{target}: exists and is not a run askkit run wrote; askkit replaces only the runs it "
        "wrote, so it is left as is: write to another file, or add --force to replace it"
    )


def _chunk(source: Any, query_id: str) -> dict[str, Any]:
    """A source as kimun's wire chunk; a score JSON cannot carry is refused."""
    wire: dict[str, Any] = source.to_chunk().to_dict()
    score = wire["similarity_score"]
    if not math.isfinite(score):
        raise SchemaError(
            f"query {query_id!r}, {wire['path']}: a turn log's score must be a finite number "
            "(JSON has no NaN or infinity)",
            field="similarity_score",
            value=score,
        )
    return wire


def turn_log(queries: Mapping[str, str], frame: pd.DataFrame) -> str:
    """The turn log of a run: one record per question, in ``queries``' order.

    Each record is ``{"format": "askkit run", "id": query id, "question",
    "answer": "", "chunks": [kimun's wire chunks]}``, one line, UTF-8
    unescaped, keys in that order; ``frame`` is a sources frame of the
    questions' chunks (``turn_id`` the query id). A question with no row has
    no chunks. :func:`askkit.frame.sources_frame` reads it back to the same
    chunks.

    Raises
    ------
    SchemaError
        A row's turn is not one of ``queries``, or a score is not finite.

    Examples
    --------
    >>> import pandas as pd
    >>> print(turn_log({"q1": "starter?"}, pd.DataFrame()), end="")
    {"format": "askkit run", "id": "q1", "question": "starter?", "answer": "", "chunks": []}
    """
    from askkit.frame import to_turns

    turns = to_turns(frame) if len(frame) else {}
    unknown = sorted(set(turns) - set(queries))
    if unknown:
        raise SchemaError(
            "a turn that is no question of the queries", field="turn_id", value=unknown[0]
        )
    lines = []
    for query_id, question in queries.items():
        turn = turns.get(query_id)
        chunks = [] if turn is None else [_chunk(s, query_id) for s in turn.sources]
        record = {
            "format": "askkit run",
            "id": query_id,
            "question": question,
            "answer": "",
            "chunks": chunks,
        }
        lines.append(json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n")
    return "".join(lines)


def write_output(
    path: str, frame: pd.DataFrame, queries: Mapping[str, str], *, level: Level = "note"
) -> None:
    """Write a run in the format ``path``'s name says, atomically.

    ``.trec``, ``.run`` or ``.txt``: a TREC run at ``level``
    (:func:`askkit.metrics.write_run`, tag ``askkit``; read it back with
    ``read_run(path, decode=True)``); ``.jsonl``: :func:`turn_log`. ``frame``
    is a sources frame of the questions' chunks, ``turn_id`` the query id.

    Raises
    ------
    UsageError
        Another name.
    SchemaError
        A run that would not read back as written (see :func:`askkit.metrics.write_run`
        and :func:`turn_log`); nothing is written.
    """
    from askkit._atomic import atomic_write_text

    if _format(path) == "jsonl":
        atomic_write_text(path, turn_log(queries, frame), shared=True)
        return
    from askkit.metrics import write_run

    write_run(frame, path, level=level, tag=_TAG)


# -- the command ------------------------------------------------------------------------------


def _check_inputs(args: argparse.Namespace) -> dict[str, str]:
    """Every input checked before any work; the questions."""
    from askkit.metrics import read_queries
    from askkit.ranking import CutSettings

    kind = _format(args.output)
    if args.level is not None and kind == "jsonl":
        raise UsageError(
            "--level applies to a TREC run (.trec, .run, .txt); a turn log keeps every chunk, "
            "so eval, diff and report read it at either level"
        )
    if args.reranker is not None and args.embedder is None:
        raise UsageError("--reranker reranks kimun's dense pool: give --embedder too")
    if not Path(args.vault).expanduser().is_dir():
        raise UsageError(f"--vault: no such folder: {args.vault}")
    queries = read_queries(args.queries)
    if not queries:
        raise UsageError(f"--queries {args.queries}: no questions")
    if args.settings is not None:
        CutSettings.from_file(args.settings)
    _check_output(args.output, args.force)
    return queries


def _retrieve(args: argparse.Namespace, queries: dict[str, str]) -> Side:
    from askkit.cli.dense import _reranker, open_embedder
    from askkit.cli.vault import kimun_version
    from askkit.gate import vault_side

    with _terminal.progress_output() as shown:  # on a pipe: a line every few seconds
        embedder = None if args.embedder is None else open_embedder(args.embedder, progress=shown)
        return vault_side(
            args.vault,
            queries,
            embedder=embedder,
            reranker=_reranker(args.reranker),
            settings=args.settings,
            pool_size=args.pool_size,
            progress=shown,
            kimun=kimun_version(args),
        )


def _summary(
    args: argparse.Namespace, queries: dict[str, str], side: Side, frame: Any, seconds: float
) -> str:
    """The paragraph the command ends with."""
    prov = side.provenance
    counts = frame.groupby("turn_id", sort=False).size() if len(frame) else None
    empty = [q for q in queries if counts is None or q not in counts.index]
    retriever = "BM25"
    if "embedder" in prov:
        retriever = f"kimun's dense retrieval with {prov['embedder']}"
        if "reranker" in prov:
            retriever += f", reranked by {prov['reranker']}"
    settings = prov.get("settings_file", prov.get("settings", ""))
    kind = (
        "a turn log"
        if _format(args.output) == "jsonl"
        else f"a TREC run ({args.level or 'note'} level)"
    )
    text = (
        f"Retrieved {len(queries)} question{'s' if len(queries) != 1 else ''} of "
        f"{args.queries} from {args.vault} with {retriever} (kimun {prov['kimun']} chunks, "
        f"pools of {args.pool_size}), cut by {prov['cut']} ({settings})"
    )
    if args.k is not None:
        text += f", at most {args.k} chunks each"
    text += f": {len(frame)} chunks in the contexts"
    if counts is not None:
        text += f", {counts.min()}-{counts.max()} per question"
    if empty:
        named = ", ".join(empty[:5]) + (f" and {len(empty) - 5} more" if len(empty) > 5 else "")
        text += f"; {len(empty)} retrieved nothing ({named})"
    if "embedded" in prov:
        text += f". Embedded {prov['embedded']} (store: {prov['store']})"
    return text + f". Wrote {kind} to {args.output} in {seconds:.1f} s."


def run_command(args: argparse.Namespace, console: Console) -> int:
    """Run ``askkit run``."""
    t0 = time.perf_counter()
    queries = _check_inputs(args)
    side = _retrieve(args, queries)
    frame = side.frame
    if args.k is not None and len(frame):
        frame = frame[frame.groupby("turn_id", sort=False).cumcount() < args.k]
    if not len(frame):
        raise UsageError(
            f"no question of {args.queries} retrieved anything from {args.vault} (does it "
            "hold notes?): nothing written"
        )
    _check_output(args.output, args.force)  # again: the file may have come meanwhile
    write_output(args.output, frame, queries, level=args.level or "note")
    summary = _summary(args, queries, side, frame, time.perf_counter() - t0)
    console.print(Text(summary), soft_wrap=False)
    return 0
