"""``askkit lab``'s folder for one vault: copies of the shipped notebooks, apart per vault.

JupyterLab saves a notebook's outputs (and its widgets' state) into the file it
opened, so ``askkit lab`` never opens the notebooks askkit ships: it copies
them into a folder of its own for each vault, in askkit's cache folder
(:func:`askkit._cachedir.cache_root`), named after the vault's resolved path
(``lab-<its name>-<a hash of the path>``) and tagged as askkit's
(:data:`askkit._cachedir.LAB_FOLDER`; :func:`askkit._cachedir.claim` checks it
before every write)::

    lab-notes-3f2a9c0e1b7d/
      CACHEDIR.TAG
      manifest.json     what each copy was copied from
      notebooks/        JupyterLab's root: the copies, with their outputs and your edits
      workspaces/       JupyterLab's workspaces, emptied at every start

The manifest records, per notebook, the sha256 of the shipped file copied and
the sha256 of the copy's cells (their kinds and sources) at copy time. At each
start a missing copy is copied; when the shipped notebook changed since, a copy
whose cells are as copied is replaced (the outputs JupyterLab saved are no
edit, and they came from the old notebook), and a copy whose cells the user
edited is kept, the new shipped version written beside it as
``<name>.new.ipynb``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from askkit._atomic import atomic_write_bytes, atomic_write_text, locked
from askkit._cachedir import LAB_FOLDER, cache_root, claim, is_ours, mark, writing

__all__ = [
    "MANIFEST",
    "Copy",
    "cells_sha256",
    "copies_folder",
    "fresh_workspaces",
    "lab_folder",
    "plan_copies",
    "sync_copies",
    "workspaces_folder",
]

#: The record of what each copy was copied from, in the lab folder.
MANIFEST = "manifest.json"
_FORMAT = 1
_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_FIX = "set ASKKIT_CACHE_DIR to another folder"
_LIFETIME = (
    "askkit lab makes it again when it is missing, but not the edits, outputs and "
    "judgments you made in it"
)

Action = Literal["copied", "refreshed", "kept", "edited"]


@dataclass(frozen=True, slots=True)
class Copy:
    """What a start did with one shipped notebook's copy.

    ``action``: ``"copied"`` (it was missing), ``"refreshed"`` (the shipped
    notebook changed and the copy was unedited: replaced), ``"kept"`` (nothing
    to do) or ``"edited"`` (the shipped notebook changed and the copy was
    edited: kept, the new version written beside it, as ``beside``).
    """

    name: str
    action: Action
    beside: str | None = None

    def describe(self) -> str:
        """One line for the terminal."""
        if self.action == "refreshed":
            return f"{self.name}: askkit's notebook changed and your copy was unedited: replaced"
        if self.action == "edited":
            return (
                f"{self.name}: askkit's notebook changed, and you edited your copy: kept as "
                f"it is; the new version is beside it, {self.beside}"
            )
        return f"{self.name}: {self.action}"


def lab_folder(vault: Path) -> Path:
    """The lab folder of ``vault`` (a resolved path): one per vault, in askkit's cache.

    >>> lab_folder(Path("/home/me/My notes")).name
    'lab-My-notes-478269927624'
    """
    digest = hashlib.sha256(os.fsencode(vault)).hexdigest()[:12]
    slug = _NAME_UNSAFE.sub("-", vault.name).strip("-.")[:40] or "vault"
    return cache_root() / f"lab-{slug}-{digest}"


def copies_folder(folder: Path) -> Path:
    """Where the copies are: JupyterLab's root."""
    return folder / "notebooks"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def cells_sha256(data: bytes) -> str | None:
    """The sha256 of a notebook's cells, their kinds and sources (not outputs, counts or
    metadata); ``None`` when ``data`` is not a notebook.

    >>> nb = {"cells": [{"cell_type": "code", "source": ["1 +", " 1"], "outputs": []}]}
    >>> ran = {"cells": [{"cell_type": "code", "source": "1 + 1", "outputs": [{"x": 2}]}]}
    >>> cells_sha256(json.dumps(nb).encode()) == cells_sha256(json.dumps(ran).encode())
    True
    >>> cells_sha256(b"not json") is None
    True
    """
    try:
        cells = json.loads(data)["cells"]
        parts = [
            [c["cell_type"], c["source"] if isinstance(c["source"], str) else "".join(c["source"])]
            for c in cells
        ]
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    return _sha256(json.dumps(parts, ensure_ascii=False).encode())


def _shipped(shipped: Path) -> dict[str, bytes]:
    """The shipped notebooks (the ``*.ipynb`` files of ``shipped``), by name."""
    return {p.name: p.read_bytes() for p in sorted(shipped.glob("*.ipynb")) if p.is_file()}


