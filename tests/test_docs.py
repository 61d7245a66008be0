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


def test_every_picture_in_the_readme_and_docs_is_a_browser_tests_screenshot() -> None:
    """The README's images are true screenshots: each one a browser test takes, and there."""
    taken = "\n".join(
        p.read_text(encoding="utf-8") for p in (ROOT / "tests" / "browser").glob("*.py")
    )
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    names = set()
    for page in pages:
        for link in re.findall(
            r"\(((?:docs/)?screenshots/[\w.-]+\.png)\)", page.read_text(encoding="utf-8")
        ):
            name = link.rsplit("/", 1)[1]
            names.add(name)
            assert (ROOT / "docs" / "screenshots" / name).is_file(), f"{page.name}: {link}"
            assert f'"{name}"' in taken, f"{page.name}: no browser test takes {name}"
    assert {"explorer.png", "debug-retrieval.png", "report-compare.png"} <= names
