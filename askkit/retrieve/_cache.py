"""The cache folder of a :class:`~askkit.retrieve.local.LocalIndex`: owned, swapped whole, checked.

A cache folder holds::

    CACHEDIR.TAG     askkit's marker, written first (a standard cache directory tag)
    manifest.json    {"askkit_cache": FORMAT, "params", "vault", "notes", "chunks"}
    chunks.parquet   one row per chunk, columns CHUNK_COLUMNS, sorted by note path
    bm25/            bm25s's own save of the BM25 matrix (absent when there are no chunks)

Ownership: askkit writes, replaces and deletes only folders that carry its
``CACHEDIR.TAG``. :func:`claim` refuses, with a :class:`~askkit.errors.UsageError`
naming the path, a cache folder that holds anything else, that is a file or a
symbolic link, that is the vault, lies inside it or contains it; and, with a
:class:`~askkit.errors.StoreError`, one that breaks the rule of every folder
askkit trusts (:func:`askkit._cachedir.untrusted`: a link inside, another
user's, writable by others), which :func:`load` checks again before it reads
anything. A new cache
is written to a fresh sibling temporary folder (marked first), then swapped in
by renames; the previous folder is deleted only if it carries the marker, and
a sibling ``.old`` that is not askkit's is left alone (another name is used).

``params`` holds everything the BM25 index depends on: k1 and b, whether
headings are indexed, the split sizes, the kimun version whose chunker cut the
notes (``kimun``) and, under ``tokens``, how text became terms (the folding,
the word pattern, the stop-word list, the stemmer and the PyStemmer version).
A cache whose ``params`` differ in any of these is stale: a cache built
without stemming is never read by an index that stems, nor one cut by kimun
0.17's chunker by an index that cuts as 0.18.

Loading: :func:`load` checks every file against the schema askkit writes
before anything is used, and raises :class:`CorruptCache` saying what is
wrong; a cache written for other settings, another vault or another format is
not corrupt, only stale (``None``).
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import bm25s
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from askkit._cachedir import (
    LOCAL_INDEX,
    TAG_NAME,
    is_ours,
    refuse_untrusted,
    swap_in,
    tag_text,
    writing,
)
from askkit._cachedir import claim as claim_folder
from askkit.vault.split import CHUNK_COLUMNS

__all__ = [
    "ARROW_TYPES",
    "FORMAT",
    "TAG_NAME",
    "Cached",
    "CorruptCache",
    "bm25_params",
    "claim",
    "is_ours",
    "load",
    "save",
]

#: The cache layout's version (``manifest.json``'s ``askkit_cache``); another one is stale.
#: 3: ``params`` gained ``tokens`` (stop words and stemming), so a format-2 cache is rebuilt.
#: 4: ``params`` gained ``kimun`` (the chunker version), so a format-3 cache is rebuilt.
FORMAT = 4
#: Each chunk column's type in ``chunks.parquet`` (:data:`~askkit.vault.split.CHUNK_COLUMNS`,
#: in that order).
ARROW_TYPES = {
    "path": pa.string(),
    "title": pa.string(),
    "date": pa.string(),
    "text": pa.string(),
    "hash": pa.string(),
    "section": pa.int32(),
    "piece": pa.int32(),
    "start": pa.int64(),
    "end": pa.int64(),
}
_NULLABLE = frozenset({"date"})
_TAG = tag_text(
    LOCAL_INDEX,
    lifetime="askkit replaces this folder whenever it re-indexes",
)
_MANIFEST_KEYS = frozenset({"askkit_cache", "params", "vault", "notes", "chunks"})
_NOTE_KEYS = frozenset({"hash", "size", "mtime_ns"})
_BM25_ARRAYS = ("data", "indices", "indptr")


class CorruptCache(Exception):
    """The cache folder does not hold what askkit writes; the message says what is wrong."""


class _Stale(Exception):
    """The cache is sound but was written by another bm25s version."""


@dataclass(frozen=True, slots=True)
class Cached:
    """A cache read back and checked: the notes, the chunk columns and the BM25 index."""

    notes: dict[str, dict[str, Any]]
    cols: dict[str, list[Any]]
    bm25: bm25s.BM25 | None


# -- ownership ------------------------------------------------------------------------------


#: What a cache written by askkit before the tag existed holds, and nothing else.
_EARLIER_FILES = frozenset({"manifest.json", "chunks.parquet", "bm25"})
_EARLIER_BM25 = frozenset(
    {
        "data.csc.index.npy",
        "indices.csc.index.npy",
        "indptr.csc.index.npy",
        "params.index.json",
        "vocab.index.json",
    }
)


def _earlier_cache(folder: Path) -> bool:
    """Whether ``folder`` is exactly a cache an earlier askkit wrote (before the tag).

    Its entries are exactly that cache's files, and its manifest has exactly
    that cache's keys; anything more, and the folder is not askkit's to replace.
    """
    try:
        if {p.name for p in folder.iterdir()} != _EARLIER_FILES:
            return False
        bm25 = folder / "bm25"
        if bm25.is_symlink() or {p.name for p in bm25.iterdir()} != _EARLIER_BM25:
            return False
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (
        isinstance(manifest, dict)
        and set(manifest) == {"params", "vault", "notes"}
        and isinstance(manifest["vault"], str)
    )


#: What to do with a cache folder askkit does not trust (another user's, writable by others).
_UNTRUSTED_FIX = (
    "remove that folder yourself and askkit rebuilds the index from the vault, or give "
    "another cache_dir (--cache-dir)"
)
#: What to do when the cache folder cannot be made or written.
_WRITE_FIX = (
    "give a cache_dir (--cache-dir) you can write, or set ASKKIT_CACHE_DIR to a folder "
    "you can write"
)


def claim(folder: Path, vault: Path) -> Literal["missing", "empty", "ours"]:
    """Check that askkit may write the cache ``folder`` (:func:`askkit._cachedir.claim`);
    a cache an earlier askkit wrote before the tag existed counts as askkit's."""
    return claim_folder(
        folder,
        vault,
        earlier=_earlier_cache,
        purpose=LOCAL_INDEX,
        untrusted_fix=_UNTRUSTED_FIX,
    )


