"""Rerankers as kimun's server runs them: a fastembed cross-encoder or an HTTP rerank endpoint.

kimun's server (``server/src/reranker/``, commit f28bdd54) may rescore the
candidate pool with a reranker. Both of its backends score the text
``title + "\\n" + text`` (:func:`rerank_document`) against the query:

- the local cross-encoder, fastembed's ``BGERerankerBase``
  (:class:`FastEmbedReranker`). Its scores are raw logits, which kimun's
  adapter maps through the sigmoid ``1 / (1 + e^-x)`` one by one;
- ``POST {url}/rerank`` with ``{model, query, documents}`` and no ``top_n``
  (:class:`HttpReranker`: Cohere, Jina, Voyage, vLLM, Infinity), answered by
  ``{"results": [{"index", "relevance_score"}]}``, Voyage's ``{"data": [...]}``,
  or ``score`` in place of ``relevance_score``.

:func:`apply_reranker` then does what kimun's pipeline does with the answer
(:func:`askkit.ranking.rerank`): a batch with a score outside ``0..=1`` goes
through the sigmoid, the pairs are validated (one per chunk, indices in range
and unique) and sorted. A reranker that fails, or answers with malformed
pairs, leaves the pool in vector order, as kimun does, and askkit says so
with a warning.

Examples
--------
>>> rerank_document("Sourdough\\x1fStarter", "Feed it daily.")
'Sourdough\\x1fStarter\\nFeed it daily.'
>>> parse_reranker("http:https://api.cohere.com/v2:rerank-v3.5")
HttpReranker('https://api.cohere.com/v2', 'rerank-v3.5')
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from numbers import Integral, Real
from typing import Any, Protocol, runtime_checkable

from askkit._warn import warn_user
from askkit.dense._fastembed import cross_encoder
from askkit.dense._fastembed_models import resolve_reranker
from askkit.dense._http import DEFAULT_TIMEOUT, JsonEndpoint
from askkit.dense.embedders import shown_spec, split_url_model
from askkit.errors import UsageError
from askkit.ranking.rerank import Reranked, rerank, sigmoid
from askkit.wire import ChunkResult

__all__ = [
    "DEFAULT_RERANKER",
    "FastEmbedReranker",
    "HttpReranker",
    "Reranker",
    "adapted_scores",
    "apply_reranker",
    "parse_reranker",
    "rerank_document",
]

#: kimun's cross-encoder (``RerankerModel::BGERerankerBase``), as Python fastembed names it.
DEFAULT_RERANKER = "BAAI/bge-reranker-base"
#: Documents per cross-encoder run (Rust fastembed's default, which kimun keeps).
_CROSS_ENCODER_BATCH = 256
_PROBE_QUERY, _PROBE_DOCUMENT = "probe", "connectivity probe"  # kimun's HttpReranker probe


@runtime_checkable
class Reranker(Protocol):
    """What rescores a pool: ``(index, score)`` pairs for a query and its documents.

    A reranker whose ``logits`` attribute is true answers raw cross-encoder
    logits; :func:`apply_reranker` maps each through the sigmoid first, as
    kimun's cross-encoder adapter does.
    """

    name: str

    def score(self, query: str, documents: Sequence[str]) -> list[tuple[int, float]]:
        """The backend's ``(index, score)`` pairs, in its order; typed errors on failure."""
        ...


def rerank_document(title: str, text: str) -> str:
    """The text kimun's rerankers score for a chunk: ``title + "\\n" + text``.

    >>> rerank_document("Title", "body")
    'Title\\nbody'
    """
    return f"{title}\n{text}"


