"""Tiny fastembed models built on the spot: an embedder and a cross-encoder, no download.

They are stand-ins, for tests and for where no real model can be had offline
(a cross-encoder: no PyPI package ships one), never shown as the real thing:
:func:`tiny_embedder` and :func:`tiny_reranker` return a
:class:`StandInEmbedder` and a :class:`StandInReranker`, whose names, reprs
and descriptions say so. kimun's real models run from
:class:`~askkit.dense.FastEmbedEmbedder` (``AllMiniLML6V2`` even offline) and
:class:`~askkit.dense.FastEmbedReranker`.

The models are BERT-shaped ONNX graphs of a few kilobytes, built with
``onnx.helper`` (opset 17, IR version 8), with a WordPiece tokenizer built by
the ``tokenizers`` package. Written to a folder with the files fastembed
reads (``model.onnx``, ``tokenizer.json``, ``tokenizer_config.json``,
``config.json``, ``special_tokens_map.json``), they load through fastembed's
own code paths: a custom model registered with ``add_custom_model`` and read
from ``specific_model_path``, or a Hugging Face style cache read with
``local_files_only`` (:func:`install_in_hub_cache`). Tests compare what
askkit computes through fastembed with
:mod:`askkit.testing.model_references`, which runs the same files with
tokenizers, onnxruntime and numpy alone.

The embedding model is meant to be useful too, as an offline stand-in for a
real one. Its vocabulary is the words of the texts it is built from
(lower-cased, split as BERT splits them); each word gets a random Gaussian
vector (seeded), passed through a random linear map and ``tanh``, and the
model's output is mean-pooled and normalised. Each text is then a random
projection of its bag of words, so texts that share words get close vectors:
lexical retrieval, in vector form. Words outside the vocabulary, punctuation,
the special tokens and kimun's framing words (``passage``, ``query``) get a
zero vector, so they move no text towards another.

The cross-encoder scores ``(query, document)`` as the dot product of the
query's summed word vectors with the document's mean word vector, times a
scale: a raw logit that grows with the words they share.

``onnx`` is needed to build the models (``pip install onnx``, a test
dependency); fastembed to load them (``pip install 'askkit[embed]'``).

Examples
--------
>>> import tempfile
>>> from pathlib import Path
>>> folder = Path(tempfile.mkdtemp())
>>> embedder = tiny_embedder(folder, vocabulary_texts=["sourdough starter", "tomato seedlings"])
>>> scores = embedder.embed_documents([("", "sourdough starter"), ("", "tomato seedlings")])
>>> query = embedder.embed_query("feeding the starter")
>>> bool(scores[0] @ query > scores[1] @ query)
True
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from askkit._optional import EMBED_EXTRA, optional_import
from askkit.dense.embedders import FastEmbedEmbedder
from askkit.dense.rerankers import FastEmbedReranker

__all__ = [
    "DEFAULT_VOCABULARY",
    "FRAMING_WORDS",
    "MODEL_FILE",
    "SPECIAL_TOKENS",
    "STAND_IN",
    "StandInEmbedder",
    "StandInReranker",
    "build_cross_encoder",
    "build_embedding_model",
    "install_in_hub_cache",
    "model_name",
    "register_cross_encoder",
    "register_embedding_model",
    "tiny_embedder",
    "tiny_reranker",
    "vocabulary",
]

#: The ONNX file's name in a model folder.
MODEL_FILE = "model.onnx"
#: How a tiny model is labelled wherever it is shown: it is not a trained model.
STAND_IN = "stand-in"
#: BERT's special tokens, ids 0 to 4.
SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
#: Words of kimun's fastembed framing (``passage: ``, ``query: ``), kept out of the vocabulary.
FRAMING_WORDS = frozenset({"passage", "query"})
#: The words a model is built from when no texts are given: askkit's sample vault.
DEFAULT_VOCABULARY = (
    "Sourdough starter feeding schedule: feed the starter every 12 hours at room temperature; "
    "in the fridge, feed once a week. If it smells of acetone it is hungry. "
    "Baked the second loaf; the kitchen is warmer now. Discard went into pancakes. "
    "Tomato seedlings: start seeds indoors six weeks before the last frost; keep the soil warm. "
    "Rest day. Read about hydration levels for rye bread."
)

_OPSET = 17
_IR_VERSION = 8
_MAX_LENGTH = 512
_ORG = "askkit-testing"
_SNAPSHOT = "0123456789abcdef0123456789abcdef01234567"  # a fixed fake revision
_REGISTERED: set[tuple[str, str]] = set()
_LOCK = threading.Lock()


def _require_onnx() -> Any:
    return optional_import("onnx", "building the tiny test models", EMBED_EXTRA)


def _fastembed() -> Any:
    return optional_import("fastembed", "loading the tiny test models", EMBED_EXTRA)


def _tokenizers() -> Any:
    return optional_import("tokenizers", "the tiny test models' tokenizer", EMBED_EXTRA)


# -- the tokenizer


def _bert_normalizer_and_splitter() -> tuple[Any, Any]:
    tk = _tokenizers()
    return (
        tk.normalizers.BertNormalizer(lowercase=True, strip_accents=True, clean_text=True),
        tk.pre_tokenizers.BertPreTokenizer(),
    )


def vocabulary(texts: Iterable[str], exclude: Iterable[str] = FRAMING_WORDS) -> list[str]:
    """The words a model built from ``texts`` knows: BERT's split, lower-cased, sorted.

    Words with no letter or digit (punctuation) and the words of ``exclude``
    (by default :data:`FRAMING_WORDS`) are left out.

    >>> vocabulary(["Feed the starter.", "the STARTER: passage"])
    ['feed', 'starter', 'the']
    """
    normalizer, splitter = _bert_normalizer_and_splitter()
    left_out = {w.lower() for w in exclude}
    words: set[str] = set()
    for text in texts:
        for word, _span in splitter.pre_tokenize_str(normalizer.normalize_str(text)):
            if any(c.isalnum() for c in word) and word not in left_out:
                words.add(word)
    return sorted(words)


def _write_tokenizer(folder: Path, words: Sequence[str], *, dim: int) -> int:
    """Write the WordPiece tokenizer and its configs; the vocabulary's size."""
    tk = _tokenizers()
    vocab = {token: i for i, token in enumerate([*SPECIAL_TOKENS, *words])}
    tokenizer = tk.Tokenizer(tk.models.WordPiece(vocab, unk_token="[UNK]"))  # noqa: S106 - a token
    tokenizer.normalizer, tokenizer.pre_tokenizer = _bert_normalizer_and_splitter()
    cls_id, sep_id = vocab["[CLS]"], vocab["[SEP]"]
    tokenizer.post_processor = tk.processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)],
    )
    tokenizer.decoder = tk.decoders.WordPiece()
    tokenizer.enable_truncation(max_length=_MAX_LENGTH)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # noqa: S106 - a token
    tokenizer.save(str(folder / "tokenizer.json"))
    special = dict(
        zip(
            ["pad_token", "unk_token", "cls_token", "sep_token", "mask_token"],
            SPECIAL_TOKENS,
            strict=True,
        )
    )
    _write_json(
        folder / "tokenizer_config.json",
        {
            "model_max_length": _MAX_LENGTH,
            "do_lower_case": True,
            "tokenizer_class": "BertTokenizer",
            **special,
        },
    )
    _write_json(folder / "special_tokens_map.json", special)
    _write_json(
        folder / "config.json",
        {
            "model_type": "bert",
            "architectures": ["BertModel"],
            "hidden_size": dim,
            "vocab_size": len(vocab),
            "pad_token_id": 0,
            "max_position_embeddings": _MAX_LENGTH,
        },
    )
    return len(vocab)