def save(
    folder: Path,
    vault: Path,
    *,
    cols: dict[str, list[Any]],
    bm25: bm25s.BM25 | None,
    manifest: dict[str, Any],
) -> None:
    """Write the cache to a marked temporary sibling, then swap it in for ``folder``.

    The sibling is private (:func:`tempfile.mkdtemp` makes it 0700, whatever the
    umask), so the cache keeps askkit's rule for its folders. Failing to make or
    write it (the cache root is a file, the disk is full) raises
    :class:`~askkit.errors.StoreError` naming the folder; the previous cache is
    left as it was.
    """
    state = claim(folder, vault)
    with writing(folder, what="cache folder", fix=_WRITE_FIX):
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.tmp-", dir=folder.parent))
        try:
            (tmp / TAG_NAME).write_text(_TAG, encoding="utf-8")
            table = pa.table({c: pa.array(cols[c], type=ARROW_TYPES[c]) for c in CHUNK_COLUMNS})
            pq.write_table(table, tmp / "chunks.parquet")
            if bm25 is not None:
                bm25.save(str(tmp / "bm25"), show_progress=False)
            (tmp / "manifest.json").write_text(
                json.dumps({"askkit_cache": FORMAT, **manifest}), encoding="utf-8"
            )
            swap_in(tmp, folder, state)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)


# -- loading --------------------------------------------------------------------------------


def _kind(value: object) -> str:
    """A JSON value's kind, with ``bool`` apart from numbers."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _read_json(path: Path, name: str) -> Any:
    if path.is_symlink() or not path.is_file():
        raise CorruptCache(f"{name} is missing")
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError) as exc:
        raise CorruptCache(f"{name} is not JSON ({exc})") from None


def _check_like(value: object, expected: dict[str, Any], name: str) -> dict[str, Any]:
    """``value`` must be an object with exactly ``expected``'s keys, each of the same kind."""
    if not isinstance(value, dict):
        raise CorruptCache(f"{name} is {_kind(value)}, not an object")
    if set(value) != set(expected):
        raise CorruptCache(f"{name} has the keys {sorted(value)}, expected {sorted(expected)}")
    for key, want in expected.items():
        if _kind(value[key]) != _kind(want):
            raise CorruptCache(f"{name}.{key} is {_kind(value[key])}, expected {_kind(want)}")
    return value


