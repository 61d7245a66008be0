"""A side of the regression gate retrieved on the spot: a vault, queries and a configuration.

:func:`vault_side` retrieves every query's candidate pool from a vault the
way kimun's server would (BM25 with :class:`askkit.retrieve.LocalIndex`, or
kimun's dense retrieval with :class:`askkit.dense.DenseIndex` and an
embedder), applies the configuration's context cut (the ``[reranker]`` keys
of a ``server.toml``, :class:`askkit.ranking.CutSettings`) and returns the
chunks an answer's context would hold as a :class:`askkit.gate.Side`.
Since it holds the pools, the side says where a relevant document was lost
(:attr:`~askkit.gate.Side.explain`, at the level the gate compares) by
following it through the same pool, reranker and cut with the trace
(:func:`askkit.trace.trace_pool`), in the trace's words (its ``why``): not
in the pool at all (``"pool"``), moved past the cut by a reranker
(``"reranker"``: the cut kept it in the vector order), cut by the context
cut (``"cut"``), or kept but ranked below the top k (``"top k"``). Its
provenance: the vault's content hash (:func:`vault_hash`), the kimun version
whose chunker cut the notes, the settings file's sha256 and the cut it sets,
and the embedder's kimun fingerprint (labelled when it is a stand-in model);
the store the index was read from, and how many chunks this side embedded.

The index is the one every command shares: by default a dense side opens the
vault's store in askkit's cache (:func:`askkit.dense.index.default_store_folder`,
keyed by the vault, the model and the kimun version), so a vault embedded once
by ``askkit index --embedder``, ``search``, ``run``, ``why``, a notebook or an
earlier ``diff`` is not embedded again (only its changed notes are), and a
BM25 side opens the vault's BM25 cache; ``store=False`` keeps either in memory.

Examples
--------
>>> query = {"q01": "sourdough starter feeding ratio"}
>>> side = vault_side("data/vault", query, progress=False, store=False)  # nothing written
>>> side.provenance["retriever"], side.provenance["cut"]
('BM25 (askkit.retrieve.LocalIndex)', 'score-range cutoff=0.4')
>>> bool(side.frame["path"].eq("projects/sourdough.md").any())
True
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sized
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from askkit.errors import UsageError
from askkit.gate.side import Explainer, Side, file_sha256
from askkit.metrics import Level
from askkit.ranking import CANDIDATE_POOL, CutSettings, with_pool
from askkit.ranking.pools import POOL_STRATEGY_COLUMNS, checked_queries
from askkit.vault.chunking import DEFAULT_KIMUN, KimunVersion, check_kimun

if TYPE_CHECKING:
    from askkit.trace import Interest

__all__ = ["vault_hash", "vault_side"]


def vault_hash(vault: Any) -> str:
    """The sha256 of a vault's notes: each note's path and kimun's content hash, sorted.

    ``vault`` is a :class:`askkit.vault.Vault` or its folder. Two vaults with
    the same notes (paths and bytes) have the same hash, wherever they are.

    >>> vault_hash("data/vault") == vault_hash("data/vault")
    True
    """
    from askkit.vault import Vault

    v = vault if isinstance(vault, Vault) else Vault(vault)
    digest = hashlib.sha256()
    for path in sorted(str(p) for p in v.notes()):
        digest.update(f"{path}\t{v.hash(path)}\n".encode())
    return digest.hexdigest()


def _labelled(thing: Any) -> bool:
    """Whether an embedder or reranker says it is a stand-in model."""
    shown = f"{getattr(thing, 'name', '')} {thing!r}".lower()
    return "stand-in" in shown or "standin" in shown


@dataclass(frozen=True, slots=True)
class _Retrieval:
    """How a side retrieves: the index's options that travel together."""

    pool_size: int
    progress: bool
    store: str | os.PathLike[str] | bool | None
    kimun: KimunVersion


