"""Runs on disk: TREC run files (``qid Q0 docid rank score tag``) read and written.

:func:`read_trec_run` reads a TREC run as columns (pyarrow's CSV reader, or
pyarrow.compute for a messy file) into a frame :func:`askkit.metrics.evaluate`
takes; :func:`read_run` is the same with askkit's defaults; :func:`write_run`
writes a sources frame as a TREC run, ranked and de-duplicated as
:func:`askkit.metrics.evaluate` scores it. Ids are written and read as
:mod:`askkit.metrics.qrels` says.

:func:`load_run` is the one reader of a run file that every command uses
(``eval``, ``diff``, ``report``): a JSONL turn log or JSON payload
(:func:`askkit.frame.sources_frame`) or a TREC run (:func:`read_trec_run`),
told apart by :func:`run_kind`. :func:`check_scorable` refuses inputs that
would score nothing (an empty run or qrels, or ids that never meet), naming
the file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal, overload

import numpy as np
import pandas as pd
import pyarrow as pa

from askkit._atomic import atomic_write_text
from askkit._files import open_input
from askkit.errors import SchemaError, UsageError
from askkit.frame.load import Loaded
from askkit.frame.schema import STRING
from askkit.metrics._trec import (
    INTEGER,
    NUMBER,
    Table,
    bad_rows,
    decode_id,
    errors_frame,
    numbers,
    pd_strings,
    read_table,
    trec_columns,
)
from askkit.metrics.coverage import no_match_sentence
from askkit.metrics.evaluate import ranked_run
from askkit.metrics.ids import Ids, Level, check_ids, vault_ids
from askkit.metrics.ranked import Ties

__all__ = [
    "RunKind",
    "check_scorable",
    "decoded_if_encoded",
    "is_turn_log",
    "load_run",
    "load_turn_log",
    "read_run",
    "read_trec_run",
    "run_kind",
    "write_run",
]

#: What a run file is: a turn log (JSONL or a JSON payload) or a TREC run.
RunKind = Literal["turn log", "TREC run"]


@overload
def read_trec_run(
    source: str | os.PathLike[str],
    *,
    ids: Ids = ...,
    strict: Literal[True] = ...,
    decode: bool = ...,
) -> pd.DataFrame: ...
@overload
def read_trec_run(
    source: str | os.PathLike[str], *, ids: Ids = ..., strict: Literal[False], decode: bool = ...
) -> Loaded: ...
def read_trec_run(
    source: str | os.PathLike[str], *, ids: Ids = "exact", strict: bool = True, decode: bool = False
) -> pd.DataFrame | Loaded:
    """Read a TREC run (``qid Q0 docid rank score tag``) as a run frame for ``evaluate``.

    Columns: ``turn_id``, ``doc`` (exact, or printed as a vault path with
    ``ids="vault"``), ``rank`` (int64), ``score`` (float64), ``tag``.
    :func:`askkit.metrics.evaluate` takes it as it takes a sources frame (the
    ``doc`` column is the document id at any level). As trec_eval reads runs:
    fields after the tag are ignored, a line whose first field starts with
    ``#`` is a comment, blank lines are skipped. A line with fewer than six
    fields, a score that is not a finite number or a rank that is not an
    integer raises :class:`SchemaError` naming the file, line, field and the
    value as written (``strict=False``: the line is left out and reported, see
    :func:`~askkit.metrics.read_qrels`). A score of ``nan``, ``inf``, ``-inf``
    or one beyond the float range (``1e999``) is refused: trec_eval reads it
    (``atof``) but gives a NaN no defined rank. Ids are kept
    as written; ``decode=True`` decodes them (:func:`~askkit.metrics.ids.decode_id`), for a run
    askkit wrote from ids holding whitespace (see :mod:`askkit.metrics.qrels`). A
    folder, a FIFO or a device raises :class:`SchemaError` naming it.
    """
    check_ids(ids)
    path = Path(source)
    names = ("turn_id", "q0", "doc", "rank", "score", "tag")
    table = read_table(
        path,
        names,
        what="run",
        extra=True,
        comments=True,
        strict=strict,
        numbers={"rank": pa.int64(), "score": pa.float64()},
    )
    cols = table.columns
    score, rank = numbers(cols["score"], pa.float64()), numbers(cols["rank"], pa.int64())
    if score is None or rank is None or not bool(np.isfinite(score).all()):
        table, score, rank = _checked_numbers(table, str(path), strict=strict)
        cols = table.columns
    doc = pd.Series(pd_strings(cols["doc"]))
    turn_id = pd.Series(pd_strings(cols["turn_id"]))
    if decode:
        doc, turn_id = decode_id(doc), decode_id(turn_id)
    frame = pd.DataFrame(
        {
            "turn_id": turn_id.array,
            "doc": vault_ids(doc).array if ids == "vault" and len(doc) else doc.array,
            "rank": rank,
            "score": score,
            "tag": pd_strings(cols["tag"]),
        },
        copy=False,
    )
    if strict:
        return frame
    return Loaded(frame, errors_frame(table.errors), table.records)


#: Why a TREC run's score must be finite, and what to do about one that is not.
_NOT_FINITE = (
    "score must be a finite number (trec_eval gives a NaN score no defined rank; a value "
    "beyond ±1.8e308 reads as infinite); fix the scorer that wrote the run, or skip such "
    "lines (strict=False, askkit eval --lenient)"
)


def _checked_numbers(
    table: Table, file: str, *, strict: bool
) -> tuple[Table, np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """The lines whose score is a finite number and rank an integer, with both parsed.

    Any other line raises :class:`SchemaError` naming the file, line, field and
    the field as written (strict), or is left out and reported (lenient).
    ``table``'s ``score`` and ``rank`` columns are text (the general path's).
    """
    cols = table.columns
    score_text = pd.Series(pd_strings(cols["score"]))
    rank_text = pd.Series(pd_strings(cols["rank"]))
    bad_score = bad_rows(score_text, NUMBER)
    bad_rank = bad_rows(rank_text, INTEGER)
    score = np.full(len(score_text), np.nan)
    parsed = numbers(pa.array(score_text[~bad_score].array), pa.float64())
    if parsed is not None:  # NUMBER's syntax is pyarrow's: it always parses
        score[~bad_score] = parsed
    not_finite = ~bad_score & ~np.isfinite(score)  # nan, inf, and 1e999 (read as inf)
    bad_score |= not_finite
    errors: list[SchemaError] = []
    for i in np.flatnonzero(bad_score | bad_rank).tolist():
        name = "score" if bad_score[i] else "rank"
        message = (
            _NOT_FINITE
            if not_finite[i]
            else f"{name} must be {'a number' if name == 'score' else 'an integer'}"
        )
        error = SchemaError(
            message,
            field=name,
            value=(score_text if name == "score" else rank_text).iloc[i],
            file=file,
            line=int(table.line[i]),
        )
        if strict:
            raise error
        errors.append(error)
    good = ~(bad_score | bad_rank)
    table = table.keep(good, errors)
    rank = np.array([int(x) for x in table.columns["rank"].to_pylist()], dtype=np.int64)
    return table, score[good], rank


def is_turn_log(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a JSON payload or JSONL turn log rather than a TREC run:
    a ``.json``/``.jsonl``/``.ndjson`` name, or a first non-blank byte ``{`` or ``[``.

    A file that cannot be opened is not one (its reader names the file and the reason).
    """
    path = Path(path)
    if path.suffix.lower() in (".json", ".jsonl", ".ndjson"):
        return True
    try:
        with open_input(path, what="run") as handle:
            head = handle.read(4096).lstrip()
    except (SchemaError, OSError):
        return False
    return head[:1] in (b"{", b"[")