def _check_notes(notes: object) -> dict[str, dict[str, Any]]:
    if not isinstance(notes, dict):
        raise CorruptCache(f"manifest.json's notes is {_kind(notes)}, not an object")
    for key, note in notes.items():
        where = f"manifest.json's notes[{key!r}]"
        if not isinstance(note, dict) or set(note) != _NOTE_KEYS:
            raise CorruptCache(f"{where} is not {{hash, size, mtime_ns}}")
        if not isinstance(note["hash"], str) or not note["hash"]:
            raise CorruptCache(f"{where}.hash is not a hash string")
        if not _is_count(note["size"]):
            raise CorruptCache(f"{where}.size is not a byte count")
        if not isinstance(note["mtime_ns"], int) or isinstance(note["mtime_ns"], bool):
            raise CorruptCache(f"{where}.mtime_ns is not an integer")
    return notes


def _read_chunks(path: Path, rows: int, notes: dict[str, dict[str, Any]]) -> dict[str, list[Any]]:
    if path.is_symlink() or not path.is_file():
        raise CorruptCache("chunks.parquet is missing")
    try:
        table = pq.read_table(path)
    except Exception as exc:  # any failure of a reader on a damaged file means "rebuild"
        raise CorruptCache(f"chunks.parquet cannot be read ({type(exc).__name__}: {exc})") from None
    if table.schema.names != list(CHUNK_COLUMNS):
        raise CorruptCache(
            f"chunks.parquet has the columns {table.schema.names}, not {CHUNK_COLUMNS}"
        )
    for c in CHUNK_COLUMNS:
        got = table.schema.field(c).type
        if got != ARROW_TYPES[c]:
            raise CorruptCache(f"chunks.parquet's {c!r} column is {got}, not {ARROW_TYPES[c]}")
        if c not in _NULLABLE and table.column(c).null_count:
            raise CorruptCache(f"chunks.parquet's {c!r} column has missing values")
    if table.num_rows != rows:
        raise CorruptCache(
            f"chunks.parquet has {table.num_rows} rows but manifest.json counts {rows} chunks"
        )
    cols = {c: table.column(c).to_pylist() for c in CHUNK_COLUMNS}
    paths = cols["path"]
    if any(a > b for a, b in itertools.pairwise(paths)):
        raise CorruptCache("chunks.parquet's rows are not sorted by note path")
    for p, h in zip(paths, cols["hash"], strict=True):
        note = notes.get(p)
        if note is None:
            raise CorruptCache(f"chunks.parquet has chunks of {p!r}, a note manifest.json lacks")
        if note["hash"] != h:
            raise CorruptCache(f"chunks.parquet's hash of {p!r} is not manifest.json's")
    if min(cols["section"] + cols["piece"] + cols["start"], default=0) < 0 or any(
        s > e for s, e in zip(cols["start"], cols["end"], strict=True)
    ):
        raise CorruptCache("chunks.parquet has negative or inverted sections")
    return cols


def bm25_params(k1: float, b: float, num_docs: int) -> dict[str, Any]:
    """What bm25s writes in ``params.index.json`` for an index askkit builds."""
    fresh = bm25s.BM25(k1=k1, b=b)
    return {
        "k1": fresh.k1,
        "b": fresh.b,
        "delta": fresh.delta,
        "method": fresh.method,
        "idf_method": fresh.idf_method,
        "dtype": fresh.dtype,
        "int_dtype": fresh.int_dtype,
        "num_docs": num_docs,
        "version": bm25s.__version__,
        "backend": fresh.backend,
    }


def _read_bm25(folder: Path, rows: int, k1: float, b: float) -> bm25s.BM25 | None:
    if rows == 0:
        if os.path.lexists(folder):
            raise CorruptCache("bm25/ exists but the index has no chunks")
        return None
    if folder.is_symlink() or not folder.is_dir():
        raise CorruptCache("bm25/ is missing")
    expected = bm25_params(k1, b, rows)
    saved = _check_like(
        _read_json(folder / "params.index.json", "bm25/params.index.json"),
        expected,
        "bm25/params.index.json",
    )
    if saved["version"] != expected["version"]:
        raise _Stale
    if saved["num_docs"] != rows:
        raise CorruptCache(
            f"bm25/ indexes {saved['num_docs']} documents but chunks.parquet has {rows} chunks"
        )
    wrong = [
        f"{k} {saved[k]!r} (expected {expected[k]!r})" for k in expected if saved[k] != expected[k]
    ]
    if wrong:
        raise CorruptCache(f"bm25/params.index.json has {', '.join(wrong)}")
    vocab = _read_json(folder / "vocab.index.json", "bm25/vocab.index.json")
    if not isinstance(vocab, dict) or not all(_is_count(i) for i in vocab.values()):
        raise CorruptCache("bm25/vocab.index.json is not an object of term ids")
    if len(set(vocab.values())) != len(vocab):
        raise CorruptCache("bm25/vocab.index.json gives two terms the same id")
    try:
        bm25 = bm25s.BM25.load(str(folder), mmap=False, allow_pickle=False)
    except Exception as exc:  # any failure of a reader on a damaged file means "rebuild"
        raise CorruptCache(f"bm25/ cannot be loaded ({type(exc).__name__}: {exc})") from None
    _check_matrix(bm25, rows, vocab, expected)
    return bm25


