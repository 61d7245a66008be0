"""Run a notebook from notebooks/ top to bottom with nbclient, as the test suite does.

:func:`run_notebook` runs one in a fresh kernel; :func:`run_on_vault` runs it as
``askkit lab`` would on one of :data:`VAULTS`: on the bundled sample from
notebooks/ with every default, on another vault from a copy outside the
repository with the lab's environment (``ASKKIT_VAULT``, ``ASKKIT_DATA``), the
judgments file (``ASKKIT_LABELS``) in the test's temporary folder, and records
what the repository's ``notebooks/`` and ``data/`` and the vault looked like
before and after, so a test can say nothing was written there.
"""

from __future__ import annotations

import base64
import re
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbformat import v4

from tests.conftest import DATA, ROOT
from tests.corpora import corpus

NOTEBOOKS = ROOT / "notebooks"
#: How a tqdm bar shows as text: ``embedding (...):  40%|####      | 200/480 [...]``.
PROGRESS = re.compile(r"\d+%\|")
#: The vaults every notebook runs on: the bundled sample, and the shared Obsidian help vault.
VAULTS = ("sample", "obsidian-help-en")
#: The environment ``askkit lab`` gives a notebook.
LAB_ENVIRONMENT = (
    "ASKKIT_VAULT",
    "ASKKIT_DATA",
    "ASKKIT_QUERIES",
    "ASKKIT_QRELS",
    "ASKKIT_LABELS",
    "ASKKIT_EMBEDDER",
    "ASKKIT_RERANKER",
    "ASKKIT_SERVER",
    "ASKKIT_VAULT_ID",
)


def run_notebook(
    name: str,
    *,
    timeout: int = 600,
    folder: Path | None = None,
    extra_cells: Sequence[str] = (),
) -> nbformat.NotebookNode:
    """Execute ``notebooks/<name>`` in a fresh kernel and return it.

    The kernel runs in notebooks/, or, with ``folder``, in that folder, where
    the notebook is copied first (as the lab copies it out of the repository).
    ``extra_cells`` are code cells appended before the run: what a user would
    type after Run All. Raises nbclient's ``CellExecutionError`` naming the
    failing cell.
    """
    path = NOTEBOOKS / name
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
        path = Path(shutil.copy2(path, folder / name))
    nb = nbformat.read(path, as_version=4)
    nb.cells.extend(v4.new_code_cell(source) for source in extra_cells)
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        # a cell's output may reach the client after its reply on a loaded machine:
        # wait for it, and fail loudly rather than drop it
        iopub_timeout=60,
        raise_on_iopub_timeout=True,
        # one print may arrive as several stream messages when the kernel flushes
        # between its writes (a loaded machine): join them, as a notebook shows them
        coalesce_streams=True,
    )
    client.execute()
    return nb


# -- one notebook on one vault, as the lab runs it -------------------------------------------


