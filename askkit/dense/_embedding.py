"""What every embedder of kimun's shares: its framing of texts, its fingerprint, its batches.

kimun's server embeds each split section as ``(title, text)`` framed as
``prefix + title + "\\n" + text`` (:func:`document_text`) and each query as
``prefix + query`` (:func:`query_text`), :data:`BATCH_SIZE` chunks per call,
and refuses an answer with another number of vectors; it records the
embedder's fingerprint, ``provider:model:dimension`` (:func:`kimun_fingerprint`),
beside the stored vectors. :class:`Batched` is the base every embedder builds
on: the batches, the progress bar, the count and width checks, the
fingerprint (an HTTP embedder whose width is unknown probes it with
:data:`PROBE_TEXT`, as kimun does).

Each batch of texts sent to the model raises the audit event
:data:`EMBED_EVENT` (:func:`sys.audit`) with the embedder's name, the kind of
texts (``"documents"``, ``"query"`` or ``"probe"``) and how many: a
benchmark or a test counts what a command embeds with :func:`sys.addaudithook`,
whatever built the embedder, without wrapping it.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from askkit.errors import DimensionError, ProtocolError, UsageError

__all__ = [
    "BATCH_SIZE",
    "EMBED_EVENT",
    "PROBE_TEXT",
    "Batched",
    "Vectors",
    "check_chunks",
    "check_query",
    "document_text",
    "kimun_fingerprint",
    "query_text",
]

#: Chunks per embedding call (kimun's ``EMBED_BATCH`` in ``server/src/lib.rs``).
BATCH_SIZE = 100
#: What kimun's HTTP embedders embed to learn their width (``HttpEmbedder::probe``).
PROBE_TEXT = "dimension probe"
#: The audit event raised for each batch sent to a model: ``(embedder name, kind, texts)``,
#: the kind ``"documents"``, ``"query"`` or ``"probe"``.
EMBED_EVENT = "askkit.embed"

Vectors = np.ndarray[Any, np.dtype[np.float32]]


def document_text(title: str, text: str, prefix: str = "") -> str:
    """The text kimun embeds for a chunk: ``prefix + title + "\\n" + text``.

    >>> document_text("Title", "body", "search_document: ")
    'search_document: Title\\nbody'
    """
    return f"{prefix}{title}\n{text}"


def query_text(query: str, prefix: str = "") -> str:
    """The text kimun embeds for a query: ``prefix + query``.

    >>> query_text("find me", "query: ")
    'query: find me'
    """
    return f"{prefix}{query}"


def kimun_fingerprint(provider: str, model: str | None, dimension: int) -> str:
    """kimun's embedder fingerprint: ``provider:model:dimension``, the model lower-cased.

    ``model=None`` (a fastembed config that names no model) is ``default``
    (``EmbedderConfig::fingerprint`` in kimun's ``server/src/config.rs``).

    >>> kimun_fingerprint("fastembed", "BGESmallENV15", 384)
    'fastembed:bgesmallenv15:384'
    >>> kimun_fingerprint("fastembed", None, 1024)
    'fastembed:default:1024'
    """
    name = model if model is not None else "default"
    return f"{provider}:{name.lower()}:{dimension}"


def check_chunks(chunks: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    if isinstance(chunks, str | bytes):
        raise UsageError("embed_documents takes a list of (title, text) pairs, not a string")
    pairs = list(chunks)
    for i, pair in enumerate(pairs):
        if (
            not isinstance(pair, tuple | list)
            or len(pair) != 2
            or not all(isinstance(part, str) for part in pair)
        ):
            raise UsageError(f"chunks[{i}] must be a (title, text) pair of strings, got {pair!r}")
    return pairs


def check_query(query: object) -> str:
    if not isinstance(query, str):
        raise UsageError(f"the query must be a string, got {type(query).__name__}")
    return query


class Batched:
    """What every embedder shares: batching, the bar, the width checks, the fingerprint."""

    name: str
    provider: str
    progress: bool
    _dimension: int | None
    _fingerprint_model: str | None

    @property
    def dimension(self) -> int | None:
        """The vectors' width: known from the model table or the first answer, else None."""
        return self._dimension

    @property
    def fingerprint(self) -> str:
        """kimun's fingerprint, ``provider:model:dimension`` (the model lower-cased).

        An HTTP embedder whose width is not known yet embeds
        :data:`PROBE_TEXT` first, as kimun's server does when it starts.
        """
        dimension = self._dimension if self._dimension is not None else self.probe()
        return kimun_fingerprint(self.provider, self._fingerprint_model, dimension)

    def probe(self) -> int:
        """Learn the width by embedding :data:`PROBE_TEXT` (kimun's probe); returns it."""
        sys.audit(EMBED_EVENT, self.name, "probe", 1)
        vectors = self._embed_batch([PROBE_TEXT], "the dimension probe")
        if vectors.shape[1] == 0:
            raise ProtocolError(f"{self.name} returned no vector on probe")
        return int(vectors.shape[1])

    def embed_texts(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` exactly as given (no framing) in one call; float32 ``(n, d)``."""
        raise NotImplementedError

    def _embed_batch(self, texts: list[str], what: str) -> Vectors:
        """:meth:`embed_texts`, refusing another number of vectors than ``texts``
        (``what`` they are, for the message)."""
        vectors = self.embed_texts(texts)
        if vectors.shape[0] != len(texts):
            raise self._count_error(int(vectors.shape[0]), what)
        return vectors

    def _count_error(self, got: int, what: str) -> ProtocolError:
        return ProtocolError(
            f"{self.name} returned {got} vectors for {what}; kimun refuses such an answer too"
        )

    def _document_prefix(self) -> str:
        raise NotImplementedError

    def _query_prefix(self) -> str:
        raise NotImplementedError

    def embed_documents(
        self, chunks: Sequence[tuple[str, str]], *, progress: bool | None = None
    ) -> Vectors:
        """Embed ``(title, text)`` chunks as kimun indexes them, :data:`BATCH_SIZE` per call.

        Parameters
        ----------
        chunks:
            ``(title, text)`` pairs, as kimun's server splits a vault.
        progress:
            Show a tqdm bar over the chunks (default: the embedder's
            ``progress``); shown only when there is more than one batch.

        Returns
        -------
        numpy.ndarray
            float32 ``(n, d)``, row ``i`` for ``chunks[i]``: the model's raw
            vectors (kimun's stores normalise them). No chunks: ``(0, d)``, or
            ``(0, 0)`` while the width is unknown.

        Raises
        ------
        ProtocolError
            A batch answered with another number of vectors than it sent, or
            with something that is not vectors.
        DimensionError
            Vectors of another width than the ones before.
        ServerUnavailable, AuthError, ServerStatusError
            The endpoint failed (HTTP embedders).

        Notes
        -----
        A run that fails erases its bar: the error is left alone on stderr.
        """
        pairs = check_chunks(chunks)
        prefix = self._document_prefix()
        texts = [document_text(title, text, prefix) for title, text in pairs]
        if not texts:
            return np.zeros((0, self._dimension or 0), dtype=np.float32)
        show = self.progress if progress is None else progress
        parts: list[Vectors] = []
        with tqdm(
            total=len(texts),
            desc=f"embedding ({self.name})",
            unit="chunk",
            disable=not show or len(texts) <= BATCH_SIZE,
        ) as bar:
            try:
                for start in range(0, len(texts), BATCH_SIZE):
                    batch = texts[start : start + BATCH_SIZE]
                    end = start + len(batch) - 1
                    sys.audit(EMBED_EVENT, self.name, "documents", len(batch))
                    parts.append(
                        self._embed_batch(batch, f"{len(batch)} chunks (chunks {start}..{end})")
                    )
                    bar.update(len(batch))
            except BaseException:
                bar.leave = False  # closing clears the bar's line instead of ending it
                raise
        return np.ascontiguousarray(np.concatenate(parts), dtype=np.float32)

    def embed_query(self, query: str) -> Vectors:
        """Embed a query as kimun's server does before searching; float32 ``(d,)``."""
        text = query_text(check_query(query), self._query_prefix())
        sys.audit(EMBED_EVENT, self.name, "query", 1)
        query_vector: Vectors = self._embed_batch([text], "one query")[0]
        return query_vector

    def _checked_width(self, vectors: Vectors) -> Vectors:
        """``vectors`` if their width is the embedder's (learning it on the first answer)."""
        if vectors.shape[0] == 0:
            return vectors
        width = int(vectors.shape[1])
        self._check_width(width)
        self._dimension = width
        return vectors

    def _check_width(self, width: int) -> None:
        """Refuse vectors ``width`` wide when the embedder's are known to be another width."""
        if self._dimension is not None and width != self._dimension:
            raise DimensionError(
                f"{self.name} returned {width}-d vectors, but its vectors are "
                f"{self._dimension}-d; the model behind the endpoint changed? Embed the vault "
                "again with one model: vectors of two widths cannot be compared",
                expected=self._dimension,
                actual=width,
            )
