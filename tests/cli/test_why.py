"""``askkit why``: the funnel, the lost sections and what would keep them, in a terminal."""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from askkit.cli import main
from askkit.testing.embed_servers import EmbedTestServer
from tests.cli.bounded import run_cli
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
    counts = [int(x) for x in total.replace("│", " ").split()[1:]]
    assert counts == [104, 104, 100, 100, 81, 81, 23, 153]  # the last: unjudged_above
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


# -- hardening (issue 39): hostile vaults, judged queries the questions lack ----------------


def _env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "COLUMNS": "1000", "ASKKIT_CACHE_DIR": str(tmp_path / "cache")}


def _maybe(make: Callable[[], object]) -> None:
    """Make one hostile entry, unless the operating system refuses it."""
    with contextlib.suppress(OSError, NotImplementedError):
        make()


def _fifo(path: Path) -> None:
    mkfifo = getattr(os, "mkfifo", None)
    if mkfifo is None:
        raise NotImplementedError("no FIFOs here")
    mkfifo(path)


def _write_bytes_name(folder: Path, name: bytes, data: bytes) -> None:
    fd = os.open(os.fsencode(folder) + b"/" + name, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        os.write(fd, data)  # a name that is not UTF-8: bytes, which Path cannot hold
    finally:
        os.close(fd)


def hostile_vault(root: Path) -> Path:
    """A vault of one good note and the attack's entries, and a file outside it to guard.

    Links out of the vault (to a note, a FIFO, /dev/zero, a folder), a FIFO, a
    dangling link, a 50 MB note, a note of 20,000 headings, invalid UTF-8, NUL
    bytes, a name with a newline and one that is not UTF-8; what the operating
    system refuses to make is left out.
    """
    vault, outside = root / "vault", root / "outside"
    vault.mkdir()
    outside.mkdir()
    (outside / "secret.md").write_text("# Secret\nSECRET-OUTSIDE sourdough starter feed\n")
    (vault / "bread.md").write_text("# Bread\n## Starter\nFeed the sourdough starter daily.\n")
    (vault / "bad.md").write_bytes(b"# Bad\n\xff\xfe sourdough starter\n")
    (vault / "nuls.md").write_bytes(b"# Nuls\nrye \x00 flour\n")
    (vault / "many.md").write_text("".join(f"## h{i}\nline {i}\n" for i in range(20_000)))
    with (vault / "big.md").open("wb") as big:  # 50 MB (sparse): over the 16 MiB cap
        big.write(b"# Big\nsourdough starter\n")
        big.truncate(50 * 1000 * 1000)
    _maybe(lambda: _fifo(vault / "pipe.md"))
    _maybe(lambda: _fifo(outside / "pipe.md"))
    _maybe(lambda: (vault / "outpipe.md").symlink_to(outside / "pipe.md"))
    _maybe(lambda: (vault / "zero.md").symlink_to("/dev/zero"))
    _maybe(lambda: (vault / "out.md").symlink_to(outside / "secret.md"))
    _maybe(lambda: (vault / "outdir").symlink_to(outside, target_is_directory=True))
    _maybe(lambda: (vault / "gone.md").symlink_to(vault / "vanished.md"))
    _maybe(lambda: (vault / "new\nline.md").write_text("# Newline\nsourdough\n"))
    _maybe(lambda: _write_bytes_name(vault, b"\xffname.md", b"# Name\nsourdough\n"))
    return vault


#: The hostile vault's judged notes that cannot be read, and what their sentence says.
UNREADABLE = {
    "bad.md": "bad.md: not valid UTF-8",
    "big.md": "is over max_note_bytes=16777216",
    "pipe.md": "a FIFO (named pipe), not a regular file",
    "outpipe.md": "outside the vault",
    "zero.md": "outside the vault",
    "out.md": "outside the vault",
    "gone.md": "dangling symbolic link",
}


def _why(tmp_path: Path, vault: Path, judged: list[tuple[str, str]], *more: str) -> Any:
    queries, qrels = tmp_path / "queries.tsv", tmp_path / "qrels.tsv"
    queries.write_text("query_id\tquestion\nq1\tHow often do I feed the sourdough starter?\n")
    rows = "".join(f"q1\t{path}\t{heading}\t1\n" for path, heading in judged)
    qrels.write_text("query_id\tpath\theading\tgrade\n" + rows)
    argv = ["why", "--vault", str(vault), "--queries", str(queries), "--qrels", str(qrels)]
    return run_cli([*argv, *more], env=_env(tmp_path), timeout=300)


def test_hardening_39_7_unreadable_notes_no_judgment_names_do_not_stop_why(
    tmp_path: Path,
) -> None:
    """The index skips the bad notes with its warning; the headings of the judged note
    alone are read, so the trace runs; nothing outside the vault is read or shown."""
    vault = hostile_vault(tmp_path)
    proc = _why(tmp_path, vault, [("bread.md", "Starter")], "--json")
    assert proc.returncode == 0, proc.stderr
    stops = {row["section"]: row for row in json.loads(proc.stdout)["sections"]}
    assert (stops["bread.md#Starter"]["stage"], stops["bread.md#Starter"]["passed"]) == (
        "context",
        True,
    )
    assert "not indexing" in proc.stderr
    assert "bad.md" in proc.stderr
    assert "SECRET-OUTSIDE" not in proc.stdout + proc.stderr


def test_hardening_39_7_a_hostile_vault_traces_or_stops_at_sectioned_with_why(
    tmp_path: Path,
) -> None:
    """Every judged entry of the attack either traces or stops at sectioned with its file
    and reason; a ``../`` path is not in the vault; the command never exits 2."""
    vault = hostile_vault(tmp_path)
    made = {name for name in UNREADABLE if os.path.lexists(vault / name)}
    readable = [("bread.md", "Starter"), ("nuls.md", "Nuls"), ("many.md", "h19999")]
    judged = [*readable, *((name, "") for name in sorted(made)), ("../outside/secret.md", "")]
    proc = _why(tmp_path, vault, judged, "--json")
    assert proc.returncode == 0, proc.stderr
    stops = {row["section"]: row for row in json.loads(proc.stdout)["sections"]}
    assert {"bad.md", "big.md"} <= made
    for name in made:
        row = stops[name]
        assert (row["stage"], row["passed"]) == ("sectioned", False), row
        assert row["why"].startswith(f"{name} cannot be read from the vault: "), row
        assert UNREADABLE[name] in row["why"], row
        assert name in row["why"].split(": ", 1)[1], row  # the file is named
    for path, heading in readable:
        assert stops[f"{path}#{heading}"]["stage"] != "sectioned", stops[f"{path}#{heading}"]
    assert stops["../outside/secret.md"]["stage"] == "sectioned"
    assert stops["../outside/secret.md"]["why"] == "../outside/secret.md is not in the vault"
    assert "SECRET-OUTSIDE" not in proc.stdout + proc.stderr


def _left_out(source: Path, target: Path, ids: set[str], *, log: bool) -> str:
    """``source`` without the lines of the queries ``ids`` (a TSV, or a JSONL log)."""
    kept = [
        line
        for line in source.read_text(encoding="utf-8").splitlines(keepends=True)
        if (json.loads(line)["id"] if log and line.strip() else line.split("\t", 1)[0]) not in ids
    ]
    target.write_text("".join(kept), encoding="utf-8")
    return str(target)


def _partial_argv(tmp_path: Path, mode: str) -> list[str]:
    if mode == "log":
        log = _left_out(DATA / "run.jsonl", tmp_path / "run.jsonl", {"q02", "q03"}, log=True)
        return ["why", log, "--qrels", QRELS]
    queries = _left_out(DATA / "queries.tsv", tmp_path / "q.tsv", {"q02", "q03"}, log=False)
    return ["why", "--qrels", QRELS, "--vault", VAULT, "--queries", queries]


@pytest.mark.parametrize(
    ("mode", "what"),
    [("vault", "--queries lacks"), ("log", "the log has no sources for")],
    ids=["vault", "log"],
)
def test_hardening_39_minor_why_refuses_judged_queries_its_questions_lack(
    tmp_path: Path, mode: str, what: str
) -> None:
    """As askkit diff: judged queries missing from the questions are refused, with the
    counts, unless --allow-partial; never a funnel whose total passes for the qrels'."""
    proc = run_cli(_partial_argv(tmp_path, mode), env=_env(tmp_path))
    assert proc.returncode == 2, proc.stdout
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert f"{what} 2 of the 34 judged queries (q02, q03; 5 relevant sections)" in proc.stderr
    assert "--allow-partial" in proc.stderr


@pytest.mark.parametrize(
    ("mode", "what"),
    [("vault", "--queries lacks"), ("log", "the log has no sources for")],
    ids=["vault", "log"],
)
def test_hardening_39_minor_why_allow_partial_says_how_many_were_left_out(
    tmp_path: Path, mode: str, what: str
) -> None:
    """With --allow-partial the output says which judged queries were left out, in text
    and in JSON, and the funnel's total is the traced queries' alone."""
    argv = [*_partial_argv(tmp_path, mode), "--allow-partial"]
    text = run_cli(argv, env=_env(tmp_path))
    assert text.returncode == 0, text.stderr
    said = f"partial: {what} 2 of the 34 judged queries (q02, q03; 5 relevant sections)"
    assert said in text.stdout
    rows = [line.replace("│", " ").split() for line in text.stdout.splitlines()]
    total = next(row for row in rows if row[:1] == ["total"])
    assert int(total[1]) == 104 - 5
    out = run_cli([*argv, "--json"], env=_env(tmp_path))
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["queries"] == {
        "judged": 34,
        "traced": 32,
        "left_out": ["q02", "q03"],
        "left_out_sections": 5,
    }


# -- issue 41, item 5: every column at 80 columns and on a pipe, --top limits every table -----


def _piped(tmp_path: Path, width: int | None = None) -> dict[str, str]:
    """The environment of a real pipe: no COLUMNS (rich draws 80 wide), or ``width``."""
    env = {k: v for k, v in os.environ.items() if k not in {"COLUMNS", "LINES"}}
    if width is not None:
        env["COLUMNS"] = str(width)
    return {**env, "ASKKIT_CACHE_DIR": str(tmp_path / "cache")}


def _words(text: str) -> str:
    return " ".join(text.split())


def _change_rows(out: str) -> list[list[str]]:
    """The rows of the table "what would keep them": ``#``, then the change and its cost."""
    table = out[out.index("what would keep them") :].splitlines()[3:]
    return [line.split() for line in table if line[:1].isdigit()]


@pytest.mark.parametrize("width", [None, 120, 160], ids=["pipe", "120", "160"])
def test_issue41_5_why_shows_every_column_whole_at_any_width(tmp_path: Path, width: int) -> None:
    """On a pipe (80 columns) and wider: the sentence saying why each section was lost and
    every change that keeps it are printed whole, every line within the width."""
    argv = [*VAULT_ARGS, "--top", "3"]
    text = run_cli(argv, env=_piped(tmp_path, width))
    assert text.returncode == 0, text.stderr
    out = text.stdout
    assert all(len(line) <= (width or 80) for line in out.splitlines()), out
    as_json = run_cli([*argv, "--json"], env=_piped(tmp_path, width))
    assert as_json.returncode == 0, as_json.stderr
    data = json.loads(as_json.stdout)
    lost = [row for row in data["sections"] if not row["passed"]][:3]
    flat = _words(out)
    for row in lost:  # each sentence whole, in order, under its section
        assert row["section"] in out
        assert _words(row["why"]) in flat
        assert flat.index(row["section"]) < flat.index(_words(row["why"]))
    shown = {(row["query_id"], row["section"]) for row in lost}
    kept = [row for row in data["what_if"] if (row["query_id"], row["section"]) in shown]
    rows = _change_rows(out)
    assert len(rows) == len(kept) > 0
    for row in kept:  # every suggested change, whole, with its cost
        line = next(line for line in out.splitlines() if row["suggested"] in line)
        if row["mean_chunks"] is not None:
            assert f"{row['mean_chunks']:.1f}" in line.split()
    assert "chunks, notes: the answer's context with that change" in flat


def test_issue41_5_top_limits_the_funnel_the_losses_and_the_changes(tmp_path: Path) -> None:
    for top in (1, 2):
        text = run_cli([*VAULT_ARGS, "--top", str(top)], env=_piped(tmp_path))
        assert text.returncode == 0, text.stderr
        out = text.stdout
        funnel = out[: out.index("lost sections")].splitlines()
        assert len([line for line in funnel if re.match(r"q\d+ ", line)]) == top
        assert f"lost sections and why: the first {top} of 23 (--top N for more" in out
        lost = out[out.index("lost sections") : out.index("what would keep them")].splitlines()
        assert [line.split()[0] for line in lost if line[:1].isdigit()] == [
            str(n) for n in range(1, top + 1)
        ]
        assert {row[0] for row in _change_rows(out)} == {str(n) for n in range(1, top + 1)}


def test_issue41_5_another_strategy_is_named_by_its_whole_setting(tmp_path: Path) -> None:
    """A change of strategy reads as the setting to paste (``fixed top_k=20``), not as the
    strategy's bare name, which reads like a state."""
    text = run_cli([*VAULT_ARGS, "--query", "q06"], env=_piped(tmp_path))
    assert text.returncode == 0, text.stderr
    changes = [" ".join(row[1:-4]) for row in _change_rows(text.stdout)]
    assert "fixed top_k=20" in changes  # the fixed cut with the server's other knobs
    assert "fixed" not in changes


def test_issue41_3_why_says_a_trec_run_lacks_what_it_needs_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A TREC run is read by the one run reader, which says what why needs from a turn
    log instead of a JSON syntax error."""
    run = tmp_path / "run.trec"
    run.write_text("q01 Q0 projects/sourdough.md 1 2.5 askkit\n", encoding="utf-8")
    qrels = str(Path(__file__).resolve().parents[2] / "data" / "qrels.tsv")
    assert main(["why", str(run), "--qrels", qrels]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "not valid JSON" not in err
    assert "a TREC run holds ranked documents only" in err
    assert "--vault DIR --queries TSV" in err


# -- issue 42, item 4: the unjudged sections the cut kept, beside the sections it lost ---------


def test_issue42_why_says_the_unjudged_sections_the_cut_kept_beside_a_lost_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """q03 loses a section at the cut; the cut kept 16 unjudged sections above it, 4 of
    them above the lowest relevant section it kept: said under the lost section, counted
    in the funnel."""
    assert main([*VAULT_ARGS, "--query", "q03"]) == 0
    out = capsys.readouterr().out
    flat = " ".join(out.split())
    assert (
        "the cut kept 16 unjudged sections above it, 4 of them above the lowest relevant "
        "section it kept (rank 6): 'projects/sourdough.md#Sourdough', "
        "'reading/design-of-everyday-things.md#Gulfs', 'journal/2026-03-11.md#Evening' and "
        "13 more (judge them next: they may be relevant)."
    ) in flat
    rows = [line.replace("│", " ").split() for line in out.splitlines()]
    assert [int(x) for x in next(row for row in rows if row[:1] == ["q03"])[1:]] == [
        3, 3, 3, 3, 2, 2, 1, 4
    ]  # fmt: skip


def test_issue42_why_json_gives_each_query_its_unjudged_sections(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main([*VAULT_ARGS, "--query", "q03", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    q03, total = out["funnel"]
    assert (q03["query_id"], q03["unjudged_above"], q03["lowest_relevant"]) == ("q03", 4, 6)
    assert q03["unjudged_kept"][:2] == [
        "projects/sourdough.md#Sourdough",
        "reading/design-of-everyday-things.md#Gulfs",
    ]
    assert len(q03["unjudged_kept"]) == 16
    assert (total["query_id"], total["unjudged_above"], total["unjudged_kept"]) == (
        "total",
        4,
        None,
    )
    lost = next(row for row in out["sections"] if not row["passed"])
    assert "the cut kept 16 unjudged sections above it" in lost["why"]


def _turn_log(tmp_path: Path) -> tuple[str, str]:
    """One logged turn: two unjudged sections (one absent from the qrels, one graded -1)
    above its relevant one, and a relevant note the log lacks; its qrels."""
    chunks = [
        {"path": p, "title": f"Note\x1f{h}", "date": None, "content": f"{p} {h}", "hash": str(n),
         "similarity_score": 1.0 - n / 10, "ordinal": n + 1}
        for n, (p, h) in enumerate([("u.md", "A"), ("n.md", "B"), ("r.md", "C")])
    ]  # fmt: skip
    log = tmp_path / "turns.jsonl"
    log.write_text(json.dumps({"id": "t1", "question": "?", "answer": "", "chunks": chunks}))
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text(
        "query_id\tpath\theading\tgrade\nt1\tn.md\tB\t-1\nt1\tr.md\tC\t2\nt1\tgone.md\t\t1\n"
    )
    return str(log), str(qrels)


def test_issue42_why_on_a_turn_log_says_the_unjudged_sections_of_its_context(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log, qrels = _turn_log(tmp_path)
    assert main(["why", log, "--qrels", qrels]) == 0
    flat = " ".join(capsys.readouterr().out.split())
    assert (
        "not among the answer's 3 logged sources (a log holds the context the server's cut "
        "kept, not its pool of 80); the cut kept 2 unjudged sections above it, all above the "
        "lowest relevant section it kept (rank 3): 'u.md#A' and 'n.md#B' (judge them next: "
        "they may be relevant)"
    ) in flat
    assert main(["why", log, "--qrels", qrels, "--json"]) == 0
    t1 = json.loads(capsys.readouterr().out)["funnel"][0]
    assert (t1["unjudged_above"], t1["lowest_relevant"], t1["unjudged_kept"]) == (
        2,
        3,
        ["u.md#A", "n.md#B"],
    )