def _listing(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``root``: relative path -> (size, modification time in ns)."""
    return {
        str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts and ".ipynb_checkpoints" not in p.parts
    }


def repository_state() -> tuple[str, dict[str, tuple[int, int]]]:
    """``git status --porcelain`` of notebooks/ and data/ (when git is here), and their files."""
    status = ""
    if (ROOT / ".git").exists() and shutil.which("git"):
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=all", "--", "notebooks", "data"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    listing = {f"notebooks/{k}": v for k, v in _listing(NOTEBOOKS).items()}
    listing.update({f"data/{k}": v for k, v in _listing(DATA).items()})
    return status, listing


@dataclass(frozen=True)
class Executed:
    """A notebook run on one vault, and what the repository and the vault looked like."""

    nb: nbformat.NotebookNode
    vault: str
    root: Path
    labels: Path
    repository: tuple[object, object]
    vault_files: tuple[object, object]

    @property
    def text(self) -> str:
        return outputs_text(self.nb)

    @property
    def markdown(self) -> str:
        return "\n".join(c.source for c in self.nb.cells if c.cell_type == "markdown")

    @property
    def sample(self) -> bool:
        return self.vault == "sample"


def run_on_vault(
    name: str,
    vault: str,
    *,
    cache: Path,
    tmp: Path,
    extra_cells: Sequence[str] = (),
    timeout: int = 900,
) -> Executed:
    """Run ``notebooks/<name>`` on one of :data:`VAULTS` as ``askkit lab`` would.

    The sample runs from notebooks/ with every default (only the cache and the
    judgments file set); another vault runs from a copy in ``tmp`` with
    ``ASKKIT_VAULT`` and ``ASKKIT_DATA`` set and no questions or judgments.
    Skips (fails under ``CI=true``) when the shared corpus is missing.
    """
    root = DATA / "vault" if vault == "sample" else corpus(vault)
    labels = tmp / "labels" / "my-judgments.tsv"
    with pytest.MonkeyPatch.context() as patch:
        for variable in LAB_ENVIRONMENT:
            patch.delenv(variable, raising=False)
        patch.setenv("ASKKIT_CACHE_DIR", str(cache))
        patch.setenv("ASKKIT_LABELS", str(labels))
        folder = None
        if vault != "sample":
            folder = tmp / "lab"
            patch.setenv("ASKKIT_VAULT", str(root))
            patch.setenv("ASKKIT_DATA", str(DATA))
        before, vault_before = repository_state(), _listing(root)
        nb = run_notebook(name, timeout=timeout, folder=folder, extra_cells=extra_cells)
        after, vault_after = repository_state(), _listing(root)
    return Executed(nb, vault, root, labels, (before, after), (vault_before, vault_after))


def assert_nothing_written(executed: Executed) -> None:
    """The run changed no file of the repository's notebooks/ and data/, nor of the vault."""
    before, after = executed.repository
    assert after == before, "the notebook wrote into the repository's notebooks/ or data/"
    vault_before, vault_after = executed.vault_files
    assert vault_after == vault_before, f"the notebook wrote into the vault {executed.root}"


# -- reading what a notebook showed ----------------------------------------------------------


def outputs_text(nb: nbformat.NotebookNode) -> str:
    """All text and HTML the notebook printed or displayed, joined."""
    parts: list[str] = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if "text" in out:
                parts.append(str(out["text"]))
            data = out.get("data", {})
            parts.extend(str(data[mime]) for mime in ("text/plain", "text/html") if mime in data)
    return "\n".join(parts)


def printed(nb: nbformat.NotebookNode, marker: str) -> str:
    """What the one code cell whose source contains ``marker`` printed (its streams)."""
    return "".join(str(o.get("text", "")) for o in cell_outputs(nb, marker) if "text" in o)


def assert_stored_without_outputs(path: Path) -> None:
    """Notebooks are committed clean: no outputs, no execution counts."""
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [], f"{path.name}: a cell has stored outputs"
            assert cell.execution_count is None, f"{path.name}: a cell has an execution count"


def askkit_widgets(nb: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    """The widgets the notebook displayed, less tqdm's progress bars (``label:  0%|``)."""
    return [
        out
        for cell in nb.cells
        for out in cell.get("outputs", [])
        if "application/vnd.jupyter.widget-view+json" in out.get("data", {})
        and not PROGRESS.search(str(out["data"].get("text/plain", "")))
    ]


def cell_outputs(nb: nbformat.NotebookNode, marker: str) -> list[nbformat.NotebookNode]:
    """The outputs of the one code cell whose source contains ``marker``."""
    cells = [c for c in nb.cells if c.cell_type == "code" and marker in c.source]
    assert len(cells) == 1, f"{len(cells)} code cells contain {marker!r}"
    return list(cells[0].get("outputs", []))


def cell_images(nb: nbformat.NotebookNode, marker: str) -> list[bytes]:
    """The PNG images the cell whose source contains ``marker`` displayed."""
    return [
        base64.b64decode(out["data"]["image/png"])
        for out in cell_outputs(nb, marker)
        if "image/png" in out.get("data", {})
    ]


def assert_clean_outputs(nb: nbformat.NotebookNode) -> None:
    """No cell failed, and nothing rendered shows kimun's raw breadcrumb separator U+001F."""
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert errors == []
    text = outputs_text(nb)
    assert "Traceback" not in text
    assert "\x1f" not in text, "a cell shows the raw breadcrumb separator U+001F"


def first_cell_says_run_all(path: Path) -> None:
    """The notebooks ship without outputs, so the first cell says to run them."""
    nb = nbformat.read(path, as_version=4)
    assert nb.cells[0].cell_type == "markdown"
    assert "Run All" in nb.cells[0].source


class _Tables(HTMLParser):
    """The ``<table>``s of an HTML fragment: each ``{"head": rows, "body": rows}``, a row a
    list of cell texts (``th`` and ``td`` alike)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[dict[str, list[list[str]]]] = []
        self._part = "body"
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: object) -> None:
        if tag == "table":
            self.tables.append({"head": [], "body": []})
        elif tag in ("thead", "tbody"):
            self._part = "head" if tag == "thead" else "body"
        elif tag == "tr" and self.tables:
            self.tables[-1][self._part].append([])
        elif tag in ("td", "th") and self.tables and self.tables[-1][self._part]:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][self._part][-1].append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "thead":
            self._part = "body"

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def html_table(nb: nbformat.NotebookNode, marker: str) -> list[dict[str, str]]:
    """The last DataFrame the cell whose source contains ``marker`` displayed, as rows of
    ``{column: cell text}``; the index is the column ``""`` (or its name)."""
    html = [
        str(o["data"]["text/html"])
        for o in cell_outputs(nb, marker)
        if "text/html" in o.get("data", {})
    ]
    assert html, f"the cell with {marker!r} displayed no table"
    parser = _Tables()
    parser.feed(html[-1])
    table = parser.tables[0]
    header = list(table["head"][0])
    if len(table["head"]) > 1 and table["head"][1][0]:  # the index's name, on a row of its own
        header[0] = table["head"][1][0]
    return [dict(zip(header, row, strict=True)) for row in table["body"] if row]


def lines(text: str, pattern: str) -> Iterator[re.Match[str]]:
    """Every line of ``text`` that matches ``pattern`` from its start."""
    compiled = re.compile(pattern)
    for line in text.splitlines():
        found = compiled.match(line)
        if found:
            yield found
