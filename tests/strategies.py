"""Hypothesis strategies for kimun's wire data, shared by the property tests."""

from __future__ import annotations

import datetime as dt

from hypothesis import strategies as st

from askkit.wire import ChunkResult

#: Characters that matter to kimun's rules: the separators, Rust and Python
#: whitespace (which differ), digits, brackets and a little Unicode.
TRICKY = st.sampled_from(
    [
        *list("\x1f\x1c\x1d\x1e \t\n\r\xa0\u2003\u3000\u200b\x85›·-/.[]0123456789aZé#"),
        " › ",
        "\x1f\x1f",
        "2026-04-08",
    ]
)

titles = st.lists(st.one_of(TRICKY, st.text(max_size=3)), max_size=12).map("".join)

dates = st.one_of(
    st.none(),
    st.dates(min_value=dt.date(1, 1, 1), max_value=dt.date(9999, 12, 31)).map(
        lambda d: d.isoformat()
    ),
)

paths = st.lists(
    st.one_of(
        st.sampled_from(["journal", "..", ".", "", " ", "A:B", "..x.md", "CON"]),
        st.text(max_size=6),
    ),
    max_size=5,
).map("/".join)


@st.composite
def chunks(draw: st.DrawFn) -> ChunkResult:
    date = draw(dates)
    title = draw(titles)
    if date is not None and draw(st.booleans()):
        title = date + draw(st.sampled_from(["\x1f", "", " ", " \x1f"])) + title
    return ChunkResult(
        path=draw(paths),
        title=title,
        date=date,
        content=draw(st.text(max_size=20)),
        hash=draw(st.text(max_size=8)),
        similarity_score=draw(st.floats(allow_nan=False, allow_infinity=False)),
        ordinal=draw(st.integers(min_value=0, max_value=2**64 - 1)),
    )


#: Answer text rich in almost-markers.
answers = st.lists(
    st.one_of(
        st.sampled_from(["[", "]", "[[", "]]", " ", "\n", ".", ",", "!", "[0]", "[12]", "[1a]"]),
        st.integers(min_value=0, max_value=2**70).map(lambda n: f"[{n}]"),
        st.text(max_size=4),
    ),
    max_size=25,
).map("".join)


#: Characters an id in a TREC file or a turn log may hold, and that break reports: every
#: line boundary str.splitlines knows, Markdown's and XML's syntax, what XML 1.0 forbids.
HOSTILE = st.sampled_from(
    [
        *"\r\n\v\f\x1c\x1d\x1e\x85\u2028\u2029|`*_[]~$<>&\\\"'#!\t\x00\x07\x1b\x7f",
        "\r\n",
        "]]>",
        "<!--",
        "-->",
        "\ufffe",
        "\uffff",
        "\ud800",
        "\udfff",
        "# INJECTED",
        "</testsuite>",
        "&#13;",
    ]
)

#: Ids of any Unicode category (lone surrogates included), rich in :data:`HOSTILE` ones.
hostile_ids = st.lists(
    st.one_of(HOSTILE, st.text(st.characters(exclude_categories=()), max_size=3)),
    min_size=1,
    max_size=8,
).map("".join)
