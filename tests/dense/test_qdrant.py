"""QdrantStore: kimun's Qdrant collections read with qdrant-client, in local mode.

Pinned to kimun's ``server/src/dbembeddings/vecqdrant.rs`` at commit
e03e4e8bc14d453383d66c42148e4156b999fcd4 (collections ``<prefix>-<vault id>``
or the vault id alone, ``__`` metadata collections, the payload fields, random
UUID point ids, the ``__fingerprint`` collection, cosine distance, Qdrant's
own search) and ``server/src/config.rs`` (default prefix ``kimun_embeddings``).
Qdrant runs in qdrant-client's local mode (a folder, or ``:memory:``); the
server errors come from real HTTP on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest
from qdrant_client import QdrantClient, models

from askkit.dense.qdrant import DEFAULT_COLLECTION_PREFIX, DEFAULT_URL, QdrantStore, local_client
from askkit.dense.store import COLUMNS, Collection
from askkit.dense.vectors import exact_top_k
from askkit.errors import DimensionError, StoreError, UsageError
from askkit.frame.schema import STRING
from askkit.testing.stores import random_store_rows, write_kimun_qdrant
from tests.probe import loaded_after

PREFIX = DEFAULT_COLLECTION_PREFIX


def assert_same_top(
    results: list[tuple[float, dict[str, Any]]], texts: list[str], rows: Any, scores: Any
) -> None:
    """Qdrant's top equals exact_top_k's: the same chunks in the same order, scores within
    1e-6 (two chunks may swap only where their scores are within 1e-6 of each other)."""
    got = [chunk["text"] for _, chunk in results]
    want = [texts[i] for i in rows]
    assert len(got) == len(want)
    np.testing.assert_allclose([s for s, _ in results], scores, rtol=0, atol=1e-6)
    for i, (a, b) in enumerate(zip(got, want, strict=True)):
        if a != b:  # a near-tie: the other chunk sits next to it with the same score
            assert abs(results[i][0] - scores[i]) < 1e-6
            assert a in want[max(0, i - 1) : i + 2]


@pytest.fixture(scope="module")
def memory_store() -> Iterator[tuple[QdrantClient, list[dict[str, Any]], np.ndarray]]:
    client = QdrantClient(":memory:")
    rows, vectors = random_store_rows(3000, 64, seed=21)
    write_kimun_qdrant(client, PREFIX, "notes", rows, vectors, fingerprint="fastembed:m:64", seed=1)
    write_kimun_qdrant(client, PREFIX, "small", rows[:4], vectors[:4], seed=2)
    write_kimun_qdrant(client, "other_server", "elsewhere", rows[:2], vectors[:2], seed=3)
    yield client, rows, vectors
    client.close()


@pytest.fixture(scope="module")
def path_store(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, list[dict[str, Any]], np.ndarray]:
    """A qdrant-client local-mode folder holding a kimun vault, closed again."""
    folder = tmp_path_factory.mktemp("qdrant")
    client = local_client(folder)  # askkit writes it: QdrantStore(path=...) opens it
    rows, vectors = random_store_rows(240, 32, seed=22)
    write_kimun_qdrant(
        client, PREFIX, "notes", rows, vectors, fingerprint="ollama:nomic:32", seed=4
    )
    client.close()
    return folder, rows, vectors


# -- the done-when: Qdrant's own search equals the exact top 80 -----------------------


def test_qdrants_top_80_equals_exact_top_k_over_the_loaded_matrix_in_memory(
    memory_store: Any,
) -> None:
    client, _, vectors = memory_store
    store = QdrantStore(client=client)
    vault = store.load("notes")
    texts = vault.chunks["text"].tolist()
    rng = np.random.default_rng(8)
    for query in [vectors[10], vectors[2999] * 5, rng.standard_normal(64).astype(np.float32)]:
        results = store.query("notes", query, 80)
        rows, scores = exact_top_k(vault.matrix, query, 80)
        assert_same_top(results, texts, rows, scores)


def test_qdrants_top_80_equals_exact_top_k_in_a_reopened_local_folder(path_store: Any) -> None:
    folder, _, vectors = path_store
    with QdrantStore(path=folder) as store:
        vault = store.load("notes")  # qdrant-client hands back the raw vectors it persisted
        norms = np.linalg.norm(vault.matrix.astype(np.float64), axis=1)
        np.testing.assert_allclose(norms, 1.0, atol=1e-6)
        texts = vault.chunks["text"].tolist()
        for query in [vectors[3], -vectors[100], np.ones(32, dtype=np.float32)]:
            results = store.query("notes", query, 80)
            rows, scores = exact_top_k(vault.matrix, query, 80)
            assert_same_top(results, texts, rows, scores)


# -- reading kimun's layout -------------------------------------------------------------------


def test_vaults_are_the_prefixed_collections_without_metadata(memory_store: Any) -> None:
    client, rows, _ = memory_store
    store = QdrantStore(client=client)
    notes = len({r["path"] for r in rows})
    assert store.collections() == [
        Collection("notes", notes, 3000, 64),
        Collection("small", 2, 4, 64),
    ]  # "<prefix>-__fingerprint" and another server's "other_server-elsewhere" are not vaults
    assert store.fingerprint == "fastembed:m:64"
    other = QdrantStore(client=client, collection_prefix="other_server")
    assert [c.name for c in other.collections()] == ["elsewhere"]
    assert other.fingerprint is None


def test_an_empty_prefix_makes_every_collection_but_metadata_a_vault() -> None:
    client = QdrantClient(":memory:")
    rows, vectors = random_store_rows(6, 4, seed=1)
    name = write_kimun_qdrant(client, "", "alpha", rows, vectors, fingerprint="fp", seed=5)
    assert name == "alpha"
    write_kimun_qdrant(client, "", "beta", rows[:3], vectors[:3], seed=6)
    store = QdrantStore(client=client, collection_prefix="")
    assert [c.name for c in store.collections()] == ["alpha", "beta"]
    assert store.collection_name("alpha") == "alpha"
    assert store.fingerprint == "fp"
    assert sorted(c.name for c in client.get_collections().collections) == [
        "__fingerprint",
        "alpha",
        "beta",
    ]


def test_load_reads_the_payload_as_kimun_does(memory_store: Any) -> None:
    client, rows, vectors = memory_store
    vault = QdrantStore(client=client).load("small")
    assert list(vault.chunks.columns) == list(COLUMNS)
    assert all(vault.chunks[c].dtype == STRING for c in COLUMNS)
    by_text = {r["text"]: r for r in rows[:4]}
    for record in vault.chunks.to_dict("records"):
        want = by_text[record["text"]]
        assert record["path"] == want["path"]
        assert record["hash"] == want["hash"]
        assert record["title"] == want["title"]
        assert (record["date"] if isinstance(record["date"], str) else None) == want["date"]
    assert vault.matrix.shape == (4, 64)
    assert not vault.matrix.flags.writeable
    order = [next(i for i, r in enumerate(rows) if r["text"] == t) for t in vault.chunks["text"]]
    raw = vectors[order].astype(np.float64)
    np.testing.assert_allclose(vault.matrix, raw / np.linalg.norm(raw, axis=1)[:, None], atol=1e-6)


def test_a_payload_missing_fields_reads_as_kimuns_defaults() -> None:
    client = QdrantClient(":memory:")
    name = f"{PREFIX}-v"
    client.create_collection(name, vectors_config=models.VectorParams(size=2, distance="Cosine"))
    client.upsert(
        name,
        points=[
            models.PointStruct(id=str(uuid.uuid4()), vector=[1.0, 0.0], payload={"path": "a.md"}),
            models.PointStruct(
                id=str(uuid.uuid4()),
                vector=[0.0, 1.0],
                payload={"path": "b.md", "date": "2026-02-30", "title": 7, "text": "t"},
            ),
        ],
    )
    store = QdrantStore(client=client)
    records = store.load("v").chunks.sort_values("path").to_dict("records")
    assert [(r["path"], r["title"], r["text"], r["hash"]) for r in records] == [
        ("a.md", "", "", ""),
        ("b.md", "", "t", ""),
    ]
    assert all(not isinstance(r["date"], str) for r in records)  # "" or no date: none
    score, chunk = store.query("v", np.array([0.0, 2.0]), k=1)[0]
    assert chunk["path"] == "b.md"
    assert chunk["date"] is None
    assert uuid.UUID(chunk["id"])
    assert score == pytest.approx(1.0, abs=1e-6)


def test_query_checks_the_vault_the_vector_and_k(memory_store: Any) -> None:
    client, _, vectors = memory_store
    store = QdrantStore(client=client)
    with pytest.raises(StoreError, match=r"no vault 'note'.*vault ids are 'notes', 'small'"):
        store.query("note", vectors[0])
    with pytest.raises(StoreError, match="no vault '__fingerprint'"):
        store.load("__fingerprint")
    with pytest.raises(DimensionError) as err:
        store.query("notes", vectors[0][:10])
    assert (err.value.expected, err.value.actual) == (64, 10)
    assert store.query("notes", vectors[0], k=0) == []
    with pytest.raises(UsageError, match="one vector"):
        store.query("notes", vectors[:2])
    with pytest.raises(UsageError, match="k must be"):
        store.query("notes", vectors[0], k=-1)


def test_named_vectors_are_not_kimuns_shape() -> None:
    client = QdrantClient(":memory:")
    client.create_collection(
        f"{PREFIX}-v",
        vectors_config={"dense": models.VectorParams(size=2, distance=models.Distance.COSINE)},
    )
    store = QdrantStore(client=client)
    with pytest.raises(StoreError, match="named vectors"):
        store.load("v")


# -- opening and closing -------------------------------------------------------------------


def test_exactly_one_source_is_taken() -> None:
    with pytest.raises(UsageError, match="not none"):
        QdrantStore()
    with pytest.raises(UsageError, match="not url and client"):
        QdrantStore("http://127.0.0.1:6333", client=QdrantClient(":memory:"))
    assert DEFAULT_URL == "http://localhost:6333"  # kimun's default, for the CLI


def test_a_folder_that_is_not_a_local_storage_is_refused_untouched(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=r"no meta\.json") as err:
        QdrantStore(path=tmp_path)
    assert err.value.path == str(tmp_path)
    assert list(tmp_path.iterdir()) == []  # qdrant-client would have written meta.json
    with pytest.raises(StoreError, match="not a Qdrant local-mode folder"):
        QdrantStore(path=tmp_path / "missing")
    assert not (tmp_path / "missing").exists()


def test_a_folder_in_use_by_another_client_is_refused(path_store: Any) -> None:
    folder, _, _ = path_store
    holder = QdrantClient(path=str(folder))
    try:
        with pytest.raises(StoreError, match="already accessed by another instance"):
            QdrantStore(path=folder)
    finally:
        holder.close()


def test_close_closes_only_a_client_the_store_opened(path_store: Any) -> None:
    folder, _, _ = path_store
    store = QdrantStore(path=folder)
    store.close()
    again = QdrantClient(path=str(folder))  # the folder's lock was released
    given = QdrantStore(client=again)
    given.close()
    assert len(again.get_collections().collections) == 2  # still open: notes and fingerprint
    again.close()
    assert "prefix 'kimun_embeddings'" in repr(given)


# -- local mode runs what its folder holds: only askkit's own folders, or trusted ones --------

#: A point whose unpickling writes ``sys.argv[2]`` (what a poisoned folder could run instead).
_POISON = """
import pickle, sqlite3, sys
from pathlib import Path

