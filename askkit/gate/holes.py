"""The holes file: the unjudged sections a verdict depends on, what to judge next.

On a personal vault almost nothing is judged, so a gate's verdict leans on
sections nobody graded. ``askkit diff --holes FILE`` writes them, one row per
hole, for a person to judge (the Labeler opens the file:
``Labeler.from_holes``). A **hole** is one unjudged section (a note, at note
level) in a query's top k that some measure's verdict depends on
(:attr:`askkit.metrics.bounds.Bounds.holes`).

The file is a TSV with a header line, :data:`HOLES_COLUMNS` in this order,
then any extra columns in the order given::

    query_id  path  heading  doc  side  rank  measures  question

``path`` is the vault path as a sources frame and a qrels file print it;
``heading`` the section's innermost heading (``""`` at note level, and for the
text before a note's first heading): the key a judgment takes, so a grade
goes to ``query_id, path, heading``. ``doc`` is the id askkit scored (``path``
at note level, ``path#heading`` at section level), carried and never parsed.

**One row per hole, whichever side ranked it.** A section ranked by both runs
is one row: ``side`` names every side that ranked it, in the gate's order
(``BASE, NEW``), ``rank`` is the best rank it had on any of them and
``measures`` every measure whose verdict depends on it, comma-separated
(``", "``, as :func:`askkit.metrics.bounds` writes them). A person judges a
section once, so the file lists it once; :func:`merge_holes` makes that one
row from one row per side, and :func:`write_holes` refuses a ``query_id, doc``
given twice. ``question`` is the query's text, ``""`` when unknown.

Rows are sorted by ``query_id``, then ``rank`` (then ``doc``, so the order is
the same whatever order the holes came in). A field holding a tab, CR, LF or
``"`` is quoted, its quotes doubled, by the rule qrels TSVs follow
(:func:`askkit.metrics.write_qrels`), so every value reads back exactly;
the file is written atomically (:mod:`askkit._atomic`). It is not a qrels
file: :func:`~askkit.metrics.read_qrels` needs a grade on every line, and a
hole has none yet; :func:`read_holes` reads it.

Examples
--------
>>> import tempfile, pathlib
>>> target = pathlib.Path(tempfile.mkdtemp()) / "holes.tsv"
>>> write_holes([Hole("q1", "bread.md", "Rye", "bread.md#Rye", "BASE, NEW", 2, "ndcg@10",
...                  "rye ratio?")], target)
>>> print(target.read_text().replace("\\t", " | "), end="")
query_id | path | heading | doc | side | rank | measures | question
q1 | bread.md | Rye | bread.md#Rye | BASE, NEW | 2 | ndcg@10 | rye ratio?
>>> read_holes(target).astype(object).loc[0, ["query_id", "heading", "rank"]].tolist()
['q1', 'Rye', 2]
"""

from __future__ import annotations

import csv
import dataclasses
import io
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from askkit._atomic import atomic_write_text
from askkit._files import read_input
from askkit.errors import SchemaError
from askkit.frame.schema import STRING

# the one quoting rule of askkit's TSVs: a holes file quotes as a qrels file does
from askkit.metrics.qrels import _tsv_field

__all__ = ["HOLES_COLUMNS", "Hole", "HoleList", "merge_holes", "read_holes", "write_holes"]

#: The holes file's columns, in the file's order: column -> dtype.
HOLES_COLUMNS: dict[str, Any] = {
    "query_id": STRING,
    "path": STRING,
    "heading": STRING,
    "doc": STRING,
    "side": STRING,
    "rank": np.dtype("int64"),
    "measures": STRING,
    "question": STRING,
}
#: Columns a holes file may leave out (read as ``""``).
_OPTIONAL = frozenset({"question"})
#: Text columns that may not be empty: a hole needs a query and a document.
_NOT_EMPTY = ("query_id", "path", "doc")
_RANK = re.compile(r"[0-9]{1,18}")
_SURROGATE = re.compile("[\ud800-\udfff]")
_BOM = "\ufeff"
_FIX = (
    "a holes file is a TSV with a header line "
    "'query_id<TAB>path<TAB>heading<TAB>doc<TAB>side<TAB>rank<TAB>measures<TAB>question'"
)


