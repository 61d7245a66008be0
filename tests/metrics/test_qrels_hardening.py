"""askkit.metrics.qrels: whatever write_qrels writes, read_qrels reads back."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from askkit.errors import SchemaError
from askkit.metrics.ids import decode_id, qrels_doc_ids, trec_id
from askkit.metrics.qrels import read_qrels, write_qrels

#: What a TREC reader splits fields on, so what a TREC writer encodes.
_SPLIT = "[ \t\n\r\x0b\x0c]"

#: What a TSV or TREC line could trip on: separators, line ends, quotes, comments.
ODD = st.sampled_from(
    [*"\t\r\n\x1f\x0b\x0c\\\"'#% \x00\x85\u2028é", "\r\n", '""', "%20", "query_id"]
)
field = st.lists(st.one_of(ODD, st.text(max_size=3)), max_size=6).map("".join)
rows = st.lists(
    st.tuples(field.filter(bool), field.filter(bool), field, st.integers(-3, 3)), max_size=6
)


@settings(max_examples=max(10, settings().max_examples // 4))  # five files an example
@given(rows)
def test_qrels_fields_with_a_cr_tab_or_quote_round_trip(
    drawn: list[tuple[str, str, str, int]],
) -> None:
    """Hardening item 11: a query id, path or heading holding a TAB, CR, LF, U+001F,
    backslash, quotes or a leading ``#`` reads back exactly as written (TSV), and a
    bad row after such a field is still reported on its own line. TREC files read back
    as written (ids holding whitespace percent-encoded, as documented; ``decode=True``
    gives the ids themselves), or the writer refuses a file that would not: a query id
    starting with ``#``, or, beside an encoded id, an id holding a percent code."""
    reported = ("Top\x1fA\rB", "#a\\b.md", 'A\rB "x"', 2)  # the case of the report
    frame = pd.DataFrame([*drawn, reported], columns=["query_id", "path", "heading", "grade"])
    expected = read_qrels(frame)
    with tempfile.TemporaryDirectory() as folder:
        tsv = Path(folder) / "qrels.tsv"
        write_qrels(frame, tsv)
        pd.testing.assert_frame_equal(read_qrels(tsv), expected)
        # a bad grade appended after the odd fields is named on its own line
        with tsv.open("a", encoding="utf-8") as handle:
            handle.write("q\tz.md\t\tbad\n")
        with pytest.raises(SchemaError) as info:
            read_qrels(tsv)
        lines = tsv.read_bytes().replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
        assert (info.value.field, info.value.value) == ("grade", "bad")
        assert info.value.line is not None
        assert lines[info.value.line - 1] == b"q\tz.md\t\tbad"
        trec = Path(folder) / "qrels.txt"
        if expected["query_id"].str.startswith("#").any():
            with pytest.raises(SchemaError, match="comment") as info:
                write_qrels(frame, trec, format="trec")
            assert info.value.field == "query_id"
            assert str(info.value.value).startswith("#")
            return
        ids = pd.concat([expected["query_id"], qrels_doc_ids(expected, "section")])
        spaced = ids.str.contains(_SPLIT)
        raw = ids[~spaced.to_numpy()]
        if spaced.any() and (decode_id(raw) != raw).any():  # ambiguous once decoded
            with pytest.raises(SchemaError, match=r"percent-encode"):
                write_qrels(frame, trec, format="trec")
            return
        write_qrels(frame, trec, format="trec")
        back = read_qrels(trec)
        assert back["query_id"].tolist() == trec_id(expected["query_id"]).tolist()
        assert back["doc"].tolist() == trec_id(qrels_doc_ids(expected, "section")).tolist()
        assert back["grade"].tolist() == expected["grade"].tolist()
        decoded = read_qrels(trec, decode=True)
        assert decoded["query_id"].tolist() == expected["query_id"].tolist()
        assert decoded["doc"].tolist() == qrels_doc_ids(expected, "section").tolist()
        again = Path(folder) / "again.txt"
        write_qrels(back, again, format="trec")
        assert again.read_bytes() == trec.read_bytes()


HEADER = "query_id\tpath\theading\tgrade\n"


