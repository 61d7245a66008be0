"""JSONL turn log -> sources frame: askkit's columnar path against a parse-only floor and the
naive object path.

Generates a turn log (default 100,000 turns x 10 sources = 1,000,000 sources,
about 500 MB), then measures, each in a fresh subprocess so peak RSS is its
own (``os.wait4`` rusage of that child):

(a) ``pyarrow.json.read_json`` on the file: parse only, the floor;
(b) ``askkit.frame.sources_frame(path)``: the columnar JSONL path;
(c) the naive path: ``json.loads`` per line, ``ChunkResult.from_dict`` and
    ``AskSource.from_chunk`` per chunk, ``DataFrame.from_records``.

(a) and (b) run ``--repeat`` times (default 5), interleaved, each in a fresh
child, and the best wall time of each is kept (the machine may be shared).
``--phases`` instead times the per-row rules after the parse one by one, with
askkit's compiled kernels and with the fallback that stands in for them where
they are not built (pyarrow.compute; for the per-turn statistics, numpy sums).
Prints wall time, peak RSS and the ratios; targets: (b)/(a) <= 1.5,
(c)/(b) >= 4, peak RSS of (b) <= 2x the frame's ``memory_usage(deep=True)``.

    python benchmarks/frame_bench.py               # full size
    python benchmarks/frame_bench.py --turns 2000  # a quick run
    python benchmarks/frame_bench.py --phases      # compiled kernels vs pyarrow.compute, per rule
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_WORDS = (
    "starter",
    "flour",
    "water",
    "oven",
    "loaf",
    "crumb",
    "hydration",
    "rye",
    "kitchen",
    "walk",
    "river",
    "garden",
    "tomato",
    "seedling",
    "basil",
    "meeting",
    "notes",
    "plan",
    "budget",
    "trip",
    "train",
    "book",
    "chapter",
    "idea",
    "sleep",
    "run",
    "morning",
    "evening",
    "weekend",
    "coffee",
    "friend",
    "call",
    "email",
    "draft",
    "review",
    "project",
    "deadline",
)
_FOLDERS = ["journal", "projects", "garden", "reading", "work/meetings", "travel", "health"]
_HEADINGS = ["Morning", "Afternoon", "Evening", "Kitchen", "Notes", "Plan", "Ideas", "Log"]


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(n)).capitalize() + "."


def _chunk(rng: random.Random, ordinal: int) -> dict[str, object]:
    if rng.random() < 0.5:
        day = f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        path = f"journal/{day}.md"
        title = "\x1f".join([day, *rng.sample(_HEADINGS, rng.randint(1, 2))])
        date: str | None = day
    else:
        folder = rng.choice(_FOLDERS)
        name = f"{rng.choice(_WORDS)}-{rng.randint(1, 400)}"
        path = f"{folder}/{name}.md"
        title = "\x1f".join([name.title(), *rng.sample(_HEADINGS, rng.randint(1, 3))])
        date = None
    return {
        "path": path,
        "title": title,
        "date": date,
        "content": " ".join(_sentence(rng, rng.randint(6, 14)) for _ in range(4)),
        "hash": f"{rng.getrandbits(48):012x}",
        "similarity_score": round(rng.random(), 6),
        "ordinal": ordinal,
    }


def generate(path: Path, turns: int, per_turn: int = 10, seed: int = 7) -> None:
    """Write ``turns`` turn lines of ``per_turn`` sources each."""
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as f:
        for t in range(turns):
            sources = [_chunk(rng, i + 1) for i in range(per_turn)]
            rng.shuffle(sources)
            cites = " ".join(
                f"{_sentence(rng, 8)[:-1]} [{rng.randint(1, per_turn + 2)}]." for _ in range(4)
            )
            record = {
                "id": f"q{t:06d}",
                "question": _sentence(rng, 9)[:-1] + "?",
                "answer": cites,
                "sources": sources,
            }
            f.write(json.dumps(record) + "\n")


# --------------------------------------------------------------------------- steps (children)


def step_parse(path: Path) -> dict[str, float]:
    import pyarrow.json as pj

    t0 = time.perf_counter()
    table = pj.read_json(path)
    return {"seconds": time.perf_counter() - t0, "rows": float(table.num_rows)}


def step_askkit(path: Path) -> dict[str, float]:
    from askkit.frame import sources_frame

    t0 = time.perf_counter()
    df = sources_frame(path)
    seconds = time.perf_counter() - t0
    return {
        "seconds": seconds,
        "rows": float(len(df)),
        "frame_bytes": float(df.memory_usage(deep=True).sum()),
    }


def step_naive(path: Path) -> dict[str, float]:
    import pandas as pd

    from askkit.sources import AskSource
    from askkit.wire import ChunkResult

    t0 = time.perf_counter()
    rows = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            obj = json.loads(line)
            for i, raw in enumerate(obj["sources"]):
                src = AskSource.from_chunk(i, ChunkResult.from_dict(raw))
                rows.append(
                    {
                        "turn_id": obj["id"],
                        "question": obj["question"],
                        "ordinal": src.ordinal,
                        "rank": i + 1,
                        "path": str(src.path),
                        "note": src.path.stem,
                        "folder": src.path.folder,
                        "heading": src.heading,
                        "match_heading": src.match_heading(),
                        "date": src.date,
                        "score": src.score,
                        "text": src.text,
                        "hash": src.hash,
                    }
                )
    df = pd.DataFrame.from_records(rows)
    return {"seconds": time.perf_counter() - t0, "rows": float(len(df))}


def step_baseline(path: Path) -> dict[str, float]:
    import pandas  # noqa: F401
    import pyarrow.json  # noqa: F401

    import askkit.frame  # noqa: F401

    return {"seconds": 0.0, "rows": 0.0}


def phases(path: Path, repeat: int) -> None:
    """Best-of-``repeat`` wall time of each per-row rule, with the compiled kernels and
    with the pyarrow.compute fallback, in this process."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from askkit.frame import columns as fb
    from askkit.frame import jsonl as io
    from askkit.frame import kernels as _compiled

    table = io._parse(path)
    items, rows, pos = io._items(table)
    key, pos, _ids, _question, answer = io._turns(table, rows, pos, path.name)
    title, date = pc.struct_field(items, "title"), pc.struct_field(items, "date")
    paths = pc.struct_field(items, "path")
    score = np.asarray(pc.struct_field(items, "similarity_score").to_numpy(), np.float64)
    work = {
        "headings and match headings": lambda: fb.headings_and_matches(title, date),
        "paths, notes, folders": lambda: fb.map_paths(paths),
        "citations": lambda: fb.cited_ordinals(answer),
        "per-turn statistics (numpy)": lambda: fb.score_stats(key, score),
        "line count (no kernel)": lambda: io._count_lines(path),
        "lengths (no kernel)": lambda: fb.text_lengths(pc.struct_field(items, "content")),
        "turn ids (no kernel)": lambda: fb.take_rows(table.column("id"), pa.array(key)),
    }

    def best(fn: object) -> float:
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            fn()  # type: ignore[operator]
            times.append(time.perf_counter() - t0)
        return min(times)

    print(f"{len(score):,} sources; best of {repeat}, ms")
    print(f"{'rule':<30} {'fallback':>8} {'compiled':>9} {'ratio':>6}")
    saved = _compiled.ENABLED
    try:
        for name, fn in work.items():
            _compiled.ENABLED = False
            slow = best(fn)
            _compiled.ENABLED = True
            fast = best(fn)
            print(f"{name:<30} {slow * 1e3:>8.0f} {fast * 1e3:>9.0f} {slow / fast:>6.1f}")
    finally:
        _compiled.ENABLED = saved
    print(f"compiled kernels built: {_compiled.built()}")


