"""The folder a collection is written to: askkit's record of it, and the rules for writing.

:func:`askkit.metrics.collections.write_collection` writes only into a folder
that is new, empty or one it wrote. What it wrote is recorded in
``askkit-collection.json`` (:data:`MANIFEST`), which starts with askkit's mark
(``{"format": "askkit collection"``, as :mod:`askkit._outputs` marks a JSON
report) and lists every file written with its sha256. The record is written
twice: first naming the files about to be written (sha256 ``None``: any
content is askkit's, as a write stopped half-way leaves them), then with
their digests. A file the record does not list is never replaced; one it
lists whose content changed since is replaced only when forced.
:func:`read_written` reads such a folder back: the notes the record lists, in
its order, ``queries.tsv``, ``qrels.tsv`` and ``fields.jsonl``.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from askkit._atomic import atomic_write_text
from askkit._files import read_input
from askkit._outputs import COLLECTION_FORMAT, MARKS
from askkit.errors import SchemaError, UsageError
from askkit.metrics._layouts import AS_WRITTEN, MANIFEST, Doc, Parsed
from askkit.metrics._notes import document_id, read_note

__all__ = [
    "FIELDS",
    "FORMAT",
    "MANIFEST",
    "QRELS",
    "QUERIES",
    "check_output",
    "claim",
    "is_ours",
    "put",
    "read_manifest",
    "read_written",
    "sha256",
    "write_manifest",
]

#: The record's mark: its first key's value.
FORMAT = COLLECTION_FORMAT
_MARK = MARKS["collection"]
_VERSION = 1
#: The files written beside the notes.
QUERIES = "queries.tsv"
QRELS = "qrels.tsv"
FIELDS = "fields.jsonl"


def sha256(data: bytes) -> str:
    """The hex sha256 of ``data``, as the record holds it."""
    return hashlib.sha256(data).hexdigest()


def read_manifest(folder: Path) -> dict[str, Any] | None:
    """The record of an earlier write in ``folder``, or ``None`` when there is none."""
    path = folder / MANIFEST
    try:
        data = read_input(path, what="manifest")
    except (SchemaError, OSError):
        return None
    if not _MARK.match(data):
        return None
    try:
        record: object = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(record, dict):
        return None
    files = record.get("files")
    if not isinstance(files, dict) or not all(
        isinstance(k, str) and (v is None or isinstance(v, str)) for k, v in files.items()
    ):
        return None
    return record


def check_output(folder: str | os.PathLike[str], *, force: bool = False) -> dict[str, str | None]:
    """Check that :func:`write_collection` may write into ``folder``, before any work: it is
    new, empty, or a vault askkit wrote whose files are as askkit wrote them (or ``force``).

    Returns the files an earlier write left there, with their recorded sha256
    (``None``: being written when that write stopped); ``{}`` for a new or
    empty folder. Nothing is created.

    Raises
    ------
    UsageError
        ``folder`` is a file, a folder askkit did not write, or holds a file askkit
        wrote and someone edited since (without ``force``).
    """
    target = Path(folder)
    if target.exists() and not target.is_dir():
        raise UsageError(f"{target}: not a folder; give a new or empty folder for the vault")
    if not target.exists():
        return {}
    present = {entry.name for entry in os.scandir(target)}
    if not present:
        return {}
    record = read_manifest(target)
    if record is None:
        raise UsageError(
            f"{target}: not empty, and not a vault askkit wrote (no {MANIFEST}); askkit writes "
            "a collection only into a new or empty folder, or one it wrote: give another folder"
        )
    previous: dict[str, str | None] = record["files"]
    edited = [
        name
        for name, digest in previous.items()
        if name in present and not is_ours(target / name, digest)
    ]
    if edited and not force:
        raise UsageError(
            f"{target / edited[0]}: edited since askkit wrote it ({len(edited)} such file(s)); "
            "--force replaces askkit's files all the same, or give another folder"
        )
    return previous


def claim(folder: Path, targets: set[str], *, force: bool) -> dict[str, str | None]:
    """:func:`check_output`, then refuse a file askkit did not write where it would write
    one; the folder is made when it is missing."""
    previous = check_output(folder, force=force)
    if not folder.exists():
        folder.mkdir(parents=True)
        return previous
    present = {entry.name for entry in os.scandir(folder)}
    foreign = sorted((targets & present) - set(previous))
    if foreign:
        raise UsageError(
            f"{folder / foreign[0]}: a file askkit did not write stands where it would write "
            f"({len(foreign)} such file(s)); askkit never replaces those, even with --force: "
            "move them away or give another folder"
        )
    return previous


def is_ours(path: Path, digest: str | None) -> bool:
    """Whether ``path`` holds what askkit recorded writing (any content while it was being
    written); a folder or a special file in its place never is."""
    try:
        if not stat.S_ISREG(path.lstat().st_mode):
            return False
        return digest is None or sha256(path.read_bytes()) == digest
    except OSError:
        return False


def put(path: Path, data: bytes, *, replace: bool) -> None:
    """Write a new file (never over one that appeared meanwhile); ``replace``: askkit's own
    earlier file is removed first."""
    if replace:
        if path.is_dir() and not path.is_symlink():
            raise UsageError(f"{path}: a folder where askkit wrote a file; move it away")
        path.unlink(missing_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    except FileExistsError:
        raise UsageError(
            f"{path}: appeared while askkit was writing the vault; left as is, nothing replaced"
        ) from None
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def write_manifest(folder: Path, about: Mapping[str, Any], files: Mapping[str, str | None]) -> None:
    """Write the record: askkit's mark first, then ``about`` (what was written from what),
    then every file with its sha256 (``None``: about to be written)."""
    record = {"format": FORMAT, "version": _VERSION, **about, "files": dict(files)}
    text = json.dumps(record, ensure_ascii=False, indent=1) + "\n"
    atomic_write_text(folder / MANIFEST, text, shared=True)


def read_written(folder: Path) -> Parsed:
    """A vault :func:`askkit.metrics.collections.write_collection` wrote, read back exactly
    (layout ``"askkit"``; the grades, files read and notes as the record holds them)."""
    from askkit.metrics.qrels import read_qrels
    from askkit.metrics.queries import read_queries

    record = read_manifest(folder)
    if record is None:
        raise SchemaError(
            f"not a vault askkit wrote: no readable {MANIFEST} starting with "
            f'{{"format": "{FORMAT}"',
            value=str(folder / MANIFEST),
            file=str(folder / MANIFEST),
        )
    fields = _read_fields(folder / FIELDS) if FIELDS in record["files"] else {}
    documents: list[Doc] = []
    for name in record["files"]:
        if not name.endswith(".md"):
            continue
        path = folder / name
        doc_id = document_id(name)
        content = read_input(path, what="note")
        try:
            text = content.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SchemaError(
                "a note askkit wrote is UTF-8; this one is not (edited since?)",
                has_value=False,
                file=str(path),
                line=content.count(b"\n", 0, exc.start) + 1,
            ) from None
        title, body = read_note(text, where=str(path))
        documents.append((doc_id, title, body, fields.get(doc_id, {})))
    queries = list(read_queries(folder / QUERIES).items())
    frame = read_qrels(folder / QRELS)
    qrels: list[tuple[str, str, int]] = []
    for i, (qid, path, grade) in enumerate(
        zip(
            frame["query_id"].tolist(), frame["path"].tolist(), frame["grade"].tolist(), strict=True
        )
    ):
        try:
            doc_id = document_id(path)
        except SchemaError as exc:
            raise SchemaError(
                f"row {i}: {exc.message}", field="path", value=path, file=str(folder / QRELS)
            ) from None
        qrels.append((qid, doc_id, int(grade)))
    sources = record.get("sources")
    return Parsed(
        "askkit",
        documents,
        queries,
        qrels,
        grades=str(record.get("grades", AS_WRITTEN)),
        files={k: list(v) for k, v in sources.items()} if isinstance(sources, dict) else {},
        notes=[str(n) for n in record.get("notes", [])],
    )


def _read_fields(path: Path) -> dict[str, dict[str, str]]:
    fields: dict[str, dict[str, str]] = {}
    text = read_input(path, what="fields").decode("utf-8")
    for number, line in enumerate(text.split("\n"), start=1):
        if not line:
            continue
        try:
            record = json.loads(line)
            fields[str(record["id"])] = {str(k): str(v) for k, v in record["fields"].items()}
        except (json.JSONDecodeError, KeyError, TypeError, AttributeError):
            raise SchemaError(
                'each line is {"id": ..., "fields": {...}}',
                field="line",
                value=line[:120],
                file=str(path),
                line=number,
            ) from None
    return fields
