"""askkit.ranking.sweep_cuts (columnar) against a per-query Python loop over the pure cuts.

Generates ``--queries`` ranked pools (default 10,000) of ``--chunks`` chunks
each (default 80, kimun's CANDIDATE_POOL), seeded: scores best first with a
relevant head, a noisy tail, ties, and notes split into several chunks (the
staircases kimun's largest-drop cut looks through); 1-4 judged notes per
query, grades 1-3, some of them outside the pool. Then sweeps 3 strategies x
41 settings (``fixed`` top_k 1..41; ``score-range`` cutoffs 0, 0.025, .., 1;
``largest-drop`` windows (1..20, 30) and (3, 5..85)) and times:

* **columnar**: ``sweep_cuts(pools, qrels, grid=...)``, numpy over the whole
  long frame, no Python loop per query (best and median of ``--repeat``);
* **loop**: ``sweep_cuts_reference``: one query at a time, ``cut_len`` and the
  measures in Python, the definition the columnar path is tested against;
  run once. It takes about 5 ms per query (under a minute for 10,000), so by
  default it runs on every query. ``--loop-queries N`` runs it on the first N
  only and extrapolates linearly to the full count (each query is
  independent), printed as EXTRAPOLATED; the columnar sweep is then timed on
  that subset too.

Prints the figures, the ratio, and the largest difference between the two
tables on the subset.

    python benchmarks/cut_bench.py                      # 10,000 x 80, about 1.5 minutes
    python benchmarks/cut_bench.py --queries 500 --loop-queries 100 --repeat 1   # smoke
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from askkit.ranking import sweep_cuts, sweep_cuts_reference  # noqa: E402 - after the path

GRID: dict[str, list[Any]] = {
    "fixed": list(range(1, 42)),
    "score-range": [i / 40 for i in range(41)],
    "largest-drop": [(low, 30) for low in range(1, 21)] + [(3, high) for high in range(5, 86, 4)],
}


def make_pools(queries: int, chunks: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Seeded synthetic pools (long frame, best first) and qrels."""
    rng = np.random.default_rng(seed)
    n = queries * chunks
    # Notes: about half as many as chunks per query, a few with many sections.
    notes_per_query = chunks // 2
    note = rng.zipf(1.6, size=n) % notes_per_query
    vocab = np.array([f"notes/{i:03d}.md" for i in range(notes_per_query)], dtype=object)
    # Scores: a head of 2-12 relevant-looking chunks, then a decaying noisy tail, on a
    # 1e-4 grid (ties), per query scale and offset (cosine bands differ by embedder).
    position = np.tile(np.arange(chunks), queries)
    head = np.repeat(rng.integers(2, 13, size=queries), chunks)
    level = np.where(position < head, 0.85 - 0.01 * position, 0.62 - 0.15 * position / chunks)
    noise = rng.normal(0, 0.01, size=n)
    offset = np.repeat(rng.uniform(-0.1, 0.1, size=queries), chunks)
    score = np.round(level + noise + offset, 4)
    score = -np.sort(-score.reshape(queries, chunks), axis=1).ravel()
    qid = np.array([f"q{i:05d}" for i in range(queries)], dtype=object)
    pools = pd.DataFrame({"query_id": np.repeat(qid, chunks), "path": vocab[note], "score": score})
    # Qrels: 1-4 judged notes per query, mostly among the notes of its head.
    judged = rng.integers(1, 5, size=queries)
    rows = np.repeat(np.arange(queries), judged)
    pick = rng.integers(0, 8, size=len(rows))
    first_notes = note.reshape(queries, chunks)[rows, np.minimum(pick, chunks - 1)]
    outside = rng.random(len(rows)) < 0.1  # a judged note the pool does not hold
    paths = np.where(outside, "notes/elsewhere.md", vocab[first_notes])
    qrels = pd.DataFrame(
        {"query_id": qid[rows], "path": paths, "grade": rng.integers(1, 4, size=len(rows))}
    )
    return pools, qrels


def timed(fn: Callable[[], pd.DataFrame], repeat: int) -> tuple[list[float], pd.DataFrame]:
    times: list[float] = []
    out = pd.DataFrame()
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return times, out