def write_run(
    run: pd.DataFrame,
    path: str | Any,
    *,
    level: Level = "note",
    ties: Ties = "trec",
    tag: str = "askkit",
) -> None:
    """Write a sources frame as a TREC run (``qid Q0 docid rank score tag``), atomically.

    Documents are de-duplicated and ranked as :func:`~askkit.metrics.evaluate`
    does (:func:`~askkit.metrics.ranked_run`): each line holds one (query, document) with its own
    rank and score, queries in sorted order, best first. Scores are written
    with every digit (``repr``), so they read back as the same floats. Ids are
    written as :mod:`askkit.metrics.qrels` says: as they are, or percent-encoded
    when they hold whitespace (:func:`askkit.metrics.ids.trec_id`), and
    ``read_run(path, decode=True)`` reads those back exactly. A run that would
    not read back as written (a query id starting with ``#``, an empty id, two
    ids one written form would merge, a value that is not text, a score that is
    NaN, missing or infinite) raises :class:`SchemaError` naming the query and
    document, and nothing is written. Other columns of ``run`` have
    no place in a TREC run and are not written.

    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "run.trec"
    >>> write_run(pd.DataFrame({"turn_id": "q1", "path": ["a.md", "b.md"],
    ...                         "score": [1.0, 4.0]}), target)
    >>> print(target.read_text(), end="")
    q1 Q0 b.md 1 4.0 askkit
    q1 Q0 a.md 2 1.0 askkit
    """
    if not isinstance(tag, str) or not tag or any(c.isspace() for c in tag):
        raise ValueError(f"a run tag must be one word, got {tag!r}")
    ranked = ranked_run(run, level=level, ties=ties)
    # positions, not labels: ranked_run's index holds the run's own row labels
    written = trec_columns(
        {"query_id": ranked["query_id"], "doc": ranked["doc"]}, what="run", rows=False
    )
    values = ranked["score"].to_numpy(dtype=np.float64)
    _check_finite(values, ranked)
    rank = ranked["rank"].to_numpy(dtype=np.int64).astype(str).astype(object)
    score = values.astype(str).astype(object)  # repr
    lines = (
        written["query_id"].to_numpy(dtype=object)
        + " Q0 "
        + written["doc"].to_numpy(dtype=object)
        + " "
        + rank
        + " "
        + score
        + f" {tag}"
    )
    atomic_write_text(path, "".join(f"{line}\n" for line in lines.tolist()))


