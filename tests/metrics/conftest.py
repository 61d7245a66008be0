"""The metrics tests' fixtures: both preparation paths, and a real run over the bundled vault."""

from __future__ import annotations

from collections.abc import Iterator

import pandas as pd
import pytest

from askkit.frame import sources_frame
from tests.conftest import DATA


@pytest.fixture(scope="module", params=["fast", "exact"])
def metric_paths(request: pytest.FixtureRequest) -> Iterator[str]:
    """Run a module's tests twice: with askkit.metrics.fast allowed to take the run,
    then with it switched off, so that the exact path (the specification) does all."""
    from askkit.metrics import fast

    saved = fast.ENABLED
    fast.ENABLED = request.param == "fast"
    yield request.param
    fast.ENABLED = saved


@pytest.fixture(scope="module")
def local_run() -> pd.DataFrame:
    """The bundled queries searched in the bundled vault with the local index, top 10."""
    from askkit.retrieve.local import LocalIndex

    index = LocalIndex(DATA / "vault", cache_dir=False, progress=False)
    queries = pd.read_csv(DATA / "queries.tsv", sep="\t", dtype=str)
    turns = [
        {"id": q, "question": text, "chunks": [c.to_dict() for c in index.search(text, k=10)]}
        for q, text in zip(queries["query_id"], queries["question"], strict=True)
    ]
    return sources_frame(turns)
