"""`import askkit` stays light; `import askkit.widgets` brings the views."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT


def _loaded_after(statement: str) -> set[str]:
    code = (
        f"{statement}\nimport sys\n"
        "print(' '.join(m for m in ('ipywidgets', 'IPython', 'matplotlib') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    return set(out.stdout.split())


def test_import_askkit_does_not_load_widgets() -> None:
    assert _loaded_after("import askkit, askkit.frame, askkit.vault.locate, askkit.vault") == set()


def test_import_widgets_does_not_load_matplotlib_until_a_histogram() -> None:
    loaded = _loaded_after("import askkit.widgets")
    assert "ipywidgets" in loaded
    assert "matplotlib" not in loaded


def test_widgets_exports() -> None:
    import askkit.widgets as w

    for name in w.__all__:
        assert hasattr(w, name), name
    assert {"SourcesView", "SourceReader", "TurnView", "Explorer", "Labeler"} <= set(w.__all__)
