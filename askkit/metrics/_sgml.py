"""TREC collections: SGML documents, topics and qrels.

Documents are ``<DOC>...</DOC>`` blocks in any number of files under the
folder, each with one ``<DOCNO>``; the title is the first of ``<TITLE>``,
``<HEADLINE>``, ``<HEAD>``, ``<HL>``, the text every ``<TEXT>`` (inner tags
removed, entities decoded), every other element a field. Topics are
``<top>`` blocks with ``<num>`` (``Number:`` dropped), ``<title>``
(``Topic:`` dropped), ``<desc>`` and ``<narr>``; qrels are trec_eval's
``qid iteration docno grade``, read by :func:`askkit.metrics.read_qrels`.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Literal

from askkit.errors import SchemaError
from askkit.metrics._layouts import (
    DOC_START,
    SHOWN,
    TOPIC_START,
    Doc,
    Parsed,
    bar,
    head_of,
    line_of,
    looks_like_qrels,
    one_line,
    regular_files,
    shown,
    text_of,
)

__all__ = ["read_trec"]

_DOC = re.compile(r"<DOC>(.*?)</DOC>", re.IGNORECASE | re.DOTALL)
_DOC_OPEN = re.compile(r"<DOC>", re.IGNORECASE)
_ELEMENT = re.compile(r"<([A-Za-z][\w.-]*)(?:\s[^>]*)?>(.*?)</\1\s*>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<[^>]*>")
_TITLE_TAGS = ("title", "headline", "head", "hl")


def _sgml_text(raw: str) -> str:
    """An element's text: inner tags removed, entities decoded, lines trimmed at the end,
    no run of blank lines."""
    text = html.unescape(_TAG.sub("", raw))
    text = "\n".join(line.rstrip() for line in text.split("\n")).strip()
    return re.sub(r"\n{3,}", "\n\n", text)


def _trec_doc(body: str, path: Path, line: int, outside: list[str]) -> Doc:
    elements: dict[str, list[str]] = {}
    rest = body
    for match in _ELEMENT.finditer(body):
        elements.setdefault(match.group(1).lower(), []).append(match.group(2))
        rest = rest.replace(match.group(0), "", 1)
    docno = [one_line(_sgml_text(v)) for v in elements.pop("docno", [])]
    if len(docno) != 1 or not docno[0]:
        raise SchemaError(
            "a <DOC> needs one non-empty <DOCNO>...</DOCNO>",
            field="DOCNO",
            value=docno,
            file=str(path),
            line=line,
        )
    tag = next((t for t in _TITLE_TAGS if t in elements), None)
    title = one_line(" ".join(_sgml_text(v) for v in elements.pop(tag, []))) if tag else ""
    text = "\n\n".join(_sgml_text(v) for v in elements.pop("text", []))
    fields = {k: "\n".join(_sgml_text(v) for v in vs).strip() for k, vs in elements.items()}
    if rest.strip():
        outside.append(docno[0])
        fields["outside"] = _sgml_text(rest)
    return docno[0], title, text, fields


def _outside_doc(text: str, at: int, path: Path) -> SchemaError:
    """The error for text at ``at`` outside every ``<DOC>...</DOC>``, naming its line."""
    return SchemaError(
        "text outside a <DOC>...</DOC> (or a <DOC> never closed)",
        field="DOC",
        value=shown(text[at : at + SHOWN].strip()),
        file=str(path),
        line=line_of(text, at),
    )


def _trec_documents(path: Path, seen: dict[str, str], outside: list[str]) -> list[Doc]:
    text = text_of(path, "TREC documents")
    documents: list[Doc] = []
    end = 0
    for match in _DOC.finditer(text):
        stray = _DOC_OPEN.search(text, end, match.start())
        if stray or text[end : match.start()].strip():
            at = stray.start() if stray else end + len(text[end:]) - len(text[end:].lstrip())
            raise _outside_doc(text, at, path)
        line = line_of(text, match.start())
        doc = _trec_doc(match.group(1), path, line, outside)
        if doc[0] in seen:
            raise SchemaError(
                f"the DOCNO {doc[0]!r} appears twice (first in {seen[doc[0]]})",
                field="DOCNO",
                value=doc[0],
                file=str(path),
                line=line,
            )
        seen[doc[0]] = f"{path}:{line}"
        documents.append(doc)
        end = match.end()
    if text[end:].strip():
        raise _outside_doc(text, end + len(text[end:]) - len(text[end:].lstrip()), path)
    return documents


_TOPIC_BLOCK = re.compile(r"<top>(.*?)</top>", re.IGNORECASE | re.DOTALL)
_TOPIC_FIELD = re.compile(r"<(num|title|desc|narr)>", re.IGNORECASE)
_TOPIC_PREFIX = {
    "num": r"number:",
    "title": r"topic:",
    "desc": r"description:",
    "narr": r"narrative:",
}


def _topics(path: Path, topic_field: str, seen: dict[str, str]) -> list[tuple[str, str]]:
    text = text_of(path, "TREC topics")
    topics: list[tuple[str, str]] = []
    for block in _TOPIC_BLOCK.finditer(text):
        line = line_of(text, block.start())
        body = block.group(1)
        marks = list(_TOPIC_FIELD.finditer(body))
        parts: dict[str, str] = {}
        for i, mark in enumerate(marks):
            stop = marks[i + 1].start() if i + 1 < len(marks) else len(body)
            name = mark.group(1).lower()
            value = one_line(_sgml_text(body[mark.end() : stop]))
            parts[name] = re.sub(rf"^{_TOPIC_PREFIX[name]}\s*", "", value, flags=re.IGNORECASE)
        num = parts.get("num", "")
        if not num:
            raise SchemaError(
                "a <top> needs a <num>", field="num", value=shown(body), file=str(path), line=line
            )
        if num in seen:
            raise SchemaError(
                f"topic {num} appears twice (first in {seen[num]})",
                field="num",
                value=num,
                file=str(path),
                line=line,
            )
        seen[num] = f"{path}:{line}"
        if not parts.get(topic_field):
            raise SchemaError(
                f"topic {num} has no <{topic_field}> text, which is read as its query",
                field=topic_field,
                value=parts.get(topic_field),
                file=str(path),
                line=line,
            )
        topics.append((num, parts[topic_field]))
    if not topics:
        raise SchemaError("no <top>...</top> topic in the file", has_value=False, file=str(path))
    return topics


def read_trec(
    folder: Path,
    *,
    topic_field: Literal["title", "desc"] = "title",
    progress: bool = False,
) -> Parsed:
    """A TREC collection: SGML documents, topics and qrels; see the module docstring."""
    from askkit.metrics.qrels import read_qrels

    files, skipped = regular_files(folder, recursive=True)
    docs, topics, qrels = [], [], []
    other = list(skipped)
    for path in files:
        head = head_of(path)
        if DOC_START.match(head):
            docs.append(path)
        elif TOPIC_START.search(head):
            topics.append(path)
        elif looks_like_qrels(head, (4,)):
            qrels.append(path)
        else:
            other.append(str(path.relative_to(folder)))
    for role, found in (("documents", docs), ("topics", topics), ("judgments", qrels)):
        if not found:
            raise SchemaError(
                f"no {role} file found: a TREC collection has <DOC> files, a topics file of "
                "<top> entries and a qrels file (qid iteration docno grade)",
                value=sorted(str(p.relative_to(folder)) for p in files)[:20],
                file=str(folder),
            )
    parsed = Parsed("trec")
    seen: dict[str, str] = {}
    outside: list[str] = []
    for path in bar(docs, len(docs), "reading documents", "file", progress, least=10):
        parsed.documents += _trec_documents(path, seen, outside)
    numbers: dict[str, str] = {}
    for path in topics:
        parsed.queries += _topics(path, topic_field, numbers)
    for path in qrels:
        frame = read_qrels(path, format="trec")
        parsed.qrels += list(
            zip(
                frame["query_id"].tolist(),
                frame["doc"].tolist(),
                [int(g) for g in frame["grade"].tolist()],
                strict=True,
            )
        )
    parsed.files = {
        "documents": [str(p) for p in docs],
        "queries": [str(p) for p in topics],
        "judgments": [str(p) for p in qrels],
    }
    named = {"title": "<title>", "desc": "<desc>"}[topic_field]
    parsed.notes.append(f"queries: each topic's {named}, its other parts not used")
    extra = sorted({k for d in parsed.documents for k in d[3]})
    parsed.notes.append(
        "documents: the title is the first of <TITLE>, <HEADLINE>, <HEAD>, <HL>; the text "
        "every <TEXT>"
        + (
            f"; the other elements ({', '.join(extra)}) are kept apart from the notes"
            if extra
            else ""
        )
    )
    if outside:
        parsed.notes.append(
            f"{len(outside)} document(s) hold text outside any element (first: "
            f"{outside[0]}), kept apart as the field 'outside'"
        )
    if other:
        parsed.notes.append(f"not read (not part of the layout): {', '.join(other[:10])}")
    return parsed
