"""askkit.trace.trace_pools (columnar) against a per-query loop through trace_pool.

Generates ``--queries`` ranked pools (default 10,000) of ``--chunks`` chunks
(default 80, kimun's CANDIDATE_POOL), seeded: scores best first with a
relevant head and a noisy tail, notes split into several sections, titles
``Note\\x1fSection N``; ``--sections`` judged relevant sections per query
(default 3), some of them outside the pool. Then traces every section to
where it stops (pool, cut, context) under kimun's default cut and times:

* **columnar**: ``trace_pools(pools, qrels)``: numpy over the long pool
  frame, no Python loop per query (best and median of ``--repeat``);
* **loop**: ``trace_pools_reference``: one query at a time through
  ``trace_pool`` (the stage functions of :mod:`askkit.ranking`, why_not's
  sentence included), the definition the columnar path is tested against;
  run once. ``--loop-queries N`` runs it on the first N queries only and
  extrapolates linearly (each query is independent), printed as
  EXTRAPOLATED; the columnar trace is then timed on that subset too.

Prints the figures, the ratio, and whether the two frames are equal.

    python benchmarks/trace_bench.py
    python benchmarks/trace_bench.py --queries 300 --loop-queries 100 --repeat 1   # smoke
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from askkit.trace import trace_pools, trace_pools_reference  # noqa: E402 - after the path


def make_pools(
    queries: int, chunks: int, sections: int, seed: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Seeded synthetic pools (long frame, best first, titled) and qrels."""
    rng = np.random.default_rng(seed)
    n = queries * chunks
    notes_per_query = chunks // 2
    note = rng.zipf(1.6, size=n) % notes_per_query
    section = rng.integers(0, 4, size=n)
    vocab = np.array([f"notes/{i:03d}.md" for i in range(notes_per_query)], dtype=object)
    titles = np.array([f"Note\x1fSection {i}" for i in range(4)], dtype=object)
    position = np.tile(np.arange(chunks), queries)
    head = np.repeat(rng.integers(2, 13, size=queries), chunks)
    level = np.where(position < head, 0.85 - 0.01 * position, 0.62 - 0.15 * position / chunks)
    score = np.round(level + rng.normal(0, 0.01, size=n), 4)
    score = -np.sort(-score.reshape(queries, chunks), axis=1).ravel()
    qid = np.array([f"q{i:05d}" for i in range(queries)], dtype=object)
    pools = pd.DataFrame(
        {
            "query_id": np.repeat(qid, chunks),
            "rank": position + 1,
            "path": vocab[note],
            "score": score,
            "title": titles[section],
        }
    )
    rows = np.repeat(np.arange(queries), sections)
    pick = rng.integers(0, chunks, size=len(rows))
    at = rows * chunks + pick
    outside = rng.random(len(rows)) < 0.1  # a judged section the pool does not hold
    qrels = pd.DataFrame(
        {
            "query_id": qid[rows],
            "path": np.where(outside, "notes/elsewhere.md", vocab[note[at]]),
            "heading": [t.split("\x1f")[1] for t in titles[section[at]]],
            "grade": rng.integers(1, 4, size=len(rows)),
        }
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--chunks", type=int, default=80)
    parser.add_argument("--sections", type=int, default=3)
    parser.add_argument("--loop-queries", type=int, default=None)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=20261205)
    args = parser.parse_args()

    pools, qrels = make_pools(args.queries, args.chunks, args.sections, args.seed)
    print(
        f"{args.queries:,} queries x {args.chunks} chunks x {args.sections} relevant sections "
        f"({len(qrels):,} sections); Python {platform.python_version()}, "
        f"load {os.getloadavg()[0]:.2f}"
    )
    fast, out = timed(lambda: trace_pools(pools, qrels), args.repeat)
    loop_n = args.queries if args.loop_queries is None else min(args.loop_queries, args.queries)
    keep = {f"q{i:05d}" for i in range(loop_n)}
    sub_pools = pools[pools["query_id"].isin(keep)]
    sub_qrels = qrels[qrels["query_id"].isin(keep)]
    start = time.perf_counter()
    slow = trace_pools_reference(sub_pools, sub_qrels)
    loop = time.perf_counter() - start
    if loop_n < args.queries:
        sub_fast, sub_out = timed(lambda: trace_pools(sub_pools, sub_qrels), args.repeat)
        equal = sub_out.equals(slow)
        loop_full = loop * args.queries / loop_n
        label = f"EXTRAPOLATED from {loop_n:,} queries ({loop:.2f} s)"
        print(f"columnar on the {loop_n:,}-query subset: best {min(sub_fast):.3f} s")
    else:
        equal = out.equals(slow)
        loop_full = loop
        label = "once, all queries"
    best, median = min(fast), statistics.median(fast)
    runs = " ".join(f"{t:.3f}" for t in fast)
    print()
    print("| measure | value | target | status |")
    print("| --- | ---: | --- | --- |")
    met = "met" if best < 2 else "NOT met"
    print(
        f"| columnar `trace_pools`, best / median of {args.repeat} ({runs}) "
        f"| {best:.3f} / {median:.3f} s | < 2 s | {met} |"
    )
    print(f"| per-query loop `trace_pools_reference` ({label}) | {loop_full:.2f} s | baseline | |")
    ratio = loop_full / best
    print(
        f"| loop / columnar, best | {ratio:.1f}x | >= 20x | {'met' if ratio >= 20 else 'NOT met'} |"
    )
    status = "met" if equal else "NOT met"
    print(f"| frames equal (every column, every row) | {equal} | True | {status} |")
    stops = out["stopped"].astype(str).value_counts().to_dict()
    print(f"\nsections by stage: {stops}")


if __name__ == "__main__":
    main()
