"""askkit's own folders: where they live, and that one kind never stands in for another."""

from __future__ import annotations

from pathlib import Path

import pytest

from askkit._cachedir import (
    DENSE_STORE,
    LOCAL_INDEX,
    cache_root,
    claim,
    is_ours,
    mark,
    purpose_of,
)
from askkit.errors import UsageError


def test_cache_root_prefers_askkit_then_xdg_then_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ASKKIT_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert cache_root() == tmp_path / "home" / ".cache" / "askkit"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "askkit"
    monkeypatch.setenv("ASKKIT_CACHE_DIR", str(tmp_path / "mine"))
    assert cache_root() == tmp_path / "mine"


def test_fastembed_models_go_under_askkits_cache_unless_fastembed_is_told(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from askkit.dense._fastembed import default_cache_dir

    monkeypatch.setenv("ASKKIT_CACHE_DIR", str(tmp_path / "mine"))
    monkeypatch.delenv("FASTEMBED_CACHE_PATH", raising=False)
    assert default_cache_dir() == tmp_path / "mine" / "fastembed"
    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(tmp_path / "fe"))
    assert default_cache_dir() == tmp_path / "fe"


def test_a_tag_names_its_purpose_and_claim_refuses_another(tmp_path: Path) -> None:
    folder = tmp_path / "store"
    folder.mkdir()
    mark(folder, DENSE_STORE, lifetime="askkit re-creates it whenever it is missing")
    assert is_ours(folder)
    assert purpose_of(folder) == DENSE_STORE
    assert claim(folder, None, purpose=DENSE_STORE) == "ours"
    with pytest.raises(UsageError, match="holds askkit's dense index"):
        claim(folder, None, purpose=LOCAL_INDEX)
    assert purpose_of(tmp_path) is None  # no tag: not askkit's


def test_claim_refuses_a_foreign_folder_and_touches_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "theirs"
    folder.mkdir()
    (folder / "data.bin").write_bytes(b"x")
    with pytest.raises(UsageError, match="did not make"):
        claim(folder, None)
    assert [p.name for p in folder.iterdir()] == ["data.bin"]
    assert claim(tmp_path / "new", None) == "missing"
