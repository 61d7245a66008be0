"""kimun's SQLite vector store: KimunStore (read-only) and StoreWriter.

Pinned to kimun's ``server/src/dbembeddings/vecsqlite.rs`` at commit
55d17b21f70d773694ee104702380b1ae722f862 (the schema, ``to_blob``, the query's
f32 dot product, sort by ``total_cmp`` and truncate, scores widened to f64,
``list_collections`` counting distinct paths, the fingerprint in ``meta``) and
to the conformance suite of ``server/src/dbembeddings/mod.rs`` at
f28bdd54 (the newest that has ``chunks_with_vectors_returns_the_notes_rows``).
kimun's own vecsqlite tests are reproduced below under their kimun names,
run against :class:`StoreWriter` (writes) and :class:`KimunStore` (queries).

Every store here is a real SQLite file; the read-only folder is made
unwritable for real (a child process without root's capabilities when the
tests run as root).
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import itertools
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from askkit.dense import StoreWriter
from askkit.dense.store import (
    COLUMNS,
    DB_FILE,
    FINGERPRINT_KEY,
    Collection,
    KimunStore,
    StoredVault,
)
from askkit.dense.vectors import exact_top_k, normalise
from askkit.errors import DimensionError, SchemaError, StoreError, UsageError
from askkit.frame.schema import STRING
from askkit.testing.stores import (
    insert_kimun_rows,
    kimun_normalise,
    open_kimun_sqlite,
    random_store_rows,
    write_kimun_sqlite,
)
from tests.test_cachedir import spoil


def file_states(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file in ``folder`` with its bytes and modification time."""
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(folder.iterdir())}


# -- KimunStore: reading --------------------------------------------------------------------


@pytest.fixture
def store_folder(tmp_path: Path) -> tuple[Path, list[dict[str, Any]], np.ndarray]:
    rows, vectors = random_store_rows(40, 8, seed=7)
    rows[1] = {**rows[1], "title": None}  # kimun reads a missing title as ""
    write_kimun_sqlite(
        tmp_path,
        {"notes": (rows, vectors), "other": (rows[:4], vectors[:4]), "empty": ([], vectors[:0])},
        fingerprint="  fastembed:bgesmallenv15:8\n",
    )
    return tmp_path, rows, vectors


def test_kimun_store_lists_vaults_with_notes_chunks_and_dimension(store_folder: Any) -> None:
    folder, rows, _ = store_folder
    store = KimunStore(folder)
    notes = len({r["path"] for r in rows})
    assert store.collections() == [
        Collection("empty", 0, 0, 8),
        Collection("notes", notes, 40, 8),
        Collection("other", 2, 4, 8),
    ]
    assert store.fingerprint == "fastembed:bgesmallenv15:8"  # trimmed, as kimun reads it
    assert store.path == folder / DB_FILE
    assert KimunStore(folder / DB_FILE).collections() == store.collections()


def test_kimun_store_loads_rows_as_stored_and_vectors_as_kimun_normalised(
    store_folder: Any,
) -> None:
    folder, rows, vectors = store_folder
    vault = KimunStore(folder).load("notes")
    assert isinstance(vault, StoredVault)
    assert len(vault) == 40
    assert vault.dimension == 8
    assert list(vault.chunks.columns) == list(COLUMNS)
    assert all(vault.chunks[c].dtype == STRING for c in COLUMNS)
    assert vault.chunks["path"].tolist() == [r["path"] for r in rows]
    assert vault.chunks["text"].tolist() == [r["text"] for r in rows]
    assert vault.chunks["title"].iloc[1] == ""
    assert vault.chunks["title"].iloc[0] == rows[0]["title"]
    dates = vault.chunks["date"]
    assert dates.isna().tolist() == [r["date"] is None for r in rows]
    assert dates.dropna().tolist() == [r["date"] for r in rows if r["date"]]
    assert vault.matrix.dtype == np.float32
    assert vault.matrix.flags.c_contiguous
    assert not vault.matrix.flags.writeable
    assert (
        vault.matrix.view(np.uint32).tolist() == kimun_normalise(vectors).view(np.uint32).tolist()
    )
    empty = KimunStore(folder).load("empty")
    assert len(empty) == 0
    assert empty.matrix.shape == (0, 8)
    assert list(empty.chunks) == list(COLUMNS)


def test_kimun_store_reads_dates_as_kimuns_server_parses_them(tmp_path: Path) -> None:
    rows, vectors = random_store_rows(5, 4, seed=0)
    dates = ["2025-01-15", "2025-1-5", "2025-02-30", "yesterday", ""]
    rows = [{**r, "date": d} for r, d in zip(rows, dates, strict=True)]
    write_kimun_sqlite(tmp_path, {"v": (rows, vectors)})
    got = KimunStore(tmp_path).load("v").chunks["date"]
    assert got.iloc[:2].tolist() == ["2025-01-15", "2025-01-05"]
    assert got.iloc[2:].isna().all()  # chrono's parse fails: kimun sends no date


def test_an_unknown_vault_id_is_refused_with_the_known_ids(store_folder: Any) -> None:
    folder, _, _ = store_folder
    with pytest.raises(
        StoreError, match="no vault 'note'; its vault ids are 'empty', 'notes'"
    ) as err:
        KimunStore(folder).load("note")
    assert err.value.path == str(folder / DB_FILE)
    fresh = tmp = folder / "fresh"
    open_kimun_sqlite(tmp).close()
    with pytest.raises(StoreError, match="holds no vault yet"):
        KimunStore(fresh).load("notes")


def test_a_closed_store_refuses_to_read(store_folder: Any) -> None:
    folder, _, _ = store_folder
    with KimunStore(folder) as store:
        assert not repr(store).endswith("(closed)>")
    assert repr(store).endswith("(closed)>")
    with pytest.raises(UsageError, match="closed"):
        store.collections()


# -- KimunStore: what is not a kimun store --------------------------------------------------