def test_a_qrels_row_with_extra_fields_is_refused_not_shifted(tmp_path: Path) -> None:
    """Hardening item 11: a row with more (or fewer) fields than the header is a
    :class:`SchemaError` naming file and line (strict) or a reported skip (lenient),
    never read with its first field as an index and the rest shifted; a line with
    absurdly many fields, row or header, is refused at once."""
    path = tmp_path / "qrels.tsv"
    path.write_text(
        HEADER + "q01\tprojects/sourdough.md\tFeeding schedule\t3\t1\n"
        "q02\tb.md\t\t2\nq03\tc.md\t1\nq04\td.md\tX\t1\n",
        encoding="utf-8",
    )
    with pytest.raises(SchemaError, match="5 fields where the header has 4") as info:
        read_qrels(path)
    assert (info.value.file, info.value.line, info.value.field) == (str(path), 2, "columns")
    loaded = read_qrels(path, strict=False)
    assert loaded.frame.values.tolist() == [["q02", "b.md", "", 2], ["q04", "d.md", "X", 1]]
    assert loaded.errors["line"].tolist() == [2, 4]
    assert loaded.errors["field"].tolist() == ["columns", "columns"]
    assert loaded.records == loaded.records_loaded + len(loaded.errors) == 4
    # the first bad line is raised, whichever kind of fault it has
    path.write_text(HEADER + "q01\ta.md\t\thigh\nq02\tb.md\t\t2\t\n", encoding="utf-8")
    with pytest.raises(SchemaError) as info:
        read_qrels(path)
    assert (info.value.line, info.value.field) == (2, "grade")
    path.write_text(HEADER + "q01\ta.md\t\t1\t\nq02\tb.md\t\thigh\n", encoding="utf-8")
    with pytest.raises(SchemaError) as info:
        read_qrels(path)
    assert (info.value.line, info.value.field) == (2, "columns")
    assert read_qrels(path, strict=False).errors["line"].tolist() == [2, 3]
    # 10^5 fields on a row, then on the header line: refused fast, naming the line
    many = "\t".join(["x"] * 100_000) + "\n"
    row = "q01\ta.md\tH\t3\n"
    for text, line in ((HEADER + row + many, 3), ("query_id\t" + many + row, 1)):
        path.write_text(text, encoding="utf-8")
        for strict in (True, False):
            started = time.perf_counter()
            if strict or line == 1:
                with pytest.raises(SchemaError) as info:
                    read_qrels(path, strict=strict)
                assert (info.value.line, info.value.field) == (line, "columns")
            else:
                loaded = read_qrels(path, strict=False)
                assert loaded.frame["query_id"].tolist() == ["q01"]
                assert loaded.errors["line"].tolist() == [line]
            assert time.perf_counter() - started < 2


def test_a_qrels_tsv_with_a_bom_reads_as_without(tmp_path: Path) -> None:
    """Hardening item 11: a UTF-8 byte order mark in front of a TSV header (as Excel
    writes one) is skipped when the format is sniffed and when the file is read, so
    the file reads exactly as it does without one, strict or lenient."""
    body = HEADER + "q01\tprojects/sourdough.md\tFeeding schedule\t3\nq02\tb.md\t\tbad\n"
    plain, marked = tmp_path / "plain.tsv", tmp_path / "marked.tsv"
    plain.write_bytes(body.encode("utf-8"))
    marked.write_bytes(b"\xef\xbb\xbf" + body.encode("utf-8"))
    for fmt in ("auto", "tsv"):
        want = read_qrels(plain, format=fmt, strict=False)  # type: ignore[arg-type]
        got = read_qrels(marked, format=fmt, strict=False)  # type: ignore[arg-type]
        pd.testing.assert_frame_equal(got.frame, want.frame)
        assert got.frame.iloc[0].tolist() == ["q01", "projects/sourdough.md", "Feeding schedule", 3]
        assert got.errors["line"].tolist() == want.errors["line"].tolist() == [3]
        assert got.records == want.records == 2
        with pytest.raises(SchemaError) as info:
            read_qrels(marked, format=fmt)  # type: ignore[arg-type]
        assert (info.value.line, info.value.field, info.value.value) == (3, "grade", "bad")
