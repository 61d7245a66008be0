"""askkit._atomic: whole files or nothing, no temporary left behind, one writer at a time."""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from askkit._atomic import atomic_write_text, temp_pattern
from tests.conftest import ROOT

# Writes whole files of one repeated digit, 400 kB each, in a loop. With an
# argument it SIGKILLs itself just before the rename of its first write, after
# the temporary file got its name: the one moment a named temporary exists.
WRITER = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    import askkit._atomic as atomic

    target, how = sys.argv[1], sys.argv[2]
    if how == "named":
        atomic._O_TMPFILE = None  # as on a system or file system without O_TMPFILE
    if how != "random":
        def die(self, other):
            os.kill(os.getpid(), signal.SIGKILL)
        Path.replace = die
    print("started", flush=True)
    n = 0
    while True:
        n += 1
        digit = str(n % 10)
        atomic.atomic_write_text(target, (digit * 99 + "\\n") * 4000)
    """
)


#: A temporary of a live writer (pid 1 is always running), and files askkit did not make.
LIVE = ".qrels.tsv.1.0f3a9c1e.tmp"
FOREIGN = (LIVE, ".qrels.tsv.backup.tmp", "qrels.tsv.tmp", ".qrels.tsv.12.tmp")


def whole(text: str) -> bool:
    """Every line is the same 99 digits: one write's whole content."""
    lines = text.split("\n")
    return lines[-1] == "" and len(lines) == 4001 and len(set(lines[:-1])) == 1


def temporaries(folder: Path, name: str) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if temp_pattern(name).fullmatch(p.name))


@pytest.mark.parametrize("how", ["random", "unnamed", "named"])
def test_killed_labelers_leave_no_temporary_files(tmp_path: Path, how: str) -> None:
    """Hardening item 15: a writer killed with SIGKILL mid-write leaves no temporary
    file that lingers, and the target is always a whole file.

    ``random``: killed at random moments of a write loop (the unnamed temporary
    goes with the process). ``unnamed`` / ``named``: killed just before the rename,
    after the temporary got its name (with ``O_TMPFILE`` and without): the next
    write removes it, and removes nothing that askkit did not create.
    """
    target = tmp_path / "qrels.tsv"
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    for name in FOREIGN:
        (tmp_path / name).write_text("keep me")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    rng = random.Random(15)
    for _ in range(4 if how == "random" else 1):
        proc = subprocess.Popen(
            [sys.executable, str(script), str(target), how],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert proc.stdout is not None
        try:
            assert proc.stdout.readline() == "started\n"
            if how == "random":
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=rng.uniform(0.05, 0.4))  # writing, until killed
            else:
                proc.wait(timeout=10)  # it kills itself just before its first rename
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=10)
        assert proc.returncode == -signal.SIGKILL  # killed, not finished on its own
        left = [n for n in temporaries(tmp_path, "qrels.tsv") if n != LIVE]
        assert all(n.startswith(f".qrels.tsv.{proc.pid}.") for n in left)
        if how != "random":  # killed between naming and rename: the temporary is there
            assert len(left) == 1
        if target.exists():  # the last whole write, the child's or the one below
            assert whole(target.read_text()) or target.read_text() == "next\n"
        atomic_write_text(target, "next\n")  # the next write clears what the dead left
        assert target.read_text() == "next\n"
        assert temporaries(tmp_path, "qrels.tsv") == [LIVE]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [*FOREIGN, "qrels.tsv", "writer.py"]
    )
    assert all((tmp_path / name).read_text() == "keep me" for name in FOREIGN)


def test_a_write_goes_through_a_link_and_never_replaces_a_device_fifo_or_hard_link(
    tmp_path: Path,
) -> None:
    """Hardening item 1: only regular files askkit may replace are replaced.

    ``-o`` set to a device, a FIFO or a link turned each into a regular file;
    a qrels file reached through a link stopped receiving judgments.
    """
    import os
    import stat

    import pytest

    from askkit._atomic import atomic_write_bytes, lock_path, locked
    from askkit.errors import UsageError

    real = tmp_path / "real.tsv"
    real.write_bytes(b"old")
    real.chmod(0o664)
    link = tmp_path / "link.tsv"
    link.symlink_to(real.name)
    atomic_write_bytes(link, b"new")
    assert link.is_symlink()
    assert real.read_bytes() == b"new"  # written through the link
    assert stat.S_IMODE(real.stat().st_mode) == 0o664  # its permissions kept
    with locked(link):  # one lock for every spelling of the file
        assert lock_path(real).exists()
        assert not lock_path(link).exists()

    fifo = tmp_path / "fifo.html"
    os.mkfifo(fifo)
    twin = tmp_path / "twin.tsv"
    os.link(real, twin)
    for target, reason in (
        (fifo, "not a regular file"),
        (twin, "hard links"),
        (tmp_path, "folder"),
    ):
        with pytest.raises(UsageError, match=reason):
            atomic_write_bytes(target, b"x")
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert real.read_bytes() == b"new"
    with pytest.raises(UsageError, match="not a regular file"):
        atomic_write_bytes("/dev/null", b"x")
    assert stat.S_ISCHR(Path("/dev/null").stat().st_mode)


@pytest.mark.parametrize(("mask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_a_shared_file_gets_the_mode_the_umask_gives(tmp_path: Path, mask: int, mode: int) -> None:
    import stat

    from askkit._atomic import umask

    before = os.umask(mask)
    try:
        assert umask() == mask
        atomic_write_text(tmp_path / "report.html", "<p>x</p>", shared=True)
        atomic_write_text(tmp_path / "private.txt", "x")
    finally:
        os.umask(before)
    assert stat.S_IMODE((tmp_path / "report.html").stat().st_mode) == mode
    assert stat.S_IMODE((tmp_path / "private.txt").stat().st_mode) == 0o600


def test_a_replaced_shared_file_keeps_its_mode(tmp_path: Path) -> None:
    import stat

    target = tmp_path / "report.html"
    target.write_text("old")
    target.chmod(0o640)
    atomic_write_text(target, "new", shared=True)
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert target.read_text() == "new"


def test_hardening_39_minor_a_dangling_link_is_refused_never_followed(tmp_path: Path) -> None:
    from askkit._atomic import followed
    from askkit.errors import UsageError

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = tmp_path / "out.json"
    link.symlink_to(elsewhere / "planted.json")
    with pytest.raises(
        UsageError, match=r"a symbolic link to .*planted\.json, which does not exist"
    ):
        atomic_write_text(link, "x")
    with pytest.raises(UsageError):
        followed(link)
    assert list(elsewhere.iterdir()) == []
    assert link.is_symlink()
    (elsewhere / "planted.json").write_text("theirs")
    atomic_write_text(link, "mine")  # a link to a file: the file is written, as before
    assert (elsewhere / "planted.json").read_text() == "mine"
