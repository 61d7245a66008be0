"""The docs name tests that exist: every test docs/reliability.md cites as proof is real."""

from __future__ import annotations

import re

from tests.conftest import ROOT

_CITED = re.compile(r"`(tests/[\w/]+\.py)?(?:::)?(test_\w+)?`")


def cited_tests(text: str) -> list[tuple[str, str | None]]:
    """``(file, test)`` for each test file or test the text cites; a bare
    ``::test_name`` belongs to the file cited last."""
    cited: list[tuple[str, str | None]] = []
    current = ""
    for match in _CITED.finditer(text):
        file, name = match.groups()
        if file:
            current = file
        if file or name:
            cited.append((current, name))
    return cited


def test_cited_tests_reads_bare_names_as_the_last_files() -> None:
    text = "`tests/a.py::test_x`, `::test_y`, `tests/b.py`, `tests/c.py` (items)"
    assert cited_tests(text) == [
        ("tests/a.py", "test_x"),
        ("tests/a.py", "test_y"),
        ("tests/b.py", None),
        ("tests/c.py", None),
    ]


def test_every_test_the_reliability_promises_cite_exists() -> None:
    cited = cited_tests((ROOT / "docs" / "reliability.md").read_text(encoding="utf-8"))
    assert len(cited) > 40
    missing = []
    for file, name in cited:
        path = ROOT / file
        if not path.is_file():
            missing.append(file)
        elif name and not re.search(rf"^(?:async )?def {name}\b", path.read_text(), re.M):
            missing.append(f"{file}::{name}")
    assert missing == []
