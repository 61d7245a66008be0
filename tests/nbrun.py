"""Run a notebook from notebooks/ top to bottom with nbclient, as the test suite does."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from tests.conftest import ROOT

NOTEBOOKS = ROOT / "notebooks"
#: How a tqdm bar shows as text: ``embedding (...):  40%|####      | 200/480 [...]``.
PROGRESS = re.compile(r"\d+%\|")


def run_notebook(name: str, *, timeout: int = 600) -> nbformat.NotebookNode:
    """Execute ``notebooks/<name>`` in a fresh kernel (cwd = notebooks/) and return it.

    Raises nbclient's ``CellExecutionError`` naming the failing cell.
    """
    path = NOTEBOOKS / name
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOKS)}},
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
    import base64

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
    assert "\x1f" not in text, "a cell shows the raw breadcrumb separator U+001F"


def first_cell_says_run_all(path: Path) -> None:
    """The notebooks ship without outputs, so the first cell says to run them."""
    nb = nbformat.read(path, as_version=4)
    assert nb.cells[0].cell_type == "markdown"
    assert "Run All" in nb.cells[0].source
