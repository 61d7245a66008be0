"""Each benchmark runs end to end at a small size and prints its rows and targets
(the figures are not checked: speed is measured in benchmarks/, never asserted in tests)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.corpora import corpus

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ROOT / "benchmarks"

pytestmark = pytest.mark.slow


def _run(*args: str, script: str = "frame_bench.py") -> str:
    out = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *args],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_frame_bench_prints_every_step_and_ratio(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    out = _run("--turns", "300", "--repeat", "1", "--file", str(log))
    assert log.stat().st_size > 0
    for label in ("(a) pyarrow.json.read_json", "(b) askkit", "(c) naive"):
        assert label in out
    assert "3,000" in out  # (b) and (c) read 300 turns x 10 sources
    for ratio in ("(b)/(a) wall", "(c)/(b) wall", "(b) peak RSS / frame"):
        assert ratio in out


def test_frame_bench_phases_time_each_rule_both_ways(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    _run("--turns", "200", "--repeat", "1", "--skip-naive", "--file", str(log))
    out = _run("--phases", "--repeat", "1", "--file", str(log))
    assert "2,000 sources" in out
    assert out.splitlines()[1].split()[1:3] == ["fallback", "compiled"]
    for rule in ("headings and match headings", "paths, notes, folders", "citations"):
        assert rule in out
    assert "compiled kernels built: True" in out


def test_metrics_bench_times_the_fast_and_the_exact_path() -> None:
    out = _run(
        "--queries", "300", "--no-ranx", "--repeat", "1", "--cold-repeat", "1",
        script="metrics_bench.py",
    )  # fmt: skip
    assert "fast path against the exact path" in out
    assert "largest absolute difference, fast path from exact path: 0" in out
    assert out.count("target ") >= 3


def test_metrics_bench_files_times_trec_files_against_pytrec_eval(tmp_path: Path) -> None:
    """TREC files in, each tool in a fresh process; askkit equals pytrec_eval. (The
    trec_eval binary row needs its source, ``--trec-eval-src``, which CI does not have.)"""
    out = _run(
        "--files", "--queries", "200", "--sources", "30", "--judged", "10",
        "--cold-repeat", "1", "--dir", str(tmp_path), script="metrics_bench.py",
    )  # fmt: skip
    assert "run: 200 queries x 30 = 6,000 lines" in out
    assert "qrels: 2,000 lines" in out
    assert out.count("target askkit parse+evaluate <= 0.5x pytrec_eval's") == 2
    assert "  askkit: 0\n" in out
    run = (tmp_path / "run.txt").read_text().splitlines()
    assert len(run) == 6000
    assert any("#" in line for line in run)  # ids kimun's path rules would change
    assert any(":" in line.split()[2] for line in run)


def test_metrics_bench_files_incomplete_times_the_measures_and_bounds(tmp_path: Path) -> None:
    """bpref, infAP and nDCG'@10 from TREC files, with the bounds of nDCG@10 in askkit's
    time; askkit equals pytrec_eval's two evaluators."""
    out = _run(
        "--files", "--incomplete", "--queries", "200", "--sources", "30", "--judged", "10",
        "--cold-repeat", "1", "--dir", str(tmp_path), script="metrics_bench.py",
    )  # fmt: skip
    assert out.count("target askkit parse+evaluate+bounds <= 0.5x pytrec_eval's") == 2
    askkit_row = next(line for line in out.splitlines() if line.startswith("askkit "))
    assert len(askkit_row.split()) == 1 + 7 * 2  # a best/median pair per column, bounds too
    assert "  askkit: 0\n" in out
    assert (tmp_path / "incomplete" / "qrels.txt").read_text().count(" -1\n") > 0


def test_metrics_bench_diff_times_askkit_diff_against_pytrec_eval(tmp_path: Path) -> None:
    """Two runs over the same documents with other scores; askkit's mean deltas equal
    pytrec_eval's."""
    out = _run(
        "--diff", "--queries", "200", "--sources", "30", "--judged", "10",
        "--cold-repeat", "1", "--dir", str(tmp_path), script="metrics_bench.py",
    )  # fmt: skip
    assert "two runs of 200 queries x 30 = 6,000 lines each" in out
    assert out.count("target askkit diff <= 0.5x pytrec_eval's") == 2
    worst = out.split("largest absolute difference of a mean delta from pytrec_eval's: ")[1]
    assert float(worst.split()[0]) < 1e-12
    base = (tmp_path / "run.txt").read_text().splitlines()
    new = (tmp_path / "new" / "run.txt").read_text().splitlines()
    assert [x.split()[:3] for x in base] == [x.split()[:3] for x in new]  # same documents
    assert [x.split()[4] for x in base] != [x.split()[4] for x in new]  # other scores
    assert (tmp_path / "qrels.txt").read_bytes() == (tmp_path / "new" / "qrels.txt").read_bytes()


