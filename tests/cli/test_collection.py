"""``askkit collection``: a test collection turned into a vault from the command line, and the
recipe that follows it (index, run, eval) scored as pytrec_eval scores it."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest
import pytrec_eval

from askkit.cli import main
from askkit.frame import sources_frame
from askkit.metrics import write_run
from askkit.retrieve import LocalIndex
from tests.conftest import ROOT
from tests.corpora import corpus


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``askkit ARGS`` in a fresh process, its output in pipes."""
    return subprocess.run(
        [sys.executable, "-m", "askkit.cli", *args],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "COLUMNS": "200"},
    )


def smart(root: Path, documents: int = 3, qrels: str = "1 1 2\n1 2 -1\n2 3 4\n") -> Path:
    """A small collection in Cranfield's layout."""
    root.mkdir(parents=True)
    records = "".join(
        f".I {i}\n.T\nwing {i} .\n.A\nauthor {i}\n.W\nlift of wing {i}\nat speed .\n"
        for i in range(1, documents + 1)
    )
    (root / "cran.all.1400").write_text(records)
    (root / "cran.qry").write_text(".I 001\n.W\nwing lift .\n.I 004\n.W\nwing speed .\n")
    (root / "cranqrel").write_text(qrels)
    return root


def test_issue41_8_collection_turns_cranfield_into_a_vault_and_the_recipe_scores_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    vault = tmp_path / "cranfield"
    assert main(["collection", str(corpus("cranfield")), "-o", str(vault)]) == 0
    out = capsys.readouterr().out
    for said in (
        "(smart layout; documents: cran.all.1400; queries: cran.qry; judgments: cranqrel)",
        "  documents  1,400\n",
        "  queries    225\n",
        "  judgments  1,837 for 225 queries, 1,612 relevant (by grade: 0: 225, 1: 128, 2: 387, "
        "3: 734, 4: 363)",
        "  grades     cranqrel's codes as ir_datasets reads them: -1 (no interest) -> 0",
        "the judgments number the queries 1..225 in file order",
        f"wrote the vault {vault}: 1,400 notes, one per document",
        f"  queries    {vault}/queries.tsv",
        f"  qrels      {vault}/qrels.tsv",
        f"  askkit index {vault}\n",
        f"  askkit run --vault {vault} --queries {vault}/queries.tsv -o run.trec\n",
        f"  askkit eval {vault}/qrels.tsv run.trec\n",
    ):
        assert said in out
    # the recipe: BM25 over the vault, a TREC run, askkit eval on the written qrels.tsv
    index = LocalIndex(vault, cache_dir=False, progress=False)
    with (vault / "queries.tsv").open(encoding="utf-8") as handle:
        queries = {row["query_id"]: row["text"] for row in csv.DictReader(handle, delimiter="\t")}
    turns = [
        {"id": q, "question": text, "chunks": [c.to_dict() for c in index.search(text, k=80)]}
        for q, text in queries.items()
    ]
    write_run(sources_frame(turns), tmp_path / "run.trec")
    assert (
        main(["eval", str(vault / "qrels.tsv"), str(tmp_path / "run.trec"), "-m", "ndcg@10,map"])
        == 0
    )
    printed = {
        line.split()[0]: float(line.split()[2])
        for line in capsys.readouterr().out.splitlines()
        if line.split()[:2] in (["ndcg@10", "all"], ["map", "all"])
    }
    judged: dict[str, dict[str, int]] = {}
    with (vault / "qrels.tsv").open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            judged.setdefault(row["query_id"], {})[row["path"]] = int(row["grade"])
    run: dict[str, dict[str, float]] = {}
    for line in (tmp_path / "run.trec").read_text().splitlines():
        qid, _, doc, _, score, _ = line.split()
        run.setdefault(qid, {})[doc] = float(score)
    values = pytrec_eval.RelevanceEvaluator(judged, {"ndcg_cut.10", "map"}).evaluate(run)
    for ours, theirs in (("ndcg@10", "ndcg_cut_10"), ("map", "map")):
        mean = sum(v[theirs] for v in values.values()) / len(values)
        assert printed[ours] == pytest.approx(mean, abs=5e-5)  # printed to 4 decimals


def test_issue41_8_collection_cleverdons_grades_and_a_rewrite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    source, vault = smart(tmp_path / "c"), tmp_path / "v"
    assert main(["collection", str(source), "-o", str(vault), "--grades", "cleverdon"]) == 0
    out = capsys.readouterr().out
    assert "cranqrel's codes in Cleverdon's direction" in out
    assert "(by grade: 0: 1, 1: 1, 3: 1)" in out
    assert (vault / "qrels.tsv").read_text().splitlines()[1:] == [
        "1\t1.md\t\t3",
        "1\t2.md\t\t0",
        "2\t3.md\t\t1",
    ]
    assert main(["collection", str(source), "-o", str(vault)]) == 0  # its own folder: again
    assert "files replaced" in capsys.readouterr().out
    (vault / "1.md").write_text("# wing 1 .\n\nmy own words\n")
    assert main(["collection", str(source), "-o", str(vault)]) == 2
    err = capsys.readouterr().err
    assert "1.md: edited since askkit wrote it" in err
    assert (vault / "1.md").read_text() == "# wing 1 .\n\nmy own words\n"
    assert main(["collection", str(source), "-o", str(vault), "--force"]) == 0
    assert (vault / "1.md").read_text() == "# wing 1 .\n\nlift of wing 1\nat speed .\n"


@pytest.mark.parametrize(
    ("setup", "said"),
    [
        ("missing", "the collection does not exist: give the folder holding its files"),
        ("no layout", "not a test collection in a layout askkit reads"),
        ("foreign output", "not empty, and not a vault askkit wrote"),
        ("output a file", "not a folder; give a new or empty folder for the vault"),
        ("bad cranqrel", "cranqrel:2: grade: a Cranfield judgment code is -1, 1, 2, 3 or 4"),
        ("beir without queries", "queries.jsonl: no queries.jsonl"),
    ],
)
def test_issue41_8_collection_errors_are_one_line(tmp_path: Path, setup: str, said: str) -> None:
    source, output = tmp_path / "collection", tmp_path / "vault"
    if setup == "no layout":
        (source / "notes").mkdir(parents=True)
        (source / "notes" / "a.md").write_text("# A\n")
    elif setup in ("foreign output", "output a file"):
        smart(source)
        if setup == "foreign output":
            output.mkdir()
            (output / "mine.md").write_text("# Mine\n")
        else:
            output.write_text("a file\n")
    elif setup == "bad cranqrel":
        smart(source, qrels="1 1 2\n1 2 7\n")
    elif setup == "beir without queries":
        source.mkdir()
        (source / "corpus.jsonl").write_text('{"_id": "a", "text": "x"}\n')
    out = cli("collection", str(source), "-o", str(output))
    assert out.returncode == 2
    assert out.stdout == ""  # the output folder is checked before anything is read
    lines = out.stderr.splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("askkit: error: ")
    assert said in lines[0]
    if setup == "foreign output":
        assert sorted(p.name for p in output.iterdir()) == ["mine.md"]


def test_issue41_8_collection_shows_its_progress_on_a_pipe(tmp_path: Path) -> None:
    source = smart(tmp_path / "c", documents=400)
    out = cli("collection", str(source), "-o", str(tmp_path / "v"))
    assert out.returncode == 0, out.stderr
    assert "writing the vault: 100% 402/402" in out.stderr  # 400 notes, queries, fields
    assert "\r" not in out.stderr