def test_a_missing_path_or_a_folder_without_the_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no such file or folder") as err:
        KimunStore(tmp_path / "nope")
    assert err.value.path == str(tmp_path / "nope")
    with pytest.raises(StoreError, match=f"holds no {DB_FILE}") as err:
        KimunStore(tmp_path)
    assert err.value.path == str(tmp_path)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "is empty"),
        (b"SQLite", "too short to be an SQLite database"),
        (bytes(range(256)) * 64, "not an SQLite database"),
    ],
    ids=["empty", "short", "random-bytes"],
)
def test_a_file_that_is_not_a_database_is_refused(
    tmp_path: Path, content: bytes, message: str
) -> None:
    (tmp_path / DB_FILE).write_bytes(content)
    with pytest.raises(StoreError, match=message) as err:
        KimunStore(tmp_path)
    assert err.value.path == str(tmp_path / DB_FILE)


def test_a_truncated_store_is_refused_as_damaged(tmp_path: Path) -> None:
    rows, vectors = random_store_rows(2000, 64, seed=0)
    db = write_kimun_sqlite(tmp_path, {"v": (rows, vectors)})
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 2])
    with pytest.raises(StoreError, match="damaged") as err:
        KimunStore(tmp_path).load("v")
    assert err.value.path == str(db)


def test_a_foreign_sqlite_file_is_refused_naming_its_tables(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / DB_FILE)
    conn.executescript("CREATE TABLE notes (id INTEGER, body TEXT); CREATE TABLE meta (k, v);")
    conn.close()
    with pytest.raises(StoreError, match=r"lacks the table.*collections, chunks.*has meta, notes"):
        KimunStore(tmp_path)


def test_a_table_without_kimuns_columns_is_refused(tmp_path: Path) -> None:
    conn = open_kimun_sqlite(tmp_path)
    conn.executescript("DROP TABLE meta; CREATE TABLE meta (key TEXT);")
    conn.close()
    with pytest.raises(StoreError, match=r"meta table lacks the column.*value"):
        KimunStore(tmp_path)


@pytest.mark.parametrize(
    ("embedding", "match"),
    [
        ("zeroblob(28)", r"chunk 4 .* is 28 bytes.*dimension 8 makes it 32"),
        ("'text'", r"chunk 4 .* is not a blob"),
    ],
)
def test_a_blob_of_the_wrong_length_is_refused_naming_the_chunk(
    embedding: str, match: str, tmp_path: Path
) -> None:
    rows, vectors = random_store_rows(6, 8, seed=0)
    write_kimun_sqlite(tmp_path, {"v": (rows, vectors)})
    conn = sqlite3.connect(tmp_path / DB_FILE)
    conn.execute(f"UPDATE chunks SET embedding = {embedding} WHERE id = 4")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match=match):
        KimunStore(tmp_path).load("v")


def test_a_locked_store_is_refused_after_the_busy_timeout(tmp_path: Path) -> None:
    rows, vectors = random_store_rows(10, 4, seed=0)
    writer = open_kimun_sqlite(tmp_path)
    insert_kimun_rows(writer, "v", rows, vectors)
    writer.execute("PRAGMA locking_mode = EXCLUSIVE")
    writer.execute("BEGIN EXCLUSIVE")  # another connection holds the exclusive lock
    try:
        with pytest.raises(StoreError, match="locked by another connection") as err:
            KimunStore(tmp_path, timeout=0.2)
        assert err.value.path == str(tmp_path / DB_FILE)
    finally:
        writer.execute("COMMIT")
        writer.close()
    assert len(KimunStore(tmp_path).load("v")) == 10  # free again


# -- KimunStore never writes ----------------------------------------------------------------

_SERVER = """
import json, sys
import numpy as np
from askkit.testing.stores import insert_kimun_rows, open_kimun_sqlite
folder, data = sys.argv[1], np.load(sys.argv[2])
conn = open_kimun_sqlite(folder)
conn.execute("PRAGMA wal_autocheckpoint = 0")
insert_kimun_rows(conn, "v", json.loads(str(data["rows"])), data["vectors"])
print("ready", flush=True)
sys.stdin.readline()
conn.close()
"""