@dataclass(frozen=True, slots=True)
class Hole:
    """One unjudged section (or note) in a query's top k that a verdict depends on.

    Attributes
    ----------
    query_id:
        The query it was retrieved for.
    path:
        The note's vault path, as a sources frame and a qrels file print it.
    heading:
        The section's innermost heading; ``""`` at note level and for the text
        before a note's first heading. A grade goes to ``query_id, path, heading``.
    doc:
        The id askkit scored (``path`` at note level, ``path#heading`` at section
        level); carried, never parsed.
    side:
        The sides that ranked it, comma-separated in the gate's order (``"BASE"``,
        ``"BASE, NEW"``).
    rank:
        Its best rank (>= 1) on those sides.
    measures:
        The measures whose verdict depends on it, comma-separated (``"ndcg@10, mrr"``).
    question:
        The query's text, ``""`` when unknown.
    """

    query_id: str
    path: str
    heading: str
    doc: str
    side: str
    rank: int
    measures: str
    question: str = ""


class HoleList(Sequence[Hole]):
    """Holes, made when first read: a gate on tens of thousands of queries finds
    hundreds of thousands of them, and most reports need only their number.

    A sequence of :class:`Hole`, equal to any sequence of the same holes.

    >>> lazy = HoleList(make=lambda: [Hole("q", "a.md", "", "a.md", "NEW", 1, "mrr")], count=1)
    >>> len(lazy), lazy == (Hole("q", "a.md", "", "a.md", "NEW", 1, "mrr"),)
    (1, True)
    """

    __slots__ = ("_count", "_items", "_make")

    def __init__(
        self,
        items: Iterable[Hole] = (),
        *,
        make: Callable[[], Iterable[Hole]] | None = None,
        count: int | None = None,
    ) -> None:
        self._make = make
        self._items: tuple[Hole, ...] | None = None if make is not None else tuple(items)
        self._count = count if make is not None else len(self._items or ())

    def _all(self) -> tuple[Hole, ...]:
        if self._items is None:
            assert self._make is not None
            self._items = tuple(self._make())
            self._make = None
            if self._count is not None and self._count != len(self._items):
                raise AssertionError(f"{len(self._items)} holes made, {self._count} counted")
        return self._items

    def __len__(self) -> int:
        return self._count if self._items is None and self._count is not None else len(self._all())

    def __getitem__(self, index: Any) -> Any:
        return self._all()[index]

    def __iter__(self) -> Iterator[Hole]:
        return iter(self._all())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return self._all() == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._all())

    def __repr__(self) -> str:
        return f"HoleList({len(self)} holes)"


def _where(file: str | None, lines: np.ndarray[Any, Any] | None, i: int) -> dict[str, Any]:
    """``file``/``line`` keywords of the error about row ``i`` (a frame's rows: no line)."""
    if lines is None:
        return {"file": file}
    return {"file": file, "line": int(lines[i])}


def _row(lines: np.ndarray[Any, Any] | None, i: int) -> str:
    return "" if lines is not None else f"row {i}: "


def _text(
    values: pd.Series, name: str, file: str | None, lines: np.ndarray[Any, Any] | None
) -> pd.Series:
    """A column as text: a missing value is ``""``, any other value ``str`` of it; a value
    that is not valid Unicode (a lone surrogate) raises naming its row or line."""
    cells = values.astype(object).to_numpy()
    missing = np.asarray(pd.isna(cells), dtype=bool)
    text = np.array(["" if m else str(v) for v, m in zip(cells, missing, strict=True)], object)
    series = pd.Series(text, dtype=object)
    bad = np.flatnonzero(series.str.contains(_SURROGATE).to_numpy(dtype=bool))
    if len(bad):
        i = int(bad[0])
        raise SchemaError(
            f"{_row(lines, i)}not valid Unicode text (a lone surrogate), so it cannot be "
            "written as UTF-8; fix the value",
            field=name,
            value=text[i],
            **_where(file, lines, i),
        )
    return series.astype(STRING)


