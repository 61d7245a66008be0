"""The holes file: what is written reads back exactly; a bad file says where and what."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from askkit.errors import SchemaError
from askkit.gate import HOLES_COLUMNS, Hole, merge_holes, read_holes, write_holes
from askkit.metrics import read_qrels

HEADER = "\t".join(HOLES_COLUMNS)
SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: Text a TSV must carry: separators, quotes, '#', spaces, line breaks of every kind.
TRICKY = st.sampled_from(
    ["\t", '"', "#", " ", "\r", "\n", "\r\n", "\ufeff", "\x85", "\u2028", "é", "日本", "\\", "\x00"]
)
#: Any text that is valid Unicode (no lone surrogate), rich in :data:`TRICKY` pieces.
texts = st.lists(
    st.one_of(TRICKY, st.text(st.characters(exclude_categories=["Cs"]), max_size=3)),
    max_size=6,
).map("".join)
#: Text written as it is, never quoted: no tab, CR, LF or quote, no leading U+FEFF.
plain_texts = texts.map(lambda s: "".join(c for c in s if c not in '\t\r\n"').lstrip("\ufeff"))


@st.composite
def holes(draw: st.DrawFn, text: st.SearchStrategy[str] = texts) -> list[Hole]:
    """Holes with distinct ``query_id, doc`` keys, in any order; ids of ``text`` (never
    empty, some with a leading ``#``)."""
    ids = st.one_of(text.filter(bool), text.map(lambda s: "#" + s))
    qids = draw(st.lists(ids, min_size=1, max_size=3, unique=True))
    rows = draw(
        st.lists(
            st.tuples(st.sampled_from(qids), ids, text, text, text, text),
            max_size=8,
            unique_by=lambda t: (t[0], t[1]),
        )
    )
    ranks = draw(st.lists(st.integers(1, 10**6), min_size=len(rows), max_size=len(rows)))
    return [
        Hole(
            qid,
            path,
            heading,
            doc=path if not heading else f"{path}#{heading}",
            side=side,
            rank=rank,
            measures=measures,
            question=question,
        )
        for (qid, path, heading, side, measures, question), rank in zip(rows, ranks, strict=True)
    ]


def expected(rows: list[Hole], extra: dict[str, list[str]] | None = None) -> pd.DataFrame:
    """The frame ``read_holes`` must give: sorted by query_id, rank, doc (code points)."""
    extra = extra or {}
    order = sorted(range(len(rows)), key=lambda i: (rows[i].query_id, rows[i].rank, rows[i].doc))
    columns: dict[str, object] = {
        f.name: [getattr(rows[i], f.name) for i in order] for f in dataclasses.fields(Hole)
    }
    columns.update({name: [values[i] for i in order] for name, values in extra.items()})
    return pd.DataFrame(columns)


def as_python(frame: pd.DataFrame) -> tuple[list[str], list[list[object]]]:
    return [str(c) for c in frame.columns], frame.astype(object).values.tolist()


@SETTINGS
@given(rows=holes(), data=st.data())
def test_written_holes_read_back_exactly_whatever_the_order(
    tmp_path_factory: pytest.TempPathFactory, rows: list[Hole], data: st.DataObject
) -> None:
    folder = tmp_path_factory.mktemp("holes")
    write_holes(rows, folder / "a.tsv")
    write_holes(data.draw(st.permutations(rows)), folder / "b.tsv")
    assert (folder / "a.tsv").read_bytes() == (folder / "b.tsv").read_bytes()
    back = read_holes(folder / "a.tsv")
    assert as_python(back) == as_python(expected(rows))
    assert list(back.dtypes) == list(HOLES_COLUMNS.values())


@SETTINGS
@given(rows=holes(), names=st.lists(texts.filter(bool), max_size=3, unique=True), data=st.data())
def test_extra_columns_read_back_exactly_after_the_holes_columns(
    tmp_path_factory: pytest.TempPathFactory,
    rows: list[Hole],
    names: list[str],
    data: st.DataObject,
) -> None:
    names = [n for n in names if n not in HOLES_COLUMNS]
    extra = {n: data.draw(st.lists(texts, min_size=len(rows), max_size=len(rows))) for n in names}
    given = {f.name: [getattr(h, f.name) for h in rows] for f in dataclasses.fields(Hole)}
    frame = pd.DataFrame({**extra, **given})  # extras first, rows in any order
    frame = frame.iloc[data.draw(st.permutations(range(len(frame))))] if len(frame) else frame
    target = tmp_path_factory.mktemp("holes") / "h.tsv"
    write_holes(frame, target)
    assert as_python(read_holes(target)) == as_python(expected(rows, extra))
    write_holes(read_holes(target), target.with_name("again.tsv"))  # a read file writes back
    assert target.with_name("again.tsv").read_bytes() == target.read_bytes()


@SETTINGS
@given(
    rows=holes(plain_texts).filter(bool),
    bad=st.sampled_from(["0", "-1", "x", "", "1.5", " 2", "\uff11", "9" * 19]),
    data=st.data(),
)
def test_a_bad_rank_is_named_by_line_and_field(
    tmp_path_factory: pytest.TempPathFactory, rows: list[Hole], bad: str, data: st.DataObject
) -> None:
    target = tmp_path_factory.mktemp("holes") / "h.tsv"
    write_holes(rows, target)
    lines = target.read_text(encoding="utf-8").split("\n")
    i = data.draw(st.integers(1, len(rows)))  # a hole's line (line 1 is the header)
    cells = lines[i].split("\t")
    cells[5] = bad
    lines[i] = "\t".join(cells)
    target.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(SchemaError) as caught:
        read_holes(target)
    assert (caught.value.file, caught.value.line, caught.value.field) == (
        str(target),
        i + 1,
        "rank",
    )
    assert caught.value.value == bad


def test_what_is_written_is_sorted_by_query_then_rank(tmp_path: Path) -> None:
    rows = [
        Hole("q2", "a.md", "", "a.md", "NEW", 1, "mrr"),
        Hole("q1", "b.md", "B", "b.md#B", "BASE", 7, "ndcg@10"),
        Hole("q1", "c.md", "C", "c.md#C", "BASE, NEW", 3, "ndcg@10, mrr", "rye?"),
    ]
    write_holes(rows, tmp_path / "h.tsv")
    assert (tmp_path / "h.tsv").read_text(encoding="utf-8") == (
        f"{HEADER}\n"
        "q1\tc.md\tC\tc.md#C\tBASE, NEW\t3\tndcg@10, mrr\trye?\n"
        "q1\tb.md\tB\tb.md#B\tBASE\t7\tndcg@10\t\n"
        "q2\ta.md\t\ta.md\tNEW\t1\tmrr\t\n"
    )


def test_no_holes_is_a_header_alone_and_a_blank_file_is_no_holes(tmp_path: Path) -> None:
    write_holes([], tmp_path / "h.tsv")
    assert (tmp_path / "h.tsv").read_text(encoding="utf-8") == HEADER + "\n"
    assert read_holes(tmp_path / "h.tsv").empty
    (tmp_path / "blank.tsv").write_text("\n", encoding="utf-8")
    assert list(read_holes(tmp_path / "blank.tsv").columns) == list(HOLES_COLUMNS)


def test_a_file_in_any_column_order_without_question_reads(tmp_path: Path) -> None:
    (tmp_path / "h.tsv").write_bytes(
        b"\xef\xbb\xbfrank\tdoc\tpath\tquery_id\tnotes\tmeasures\tside\theading\r\n"
        b"2\ta.md#A\ta.md\tq1\tcheck\tmrr\tNEW\tA\r\n"
    )
    back = read_holes(tmp_path / "h.tsv")
    assert as_python(back) == (
        [*HOLES_COLUMNS, "notes"],
        [["q1", "a.md", "A", "a.md#A", "NEW", 2, "mrr", "", "check"]],
    )


def test_a_holes_file_is_not_a_qrels_file(tmp_path: Path) -> None:
    """read_qrels needs a grade on every line; a hole has none, so the file says so."""
    write_holes([Hole("q1", "a.md", "", "a.md", "NEW", 1, "mrr")], tmp_path / "h.tsv")
    with pytest.raises(SchemaError, match="grade"):
        read_qrels(tmp_path / "h.tsv", extra_columns=True)


@pytest.mark.parametrize(
    ("body", "line", "field"),
    [
        pytest.param("q1\ta.md\tA\ta.md#A\tNEW\t0\tmrr\t\n", 2, "rank", id="rank-0"),
        pytest.param("q1\ta.md\tA\ta.md#A\tNEW\tfirst\tmrr\t\n", 2, "rank", id="rank-word"),
        pytest.param("\n\n\ta.md\tA\ta.md#A\tNEW\t1\tmrr\t\n", 4, "query_id", id="blank-qid"),
        pytest.param("q1\t\tA\ta.md#A\tNEW\t1\tmrr\t\n", 2, "path", id="blank-path"),
        pytest.param("q1\ta.md\tA\t\tNEW\t1\tmrr\t\n", 2, "doc", id="blank-doc"),
        pytest.param("q1\ta.md\tA\ta.md#A\tNEW\t1\tmrr\n", 2, "columns", id="short-line"),
        pytest.param(
            'q1\t"a\nb.md"\tA\ta#A\tNEW\t1\tm\t\nq1\ta.md\tA\ta.md#A\tNEW\t1\tmrr\t\tx\n',
            4,
            "columns",
            id="long-line-after-a-quoted-break",
        ),
        pytest.param(
            "q1\ta.md\tA\ta.md#A\tBASE\t1\tmrr\t\nq1\ta.md\tA\ta.md#A\tNEW\t2\tmrr\t\n",
            3,
            "doc",
            id="a-hole-twice",
        ),
    ],
)
def test_a_bad_line_is_named_with_its_field(
    tmp_path: Path, body: str, line: int, field: str
) -> None:
    target = tmp_path / "h.tsv"
    target.write_text(f"{HEADER}\n{body}", encoding="utf-8")
    with pytest.raises(SchemaError) as caught:
        read_holes(target)
    assert (caught.value.file, caught.value.line, caught.value.field) == (str(target), line, field)


@pytest.mark.parametrize(
    ("text", "line", "field"),
    [
        ("query_id\tpath\theading\tgrade\nq1\ta.md\t\t1\n", 1, "columns"),  # a qrels file
        (f"{HEADER}\tside\n", 1, "columns"),  # a column twice
        (f'{HEADER}\nq1\ta.md\t"A\ta.md#A\tNEW\t1\tmrr\t\n', 2, None),  # an unclosed quote
    ],
)
def test_a_file_that_is_not_a_holes_tsv_says_where(
    tmp_path: Path, text: str, line: int, field: str | None
) -> None:
    target = tmp_path / "h.tsv"
    target.write_text(text, encoding="utf-8")
    with pytest.raises(SchemaError) as caught:
        read_holes(target)
    assert (caught.value.file, caught.value.line, caught.value.field) == (str(target), line, field)


def test_a_file_not_in_utf8_names_its_line(tmp_path: Path) -> None:
    target = tmp_path / "h.tsv"
    target.write_bytes(f"{HEADER}\nq1\tcaf\xe9.md\t\t".encode("latin-1") + b"x\tNEW\t1\tm\t\n")
    with pytest.raises(SchemaError, match="UTF-8") as caught:
        read_holes(target)
    assert caught.value.line == 2


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"rank": 0}, "rank"),
        ({"rank": True}, "rank"),
        ({"rank": 2.5}, "rank"),
        ({"rank": "3rd"}, "rank"),
        ({"query_id": ""}, "query_id"),
        ({"heading": "a\udc80"}, "heading"),
    ],
)
def test_bad_holes_are_refused_and_nothing_is_written(
    tmp_path: Path, change: dict[str, object], field: str
) -> None:
    good = Hole("q1", "a.md", "A", "a.md#A", "NEW", 1, "mrr")
    rows = [dataclasses.asdict(good), {**dataclasses.asdict(good), **change}]
    frame = pd.DataFrame({k: pd.Series([r[k] for r in rows], dtype=object) for k in rows[0]})
    frame["doc"] = ["a.md#A", "other"]
    with pytest.raises(SchemaError) as caught:
        write_holes(frame, tmp_path / "h.tsv")
    assert caught.value.field == field
    assert "row 1" in str(caught.value)
    assert not (tmp_path / "h.tsv").exists()


def test_a_hole_given_twice_is_refused_until_merged(tmp_path: Path) -> None:
    base = Hole("q", "a.md", "A", "a.md#A", "BASE", 4, "ndcg@10", "rye?")
    new = dataclasses.replace(base, side="NEW", rank=2, measures="ndcg@10, mrr", question="")
    other = Hole("q", "b.md", "", "b.md", "NEW", 1, "mrr")
    with pytest.raises(SchemaError, match="merge_holes") as caught:
        write_holes([base, new, other], tmp_path / "h.tsv")
    assert caught.value.field == "doc"
    write_holes(merge_holes([base, other, new]), tmp_path / "h.tsv")
    assert as_python(read_holes(tmp_path / "h.tsv"))[1] == [
        ["q", "b.md", "", "b.md", "NEW", 1, "mrr", ""],
        ["q", "a.md", "A", "a.md#A", "BASE, NEW", 2, "ndcg@10, mrr", "rye?"],
    ]
    assert merge_holes([]).empty
    assert np.array_equal(merge_holes([base])["rank"].to_numpy(), [4])
