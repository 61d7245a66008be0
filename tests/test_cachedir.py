"""askkit's own folders: where they live, and that one kind never stands in for another."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from askkit._cachedir import (
    DENSE_STORE,
    LOCAL_INDEX,
    Distrust,
    cache_root,
    claim,
    is_ours,
    mark,
    purpose_of,
    swap_in,
    untrusted,
    writing,
)
from askkit.errors import StoreError, UsageError


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


# -- issue 39: one rule for every folder askkit trusts; errors that name the folder ------------


@pytest.fixture
def own(tmp_path: Path) -> Path:
    """A private folder of askkit's (tagged), holding a file and a subfolder."""
    folder = tmp_path / "own"
    folder.mkdir(mode=0o700)
    mark(folder, LOCAL_INDEX, lifetime="test")
    (folder / "sub").mkdir()
    (folder / "sub" / "data.bin").write_bytes(b"x")
    return folder


def test_hardening_39_9_the_one_rule_refuses_links_other_users_and_what_others_can_write(
    own: Path, tmp_path: Path
) -> None:
    assert untrusted(own) is None
    data = own / "sub" / "data.bin"
    data.chmod(0o666)
    assert untrusted(own) is None  # nobody else can reach it: the folder is private
    own.chmod(0o755)
    why = untrusted(own)
    assert why is not None
    assert (why.path, why.problem) == (data, "writable")
    assert str(why) == f"{data} can be written by other users (mode 666)"
    data.chmod(0o644)
    assert untrusted(own) is None  # a readable folder whose contents only the user can write
    own.chmod(0o775)
    assert untrusted(own) == Distrust(own, "writable", "can be written by other users (mode 775)")
    own.chmod(0o700)
    os.chown(data, 12345, 12345)
    assert untrusted(own) == Distrust(data, "owner", "belongs to another user (uid 12345)")
    os.chown(data, os.geteuid(), os.getegid())
    (own / "sub" / "link").symlink_to(tmp_path)
    assert untrusted(own) == Distrust(
        own / "sub" / "link", "link", f"is a symbolic link (to {tmp_path})"
    )
    (own / "sub" / "link").unlink()
    linked = tmp_path / "linked"
    linked.symlink_to(own)
    assert untrusted(linked) is not None
    assert untrusted(linked).problem == "link"  # type: ignore[union-attr]
    assert untrusted(own) is None


@pytest.mark.parametrize("state", ["ours", "empty"])
@pytest.mark.parametrize("fault", ["writable", "other-user"])
def test_hardening_39_9_claim_refuses_a_folder_that_breaks_the_rule_and_touches_nothing(
    own: Path, state: str, fault: str
) -> None:
    folder = own
    if state == "empty":
        folder = own.parent / "empty"
        folder.mkdir(mode=0o700)
    if fault == "writable":
        folder.chmod(0o777)
    else:
        os.chown(folder, 12345, 12345)
    before = sorted(p.relative_to(folder) for p in folder.rglob("*"))
    with pytest.raises(StoreError) as caught:
        claim(folder, None, purpose=LOCAL_INDEX)
    message = str(caught.value)
    assert message.startswith(f"the cache folder {folder} is refused, not rebuilt: {folder} ")
    assert (
        "askkit neither uses such files as its own nor deletes them: remove that folder "
        "yourself (askkit makes it again), or give another cache_dir"
    ) in message
    assert ("chmod -R go-w" in message) == (fault == "writable")
    assert caught.value.path == str(folder)
    assert sorted(p.relative_to(folder) for p in folder.rglob("*")) == before


def test_hardening_39_9_a_leftover_old_sibling_others_could_write_is_never_deleted(
    own: Path,
) -> None:
    """An interrupted swap's ``.old`` is removed only when askkit may trust it: a tagged one
    others could write may hold their files."""
    old = own.with_name(own.name + ".old")
    old.mkdir(mode=0o700)
    mark(old, LOCAL_INDEX, lifetime="test")
    (old / "theirs.txt").write_text("not askkit's", encoding="utf-8")
    old.chmod(0o777)
    tmp = own.with_name(".own.tmp")
    tmp.mkdir(mode=0o700)
    mark(tmp, LOCAL_INDEX, lifetime="test")
    swap_in(tmp, own, "ours")
    assert (old / "theirs.txt").read_text(encoding="utf-8") == "not askkit's"
    assert not (own / "sub").exists()  # the swap itself went through
    assert sorted(p.name for p in own.parent.iterdir() if p.name.startswith("own.old-")) == []


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (
            errno.ENOSPC,
            "the disk holding it is full (/c/x/f: No space left on device); nothing "
            "of it was kept: free some space on that disk and run again, or do this",
        ),
        (errno.EACCES, "/c/x/f: Permission denied; do this"),
    ],
)
def test_hardening_39_minor_cache_errors_name_the_folder_and_what_to_do(
    code: int, expected: str
) -> None:
    folder = Path("/c/x")
    with pytest.raises(StoreError) as caught, writing(folder, what="cache folder", fix="do this"):
        raise OSError(code, os.strerror(code), "/c/x/f")
    assert str(caught.value) == f"cannot write the cache folder /c/x: {expected}"
    assert caught.value.path == "/c/x"


