"""askkit.metrics.evaluate against pytrec_eval and ranx: nDCG@10, MRR, R@100, AP.

Generates a run of ``--queries`` queries (default 100,000) x ``--sources``
sources (default 100) = 10,000,000 rows, with 10 judged documents per query
(5 retrieved, 5 not; grades 0-3), then times:

* **askkit**: ``evaluate(frame, qrels_frame, ...)``: a run frame in (columns
  ``turn_id``, ``path``, ``score``, ``rank``, pandas' Arrow strings), the
  per-query frame out. No JIT, so cold = first call. The generated run arrives
  grouped by query and ranked, as kimun sends it; the same rows shuffled are
  timed too (askkit then sorts).
* **askkit, exact path only**: the same calls, warm and cold, with
  :mod:`askkit.metrics.fast` switched off (``fast.ENABLED = False``), so the
  exact path, the specification, does all the work. The fast path stays only
  while it is clearly faster end to end (the target: 1.5x, warm, on the
  grouped run) and gives the same values.
* **pytrec_eval**: ``RelevanceEvaluator(qrels, measures)`` + ``evaluate(run)``
  on ``{qid: {doc: score}}`` dicts built beforehand (not timed).
* **cold** (the target): each tool's first call in a fresh process of its own
  (the data, and pytrec_eval's dicts, prepared untimed first), ``--cold-repeat``
  times each, alternating which tool goes first; best and median reported.
  The in-process first call is printed too, but there askkit always runs
  first, right after gigabytes of dicts were built: whichever tool goes first
  pays for the fresh memory, so it measures the order, not the tool.
* **ranx**: ``Qrels(dict)`` + ``Run(dict)`` (conversion to numba typed dicts)
  and ``evaluate`` (numba). *cold*: a fresh subprocess with an empty
  ``NUMBA_CACHE_DIR``, so the JIT compiles from scratch (ranx's kernels use
  ``@njit(cache=True)``: numba caches compiled code on disk, by default in
  ``__pycache__`` beside ranx's sources); *warm*: a second ``evaluate`` in that process;
  with ``--ranx-disk-cache`` also a fresh subprocess reusing numba's on-disk cache.

With ``--incomplete`` the measures are askkit's ``bpref``, ``infap`` and
``ndcg'@10`` in one ``evaluate``, against pytrec_eval's ``bpref`` and ``infAP``
(one evaluator) and its ``ndcg_cut.10`` with ``judged_docs_only_flag=True``
(a second: the flag holds for a whole evaluator, and infAP changes under it),
on data with 40 judgments per query (30 of them retrieved, 1 in 6 graded -1,
pooled but unjudged), so 70% of the retrieved rows are unjudged; ranx, which
has neither bpref nor infAP, is left out.

Prints the times, askkit's ratio to each, the fast path's speed-up over the
exact path, and each tool's largest absolute difference from pytrec_eval over
every query and measure (and the fast path's from the exact one). Scores are
distinct within a query (ties would make ranx differ by design, see the README).

    python benchmarks/metrics_bench.py                 # full size (~15 min, ~12 GB RAM)
    python benchmarks/metrics_bench.py --queries 2000  # a quick run
    python benchmarks/metrics_bench.py --files         # TREC files in (see trec_files.py)
    python benchmarks/metrics_bench.py --diff          # askkit diff of two TREC runs
    python benchmarks/metrics_bench.py --incomplete    # bpref, infap, ndcg'@10 (also --files)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import trec_files  # noqa: E402 - this folder, beside the script

ASKKIT_MEASURES = ["ndcg@10", "mrr", "recall@100", "map"]
#: askkit's evaluate must take at most this share of pytrec_eval's time.
TARGET = 0.5
#: The fast path stays only while it is at least this much faster end to end.
FAST_PATH_TARGET = 1.5
TREC_MEASURES = ["ndcg_cut_10", "recip_rank", "recall_100", "map"]
RANX_MEASURES = ["ndcg@10", "mrr", "recall@100", "map"]
#: ``--incomplete``: the measures for incomplete judgments, askkit's names and
#: pytrec_eval's; pytrec_eval needs two evaluators, as ``judged_docs_only_flag``
#: (trec_eval's ``-J``) holds for a whole evaluator: infAP changes under it.
INCOMPLETE_ASKKIT = trec_files.INCOMPLETE_ASKKIT
INCOMPLETE_TREC = trec_files.INCOMPLETE_TREC
#: ``--incomplete`` data: judgments per query, of which retrieved (of 100), and the
#: grades they are drawn from (-1: pooled but unjudged, 1 in 6).
INCOMPLETE_JUDGED = 40
INCOMPLETE_RETRIEVED = 30
INCOMPLETE_GRADES = np.array([-1, 0, 0, 1, 2, 3])
_POOL = 1_000_003  # documents (prime: the stride below never repeats within a query)


def _strings(prefix: str, ids: np.ndarray[Any, Any], suffix: str = "") -> pa.Array:
    return pc.binary_join_element_wise(prefix, pc.cast(pa.array(ids), pa.string()), suffix, "")


def make_data(
    queries: int, sources: int, seed: int = 0, *, incomplete: bool = False
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The run frame and the qrels frame (vectorized, deterministic).

    ``incomplete``: :data:`INCOMPLETE_JUDGED` judgments per query instead of 10,
    grades drawn from :data:`INCOMPLETE_GRADES` (-1: pooled but unjudged).
    """
    rng = np.random.default_rng(seed)
    n = queries * sources
    q = np.repeat(np.arange(queries), sources)
    j = np.tile(np.arange(sources), queries)
    start = rng.integers(0, _POOL, queries)
    doc = (start[q] + j * 9973) % _POOL
    score = (sources - j) + rng.random(n) * 0.5  # descending in rank, distinct
    run = pd.DataFrame(
        {
            "turn_id": pd.array(_strings("q", q), dtype="str"),
            "path": pd.array(_strings("doc", doc, ".md"), dtype="str"),
            "score": score,
            "rank": j + 1,
        }
    )
    judged, inside = (INCOMPLETE_JUDGED, INCOMPLETE_RETRIEVED) if incomplete else (10, 5)
    jq = np.repeat(np.arange(queries), judged)
    if incomplete:  # distinct retrieved documents, so each is judged once
        retrieved = np.argsort(rng.random((queries, sources)), axis=1)[:, :inside]
    else:
        retrieved = rng.integers(0, sources, (queries, inside))
    in_run = (start[:, None] + retrieved * 9973) % _POOL
    outside = (
        start[:, None] + (sources + rng.integers(0, 1000, (queries, judged - inside))) * 9973
    ) % _POOL
    jdoc = np.concatenate([in_run, outside], axis=1).ravel()
    qrels = pd.DataFrame(
        {
            "query_id": pd.array(_strings("q", jq), dtype="str"),
            "path": pd.array(_strings("doc", jdoc, ".md"), dtype="str"),
            "heading": pd.array(np.full(len(jq), ""), dtype="str"),
            "grade": (
                rng.choice(INCOMPLETE_GRADES, len(jq))
                if incomplete
                else rng.integers(0, 4, len(jq))
            ).astype(np.int64),
        }
    )
    return run, qrels


