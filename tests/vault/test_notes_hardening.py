"""The vault under hostile file systems: link races, loops, deep folders, FIFOs, huge notes."""

from __future__ import annotations

import os
import socket
import sys
import threading
import time
import tracemalloc
import warnings
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from askkit import VaultError, VaultPath
from askkit.vault import Vault
from askkit.vault import notes as notes_module

T = TypeVar("T")

#: How long a race runs, and how many reads it makes at most.
RACE_SECONDS = 2.0
RACE_READS = 20_000


def bounded(call: Callable[[], T], seconds: float = 5.0) -> T:
    """Run ``call`` in a thread; fail (instead of hanging the suite) if it blocks."""
    box: dict[str, object] = {}

    def run() -> None:
        try:
            box["value"] = call()
        except BaseException as exc:  # handed back to the test below
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"blocked for more than {seconds} s"
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]


def race(vault: Vault, path: str, swap: Callable[[int], None]) -> tuple[Counter[str], int]:
    """Read ``path`` while another thread calls ``swap(i)``; count texts and refusals."""
    stop = threading.Event()
    swaps = [0]

    def swapper() -> None:
        i = 0
        while not stop.is_set():
            swap(i)
            i += 1
        swaps[0] = i

    thread = threading.Thread(target=swapper, daemon=True)
    results: Counter[str] = Counter()
    thread.start()
    deadline = time.monotonic() + RACE_SECONDS
    try:
        while time.monotonic() < deadline and results.total() < RACE_READS:
            try:
                results[vault.read(path)] += 1
            except VaultError:
                results["<refused>"] += 1
    finally:
        stop.set()
        thread.join(5)
    assert not thread.is_alive()
    return results, swaps[0]


def open_descriptors() -> int:
    """How many descriptors this process holds."""
    return sum(1 for _ in Path("/proc/self/fd").iterdir())


def remove_chain(top: Path) -> None:
    """Remove a tree of nested single folders bottom up (shutil.rmtree recurses).

    Works through descriptors, with at most 256 levels open at a time.
    """
    flags = os.O_RDONLY | os.O_DIRECTORY

    def entries(fd: int) -> list[os.DirEntry[str]]:
        with os.scandir(fd) as it:
            return list(it)

    names: list[str] = []  # names[i] is the folder at level i + 1 (top is level 0)
    fd = os.open(top, flags)
    while subs := [e.name for e in entries(fd) if e.is_dir(follow_symlinks=False)]:
        names.append(subs[0])
        child = os.open(subs[0], flags, dir_fd=fd)
        os.close(fd)
        fd = child
    os.close(fd)
    end = len(names)
    while True:
        start = max(0, end - 255)
        fd = os.open(top, flags)
        for name in names[:start]:
            child = os.open(name, flags, dir_fd=fd)
            os.close(fd)
            fd = child
        fds = [fd]  # fds[k] is the folder at level start + k
        for name in names[start:end]:
            fds.append(os.open(name, flags, dir_fd=fds[-1]))
        for k in range(len(fds) - 1, -1, -1):
            for entry in entries(fds[k]):
                if not entry.is_dir(follow_symlinks=False):
                    os.unlink(entry.name, dir_fd=fds[k])
            if k > 0:
                os.close(fds[k])
                os.rmdir(names[start + k - 1], dir_fd=fds[k - 1])
        os.close(fds[0])
        if start == 0:
            break
        end = start
    top.rmdir()


def make_chain(root: Path, depth: int, note_every: int, name: str = "d") -> None:
    """``depth`` nested folders ``name`` below ``root``, a note every ``note_every`` levels.

    Made through descriptors, so the paths may be longer than the system's limit.
    """
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for level in range(1, depth + 1):
            os.mkdir(name, dir_fd=fd)
            child = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
            if level % note_every == 0 or level == depth:
                note = os.open(f"n{level}.md", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
                os.write(note, f"# level {level}\n".encode())
                os.close(note)
    finally:
        os.close(fd)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "vault"
    folder.mkdir()
    (folder / "note.md").write_text("inside")
    (folder / "other.md").write_text("other inside")
    (tmp_path / "secret.md").write_text("OUTSIDE")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "note.md").write_text("OUTSIDE")
    return folder


