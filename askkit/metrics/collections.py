"""A classic test collection read, and written as a kimun vault with its queries and judgments.

:func:`read_collection` reads a folder in one of the common layouts (found
by :func:`detect_layout`, or named) into a :class:`Collection` of plain
values: :class:`Document`, :class:`Query` and :class:`Judgment`.

========  ==========================================================================
layout    files
========  ==========================================================================
smart     Cranfield's (and CISI's, MED's...): a documents file of ``.I id``
          records with ``.T`` title, ``.W`` text and other fields (``.A``
          author, ``.B`` bibliography...), a queries file of the same records
          (``.W``; its name holds ``qry``), judgments ``qid docid code``
          (Cranfield's) or TREC qrels
trec      SGML documents ``<DOC><DOCNO>..</DOCNO>..<TEXT>..</TEXT></DOC>`` in any
          number of files, topics ``<top><num>..<title>..</top>`` (the title is
          the query; ``topic_field="desc"`` takes the description) and TREC
          qrels ``qid iteration docno grade``
beir      BEIR's ``corpus.jsonl`` (``_id``, ``title``, ``text``; ir_datasets'
          ``doc_id`` too), ``queries.jsonl`` (``_id``, ``text``) and
          ``qrels/<split>.tsv`` (header ``query-id corpus-id score``); the queries
          kept are those the split judges, as BEIR's loader keeps them
askkit    a vault :func:`write_collection` wrote (read back exactly)
========  ==========================================================================

Grades. TREC and BEIR grades are read as written. Cranfield's judgment codes
are mapped (``cranfield_grades``): ``"ir_datasets"`` (the default, what
ir_datasets' users load) reads -1 "no interest" as 0, not relevant, and keeps
1 "minimum interest" to 4 "a complete answer to the question";
``"cleverdon"`` reads them in Cleverdon's original direction, where 1 is the
complete answer (1 -> 4, 2 -> 3, 3 -> 2, 4 -> 1, -1 -> 0). Either way every
judged pair is kept, so MAP (grade 1 and above relevant) is the same.

SMART ids are numbers, read without leading zeros (``cran.qry``'s ``001`` is
query ``1``). Cranfield's judgments number the queries 1..225 in file order
while their ``.I`` numbers skip: ``query_ids="auto"`` takes the ``.I``
numbers when the judgments name only those, else the file order when the
judgments fit it, and says so in :attr:`Collection.notes`.

Text. A title, a field and a query are one line (their whitespace runs made
single spaces); a document's text keeps its lines. Whatever a reader chose or
met (a repeated field, files it did not read, queries no judgment names,
judgments naming documents the collection lacks) is said in
:attr:`Collection.notes`: nothing is dropped silently.

:func:`write_collection` writes one note per document into a folder that is
new, empty or one it wrote before (see its docstring), named from the
document's id (:func:`note_path`; :func:`document_id` reads it back), then
``queries.tsv`` (:func:`~askkit.metrics.read_queries` reads it), ``qrels.tsv``
(TREC grades keyed by the notes' paths, :func:`~askkit.metrics.read_qrels`
reads it), the documents' other fields in ``fields.jsonl`` (kept out of the
notes, where kimun would index them) and ``askkit-collection.json``, the
record of what it wrote. :func:`read_collection` reads all of it back exactly.

Examples
--------
>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> collection = Collection(
...     documents=(Document("d1", "Wing lift", "Measured in a *wind* tunnel."),),
...     queries=(Query("q1", "how is lift measured"),),
...     qrels=(Judgment("q1", "d1", 2),),
... )
>>> written = write_collection(collection, folder / "vault")
>>> sorted(p.name for p in written.folder.iterdir())
['askkit-collection.json', 'd1.md', 'qrels.tsv', 'queries.tsv']
>>> print((folder / "vault" / "d1.md").read_text(), end="")
# Wing lift
<BLANKLINE>
Measured in a \\*wind\\* tunnel.
>>> read_collection(folder / "vault").documents == collection.documents
True
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from askkit.errors import SchemaError
from askkit.metrics._beir import read_beir
from askkit.metrics._layouts import AS_WRITTEN, MANIFEST, Parsed, detect
from askkit.metrics._notes import document_id, note_path, note_text
from askkit.metrics._sgml import read_trec
from askkit.metrics._smart import read_smart
from askkit.metrics._written import (
    FIELDS,
    QRELS,
    QUERIES,
    check_output,
    claim,
    put,
    read_written,
    sha256,
    write_manifest,
)

__all__ = [
    "FIELDS",
    "LAYOUTS",
    "MANIFEST",
    "QRELS",
    "QUERIES",
    "Collection",
    "Document",
    "Judgment",
    "Layout",
    "Query",
    "Written",
    "check_output",
    "detect_layout",
    "document_id",
    "note_path",
    "read_collection",
    "write_collection",
]

Layout = Literal["smart", "trec", "beir", "askkit"]
#: The layouts :func:`read_collection` reads.
LAYOUTS: tuple[str, ...] = ("smart", "trec", "beir", "askkit")


@dataclass(frozen=True, slots=True)
class Document:
    """One document: its id, title and text, and its other fields (author, ...) as text."""

    id: str
    title: str
    text: str
    fields: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Query:
    """One query: its id and its text (one line)."""

    id: str
    text: str


@dataclass(frozen=True, slots=True)
class Judgment:
    """One judged pair: the query, the document and its TREC grade (0 or less: not relevant)."""

    query_id: str
    doc_id: str
    grade: int


@dataclass(frozen=True, slots=True)
class Collection:
    """A test collection: documents, queries and judgments, and how they were read.

    ``grades`` says how the grades were read (the mapping to TREC grades);
    ``files`` the files read, by role; ``notes`` what the reader chose or met.
    """

    documents: tuple[Document, ...]
    queries: tuple[Query, ...]
    qrels: tuple[Judgment, ...]
    layout: str = "askkit"
    grades: str = AS_WRITTEN
    files: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def query_texts(self) -> dict[str, str]:
        """``{query_id: text}``, as :func:`~askkit.metrics.read_queries` gives it."""
        return {q.id: q.text for q in self.queries}

    def grade_counts(self) -> dict[int, int]:
        """How many judgments have each grade, by grade.

        >>> Collection((), (), (Judgment("1", "a", 2), Judgment("1", "b", 0))).grade_counts()
        {0: 1, 2: 1}
        """
        return dict(sorted(Counter(j.grade for j in self.qrels).items()))

    def qrels_frame(self) -> pd.DataFrame:
        """The judgments as :func:`~askkit.metrics.read_qrels` gives them, keyed by the
        notes' paths (:func:`note_path`), at note level: what ``qrels.tsv`` holds."""
        from askkit.metrics.qrels import read_qrels

        return read_qrels(
            pd.DataFrame(
                {
                    "query_id": [j.query_id for j in self.qrels],
                    "path": [note_path(j.doc_id) for j in self.qrels],
                    "heading": [""] * len(self.qrels),
                    "grade": pd.array([j.grade for j in self.qrels], dtype="int64"),
                }
            )
        )


