"""What the readers behind :func:`askkit.metrics.collections.read_collection` share.

:func:`detect` finds a folder's layout. Each reader reads a folder into a
:class:`Parsed`: plain tuples (documents ``(id, title, text, fields)``,
queries ``(id, text)``, judgments ``(query id, document id, grade)``), the
files read, how the grades were read, and notes:
every choice a reader made and every quirk it met, so that nothing is
dropped silently. A file that cannot be read raises
:class:`~askkit.errors.SchemaError` naming the file, line, field and value.

The readers, one per layout (:mod:`askkit.metrics._smart`,
:mod:`askkit.metrics._sgml`, :mod:`askkit.metrics._beir`):

- SMART (Cranfield, CISI, MED...): ``.I id`` records with ``.T`` title, ``.W``
  text and other ``.X`` fields, in a documents file and a queries file (its
  name holds ``qry`` or ``quer``), and judgments: Cranfield's ``qid docid
  code`` or TREC qrels.
- TREC: SGML documents (``<DOC><DOCNO>..</DOCNO>..<TEXT>..</TEXT></DOC>``,
  in any number of files under the folder), topics (``<top><num>..<title>..``)
  and TREC qrels (``qid iter docid grade``).
- BEIR (and ir_datasets' JSONL names): ``corpus.jsonl`` (``_id``, ``title``,
  ``text``), ``queries.jsonl`` (``_id``, ``text``) and ``qrels/<split>.tsv``
  (a header ``query-id corpus-id score``, then one judgment a line).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from askkit._files import read_input
from askkit.errors import SchemaError

__all__ = [
    "AS_WRITTEN",
    "CRANFIELD_GRADES",
    "CRANFIELD_WORDS",
    "DOC_START",
    "MANIFEST",
    "SHOWN",
    "SMART_START",
    "TOPIC_START",
    "CranfieldGrades",
    "Doc",
    "Parsed",
    "QueryIds",
    "bar",
    "detect",
    "head_of",
    "line_of",
    "looks_like_qrels",
    "one_line",
    "regular_files",
    "shown",
    "text_of",
]

Doc = tuple[str, str, str, dict[str, str]]
CranfieldGrades = Literal["ir_datasets", "cleverdon"]
QueryIds = Literal["auto", "number", "order"]

#: How Cranfield's judgment codes become grades, by name: code -> grade.
CRANFIELD_GRADES: dict[str, dict[int, int]] = {
    "ir_datasets": {-1: 0, 1: 1, 2: 2, 3: 3, 4: 4},
    "cleverdon": {-1: 0, 1: 4, 2: 3, 3: 2, 4: 1},
}
CRANFIELD_WORDS = {
    "ir_datasets": (
        "cranqrel's codes as ir_datasets reads them: -1 (no interest) -> 0, not relevant; "
        "1 (minimum interest), 2, 3 -> 1, 2, 3; 4 (a complete answer) -> 4"
    ),
    "cleverdon": (
        "cranqrel's codes in Cleverdon's direction: -1 (no interest) -> 0, not relevant; "
        "1 (a complete answer) -> 4; 2 -> 3; 3 -> 2; 4 -> 1"
    ),
}
#: The record of a vault askkit wrote from a collection (its mark: the JSON's first key).
MANIFEST = "askkit-collection.json"
#: How TREC and BEIR grades are read.
AS_WRITTEN = "as written (TREC grades: 0 or less not relevant, 1 and above relevant)"
SHOWN = 120
_SNIFF = 4096


@dataclass(slots=True)
class Parsed:
    """What a layout's reader found (see the module docstring)."""

    layout: str
    documents: list[Doc] = field(default_factory=list)
    queries: list[tuple[str, str]] = field(default_factory=list)
    qrels: list[tuple[str, str, int]] = field(default_factory=list)
    grades: str = AS_WRITTEN
    files: dict[str, list[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def bar(
    items: Iterable[Any], total: int, desc: str, unit: str, progress: bool, *, least: int = 2
) -> Iterable[Any]:
    """``items``, with a tqdm bar on standard error when ``progress`` and there are at least
    ``least`` of them (fewer go by too fast to need one)."""
    if not progress or total < least:
        return items
    from tqdm.auto import tqdm

    shown_bar: Iterable[Any] = tqdm(items, total=total, desc=desc, unit=unit)
    return shown_bar


def shown(text: str) -> str:
    return text if len(text) <= SHOWN else text[:SHOWN] + "…"


def line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def text_of(path: Path, what: str) -> str:
    """A file as text: UTF-8 (a byte order mark dropped), line ends made ``\\n``."""
    data = read_input(path, what=what)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SchemaError(
            f"not UTF-8 (byte {data[exc.start]:#04x}); {what} files are read as UTF-8: "
            "convert the file first, e.g. iconv -f latin1 -t utf-8",
            has_value=False,
            file=str(path),
            line=data.count(b"\n", 0, exc.start) + 1,
        ) from None
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def one_line(text: str) -> str:
    """Whitespace runs as single spaces, trimmed: a title, a field, a query."""
    return " ".join(text.split())


def regular_files(folder: Path, *, recursive: bool) -> tuple[list[Path], list[str]]:
    """The regular files of ``folder`` (sorted; hidden ones skipped), and what was skipped."""
    found: list[Path] = []
    skipped: list[str] = []
    for where, dirs, names in os.walk(folder):
        if not recursive:
            skipped += [f"{d}/" for d in sorted(dirs) if not d.startswith(".")]
        dirs[:] = sorted(d for d in dirs if not d.startswith(".")) if recursive else []
        for name in sorted(names):
            path = Path(where) / name
            if name.startswith("."):
                continue
            if path.is_file():
                found.append(path)
            else:
                skipped.append(str(path.relative_to(folder)))
    return found, skipped


def head_of(path: Path) -> str:
    """The first bytes of a file, as text (undecodable bytes replaced)."""
    try:
        with path.open("rb") as handle:
            data = handle.read(_SNIFF)
    except OSError:
        return ""
    return data.decode("utf-8", errors="replace").removeprefix("\ufeff")


#: A line of a SMART file's first bytes that starts a record.
SMART_START = re.compile(r"^\.I[ \t]+\S", re.MULTILINE)
DOC_START = re.compile(r"\s*<DOC>", re.IGNORECASE)
TOPIC_START = re.compile(r"<top>", re.IGNORECASE)


def _first_fields(head: str) -> list[str]:
    for line in head.splitlines():
        if line.strip():
            return line.split()
    return []


def looks_like_qrels(head: str, counts: Sequence[int]) -> bool:
    fields = _first_fields(head)
    if len(fields) not in counts or fields[0].startswith("#"):
        return False
    try:
        float(fields[-1])
    except ValueError:
        return False
    return True


def detect(folder: Path) -> str:
    """The layout of ``folder``: ``"askkit"`` (a vault askkit wrote), ``"beir"``,
    ``"smart"`` or ``"trec"``; a folder in none of them raises :class:`SchemaError`."""
    if (folder / MANIFEST).is_file():
        return "askkit"
    if (folder / "corpus.jsonl").is_file():
        return "beir"
    top, _ = regular_files(folder, recursive=False)
    if any(SMART_START.search(head_of(p)) for p in top):
        return "smart"
    every, _ = regular_files(folder, recursive=True)
    if any(DOC_START.match(head_of(p)) for p in every):
        return "trec"
    raise SchemaError(
        "not a test collection in a layout askkit reads: no corpus.jsonl (BEIR), no file of "
        "SMART '.I' records (Cranfield), no TREC '<DOC>' file; give the folder holding the "
        "collection's files, or --layout",
        has_value=False,
        file=str(folder),
    )
