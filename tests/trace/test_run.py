"""Tracing questions through a real retriever over the bundled vault, and the funnel."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from askkit.dense.rerankers import apply_reranker
from askkit.errors import VaultError
from askkit.ranking import CutSettings, deduplicate_chunks, pool_of
from askkit.retrieve import LocalIndex
from askkit.trace import (
    FUNNEL_STAGES,
    funnel,
    trace,
    trace_pool,
    trace_pools,
    trace_pools_reference,
    trace_queries,
    vault_headings,
)
from askkit.vault import Vault

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture(scope="module")
def index() -> LocalIndex:
    return LocalIndex(DATA / "vault", cache_dir=False, progress=False)


@pytest.fixture(scope="module")
def traced(index: LocalIndex) -> pd.DataFrame:
    return trace_queries(index, DATA / "queries.tsv", DATA / "qrels.tsv", vault=DATA / "vault")


def stopped(frame: pd.DataFrame, query_id: str, section: str) -> pd.Series:
    rows = frame[(frame["query_id"] == query_id) & (frame["section"] == section) & frame["stopped"]]
    assert len(rows) == 1
    return rows.iloc[0]


def test_the_bundled_questions_lose_sections_at_the_pool_and_the_cut(traced: pd.DataFrame) -> None:
    evening = stopped(traced, "q01", "journal/2026-01-12.md#Evening")
    assert (evening["stage"], evening["rank"]) == ("cut", 25)
    assert evening["why"].startswith("Answer (score-range): cut: normalised 0.32 < cutoff 0.40")
    missing = stopped(traced, "q04", "journal/2026-04-21.md#2026-04-21")
    assert missing["stage"] == "pool"
    assert "chunks the index ranks for this question" in missing["why"]
    kept = stopped(traced, "q01", "projects/sourdough.md#Feeding schedule")
    assert (kept["stage"], kept["ordinal"]) == ("context", 1)


def test_the_funnel_of_the_bundled_questions(traced: pd.DataFrame) -> None:
    table = funnel(traced)
    total = table.loc["total"]
    assert total["judged"] == 104
    assert total["judged"] >= total["pool"] >= total["cut"] >= total["context"]
    assert total["lost"] == total["judged"] - total["context"]
    assert "cited" not in table.columns
    assert (table.drop(index="total").sum() == total).all()


def test_a_heading_renamed_since_judging_stops_at_sectioned(
    tmp_path: Path, index: LocalIndex
) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(DATA / "vault", vault)
    note = vault / "projects" / "sourdough.md"
    note.write_text(note.read_text().replace("Feeding schedule", "Feeding"))
    assert "Feeding" in vault_headings(vault)["projects/sourdough.md"]
    question = "What ratio do I feed my sourdough starter at room temperature?"
    frame = trace(question, index, [("projects/sourdough.md", "Feeding schedule")], vault=vault)
    row = frame[frame["stopped"]].iloc[0]
    assert (row["stage"], row["passed"]) == ("sectioned", False)


def _with_unreadable_notes(tmp_path: Path) -> Path:
    """The bundled vault and three notes it cannot read: invalid UTF-8 twice, one over the cap."""
    vault = tmp_path / "vault"
    shutil.copytree(DATA / "vault", vault)
    (vault / "aaa-broken.md").write_bytes(b"# Broken\n\xff\xfe sourdough\n")  # listed first
    (vault / "judged.md").write_bytes(b"# Judged\n## Part\n\xff starter\n")
    with (vault / "big.md").open("wb") as big:  # sparse: over the 16 MiB cap at no cost
        big.write(b"# Big\n")
        big.truncate(17 * 1024 * 1024)
    return vault


def test_hardening_39_7_trace_queries_reads_only_the_judged_notes(
    tmp_path: Path, index: LocalIndex
) -> None:
    """An unreadable note no judgment names leaves the trace as it was; a judged one stops
    at sectioned, saying which file and why; the other sections are traced as before."""
    vault = _with_unreadable_notes(tmp_path)
    plain = trace_queries(index, DATA / "queries.tsv", DATA / "qrels.tsv", vault=vault)
    assert funnel(plain).loc["total", "sectioned"] == 104
    qrels = pd.concat(
        [
            pd.read_csv(DATA / "qrels.tsv", sep="\t", keep_default_na=False),
            pd.DataFrame(
                {
                    "query_id": ["q01", "q01"],
                    "path": ["judged.md", "big.md"],
                    "heading": ["Part", ""],
                    "grade": [1, 1],
                }
            ),
        ],
        ignore_index=True,
    )
    frame = trace_queries(index, DATA / "queries.tsv", qrels, vault=vault)
    judged = stopped(frame, "q01", "judged.md#Part")
    assert (judged["stage"], judged["passed"]) == ("sectioned", False)
    assert judged["why"].startswith("judged.md cannot be read from the vault: ")
    assert "judged.md: not valid UTF-8 at byte 17" in judged["why"]
    big = stopped(frame, "q01", "big.md")
    assert (big["stage"], big["passed"]) == ("sectioned", False)
    assert "big.md: 17825792 bytes (17.0 MiB) is over max_note_bytes=16777216" in big["why"]
    assert funnel(frame).loc["total", "sectioned"] == 104
    one = trace(
        "How often do I feed the starter?", index, [("judged.md", "Part"), "big.md"], vault=vault
    )
    assert one[one["stopped"]]["stage"].astype(str).tolist() == ["sectioned", "sectioned"]


def test_hardening_39_7_vault_headings_reads_only_the_notes_asked_for(tmp_path: Path) -> None:
    """``paths=`` reads those notes alone; an unreadable one asked for still raises (the
    strict function), and :func:`read_headings` gives its reason instead."""
    from askkit.trace import read_headings

    vault = _with_unreadable_notes(tmp_path)
    asked = ["projects/sourdough.md", "missing.md"]
    assert vault_headings(vault, paths=asked).keys() == {"projects/sourdough.md"}
    with pytest.raises(VaultError, match=r"judged\.md: not valid UTF-8"):
        vault_headings(vault, paths=["judged.md"])
    small = Vault(vault, max_note_bytes=64)  # the vault's own cap holds
    read = read_headings(small, ["judged.md", "projects/sourdough.md", "garden/herbs.md", "x.md"])
    assert read.headings == {}
    assert read.unreadable.keys() == {"judged.md", "projects/sourdough.md", "garden/herbs.md"}
    assert "not valid UTF-8" in read.unreadable["judged.md"]
    assert "is over max_note_bytes=64" in read.unreadable["projects/sourdough.md"]
    listed = Vault(vault)
    assert "garden/herbs.md" in {str(p) for p in listed.notes()}
    (vault / "garden" / "herbs.md").unlink()  # gone since the vault was listed
    gone = read_headings(listed, ["garden/herbs.md", "garden/compost.md"])
    assert gone.headings.keys() == {"garden/compost.md"}
    assert "herbs.md' does not exist" in gone.unreadable["garden/herbs.md"]


class Reversed:
    """A reranker that scores later chunks higher (raw logits, as a cross-encoder's)."""

    def score(self, query: str, documents: Sequence[str]) -> list[tuple[int, float]]:
        return [(i, float(i)) for i in range(len(documents))]


class Broken:
    def score(self, query: str, documents: Sequence[str]) -> list[tuple[int, float]]:
        raise ConnectionError("the reranker is down")


def test_a_reranker_moves_sections_and_a_broken_one_keeps_the_vector_order(
    index: LocalIndex,
) -> None:
    question = "What ratio do I feed my sourdough starter at room temperature?"
    section = [("projects/sourdough.md", "Feeding schedule")]
    moved = trace(question, index, section, reranker=Reversed())
    rerank = moved[moved["stage"] == "rerank"].iloc[0]
    assert rerank["rank_before"] == 1
    assert rerank["rank"] > 1
    assert "after sanitising" in rerank["why"]
    kept = trace(question, index, section, reranker=Broken())
    assert "the reranker call failed" in kept[kept["stage"] == "rerank"].iloc[0]["why"]


class SmallLogits:
    """A cross-encoder whose raw logits happen to lie in 0..1: only kimun's adapter
    (the sigmoid of each) gives the scores the server reranks by."""

    logits = True

    def score(self, query: str, documents: Sequence[str]) -> list[tuple[int, float]]:
        return [(i, 1.0 / (i + 2)) for i in range(len(documents))]


def test_a_cross_encoders_logits_go_through_kimuns_adapter_as_in_a_dense_pool(
    index: LocalIndex,
) -> None:
    question = "What ratio do I feed my sourdough starter at room temperature?"
    section = [("projects/sourdough.md", "Feeding schedule")]
    frame = trace(question, index, section, reranker=SmallLogits())
    row = frame[frame["stage"] == "rerank"].iloc[0]
    served = apply_reranker(SmallLogits(), question, deduplicate_chunks(index.pool(question)))
    chunk = next(  # the section's best chunk after reranking
        c
        for c in served.pool
        if c.path == "projects/sourdough.md" and c.title.endswith("Feeding schedule")
    )
    assert row["score"] == chunk.similarity_score  # the sigmoid of the logit, as served
    assert row["rank"] == served.pool.index(chunk) + 1
    assert 0.5 < row["score"] < 1.0


def test_answers_add_the_cited_stage_to_the_funnel(index: LocalIndex) -> None:
    frame = trace_queries(
        index, DATA / "queries.tsv", DATA / "qrels.tsv", answers={"q01": "Feed 1:5:5 [1]."}
    )
    table = funnel(frame)
    assert table.loc["q01", "cited"] == 1
    assert table.loc["q02", "cited"] == 0


@st.composite
def many(draw: st.DrawFn) -> pd.DataFrame:
    frames = []
    for q in range(draw(st.integers(1, 4))):
        n = draw(st.integers(0, 15))
        scores = sorted(draw(st.lists(st.integers(0, 20), min_size=n, max_size=n)), reverse=True)
        paths = draw(st.lists(st.sampled_from(["/a.md", "/b.md", "/c.md"]), min_size=n, max_size=n))
        pool = pool_of([s / 20 for s in scores], paths)
        wanted = draw(
            st.lists(st.sampled_from(["/a.md", "/b.md", "/z.md"]), min_size=1, max_size=3)
        )
        answer = draw(st.none() | st.just("[1] [2]"))
        frames.append(trace_pool(pool, wanted, CutSettings(), query_id=f"q{q}", answer=answer))
    return pd.concat(frames, ignore_index=True)


@given(many())
def test_the_funnel_never_grows_and_every_section_ends_once(frame: pd.DataFrame) -> None:
    table = funnel(frame)
    stages = [s for s in FUNNEL_STAGES if s in table.columns]
    values = table[stages].to_numpy()
    assert (values[:, 1:] <= values[:, :-1]).all()
    sections = frame.groupby(["query_id", "section"]).ngroups
    assert table.loc["total", "judged"] == sections
    assert frame["stopped"].sum() == sections


def test_the_columnar_funnel_equals_the_per_query_one(index: LocalIndex) -> None:
    pools = index.pools(DATA / "queries.tsv", progress=False)
    fast = funnel(trace_pools(pools, DATA / "qrels.tsv"))
    slow = funnel(trace_pools_reference(pools, DATA / "qrels.tsv"))
    pd.testing.assert_frame_equal(fast, slow)
    assert fast.loc["total", "judged"] == 104


def test_a_saved_answer_job_traces_its_context_citations_and_dangling_ones() -> None:
    from askkit.trace import trace_log

    qrels = pd.DataFrame(
        {
            "query_id": ["answer_job"] * 3,
            "path": ["projects/sourdough.md", "journal/2026-03-29.md", "garden/herbs.md"],
            "heading": ["Feeding schedule", "", ""],
            "grade": [3, 1, 2],
        }
    )
    frame = trace_log(DATA / "answer_job.json", qrels)
    stops = frame[frame["stopped"]].set_index("section")
    feeding = stops.loc["projects/sourdough.md#Feeding schedule"]
    assert (feeding["stage"], feeding["passed"], feeding["ordinal"]) == ("cited", True, 1)
    journal = stops.loc["journal/2026-03-29.md"]
    assert (journal["stage"], journal["passed"], journal["ordinal"]) == ("cited", False, 6)
    assert journal["why"] == (
        "in the context as [6] but the answer cites [1], [2], [3], [4], [7]; "
        "dangling citation [7] matches no source of the 5-chunk context"
    )
    herbs = stops.loc["garden/herbs.md"]
    assert herbs["stage"] == "pool"
    assert herbs["why"].startswith("not among the answer's 5 logged sources")
    assert funnel(frame).loc["total", "cited"] == 1


class QueryVector:
    """An embedder for one stored query vector (the store's chunks are already embedded)."""

    name = "test:query"
    fingerprint = "test:query:8"
    dimension = 8

    def __init__(self, vector: np.ndarray) -> None:
        self.vector = vector

    def embed_documents(
        self, chunks: Sequence[tuple[str, str]], *, progress: bool | None = None
    ) -> np.ndarray:
        raise AssertionError("a store retriever never embeds documents")

    def embed_query(self, query: str) -> np.ndarray:
        return self.vector


def test_a_kimun_store_shows_folded_chunks_and_the_rank_beyond_the_pool(tmp_path: Path) -> None:
    from askkit.dense import StoreRetriever
    from askkit.testing.stores import random_store_rows, write_kimun_sqlite

    rows, vectors = random_store_rows(120, 8, seed=3)
    query = vectors[0]
    far = int(np.argmin(vectors @ query))  # the stored chunk scoring worst: outside the 80
    doubled = [*rows, dict(rows[0])]  # the query's own chunk stored twice: kimun folds it
    write_kimun_sqlite(
        tmp_path / "store",
        {"v": (doubled, np.vstack([vectors, vectors[0]]))},
        fingerprint="test:query:8",
    )
    retriever = StoreRetriever(tmp_path / "store", "v", QueryVector(query))
    near = (rows[0]["path"], rows[0]["title"].split("\x1f")[-1])
    lost = (rows[far]["path"], rows[far]["title"].split("\x1f")[-1])
    frame = trace("q", retriever, [near, lost])
    dedup = frame[(frame["section"] == "#".join(near)) & (frame["stage"] == "dedup")]
    assert dedup["why"].iloc[0] == "1 identical chunk folded into the one at rank 1"
    out = frame[(frame["section"] == "#".join(lost)) & frame["stopped"]].iloc[0]
    assert out["stage"] == "pool"
    assert out["rank"] > 80
    assert "of 121 over the whole index" in out["why"]  # every stored chunk, as the store ranks


def test_a_kimun_servers_answer_job_is_traced_to_its_citations() -> None:
    from askkit.testing import KimunTestServer
    from askkit.trace import trace_turn

    with KimunTestServer() as server, server.client() as client:
        turn = client.answer("How often do I feed the starter?")
    frame = trace_turn(turn, [("projects/sourdough.md", "Feeding schedule"), "garden/herbs.md"])
    stops = frame[frame["stopped"]].set_index("section")
    feeding = stops.loc["projects/sourdough.md#Feeding schedule"]
    assert (feeding["stage"], feeding["passed"], feeding["ordinal"]) == ("cited", True, 1)
    assert "dangling citation [7]" in feeding["why"]
    assert stops.loc["garden/herbs.md", "stage"] == "pool"


def _embed_vault(root: Path) -> Path:
    """A few notes named as the Obsidian help names them: capitals and spaces on disk."""
    folder = root / "Linking notes and files"
    folder.mkdir(parents=True)
    (folder / "Embed files.md").write_text(
        "---\ncssclasses:\n  - soft-embed\n---\n# Embed files\n"
        "## Embed a note in another note\nTo embed a note, write ![[Internal links]].\n"
        "## Embed a PDF in a note\nEmbed a PDF too.\n"
    )
    (folder / "Internal links.md").write_text("# Internal links\n## Link to a heading\nUse #.\n")
    (root / "Home.md").write_text("# Home\nWelcome.\n")
    return root


def test_issue40_2_trace_takes_paths_as_on_disk_and_names_the_closest_when_nothing_matches(
    tmp_path: Path,
) -> None:
    vault = _embed_vault(tmp_path)
    index = LocalIndex(vault, cache_dir=False, progress=False)
    wanted = [
        ("Linking notes and files/Embed files.md", "Embed a note in another note"),  # on disk
        ("linking notes and files/internal links.md", None),  # as kimun prints it
        ("Linking notes and files/Embed file.md", None),  # misspelt: no such note
        ("Linking notes and files/Embed files.md", "Embed a note"),  # no such heading
    ]
    frame = trace("embed a note", index, wanted, vault=vault)
    stops = frame[frame["stopped"]].set_index("section")
    found = "linking notes and files/embed files.md#Embed a note in another note"
    assert stops.loc[found, "stage"] != "sectioned"  # was "... is not in the vault"
    assert stops.loc["linking notes and files/internal links.md", "stage"] != "sectioned"
    missing = stops.loc["linking notes and files/embed file.md"]
    assert (missing["stage"], missing["passed"]) == ("sectioned", False)
    assert missing["why"] == (
        "linking notes and files/embed file.md is not in the vault (paths as kimun prints "
        "them); the closest notes: 'linking notes and files/embed files.md'"
    )
    heading = stops.loc["linking notes and files/embed files.md#Embed a note", "why"]
    assert heading.endswith(
        "the closest sections: 'linking notes and files/embed files.md#Embed a note in "
        "another note' or 'linking notes and files/embed files.md#Embed a PDF in a note'"
    )
    qrels = pd.DataFrame(
        {
            "query_id": ["q1"],
            "path": ["Linking notes and files/Embed files.md"],
            "heading": ["Embed a note in another note"],
            "grade": [2],
        }
    )
    judged = trace_queries(index, {"q1": "embed a note"}, qrels, vault=vault)
    assert judged[judged["stopped"]]["stage"].astype(str).tolist() == ["context"]


# -- issue 42, item 4: per question, the unjudged sections the cut kept above the relevant ----


def _judged(qrels: pd.DataFrame, query_id: str, section: str) -> bool:
    """Whether the qrels judge ``section`` (0 or more) for the query, at it or its note."""
    mine = qrels[(qrels["query_id"] == query_id) & (qrels["grade"] >= 0)]
    heading = mine["heading"].fillna("")
    ids = set(mine["path"].where(heading == "", mine["path"] + "#" + heading))
    return section in ids or section.split("#", 1)[0] in ids


def test_issue42_the_vault_trace_counts_each_questions_unjudged_sections(
    traced: pd.DataFrame,
) -> None:
    from askkit.trace import unjudged_per_query

    per_query = unjudged_per_query(traced)
    assert list(per_query.index) == list(funnel(traced).index[:-1])  # every query traced
    q03 = per_query.loc["q03"]
    assert (q03["unjudged_above"], q03["lowest_relevant"], len(q03["unjudged_kept"])) == (4, 6, 16)
    q01 = per_query.loc["q01"]  # its only kept relevant section is first: none above it
    assert (q01["unjudged_above"], q01["lowest_relevant"], len(q01["unjudged_kept"])) == (0, 1, 18)
    table = funnel(traced)
    assert table.loc["total", "unjudged_above"] == per_query["unjudged_above"].sum() == 153
    qrels = pd.read_csv(DATA / "qrels.tsv", sep="\t", dtype={"heading": str})
    for query_id, kept in per_query["unjudged_kept"].items():
        assert not any(_judged(qrels, str(query_id), s) for s in kept), query_id


@pytest.mark.parametrize(
    ("grade", "above"), [(-1, 4), (0, 3), (2, 3)], ids=["pooled", "judged", "relevant-higher"]
)
def test_issue42_a_grade_below_0_leaves_a_section_unjudged_in_the_vault_trace(
    index: LocalIndex, tmp_path: Path, grade: int, above: int
) -> None:
    """q03's best unjudged section, given a qrels line: at -1 it stays unjudged; at 0 it is
    judged; relevant above the lowest kept one, it is no longer counted either."""
    from askkit.trace import unjudged_per_query

    qrels = tmp_path / "qrels.tsv"
    line = f"q03\tprojects/sourdough.md\tSourdough\t{grade}\n"
    qrels.write_text((DATA / "qrels.tsv").read_text(encoding="utf-8") + line, encoding="utf-8")
    questions = {"q03": dict(pd.read_csv(DATA / "queries.tsv", sep="\t").values)["q03"]}
    frame = trace_queries(index, questions, qrels, vault=DATA / "vault")
    q03 = unjudged_per_query(frame).loc["q03"]
    assert q03["unjudged_above"] == above
    assert ("projects/sourdough.md#Sourdough" in q03["unjudged_kept"]) == (grade < 0)
    assert funnel(frame).loc["q03", "unjudged_above"] == above


def _log(path: Path, turns: dict[str, list[tuple[str, str]]]) -> Path:
    """A JSONL turn log: each turn's context, best first, as (path, heading) chunks."""
    import json

    lines = []
    for turn, chunks in turns.items():
        sources = [
            {
                "path": note,
                "title": f"Note\x1f{heading}",
                "date": None,
                "content": f"{note} {heading} {n}",
                "hash": str(n),
                "similarity_score": 1.0 - n / 10,
                "ordinal": n + 1,
            }
            for n, (note, heading) in enumerate(chunks)
        ]
        lines.append(json.dumps({"id": turn, "question": "?", "answer": "", "chunks": sources}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_issue42_a_turn_log_counts_the_unjudged_sections_of_each_context(tmp_path: Path) -> None:
    from askkit.trace import trace_log, unjudged_per_query

    log = _log(
        tmp_path / "turns.jsonl",
        {
            "t1": [("u.md", "A"), ("n.md", "B"), ("j.md", "C"), ("r.md", "D"), ("v.md", "E")],
            "t2": [("u.md", "A"), ("n.md", "B"), ("j.md", "C")],
            "t3": [("r.md", "D"), ("u.md", "A")],
        },
    )
    qrels = pd.DataFrame(
        {
            "query_id": ["t1", "t1", "t1", "t1", "t2", "t2", "t3"],
            "path": ["n.md", "j.md", "r.md", "gone.md", "n.md", "gone.md", "r.md"],
            "heading": ["B", "", "D", "", "B", "", "D"],
            "grade": [-1, 0, 2, 1, -1, 1, 1],
        }
    )
    frame = trace_log(log, qrels)
    per_query = unjudged_per_query(frame)
    assert per_query["unjudged_above"].to_dict() == {"t1": 2, "t2": 3, "t3": 0}
    assert per_query.loc["t1", "unjudged_kept"] == ("u.md#A", "n.md#B", "v.md#E")
    assert per_query.loc["t1", "lowest_relevant"] == 4
    assert pd.isna(per_query.loc["t2", "lowest_relevant"])  # no relevant section logged
    assert funnel(frame)["unjudged_above"].to_dict() == {"t1": 2, "t2": 3, "t3": 0, "total": 5}
    stops = frame[frame["stopped"]].set_index(["query_id", "section"])["why"]
    assert stops[("t1", "gone.md")].endswith(
        "; the cut kept 3 unjudged sections above it, 2 of them above the lowest relevant "
        "section it kept (rank 4): 'u.md#A', 'n.md#B' and 'v.md#E' (judge them next: they may "
        "be relevant)"
    )
    assert (
        "the cut kept 3 unjudged sections above it, and no relevant section"
        in stops[("t2", "gone.md")]
    )