# --- item 2: no read escapes the root, even under a race -----------------------------------


def test_hardening_2_vault_escape_under_a_race(root: Path) -> None:
    """Hardening item 2: swapping a note between a file and a link to an outside file,
    thousands of reads never return the outside file."""
    vault = Vault(root)
    assert VaultPath("note.md") in vault.notes()
    secret = root.parent / "secret.md"

    def swap(i: int) -> None:
        staged = root / f".swap{i % 2}"
        if i % 2:
            staged.symlink_to(secret)
        else:
            staged.write_text("inside")
        staged.replace(root / "note.md")

    results, swaps = race(vault, "note.md", swap)
    assert results["OUTSIDE"] == 0
    assert set(results) <= {"inside", "<refused>"}
    assert results["inside"] > 0
    assert results["<refused>"] > 0  # the reader did meet the outside link, and refused it
    assert swaps > 100


def test_hardening_2_folder_swapped_for_an_outside_link_under_a_race(root: Path) -> None:
    """Hardening item 2: a folder on the note's path swapped with a link to an outside
    folder never lets a read return the outside note."""
    sub = root / "sub"
    sub.mkdir()
    (sub / "note.md").write_text("inside")
    vault = Vault(root)
    assert VaultPath("sub/note.md") in vault.notes()
    (root / ".link").symlink_to(root.parent / "elsewhere", target_is_directory=True)

    def swap(i: int) -> None:
        if i % 2 == 0:  # the real folder out, the link in
            sub.rename(root / ".real")
            (root / ".link").rename(sub)
        else:
            sub.rename(root / ".link")
            (root / ".real").rename(sub)

    results, swaps = race(vault, "sub/note.md", swap)
    assert results["OUTSIDE"] == 0
    assert set(results) <= {"inside", "<refused>"}
    assert results["inside"] > 0
    assert results["<refused>"] > 0
    assert swaps > 100


def test_hardening_2_links_inside_the_vault_are_still_read(root: Path) -> None:
    """Hardening item 2: links whose target stays inside the vault keep working
    (relative, absolute, chained, through '..' and through a linked folder)."""
    (root / "sub").mkdir()
    (root / "sub" / "deep.md").write_text("deep inside")
    (root / "rel.md").symlink_to("note.md")
    (root / "abs.md").symlink_to(root / "note.md")
    (root / "chain.md").symlink_to("rel.md")
    (root / "sub" / "up.md").symlink_to("../other.md")
    (root / "folder-link").symlink_to("sub", target_is_directory=True)
    (root / "via.md").symlink_to("folder-link/deep.md")
    vault = Vault(root)
    assert vault.read("rel.md") == "inside"
    assert vault.read("abs.md") == "inside"
    assert vault.read("chain.md") == "inside"
    assert vault.read("sub/up.md") == "other inside"
    assert vault.read("via.md") == "deep inside"
    assert vault.read(root / "rel.md") == "inside"
    assert "folder-link/deep.md" not in [str(p) for p in vault.notes()]  # not descended
    assert vault.skipped == {}


@pytest.mark.parametrize(
    "target", ["../secret.md", "sub/../../secret.md", "ABSOLUTE", "hop.md"], ids=str
)
def test_hardening_2_links_leaving_the_vault_are_refused(root: Path, target: str) -> None:
    """Hardening item 2: every way a link can leave the root (relative, absolute,
    through a folder, through another link) is skipped silently and refused."""
    (root / "sub").mkdir()
    (root / "hop.md").symlink_to(root.parent / "secret.md")
    link = root / "link.md"
    link.symlink_to(str(root.parent / "secret.md") if target == "ABSOLUTE" else target)
    vault = Vault(root)
    assert "link.md" not in [str(p) for p in vault.notes()]
    assert vault.skipped[link].startswith("symbolic link to a file outside the vault")
    with pytest.raises(VaultError, match=r"link\.md: symbolic link to a file outside the vault"):
        vault.read("link.md")
    assert "link.md" not in vault


