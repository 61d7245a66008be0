"""LocalIndex on hostile ground: cache folders it does not own, damaged caches, unreadable notes."""

from __future__ import annotations

import json
import os
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from askkit.errors import AskkitError, StoreError, UsageError, VaultError
from askkit.retrieve._cache import TAG_NAME, bm25_params
from askkit.retrieve.local import LocalIndex
from askkit.vault import Vault
from tests.test_cachedir import spoil

QUERIES = ("starter rye", "garden tomatoes", "kayak paddle", "novel", "sourdough hydration crumb")
LONG = " ".join(f"Sentence {i} about sourdough hydration and crumb." for i in range(60))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / "journal").mkdir(parents=True)
    (root / "journal" / "2026-04-08.md").write_text(
        "# 2026-04-08\n\n## Afternoon\n\nBaked a rye loaf; the starter peaked early.\n"
    )
    (root / "journal" / "2026-04-09.md").write_text("# 2026-04-09\n\nRest day. Read a novel.\n")
    (root / "sourdough.md").write_text(
        "# Sourdough\n\n## Starter\n\nFeed it.\n\n## Long\n\n" + LONG
    )
    (root / "garden.md").write_text("# Garden\n\n## Tomatoes\n\nSeedlings under lights.\n")
    (root / "kayak.md").write_text("# Kayak\n\nPaddle strokes on the lake.\n")
    return root


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "caches" / "c"


def open_index(root: Path | Vault, cache: Path | bool) -> LocalIndex:
    return LocalIndex(root, cache_dir=cache, progress=False)


def assert_same(index: LocalIndex, reference: LocalIndex) -> None:
    """The same chunks, the same results and scores, the same pools."""
    pd.testing.assert_frame_equal(index.chunks, reference.chunks)
    for query in QUERIES:
        assert index.search(query) == reference.search(query), query
        assert index.pool(query) == reference.pool(query), query


def tree(folder: Path) -> dict[str, bytes | str]:
    """Every entry under ``folder`` with its bytes (files) or kind: a snapshot to compare."""
    out: dict[str, bytes | str] = {}
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder).as_posix()
        if p.is_symlink():
            out[rel] = f"link -> {p.readlink()}"
        elif p.is_file():
            out[rel] = p.read_bytes()
        else:
            out[rel] = "dir"
    return out


@pytest.fixture
def no_warnings() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


# -- item 1: askkit writes only a cache folder it owns ---------------------------------------


def test_a_missing_folder_is_created_and_marked(root: Path, cache: Path) -> None:
    index = open_index(root, cache)
    assert (cache / TAG_NAME).read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert "askkit" in (cache / TAG_NAME).read_text()
    assert json.loads((cache / "manifest.json").read_text())["askkit_cache"] >= 1
    assert_same(index, open_index(root, False))


def test_an_empty_folder_is_taken(root: Path, cache: Path) -> None:
    cache.mkdir(parents=True)
    open_index(root, cache)
    assert (cache / TAG_NAME).is_file()
    assert sorted(p.name for p in cache.parent.iterdir()) == ["c"]


def test_an_askkit_folder_is_replaced_leaving_no_sibling(root: Path, cache: Path) -> None:
    open_index(root, cache)
    (root / "new.md").write_text("# New\n\nKayak trip planning.\n")
    index = open_index(root, cache)
    assert index.last_report.added == ("new.md",)
    (root / "new.md").unlink()
    assert index.update().deleted == ("new.md",)
    assert sorted(p.name for p in cache.parent.iterdir()) == ["c"]
    assert not open_index(root, cache).last_report.touched


def _refused(root: Path, cache: Path, match: str) -> UsageError:
    with pytest.raises(UsageError, match=match) as info:
        open_index(root, cache)
    assert str(cache) in str(info.value)
    return info.value


