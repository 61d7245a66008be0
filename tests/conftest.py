"""Shared fixtures: paths to the bundled data and small annotated payloads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

# The machines are shared and noisy: no per-example deadline (speed is measured in
# benchmarks/, never asserted in tests), and no "too slow" health check.
settings.register_profile(
    "askkit", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.load_profile("askkit")

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"


@pytest.fixture
def data_dir() -> Path:
    return DATA


def load(name: str) -> Any:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


@pytest.fixture
def chunk_dict() -> dict[str, Any]:
    """A journal chunk as a current kimun server sends it."""
    return {
        "path": "journal/2026-04-08.md",
        "title": "2026-04-08\x1fAfternoon",
        "date": "2026-04-08",
        "content": "Walked to the river.",
        "hash": "abc123",
        "similarity_score": 0.75,
        "ordinal": 2,
    }


@pytest.fixture(scope="module", params=["compiled", "numpy"])
def kernel_paths(request: pytest.FixtureRequest) -> Any:
    """Run a module's tests twice: with askkit's compiled kernels, then with the
    numpy paths that stand in for them where they are not built."""
    from askkit.frame import kernels as _compiled

    saved = _compiled.ENABLED
    _compiled.ENABLED = request.param == "compiled"
    yield request.param
    _compiled.ENABLED = saved
