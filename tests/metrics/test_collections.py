"""Test collections read from their classic layouts, and written as a vault with queries and
qrels: Cranfield itself (``../shared/corpora/cranfield``), hand-written TREC and BEIR
folders, bad input, the writer's folder rules, and a round trip whatever the ids."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st

from askkit import SchemaError, VaultPath
from askkit.errors import UsageError
from askkit.frame import sources_frame
from askkit.metrics import evaluate, read_qrels, read_queries
from askkit.metrics.collections import (
    MANIFEST,
    Collection,
    Document,
    Judgment,
    Query,
    detect_layout,
    document_id,
    note_path,
    read_collection,
    write_collection,
)
from askkit.retrieve import LocalIndex
from askkit.vault.chunking import chunk_note, note_headings, split_frontmatter
from tests.corpora import corpus
from tests.metrics.strategies import short_ids

# --------------------------------------------------------------------------- Cranfield


@pytest.fixture(scope="module")
def cranfield() -> Collection:
    return read_collection(corpus("cranfield"))


def test_issue41_8_cranfield_reads_its_documents_queries_and_judgments(
    cranfield: Collection,
) -> None:
    # the counts the collection's README gives: 1,400 documents, 225 queries, 1,837 judgments
    assert cranfield.layout == "smart"
    assert (len(cranfield.documents), len(cranfield.queries), len(cranfield.qrels)) == (
        1400,
        225,
        1837,
    )
    # its codes -1 (225), 1 (128), 2 (387), 3 (734), 4 (363), as ir_datasets reads them
    assert cranfield.grade_counts() == {0: 225, 1: 128, 2: 387, 3: 734, 4: 363}
    assert "-1 (no interest) -> 0" in cranfield.grades
    first = cranfield.documents[0]
    assert (first.id, first.title) == (
        "1",
        "experimental investigation of the aerodynamics of a wing in a slipstream .",
    )
    assert first.text.startswith("experimental investigation of the aerodynamics of a\nwing")
    assert first.fields == {"author": "brenckman,m.", "bib": "j. ae. scs. 25, 1958, 324."}
    # the judgments number the queries 1..225 in file order; their .I numbers skip
    assert [q.id for q in cranfield.queries] == [str(i) for i in range(1, 226)]
    assert cranfield.queries[2].text.startswith("what problems of heat conduction")  # .I 004
    assert any("in file order, not by their .I numbers" in n for n in cranfield.notes)
    repeated = next(n for n in cranfield.notes if "repeat a field" in n)
    assert "record 240, .A" in repeated
    assert "record 576, .W" in repeated
    assert any("README.md, SHA256SUMS" in n for n in cranfield.notes)  # not read, and said


def test_issue41_8_cranfield_grades_in_cleverdons_direction() -> None:
    cleverdon = read_collection(corpus("cranfield"), cranfield_grades="cleverdon")
    assert cleverdon.grade_counts() == {0: 225, 1: 363, 2: 734, 3: 387, 4: 128}
    assert "1 (a complete answer) -> 4" in cleverdon.grades


def test_issue41_8_cranfield_vault_scored_with_bm25_equals_pytrec_eval(
    cranfield: Collection, tmp_path: Path
) -> None:
    written = write_collection(cranfield, tmp_path / "cranfield")
    # note paths are the document ids the qrels use, exactly: 184 -> 184.md and back
    qrels = read_qrels(written.qrels)
    assert len(qrels) == 1837
    assert sorted((j.query_id, j.doc_id, j.grade) for j in cranfield.qrels) == sorted(
        zip(qrels["query_id"], map(document_id, qrels["path"]), qrels["grade"], strict=True)
    )
    queries = read_queries(written.queries)
    assert list(queries) == [q.id for q in cranfield.queries]
    index = LocalIndex(written.folder, cache_dir=False, progress=False)
    # documents 471 and 995 are empty (no title, no text): kimun indexes nothing of them
    assert any("2 document(s) have neither title nor text (471, 995)" in n for n in cranfield.notes)
    assert len(index.chunks["path"].unique()) == 1398
    turns = [
        {"id": qid, "question": text, "chunks": [c.to_dict() for c in index.search(text, k=80)]}
        for qid, text in queries.items()
    ]
    run = sources_frame(turns)
    ours = evaluate(run, qrels, ["ndcg@10", "map", "mrr"], level="note")
    judged: dict[str, dict[str, int]] = {}
    for qid, path, grade in zip(
        qrels["query_id"].tolist(), qrels["path"].tolist(), qrels["grade"].tolist(), strict=True
    ):
        judged.setdefault(qid, {})[path] = int(grade)
    scored: dict[str, dict[str, float]] = {}
    for qid, text in queries.items():
        scored[qid] = {c.path: c.similarity_score for c in index.search(text, k=80)}
    reference = pytrec_eval.RelevanceEvaluator(judged, {"ndcg_cut.10", "map", "recip_rank"})
    theirs = reference.evaluate(scored)
    for measure, name in (("ndcg@10", "ndcg_cut_10"), ("map", "map"), ("mrr", "recip_rank")):
        mean = sum(v[name] for v in theirs.values()) / len(theirs)
        assert ours.mean[measure] == pytest.approx(mean, abs=1e-9), measure
    # BM25 on the vault as written (each abstract's lines kept): about the benchmark's figures
    assert 0.30 < ours.mean["ndcg@10"] < 0.38
    assert 0.26 < ours.mean["map"] < 0.34


# --------------------------------------------------------------------------- TREC and BEIR


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def trec(tmp_path: Path) -> Path:
    root = tmp_path / "trec"
    write(
        root / "docs" / "ft" / "ft911",
        "<DOC>\n<DOCNO> FT911-1 </DOCNO>\n<PROFILE>_AN-BEOO7AAAFT</PROFILE>\n"
        "<HEADLINE>\nFT  14 MAY 91 / Rye &amp; wheat\n</HEADLINE>\n"
        "<TEXT>\nRye prices rose.\n\nWheat fell.\n</TEXT>\n</DOC>\n"
        "<DOC>\n<DOCNO>FT911-2</DOCNO>\n<TEXT>\n<P>\n# Not a heading\n</P>\n</TEXT>\n</DOC>\n",
    )
    write(
        root / "docs" / "la" / "la010189",
        "<DOC>\n<DOCNO> LA010189-0001 </DOCNO>\n<HEADLINE>\n<P>Sourdough</P>\n</HEADLINE>\n"
        "<TEXT>\n<P>\nFeed the starter.\n</P>\n<P>\nBake at dawn.\n</P>\n</TEXT>\n</DOC>\n",
    )
    write(
        root / "topics.301-302",
        "<top>\n<num> Number: 301\n<title> Grain prices\n\n<desc> Description:\nWhat moved "
        "grain prices?\n\n<narr> Narrative:\nA relevant document...\n</top>\n\n"
        "<top>\n<num> Number: 302\n<title> Topic: sourdough starter\n<desc> Description:\n"
        "How to feed it.\n</top>\n",
    )
    write(
        root / "qrels.301-302",
        "301 0 FT911-1 1\n301 0 FT911-2 0\n302 0 LA010189-0001 2\n302 0 FT911-9 1\n",
    )
    write(root / "README", "A small TREC collection, written for this test.\n")
    return root


def test_issue41_8_trec_sgml_documents_topics_and_qrels(trec: Path, tmp_path: Path) -> None:
    assert detect_layout(trec) == "trec"
    read = read_collection(trec)
    assert read.documents == (
        Document(
            "FT911-1",
            "FT 14 MAY 91 / Rye & wheat",
            "Rye prices rose.\n\nWheat fell.",
            {"profile": "_AN-BEOO7AAAFT"},
        ),
        Document("FT911-2", "", "# Not a heading"),
        Document("LA010189-0001", "Sourdough", "Feed the starter.\n\nBake at dawn."),
    )
    assert read.queries == (Query("301", "Grain prices"), Query("302", "sourdough starter"))
    assert read.qrels[-1] == Judgment("302", "FT911-9", 1)
    assert any("FT911-9" in n and "lacks" in n for n in read.notes)  # judged, not in the corpus
    assert any("not read" in n and "README" in n for n in read.notes)
    desc = read_collection(trec, topic_field="desc")
    assert desc.queries[0] == Query("301", "What moved grain prices?")
    written = write_collection(read, tmp_path / "vault")
    assert sorted(p.name for p in written.folder.glob("*.md")) == [
        "%46%54911-1.md",
        "%46%54911-2.md",
        "%4c%41010189-0001.md",
    ]
    note = (written.folder / note_path("FT911-2")).read_text()
    assert note == "\\# Not a heading\n"  # no title: no heading, and none made by accident
    assert note_headings(note) == []
    back = read_collection(written.folder)
    assert (back.documents, back.queries, back.qrels) == (read.documents, read.queries, read.qrels)


@pytest.fixture
def beir(tmp_path: Path) -> Path:
    root = tmp_path / "scifact"
    corpus_lines = [
        {"_id": "4983", "title": "Microstructural development", "text": "Alterations of the "
         "architecture...", "metadata": {"year": 2001}},
        {"_id": "MED-10", "title": "", "text": "Statins and\ncancer"},
        {"_id": 5836, "title": "An int id", "text": "BEIR ids are strings; some are not"},
    ]  # fmt: skip
    write(root / "corpus.jsonl", "".join(json.dumps(r) + "\n" for r in corpus_lines))
    write(
        root / "queries.jsonl",
        '{"_id": "1", "text": "0-dimensional biomaterials", "metadata": {}}\n'
        '{"_id": "3", "text": "statins\\tand cancer"}\n'
        '{"_id": "9", "text": "judged in dev only"}\n',
    )
    write(root / "qrels" / "test.tsv", "query-id\tcorpus-id\tscore\n1\t4983\t1\n3\tMED-10\t2\n")
    write(root / "qrels" / "dev.tsv", "query-id\tcorpus-id\tscore\n9\t5836\t1\n")
    return root


def test_issue41_8_beir_corpus_queries_and_a_split(beir: Path, tmp_path: Path) -> None:
    assert detect_layout(beir) == "beir"
    read = read_collection(beir)  # the test split by default
    assert read.documents == (
        Document(
            "4983",
            "Microstructural development",
            "Alterations of the architecture...",
            {"metadata": '{"year": 2001}'},
        ),
        Document("MED-10", "", "Statins and\ncancer"),
        Document("5836", "An int id", "BEIR ids are strings; some are not"),
    )
    # the queries the split judges, as BEIR's loader keeps them; a tab made a space
    assert read.queries == (
        Query("1", "0-dimensional biomaterials"),
        Query("3", "statins and cancer"),
    )
    assert read.qrels == (Judgment("1", "4983", 1), Judgment("3", "MED-10", 2))
    assert any("2 of 3" in n for n in read.notes)
    assert any("tabs or line breaks" in n for n in read.notes)
    dev = read_collection(beir, split="dev")
    assert dev.queries == (Query("9", "judged in dev only"),)
    written = write_collection(read, tmp_path / "vault")
    assert json.loads((written.folder / "fields.jsonl").read_text()) == {
        "id": "4983",
        "fields": {"metadata": '{"year": 2001}'},
    }
    back = read_collection(written.folder)
    assert (back.documents, back.queries, back.qrels) == (read.documents, read.queries, read.qrels)


# --------------------------------------------------------------------------- bad input


def _smart(root: Path, docs: str, qrels: str = "1 1 2\n") -> Path:
    write(root / "cran.all.1400", docs)
    write(root / "cran.qry", ".I 001\n.W\nwhat lift .\n")
    write(root / "cranqrel", qrels)
    return root


@pytest.mark.parametrize(
    ("name", "files", "file", "line", "field", "value"),
    [
        (
            "smart text before .I",
            {"cran.all.1400": "stray words\n.I 1\n.W\nlift .\n", "cran.qry": ".I 1\n.W\nq\n",
             "cranqrel": "1 1 2\n"},
            "cran.all.1400", 1, "line", "stray words",
        ),
        (
            "smart a document twice",
            {"cran.all.1400": ".I 1\n.W\na\n.I 01\n.W\nb\n", "cran.qry": ".I 1\n.W\nq\n",
             "cranqrel": "1 1 2\n"},
            "cran.all.1400", 4, ".I", "01",
        ),
        (
            "cranqrel code 5",
            {"cran.all.1400": ".I 1\n.W\na\n", "cran.qry": ".I 1\n.W\nq\n",
             "cranqrel": "1 1 2\n1 1 5\n"},
            "cranqrel", 2, "grade", "5",
        ),
        (
            "cranqrel a field short",
            {"cran.all.1400": ".I 1\n.W\na\n", "cran.qry": ".I 1\n.W\nq\n",
             "cranqrel": "1 1 2\n1 1\n"},
            "cranqrel", 2, "line", "1 1",
        ),
        (
            "trec doc without docno",
            {"d/a": "<DOC>\n<DOCNO>A</DOCNO>\n</DOC>\n\n<DOC>\n<TEXT>x</TEXT>\n</DOC>\n",
             "topics": "<top>\n<num> Number: 1\n<title> t\n</top>\n", "qrels": "1 0 A 1\n"},
            "d/a", 5, "DOCNO", [],
        ),
        (
            "trec doc never closed",
            {"d/a": "<DOC>\n<DOCNO>A</DOCNO>\n</DOC>\n<DOC>\n<DOCNO>B</DOCNO>\n",
             "topics": "<top>\n<num> Number: 1\n<title> t\n</top>\n", "qrels": "1 0 A 1\n"},
            "d/a", 4, "DOC", "<DOC>\n<DOCNO>B</DOCNO>",
        ),
        (
            "beir line not json",
            {"corpus.jsonl": '{"_id": "a", "text": "x"}\n{"_id": "b", "text": \n',
             "queries.jsonl": '{"_id": "1", "text": "q"}\n',
             "qrels/test.tsv": "query-id\tcorpus-id\tscore\n1\ta\t1\n"},
            "corpus.jsonl", 2, "line", '{"_id": "b", "text": ',
        ),
        (
            "beir record without _id",
            {"corpus.jsonl": '{"_id": "a", "text": "x"}\n\n{"title": "t"}\n',
             "queries.jsonl": '{"_id": "1", "text": "q"}\n',
             "qrels/test.tsv": "query-id\tcorpus-id\tscore\n1\ta\t1\n"},
            "corpus.jsonl", 3, "_id", None,
        ),
        (
            "beir qrels score not an integer",
            {"corpus.jsonl": '{"_id": "a", "text": "x"}\n',
             "queries.jsonl": '{"_id": "1", "text": "q"}\n',
             "qrels/test.tsv": "query-id\tcorpus-id\tscore\n1\ta\t0.5\n"},
            "qrels/test.tsv", 2, "score", "0.5",
        ),
    ],
)  # fmt: skip
def test_issue41_8_bad_input_names_file_line_field_and_value(
    tmp_path: Path,
    name: str,
    files: dict[str, str],
    file: str,
    line: int,
    field: str,
    value: object,
) -> None:
    root = tmp_path / "collection"
    for path, text in files.items():
        write(root / path, text)
    with pytest.raises(SchemaError) as caught:
        read_collection(root)
    error = caught.value
    assert (error.file, error.line, error.field, error.value) == (
        str(root / file),
        line,
        field,
        value,
    ), name


def test_issue41_8_a_folder_in_no_layout_is_refused(tmp_path: Path) -> None:
    write(tmp_path / "notes" / "a.md", "# A\n")
    with pytest.raises(SchemaError, match="not a test collection in a layout askkit reads"):
        read_collection(tmp_path / "notes")
    with pytest.raises(SchemaError, match="does not exist"):
        read_collection(tmp_path / "nowhere")


# --------------------------------------------------------------------------- the writer


def _small() -> Collection:
    return Collection(
        documents=(Document("1", "Lift", "Wing lift."), Document("2", "Drag", "Wing drag.")),
        queries=(Query("1", "what is lift"),),
        qrels=(Judgment("1", "1", 2), Judgment("1", "2", 0)),
    )


def test_issue41_8_writes_only_into_a_new_empty_or_its_own_folder(tmp_path: Path) -> None:
    user = write(tmp_path / "mine" / "todo.md", "# My note\n")
    with pytest.raises(UsageError, match="not a vault askkit wrote"):
        write_collection(_small(), user.parent)
    assert sorted(p.name for p in user.parent.iterdir()) == ["todo.md"]  # nothing written
    (tmp_path / "empty").mkdir()
    write_collection(_small(), tmp_path / "empty")
    written = write_collection(_small(), tmp_path / "new" / "vault")
    assert sorted(p.name for p in written.folder.iterdir()) == [
        "1.md",
        "2.md",
        MANIFEST,
        "qrels.tsv",
        "queries.tsv",
    ]
    # its own folder again: the user's file beside the notes stays; a gone document's note goes
    extra = write(written.folder / "my-notes.md", "# Mine\n")
    smaller = Collection(_small().documents[:1], _small().queries, _small().qrels[:1])
    again = write_collection(smaller, written.folder)
    assert (again.replaced, again.removed) == (3, 1)  # 1.md, queries.tsv, qrels.tsv; 2.md
    assert extra.read_text() == "# Mine\n"
    assert not (written.folder / "2.md").exists()
    assert read_collection(written.folder).documents == smaller.documents


def test_issue41_8_never_replaces_a_file_askkit_did_not_write(tmp_path: Path) -> None:
    written = write_collection(_small(), tmp_path / "vault")
    (written.folder / "2.md").unlink()
    write(written.folder / "3.md", "# The user's own note\n")
    bigger = Collection(
        (*_small().documents, Document("3", "Thrust", "Engines.")), _small().queries, _small().qrels
    )
    for force in (False, True):
        with pytest.raises(UsageError, match="a file askkit did not write"):
            write_collection(bigger, written.folder, force=force)
    assert (written.folder / "3.md").read_text() == "# The user's own note\n"


def test_issue41_8_an_edited_note_is_replaced_only_with_force(tmp_path: Path) -> None:
    written = write_collection(_small(), tmp_path / "vault")
    note = written.folder / "1.md"
    note.write_text("# Lift\n\nmy edit\n")
    with pytest.raises(UsageError, match="edited since askkit wrote it"):
        write_collection(_small(), written.folder)
    assert note.read_text() == "# Lift\n\nmy edit\n"
    write_collection(_small(), written.folder, force=True)
    assert note.read_text() == "# Lift\n\nWing lift.\n"


def test_issue41_8_a_write_stopped_half_way_leaves_a_folder_askkit_still_owns(
    tmp_path: Path,
) -> None:
    written = write_collection(_small(), tmp_path / "vault")
    record = json.loads(written.manifest.read_text())
    record["files"] = dict.fromkeys(record["files"])  # as the record is while writing
    written.manifest.write_text(json.dumps(record))
    (written.folder / "2.md").write_text("# Dr")  # cut short
    write_collection(_small(), written.folder)
    assert read_collection(written.folder).documents == _small().documents


@pytest.mark.parametrize(
    ("collection", "field"),
    [
        (Collection((Document("", "t", "x"),), (Query("1", "q"),), (Judgment("1", "", 1),)),
         "documents[0].id"),
        (Collection((Document("a", "t", "x"), Document("a", "u", "y")), (Query("1", "q"),),
                    (Judgment("1", "a", 1),)), "documents[1].id"),
        (Collection((Document("a", "t", "x"),), (Query("1", "two\nlines"),),
                    (Judgment("1", "a", 1),)), "queries[0].text"),
        (Collection((Document("a", "t", "x"),), (Query("1\t2", "q"),), (Judgment("1", "a", 1),)),
         "queries[0].id"),
        (Collection((Document("x" * 300, "t", "x"),), (Query("1", "q"),),
                    (Judgment("1", "a", 1),)), "documents[0].id"),
        (Collection((Document("a", "t", "x"),), (), (Judgment("1", "a", 1),)), None),
    ],
)  # fmt: skip
def test_issue41_8_a_collection_that_would_not_read_back_is_refused(
    tmp_path: Path, collection: Collection, field: str | None
) -> None:
    with pytest.raises(SchemaError) as caught:
        write_collection(collection, tmp_path / "vault")
    assert caught.value.field == field
    assert not (tmp_path / "vault").exists()


def test_issue41_8_markdown_in_a_document_makes_no_heading_list_or_link(tmp_path: Path) -> None:
    text = (
        "# Not a heading\nAlso not one\n===\n---\n1. no list\n- nor this\n    nor code\n"
        "[[no link]] <b>no html</b> *as written* &amp; \\ #tag\n\n```\nno fence\n"
    )
    collection = Collection(
        (Document("d", "Title # with *stars* #", text), Document("e", "", "---\ntitle: no\n---")),
        (Query("1", "q"),),
        (Judgment("1", "d", 1),),
    )
    written = write_collection(collection, tmp_path / "vault")
    note = (written.folder / "d.md").read_text()
    assert [h.text for h in note_headings(note)] == ["Title # with *stars* #"]
    sections = chunk_note(note)
    assert len(sections) == 1
    assert "[[no link]] <b>no html</b> *as written* &amp; \\" in sections[0].text
    front = (written.folder / "e.md").read_text()
    assert split_frontmatter(front)[0] is None
    assert note_headings(front) == []
    assert read_collection(written.folder).documents == collection.documents


def test_issue41_8_note_paths_are_the_ids_kimun_keeps() -> None:
    assert [note_path(i) for i in ("184", "FT911-1", "a/b", "Café", "con", ".hidden")] == [
        "184.md",
        "%46%54911-1.md",
        "a%2fb.md",
        "%43af%c3%a9.md",
        "%63on.md",
        "%2ehidden.md",
    ]
    with pytest.raises(SchemaError, match="not a note name askkit gives"):
        document_id("Notes.md")


# --------------------------------------------------------------------------- round trip

note_ids = short_ids.filter(bool)
query_ids = short_ids.filter(lambda s: bool(s) and not any(c in s for c in "\t\n\r"))
one_line = st.text().filter(lambda s: not any(c in s for c in "\t\n\r"))


@st.composite
def collections(draw: st.DrawFn) -> Collection:
    doc_ids = draw(st.lists(note_ids, min_size=1, max_size=5, unique=True))
    documents = tuple(
        Document(
            i,
            draw(st.text()),
            draw(st.text()),
            draw(st.dictionaries(st.text(max_size=5), st.text(max_size=10), max_size=2)),
        )
        for i in doc_ids
    )
    qids = draw(st.lists(query_ids, min_size=1, max_size=4, unique=True))
    queries = tuple(Query(q, draw(one_line)) for q in qids)
    qrels = tuple(
        draw(
            st.lists(
                st.builds(
                    Judgment,
                    st.one_of(st.sampled_from(qids), short_ids.filter(bool)),
                    st.one_of(st.sampled_from(doc_ids), note_ids),
                    st.integers(-2, 4),
                ),
                min_size=1,
                max_size=6,
            )
        )
    )
    return Collection(documents, queries, qrels)


@settings(max_examples=60)
@given(collections())
def test_issue41_8_what_is_written_reads_back_exactly(collection: Collection) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        written = write_collection(collection, Path(tmp) / "vault")
        back = read_collection(written.folder)
        assert back.documents == collection.documents
        assert back.queries == collection.queries
        assert back.qrels == collection.qrels
        assert read_queries(written.queries) == collection.query_texts()
        for doc in collection.documents:
            path = note_path(doc.id)
            assert str(VaultPath(path)) == path  # kimun keeps the name as it is
            with (written.folder / path).open(encoding="utf-8", newline="") as handle:
                note = handle.read()
            assert len(note_headings(note)) == (1 if doc.title else 0)
            assert split_frontmatter(note)[0] is None


@given(note_ids)
def test_issue41_8_a_document_id_and_its_note_path_map_both_ways(doc_id: str) -> None:
    path = note_path(doc_id)
    assert document_id(path) == doc_id
    assert str(VaultPath(path)) == path
    other = doc_id.swapcase()  # another id (but for ids without case): another note
    assert (note_path(other) == path) == (other == doc_id)