def test_hardening_39_minor_cache_errors_name_the_folder_when_a_part_of_it_is_a_file(
    tmp_path: Path,
) -> None:
    (tmp_path / "file").write_text("x", encoding="utf-8")
    for folder, blocker in (
        (Path("/dev/null/askkit/index"), "/dev/null"),
        (tmp_path / "file" / "index", str(tmp_path / "file")),
    ):
        with pytest.raises(StoreError) as caught, writing(folder, what="cache folder", fix="fix"):
            folder.mkdir(parents=True, exist_ok=True)
        assert str(caught.value).startswith(
            f"cannot make the cache folder {folder}: {blocker} is not a folder ("
        )
        assert str(caught.value).endswith("); fix")
    with pytest.raises(UsageError), writing(tmp_path, what="cache folder", fix="fix"):
        raise UsageError("askkit's own errors pass through")


@pytest.mark.parametrize("mask", [0o002, 0o022])
def test_hardening_39_9_folders_askkit_makes_keep_the_rule_under_any_umask(
    tmp_path: Path, mask: int
) -> None:
    """The BM25 cache, the dense store, the Qdrant local folder and a built model, written
    under a umask that lets the group write (002) or not (022), are private, pass the rule,
    and so open again."""
    from askkit.dense import _minilm
    from askkit.dense._writer import StoreWriter
    from askkit.dense.qdrant import QdrantStore, local_client
    from askkit.retrieve.local import LocalIndex
    from askkit.testing.stores import random_store_rows, write_kimun_qdrant

    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "bread.md").write_text("# Bread\n\n## Starter\n\nFeed it daily.\n", encoding="utf-8")
    row = {"path": "a.md", "hash": "h", "title": "T", "date": None, "text": "x"}
    before = os.umask(mask)
    try:
        LocalIndex(vault, cache_dir=tmp_path / "cache", progress=False)
        with StoreWriter(tmp_path / "store", dimension=4) as writer:
            writer.store("v", pd.DataFrame([row]), np.ones((1, 4), dtype=np.float32))
        client = local_client(tmp_path / "qdrant")
        rows, vectors = random_store_rows(3, 4, seed=1)
        write_kimun_qdrant(client, "kimun_embeddings", "notes", rows, vectors, seed=1)
        client.close()
        written = {name: f"{name} bytes".encode() for name in _minilm._WRITTEN}
        _minilm._write(tmp_path / "model", "missing", written, {"weights_sha256": "0" * 64})
    finally:
        os.umask(before)
    kinds = ("cache", "store", "qdrant", "model")
    assert {name: oct((tmp_path / name).stat().st_mode & 0o777) for name in kinds} == dict.fromkeys(
        kinds, oct(0o700)
    )
    for name in kinds:
        assert untrusted(tmp_path / name) is None, name
    assert len(LocalIndex(vault, cache_dir=tmp_path / "cache", progress=False)) == 1
    StoreWriter(tmp_path / "store", dimension=4).close()
    QdrantStore(path=tmp_path / "qdrant").close()


def spoil(folder: Path, fault: str, *, link: Path, owned: Path | None = None) -> str:
    """Make ``folder`` break the trust rule as ``fault`` names it; the reason askkit gives.

    ``"writable"``: the folder is made 0777; ``"other-user"``: ``owned`` (default
    the folder) is given to uid 12345; ``"link-inside"``: ``link`` (inside the
    folder) becomes a symbolic link to the folder's parent.
    """
    if fault == "writable":
        folder.chmod(0o777)
        return f"{folder} can be written by other users (mode 777)"
    if fault == "other-user":
        entry = owned or folder
        os.chown(entry, 12345, 12345)
        return f"{entry} belongs to another user (uid 12345)"
    link.symlink_to(folder.parent)
    return f"{link} is a symbolic link"
