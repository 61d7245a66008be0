"""``askkit why``: the funnel, the lost sections and what would keep them, in a terminal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from askkit.cli import main
from askkit.testing.embed_servers import EmbedTestServer
from tests.conftest import DATA

QRELS = str(DATA / "qrels.tsv")
QUERIES = str(DATA / "queries.tsv")
VAULT = str(DATA / "vault")
VAULT_ARGS = ["why", "--qrels", QRELS, "--vault", VAULT, "--queries", QUERIES]


@pytest.fixture(autouse=True)
def _wide_and_cached(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("COLUMNS", "1000")  # one error line, never wrapped
    monkeypatch.setenv("ASKKIT_CACHE_DIR", str(tmp_path / "cache"))


def error_of(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    return err


def test_a_vault_prints_the_funnel_the_losses_and_the_changes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(VAULT_ARGS) == 0
    out = capsys.readouterr().out
    assert "settings: score-range cutoff=0.4" in out
    rows = [line.replace("│", " ").split() for line in out.splitlines()]
    total = " ".join(next(row for row in rows if row[:1] == ["total"]))
    assert [int(x) for x in total.replace("│", " ").split()[1:]] == [104, 104, 100, 100, 81, 81, 23]
    assert "normalised 0.32 < cutoff 0.40" in out
    assert "what would keep them" in out
    assert "fixed top_k=25" in out


def test_one_query_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*VAULT_ARGS, "--query", "q25", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    stops = {row["section"]: row for row in out["sections"]}
    assert stops["language/french.md#Le subjonctif"]["stage"] == "cut"
    assert stops["language/french.md#Le subjonctif"]["rank"] == 27
    assert stops["journal/2026-02-11.md#Evening"]["ordinal"] == 1
    changes = {row["change"]: row["suggested"] for row in out["what_if"]}
    assert changes["top_k"] == "fixed top_k=27"
    assert changes["score_range_cutoff"] == "cutoff 0.4 -> 0.379"


def test_settings_from_a_server_toml(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    toml = tmp_path / "server.toml"
    toml.write_text('[reranker]\ncontext_cut = "fixed"\ntop_k = 40\n')
    assert main([*VAULT_ARGS, "--settings", str(toml), "--query", "q25", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["settings"] == "fixed top_k=40"
    assert {row["stage"] for row in out["sections"]} == {"context"}


def test_a_turn_log_traces_its_answers_context(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["why", str(DATA / "run.jsonl"), "--qrels", QRELS, "--top", "3"]) == 0
    out = capsys.readouterr().out
    assert "not among the answer's 10 logged sources" in out
    assert "settings:" not in out


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["why", "--qrels", QRELS], "give either a turn LOG or --vault"),
        (["why", "--vault", VAULT, "--qrels", QRELS], "--vault needs --queries"),
        ([*VAULT_ARGS, "--query", "q99"], "--query: 'q99' has no judgments"),
        (
            ["why", str(DATA / "run.jsonl"), "--qrels", QRELS, "--queries", QUERIES],
            "go with --vault",
        ),
        ([*VAULT_ARGS, "--settings", str(DATA / "qrels.tsv")], "qrels.tsv"),
        ([*VAULT_ARGS, "--top", "0"], "--top"),
        (["why", str(DATA / "turns.jsonl"), "--qrels", QRELS], "no turn id has a judged relevant"),
    ],
)
def test_bad_inputs_are_one_line_and_status_2(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert says in error_of(argv, capsys)


@pytest.mark.slow
def test_kimuns_dense_retrieval_with_the_real_model(
    minilm_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [*VAULT_ARGS, "--embedder", "fastembed:AllMiniLML6V2", "--query", "q01", "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    stops = {row["section"]: row for row in out["sections"]}
    evening = stops["journal/2026-01-12.md#Evening"]
    assert (evening["stage"], evening["rank"]) == ("cut", 63)
    assert stops["projects/sourdough.md#Feeding schedule"]["stage"] == "context"
    assert {row["suggested"] for row in out["what_if"]} >= {"fixed top_k=63"}


@pytest.mark.slow
def test_a_reranker_moves_sections_through_the_pool_it_reranks(
    minilm_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With --reranker the trace reranks the dense pool as the server does: the reranker's
    calls carry the whole pool, and the rerank row says where each section went."""
    dense = [*VAULT_ARGS, "--embedder", "fastembed:AllMiniLML6V2", "--query", "q01", "--json"]
    with EmbedTestServer(dim=16) as server:
        assert main([*dense, "--reranker", f"http:{server.v1_url}:rerank-1"]) == 0
        calls = server.requests_to("rerank")
    reranked = json.loads(capsys.readouterr().out)
    assert calls
    assert all(len(c.json()["documents"]) == 80 for c in calls)
    assert main(dense) == 0
    plain = json.loads(capsys.readouterr().out)
    assert reranked["sections"] != plain["sections"]  # word overlap reorders the pool
    assert (
        main(["why", "--qrels", QRELS, "--reranker", "fastembed", str(DATA / "turns.jsonl")]) == 2
    )
    assert "--reranker reranks kimun's dense pool" in capsys.readouterr().err