def _index(
    vault: str | os.PathLike[str], embedder: Any, reranker: Any, how: _Retrieval
) -> tuple[Any, dict[str, str]]:
    if embedder is None and reranker is not None:
        raise UsageError(
            "a reranker reranks kimun's dense pool: give an embedder too (--new-embedder SPEC)"
        )
    if embedder is None:
        from askkit.retrieve.local import LocalIndex

        local = LocalIndex(
            vault,
            cache_dir=how.store,
            pool=how.pool_size,
            progress=how.progress,
            kimun=how.kimun,
        )
        return local, {
            "retriever": "BM25 (askkit.retrieve.LocalIndex)",
            "store": "memory" if local.cache_dir is None else str(local.cache_dir),
        }
    from askkit.dense.index import DenseIndex

    if isinstance(embedder, str):
        from askkit.dense.embedders import parse_embedder

        embedder = parse_embedder(embedder, progress=how.progress)
    if isinstance(reranker, str):
        from askkit.dense.rerankers import parse_reranker

        reranker = parse_reranker(reranker)
    index = DenseIndex(
        vault,
        embedder,
        store=how.store,
        reranker=reranker,
        pool=how.pool_size,
        progress=how.progress,
        kimun=how.kimun,
    )
    info = {
        "retriever": "dense (askkit.dense.DenseIndex)",
        "embedder": str(embedder.name),
        "embedder_fingerprint": str(embedder.fingerprint),
        "store": "memory" if index.store_folder is None else str(index.store_folder),
        "embedded": f"{index.last_embedded} of {len(index)} chunks",
    }
    if _labelled(embedder):
        info["embedder_note"] = f"a stand-in model, not a trained embedder: {embedder!r}"
    if reranker is not None:
        info["reranker"] = str(reranker.name)
        if _labelled(reranker):
            info["reranker_note"] = f"a stand-in model, not a trained reranker: {reranker!r}"
    return index, info


def vault_side(
    vault: str | os.PathLike[str],
    queries: Any,
    *,
    embedder: Any = None,
    reranker: Any = None,
    settings: str | os.PathLike[str] | CutSettings | None = None,
    pool_size: int = CANDIDATE_POOL,
    progress: bool = True,
    store: str | os.PathLike[str] | bool | None = None,
    kimun: KimunVersion = DEFAULT_KIMUN,
) -> Side:
    """Retrieve ``queries`` from ``vault`` with one configuration; the gate's side.

    Parameters
    ----------
    vault:
        The vault folder.
    queries:
        ``{query_id: text}``, a frame with ``query_id`` and ``text`` (or
        ``question``), or such a TSV file (:func:`askkit.metrics.read_queries`).
    embedder:
        ``None``: BM25 (:class:`askkit.retrieve.LocalIndex`); an embedder spec
        (``"fastembed:AllMiniLML6V2"``) or an :class:`askkit.dense.Embedder`:
        kimun's dense retrieval (:class:`askkit.dense.DenseIndex`, in the
        store ``store`` says).
    reranker:
        With an embedder: a reranker spec or :class:`askkit.dense.Reranker`
        that reranks each dense pool before the cut, as kimun's server does;
        a relevant document the cut would have kept in the vector order but
        not after reranking was lost at the ``"reranker"``.
    settings:
        A ``server.toml`` (its ``[reranker]`` cut keys), or :class:`CutSettings`;
        ``None``: kimun's defaults (score-range, cutoff 0.4).
    pool_size:
        Chunks per pool (kimun: 80).
    progress:
        Show progress bars while indexing, embedding and retrieving the queries
        (the command line turns them into a line every few seconds on a pipe).
    store:
        Where the index persists. ``None`` (default): askkit's cache, the store
        every command and notebook shares (a dense index's
        :func:`~askkit.dense.index.default_store_folder`, keyed by the vault, the
        model and the kimun version; the BM25 index's cache), updated with what
        changed; ``False``: in memory, nothing written; a folder: that folder (a
        dense store, or a BM25 cache).
    kimun:
        The kimun version whose chunker cuts the notes (``"0.18"``, default, or
        ``"0.17"``).
    """
    from askkit.frame import sources_frame

    if pool_size < 1:
        raise UsageError(f"pool_size must be at least 1, got {pool_size}")
    root = Path(vault).expanduser()
    if not root.is_dir():
        raise UsageError(f"--vault: no such folder: {vault}")
    provenance: dict[str, str] = {"kind": "vault", "vault": str(root)}
    if isinstance(settings, CutSettings):
        cut = settings
        provenance["settings"] = "given in Python"
    elif settings is not None:
        cut = CutSettings.from_file(settings)
        provenance["settings_file"] = str(settings)
        provenance["settings_sha256"] = file_sha256(settings)
    else:
        cut = CutSettings()
        provenance["settings"] = "kimun's defaults"
    provenance["cut"] = cut.label
    texts = checked_queries(queries)
    how = _Retrieval(pool_size, progress, store, check_kimun(kimun))
    index, info = _index(root, embedder, reranker, how)
    provenance["vault_sha256"] = vault_hash(index.vault)
    provenance["kimun"] = how.kimun
    provenance.update(info)
    turns = _retrieve(index, texts, pool_size, progress)
    frame = sources_frame(turns) if turns else pd.DataFrame(columns=["turn_id", "path", "score"])
    pooled = with_pool(frame, cut) if len(frame) else frame.assign(pool_rank=0)
    kept_column = POOL_STRATEGY_COLUMNS[cut.strategy]
    kept = (
        pooled[pooled[kept_column].to_numpy(dtype=bool)] if len(pooled) else pooled
    ).reset_index(drop=True)
    return Side(
        frame=kept,
        provenance=provenance,
        explain=_explainer(index, texts, cut),
    )


