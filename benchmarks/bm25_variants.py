"""Retrieval quality of the BM25 baseline with and without stop words and stemming.

Usage::

    .venv/bin/python benchmarks/bm25_variants.py
    .venv/bin/python benchmarks/bm25_variants.py --cranfield DIR   # also the Cranfield collection

Four variants of :class:`askkit.retrieve.local.LocalIndex` (everything else
equal: kimun's sections and splits, headings indexed, k1=1.5, b=0.75):
``none`` (every word kept as typed), ``stopwords`` (English stop words
dropped), ``stemming`` (Snowball English stems) and ``both``. Each question
retrieves its candidate pool (the best 80 chunks, ``per_note=False``); the
runs are scored with :func:`askkit.metrics.evaluate` and tested with
:func:`askkit.compare.compare` (paired t-test and paired randomization test,
10,000 sign flips, seed 0, Holm-corrected across the four measures), first
against ``none``, then ``both`` against ``stopwords``.

Collections:

* ``data/vault`` with ``data/queries.tsv`` and ``data/qrels.tsv``, judged per
  section (``level="section"``);
* with ``--cranfield DIR``, the Cranfield collection from its standard files
  ``cran.all.1400``, ``cran.qry`` and ``cranqrel`` in ``DIR``: each abstract
  becomes a note ``<id>.md`` (its ``.W`` text, which starts with the title),
  judged per note. The queries are numbered 1..225 in file order (the ids in
  ``cran.qry`` skip numbers; ``cranqrel`` numbers them in order), and
  ``cranqrel``'s relevance codes 1 (a complete answer) .. 4 (minimum
  interest) become grades 4 .. 1, code -1 (no interest) grade 0.

This prints measured quality, not speed.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from askkit.compare import compare
from askkit.frame import sources_frame
from askkit.metrics import Level, evaluate, read_qrels
from askkit.retrieve.local import CANDIDATE_POOL, LocalIndex

DATA = Path(__file__).resolve().parent.parent / "data"
MEASURES = ["ndcg@10", "mrr", "recall@10", "map"]
VARIANTS: dict[str, dict[str, str | None]] = {
    "none": {"stopwords": None, "stemmer": None},
    "stopwords": {"stopwords": "en", "stemmer": None},
    "stemming": {"stopwords": None, "stemmer": "english"},
    "both": {"stopwords": "en", "stemmer": "english"},
}


def runs_for(vault: Path, queries: Mapping[str, str]) -> dict[str, pd.DataFrame]:
    """Each variant's run: every question's candidate pool as a sources frame."""
    runs = {}
    for name, options in VARIANTS.items():
        index = LocalIndex(vault, cache_dir=False, progress=False, **options)  # type: ignore[arg-type]
        turns = [
            {
                "id": qid,
                "question": text,
                "chunks": [c.to_dict() for c in index.search(text, CANDIDATE_POOL, per_note=False)],
            }
            for qid, text in queries.items()
        ]
        runs[name] = sources_frame(turns)
    return runs


def value(summary: pd.DataFrame, run: str, measure: str, column: str) -> float:
    """One figure of a :class:`askkit.compare.Comparison`'s summary."""
    return float(summary[column].to_numpy(dtype=float)[summary.index.get_loc((run, measure))])


def report(title: str, runs: dict[str, pd.DataFrame], qrels: pd.DataFrame, level: Level) -> None:
    n = len(qrels["query_id"].unique())
    print(f"\n## {title}: {n} judged queries, level={level!r}\n")
    means = pd.DataFrame(
        {name: evaluate(run, qrels, MEASURES, level=level).mean for name, run in runs.items()}
    ).T
    versus_none = compare(runs, qrels, MEASURES, baseline="none", level=level, seed=0)
    versus_stop = compare(
        {"stopwords": runs["stopwords"], "both": runs["both"]},
        qrels,
        MEASURES,
        level=level,
        seed=0,
    )
    print("| variant | " + " | ".join(MEASURES) + " |")
    print("| --- |" + " --- |" * len(MEASURES))
    for name in VARIANTS:
        cells = []
        for m in MEASURES:
            cell = f"{means[m].to_numpy(dtype=float)[means.index.get_loc(name)]:.4f}"
            if name != "none":
                delta, p = (
                    value(versus_none.summary, name, m, c) for c in ("delta", "p_random_holm")
                )
                cell += f" ({delta:+.4f}, p={p:.3f})"
            cells.append(cell)
        print(f"| {name} | " + " | ".join(cells) + " |")
    print("\n`both` against `stopwords` (stemming added to stop words):\n")
    print("| measure | delta | wins / ties / losses | p (t, Holm) | p (randomization, Holm) |")
    print("| --- | --- | --- | --- | --- |")
    for m in MEASURES:
        delta, wins, ties, losses, p_t, p_r = (
            value(versus_stop.summary, "both", m, c)
            for c in ("delta", "wins", "ties", "losses", "p_t_holm", "p_random_holm")
        )
        print(
            f"| {m} | {delta:+.4f} | {wins:.0f} / {ties:.0f} / {losses:.0f} "
            f"| {p_t:.3f} | {p_r:.3f} |"
        )


def read_cranfield_records(path: Path) -> list[dict[str, str]]:
    """The ``.I`` records of a Cranfield file: id and each ``.X`` field's text."""
    records: list[dict[str, str]] = []
    field = ""
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        head = re.match(r"^\.([A-Z])(?:\s+(\S+))?\s*$", line)
        if head and head.group(1) == "I":
            records.append({"id": head.group(2) or ""})
            field = ""
        elif head:
            field = head.group(1)
            records[-1].setdefault(field, "")
        elif records and field:
            records[-1][field] += line.strip() + "\n"
    return records


def cranfield(folder: Path, root: Path) -> tuple[dict[str, str], pd.DataFrame]:
    """Write the Cranfield abstracts as notes under ``root``; return queries and qrels."""
    root.mkdir(parents=True)
    for record in read_cranfield_records(folder / "cran.all.1400"):
        (root / f"{int(record['id'])}.md").write_text(record.get("W", ""), encoding="utf-8")
    queries = {
        str(n): q.get("W", "").strip()
        for n, q in enumerate(read_cranfield_records(folder / "cran.qry"), start=1)
    }
    rows = []
    for line in (folder / "cranqrel").read_text(encoding="utf-8").splitlines():
        if line.strip():
            qid, doc, code = line.split()[:3]
            grade = 5 - int(code) if int(code) in (1, 2, 3, 4) else 0
            rows.append((str(int(qid)), f"{int(doc)}.md", grade))
    qrels = pd.DataFrame(rows, columns=["query_id", "path", "grade"])
    return queries, read_qrels(qrels.assign(heading=""))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--cranfield", type=Path, help="a folder with cran.all.1400, cran.qry and cranqrel"
    )
    args = parser.parse_args()
    queries_frame = pd.read_csv(DATA / "queries.tsv", sep="\t", dtype=str)
    queries = dict(zip(queries_frame["query_id"], queries_frame["question"], strict=True))
    qrels = read_qrels(DATA / "qrels.tsv")
    report("data/vault", runs_for(DATA / "vault", queries), qrels, "section")
    if args.cranfield:
        with tempfile.TemporaryDirectory() as tmp:
            cran_queries, cran_qrels = cranfield(args.cranfield, Path(tmp) / "cranfield")
            runs = runs_for(Path(tmp) / "cranfield", cran_queries)
        report("Cranfield", runs, cran_qrels, "note")
    return 0


if __name__ == "__main__":
    sys.exit(main())