def adapted_scores(reranker: object, scored: object) -> object:
    """What kimun's adapter hands on from ``reranker``'s answer ``scored``.

    A cross-encoder (a reranker whose ``logits`` attribute is true) answers
    raw logits, which kimun's cross-encoder adapter maps through the sigmoid
    one by one (malformed pairs kept, for :func:`askkit.ranking.rerank` to
    refuse); any other reranker's answer is handed on as it is. Every path
    that reranks a pool (:func:`apply_reranker`, the trace) goes through here.

    >>> class Logits:
    ...     logits = True
    >>> adapted_scores(Logits(), [(0, 0.0), (1, "x")]), adapted_scores(object(), [(0, 2.0)])
    ([(0, 0.5), (1, 'x')], [(0, 2.0)])
    """
    if not getattr(reranker, "logits", False) or not isinstance(scored, list | tuple):
        return scored
    out: list[object] = []
    for pair in scored:
        if (
            isinstance(pair, tuple | list)
            and len(pair) == 2
            and isinstance(pair[1], Real)
            and not isinstance(pair[1], bool)
        ):
            out.append((pair[0], sigmoid(float(pair[1]))))
        else:
            out.append(pair)
    return out


def apply_reranker(reranker: Reranker, query: str, pool: Sequence[ChunkResult]) -> Reranked:
    """Rerank ``pool`` for ``query`` as kimun's server does, or keep the vector order.

    Every chunk is scored as :func:`rerank_document` of its title and content.
    A reranker with ``logits`` set has each score mapped through the sigmoid
    first (kimun's cross-encoder adapter); then :func:`askkit.ranking.rerank`
    sanitises a batch that leaves ``0..=1``, validates and sorts. An empty
    pool is returned as is, without calling the reranker (as kimun's do).

    Parameters
    ----------
    reranker:
        A :class:`Reranker`.
    query:
        The query the pool was retrieved for.
    pool:
        The de-duplicated, vector-ranked pool, best first.

    Returns
    -------
    askkit.ranking.Reranked
        The ranked pool; on a failed call or malformed pairs, the pool in its
        vector order with the reason, and a ``UserWarning`` saying so. A batch
        that needed the sigmoid is flagged ``sanitised`` and warned about, as
        kimun logs it.

    Examples
    --------
    >>> from askkit.ranking.pool import pool_of
    >>> class Length:
    ...     name = "length"
    ...     def score(self, query, documents):
    ...         return [(i, len(d) / 100) for i, d in enumerate(documents)]
    >>> out = apply_reranker(Length(), "q", pool_of([0.9, 0.8]))
    >>> out.reranked, [c.path for c in out.pool]
    (True, ['/n0.md', '/n1.md'])
    """
    chunks = tuple(pool)
    if not chunks:
        return rerank(chunks, [])
    documents = [rerank_document(c.title, c.content) for c in chunks]
    name = getattr(reranker, "name", type(reranker).__name__)
    try:
        scored: Any = reranker.score(query, documents)
    except Exception as exc:  # kimun: any reranker failure falls back to the vector order
        reason = (
            f"the reranker {name} failed ({type(exc).__name__}: {exc}); "
            "kimun keeps the vector order"
        )
        warn_user(reason)
        return replace(rerank(chunks, None), fallback_reason=reason)
    scored = adapted_scores(reranker, scored)
    if not isinstance(scored, list | tuple):
        reason = (
            f"the reranker {name} returned a {type(scored).__name__}, not (index, score) "
            "pairs; kimun keeps the vector order"
        )
        warn_user(reason)
        return replace(rerank(chunks, None), fallback_reason=reason)
    result = rerank(chunks, scored)
    if result.fallback_reason is not None:
        warn_user(f"the reranker {name}: {result.fallback_reason}")
    elif result.sanitised:
        warn_user(
            f"the reranker {name} returned scores outside 0..1: normalized (sigmoid; "
            "non-finite -> 0), as kimun does. The context cuts assume calibrated relevance "
            "scores; check the rerank endpoint's score scale"
        )
    return result


