"""What a fresh interpreter has loaded after some imports: the one probe every
"importing X stays light" test uses.

>>> loaded_after("import json", ["json", "decimal"])
{'json'}
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterable

from tests.conftest import ROOT

__all__ = ["HEAVY", "loaded_after"]

#: What ``import askkit`` (and its data modules) must never load: the notebook stack.
HEAVY = ("ipywidgets", "IPython", "matplotlib")


def loaded_after(statement: str, modules: Iterable[str] = HEAVY) -> set[str]:
    """The names of ``modules`` in ``sys.modules`` after ``statement`` runs in a fresh
    interpreter started in the repository (its stderr is in the error if it fails)."""
    names = list(modules)
    code = f"{statement}\nimport sys\nprint('\\n'.join(m for m in {names!r} if m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        timeout=300,
    )
    if out.returncode:
        raise AssertionError(f"{statement!r} failed in a fresh interpreter:\n{out.stderr}")
    return set(out.stdout.split())
