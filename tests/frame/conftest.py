"""The frame tests' fixtures: both rule paths, and small wire chunks and JSONL logs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from askkit.frame import COLUMNS


@pytest.fixture(scope="module", params=["compiled", "pyarrow"])
def kernel_paths(request: pytest.FixtureRequest) -> Iterator[str]:
    """Run a module's tests twice: with askkit's compiled kernels, then with the
    pyarrow.compute fallback that stands in for them where they are not built."""
    from askkit.frame import kernels

    saved = kernels.ENABLED
    kernels.ENABLED = request.param == "compiled"
    assert kernels.available() == (request.param == "compiled")  # the kernels are built here
    yield request.param
    kernels.ENABLED = saved


def chunk(**over: Any) -> dict[str, Any]:
    """A non-journal wire chunk, with ``over`` replacing its fields."""
    base: dict[str, Any] = {
        "path": "projects/sourdough.md",
        "title": "Sourdough\x1fStarter",
        "date": None,
        "content": "Feed it.",
        "hash": "h1",
        "similarity_score": 0.5,
        "ordinal": 1,
    }
    base.update(over)
    return base


def jsonl(tmp_path: Path, lines: list[Any], name: str = "log.jsonl") -> Path:
    """A JSONL file of ``lines``: objects are dumped, strings written as they are."""
    path = tmp_path / name
    path.write_text(
        "\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n",
        encoding="utf-8",
    )
    return path


def assert_schema(df: pd.DataFrame) -> None:
    """``df`` has exactly the columns of :data:`COLUMNS`, in order, with their dtypes."""
    assert list(df.columns) == list(COLUMNS)
    for name, dtype in COLUMNS.items():
        assert df[name].dtype == dtype, name
