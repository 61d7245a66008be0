"""Hypothesis strategies for ids in judgments and run files: whatever a writer may be
given (spaces, tabs, line breaks, ``%`` and percent codes, ``#``, quotes, Unicode,
5,000-character ids)."""

from __future__ import annotations

import pandas as pd
from hypothesis import strategies as st

#: Pieces that trip TSV and TREC files: separators, line ends, quotes, comments,
#: percent codes, Unicode whitespace TREC readers keep in a field, astral characters.
PIECES = st.sampled_from(
    [
        " ",
        "\t",
        "\n",
        "\r",
        "\r\n",
        "\x0b",
        "\x0c",
        "%",
        "%20",
        "%25",
        "%09",
        "%0A",
        "#",
        '"',
        "'",
        "\\",
        "\x1f",
        "\xa0",
        "\x85",
        "\u2028",
        "\u3000",
        "\ufeff",
        "é",
        "☃",
        "𝄞",
        "a",
        "b",
        "q",
        ".md",
        "/",
        "query_id",
    ]
)

short_ids = st.lists(st.one_of(PIECES, st.text(max_size=3)), min_size=1, max_size=6).map("".join)
#: Non-empty ids, now and then 5,000 characters long.
ids = st.one_of(
    short_ids.filter(bool),
    short_ids.filter(bool).map(lambda s: (s * 5000)[:5000]),
)
#: Headings may be empty (a judgment of the whole note).
headings = st.one_of(st.just(""), ids)
#: Few distinct values, so that rows share query ids, documents and scores.
scores = st.sampled_from([0.0, 1.0, 1.0, 2.5, -3.0, 0.1 + 0.2, 1e-300, float("nan")])


@st.composite
def labels(draw: st.DrawFn, n: int) -> pd.Index:
    """A frame's row labels: 0..n-1, shuffled, repeated, or strings."""
    kind = draw(st.sampled_from(["range", "shuffled", "repeated", "text"]))
    if kind == "range":
        return pd.RangeIndex(n)
    if kind == "shuffled":
        return pd.Index(draw(st.permutations(list(range(n)))))
    if kind == "repeated":
        return pd.Index([draw(st.integers(0, 2)) for _ in range(n)])
    return pd.Index([f"r{i}" for i in draw(st.permutations(list(range(n))))])


#: The columns a qrels frame gives a meaning to.
QRELS_NAMES = frozenset({"query_id", "path", "heading", "grade", "doc", "iteration"})
#: Names of the extra columns a user adds (a ``notes`` column, ...).
extra_names = st.lists(
    short_ids.filter(lambda s: s != "" and s not in QRELS_NAMES), max_size=2, unique=True
)