def _write_json(path: Path, obj: object) -> None:
    path.write_text(json.dumps(obj, indent=2) + "\n", encoding="utf-8")


def _word_vectors(size: int, dim: int, seed: int) -> np.ndarray[Any, np.dtype[np.float32]]:
    """Random Gaussian rows of norm about 1; the special tokens' rows are zero."""
    rng = np.random.default_rng(seed)
    table = rng.standard_normal((size, dim)) / np.sqrt(dim)
    table[: len(SPECIAL_TOKENS)] = 0.0
    vectors: np.ndarray[Any, np.dtype[np.float32]] = table.astype(np.float32)
    return vectors


def _mixing(dim: int, seed: int) -> np.ndarray[Any, np.dtype[np.float32]]:
    """A random linear map that keeps lengths (an orthogonal matrix)."""
    rng = np.random.default_rng([seed, 1])
    q, r = np.linalg.qr(rng.standard_normal((dim, dim)))
    return (q * np.sign(np.diag(r))).astype(np.float32)


# -- the ONNX graphs


def _inputs(onnx: Any) -> list[Any]:
    int64 = onnx.TensorProto.INT64
    return [
        onnx.helper.make_tensor_value_info(name, int64, ["batch", "sequence"])
        for name in ("input_ids", "attention_mask", "token_type_ids")
    ]