def make_dicts(
    run: pd.DataFrame, qrels: pd.DataFrame
) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, int]]]:
    run_dict: dict[str, dict[str, float]] = {}
    for q, d, s in zip(
        run["turn_id"].tolist(), run["path"].tolist(), run["score"].tolist(), strict=True
    ):
        run_dict.setdefault(q, {})[d] = s
    qrels_dict: dict[str, dict[str, int]] = {}
    for q, d, g in zip(
        qrels["query_id"].tolist(), qrels["path"].tolist(), qrels["grade"].tolist(), strict=True
    ):
        inner = qrels_dict.setdefault(q, {})
        inner[d] = max(g, inner.get(d, g))
    return run_dict, qrels_dict


def askkit_measures(incomplete: bool) -> list[str]:
    return INCOMPLETE_ASKKIT if incomplete else ASKKIT_MEASURES


def columns(incomplete: bool) -> list[tuple[str, str, bool]]:
    """(askkit's measure, pytrec_eval's key for it, judged_docs_only_flag) of each column."""
    if incomplete:
        pairs = zip(INCOMPLETE_ASKKIT, INCOMPLETE_TREC, strict=True)
        return [(a, key, flag) for a, (_, key, flag) in pairs]
    return [(a, t, False) for a, t in zip(ASKKIT_MEASURES, TREC_MEASURES, strict=True)]