def test_cut_bench_times_both_paths_and_they_agree() -> None:
    out = _run(
        "--queries", "200", "--loop-queries", "50", "--repeat", "1", script="cut_bench.py"
    )  # fmt: skip
    for label in ("columnar `sweep_cuts`", "per-query loop `sweep_cuts_reference`"):
        assert label in out
    assert "EXTRAPOLATED" in out
    assert "over the 13 numeric columns: 0" in out


def test_widgets_bench_times_the_list_case_against_the_frame_case() -> None:
    out = _run("--rows", "2000", "--repeat", "1", script="widgets_bench.py")
    for label in (
        "first page as static HTML (baseline)",
        "frame -> SourcesView + first page (baseline)",
        "AskSource list -> SourcesView + first page",
    ):
        assert label in out


def test_dense_bench_times_every_method_and_they_agree() -> None:
    out = _run(
        "--chunks",
        "3000",
        "--dim",
        "32",
        "--queries",
        "6",
        "--repeat",
        "1",
        "--texts",
        "300",
        script="dense_bench.py",
    )
    for label in (
        "(a) top-80 query over 3,000 stored 32-d chunks",
        "naive full sort: `matrix @ q`, `np.argsort` (baseline)",
        "askkit `exact_top_k`",
        "faiss `IndexFlatIP`",
        "usearch exact search",
        "(b) opening a kimun store of 3,000 32-d chunks",
        '`KimunStore(folder).load("notes")`',
        "(c) embedding 300 chunk texts",
        "askkit `FastEmbedEmbedder.embed_documents`",
        "(g) indexing 300 tiny notes",
        "of which writing the store",
    ):
        assert label in out
    assert out.count("same order for 6/6") == 5
    assert "(target <= 1.1x)" in out
    assert "writing the store / embedding, median:" in out
    assert "(target <= 0.2x)" in out


def test_bm25_variants_prints_each_variant_against_none() -> None:
    out = _run(script="bm25_variants.py")
    for variant in ("| none |", "| stopwords |", "| stemming |", "| both |"):
        assert variant in out
    assert "`both` against `stopwords`" in out
    assert "p (randomization, Holm)" in out


def test_dense_bench_times_the_real_model_and_many_pools(minilm_env: Path, tmp_path: Path) -> None:
    """(d), (e) on a two-note vault with the offline model, (f) on a small store."""
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "a.md").write_text("# Starter\n\nFeed it every 12 hours.\n", encoding="utf-8")
    (vault / "b.md").write_text("# Seeds\n\nSow tomatoes in March.\n", encoding="utf-8")
    out = _run(
        "--only-new", "--pools", "--real-model", "--repeat", "1", "--chunks", "2000",
        "--pool-queries", "20", "--vault", str(vault), "--obsidian", str(tmp_path / "none"),
        script="dense_bench.py",
    )  # fmt: skip
    assert "(d) embedding the 2 chunks of vault (" in out
    assert "throughput, askkit / raw onnxruntime (askkit's batches)" in out
    assert "(e) indexing with all-MiniLM-L6-v2" in out
    assert "Obsidian help: " in out  # skipped: no such folder
    assert "(f) the pools of 20 queries over 2,000 stored 384-d chunks" in out
    assert "the same pools, bit for bit (paths and scores): True" in out


def test_cranfield_compares_bm25_dense_and_hybrid_with_significance(minilm_env: Path) -> None:
    cranfield = corpus("cranfield")  # beside the clone: skips without it (CI=true: fails)
    out = _run(
        "--corpus", str(cranfield), "--queries", "8", "--docs", "60", "--resamples", "200",
        script="cranfield.py",
    )  # fmt: skip
    assert "60 documents, 8 queries" in out
    for run in ("| bm25 |", "| dense |", "| dense, unframed |", "| hybrid (rrf) |"):
        assert run in out
    assert "| hybrid (rrf) | ndcg@10 |" in out
    assert "p (randomization)" in out


def test_trace_bench_prints_both_paths_their_ratio_and_equality() -> None:
    out = _run(
        "--queries", "200", "--loop-queries", "50", "--repeat", "1", script="trace_bench.py"
    )  # fmt: skip
    assert "200 queries x 80 chunks x 3 relevant sections (600 sections)" in out
    assert "columnar `trace_pools`" in out
    assert "EXTRAPOLATED from 50 queries" in out
    assert "| frames equal (every column, every row) | True | True | met |" in out


