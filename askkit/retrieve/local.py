"""An embedded BM25 retriever over a vault, shaped like a kimun server.

:class:`LocalIndex` cuts every note into the sections kimun's core would
index (:func:`askkit.vault.chunking.chunk_note`), splits long sections the way the
server does (:func:`askkit.vault.split.split_for_rag`), and ranks the
pieces with BM25 (`bm25s`) over the terms an :class:`Analyzer` makes: kimun's
accent folding, lower-casing, English stop words dropped and Snowball English
stems by default (``stopwords=`` and ``stemmer=`` switch either off; measured
in ``docs/retrieval.md``). Results are :class:`~askkit.ChunkResult`\\ s as a
kimun server sends them: ``title`` = the breadcrumb joined with U+001F,
``date`` from the file stem, ``hash`` = the note's content hash, ``ordinal`` =
rank, ``similarity_score`` = the BM25 score.

Like the server's ``/api/embeddings``, :meth:`LocalIndex.search` keeps one
chunk per note (the best) out of a candidate pool of 80 by default; pass
``per_note=False`` to see every chunk. Chunks scoring 0 (no query term) are
never returned. :meth:`LocalIndex.pool` is the candidate pool itself, chunk
level and de-duplicated as kimun's server holds it before its context cut;
:meth:`LocalIndex.pools` gives many queries' pools as the long frame
:func:`askkit.ranking.sweep_cuts` sweeps, and :meth:`LocalIndex.search_cut`
shows where a cut lands on one query's pool.

The index persists in a cache folder and re-indexes incrementally: a note
whose size and modification time are unchanged is not read again; a changed
one is re-hashed and re-chunked only when its content hash changed; deleted
notes leave the index. The BM25 statistics are then rebuilt over all chunks
(they are global), which is fast. A note that cannot be read (not UTF-8, a
dangling link, vanished, unreadable) is skipped with a warning and listed in
:attr:`~askkit.vault.IndexReport.skipped`; the rest is indexed
(:func:`askkit.vault.scan_vault` finds what changed, for this index and the
dense one alike).

askkit only ever writes a cache folder that is new, empty, or marked as its own
(a ``CACHEDIR.TAG`` naming askkit); any other folder, the vault itself, a
folder inside the vault or one containing it is refused with a
:class:`~askkit.errors.UsageError`. A cache folder others can write, another
user's, or one holding a symbolic link is refused, not rebuilt, with a
:class:`~askkit.errors.StoreError` saying what to do
(:func:`askkit._cachedir.untrusted`). A cache is checked whole when it is opened;
a damaged one is rebuilt from the vault with a warning saying what was wrong
(see :mod:`askkit.retrieve._cache`).
"""

from __future__ import annotations

import os
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import bm25s
import numpy as np
import pandas as pd

from askkit._cachedir import cache_root
from askkit._warn import warn_user
from askkit.errors import VaultError
from askkit.metrics.queries import Queries
from askkit.ranking.pool import deduplicate_chunks
from askkit.ranking.pools import query_pools
from askkit.ranking.settings import CANDIDATE_POOL, CutSettings
from askkit.ranking.surfaces import CutPreview, cut_preview
from askkit.retrieve._analyzer import (
    DEFAULT_STEMMER,
    DEFAULT_STOPWORDS,
    STOPWORDS,
    Analyzer,
    cached_analyzer,
    tokenize,
)
from askkit.retrieve._cache import CorruptCache, claim, is_ours
from askkit.retrieve._cache import load as load_cache
from askkit.retrieve._cache import save as save_cache
from askkit.sources import BREADCRUMB_SEP
from askkit.vault import Vault, content_hash
from askkit.vault.changes import IndexReport, scan_vault
from askkit.vault.chunking import DEFAULT_KIMUN, KimunVersion, check_kimun
from askkit.vault.split import CHUNK_COLUMNS, CHUNK_MAX, CHUNK_TARGET
from askkit.wire import ChunkResult

__all__ = [
    "CANDIDATE_POOL",
    "DEFAULT_STEMMER",
    "DEFAULT_STOPWORDS",
    "STOPWORDS",
    "Analyzer",
    "LocalIndex",
    "tokenize",
]


