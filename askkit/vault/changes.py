"""What changed in a vault since an index last read it: the notes to read again, and a report.

Both indexes (the BM25 :class:`~askkit.retrieve.LocalIndex` and the dense
:class:`~askkit.dense.DenseIndex`) take their changes from :func:`scan_vault`
and report them as an :class:`IndexReport` (:meth:`NoteChanges.report`). A
note whose size and modification time are unchanged is not read again; a
changed one is re-hashed, and re-chunked (:func:`~askkit.vault.split.note_chunks`)
only when its content hash changed; a note that cannot be read is skipped
with a warning and listed in :attr:`IndexReport.skipped`.

Examples
--------
>>> import tempfile, pathlib
>>> root = pathlib.Path(tempfile.mkdtemp())
>>> _ = (root / "bread.md").write_text("# Bread\\nFeed it.\\n")
>>> changes = scan_vault(Vault(root), {}, progress=False)
>>> changes.added, list(changes.fresh["bread.md"]["title"])
(['bread.md'], ['Bread'])
>>> str(changes.report(chunks=1, seconds=0.0))
'1 added, 0 changed, 0 deleted, 0 unchanged; 1 chunks in 0.00s'
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from askkit._warn import warn_user
from askkit.errors import VaultError
from askkit.sources import VaultPath
from askkit.vault.chunking import DEFAULT_KIMUN, KimunVersion
from askkit.vault.notes import Vault, content_hash
from askkit.vault.split import note_chunks

__all__ = ["IndexReport", "NoteChanges", "scan_vault"]


@dataclass(frozen=True, slots=True)
class IndexReport:
    """What an (incremental) indexing run did.

    ``deleted`` lists the notes that left the index: gone from the vault, or
    no longer readable. ``skipped`` maps each file that was not indexed to the
    reason: links leaving the vault (:attr:`askkit.vault.Vault.skipped`) and
    notes that could not be read or decoded.
    """

    added: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    unchanged: int = 0
    chunks: int = 0
    seconds: float = 0.0
    skipped: dict[str, str] = field(default_factory=dict)

    @property
    def touched(self) -> bool:
        """Whether anything was added, changed or deleted."""
        return bool(self.added or self.changed or self.deleted)

    def __str__(self) -> str:
        return (
            f"{len(self.added)} added, {len(self.changed)} changed, {len(self.deleted)} deleted, "
            f"{self.unchanged} unchanged; {self.chunks} chunks in {self.seconds:.2f}s"
            + (f"; {len(self.skipped)} skipped" if self.skipped else "")
        )


def _reason(file: Path, exc: OSError) -> str:
    """Why a note was not indexed: a VaultError's own message, or the system's."""
    if isinstance(exc, VaultError):
        return str(exc).removeprefix(f"{file}: ")
    return f"cannot read it: {exc.strerror or exc}"


@dataclass(frozen=True, slots=True)
class NoteChanges:
    """What :func:`scan_vault` found: the notes now, and which to re-index.

    ``notes`` maps every readable note to its ``hash``, ``size`` and
    ``mtime_ns``; ``fresh`` holds the chunk columns
    (:func:`~askkit.vault.split.note_chunks`) of each note that is new or whose
    content hash changed; ``deleted`` lists the notes the index held that left
    it (gone from the vault, or unreadable now); ``skipped`` maps each file
    that was not indexed to the reason: links leaving the vault
    (:attr:`askkit.vault.Vault.skipped`) and notes that could not be read.
    """

    notes: dict[str, dict[str, Any]]
    fresh: dict[str, dict[str, list[Any]]]
    added: list[str]
    changed: list[str]
    deleted: list[str]
    unchanged: int
    skipped: dict[str, str]

    def report(self, *, chunks: int, seconds: float) -> IndexReport:
        """The indexing run's :class:`IndexReport`: these changes, the index's size, the time."""
        return IndexReport(
            added=tuple(self.added),
            changed=tuple(self.changed),
            deleted=tuple(self.deleted),
            unchanged=self.unchanged,
            chunks=chunks,
            seconds=seconds,
            skipped=dict(self.skipped),
        )


def scan_vault(
    vault: Vault,
    previous: Mapping[str, dict[str, Any]],
    *,
    progress: bool = True,
    desc: str = "indexing notes",
    kimun: KimunVersion = DEFAULT_KIMUN,
) -> NoteChanges:
    """Compare a vault with what an index holds (``previous``); read and chunk what changed.

    A note whose size and modification time are unchanged is not read again;
    a changed one is re-hashed, and re-chunked (with ``kimun``'s chunker) only
    when its content hash changed. A note that cannot be read now (a dangling link, vanished,
    permission denied, not valid UTF-8 under the vault's ``errors="strict"``,
    any :class:`~askkit.errors.VaultError`, not a regular file) is skipped with
    a warning naming the file and listed in ``skipped``; it leaves the index
    (``deleted``) when the index held it.
    """
    vault.refresh()
    failed: dict[str, str] = {}
    notes: dict[str, dict[str, Any]] = {}
    todo: list[tuple[str, VaultPath, Path, os.stat_result]] = []
    for vp in vault.notes():
        key = str(vp)
        file = vault.root / key
        try:
            file = vault.resolve(vp)
            st = vault.stat(vp)  # on the file opened inside the vault
        except OSError as exc:  # VaultError is an OSError
            failed[str(file)] = _reason(file, exc)
            continue
        if not stat.S_ISREG(st.st_mode):  # a FIFO would block the read
            failed[str(file)] = "not a regular file"
            continue
        prev = previous.get(key)
        if prev and prev["size"] == st.st_size and prev["mtime_ns"] == st.st_mtime_ns:
            notes[key] = prev
        else:
            todo.append((key, vp, file, st))
    unchanged = len(notes)
    fresh: dict[str, dict[str, list[Any]]] = {}
    added: list[str] = []
    changed: list[str] = []
    for key, vp, file, st in tqdm(
        todo, desc=desc, unit="note", disable=not progress or not todo, leave=False
    ):
        prev = previous.get(key)
        try:
            data = vault.read_bytes(vp)
            note_hash = content_hash(data)
            if prev is None or prev["hash"] != note_hash:
                text = vault.decode(data, file)
                fresh[key] = note_chunks(vp, text, note_hash, Vault.journal_date(key), kimun=kimun)
        except OSError as exc:
            failed[str(file)] = _reason(file, exc)
            continue
        notes[key] = {"hash": note_hash, "size": st.st_size, "mtime_ns": st.st_mtime_ns}
        if key not in fresh:
            unchanged += 1
        else:
            (changed if prev is not None else added).append(key)
    for file_name, reason in failed.items():
        warn_user(f"not indexing {file_name}: {reason}")
    deleted = sorted(set(previous) - set(notes))  # gone from the vault, or unreadable now
    skipped = {**{str(k): v for k, v in vault.skipped.items()}, **failed}
    return NoteChanges(notes, fresh, added, changed, deleted, unchanged, skipped)
