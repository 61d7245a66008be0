"""askkit.metrics.runs: TREC runs on disk, read and written as evaluate ranks them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from askkit.errors import SchemaError
from askkit.metrics import evaluate
from askkit.metrics.qrels import read_qrels, write_qrels
from askkit.metrics.runs import read_run, read_trec_run, write_run
from tests.conftest import DATA


def test_trec_run_round_trip(tmp_path: Path, local_run: pd.DataFrame) -> None:
    target = tmp_path / "run.txt"
    write_run(local_run, target, level="section", tag="bm25")
    line = target.read_text(encoding="utf-8").splitlines()[0].split(" ")
    assert len(line) == 6
    assert line[1] == "Q0"
    assert line[5] == "bm25"
    # the trec_eval workflow: both sides exported, their section ids encoded alike
    qrels_file = tmp_path / "qrels.txt"
    write_qrels(read_qrels(DATA / "qrels.tsv"), qrels_file, format="trec")
    a = evaluate(local_run, DATA / "qrels.tsv", ["ndcg@10", "map"], level="section")
    b = evaluate(read_run(target), qrels_file, ["ndcg@10", "map"], level="section")
    pd.testing.assert_frame_equal(a.per_query, b.per_query)
    assert a.mean["map"] > 0


def test_read_trec_run_columns_and_errors(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    path.write_text("q%201 Q0 a.md#Bake%20log 1 2.5 bm25\nq2 Q0 b.md 1 nan bm25\n", "utf-8")
    run = read_trec_run(path)
    assert list(run.columns) == ["turn_id", "doc", "rank", "score", "tag"]
    assert run["turn_id"].tolist() == ["q%201", "q2"]  # exact: never decoded
    assert run["doc"].tolist() == ["a.md#Bake%20log", "b.md"]
    assert run["rank"].dtype == np.int64
    assert run["score"].iloc[0] == 2.5
    assert np.isnan(run["score"].iloc[1])
    path.write_text("q1 Q0 a.md 1 2.5 bm25\nq1 Q0 b.md two 1.0 bm25\n", "utf-8")
    with pytest.raises(SchemaError, match="rank must be an integer") as info:
        read_trec_run(path)
    assert info.value.line == 2
    path.write_text("q1 Q0 a.md 1 2.5\n", "utf-8")
    with pytest.raises(SchemaError, match="expected at least 6 whitespace-separated fields"):
        read_trec_run(path)
    with pytest.raises(SchemaError, match="cannot read the run file"):
        read_trec_run(tmp_path / "absent.txt")


def test_write_run_needs_a_one_word_tag(tmp_path: Path) -> None:
    run = pd.DataFrame({"turn_id": ["q1"], "path": ["a.md"], "score": [1.0]})
    with pytest.raises(ValueError, match="one word"):
        write_run(run, tmp_path / "run.txt", tag="two words")


def test_a_turn_log_is_told_from_a_trec_run_by_its_name_or_its_first_byte(
    tmp_path: Path,
) -> None:
    from askkit.metrics.runs import is_turn_log

    (tmp_path / "log.txt").write_text('  \n{"id": "q1"}\n')
    (tmp_path / "run.txt").write_text("q1 Q0 a.md 1 1.0 r\n")
    assert is_turn_log(tmp_path / "log.txt")
    assert is_turn_log(tmp_path / "named.jsonl")  # by its name, before it is read
    assert not is_turn_log(tmp_path / "run.txt")
    assert not is_turn_log(tmp_path / "missing.txt")  # its reader says why