def _default_cache(root: Path) -> Path:
    return cache_root() / f"index-{content_hash(str(root).encode())}"


def _top(scores: np.ndarray[Any, Any], k: int) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """The best ``k`` positive scores, best first, equal scores in index order.

    The index holds the notes sorted by path, each note's sections in order, so
    equal scores rank by path, then by section. A partial selection
    (``argpartition``, as bm25s's own top-k) would leave the order of equal
    scores to numpy's kernel, which differs between CPUs and numpy versions;
    here every chunk that ties the ``k``-th score is a candidate and the
    candidates are ranked by score, then by position, so a query ranks the same
    everywhere.
    """
    n = len(scores)
    k = min(k, n)
    if k <= 0:
        return np.empty(0, dtype=np.int64), np.empty(0)
    kth = np.partition(scores, n - k)[n - k]
    candidates = np.flatnonzero((scores >= kth) & (scores > 0))
    s = scores[candidates].astype(np.float64)
    order = np.lexsort((candidates, -s))[:k]
    return candidates[order].astype(np.int64, copy=False), s[order]


class LocalIndex:
    """BM25 over a vault's kimun sections; a :class:`~askkit.retrieve.Retriever`.

    Parameters
    ----------
    vault:
        A :class:`~askkit.vault.Vault` or its folder.
    cache_dir:
        Where the index persists. ``None`` (default): ``$ASKKIT_CACHE_DIR`` or
        ``~/.cache/askkit``, in a folder named after the vault's path.
        ``False``: keep it in memory only. The folder must be new, empty, or
        one askkit made; anything else (a folder of other files, a file, the
        vault, a folder inside the vault or holding it) raises
        :class:`~askkit.errors.UsageError` and nothing is touched.
    pool:
        Candidate pool before keeping one chunk per note (kimun: 80), kept as
        :attr:`pool_size`; also the default size of :meth:`pool`.
    index_headings:
        Also index each chunk's breadcrumb headings (default ``True``).
    progress:
        Show a tqdm progress bar while (re)indexing notes.
    k1, b:
        BM25 parameters.
    stopwords, stemmer:
        How text becomes terms (:class:`Analyzer`): the stop-word list
        (default ``"en"``) and the Snowball stemmer (default ``"english"``),
        each ``None`` to switch it off. On ``data/vault`` and on the
        Cranfield collection, stop words and stemming together rank best
        (see :class:`Analyzer`); kept as :attr:`analyzer`. They are part of
        the cache's key: a cache built with other terms is rebuilt, never read.
    kimun:
        The kimun version whose chunker cuts the notes
        (:data:`askkit.vault.chunking.KIMUN_VERSIONS`): ``"0.18"`` (default,
        kimun's single note walk) or ``"0.17"`` (the content extractor before
        it, as a server that indexed the vault before the walk still holds it);
        kept as :attr:`kimun`. Part of the cache's key, as the terms are.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / "bread.md").write_text("# Bread\\n## Starter\\nFeed the starter daily.\\n")
    >>> _ = (root / "2026-04-08.md").write_text("# 2026-04-08\\n## Afternoon\\nBaked bread.\\n")
    >>> index = LocalIndex(root, cache_dir=False, progress=False)
    >>> [(c.ordinal, c.path, c.title.replace("\\x1f", " > ")) for c in index.search("starter")]
    [(1, 'bread.md', 'Bread > Starter')]
    """

    def __init__(
        self,
        vault: Vault | str | os.PathLike[str],
        *,
        cache_dir: str | os.PathLike[str] | bool | None = None,
        pool: int = CANDIDATE_POOL,
        index_headings: bool = True,
        progress: bool = True,
        k1: float = 1.5,
        b: float = 0.75,
        stopwords: str | None = DEFAULT_STOPWORDS,
        stemmer: str | None = DEFAULT_STEMMER,
        kimun: KimunVersion = DEFAULT_KIMUN,
    ) -> None:
        self.kimun: KimunVersion = check_kimun(kimun)
        self.analyzer = cached_analyzer(stopwords, stemmer)
        self.vault = vault if isinstance(vault, Vault) else Vault(vault)
        if cache_dir is None or cache_dir is True:
            self.cache_dir: Path | None = _default_cache(self.vault.root)
        elif cache_dir is False:
            self.cache_dir = None
        else:
            self.cache_dir = Path(cache_dir)
        if pool < 1:
            raise ValueError(f"pool must be >= 1, got {pool}")
        self.pool_size = pool
        self.index_headings = index_headings
        self.progress = progress
        self.k1 = k1
        self.b = b
        self._notes: dict[str, dict[str, Any]] = {}
        self._cols: dict[str, list[Any]] = {c: [] for c in CHUNK_COLUMNS}
        self._bm25: bm25s.BM25 | None = None
        self._path_arr: np.ndarray[Any, Any] = np.empty(0, dtype=object)
        self.last_report = IndexReport()
        if self.cache_dir is not None:
            claim(self.cache_dir, self.vault.root)  # refuse a folder askkit may not write
        if not self._load():
            self.update()

    def __repr__(self) -> str:
        return f"LocalIndex({str(self.vault.root)!r}, notes={len(self._notes)}, chunks={len(self)})"

    def __len__(self) -> int:
        return len(self._cols["path"])

    # -- indexing -----------------------------------------------------------------------

    def _params(self) -> dict[str, Any]:
        return {
            "k1": self.k1,
            "b": self.b,
            "index_headings": self.index_headings,
            "target": CHUNK_TARGET,
            "max": CHUNK_MAX,
            "kimun": self.kimun,
            "tokens": self.analyzer.params(),
        }

    def update(self) -> IndexReport:
        """Bring the index up to date with the vault; return what changed.

        A note that cannot be read now (a dangling link, vanished, permission
        denied, not valid UTF-8 under the vault's ``errors="strict"``, any
        :class:`~askkit.errors.VaultError`) is skipped with a warning naming
        the file, listed in the report's ``skipped``, and left out of the index.
        """
        t0 = time.perf_counter()
        old = self._notes
        scan = scan_vault(self.vault, old, progress=self.progress, kimun=self.kimun)
        by_note = self._chunks_by_note()
        by_note.update(scan.fresh)
        touched = bool(scan.added or scan.changed or scan.deleted) or self._bm25 is None
        if touched:
            cols: dict[str, list[Any]] = {c: [] for c in CHUNK_COLUMNS}
            for key in sorted(scan.notes):
                part = by_note.get(key)
                if part is None:
                    continue
                for c in CHUNK_COLUMNS:
                    cols[c].extend(part[c])
            self._cols = cols
            self._build()
        self._notes = scan.notes
        report = scan.report(chunks=len(self), seconds=time.perf_counter() - t0)
        self.last_report = report
        if touched or scan.notes != old:
            self._save()
        return report

    def _chunks_by_note(self) -> dict[str, dict[str, list[Any]]]:
        by_note: dict[str, dict[str, list[Any]]] = {}
        for i, p in enumerate(self._cols["path"]):
            by_note.setdefault(p, {c: [] for c in CHUNK_COLUMNS})
            for c in CHUNK_COLUMNS:
                by_note[p][c].append(self._cols[c][i])
        return by_note

    def _doc_text(self, i: int) -> str:
        text: str = self._cols["text"][i]
        if self.index_headings:
            title: str = self._cols["title"][i]
            return title.replace(BREADCRUMB_SEP, " ") + "\n" + text
        return text

    def _doc_tokens(self) -> list[list[str]]:
        return self.analyzer.corpus(self._doc_text(i) for i in range(len(self)))

    def _build(self) -> None:
        bm25 = bm25s.BM25(k1=self.k1, b=self.b)
        corpus = self._doc_tokens()
        if corpus:
            bm25.index(corpus, show_progress=False)
            self._bm25 = bm25
        else:
            self._bm25 = None
        self._path_arr = np.asarray(self._cols["path"], dtype=object)

    # -- persistence --------------------------------------------------------------------

    def _save(self) -> None:
        if self.cache_dir is None:
            return
        manifest = {
            "params": self._params(),
            "vault": str(self.vault.root),
            "notes": self._notes,
            "chunks": len(self),
        }
        save_cache(
            self.cache_dir, self.vault.root, cols=self._cols, bm25=self._bm25, manifest=manifest
        )

    def _load(self) -> bool:
        if self.cache_dir is None or not is_ours(self.cache_dir):
            return False
        try:
            cached = load_cache(self.cache_dir, params=self._params(), vault=str(self.vault.root))
        except CorruptCache as exc:
            warn_user(
                f"the index cache {self.cache_dir} is damaged: {exc}; "
                f"rebuilding it from the vault {self.vault.root}"
            )
            return False
        if cached is None:  # other settings, another vault or format: rebuilt quietly
            return False
        self._notes, self._cols, self._bm25 = cached.notes, cached.cols, cached.bm25
        self._path_arr = np.asarray(self._cols["path"], dtype=object)
        self.update()
        return True

    # -- retrieval ----------------------------------------------------------------------

    def _scores(
        self, tokens: list[str], pool: int
    ) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
        bm25 = self._bm25
        if bm25 is None:
            return np.empty(0, dtype=np.int64), np.empty(0)
        known = [t for t in tokens if t in bm25.vocab_dict]
        if not known:
            return np.empty(0, dtype=np.int64), np.empty(0)
        return _top(bm25.get_scores(known), pool)

    def search(self, query: str, k: int = 10, *, per_note: bool = True) -> list[ChunkResult]:
        """The top ``k`` chunks for ``query``, best first, shaped as a kimun server shapes them.

        With ``per_note`` (default, as kimun's ``/api/embeddings``), only each
        note's best chunk is kept, out of the top :attr:`pool_size` chunks.
        """
        if not isinstance(query, str) or not query.strip():
            raise ValueError("the query is empty: give the text to search for")
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        tokens = self.analyzer(query)
        docs, scores = self._scores(tokens, max(self.pool_size, k) if per_note else k)
        if per_note and len(docs):
            _, first = np.unique(self._path_arr[docs], return_index=True)
            order = np.sort(first)
            docs, scores = docs[order], scores[order]
        docs, scores = docs[:k], scores[:k]
        c = self._cols
        return [
            ChunkResult(
                path=c["path"][i],
                title=c["title"][i],
                date=c["date"][i],
                content=c["text"][i],
                hash=c["hash"][i],
                similarity_score=float(s),
                ordinal=rank,
            )
            for rank, (i, s) in enumerate(zip(docs.tolist(), scores.tolist(), strict=True), 1)
        ]

    def pool(self, query: str, size: int | None = None) -> list[ChunkResult]:
        """The candidate pool kimun's server ranks for ``query``, before its context cut.

        The best ``size`` chunks (default: the index's ``pool``, kimun's 80;
        chunk level: a note may appear more than once), identical chunks de-duplicated as kimun does
        (:func:`askkit.ranking.deduplicate_chunks`), best first, ordinals
        ``1..n``. Feed it to :mod:`askkit.ranking` (``cut_len``,
        ``answer_context``, ``explain_cut``...).

        >>> import tempfile, pathlib
        >>> root = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (root / "bread.md").write_text("# Bread\\n## Starter\\nStarter.\\n## Loaf\\nA starter loaf.\\n")
        >>> index = LocalIndex(root, cache_dir=False, progress=False)
        >>> [(c.ordinal, c.path, c.title.split("\\x1f")[-1]) for c in index.pool("starter")]
        [(1, 'bread.md', 'Starter'), (2, 'bread.md', 'Loaf')]
        """  # noqa: E501 - a doctest's input is one line
        size = self.pool_size if size is None else size
        if size < 1:
            raise ValueError(f"size must be >= 1, got {size}")
        ranked = deduplicate_chunks(self.search(query, size, per_note=False))
        return [replace(chunk, ordinal=i) for i, chunk in enumerate(ranked, start=1)]

    def pools(
        self, queries: Queries, size: int | None = None, *, progress: bool | None = None
    ) -> pd.DataFrame:
        """Many queries' pools as one long frame: what :func:`askkit.ranking.sweep_cuts` sweeps.

        Parameters
        ----------
        queries:
            ``{query_id: text}``, a frame with ``query_id`` and ``text`` (or
            ``question``) columns, or such a TSV file (``data/queries.tsv``).
        size:
            Chunks per pool (default: the index's ``pool``, kimun's 80).
        progress:
            Show a tqdm bar over the queries (default: the index's ``progress``).

        Returns
        -------
        pandas.DataFrame
            One row per pool chunk, queries in the given order, each pool best
            first: :data:`~askkit.ranking.pools.POOL_COLUMNS` (``query_id``,
            ``rank`` 1..n, ``path``, ``score``, ``title``, ``text``), built by
            :func:`askkit.ranking.query_pools`. A query matching nothing has no
            rows.
        """
        show = self.progress if progress is None else progress
        return query_pools(self.pool, queries, size, progress=show)

    def search_cut(
        self, query: str, settings: CutSettings | None = None, *, size: int | None = None
    ) -> CutPreview:
        """Where kimun's context cut lands on ``query``'s pool (:func:`askkit.ranking.cut_preview`).

        ``settings`` default to kimun's (``score-range``, cutoff 0.4). The
        preview's ``context`` is the chunks an answer would see, best first;
        ``boundary`` the last kept and first dropped scores.
        """
        return cut_preview(self.pool(query, size), settings)

    def __call__(self, query: str, k: int = 10) -> list[ChunkResult]:
        """The :class:`~askkit.retrieve.Retriever` protocol: :meth:`search`."""
        return self.search(query, k)

    # -- inspection ---------------------------------------------------------------------

    @property
    def chunks(self) -> pd.DataFrame:
        """Every indexed chunk: path, title, date, text, hash, section, piece, start, end."""
        return pd.DataFrame({c: self._cols[c] for c in CHUNK_COLUMNS})

    def explain(self, query: str, chunk: ChunkResult | int) -> pd.DataFrame:
        """Why a chunk scored what it did: each query word's BM25 contribution.

        ``chunk`` is a search result or a row number of :attr:`chunks`. One row
        per distinct query word (folded and lower-cased, as typed): ``term``;
        ``stem``, the index term it matches (the word itself without a
        stemmer; empty for a stop word); ``status`` (``matched``, ``not in
        this chunk``, ``not in the vault``, ``stop word``); ``tf``, how often
        the stem occurs in the chunk's indexed text; ``contribution``. Words
        that share a stem (``feed``, ``feeding``) each get their own row, and a
        word typed twice counts twice, as BM25 scores the query: the
        contributions sum to the chunk's score. Best first.
        """
        row = chunk if isinstance(chunk, int) else self._row_of(chunk)
        if not 0 <= row < len(self):
            raise IndexError(f"no chunk {row}: the index has {len(self)}")
        analyzer = self.analyzer
        typed = Counter(analyzer.words(query))  # insertion order: first appearance
        bm25 = self._bm25
        in_chunk = Counter(analyzer(self._doc_text(row)))
        kept = [w for w in typed if not analyzer.is_stopword(w)]
        stems = dict(zip(kept, analyzer.stem(kept), strict=True))
        records = []
        for word, times in typed.items():
            if word not in stems:
                records.append((word, "", "stop word", 0, 0.0))
                continue
            stem = stems[word]
            tid = bm25.vocab_dict.get(stem) if bm25 is not None else None
            if tid is None or bm25 is None:
                records.append((word, stem, "not in the vault", 0, 0.0))
                continue
            lo, hi = bm25.scores["indptr"][tid], bm25.scores["indptr"][tid + 1]
            docs = bm25.scores["indices"][lo:hi]
            hit = np.flatnonzero(docs == row)
            each = float(bm25.scores["data"][lo + hit[0]]) if len(hit) else 0.0
            status = "matched" if each > 0 else "not in this chunk"
            records.append((word, stem, status, in_chunk[stem], times * each))
        out = pd.DataFrame(records, columns=["term", "stem", "status", "tf", "contribution"])
        return out.sort_values("contribution", ascending=False, kind="stable").reset_index(
            drop=True
        )

    def _row_of(self, chunk: ChunkResult) -> int:
        for i, (p, t, x) in enumerate(
            zip(self._cols["path"], self._cols["title"], self._cols["text"], strict=True)
        ):
            if p == chunk.path and t == chunk.title and x == chunk.content:
                return i
        raise VaultError(f"this chunk is not in the index: {chunk.path} {chunk.title!r}")

    def note_of(self, chunk: ChunkResult | str) -> str:
        """The full text of the note a chunk (or a path) comes from."""
        return self.vault.read(chunk.path if isinstance(chunk, ChunkResult) else chunk)