def _row(label: str, queries: int, times: list[float]) -> str:
    runs = " ".join(f"{t:.3f}" for t in times)
    best = min(times)
    middle = (
        f"{best:.3f} / {statistics.median(times):.3f} ({runs})"
        if len(times) > 1
        else (f"{best:.2f} (once)")
    )
    return f"| {label} | {queries:,} | {middle} | {1000 * best / queries:.3f} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--chunks", type=int, default=80)
    parser.add_argument(
        "--loop-queries",
        type=int,
        default=None,
        help="run the loop on the first N queries only and extrapolate (default: all)",
    )
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=20260802)
    args = parser.parse_args()

    pools, qrels = make_pools(args.queries, args.chunks, args.seed)
    settings = sum(len(v) for v in GRID.values())
    loop_n = args.queries if args.loop_queries is None else min(args.loop_queries, args.queries)
    subset_ids = pools["query_id"].unique()[:loop_n]
    sub_pools = pools[pools["query_id"].isin(subset_ids)]
    sub_qrels = qrels[qrels["query_id"].isin(subset_ids)]
    print(
        f"pools: {args.queries:,} queries x {args.chunks} chunks = {len(pools):,} rows; "
        f"{len(qrels):,} judgments; {settings} settings (3 strategies x 41)"
    )
    print(
        f"python {platform.python_version()}, numpy {np.__version__}, "
        f"pandas {pd.__version__}, {platform.machine()}, seed {args.seed}"
    )

    sweep_cuts(pools.head(args.chunks * 100), qrels, grid=GRID)  # warm-up: imports, caches
    full, table = timed(lambda: sweep_cuts(pools, qrels, grid=GRID), args.repeat)
    if loop_n < args.queries:
        sub, fast_sub = timed(lambda: sweep_cuts(sub_pools, sub_qrels, grid=GRID), args.repeat)
    else:
        sub, fast_sub = full, table
    loop, slow_sub = timed(lambda: sweep_cuts_reference(sub_pools, sub_qrels, grid=GRID), 1)
    loop_full = loop[0] * args.queries / loop_n

    numeric = [c for c in fast_sub.columns if fast_sub[c].dtype.kind in "if"]
    gap = np.abs(fast_sub[numeric].to_numpy(float) - slow_sub[numeric].to_numpy(float))
    best = min(full)

    print()
    print("| step | queries | seconds: best / median (runs) | ms per query |")
    print("| --- | ---: | ---: | ---: |")
    print(_row("columnar `sweep_cuts`", args.queries, full))
    if loop_n < args.queries:
        print(_row("columnar `sweep_cuts`, the loop's subset", loop_n, sub))
    print(_row("per-query loop `sweep_cuts_reference`", loop_n, loop))
    if loop_n < args.queries:
        print(
            f"| per-query loop, EXTRAPOLATED ({args.queries:,} / {loop_n:,} x the measured "
            f"time) | {args.queries:,} | {loop_full:.1f} | {1000 * loop[0] / loop_n:.3f} |"
        )
    print()
    measured = "extrapolated" if loop_n < args.queries else "measured"
    print(f"loop ({measured}) / columnar, best times: {loop_full / best:.1f}x")
    if loop_n < args.queries:
        print(f"loop / columnar on the same {loop_n:,} queries: {loop[0] / min(sub):.1f}x")
    print(
        f"largest |columnar - loop| over the {len(numeric)} numeric columns: {np.nanmax(gap):.3g}"
    )
    print(
        f"targets: columnar under 2 s: {'met' if best < 2 else 'MISSED'} ({best:.2f} s); "
        f">= 20x the loop: {'met' if loop_full / best >= 20 else 'MISSED'}"
    )
    top = table[table["recall"] >= 0.9].sort_values("mean_chunks", kind="stable").head(1)
    if len(top):
        print(
            f"smallest context with recall >= 0.9: {top['setting'].iloc[0]} "
            f"({top['mean_chunks'].iloc[0]:.2f} chunks, recall {top['recall'].iloc[0]:.3f})"
        )


if __name__ == "__main__":
    main()