class FastEmbedReranker:
    """kimun's local cross-encoder: fastembed's ``TextCrossEncoder``, in process.

    Parameters
    ----------
    model:
        A Rust fastembed reranker (variant name or model code, such as
        ``BGERerankerBase``) or a Python fastembed cross-encoder name
        (``BAAI/bge-reranker-base``, kimun's, the default; or a custom model
        registered with ``TextCrossEncoder.add_custom_model``).
    cache_dir, local_files_only, specific_model_path, threads:
        As for :class:`~askkit.dense.FastEmbedEmbedder`.

    Notes
    -----
    :meth:`score` returns the model's raw logits (``logits`` is true), as the
    Rust and Python cross-encoders compute them; :func:`apply_reranker` maps
    them through the sigmoid as kimun's adapter does.

    Raises
    ------
    MissingDependencyError
        fastembed is not installed (``pip install 'askkit[embed]'``).
    UsageError
        A model fastembed does not know.
    StoreError
        The model is not in the cache and cannot be downloaded
        (``local_files_only``, ``HF_HUB_OFFLINE``, the hub out of reach: at
        once, with no retry), or fastembed could not load it.
    """

    logits = True

    def __init__(
        self,
        model: str = DEFAULT_RERANKER,
        *,
        cache_dir: str | os.PathLike[str] | None = None,
        local_files_only: bool = False,
        specific_model_path: str | os.PathLike[str] | None = None,
        threads: int | None = None,
    ) -> None:
        if not isinstance(model, str) or not model:
            raise UsageError("the reranker model must be a non-empty string")
        rust = resolve_reranker(model)
        self.python_model = rust.python_model if rust is not None else model
        self.name = f"fastembed:{self.python_model}"
        self._model = cross_encoder(
            self.python_model,
            cache_dir=cache_dir,
            local_files_only=local_files_only,
            specific_model_path=specific_model_path,
            threads=threads,
        )

    def __repr__(self) -> str:
        return f"FastEmbedReranker({self.python_model!r})"

    def score(self, query: str, documents: Sequence[str]) -> list[tuple[int, float]]:
        """The cross-encoder's raw logit for each document, ``(index, logit)`` in input order."""
        if not isinstance(query, str):
            raise UsageError(f"the query must be a string, got {type(query).__name__}")
        docs = list(documents)
        if not all(isinstance(d, str) for d in docs):
            raise UsageError("the documents must be strings")
        if not docs:
            return []
        scores = self._model.rerank(query, docs, batch_size=_CROSS_ENCODER_BATCH)
        return [(i, float(s)) for i, s in enumerate(scores)]


