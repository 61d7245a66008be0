"""Retrievers: anything that turns a query into kimun wire chunks.

A :class:`Retriever` is a callable ``retriever(query, k=10)`` returning a
sequence of :class:`~askkit.ChunkResult`. askkit's local BM25 index
(:class:`LocalIndex`), the kimun server client (:class:`KimunClient`, which
waits and retries as its :class:`ClientSettings` say) and any plain function
satisfy it; :func:`as_retriever` adapts objects that only have
a ``search`` method and functions that return wire dicts or an
``/api/embeddings`` response.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from askkit._http.settings import ClientSettings
from askkit.errors import SchemaError
from askkit.wire import ChunkResult, EmbeddingsResponse

if TYPE_CHECKING:
    from askkit.retrieve.client import AsyncKimunClient, Health, KimunClient, SearchResult
    from askkit.retrieve.local import LocalIndex

__all__ = [
    "CONTEXT_SIZES",
    "TOKEN_ENV",
    "AsyncKimunClient",
    "ClientSettings",
    "Health",
    "KimunClient",
    "LocalIndex",
    "Retriever",
    "SearchResult",
    "as_retriever",
    "normalize_chunks",
]

#: The environment variable the server client reads its token from when given none.
TOKEN_ENV = "ASKKIT_KIMUN_TOKEN"  # noqa: S105 - a variable name, not a secret

#: kimun's ``context_size`` values and the number of chunks each asks for.
CONTEXT_SIZES: Mapping[str, int] = {"small": 10, "medium": 20, "large": 40}

_LAZY = {
    "LocalIndex": "askkit.retrieve.local",
    "KimunClient": "askkit.retrieve.client",
    "AsyncKimunClient": "askkit.retrieve.client",
    "Health": "askkit.retrieve.client",
    "SearchResult": "askkit.retrieve.client",
}


def __getattr__(name: str) -> Any:
    """Import the local index and the server client on first use (they pull bm25s, httpx)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'askkit.retrieve' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


@runtime_checkable
class Retriever(Protocol):
    """Query in, chunks out (best first, ordinals 1-based ranks)."""

    def __call__(self, query: str, k: int = 10) -> Sequence[ChunkResult]:
        """Retrieve up to ``k`` chunks for ``query``."""
        ...


def normalize_chunks(result: object) -> tuple[ChunkResult, ...]:
    """Coerce a retriever's result to a tuple of chunks.

    Accepts chunks, wire dicts, an :class:`EmbeddingsResponse` or its dict
    form, or an object with a ``chunks`` attribute.
    """
    if isinstance(result, EmbeddingsResponse):
        return result.chunks
    if isinstance(result, Mapping):
        return EmbeddingsResponse.from_dict(result).chunks
    chunks = getattr(result, "chunks", None)
    if chunks is not None and not isinstance(result, Sequence):
        return normalize_chunks(chunks)
    if isinstance(result, str | bytes) or not isinstance(result, Sequence):
        raise SchemaError(
            "a retriever must return a list of chunks (ChunkResult or wire dicts)",
            value=type(result).__name__,
        )
    return tuple(
        item if isinstance(item, ChunkResult) else ChunkResult.from_dict(item, field=f"[{i}]")
        for i, item in enumerate(result)
    )


class _Adapted:
    """Wraps a search method or a plain function as a :class:`Retriever`."""

    def __init__(self, fn: Callable[..., Any], name: str) -> None:
        self._fn = fn
        self._takes_k = _accepts_k(fn)
        self.name = name

    def __call__(self, query: str, k: int = 10) -> Sequence[ChunkResult]:
        result = self._fn(query, k=k) if self._takes_k else self._fn(query)
        chunks = normalize_chunks(result)
        return chunks[:k]

    def __repr__(self) -> str:
        return f"<retriever {self.name}>"


def _accepts_k(fn: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return "k" in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def as_retriever(obj: object) -> Retriever:
    """Adapt ``obj`` to the :class:`Retriever` protocol.

    ``obj`` may be a retriever already (a :class:`LocalIndex`, a
    :class:`KimunClient`), an object with a ``search(query, k=...)`` method, or
    a callable ``f(query)`` / ``f(query, k=...)`` returning chunks, wire dicts
    or an ``/api/embeddings`` response.

    >>> r = as_retriever(lambda q: [{"path": "a.md", "title": q, "content": "",
    ...                              "hash": "", "similarity_score": 1.0}])
    >>> r("hello")[0].title
    'hello'
    """
    search = getattr(obj, "search", None)
    if callable(search) and not callable(getattr(obj, "__call__", None)):  # noqa: B004
        return _Adapted(search, type(obj).__name__)
    if callable(obj):
        return _Adapted(obj, getattr(obj, "__name__", type(obj).__name__))
    raise TypeError(
        f"expected a retriever: a callable query -> chunks or an object with .search(), "
        f"got {type(obj).__name__}"
    )
