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