class HttpReranker:
    """A Cohere/Jina/Voyage-compatible rerank endpoint: ``POST {url}/rerank``.

    The request is ``{model, query, documents}`` (``model`` left out when
    ``None``; never a ``top_n``: kimun needs one score per document). The
    answer's list is ``results`` (Cohere, Jina, vLLM) or ``data`` (Voyage), each
    item ``{"index", "relevance_score"}`` or ``{"index", "score"}``. An answer
    holding ``NaN``, ``Infinity`` or a number beyond float64's range is a
    :class:`~askkit.errors.ProtocolError`, as kimun's JSON parser refuses it
    (its reranker then fails, and the vector order stays).

    Parameters
    ----------
    url:
        The base URL including the API version where the provider has one
        (``https://api.cohere.com/v2``); ``/rerank`` is appended.
    model:
        The model (``rerank-v3.5``); ``None`` for a single-model server.
    api_key:
        Sent as a bearer token; never shown.
    key_env:
        The environment variable ``api_key`` was read from, if any: a 401's
        hint names it (the command line's ``ASKKIT_RERANK_API_KEY``).
    timeout:
        Seconds one request may take as a whole (kimun sets none).

    Notes
    -----
    kimun probes the endpoint when its server starts (one document); here
    :meth:`probe` does, when called.
    """

    path = "/rerank"

    def __init__(
        self,
        url: str,
        model: str | None = None,
        *,
        api_key: str | None = None,
        key_env: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        if model is not None and (not isinstance(model, str) or not model):
            raise UsageError("the reranker model must be a non-empty string, or None")
        self.model = model
        self.name = f"http:{model}" if model else "http"
        self._endpoint = JsonEndpoint(
            url, api_key=api_key, key_env=key_env, timeout=timeout, what="the reranker"
        )

    @property
    def url(self) -> str:
        """The base URL, as shown (a password in it is ``***``)."""
        return self._endpoint.base_url

    @property
    def has_key(self) -> bool:
        """Whether a bearer key is sent (the key itself is not exposed)."""
        return self._endpoint.has_key

    def close(self) -> None:
        """Close the HTTP connections."""
        self._endpoint.close()

    def __enter__(self) -> HttpReranker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        key = ", api_key=<hidden>" if self.has_key else ""
        return f"HttpReranker({self.url!r}, {self.model!r}{key})"

    def probe(self) -> None:
        """kimun's start-up probe: rerank one document, so a bad URL, key or model shows now."""
        self.score(_PROBE_QUERY, [_PROBE_DOCUMENT])

    def score(self, query: str, documents: Sequence[str]) -> list[tuple[int, float]]:
        """The endpoint's ``(index, score)`` pairs, in its order (not validated: see
        :func:`apply_reranker`)."""
        if not isinstance(query, str):
            raise UsageError(f"the query must be a string, got {type(query).__name__}")
        docs = list(documents)
        if not all(isinstance(d, str) for d in docs):
            raise UsageError("the documents must be strings")
        if not docs:
            return []
        body: dict[str, Any] = {"query": query, "documents": docs}
        if self.model is not None:
            body = {"model": self.model, **body}
        obj = self._endpoint.post(self.path, body)
        return self._pairs(obj)

    def _pairs(self, obj: object) -> list[tuple[int, float]]:
        bad = self._endpoint.shape_error
        if not isinstance(obj, dict):
            raise bad(self.path, 'expected {"results": [{"index", "relevance_score"}]}', obj)
        keys = [k for k in ("results", "data") if k in obj]
        if len(keys) != 1:
            why = 'both "results" and "data"' if keys else 'neither "results" nor Voyage\'s "data"'
            raise bad(self.path, f"the answer holds {why}", obj)
        items = obj[keys[0]]
        if not isinstance(items, list):
            raise bad(self.path, f'"{keys[0]}" is not a list', obj)
        pairs: list[tuple[int, float]] = []
        for i, item in enumerate(items):
            where = f"{keys[0]}[{i}]"
            if not isinstance(item, dict):
                raise bad(self.path, f"{where} is not an object", obj)
            index = item.get("index")
            if not isinstance(index, Integral) or isinstance(index, bool) or index < 0:
                raise bad(self.path, f"{where}.index is not a whole number >= 0", obj)
            names = [k for k in ("relevance_score", "score") if k in item]
            if len(names) != 1:
                why = "both relevance_score and score" if names else "no relevance_score"
                raise bad(self.path, f"{where} has {why}", obj)
            value = item[names[0]]
            if not isinstance(value, Real) or isinstance(value, bool):
                raise bad(self.path, f"{where}.{names[0]} is not a number", obj)
            pairs.append((int(index), float(value)))
        return pairs


def parse_reranker(
    spec: str,
    *,
    api_key: str | None = None,
    key_env: str | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    local_files_only: bool = False,
    timeout: float = DEFAULT_TIMEOUT,
) -> Reranker:
    """The reranker a command-line spec names.

    ``fastembed`` (kimun's cross-encoder, BGE-Reranker-Base), ``fastembed:MODEL``,
    ``http:URL`` or ``http:URL:MODEL`` (``URL`` is ``http(s)://host[:port][/path]``;
    ``MODEL`` may contain ``:``). ``cache_dir`` and ``local_files_only`` go to
    fastembed, ``api_key``, ``key_env`` (the environment variable the key was
    read from, for a 401's hint) and ``timeout`` to the HTTP reranker.

    Raises
    ------
    UsageError
        A spec of another shape, or an API key for the local cross-encoder.
    """
    shapes = "fastembed, fastembed:MODEL, http:URL or http:URL:MODEL"
    if not isinstance(spec, str):
        raise UsageError(f"a reranker spec is a string ({shapes}), got {type(spec).__name__}")
    kind, _, rest = spec.partition(":")
    if kind == "fastembed":
        if api_key is not None:
            raise UsageError("the fastembed cross-encoder takes no API key")
        return FastEmbedReranker(
            rest or DEFAULT_RERANKER, cache_dir=cache_dir, local_files_only=local_files_only
        )
    if kind == "http":
        parts = split_url_model(rest)
        if parts is not None:
            return HttpReranker(
                parts[0], parts[1], api_key=api_key, key_env=key_env, timeout=timeout
            )
    raise UsageError(f"{shown_spec(spec)} is not a reranker spec: expected {shapes}")
