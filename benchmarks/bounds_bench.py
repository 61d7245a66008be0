"""Bounds on incomplete judgments (``askkit.metrics.bounds``) against pytrec_eval.

For each measure, ``bounds`` gives the least and greatest value over every
judging of the ranking's unjudged documents (see ``askkit/metrics/bounds.py``).
No other tool computes them; the named baseline, run in the same process on
the same data, is pytrec_eval computing the same measure once (``ndcg_cut.10``,
``recall.10``, ``P.10``, ``recip_rank``, ``bpref``, ``infAP``, ``map``), with
its dicts built beforehand and not timed. askkit is timed from the prepared
run (``askkit.metrics.prepare``, timed apart), best of ``--repeat``.

The data is metrics_bench.py's ``--incomplete`` run: 100 sources per query,
40 judgments per query (1 in 6 graded -1, pooled but unjudged), about 70% of
the retrieved rows unjudged. AP, nDCG@k and recall@k read their ``2 (u + 1)``
candidate fillings per query (``u`` its unjudged documents) from prefix sums,
and precision, hit and MRR need two; bpref and infAP score every candidate as a
query of its own, so they are timed on ``--deep-queries`` queries only.

    python benchmarks/bounds_bench.py                    # 50,000 queries; deep measures on 2,000
    python benchmarks/bounds_bench.py --queries 2000     # a quick run
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pytrec_eval
from metrics_bench import make_data, make_dicts

from askkit.metrics import bounds, prepare

#: askkit measure -> (pytrec_eval measure to compute, its result key): bounds in closed
#: form or from two fillings, timed on every query.
CLOSED = {
    "ndcg@10": ("ndcg_cut.10", "ndcg_cut_10"),
    "recall@10": ("recall.10", "recall_10"),
    "precision@10": ("P.10", "P_10"),
    "mrr": ("recip_rank", "recip_rank"),
    "map": ("map", "map"),
}
DEEP = {"bpref": ("bpref", "bpref"), "infap": ("infAP", "infAP")}


def best(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def table(queries: int, measures: dict[str, tuple[str, str]], repeat: int) -> None:
    run, qrels = make_data(queries, 100, incomplete=True)
    run_dict, qrels_dict = make_dicts(run, qrels)
    t_prep, prep = best(lambda: prepare(run, qrels), 1)
    print(f"\n{queries:,} queries x 100 sources; askkit prepare (once, apart): {t_prep:.2f} s")
    head = f"{'measure':<14}{'askkit bounds s':>16}{'pytrec_eval s':>15}{'ratio':>8}"
    print(f"{head}  mean [lower, upper]")
    for name, (trec, key) in measures.items():
        t_ask, b = best(lambda name=name: bounds(prep, measures=[name]), repeat)

        def reference(trec: str = trec) -> Any:
            return pytrec_eval.RelevanceEvaluator(qrels_dict, {trec}).evaluate(run_dict)

        t_ref, ref = best(reference, repeat)
        mean = b.table().loc[name]
        ref_mean = sum(v[key] for v in ref.values()) / len(ref)
        assert abs(ref_mean - mean["value"]) < 1e-9, (name, ref_mean, mean["value"])
        print(
            f"{name:<14}{t_ask:>16.2f}{t_ref:>15.2f}{t_ask / t_ref:>7.2f}x  "
            f"{mean['value']:.4f} [{mean['lower']:.4f}, {mean['upper']:.4f}]"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=50_000)
    parser.add_argument("--deep-queries", type=int, default=2_000)
    parser.add_argument("--repeat", type=int, default=3, help="best of N")
    args = parser.parse_args()
    table(args.queries, CLOSED, args.repeat)
    table(min(args.deep_queries, args.queries), DEEP, args.repeat)
    print("\nvalues: each bounds table's 'value' equals pytrec_eval's mean (checked, 1e-9)")


if __name__ == "__main__":
    main()
