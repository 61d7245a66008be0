"""The bundled sample data agrees with the bundled vault: no false alarm on the first screens."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
import pytest

from askkit import Turn, read_turn
from askkit.frame import sources_frame
from askkit.metrics import evaluate, read_qrels
from askkit.vault import Vault, locate_source
from tests.conftest import DATA, ROOT

SAMPLES = ["answer_job.json", "sample_turn.json", "embeddings.json", "embeddings_old_server.json"]


@pytest.fixture(scope="module")
def vault() -> Vault:
    return Vault(DATA / "vault")


@pytest.mark.parametrize("name", SAMPLES)
def test_every_sample_source_is_a_vault_note_with_the_same_hash(vault: Vault, name: str) -> None:
    turn: Turn = read_turn(DATA / name)
    assert turn.sources
    for src in turn.sources:
        note = vault.note(str(src.path))
        assert src.hash == note.hash, f"{name}: {src.path} was indexed from another version"


@pytest.mark.parametrize("name", SAMPLES)
def test_every_sample_source_is_found_in_its_note(vault: Vault, name: str) -> None:
    for src in read_turn(DATA / name).sources:
        text = vault.note(str(src.path)).text
        found = locate_source(text, src)
        assert found is not None, f"{name}: {src.display_heading()} not found in {src.path}"


# The bundled runs: the bundled questions through the local index (BM25) and through kimun's
# dense retrieval with all-MiniLM-L6-v2, judged by the bundled qrels.

RUN = DATA / "run.jsonl"
RUNS = [RUN, DATA / "run-dense.jsonl"]


def _ids(name: str) -> set[str]:
    return set(pd.read_csv(DATA / name, sep="\t", dtype=str)["query_id"])


@pytest.fixture(scope="module", params=RUNS, ids=lambda p: p.name)
def run_records(request: pytest.FixtureRequest) -> list[dict[str, Any]]:
    lines = request.param.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def test_every_run_turn_is_a_bundled_question_with_judgments(
    run_records: list[dict[str, Any]],
) -> None:
    turn_ids = [record["id"] for record in run_records]
    assert len(turn_ids) == len(set(turn_ids))
    assert set(turn_ids) == _ids("queries.tsv"), "one turn per bundled question"
    assert set(turn_ids) <= _ids("qrels.tsv"), "every turn is judged"


def test_every_run_source_is_a_vault_note_with_the_same_hash(
    vault: Vault, run_records: list[dict[str, Any]]
) -> None:
    for record in run_records:
        assert record["chunks"], f"{record['id']} retrieved nothing"
        for chunk in record["chunks"]:
            note = vault.note(chunk["path"])
            assert chunk["hash"] == note.hash, f"{record['id']}: {chunk['path']} is stale"


def test_every_judged_path_is_a_vault_note(vault: Vault) -> None:
    qrels = pd.read_csv(DATA / "qrels.tsv", sep="\t", dtype=str)
    missing = sorted(p for p in set(qrels["path"]) if not (vault.root / p).is_file())
    assert missing == []
    for path in set(qrels["path"]):
        vault.note(path)


def test_the_bundled_runs_are_up_to_date(minilm_env: Path) -> None:
    """Both runs as ``scripts/make_sample_run.py`` makes them (the dense one offline, with the
    session's build of the model)."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "make_sample_run.py"), "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert done.returncode == 0, done.stderr


def test_the_dense_check_tolerates_the_last_digits_and_nothing_else() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "make_sample_run", ROOT / "scripts" / "make_sample_run.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text = (DATA / "run-dense.jsonl").read_text(encoding="utf-8")
    records = [json.loads(line) for line in text.splitlines()]
    records[0]["chunks"][0]["similarity_score"] += 4e-6
    nudged = "\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n"
    assert module.same_run(text, nudged, module.TOLERANCE)
    records[0]["chunks"][0]["similarity_score"] += 1e-4
    moved = "\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n"
    assert not module.same_run(text, moved, module.TOLERANCE)
    records[0]["chunks"][0]["path"] = "elsewhere.md"
    assert not module.same_run(text, "\n".join(json.dumps(r) for r in records) + "\n", 1.0)


@pytest.mark.parametrize("run", RUNS, ids=lambda p: p.name)
@pytest.mark.parametrize("level", ["note", "section"])
def test_the_bundled_run_scores_against_the_bundled_judgments(
    level: Literal["note", "section"], run: Path
) -> None:
    ev = evaluate(
        sources_frame(run),
        read_qrels(DATA / "qrels.tsv"),
        ["ndcg@10", "mrr", "recall@10"],
        level=level,
    )
    assert len(ev.per_query) == len(_ids("queries.tsv"))
    assert np.isfinite(ev.mean.to_numpy()).all()
    assert (ev.mean > 0).all()
