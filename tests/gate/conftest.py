"""The gate tests' runs: the bundled turn log, and it with relevant notes pushed down."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from askkit.frame import sources_frame
from askkit.metrics import evaluate
from tests.conftest import DATA

QRELS = DATA / "qrels.tsv"
RUN = DATA / "run.jsonl"


def bundled() -> pd.DataFrame:
    return sources_frame(RUN)


def pushed_down(frame: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """The run with ten unjudged notes put above everything in every third answered query.

    The relevant notes those queries had in their top 10 fall to ranks 11 and below.
    """
    ev = evaluate(frame, QRELS, ["recall@10"])
    answered = ev.per_query.index[ev.per_query["recall@10"].to_numpy() > 0]
    chosen = sorted(answered)[::3]
    top = frame.groupby("turn_id")["score"].max()
    filler = pd.DataFrame(
        {
            "turn_id": np.repeat(chosen, 10),
            "path": [f"filler/{q}-{i}.md" for q in chosen for i in range(10)],
            "heading": "",
            "match_heading": "",
            "title": "Filler",
            "score": np.repeat(top.loc[chosen].to_numpy() + 10.0, 10),
        }
    )
    keep = frame[["turn_id", "path", "heading", "match_heading", "title", "score"]]
    return pd.concat([keep, filler], ignore_index=True), chosen


@pytest.fixture(scope="module")
def regression() -> tuple[pd.DataFrame, list[str]]:
    return pushed_down(bundled())
