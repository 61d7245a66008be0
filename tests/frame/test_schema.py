"""askkit.frame.schema: one place for the frame's columns, dtypes and meanings."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from askkit.frame.schema import (
    COLUMNS,
    DESCRIPTIONS,
    ERROR_COLUMNS,
    SHARED_STRING,
    STRING,
    empty_errors,
    empty_frame,
)
from tests.conftest import DATA
from tests.frame.conftest import assert_schema


def test_every_column_is_described() -> None:
    assert list(DESCRIPTIONS) == list(COLUMNS)
    required = "turn_id question ordinal rank path note folder heading match_heading date "
    required += "is_journal score text text_chars hash cited score_rank score_gap score_z"
    assert set(required.split()) <= set(COLUMNS)
    assert all(text.strip() for text in DESCRIPTIONS.values())


def test_strings_are_pandas_str_backed_by_arrow_or_shared_objects() -> None:
    assert isinstance(STRING, pd.StringDtype)
    assert isinstance(SHARED_STRING, pd.StringDtype)
    assert (STRING.storage, SHARED_STRING.storage) == ("pyarrow", "python")
    assert np.isnan(STRING.na_value)
    assert np.isnan(SHARED_STRING.na_value)  # pandas 3's default str: NaN for missing
    shared = [name for name, dtype in COLUMNS.items() if dtype == SHARED_STRING]
    assert shared == ["question", "answer"]  # one value per turn, on each of its rows
    strings = {"turn_id", "path", "note", "folder", "heading", "match_heading", "text", "hash"}
    assert strings | {"title", "wire_date"} == {n for n, d in COLUMNS.items() if d == STRING}


@pytest.mark.parametrize(
    ("names", "dtype"),
    [
        (["ordinal", "rank", "text_chars", "score_rank", "line"], np.dtype("int64")),
        (["score", "score_gap", "score_z"], np.dtype("float64")),
        (["is_journal", "cited"], np.dtype("bool")),
        (["date"], np.dtype("datetime64[ns]")),
    ],
)
def test_numeric_columns_have_numpy_dtypes(names: list[str], dtype: np.dtype[np.generic]) -> None:
    assert [COLUMNS[n] for n in names] == [dtype] * len(names)


def test_empty_frame_matches_columns() -> None:
    df = empty_frame()
    assert df.empty
    assert_schema(df)
    assert df.dtypes.to_dict() == COLUMNS


def test_empty_frame_is_fresh() -> None:
    a = empty_frame()
    a["turn_id"] = a["turn_id"]
    assert_schema(empty_frame())
    assert empty_frame() is not empty_frame()
    assert DATA.is_dir()


def test_empty_errors_match_error_columns() -> None:
    errors = empty_errors()
    assert errors.empty
    assert list(errors.columns) == ["file", "line", "field", "value", "message"]
    assert errors.dtypes.to_dict() == ERROR_COLUMNS