def test_hardening_2_stat_is_taken_on_the_file_opened_inside(root: Path) -> None:
    """Hardening item 2: Vault.stat stats the opened descriptor, never an outside file."""
    vault = Vault(root)
    assert vault.stat("note.md").st_size == len("inside")
    (root / "note.md").unlink()
    (root / "note.md").symlink_to(root.parent / "secret.md")
    with pytest.raises(VaultError, match="outside the vault"):
        vault.stat("note.md")


# --- item 6: listing never crashes ------------------------------------------------------------


def test_hardening_6_symlink_loops_are_skipped_and_recorded(root: Path) -> None:
    """Hardening item 6: a link to itself and a pair of links to each other are skipped,
    recorded and refused, instead of raising RuntimeError."""
    (root / "self.md").symlink_to("self.md")
    (root / "a.md").symlink_to("b.md")
    (root / "b.md").symlink_to("a.md")
    vault = Vault(root)
    with pytest.warns(UserWarning, match=r"skipped 3 entries .*'self\.md': symbolic link loop"):
        listed = [str(p) for p in vault.notes()]
    assert listed == ["note.md", "other.md"]
    for name in ["self.md", "a.md", "b.md"]:
        assert vault.skipped[root / name].startswith("symbolic link loop")
    with pytest.raises(VaultError, match=r"self\.md: symbolic link loop"):
        vault.read("self.md")
    with pytest.raises(VaultError, match="symbolic link loop"):
        vault.read(root / "a.md")


def test_hardening_6_dangling_links_are_skipped_and_recorded(root: Path) -> None:
    """Hardening item 6: a dangling .md link is skipped and recorded, and reading it
    raises VaultError instead of FileNotFoundError."""
    (root / "gone.md").symlink_to("missing.md")
    vault = Vault(root)
    with pytest.warns(UserWarning, match=r"'gone\.md': dangling symbolic link"):
        assert [str(p) for p in vault.notes()] == ["note.md", "other.md"]
    assert vault.skipped[root / "gone.md"] == (
        "dangling symbolic link: its target 'missing.md' does not exist"
    )
    with pytest.raises(VaultError, match=r"gone\.md: dangling symbolic link.*'missing\.md'"):
        vault.read("gone.md")


@pytest.mark.slow  # 1,100 mkdir and rmdir: a few seconds on a slow disk
def test_hardening_6_deep_folders_are_listed_without_recursion(root: Path) -> None:
    """Hardening item 6: folders 1,100 deep are listed and read, with no RecursionError,
    though the deepest path (6,600 bytes) is longer than the system allows."""
    make_chain(root, 1100, note_every=100, name="level")
    try:
        assert sys.getrecursionlimit() < 1100
        vault = Vault(root)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            notes = [str(p) for p in vault.notes()]
        deepest = "/".join(["level"] * 1100) + "/n1100.md"
        assert len(deepest) > 4096
        assert len(notes) == 2 + 11
        assert deepest in notes
        assert vault.read(deepest) == "# level 1100\n"
        assert vault.note(deepest).hash == vault.hash(deepest)
        assert vault.skipped == {}
    finally:
        remove_chain(root / "level")


