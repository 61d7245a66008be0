"""``askkit collection``: a classic test collection turned into a kimun vault, queries and qrels.

``askkit collection SOURCE -o VAULT_DIR`` reads the collection in the folder
SOURCE (Cranfield's SMART files, TREC SGML documents with topics and qrels,
or BEIR's JSONL and TSV files; :func:`askkit.metrics.collections.read_collection`),
writes one note per document into VAULT_DIR with ``queries.tsv`` and
``qrels.tsv`` beside them (:func:`~askkit.metrics.collections.write_collection`),
and prints what it read (documents, queries, judgments by grade, how the
grades were read, every note the reader made), where it wrote, and the
commands that index the vault, run the queries and score the run. VAULT_DIR
must be new, empty or a vault ``askkit collection`` wrote; ``--force``
replaces askkit's own files there even when they were edited since, never a
file askkit did not write. Writing the notes shows its progress (a line every
few seconds on a pipe).
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from askkit.cli import _terminal

__all__ = ["collection_command", "register"]


def register(sub: Any) -> None:
    """Add ``askkit collection`` to the command line."""
    p = sub.add_parser(
        "collection",
        help="turn a test collection (Cranfield/SMART, TREC, BEIR) into a vault, queries.tsv "
        "and qrels.tsv",
        description="Read a test collection in its classic layout (SMART .I records as "
        "Cranfield's cran.all.1400, cran.qry and cranqrel; TREC <DOC> files, topics and "
        "qrels; BEIR's corpus.jsonl, queries.jsonl and qrels/SPLIT.tsv) and write it as a "
        "kimun vault, one note per document, with queries.tsv and qrels.tsv (note level) "
        "beside the notes.",
    )
    p.add_argument("source", help="the folder holding the collection's files")
    p.add_argument(
        "-o",
        "--output",
        metavar="VAULT_DIR",
        required=True,
        help="the vault's folder: new, empty, or one askkit collection wrote",
    )
    p.add_argument(
        "--layout",
        choices=["auto", "smart", "trec", "beir"],
        default="auto",
        help="the collection's layout (default: found from its files)",
    )
    p.add_argument(
        "--grades",
        choices=["ir_datasets", "cleverdon"],
        default="ir_datasets",
        help="Cranfield's judgment codes as ir_datasets reads them (default: 4 is a complete "
        "answer) or in Cleverdon's direction (1 is); -1 is 0, not relevant, either way",
    )
    p.add_argument(
        "--split",
        metavar="NAME",
        help="BEIR: the judgments' split, qrels/NAME.tsv (default: test, or the only one)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="replace askkit's files in VAULT_DIR even if edited since (never another file)",
    )
    p.set_defaults(func=collection_command)


def _n(count: int, one: str, many: str) -> str:
    return f"{count:,} {one if count == 1 else many}"


def _files(files: tuple[str, ...]) -> str:
    names = [Path(f).name for f in files]
    return (
        ", ".join(names)
        if len(names) <= 3
        else f"{names[0]} ... {names[-1]} ({len(names):,} files)"
    )


def _quoted(path: Path) -> str:
    return shlex.quote(str(path))


def collection_command(args: argparse.Namespace, console: Console) -> int:
    """Run ``askkit collection``."""
    from askkit.metrics.collections import check_output, read_collection, write_collection

    source, output = Path(args.source), Path(args.output)
    check_output(output, force=args.force)  # before any reading
    with _terminal.progress_output():
        collection = read_collection(
            source,
            layout=args.layout,
            cranfield_grades=args.grades,
            split=args.split,
            progress=True,
        )
        _print_read(console, source, collection)
        written = write_collection(collection, output, force=args.force, progress=True)
    _print_written(console, written)
    return 0


def _print_read(console: Console, source: Path, collection: Any) -> None:
    names = "; ".join(f"{role}: {_files(files)}" for role, files in collection.files.items())
    console.print(Text(f"read {source} ({collection.layout} layout; {names})"))
    judged = len({j.query_id for j in collection.qrels})
    relevant = sum(1 for j in collection.qrels if j.grade > 0)
    grades = ", ".join(f"{g}: {n:,}" for g, n in collection.grade_counts().items())
    rows = [
        ("documents", f"{len(collection.documents):,}"),
        ("queries", f"{len(collection.queries):,}"),
        (
            "judgments",
            f"{len(collection.qrels):,} for {_n(judged, 'query', 'queries')}, "
            f"{relevant:,} relevant (by grade: {grades})",
        ),
        ("grades", collection.grades),
    ]
    for label, value in rows:
        console.print(Text(f"  {label:<10} {value}"))
    for note in collection.notes:
        console.print(Text(f"  note: {note}"))


def _print_written(console: Console, written: Any) -> None:
    again = ""
    if written.replaced or written.removed:
        again = (
            f" (over askkit's earlier write: {written.replaced:,} files replaced, "
            f"{written.removed:,} notes removed)"
        )
    console.print(
        Text(
            f"wrote the vault {written.folder}: {_n(written.notes, 'note', 'notes')}, one per "
            "document, "
            f"named from its id{again}"
        )
    )
    rows = [
        ("queries", written.queries),
        ("qrels", written.qrels),
        *([("fields", written.fields)] if written.fields else []),
        ("record", written.manifest),
    ]
    for label, path in rows:
        console.print(Text(f"  {label:<10} {path}"))
    vault = written.folder
    console.print(Text("next:"))
    for command in (
        f"askkit index {_quoted(vault)}",
        f"askkit run --vault {_quoted(vault)} --queries {_quoted(written.queries)} -o run.trec",
        f"askkit eval {_quoted(written.qrels)} run.trec",
    ):
        console.print(Text(f"  {command}"))
