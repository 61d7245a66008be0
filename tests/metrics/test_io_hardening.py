"""askkit.metrics.io: whatever write_qrels writes, read_qrels reads back."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from askkit.errors import SchemaError
from askkit.metrics.io import qrels_doc_ids, read_qrels, trec_id, write_qrels

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
    as written (ids holding whitespace percent-encoded, as documented), or the writer
    refuses a line that would not: a query id starting with ``#``."""
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
        write_qrels(frame, trec, format="trec")
        back = read_qrels(trec)
        assert back["query_id"].tolist() == trec_id(expected["query_id"]).tolist()
        assert back["doc"].tolist() == trec_id(qrels_doc_ids(expected, "section")).tolist()
        assert back["grade"].tolist() == expected["grade"].tolist()
        again = Path(folder) / "again.txt"
        write_qrels(back, again, format="trec")
        assert again.read_bytes() == trec.read_bytes()
