"""The frame benchmark runs end to end on a small log (its figures are not checked:
speed is measured in benchmarks/, never asserted in tests)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks" / "frame_bench.py"

pytestmark = pytest.mark.slow


def _run(*args: str) -> str:
    out = subprocess.run(
        [sys.executable, str(BENCH), *args], capture_output=True, text=True, check=False
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_frame_bench_prints_every_step_and_ratio(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    out = _run("--turns", "300", "--repeat", "1", "--file", str(log))
    assert log.stat().st_size > 0
    for label in ("(a) pyarrow.json.read_json", "(b) askkit", "(c) naive"):
        assert label in out
    assert "3,000" in out  # (b) and (c) read 300 turns x 10 sources
    for ratio in ("(b)/(a) wall", "(c)/(b) wall", "(b) peak RSS / frame"):
        assert ratio in out


def test_frame_bench_phases_time_each_rule_both_ways(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    _run("--turns", "200", "--repeat", "1", "--skip-naive", "--file", str(log))
    out = _run("--phases", "--repeat", "1", "--file", str(log))
    assert "2,000 sources" in out
    assert out.splitlines()[1].split()[1:3] == ["fallback", "compiled"]
    for rule in ("headings and match headings", "paths, notes, folders", "citations"):
        assert rule in out
    assert "compiled kernels built: True" in out
