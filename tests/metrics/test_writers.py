"""askkit.metrics: run and qrels files that never pair a value with another row's,
never merge two ids, and input files that are regular files or a clear error."""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from askkit.errors import SchemaError
from askkit.frame import sources_frame
from askkit.metrics import evaluate, ranked_run, read_qrels, read_run, write_qrels, write_run
from askkit.metrics.queries import read_queries
from tests.conftest import DATA


def run_rows(path: Path, **read: bool) -> set[tuple[str, str, int, float]]:
    """A run file's (query, document, rank, score) rows, as read back."""
    back = read_run(path, **read)
    return set(
        zip(
            back["turn_id"].tolist(),
            back["doc"].tolist(),
            back["rank"].tolist(),
            back["score"].tolist(),
            strict=True,
        )
    )


def ranked_rows(run: pd.DataFrame, **options: str) -> set[tuple[str, str, int, float]]:
    """What evaluate ranks: each (query, document) with its rank and score."""
    ranked = ranked_run(run, **options)  # type: ignore[arg-type]
    return set(
        zip(
            ranked["query_id"].tolist(),
            ranked["doc"].tolist(),
            ranked["rank"].tolist(),
            ranked["score"].tolist(),
            strict=True,
        )
    )


# --------------------------------------------------------------------------- write_run


def test_write_run_keeps_each_document_with_its_own_rank_and_score(tmp_path: Path) -> None:
    """Rows out of rank order: b.md was written with a.md's rank 4 and score 1.0."""
    run = pd.DataFrame(
        {
            "turn_id": ["q1"] * 4,
            "path": ["a.md", "b.md", "c.md", "d.md"],
            "score": [1.0, 4.0, 3.0, 2.0],
        }
    )
    target = tmp_path / "r.trec"
    write_run(run, target)
    assert target.read_text(encoding="utf-8").splitlines() == [
        "q1 Q0 b.md 1 4.0 askkit",
        "q1 Q0 c.md 2 3.0 askkit",
        "q1 Q0 d.md 3 2.0 askkit",
        "q1 Q0 a.md 4 1.0 askkit",
    ]


def test_write_run_keeps_ranks_with_ties_duplicates_and_unsorted_queries(tmp_path: Path) -> None:
    """Tied scores (trec_eval's order sorts them), a duplicate chunk, queries out of
    sorted order and a frame labelled in no particular order: every line keeps its
    own document's rank and score, and nothing is written as ``nan``."""
    run = pd.DataFrame(
        {
            "turn_id": ["q2", "q1", "q2", "q1", "q1", "q2"],
            "path": ["x.md", "a.md", "y.md", "b.md", "a.md", "z.md"],
            "score": [1.0, 2.0, 1.0, 2.0, 0.5, 3.0],
        },
        index=[7, 3, 3, 10, 0, 1],
    )
    target = tmp_path / "r.trec"
    write_run(run, target, tag="t")
    assert target.read_text(encoding="utf-8").splitlines() == [
        "q1 Q0 b.md 1 2.0 t",
        "q1 Q0 a.md 2 2.0 t",
        "q2 Q0 z.md 1 3.0 t",
        "q2 Q0 y.md 2 1.0 t",
        "q2 Q0 x.md 3 1.0 t",
    ]
    assert run_rows(target) == ranked_rows(run)


@pytest.mark.parametrize("level", ["note", "section"])
def test_the_documented_turn_log_run_reads_back_as_evaluate_ranks_it(
    tmp_path: Path, level: str
) -> None:
    """docs/metrics.md's example: ``write_run(sources_frame("data/turns.jsonl"), ...)``
    wrote ``nan`` lines and scores from other queries, and read_run failed on line 2."""
    frame = sources_frame(DATA / "turns.jsonl")
    target = tmp_path / "run.trec"
    write_run(frame, target, level=level, tag="sample")  # type: ignore[arg-type]
    assert "nan" not in target.read_text(encoding="utf-8")
    assert run_rows(target, decode=True) == ranked_rows(frame, level=level)
    ranked = ranked_run(frame, level=level)  # type: ignore[arg-type]
    qrels = pd.DataFrame(
        {
            "query_id": ranked["query_id"],
            "path": ranked["doc"],
            "doc": ranked["doc"],
            "grade": np.arange(len(ranked)) % 4,
        }
    )
    measures = ["ndcg@10", "mrr", "map"]
    from_file = evaluate(read_run(target, decode=True), qrels, measures, level=level)  # type: ignore[arg-type]
    from_frame = evaluate(frame, qrels, measures, level=level)  # type: ignore[arg-type]
    pd.testing.assert_frame_equal(from_file.per_query, from_frame.per_query)