def _read_manifest(folder: Path) -> dict[str, dict[str, str]]:
    try:
        data = json.loads((folder / MANIFEST).read_bytes())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("format") != _FORMAT:
        return {}
    notebooks = data.get("notebooks")
    if not isinstance(notebooks, dict):
        return {}
    return {name: entry for name, entry in notebooks.items() if isinstance(entry, dict)}


def _decide(shipped: bytes, copy: bytes | None, entry: Mapping[str, str] | None) -> Action:
    """The refresh rule for one notebook (``copy``: the copy's bytes, ``None`` if missing)."""
    if copy is None:
        return "copied"
    if entry is not None and entry.get("shipped_sha256") == _sha256(shipped):
        return "kept"
    cells = cells_sha256(copy)
    if cells is not None and entry is not None and cells == entry.get("cells_sha256"):
        return "refreshed"
    if cells is not None and cells == cells_sha256(shipped):
        return "kept"  # already the shipped notebook's cells (a copy the manifest lost)
    return "edited"


def _entry(shipped: bytes, action: Action, entry: Mapping[str, str] | None) -> dict[str, str]:
    """The manifest's record after ``action``: the shipped file, and the copy's cells as
    copied (an edited copy keeps the cells it was copied with: it stays edited)."""
    sha = _sha256(shipped)
    copied = cells_sha256(shipped) or sha
    same = entry is not None and entry.get("shipped_sha256") == sha
    if entry is not None and "cells_sha256" in entry and (action == "edited" or same):
        copied = str(entry["cells_sha256"])
    return {"shipped_sha256": sha, "cells_sha256": copied}


def _beside(name: str) -> str:
    return f"{name.removesuffix('.ipynb')}.new.ipynb"


def plan_copies(shipped: Path, folder: Path) -> list[Copy]:
    """What :func:`sync_copies` would do, reading only (``--dry-run``)."""
    notebooks = _shipped(shipped)
    ours = is_ours(folder)
    entries = _read_manifest(folder) if ours else {}
    plan = []
    for name, data in notebooks.items():
        target = copies_folder(folder) / name
        copy = target.read_bytes() if ours and target.is_file() else None
        action = _decide(data, copy, entries.get(name))
        plan.append(Copy(name, action, _beside(name) if action == "edited" else None))
    return plan


def _claim(folder: Path, vault: Path) -> None:
    """Check the lab folder (askkit's, of this kind, trusted); make and tag it if missing."""
    state = claim(folder, vault, what="lab folder", fix=_FIX, purpose=LAB_FOLDER)
    if state == "ours":
        return
    with writing(folder, what="lab folder", fix=_FIX):
        folder.parent.mkdir(parents=True, exist_ok=True)
        folder.mkdir(mode=0o700, exist_ok=True)
        folder.chmod(0o700)  # an empty folder askkit takes becomes private too
        mark(folder, LAB_FOLDER, lifetime=_LIFETIME)


def sync_copies(shipped: Path, folder: Path, vault: Path) -> list[Copy]:
    """Bring the copies in ``folder`` up to date with the notebooks in ``shipped``.

    The shipped notebooks are only read. See the module's docstring for the rule.
    """
    notebooks = _shipped(shipped)
    _claim(folder, vault)
    done = []
    with writing(folder, what="lab folder", fix=_FIX), locked(folder / MANIFEST):
        entries = _read_manifest(folder)
        copies = copies_folder(folder)
        copies.mkdir(mode=0o700, exist_ok=True)
        for name, data in notebooks.items():
            target = copies / name
            copy = target.read_bytes() if target.is_file() else None
            entry = entries.get(name)
            action = _decide(data, copy, entry)
            if action in {"copied", "refreshed"}:
                atomic_write_bytes(target, data)
            elif action == "edited":
                atomic_write_bytes(copies / _beside(name), data)
            entries[name] = _entry(data, action, entry)
            done.append(Copy(name, action, _beside(name) if action == "edited" else None))
        manifest = {"format": _FORMAT, "vault": str(vault), "notebooks": entries}
        atomic_write_text(folder / MANIFEST, json.dumps(manifest, indent=2) + "\n")
    return done


def workspaces_folder(folder: Path) -> Path:
    """Where JupyterLab keeps its workspaces (``--LabApp.workspaces_dir``)."""
    return folder / "workspaces"


def fresh_workspaces(folder: Path) -> Path:
    """An empty folder for JupyterLab's workspaces: a start never restores an earlier layout."""
    workspaces = workspaces_folder(folder)
    with writing(workspaces, what="lab folder", fix=_FIX):
        if workspaces.is_dir() and not workspaces.is_symlink():
            shutil.rmtree(workspaces)  # askkit's own: claim checked the folder holds no link
        workspaces.mkdir(mode=0o700)
    return workspaces