def _check_finite(score: np.ndarray[Any, Any], ranked: pd.DataFrame) -> None:
    """Refuse a run with a NaN (or missing) or infinite score, naming its first such
    line's query and document: :func:`read_trec_run` would refuse the file."""
    bad = ~np.isfinite(score)
    if not bad.any():
        return
    i = int(np.argmax(bad))
    raise SchemaError(
        f"query {ranked['query_id'].iloc[i]!r}, document {ranked['doc'].iloc[i]!r}: a TREC "
        "run's score must be a finite number (trec_eval gives a NaN score no defined rank, "
        "and read_run refuses a score that is not finite); give the document a finite "
        "score or leave it out",
        field="score",
        value=float(score[i]),
    )


@overload
def read_run(
    path: str | Any, *, ids: Ids = ..., strict: Literal[True] = ..., decode: bool = ...
) -> pd.DataFrame: ...
@overload
def read_run(
    path: str | Any, *, ids: Ids = ..., strict: Literal[False], decode: bool = ...
) -> Loaded: ...
def read_run(
    path: str | Any, *, ids: Ids = "exact", strict: bool = True, decode: bool = False
) -> pd.DataFrame | Loaded:
    """Read a TREC run file as a frame :func:`~askkit.metrics.evaluate` takes (see
    :func:`read_trec_run`).

    ``decode=True`` reads back exactly the ids of a run :func:`write_run` wrote
    from ids holding whitespace (section ids); the default keeps ids as written.
    """
    if strict:
        return read_trec_run(path, ids=ids, decode=decode)
    return read_trec_run(path, ids=ids, strict=False, decode=decode)


def run_kind(path: str | os.PathLike[str]) -> RunKind:
    """What the run file ``path`` is: ``"turn log"`` (a JSONL turn log or a JSON
    payload, :func:`is_turn_log`) or ``"TREC run"`` (anything else).

    >>> run_kind("data/run.jsonl")
    'turn log'
    """
    return "turn log" if is_turn_log(path) else "TREC run"


@overload
def load_run(
    path: str | os.PathLike[str], *, ids: Ids = ..., strict: Literal[True] = ...
) -> pd.DataFrame: ...
@overload
def load_run(path: str | os.PathLike[str], *, ids: Ids = ..., strict: Literal[False]) -> Loaded: ...
def load_run(
    path: str | os.PathLike[str], *, ids: Ids = "exact", strict: bool = True
) -> pd.DataFrame | Loaded:
    """Read a run file in any format askkit reads: the one reader of every command.

    A JSONL turn log or a JSON payload (:func:`run_kind`) is read by
    :func:`askkit.frame.sources_frame` into a sources frame (questions,
    answers, citations and texts; its paths are as kimun prints them, so
    ``ids`` does not apply); anything else is a TREC run, read by
    :func:`read_trec_run` with ``ids`` into a run frame (``turn_id``, ``doc``,
    ``rank``, ``score``, ``tag``). :func:`askkit.metrics.evaluate` scores
    either. Errors name the file (and the line). ``strict=False`` returns
    :class:`~askkit.frame.Loaded`: the good records and the ones left out.

    >>> frame = load_run("data/run.jsonl")
    >>> frame["turn_id"].nunique(), "question" in frame.columns
    (37, True)
    """
    from askkit.frame import sources_frame

    check_ids(ids)
    source = Path(path)
    if run_kind(source) == "TREC run":
        if strict:
            return read_trec_run(source, ids=ids)
        return read_trec_run(source, ids=ids, strict=False)
    try:
        return sources_frame(source) if strict else sources_frame(source, strict=False)
    except SchemaError as exc:  # a turn log's frame knows lines, not always its file
        if exc.file is None:
            raise exc.located(file=str(source)) from None
        raise