def detect_layout(source: str | os.PathLike[str]) -> str:
    """The layout of the folder ``source`` (see the module docstring).

    Raises
    ------
    SchemaError
        ``source`` is not a folder, or holds no layout askkit reads.
    """
    return detect(_folder(source))


def _folder(source: str | os.PathLike[str]) -> Path:
    folder = Path(source)
    if not folder.is_dir():
        what = "does not exist" if not folder.exists() else "is not a folder"
        raise SchemaError(
            f"the collection {what}: give the folder holding its files",
            value=str(folder),
            file=str(folder),
        )
    return folder


def read_collection(
    source: str | os.PathLike[str],
    *,
    layout: Literal["auto", "smart", "trec", "beir", "askkit"] = "auto",
    cranfield_grades: Literal["ir_datasets", "cleverdon"] = "ir_datasets",
    query_ids: Literal["auto", "number", "order"] = "auto",
    split: str | None = None,
    topic_field: Literal["title", "desc"] = "title",
    progress: bool = False,
) -> Collection:
    """Read the test collection in the folder ``source`` (see the module docstring).

    Parameters
    ----------
    layout:
        ``"auto"`` (default): found by :func:`detect_layout`.
    cranfield_grades:
        How Cranfield's judgment codes become grades (SMART, 3-field judgments).
    query_ids:
        SMART: the queries' ``.I`` numbers (``"number"``), their order in the
        file (``"order"``), or whichever the judgments use (``"auto"``).
    split:
        BEIR: the judgments' split (``qrels/<split>.tsv``; default ``test``,
        or the only one).
    topic_field:
        TREC: the part of each topic read as its query.
    progress:
        Show a tqdm bar while reading many files or lines.

    Raises
    ------
    SchemaError
        A file that cannot be read, naming the file, line, field and value;
        a folder in no layout; a collection without documents, queries or
        judgments.
    """
    folder = _folder(source)
    if layout not in ("auto", *LAYOUTS):
        raise ValueError(f"layout must be 'auto' or one of {', '.join(LAYOUTS)}, got {layout!r}")
    chosen = detect(folder) if layout == "auto" else layout
    if chosen == "askkit":
        return _collection(read_written(folder), folder, checked=False)
    if chosen == "smart":
        parsed = read_smart(folder, grades=cranfield_grades, query_ids=query_ids)
    elif chosen == "trec":
        parsed = read_trec(folder, topic_field=topic_field, progress=progress)
    else:
        parsed = read_beir(folder, split=split, progress=progress)
    return _collection(parsed, folder)


