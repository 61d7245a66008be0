"""kimun's HTTP embedders: Ollama (``POST {url}/api/embed``) and OpenAI-compatible endpoints.

Both frame texts as kimun's ``HttpEmbedder`` does (``doc_prefix + title +
"\\n" + text``, ``query_prefix + query``, the prefixes empty unless
configured), send :data:`~askkit.dense.embedders.BATCH_SIZE` texts per call
through askkit's one HTTP core, read the answer in bounded memory and refuse
one with another number of vectors, another width, or (OpenAI) indexes that
do not pair each vector with one text. An API key never appears in a message
or a repr.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from askkit._http.reading import Numbers
from askkit.dense._embedding import Batched, Vectors, check_query
from askkit.dense._http import DEFAULT_TIMEOUT, JsonEndpoint
from askkit.errors import DimensionError, ProtocolError, UsageError

__all__ = ["OllamaEmbedder", "OpenAIEmbedder"]


def _texts(n: int) -> str:
    return "1 text" if n == 1 else f"{n} texts"


class _HttpEmbedder(Batched):
    """An Ollama or OpenAI-compatible embedder (kimun's ``HttpEmbedder``)."""

    path: str

    def __init__(
        self,
        url: str,
        model: str,
        *,
        api_key: str | None,
        key_env: str | None,
        doc_prefix: str,
        query_prefix: str,
        timeout: float,
        progress: bool,
    ) -> None:
        if not isinstance(model, str) or not model:
            raise UsageError(f"{self.provider}: the model must be a non-empty string")
        for field, value in (("doc_prefix", doc_prefix), ("query_prefix", query_prefix)):
            if not isinstance(value, str):
                raise UsageError(f"{field} must be a string, got {type(value).__name__}")
        self.model = model
        self.doc_prefix = doc_prefix
        self.query_prefix = query_prefix
        self.progress = progress
        self.name = f"{self.provider}:{model}"
        self._fingerprint_model = model
        self._dimension = None
        self._endpoint = JsonEndpoint(
            url,
            api_key=api_key,
            key_env=key_env,
            takes_key=self.provider != "ollama",
            timeout=timeout,
            what=f"the {self.provider} embedder",
        )

    @property
    def url(self) -> str:
        """The base URL, as shown (a password in it is ``***``)."""
        return self._endpoint.base_url

    @property
    def timeout(self) -> float:
        """Seconds one request may take as a whole."""
        return self._endpoint.timeout

    def close(self) -> None:
        """Close the HTTP connections."""
        self._endpoint.close()

    def __enter__(self) -> _HttpEmbedder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _document_prefix(self) -> str:
        return self.doc_prefix

    def _query_prefix(self) -> str:
        return self.query_prefix

    def embed_texts(self, texts: Sequence[str]) -> Vectors:
        """POST ``texts`` as they are (``{model, input}``); their vectors, float32 ``(n, d)``.

        The answer's vector count and widths are checked before a number of
        it is decoded, and the numbers are decoded straight into the float32
        matrix returned (see :func:`askkit._http.reading.read_vectors`).
        """
        batch = [check_query(t) for t in texts]
        return self._embed_batch(batch, _texts(len(batch)))

    def _embed_batch(self, texts: list[str], what: str) -> Vectors:
        answer = self._endpoint.post_vectors(self.path, {"model": self.model, "input": texts})
        items = self._items(answer.value)
        if len(items) != len(texts):
            raise self._count_error(len(items), what)
        rows = self._ordered(items, answer.value)
        if not rows:
            return np.zeros((0, self._dimension or 0), dtype=np.float32)
        width = rows[0].count
        for i, row in enumerate(rows):
            if row.count != width:
                raise DimensionError(
                    f"{self.name} returned vectors of different widths in one answer "
                    f"(vector 0 is {width}-d, vector {i} is {row.count}-d)",
                    expected=width,
                    actual=row.count,
                )
        self._check_width(width)  # before the numbers are decoded, too
        vectors = answer.matrix(rows)
        if not all(np.isfinite(row).all() for row in vectors):  # a row at a time: no n x d mask
            raise self._bad(
                "a vector holds a number beyond float32's range (kimun stores float32)",
                answer.value,
            )
        return self._checked_width(vectors)

    def _items(self, obj: object) -> list[tuple[int | None, Numbers]]:
        """The answer's vectors, each with its ``index`` (None where the answer has none)."""
        raise NotImplementedError

    def _ordered(self, items: list[tuple[int | None, Numbers]], obj: object) -> list[Numbers]:
        """The vectors in input order: by ``index`` when the answer gives them.

        kimun sorts by index (a missing one counts as 0, the sort is stable)
        and takes whatever comes out: an index given twice, or past the
        inputs, pairs vectors with the wrong texts without a word. askkit
        refuses such an answer; one with no index at all keeps its order.
        """
        if all(index is None for index, _ in items):
            return [vector for _, vector in items]
        rows: list[Numbers | None] = [None] * len(items)
        first: dict[int, int] = {}
        for i, (index, vector) in enumerate(items):
            if index is None:
                given = next(j for j, (other, _) in enumerate(items) if other is not None)
                raise self._bad(f"data[{i}] has no index, but data[{given}] has one", obj)
            if index >= len(items):
                raise self._bad(
                    f"data[{i}].index is {index}, but {_texts(len(items))} were sent", obj
                )
            if index in first:
                raise self._bad(
                    f"data[{i}].index {index} repeats data[{first[index]}].index: two vectors "
                    "for one text (kimun would pair them with the wrong chunks)",
                    obj,
                )
            first[index] = i
            rows[index] = vector
        return [row for row in rows if row is not None]

    def _bad(self, why: str, obj: object) -> ProtocolError:
        return self._endpoint.shape_error(self.path, why, obj)

    def __repr__(self) -> str:
        key = ", api_key=<hidden>" if self._endpoint.has_key else ""
        return f"{type(self).__name__}({self.url!r}, {self.model!r}{key})"


class OllamaEmbedder(_HttpEmbedder):
    """An Ollama server's embedder: ``POST {url}/api/embed`` with ``{model, input}``.

    The answer is ``{"embeddings": [[...], ...]}``, one vector per input in
    order. Documents are ``doc_prefix + title + "\\n" + text``, queries
    ``query_prefix + query`` (kimun's defaults: no prefixes; nomic models want
    ``search_document: `` and ``search_query: ``). Ollama takes no key.

    Parameters
    ----------
    url:
        The Ollama server (``http://127.0.0.1:11434``).
    model:
        The model as Ollama names it (``nomic-embed-text``).
    doc_prefix, query_prefix:
        kimun's ``[embedder] doc_prefix`` and ``query_prefix``.
    timeout:
        Seconds one request may take as a whole (kimun sets none).
    progress:
        Show a tqdm bar while embedding more than one batch.
    """

    provider = "ollama"
    path = "/api/embed"

    def __init__(
        self,
        url: str,
        model: str,
        *,
        doc_prefix: str = "",
        query_prefix: str = "",
        timeout: float = DEFAULT_TIMEOUT,
        progress: bool = True,
    ) -> None:
        super().__init__(
            url,
            model,
            api_key=None,
            key_env=None,
            doc_prefix=doc_prefix,
            query_prefix=query_prefix,
            timeout=timeout,
            progress=progress,
        )

    def _items(self, obj: object) -> list[tuple[int | None, Numbers]]:
        rows = obj.get("embeddings") if isinstance(obj, dict) else None
        if not isinstance(rows, list):
            raise self._bad('expected {"embeddings": [[numbers...], ...]}', obj)
        out: list[tuple[int | None, Numbers]] = []
        for i, row in enumerate(rows):
            if not isinstance(row, Numbers):  # every array of JSON numbers is one
                raise self._bad(f"embeddings[{i}] is not a non-empty list of numbers", obj)
            out.append((None, row))
        return out


class OpenAIEmbedder(_HttpEmbedder):
    """An OpenAI-compatible embedder: ``POST {url}/embeddings`` with ``{model, input}``.

    The answer is ``{"data": [{"index": i, "embedding": [...]}, ...]}``,
    sorted by ``index`` as kimun sorts it (not every compatible server answers
    in input order). Unlike kimun, askkit refuses an index given twice, past
    the inputs, or missing beside others (each would pair a vector with the
    wrong chunk); an answer with no index at all keeps its order, as in kimun.
    ``api_key`` is sent as a bearer token and never shown.

    Parameters
    ----------
    url:
        The base URL including the API version (``https://api.openai.com/v1``,
        ``http://127.0.0.1:11434/v1`` for Ollama's shim).
    model:
        The model (``text-embedding-3-small``).
    api_key:
        The bearer key, if the endpoint wants one.
    key_env:
        The environment variable ``api_key`` was read from, if any: a 401's
        hint names it (the command line's ``ASKKIT_EMBED_API_KEY``).
    doc_prefix, query_prefix:
        kimun's ``[embedder] doc_prefix`` and ``query_prefix``.
    timeout:
        Seconds one request may take as a whole (kimun sets none).
    progress:
        Show a tqdm bar while embedding more than one batch.
    """

    provider = "openai"
    path = "/embeddings"

    def __init__(
        self,
        url: str,
        model: str,
        *,
        api_key: str | None = None,
        key_env: str | None = None,
        doc_prefix: str = "",
        query_prefix: str = "",
        timeout: float = DEFAULT_TIMEOUT,
        progress: bool = True,
    ) -> None:
        super().__init__(
            url,
            model,
            api_key=api_key,
            key_env=key_env,
            doc_prefix=doc_prefix,
            query_prefix=query_prefix,
            timeout=timeout,
            progress=progress,
        )

    @property
    def has_key(self) -> bool:
        """Whether a bearer key is sent (the key itself is not exposed)."""
        return self._endpoint.has_key

    def _items(self, obj: object) -> list[tuple[int | None, Numbers]]:
        data = obj.get("data") if isinstance(obj, dict) else None
        if not isinstance(data, list):
            raise self._bad('expected {"data": [{"index": i, "embedding": [...]}, ...]}', obj)
        out: list[tuple[int | None, Numbers]] = []
        for i, item in enumerate(data):
            if not isinstance(item, dict):
                raise self._bad(f"data[{i}] is not an object", obj)
            index = item.get("index")
            if "index" in item and (type(index) is not int or index < 0):  # null too, as kimun
                raise self._bad(f"data[{i}].index is not a whole number >= 0", obj)
            vector = item.get("embedding")
            if not isinstance(vector, Numbers):
                raise self._bad(f"data[{i}].embedding is not a non-empty list of numbers", obj)
            out.append((index, vector))
        return out


# -- from a command-line spec
