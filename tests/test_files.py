"""The one rule for a file a user names as input (askkit._files)."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from askkit._files import describe_mode, open_input, read_input
from askkit.errors import SchemaError


def test_a_regular_file_is_read(tmp_path: Path) -> None:
    (tmp_path / "q.tsv").write_bytes(b"a\tb\n")
    assert read_input(tmp_path / "q.tsv", what="queries") == b"a\tb\n"


def test_a_link_to_a_regular_file_is_that_file(tmp_path: Path) -> None:
    (tmp_path / "real.tsv").write_bytes(b"x")
    (tmp_path / "link.tsv").symlink_to(tmp_path / "real.tsv")
    assert read_input(tmp_path / "link.tsv", what="qrels") == b"x"


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(SchemaError, match=r"qrels file is a FIFO \(named pipe\)") as info:
        read_input(fifo, what="qrels")
    assert info.value.file == str(fifo)


@pytest.mark.parametrize(
    ("device", "kind"), [("/dev/zero", "a character device"), ("/dev/null", "a character device")]
)
def test_a_device_is_refused_before_a_byte_is_read(device: str, kind: str) -> None:
    with pytest.raises(SchemaError, match=f"run file is {kind}, not a regular file"):
        read_input(device, what="run")


def test_a_socket_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        with pytest.raises(SchemaError, match="is a socket"):
            read_input(path, what="turn log")


def test_a_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SchemaError, match="a folder"):
        read_input(tmp_path, what="qrels")


def test_a_missing_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(SchemaError, match="cannot read the run file: no such file") as info:
        read_input(tmp_path / "nope.trec", what="run")
    assert str(info.value).startswith(str(tmp_path / "nope.trec"))


def test_a_file_over_the_limit_is_refused(tmp_path: Path) -> None:
    (tmp_path / "big").write_bytes(b"x" * 11)
    assert read_input(tmp_path / "big", what="payload", limit=11) == b"x" * 11
    with pytest.raises(SchemaError, match="11 bytes, over the 10-byte limit"):
        read_input(tmp_path / "big", what="payload", limit=10)


def test_open_input_reads_in_blocking_mode(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"abc")
    with open_input(tmp_path / "f", what="run") as handle:
        assert os.get_blocking(handle.fileno())
        assert handle.read() == b"abc"
    assert handle.closed


def test_describe_mode_names_a_regular_file(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"")
    assert describe_mode((tmp_path / "f").stat().st_mode) == "a regular file"
