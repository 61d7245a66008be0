"""``askkit diff``: the gate's exit statuses, reports and files, as a CI job runs it."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from askkit._outputs import is_askkit_output
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


# --------------------------------------------------------------------------- hardening (39)


def _run_main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``askkit diff ARGS`` in this process: (exit status, stdout, stderr)."""
    from askkit.cli import main

    status = main(["diff", *args])
    out = capsys.readouterr()
    return status, out.out, out.err


def test_hardening_39_1_a_file_that_mentions_askkit_diff_is_never_replaced(
    runs: tuple[str, str, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, new, _ = runs
    notes = tmp_path / "NOTES.md"
    notes.write_text("# Notes\n\nRun `askkit diff` in CI before merging.\n")
    workflow = tmp_path / "gate.yml"
    workflow.write_text("jobs:\n  gate:\n    steps:\n      - run: askkit diff base new\n")
    guide = tmp_path / "gate.md"
    guide.write_bytes((ROOT / "docs" / "gate.md").read_bytes())
    data = tmp_path / "data.json"
    data.write_text('{"tool": "askkit diff", "format": "askkit diff"}\n')
    before = {p: p.read_bytes() for p in (notes, workflow, guide, data)}
    for flag, target in [
        ("--markdown", notes),
        ("--junit", workflow),
        ("--markdown", guide),
        ("--json", data),
    ]:
        status, _, err = _run_main(capsys, base, new, "--qrels", QRELS, flag, str(target))
        assert status == 2, (flag, target)
        assert err.startswith(f"askkit: error: {flag} {target}: exists and is not an askkit")
        assert err.count("\n") == 1
    assert {p: p.read_bytes() for p in before} == before
    status, _, _ = _run_main(
        capsys, base, new, "--qrels", QRELS, "--markdown", str(notes), "--force"
    )
    assert status == 1
    assert notes.read_text().startswith("<!-- askkit diff -->\n")


def test_hardening_39_1_each_report_is_replaced_by_the_next_run_and_by_its_mark_only(
    runs: tuple[str, str, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, new, _ = runs
    files = {
        "--json": tmp_path / "g.json",
        "--markdown": tmp_path / "g.md",
        "--junit": tmp_path / "g.xml",
    }
    argv = [base, new, "--qrels", QRELS]
    for flag, path in files.items():
        argv += [flag, str(path)]
    assert _run_main(capsys, *argv)[0] == 1
    assert all(is_askkit_output(p) for p in files.values())
    for path in files.values():
        path.write_bytes(path.read_bytes() + b"\nedited by hand\n")
    assert _run_main(capsys, *argv)[0] == 1  # askkit's own reports: replaced
    assert not any(b"edited by hand" in p.read_bytes() for p in files.values())
    # the mark anywhere but at the start is no mark
    for path in files.values():
        path.write_bytes(b"\n" + path.read_bytes())
    assert _run_main(capsys, *argv)[0] == 2


def test_hardening_39_4_a_json_report_over_4_kb_is_replaced_by_the_next_run(
    runs: tuple[str, str, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, new, _ = runs
    report = tmp_path / "gate.json"
    many = "ndcg@10,recall@10,mrr,map,precision@10,r-precision,ndcg@5,recall@5,ndcg@20"
    argv = (base, new, "--qrels", QRELS, "-m", many, "-k", "100", "--json", str(report))
    assert _run_main(capsys, *argv)[0] == 1
    assert report.stat().st_size > 4096
    assert report.read_text().startswith('{\n  "format": "askkit diff",')
    report.write_text(report.read_text().replace('"seed": 0', '"seed": 7'))
    assert _run_main(capsys, *argv)[0] == 1
    assert GateResult.from_json(report.read_text()).seed == 0


def test_hardening_39_minor_two_formats_to_one_file_are_refused(
    runs: tuple[str, str, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, new, _ = runs
    same = tmp_path / "gate.out"
    for argv in [
        ("--markdown", str(same), "--junit", str(same)),
        ("--json=" + str(same), "--junit", str(same)),
    ]:
        status, _, err = _run_main(capsys, base, new, "--qrels", QRELS, *argv)
        assert status == 2
        assert "both write" in err
        assert not same.exists()
    assert _run_main(capsys, base, new, "--qrels", QRELS, "--markdown", str(same))[0] == 1
    written = same.read_bytes()
    alias = tmp_path / "alias.out"
    alias.symlink_to(same)
    status, _, err = _run_main(
        capsys, base, new, "--qrels", QRELS, "--markdown", str(same), "--junit", str(alias)
    )
    assert status == 2
    assert "--markdown and --junit both write" in err
    assert same.read_bytes() == written


def test_hardening_39_minor_a_dangling_link_as_output_is_refused(
    runs: tuple[str, str, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, new, _ = runs
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = tmp_path / "gate.json"
    link.symlink_to(elsewhere / "planted.json")
    status, _, err = _run_main(capsys, base, new, "--qrels", QRELS, "--json", str(link))
    assert status == 2
    assert "symbolic link" in err
    assert "does not exist" in err
    assert list(elsewhere.iterdir()) == []
    assert link.is_symlink()


def test_hardening_39_minor_gate_reports_get_the_umasks_mode_as_every_report(
    runs: tuple[str, str, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, _, _ = runs
    old = os.umask(0o022)
    try:
        status, _, _ = _run_main(
            capsys, base, base, "--qrels", QRELS, "--json", str(tmp_path / "g.json")
        )
    finally:
        os.umask(old)
    assert status == 0
    assert stat.S_IMODE((tmp_path / "g.json").stat().st_mode) == 0o644


@pytest.mark.parametrize("value", ["100000000000000000000000", "1e23", "1000001", "0"])
def test_hardening_39_minor_resamples_beyond_the_bound_are_refused_in_one_line(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = _run_main(capsys, RUN, RUN, "--qrels", QRELS, "--resamples", value)
    assert status == 2
    assert out == ""
    assert err.startswith("askkit: error: --resamples must be a whole number in 1..1000000")
    assert err.count("\n") == 1


def test_hardening_39_2_one_query_with_the_bootstrap_exits_0_and_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 rel.md 1\n")
    base, new = tmp_path / "base.trec", tmp_path / "new.trec"
    base.write_text("q1 Q0 rel.md 1 2.0 base\nq1 Q0 x.md 2 1.0 base\n")
    new.write_text("q1 Q0 x.md 1 2.0 new\nq1 Q0 rel.md 2 1.0 new\n")
    md = tmp_path / "gate.md"
    status, out, _ = _run_main(
        capsys, str(base), str(new), "--qrels", str(qrels), "--test", "bootstrap", "-m", "mrr",
        "--json", "--markdown", str(md),
    )  # fmt: skip
    assert status == 0
    data = json.loads(out)
    assert data["measures"][0]["p"] == 1.0
    assert "one query" in data["measures"][0]["note"]
    assert "one query" in md.read_text()


# --------------------------------------------------------------------------- issue 41


def test_issue41_4_every_format_says_the_level(tmp_path: Path) -> None:
    """Note level by default, as eval and report; text, Markdown, JSON and JUnit say it."""
    text = diff(RUN, RUN, "--qrels", QRELS)
    markdown = diff(RUN, RUN, "--qrels", QRELS, "--markdown")
    data = json.loads(diff(RUN, RUN, "--qrels", QRELS, "--json").stdout)
    junit = ET.fromstring(diff(RUN, RUN, "--qrels", QRELS, "--junit").stdout)
    assert "37 queries scored at note level, paired randomization test" in text.stdout
    assert "37 queries scored at note level" in markdown.stdout
    assert data["level"] == "note"
    assert data["measures"][0]["measure"] == "ndcg@10"
    assert round(data["measures"][0]["base"], 4) == 0.7205  # eval's and report's number
    props = {p.get("name"): p.get("value") for p in junit.iter("property")}
    assert props["level"] == "note"
    section = diff(RUN, RUN, "--qrels", QRELS, "--level", "section", "--junit")
    assert 'name="level" value="section"' in section.stdout


def test_issue41_6_empty_inputs_and_foreign_ids_are_refused_naming_the_file(
    tmp_path: Path,
) -> None:
    empty_run, empty_qrels = tmp_path / "empty.trec", tmp_path / "empty.tsv"
    empty_run.write_text("")
    empty_qrels.write_text("")
    said = {
        "empty BASE": (
            (str(empty_run), RUN, "--qrels", QRELS),
            f"{empty_run}: holds no ranked documents",
        ),
        "empty NEW": (
            (RUN, str(empty_run), "--qrels", QRELS),
            f"{empty_run}: holds no ranked documents",
        ),
        "empty qrels": (
            (RUN, RUN, "--qrels", str(empty_qrels)),
            f"{empty_qrels}: holds no judgments",
        ),
        "no shared id": (
            (str(DATA / "turns.jsonl"), RUN, "--qrels", QRELS),
            f"{DATA / 'turns.jsonl'} and {QRELS} share no query id, so nothing can be "
            "scored. Run ids: q-starter, q-acetone, q-oven; judged ids: q01, q02, q03.",
        ),
    }
    for name, (argv, message) in said.items():
        out = diff(*argv)
        assert out.returncode == 2, (name, out.stdout)
        assert out.stderr.startswith(f"askkit: error: {message}"), (name, out.stderr)
        assert out.stderr.count("\n") == 1, name
        assert out.stdout == "", name


@pytest.fixture(scope="module")
def unjudged_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str, str]:
    """BASE, a NEW that ranks ten unjudged notes above the relevant one, and the qrels."""
    from askkit.metrics import write_qrels
    from tests.gate.test_unjudged import base_run, qrels, reversing_new

    folder = tmp_path_factory.mktemp("unjudged")
    write_run(base_run(), folder / "base.trec")
    write_run(reversing_new(), folder / "new.trec")
    write_qrels(qrels(), folder / "qrels.tsv")
    return str(folder / "base.trec"), str(folder / "new.trec"), str(folder / "qrels.tsv")


@pytest.mark.parametrize(
    ("mode", "status"), [("ignore", 1), ("condensed", 0), ("bounds", 0), (None, 1)]
)
def test_issue42_unjudged_chooses_what_the_exit_status_rests_on(
    unjudged_runs: tuple[str, str, str], mode: str | None, status: int
) -> None:
    base, new, qrels = unjudged_runs
    extra = [] if mode is None else ["--unjudged", mode]
    out = diff(base, new, "--qrels", qrels, "-m", "ndcg@10", "--json", *extra)
    assert out.returncode == status, out.stderr
    data = json.loads(out.stdout)
    assert data["unjudged"] == (mode or "ignore")
    assert data["exit_status"] == status
    if mode != "condensed":
        (measure,) = data["measures"]
        assert measure["regressed"] is True
        assert measure["holds"] is False
        assert measure["depends_on"] == len(data["holes"]) > 0
    text = diff(base, new, "--qrels", qrels, "-m", "ndcg@10", *extra)
    assert f"(--unjudged {mode or 'ignore'})" in text.stdout


def test_issue42_bad_unjudged_options_exit_2(unjudged_runs: tuple[str, str, str]) -> None:
    base, new, qrels = unjudged_runs
    for extra in (["--unjudged", "guess"], ["--fill-grade", "-1"]):
        out = diff(base, new, "--qrels", qrels, *extra)
        assert out.returncode == 2
        assert out.stderr.count("\n") == 1


def test_issue42_holes_file_lists_what_the_verdict_depends_on_and_opens_in_the_labeler(
    tmp_path: Path, runs: tuple[str, str, list[str]]
) -> None:
    from askkit.gate import read_holes
    from askkit.metrics import read_qrels
    from askkit.widgets import Labeler

    base, new, _ = runs
    holes = tmp_path / "holes.tsv"
    out = diff(base, new, "--qrels", QRELS, "--json", "--holes", str(holes))
    assert out.returncode == 1, out.stderr
    data = json.loads(out.stdout)
    frame = read_holes(holes)
    assert len(frame) > 0
    # one row per section, the sides that ranked it joined: every hole of the result
    listed = {(h["query_id"], h["doc"]) for h in data["holes"]}
    assert set(zip(frame["query_id"], frame["doc"], strict=True)) == listed
    assert is_askkit_output(holes)
    judged = read_qrels(QRELS)
    assert not set(zip(frame["query_id"], frame["path"], strict=True)) & set(
        zip(judged["query_id"], judged["path"], strict=True)
    )  # note level: no hole is a judged note
    judgments = tmp_path / "judgments.tsv"
    lab = Labeler.from_holes(holes, DATA / "vault", judgments)
    assert f"hole 1 of {len(frame)}" in lab.hole_html.value
    # the pushed-down run's filler notes are not in the vault: the first real note
    at = next(i for i, p in enumerate(frame["path"]) if (DATA / "vault" / p).is_file())
    assert at > 0
    assert "not in the vault" in lab.hole_html.value  # said, not skipped silently
    lab.go(at)
    lab.grade_buttons[2].click()
    hole = frame.iloc[at]
    assert read_qrels(judgments).values.tolist() == [[hole["query_id"], hole["path"], "", 2]]
    # run again: the holes file is askkit's, so it is replaced; a foreign file is not
    again = diff(base, new, "--qrels", QRELS, "--holes", str(holes))
    assert again.returncode == 1, again.stderr
    foreign = tmp_path / "mine.tsv"
    foreign.write_text("my notes\n")
    refused = diff(base, new, "--qrels", QRELS, "--holes", str(foreign))
    assert refused.returncode == 2
    assert "not a holes file askkit wrote" in refused.stderr
    assert foreign.read_text() == "my notes\n"