def _array(scores: dict[str, Any], name: str) -> np.ndarray[Any, Any]:
    array = scores.get(name)
    if not isinstance(array, np.ndarray) or array.ndim != 1:
        raise CorruptCache(f"bm25/{name} is not a one-dimensional array")
    return array


def _check_matrix(
    bm25: bm25s.BM25, rows: int, vocab: dict[str, int], expected: dict[str, Any]
) -> None:
    scores = getattr(bm25, "scores", None)
    if not isinstance(scores, dict) or scores.get("num_docs") != rows:
        raise CorruptCache(f"bm25/ does not hold a matrix of {rows} documents")
    data, indices, indptr = (_array(scores, name) for name in _BM25_ARRAYS)
    if data.dtype != np.dtype(expected["dtype"]) or indices.dtype != np.dtype(
        expected["int_dtype"]
    ):
        raise CorruptCache(
            f"bm25/ holds {data.dtype} scores and {indices.dtype} document ids, "
            f"expected {expected['dtype']} and {expected['int_dtype']}"
        )
    if indptr.dtype.kind not in "iu" or not len(indptr):
        raise CorruptCache("bm25/indptr is not an array of offsets")
    if (
        indptr[0] != 0
        or indptr[-1] != len(data)
        or len(indices) != len(data)
        or bool((np.diff(indptr) < 0).any())
    ):
        raise CorruptCache("bm25/indptr does not index its scores")
    if len(indices) and (int(indices.min()) < 0 or int(indices.max()) >= rows):
        raise CorruptCache(f"bm25/ has document ids outside 0..{rows - 1}")
    if not bool(np.isfinite(data).all()) or bool((data < 0).any()):
        raise CorruptCache("bm25/ has negative or non-finite scores")
    terms = len(indptr) - 1
    if any(i >= terms for t, i in vocab.items() if t):
        raise CorruptCache(f"bm25/vocab.index.json has term ids beyond the matrix's {terms}")
    if bm25.vocab_dict != vocab:
        raise CorruptCache("bm25/vocab.index.json changed while it was read")


def load(folder: Path, *, params: dict[str, Any], vault: str) -> Cached | None:
    """Read the cache in ``folder`` and check it whole before anything is used.

    Returns ``None`` when the cache is sound but stale: written by another
    cache format or bm25s version, with other ``params``, or for another
    ``vault``. Raises :class:`CorruptCache` when it is not what askkit writes,
    and :class:`~askkit.errors.StoreError` (nothing read) when the folder breaks
    the rule of every folder askkit trusts (:func:`askkit._cachedir.untrusted`).
    """
    refuse_untrusted(folder, "cache folder", _UNTRUSTED_FIX)
    manifest = _read_json(folder / "manifest.json", "manifest.json")
    if not isinstance(manifest, dict):
        raise CorruptCache(f"manifest.json is {_kind(manifest)}, not an object")
    fmt = manifest.get("askkit_cache")
    if not _is_count(fmt):
        raise CorruptCache("manifest.json has no askkit_cache format number")
    if fmt != FORMAT:
        return None
    if set(manifest) != _MANIFEST_KEYS:
        raise CorruptCache(
            f"manifest.json has the keys {sorted(manifest)}, expected {sorted(_MANIFEST_KEYS)}"
        )
    saved = _check_like(manifest["params"], params, "manifest.json's params")
    if not isinstance(manifest["vault"], str):
        raise CorruptCache(f"manifest.json's vault is {_kind(manifest['vault'])}, not a string")
    notes = _check_notes(manifest["notes"])
    rows = manifest["chunks"]
    if not _is_count(rows):
        raise CorruptCache("manifest.json's chunks is not a count")
    if saved != params or manifest["vault"] != vault:
        return None
    cols = _read_chunks(folder / "chunks.parquet", rows, notes)
    try:
        bm25 = _read_bm25(folder / "bm25", rows, params["k1"], params["b"])
    except _Stale:
        return None
    return Cached(notes=notes, cols=cols, bm25=bm25)