def trec_evaluate(
    qrels_dict: dict[str, dict[str, int]], run_dict: dict[str, dict[str, float]], incomplete: bool
) -> dict[bool, dict[str, dict[str, float]]]:
    """pytrec_eval's values by ``judged_docs_only_flag``: one evaluator per flag needed."""
    import pytrec_eval

    if not incomplete:
        evaluator = pytrec_eval.RelevanceEvaluator(qrels_dict, set(TREC_MEASURES))
        return {False: evaluator.evaluate(run_dict)}
    out: dict[bool, dict[str, dict[str, float]]] = {}
    for flag in (False, True):
        names = {name for name, _, f in INCOMPLETE_TREC if f == flag}
        evaluator = pytrec_eval.RelevanceEvaluator(qrels_dict, names, judged_docs_only_flag=flag)
        out[flag] = evaluator.evaluate(run_dict)
    return out


def describe_incomplete(run: pd.DataFrame, qrels: pd.DataFrame) -> str:
    """What the ``--incomplete`` data holds: how much of the run is judged, pooled, unjudged."""
    grade = (
        pd.Series(
            qrels["grade"].to_numpy(), index=qrels["query_id"].astype(object) + " " + qrels["path"]
        )
        .groupby(level=0)
        .max()
    )
    keys = run["turn_id"].astype(object) + " " + run["path"]
    found = grade.reindex(keys.to_numpy()).to_numpy()
    judged = ~np.isnan(found)
    return (
        f"qrels: {len(qrels):,} judgments, {np.mean(qrels['grade'] == -1):.0%} of them -1 "
        f"(pooled, unjudged), {np.mean(qrels['grade'] >= 1):.0%} relevant; retrieved rows: "
        f"{np.mean(~judged):.0%} unjudged, {np.mean(found[judged] == -1) * judged.mean():.0%} "
        f"pooled (-1), {np.mean(found[judged] >= 0) * judged.mean():.0%} judged 0 or more"
    )


def ranx_worker(args: argparse.Namespace) -> None:
    """In a fresh process: ranx build + evaluate (cold), evaluate again (warm)."""
    run, qrels = make_data(args.queries, args.sources)
    run_dict, qrels_dict = make_dicts(run, qrels)
    del run, qrels
    t0 = time.perf_counter()
    import ranx

    t_import = time.perf_counter() - t0
    t0 = time.perf_counter()
    rq, rr = ranx.Qrels(qrels_dict), ranx.Run(run_dict)
    t_build = time.perf_counter() - t0
    t0 = time.perf_counter()
    first = ranx.evaluate(rq, rr, RANX_MEASURES, make_comparable=True)
    t_cold = time.perf_counter() - t0
    t0 = time.perf_counter()
    ranx.evaluate(rq, rr, RANX_MEASURES, make_comparable=True)
    t_warm = time.perf_counter() - t0
    del first
    values = {m: [rr.scores[m][q] for q in sorted(run_dict)] for m in RANX_MEASURES}
    np.savez(args.out, **{m.replace("@", "_"): np.asarray(v) for m, v in values.items()})
    print(json.dumps({"import": t_import, "build": t_build, "cold": t_cold, "warm": t_warm}))


def cold_worker(args: argparse.Namespace) -> None:
    """In a fresh process: the data (and, for pytrec_eval, its dicts) untimed, then one
    timed first call of the tool."""
    run, qrels = make_data(args.queries, args.sources, incomplete=args.incomplete)
    if args.worker == "trec-cold":
        import pytrec_eval  # noqa: F401 - imported untimed, as askkit is

        run_dict, qrels_dict = make_dicts(run, qrels)
        del run, qrels
        t0 = time.perf_counter()
        trec_evaluate(qrels_dict, run_dict, args.incomplete)
    else:
        from askkit.metrics import evaluate, fast

        fast.ENABLED = args.worker == "askkit-cold"
        t0 = time.perf_counter()
        evaluate(run, qrels, askkit_measures(args.incomplete))
    print(json.dumps({"cold": time.perf_counter() - t0}))


