"""Runs on disk: TREC run files (``qid Q0 docid rank score tag``) read and written.

:func:`read_trec_run` reads a TREC run as columns (pyarrow's CSV reader, or
pyarrow.compute for a messy file) into a frame :func:`askkit.metrics.evaluate`
takes; :func:`read_run` is the same with askkit's defaults; :func:`write_run`
writes a sources frame as a TREC run, ranked and de-duplicated as
:func:`askkit.metrics.evaluate` scores it. Ids are written and read as
:mod:`askkit.metrics.qrels` says.
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
from askkit.errors import SchemaError
from askkit.frame.load import Loaded
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
from askkit.metrics.evaluate import ranked_run
from askkit.metrics.ids import Ids, Level, check_ids, vault_ids
from askkit.metrics.ranked import Ties

__all__ = ["is_turn_log", "read_run", "read_trec_run", "write_run"]


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
