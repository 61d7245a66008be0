"""The vault on disk: listing, safe resolution, decoding, hashing, journal dates."""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

import pytest

from askkit import VaultError, VaultPath
from askkit.vault import Vault, content_hash


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    root = tmp_path / "vault"
    (root / "Journal").mkdir(parents=True)
    (root / "Journal" / "2026-04-08.md").write_text("# 2026-04-08\n## Afternoon\nWalked.\n")
    (root / "Projects").mkdir()
    (root / "Projects" / "My Note.md").write_text("# Note\nBody\n")
    (root / "bom.md").write_bytes("\ufeff# Bom\ntext\n".encode())
    (root / "crlf.md").write_bytes(b"# Crlf\r\nline one\r\nline two\r\n")
    (root / "image.png").write_bytes(b"\x89PNG")
    (root / ".obsidian").mkdir()
    (root / ".obsidian" / "hidden.md").write_text("# hidden")
    (tmp_path / "secret.md").write_text("# secret outside the vault")
    return Vault(root)


def test_lists_markdown_notes_sorted_and_sanitized(vault: Vault) -> None:
    assert [str(p) for p in vault.notes()] == [
        "bom.md",
        "crlf.md",
        "journal/2026-04-08.md",
        "projects/my note.md",
    ]
    assert len(vault) == 4


def test_reads_by_vault_path_or_string_case_insensitively(vault: Vault) -> None:
    assert vault.read("projects/my note.md") == "# Note\nBody\n"
    assert vault.read("Projects/My Note.md") == "# Note\nBody\n"
    assert vault.read(VaultPath("/projects//my note.md")) == "# Note\nBody\n"


def test_bom_is_removed_but_hashed(vault: Vault) -> None:
    assert vault.read("bom.md") == "# Bom\ntext\n"
    raw = (vault.root / "bom.md").read_bytes()
    assert vault.hash("bom.md") == content_hash(raw)
    assert vault.hash("bom.md") != content_hash(raw[3:])


def test_crlf_is_kept_so_offsets_index_the_file(vault: Vault) -> None:
    text = vault.read("crlf.md")
    assert text == "# Crlf\r\nline one\r\nline two\r\n"


def test_note_carries_hash_and_journal_date(vault: Vault) -> None:
    note = vault.note("journal/2026-04-08.md")
    assert note.date == "2026-04-08"
    assert note.hash == content_hash(b"# 2026-04-08\n## Afternoon\nWalked.\n")
    assert note.title == "2026-04-08"
    assert vault.note("projects/my note.md").date is None


def test_content_hash_is_xxh64_seed_42_decimal() -> None:
    import xxhash

    data = "Café\n".encode()
    assert content_hash(data) == str(xxhash.xxh64(data, seed=42).intdigest())
    assert content_hash(data).isdigit()


@pytest.mark.parametrize(
    "path", ["../secret.md", "journal/../../secret.md", "/../secret.md", VaultPath("../x.md")]
)
def test_paths_climbing_out_are_refused(vault: Vault, path: str | VaultPath) -> None:
    with pytest.raises(VaultError, match="climbs above the vault root"):
        vault.read(path)


def test_absolute_file_path_outside_is_refused(vault: Vault, tmp_path: Path) -> None:
    with pytest.raises(VaultError, match="outside the vault"):
        vault.read(tmp_path / "secret.md")


def test_absolute_file_path_inside_is_accepted(vault: Vault) -> None:
    assert vault.read(vault.root / "Projects" / "My Note.md") == "# Note\nBody\n"


def test_absolute_vault_path_is_vault_relative(vault: Vault) -> None:
    # a kimun-style absolute path is rooted at the vault, never at the file system
    with pytest.raises(VaultError, match="note not found"):
        vault.read("/etc/passwd")


def test_symlink_to_outside_is_skipped_and_refused(vault: Vault, tmp_path: Path) -> None:
    link = vault.root / "link.md"
    link.symlink_to(tmp_path / "secret.md")
    vault.refresh()
    assert "link.md" not in [str(p) for p in vault.notes()]
    assert link in vault.skipped
    with pytest.raises(VaultError):
        vault.read("link.md")


def test_symlinked_folder_outside_is_not_followed(vault: Vault, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "note.md").write_text("# outside")
    (vault.root / "linked").symlink_to(outside, target_is_directory=True)
    vault.refresh()
    assert all(not str(p).startswith("linked/") for p in vault.notes())


def test_symlink_inside_the_vault_is_fine(vault: Vault) -> None:
    (vault.root / "alias.md").symlink_to(vault.root / "bom.md")
    vault.refresh()
    assert vault.read("alias.md") == "# Bom\ntext\n"


def test_missing_note(vault: Vault) -> None:
    with pytest.raises(VaultError, match=r"note not found in the vault .*'nope\.md'"):
        vault.read("nope.md")


def test_missing_or_file_root(tmp_path: Path) -> None:
    with pytest.raises(VaultError, match="does not exist"):
        Vault(tmp_path / "nope")
    (tmp_path / "f.md").write_text("x")
    with pytest.raises(VaultError, match="is not a folder"):
        Vault(tmp_path / "f.md")


def test_undecodable_bytes_name_the_file(vault: Vault) -> None:
    (vault.root / "bad.md").write_bytes(b"# ok\n\xff\xfe broken")
    vault.refresh()
    with pytest.raises(VaultError, match=r"bad\.md: not valid UTF-8 at byte 5") as info:
        vault.read("bad.md")
    assert "errors='replace'" in str(info.value)


def test_undecodable_bytes_replaced_with_a_warning(vault: Vault) -> None:
    (vault.root / "bad.md").write_bytes(b"# ok\n\xff broken")
    lenient = Vault(vault.root, errors="replace")
    with pytest.warns(UserWarning, match=r"bad\.md: not valid UTF-8"):
        text = lenient.read("bad.md")
    assert text == "# ok\n\ufffd broken"


def test_bad_errors_mode(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="errors must be"):
        Vault(tmp_path, errors="ignore")


def test_case_collisions_are_reported(tmp_path: Path) -> None:
    (tmp_path / "A.md").write_text("upper")
    (tmp_path / "a.md").write_text("lower")
    v = Vault(tmp_path)
    assert [str(p) for p in v.notes()] == ["a.md"]
    assert [p.name for p in v.collisions[VaultPath("a.md")]] == ["A.md", "a.md"]


def test_nothing_outside_is_opened(
    vault: Vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # every descriptor the vault opens is checked by what it really names (/proc/self/fd)
    opened: list[Path] = []
    real_open = os.open

    def spy(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        fd = real_open(path, flags, *args, **kwargs)
        opened.append(Path(f"/proc/self/fd/{fd}").readlink())
        return fd

    (vault.root / "link.md").symlink_to(tmp_path / "secret.md")
    vault.refresh()
    monkeypatch.setattr(os, "open", spy)
    for path in vault.notes():
        vault.read(path)
    for bad in ["../secret.md", "a/../../secret.md", "link.md", tmp_path / "secret.md"]:
        with pytest.raises(VaultError):
            vault.read(bad)
    assert any(p.name == "bom.md" for p in opened)
    assert all(p == vault.root or vault.root in p.parents for p in opened)


# --- journal dates ---------------------------------------------------------------------


def test_vault_journal_date_uses_the_sanitized_path(vault: Vault) -> None:
    assert Vault.journal_date("Journal/2026-04-08.md") == "2026-04-08"


def test_no_warning_for_a_clean_vault(vault: Vault) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for p in vault.notes():
            vault.note(p)
