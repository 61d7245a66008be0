"""The Labeler's judgments file: a qrels TSV through :mod:`askkit.metrics`.

The format is the one :func:`askkit.metrics.read_qrels` and
:func:`askkit.metrics.write_qrels` read and write (``data/qrels.tsv``)::

    query_id<TAB>path<TAB>heading<TAB>grade

``heading`` is the source's innermost heading (may be empty), ``grade`` an
integer 0-3. A field holding a tab, line break or quote is quoted, so any
heading reads back as written. ``write_qrels`` writes atomically (a temporary
file in the same folder, then a rename, via :mod:`askkit._atomic`), so a
reader, or a writer killed mid-write, never leaves a half-written file.

Each judgment's question is recorded beside the file, in a queries TSV
(:func:`questions_path`: ``my-qrels.tsv`` -> ``my-qrels.queries.tsv``)::

    query_id<TAB>question

so the judgments can be used later (``askkit cut --queries``,
``LocalIndex.pools``). A question asked in the Explorer, when the user's own
queries TSV does not hold it, gets the id :func:`question_id` derives from its
text: stable across sessions and machines. :func:`update_judgments` adds the
questions to that file (atomically, under the judgments file's lock, before the
judgments, so no judgment is ever written without its question); a line
already there is never changed.

Saving never loses what the user wrote: every row and every column of the
file is kept (a ``notes`` column, a key judged twice, the columns' order);
only grades change, and new keys are added at the end. A key's grade is the
one :func:`askkit.metrics.evaluate` uses at section level: the highest of
the rows naming its document (``path#heading``) for its query. So a regrade
sets the grade of every such row.

:func:`update_judgments` re-reads the file, merges new grades and writes it
back while holding the file's lock (:func:`askkit._atomic.locked`, a
``flock`` on ``.<name>.lock`` beside it): Labelers in several processes
writing one file take turns, and none loses another's judgments.
:func:`save_judgments` takes the same lock. A file that is malformed, or is
not a regular file (a folder, a FIFO, a device), raises
:class:`~askkit.SchemaError` and is never written.
"""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from askkit._atomic import atomic_write_text, locked
from askkit._files import read_input
from askkit.errors import SchemaError
from askkit.frame.schema import STRING
from askkit.metrics import read_qrels, write_qrels
from askkit.metrics.ids import qrels_doc_ids
from askkit.metrics.queries import read_queries
from askkit.sources import AskSource, VaultPath

__all__ = [
    "GRADES",
    "Key",
    "judgment_key",
    "load_judgments",
    "load_questions",
    "question_id",
    "question_key",
    "question_text",
    "questions_path",
    "record_questions",
    "save_judgments",
    "update_judgments",
]

#: The grades a judgment may take.
GRADES = (0, 1, 2, 3)
Key = tuple[str, str, str]
_KEY = ["query_id", "path", "heading"]


_QUESTIONS_HEADER = "query_id\tquestion\n"
_TEXT_COLUMNS = ("text", "question", "query")
_SLUG_CHARS = 40


def question_text(question: str) -> str:
    """A question as it is recorded: NFC, every run of whitespace (tabs and line breaks
    included) one space, no space at either end; a TSV field as it stands.

    >>> question_text("  embed a\\tnote\\n")
    'embed a note'
    """
    return " ".join(unicodedata.normalize("NFC", question).split())


def question_key(question: str) -> str:
    """What two questions share when they are the same question: :func:`question_text`,
    case folded (``Embed a note`` and ``embed  a note`` are one question).

    >>> question_key("Embed  a Note") == question_key("embed a note")
    True
    """
    return question_text(question).casefold()


def question_id(question: str) -> str:
    """The query id askkit gives a question no queries file names: stable, readable.

    The rule: take :func:`question_key` (NFC, whitespace collapsed, case folded);
    the id is a slug of its ASCII letters and digits (accents dropped, words joined
    by ``-``, cut after whole words to at most 40 characters), a ``-``, and the
    first 8 hex digits of the SHA-256 of the key's UTF-8 bytes. A question with no
    ASCII letter or digit is ``q-`` and the digits. The same words give the same id
    in any session, on any machine; another question gives another id (the digits
    tell apart two questions whose slugs agree).

    >>> question_id("How often should I feed the sourdough starter?")
    'how-often-should-i-feed-the-sourdough-6b4244e4'
    >>> question_id("How often should I feed the  sourdough starter?") == question_id(
    ...     "how often should i feed the sourdough starter?")
    True
    >>> question_id("日本語")
    'q-77710aed'
    """
    key = question_key(question)
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:8]
    folded = unicodedata.normalize("NFKD", key).encode("ascii", "ignore").decode("ascii")
    slug = ""
    for word in re.findall(r"[a-z0-9]+", folded):
        longer = f"{slug}-{word}" if slug else word
        if len(longer) > _SLUG_CHARS:
            break
        slug = longer
    return f"{slug or 'q'}-{digest}"