@contextlib.contextmanager
def kimun_server(folder: Path, rows: list[dict[str, Any]], vectors: np.ndarray) -> Iterator[None]:
    """A running kimun server, as far as the store sees one: another process that stored
    ``rows`` and keeps the database open without checkpointing its log."""
    data = folder.parent / f"{folder.name}-server.npz"
    np.savez(data, rows=json.dumps(rows), vectors=vectors)
    proc = subprocess.Popen(
        [sys.executable, "-c", _SERVER, str(folder), str(data)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    try:
        assert proc.stdout.readline().strip() == "ready"
        yield
    finally:
        proc.stdin.write("\n")
        proc.stdin.close()
        proc.wait(timeout=60)
        proc.stdout.close()


def test_reading_a_closed_store_changes_no_byte_and_creates_no_file(store_folder: Any) -> None:
    folder, _, _ = store_folder
    before = file_states(folder)
    assert list(before) == [DB_FILE]  # kimun's server closed it: no log
    store = KimunStore(folder)
    store.collections()
    store.load("notes")
    assert file_states(folder) == before


def test_rows_still_in_the_write_ahead_log_are_read_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    rows, vectors = random_store_rows(30, 8, seed=1)
    folder = tmp_path / "store"
    write_kimun_sqlite(folder, {"v": (rows[:10], vectors[:10])})
    store = KimunStore(folder)  # opened while nobody else has the file
    with kimun_server(folder, rows[10:], vectors[10:]):
        before = file_states(folder)
        assert sorted(before) == [DB_FILE, f"{DB_FILE}-shm", f"{DB_FILE}-wal"]
        vault = store.load("v")
        assert len(vault) == 30
        assert vault.chunks["text"].tolist() == [r["text"] for r in rows]
        assert KimunStore(folder).collections() == [Collection("v", 10, 30, 8)]
        assert file_states(folder) == before  # not even the -shm's read marks


def test_a_log_without_its_index_is_read_from_a_copy(tmp_path: Path) -> None:
    rows, vectors = random_store_rows(20, 8, seed=2)
    live = tmp_path / "live"
    write_kimun_sqlite(live, {"v": (rows[:5], vectors[:5])})
    copied = tmp_path / "copied"  # the folder copied while the server ran, without -shm
    copied.mkdir()
    with kimun_server(live, rows[5:], vectors[5:]):
        for name in (DB_FILE, f"{DB_FILE}-wal"):
            shutil.copyfile(live / name, copied / name)
    before = file_states(copied)
    vault = KimunStore(copied).load("v")
    assert len(vault) == 20  # the rows only the log holds are there
    assert file_states(copied) == before  # and no -shm was made beside them


def test_a_server_opening_the_store_later_is_read_through_its_log(tmp_path: Path) -> None:
    rows, vectors = random_store_rows(12, 4, seed=3)
    write_kimun_sqlite(tmp_path, {"v": (rows[:2], vectors[:2])})
    store = KimunStore(tmp_path)
    assert len(store.load("v")) == 2
    server = open_kimun_sqlite(tmp_path)
    server.execute("PRAGMA wal_autocheckpoint = 0")
    insert_kimun_rows(server, "v", rows[2:], vectors[2:])
    try:
        assert len(store.load("v")) == 12
    finally:
        server.close()


_READER = """
import hashlib, json, sys
from pathlib import Path
from askkit.dense.store import KimunStore
folder = Path(sys.argv[1])
try:
    (folder / "probe").touch()
    writable = True
except PermissionError:
    writable = False
store = KimunStore(folder)
vault = store.load("v")
print(json.dumps({
    "writable": writable,
    "fingerprint": store.fingerprint,
    "collections": [c.chunks for c in store.collections()],
    "texts": vault.chunks["text"].tolist(),
    "matrix": hashlib.sha256(vault.matrix.tobytes()).hexdigest(),
}))
"""


def _drop_capabilities() -> None:  # pragma: no cover - runs in the child
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in range(64):
        libc.prctl(24, capability, 0, 0, 0)  # PR_CAPBSET_DROP: none left after exec


def read_unprivileged(folder: Path) -> dict[str, Any]:
    """KimunStore run in a child process for which ``folder``'s modes hold (root drops its
    capabilities, so a mode-0555 folder is as read-only to it as to anyone)."""
    out = subprocess.run(
        [sys.executable, "-c", _READER, str(folder)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        preexec_fn=_drop_capabilities if os.geteuid() == 0 else None,
    )
    assert out.returncode == 0, out.stderr
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def freeze(folder: Path) -> None:
    for path in folder.iterdir():
        path.chmod(0o444)
    folder.chmod(0o555)


@pytest.mark.parametrize("state", ["closed", "live-log", "log-without-index"])
def test_a_store_in_a_read_only_folder_is_read(tmp_path: Path, state: str) -> None:
    rows, vectors = random_store_rows(24, 8, seed=9)
    folder = tmp_path / "store"
    write_kimun_sqlite(folder, {"v": (rows[:8], vectors[:8])}, fingerprint="fp")
    expected = rows if state != "closed" else rows[:8]
    with contextlib.ExitStack() as stack:
        if state != "closed":
            stack.enter_context(kimun_server(folder, rows[8:], vectors[8:]))
        if state == "log-without-index":
            frozen = tmp_path / "frozen"
            frozen.mkdir()
            for name in (DB_FILE, f"{DB_FILE}-wal"):
                shutil.copyfile(folder / name, frozen / name)
            folder = frozen
        freeze(folder)
        stack.callback(folder.chmod, 0o755)
        before = file_states(folder)
        got = read_unprivileged(folder)
        assert file_states(folder) == before
    assert got["writable"] is False  # the folder really was read-only to the reader
    assert got["fingerprint"] == "fp"
    assert got["collections"] == [len(expected)]
    assert got["texts"] == [r["text"] for r in expected]
    matrix = kimun_normalise(vectors[: len(expected)]).tobytes()
    assert got["matrix"] == hashlib.sha256(matrix).hexdigest()


# -- StoreWriter + KimunStore: kimun's vecsqlite tests, under their kimun names ---------------

DIM = 8


def vector_for(text: str) -> np.ndarray:
    """conformance::vector_for: a deterministic non-zero vector per text."""
    v = np.zeros(DIM, dtype=np.float32)
    v[0] = 1.0
    for i, b in enumerate(text.encode()):
        v[1 + i % (DIM - 1)] += b
    return v


def row(path: str, hash_: str, text: str) -> tuple[dict[str, Any], np.ndarray]:
    """conformance::row: title "T", no date."""
    return {"path": path, "hash": hash_, "title": "T", "date": None, "text": text}, vector_for(text)


def put(writer: StoreWriter, c: str, *rows_: tuple[dict[str, Any], np.ndarray]) -> None:
    writer.store(c, pd.DataFrame([r for r, _ in rows_]), np.stack([v for _, v in rows_]))


def put_a_and_b(writer: StoreWriter, section: str) -> None:
    """Note a.md in two chunks (``alpha {section} one``, ``... two``), b.md in one, in "v"."""
    put(
        writer,
        "v",
        row("a.md", "h1", f"alpha {section} one"),
        row("a.md", "h1", f"alpha {section} two"),
        row("b.md", "h2", "beta"),
    )


def query(folder: Path, c: str, vector: np.ndarray, limit: int) -> list[tuple[float, dict]]:
    """kimun's VecSqlite::query over what KimunStore reads: empty for a missing collection."""
    store = KimunStore(folder)
    if c not in {col.name for col in store.collections()}:
        return []
    vault = store.load(c)
    rows, scores = exact_top_k(vault.matrix, vector, limit)
    records = vault.chunks.to_dict("records")
    return [(float(s), records[i]) for i, s in zip(rows, scores, strict=True)]


@pytest.fixture
def writer(tmp_path: Path) -> Any:
    with StoreWriter(tmp_path / "store", dimension=DIM) as w:
        yield w


def test_conformance_store_then_query(writer: StoreWriter) -> None:
    put(writer, "v", row("a.md", "h1", "the quick brown fox"), row("b.md", "h2", "lazy dog sleeps"))
    results = query(writer.folder, "v", vector_for("the quick brown fox"), 10)
    assert results
    assert results[0][1]["path"] == "a.md", "best match first"
    assert all(a[0] >= b[0] for a, b in itertools.pairwise(results))


def test_conformance_query_limit(writer: StoreWriter) -> None:
    put(writer, "v", *(row(f"n{i}.md", "h", f"text {i}") for i in range(5)))
    assert len(query(writer.folder, "v", vector_for("text"), 3)) == 3


def test_conformance_missing_collection(writer: StoreWriter) -> None:
    assert writer.indexed_notes("nope") == {}
    assert query(writer.folder, "nope", vector_for("q"), 10) == []
    writer.delete("nope", ["x.md"])  # a no-op, not an error


def test_conformance_chunks_with_vectors(writer: StoreWriter) -> None:
    chunks, vectors = writer.chunks_with_vectors("v", ["a.md"])
    assert len(chunks) == 0
    assert vectors.shape == (0, DIM)
    put_a_and_b(writer, "part")
    chunks, vectors = writer.chunks_with_vectors("v", ["a.md"])
    assert len(chunks) == 2, "only the requested note's chunks"
    assert chunks["path"].tolist() == ["a.md", "a.md"]
    for text, vector in zip(chunks["text"], vectors, strict=True):
        assert len(vector) == DIM
        original = vector_for(text)
        cosine = float(vector @ original) / float(np.linalg.norm(vector) * np.linalg.norm(original))
        assert abs(cosine - 1.0) < 1e-5, f"vector for {text!r} does not match what was stored"


def test_conformance_delete(writer: StoreWriter) -> None:
    put_a_and_b(writer, "section")
    writer.delete("v", ["a.md"])
    notes = writer.indexed_notes("v")
    assert list(notes) == ["b.md"]
    results = query(writer.folder, "v", vector_for("alpha section one"), 10)
    assert all(chunk["path"] != "a.md" for _, chunk in results)


def test_conformance_indexed_notes(writer: StoreWriter) -> None:
    put_a_and_b(writer, "part")
    assert writer.indexed_notes("v") == {"a.md": "h1", "b.md": "h2"}, "notes, not chunks"


def test_conformance_collections(writer: StoreWriter) -> None:
    put(writer, "vault_a", row("a.md", "h", "x"))
    put(writer, "vault_b", row("b.md", "h", "y"))
    infos = KimunStore(writer.folder).collections()
    assert {c.name for c in infos} >= {"vault_a", "vault_b"}
    assert {c.name: c.notes for c in infos} == {"vault_a": 1, "vault_b": 1}
    assert writer.collections() == infos


def test_conformance_round_trip(writer: StoreWriter) -> None:
    r, v = row("2025-01-15.md", "h9", "journal body")
    put(writer, "v", ({**r, "title": "Morning", "date": "2025-01-15"}, v))
    (_, chunk), *_ = query(writer.folder, "v", vector_for("journal body"), 1)
    assert chunk == {
        "path": "2025-01-15.md",
        "hash": "h9",
        "title": "Morning",
        "date": "2025-01-15",
        "text": "journal body",
    }


def test_conformance_fingerprint_round_trip(writer: StoreWriter) -> None:
    assert writer.read_fingerprint() is None, "fresh store has none"
    writer.write_fingerprint("fastembed:default:1024")
    assert writer.read_fingerprint() == "fastembed:default:1024"
    writer.write_fingerprint("ollama:nomic:768")  # overwrite wins
    assert writer.read_fingerprint() == "ollama:nomic:768"
    assert KimunStore(writer.folder).fingerprint == "ollama:nomic:768"


def test_conformance_drop_all(writer: StoreWriter) -> None:
    writer.write_fingerprint("fp1")
    put(writer, "va", row("a.md", "h", "x"))
    put(writer, "vb", row("b.md", "h", "y"))
    writer.drop_all_collections()
    assert KimunStore(writer.folder).collections() == [], "no vault collections left"
    assert writer.indexed_notes("va") == {}
    writer.write_fingerprint("fp2")  # the fingerprint slot is metadata, not a collection
    assert writer.read_fingerprint() == "fp2"


def test_conformance_fingerprint_not_a_collection(writer: StoreWriter) -> None:
    writer.write_fingerprint("fp")
    assert KimunStore(writer.folder).collections() == []
    assert writer.collections() == []


def test_dimension_mismatch_fails_loudly(tmp_path: Path) -> None:
    with StoreWriter(tmp_path, dimension=8) as s8:
        put(s8, "v", row("a.md", "h", "x"))
    # reopen the same folder at another width: writes must be refused
    with StoreWriter(tmp_path, dimension=16) as s16:
        chunk = pd.DataFrame([row("b.md", "h", "y")[0]])
        with pytest.raises(DimensionError, match="dimension") as err:
            s16.store("v", chunk, np.full((1, 16), 0.5))
    assert (err.value.expected, err.value.actual) == (16, 8)
    assert len(KimunStore(tmp_path).load("v")) == 1  # nothing half-written


def test_store_survives_reopen(tmp_path: Path) -> None:
    with StoreWriter(tmp_path, dimension=DIM) as s:
        put(s, "v", row("a.md", "h1", "persistent chunk"))
        s.write_fingerprint("fp")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["CACHEDIR.TAG", DB_FILE]  # checkpointed
    with StoreWriter(tmp_path, dimension=DIM) as s:
        assert query(tmp_path, "v", vector_for("persistent chunk"), 1)[0][1]["path"] == "a.md"
        assert s.read_fingerprint() == "fp"


# -- StoreWriter: askkit's own checks -------------------------------------------------------


def test_store_writer_writes_what_kimun_writes_byte_for_byte(tmp_path: Path) -> None:
    rows, vectors = random_store_rows(50, 12, seed=8)
    write_kimun_sqlite(tmp_path / "kimun", {"v": (rows, vectors)}, fingerprint="fp")
    with StoreWriter(tmp_path / "askkit", dimension=12) as w:
        w.store("v", pd.DataFrame(rows), vectors)
        w.write_fingerprint("fp")

    def dump(folder: Path) -> list[Any]:
        conn = sqlite3.connect(folder / DB_FILE)
        try:
            return [
                conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall(),
                conn.execute("SELECT * FROM collections").fetchall(),
                conn.execute("SELECT * FROM chunks ORDER BY id").fetchall(),
                conn.execute("SELECT * FROM meta").fetchall(),
                conn.execute("PRAGMA journal_mode").fetchall(),
            ]
        finally:
            conn.close()

    assert dump(tmp_path / "askkit") == dump(tmp_path / "kimun")
    assert dump(tmp_path / "askkit")[-1] == [("wal",)]


def test_store_writer_refuses_a_folder_it_did_not_make(tmp_path: Path) -> None:
    kimun = tmp_path / "kimun"
    write_kimun_sqlite(kimun, {"v": random_store_rows(3, 4, seed=0)})
    before = file_states(kimun)
    with pytest.raises(UsageError, match="did not make"):
        StoreWriter(kimun, dimension=4)  # a kimun server's own store: never written
    assert file_states(kimun) == before
    (tmp_path / "file").write_text("x")
    with pytest.raises(UsageError, match="is a file"):
        StoreWriter(tmp_path / "file", dimension=4)
    (tmp_path / "link").symlink_to(kimun)
    with pytest.raises(UsageError, match="symbolic link"):
        StoreWriter(tmp_path / "link", dimension=4)
    with pytest.raises(UsageError, match="positive"):
        StoreWriter(tmp_path / "new", dimension=0)


def test_store_writer_marks_a_new_or_empty_folder_and_reopens_its_own(tmp_path: Path) -> None:
    from askkit._cachedir import is_ours

    (tmp_path / "empty").mkdir()
    for folder in (tmp_path / "new" / "nested", tmp_path / "empty"):
        StoreWriter(folder, dimension=4).close()
        assert is_ours(folder)
        StoreWriter(folder, dimension=4).close()  # its own: reopened


def test_store_writer_checks_its_input(writer: StoreWriter) -> None:
    chunk, vector = row("a.md", "h", "x")
    with pytest.raises(DimensionError) as err:
        writer.store("v", pd.DataFrame([chunk]), np.ones((1, DIM + 1)))
    assert (err.value.expected, err.value.actual) == (DIM, DIM + 1)
    with pytest.raises(UsageError, match="one vector per chunk"):
        writer.store("v", pd.DataFrame([chunk, chunk]), vector[None, :])
    with pytest.raises(UsageError, match="no 'hash' column"):
        writer.store("v", pd.DataFrame([{"path": "a.md", "text": "x"}]), vector[None, :])
    with pytest.raises(SchemaError, match=r"chunks\[0\].text"):
        writer.store("v", pd.DataFrame([{**chunk, "text": None}]), vector[None, :])
    writer.store("v", pd.DataFrame([{**chunk, "title": None}]), vector[None, :])
    assert writer.load("v").chunks["title"].tolist() == [""]
    writer.store("w", pd.DataFrame(columns=list(COLUMNS)), np.zeros((0, DIM)))
    assert [c.name for c in writer.collections()] == ["v"]  # no rows: no collection, as kimun


def test_store_writer_handles_more_paths_than_sqlite_parameters(writer: StoreWriter) -> None:
    rows_ = [row(f"n{i:04d}.md", "h", f"t{i}") for i in range(1200)]
    put(writer, "v", *rows_)
    chunks, vectors = writer.chunks_with_vectors("v", [f"n{i:04d}.md" for i in range(1199, -1, -1)])
    assert chunks["path"].tolist() == [f"n{i:04d}.md" for i in range(1200)]  # stored order
    assert vectors.shape == (1200, DIM)
    writer.delete("v", [f"n{i:04d}.md" for i in range(0, 1200, 2)])
    assert len(writer.indexed_notes("v")) == 600


def test_storing_reused_vectors_normalises_them_again_as_kimun_does(writer: StoreWriter) -> None:
    put(writer, "v", row("a.md", "h", "alpha"))
    chunks, vectors = writer.chunks_with_vectors("v", ["a.md"])
    writer.delete("v", ["a.md"])
    writer.store("v", chunks, vectors)
    again = writer.load("v").matrix
    assert again.view(np.uint32).tolist() == normalise(vectors).view(np.uint32).tolist()


def test_a_closed_writer_refuses_to_write(tmp_path: Path) -> None:
    w = StoreWriter(tmp_path, dimension=4)
    w.close()
    w.close()  # idempotent
    assert "closed" in repr(w)
    with pytest.raises(UsageError, match="closed"):
        w.write_fingerprint("fp")


def test_fingerprint_key_is_kimuns() -> None:
    assert FINGERPRINT_KEY == "embedder.fingerprint"
    assert DB_FILE == "embeddings.db"


# -- askkit's store folder: only the files themselves, never through a link ---------------------


def kimun_folder(folder: Path) -> Path:
    """A kimun server's own store, with a fingerprint, closed."""
    write_kimun_sqlite(
        folder, {"v": random_store_rows(6, DIM, seed=0)}, fingerprint="kimun:model:8"
    )
    return folder


def askkit_folder(folder: Path) -> Path:
    """An askkit store folder (tagged) whose ``embeddings.db`` has been taken away."""
    StoreWriter(folder, dimension=DIM).close()
    (folder / DB_FILE).unlink()
    return folder


def test_store_writer_refuses_a_database_that_is_a_link_and_leaves_its_target_untouched(
    tmp_path: Path,
) -> None:
    kimun = kimun_folder(tmp_path / "kimun")
    before = file_states(kimun)
    mine = askkit_folder(tmp_path / "mine")
    (mine / DB_FILE).symlink_to(kimun / DB_FILE)
    with pytest.raises(StoreError, match="is a symbolic link") as err:
        StoreWriter(mine, dimension=DIM)
    assert err.value.path == str(mine / DB_FILE)
    assert str(kimun / DB_FILE) in str(err.value)  # says where it points
    assert file_states(kimun) == before  # kimun's store: not a byte, not a file more
    assert KimunStore(kimun).fingerprint == "kimun:model:8"


def test_store_writer_never_creates_its_tables_in_a_linked_foreign_database(
    tmp_path: Path,
) -> None:
    foreign = tmp_path / "app.db"
    conn = sqlite3.connect(foreign)
    conn.execute("CREATE TABLE notes (body TEXT)")
    conn.commit()
    conn.close()
    before = foreign.read_bytes()
    mine = askkit_folder(tmp_path / "mine")
    (mine / DB_FILE).symlink_to(foreign)
    with pytest.raises(StoreError, match="symbolic link"):
        StoreWriter(mine, dimension=DIM)
    assert foreign.read_bytes() == before
    assert not Path(f"{foreign}-wal").exists()


@pytest.mark.parametrize("kind", ["fifo", "folder", "hard-link"])
def test_store_writer_refuses_a_database_that_is_not_its_own_regular_file(
    tmp_path: Path, kind: str
) -> None:
    mine = askkit_folder(tmp_path / "mine")
    db = mine / DB_FILE
    if kind == "fifo":
        os.mkfifo(db)
        expected = "not a regular file"
    elif kind == "folder":
        db.mkdir()
        expected = "not a regular file"
    else:
        other = kimun_folder(tmp_path / "kimun") / DB_FILE
        os.link(other, db)
        expected = "2 hard links"
    with pytest.raises(StoreError, match=expected) as err:
        StoreWriter(mine, dimension=DIM)  # a FIFO is refused, not opened (which would block)
    assert err.value.path == str(db)


@pytest.mark.parametrize("suffix", ["-wal", "-shm", "-journal"])
def test_store_writer_refuses_a_side_file_that_is_a_link(tmp_path: Path, suffix: str) -> None:
    mine = tmp_path / "mine"
    with StoreWriter(mine, dimension=DIM) as writer:
        put(writer, "v", row("a.md", "h", "x"))
    elsewhere = tmp_path / f"elsewhere{suffix}"
    (mine / f"{DB_FILE}{suffix}").symlink_to(elsewhere)
    with pytest.raises(StoreError, match="is a symbolic link") as err:
        StoreWriter(mine, dimension=DIM)
    assert err.value.path == str(mine / f"{DB_FILE}{suffix}")
    assert not elsewhere.exists()  # nothing written through the link


@pytest.mark.parametrize("suffix", ["-wal", "-journal"])
def test_kimun_store_names_a_side_file_that_is_a_link(tmp_path: Path, suffix: str) -> None:
    kimun = kimun_folder(tmp_path / "kimun")
    (tmp_path / "log").write_bytes(b"")
    (kimun / f"{DB_FILE}{suffix}").symlink_to(tmp_path / "log")
    if suffix == "-wal":
        (kimun / f"{DB_FILE}-shm").write_bytes(bytes(32768))
    with pytest.raises(StoreError, match=f"{DB_FILE}{suffix} .*is a symbolic link") as err:
        KimunStore(kimun)
    assert err.value.path == str(kimun / f"{DB_FILE}{suffix}")


# -- kimun's values: each column's SQLite type and range ----------------------------------------


def tampered(folder: Path, *statements: str) -> Path:
    """A kimun store of two notes whose rows the statements then change (no foreign keys)."""
    rows, vectors = random_store_rows(6, DIM, seed=0)
    write_kimun_sqlite(folder, {"notes": (rows, vectors)}, fingerprint="fp")
    conn = sqlite3.connect(folder / DB_FILE)
    for statement in statements:
        conn.execute(statement)
    conn.commit()
    conn.close()
    return folder


@pytest.mark.parametrize(
    ("statement", "where"),
    [
        (
            "UPDATE collections SET dimension = 'eight'",
            "table collections, row id 1 (vault 'notes'), column dimension holds the text 'eight'",
        ),
        (
            "UPDATE collections SET dimension = 8.7",
            "table collections, row id 1 (vault 'notes'), column dimension holds the real "
            "number 8.7",
        ),
        (
            "UPDATE collections SET dimension = 0",
            "column dimension holds the integer 0",
        ),
        (
            "UPDATE collections SET dimension = 4294967296",
            "column dimension holds the integer 4294967296",
        ),
        (
            "UPDATE collections SET name = x'6e6f746573'",
            "table collections, row id 1, column name holds a blob of 5 bytes",
        ),
    ],
    ids=["text-dimension", "real-dimension", "zero-dimension", "huge-dimension", "blob-name"],
)
def test_a_collection_value_kimun_never_writes_is_a_store_error_naming_table_row_and_column(
    tmp_path: Path, statement: str, where: str
) -> None:
    folder = tampered(tmp_path, statement)
    store = KimunStore(folder)
    for call in (store.collections, lambda: store.load("notes")):
        with pytest.raises(StoreError, match=re.escape(where)) as err:
            call()
        assert err.value.path == str(folder / DB_FILE)
        assert str(folder / DB_FILE) in str(err.value)


@pytest.mark.parametrize(
    ("column", "row_id", "value", "where"),
    [
        ("path", 2, b"ab", "table chunks, row id 2, column path holds a blob of 2 bytes"),
        ("hash", 3, None, "table chunks, row id 3, column hash holds NULL"),
        ("title", 4, b"\x00", "table chunks, row id 4, column title holds a blob of 1 byte"),
        ("date", 5, b"\x00", "table chunks, row id 5, column date holds a blob"),
        ("text", 6, 2.5, "table chunks, row id 6, column text holds the real number 2.5"),
    ],
    ids=["blob-path", "null-hash", "blob-title", "blob-date", "real-text"],
)
def test_a_chunk_value_kimun_never_writes_is_a_store_error_naming_table_row_and_column(
    tmp_path: Path, column: str, row_id: int, value: object, where: str
) -> None:
    folder = untyped_store(tmp_path, column, row_id, value)  # kimun's DDL would refuse some
    with pytest.raises(StoreError, match=re.escape(where)) as err:
        KimunStore(folder).load("notes")
    assert err.value.path == str(folder / DB_FILE)


def untyped_store(folder: Path, column: str, row_id: int, value: object) -> Path:
    """kimun's tables and columns without kimun's declared types, one value changed."""
    rows, vectors = random_store_rows(6, DIM, seed=0)
    write_kimun_sqlite(folder / "src", {"notes": (rows, vectors)})
    folder.mkdir(exist_ok=True)
    conn = sqlite3.connect(folder / DB_FILE)
    conn.execute(f"ATTACH DATABASE '{folder / 'src' / DB_FILE}' AS src")
    conn.executescript(  # kimun's columns, none of kimun's declared types
        "CREATE TABLE collections (id INTEGER PRIMARY KEY, name, dimension);"
        "CREATE TABLE chunks (id INTEGER PRIMARY KEY, collection_id, path, hash, title, date, "
        "text, embedding);"
        "CREATE TABLE meta (key, value);"
    )
    for table in ("collections", "chunks", "meta"):
        conn.execute(f"INSERT INTO {table} SELECT * FROM src.{table}")
    conn.execute(f"UPDATE chunks SET {column} = ? WHERE id = ?", (value, row_id))
    conn.commit()
    conn.execute("DETACH DATABASE src")
    conn.close()
    shutil.rmtree(folder / "src")
    return folder


def test_an_integer_path_in_a_store_without_kimuns_types_is_refused(tmp_path: Path) -> None:
    folder = untyped_store(tmp_path, "path", 2, 5)
    store = KimunStore(folder)
    where = r"table chunks, row id 2, column path holds the integer 5"
    with pytest.raises(StoreError, match=where):
        store.load("notes")


def test_a_fingerprint_that_is_not_text_is_refused_naming_the_meta_row(tmp_path: Path) -> None:
    folder = tampered(tmp_path, "UPDATE meta SET value = x'4142'")
    with pytest.raises(
        StoreError, match=r"table meta, row key 'embedder.fingerprint', column value holds a blob"
    ):
        KimunStore(folder)


def test_a_store_writer_reads_kimuns_values_with_the_same_checks(tmp_path: Path) -> None:
    with StoreWriter(tmp_path, dimension=DIM) as writer:
        put(writer, "v", row("a.md", "h", "x"))
        conn = sqlite3.connect(tmp_path / DB_FILE)
        conn.execute("UPDATE collections SET dimension = 'eight'")
        conn.commit()
        conn.close()
        with pytest.raises(StoreError, match="column dimension holds the text 'eight'"):
            writer.collections()
        with pytest.raises(StoreError, match="column dimension holds the text 'eight'"):
            put(writer, "v", row("b.md", "h", "y"))
        conn = sqlite3.connect(tmp_path / DB_FILE)
        conn.execute("UPDATE collections SET dimension = ?", (DIM,))
        conn.execute("UPDATE chunks SET path = x'6162'")
        conn.commit()
        conn.close()
        with pytest.raises(StoreError, match=r"table chunks, row id 1, column path holds a blob"):
            writer.indexed_notes("v")


def test_kimun_store_refuses_a_path_that_is_not_a_path(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="KimunStore takes a folder or a file path, not 5"):
        KimunStore(5)  # type: ignore[arg-type]


# -- what lies beside the database ----------------------------------------------------------------


def test_a_stray_journal_beside_a_kimun_store_is_named_as_what_blocks_the_read(
    tmp_path: Path,
) -> None:
    folder = kimun_folder(tmp_path / "kimun")
    journal = folder / f"{DB_FILE}-journal"
    journal.write_bytes(np.random.default_rng(4).bytes(4096))
    with pytest.raises(StoreError) as err:
        KimunStore(folder)
    message = str(err.value)
    assert str(journal) in message
    assert "rollback journal" in message
    assert "attempt to write a readonly database" not in message
    assert err.value.path == str(journal)


def test_a_log_that_vanishes_while_it_is_copied_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A kimun server closing mid-read: SQLite deletes the -shm, then the -wal. A reader that
    saw the log without its index copies it; here the server really closes (a real
    connection checkpoints the log into the file and deletes both) just before that copy."""
    rows, vectors = random_store_rows(20, DIM, seed=5)
    live = tmp_path / "live"
    write_kimun_sqlite(live, {"v": (rows[:5], vectors[:5])})
    folder = tmp_path / "copied"
    folder.mkdir()
    with kimun_server(live, rows[5:], vectors[5:]):
        for name in (DB_FILE, f"{DB_FILE}-wal"):
            shutil.copyfile(live / name, folder / name)
    store = KimunStore(folder)
    real_copy = shutil.copyfile
    closed: list[bool] = []

    def server_closes_first(src: Any, dst: Any, **kwargs: Any) -> Any:
        if str(src).endswith("-wal") and not closed:
            closed.append(True)
            server = sqlite3.connect(folder / DB_FILE)
            server.execute("SELECT COUNT(*) FROM chunks").fetchall()
            server.close()  # checkpoints the log into the file and deletes -wal and -shm
            assert sorted(p.name for p in folder.iterdir()) == [DB_FILE]
        return real_copy(src, dst, **kwargs)

    monkeypatch.setattr(shutil, "copyfile", server_closes_first)
    vault = store.load("v")
    assert closed == [True]
    assert vault.chunks["text"].tolist() == [r["text"] for r in rows]


# -- StoreWriter: a full disk, text SQLite cannot hold, vectors kimun cannot rank ----------------


def test_a_full_disk_during_store_is_a_store_error_saying_so(writer: StoreWriter) -> None:
    put(writer, "v", row("a.md", "h", "kept"))
    writer.conn.execute("PRAGMA max_page_count = 8")  # SQLite's own limit: SQLITE_FULL
    big = [row(f"n{i}.md", "h", f"text {i} " * 40) for i in range(400)]
    with pytest.raises(StoreError, match="the disk holding it is full") as err:
        put(writer, "v", *big)
    assert err.value.path == str(writer.path)
    assert "cannot rollback" not in str(err.value)
    assert "nothing of this write was stored" in str(err.value)
    writer.conn.execute("PRAGMA max_page_count = 1073741823")
    assert writer.load("v").chunks["text"].tolist() == ["kept"]  # the earlier write stands
    put(writer, "v", row("b.md", "h", "after"))  # and the writer still works
    assert len(writer.load("v")) == 2


_FILE_SIZE_LIMIT = """
import json, resource, signal, sys
import numpy as np, pandas as pd
from askkit.dense import StoreWriter
from askkit.errors import StoreError
folder = sys.argv[1]
with StoreWriter(folder, dimension=8) as writer:
    writer.store("v", pd.DataFrame([{"path": "a.md", "hash": "h", "title": "t", "date": None,
                                      "text": "kept"}]), np.ones((1, 8)))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))
    rows = [{"path": f"n{i}.md", "hash": "h", "title": "t", "date": None, "text": "x" * 500}
            for i in range(8000)]
    try:
        writer.store("v", pd.DataFrame(rows), np.ones((8000, 8)))
    except StoreError as exc:
        print(json.dumps({"error": str(exc), "path": exc.path}))
    else:
        print(json.dumps({"error": None}))
"""


def test_a_write_past_the_file_size_limit_is_a_store_error_about_the_disk(tmp_path: Path) -> None:
    """SQLite's real write path failing (EFBIG under RLIMIT_FSIZE): the disk I/O error is
    reported as such, never hidden behind "cannot rollback"."""
    out = subprocess.run(
        [sys.executable, "-c", _FILE_SIZE_LIMIT, str(tmp_path / "store")],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["error"] is not None
    assert got["path"] == str(tmp_path / "store" / DB_FILE)
    assert "disk I/O error" in got["error"]
    assert "the disk may be full" in got["error"]
    assert "cannot rollback" not in got["error"]
    assert KimunStore(tmp_path / "store").load("v").chunks["text"].tolist() == ["kept"]


@pytest.mark.parametrize("column", ["path", "hash", "title", "date", "text"])
def test_store_refuses_a_lone_surrogate_naming_the_chunk(writer: StoreWriter, column: str) -> None:
    chunk = row("a.md", "h", "x")[0]
    bad = {**chunk, column: "caf\udce9"}  # as os.fsdecode makes an undecodable file name
    frame = pd.DataFrame([chunk, bad], dtype=object)  # Arrow strings could not hold it
    with pytest.raises(SchemaError, match=rf"chunks\[1\]\.{column}: .*UTF-8") as err:
        writer.store("v", frame, np.ones((2, DIM)))
    assert err.value.value == "caf\udce9"
    assert writer.load("v").chunks.empty  # nothing stored


def test_paths_and_vault_ids_sqlite_cannot_hold_are_refused(writer: StoreWriter) -> None:
    chunk, vector = row("a.md", "h", "x")
    with pytest.raises(UsageError, match="vault id"):
        writer.store("v\udce9", pd.DataFrame([chunk]), vector[None, :])
    with pytest.raises(SchemaError, match=r"paths\[1\]"):
        writer.delete("v", ["a.md", "b\udce9.md"])
    with pytest.raises(SchemaError, match=r"paths\[0\]"):
        writer.chunks_with_vectors("v", ["b\udce9.md"])
    with pytest.raises(UsageError, match="fingerprint"):
        writer.write_fingerprint("fastembed:\udce9:8")
    assert writer.read_fingerprint() is None


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf, 1e39])
def test_store_refuses_a_vector_that_is_not_finite_naming_the_chunk(
    writer: StoreWriter, value: float
) -> None:
    chunks = pd.DataFrame([row("a.md", "h", "x")[0], row("b.md", "h", "y")[0]])
    vectors = np.ones((2, DIM))
    vectors[1, 3] = value  # 1e39 is finite in float64 but not in float32
    with pytest.raises(SchemaError, match=r"vectors\[1\]: .*'b\.md'.*not finite"):
        writer.store("v", chunks, vectors)
    assert writer.load("v").chunks.empty


# -- issue 39: one rule for every folder askkit trusts; errors that name the folder ------------


@pytest.mark.parametrize("fault", ["writable", "other-user"])
def test_hardening_39_9_a_store_folder_askkit_does_not_trust_is_refused(
    tmp_path: Path, fault: str
) -> None:
    """askkit's own store, made writable by others or another user's: it may hold files
    askkit did not write, so it is neither written nor replaced."""
    folder = tmp_path / "store"
    with StoreWriter(folder, dimension=DIM) as writer:
        put(writer, "v", row("a.md", "h", "x"))
    expected = spoil(folder, fault, link=folder / "planted", owned=folder / DB_FILE)
    before = file_states(folder)
    with pytest.raises(StoreError) as err:
        StoreWriter(folder, dimension=DIM)
    message = str(err.value)
    assert message.startswith(f"the store folder {folder} is refused, not rebuilt: {expected}")
    assert "remove that folder yourself and askkit embeds the vault into a new one" in message
    assert file_states(folder) == before


@pytest.mark.parametrize("mask", [0o002, 0o022])
def test_hardening_39_9_a_store_folder_askkit_takes_is_made_private(
    tmp_path: Path, mask: int
) -> None:
    """New or empty, the folder askkit writes its store in becomes private, so the files
    SQLite creates with the umask's mode keep the rule; the store reopens."""
    from askkit._cachedir import untrusted

    empty = tmp_path / "empty"
    empty.mkdir(mode=0o755)
    before = os.umask(mask)
    try:
        for folder in (tmp_path / "new", empty):
            with StoreWriter(folder, dimension=DIM) as writer:
                put(writer, "v", row("a.md", "h", "x"))
    finally:
        os.umask(before)
    for folder in (tmp_path / "new", empty):
        assert oct(folder.stat().st_mode & 0o777) == oct(0o700)
        assert untrusted(folder) is None
        StoreWriter(folder, dimension=DIM).close()


def test_hardening_39_minor_cache_errors_name_the_folder_of_a_store(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("x")
    for folder, blocker in (
        (Path("/dev/null/store"), "/dev/null"),
        (tmp_path / "a-file" / "store", tmp_path / "a-file"),
    ):
        with pytest.raises(StoreError) as err:
            StoreWriter(folder, dimension=DIM)
        assert str(err.value).startswith(
            f"cannot make the store folder {folder}: {blocker} is not a folder ("
        )
        assert str(err.value).endswith(
            "give another store folder, or set ASKKIT_CACHE_DIR to a folder you can write"
        )
        assert err.value.path == str(folder)
