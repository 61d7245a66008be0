"""TREC files to a per-query frame: askkit against pytrec_eval and the trec_eval binary.

Run through ``metrics_bench.py --files`` (see benchmarks/README.md). Generates a
qrels file and a run file the way a TREC collection ships them, then times each
tool from the files to per-query values, each run in a fresh process of its own:

* **askkit**: ``read_qrels`` + ``read_run`` (columnar: pyarrow's CSV reader) +
  ``evaluate`` (ties put in trec_eval's order by a vectorised sort);
* **pytrec_eval**: its own ``parse_qrel`` + ``parse_run`` (plain Python) +
  ``RelevanceEvaluator(...).evaluate``;
* **trec_eval**: the binary, ``trec_eval -q -m map -m ndcg_cut.10 -m recip_rank
  -m recall.100 qrels run``, built from its source with its own Makefile when
  ``--trec-eval-src`` names a checkout of it (the Makefile builds without ``-O``,
  as trec_eval ships), or given built with ``--trec-eval``.

The run has ``--sources`` rows per query in arbitrary order (the rank field is
the row's position, not the score's order) and scores with one decimal, so
ties are everywhere; ids look like classic TREC ones (``FBIS3-10082``), with a
share of URL and ``#`` segment ids that kimun's path rules would change.
Every tool's per-query values are compared with pytrec_eval's.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ASKKIT = ["map", "ndcg@10", "mrr", "recall@100"]
#: ``askkit diff``'s default measures, and pytrec_eval's names for them.
DIFF_ASKKIT = ["ndcg@10", "recall@10"]
DIFF_TREC = ["ndcg_cut_10", "recall_10"]
TREC = ["map", "ndcg_cut_10", "recip_rank", "recall_100"]
TREC_FLAGS = ["-m", "map", "-m", "ndcg_cut.10", "-m", "recip_rank", "-m", "recall.100"]
#: ``--incomplete``: the measures for incomplete judgments, askkit's names and
#: pytrec_eval's; pytrec_eval needs two evaluators, as ``judged_docs_only_flag``
#: (trec_eval's ``-J``) holds for a whole evaluator and infAP changes under it.
INCOMPLETE_ASKKIT = ["bpref", "infap", "ndcg'@10"]
#: ``--incomplete``: the measures askkit also bounds (``askkit.metrics.bounds``) in
#: the same process, from the same prepared run, its time counted in askkit's total.
BOUNDED = ["ndcg@10"]
INCOMPLETE_TREC: list[tuple[str, str, bool]] = [  # (pytrec_eval name, its key, -J)
    ("bpref", "bpref", False),
    ("infAP", "infAP", False),
    ("ndcg_cut.10", "ndcg_cut_10", True),
]
#: ``--incomplete``: the share of judgments whose grade is -1 (pooled, unjudged).
POOLED = 1 / 6
#: askkit's parse + evaluate must take at most this share of pytrec_eval's.
TARGET = 0.5
_POOL = 2_000_003  # documents


def _ids(values: Any) -> Any:
    """Document ids: mostly classic TREC ones, every 50th a URL, every 70th a segment."""
    import pyarrow as pa
    import pyarrow.compute as pc

    docs = pc.binary_join_element_wise(
        "FBIS3-", pc.cast(pa.array(values), pa.string()), ""
    ).to_numpy(zero_copy_only=False)
    url = values % 50 == 0
    docs[url] = [f"http://Example.org/Doc:{v}" for v in values[url].tolist()]
    seg = values % 70 == 1
    docs[seg] = [f"CR93E-{v}#p{v % 7}" for v in values[seg].tolist()]
    return pa.array(docs, pa.string())


def _write(path: Path, columns: list[Any]) -> None:
    import pyarrow.compute as pc

    lines = pc.binary_join_element_wise(*columns, " ")
    with path.open("wb") as out:
        for chunk in range(0, len(lines), 1_000_000):
            part = lines.slice(chunk, 1_000_000)
            out.write(("\n".join(part.to_pylist()) + "\n").encode())


def make_files(
    folder: Path,
    queries: int,
    sources: int,
    judged: int,
    seed: int = 0,
    score_seed: int | None = None,
    pooled: float = 0.0,
) -> None:
    """``qrels.txt`` and ``run.txt`` in ``folder`` (deterministic for a seed).

    ``score_seed``: draw the run's scores from a generator of their own (the same
    documents, queries and qrels as ``seed`` gives, other scores: a second system).
    ``pooled``: this share of the judgments, drawn at random, get grade -1 (in
    the pool, not judged); the other files stay as ``seed`` gives them.
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    rng = np.random.default_rng(seed)
    n = queries * sources
    q = np.repeat(np.arange(queries), sources)
    start = rng.integers(0, _POOL, queries)
    doc = (start[q] + np.tile(np.arange(sources), queries) * 7919) % _POOL
    tenths = rng.integers(0, 100, n)  # scores 0.0 .. 9.9: many ties in each query
    if score_seed is not None:  # another system over the same documents
        tenths = np.random.default_rng(score_seed).integers(0, 100, n)
    order = np.argsort(q * 1000.0 + rng.random(n), kind="stable")  # rows shuffled in queries
    qid = pc.binary_join_element_wise("Q", pc.cast(pa.array(q), pa.string()), "")
    score = pc.binary_join_element_wise(
        pc.cast(pa.array(tenths // 10), pa.string()),
        pc.cast(pa.array(tenths % 10), pa.string()),
        ".",
    )
    rank = pc.cast(pa.array(np.tile(np.arange(1, sources + 1), queries)), pa.string())
    take = pa.array(order)
    _write(
        folder / "run.txt",
        [qid.take(take), "Q0", _ids(doc).take(take), rank, score.take(take), "bench"],
    )
    jq = np.repeat(np.arange(queries), judged)
    half = min(judged // 2, sources)  # half of the judged documents retrieved, half not
    picked = np.argsort(rng.random((queries, sources)), axis=1)[:, :half]  # distinct
    inside = (start[:, None] + picked * 7919) % _POOL
    steps = sources + np.arange(judged - half) * 97 + rng.integers(0, 97, (queries, judged - half))
    outside = (start[:, None] + steps * 7919) % _POOL
    jdoc = np.concatenate([inside, outside], axis=1).ravel()
    grade = rng.choice(np.array([0, 0, 1, 2]), len(jq))
    if pooled:
        grade[rng.random(len(jq)) < pooled] = -1
    _write(
        folder / "qrels.txt",
        [
            pc.binary_join_element_wise("Q", pc.cast(pa.array(jq), pa.string()), ""),
            "0",
            _ids(jdoc),
            pc.cast(pa.array(grade), pa.string()),
        ],
    )


# --------------------------------------------------------------------------- workers


def worker(tool: str, folder: Path, incomplete: bool = False) -> None:
    """One tool, files to per-query values, in this (fresh) process; prints JSON.

    ``incomplete``: :data:`INCOMPLETE_ASKKIT`, and pytrec_eval's two evaluators
    for them; the values are then keyed by askkit's names.
    """
    import resource

    qrels, run, out = folder / "qrels.txt", folder / "run.txt", folder / f"{tool}.json"
    t0 = time.perf_counter()
    t_bounds = None
    if tool == "askkit":
        from askkit.metrics import bounds, evaluate, prepare, read_qrels, read_run

        t_import = time.perf_counter() - t0
        before = resource.getrusage(resource.RUSAGE_SELF)
        t0 = time.perf_counter()
        judgments, ranked = read_qrels(qrels), read_run(run)
        t_parse = time.perf_counter() - t0
        t0 = time.perf_counter()
        if incomplete:  # the measures, then the bounds of BOUNDED, from one prepared run
            prep = prepare(ranked, judgments)
            per_query = evaluate(prep, measures=INCOMPLETE_ASKKIT).per_query
            t_eval = time.perf_counter() - t0
            t0 = time.perf_counter()
            limits = bounds(prep, measures=BOUNDED).table()
            t_bounds = time.perf_counter() - t0
            if not (
                (limits["lower"] <= limits["value"]) & (limits["value"] <= limits["upper"])
            ).all():
                raise SystemExit(f"bounds do not hold their value:\n{limits}")
        else:
            per_query = evaluate(ranked, judgments, ASKKIT).per_query
            t_eval = time.perf_counter() - t0
        names = INCOMPLETE_ASKKIT if incomplete else TREC
        values = {
            t: dict(zip(per_query.index.astype(str), per_query[a].tolist(), strict=True))
            for a, t in zip(INCOMPLETE_ASKKIT if incomplete else ASKKIT, names, strict=True)
        }
    else:
        import pytrec_eval

        t_import = time.perf_counter() - t0
        before = resource.getrusage(resource.RUSAGE_SELF)
        t0 = time.perf_counter()
        with qrels.open() as f:
            qrels_dict = pytrec_eval.parse_qrel(f)
        with run.open() as f:
            run_dict = pytrec_eval.parse_run(f)
        t_parse = time.perf_counter() - t0
        t0 = time.perf_counter()
        if incomplete:  # one evaluator per judged_docs_only_flag
            results = {
                flag: pytrec_eval.RelevanceEvaluator(
                    qrels_dict,
                    {name for name, _, f in INCOMPLETE_TREC if f == flag},
                    judged_docs_only_flag=flag,
                ).evaluate(run_dict)
                for flag in (False, True)
            }
        else:
            result = pytrec_eval.RelevanceEvaluator(qrels_dict, set(TREC)).evaluate(run_dict)
        t_eval = time.perf_counter() - t0
        if incomplete:
            values = {
                a: {q: v[key] for q, v in results[flag].items()}
                for a, (_, key, flag) in zip(INCOMPLETE_ASKKIT, INCOMPLETE_TREC, strict=True)
            }
        else:
            values = {m: {q: v[m] for q, v in result.items()} for m in TREC}
    after = resource.getrusage(resource.RUSAGE_SELF)
    out.write_text(json.dumps(values))
    times = {"import": t_import, "parse": t_parse, "evaluate": t_eval}
    if t_bounds is not None:
        times["bounds"] = t_bounds
    times["user"] = after.ru_utime - before.ru_utime  # CPU time in parse + evaluate
    times["sys"] = after.ru_stime - before.ru_stime  # kernel time: page faults, mostly
    print(json.dumps(times))


def diff_worker(tool: str, folder: Path) -> None:
    """Two runs and one qrels file to a verdict (askkit) or to two runs' values (pytrec_eval)."""
    import resource

    qrels, base, new = folder / "qrels.txt", folder / "run.txt", folder / "new" / "run.txt"
    out = folder / f"{tool}.json"
    t0 = time.perf_counter()
    if tool == "askkit-diff":
        from askkit.gate import gate, read_side
        from askkit.metrics import read_qrels

        t_import = time.perf_counter() - t0
        before = resource.getrusage(resource.RUSAGE_SELF)
        t0 = time.perf_counter()
        judgments, left, right = read_qrels(qrels), read_side(base), read_side(new)
        t_parse = time.perf_counter() - t0
        t0 = time.perf_counter()
        result = gate(left, right, judgments, DIFF_ASKKIT)
        t_eval = time.perf_counter() - t0
        values = {
            "delta": {m.measure: m.delta for m in result.measures},
            "p": {m.measure: m.p for m in result.measures},
            "regressed_queries": len(result.regressed_queries),
        }
    else:
        import pytrec_eval

        t_import = time.perf_counter() - t0
        before = resource.getrusage(resource.RUSAGE_SELF)
        t0 = time.perf_counter()
        with qrels.open() as f:
            qrels_dict = pytrec_eval.parse_qrel(f)
        with base.open() as f:
            base_dict = pytrec_eval.parse_run(f)
        with new.open() as f:
            new_dict = pytrec_eval.parse_run(f)
        t_parse = time.perf_counter() - t0
        t0 = time.perf_counter()
        evaluator = pytrec_eval.RelevanceEvaluator(qrels_dict, set(DIFF_TREC))
        sides = [evaluator.evaluate(base_dict), evaluator.evaluate(new_dict)]
        t_eval = time.perf_counter() - t0
        values = {
            "delta": {
                a: sum(sides[1][q][m] - v[m] for q, v in sides[0].items()) / len(sides[0])
                for a, m in zip(DIFF_ASKKIT, DIFF_TREC, strict=True)
            }
        }
    after = resource.getrusage(resource.RUSAGE_SELF)
    out.write_text(json.dumps(values))
    times = {"import": t_import, "parse": t_parse, "evaluate": t_eval}
    times["user"] = after.ru_utime - before.ru_utime
    times["sys"] = after.ru_stime - before.ru_stime
    print(json.dumps(times))


def _fresh(tool: str, folder: Path, incomplete: bool = False) -> dict[str, float]:
    """The tool's worker in a fresh interpreter that imports only what the tool needs."""
    cmd = [sys.executable, __file__, tool, str(folder)] + (["incomplete"] if incomplete else [])
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"{tool} worker failed:\n{done.stderr}")
    times: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    times["total"] = times["parse"] + times["evaluate"] + times.get("bounds", 0.0)
    times["process"] = wall
    return times


def build_trec_eval(source: Path, into: Path) -> Path:
    """trec_eval built from a checkout of its source with its own Makefile."""
    if shutil.which("make") is None or shutil.which(os.environ.get("CC", "cc")) is None:
        raise SystemExit("building trec_eval needs make and a C compiler")
    build = into / "trec_eval-src"
    shutil.copytree(source, build)
    subprocess.run(["make", "-s", "clean"], cwd=build, capture_output=True, check=False)
    done = subprocess.run(["make"], cwd=build, capture_output=True, text=True, check=False)
    if done.returncode != 0 or not (build / "trec_eval").exists():
        raise SystemExit(f"trec_eval did not build in {build}:\n{done.stderr[-2000:]}")
    return build / "trec_eval"


def _trec_eval(binary: Path, folder: Path) -> dict[str, float]:
    cmd = [str(binary), "-q", *TREC_FLAGS, str(folder / "qrels.txt"), str(folder / "run.txt")]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"trec_eval failed:\n{done.stderr}")
    values: dict[str, dict[str, float]] = {m: {} for m in TREC}
    for line in done.stdout.splitlines():
        measure, qid, value = line.split()
        if measure in values and qid != "all":
            values[measure][qid] = float(value)
    (folder / "trec_eval.json").write_text(json.dumps(values))
    return {"total": wall, "process": wall}


def _largest_difference(folder: Path, tool: str) -> float:
    ref = json.loads((folder / "pytrec_eval.json").read_text())
    got = json.loads((folder / f"{tool}.json").read_text())
    worst = 0.0
    for m in ref:
        if set(got[m]) != set(ref[m]):
            return float("inf")
        worst = max(worst, *(abs(got[m][q] - v) for q, v in ref[m].items()))
    return worst


def main(args: argparse.Namespace) -> None:
    """Generate (or reuse) the files, time each tool ``--cold-repeat`` times, print."""
    incomplete = bool(getattr(args, "incomplete", False))
    with tempfile.TemporaryDirectory(prefix="askkit-trec-") as tmp:
        folder = Path(args.dir) if args.dir else Path(tmp)
        if incomplete:  # other qrels: files of their own
            folder = folder / "incomplete"
        folder.mkdir(parents=True, exist_ok=True)
        judged = args.judged
        if not (folder / "run.txt").exists():
            t0 = time.perf_counter()
            make_files(
                folder, args.queries, args.sources, judged, pooled=POOLED if incomplete else 0.0
            )
            print(f"files generated in {time.perf_counter() - t0:.1f}s in {folder}")
        run_mb = (folder / "run.txt").stat().st_size / 1e6
        qrels_mb = (folder / "qrels.txt").stat().st_size / 1e6
        print(
            f"run: {args.queries:,} queries x {args.sources} = "
            f"{args.queries * args.sources:,} lines ({run_mb:.0f} MB); "
            f"qrels: {args.queries * judged:,} lines ({qrels_mb:.0f} MB)"
        )
        if incomplete:
            print(
                f"measures: askkit {', '.join(INCOMPLETE_ASKKIT)} in one evaluate; pytrec_eval "
                "bpref and infAP in one evaluator, ndcg_cut.10 with judged_docs_only_flag=True "
                "in a second (the trec_eval binary is left out)"
            )
        binary = Path(args.trec_eval) if args.trec_eval and not incomplete else None
        if binary is None and args.trec_eval_src and not incomplete:
            binary = build_trec_eval(Path(args.trec_eval_src), Path(tmp))
            print(f"trec_eval built from {args.trec_eval_src} with its Makefile")
        tools = ["askkit", "pytrec_eval"] + (["trec_eval"] if binary else [])
        runs: dict[str, list[dict[str, float]]] = {t: [] for t in tools}
        for i in range(args.cold_repeat):
            for tool in tools if i % 2 == 0 else tools[::-1]:
                if tool == "trec_eval":
                    assert binary is not None
                    runs[tool].append(_trec_eval(binary, folder))
                else:
                    runs[tool].append(_fresh(tool, folder, incomplete))
        report(runs, folder, args.cold_repeat, binary is not None)


def main_diff(args: argparse.Namespace) -> None:
    """``askkit diff`` of two runs against pytrec_eval parsing and evaluating both."""
    with tempfile.TemporaryDirectory(prefix="askkit-diff-") as tmp:
        folder = Path(args.dir) if args.dir else Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        if not (folder / "run.txt").exists():
            make_files(folder, args.queries, args.sources, args.judged)
        if not (folder / "new" / "run.txt").exists():
            (folder / "new").mkdir(exist_ok=True)
            make_files(folder / "new", args.queries, args.sources, args.judged, score_seed=1)
        print(f"files ready in {time.perf_counter() - t0:.1f}s in {folder}")
        print(
            f"two runs of {args.queries:,} queries x {args.sources} = "
            f"{args.queries * args.sources:,} lines each; qrels: {args.queries * args.judged:,} "
            f"lines; measures {', '.join(DIFF_ASKKIT)}; askkit: paired randomization, "
            "10,000 resamples, Holm, regressed queries and their lost documents"
        )
        tools = ["askkit-diff", "pytrec_eval-diff"]
        runs: dict[str, list[dict[str, float]]] = {t: [] for t in tools}
        for i in range(args.cold_repeat):
            for tool in tools if i % 2 == 0 else tools[::-1]:
                runs[tool].append(_fresh(tool, folder))
        print(f"\nseconds, best / median of {args.cold_repeat}, each run a fresh process")
        print(f"{'tool':<18} {'parse':>13} {'evaluate+tests':>15} {'total':>13} {'CPU user':>13}")
        for tool, rows in runs.items():
            cells = [
                "{:6.2f}/{:6.2f}".format(*_best_median(rows, key))
                for key in ("parse", "evaluate", "total", "user")
            ]
            print(f"{tool:<18} {cells[0]:>13} {cells[1]:>15} {cells[2]:>13} {cells[3]:>13}")
        ours = _best_median(runs["askkit-diff"], "total")
        ref = _best_median(runs["pytrec_eval-diff"], "total")
        for kind, a, b in (("best", ours[0], ref[0]), ("median", ours[1], ref[1])):
            ratio = a / b
            verdict = "met" if ratio <= TARGET else "MISSED"
            print(
                f"target askkit diff <= {TARGET}x pytrec_eval's parse+evaluate of both runs "
                f"({kind}): {a:.2f}s / {b:.2f}s = {ratio:.2f}x: {verdict}"
            )
        got = json.loads((folder / "askkit-diff.json").read_text())
        ref_values = json.loads((folder / "pytrec_eval-diff.json").read_text())
        worst = max(abs(got["delta"][m] - ref_values["delta"][m]) for m in DIFF_ASKKIT)
        print(f"mean deltas: askkit {got['delta']}, pytrec_eval {ref_values['delta']}")
        print(f"largest absolute difference of a mean delta from pytrec_eval's: {worst:.3g}")
        print(f"p-values {got['p']}, {got['regressed_queries']:,} regressed queries")


def _best_median(rows: list[dict[str, float]], key: str) -> tuple[float, float]:
    values = [r[key] for r in rows]
    return min(values), statistics.median(values)


def report(runs: dict[str, list[dict[str, float]]], folder: Path, k: int, te: bool) -> None:
    print(f"\nseconds, best / median of {k}, each run a fresh process")
    keys = ("import", "parse", "evaluate", "bounds", "total", "user", "sys")
    print(
        f"{'tool':<12} {'import':>13} {'parse':>13} {'evaluate':>13} {'bounds':>13} "
        f"{'total':>13} {'(CPU user':>13} {'kernel)':>13}"
    )
    for tool, rows in runs.items():
        cells = []
        for key in keys:
            if key in rows[0]:
                b, m = _best_median(rows, key)
                cells.append(f"{b:6.2f}/{m:6.2f}")
            else:
                cells.append(f"{'-':>13}")
        print(f"{tool:<12} " + " ".join(f"{c:>13}" for c in cells))
    what = "parse+evaluate+bounds" if "bounds" in runs["askkit"][0] else "parse+evaluate"
    ours_b, ours_m = _best_median(runs["askkit"], "total")
    ref_b, ref_m = _best_median(runs["pytrec_eval"], "total")
    for kind, ours, ref in (("best", ours_b, ref_b), ("median", ours_m, ref_m)):
        ratio = ours / ref
        verdict = "met" if ratio <= TARGET else "MISSED"
        print(
            f"target askkit {what} <= {TARGET}x pytrec_eval's ({kind}): "
            f"{ours:.2f}s / {ref:.2f}s = {ratio:.2f}x: {verdict}"
        )
    if te:
        te_b, _te_m = _best_median(runs["trec_eval"], "total")
        print(f"trec_eval binary / askkit parse+evaluate: {te_b / ours_b:.2f}x (best)")
    proc_b, _ = _best_median(runs["askkit"], "process")
    ref_proc, _ = _best_median(runs["pytrec_eval"], "process")
    print(
        f"whole process, interpreter and imports included (best): askkit {proc_b:.2f}s, "
        f"pytrec_eval {ref_proc:.2f}s"
    )
    print("largest absolute difference from pytrec_eval, every query and measure:")
    for tool in runs:
        if tool != "pytrec_eval":
            print(f"  {tool}: {_largest_difference(folder, tool):.3g}")


if __name__ == "__main__":  # a worker: python trec_files.py TOOL FOLDER
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    if sys.argv[1].endswith("-diff"):
        diff_worker(sys.argv[1], Path(sys.argv[2]))
    else:
        worker(sys.argv[1], Path(sys.argv[2]), sys.argv[3:] == ["incomplete"])