@overload
def load_turn_log(
    path: str | os.PathLike[str], *, needs: str, strict: Literal[True] = ...
) -> pd.DataFrame: ...
@overload
def load_turn_log(
    path: str | os.PathLike[str], *, needs: str, strict: Literal[False]
) -> Loaded: ...
def load_turn_log(
    path: str | os.PathLike[str], *, needs: str, strict: bool = True
) -> pd.DataFrame | Loaded:
    """Read a run that must be a turn log, for work that replays what a TREC run does
    not hold (each turn's chunks, context and citations: ``askkit cut``, ``askkit why``).

    A TREC run (:func:`run_kind`) raises :class:`SchemaError` naming the file and
    ``needs`` (what the caller needs the log for), never a JSON syntax error;
    a turn log is read as :func:`load_run` reads it.

    >>> try:
    ...     load_turn_log("data/qrels.tsv", needs="the context cut replays each turn's chunks")
    ... except SchemaError as exc:
    ...     print(str(exc)[:59])
    data/qrels.tsv: a TREC run holds ranked documents only, but
    """
    if run_kind(path) == "TREC run":
        raise SchemaError(
            f"a TREC run holds ranked documents only, but {needs}: give a turn log (JSONL "
            "or a JSON payload) of the same questions",
            file=str(path),
            has_value=False,
        )
    if strict:
        return load_run(path)
    return load_run(path, strict=False)


def _no_rows(file: object, what: str, why: str) -> SchemaError:
    """The error for an input with no rows: naming its file when it has one."""
    if file is None:
        return SchemaError(f"the {what} {why}", has_value=False)
    return SchemaError(why, file=str(file), has_value=False)


def check_scorable(
    run: pd.DataFrame,
    qrels: pd.DataFrame | None,
    *,
    run_file: object = None,
    qrels_file: object = None,
    shared: bool = True,
) -> None:
    """Refuse a run and judgments that would score nothing, saying what is empty.

    Raises :class:`SchemaError` naming the file when ``qrels`` holds no
    judgment ("holds no judgments") or ``run`` no ranked document ("holds no
    ranked documents"; ``qrels=None`` checks the run alone); with ``shared``,
    :class:`~askkit.errors.UsageError` when no query id of the run is a judged
    query id, naming three ids of each and the likely cause
    (:func:`askkit.metrics.coverage.no_match_sentence`).
    A run whose queries are judged but whose documents are not is scorable
    (every measure is 0, and :func:`askkit.metrics.coverage` says why).

    >>> qrels = pd.DataFrame({"query_id": ["q1"], "path": ["a.md"], "grade": [1]})
    >>> check_scorable(pd.DataFrame({"turn_id": ["q1"], "doc": ["b.md"]}), qrels)
    >>> try:
    ...     check_scorable(pd.DataFrame({"turn_id": [], "doc": []}), qrels, run_file="r.trec")
    ... except SchemaError as exc:
    ...     print(exc)
    r.trec: holds no ranked documents (no line names a query and a document)
    """
    if qrels is not None and not len(qrels):
        raise _no_rows(
            qrels_file,
            "qrels",
            "holds no judgments (no line names a query, a document and a grade); give the "
            "judgments of the run's queries",
        )
    if not len(run):
        why = (
            "no turn with a source"
            if "question" in run.columns
            else "no line names a query and a document"
        )
        raise _no_rows(run_file, "run", f"holds no ranked documents ({why})")
    if qrels is None or not shared:
        return
    sentence = no_match_sentence(_distinct(run["turn_id"]), _distinct(qrels["query_id"]))
    if sentence:
        rest = sentence.split("nothing can be scored. ", 1)[-1]
        files = (
            f"{run_file} and {qrels_file}"
            if run_file is not None and qrels_file is not None
            else "the run and the qrels"
        )
        raise UsageError(f"{files} share no query id, so nothing can be scored. {rest}")


