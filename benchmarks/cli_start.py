"""What an ``askkit`` command costs before it does anything: start, import, then the work.

Each command runs in a fresh process with its output in a pipe, ``--repeat``
times; the figure is the median wall time from process start to exit:

* **python** (the named baseline): ``python -c pass``, the interpreter alone;
* ``python -c "import askkit"``, ``askkit --version`` and ``askkit --help``;
* ``askkit search QUESTION --vault VAULT``, BM25 on a vault whose index is
  already in the cache (built once first, not timed), and the same with
  ``--embedder`` on a vault already embedded: end to end, against the search
  alone (the milliseconds the command prints in its title).

For the searches it also runs one process under ``python -X importtime`` and
prints how long the imports took and which heavy libraries the command loaded,
so a library imported where it is not needed shows. Prints the figures and
their ratios to the baseline. Asserts nothing.

    .venv/bin/python benchmarks/cli_start.py                # the Obsidian help (../shared/corpora)
    .venv/bin/python benchmarks/cli_start.py --vault data/vault --repeat 3 --no-dense
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OBSIDIAN = ROOT.parent / "shared" / "corpora" / "obsidian-help-en"
EMBEDDER = "fastembed:AllMiniLML6V2"
QUESTION = "how do I embed a note in another note"
#: The libraries whose import is worth naming: what a command pays for when it loads them.
HEAVY = (
    "pandas", "numpy", "pyarrow", "scipy", "bm25s", "numba", "httpx", "rich",
    "onnxruntime", "fastembed", "tokenizers", "matplotlib", "ipywidgets",
)  # fmt: skip
_TOOK = re.compile(r" in (\d+(?:\.\d+)?) ms")


def _env(cache: Path) -> dict[str, str]:
    return {**os.environ, "ASKKIT_CACHE_DIR": str(cache), "HF_HUB_OFFLINE": "1", "COLUMNS": "200"}


def timed(command: list[str], env: dict[str, str]) -> tuple[float, str]:
    """One fresh process: its wall time and its stdout (it must succeed)."""
    t0 = time.perf_counter()
    out = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env, check=False)
    seconds = time.perf_counter() - t0
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({out.returncode}): {out.stderr.strip()}")
    return seconds, out.stdout


def imports(command: list[str], env: dict[str, str]) -> tuple[float, list[str]]:
    """One run under ``-X importtime``: the seconds its top-level imports took, and the
    heavy libraries it loaded."""
    traced = [command[0], "-X", "importtime", *command[1:]]
    out = subprocess.run(traced, capture_output=True, text=True, cwd=ROOT, env=env, check=False)
    total_us = 0
    loaded = set()
    for line in out.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _self, cumulative, name = line[len("import time:") :].split("|")
        if not cumulative.strip().isdigit():
            continue  # the header line
        if not name.startswith("  "):  # a top-level import: its cumulative time counts once
            total_us += int(cumulative)
        if name.strip() in HEAVY:
            loaded.add(name.strip())
    return total_us / 1e6, [h for h in HEAVY if h in loaded]


def median(command: list[str], env: dict[str, str], repeat: int) -> tuple[float, list[str]]:
    runs = [timed(command, env) for _ in range(repeat)]
    return statistics.median(s for s, _ in runs), [out for _, out in runs]


def search_ms(outputs: list[str]) -> float:
    found = [float(m.group(1)) for out in outputs for m in [_TOOK.search(out)] if m]
    if not found:
        raise SystemExit("the search printed no time in its title")
    return statistics.median(found)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vault", type=Path, default=OBSIDIAN)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-dense", action="store_true", help="skip the dense search")
    args = parser.parse_args()
    if not args.vault.is_dir():
        raise SystemExit(f"no vault at {args.vault}")
    python = sys.executable
    askkit = [python, "-m", "askkit.cli"]
    with tempfile.TemporaryDirectory(prefix="askkit-cli-start-") as tmp:
        env = _env(Path(tmp))
        bm25 = [*askkit, "search", QUESTION, "--vault", str(args.vault)]
        dense = [*bm25, "--embedder", EMBEDDER]
        timed(bm25, env)  # the index, built once: every later search opens it
        if not args.no_dense:
            timed(dense, env)  # the vault embedded once (the model built, too)
        rows: list[tuple[str, float]] = []
        for label, command in (
            ("`python -c pass` (baseline)", [python, "-c", "pass"]),
            ('`python -c "import askkit"`', [python, "-c", "import askkit"]),
            ("`askkit --version`", [*askkit, "--version"]),
            ("`askkit --help`", [*askkit, "--help"]),
        ):
            rows.append((label, median(command, env, args.repeat)[0]))
        searches = [("BM25", bm25)] + ([] if args.no_dense else [("dense", dense)])
        found: list[tuple[str, float, float, float, list[str]]] = []
        for name, command in searches:
            seconds, outputs = median(command, env, args.repeat)
            imported, heavy = imports(command, env)
            found.append((name, seconds, search_ms(outputs), imported, heavy))
    base = rows[0][1]
    print(f"vault: {args.vault}; {args.repeat} runs each, median wall time, a fresh process each")
    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs\n")
    print("| command | wall s | / baseline |")
    print("| --- | ---: | ---: |")
    for label, seconds in rows:
        print(f"| {label} | {seconds:.3f} | {seconds / base:.1f}x |")
    for name, seconds, _ms, _imported, _heavy in found:
        print(f"| `askkit search` {name}, end to end | {seconds:.3f} | {seconds / base:.1f}x |")
    print()
    print("| search | end to end s | search alone ms | imports s (one run) | heavy libraries |")
    print("| --- | ---: | ---: | ---: | --- |")
    for name, seconds, ms, imported, heavy in found:
        print(f"| {name} | {seconds:.3f} | {ms:.1f} | {imported:.3f} | {', '.join(heavy)} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