def test_lab_start_times_a_cold_and_a_warm_start(tmp_path: Path) -> None:
    """A vault of 120 sections (two batches: a progress line each way); the warm start
    embeds nothing. (The benchmark's own vault is the Obsidian help, ../shared/corpora.)"""
    vault = tmp_path / "herbs"
    vault.mkdir()
    body = "".join(f"## Herb {i}\n\nHerb {i} grows best in sun.\n\n" for i in range(120))
    (vault / "herbs.md").write_text(f"# Herbs\n\n{body}", encoding="utf-8")
    out = _run("--vault", str(vault), "--repeat", "1", script="lab_start.py")
    assert f"vault: {vault}, 120 chunks; embedder fastembed:AllMiniLML6V2" in out
    for label in (
        "| cold start, empty cache: model built, vault indexed and embedded |",
        "| first start on a new vault, model already built |",
        "| warm start, unchanged vault, best / median of 1 |",
        "| `askkit --version` in a fresh process, best |",
    ):
        assert label in out
    assert "| chunks embedded: cold / new vault / warm | 120 / 120 / 0 | warm: 0 | met |" in out
    assert re.search(r"progress on its pipe: \d+ lines", out)
    assert re.search(r"120/120 \[\d\d:\d\d<00:00", out)


def test_embed_once_counts_what_each_command_sends_to_the_model(tmp_path: Path) -> None:
    """Two notes of 60 sections (120 chunks): ``askkit index --embedder`` embeds them, and
    ``search``, ``run`` and ``vault_side`` on the same vault send no chunk to the model."""
    vault = tmp_path / "herbs"
    vault.mkdir()
    line = "grows best in full sun, in well drained soil, with little water."
    for note in range(2):
        body = "".join(f"## Herb {i}\n\nHerb {i} {line}\n\n" for i in range(60))
        (vault / f"herbs-{note}.md").write_text(f"# Herbs {note}\n\n{body}", encoding="utf-8")
    out = _run("--vault", str(vault), "--questions", "5", script="embed_once.py")
    assert f"vault: {vault}; embedder fastembed:AllMiniLML6V2" in out
    rows = {
        "`askkit index --embedder`, empty store (cold)": r"1\.000x \| 120 \| 0 \| baseline",
        "`askkit search --vault --embedder`": r"\| 0 \| 1 \| 0 chunks \| met \|",
        "`askkit run --embedder`, 5 questions": r"\| 0 \| 5 \| 0 chunks \| met \|",
        "`vault_side` (`askkit diff --vault --new-embedder`)": r"\| 0 \| 5 \| 0 chunks \| met \|",
        "`vault_side(store=False)`: in memory, as diff did before": r"\| 120 \| 5 \|",
    }
    for label, counts in rows.items():
        row = next(r for r in out.splitlines() if r.startswith(f"| {label} |"))
        assert re.search(counts, row), row
    assert "chunks embedded after the first command: 0 (of 120)" in out


def test_cli_start_times_a_command_against_the_interpreter_and_the_search_alone() -> None:
    """On the sample vault, BM25 only, one run each: every row printed, the search's
    own time parsed from its title, the heavy libraries it loaded named."""
    out = _run("--vault", str(ROOT / "data" / "vault"), "--repeat", "1", "--no-dense",
               script="cli_start.py")  # fmt: skip
    for label in (
        "| `python -c pass` (baseline) |",
        '| `python -c "import askkit"` |',
        "| `askkit --help` |",
        "| `askkit search` BM25, end to end |",
    ):
        assert label in out, label
    row = next(line for line in out.splitlines() if line.startswith("| BM25 |"))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert float(cells[1]) > 0
    assert float(cells[2]) > 0
    assert float(cells[3]) > 0
    assert "bm25s" in cells[4]
    assert "httpx" not in cells[4]


def test_bounds_bench_prints_each_measure_against_pytrec_eval() -> None:
    out = _run(
        "--queries", "120", "--deep-queries", "20", "--repeat", "1", script="bounds_bench.py"
    )  # fmt: skip
    for measure in ("ndcg@10", "recall@10", "precision@10", "mrr", "bpref", "infap", "map"):
        assert any(line.startswith(measure) and "x  " in line for line in out.splitlines())
    assert "equals pytrec_eval's mean (checked" in out