def _retrieve(index: Any, texts: dict[str, str], pool_size: int, progress: bool) -> dict[str, Any]:
    """Each query's pool as a turn (the queries whose pool is empty left out), with a bar."""
    from tqdm.auto import tqdm

    from askkit.sources import AskSource, Turn

    turns = {}
    bar = tqdm(
        texts.items(),
        desc="retrieving",
        unit="question",
        total=len(texts),
        disable=not progress or len(texts) < 2,
        leave=False,
        delay=1.0,  # quick work shows no bar (nor, on a pipe, a line)
    )
    for qid, text in bar:
        turn = Turn(text, "", AskSource.from_chunks(index.pool(text, pool_size)))
        if len(turn.sources):
            turns[qid] = turn
    return turns


#: The trace's stage where a section stopped -> the gate's name for where it was lost.
_LOST_AT = {"pool": "pool", "rerank": "reranker", "cut": "cut"}


def _interest(doc: str, level: Level, notes: set[str]) -> Interest:
    """The note or section a document id names (``path#heading`` at section level; a path
    holding ``#`` is recognised as one of the vault's notes)."""
    from askkit.trace import Interest

    if level == "note":
        return Interest(doc)
    cuts = [i for i, ch in enumerate(doc) if ch == "#"]
    at = next((i for i in cuts if doc[:i] in notes), cuts[0] if cuts else None)
    if at is None:  # a chunk before any heading: the note's heading-less section
        return Interest(doc, "")
    return Interest(doc[:at], doc[at + 1 :])


def _explainer(index: Any, texts: dict[str, str], cut: CutSettings) -> Explainer:
    """``(query id, document, level) -> (stage, detail)``: the trace of the document through
    the side's own pool, reranker and cut (:func:`askkit.trace.trace_pool`), its stage and
    its ``why``.

    Each query's pool (and reranker scores) is gathered once
    (:func:`askkit.trace.gather`), again only when a document outside it needs the
    whole index's ranking.
    """
    from askkit.trace import gather, trace_pool

    notes = {str(p) for p in index.vault.notes()}
    reranker = getattr(index, "reranker", None)
    gathered: dict[str, dict[str, Any]] = {}

    def explain(query_id: str, doc: str, level: Level) -> tuple[str, str]:
        interest = _interest(doc, level, notes)
        inputs = gathered.get(query_id)
        if inputs is None or (
            inputs["ranking"] is None
            and isinstance(index, Sized)
            and not any(interest.holds(c) for c in inputs["pool"])
        ):
            inputs = gather(texts[query_id], index, [interest], reranker=reranker)
            gathered[query_id] = inputs
        frame = trace_pool(
            inputs["pool"],
            [interest],
            cut,
            query_id=query_id,
            rerank_scores=inputs["rerank_scores"],
            reranker_failed=inputs["reranker_failed"],
            ranking=inputs["ranking"],
        )
        stopped = frame[frame["stopped"].to_numpy(dtype=bool)].iloc[0]
        stage, why = str(stopped["stage"]), str(stopped["why"])
        if stage in _LOST_AT:
            return _LOST_AT[stage], why
        return "top k", f"kept by the cut ({why}), ranked below the top k"

    return explain