def _collection(parsed: Parsed, folder: Path, *, checked: bool = True) -> Collection:
    """The public values of what a reader found; ``checked``: the judgments checked
    against the documents and queries, and what they lack said in the notes."""
    for what, items in (
        ("documents", parsed.documents),
        ("queries", parsed.queries),
        ("judgments", parsed.qrels),
    ):
        if not items:
            raise SchemaError(
                f"no {what} read: the files hold none",
                value=parsed.files.get("documents" if what == "documents" else what, []),
                file=str(folder),
            )
    documents = tuple(Document(i, t, x, f) for i, t, x, f in parsed.documents)
    queries = tuple(Query(i, t) for i, t in parsed.queries)
    qrels = tuple(Judgment(q, d, g) for q, d, g in parsed.qrels)
    notes = [*parsed.notes, *(_consistency(documents, queries, qrels) if checked else [])]
    return Collection(
        documents,
        queries,
        qrels,
        layout=parsed.layout,
        grades=parsed.grades,
        files={k: tuple(v) for k, v in parsed.files.items()},
        notes=tuple(notes),
    )


def _consistency(
    documents: tuple[Document, ...], queries: tuple[Query, ...], qrels: tuple[Judgment, ...]
) -> list[str]:
    """What the judgments name that the collection lacks, and the queries none judges."""
    notes = []
    empty = [d.id for d in documents if not d.title.strip() and not d.text.strip()]
    if empty:
        notes.append(
            f"{len(empty):,} document(s) have neither title nor text ({', '.join(empty[:5])}"
            f"{', ...' if len(empty) > 5 else ''}): their notes give kimun nothing to index"
        )
    docs = {d.id for d in documents}
    qids = {q.id for q in queries}
    unknown_docs = [j for j in qrels if j.doc_id not in docs]
    if unknown_docs:
        notes.append(
            f"{len(unknown_docs):,} judgment(s) name a document the collection lacks (first: "
            f"query {unknown_docs[0].query_id}, document {unknown_docs[0].doc_id}); kept: "
            "trec_eval counts them"
        )
    unknown_queries = sorted({j.query_id for j in qrels} - qids)
    if unknown_queries:
        notes.append(
            f"{len(unknown_queries):,} judged query id(s) are not among the queries (first: "
            f"{unknown_queries[0]}); their judgments are kept"
        )
    unjudged = [q.id for q in queries if q.id not in {j.query_id for j in qrels}]
    if unjudged:
        notes.append(
            f"{len(unjudged):,} quer(ies) have no judgment (first: {unjudged[0]}); trec_eval "
            "leaves them out"
        )
    return notes


# --------------------------------------------------------------------------- writing


@dataclass(frozen=True, slots=True)
class Written:
    """What :func:`write_collection` wrote: the vault folder, its notes and files, and how
    many files of an earlier write it replaced or removed."""

    folder: Path
    notes: int
    queries: Path
    qrels: Path
    fields: Path | None
    manifest: Path
    replaced: int = 0
    removed: int = 0


def _check_collection(collection: Collection) -> dict[str, str]:
    """Refuse what would not read back; the note name of each document id."""
    for what, items in (
        ("documents", collection.documents),
        ("queries", collection.queries),
        ("judgments", collection.qrels),
    ):
        if not items:
            raise SchemaError(f"a collection to write needs {what}; it has none", value=[])
    names: dict[str, str] = {}
    taken: set[str] = set()
    for i, doc in enumerate(collection.documents):
        name = _named(doc.id, f"documents[{i}].id")
        if name in taken:
            raise SchemaError(
                "two documents have this id", field=f"documents[{i}].id", value=doc.id
            )
        taken.add(name)
        names[doc.id] = name
    seen: set[str] = set()
    for i, query in enumerate(collection.queries):
        for part, value in (("id", query.id), ("text", query.text)):
            if not isinstance(value, str) or re.search(r"[\t\n\r]", value):
                raise SchemaError(
                    "a query's id and text are one line of queries.tsv: no tab, line feed or "
                    "carriage return",
                    field=f"queries[{i}].{part}",
                    value=value,
                )
        if not query.id or query.id in seen:
            raise SchemaError(
                "each query needs an id of its own", field=f"queries[{i}].id", value=query.id
            )
        seen.add(query.id)
    for i, judgment in enumerate(collection.qrels):
        if judgment.doc_id not in names:
            names[judgment.doc_id] = _named(judgment.doc_id, f"qrels[{i}].doc_id")
        if not isinstance(judgment.query_id, str) or not judgment.query_id:
            raise SchemaError(
                "a judgment needs a query id", field=f"qrels[{i}].query_id", value=judgment.query_id
            )
    return names