def _cold(args: argparse.Namespace, tool: str) -> float:
    cmd = [sys.executable, __file__, "--worker", f"{tool}-cold", "--queries", str(args.queries)]
    cmd += ["--sources", str(args.sources)] + (["--incomplete"] if args.incomplete else [])
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{tool} cold worker failed:\n{done.stderr}")
    return float(json.loads(done.stdout.strip().splitlines()[-1])["cold"])


def _ranx(args: argparse.Namespace, out: Path, fresh_cache: bool) -> dict[str, float]:
    env = dict(os.environ)
    cache = tempfile.mkdtemp(prefix="numba-cache-") if fresh_cache else None
    if cache:
        env["NUMBA_CACHE_DIR"] = cache
    cmd = [sys.executable, __file__, "--worker", "ranx", "--queries", str(args.queries)]
    cmd += ["--sources", str(args.sources), "--out", str(out)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"ranx worker failed:\n{done.stderr}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--files",
        action="store_true",
        help="TREC files to per-query values instead: askkit, pytrec_eval and the trec_eval "
        "binary, each in a fresh process (50,000 queries by default)",
    )
    parser.add_argument(
        "--diff",
        action="store_true",
        help="askkit diff of two TREC runs against pytrec_eval parsing and evaluating both, "
        "each in a fresh process (50,000 queries by default)",
    )
    parser.add_argument(
        "--incomplete",
        action="store_true",
        help="bpref, infap and ndcg'@10 (askkit) against pytrec_eval's bpref and infAP and "
        "its ndcg_cut.10 with judged_docs_only_flag=True, on data with unjudged and pooled "
        "(-1) documents; with --files too",
    )
    parser.add_argument("--dir", help="--files: keep (or reuse) the generated files here")
    parser.add_argument("--judged", type=int, default=50, help="--files: judgments per query")
    parser.add_argument("--trec-eval", help="--files: a trec_eval binary to time as well")
    parser.add_argument(
        "--trec-eval-src", help="--files: a trec_eval source checkout to build with its Makefile"
    )
    parser.add_argument("--queries", type=int, default=None, help="default 100,000 (50,000)")
    parser.add_argument("--sources", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3, help="askkit/pytrec_eval: best of N")
    parser.add_argument("--no-ranx", action="store_true")
    parser.add_argument(
        "--ranx-disk-cache",
        action="store_true",
        help="also time ranx in a fresh process that reuses numba's on-disk JIT cache",
    )
    parser.add_argument(
        "--cold-repeat",
        type=int,
        default=3,
        help="cold runs of askkit, its exact path and pytrec_eval, each in a fresh process "
        "(alternating)",
    )
    parser.add_argument(
        "--worker",
        choices=[
            "ranx",
            "askkit-cold",
            "askkit-exact-cold",
            "trec-cold",
        ],
        help=argparse.SUPPRESS,
    )
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.incomplete and args.diff:
        parser.error("--incomplete goes with --files or with the in-memory run, not --diff")
    args.no_ranx = args.no_ranx or args.incomplete  # ranx has no bpref or infAP
    if args.files:
        args.queries = args.queries or 50_000
        trec_files.main(args)
        return
    if args.diff:
        args.queries = args.queries or 50_000
        trec_files.main_diff(args)
        return
    args.queries = args.queries or 100_000
    if args.worker == "ranx":
        ranx_worker(args)
        return
    if args.worker:
        cold_worker(args)
        return

    import pytrec_eval  # noqa: F401 - imported before any timing

    from askkit.metrics import evaluate, fast

    measures = askkit_measures(args.incomplete)
    print(
        f"{args.queries:,} queries x {args.sources} sources = {args.queries * args.sources:,} rows"
    )
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs, {platform.processor() or ''}"
        f" Python {platform.python_version()}, numpy {np.__version__}, pandas {pd.__version__}"
    )
    t0 = time.perf_counter()
    run, qrels = make_data(args.queries, args.sources, incomplete=args.incomplete)
    print(f"data generated in {time.perf_counter() - t0:.1f}s")

    t0 = time.perf_counter()
    run_dict, qrels_dict = make_dicts(run, qrels)
    print(f"pytrec_eval/ranx dicts built in {time.perf_counter() - t0:.1f}s (not timed)")
    if args.incomplete:
        print(describe_incomplete(run, qrels))
    shuffled = run.sample(frac=1.0, random_state=0)

    # askkit and pytrec_eval alternate, so a busy machine slows both alike
    ours_times: list[float] = []
    shuffled_times: list[float] = []
    trec_times: list[float] = []
    exact_times: list[float] = []
    exact_shuffled_times: list[float] = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        ev = evaluate(run, qrels, measures)
        ours_times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        reference = trec_evaluate(qrels_dict, run_dict, args.incomplete)
        trec_times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        evaluate(shuffled, qrels, measures)
        shuffled_times.append(time.perf_counter() - t0)
        fast.ENABLED = False  # the exact path alone
        try:
            t0 = time.perf_counter()
            exact = evaluate(run, qrels, measures)
            exact_times.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            evaluate(shuffled, qrels, measures)
            exact_shuffled_times.append(time.perf_counter() - t0)
        finally:
            fast.ENABLED = True
    times: dict[str, float] = {
        "askkit evaluate, first call (frame in, per-query frame out)": ours_times[0],
        "askkit evaluate, best": min(ours_times),
        "askkit evaluate, rows shuffled, best": min(shuffled_times),
        "askkit evaluate, exact path only, best": min(exact_times),
        "askkit evaluate, exact path only, rows shuffled, best": min(exact_shuffled_times),
        "pytrec_eval RelevanceEvaluator + evaluate, first call": trec_times[0],
        "pytrec_eval RelevanceEvaluator + evaluate, best": min(trec_times),
    }
    ours, ours_exact = ev.per_query, exact.per_query
    del run, shuffled, run_dict, qrels_dict

    # cold, each call the first of a fresh process; the two tools alternate
    cold: dict[str, list[float]] = {"askkit": [], "askkit-exact": [], "trec": []}
    for i in range(args.cold_repeat):
        tools = ("askkit", "askkit-exact", "trec")
        for tool in tools if i % 2 == 0 else tools[::-1]:
            cold[tool].append(_cold(args, tool))
    labels = (
        ("askkit", "askkit evaluate"),
        ("askkit-exact", "askkit evaluate, exact path only"),
        ("trec", "pytrec_eval"),
    )
    for tool, label in labels:
        runs = " ".join(f"{t:.2f}" for t in cold[tool])
        print(f"cold, fresh process: {label}: {runs} s")
    times["askkit evaluate, cold (fresh process), best"] = min(cold["askkit"])
    times["askkit evaluate, cold (fresh process), median"] = float(np.median(cold["askkit"]))
    times["askkit exact path only, cold (fresh process), best"] = min(cold["askkit-exact"])
    times["askkit exact path only, cold (fresh process), median"] = float(
        np.median(cold["askkit-exact"])
    )
    times["pytrec_eval, cold (fresh process), best"] = min(cold["trec"])
    times["pytrec_eval, cold (fresh process), median"] = float(np.median(cold["trec"]))

    qids = sorted(reference[False])
    ref = {
        a: np.array([reference[flag][q][key] for q in qids])
        for a, key, flag in columns(args.incomplete)
    }
    diffs = {"askkit": 0.0, "askkit, exact path only": 0.0}
    for name, frame in (("askkit", ours), ("askkit, exact path only", ours_exact)):
        got = frame.loc[qids]
        for a in measures:
            diffs[name] = max(diffs[name], float(np.abs(got[a].to_numpy() - ref[a]).max()))
    fast_vs_exact = float(np.abs(ours.to_numpy() - ours_exact.to_numpy()).max())

    if not args.no_ranx:
        with tempfile.TemporaryDirectory() as tmp:
            variants = [("cold, empty JIT cache", True)]
            if args.ranx_disk_cache:
                variants.append(("disk-cached JIT", False))
            for label, fresh in variants:
                out = Path(tmp) / f"ranx-{fresh}.npz"
                r = _ranx(args, out, fresh)
                times[f"ranx {label}: Qrels+Run from dicts"] = r["build"]
                times[f"ranx {label}: first evaluate"] = r["cold"]
                if fresh:
                    times["ranx warm: evaluate again in the same process"] = r["warm"]
                got = np.load(out)
                diff = 0.0
                for a, r in zip(RANX_MEASURES, ASKKIT_MEASURES, strict=True):
                    diff = max(diff, float(np.abs(got[a.replace("@", "_")] - ref[r]).max()))
                diffs[f"ranx ({label})"] = diff

    ours_t = times["askkit evaluate, first call (frame in, per-query frame out)"]
    width = max(len(k) for k in times)
    print(f"\n{'step':<{width}}  {'seconds':>8}  {'/ askkit':>8}")
    for name, t in times.items():
        print(f"{name:<{width}}  {t:8.2f}  {t / ours_t:8.2f}")
    if not args.no_ranx:
        cold_total = (
            times["ranx cold, empty JIT cache: Qrels+Run from dicts"]
            + times["ranx cold, empty JIT cache: first evaluate"]
        )
        print(
            f"{'ranx cold total (build + first evaluate)':<{width}}  {cold_total:8.2f}  "
            f"{cold_total / ours_t:8.2f}"
        )
    print("\nlargest absolute difference from pytrec_eval (every query, every measure):")
    for name, d in diffs.items():
        print(f"  {name}: {d:.3g}")
    print(f"largest absolute difference, fast path from exact path: {fast_vs_exact:.3g}")
    grouped_x = times["askkit evaluate, exact path only, best"] / times["askkit evaluate, best"]
    shuffled_x = (
        times["askkit evaluate, exact path only, rows shuffled, best"]
        / times["askkit evaluate, rows shuffled, best"]
    )
    cold_x = (
        times["askkit exact path only, cold (fresh process), best"]
        / times["askkit evaluate, cold (fresh process), best"]
    )
    print(
        f"\nfast path against the exact path: {cold_x:.2f}x faster cold (best of "
        f"{args.cold_repeat}); warm, best of {args.repeat}: {grouped_x:.2f}x faster grouped "
        f"and ranked, {shuffled_x:.2f}x faster rows shuffled"
    )
    checks = [
        (
            "cold, fresh process, best",
            "askkit evaluate, cold (fresh process), best",
            "pytrec_eval, cold (fresh process), best",
        ),
        (
            "cold, fresh process, median",
            "askkit evaluate, cold (fresh process), median",
            "pytrec_eval, cold (fresh process), median",
        ),
        (
            "first call in this process",
            "askkit evaluate, first call (frame in, per-query frame out)",
            "pytrec_eval RelevanceEvaluator + evaluate, first call",
        ),
        ("warm, best", "askkit evaluate, best", "pytrec_eval RelevanceEvaluator + evaluate, best"),
    ]
    for kind, ours_key, theirs_key in checks:
        mine, theirs = times[ours_key], times[theirs_key]
        verdict = "met" if mine <= TARGET * theirs else "MISSED"
        print(
            f"target askkit <= {TARGET}x pytrec_eval ({kind}): {mine:.2f}s vs {theirs:.2f}s "
            f"= {mine / theirs:.2f}x: {verdict}"
        )
    mine = times["askkit exact path only, cold (fresh process), best"]
    theirs = times["pytrec_eval, cold (fresh process), best"]
    verdict = "would be met" if mine <= theirs else "would be missed"
    print(
        "without the fast path: askkit <= pytrec_eval (cold, fresh process, best): "
        f"{mine:.2f}s vs {theirs:.2f}s: {verdict}"
    )
    verdict = "met" if grouped_x >= FAST_PATH_TARGET and fast_vs_exact == 0 else "MISSED"
    print(
        f"target fast path >= {FAST_PATH_TARGET}x faster than the exact path and equal to it "
        f"(grouped and ranked, warm, best): {grouped_x:.2f}x, difference "
        f"{fast_vs_exact:.3g}: {verdict}"
    )


if __name__ == "__main__":
    main()