def _rank(
    values: pd.Series, file: str | None, lines: np.ndarray[Any, Any] | None
) -> np.ndarray[Any, np.dtype[np.int64]]:
    """The rank column as int64: whole numbers >= 1 (digits in a file; ints in a frame)."""
    if pd.api.types.is_integer_dtype(values.dtype) and not pd.api.types.is_bool_dtype(values.dtype):
        ranks = values.to_numpy(dtype=np.int64)
        good = ranks >= 1
    else:
        cells = values.astype(object).to_numpy()
        whole = np.array(
            [bool(_RANK.fullmatch(v)) if isinstance(v, str) else _is_int(v) for v in cells],
            dtype=bool,
        )
        ranks = np.array([int(v) if ok else 0 for v, ok in zip(cells, whole, strict=True)])
        ranks = ranks.astype(np.int64)
        good = whole & (ranks >= 1)
    bad = np.flatnonzero(~good)
    if len(bad):
        i = int(bad[0])
        raise SchemaError(
            f"{_row(lines, i)}a rank must be a whole number >= 1 (the best rank the hole had)",
            field="rank",
            value=values.iloc[i],
            **_where(file, lines, i),
        )
    return ranks


def _is_int(value: object) -> bool:
    """An int, or a float holding one (pandas makes ints floats beside a missing value)."""
    if isinstance(value, bool | np.bool_):
        return False
    if isinstance(value, float | np.floating):
        number = float(value)
        return number.is_integer() and abs(number) < 2**62  # nan and inf are not integers
    return isinstance(value, int | np.integer)


def _names(columns: Iterable[object], file: str | None) -> list[str]:
    """The column names as text: each one given once, none empty, the required ones there."""
    names = [str(c) for c in columns]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice or "" in names:
        raise SchemaError(
            "each column needs a name of its own (an empty or repeated name would not read back)",
            field="columns",
            value=twice or names,
            file=file,
            line=1 if file is not None else None,
        )
    missing = [c for c in HOLES_COLUMNS if c not in names and c not in _OPTIONAL]
    if missing:
        raise SchemaError(
            f"missing columns {', '.join(missing)}; {_FIX}",
            field="columns",
            value=names,
            file=file,
            line=1 if file is not None else None,
        )
    return names


def _checked(
    frame: pd.DataFrame,
    file: str | None = None,
    lines: np.ndarray[Any, Any] | None = None,
    *,
    unique: bool = True,
) -> pd.DataFrame:
    """The holes frame: :data:`HOLES_COLUMNS` with their dtypes, then the extra columns as
    text, in their order; every value checked (the one rule for frames and files).
    ``unique=False``: a ``query_id, doc`` may come twice (one row per side)."""
    names = _names(frame.columns, file)
    frame = frame.set_axis(names, axis=1).reset_index(drop=True)
    out: dict[str, Any] = {}
    for name in [*HOLES_COLUMNS, *(n for n in names if n not in HOLES_COLUMNS)]:
        if name not in names:
            out[name] = pd.array([""] * len(frame), dtype=STRING)
        elif name == "rank":
            out[name] = _rank(frame[name], file, lines)
        else:
            out[name] = _text(frame[name], name, file, lines).array
    for name in _NOT_EMPTY:
        empty = np.flatnonzero((pd.Series(out[name]) == "").to_numpy(dtype=bool))
        if len(empty):
            i = int(empty[0])
            raise SchemaError(
                f"{_row(lines, i)}a hole needs a query_id, a path and a doc; this one is empty",
                field=name,
                value="",
                **_where(file, lines, i),
            )
    checked = pd.DataFrame(out, copy=False)
    if unique:
        _check_unique(checked, file, lines)
    return checked


