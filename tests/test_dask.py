"""read_jsonl_dask on a real LocalCluster equals the pandas path."""

from __future__ import annotations

import builtins
import json
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from askkit import MissingDependencyError
from askkit.frame import COLUMNS, read_jsonl_dask, sources_frame


@pytest.mark.slow
def test_dask_equals_pandas_on_a_multi_file_log(tmp_path: Path, data_dir: Path) -> None:
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
    pd.testing.assert_frame_equal(got.reset_index(drop=True), expected)
    assert got["turn_id"].nunique() == expected["turn_id"].nunique() > 20


def test_glob_pattern(tmp_path: Path, data_dir: Path) -> None:
    for name in ("a.jsonl", "b.jsonl"):
        shutil.copy(data_dir / "turns.jsonl", tmp_path / name)
    ddf = read_jsonl_dask(str(tmp_path / "*.jsonl"))
    assert ddf.npartitions == 2
    got = ddf.compute(scheduler="sync")
    assert len(got) == 2 * len(sources_frame(data_dir / "turns.jsonl"))


def test_missing_dask_names_the_extra(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    real_import = builtins.__import__

    def no_dask(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "dask" or name.startswith("dask."):
            raise ImportError("No module named 'dask'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_dask)
    with pytest.raises(MissingDependencyError, match=r"askkit\[scale\]"):
        read_jsonl_dask(tmp_path / "x.jsonl")