def _token_states(onnx: Any, table: np.ndarray[Any, Any], mixing: np.ndarray[Any, Any]) -> Any:
    """Nodes: h = tanh(E[input_ids] @ W) -> "hidden" [batch, sequence, dim]."""
    h = onnx.helper
    nodes = [
        h.make_node("Gather", ["word_vectors", "input_ids"], ["words"], axis=0),
        h.make_node("MatMul", ["words", "mixing"], ["mixed"]),
        h.make_node("Tanh", ["mixed"], ["hidden"]),
    ]
    initializers = [
        onnx.numpy_helper.from_array(table, "word_vectors"),
        onnx.numpy_helper.from_array(mixing, "mixing"),
    ]
    return nodes, initializers


def _save(onnx: Any, graph: Any, path: Path) -> None:
    model = onnx.helper.make_model(
        graph,
        opset_imports=[onnx.helper.make_opsetid("", _OPSET)],
        producer_name="askkit.testing.models",
    )
    model.ir_version = _IR_VERSION
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def build_embedding_model(
    folder: str | os.PathLike[str],
    *,
    vocabulary_texts: Iterable[str] = (DEFAULT_VOCABULARY,),
    exclude: Iterable[str] = FRAMING_WORDS,
    dim: int = 64,
    seed: int = 0,
) -> Path:
    """Write a tiny BERT-shaped embedding model and its tokenizer to ``folder``.

    The graph: ``last_hidden_state = tanh(E[input_ids] @ W) * attention_mask``,
    ``[batch, sequence, dim]`` float32, from ``input_ids``, ``attention_mask``
    and ``token_type_ids`` (int64; the last is read and ignored, as BERT's
    are zeros for one text). ``E`` holds a seeded Gaussian vector per word of
    ``vocabulary_texts`` (:func:`vocabulary`), zero rows for the special
    tokens; ``W`` is a seeded orthogonal matrix.

    Returns
    -------
    pathlib.Path
        ``folder`` (created if needed).
    """
    onnx = _require_onnx()
    if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
        raise ValueError(f"dim must be a whole number >= 1, got {dim!r}")
    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    size = _write_tokenizer(path, vocabulary(vocabulary_texts, exclude), dim=dim)
    h = onnx.helper
    nodes, initializers = _token_states(onnx, _word_vectors(size, dim, seed), _mixing(dim, seed))
    nodes += [
        h.make_node("Cast", ["attention_mask"], ["mask_f"], to=onnx.TensorProto.FLOAT),
        h.make_node("Unsqueeze", ["mask_f", "last_axis"], ["mask_3d"]),
        h.make_node("Mul", ["hidden", "mask_3d"], ["masked"]),
        h.make_node("Cast", ["token_type_ids"], ["types_f"], to=onnx.TensorProto.FLOAT),
        h.make_node("Unsqueeze", ["types_f", "last_axis"], ["types_3d"]),
        h.make_node("Mul", ["types_3d", "zero"], ["no_types"]),
        h.make_node("Add", ["masked", "no_types"], ["last_hidden_state"]),
    ]
    initializers += [
        onnx.numpy_helper.from_array(np.array([-1], dtype=np.int64), "last_axis"),
        onnx.numpy_helper.from_array(np.array(0.0, dtype=np.float32), "zero"),
    ]
    output = h.make_tensor_value_info(
        "last_hidden_state", onnx.TensorProto.FLOAT, ["batch", "sequence", dim]
    )
    graph = h.make_graph(nodes, "askkit_tiny_bert", _inputs(onnx), [output], initializers)
    _save(onnx, graph, path / MODEL_FILE)
    return path


