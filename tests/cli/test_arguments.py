"""askkit.cli.arguments: what an argument may be, refused in one line before any work.

Every subcommand's bad inputs, end to end, are in tests/cli/test_errors.py.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from askkit.cli.arguments import (
    Parser,
    cache_folder,
    check_input,
    client_setting,
    fraction,
    listen_address,
    output_file,
    store_location,
    whole_number,
)
from askkit.errors import UsageError


@pytest.mark.parametrize(
    ("check", "text", "value"),
    [
        (whole_number(1), "3", 3),
        (whole_number(1), " 7 ", 7),
        (whole_number(0, 17), "17", 17),
        (fraction, "0", 0.0),
        (fraction, "0.25", 0.25),
        (client_setting("timeout", float), "2.5", 2.5),
        (client_setting("max_polls", int), "4", 4),
        (listen_address, "127.0.0.1", "127.0.0.1"),
        (listen_address, "localhost", "localhost"),
    ],
)
def test_a_good_value_is_returned_as_its_type(
    check: Callable[[str], Any], text: str, value: object
) -> None:
    assert check(text) == value


@pytest.mark.parametrize(
    ("check", "text", "says"),
    [
        (whole_number(1), "0", "must be at least 1 (a whole number), got 0"),
        (whole_number(1), "1e9", "must be at least 1 (a whole number), got '1e9'"),
        (whole_number(0, 17), "18", "must be a whole number in 0..17, got 18"),
        (fraction, "nan", "must be a number in 0..1, got nan"),
        (fraction, "1.5", "must be a number in 0..1, got 1.5"),
        (fraction, "1e999", "must be a number in 0..1, got inf"),
        (client_setting("timeout", float), "-1", "got -1.0"),
        (client_setting("max_polls", int), "x", "must be a whole number, got 'x'"),
        (listen_address, "8.8.8.8", "must be an address of this machine"),
        (listen_address, "not-an-ip", "must be an IP address such as 127.0.0.1"),
    ],
)
def test_a_bad_value_is_refused_saying_what_it_must_be(
    check: Callable[[str], Any], text: str, says: str
) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=r"^must be") as info:
        check(text)
    assert says in str(info.value)


def test_the_parser_turns_a_value_check_into_one_line_naming_the_option() -> None:
    parser = Parser(prog="askkit")
    parser.add_argument("-k", "--top", type=whole_number(1))
    with pytest.raises(UsageError) as info:
        parser.parse_args(["-k", "0"])
    assert str(info.value) == "-k must be at least 1 (a whole number), got 0"
    with pytest.raises(UsageError, match=r"^unrecognized arguments: --x \(see askkit --help\)$"):
        parser.parse_args(["--x"])


def test_output_file_takes_a_new_file_in_a_missing_folder(tmp_path: Path) -> None:
    target = tmp_path / "new" / "report.html"
    assert output_file(str(target)) == str(target)
    assert not (tmp_path / "new").exists()  # nothing is created while checking


@pytest.mark.parametrize("kind", ["folder", "fifo", "blank", "under a file"])
def test_output_file_refuses_what_cannot_be_written_as_a_file(kind: str, tmp_path: Path) -> None:
    if kind == "folder":
        text, says = str(tmp_path), "got the folder"
    elif kind == "fifo":
        os.mkfifo(tmp_path / "pipe")
        text, says = str(tmp_path / "pipe"), "a FIFO (named pipe)"
    elif kind == "blank":
        text, says = " ", "must be a file name"
    else:
        (tmp_path / "file").write_text("x")
        text, says = str(tmp_path / "file" / "r.html"), "is a file"
    with pytest.raises(argparse.ArgumentTypeError, match=r"^must be") as info:
        output_file(text)
    assert says in str(info.value)


def test_cache_folder_refuses_a_file_and_takes_a_missing_folder(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    assert cache_folder(str(tmp_path / "cache")) == str(tmp_path / "cache")
    with pytest.raises(argparse.ArgumentTypeError, match="must be a folder, got the file"):
        cache_folder(str(tmp_path / "file"))


def test_store_location_must_exist(tmp_path: Path) -> None:
    assert store_location(str(tmp_path)) == str(tmp_path)
    with pytest.raises(argparse.ArgumentTypeError, match="which does not exist"):
        store_location(str(tmp_path / "nope"))


def test_check_input_names_the_option_and_what_the_file_is(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(UsageError) as info:
        check_input(str(tmp_path / "pipe"), what="qrels", option="--qrels")
    assert str(info.value).startswith(f"--qrels {tmp_path / 'pipe'}: the qrels file is a FIFO")
    (tmp_path / "q.tsv").write_text("query_id\tquestion\n")
    check_input(str(tmp_path / "q.tsv"), what="queries")  # a regular file passes
