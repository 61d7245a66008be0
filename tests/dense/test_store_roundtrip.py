"""StoreWriter round-trips: what KimunStore reads back is what was written, for any chunks.

Arbitrary paths, hashes, titles, texts and dates (Unicode, ``%``, ``#``, tabs,
U+001F breadcrumbs, 5,000-character values), rows in any order, duplicates,
extra columns, several writes to two vaults; each read back in the order
written. Vectors come
back normalised as kimun's ``to_blob`` normalises them, computed here by the
independent writer of :mod:`askkit.testing.stores`; a zero vector comes back as
it is. Dates come back as kimun's server parses a stored date.
"""

from __future__ import annotations

import sqlite3
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from askkit.dense import StoreWriter
from askkit.dense.store import COLUMNS, DB_FILE, KimunStore
from askkit.journal import parse_date
from askkit.testing.stores import kimun_normalise
from tests.strategies import TRICKY

DIM = 5

#: Any text SQLite can hold as UTF-8: every character but the lone surrogates.
_CHARS = st.characters(exclude_categories=("Cs",))
_PIECES = st.one_of(
    TRICKY,
    st.sampled_from(["%", "%20", "#", "##", "\t", "\x00", "\x1f", "'", '"', ";", "--", "🥖"]),
    st.text(_CHARS, max_size=6),
)
texts = st.one_of(
    st.lists(_PIECES, max_size=8).map("".join),
    # 5,000 characters of a short pattern (cheap to draw)
    st.text(_CHARS, min_size=1, max_size=4).map(lambda s: (s * 5000)[:5000]),
)
dates = st.one_of(
    st.none(),
    st.dates().map(lambda d: d.isoformat()),
    st.sampled_from(["2026-4-8", "2026-02-30", "yesterday", "", " 2026-04-08"]),
    texts,
)
floats = st.floats(width=32, allow_nan=False, allow_infinity=False)
vectors = st.one_of(
    st.lists(floats, min_size=DIM, max_size=DIM),
    st.just([0.0] * DIM),  # kimun stores a zero vector as it is
)


@st.composite
def chunk(draw: st.DrawFn) -> tuple[dict[str, Any], list[float]]:
    row = {
        "path": draw(texts),
        "hash": draw(texts),
        "title": draw(st.one_of(st.none(), texts)),
        "date": draw(dates),
        "text": draw(texts),
    }
    return row, draw(vectors)


#: Columns a caller's frame may carry beside kimun's: the writer stores none of them.
extra_columns = st.lists(
    st.text(_CHARS, min_size=1, max_size=8).filter(lambda name: name not in COLUMNS),
    max_size=2,
    unique=True,
)


@st.composite
def writes(
    draw: st.DrawFn,
) -> list[tuple[str, pd.DataFrame, list[tuple[dict[str, Any], list[float]]]]]:
    """One to three writes, each to vault ``a`` or ``b``, of chunks in any order with
    duplicates (a chunk repeated, in place or elsewhere), in frames with extra columns."""
    out = []
    for _ in range(draw(st.integers(1, 3))):
        rows = draw(st.lists(chunk(), min_size=1, max_size=6))
        rows += draw(st.lists(st.sampled_from(rows), max_size=3))  # duplicates
        rows = draw(st.permutations(rows))
        extras = draw(extra_columns)
        records = [{**r, **{c: draw(texts) for c in extras}} for r, _ in rows]
        # object columns, as a caller builds them: a NUL or 5,000 characters as they are
        frame = pd.DataFrame(records, columns=[*extras, *COLUMNS], dtype=object)
        out.append((draw(st.sampled_from(["a", "b"])), frame, rows))
    return out


@given(writes())
def test_what_kimun_store_reads_back_is_what_store_writer_wrote(
    batches: list[tuple[str, pd.DataFrame, list[tuple[dict[str, Any], list[float]]]]],
) -> None:
    expected: dict[str, list[tuple[dict[str, Any], list[float]]]] = {"a": [], "b": []}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "store"
        with StoreWriter(folder, dimension=DIM) as writer:
            for vault, frame, rows in batches:
                writer.store(vault, frame, np.array([v for _, v in rows]))
                expected[vault] += rows
        store = KimunStore(folder)
        assert sorted(c.name for c in store.collections()) == sorted(
            v for v, rows in expected.items() if rows
        )
        raw = sqlite3.connect(folder / DB_FILE)
        try:
            for vault, rows in expected.items():
                if not rows:
                    continue
                written = [r for r, _ in rows]
                got = store.load(vault)
                records = got.chunks.astype(object).where(got.chunks.notna(), None)
                assert records.to_dict("records") == [
                    {
                        "path": r["path"],
                        "hash": r["hash"],
                        "title": r["title"] if r["title"] is not None else "",
                        "date": parse_date(r["date"]) if r["date"] is not None else None,
                        "text": r["text"],
                    }
                    for r in written
                ]
                want = kimun_normalise(np.array([v for _, v in rows], dtype=np.float32))
                assert got.matrix.view(np.uint32).tolist() == want.view(np.uint32).tolist()
                zero = [i for i, (_, v) in enumerate(rows) if not any(v)]
                assert not got.matrix[zero].any()
                stored = raw.execute(
                    "SELECT k.path, k.hash, k.title, k.date, k.text FROM chunks k "
                    "JOIN collections c ON c.id = k.collection_id WHERE c.name = ? ORDER BY k.id",
                    (vault,),
                ).fetchall()
                titles = [r["title"] if r["title"] is not None else "" for r in written]
                assert stored == [  # the file holds each value as given (title: "" for none)
                    (r["path"], r["hash"], t, r["date"], r["text"])
                    for r, t in zip(written, titles, strict=True)
                ]
        finally:
            raw.close()
