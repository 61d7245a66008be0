"""read_jsonl_dask on a real LocalCluster equals the pandas path."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from askkit import MissingDependencyError
from askkit.frame import COLUMNS, read_jsonl_dask, sources_frame


@pytest.mark.slow
def test_dask_equals_pandas_on_a_multi_file_log(tmp_path: Path, data_dir: Path) -> None:
    import dask
    import distributed  # the dev group installs it: a missing one fails, never skips

    lines = (data_dir / "turns.jsonl").read_text(encoding="utf-8").splitlines()
    files = []
    for i, start in enumerate(range(0, len(lines), 7)):
        path = tmp_path / f"part-{i}.jsonl"
        path.write_text("\n".join(lines[start : start + 7]) + "\n", encoding="utf-8")
        files.append(path)
    # a bare-chunk file without ids, so generated ids must stay distinct per file
    chunks = json.loads((data_dir / "embeddings.json").read_text(encoding="utf-8"))["chunks"]
    bare = tmp_path / "bare.jsonl"
    bare.write_text("\n".join(json.dumps(c) for c in chunks) + "\n", encoding="utf-8")
    files.append(bare)
    expected = sources_frame(files)
    with (
        distributed.LocalCluster(
            n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster),
    ):
        ddf = read_jsonl_dask([str(p) for p in files])
        assert ddf.npartitions == len(files)
        assert list(ddf.columns) == list(COLUMNS)
        got = ddf.compute()
        lenient = read_jsonl_dask([str(p) for p in files], strict=False)
        frame, errors, records = dask.compute(lenient.frame, lenient.errors, lenient.records)
    pd.testing.assert_frame_equal(got.reset_index(drop=True), expected)
    pd.testing.assert_frame_equal(frame.reset_index(drop=True), expected)
    assert errors.empty
    assert records["records_loaded"].sum() == records["records"].sum() == len(lines) + len(chunks)
    assert got["turn_id"].nunique() == expected["turn_id"].nunique() > 20


def test_glob_pattern(tmp_path: Path, data_dir: Path) -> None:
    for name in ("a.jsonl", "b.jsonl"):
        shutil.copy(data_dir / "turns.jsonl", tmp_path / name)
    ddf = read_jsonl_dask(str(tmp_path / "*.jsonl"))
    assert ddf.npartitions == 2
    got = ddf.compute(scheduler="sync")
    assert len(got) == 2 * len(sources_frame(data_dir / "turns.jsonl"))


def test_missing_dask_names_the_extra(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in [m for m in sys.modules if m == "dask" or m.startswith("dask.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "dask", None)  # "import dask" now raises ImportError
    with pytest.raises(MissingDependencyError, match=r"askkit\[scale\]"):
        read_jsonl_dask(tmp_path / "x.jsonl")


def _logs_with_bad_lines(tmp_path: Path, data_dir: Path) -> list[Path]:
    lines = (data_dir / "turns.jsonl").read_text(encoding="utf-8").splitlines()
    good = tmp_path / "good.jsonl"
    good.write_text("\n".join(lines[:5]) + "\n", encoding="utf-8")
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([lines[5], "{not json", lines[6], '["a list"]']) + "\n", "utf-8")
    return [good, bad]


def test_lenient_dask_equals_lenient_pandas_and_reads_each_file_once(
    tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dask

    from askkit.frame import ERROR_COLUMNS, RECORD_COLUMNS, DaskLoaded
    from askkit.frame import scale as frame_module

    files = _logs_with_bad_lines(tmp_path, data_dir)
    expected = sources_frame(files, strict=False)
    reads: list[str] = []
    real = frame_module._load_lenient

    def counted(path: str) -> Any:
        reads.append(path)
        return real(path)

    monkeypatch.setattr(frame_module, "_load_lenient", counted)
    loaded = read_jsonl_dask([str(p) for p in files], strict=False)
    assert isinstance(loaded, DaskLoaded)
    assert loaded.frame.npartitions == loaded.errors.npartitions == len(files)
    frame, errors, records = dask.compute(
        loaded.frame, loaded.errors, loaded.records, scheduler="sync"
    )
    assert sorted(reads) == sorted(str(p) for p in files)  # each file once for all three
    pd.testing.assert_frame_equal(frame.reset_index(drop=True), expected.frame)
    pd.testing.assert_frame_equal(errors.reset_index(drop=True), expected.errors)
    assert list(errors.columns) == list(ERROR_COLUMNS)
    assert errors["line"].tolist() == [2, 4]
    assert dict(records.dtypes.astype(str)) == {k: str(v) for k, v in RECORD_COLUMNS.items()}
    assert records["file"].tolist() == [str(p) for p in files]
    assert records["records"].tolist() == [5, 4]
    assert records["records_loaded"].tolist() == [5, 2]
    assert records["records"].sum() == expected.records  # nothing dropped silently
    good, bad = loaded  # unpacks as (frame, errors)
    assert good is loaded.frame
    assert bad is loaded.errors


def test_strict_dask_names_the_bad_line(tmp_path: Path, data_dir: Path) -> None:
    from askkit import SchemaError

    files = _logs_with_bad_lines(tmp_path, data_dir)
    ddf = read_jsonl_dask([str(p) for p in files])
    with pytest.raises(SchemaError, match="not valid JSON") as info:
        ddf.compute(scheduler="sync")
    assert info.value.file == str(files[1])
    assert info.value.line == 2


def test_a_pattern_matching_nothing_is_an_error(tmp_path: Path, data_dir: Path) -> None:
    from askkit import SchemaError

    shutil.copy(data_dir / "turns.jsonl", tmp_path / "a.jsonl")
    with pytest.raises(SchemaError, match="matches no file") as info:
        read_jsonl_dask([str(tmp_path / "a.jsonl"), str(tmp_path / "missing-*.jsonl")])
    assert info.value.value == str(tmp_path / "missing-*.jsonl")