def test_a_foreign_folder_is_refused_and_left_alone(root: Path, cache: Path) -> None:
    cache.mkdir(parents=True)
    (cache / "thesis.tex").write_text("years of work")
    (cache / "manifest.json").write_text("{}")
    before = tree(cache.parent)
    err = _refused(root, cache, "askkit did not make")
    assert isinstance(err, AskkitError)
    assert isinstance(err, ValueError)
    assert tree(cache.parent) == before


def test_a_foreign_cachedir_tag_is_not_askkits(root: Path, cache: Path) -> None:
    cache.mkdir(parents=True)
    (cache / TAG_NAME).write_text(
        "Signature: 8a477f597d28d172789f06886806bc55\n# created by some other tool\n"
    )
    (cache / "blob").write_bytes(b"\x00" * 10)
    before = tree(cache.parent)
    _refused(root, cache, "askkit did not make")
    assert tree(cache.parent) == before


def _earlier_cache(root: Path, cache: Path) -> None:
    """Make ``cache`` exactly what askkit wrote before the tag: three entries, three keys."""
    open_index(root, cache)
    (cache / TAG_NAME).unlink()
    manifest = json.loads((cache / "manifest.json").read_text())
    earlier = {key: manifest[key] for key in ("params", "vault", "notes")}
    (cache / "manifest.json").write_text(json.dumps(earlier))


def test_a_cache_an_earlier_askkit_wrote_is_taken_over(root: Path, cache: Path) -> None:
    """Its files and manifest keys are exactly an earlier askkit cache's: replaced, then tagged."""
    _earlier_cache(root, cache)
    index = open_index(root, cache)
    assert (cache / TAG_NAME).is_file()
    assert "askkit_cache" in json.loads((cache / "manifest.json").read_text())  # rewritten
    assert len(index) == len(open_index(root, False))


def test_an_untagged_cache_with_anything_more_is_refused(root: Path, cache: Path) -> None:
    _earlier_cache(root, cache)
    (cache / "thesis.txt").write_text("mine")  # one file askkit never writes
    before = tree(cache.parent)
    _refused(root, cache, "remove that folder yourself")
    assert tree(cache.parent) == before


def test_a_file_is_refused(root: Path, cache: Path) -> None:
    cache.parent.mkdir(parents=True)
    cache.write_text("not a folder")
    _refused(root, cache, "is a file")
    assert cache.read_text() == "not a folder"
    assert sorted(p.name for p in cache.parent.iterdir()) == ["c"]


def test_the_vault_itself_is_refused(root: Path) -> None:
    before = tree(root)
    _refused(root, root, "is the vault itself")
    assert tree(root) == before


def test_a_folder_holding_the_vault_is_refused(root: Path, tmp_path: Path) -> None:
    before = tree(tmp_path)
    _refused(root, tmp_path, "contains the vault")
    assert tree(tmp_path) == before


def test_a_folder_holding_the_vault_is_refused_even_if_marked(root: Path, tmp_path: Path) -> None:
    (tmp_path / TAG_NAME).write_text(
        "Signature: 8a477f597d28d172789f06886806bc55\n"
        "# This file is a cache directory tag created by askkit: a local index.\n"
    )
    before = tree(tmp_path)
    _refused(root, tmp_path, "contains the vault")
    assert tree(tmp_path) == before


@pytest.mark.parametrize("inside", [".askkit", "journal/.cache", "new/deeper"])
def test_a_folder_inside_the_vault_is_refused(root: Path, inside: str) -> None:
    before = tree(root)
    _refused(root, root / inside, "inside the vault")
    assert tree(root) == before


