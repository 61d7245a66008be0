"""Regenerate ``data/run.jsonl``: the bundled questions through askkit's local index.

One turn record per question of ``data/queries.tsv``, in that order:
``{"id", "question", "answer": "", "chunks"}``, where ``id`` is the query id (so
``data/qrels.tsv`` judges every turn) and ``chunks`` are the wire dicts of
``LocalIndex("data/vault", cache_dir=False).search(question, k=10)``.

The output is deterministic (fixed key order, scores rounded to 6 decimals,
UTF-8 without escapes, one record a line, a final newline) and written
atomically; nothing else is written (the index stays in memory).

Usage::

    .venv/bin/python scripts/make_sample_run.py           # rewrite data/run.jsonl
    .venv/bin/python scripts/make_sample_run.py --check   # exit 1 if it is out of date
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path
from typing import Any

from askkit._atomic import atomic_write_text
from askkit.retrieve import LocalIndex

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"
RUN = DATA / "run.jsonl"
K = 10
DIGITS = 6  # scores rounded so the file does not churn on the last bit of a float


def read_queries(path: Path) -> list[tuple[str, str]]:
    """``(query_id, question)`` pairs of a queries TSV, in file order."""
    with path.open(encoding="utf-8", newline="") as fh:
        return [(row["query_id"], row["question"]) for row in csv.DictReader(fh, delimiter="\t")]


def render() -> str:
    """The text ``data/run.jsonl`` should hold."""
    index = LocalIndex(DATA / "vault", cache_dir=False, progress=False)
    lines = []
    for query_id, question in read_queries(DATA / "queries.tsv"):
        chunks: list[dict[str, Any]] = []
        for chunk in index.search(question, k=K):
            wire = chunk.to_dict()
            wire["similarity_score"] = round(wire["similarity_score"], DIGITS)
            chunks.append(wire)
        record = {"id": query_id, "question": question, "answer": "", "chunks": chunks}
        lines.append(json.dumps(record, ensure_ascii=False))
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--check", action="store_true", help="exit 1 if data/run.jsonl differs; write nothing"
    )
    args = parser.parse_args(argv)
    text = render()
    current = RUN.read_text(encoding="utf-8") if RUN.is_file() else None
    if args.check:
        if current != text:
            print(
                f"{RUN.relative_to(ROOT)} is out of date: run scripts/make_sample_run.py",
                file=sys.stderr,
            )
            return 1
        return 0
    if current != text:
        atomic_write_text(RUN, text)
    print(f"{RUN.relative_to(ROOT)}: {text.count(chr(10))} turns")
    return 0


if __name__ == "__main__":
    sys.exit(main())