def _named(doc_id: str, where: str) -> str:
    try:
        return note_path(doc_id)
    except SchemaError as exc:
        raise SchemaError(exc.message, field=where, value=doc_id) from None


def _about(collection: Collection) -> dict[str, Any]:
    """What the record says of a collection besides its files."""
    return {
        "layout": collection.layout,
        "grades": collection.grades,
        "sources": {k: list(v) for k, v in collection.files.items()},
        "notes": list(collection.notes),
        "counts": {
            "documents": len(collection.documents),
            "queries": len(collection.queries),
            "judgments": len(collection.qrels),
        },
    }


def _contents(collection: Collection, names: Mapping[str, str]) -> dict[str, bytes]:
    """Every file but ``qrels.tsv``, in writing order: the notes, then the others."""
    files = {
        names[doc.id]: note_text(doc.title, doc.text).encode("utf-8")
        for doc in collection.documents
    }
    lines = "".join(f"{q.id}\t{q.text}\n" for q in collection.queries)
    files[QUERIES] = f"query_id\ttext\n{lines}".encode()
    extra = [
        json.dumps({"id": d.id, "fields": dict(d.fields)}, ensure_ascii=False) + "\n"
        for d in collection.documents
        if d.fields
    ]
    if extra:
        files[FIELDS] = "".join(extra).encode("utf-8")
    return files


def write_collection(
    collection: Collection,
    folder: str | os.PathLike[str],
    *,
    force: bool = False,
    progress: bool = False,
) -> Written:
    """Write ``collection`` as a kimun vault in ``folder``, with its queries and judgments.

    One note per document, ``<note_path(id)>``: ``# title``, a blank line, the
    text, markdown escaped so that a document cannot make a heading,
    frontmatter or a list by accident (:mod:`askkit.metrics._notes`); then
    ``queries.tsv``, ``qrels.tsv`` (keyed by the notes' paths, heading empty:
    note level), ``fields.jsonl`` (the documents' other fields, when any) and
    ``askkit-collection.json``, the record of every file written and its
    sha256, which marks the folder as askkit's.

    ``folder`` must be new, empty, or one askkit wrote (it holds that record).
    In a folder askkit wrote, its own files are replaced and the notes of
    documents no longer in the collection removed; a file askkit did not write
    is never replaced (one where a note would go is refused, even with
    ``force``) and the folder's other files stay as they are. A file askkit
    wrote and someone edited since is refused unless ``force``. The record is
    written first, naming the files about to be written, so that a write
    stopped half-way leaves a folder askkit still recognises as its own.

    ``progress``: a tqdm bar over the notes.

    Raises
    ------
    SchemaError
        The collection would not read back: no documents, queries or
        judgments, an id that makes no note name, two documents or queries
        with one id, a query with a tab or line break.
    UsageError
        ``folder`` may not be written (see above).
    """
    names = _check_collection(collection)
    target = Path(folder)
    files = _contents(collection, names)
    targets = {*files, QRELS}
    previous = claim(target, targets, force=force)
    pending: dict[str, str | None] = {
        **{n: d for n, d in previous.items() if n not in targets},
        **dict.fromkeys(sorted(targets)),
    }
    write_manifest(target, _about(collection), pending)
    present = {entry.name for entry in os.scandir(target)}
    items: Any = files.items()
    if progress and len(files) >= 100:  # fewer are written in a blink
        from tqdm.auto import tqdm

        items = tqdm(items, total=len(files), desc="writing the vault", unit="file")
    digests: dict[str, str | None] = {}
    for name, data in items:
        put(target / name, data, replace=name in present)
        digests[name] = sha256(data)
    from askkit.metrics.qrels import write_qrels

    if QRELS in present:  # askkit's own (checked): replaced, never written through a link
        (target / QRELS).unlink()
    write_qrels(collection.qrels_frame(), target / QRELS)
    digests[QRELS] = sha256((target / QRELS).read_bytes())
    stale = [n for n in previous if n not in targets and n in present]
    for name in stale:
        (target / name).unlink(missing_ok=True)
    write_manifest(target, _about(collection), digests)
    return Written(
        folder=target,
        notes=len(collection.documents),
        queries=target / QUERIES,
        qrels=target / QRELS,
        fields=target / FIELDS if FIELDS in files else None,
        manifest=target / MANIFEST,
        replaced=len(targets & set(previous) & present),
        removed=len(stale),
    )