def test_the_default_cache_inside_the_vault_is_refused(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASKKIT_CACHE_DIR", str(root))
    before = tree(root)
    with pytest.raises(UsageError, match="inside the vault"):
        LocalIndex(root, progress=False)
    assert tree(root) == before


@pytest.mark.skipif(sys.platform == "win32", reason="symbolic links need privileges")
def test_a_symbolic_link_is_refused(root: Path, cache: Path, tmp_path: Path) -> None:
    open_index(root, tmp_path / "real")
    cache.parent.mkdir(parents=True)
    cache.symlink_to(tmp_path / "real")
    before = tree(tmp_path / "real")
    _refused(root, cache, "symbolic link")
    assert cache.is_symlink()
    assert tree(tmp_path / "real") == before


def test_a_foreign_file_appearing_later_stops_the_save(root: Path, cache: Path) -> None:
    index = open_index(root, cache)
    (cache / "mine.txt").write_text("not askkit's")
    (cache / TAG_NAME).unlink()
    (root / "kayak.md").unlink()
    before = tree(cache.parent)
    with pytest.raises(UsageError, match="askkit did not make"):
        index.update()
    assert tree(cache.parent) == before


def test_a_foreign_old_sibling_is_never_touched(root: Path, cache: Path) -> None:
    open_index(root, cache)
    old = cache.with_name("c.old")
    old.mkdir()
    (old / "precious.txt").write_text("keep me")
    tmp_like = cache.with_name(".c.tmp-abc")
    tmp_like.mkdir()
    (tmp_like / "also.txt").write_text("keep me too")
    index = open_index(root, cache)
    for name in ("a", "b", "c"):
        (root / f"{name}.md").write_text(f"# {name}\n\nNote {name} about kayaks.\n")
        index.update()
    assert (old / "precious.txt").read_text() == "keep me"
    assert (tmp_like / "also.txt").read_text() == "keep me too"
    assert sorted(p.name for p in cache.parent.iterdir()) == [".c.tmp-abc", "c", "c.old"]
    assert_same(open_index(root, cache), open_index(root, False))


def test_a_foreign_old_file_is_never_touched(root: Path, cache: Path) -> None:
    open_index(root, cache)
    cache.with_name("c.old").write_text("a file of the user's")
    (root / "a.md").write_text("# A\n\nKayak.\n")
    open_index(root, cache)
    assert cache.with_name("c.old").read_text() == "a file of the user's"


def test_an_askkit_old_leftover_is_cleared(root: Path, cache: Path) -> None:
    open_index(root, tmp := cache.with_name("c.old"))  # an askkit cache where .old goes
    assert (tmp / TAG_NAME).is_file()
    open_index(root, cache)
    (root / "a.md").write_text("# A\n\nKayak.\n")
    open_index(root, cache)
    assert sorted(p.name for p in cache.parent.iterdir()) == ["c"]


# -- item 9: a damaged cache is never trusted --------------------------------------------------


def _json(path: Path, change: Callable[[object], object]) -> None:
    path.write_text(json.dumps(change(json.loads(path.read_text()))))


def _manifest(c: Path, change: Callable[[dict[str, object]], object]) -> None:
    _json(c / "manifest.json", change)  # type: ignore[arg-type]


def _with(d: dict[str, object], **kv: object) -> dict[str, object]:
    return {**d, **kv}


def _first_note(d: dict[str, object], value: object) -> dict[str, object]:
    notes = dict(d["notes"])  # type: ignore[call-overload]
    notes[next(iter(notes))] = value
    return {**d, "notes": notes}


def _table(c: Path, change: Callable[[pa.Table], pa.Table]) -> None:
    pq.write_table(change(pq.read_table(c / "chunks.parquet")), c / "chunks.parquet")


def _drop_last_row(c: Path) -> None:
    _table(c, lambda t: t.slice(0, t.num_rows - 1))
    _manifest(c, lambda d: _with(d, chunks=d["chunks"] - 1))  # type: ignore[operator]


def _set_column(c: Path, name: str, array: Callable[[pa.Table], pa.Array]) -> None:
    def change(t: pa.Table) -> pa.Table:
        return t.set_column(t.schema.get_field_index(name), name, array(t))

    _table(c, change)


def _array(c: Path, name: str, change: Callable[[np.ndarray], object]) -> None:
    path = c / "bm25" / f"{name}.csc.index.npy"
    np.save(path, change(np.load(path)), allow_pickle=True)


def _npz(c: Path) -> None:
    path = c / "bm25" / "data.csc.index.npy"
    data = np.load(path)
    with path.open("wb") as fh:
        np.savez(fh, data=data)


def _bm25_params(c: Path, change: Callable[[dict[str, object]], object]) -> None:
    _json(c / "bm25" / "params.index.json", change)  # type: ignore[arg-type]


def _vocab(c: Path, change: Callable[[dict[str, int]], object]) -> None:
    _json(c / "bm25" / "vocab.index.json", change)  # type: ignore[arg-type]


def _twin_ids(v: dict[str, int]) -> dict[str, int]:
    a, b = list(v)[:2]
    return {**v, b: v[a]}


def _shuffle_rows(t: pa.Table) -> pa.Table:
    return t.take(pa.array(list(range(t.num_rows))[::-1]))


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


CORRUPTIONS: dict[str, Callable[[Path], object]] = {
    # manifest.json
    "manifest is a list": lambda c: (c / "manifest.json").write_text("[]"),
    "manifest is null": lambda c: (c / "manifest.json").write_text("null"),
    "manifest is garbage": lambda c: (c / "manifest.json").write_bytes(b"\xff\xfe{not json"),
    "manifest nested deep": lambda c: (c / "manifest.json").write_text("[" * 100_000),
    "manifest missing": lambda c: (c / "manifest.json").unlink(),
    "manifest format a string": lambda c: _manifest(c, lambda d: _with(d, askkit_cache="2")),
    "manifest extra key": lambda c: _manifest(c, lambda d: _with(d, extra=1)),
    "manifest missing key": lambda c: _manifest(
        c, lambda d: {k: v for k, v in d.items() if k != "vault"}
    ),
    "notes a list": lambda c: _manifest(c, lambda d: _with(d, notes=[])),
    "notes null": lambda c: _manifest(c, lambda d: _with(d, notes=None)),
    "a note a string": lambda c: _manifest(c, lambda d: _first_note(d, "x")),
    "a note missing mtime": lambda c: _manifest(
        c, lambda d: _first_note(d, {"hash": "1", "size": 1})
    ),
    "a note hash an int": lambda c: _manifest(
        c, lambda d: _first_note(d, {"hash": 1, "size": 1, "mtime_ns": 1})
    ),
    "a note size negative": lambda c: _manifest(
        c, lambda d: _first_note(d, {"hash": "1", "size": -1, "mtime_ns": 1})
    ),
    "a note size a bool": lambda c: _manifest(
        c, lambda d: _first_note(d, {"hash": "1", "size": True, "mtime_ns": 1})
    ),
    "params extra key": lambda c: _manifest(
        c,
        lambda d: _with(d, params={**d["params"], "delta": 0.5}),  # type: ignore[dict-item]
    ),
    "params k1 a string": lambda c: _manifest(
        c,
        lambda d: _with(d, params={**d["params"], "k1": "1.5"}),  # type: ignore[dict-item]
    ),
    "params a list": lambda c: _manifest(c, lambda d: _with(d, params=[1.5, 0.75])),
    "chunk count wrong": lambda c: _manifest(c, lambda d: _with(d, chunks=d["chunks"] + 1)),  # type: ignore[operator]
    "chunk count a float": lambda c: _manifest(c, lambda d: _with(d, chunks=1.5)),
    # chunks.parquet
    "parquet shorter than the matrix": _drop_last_row,
    "parquet truncated": lambda c: _truncate(c / "chunks.parquet"),
    "parquet garbage": lambda c: (c / "chunks.parquet").write_bytes(b"PAR1" + b"\x00" * 64),
    "parquet missing": lambda c: (c / "chunks.parquet").unlink(),
    "path column of ints": lambda c: _set_column(
        c, "path", lambda t: pa.array(range(t.num_rows), pa.int64())
    ),
    "section column of strings": lambda c: _set_column(
        c, "section", lambda t: pa.array(["0"] * t.num_rows)
    ),
    "title with a null": lambda c: _set_column(
        c, "title", lambda t: pa.array([None] * t.num_rows, pa.string())
    ),
    "a column dropped": lambda c: _table(c, lambda t: t.drop_columns(["piece"])),
    "rows out of order": lambda c: _table(c, _shuffle_rows),
    "a chunk of an unlisted note": lambda c: _set_column(
        c, "path", lambda t: pa.array(["ghost.md"] * t.num_rows)
    ),
    "a chunk hash not the note's": lambda c: _set_column(
        c, "hash", lambda t: pa.array(["0"] * t.num_rows)
    ),
    "negative start": lambda c: _set_column(
        c, "start", lambda t: pa.array([-5] * t.num_rows, pa.int64())
    ),
    # bm25/
    "bm25 missing": lambda c: [p.unlink() for p in (c / "bm25").iterdir()] and (c / "bm25").rmdir(),
    "bm25 params extra key": lambda c: _bm25_params(c, lambda d: _with(d, extra=True)),
    "bm25 params k1 changed": lambda c: _bm25_params(c, lambda d: _with(d, k1=9.0)),
    "bm25 params method changed": lambda c: _bm25_params(c, lambda d: _with(d, method="bm25+")),
    "bm25 num_docs larger": lambda c: _bm25_params(
        c,
        lambda d: _with(d, num_docs=d["num_docs"] + 3),  # type: ignore[operator]
    ),
    "bm25 params a list": lambda c: (c / "bm25" / "params.index.json").write_text("[]"),
    "vocab a list": lambda c: _vocab(c, list),
    "vocab ids as strings": lambda c: _vocab(c, lambda v: {k: str(i) for k, i in v.items()}),
    "vocab ids repeated": lambda c: _vocab(c, _twin_ids),
    "vocab id beyond the matrix": lambda c: _vocab(c, lambda v: {**v, "zzz": len(v) + 10}),
    "ids out of range": lambda c: _array(c, "indices", lambda a: a + 1000),
    "ids negative": lambda c: _array(c, "indices", lambda a: a - 1000),
    "scores garbage npy": lambda c: (c / "bm25" / "data.csc.index.npy").write_bytes(b"junk" * 9),
    "scores an npz": _npz,
    "scores pickled objects": lambda c: _array(c, "data", lambda a: a.astype(object)),
    "scores float64": lambda c: _array(c, "data", lambda a: a.astype(np.float64)),
    "scores nan": lambda c: _array(c, "data", lambda a: np.full_like(a, np.nan)),
    "scores two-dimensional": lambda c: _array(c, "data", lambda a: a.reshape(1, -1)),
    "indptr not increasing": lambda c: _array(c, "indptr", lambda a: a[::-1].copy()),
    "indptr empty": lambda c: _array(c, "indptr", lambda a: a[:0]),
    "indices truncated": lambda c: _truncate(c / "bm25" / "indices.csc.index.npy"),
}


@pytest.mark.parametrize("corrupt", CORRUPTIONS.values(), ids=CORRUPTIONS.keys())
def test_a_damaged_cache_warns_and_is_rebuilt(
    root: Path, cache: Path, corrupt: Callable[[Path], object]
) -> None:
    open_index(root, cache)
    corrupt(cache)
    with pytest.warns(
        UserWarning, match=r"index cache .*[/\\]c is damaged: .+; rebuilding it from the vault"
    ):
        index = open_index(root, cache)
    assert len(index.last_report.added) == 5
    assert_same(index, open_index(root, False))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = open_index(root, cache)  # the rebuilt cache is sound
    assert not again.last_report.touched
    assert_same(again, index)


def test_a_marked_folder_without_a_manifest_is_rebuilt(root: Path, cache: Path) -> None:
    open_index(root, cache)
    for p in cache.iterdir():
        if p.name != TAG_NAME:
            p.unlink() if p.is_file() else [q.unlink() for q in p.iterdir()] and p.rmdir()
    with pytest.warns(UserWarning, match="manifest.json is missing"):
        index = open_index(root, cache)
    assert_same(index, open_index(root, False))


def test_an_empty_vault_caches_no_bm25(tmp_path: Path, cache: Path) -> None:
    (tmp_path / "empty").mkdir()
    open_index(tmp_path / "empty", cache)
    assert not (cache / "bm25").exists()
    index = open_index(tmp_path / "empty", cache)
    assert not index.last_report.touched
    (cache / "bm25").mkdir()
    with pytest.warns(UserWarning, match="no chunks"):
        open_index(tmp_path / "empty", cache)


STALE: dict[str, Callable[[Path], object]] = {
    "another cache format": lambda c: _manifest(c, lambda d: _with(d, askkit_cache=1, x=0)),
    "another vault": lambda c: _manifest(c, lambda d: _with(d, vault="/elsewhere")),
    "other settings": lambda c: _manifest(
        c,
        lambda d: _with(d, params={**d["params"], "k1": 1.2}),  # type: ignore[dict-item]
    ),
    "another bm25s": lambda c: _bm25_params(c, lambda d: _with(d, version="0.0.1")),
    "another kimun chunker": lambda c: _manifest(
        c,
        lambda d: _with(d, params={**d["params"], "kimun": "0.17"}),  # type: ignore[dict-item]
    ),
    "a cache of askkit before the kimun key": lambda c: _manifest(
        c,
        lambda d: _with(
            d,
            askkit_cache=3,
            params={k: v for k, v in d["params"].items() if k != "kimun"},  # type: ignore[attr-defined]
        ),
    ),
}


@pytest.mark.usefixtures("no_warnings")
@pytest.mark.parametrize("stale", STALE.values(), ids=STALE.keys())
def test_a_stale_cache_is_rebuilt_quietly(
    root: Path, cache: Path, stale: Callable[[Path], object]
) -> None:
    open_index(root, cache)
    stale(cache)
    index = open_index(root, cache)
    assert len(index.last_report.added) == 5
    assert_same(index, open_index(root, False))
    assert not open_index(root, cache).last_report.touched


def test_other_settings_reindex_quietly(root: Path, cache: Path) -> None:
    open_index(root, cache)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        index = LocalIndex(root, cache_dir=cache, progress=False, k1=1.2, b=0.5)
    assert len(index.last_report.added) == 5
    assert_same(index, LocalIndex(root, cache_dir=False, progress=False, k1=1.2, b=0.5))


def test_bm25_params_are_what_bm25s_saves(root: Path, cache: Path) -> None:
    index = open_index(root, cache)
    saved = json.loads((cache / "bm25" / "params.index.json").read_text())
    assert saved == bm25_params(1.5, 0.75, len(index))


# -- items 16 and 6: a note that cannot be read is skipped, never fatal --------------------------


BINARY = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe\xfd"


def test_a_binary_note_is_skipped_with_a_warning(root: Path, tmp_path: Path) -> None:
    clean = open_index(root, False)
    (root / "image.md").write_bytes(BINARY)
    with pytest.warns(UserWarning, match=r"not indexing .*image\.md: .*not valid UTF-8"):
        index = open_index(root, tmp_path / "c")
    (file,) = [f for f in index.last_report.skipped if f.endswith("image.md")]
    assert "not valid UTF-8" in index.last_report.skipped[file]
    assert "1 skipped" in str(index.last_report)
    assert len(index.last_report.added) == 5
    assert_same(index, clean)


def test_a_binary_note_reads_under_errors_replace(root: Path) -> None:
    (root / "image.md").write_bytes(b"# Image\n\nKayak \xff photo.\n")
    with pytest.warns(UserWarning, match="replacement characters"):
        index = open_index(Vault(root, errors="replace"), False)
    assert not index.last_report.skipped
    assert "image.md" in {c.path for c in index.search("kayak photo")}


def test_a_note_turning_binary_leaves_the_index(root: Path, cache: Path) -> None:
    index = open_index(root, cache)
    (root / "kayak.md").write_bytes(BINARY)
    with pytest.warns(UserWarning, match=r"kayak\.md"):
        report = index.update()
    assert report.deleted == ("kayak.md",)
    assert any(f.endswith("kayak.md") for f in report.skipped)
    assert index.search("paddle") == []
    with pytest.warns(UserWarning, match=r"kayak\.md"):  # still unreadable when reopened
        reopened = open_index(root, cache)
    assert_same(reopened, index)
    (root / "kayak.md").write_text("# Kayak\n\nPaddle again.\n")
    assert reopened.update().added == ("kayak.md",)
    assert reopened.search("paddle")[0].path == "kayak.md"


@pytest.mark.skipif(sys.platform == "win32", reason="symbolic links need privileges")
def test_a_dangling_symlink_does_not_stop_the_index(root: Path, cache: Path) -> None:
    clean = open_index(root, False)
    (root / "ghost.md").symlink_to(root / "gone.md")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        index = open_index(root, cache)  # skipped here, or by the vault's listing
    assert any(f.endswith("ghost.md") for f in index.last_report.skipped)
    assert any("ghost.md" in str(w.message) for w in caught)
    assert_same(index, clean)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes")
def test_a_named_pipe_does_not_block_the_index(root: Path) -> None:
    clean = open_index(root, False)
    os.mkfifo(root / "pipe.md")
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        index = open_index(root, False)
    assert any(f.endswith("pipe.md") for f in index.last_report.skipped)
    assert_same(index, clean)


def test_a_note_vanishing_before_its_read_is_skipped(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = Vault(root)
    read = vault.read_bytes

    def vanish_then_read(path: object) -> bytes:
        if str(path) == "garden.md":
            (root / "garden.md").unlink()
        return read(path)  # type: ignore[arg-type]

    monkeypatch.setattr(vault, "read_bytes", vanish_then_read)
    with pytest.warns(UserWarning, match=r"not indexing .*garden\.md"):
        index = open_index(vault, False)
    assert "garden.md" not in set(index.chunks["path"])
    assert len(index.last_report.added) == 4


def test_a_note_vanishing_before_its_stat_is_skipped(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = Vault(root)
    resolve = vault.resolve

    def resolve_then_vanish(path: object) -> Path:
        file = resolve(path)  # type: ignore[arg-type]
        if str(path) == "garden.md":
            file.unlink()
        return file

    monkeypatch.setattr(vault, "resolve", resolve_then_vanish)
    with pytest.warns(UserWarning, match=r"garden\.md.*(No such file|does not exist)"):
        index = open_index(vault, False)
    assert any(f.endswith("garden.md") for f in index.last_report.skipped)
    assert len(index.last_report.added) == 4


@pytest.mark.parametrize(
    "error",
    [
        VaultError("note too large: garden.md is 9 GB, over the 16 MiB cap"),
        VaultError("cannot read garden.md: Permission denied"),
        PermissionError(13, "Permission denied"),
    ],
)
def test_a_note_the_vault_refuses_is_skipped(
    root: Path, monkeypatch: pytest.MonkeyPatch, error: OSError
) -> None:
    vault = Vault(root)
    read = vault.read_bytes

    def refuse(path: object) -> bytes:
        if str(path) == "garden.md":
            raise error
        return read(path)  # type: ignore[arg-type]

    monkeypatch.setattr(vault, "read_bytes", refuse)
    with pytest.warns(UserWarning, match=r"not indexing .*garden\.md"):
        index = open_index(vault, False)
    assert "garden.md" not in set(index.chunks["path"])
    assert len(index.last_report.added) == 4


# -- issue 39: one rule for every folder askkit trusts; cache errors name the folder ---------


@pytest.mark.parametrize("fault", ["writable", "shared-file", "other-user", "link-inside"])
def test_hardening_39_9_a_cache_askkit_does_not_trust_is_refused_not_rebuilt(
    root: Path, cache: Path, tmp_path: Path, fault: str
) -> None:
    """A tagged cache others could write (the folder, or a file in a folder they can reach),
    another user's, or one holding a link may hold files askkit did not write: it is neither
    read nor rebuilt (a rebuild deletes the folder), and the message says what to do."""
    open_index(root, cache)
    if fault == "shared-file":
        cache.chmod(0o755)
        (cache / "chunks.parquet").chmod(0o666)
        expected = f"{cache / 'chunks.parquet'} can be written by other users (mode 666)"
    else:
        expected = spoil(cache, fault, link=cache / "bm25" / "extra", owned=cache / "manifest.json")
    before = tree(cache.parent)
    with pytest.raises(StoreError) as caught:
        open_index(root, cache)
    message = str(caught.value)
    assert message.startswith(f"the cache folder {cache} is refused, not rebuilt: {expected}")
    assert "remove that folder yourself and askkit rebuilds the index from the vault" in message
    assert ("chmod -R go-w" in message) == (fault in {"writable", "shared-file"})
    assert tree(cache.parent) == before


def test_hardening_39_9_reading_a_cache_checks_the_rule_first(root: Path, cache: Path) -> None:
    """The reader of a tagged cache applies the rule itself, not only the writer's claim."""
    from askkit.retrieve._cache import load

    index = open_index(root, cache)
    params = index._params()
    assert load(cache, params=params, vault=str(root)) is not None
    cache.chmod(0o777)
    with pytest.raises(StoreError, match="is refused, not rebuilt"):
        load(cache, params=params, vault=str(root))


def test_hardening_39_minor_cache_errors_name_the_folder_when_the_cache_root_is_a_file(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``ASKKIT_CACHE_DIR=/dev/null`` or a file: a StoreError naming the cache folder and the
    fix, printed by ``askkit index`` and ``askkit search`` as one line with exit 2."""
    from askkit.cli import main
    from askkit.retrieve.local import _default_cache

    (tmp_path / "a-file").write_text("x")
    for base in (Path("/dev/null"), tmp_path / "a-file"):
        monkeypatch.setenv("ASKKIT_CACHE_DIR", str(base))
        folder = _default_cache(root)
        with pytest.raises(StoreError) as caught:
            LocalIndex(root, progress=False)
        assert str(caught.value).startswith(
            f"cannot make the cache folder {folder}: {base} is not a folder ("
        )
        assert "set ASKKIT_CACHE_DIR to a folder you can write" in str(caught.value)
        assert caught.value.path == str(folder)
        capsys.readouterr()
        for argv in (["index", str(root)], ["search", "starter", "--vault", str(root)]):
            assert main(argv) == 2
            err = capsys.readouterr().err
            assert err == f"askkit: error: {caught.value}\n"


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A 64 kB tmpfs: writing more than that fails with ENOSPC, as on a full disk."""
    import subprocess

    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def test_hardening_39_minor_cache_errors_name_the_folder_on_a_full_disk(
    root: Path, full_disk: Path
) -> None:
    """No space left on device while the cache is written (a real, small file system): a
    StoreError naming the cache folder and the full disk, and no temporary left behind."""
    (root / "big.md").write_text(
        "# Big\n\n" + " ".join(f"word{i}" for i in range(40_000)) + "\n", encoding="utf-8"
    )
    cache = full_disk / "cache"
    with pytest.raises(StoreError) as caught:
        open_index(root, cache)
    message = str(caught.value)
    assert message.startswith(f"cannot write the cache folder {cache}: the disk holding it is full")
    assert "free some space on that disk and run again" in message
    assert list(full_disk.iterdir()) == []


def test_hardening_39_minor_cache_errors_name_the_folder_when_a_write_finds_no_space(
    root: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same, wherever a tmpfs cannot be mounted: the cache's writer fails with ENOSPC.
    The previous cache is left as it was."""
    import errno

    import askkit.retrieve._cache as cache_module

    open_index(root, cache)
    before = tree(cache.parent)

    def no_space(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(cache_module.pq, "write_table", no_space)
    (root / "new.md").write_text("# New\n\nA new note.\n")
    with pytest.raises(StoreError, match=f"cannot write the cache folder {cache}: the disk"):
        open_index(root, cache)
    assert tree(cache.parent) == before