def questions_path(qrels: str | os.PathLike[str]) -> Path:
    """The queries TSV beside a judgments file: its name without the suffix, then
    ``.queries.tsv``.

    >>> questions_path("data/my-qrels.tsv").as_posix()
    'data/my-qrels.queries.tsv'
    """
    path = Path(qrels)
    return path.with_name(f"{path.stem}.queries.tsv")


def _questions_file(path: Path) -> tuple[str, list[str], dict[str, str]]:
    """The file's text, header columns and ``{query_id: question}`` (empty when absent,
    blank or a header alone). A file that is not a queries TSV raises SchemaError."""
    if not os.path.lexists(path):
        return "", [], {}
    text = read_input(path, what="queries").decode("utf-8", errors="strict")
    if not text.strip():
        return "", [], {}
    header = text.split("\n", 1)[0].rstrip("\r").split("\t")
    if "query_id" not in header or not any(c in header for c in _TEXT_COLUMNS):
        raise SchemaError(
            "not a queries TSV: the header needs query_id and question columns; "
            "it is never overwritten",
            field="columns",
            value=header,
            file=str(path),
        )
    body = [line for line in text.splitlines()[1:] if line.strip()]
    return text, header, read_queries(path) if body else {}


def load_questions(path: str | os.PathLike[str]) -> dict[str, str]:
    """``{query_id: question}`` of a queries TSV; ``{}`` when it is absent, blank or a
    header alone. A file that is not a queries TSV raises :class:`~askkit.SchemaError`."""
    return _questions_file(Path(path))[2]


def record_questions(path: str | os.PathLike[str], questions: Mapping[str, str]) -> bool:
    """Add ``{query_id: question}`` to the queries TSV ``path``, atomically; an id the
    file holds already keeps its line. Returns whether the file was written.

    The caller holds the lock (:func:`update_judgments` does). The file is created
    with a ``query_id<TAB>question`` header; an existing file keeps every byte and
    gets a line per new id, its fields in the header's order. A question is
    recorded as :func:`question_text`: one line, no tab.
    """
    target = Path(path)
    text, header, known = _questions_file(target)
    new = {qid: question_text(q) for qid, q in questions.items() if qid not in known}
    if not new:
        return False
    if not header:
        text, header = _QUESTIONS_HEADER, ["query_id", "question"]
    column = next(c for c in _TEXT_COLUMNS if c in header)
    for field in (*new, *new.values()):
        if "\t" in field or "\n" in field or "\r" in field:
            raise SchemaError(
                "a query id or question cannot hold a tab or a line break", value=field
            )
    lines = [
        "\t".join(qid if c == "query_id" else q if c == column else "" for c in header)
        for qid, q in new.items()
    ]
    lead = text if text.endswith("\n") else text + "\n"
    atomic_write_text(target, lead + "\n".join(lines) + "\n")
    return True


def judgment_key(query_id: str, source: AskSource) -> Key:
    """The qrels key of a source: query id, path as the qrels file prints it, innermost heading."""
    return (query_id, str(VaultPath(str(source.path))), source.innermost_heading)


def load_judgments(path: str | os.PathLike[str]) -> dict[Key, int]:
    """``{(query_id, path, heading): grade}`` in file order, each key's grade the one
    :func:`askkit.metrics.evaluate` uses (the highest of the rows naming its section);
    ``{}`` when the file is absent or empty. A malformed file, or one that is not a
    regular file, raises :class:`~askkit.SchemaError` (it is never overwritten)."""
    return _judgments(_read(path))


def save_judgments(path: str | os.PathLike[str], judgments: Mapping[Key, int]) -> None:
    """Replace the judgments in ``path`` with ``judgments``, atomically, in their order.

    A key already in the file keeps its rows and their other columns (with the
    new grade); a key not in ``judgments`` leaves the file. A field that cannot
    be written (not valid Unicode text) raises :class:`~askkit.SchemaError`
    naming it; the file is then left as it was.
    """
    _check_grades(judgments)
    with locked(path):
        frame = _read(path)
        given = _changes(judgments)
        position = _positions(frame, given)
        kept = frame[position >= 0]
        frame = _with_new_keys(_regraded(kept, given), given)
        order = np.concatenate([position[position >= 0], _absent(kept, given)])
        write_qrels(frame.iloc[np.argsort(order, kind="stable")], path, format="tsv")


