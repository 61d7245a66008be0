"""askkit.metrics.runs: TREC runs on disk, read and written as evaluate ranks them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from askkit.errors import SchemaError, UsageError
from askkit.metrics import evaluate
from askkit.metrics.qrels import read_qrels, write_qrels
from askkit.metrics.runs import (
    check_scorable,
    load_run,
    load_turn_log,
    read_run,
    read_trec_run,
    run_kind,
    write_run,
)
from tests.cli.bounded import run_cli
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
    path.write_text("q%201 Q0 a.md#Bake%20log 1 2.5 bm25\nq2 Q0 b.md 1 -1e-3 bm25\n", "utf-8")
    run = read_trec_run(path)
    assert list(run.columns) == ["turn_id", "doc", "rank", "score", "tag"]
    assert run["turn_id"].tolist() == ["q%201", "q2"]  # exact: never decoded
    assert run["doc"].tolist() == ["a.md#Bake%20log", "b.md"]
    assert run["rank"].dtype == np.int64
    assert run["score"].iloc[0] == 2.5
    assert run["score"].iloc[1] == -0.001  # a NaN score is refused: see hardening_39
    path.write_text("q1 Q0 a.md 1 2.5 bm25\nq1 Q0 b.md two 1.0 bm25\n", "utf-8")
    with pytest.raises(SchemaError, match="rank must be an integer") as info:
        read_trec_run(path)
    assert info.value.line == 2
    path.write_text("q1 Q0 a.md 1 2.5\n", "utf-8")
    with pytest.raises(SchemaError, match="a run line has at least 6 whitespace-separated fields"):
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


# --- issue 39, minor: NaN and infinite scores in a TREC run ------------------------------
#
# trec_eval reads a score with atof, which takes "nan", "inf" and "1e999" (as inf),
# and sorts with a comparator that a NaN answers "tied" with every score: the NaN
# document's rank then depends on its id and on qsort (pytrec_eval ranks a NaN "z"
# first and a NaN "a" last). askkit refuses such a score where a run is read or written.

NON_FINITE = ["nan", "inf", "-inf", "NaN", "1e999"]


def _run_file(path: Path, score: str, *, clean: bool) -> Path:
    """A run whose second line holds ``score``; ``clean``: single spaces only (pyarrow's
    CSV path), else a comment and doubled spaces (the general path)."""
    lines = ["q1 Q0 a.md 1 2.5 r", f"q1 Q0 b.md 2 {score} r", "q1 Q0 c.md 3 1.0 r"]
    if not clean:
        lines = ["q1  Q0 a.md 1 2.5 r", f"q1 Q0  b.md 2 {score} r", "# a comment", lines[2]]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("clean", [True, False], ids=["csv-path", "general-path"])
@pytest.mark.parametrize("score", NON_FINITE)
def test_hardening_39_minor_non_finite_scores_are_refused_naming_file_line_field_and_value(
    tmp_path: Path, score: str, clean: bool
) -> None:
    path = _run_file(tmp_path / "run.trec", score, clean=clean)
    for reader in (read_trec_run, read_run):
        with pytest.raises(SchemaError, match="finite number") as info:
            reader(path)
        error = info.value
        assert (error.file, error.line, error.field, error.value) == (str(path), 2, "score", score)
        assert str(error).startswith(f"{path}:2: score: ")


@pytest.mark.parametrize("score", NON_FINITE)
def test_hardening_39_minor_non_finite_scores_are_skipped_and_reported_when_lenient(
    tmp_path: Path, score: str
) -> None:
    path = _run_file(tmp_path / "run.trec", score, clean=True)
    loaded = read_run(path, strict=False)
    assert loaded.frame["doc"].tolist() == ["a.md", "c.md"]
    assert bool(np.isfinite(loaded.frame["score"]).all())
    assert loaded.errors[["line", "field", "value"]].to_dict("records") == [
        {"line": 2, "field": "score", "value": repr(score)}
    ]
    assert loaded.records == 3 == loaded.records_loaded + len(loaded.errors)


def _bundled_runs(folder: Path, score: str) -> tuple[Path, Path]:
    """The bundled turn log as a TREC run, and the same with ``score`` on line 2."""
    from askkit.frame import sources_frame

    good, bad = folder / "good.trec", folder / "bad.trec"
    write_run(sources_frame(DATA / "run.jsonl"), good)
    lines = good.read_text(encoding="utf-8").splitlines(keepends=True)
    fields = lines[1].split(" ")
    fields[4] = score
    lines[1] = " ".join(fields)
    bad.write_text("".join(lines), encoding="utf-8")
    return good, bad


@pytest.mark.parametrize("command", ["eval", "diff"])
def test_hardening_39_minor_non_finite_scores_fail_eval_and_diff_in_one_line(
    tmp_path: Path, command: str
) -> None:
    good, bad = _bundled_runs(tmp_path, "nan")
    qrels = str(DATA / "qrels.tsv")

    def args(run: Path) -> list[str]:
        return [qrels, str(run)] if command == "eval" else [str(good), str(run), "--qrels", qrels]

    assert run_cli([command, *args(good)]).returncode == 0  # the same run with its score intact
    out = run_cli([command, *args(bad)])
    assert out.returncode == 2, out.stderr
    assert out.stdout == ""
    lines = out.stderr.splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("askkit: error: ")
    assert f"{bad}:2: score: " in lines[0]
    assert "finite number" in lines[0]
    assert lines[0].endswith("got 'nan'")


def test_hardening_39_minor_non_finite_scores_are_skipped_by_eval_lenient(tmp_path: Path) -> None:
    _, bad = _bundled_runs(tmp_path, "1e999")
    out = run_cli(["eval", str(DATA / "qrels.tsv"), str(bad), "--lenient", "-m", "map"])
    assert out.returncode == 0, out.stderr
    assert f"run: 1 of 370 records skipped (first: {bad}:2: score must be a finite" in out.stderr
    assert "num_q" in out.stdout


@pytest.mark.parametrize("score", [float("nan"), float("inf"), float("-inf"), None])
def test_hardening_39_minor_write_run_refuses_a_non_finite_score_naming_query_and_document(
    tmp_path: Path, score: float | None
) -> None:
    run = pd.DataFrame(
        {
            "turn_id": ["q1", "q2", "q2"],
            "path": ["a.md", "b.md", "c.md"],
            "score": pd.array([1.0, 2.0, score], dtype="Float64"),
        }
    )
    target = tmp_path / "run.trec"
    with pytest.raises(SchemaError, match="finite number") as info:
        write_run(run, target)
    error = info.value
    assert error.field == "score"
    assert "'q2'" in error.message
    assert "'c.md'" in error.message
    assert repr(error.value) == repr(float("nan") if score is None else score)  # as ranked
    assert not target.exists()


# --------------------------------------------------------------------------- issue 41


def test_issue41_3_load_run_reads_a_turn_log_and_its_trec_run_alike(tmp_path: Path) -> None:
    """The one reader of every command: a turn log and the TREC run written from it
    score the same (eval, diff and report all read through it)."""
    from askkit.frame import sources_frame

    trec = tmp_path / "run.trec"
    write_run(sources_frame(DATA / "run.jsonl"), trec)
    log = load_run(DATA / "run.jsonl")
    run = load_run(trec)
    assert (run_kind(DATA / "run.jsonl"), run_kind(trec)) == ("turn log", "TREC run")
    assert "question" in log.columns
    assert list(run.columns) == ["turn_id", "doc", "rank", "score", "tag"]
    measures = ["ndcg@10", "map", "mrr"]
    a = evaluate(log, DATA / "qrels.tsv", measures).per_query
    b = evaluate(run, DATA / "qrels.tsv", measures).per_query
    pd.testing.assert_frame_equal(a, b)
    lenient = load_run(trec, strict=False)
    assert lenient.records == len(run)
    assert not len(lenient.errors)
    bad = tmp_path / "bad.jsonl"  # a turn log's error names its file and line
    bad.write_text('{"id": "q1", "chunks": [{"path": 7}]}\n', encoding="utf-8")
    with pytest.raises(SchemaError) as info:
        load_run(bad)
    assert (info.value.file, info.value.line) == (str(bad), 1)


def test_issue41_3_load_turn_log_refuses_a_trec_run_saying_what_is_needed(
    tmp_path: Path,
) -> None:
    from askkit.frame import sources_frame

    trec = tmp_path / "run.trec"
    write_run(sources_frame(DATA / "run.jsonl"), trec)
    with pytest.raises(SchemaError) as info:
        load_turn_log(trec, needs="the sweep replays each turn's chunks")
    assert str(info.value) == (
        f"{trec}: a TREC run holds ranked documents only, but the sweep replays each turn's "
        "chunks: give a turn log (JSONL or a JSON payload) of the same questions"
    )
    assert len(load_turn_log(DATA / "run.jsonl", needs="x")) == 370


def test_issue41_6_check_scorable_names_what_is_empty() -> None:
    qrels = read_qrels(DATA / "qrels.tsv")
    run = pd.DataFrame({"turn_id": ["q01"], "doc": ["nowhere.md"], "score": [1.0]})
    check_scorable(run, qrels)  # judged queries, unjudged documents: scorable (all 0)
    check_scorable(run, None)
    with pytest.raises(SchemaError, match=r"^q.tsv: holds no judgments \("):
        check_scorable(run, qrels.head(0), qrels_file="q.tsv")
    with pytest.raises(SchemaError, match=r"^the qrels holds no judgments"):
        check_scorable(run, qrels.head(0))
    with pytest.raises(SchemaError, match=r"^r.trec: holds no ranked documents \(no line"):
        check_scorable(run.head(0), qrels, run_file="r.trec")
    with pytest.raises(SchemaError, match=r"holds no ranked documents \(no turn with a source"):
        check_scorable(pd.DataFrame({"turn_id": [], "question": []}), None, run_file="l.jsonl")
    with pytest.raises(UsageError) as info:
        check_scorable(run.assign(turn_id="Q01"), qrels, run_file="r.trec", qrels_file="q.tsv")
    assert str(info.value) == (
        "r.trec and q.tsv share no query id, so nothing can be scored. Run ids: Q01; judged "
        "ids: q01, q02, q03. Likely cause: the ids differ only in case ('Q01' in the run, "
        "'q01' judged)."
    )
    check_scorable(run.assign(turn_id="Q01"), qrels, shared=False)


def test_issue41_3_a_trec_run_is_decoded_only_when_more_of_it_meets_the_judgments() -> None:
    """TREC ids are opaque (trec_eval's convention): read as written unless decoding
    them makes more of the run meet the judgments (a path holding a space, encoded)."""
    from askkit.metrics.runs import decoded_if_encoded

    run = pd.DataFrame(
        {"turn_id": ["q1", "q1"], "doc": ["a%20b.md", "c%20d.md"], "score": [2.0, 1.0]}
    )
    paths = pd.DataFrame({"query_id": ["q1"], "path": ["a b.md"], "grade": [1]})
    decoded, note = decoded_if_encoded(run, paths, run_file="r.trec")
    assert decoded["doc"].tolist() == ["a b.md", "c d.md"]
    assert note is not None
    assert note.startswith("r.trec: ")
    assert "1 judged documents meet" in note
    # judgments that hold the encoded ids (a note named a%20b.md): read as written
    literal = pd.DataFrame({"query_id": ["q1"], "path": ["a%20b.md"], "grade": [1]})
    same, none = decoded_if_encoded(run, literal)
    assert none is None
    assert same is run
    # a turn log (no doc column) and ids that decode to themselves are left alone
    plain = run.assign(doc=["a.md", "b.md"])
    assert decoded_if_encoded(plain, paths) == (plain, None)