def _has_byte(text: pd.Series, byte: bytes) -> bool:
    """Whether any value of ``text`` (askkit's string column) may hold ``byte`` (an
    ASCII character): a look at Arrow's data buffers, which hold every value's
    UTF-8 bytes end to end (and, in a sliced array, maybe some more: a false yes
    only costs the slower path).

    >>> _has_byte(pd.Series(["a%20b", "c"], dtype=STRING), b"%"), _has_byte(
    ...     pd.Series(["ab"], dtype=STRING), b"%")
    (True, False)
    """
    values = pa.array(text.astype(STRING))
    chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
    code = byte[0]
    for chunk in chunks:
        data = chunk.buffers()[2]
        if data is not None and bool((np.frombuffer(data, dtype=np.uint8) == code).any()):
            return True
    return False


def _distinct(ids: pd.Series) -> list[str]:
    """The distinct ids as text, in the order they first come (hashed by Arrow: a run
    holds millions of rows and some thousands of queries).

    >>> _distinct(pd.Series(["q2", "q1", "q2", 3]))
    ['q2', 'q1', '3']
    """
    text = ids if ids.dtype == STRING else ids.astype(str).astype(STRING)
    return [str(v) for v in pa.compute.unique(pa.array(text)).to_pylist()]


def _pairs(queries: pd.Series, docs: pd.Series) -> set[tuple[str, str]]:
    return set(zip(queries.astype(str).tolist(), docs.astype(str).tolist(), strict=True))


def decoded_if_encoded(
    run: pd.DataFrame, qrels: pd.DataFrame, *, level: Level = "note", run_file: object = None
) -> tuple[pd.DataFrame, str | None]:
    """A TREC run's ids as the paths they name, when the run percent-encodes them and the
    judgments hold them as paths; else the run as it is. Returns the run and a note
    saying what was done (``None``: nothing).

    :func:`write_run` percent-encodes an id holding whitespace (a path with a
    space: ``my%20note.md``), as every TREC file must; a turn log and askkit's
    TSV judgments hold the path itself. TREC ids are opaque to trec_eval, so
    they are read as written; only when decoding them
    (:func:`~askkit.metrics._trec.decode_id`) makes more of the run's
    documents meet a judgment than reading them as written does, the decoded
    ids are scored, and the note says so. A run that is not a TREC run (no
    ``doc`` column), or whose ids decode to themselves, is returned as it is.

    >>> run = pd.DataFrame({"turn_id": ["q1"], "doc": ["my%20note.md"], "score": [1.0]})
    >>> qrels = pd.DataFrame({"query_id": ["q1"], "path": ["my note.md"], "grade": [1]})
    >>> decoded, note = decoded_if_encoded(run, qrels, run_file="run.trec")
    >>> decoded["doc"].tolist(), note.split(":")[0]
    (['my note.md'], 'run.trec')
    """
    from askkit.metrics.ids import doc_ids, qrels_doc_ids

    if "doc" not in run.columns or not len(run) or not len(qrels):
        return run, None
    docs = run["doc"].astype(STRING)
    queries = run["turn_id"].astype(STRING)
    if not _has_byte(docs, b"%") and not _has_byte(queries, b"%"):
        return run, None  # nothing encoded: one look instead of decoding every id
    decoded_docs, decoded_queries = decode_id(docs), decode_id(queries)
    if bool((decoded_docs == docs).all()) and bool((decoded_queries == queries).all()):
        return run, None
    judged = _pairs(qrels["query_id"], qrels_doc_ids(qrels, level))
    decoded = run.assign(turn_id=decoded_queries.to_numpy(), doc=decoded_docs.to_numpy())
    as_written = len(_pairs(queries, doc_ids(run, level)) & judged)
    as_decoded = len(_pairs(decoded["turn_id"], doc_ids(decoded, level)) & judged)
    if as_decoded <= as_written:
        return run, None
    where = f"{run_file}: " if run_file is not None else "the run: "
    example = docs[decoded_docs != docs]
    shown = (
        f" ({example.iloc[0]} is {decode_id(example.iloc[:1]).iloc[0]!r})" if len(example) else ""
    )
    return decoded, (
        f"{where}its ids are percent-encoded, as a TREC file writes a path holding a space"
        f"{shown}; read as the paths they name, as the judgments hold them "
        f"({as_decoded} judged documents meet, {as_written} as written)"
    )