def update_judgments(
    path: str | os.PathLike[str],
    changes: Mapping[Key, int],
    questions: Mapping[str, str] | None = None,
) -> dict[Key, int]:
    """Merge ``changes`` into the judgments file and return the file's judgments.

    The file is read again, ``changes`` merged in (a regrade replaces the grade
    of every row naming that section, in place, other columns kept; a new key is
    added at the end) and the result written atomically, all under the file's
    lock: concurrent updates from other processes take turns, so every
    judgment an update returns is in the file. A malformed file raises
    :class:`~askkit.SchemaError` and is never overwritten. ``questions``
    (``{query_id: question}``) are first recorded in :func:`questions_path`
    (:func:`record_questions`), under the same lock.
    """
    _check_grades(changes)
    with locked(path):
        given = _changes(changes)
        frame = _with_new_keys(_regraded(_read(path), given), given)
        if questions:
            record_questions(questions_path(path), questions)
        write_qrels(frame, path, format="tsv")
    return _judgments(frame)


def _check_grades(judgments: Mapping[Key, int]) -> None:
    bad = {k: g for k, g in judgments.items() if g not in GRADES}
    if bad:
        raise ValueError(f"grades must be 0-3, got {bad}")


def _read(path: str | os.PathLike[str]) -> pd.DataFrame:
    """The file's every row and column (the one input rule: a regular file)."""
    if not os.path.lexists(path):
        return read_qrels(pd.DataFrame({c: [] for c in [*_KEY, "grade"]}))
    return read_qrels(Path(path), format="tsv", extra_columns=True)


def _changes(judgments: Mapping[Key, int]) -> pd.DataFrame:
    keys = list(judgments)
    # object columns: a value that is not valid text is named by read_qrels'
    # SchemaError instead of failing in pandas' Arrow conversion
    return read_qrels(
        pd.DataFrame(
            {
                "query_id": pd.Series([k[0] for k in keys], dtype=object),
                "path": pd.Series([k[1] for k in keys], dtype=object),
                "heading": pd.Series([k[2] for k in keys], dtype=object),
                "grade": pd.Series([judgments[k] for k in keys], dtype="int64"),
            }
        )
    )


def _index(frame: pd.DataFrame, columns: list[str]) -> pd.MultiIndex:
    return pd.MultiIndex.from_arrays([frame[c].to_numpy(dtype=object) for c in columns])


def _documents(frame: pd.DataFrame) -> pd.MultiIndex:
    """(query, section id) of each row: what evaluate grades at section level."""
    doc = qrels_doc_ids(frame, "section").to_numpy(dtype=object)
    return pd.MultiIndex.from_arrays([frame["query_id"].to_numpy(dtype=object), doc])


def _positions(frame: pd.DataFrame, given: pd.DataFrame) -> np.ndarray:
    """Each row's key's position in ``given``, -1 when ``given`` has no such key."""
    return np.asarray(_index(given, _KEY).get_indexer(_index(frame, _KEY)), dtype=np.int64)


def _absent(frame: pd.DataFrame, given: pd.DataFrame) -> np.ndarray:
    """Positions in ``given`` of the keys ``frame`` has no row for."""
    return np.flatnonzero(~_index(given, _KEY).isin(_index(frame, _KEY)))


def _regraded(frame: pd.DataFrame, given: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with the grade of every row naming a section of ``given`` replaced
    (the last of ``given``'s grades for it)."""
    last = ~_documents(given).duplicated(keep="last")
    at = _documents(given)[last].get_indexer(_documents(frame))
    if not (at >= 0).any():
        return frame
    grade = frame["grade"].to_numpy(dtype=np.int64).copy()
    grade[at >= 0] = given["grade"].to_numpy(dtype=np.int64)[last][at[at >= 0]]
    return frame.assign(grade=grade)


def _with_new_keys(frame: pd.DataFrame, given: pd.DataFrame) -> pd.DataFrame:
    """``frame`` and a row for each key of ``given`` it has no row for, at the end;
    their other columns empty (``doc``: the section id, as evaluate reads it)."""
    new = given.iloc[_absent(frame, given)]
    if new.empty:
        return frame
    rows = {
        name: new[name].to_numpy() if name in new.columns else np.full(len(new), "", dtype=object)
        for name in frame.columns
    }
    if "doc" in frame.columns:
        rows["doc"] = qrels_doc_ids(new, "section").to_numpy(dtype=object)
    added = pd.DataFrame(rows, columns=frame.columns)
    text = [c for c in frame.columns if c != "grade"]
    added = added.astype(dict.fromkeys(text, STRING))
    return pd.concat([frame, added], ignore_index=True)


def _judgments(frame: pd.DataFrame) -> dict[Key, int]:
    """``{key: grade}`` in file order, each key's grade the highest of its section's."""
    documents = _documents(frame)
    codes = pd.factorize(documents)[0]
    best = pd.Series(frame["grade"].to_numpy(dtype=np.int64)).groupby(codes).transform("max")
    keys = zip(*(frame[c].astype(str).tolist() for c in _KEY), strict=True)
    return dict(zip(keys, best.astype(int).tolist(), strict=True))
