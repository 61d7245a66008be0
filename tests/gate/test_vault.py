"""Gate sides retrieved on the spot: their runs, where a lost document was lost, provenance."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from askkit.errors import UsageError
from askkit.gate import gate, vault_hash, vault_side
from askkit.metrics import evaluate
from askkit.ranking import CutSettings, cut_len
from askkit.retrieve.local import LocalIndex
from askkit.testing.models import tiny_embedder
from tests.conftest import DATA

VAULT = DATA / "vault"
QUERIES = DATA / "queries.tsv"
QRELS = DATA / "qrels.tsv"


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """askkit's cache for each test: a side opens (and writes) its index there."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("ASKKIT_CACHE_DIR", str(folder))
    return folder


@pytest.fixture(scope="module")
def default_side() -> object:
    return vault_side(VAULT, QUERIES, progress=False, store=False)


@pytest.fixture(scope="module")
def fixed_toml(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("settings") / "server.toml"
    path.write_text('[server]\nport = 8080\n\n[reranker]\ncontext_cut = "fixed"\ntop_k = 3\n')
    return path


def test_the_side_is_the_context_the_cut_keeps(default_side: object) -> None:
    side = default_side
    frame = side.frame  # type: ignore[attr-defined]
    index = LocalIndex(VAULT, cache_dir=False, progress=False)
    text = "What ratio do I feed my sourdough starter at room temperature?"
    pool = index.pool(text)
    rows = frame[frame["turn_id"] == "q01"]
    assert len(rows) == cut_len(pool, CutSettings())
    assert rows["path"].tolist() == [c.path for c in pool[: len(rows)]]
    assert set(frame["turn_id"]) == {f"q{i:02d}" for i in range(1, 38)}


def test_a_tighter_cut_regresses_and_each_loss_is_put_on_the_cut(
    default_side: object, fixed_toml: Path
) -> None:
    new = vault_side(VAULT, QUERIES, settings=fixed_toml, progress=False)
    result = gate(default_side, new, QRELS)  # type: ignore[arg-type]
    assert result.exit_status == 1
    lost = [d for q in result.regressed_queries for d in q.lost]
    assert lost
    assert {d.stage for d in lost} == {"cut"}
    assert all("top_k 3" in d.detail and "the context keeps ranks 1-3" in d.detail for d in lost)
    assert all(d.new_rank is None for d in lost)
    sha = hashlib.sha256(fixed_toml.read_bytes()).hexdigest()
    assert result.new.provenance["settings_sha256"] == sha
    assert result.new.provenance["cut"] == "fixed top_k=3"
    assert result.base.provenance["settings"] == "kimun's defaults"
    assert result.base.provenance["vault_sha256"] == vault_hash(VAULT)
    assert "port" not in str(result.new.provenance)  # the file's other tables stay out
    assert "lost at the cut" in result.to_text()
    section = gate(default_side, new, QRELS, level="section")  # type: ignore[arg-type]
    details = [d.detail for q in section.regressed_queries for d in q.lost if d.stage == "cut"]
    assert details
    assert all("cut: rank" in d and "the context keeps ranks 1-3" in d for d in details)


def test_a_small_pool_puts_the_loss_on_the_pool(default_side: object) -> None:
    new = vault_side(
        VAULT,
        QUERIES,
        settings=CutSettings(strategy="fixed", top_k=80),
        pool_size=2,
        progress=False,
    )
    result = gate(default_side, new, QRELS)  # type: ignore[arg-type]
    lost = [d for q in result.regressed_queries for d in q.lost]
    assert lost
    pooled = [d for d in lost if d.stage == "pool"]
    assert pooled
    assert all("not in the candidate pool" in d.detail for d in pooled)
    assert all(d.stage in {"pool", "top k"} for d in lost)


def test_the_vault_hash_follows_the_notes(tmp_path: Path) -> None:
    copy = tmp_path / "vault"
    shutil.copytree(VAULT, copy)
    assert vault_hash(copy) == vault_hash(VAULT)
    note = copy / "projects" / "sourdough.md"
    note.write_text(note.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
    assert vault_hash(copy) != vault_hash(VAULT)


def test_a_dense_side_records_its_embedder_and_says_it_is_a_stand_in(
    tmp_path: Path, default_side: object
) -> None:
    texts = [p.read_text(encoding="utf-8") for p in VAULT.rglob("*.md")]
    embedder = tiny_embedder(tmp_path / "model", vocabulary_texts=texts, dim=32)
    side = vault_side(VAULT, QUERIES, embedder=embedder, progress=False)
    assert side.provenance["retriever"] == "dense (askkit.dense.DenseIndex)"
    assert side.provenance["embedder_fingerprint"] == embedder.fingerprint
    assert "stand-in" in side.provenance["embedder_note"]
    scored = evaluate(side.frame, QRELS, ["recall@10"])
    assert len(scored.per_query) == 37
    result = gate(default_side, side, QRELS)  # type: ignore[arg-type]
    assert "stand-in" in result.to_text()
    assert "stand-in" in result.to_markdown()


def test_bad_configurations_are_usage_errors(tmp_path: Path) -> None:
    from askkit.errors import SchemaError

    with pytest.raises(UsageError, match="no such folder"):
        vault_side(tmp_path / "none", QUERIES, progress=False)
    with pytest.raises(UsageError, match="pool_size"):
        vault_side(VAULT, QUERIES, pool_size=0, progress=False)
    bad = tmp_path / "server.toml"
    bad.write_text('[reranker]\ncontext_cut = "sideways"\n')
    with pytest.raises(SchemaError, match=r"server.toml.*reranker.context_cut"):
        vault_side(VAULT, QUERIES, settings=bad, progress=False)


def test_a_reranker_that_pushes_a_section_past_the_cut_takes_the_blame(tmp_path: Path) -> None:
    """The same stand-in embedder and fixed cut, with and without a stand-in reranker:
    each loss put on the reranker was kept by the cut in the vector order and is past it
    after reranking."""
    from askkit.dense.index import DenseIndex
    from askkit.metrics import read_queries
    from askkit.ranking import deduplicate_chunks
    from askkit.testing.models import tiny_reranker

    texts = [p.read_text(encoding="utf-8") for p in VAULT.rglob("*.md")]
    embedder = tiny_embedder(tmp_path / "model", vocabulary_texts=texts, dim=32)
    reranker = tiny_reranker(tmp_path / "reranker", vocabulary_texts=texts, dim=16)
    cut = CutSettings(strategy="fixed", top_k=5)
    base = vault_side(VAULT, QUERIES, embedder=embedder, settings=cut, progress=False)
    new = vault_side(
        VAULT, QUERIES, embedder=embedder, reranker=reranker, settings=cut, progress=False
    )
    assert "stand-in" in new.provenance["reranker_note"]
    result = gate(base, new, QRELS)
    blamed = [(q.query_id, d) for q in result.regressed_queries for d in q.lost]
    blamed = [(qid, d) for qid, d in blamed if d.stage == "reranker"]
    assert blamed
    index = DenseIndex(VAULT, embedder, store=False, reranker=reranker, progress=False)
    questions = read_queries(QUERIES)
    for qid, d in blamed:
        before = [c.path for c in deduplicate_chunks(index.vector_pool(questions[qid]))][:5]
        after = [c.path for c in index.pool(questions[qid])][:5]
        assert d.doc in before, (qid, d)
        assert d.doc not in after, (qid, d)
        assert "the reranker moved it" in d.detail
    with pytest.raises(UsageError, match="give an embedder too"):
        vault_side(VAULT, QUERIES, reranker=reranker, progress=False)


@pytest.mark.parametrize(
    ("settings", "pool_size", "stage"),
    [(CutSettings(strategy="fixed", top_k=3), 80, "cut"), (CutSettings(top_k=80), 2, "pool")],
)
def test_where_the_gate_says_a_section_was_lost_is_what_the_trace_says(
    default_side: object, settings: CutSettings, pool_size: int, stage: str
) -> None:
    """A tighter cut, then a smaller pool: each lost section's stage and sentence are
    trace_pool's stopped row over the same pool and cut."""
    from askkit.metrics import read_queries
    from askkit.trace import Interest, trace_pool

    new = vault_side(VAULT, QUERIES, settings=settings, pool_size=pool_size, progress=False)
    result = gate(default_side, new, QRELS, level="section")  # type: ignore[arg-type]
    lost = [(q.query_id, d) for q in result.regressed_queries for d in q.lost]
    assert any(d.stage == stage for _, d in lost)
    index = LocalIndex(VAULT, cache_dir=False, pool=pool_size, progress=False)
    questions = read_queries(QUERIES)
    for qid, d in lost:
        path, _, heading = d.doc.partition("#")
        text, interest = questions[qid], Interest(path, heading)
        pool = index.pool(text)
        outside = not any(interest.holds(c) for c in pool)  # then the whole index's ranking
        frame = trace_pool(
            pool,
            [interest],
            settings,
            query_id=qid,
            ranking=index.pool(text, len(index)) if outside else None,
        )
        stopped = frame[frame["stopped"]].iloc[0]
        if d.stage == "top k":
            assert str(stopped["stage"]) == "context", (qid, d)
            assert str(stopped["why"]) in d.detail
        else:
            assert (d.stage, d.detail) == (str(stopped["stage"]), str(stopped["why"])), (qid, d)


# -- issue 41: a side opens the vault's shared index ----------------------------------------------


def test_issue41_1_a_dense_side_opens_the_store_the_vault_was_embedded_into(
    own_cache: Path,
) -> None:
    """What ``askkit index --embedder`` (a default DenseIndex) embedded, a side (``askkit
    diff --vault``'s path) does not embed again; before, it embedded the vault in memory."""
    from askkit.dense.index import DenseIndex
    from tests.dense.test_index import CountingEmbedder

    index = DenseIndex(VAULT, CountingEmbedder(), progress=False)
    embedder = CountingEmbedder()
    side = vault_side(VAULT, QUERIES, embedder=embedder, progress=False)
    assert embedder.calls == []  # no chunk sent to the model, only the questions
    assert len(embedder.queries) == 37
    assert side.provenance["store"] == str(index.store_folder)
    assert side.provenance["embedded"] == f"0 of {len(index)} chunks"
    assert side.provenance["kimun"] == "0.18"
    assert [p.name for p in own_cache.iterdir() if p.name.startswith("dense-")] == [
        index.store_folder.name  # type: ignore[union-attr]
    ]


def test_issue41_1_a_side_in_memory_writes_nothing_and_another_kimun_has_its_own_store(
    own_cache: Path,
) -> None:
    from tests.dense.test_index import CountingEmbedder

    embedder = CountingEmbedder()
    side = vault_side(VAULT, QUERIES, embedder=embedder, progress=False, store=False)
    assert side.provenance["store"] == "memory"
    assert len(embedder.texts) > 400  # embedded in memory
    bm25 = vault_side(VAULT, QUERIES, progress=False, store=False)
    assert bm25.provenance["store"] == "memory"
    assert not own_cache.exists()
    older = vault_side(VAULT, QUERIES, embedder=CountingEmbedder(), progress=False, kimun="0.17")
    newer = vault_side(VAULT, QUERIES, embedder=CountingEmbedder(), progress=False)
    assert older.provenance["kimun"] == "0.17"
    assert "-k0.17-" in older.provenance["store"]
    assert "-k0.18-" in newer.provenance["store"]
    shared = vault_side(VAULT, QUERIES, progress=False)  # BM25: the vault's BM25 cache
    assert Path(shared.provenance["store"]).parent == own_cache
