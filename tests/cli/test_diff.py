"""``askkit diff``: the gate's exit statuses, reports and files, as a CI job runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from askkit.gate import GateResult
from askkit.metrics import write_run
from tests.conftest import DATA, ROOT
from tests.gate.conftest import bundled, pushed_down

QRELS = str(DATA / "qrels.tsv")
RUN = str(DATA / "run.jsonl")
SPOT = ("--vault", str(DATA / "vault"), "--queries", str(DATA / "queries.tsv"))


def diff(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200", "HF_HUB_OFFLINE": "1"}
    env.pop("ASKKIT_TRACEBACK", None)
    return subprocess.run(
        [sys.executable, "-m", "askkit.cli", "diff", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
        check=False,
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str, list[str]]:
    """The bundled run and the same with relevant notes pushed down, as TREC runs."""
    folder = tmp_path_factory.mktemp("runs")
    new, chosen = pushed_down(bundled())
    write_run(bundled(), folder / "base.trec")
    write_run(new, folder / "new.trec")
    return str(folder / "base.trec"), str(folder / "new.trec"), chosen


def test_a_run_against_itself_exits_0() -> None:
    out = diff(RUN, RUN, "--qrels", QRELS)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("PASS: no measure dropped significantly")
    assert out.stderr == ""


def test_a_regression_exits_1_and_lists_the_queries(runs: tuple[str, str, list[str]]) -> None:
    base, new, chosen = runs
    out = diff(base, new, "--qrels", QRELS, "--show", "100")
    assert out.returncode == 1, out.stderr
    assert out.stdout.startswith("FAIL: ndcg@10, recall@10 dropped significantly")
    listed = [line.split(":")[0].strip() for line in out.stdout.splitlines() if line[:3] == "  q"]
    assert sorted(listed) == sorted(chosen)
    assert "left the top 10" in out.stdout


def test_improvements_exit_0(runs: tuple[str, str, list[str]]) -> None:
    base, new, _ = runs
    out = diff(new, base, "--qrels", QRELS, "--test", "t-test")
    assert out.returncode == 0, out.stderr
    assert "improved" in out.stdout


def test_min_delta_and_max_unjudged(runs: tuple[str, str, list[str]]) -> None:
    base, new, _ = runs
    assert diff(base, new, "--qrels", QRELS, "--min-delta", "0.9").returncode == 0
    out = diff(RUN, RUN, "--qrels", QRELS, "--max-unjudged", "0.5")
    assert out.returncode == 1
    assert "problem: 80.0% of NEW's top 10 is unjudged" in out.stdout


def test_each_format(runs: tuple[str, str, list[str]], tmp_path: Path) -> None:
    base, new, _ = runs
    junit, md = tmp_path / "ci" / "gate.xml", tmp_path / "comment.md"
    out = diff(base, new, "--qrels", QRELS, "--junit", str(junit), "--markdown", str(md), "--json")
    assert out.returncode == 1, out.stderr
    result = GateResult.from_json(out.stdout)
    assert result.exit_status == 1
    assert result.base.provenance["file"] == base
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None
    assert [c.get("name") for c in suite.findall("testcase")] == ["ndcg@10", "recall@10"]
    assert len(suite.findall("testcase/failure")) == 2
    assert md.read_text(encoding="utf-8").startswith("<!-- askkit diff -->\n### ❌ FAIL")
    again = diff(base, new, "--qrels", QRELS, "--junit", str(junit), "--markdown", str(md))
    assert again.returncode == 1
    assert again.stdout.startswith("FAIL")
    md_out = diff(base, new, "--qrels", QRELS, "--markdown")
    assert md_out.stdout == md.read_text(encoding="utf-8")
    assert json.loads(diff(RUN, RUN, "--qrels", QRELS, "--json=-").stdout)["passed"] is True


def test_bad_inputs_exit_2_with_one_line(runs: tuple[str, str, list[str]], tmp_path: Path) -> None:
    base, _, _ = runs
    fewer = tmp_path / "fewer.trec"
    lines = Path(base).read_text(encoding="utf-8").splitlines()
    fewer.write_text("\n".join(x for x in lines if not x.startswith("q01 ")) + "\n")
    foreign = tmp_path / "notes.xml"
    foreign.write_text("<mine/>")
    bad = tmp_path / "bad.trec"
    bad.write_text("q01 Q0 a.md 1 high sys\n")
    cases = {
        "different queries": (base, str(fewer), "--qrels", QRELS),
        "a foreign output file": (base, base, "--qrels", QRELS, "--junit", str(foreign)),
        "two formats on stdout": (base, base, "--qrels", QRELS, "--json=-", "--junit=-"),
        "a malformed run": (base, str(bad), "--qrels", QRELS),
        "no NEW": (base, "--qrels", QRELS),
        "unknown test": (base, base, "--qrels", QRELS, "--test", "z"),
        "a reranker without an embedder": (*SPOT, "--qrels", QRELS, "--new-reranker", "fastembed"),
    }
    for name, argv in cases.items():
        out = diff(*argv)
        assert out.returncode == 2, (name, out.stdout, out.stderr)
        assert out.stderr.startswith("askkit: error: "), name
        assert out.stderr.count("\n") == 1, name
        assert "Traceback" not in out.stderr, name
        assert out.stdout == "", name
    said = diff(*cases["different queries"]).stderr
    assert "BASE lacks 0 and NEW lacks 1" in said
    assert "--allow-partial" in said
    assert foreign.read_text() == "<mine/>"
    assert "bad.trec:1" in diff(*cases["a malformed run"]).stderr
    partial = diff(base, str(fewer), "--qrels", QRELS, "--allow-partial")
    assert partial.returncode == 0
    assert "partial comparison on 36 queries" in partial.stdout
    forced = diff(base, base, "--qrels", QRELS, "--junit", str(foreign), "--force")
    assert forced.returncode == 0
    assert foreign.read_text().startswith("<?xml")


def test_configurations_run_on_the_spot(tmp_path: Path) -> None:
    spot = ("--vault", str(DATA / "vault"), "--queries", str(DATA / "queries.tsv"))
    same = diff(*spot, "--qrels", QRELS)
    assert same.returncode == 0, same.stderr
    assert "retriever BM25" in same.stdout
    toml = tmp_path / "server.toml"
    toml.write_text('[reranker]\ncontext_cut = "fixed"\ntop_k = 3\n')
    worse = diff(*spot, "--qrels", QRELS, "--new-settings", str(toml), "--json")
    assert worse.returncode == 1, worse.stderr
    result = GateResult.from_json(worse.stdout)
    assert result.new.provenance["settings_file"] == str(toml)
    assert {d.stage for q in result.regressed_queries for d in q.lost} == {"cut"}
    toml.write_text("[reranker]\ntop_k = -1\n")
    bad = diff(*spot, "--qrels", QRELS, "--new-settings", str(toml))
    assert bad.returncode == 2
    assert bad.stderr.startswith(f"askkit: error: {toml}: reranker.top_k")
    both = diff(RUN, RUN, *spot, "--qrels", QRELS)
    assert both.returncode == 2
    assert "not both" in both.stderr


def test_a_dense_configuration_with_the_real_model_offline(minilm_env: Path) -> None:
    """BM25 against kimun's dense retrieval with all-MiniLM-L6-v2 (askkit's offline build):
    the embedder's fingerprint is recorded, and a real model is not called a stand-in."""
    out = diff(
        "--vault",
        str(DATA / "vault"),
        "--queries",
        str(DATA / "queries.tsv"),
        "--qrels",
        QRELS,
        "--new-embedder",
        "fastembed:AllMiniLML6V2",
        "--level",
        "section",
        "--json",
    )
    assert out.returncode in {0, 1}, out.stderr
    result = GateResult.from_json(out.stdout)
    assert result.new.provenance["embedder_fingerprint"] == "fastembed:allminilml6v2:384"
    assert "embedder_note" not in result.new.provenance
    assert result.base.provenance["retriever"].startswith("BM25")
    assert result.queries == 37