def _check_unique(
    frame: pd.DataFrame, file: str | None, lines: np.ndarray[Any, Any] | None
) -> None:
    """One row per hole: a ``query_id, doc`` given twice is refused, naming both."""
    twice = frame.duplicated(["query_id", "doc"], keep=False).to_numpy(dtype=bool)
    if not twice.any():
        return
    first, second = (int(i) for i in np.flatnonzero(twice)[:2])
    at = f"line {int(lines[first])}" if lines is not None else f"row {first}"
    raise SchemaError(
        f"{_row(lines, second)}this query_id and doc are also on {at}: a hole is one row, "
        "whichever sides ranked it (merge_holes joins one row per side into one)",
        field="doc",
        value=frame["doc"].iloc[second],
        **_where(file, lines, second),
    )


def _frame(holes: Iterable[Hole] | pd.DataFrame) -> pd.DataFrame:
    if isinstance(holes, pd.DataFrame):
        return holes
    rows = list(holes)
    for i, hole in enumerate(rows):
        if not isinstance(hole, Hole):
            raise TypeError(f"holes[{i}]: expected a Hole, got {type(hole).__name__}")
    return pd.DataFrame(
        {
            f.name: pd.Series([getattr(h, f.name) for h in rows], dtype=object)
            for f in dataclasses.fields(Hole)
        }
    )


