"""askkit.vault.changes: which notes an index must read again, and the report of a run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from askkit.sources import VaultPath
from askkit.vault import IndexReport, Vault, note_chunks, scan_vault


def write(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_a_new_vault_is_read_whole(tmp_path: Path) -> None:
    write(tmp_path, "bread.md", "# Bread\nFeed it.\n")
    write(tmp_path, "journal/2026-04-08.md", "# 2026-04-08\nBaked.\n")
    changes = scan_vault(Vault(tmp_path), {}, progress=False)
    assert sorted(changes.added) == ["bread.md", "journal/2026-04-08.md"]
    assert (changes.changed, changes.deleted, changes.unchanged) == ([], [], 0)
    journal = changes.fresh["journal/2026-04-08.md"]
    text = (tmp_path / "journal/2026-04-08.md").read_text()
    note_hash = changes.notes["journal/2026-04-08.md"]["hash"]
    assert journal == note_chunks(VaultPath("journal/2026-04-08.md"), text, note_hash, "2026-04-08")


def test_only_what_changed_is_read_and_chunked_again(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "# A\none\n")
    write(tmp_path, "b.md", "# B\ntwo\n")
    gone = write(tmp_path, "c.md", "# C\nthree\n")
    vault = Vault(tmp_path)
    before = scan_vault(vault, {}, progress=False).notes
    write(tmp_path, "a.md", "# A\nONE\n")  # new content
    touched = tmp_path / "b.md"  # same content, a new modification time
    os.utime(touched, ns=(1, 1))
    gone.unlink()
    changes = scan_vault(vault, before, progress=False)
    assert changes.changed == ["a.md"]
    assert list(changes.fresh) == ["a.md"]  # b.md re-hashed, not re-chunked
    assert changes.unchanged == 1
    assert changes.deleted == ["c.md"]
    report = changes.report(chunks=2, seconds=0.5)
    assert report == IndexReport(
        changed=("a.md",), deleted=("c.md",), unchanged=1, chunks=2, seconds=0.5
    )
    assert report.touched


def test_an_unreadable_note_is_skipped_with_a_warning_and_leaves_the_index(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "# A\none\n")
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"# Bad\n\xff\xfe\n")
    vault = Vault(tmp_path)
    previous = {"bad.md": {"hash": "old", "size": -1, "mtime_ns": -1}}
    with pytest.warns(UserWarning, match="not indexing .*bad.md"):
        changes = scan_vault(vault, previous, progress=False)
    assert changes.deleted == ["bad.md"]
    assert list(changes.skipped) == [str(bad)]
    assert "bad.md" not in changes.notes
    report = changes.report(chunks=1, seconds=0.0)
    assert report.skipped == changes.skipped
    assert str(report).endswith("; 1 skipped")