def test_hardening_6_absurdly_deep_folders_are_refused_and_recorded(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hardening item 6: a folder deeper than the listing's limit (2,048 levels; lowered
    to 40 here to keep the test fast) is not listed, with a recorded reason and a warning;
    everything above it is listed."""
    assert notes_module._MAX_DEPTH == 2048
    monkeypatch.setattr(notes_module, "_MAX_DEPTH", 40)
    make_chain(root, 45, note_every=10)
    try:
        vault = Vault(root)
        with pytest.warns(UserWarning, match="nested more than 40 levels deep"):
            notes = [str(p) for p in vault.notes()]
        deep = "/".join(["d"] * 40) + "/n40.md"
        assert deep in notes
        assert not any(n.endswith("n45.md") for n in notes)
        assert vault.read(deep) == "# level 40\n"
        too_deep = root.joinpath(*["d"] * 41)
        assert vault.skipped == {too_deep: "folder nested more than 40 levels deep; not listed"}
        with pytest.raises(VaultError, match="nested more than 40 levels deep"):
            vault.read("/".join(["d"] * 41))
    finally:
        remove_chain(root / "d")


def test_hardening_6_deep_and_wide_tree_is_listed_with_few_descriptors(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hardening item 6: a tree 120 deep with a side folder at every level is listed
    completely while the listing holds few folders open (its limit lowered to 4 here,
    so folders are closed and reopened), and no descriptor leaks."""
    monkeypatch.setattr(notes_module, "_MAX_OPEN_FOLDERS", 4)
    expected = ["note.md", "other.md"]
    folder = root
    for level in range(120):
        (folder / "s").mkdir()
        (folder / "s" / "n.md").write_text(f"side {level}")
        expected.append(folder.relative_to(root).joinpath("s", "n.md").as_posix())
        folder = folder / "d"
        folder.mkdir()
    open_now: list[int] = []
    real_list_folder = notes_module._list_folder

    def spy(*args: object, **kwargs: object) -> list[str]:
        open_now.append(open_descriptors())
        return real_list_folder(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(notes_module, "_list_folder", spy)
    before = open_descriptors()
    vault = Vault(root)
    notes = [str(p) for p in vault.notes()]
    assert sorted(notes) == sorted(expected)
    assert len(open_now) == 1 + 2 * 120
    assert max(open_now) <= before + 8
    assert open_descriptors() == before
    assert vault.read("/".join(["d"] * 119) + "/s/n.md") == "side 119"


# --- item 7: nothing blocks, nothing huge is read ---------------------------------------------


def test_hardening_7_fifo_is_skipped_and_refused_without_blocking(root: Path) -> None:
    """Hardening item 7: a FIFO named pipe.md is skipped by listing with a warning and
    refused by read, without ever blocking."""
    os.mkfifo(root / "pipe.md")
    vault = Vault(root)
    with pytest.warns(UserWarning, match=r"'pipe\.md': a FIFO \(named pipe\), not a regular"):
        notes = bounded(vault.notes)
    assert [str(p) for p in notes] == ["note.md", "other.md"]
    assert vault.skipped[root / "pipe.md"] == "a FIFO (named pipe), not a regular file"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # each skip is warned about once per vault
        with pytest.raises(VaultError, match=r"pipe\.md: a FIFO \(named pipe\), not a regular"):
            bounded(lambda: vault.read("pipe.md"))
        vault.refresh()
        assert len(vault) == 2


def test_hardening_7_fifo_swapped_in_after_listing_is_refused_without_blocking(
    root: Path,
) -> None:
    """Hardening item 7: a note replaced by a FIFO after it was listed is refused by
    read, hash and stat, which never block."""
    vault = Vault(root)
    assert VaultPath("note.md") in vault.notes()
    os.mkfifo(root / ".staged")
    (root / ".staged").replace(root / "note.md")
    for call in (vault.read, vault.hash, vault.stat, vault.note):
        with pytest.raises(VaultError, match=r"note\.md: a FIFO \(named pipe\)"):
            bounded(lambda call=call: call("note.md"))  # type: ignore[misc]


def test_hardening_7_socket_and_folder_named_like_a_note_are_skipped(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hardening item 7: a socket and a folder named x.md are skipped with a warning and
    refused by read; the notes inside the folder are still listed."""
    monkeypatch.chdir(root)  # a socket's path is limited to about 100 bytes
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind("sock.md")
        (root / "x.md").mkdir()
        (root / "x.md" / "inner.md").write_text("inner")
        (root / "to-pipe.md").symlink_to("pipe")
        os.mkfifo(root / "pipe")
        vault = Vault(root)
        with pytest.warns(UserWarning, match="skipped 3 entries") as caught:
            notes = [str(p) for p in bounded(vault.notes)]
        assert "'sock.md': a socket" in str(caught[0].message)
        assert notes == ["note.md", "other.md", "x.md/inner.md"]
        assert vault.skipped[root / "sock.md"] == "a socket, not a regular file"
        assert vault.skipped[root / "to-pipe.md"] == "a FIFO (named pipe), not a regular file"
        assert vault.skipped[root / "x.md"].startswith("a folder named like a note")
        with pytest.raises(VaultError, match=r"sock\.md: a socket"):
            bounded(lambda: vault.read("sock.md"))
        with pytest.raises(VaultError, match=r"x\.md: a folder named like a note"):
            vault.read("x.md")
        with pytest.raises(VaultError, match=r"to-pipe\.md: a FIFO"):
            bounded(lambda: vault.read("to-pipe.md"))
        assert vault.read("x.md/inner.md") == "inner"
    finally:
        server.close()


def test_hardening_7_sparse_2gb_note_is_refused_before_reading(root: Path) -> None:
    """Hardening item 7: a 2 GiB sparse note is refused from its size on the open file,
    naming the file, its size and the cap, without reading it."""
    big = root / "big.md"
    with big.open("wb") as handle:
        handle.truncate(2 * 1024**3)
    vault = Vault(root)
    assert vault.max_note_bytes == 16 * 1024 * 1024
    assert VaultPath("big.md") in vault.notes()  # listed; only reading is capped
    tracemalloc.start()
    try:
        with pytest.raises(VaultError) as info:
            vault.read("big.md")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    message = str(info.value)
    assert str(big) in message
    assert "2147483648 bytes" in message
    assert "max_note_bytes=16777216" in message
    assert "Vault(..., max_note_bytes=N)" in message
    assert "\n" not in message
    assert peak < 1024 * 1024
    for call in (vault.read_bytes, vault.hash, vault.note):
        with pytest.raises(VaultError, match="over max_note_bytes"):
            call("big.md")


def test_hardening_7_note_size_cap_can_be_raised(root: Path) -> None:
    """Hardening item 7: max_note_bytes refuses a note just over it, reads one at it, and
    can be raised or lifted (None)."""
    (root / "kb.md").write_text("x" * 1024)
    with pytest.raises(VaultError, match=r"kb\.md: 1024 bytes .* over max_note_bytes=1023"):
        Vault(root, max_note_bytes=1023).read("kb.md")
    assert Vault(root, max_note_bytes=1024).read("kb.md") == "x" * 1024
    assert Vault(root, max_note_bytes=None).read("kb.md") == "x" * 1024
    raised = Vault(root, max_note_bytes=10)
    raised.max_note_bytes = 2048
    assert raised.hash("kb.md") == Vault(root).hash("kb.md")


@pytest.mark.parametrize("cap", [-1, 1.5, "16", True])
def test_hardening_7_bad_note_size_cap(root: Path, cap: object) -> None:
    """Hardening item 7: a cap that is not a byte count is refused with its value."""
    with pytest.raises(ValueError, match=f"max_note_bytes must be .*got {cap!r}"):
        Vault(root, max_note_bytes=cap)  # type: ignore[arg-type]


def test_hardening_6_names_that_are_not_utf8_are_skipped_and_recorded(tmp_path: Path) -> None:
    """Hardening item 6: a note or folder named with bytes that are not UTF-8 is skipped.

    Such a name reached the index cache as a lone surrogate and stopped
    ``askkit index``; no vault path, wire title or cache can carry it.
    """
    root = tmp_path / "vault"
    root.mkdir()
    (root / "a.md").write_text("# A\nbread\n")
    raw = os.fsencode(root)
    Path(os.fsdecode(raw + b"/\xff\xfebad.md")).write_bytes(b"# B\nbread\n")
    Path(os.fsdecode(raw + b"/\xffdir")).mkdir()
    Path(os.fsdecode(raw + b"/\xffdir/c.md")).write_bytes(b"# C\n")
    vault = Vault(root)
    with pytest.warns(UserWarning, match="not UTF-8"):
        notes = vault.notes()
    assert [str(p) for p in notes] == ["a.md"]
    assert len(vault.skipped) == 2
    assert all("not UTF-8" in reason for reason in vault.skipped.values())
