"""askkit's dense stores in a cache folder, listed as ``askkit stores CACHE_DIR`` lists them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from askkit._cachedir import LOCAL_INDEX, mark
from askkit.dense.cached import cached_stores, holds_askkit_folders
from askkit.dense.index import NOTES_FILE, DenseIndex
from askkit.dense.store import DB_FILE
from askkit.errors import StoreError
from tests.dense.test_index import CountingEmbedder


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("ASKKIT_CACHE_DIR", str(folder))
    return folder


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nAlpha text.\n\n## B\n\nBeta text.\n", encoding="utf-8")
    (root / "c.md").write_text("# C\n\nGamma.\n", encoding="utf-8")
    return root


def test_issue41_8_each_store_says_its_vault_embedder_kimun_version_and_size(
    cache: Path, vault: Path
) -> None:
    newer = DenseIndex(vault, CountingEmbedder(name="test:one"), progress=False)
    older = DenseIndex(vault, CountingEmbedder(name="test:two"), progress=False, kimun="0.17")
    listed = {s.folder: s for s in cached_stores(cache)}
    assert set(listed) == {newer.store_folder, older.store_folder}
    one = listed[newer.store_folder]  # type: ignore[index]
    assert (one.vault, one.vault_id, one.embedder, one.kimun) == (
        str(vault.resolve()),
        "vault",
        "test:one",
        "0.18",
    )
    assert (one.fingerprint, one.notes, one.chunks, one.dimension) == ("test:one:16", 2, 3, 16)
    assert one.error is None
    assert listed[older.store_folder].kimun == "0.17"  # type: ignore[index]
    assert json.loads(json.dumps(one.to_dict()))["folder"] == str(newer.store_folder)


def test_a_store_it_cannot_read_is_listed_with_the_reason(cache: Path, vault: Path) -> None:
    index = DenseIndex(vault, CountingEmbedder(), progress=False)
    assert index.store_folder is not None
    (index.store_folder / DB_FILE).write_bytes(b"not a database at all, just bytes" * 10)
    (index.store_folder / NOTES_FILE).write_text("{broken")
    (stored,) = cached_stores(cache)
    assert stored.error is not None
    assert DB_FILE in stored.error
    assert (stored.vault, stored.kimun, stored.notes, stored.chunks) == (None, None, 0, 0)


def test_only_askkits_dense_stores_are_listed(cache: Path, vault: Path, tmp_path: Path) -> None:
    index = DenseIndex(vault, CountingEmbedder(), progress=False)
    (cache / "not-askkits").mkdir()
    (cache / "a-file").write_text("x")
    bm25 = cache / "index-1"
    bm25.mkdir()
    mark(bm25, LOCAL_INDEX, lifetime="a test")
    assert index.store_folder is not None
    (cache / "dense-link").symlink_to(index.store_folder)  # a link is passed over
    assert [s.folder for s in cached_stores(cache)] == [index.store_folder]
    assert holds_askkit_folders(cache)
    assert cached_stores(tmp_path / "vault") == []
    assert not holds_askkit_folders(tmp_path / "vault")


def test_a_folder_that_cannot_be_listed_is_a_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="cannot list"):
        cached_stores(tmp_path / "missing")