def build_cross_encoder(
    folder: str | os.PathLike[str],
    *,
    vocabulary_texts: Iterable[str] = (DEFAULT_VOCABULARY,),
    exclude: Iterable[str] = FRAMING_WORDS,
    dim: int = 32,
    seed: int = 0,
    scale: float = 8.0,
) -> Path:
    """Write a tiny BERT-shaped cross-encoder (``logits`` ``[batch, 1]``) to ``folder``.

    With ``hidden = tanh(E[input_ids] @ W)``, the query's tokens
    (``token_type_ids`` 0) summed as ``q`` and the document's (type 1)
    averaged as ``d``, both under ``attention_mask``, the logit is
    ``scale * (q . d)``: a raw score, not in ``0..1``, that grows with the
    words the two share.
    """
    onnx = _require_onnx()
    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    size = _write_tokenizer(path, vocabulary(vocabulary_texts, exclude), dim=dim)
    h = onnx.helper
    float_ = onnx.TensorProto.FLOAT
    nodes, initializers = _token_states(onnx, _word_vectors(size, dim, seed), _mixing(dim, seed))
    nodes += [
        h.make_node("Cast", ["attention_mask"], ["mask_f"], to=float_),
        h.make_node("Cast", ["token_type_ids"], ["doc_f"], to=float_),
        h.make_node("Mul", ["mask_f", "doc_f"], ["doc_mask"]),
        h.make_node("Sub", ["mask_f", "doc_mask"], ["query_mask"]),
        h.make_node("Unsqueeze", ["doc_mask", "last_axis"], ["doc_mask_3d"]),
        h.make_node("Unsqueeze", ["query_mask", "last_axis"], ["query_mask_3d"]),
        h.make_node("Mul", ["hidden", "query_mask_3d"], ["query_hidden"]),
        h.make_node("Mul", ["hidden", "doc_mask_3d"], ["doc_hidden"]),
        h.make_node("ReduceSum", ["query_hidden", "sequence_axis"], ["query_sum"], keepdims=0),
        h.make_node("ReduceSum", ["doc_hidden", "sequence_axis"], ["doc_sum"], keepdims=0),
        h.make_node("ReduceSum", ["doc_mask", "sequence_axis"], ["doc_count"], keepdims=1),
        h.make_node("Max", ["doc_count", "one"], ["doc_count_1"]),
        h.make_node("Div", ["doc_sum", "doc_count_1"], ["doc_mean"]),
        h.make_node("Mul", ["query_sum", "doc_mean"], ["products"]),
        h.make_node("ReduceSum", ["products", "last_axis"], ["dot"], keepdims=1),
        h.make_node("Mul", ["dot", "scale"], ["logits"]),
    ]
    initializers += [
        onnx.numpy_helper.from_array(np.array([-1], dtype=np.int64), "last_axis"),
        onnx.numpy_helper.from_array(np.array([1], dtype=np.int64), "sequence_axis"),
        onnx.numpy_helper.from_array(np.array(1.0, dtype=np.float32), "one"),
        onnx.numpy_helper.from_array(np.array(scale, dtype=np.float32), "scale"),
    ]
    output = h.make_tensor_value_info("logits", float_, ["batch", 1])
    graph = h.make_graph(nodes, "askkit_tiny_cross_encoder", _inputs(onnx), [output], initializers)
    _save(onnx, graph, path / MODEL_FILE)
    return path


# -- fastembed's registry


def model_name(kind: Literal["embedding", "cross-encoder"], dim: int) -> str:
    """The name a tiny model is registered under in fastembed (one per kind and width).

    >>> model_name("embedding", 64)
    'askkit-testing/tiny-embedding-64d'
    """
    return f"{_ORG}/tiny-{kind}-{dim}d"