def test_write_run_refuses_a_query_id_trec_readers_would_skip(tmp_path: Path) -> None:
    """A query id starting with ``#`` is a comment to TREC readers; an empty one
    shifts the line's fields: the run is refused and no file is written."""
    target = tmp_path / "r.trec"
    for qid in ("#q1", ""):
        run = pd.DataFrame({"turn_id": ["q0", qid], "path": ["a.md", "b.md"], "score": [1.0, 2.0]})
        with pytest.raises(SchemaError) as info:
            write_run(run, target)
        assert (info.value.field, info.value.value) == ("query_id", qid)
        assert not target.exists()


def test_write_run_names_a_value_that_is_not_text(tmp_path: Path) -> None:
    path = pd.Series(["caf\udce9.md"], dtype=object)  # an undecodable file name
    run = pd.DataFrame({"turn_id": ["q1"], "path": path, "score": [1.0]})
    with pytest.raises(SchemaError, match="not valid Unicode") as info:
        write_run(run, tmp_path / "r.trec")
    assert info.value.value == "caf\udce9.md"
    assert not (tmp_path / "r.trec").exists()


# --------------------------------------------------------------------------- ids


def test_two_distinct_ids_are_never_written_as_one_trec_id(tmp_path: Path) -> None:
    """``a b.md`` is written ``a%20b.md``; a literal ``a%20b.md`` beside it would read
    back as the same document (grades 0 and 3 merged, evaluate taking the 3): the
    file is refused, naming both ids, and an existing file is left as it was."""
    qrels = pd.DataFrame(
        {"query_id": ["q1", "q1"], "path": ["a b.md", "a%20b.md"], "grade": [0, 3]}
    )
    target = tmp_path / "qrels.txt"
    target.write_bytes(b"q0 0 keep.md 1\n")
    with pytest.raises(SchemaError, match=re.escape("both be written 'a%20b.md'")) as info:
        write_qrels(qrels, target, format="trec")
    assert (info.value.field, info.value.value) == ("doc", "a%20b.md")
    assert "'a b.md'" in info.value.message
    assert target.read_bytes() == b"q0 0 keep.md 1\n"
    run = pd.DataFrame(
        {"turn_id": ["q1", "q1"], "path": ["a b.md", "a%20b.md"], "score": [2.0, 1.0]}
    )
    with pytest.raises(SchemaError, match=re.escape("both be written 'a%20b.md'")):
        write_run(run, tmp_path / "run.txt")
    assert not (tmp_path / "run.txt").exists()
    query_ids = pd.DataFrame({"turn_id": ["q 1", "q%201"], "path": ["a.md", "a.md"], "score": 1.0})
    with pytest.raises(SchemaError, match="both be written 'q%201'") as info:
        write_run(query_ids, tmp_path / "run.txt")
    assert info.value.field == "query_id"


def test_an_id_that_would_decode_to_another_is_refused_beside_encoded_ids(tmp_path: Path) -> None:
    """In a file that percent-encodes an id, a raw ``%25`` or ``%20`` could not be told
    from an encoded one: refused, so that every file reads back exactly."""
    qrels = pd.DataFrame(
        {"query_id": ["q1", "q1"], "path": ["a b.md", "50%25.md"], "grade": [1, 2]}
    )
    with pytest.raises(SchemaError, match=re.escape("would read back as '50%.md'")) as info:
        write_qrels(qrels, tmp_path / "q.txt", format="trec")
    assert (info.value.field, info.value.value) == ("doc", "50%25.md")
    # alone, with no id encoded, it is written and read as it is
    write_qrels(qrels.iloc[[1]], tmp_path / "q.txt", format="trec")
    assert read_qrels(tmp_path / "q.txt")["doc"].tolist() == ["50%25.md"]


def test_a_file_askkit_writes_reads_back_to_the_ids_it_was_written_from(tmp_path: Path) -> None:
    """Section ids hold spaces, so the file percent-encodes them (``%`` too); an id
    without whitespace is written as it is. ``decode=True`` reads back exactly the
    ids written, the default the file's own."""
    qrels = pd.DataFrame(
        {
            "query_id": ["q 1", "q2", "q2"],
            "path": ["a.md", "50%.md", "c.md"],
            "heading": ["Bake log", "", "Tab\there"],
            "grade": [2, 0, 3],
        }
    )
    target = tmp_path / "qrels.txt"
    write_qrels(qrels, target, format="trec")
    assert target.read_text(encoding="utf-8").splitlines() == [
        "q%201 0 a.md#Bake%20log 2",
        "q2 0 50%.md 0",
        "q2 0 c.md#Tab%09here 3",
    ]
    exact = read_qrels(target, decode=True)
    assert exact["query_id"].tolist() == ["q 1", "q2", "q2"]
    assert exact["doc"].tolist() == ["a.md#Bake log", "50%.md", "c.md#Tab\there"]
    assert read_qrels(target)["doc"].tolist() == ["a.md#Bake%20log", "50%.md", "c.md#Tab%09here"]
    run = pd.DataFrame(
        {"turn_id": ["q 1", "q2"], "doc": ["a.md#Bake log", "50%.md"], "score": [1.0, 2.0]}
    )
    write_run(run, tmp_path / "run.txt")
    back = read_run(tmp_path / "run.txt", decode=True)
    assert back[["turn_id", "doc"]].values.tolist() == [["q 1", "a.md#Bake log"], ["q2", "50%.md"]]


