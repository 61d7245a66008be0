"""BEIR collections (and ir_datasets' JSONL names): ``corpus.jsonl``, ``queries.jsonl``,
``qrels/<split>.tsv``, as BEIR's ``GenericDataLoader`` reads them.

``corpus.jsonl`` has one JSON object a line with ``_id`` (ir_datasets:
``doc_id``), ``title`` and ``text``, any other key a field (as JSON text
unless a string); ``queries.jsonl`` has ``_id`` (``query_id``) and ``text``;
``qrels/<split>.tsv`` a header ``query-id corpus-id score`` and one judgment a
line. The queries kept are those the split judges, as BEIR's loader keeps them.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from askkit.errors import SchemaError
from askkit.metrics._layouts import Parsed, bar, one_line, shown, text_of

__all__ = ["read_beir"]


def _jsonl(path: Path, what: str, progress: bool = False) -> Iterator[tuple[int, dict[str, Any]]]:
    lines = text_of(path, what).split("\n")
    for number, line in bar(
        enumerate(lines, start=1), len(lines), f"reading {what}", "line", progress, least=10_000
    ):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SchemaError(
                f"not valid JSON ({exc.msg} at column {exc.colno}); each line of a JSONL "
                "file is one JSON object",
                field="line",
                value=shown(line),
                file=str(path),
                line=number,
            ) from None
        if not isinstance(value, dict):
            raise SchemaError(
                "each line must be a JSON object",
                field="line",
                value=shown(line),
                file=str(path),
                line=number,
            )
        yield number, value


def _id(record: dict[str, Any], names: tuple[str, ...], path: Path, line: int) -> str:
    name = next((n for n in names if n in record), names[0])
    value = record.get(name)
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value:
        raise SchemaError(
            f"each record needs its id in {' or '.join(repr(n) for n in names)}, a "
            "non-empty string",
            field=name,
            value=value,
            file=str(path),
            line=line,
        )
    return value


def _string(record: dict[str, Any], name: str, path: Path, line: int) -> str:
    value = record.get(name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise SchemaError(
            f"{name!r} must be a string", field=name, value=value, file=str(path), line=line
        )
    return value


def _field_text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _beir_qrels(path: Path) -> list[tuple[str, str, int]]:
    text = text_of(path, "qrels")
    rows: list[tuple[str, str, int]] = []
    reader = csv.reader(io.StringIO(text, newline=""), delimiter="\t")
    header: list[str] | None = None
    for row in reader:
        number = reader.line_num
        if not row or not "".join(row).strip():
            continue
        if header is None:
            header = [c.strip().lower() for c in row]
            if header[:3] != ["query-id", "corpus-id", "score"]:
                raise SchemaError(
                    "a BEIR qrels file starts with the header query-id<TAB>corpus-id<TAB>score",
                    field="header",
                    value=row,
                    file=str(path),
                    line=number,
                )
            continue
        if len(row) < 3 or not row[0] or not row[1]:
            raise SchemaError(
                "expected query-id, corpus-id and score, separated by tabs",
                field="line",
                value=row,
                file=str(path),
                line=number,
            )
        if not re.fullmatch(r"[+-]?[0-9]{1,9}", row[2].strip()):
            raise SchemaError(
                "a score must be an integer",
                field="score",
                value=row[2],
                file=str(path),
                line=number,
            )
        rows.append((row[0], row[1], int(row[2])))
    return rows


def _beir_split(folder: Path, split: str | None) -> Path:
    qrels = folder / "qrels"
    splits = sorted(p.stem for p in qrels.glob("*.tsv") if p.is_file()) if qrels.is_dir() else []
    if not splits:
        raise SchemaError(
            "a BEIR collection has its judgments in qrels/<split>.tsv; none found",
            value=str(qrels),
            file=str(folder),
        )
    if split is None:
        split = "test" if "test" in splits else splits[0] if len(splits) == 1 else None
        if split is None:
            raise SchemaError(
                "several splits and none is 'test': choose one (--split)",
                field="split",
                value=splits,
                file=str(qrels),
            )
    if split not in splits:
        raise SchemaError(
            f"no split {split!r}: the splits are {', '.join(splits)}",
            field="split",
            value=split,
            file=str(qrels),
        )
    return qrels / f"{split}.tsv"


def _first_time(ident: str, what: str, seen: dict[str, int], path: Path, line: int) -> None:
    """Record ``ident`` at ``line``, refusing an id seen before, naming both lines."""
    if ident in seen:
        raise SchemaError(
            f"{what} {ident!r} appears twice (first at line {seen[ident]})",
            field="_id",
            value=ident,
            file=str(path),
            line=line,
        )
    seen[ident] = line


def read_beir(
    folder: Path,
    *,
    split: str | None = None,
    progress: bool = False,
) -> Parsed:
    """A BEIR collection; see the module docstring. Queries are those the split judges,
    as BEIR's loader keeps them (the others are counted in the notes)."""
    corpus, queries_file = folder / "corpus.jsonl", folder / "queries.jsonl"
    for path in (corpus, queries_file):
        if not path.is_file():
            raise SchemaError(
                f"no {path.name}: a BEIR collection has corpus.jsonl, queries.jsonl and "
                "qrels/<split>.tsv",
                has_value=False,
                file=str(path),
            )
    qrels_file = _beir_split(folder, split)
    parsed = Parsed("beir")
    seen: dict[str, int] = {}
    for line, record in _jsonl(corpus, "corpus", progress):
        ident = _id(record, ("_id", "doc_id"), corpus, line)
        _first_time(ident, "document", seen, corpus, line)
        title, text = _string(record, "title", corpus, line), _string(record, "text", corpus, line)
        extra = {
            k: _field_text(v)
            for k, v in record.items()
            if k not in {"_id", "doc_id", "title", "text"}
        }
        parsed.documents.append((ident, title, text, extra))
    parsed.qrels = _beir_qrels(qrels_file)
    judged = {q for q, _, _ in parsed.qrels}
    every: list[tuple[str, str]] = []
    flattened = 0
    known: dict[str, int] = {}
    for line, record in _jsonl(queries_file, "queries"):
        ident = _id(record, ("_id", "query_id"), queries_file, line)
        _first_time(ident, "query", known, queries_file, line)
        text = _string(record, "text", queries_file, line)
        if re.search(r"[\t\n\r]", text):
            text, flattened = one_line(text), flattened + 1
        every.append((ident, text))
    parsed.queries = [q for q in every if q[0] in judged]
    parsed.files = {
        "documents": [str(corpus)],
        "queries": [str(queries_file)],
        "judgments": [str(qrels_file)],
    }
    if len(parsed.queries) < len(every):
        parsed.notes.append(
            f"queries: the {len(parsed.queries):,} of {len(every):,} that {qrels_file.name} "
            "judges, as BEIR's loader keeps them"
        )
    if flattened:
        parsed.notes.append(f"{flattened} query text(s) held tabs or line breaks: made one line")
    names = sorted({k for d in parsed.documents for k in d[3]})
    if names:
        parsed.notes.append(
            f"documents: their other fields ({', '.join(names)}) are kept apart from the notes"
        )
    return parsed