class Poison:
    def __reduce__(self):
        return (Path.write_text, (Path(sys.argv[2]), "ran"))

storage = sys.argv[1]
conn = sqlite3.connect(storage)
conn.execute("UPDATE points SET point = ?", (pickle.dumps(Poison()),))
conn.commit()
conn.close()
"""


def poisoned_folder(folder: Path, marker: Path) -> Path:
    """A real qdrant-client local-mode folder whose stored point is a pickle that, when
    qdrant-client loads it, writes ``marker``."""
    client = QdrantClient(path=str(folder))
    rows, vectors = random_store_rows(3, 4, seed=9)
    write_kimun_qdrant(client, PREFIX, "notes", rows[:1], vectors[:1], seed=9)
    client.close()
    (storage,) = folder.glob("collection/*/storage.sqlite")
    subprocess.run([sys.executable, "-c", _POISON, str(storage), str(marker)], check=True)
    return folder


def test_a_local_folder_askkit_did_not_write_is_refused_and_never_unpickled(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "marker"
    # The poison is real: qdrant-client itself runs it on open (in a child process).
    proof = poisoned_folder(tmp_path / "proof", marker)
    subprocess.run(
        [
            sys.executable,
            "-c",
            f"from qdrant_client import QdrantClient; QdrantClient(path={str(proof)!r})",
        ],
        capture_output=True,
        check=False,
        timeout=120,
    )
    assert marker.read_text() == "ran"
    marker.unlink()
    folder = poisoned_folder(tmp_path / "poisoned", marker)
    with pytest.raises(StoreError, match="unpickles every stored point") as err:
        QdrantStore(path=folder)
    assert not marker.exists()  # nothing ran
    assert "trusted=True" in str(err.value)
    assert "askkit did not write it" in str(err.value)
    assert err.value.path == str(folder)


def test_a_local_folder_askkit_wrote_opens_and_so_does_a_trusted_one(tmp_path: Path) -> None:
    rows, vectors = random_store_rows(9, 4, seed=3)
    client = local_client(tmp_path / "ours")
    write_kimun_qdrant(client, PREFIX, "notes", rows, vectors, fingerprint="fp", seed=3)
    client.close()
    with QdrantStore(path=tmp_path / "ours") as store:
        assert len(store.load("notes")) == 9
    theirs = tmp_path / "theirs"
    client = QdrantClient(path=str(theirs))
    write_kimun_qdrant(client, PREFIX, "notes", rows, vectors, fingerprint="fp", seed=3)
    client.close()
    with pytest.raises(StoreError, match="askkit did not write it"):
        QdrantStore(path=theirs)
    with QdrantStore(path=theirs, trusted=True) as store:
        assert store.fingerprint == "fp"
        assert len(store.load("notes")) == 9
    again = local_client(tmp_path / "ours")  # askkit's own folder reopens for writing
    again.close()
    with pytest.raises(UsageError, match="did not make"):
        local_client(theirs)  # and another's is never taken over


def test_an_askkit_folder_others_can_write_is_refused(tmp_path: Path) -> None:
    """The tag says askkit made the folder; a file another user may rewrite could have
    been poisoned since."""
    folder = tmp_path / "ours"
    client = local_client(folder)
    rows, vectors = random_store_rows(3, 4, seed=3)
    write_kimun_qdrant(client, PREFIX, "notes", rows, vectors, seed=3)
    client.close()
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700  # made private
    (storage,) = folder.glob("collection/*/storage.sqlite")
    storage.chmod(0o666)
    QdrantStore(path=folder).close()  # nobody else can reach it in the private folder
    folder.chmod(0o755)
    with pytest.raises(StoreError, match=f"{storage} can be written by other users"):
        QdrantStore(path=folder)
    storage.chmod(0o644)
    QdrantStore(path=folder).close()
    folder.chmod(0o777)
    with pytest.raises(StoreError, match=f"{folder} can be written by other users"):
        QdrantStore(path=folder)


def test_hardening_39_9_qdrant_applies_askkits_one_rule_for_its_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """QdrantStore and local_client judge a folder by askkit's shared rule, not a copy of it."""
    from askkit import _cachedir

    folder = tmp_path / "ours"
    local_client(folder).close()
    QdrantStore(path=folder).close()
    monkeypatch.setattr(
        _cachedir, "untrusted", lambda f: _cachedir.Distrust(f, "owner", "fails the shared rule")
    )
    with pytest.raises(StoreError, match=f"{folder} fails the shared rule"):
        QdrantStore(path=folder)
    with pytest.raises(StoreError, match=f"{folder} fails the shared rule"):
        local_client(folder)


