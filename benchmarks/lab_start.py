"""How long ``askkit lab`` takes to get a vault ready, the first time and the next.

Runs ``askkit lab --vault VAULT --embedder SPEC --prepare-only`` (everything a
start does before JupyterLab: copy the notebooks, index the vault with BM25,
embed it with the real model), each in a fresh process with its output in a
pipe, timing the process's wall time:

* **cold** (the named baseline): an empty ``ASKKIT_CACHE_DIR``, so the offline
  model is built from the installed weights, then the vault indexed and
  embedded;
* **new vault**: the same cache without its indexes, stores and lab folders
  (the model stays built): what a first start on another vault costs;
* **warm**: the unchanged vault again, ``--repeat`` times: nothing to embed.

Also the floor of any start, ``askkit --version`` in a fresh process. Prints
the figures, their ratios to the cold start, the chunks each run embedded and
the progress lines the cold start wrote to its pipe. Asserts nothing.

    .venv/bin/python benchmarks/lab_start.py       # the Obsidian help (../shared/corpora)
    .venv/bin/python benchmarks/lab_start.py --vault data/vault --repeat 1   # a quick run
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OBSIDIAN = ROOT.parent / "shared" / "corpora" / "obsidian-help-en"
EMBEDDER = "fastembed:AllMiniLML6V2"


@dataclass(frozen=True, slots=True)
class Start:
    """One ``--prepare-only`` run: its wall time, what it embedded, what its pipe got."""

    seconds: float
    embedded: int
    reused: int
    chunks: int
    progress: list[str]


def prepare(vault: Path, embedder: str, cache: Path) -> Start:
    env = {**os.environ, "ASKKIT_CACHE_DIR": str(cache), "HF_HUB_OFFLINE": "1", "COLUMNS": "200"}
    command = [sys.executable, "-m", "askkit.cli", "lab", "--vault", str(vault)]
    command += ["--embedder", embedder, "--prepare-only", "--no-browser"]
    t0 = time.perf_counter()
    out = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env, check=False)
    seconds = time.perf_counter() - t0
    if out.returncode != 0:
        sys.exit(f"lab_start.py: askkit lab failed:\n{out.stderr}")
    said = " ".join(out.stdout.split())
    counts = re.search(r"(\d+) chunks \((\d+) embedded, (\d+) reused\)", said)
    if counts is None:
        sys.exit(f"lab_start.py: no embedding summary in:\n{out.stdout}")
    progress = [line for line in out.stderr.splitlines() if line.startswith("embedding (")]
    chunks, embedded, reused = (int(g) for g in counts.groups())
    return Start(seconds, embedded, reused, chunks, progress)


def floor() -> float:
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "askkit.cli", "--version"], capture_output=True, check=True
    )
    return time.perf_counter() - t0


def forget_vaults(cache: Path) -> None:
    """Remove what the runs wrote for the vault (indexes, stores, lab folders): the model stays."""
    for folder in cache.iterdir():
        if folder.name.startswith(("index-", "dense-", "lab-")):
            shutil.rmtree(folder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vault", type=Path, default=OBSIDIAN, help="default: %(default)s")
    parser.add_argument("--embedder", default=EMBEDDER, help="default: %(default)s")
    parser.add_argument("--repeat", type=int, default=3, help="warm starts (default 3)")
    args = parser.parse_args()
    vault = args.vault.resolve()
    if not vault.is_dir():
        sys.exit(f"lab_start.py: {vault} is not a folder (--vault)")
    print(
        f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"load average {os.getloadavg()[0]:.1f} at the start"
    )
    with tempfile.TemporaryDirectory(prefix="askkit-lab-start-") as tmp:
        cache = Path(tmp) / "cache"
        cold = prepare(vault, args.embedder, cache)
        forget_vaults(cache)
        new = prepare(vault, args.embedder, cache)
        warm = [prepare(vault, args.embedder, cache) for _ in range(args.repeat)]
        floors = [floor() for _ in range(args.repeat)]
    best, median = min(w.seconds for w in warm), statistics.median(w.seconds for w in warm)
    embedded_warm = max(w.embedded for w in warm)
    print(f"vault: {vault}, {cold.chunks:,} chunks; embedder {args.embedder}")
    print()
    print("| measure | value | target | status |")
    print("| --- | ---: | --- | --- |")
    print(
        f"| cold start, empty cache: model built, vault indexed and embedded | "
        f"{cold.seconds:.1f} s | baseline | |"
    )
    print(
        f"| first start on a new vault, model already built | {new.seconds:.1f} s "
        f"({new.seconds / cold.seconds:.2f}x) | | |"
    )
    print(
        f"| warm start, unchanged vault, best / median of {len(warm)} | {best:.1f} / "
        f"{median:.1f} s ({best / cold.seconds:.3f}x / {median / cold.seconds:.3f}x) | | |"
    )
    status = "met" if embedded_warm == 0 else "not met"
    print(
        f"| chunks embedded: cold / new vault / warm | {cold.embedded:,} / {new.embedded:,} / "
        f"{embedded_warm:,} | warm: 0 | {status} |"
    )
    print(f"| `askkit --version` in a fresh process, best | {min(floors):.1f} s | | |")
    print()
    print(f"the cold start's progress on its pipe: {len(cold.progress)} lines, the first and last:")
    for line in cold.progress[:1] + cold.progress[-1:]:
        print(f"    {line}")


if __name__ == "__main__":
    main()
