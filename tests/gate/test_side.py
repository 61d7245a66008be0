"""A gate side read from a file: its provenance and the file's sha256."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from askkit.errors import SchemaError
from askkit.gate import file_sha256, gate, read_side
from askkit.metrics import write_run
from tests.gate.conftest import QRELS, RUN, bundled


def test_provenance_records_the_run_files_sha256(tmp_path: Path) -> None:
    write_run(bundled(), tmp_path / "base.trec")
    result = gate(tmp_path / "base.trec", RUN, QRELS)
    sha = hashlib.sha256((tmp_path / "base.trec").read_bytes()).hexdigest()
    assert result.base.provenance == {
        "kind": "TREC run",
        "file": str(tmp_path / "base.trec"),
        "sha256": sha,
    }
    assert result.new.provenance["kind"] == "turn log"
    assert result.new.provenance["sha256"] == file_sha256(RUN)
    assert sha in result.to_text()
    assert sha in result.to_markdown()
    assert sha in result.to_junit()
    assert read_side(RUN).provenance["sha256"] == file_sha256(RUN)


def test_a_side_is_read_by_the_one_run_reader(tmp_path: Path) -> None:
    """A TREC run and the turn log it was written from are the same side to the gate;
    a turn log's error names the file, as a TREC run's does."""
    write_run(bundled(), tmp_path / "base.trec")
    result = gate(tmp_path / "base.trec", RUN, QRELS, ["ndcg@10", "map"])
    assert [m.delta for m in result.measures] == [0.0, 0.0]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "q01", "chunks": [{"path": 7}]}\n', encoding="utf-8")
    with pytest.raises(SchemaError) as info:
        read_side(bad)
    assert (info.value.file, info.value.line) == (str(bad), 1)
