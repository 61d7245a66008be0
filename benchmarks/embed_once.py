"""A vault is embedded once: ``askkit index --embedder``, then every other command embeds nothing.

Runs, each in a fresh process with its output in a pipe, on one vault and one
empty ``ASKKIT_CACHE_DIR`` (the offline model is built there first, timed apart):

1. ``askkit index VAULT --embedder SPEC`` on an empty store: **cold**, the named
   baseline;
2. ``askkit search QUESTION --vault VAULT --embedder SPEC``;
3. ``askkit run --vault VAULT --queries TSV --embedder SPEC -o run.jsonl``;
4. ``vault_side(VAULT, TSV, embedder=SPEC)``: what ``askkit diff --vault
   --new-embedder SPEC`` runs for its side;
5. for comparison, ``vault_side(..., store=False)``: the vault embedded in memory,
   as ``askkit diff --vault`` did before it shared the store.

Each process counts the texts it sends to the model: it runs with an audit hook
(:func:`sys.addaudithook`) on askkit's embedding event
(``askkit.dense._embedding.EMBED_EVENT``, raised for each batch sent to a
model, whatever built the embedder), by kind: chunks, questions, width probes.
Steps 2-4 must send no chunk. The questions are known-item questions made from
the vault's own sections (:func:`askkit.reach.known_items`, ``--questions``).
Prints the wall time of each process (start to exit), its ratio to the cold
index, and the counts. Asserts nothing.

    .venv/bin/python benchmarks/embed_once.py        # the Obsidian help (../shared/corpora)
    .venv/bin/python benchmarks/embed_once.py --vault data/vault --questions 10   # quicker
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
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OBSIDIAN = ROOT.parent / "shared" / "corpora" / "obsidian-help-en"
EMBEDDER = "fastembed:AllMiniLML6V2"

#: What each measured process runs: the audit hook, then an askkit command or vault_side;
#: the counts go to the file named first.
CHILD = """
import json, sys
from askkit.dense._embedding import EMBED_EVENT

counts = {"documents": 0, "query": 0, "probe": 0}


def count(event, args):
    if event == EMBED_EVENT:
        counts[args[1]] += args[2]


sys.addaudithook(count)
out, what, *argv = sys.argv[1:]
if what == "cli":
    from askkit.cli import main

    status = main(argv)
else:
    from askkit.gate import vault_side

    vault, queries, embedder = argv
    side = vault_side(vault, queries, embedder=embedder, progress=False,
                      store=None if what == "side" else False)
    status = 0
with open(out, "w", encoding="utf-8") as fh:
    json.dump(counts, fh)
sys.exit(status)
"""


@dataclass(frozen=True, slots=True)
class Step:
    """One measured process: its wall time and the texts it sent to the model."""

    label: str
    seconds: float
    documents: int
    queries: int
    probes: int


def measure(label: str, what: str, argv: list[str], cache: Path, work: Path) -> Step:
    env = {**os.environ, "ASKKIT_CACHE_DIR": str(cache), "HF_HUB_OFFLINE": "1", "COLUMNS": "200"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    counts_file = work / "counts.json"
    counts_file.unlink(missing_ok=True)
    command = [sys.executable, "-c", CHILD, str(counts_file), what, *argv]
    t0 = time.perf_counter()
    out = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env, check=False)
    seconds = time.perf_counter() - t0
    if out.returncode != 0 or not counts_file.is_file():
        sys.exit(f"embed_once.py: {label} failed (exit {out.returncode}):\n{out.stderr}")
    counts = json.loads(counts_file.read_text(encoding="utf-8"))
    return Step(label, seconds, counts["documents"], counts["query"], counts["probe"])


def build_model(cache: Path) -> float:
    """Build the offline model into ``cache`` (what any first use does); its seconds."""
    t0 = time.perf_counter()
    code = "from askkit.dense import _minilm; import sys; _minilm.build(root=sys.argv[1])"
    subprocess.run(
        [sys.executable, "-c", code, str(cache)], cwd=ROOT, check=True, capture_output=True
    )
    return time.perf_counter() - t0


def write_questions(vault: Path, count: int, path: Path) -> list[str]:
    """Known-item questions from ``vault``'s own sections into a queries TSV; the questions."""
    from askkit.reach import KnownItemSettings, known_items

    made = known_items(vault, KnownItemSettings(sections=count, min_words=3)).queries
    made = made.drop_duplicates("question").head(count)
    if made.empty:
        sys.exit(f"embed_once.py: no question could be made from {vault}'s sections")
    made[["query_id", "question"]].to_csv(path, sep="\t", index=False)
    return [str(q) for q in made["question"]]


def run_steps(args: argparse.Namespace, vault: Path, work: Path) -> tuple[float, list[Step]]:
    cache = work / "cache"
    cache.mkdir()
    model = build_model(cache)
    queries = work / "queries.tsv"
    questions = write_questions(vault, args.questions, queries)
    spec, v, q = args.embedder, str(vault), str(queries)
    steps = [
        ("`askkit index --embedder`, empty store (cold)", "cli", ["index", v, "--embedder", spec]),
        (
            "`askkit search --vault --embedder`",
            "cli",
            ["search", questions[0], "--vault", v, "--embedder", spec],
        ),
        (
            f"`askkit run --embedder`, {len(questions)} questions",
            "cli",
            ["run", "--vault", v, "--queries", q, "--embedder", spec, "-o", str(work / "r.jsonl")],
        ),
        ("`vault_side` (`askkit diff --vault --new-embedder`)", "side", [v, q, spec]),
    ]
    if not args.skip_memory:
        steps.append(
            ("`vault_side(store=False)`: in memory, as diff did before", "memory", [v, q, spec])
        )
    return model, [measure(label, what, argv, cache, work) for label, what, argv in steps]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vault", type=Path, default=OBSIDIAN, help="default: %(default)s")
    parser.add_argument("--embedder", default=EMBEDDER, help="default: %(default)s")
    parser.add_argument("--questions", type=int, default=40, help="questions (default 40)")
    parser.add_argument(
        "--skip-memory", action="store_true", help="leave out the in-memory comparison"
    )
    args = parser.parse_args()
    vault = args.vault.resolve()
    if not vault.is_dir():
        sys.exit(f"embed_once.py: {vault} is not a folder (--vault)")
    print(
        f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"load average {os.getloadavg()[0]:.1f} at the start"
    )
    with tempfile.TemporaryDirectory(prefix="askkit-embed-once-") as tmp:
        model, steps = run_steps(args, vault, Path(tmp))
    cold = steps[0]
    print(f"vault: {vault}; embedder {args.embedder}; model built in {model:.1f} s (apart)")
    print()
    header = "step, a fresh process each | wall time | vs cold index | chunks sent to the model"
    print(f"| {header} | questions sent | target | status |")
    print("| --- | ---: | ---: | ---: | ---: | --- | --- |")
    for i, step in enumerate(steps):
        if i == 0:
            target, status = "baseline", ""
        elif step.label.startswith("`vault_side(store=False)`"):
            target, status = "(for comparison)", ""
        else:
            target, status = "0 chunks", "met" if step.documents == 0 else "not met"
        print(
            f"| {step.label} | {step.seconds:.1f} s | {step.seconds / cold.seconds:.3f}x | "
            f"{step.documents:,} | {step.queries:,} | {target} | {status} |"
        )
    later = sum(s.documents for s in steps[1:4])
    print()
    print(f"chunks embedded after the first command: {later:,} (of {cold.documents:,})")
    print(f"width probes sent: {sum(s.probes for s in steps)}")


if __name__ == "__main__":
    main()