def _sorted(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.sort_values(["query_id", "rank", "doc"], kind="stable", ignore_index=True)


def write_holes(holes: Iterable[Hole] | pd.DataFrame, path: str | os.PathLike[str]) -> None:
    """Write holes to a TSV, atomically (a temporary file, then a rename).

    ``holes``: :class:`Hole` values, or a frame with the :data:`HOLES_COLUMNS`
    (``question`` optional) and any extra columns, written after them as text.
    Rows are sorted by ``query_id``, ``rank`` and ``doc``; a field holding a tab,
    CR, LF or ``"`` is quoted as a qrels TSV quotes it. A bad value (an empty
    ``query_id``, ``path`` or ``doc``, a rank that is not a whole number >= 1, text
    that is not valid Unicode, a ``query_id, doc`` given twice) raises
    :class:`~askkit.SchemaError` naming the row and field, and nothing is written.
    """
    frame = _sorted(_checked(_frame(holes)))
    header = "\t".join(_tsv_field(pd.Series(list(frame.columns), dtype=STRING)).tolist())
    fields = [
        frame[name].astype(str) if name == "rank" else _tsv_field(frame[name])
        for name in frame.columns
    ]
    rows = fields[0].to_numpy(dtype=object)
    for column in fields[1:]:
        rows = rows + "\t" + column.to_numpy(dtype=object)
    atomic_write_text(path, header + "\n" + "".join(r + "\n" for r in rows.tolist()))


def _records(text: str, file: str) -> tuple[list[str], list[list[str]], list[int]]:
    """The header, the rows and each row's first line; blank lines skipped. Quoting
    is the csv module's (as :func:`_tsv_field` writes it); lines end at LF, CRLF or CR."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter="\t", strict=True)
    records: list[list[str]] = []
    starts: list[int] = []
    previous = 0
    try:
        for row in reader:
            if row and (len(row) > 1 or row[0].strip(" ")):
                records.append(row)
                starts.append(previous + 1)
            previous = reader.line_num
    except csv.Error as exc:
        raise SchemaError(
            f"not a holes TSV ({exc}); a field holding a tab, line break or quote must be in "
            'quotes, its quotes doubled ("a ""b"" c")',
            has_value=False,
            file=file,
            line=previous + 1,
        ) from None
    if not records:
        return [], [], []
    return records[0], records[1:], starts[1:]


def read_holes(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a holes file: :data:`HOLES_COLUMNS` (``rank`` int64, the rest text), then any
    extra columns as text, rows in the file's order.

    A column may stand anywhere in the file and ``question`` may be left out
    (read as ``""``); a leading UTF-8 byte order mark is skipped; a blank file is
    no holes. A file that is not a holes TSV (not UTF-8, a column missing or named
    twice, a line with more or fewer fields than the header, an empty ``query_id``,
    ``path`` or ``doc``, a rank that is not a whole number >= 1, a ``query_id, doc``
    on two lines) raises :class:`~askkit.SchemaError` naming the file, line, field
    and value.
    """
    file = str(path)
    data = read_input(path, what="holes")
    try:
        text = data.decode("utf-8").removeprefix(_BOM)
    except UnicodeDecodeError as exc:
        raise SchemaError(
            f"not UTF-8 (byte {data[exc.start]:#04x}); a holes file is read as UTF-8",
            has_value=False,
            file=file,
            line=data.count(b"\n", 0, exc.start) + 1,
        ) from None
    header, rows, starts = _records(text, file)
    if not header:
        return _checked(pd.DataFrame({c: [] for c in HOLES_COLUMNS}, dtype=object))
    names = _names(header, file)
    for row, line in zip(rows, starts, strict=True):
        if len(row) != len(names):
            raise SchemaError(
                f"{len(row)} fields where the header has {len(names)}; each line needs the "
                "header's fields, separated by tabs, a field holding a tab, line break or "
                "quote in quotes",
                field="columns",
                value=len(row),
                file=file,
                line=line,
            )
    frame = pd.DataFrame(
        {n: pd.Series([r[j] for r in rows], dtype=object) for j, n in enumerate(names)}
    )
    return _checked(frame, file, np.asarray(starts, dtype=np.int64))


def merge_holes(holes: Iterable[Hole] | pd.DataFrame) -> pd.DataFrame:
    """One row per hole from one row per side: what :func:`write_holes` takes.

    Rows naming one ``query_id, doc`` become one: ``side`` the sides in the order
    they first come, joined by ``", "``; ``rank`` the best; ``measures`` every
    measure named (split at commas), in the order they first come; ``path``,
    ``heading``, ``question`` and extra columns those of the first row (a
    ``question`` from a later row when the first has none).

    >>> merged = merge_holes([
    ...     Hole("q", "a.md", "A", "a.md#A", "BASE", 4, "ndcg@10"),
    ...     Hole("q", "a.md", "A", "a.md#A", "NEW", 2, "ndcg@10, mrr")])
    >>> merged[["side", "rank", "measures"]].values.tolist()
    [['BASE, NEW', 2, 'ndcg@10, mrr']]
    """
    frame = _checked(_frame(holes), unique=False)
    keys = ["query_id", "doc"]
    groups = frame.groupby(keys, sort=False)
    first = groups.head(1).set_index(keys)
    sides = _joined(frame, "side")
    measures = _joined(frame, "measures")
    question = frame[frame["question"] != ""].groupby(keys, sort=False)["question"].first()
    merged = first.assign(
        side=sides.reindex(first.index).fillna("").astype(STRING),
        rank=groups["rank"].min().reindex(first.index).to_numpy(dtype=np.int64),
        measures=measures.reindex(first.index).fillna("").astype(STRING),
        question=question.reindex(first.index).fillna("").astype(STRING),
    )
    return merged.reset_index()[list(frame.columns)]


def _joined(frame: pd.DataFrame, name: str) -> pd.Series:
    """Per ``query_id, doc``: the comma-separated names of ``name``, each once, in order."""
    parts = frame[["query_id", "doc"]].assign(part=frame[name].str.split(",")).explode("part")
    parts["part"] = parts["part"].fillna("").str.strip()
    parts = parts[parts["part"] != ""].drop_duplicates()
    return parts.groupby(["query_id", "doc"], sort=False)["part"].agg(", ".join)