STEPS = {"parse": step_parse, "askkit": step_askkit, "naive": step_naive, "baseline": step_baseline}


def run_child(step: str, path: Path) -> tuple[dict[str, float], float]:
    """Run one step in a fresh interpreter; (its report, its own peak RSS in MiB)."""
    proc = subprocess.Popen(
        [sys.executable, __file__, "--step", step, str(path)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"step {step} failed with status {proc.returncode}")
    return json.loads(out), usage.ru_maxrss / 1024  # Linux reports KiB


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--turns", type=int, default=100_000, help="turns (x10 sources)")
    parser.add_argument("--file", type=Path, help="reuse or write the log here")
    parser.add_argument("--skip-naive", action="store_true", help="skip (c), the slow one")
    parser.add_argument("--repeat", type=int, default=5, help="runs of (a) and (b); best kept")
    parser.add_argument(
        "--phases",
        action="store_true",
        help="time each per-row rule, compiled and with pyarrow.compute",
    )
    parser.add_argument("--step", choices=sorted(STEPS), help=argparse.SUPPRESS)
    parser.add_argument("path", nargs="?", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.step:
        print(json.dumps(STEPS[args.step](args.path)))
        return
    tmp = tempfile.TemporaryDirectory()
    path = args.file or Path(tmp.name) / "turns.jsonl"
    if not path.exists():
        t0 = time.perf_counter()
        generate(path, args.turns)
        print(f"generated {path} in {time.perf_counter() - t0:.1f} s")
    if args.phases:
        phases(path, max(args.repeat, 1))
        return
    size_mb = path.stat().st_size / 2**20
    print(f"log: {path.stat().st_size / 1e6:.0f} MB ({size_mb:.0f} MiB), {args.turns:,} turns")
    print(f"python {platform.python_version()}, {os.cpu_count()} CPUs, {platform.platform()}")
    base, base_rss = run_child("baseline", path)
    del base
    # interleave (a) and (b), each run in a fresh child, and keep each one's best time,
    # so both see the same machine load
    rounds = [(run_child("parse", path), run_child("askkit", path)) for _ in range(args.repeat)]
    parse = min((r[0][0] for r in rounds), key=lambda x: x["seconds"])
    ask = min((r[1][0] for r in rounds), key=lambda x: x["seconds"])
    parse_rss = max(r[0][1] for r in rounds)
    ask_rss = max(r[1][1] for r in rounds)
    print("(a) runs:", " ".join(f"{r[0][0]['seconds']:.2f}" for r in rounds), "s")
    print("(b) runs:", " ".join(f"{r[1][0]['seconds']:.2f}" for r in rounds), "s")
    results = [("(a) pyarrow.json.read_json", parse, parse_rss), ("(b) askkit", ask, ask_rss)]
    if not args.skip_naive:
        naive, naive_rss = run_child("naive", path)  # once: it is the slow one
        results.append(("(c) naive", naive, naive_rss))
    print(f"\n{'step':<28} {'rows':>10} {'wall s':>8} {'peak RSS MiB':>13}")
    for label, rep, rss in results:
        print(f"{label:<28} {int(rep['rows']):>10,} {rep['seconds']:>8.2f} {rss:>13.0f}")
    print(f"{'(import baseline)':<28} {'':>10} {'':>8} {base_rss:>13.0f}")
    frame_mib = ask["frame_bytes"] / 2**20
    print(f"\nframe memory_usage(deep=True): {frame_mib:.0f} MiB")
    medians = [statistics.median(r[k][0]["seconds"] for r in rounds) for k in (0, 1)]
    print(
        f"(b)/(a) wall  = {ask['seconds'] / parse['seconds']:.2f} best, "
        f"{medians[1] / medians[0]:.2f} median   target <= 1.5 (best)"
    )
    if not args.skip_naive:
        print(f"(c)/(b) wall  = {naive['seconds'] / ask['seconds']:.2f}   target >= 4")
    print(f"(b) peak RSS / frame = {ask_rss / frame_mib:.2f}   target <= 2")


if __name__ == "__main__":
    main()