def register_embedding_model(dim: int) -> str:
    """Register the tiny embedding model of width ``dim`` with fastembed; its name.

    fastembed's registry is class-level and refuses a second registration of
    a name, so this registers once per process (and is safe to call again).
    The model: mean pooling, normalised, ``model.onnx``, from the Hugging
    Face repository of the same name (read only from a folder or a cache).
    """
    fastembed = _fastembed()
    from fastembed.common.model_description import ModelSource, PoolingType

    name = model_name("embedding", dim)
    with _LOCK:
        known = {m["model"].lower() for m in fastembed.TextEmbedding.list_supported_models()}
        if ("embedding", name) not in _REGISTERED and name.lower() not in known:
            fastembed.TextEmbedding.add_custom_model(
                model=name,
                pooling=PoolingType.MEAN,
                normalization=True,
                sources=ModelSource(hf=name),
                dim=dim,
                model_file=MODEL_FILE,
                description="askkit's tiny test embedding model",
            )
        _REGISTERED.add(("embedding", name))
    return name


def register_cross_encoder(dim: int) -> str:
    """Register the tiny cross-encoder of width ``dim`` with fastembed (once); its name."""
    _fastembed()
    from fastembed.common.model_description import ModelSource
    from fastembed.rerank.cross_encoder import TextCrossEncoder

    name = model_name("cross-encoder", dim)
    with _LOCK:
        known = {m["model"].lower() for m in TextCrossEncoder.list_supported_models()}
        if ("cross-encoder", name) not in _REGISTERED and name.lower() not in known:
            TextCrossEncoder.add_custom_model(
                model=name,
                sources=ModelSource(hf=name),
                model_file=MODEL_FILE,
                description="askkit's tiny test cross-encoder",
            )
        _REGISTERED.add(("cross-encoder", name))
    return name


def install_in_hub_cache(
    model_dir: str | os.PathLike[str],
    cache_dir: str | os.PathLike[str],
    repo_id: str,
    *,
    model_file: str = MODEL_FILE,
) -> Path:
    """Copy a model folder into ``cache_dir`` as a Hugging Face download leaves it.

    ``models--{org}--{name}/refs/main`` names a revision whose
    ``snapshots/{revision}/`` folder holds the files, so fastembed loads the
    model with ``local_files_only=True`` through the same cache code a real
    download goes through. The ONNX file goes to ``model_file`` in the
    snapshot (``onnx/model.onnx`` where a repository keeps it there). Returns
    the snapshot folder.
    """
    source = Path(model_dir)
    repo = Path(cache_dir) / ("models--" + repo_id.replace("/", "--"))
    snapshot = repo / "snapshots" / _SNAPSHOT
    snapshot.mkdir(parents=True, exist_ok=True)
    (repo / "refs").mkdir(exist_ok=True)
    (repo / "refs" / "main").write_text(_SNAPSHOT, encoding="ascii")
    for file in sorted(source.iterdir()):
        if file.is_file():
            target = snapshot / (model_file if file.name == MODEL_FILE else file.name)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(file.read_bytes())
    return snapshot


def _cache_dir(folder: Path, cache_dir: str | os.PathLike[str] | None) -> Path:
    return Path(cache_dir) if cache_dir is not None else folder / "fastembed-cache"


def _built(
    folder: Path, texts: Iterable[str], exclude: Iterable[str], *, dim: int, seed: int, kind: str
) -> Path:
    """``folder`` holding the model for these arguments (built unless already there)."""
    texts, left_out = list(texts), sorted(exclude)
    key = json.dumps([kind, texts, left_out, dim, seed])
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    stamp = folder / "askkit-model.json"
    if stamp.is_file() and json.loads(stamp.read_text(encoding="utf-8")).get("digest") == digest:
        return folder
    if kind == "embedding":
        build_embedding_model(folder, vocabulary_texts=texts, exclude=left_out, dim=dim, seed=seed)
    else:
        build_cross_encoder(folder, vocabulary_texts=texts, exclude=left_out, dim=dim, seed=seed)
    _write_json(stamp, {"digest": digest, "kind": kind, "dim": dim, "seed": seed})
    return folder


class StandInEmbedder(FastEmbedEmbedder):
    """A :class:`~askkit.dense.FastEmbedEmbedder` on a tiny model: a stand-in, labelled so.

    Its repr and :attr:`model_file` say it is askkit's tiny stand-in, not a
    trained model; its name and fingerprint are the tiny model's.
    """

    #: What a widget says wherever this model runs (see ``askkit.widgets.Explorer``).
    stand_in = (
        f"the embedding model is askkit's tiny {STAND_IN} (a random projection of word "
        "counts), not a trained model: its scores say nothing of kimun's"
    )

    def __repr__(self) -> str:
        return f"StandInEmbedder({self.name!r}: {self.model_file})"


