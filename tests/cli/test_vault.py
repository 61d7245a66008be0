"""``askkit index`` and ``askkit search --vault``, run as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "v"
    (root / "journal").mkdir(parents=True)
    (root / "journal" / "2026-04-08.md").write_text("# 2026-04-08\n\n## Afternoon\n\nBaked rye.\n")
    (root / "bread.md").write_text("# Bread\n\n## Starter\n\nFeed the rye starter.\n")
    return root


def run(*args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "160", "ASKKIT_CACHE_DIR": str(cache)}
    return subprocess.run(
        [sys.executable, "-m", "askkit.cli", *args],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
    )


def test_index_reports_counts(vault: Path, tmp_path: Path) -> None:
    out = run("index", str(vault), cache=tmp_path / "c")
    assert out.returncode == 0, out.stderr
    assert "2 notes, 2 chunks" in out.stdout
    assert "2 added, 0 changed, 0 deleted, 0 unchanged" in out.stdout
    again = run("index", str(vault), cache=tmp_path / "c")
    assert "0 added, 0 changed, 0 deleted, 2 unchanged" in again.stdout


def test_search_prints_a_table(vault: Path, tmp_path: Path) -> None:
    out = run("search", "rye starter", "--vault", str(vault), cache=tmp_path / "c")
    assert out.returncode == 0, out.stderr
    assert "Bread › Starter" in out.stdout
    assert "2026-04-08 · Afternoon" in out.stdout
    assert "journal/2026-04-08.md" in out.stdout
    assert out.stdout.index("[1]") < out.stdout.index("[2]")


def test_search_json_is_wire_json(vault: Path, tmp_path: Path) -> None:
    out = run("search", "starter", "--vault", str(vault), "-k", "1", "--json", cache=tmp_path / "c")
    assert out.returncode == 0, out.stderr
    payload = json.loads(out.stdout)
    assert [c["ordinal"] for c in payload["chunks"]] == [1]
    assert payload["chunks"][0]["title"] == "Bread\x1fStarter"
    assert isinstance(payload["query_time_ms"], int)


def test_missing_vault_is_one_line_and_nonzero(tmp_path: Path) -> None:
    out = run("search", "x", "--vault", str(tmp_path / "nope"), cache=tmp_path / "c")
    assert out.returncode == 2
    assert "does not exist" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    out = run("index", str(tmp_path / "nope"), cache=tmp_path / "c")
    assert out.returncode == 2
    assert "vault not found" in out.stderr


@pytest.mark.parametrize("query", ["", "   "])
def test_empty_query_is_refused(vault: Path, tmp_path: Path, query: str) -> None:
    out = run("search", query, "--vault", str(vault), cache=tmp_path / "c")
    assert out.returncode == 2
    assert "the query is empty" in out.stderr


def test_bad_k(vault: Path, tmp_path: Path) -> None:
    out = run("search", "rye", "--vault", str(vault), "-k", "0", cache=tmp_path / "c")
    assert out.returncode == 2
    assert "-k must be at least 1" in out.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["index", "VAULT", "--no-cache", "--cache-dir", "CACHE"],
        ["index", "VAULT", "--cache-dir", "CACHE", "--no-cache"],
        ["search", "q", "--vault", "VAULT", "--no-cache", "--cache-dir", "CACHE"],
    ],
)
def test_no_cache_with_a_cache_dir_is_refused_as_a_contradiction(
    vault: Path, tmp_path: Path, argv: list[str]
) -> None:
    """``index --no-cache --cache-dir X`` was accepted, one of the two silently dropped."""
    cache = tmp_path / "cache"
    args = [str(vault) if a == "VAULT" else str(cache) if a == "CACHE" else a for a in argv]
    out = subprocess.run(
        [sys.executable, "-m", "askkit.cli", *args],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "COLUMNS": "1000"},
    )
    assert out.returncode == 2
    assert out.stderr.startswith("askkit: error: --")
    assert "not allowed with argument --" in out.stderr
    assert out.stderr.count("\n") == 1
    assert not cache.exists()


def test_kimun_version_picks_the_chunker(vault: Path, tmp_path: Path) -> None:
    """``--kimun-version 0.17`` cuts as kimun's content extractor did; the default is 0.18."""
    (vault / "links.md").write_text("# Links\n\nUse `[[x]]` and rye here.\n")
    cache = tmp_path / "c"
    args = ("search", "rye here", "--vault", str(vault), "-k", "1", "--json")
    newer = run(*args, cache=cache)
    older = run(*args, "--kimun-version", "0.17", cache=cache)
    assert newer.returncode == older.returncode == 0, newer.stderr + older.stderr
    assert json.loads(newer.stdout)["chunks"][0]["content"] == "Use `[[x]]` and rye here."
    assert json.loads(older.stdout)["chunks"][0]["content"] == "Use `x` and rye here."
    indexed = run("index", str(vault), "--kimun-version", "0.17", cache=cache)
    assert "0 added, 0 changed, 0 deleted, 3 unchanged" in indexed.stdout  # 0.17's cache


