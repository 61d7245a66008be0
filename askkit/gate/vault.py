"""A side of the regression gate retrieved on the spot: a vault, queries and a configuration.

:func:`vault_side` retrieves every query's candidate pool from a vault the
way kimun's server would (BM25 with :class:`askkit.retrieve.LocalIndex`, or
kimun's dense retrieval with :class:`askkit.dense.DenseIndex` and an
embedder), applies the configuration's context cut (the ``[reranker]`` keys
of a ``server.toml``, :class:`askkit.ranking.CutSettings`) and returns the
chunks an answer's context would hold as a :class:`askkit.gate.Side`.
Since it holds the pools, the side says where a relevant document was lost
(:attr:`~askkit.gate.Side.explain`, at the level the gate compares): not in
the pool at all (``"pool"``), moved past the cut by a reranker (``"reranker"``:
the cut kept it in the vector order), cut by the context cut (``"cut"``, with
:func:`askkit.ranking.why_not`'s reason), or kept but ranked below the top
k (``"top k"``). Its provenance: the vault's content hash
(:func:`vault_hash`), the settings file's sha256 and the cut it sets, and
the embedder's kimun fingerprint (labelled when it is a stand-in model).

Examples
--------
>>> side = vault_side("data/vault", {"q01": "sourdough starter feeding ratio"}, progress=False)
>>> side.provenance["retriever"], side.provenance["cut"]
('BM25 (askkit.retrieve.LocalIndex)', 'score-range cutoff=0.4')
>>> bool(side.frame["path"].eq("projects/sourdough.md").any())
True
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pandas as pd

from askkit.errors import UsageError
from askkit.gate.side import Side, file_sha256
from askkit.metrics import Level
from askkit.metrics.ids import doc_ids
from askkit.ranking import CANDIDATE_POOL, CutSettings, why_not, with_pool
from askkit.ranking.pools import POOL_STRATEGY_COLUMNS, checked_queries

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


def _index(
    vault: str | os.PathLike[str], embedder: Any, reranker: Any, pool_size: int, progress: bool
) -> tuple[Any, dict[str, str]]:
    if embedder is None and reranker is not None:
        raise UsageError(
            "a reranker reranks kimun's dense pool: give an embedder too (--new-embedder SPEC)"
        )
    if embedder is None:
        from askkit.retrieve.local import LocalIndex

        local = LocalIndex(vault, cache_dir=False, pool=pool_size, progress=progress)
        return local, {"retriever": "BM25 (askkit.retrieve.LocalIndex)"}
    from askkit.dense.index import DenseIndex

    if isinstance(embedder, str):
        from askkit.dense.embedders import parse_embedder

        embedder = parse_embedder(embedder, progress=progress)
    if isinstance(reranker, str):
        from askkit.dense.rerankers import parse_reranker

        reranker = parse_reranker(reranker)
    index = DenseIndex(
        vault, embedder, store=False, reranker=reranker, pool=pool_size, progress=progress
    )
    info = {
        "retriever": "dense (askkit.dense.DenseIndex)",
        "embedder": str(embedder.name),
        "embedder_fingerprint": str(embedder.fingerprint),
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
        kimun's dense retrieval (:class:`askkit.dense.DenseIndex`, embedded in
        memory, nothing written).
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
        Show progress bars while indexing and retrieving.
    """
    from askkit.frame import sources_frame
    from askkit.sources import AskSource, Turn

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
    index, info = _index(root, embedder, reranker, pool_size, progress)
    provenance["vault_sha256"] = vault_hash(index.vault)
    provenance.update(info)
    turns = {
        qid: Turn(text, "", AskSource.from_chunks(index.pool(text, pool_size)))
        for qid, text in texts.items()
    }
    before = (
        _kept_before_reranking(index, texts, cut, pool_size)
        if getattr(index, "reranker", None) is not None
        else None
    )
    turns = {qid: turn for qid, turn in turns.items() if len(turn.sources)}
    frame = sources_frame(turns) if turns else pd.DataFrame(columns=["turn_id", "path", "score"])
    pooled = with_pool(frame, cut) if len(frame) else frame.assign(pool_rank=0)
    kept_column = POOL_STRATEGY_COLUMNS[cut.strategy]
    kept = (
        pooled[pooled[kept_column].to_numpy(dtype=bool)] if len(pooled) else pooled
    ).reset_index(drop=True)
    return Side(
        frame=kept,
        provenance=provenance,
        explain=_explainer(pooled, kept_column, cut, pool_size, before),
    )


def _kept_before_reranking(
    index: Any, texts: dict[str, str], cut: CutSettings, pool_size: int
) -> dict[str, dict[tuple[str, str], int]]:
    """Per query, the chunks the cut keeps in the vector order (before the reranker):
    ``(path, innermost heading) -> vector rank`` (the best one per pair)."""
    from askkit.ranking import cut_len, deduplicate_chunks
    from askkit.sources import innermost_heading

    out: dict[str, dict[tuple[str, str], int]] = {}
    for qid, text in texts.items():
        pool = deduplicate_chunks(index.vector_pool(text, pool_size))
        kept: dict[tuple[str, str], int] = {}
        for rank, chunk in enumerate(pool[: cut_len(pool, cut)], start=1):
            kept.setdefault((chunk.path, innermost_heading(chunk.title or "")), rank)
        out[qid] = kept
    return out


def _before_rank(kept: dict[tuple[str, str], int], doc: str, level: Level) -> int | None:
    """The vector rank at which the cut kept ``doc`` before reranking (None: it did not)."""
    ranks = [
        rank
        for (path, heading), rank in kept.items()
        if doc == (path if level == "note" or not heading else f"{path}#{heading}")
    ]
    return min(ranks) if ranks else None


def _explainer(
    pooled: pd.DataFrame,
    kept_column: str,
    cut: CutSettings,
    pool_size: int,
    before: dict[str, dict[tuple[str, str], int]] | None,
) -> Any:
    """``(query id, document, level) -> (stage, detail)`` over the pools a side retrieved."""
    by_query = dict(list(pooled.groupby("turn_id", sort=False))) if len(pooled) else {}

    def explain(query_id: str, doc: str, level: Level) -> tuple[str, str]:
        rows = by_query.get(query_id)
        if rows is None:
            return "pool", "the query retrieved nothing"
        rows = rows.sort_values("pool_rank", kind="stable")
        hits = rows[(doc_ids(rows, level) == doc).to_numpy()]
        if not len(hits):
            return "pool", f"not among the {len(rows)} chunks of its pool (pool size {pool_size})"
        best = hits.iloc[0]
        rank = int(best["pool_rank"])
        if not bool(best[kept_column]):
            was = None if before is None else _before_rank(before.get(query_id, {}), doc, level)
            if was is not None:
                return "reranker", (
                    f"the {cut.label} cut kept it at vector rank {was}; the reranker moved "
                    f"it to pool rank {rank}, past the cut"
                )
            if level == "section":  # why_not speaks of notes
                kept = int(rows[kept_column].to_numpy(dtype=bool).sum())
                return "cut", f"pool rank {rank}; the {cut.label} cut keeps pool ranks 1-{kept}"
            reason = why_not(rows[["path", "score"]], str(best["path"]), cut)
            answer = next(
                (line for line in reason.splitlines() if line.startswith("Answer")), reason
            )
            return "cut", f"pool rank {rank}; {answer}"
        return "top k", f"kept by the cut at pool rank {rank}, ranked below the top k"

    return explain
