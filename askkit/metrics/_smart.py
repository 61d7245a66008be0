"""SMART collections (Cranfield, CISI, MED...): ``.I`` records, and their judgments.

A documents file and a queries file of ``.I id`` records, each field under a
line ``.T`` (title), ``.W`` (text), ``.A`` (author), ``.B`` (bibliography)...;
the queries file's name holds ``qry`` or ``quer``. Judgments are Cranfield's
``qid docid code`` (codes mapped to grades by :data:`CRANFIELD_GRADES`) or
TREC qrels. A field line met twice in a record continues that field, as
ir_datasets reads it (Cranfield's documents 240, 576 and 578 have such lines),
and is named in the notes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from askkit.errors import SchemaError
from askkit.metrics._layouts import (
    AS_WRITTEN,
    CRANFIELD_GRADES,
    CRANFIELD_WORDS,
    SMART_START,
    CranfieldGrades,
    Doc,
    Parsed,
    QueryIds,
    head_of,
    looks_like_qrels,
    one_line,
    regular_files,
    shown,
    text_of,
)

__all__ = ["read_smart"]


def _number(ident: str) -> str:
    """A SMART id: a number without its leading zeros (``001`` -> ``1``), else as written."""
    return str(int(ident)) if ident.isascii() and ident.isdigit() else ident


_MARK = re.compile(r"\.([A-Z])(?:[ \t]+(\S+))?[ \t]*")
_SMART_FIELDS = {
    "A": "author",
    "B": "bib",
    "K": "keywords",
    "C": "categories",
    "N": "entry",
    "X": "references",
}


@dataclass(slots=True)
class _Record:
    ident: str
    line: int
    fields: dict[str, list[str]]


def _smart_records(path: Path, notes: list[str]) -> list[_Record]:
    """The ``.I`` records of a SMART file; a repeated field is appended to the first, and
    said in ``notes``."""
    text = text_of(path, "SMART")
    records: list[_Record] = []
    current: _Record | None = None
    name: str | None = None
    repeated: list[str] = []
    for number, line in enumerate(text.split("\n"), start=1):
        mark = _MARK.fullmatch(line)
        if mark and mark.group(1) == "I":
            if not mark.group(2):
                raise SchemaError(
                    "a .I line needs the record's id after it (.I 1)",
                    field=".I",
                    value=line,
                    file=str(path),
                    line=number,
                )
            current, name = _Record(mark.group(2), number, {}), None
            records.append(current)
        elif mark and not mark.group(2):
            if current is None:
                raise SchemaError(
                    "a field before the first .I record; a SMART file starts with '.I <id>'",
                    field=line.strip(),
                    value=line,
                    file=str(path),
                    line=number,
                )
            name = mark.group(1)
            if name in current.fields:
                repeated.append(f"{path.name}:{number} (record {current.ident}, .{name})")
            current.fields.setdefault(name, [])
        elif current is None or name is None:
            if line.strip():
                raise SchemaError(
                    "text outside any field: a SMART file is '.I <id>' records, each line of "
                    "text under a field line (.T, .A, .B, .W)",
                    field="line",
                    value=shown(line),
                    file=str(path),
                    line=number,
                )
        else:
            current.fields[name].append(line)
    if repeated:
        notes.append(
            f"{len(repeated)} field line(s) repeat a field of their record, read as more of "
            f"that field (as ir_datasets reads them): {', '.join(repeated)}"
        )
    return records


def _smart_documents(records: list[_Record], path: Path) -> list[Doc]:
    documents: list[Doc] = []
    seen: dict[str, int] = {}
    for record in records:
        ident = _number(record.ident)
        if ident in seen:
            raise SchemaError(
                f"document {ident} appears twice (first at line {seen[ident]}); each .I id "
                "names one document",
                field=".I",
                value=record.ident,
                file=str(path),
                line=record.line,
            )
        seen[ident] = record.line
        text = "\n".join(record.fields.get("W", [])).strip()
        title = one_line(" ".join(record.fields.get("T", [])))
        extra = {
            _SMART_FIELDS.get(key, key.lower()): one_line(" ".join(lines))
            for key, lines in record.fields.items()
            if key not in {"T", "W"}
        }
        documents.append((ident, title, text, extra))
    return documents


def _roles_smart(folder: Path) -> tuple[list[Path], list[Path], list[Path], list[str]]:
    files, skipped = regular_files(folder, recursive=False)
    docs: list[Path] = []
    queries: list[Path] = []
    qrels: list[Path] = []
    other = list(skipped)
    for path in files:
        head = head_of(path)
        if SMART_START.search(head):
            is_query = re.search(r"qry|quer", path.name, re.IGNORECASE)
            (queries if is_query else docs).append(path)
        elif looks_like_qrels(head, (3, 4)):
            qrels.append(path)
        else:
            other.append(path.name)
    if len(qrels) > 1:
        named = [p for p in qrels if re.search(r"rel", p.name, re.IGNORECASE)]
        qrels = named if len(named) == 1 else qrels
    for role, found in (("documents", docs), ("queries", queries), ("judgments", qrels)):
        if not found:
            raise SchemaError(
                f"no {role} file found: a SMART collection has a documents file of .I records, "
                "a queries file of .I records (its name holds 'qry'), and a judgments file",
                value=sorted(p.name for p in files),
                file=str(folder),
            )
    for role, found in (("queries", queries), ("judgments", qrels)):
        if len(found) > 1:
            raise SchemaError(
                f"more than one {role} file: keep one in the folder",
                value=[p.name for p in found],
                file=str(folder),
            )
    return docs, queries, qrels, other


def _cranfield_qrels(path: Path, grades: CranfieldGrades) -> tuple[list[tuple[str, str, int]], str]:
    """Judgments of a SMART collection: ``qid docid code`` (Cranfield) or TREC qrels."""
    rows: list[tuple[str, str, int]] = []
    width = 0
    mapping = CRANFIELD_GRADES[grades]
    for number, line in enumerate(text_of(path, "qrels").split("\n"), start=1):
        fields = line.split()
        if not fields:
            continue
        width = width or len(fields)
        if len(fields) != width or width not in (3, 4):
            raise SchemaError(
                f"expected {width if width in (3, 4) else '3 or 4'} whitespace-separated "
                "fields (query document code, or TREC's query iteration document grade), "
                f"got {len(fields)}",
                field="line",
                value=shown(line),
                file=str(path),
                line=number,
            )
        qid, doc, code = (
            (fields[0], fields[1], fields[2])
            if width == 3
            else (
                fields[0],
                fields[2],
                fields[3],
            )
        )
        if not re.fullmatch(r"[+-]?[0-9]{1,9}", code):
            raise SchemaError(
                "a grade must be an integer",
                field="grade",
                value=code,
                file=str(path),
                line=number,
            )
        grade = int(code)
        if width == 3:
            if grade not in mapping:
                raise SchemaError(
                    f"a Cranfield judgment code is -1, 1, 2, 3 or 4 ({CRANFIELD_WORDS[grades]})",
                    field="grade",
                    value=code,
                    file=str(path),
                    line=number,
                )
            grade = mapping[grade]
        rows.append((_number(qid), _number(doc), grade))
    words = CRANFIELD_WORDS[grades] if width == 3 else AS_WRITTEN
    return rows, words


def read_smart(
    folder: Path, *, grades: CranfieldGrades = "ir_datasets", query_ids: QueryIds = "auto"
) -> Parsed:
    """A SMART collection (Cranfield's layout); see the module docstring."""
    docs, queries_files, qrels_files, other = _roles_smart(folder)
    parsed = Parsed("smart")
    for path in docs:
        parsed.documents += _smart_documents(_smart_records(path, parsed.notes), path)
    seen: dict[str, str] = {}
    for doc in parsed.documents:  # across files too
        if doc[0] in seen:
            raise SchemaError(
                "a document id appears in two files", field=".I", value=doc[0], file=seen[doc[0]]
            )
        seen[doc[0]] = str(folder)
    records = _smart_records(queries_files[0], parsed.notes)
    parsed.qrels, parsed.grades = _cranfield_qrels(qrels_files[0], grades)
    parsed.queries = _smart_queries(records, parsed, query_ids, queries_files[0])
    parsed.files = {
        "documents": [str(p) for p in docs],
        "queries": [str(queries_files[0])],
        "judgments": [str(qrels_files[0])],
    }
    if other:
        parsed.notes.append(f"not read (not part of the layout): {', '.join(other)}")
    extra = sorted({k for d in parsed.documents for k in d[3]})
    if extra:
        parsed.notes.append(
            f"documents: the title is .T, the text .W; the other fields ({', '.join(extra)}) "
            "are kept apart from the notes (kimun would index them)"
        )
    return parsed


def _smart_queries(
    records: list[_Record], parsed: Parsed, query_ids: QueryIds, path: Path
) -> list[tuple[str, str]]:
    numbers = [_number(r.ident) for r in records]
    order = [str(i) for i in range(1, len(records) + 1)]
    judged = {q for q, _, _ in parsed.qrels}
    if query_ids == "auto":
        query_ids = "number" if judged <= set(numbers) or not judged <= set(order) else "order"
        if query_ids == "order":
            shown = ", ".join(r.ident for r in records[:4])
            parsed.notes.append(
                f"the judgments number the queries 1..{len(records)} in file order, not by "
                f"their .I numbers ({shown}, ...): the query ids are that order"
            )
    ids = numbers if query_ids == "number" else order
    seen: dict[str, int] = {}
    for ident, record in zip(ids, records, strict=True):
        if ident in seen:
            raise SchemaError(
                f"query {ident} appears twice (first at line {seen[ident]})",
                field=".I",
                value=record.ident,
                file=str(path),
                line=record.line,
            )
        seen[ident] = record.line
    others = sorted({k for r in records for k in r.fields if k != "W"})
    if others:
        parsed.notes.append(
            f"queries: the text is .W; their other fields ({', '.join(others)}) are not used"
        )
    return [
        (ident, one_line(" ".join(r.fields.get("W", []))))
        for ident, r in zip(ids, records, strict=True)
    ]
