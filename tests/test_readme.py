"""Every README example that uses the bundled data runs as written, from the repository root.

Each ```python block runs in a fresh interpreter, and each ``.venv/bin/askkit`` line of a
```bash block as a command (``askkit lab`` only with ``--dry-run``), with a temporary
HOME so that no index cache lands in the user's; nothing needs the network. A file an
example writes into the repository (``report.html``) is checked, then removed (a file
already there is put back).
"""

from __future__ import annotations

import html
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.corpora import corpus

README = ROOT / "README.md"
FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.MULTILINE | re.DOTALL)
# Output files an example names: ``-o PATH`` on a command line, ``.write("PATH")`` in Python.
OUTPUTS = re.compile(r"""(?:\s-o\s+|\.write\(["'])([\w./-]+\.html)""")
SLOW = ("build_report", "compare(", "sweep_cuts", "askkit report", "askkit cut", "--embedder")


@dataclass(frozen=True)
class Example:
    """One runnable README example: a Python block or one command line."""

    name: str
    kind: str  # "python" or "bash"
    code: str

    @property
    def outputs(self) -> list[str]:
        return OUTPUTS.findall(self.code)


def examples(text: str) -> list[Example]:
    """The README's runnable examples, named by line number."""
    found = []
    for block in FENCE.finditer(text):
        language, body = block.group(1), block.group(2)
        first = text.count("\n", 0, block.start(2)) + 1
        if language == "python":
            found.append(Example(f"python@L{first}", "python", body))
        elif language == "bash":
            for offset, line in enumerate(body.splitlines()):
                if not line.startswith(".venv/bin/askkit"):
                    continue
                argv = shlex.split(line, comments=True)
                if argv[1:2] == ["lab"] and "--dry-run" not in argv:
                    continue  # would start JupyterLab and wait
                name = f"askkit-{argv[1]}@L{first + offset}"
                found.append(Example(name, "bash", line))
    return found


def params() -> list[object]:
    return [
        pytest.param(
            ex,
            id=ex.name,
            marks=[pytest.mark.slow] if any(s in ex.code for s in SLOW) else [],
        )
        for ex in examples(README.read_text(encoding="utf-8"))
    ]


def test_the_readme_has_examples_to_run() -> None:
    found = examples(README.read_text(encoding="utf-8"))
    assert sum(ex.kind == "python" for ex in found) >= 5
    assert any(ex.code.startswith(".venv/bin/askkit report") for ex in found)


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ASKKIT_", "XDG_"))}
    env.update(HOME=str(home), MPLBACKEND="Agg", PYTHONDONTWRITEBYTECODE="1")
    return env


def _run(ex: Example, home: Path) -> subprocess.CompletedProcess[str]:
    if ex.kind == "python":
        argv = [sys.executable, "-c", ex.code]
    else:
        argv = shlex.split(ex.code, comments=True)
        argv[0] = str(ROOT / argv[0])
    return subprocess.run(
        argv, cwd=ROOT, env=_env(home), capture_output=True, text=True, timeout=600, check=False
    )


def _judged(ex: Example) -> bool:
    """Whether the example scores against judgments (so its report has metrics)."""
    if ex.kind == "python":
        return "read_qrels(" in ex.code
    return "--qrels" in shlex.split(ex.code, comments=True)


def _metrics_table(page: str) -> str:
    """The report's Metrics section, tags stripped."""
    match = re.search(r"<h2>Metrics</h2>(.*?)<h2>", page, re.DOTALL)
    assert match, "the report has no Metrics section"
    return html.unescape(re.sub(r"<[^>]+>", " ", match.group(1)))


def _check_report(path: Path, judged: bool) -> None:
    page = path.read_text(encoding="utf-8")
    assert page.startswith("<!doctype html>") or "<html" in page[:200]
    if not judged:
        return
    metrics = _metrics_table(page)
    assert "ndcg@10" in metrics
    numbers = [float(x) for x in re.findall(r"\b\d+\.\d+\b", metrics)]
    assert numbers, metrics
    assert any(x > 0 for x in numbers), metrics
    assert not re.search(r"(?i)\bnan\b", metrics), metrics


@pytest.mark.parametrize("example", params())
def test_readme_example_runs(example: Example, tmp_path: Path) -> None:
    if "../shared/corpora/" in example.code:  # beside the clone: skips without it (CI: fails)
        corpus(example.code.split("../shared/corpora/", 1)[1].split("/")[0].split()[0])
    outputs = [ROOT / name for name in example.outputs]
    saved = {}
    for out in outputs:  # a user's own file of that name survives the test
        if out.exists():
            saved[out] = tmp_path / f"saved-{out.name}"
            shutil.move(out, saved[out])
    home = tmp_path / "home"
    home.mkdir()
    try:
        done = _run(example, home)
        assert done.returncode == 0, f"{example.name}\n{example.code}\n{done.stderr[-3000:]}"
        for out in outputs:
            assert out.is_file(), f"{example.name} did not write {out.name}"
            _check_report(out, judged=_judged(example))
    finally:
        for out in outputs:
            out.unlink(missing_ok=True)
        for out, backup in saved.items():
            shutil.move(backup, out)
    if example.kind == "bash" and example.code.split()[1] in {"search", "cut"}:
        assert re.search(r"\d\.\d", done.stdout), done.stdout  # scores, recall: real numbers
        assert not re.search(r"(?i)\bnan\b", done.stdout), done.stdout