def test_kimun_version_is_checked(vault: Path, tmp_path: Path) -> None:
    bad = run("index", str(vault), "--kimun-version", "0.16", cache=tmp_path / "c")
    assert bad.returncode == 2
    assert bad.stderr.count("\n") == 1
    assert "--kimun-version" in bad.stderr
    assert "0.16" in bad.stderr
    server = run(
        "search", "q", "--server", "http://127.0.0.1:9", "--vault-id", "v",
        "--kimun-version", "0.17", cache=tmp_path / "c",
    )  # fmt: skip
    assert server.returncode == 2
    assert server.stderr.strip() == (
        "askkit: error: --kimun-version applies to --vault: a kimun server (--server) and its "
        "store (--store) hold the chunks its own kimun cut"
    )


# Issue 41, item 6: a folder with no markdown notes is refused, saying what it holds, before
# BM25 or an embedder indexes nothing and reports success.


def _folder(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    root.mkdir(parents=True, exist_ok=True)
    return root


@pytest.mark.parametrize(
    ("files", "holds"),
    [
        ({}, "it is empty"),
        (
            {f"n{i}.txt": "text" for i in range(12)} | {"sub/README": "x"},
            "it holds 12 .txt files and 1 file without an extension",
        ),
        ({".trash/old.md": "# Old\n", "a.MD": "# A\n"}, "1 .MD file and 1 hidden .md file"),
    ],
    ids=["empty", "txt", "hidden"],
)
@pytest.mark.parametrize("embedder", [False, True], ids=["bm25", "embedder"])
def test_issue41_6_index_refuses_a_folder_with_no_notes(
    tmp_path: Path, files: dict[str, str], holds: str, embedder: bool
) -> None:
    folder = _folder(tmp_path / "notes", files)
    more = ["--embedder", "fastembed:AllMiniLML6V2"] if embedder else []
    out = run("index", str(folder), *more, cache=tmp_path / "cache")
    assert out.returncode == 2, out.stdout
    assert out.stdout == ""
    assert out.stderr.count("\n") == 1, out.stderr  # one line
    assert out.stderr.startswith(f"askkit: error: no markdown notes in {folder} ")
    assert holds in out.stderr
    assert "give the folder that holds your notes" in out.stderr
    assert not (tmp_path / "cache").exists()  # nothing indexed, no model loaded


def test_issue41_6_a_vault_with_one_note_still_indexes(tmp_path: Path) -> None:
    folder = _folder(tmp_path / "notes", {"a.txt": "x", "b.md": "# B\n\nbread\n"})
    out = run("index", str(folder), cache=tmp_path / "cache")
    assert out.returncode == 0, out.stderr
    assert "1 notes, 1 chunks" in out.stdout


# Issue 41, item 8: a section with no heading is named by its note's title as on disk (as
# Obsidian titles a note), and the title names no vault path.


def test_issue41_8_search_names_a_section_with_no_heading_by_its_notes_title(
    tmp_path: Path,
) -> None:
    folder = _folder(
        tmp_path / "notes",
        {"Plugins/Command Palette.md": "The palette runs any command.\n\n# Hotkeys\n\nkeys\n"},
    )
    out = run("search", "palette command", "--vault", str(folder), cache=tmp_path / "c")
    assert out.returncode == 0, out.stderr
    row = next(line for line in out.stdout.splitlines() if "[1]" in line)
    assert "Command Palette" in row  # not the empty heading kimun sends, nor the lowercase path
    assert "plugins/command palette.md" in out.stdout
    title = out.stdout.splitlines()[0]
    assert title.startswith("1 chunk for 'palette command' in ")
    assert str(folder) not in title