def test_hardening_39_9_local_client_refuses_an_empty_folder_of_another_user(
    tmp_path: Path,
) -> None:
    """Taking another user's empty folder would make a store that user can rewrite (and that
    QdrantStore then refuses): it is refused up front, naming the owner."""
    folder = tmp_path / "theirs"
    folder.mkdir(mode=0o700)
    os.chown(folder, 12345, 12345)
    with pytest.raises(StoreError) as err:
        local_client(folder)
    assert str(err.value).startswith(
        f"the Qdrant folder {folder} is refused, not rebuilt: {folder} belongs to another user "
        "(uid 12345)"
    )
    assert "unpickles every stored point" in str(err.value)
    assert list(folder.iterdir()) == []


def test_hardening_39_minor_cache_errors_name_the_qdrant_folder(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("x")
    folder = tmp_path / "a-file" / "qdrant"
    with pytest.raises(StoreError) as err:
        local_client(folder)
    assert str(err.value).startswith(
        f"cannot make the Qdrant folder {folder}: {tmp_path / 'a-file'} is not a folder ("
    )


# -- a server that fails -------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_an_unreachable_server_is_a_store_error_without_the_key() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.warns(UserWarning, match="insecure") as seen:
        store = QdrantStore(url, api_key="s3cret-api-key", timeout=2)
    assert seen[0].filename == __file__  # the warning points at the caller's line
    with pytest.raises(StoreError, match="Connection refused") as err:
        store.collections()
    for shown in (str(err.value), repr(err.value), repr(err.value.args), repr(store)):
        assert "s3cret" not in shown
    assert err.value.path == url
    assert url in str(err.value)


def test_a_given_client_is_named_by_its_url_and_its_key_is_never_shown() -> None:
    url = f"http://kimun:pa55word@127.0.0.1:{free_port()}"
    with pytest.warns(UserWarning, match="insecure"):
        client = QdrantClient(url=url, api_key="s3cret-api-key", check_compatibility=False)
    store = QdrantStore(client=client)
    with pytest.raises(StoreError, match="Connection refused") as err:
        store.load("notes")
    assert err.value.path == url.replace("pa55word", "***")
    for shown in (str(err.value), repr(store)):
        assert "s3cret" not in shown
        assert "pa55word" not in shown
    assert QdrantStore(client=QdrantClient(":memory:")).where == ":memory:"


class _Unauthorised(BaseHTTPRequestHandler):
    seen: ClassVar[list[dict[str, str]]] = []

    def do_GET(self) -> None:
        type(self).seen.append({k.lower(): v for k, v in self.headers.items()})
        body = json.dumps({"status": {"error": "Unauthorized: invalid api key"}}).encode()
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""


def test_a_refusing_server_is_a_store_error_without_the_key() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Unauthorised)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://kimun:pa55word@127.0.0.1:{server.server_address[1]}"
    try:
        with pytest.warns(UserWarning, match="insecure"):
            store = QdrantStore(url, api_key="s3cret-api-key", timeout=5)
        with pytest.raises(StoreError, match="401") as err:
            _ = store.fingerprint
    finally:
        server.shutdown()
        server.server_close()
    assert _Unauthorised.seen[-1]["api-key"] == "s3cret-api-key"  # it was sent, never shown
    for shown in (str(err.value), repr(store), str(err.value.path)):
        assert "s3cret" not in shown
        assert "pa55word" not in shown
    assert err.value.path == f"http://kimun:***@127.0.0.1:{server.server_address[1]}"


# -- the extra -----------------------------------------------------------------------------


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120
    )


def test_importing_the_module_does_not_import_qdrant_client() -> None:
    assert loaded_after("import askkit.dense, askkit.dense.qdrant", ["qdrant_client"]) == set()


def test_without_qdrant_client_the_error_names_the_extra() -> None:
    out = _python(
        "import sys\n"
        "sys.modules['qdrant_client'] = None\n"
        "from askkit.dense.qdrant import QdrantStore\n"
        "from askkit.errors import MissingDependencyError\n"
        "try:\n"
        "    QdrantStore('http://127.0.0.1:6333')\n"
        "except MissingDependencyError as exc:\n"
        "    print(exc)\n"
    )
    assert out.returncode == 0, out.stderr
    assert "pip install 'askkit[qdrant]'" in out.stdout
