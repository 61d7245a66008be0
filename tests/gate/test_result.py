"""The gate's result read back from its JSON."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from askkit.errors import SchemaError
from askkit.gate import GateResult, Side, gate
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