class StandInReranker(FastEmbedReranker):
    """A :class:`~askkit.dense.FastEmbedReranker` on a tiny cross-encoder: a stand-in.

    Its :attr:`name` (which kimun's fallback warnings quote) and repr say so:
    its scores grow with the words a query and a document share; it is no
    trained cross-encoder such as kimun's ``BGERerankerBase``.
    """

    #: What a widget says wherever this model runs (see ``askkit.widgets.Explorer``).
    stand_in = (
        f"the reranker is askkit's tiny {STAND_IN} cross-encoder, not a trained model: its "
        "scores grow with the words a question and a chunk share"
    )

    def __init__(self, model: str, **options: Any) -> None:
        super().__init__(model, **options)
        self.name = f"{STAND_IN}:{self.python_model}"

    def __repr__(self) -> str:
        return (
            f"StandInReranker({self.python_model!r}: askkit's tiny {STAND_IN} cross-encoder, "
            "not a trained model)"
        )


def tiny_embedder(
    folder: str | os.PathLike[str],
    vocabulary_texts: Iterable[str] = (DEFAULT_VOCABULARY,),
    dim: int = 64,
    seed: int = 0,
    *,
    exclude: Iterable[str] = FRAMING_WORDS,
    cache_dir: str | os.PathLike[str] | None = None,
    via: Literal["folder", "hub-cache"] = "folder",
    progress: bool = False,
) -> StandInEmbedder:
    """A :class:`StandInEmbedder` (a :class:`~askkit.dense.FastEmbedEmbedder`) on a tiny model
    built in ``folder``.

    The model is built (unless ``folder`` already holds it for the same
    arguments), registered with fastembed, and loaded by fastembed itself:
    from ``folder`` (``via="folder"``, fastembed's ``specific_model_path``) or
    from a Hugging Face style cache (``via="hub-cache"``, with
    ``local_files_only=True``). fastembed's cache folder is ``cache_dir``
    (default: ``folder/fastembed-cache``), never fastembed's own default.
    ``exclude`` are words left out of the vocabulary (:func:`vocabulary`);
    pass ``()`` to give kimun's framing words vectors too.
    """
    path = _built(Path(folder), vocabulary_texts, exclude, dim=dim, seed=seed, kind="embedding")
    name = register_embedding_model(dim)
    cache = _cache_dir(path, cache_dir)
    embedder: StandInEmbedder
    if via == "hub-cache":
        install_in_hub_cache(path, cache, name)
        embedder = StandInEmbedder(
            python_model=name, cache_dir=cache, local_files_only=True, progress=progress
        )
    else:
        embedder = StandInEmbedder(
            python_model=name, cache_dir=cache, specific_model_path=path, progress=progress
        )
    embedder.model_file = (
        f"askkit's tiny {STAND_IN} embedding model in {path} (a random projection of its "
        "vocabulary's words, not a trained model)"
    )
    return embedder


def tiny_reranker(
    folder: str | os.PathLike[str],
    vocabulary_texts: Iterable[str] = (DEFAULT_VOCABULARY,),
    dim: int = 32,
    seed: int = 0,
    *,
    exclude: Iterable[str] = FRAMING_WORDS,
    cache_dir: str | os.PathLike[str] | None = None,
    via: Literal["folder", "hub-cache"] = "folder",
) -> StandInReranker:
    """A :class:`StandInReranker` (a :class:`~askkit.dense.FastEmbedReranker`) on a tiny
    cross-encoder built in ``folder``: it scores the words a query and a document share."""
    path = _built(Path(folder), vocabulary_texts, exclude, dim=dim, seed=seed, kind="cross-encoder")
    name = register_cross_encoder(dim)
    cache = _cache_dir(path, cache_dir)
    if via == "hub-cache":
        install_in_hub_cache(path, cache, name)
        reranker = StandInReranker(name, cache_dir=cache, local_files_only=True)
    else:
        reranker = StandInReranker(name, cache_dir=cache, specific_model_path=path)
    return reranker
