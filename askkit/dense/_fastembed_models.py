"""kimun's fastembed model names, mapped to the Python fastembed package.

kimun's server embeds with the Rust crate fastembed (kimun's Cargo.lock pins
fastembed 5.17.2, whose model list is ``src/models/text_embedding.rs`` at
fastembed-rs commit d0e8e9e9). A kimun config names a model by its Rust
``EmbeddingModel`` variant (``BGESmallENV15``) or by its model code, the
Hugging Face repository Rust downloads it from (``Xenova/bge-small-en-v1.5``),
case-insensitively (``resolve_model`` in kimun's
``server/src/dbembeddings/embedder/fastembedder.rs``). askkit runs the Python
package fastembed, whose names differ: the same BGE-small is
``BAAI/bge-small-en-v1.5`` there. :data:`EMBEDDING_MODELS` lists every Rust
variant with its code, dimension, ONNX file and pooling, and the Python model
that is the same model (:func:`resolve_model` looks one up as kimun does).

What differs between the two packages (fastembed 5.17.2 against Python
fastembed 0.9.1):

- **Different ONNX files for the same model.** Rust and Python often download
  the same model from different repositories or as a different export, so
  the vectors may differ slightly (a quantised export differs more). The
  same file is loaded for ``AllMiniLML6V2``, ``BGEBaseENV15Q``,
  ``BGESmallENV15Q``, ``NomicEmbedTextV1``, ``NomicEmbedTextV15``,
  ``NomicEmbedTextV15Q``, ``ParaphraseMLMiniLML12V2Q``,
  ``ParaphraseMLMpnetBaseV2``, ``MultilingualE5Large``, ``MxbaiEmbedLargeV1``,
  ``ClipVitB32``, ``JinaEmbeddingsV2BaseCode``, ``EmbeddingGemma300M`` and
  the five unquantised Snowflake Arctic models (:attr:`FastEmbedModel.same_file`).
  kimun's default, ``BGELargeENV15``, is ``Xenova/bge-large-en-v1.5``'s
  ``onnx/model.onnx`` in Rust and ``Qdrant/bge-large-en-v1.5-onnx``'s
  ``model.onnx`` in Python: the same weights, exported twice. The quantised
  Rust variants (names ending in ``Q``) map to the unquantised Python model
  when Python has no quantised one.
- **Models only Rust has** (no Python counterpart): ``AllMiniLML12V2``,
  ``AllMiniLML12V2Q``, ``AllMpnetBaseV2``, ``BGELargeZHV15``, ``BGEM3``,
  ``ModernBertEmbedLarge``, ``MultilingualE5Small``, ``MultilingualE5Base``,
  ``GTEBaseENV15``, ``GTEBaseENV15Q``, ``GTELargeENV15``, ``GTELargeENV15Q``.
  (Python's ``thenlper/gte-base`` is another model than Alibaba's
  ``gte-base-en-v1.5``.)
- **Models only Python has**: ``BAAI/bge-base-en``, ``BAAI/bge-small-en``,
  ``jinaai/jina-embeddings-v2-small-en`` and the ``-base-de``, ``-base-zh``,
  ``-base-es`` ones, ``jinaai/jina-embeddings-v3``, ``jinaai/jina-clip-v1``,
  ``thenlper/gte-base``, ``thenlper/gte-large``, ``Qdrant/constella-zero``,
  ``Qdrant/constella-nano``, ``Qdrant/stella-en-400M-v5-doc-onnx``,
  ``google/siglip2-base-patch16-224``,
  ``ibm-granite/granite-embedding-small-english-r2``,
  ``Qwen/Qwen3-Embedding-0.6B`` (and ``-Q``), the ``minishlab/potion`` models.
  kimun's server cannot use them; askkit can, through
  ``FastEmbedEmbedder(python_model=...)``.
- **kimun's own file.** :func:`register_kimun_file` registers with Python
  fastembed the repository, ONNX file, external weights and pooling Rust
  uses for a variant (``FastEmbedEmbedder(model, source="kimun")``), so
  askkit runs the file kimun runs; a model only Rust has is loaded this way.
- **Truncation.** Rust cuts every text at ``min(512, model_max_length)``
  tokens (``tokenizer_config.json``) and ignores a ``max_length`` key there;
  Python fastembed 0.9 cuts at the smaller of ``model_max_length`` and
  ``max_length``, with no cap of 512. They differ for texts longer than 512
  tokens on a model that reads more (nomic, jina, gte), which kimun's chunks
  (at most 1,536 characters) rarely are, and wherever a repository's config
  carries a smaller ``max_length``: by qdrant/fastembed issue 689, several
  Qdrant repositories carry ``"max_length": 128``, among them
  ``Qdrant/all-MiniLM-L6-v2-onnx`` (``AllMiniLML6V2``), which Python
  fastembed then cuts at 128 tokens where Rust cuts at 512, a length many of
  kimun's chunks exceed. askkit's offline build of that model
  (:mod:`askkit.dense._minilm`) cuts where Rust does.
- **A model code shared by several variants** (``Xenova/all-MiniLM-L12-v2``
  names ``AllMiniLML12V2`` and its quantised twin): kimun picks whichever its
  hash map yields first, so which file it loads may change from run to run;
  askkit takes the first in the Rust enum's order (the unquantised one). The
  dimension is the same either way.

Rerankers: kimun's cross-encoder is always ``RerankerModel::BGERerankerBase``
(``BAAI/bge-reranker-base``, the same file in both packages).
:data:`RERANKER_MODELS` maps the four Rust reranker variants likewise;
``BGERerankerV2M3`` is ``rozgo/bge-reranker-v2-m3`` in Rust and
``onnx-community/bge-reranker-v2-m3-ONNX`` in Python. Python alone has
``Xenova/ms-marco-MiniLM-L-6-v2``, ``Xenova/ms-marco-MiniLM-L-12-v2``,
``jinaai/jina-reranker-v1-tiny-en`` and ``BAAI/bge-reranker-v2-m3-int8``.

Loading a model is :mod:`askkit.dense._fastembed`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from askkit.errors import UsageError

__all__ = [
    "DEFAULT_EMBEDDING_MODEL",
    "DEFAULT_RERANKER_MODEL",
    "EMBEDDING_MODELS",
    "FASTEMBED_RS_COMMIT",
    "FASTEMBED_RS_VERSION",
    "RERANKER_MODELS",
    "FastEmbedModel",
    "RerankerModel",
    "canonical_model_code",
    "resolve_model",
    "resolve_reranker",
    "supported_models",
]

#: The Rust fastembed kimun's Cargo.lock pins, and its commit (the tag ``v5.17.2``).
FASTEMBED_RS_VERSION = "5.17.2"
FASTEMBED_RS_COMMIT = "d0e8e9e958215ad4106f58ed4ac1b9220e4a1296"

#: kimun's default local model (``DEFAULT_MODEL`` in fastembedder.rs): BGE-Large-EN-v1.5.
DEFAULT_EMBEDDING_MODEL = "BGELargeENV15"
#: kimun's cross-encoder (``CrossEncoderReranker::new`` in reranker/mod.rs).
DEFAULT_RERANKER_MODEL = "BGERerankerBase"


@dataclass(frozen=True, slots=True)
class FastEmbedModel:
    """One Rust fastembed embedding model, as kimun names it, and its Python twin.

    Attributes
    ----------
    variant:
        The Rust ``EmbeddingModel`` variant (``BGESmallENV15``).
    code:
        Rust's model code: the Hugging Face repository it downloads
        (``Xenova/bge-small-en-v1.5``).
    dim:
        The vectors' width.
    model_file:
        The ONNX file Rust loads from ``code``.
    pooling:
        Rust's pooling for the model (``"cls"`` or ``"mean"``).
    description:
        Rust's one-line description.
    python_model:
        The Python fastembed model that is the same model, or ``None`` when
        Python has none.
    same_file:
        Whether Python loads the very same repository and ONNX file.
    additional_files:
        Files Rust downloads beside ``model_file`` (external weights).
    """

    variant: str
    code: str
    dim: int
    model_file: str
    pooling: Literal["cls", "mean"]
    description: str
    python_model: str | None
    same_file: bool = False
    additional_files: tuple[str, ...] = ()

    @property
    def output_name(self) -> str | None:
        """The graph output Rust reads, when it names one (EmbeddingGemma's pooled output)."""
        return "sentence_embedding" if self.variant.startswith("EmbeddingGemma") else None


_EXTRA_FILES = {
    "BGEM3": ("onnx/model.onnx_data", "onnx/Constant_7_attr__value"),
    "MultilingualE5Large": ("model.onnx_data",),
    "EmbeddingGemma300M": ("onnx/model.onnx_data",),
    "EmbeddingGemma300MQ4": ("onnx/model_q4.onnx_data",),
    "EmbeddingGemma300MQ": ("onnx/model_quantized.onnx_data",),
}


def _m(  # noqa: PLR0917 - a table row
    variant: str,
    code: str,
    dim: int,
    model_file: str,
    pooling: Literal["cls", "mean"],
    description: str,
    python_model: str | None,
    same_file: bool = False,
) -> FastEmbedModel:
    extra = _EXTRA_FILES.get(variant, ())
    return FastEmbedModel(
        variant, code, dim, model_file, pooling, description, python_model, same_file, extra
    )


_MINI_L6 = "sentence-transformers/all-MiniLM-L6-v2"
_MINI_ML = "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2"
_BGE_BASE = "BAAI/bge-base-en-v1.5"
_BGE_LARGE = "BAAI/bge-large-en-v1.5"
_BGE_SMALL = "BAAI/bge-small-en-v1.5"
_MXBAI = "mixedbread-ai/mxbai-embed-large-v1"
_GEMMA = "google/embeddinggemma-300m"
_ARCTIC = "snowflake/snowflake-arctic-embed-"

#: Every ``EmbeddingModel`` variant of Rust fastembed 5.17.2, in the enum's order.
EMBEDDING_MODELS: tuple[FastEmbedModel, ...] = (
    _m("AllMiniLML6V2", "Qdrant/all-MiniLM-L6-v2-onnx", 384, "model.onnx", "mean",
       "Sentence Transformer model, MiniLM-L6-v2", _MINI_L6, True),
    _m("AllMiniLML6V2Q", "Xenova/all-MiniLM-L6-v2", 384, "onnx/model_quantized.onnx", "mean",
       "Quantized Sentence Transformer model, MiniLM-L6-v2", _MINI_L6),
    _m("AllMiniLML12V2", "Xenova/all-MiniLM-L12-v2", 384, "onnx/model.onnx", "mean",
       "Sentence Transformer model, MiniLM-L12-v2", None),
    _m("AllMiniLML12V2Q", "Xenova/all-MiniLM-L12-v2", 384, "onnx/model_quantized.onnx", "mean",
       "Quantized Sentence Transformer model, MiniLM-L12-v2", None),
    _m("AllMpnetBaseV2", "Xenova/all-mpnet-base-v2", 768, "onnx/model.onnx", "mean",
       "Sentence Transformer model, mpnet-base-v2", None),
    _m("BGEBaseENV15", "Xenova/bge-base-en-v1.5", 768, "onnx/model.onnx", "cls",
       "v1.5 release of the base English model", _BGE_BASE),
    _m("BGEBaseENV15Q", "Qdrant/bge-base-en-v1.5-onnx-Q", 768, "model_optimized.onnx", "cls",
       "Quantized v1.5 release of the large English model", _BGE_BASE, True),
    _m("BGELargeENV15", "Xenova/bge-large-en-v1.5", 1024, "onnx/model.onnx", "cls",
       "v1.5 release of the large English model", _BGE_LARGE),
    _m("BGELargeENV15Q", "Qdrant/bge-large-en-v1.5-onnx-Q", 1024, "model_optimized.onnx", "cls",
       "Quantized v1.5 release of the large English model", _BGE_LARGE),
    _m("BGESmallENV15", "Xenova/bge-small-en-v1.5", 384, "onnx/model.onnx", "cls",
       "v1.5 release of the fast and default English model", _BGE_SMALL),
    _m("BGESmallENV15Q", "Qdrant/bge-small-en-v1.5-onnx-Q", 384, "model_optimized.onnx", "cls",
       "Quantized v1.5 release of the fast and default English model", _BGE_SMALL, True),
    _m("NomicEmbedTextV1", "nomic-ai/nomic-embed-text-v1", 768, "onnx/model.onnx", "mean",
       "8192 context length english model", "nomic-ai/nomic-embed-text-v1", True),
    _m("NomicEmbedTextV15", "nomic-ai/nomic-embed-text-v1.5", 768, "onnx/model.onnx", "mean",
       "v1.5 release of the 8192 context length english model",
       "nomic-ai/nomic-embed-text-v1.5", True),
    _m("NomicEmbedTextV15Q", "nomic-ai/nomic-embed-text-v1.5", 768, "onnx/model_quantized.onnx",
       "mean", "Quantized v1.5 release of the 8192 context length english model",
       "nomic-ai/nomic-embed-text-v1.5-Q", True),
    _m("ParaphraseMLMiniLML12V2Q", "Qdrant/paraphrase-multilingual-MiniLM-L12-v2-onnx-Q", 384,
       "model_optimized.onnx", "mean", "Quantized Multi-lingual model", _MINI_ML, True),
    _m("ParaphraseMLMiniLML12V2", "Xenova/paraphrase-multilingual-MiniLM-L12-v2", 384,
       "onnx/model.onnx", "mean", "Multi-lingual model", _MINI_ML),
    _m("ParaphraseMLMpnetBaseV2", "Xenova/paraphrase-multilingual-mpnet-base-v2", 768,
       "onnx/model.onnx", "mean",
       "Sentence-transformers model for tasks like clustering or semantic search",
       "sentence-transformers/paraphrase-multilingual-mpnet-base-v2", True),
    _m("BGESmallZHV15", "Xenova/bge-small-zh-v1.5", 512, "onnx/model.onnx", "cls",
       "v1.5 release of the small Chinese model", "BAAI/bge-small-zh-v1.5"),
    _m("BGELargeZHV15", "Xenova/bge-large-zh-v1.5", 1024, "onnx/model.onnx", "cls",
       "v1.5 release of the large Chinese model", None),
    _m("BGEM3", "BAAI/bge-m3", 1024, "onnx/model.onnx", "cls",
       "Multilingual M3 model with 8192 context length, supports 100+ languages", None),
    _m("ModernBertEmbedLarge", "lightonai/modernbert-embed-large", 1024, "onnx/model.onnx",
       "mean", "Large model of ModernBert Text Embeddings", None),
    _m("MultilingualE5Small", "intfloat/multilingual-e5-small", 384, "onnx/model.onnx", "mean",
       "Small model of multilingual E5 Text Embeddings", None),
    _m("MultilingualE5Base", "intfloat/multilingual-e5-base", 768, "onnx/model.onnx", "mean",
       "Base model of multilingual E5 Text Embeddings", None),
    _m("MultilingualE5Large", "Qdrant/multilingual-e5-large-onnx", 1024, "model.onnx", "mean",
       "Large model of multilingual E5 Text Embeddings", "intfloat/multilingual-e5-large", True),
    _m("MxbaiEmbedLargeV1", "mixedbread-ai/mxbai-embed-large-v1", 1024, "onnx/model.onnx", "cls",
       "Large English embedding model from MixedBreed.ai", _MXBAI, True),
    _m("MxbaiEmbedLargeV1Q", "mixedbread-ai/mxbai-embed-large-v1", 1024,
       "onnx/model_quantized.onnx", "cls",
       "Quantized Large English embedding model from MixedBreed.ai", _MXBAI),
    _m("GTEBaseENV15", "Alibaba-NLP/gte-base-en-v1.5", 768, "onnx/model.onnx", "cls",
       "Large multilingual embedding model from Alibaba", None),
    _m("GTEBaseENV15Q", "Alibaba-NLP/gte-base-en-v1.5", 768, "onnx/model_quantized.onnx", "cls",
       "Quantized Large multilingual embedding model from Alibaba", None),
    _m("GTELargeENV15", "Alibaba-NLP/gte-large-en-v1.5", 1024, "onnx/model.onnx", "cls",
       "Large multilingual embedding model from Alibaba", None),
    _m("GTELargeENV15Q", "Alibaba-NLP/gte-large-en-v1.5", 1024, "onnx/model_quantized.onnx",
       "cls", "Quantized Large multilingual embedding model from Alibaba", None),
    _m("ClipVitB32", "Qdrant/clip-ViT-B-32-text", 512, "model.onnx", "mean",
       "CLIP text encoder based on ViT-B/32", "Qdrant/clip-ViT-B-32-text", True),
    _m("JinaEmbeddingsV2BaseCode", "jinaai/jina-embeddings-v2-base-code", 768, "onnx/model.onnx",
       "mean", "Jina embeddings v2 base code", "jinaai/jina-embeddings-v2-base-code", True),
    _m("JinaEmbeddingsV2BaseEN", "jinaai/jina-embeddings-v2-base-en", 768, "model.onnx", "mean",
       "Jina embeddings v2 base English", "jinaai/jina-embeddings-v2-base-en"),
    _m("EmbeddingGemma300M", "onnx-community/embeddinggemma-300m-ONNX", 768, "onnx/model.onnx",
       "mean", "EmbeddingGemma is a 300M parameter from Google", _GEMMA, True),
    _m("EmbeddingGemma300MQ4", "onnx-community/embeddinggemma-300m-ONNX", 768,
       "onnx/model_q4.onnx", "mean",
       "Quantized (4-bit) EmbeddingGemma is a 300M parameter from Google", _GEMMA),
    _m("EmbeddingGemma300MQ", "onnx-community/embeddinggemma-300m-ONNX", 768,
       "onnx/model_quantized.onnx", "mean",
       "Quantized EmbeddingGemma is a 300M parameter from Google", _GEMMA),
    _m("SnowflakeArcticEmbedXS", "snowflake/snowflake-arctic-embed-xs", 384, "onnx/model.onnx",
       "cls", "Snowflake Arctic embed model, xs", _ARCTIC + "xs", True),
    _m("SnowflakeArcticEmbedXSQ", "snowflake/snowflake-arctic-embed-xs", 384,
       "onnx/model_quantized.onnx", "cls", "Quantized Snowflake Arctic embed model, xs",
       _ARCTIC + "xs"),
    _m("SnowflakeArcticEmbedS", "snowflake/snowflake-arctic-embed-s", 384, "onnx/model.onnx",
       "cls", "Snowflake Arctic embed model, small", _ARCTIC + "s", True),
    _m("SnowflakeArcticEmbedSQ", "snowflake/snowflake-arctic-embed-s", 384,
       "onnx/model_quantized.onnx", "cls", "Quantized Snowflake Arctic embed model, small",
       _ARCTIC + "s"),
    _m("SnowflakeArcticEmbedM", "Snowflake/snowflake-arctic-embed-m", 768, "onnx/model.onnx",
       "cls", "Snowflake Arctic embed model, medium", _ARCTIC + "m", True),
    _m("SnowflakeArcticEmbedMQ", "Snowflake/snowflake-arctic-embed-m", 768,
       "onnx/model_quantized.onnx", "cls", "Quantized Snowflake Arctic embed model, medium",
       _ARCTIC + "m"),
    _m("SnowflakeArcticEmbedMLong", "snowflake/snowflake-arctic-embed-m-long", 768,
       "onnx/model.onnx", "cls", "Snowflake Arctic embed model, medium with 2048 context",
       _ARCTIC + "m-long", True),
    _m("SnowflakeArcticEmbedMLongQ", "snowflake/snowflake-arctic-embed-m-long", 768,
       "onnx/model_quantized.onnx", "cls",
       "Quantized Snowflake Arctic embed model, medium with 2048 context", _ARCTIC + "m-long"),
    _m("SnowflakeArcticEmbedL", "snowflake/snowflake-arctic-embed-l", 1024, "onnx/model.onnx",
       "cls", "Snowflake Arctic embed model, large", _ARCTIC + "l", True),
    _m("SnowflakeArcticEmbedLQ", "snowflake/snowflake-arctic-embed-l", 1024,
       "onnx/model_quantized.onnx", "cls", "Quantized Snowflake Arctic embed model, large",
       _ARCTIC + "l"),
)  # fmt: skip

_BY_VARIANT = {m.variant.lower(): m for m in EMBEDDING_MODELS}
_BY_CODE: dict[str, FastEmbedModel] = {}
for _model in EMBEDDING_MODELS:  # the first variant of a shared code wins (see the docstring)
    _BY_CODE.setdefault(_model.code.lower(), _model)


@dataclass(frozen=True, slots=True)
class RerankerModel:
    """One Rust fastembed reranker (``RerankerModel`` variant) and its Python twin."""

    variant: str
    code: str
    model_file: str
    description: str
    python_model: str
    same_file: bool


#: Every ``RerankerModel`` variant of Rust fastembed 5.17.2 (``src/models/reranking.rs``).
RERANKER_MODELS: tuple[RerankerModel, ...] = (
    RerankerModel(
        "BGERerankerBase",
        "BAAI/bge-reranker-base",
        "onnx/model.onnx",
        "reranker model for English and Chinese",
        "BAAI/bge-reranker-base",
        True,
    ),
    RerankerModel(
        "BGERerankerV2M3",
        "rozgo/bge-reranker-v2-m3",
        "model.onnx",
        "reranker model for multilingual",
        "BAAI/bge-reranker-v2-m3",
        False,
    ),
    RerankerModel(
        "JINARerankerV1TurboEn",
        "jinaai/jina-reranker-v1-turbo-en",
        "onnx/model.onnx",
        "reranker model for English",
        "jinaai/jina-reranker-v1-turbo-en",
        True,
    ),
    RerankerModel(
        "JINARerankerV2BaseMultiligual",  # sic: Rust's spelling
        "jinaai/jina-reranker-v2-base-multilingual",
        "onnx/model.onnx",
        "reranker model for multilingual",
        "jinaai/jina-reranker-v2-base-multilingual",
        True,
    ),
)


def resolve_model(name: str | None) -> FastEmbedModel:
    """kimun's ``resolve_model``: a variant name or a model code, case-insensitively.

    ``None`` is kimun's default (``BGELargeENV15``, 1024-d). A variant name is
    tried first, then a model code.

    Raises
    ------
    UsageError
        An unknown name; the message says how to name a model, as kimun's does.

    Examples
    --------
    >>> resolve_model("bgesmallenv15").code, resolve_model("XENOVA/bge-small-en-v1.5").dim
    ('Xenova/bge-small-en-v1.5', 384)
    """
    if name is None:
        return _BY_VARIANT[DEFAULT_EMBEDDING_MODEL.lower()]
    if not isinstance(name, str):
        raise UsageError(f"a fastembed model name is a string, got {type(name).__name__}")
    found = _BY_VARIANT.get(name.lower()) or _BY_CODE.get(name.lower())
    if found is None:
        raise UsageError(
            f"unknown fastembed model {name!r}: use a variant name like 'BGESmallENV15', or a "
            "model code like 'Xenova/bge-small-en-v1.5' (kimun's names, case-insensitive; "
            "askkit.dense._fastembed_models.supported_models() lists them)"
        )
    return found


def canonical_model_code(name: str) -> str | None:
    """kimun's ``canonical_model_code``: the model code for a variant name or code, else None.

    >>> canonical_model_code("BGESmallENV15"), canonical_model_code("not-a-real-model")
    ('Xenova/bge-small-en-v1.5', None)
    """
    try:
        return resolve_model(name).code
    except UsageError:
        return None


def supported_models() -> list[tuple[str, int, str]]:
    """kimun's ``supported_models``: every model as ``(code, dim, description)``, by code.

    As in kimun, a code shared by several variants is listed once per variant;
    the sort is by the lower-cased code (stable).
    """
    models = [(m.code, m.dim, m.description) for m in EMBEDDING_MODELS]
    return sorted(models, key=lambda model: model[0].lower())


def resolve_reranker(name: str | None) -> RerankerModel | None:
    """A Rust reranker by variant name or model code (case-insensitive); None for another name.

    ``None`` is kimun's cross-encoder, ``BGERerankerBase``.

    >>> resolve_reranker(None).python_model, resolve_reranker("bgererankerv2m3").python_model
    ('BAAI/bge-reranker-base', 'BAAI/bge-reranker-v2-m3')
    """
    key = (name or DEFAULT_RERANKER_MODEL).lower()
    for model in RERANKER_MODELS:
        if key in {model.variant.lower(), model.code.lower()}:
            return model
    return None
