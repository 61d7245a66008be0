"""How text becomes BM25 terms: :class:`Analyzer` (folding, words, stop words, stemming).

The local index (:class:`askkit.retrieve.LocalIndex`) analyses notes and
queries alike; :func:`tokenize` is the same rule for one text. These names are
re-exported by :mod:`askkit.retrieve.local`.
"""

from __future__ import annotations

import functools
import itertools
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import bm25s
import Stemmer

from askkit.errors import UsageError
from askkit.vault.diacritics import fold

__all__ = [
    "DEFAULT_STEMMER",
    "DEFAULT_STOPWORDS",
    "STOPWORDS",
    "Analyzer",
    "cached_analyzer",
    "tokenize",
]

_TOKEN = re.compile(r"(?u)\b\w\w+\b")
#: The stop-word lists :class:`Analyzer` knows: name -> words (``"en"``: bm25s' English list).
STOPWORDS: dict[str, frozenset[str]] = {"en": frozenset(bm25s.stopwords.STOPWORDS_EN)}
#: The default stop-word list of the BM25 baseline (see :class:`Analyzer` for why).
DEFAULT_STOPWORDS: str | None = "en"
#: The default stemmer of the BM25 baseline: Snowball English (see :class:`Analyzer` for why).
DEFAULT_STEMMER: str | None = "english"


@dataclass(frozen=True, slots=True)
class Analyzer:
    """How text becomes BM25 terms: the settings and the code, in one place.

    Every text, document or query, goes through the same steps: kimun's
    diacritics folding (:func:`askkit.vault.diacritics.fold`), lower-casing,
    words of two or more word characters, then the stop words of
    ``stopwords`` are dropped, then the remaining words are stemmed with the
    Snowball algorithm ``stemmer`` (PyStemmer, the stemmer bm25s itself uses),
    as ``bm25s.tokenize`` orders them.

    The defaults, English stop words and the Snowball English stemmer, come
    from measurement (``benchmarks/bm25_variants.py``; the figures are in
    ``docs/retrieval.md``, "Stop words and stemming"): on ``data/vault`` with
    ``data/queries.tsv`` and on the Cranfield collection, stemming raised
    nDCG@10, MRR, recall@10 and MAP over stop words alone (on Cranfield by
    +0.02-0.03, p <= 0.001 for three of the four); stop words alone changed
    nothing measurable, and stay because they cost no quality and make the
    index and each query smaller.

    Parameters
    ----------
    stopwords:
        A list of :data:`STOPWORDS` (``"en"``), or ``None`` to keep every word.
    stemmer:
        A Snowball algorithm PyStemmer knows (``"english"``, ``"porter"``,
        ``"french"``...; ``Stemmer.algorithms()``), or ``None`` not to stem.

    Examples
    --------
    >>> Analyzer()("Feeding the starters, crème fraîche")
    ['feed', 'starter', 'creme', 'fraich']
    >>> Analyzer(stopwords=None, stemmer=None)("Feeding the starters")
    ['feeding', 'the', 'starters']
    """

    stopwords: str | None = DEFAULT_STOPWORDS
    stemmer: str | None = DEFAULT_STEMMER
    _stop: frozenset[str] = field(init=False, repr=False, compare=False)
    _stem: Any = field(init=False, repr=False, compare=False)
    _lock: threading.Lock = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.stopwords is not None and self.stopwords not in STOPWORDS:
            raise UsageError(
                f"stopwords must be one of {sorted(STOPWORDS)} or None, got {self.stopwords!r}"
            )
        if self.stemmer is not None and self.stemmer not in Stemmer.algorithms():
            raise UsageError(
                f"stemmer must be a Snowball algorithm PyStemmer knows "
                f"({', '.join(Stemmer.algorithms())}) or None, got {self.stemmer!r}"
            )
        stop = STOPWORDS[self.stopwords] if self.stopwords is not None else frozenset()
        object.__setattr__(self, "_stop", stop)
        stem = Stemmer.Stemmer(self.stemmer).stemWords if self.stemmer is not None else None
        object.__setattr__(self, "_stem", stem)
        # a PyStemmer object must not be used by two threads at once
        object.__setattr__(self, "_lock", threading.Lock())

    def words(self, text: str) -> list[str]:
        """Every word of ``text``, folded and lower-cased, stop words included, unstemmed.

        >>> Analyzer().words("The Größe of São Paulo")
        ['the', 'grose', 'of', 'sao', 'paulo']
        """
        return _TOKEN.findall(fold(text).lower())

    def is_stopword(self, word: str) -> bool:
        """Whether ``word`` (folded and lower-cased) is dropped as a stop word."""
        return word in self._stop

    def stem(self, words: list[str]) -> list[str]:
        """``words`` stemmed (as they are when there is no stemmer).

        >>> Analyzer().stem(["feeding", "hydration"]), Analyzer(stemmer=None).stem(["feeding"])
        (['feed', 'hydrat'], ['feeding'])
        """
        if self._stem is None:
            return list(words)
        with self._lock:
            stems: list[str] = self._stem(words)
        return stems

    def __call__(self, text: str) -> list[str]:
        """The terms BM25 sees for ``text``: words, stop words dropped, stemmed."""
        stop = self._stop
        kept = [t for t in _TOKEN.findall(fold(text).lower()) if t not in stop]
        return self.stem(kept) if self._stem is not None and kept else kept

    def corpus(self, texts: Iterable[str]) -> list[list[str]]:
        """Many texts' terms, each distinct word stemmed once (a dict maps words to stems).

        >>> Analyzer().corpus(["feeding the starter", "starters fed"])
        [['feed', 'starter'], ['starter', 'fed']]
        """
        stop = self._stop
        docs = [[t for t in _TOKEN.findall(fold(text).lower()) if t not in stop] for text in texts]
        if self._stem is None:
            return docs
        distinct = list(set(itertools.chain.from_iterable(docs)))
        stems = dict(zip(distinct, self.stem(distinct), strict=True))
        get = stems.__getitem__
        return [list(map(get, doc)) for doc in docs]

    def params(self) -> dict[str, Any]:
        """What identifies the terms in an index cache (a cache with other terms is stale)."""
        return {
            "fold": "kimun",
            "lower": True,
            "pattern": _TOKEN.pattern,
            "stopwords": self.stopwords,
            "stemmer": self.stemmer,
            "pystemmer": _PYSTEMMER if self.stemmer is not None else None,
        }


_PYSTEMMER = Stemmer.version() if hasattr(Stemmer, "version") else "unknown"


@functools.lru_cache(maxsize=16)
def cached_analyzer(stopwords: str | None, stemmer: str | None) -> Analyzer:
    return Analyzer(stopwords=stopwords, stemmer=stemmer)


def tokenize(
    text: str,
    *,
    stopwords: str | None = DEFAULT_STOPWORDS,
    stemmer: str | None = DEFAULT_STEMMER,
) -> list[str]:
    """The tokens BM25 sees: diacritics folded, lower-cased, words of 2+ characters,
    English stop words removed, stemmed (Snowball English); see :class:`Analyzer`.

    >>> tokenize("Crème brûlée: the BEST of 2 desserts")
    ['creme', 'brule', 'best', 'dessert']
    >>> tokenize("Crème brûlée: the BEST of 2 desserts", stemmer=None)
    ['creme', 'brulee', 'best', 'desserts']
    """
    return cached_analyzer(stopwords, stemmer)(text)