def test_collection_ids_are_written_and_read_as_they_are(tmp_path: Path) -> None:
    """No id holds whitespace: nothing is encoded, a URL's ``%20`` included."""
    ids = ["FT911-1", "http://example.org/A?b=1&c=%20", "urn:isbn:0451450523", "d#4_1"]
    run = pd.DataFrame({"turn_id": "Q:1", "doc": ids, "score": [4.0, 3.0, 2.0, 1.0]})
    write_run(run, tmp_path / "run.txt")
    assert [line.split(" ")[2] for line in (tmp_path / "run.txt").read_text().splitlines()] == ids
    assert read_run(tmp_path / "run.txt")["doc"].tolist() == ids
    write_qrels(pd.DataFrame({"query_id": "Q:1", "path": ids, "grade": 1}), tmp_path / "q.txt",
                format="trec")  # fmt: skip
    assert read_qrels(tmp_path / "q.txt")["doc"].tolist() == ids


def test_a_leading_byte_order_mark_stays_in_the_first_id_on_both_readers(tmp_path: Path) -> None:
    """pyarrow's CSV reader (the clean path) dropped a leading U+FEFF that the general
    path (and trec_eval) keep in the first query id: a query id written with one lost
    it, and the two paths read one file two ways."""
    run = pd.DataFrame({"turn_id": "\ufeffq1", "path": ["a.md", "b.md"], "score": [2.0, 1.0]})
    write_run(run, tmp_path / "clean.trec")
    (tmp_path / "padded.trec").write_text(
        (tmp_path / "clean.trec").read_text(encoding="utf-8").replace(" Q0", "  Q0"),
        encoding="utf-8",
    )
    for name in ("clean.trec", "padded.trec"):
        assert read_run(tmp_path / name)["turn_id"].tolist() == ["\ufeffq1", "\ufeffq1"]


# --------------------------------------------------------------------------- input files


def special_files(tmp_path: Path) -> list[tuple[str, str]]:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    return [
        (str(fifo), "a FIFO (named pipe)"),
        ("/dev/null", "a character device"),
        ("/dev/zero", "a character device"),
        (str(tmp_path), "a folder"),
    ]


def test_a_fifo_device_or_folder_given_as_queries_qrels_or_run_is_refused(tmp_path: Path) -> None:
    """Never blocks on a FIFO, never reads /dev/zero forever, never scores /dev/null
    as an empty file: a SchemaError naming the file and what it is."""
    readers = [
        ("queries", read_queries),
        ("qrels", read_qrels),
        ("qrels", lambda p: read_qrels(p, format="tsv")),
        ("qrels", lambda p: read_qrels(p, format="trec")),
        ("qrels", lambda p: read_qrels(p, strict=False)),
        ("run", read_run),
        ("run", lambda p: read_run(p, strict=False)),
    ]
    for path, kind in special_files(tmp_path):
        for what, reader in readers:
            with pytest.raises(SchemaError) as info:
                reader(path)
            assert info.value.file == path
            assert f"the {what} file is {kind}" in info.value.message or (
                kind == "a folder" and "a folder" in info.value.message
            )


def test_scores_of_a_run_file_match_its_lines(tmp_path: Path) -> None:
    """A score written with all its digits reads back as the same float (finite ones:
    an infinite score is refused, test_runs.py's hardening_39 tests)."""
    scores = np.array([0.1 + 0.2, 1e-300, 12345.678901234567, -0.0, np.finfo(np.float64).max])
    run = pd.DataFrame({"turn_id": "q", "path": [f"{i}.md" for i in range(5)], "score": scores})
    write_run(run, tmp_path / "r.trec")
    back = read_run(tmp_path / "r.trec")
    assert dict(zip(back["doc"], back["score"], strict=True)) == dict(
        zip(run["path"], scores, strict=True)
    )
