"""The gate's result read back from its JSON."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from askkit.errors import SchemaError
from askkit.gate import GateResult, Side, gate
from askkit.metrics import read_qrels
from tests.gate.conftest import QRELS, bundled


def test_json_round_trips(regression: tuple[pd.DataFrame, list[str]]) -> None:
    new, _ = regression
    result = gate(Side(bundled(), {"kind": "test"}), new, QRELS, test="bootstrap", resamples=500)
    text = result.to_json()
    back = GateResult.from_json(text)
    assert back == result
    assert back.passed is False
    assert back.regressions == result.regressions
    data = json.loads(text)
    assert data["exit_status"] == 1
    assert data["format"] == "askkit diff"
    with pytest.raises(SchemaError, match="not an askkit diff result"):
        GateResult.from_json('{"format": "other"}')
    with pytest.raises(SchemaError, match="missing or unknown field"):
        GateResult.from_json('{"format": "askkit diff"}')


def test_a_single_query_writes_strict_json_and_reads_its_missing_numbers_back() -> None:
    one = bundled()
    one = one[one["turn_id"] == one["turn_id"].iloc[0]]
    qrels = read_qrels(QRELS)
    qrels = qrels[qrels["query_id"] == one["turn_id"].iloc[0]]
    result = gate(Side(one, {"kind": "test"}), Side(one, {"kind": "test"}), qrels)
    assert result.queries == 1
    text = result.to_json()

    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} is not JSON")

    data = json.loads(text, parse_constant=refuse)  # strict JSON: jq and every CI reads it
    assert any(value is None for m in data["measures"] for value in m.values())
    back = GateResult.from_json(text)
    assert back.to_json() == text
    assert all(math.isnan(m.ci_low) or m.ci_low == 0.0 for m in back.measures)
