"""A BERT encoder's safetensors weights as an ONNX graph fastembed runs.

sentence-transformers models such as all-MiniLM-L6-v2 ship their weights as
``model.safetensors`` (BertModel's tensor names, float32) with a
``config.json``; fastembed runs an ONNX graph. :func:`bert_onnx` builds that
graph with ``onnx.helper`` (opset 17, IR version 8), the weights as its
initializers, computing what BertModel computes:

- embeddings: word (``input_ids``) + position (``0..sequence-1``) + token type
  (``token_type_ids``), then LayerNorm;
- each encoder layer, post-norm: 12-head (``num_attention_heads``)
  self-attention, scores scaled by ``1 / sqrt(head width)`` plus an additive
  mask (0 for a token, float32's lowest for padding), softmax, the output
  projection, a residual and LayerNorm; then the intermediate projection, erf
  GELU (``0.5 x (1 + erf(x / sqrt 2))``), the output projection, a residual
  and LayerNorm;
- output ``last_hidden_state`` ``[batch, sequence, hidden]``, which fastembed
  mean-pools under the attention mask and normalises.

:func:`read_safetensors` reads the weights with numpy alone (the format is an
8-byte header length, a JSON header, then the raw tensors), so neither torch
nor the ``safetensors`` package is needed. Anything that is not such a model
raises :class:`~askkit.errors.SchemaError` naming the file, the field and the
value.
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from askkit._optional import EMBED_EXTRA, optional_import
from askkit.errors import SchemaError

__all__ = [
    "BertConfig",
    "bert_config",
    "bert_onnx",
    "bert_tensors",
    "json_object",
    "read_safetensors",
]

_OPSET = 17
_IR_VERSION = 8
_DTYPES: dict[object, np.dtype[Any]] = {
    "F32": np.dtype("<f4"),
    "F64": np.dtype("<f8"),
    "I64": np.dtype("<i8"),
}
_MAX_HEADER = 100 * 1024 * 1024  # a safetensors header is JSON of a few kilobytes


def read_safetensors(
    data: bytes, *, file: str = "model.safetensors"
) -> dict[str, np.ndarray[Any, Any]]:
    """The tensors of a safetensors file, as read-only numpy arrays over ``data``.

    The format: an 8-byte little-endian header length, a JSON header naming
    each tensor's ``dtype``, ``shape`` and ``data_offsets`` (into the bytes
    after the header), then the tensors. float32, float64 and int64 are read.

    Raises
    ------
    SchemaError
        The bytes are not such a file; the message names ``file`` and the field.

    Examples
    --------
    >>> import json, struct
    >>> header = json.dumps({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})
    >>> blob = struct.pack("<Q", len(header)) + header.encode() + struct.pack("<2f", 1.5, -2.0)
    >>> read_safetensors(blob)["w"].tolist()
    [1.5, -2.0]
    """
    if len(data) < 8:
        raise SchemaError("too short to be a safetensors file", file=file, has_value=False)
    (size,) = struct.unpack("<Q", data[:8])
    if size > min(len(data) - 8, _MAX_HEADER):
        raise SchemaError("header length", file=file, field="header", value=size)
    try:
        header = json.loads(data[8 : 8 + size])
    except (ValueError, RecursionError) as exc:
        raise SchemaError(f"the header is not JSON ({exc})", file=file, has_value=False) from None
    if not isinstance(header, dict):
        raise SchemaError("the header is not a JSON object", file=file, value=header)
    body = 8 + size
    tensors: dict[str, np.ndarray[Any, Any]] = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        field = f"header[{name!r}]"
        if not isinstance(spec, dict):
            raise SchemaError(
                "expected {dtype, shape, data_offsets}", file=file, field=field, value=spec
            )
        dtype = _DTYPES.get(spec.get("dtype"))
        if dtype is None:
            raise SchemaError(
                "a dtype askkit reads (F32, F64, I64)",
                file=file,
                field=f"{field}.dtype",
                value=spec.get("dtype"),
            )
        shape, offsets = spec.get("shape"), spec.get("data_offsets")
        if not isinstance(shape, list) or not all(
            isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape
        ):
            raise SchemaError(
                "expected a list of sizes", file=file, field=f"{field}.shape", value=shape
            )
        count = math.prod(shape)
        if (
            not isinstance(offsets, list)
            or len(offsets) != 2
            or not all(isinstance(n, int) and not isinstance(n, bool) for n in offsets)
            or not 0 <= offsets[0] <= offsets[1] <= len(data) - body
            or offsets[1] - offsets[0] != count * dtype.itemsize
        ):
            raise SchemaError(
                f"expected [start, end] of {count * dtype.itemsize} bytes inside the file",
                file=file,
                field=f"{field}.data_offsets",
                value=offsets,
            )
        array = np.frombuffer(data, dtype=dtype, count=count, offset=body + offsets[0])
        tensors[name] = array.reshape(shape)
    return tensors


def json_object(data: bytes, file: str) -> dict[str, Any]:
    """``data`` read as a JSON object; a :class:`~askkit.errors.SchemaError` naming ``file``."""
    try:
        value = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise SchemaError(f"not JSON ({exc})", file=file, has_value=False) from None
    if not isinstance(value, dict):
        raise SchemaError("expected a JSON object", file=file, value=value)
    return value


@dataclass(frozen=True, slots=True)
class BertConfig:
    """What the graph needs from a BERT ``config.json``."""

    layers: int
    hidden: int
    heads: int
    intermediate: int
    eps: float
    vocab: int
    positions: int
    types: int
    pad_token_id: int


_CONFIG_RULES: dict[str, Callable[[object], bool]] = {
    "model_type": lambda v: v == "bert",
    "hidden_act": lambda v: v == "gelu",
    "position_embedding_type": lambda v: v in {None, "absolute"},
}


def bert_config(data: bytes, file: str) -> BertConfig:
    """A BERT ``config.json`` the graph computes (absolute positions, erf GELU), checked.

    ``file`` names it in errors.
    """
    config = json_object(data, file)
    for key, ok in _CONFIG_RULES.items():
        if not ok(config.get(key)):
            raise SchemaError(
                "askkit builds BERT models with absolute positions and erf GELU only",
                file=file,
                field=key,
                value=config.get(key),
            )

    def count(key: str, default: int | None = None) -> int:
        value = config.get(key, default)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise SchemaError("expected a whole number >= 1", file=file, field=key, value=value)
        return value

    eps = config.get("layer_norm_eps", 1e-12)
    if not isinstance(eps, int | float) or isinstance(eps, bool) or not 0 < eps < 1:
        raise SchemaError(
            "expected a small positive number", file=file, field="layer_norm_eps", value=eps
        )
    cfg = BertConfig(
        layers=count("num_hidden_layers"),
        hidden=count("hidden_size"),
        heads=count("num_attention_heads"),
        intermediate=count("intermediate_size"),
        eps=float(eps),
        vocab=count("vocab_size"),
        positions=count("max_position_embeddings"),
        types=count("type_vocab_size", 2),
        pad_token_id=int(config.get("pad_token_id", 0) or 0),
    )
    if cfg.hidden % cfg.heads:
        raise SchemaError(
            f"hidden_size {cfg.hidden} is not a multiple of num_attention_heads",
            file=file,
            field="num_attention_heads",
            value=cfg.heads,
        )
    return cfg


def bert_tensors(data: bytes, cfg: BertConfig, file: str) -> dict[str, np.ndarray[Any, Any]]:
    """A BertModel's weights from safetensors bytes, by name (a ``bert.`` prefix dropped),
    each checked for the shape ``cfg`` gives it, as float32."""
    raw = read_safetensors(data, file=file)
    tensors = {name.removeprefix("bert."): array for name, array in raw.items()}
    h, i = cfg.hidden, cfg.intermediate
    shapes: dict[str, tuple[int, ...]] = {
        "embeddings.word_embeddings.weight": (cfg.vocab, h),
        "embeddings.position_embeddings.weight": (cfg.positions, h),
        "embeddings.token_type_embeddings.weight": (cfg.types, h),
        "embeddings.LayerNorm.weight": (h,),
        "embeddings.LayerNorm.bias": (h,),
    }
    for layer in range(cfg.layers):
        p = f"encoder.layer.{layer}."
        for name in ("attention.self.query", "attention.self.key", "attention.self.value"):
            shapes[f"{p}{name}.weight"], shapes[f"{p}{name}.bias"] = (h, h), (h,)
        shapes[f"{p}attention.output.dense.weight"] = (h, h)
        shapes[f"{p}attention.output.dense.bias"] = (h,)
        shapes[f"{p}intermediate.dense.weight"], shapes[f"{p}intermediate.dense.bias"] = (
            (i, h),
            (i,),
        )
        shapes[f"{p}output.dense.weight"], shapes[f"{p}output.dense.bias"] = (h, i), (h,)
        for norm in ("attention.output.LayerNorm", "output.LayerNorm"):
            shapes[f"{p}{norm}.weight"], shapes[f"{p}{norm}.bias"] = (h,), (h,)
    out: dict[str, np.ndarray[Any, Any]] = {}
    for name, shape in shapes.items():
        array = tensors.get(name)
        if array is None:
            raise SchemaError("the tensor is missing", file=file, field=name, has_value=False)
        if array.shape != shape or array.dtype.kind != "f":
            raise SchemaError(
                f"expected a float tensor of shape {list(shape)}",
                file=file,
                field=name,
                value=f"{array.dtype} {list(array.shape)}",
            )
        out[name] = np.asarray(array, dtype=np.float32)
    return out


# -- the ONNX graph --------------------------------------------------------------------------


class _Graph:
    """Nodes and initializers of an ONNX graph under construction, with fresh names."""

    def __init__(self, onnx: Any) -> None:
        self.onnx = onnx
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self._count = 0

    def const(self, name: str, array: np.ndarray[Any, Any]) -> str:
        self.initializers.append(
            self.onnx.numpy_helper.from_array(np.ascontiguousarray(array), name)
        )
        return name

    def op(self, kind: str, *inputs: str, **attributes: Any) -> str:
        self._count += 1
        out = f"{kind.lower()}_{self._count}"
        self.nodes.append(self.onnx.helper.make_node(kind, list(inputs), [out], **attributes))
        return out

    def linear(self, x: str, tensors: dict[str, np.ndarray[Any, Any]], name: str) -> str:
        """``x @ W.T + b`` for a torch ``Linear`` (``W`` is ``[out, in]``)."""
        weight = self.const(f"{name}.weight_t", tensors[f"{name}.weight"].T)
        bias = self.const(f"{name}.bias", tensors[f"{name}.bias"])
        return self.op("Add", self.op("MatMul", x, weight), bias)

    def layer_norm(
        self, x: str, tensors: dict[str, np.ndarray[Any, Any]], name: str, eps: float
    ) -> str:
        gamma = self.const(f"{name}.weight", tensors[f"{name}.weight"])
        beta = self.const(f"{name}.bias", tensors[f"{name}.bias"])
        return self.op("LayerNormalization", x, gamma, beta, axis=-1, epsilon=eps)


def _encoder_layer(
    g: _Graph,
    x: str,
    bias: str,
    *,
    tensors: dict[str, np.ndarray[Any, Any]],
    p: str,
    cfg: BertConfig,
) -> str:
    """One post-norm BERT layer: self-attention, add & norm, GELU feed-forward, add & norm."""
    heads, width = cfg.heads, cfg.hidden // cfg.heads
    split = g.const(f"{p}split_heads", np.array([0, 0, heads, width], dtype=np.int64))
    q = g.op(
        "Transpose",
        g.op("Reshape", g.linear(x, tensors, f"{p}attention.self.query"), split),
        perm=[0, 2, 1, 3],
    )
    k = g.op(
        "Transpose",
        g.op("Reshape", g.linear(x, tensors, f"{p}attention.self.key"), split),
        perm=[0, 2, 3, 1],
    )
    v = g.op(
        "Transpose",
        g.op("Reshape", g.linear(x, tensors, f"{p}attention.self.value"), split),
        perm=[0, 2, 1, 3],
    )
    scale = g.const(f"{p}scale", np.array(1.0 / math.sqrt(width), dtype=np.float32))
    scores = g.op("Add", g.op("Mul", g.op("MatMul", q, k), scale), bias)
    context = g.op("MatMul", g.op("Softmax", scores, axis=-1), v)
    merge = g.const(f"{p}merge_heads", np.array([0, 0, cfg.hidden], dtype=np.int64))
    context = g.op("Reshape", g.op("Transpose", context, perm=[0, 2, 1, 3]), merge)
    attended = g.op("Add", g.linear(context, tensors, f"{p}attention.output.dense"), x)
    x = g.layer_norm(attended, tensors, f"{p}attention.output.LayerNorm", cfg.eps)
    inner = g.linear(x, tensors, f"{p}intermediate.dense")
    root2 = g.const(f"{p}sqrt2", np.array(math.sqrt(2.0), dtype=np.float32))
    one = g.const(f"{p}one", np.array(1.0, dtype=np.float32))
    half = g.const(f"{p}half", np.array(0.5, dtype=np.float32))
    erf = g.op("Add", g.op("Erf", g.op("Div", inner, root2)), one)
    gelu = g.op("Mul", g.op("Mul", inner, erf), half)  # 0.5 x (1 + erf(x / sqrt 2))
    out = g.op("Add", g.linear(gelu, tensors, f"{p}output.dense"), x)
    return g.layer_norm(out, tensors, f"{p}output.LayerNorm", cfg.eps)


def bert_onnx(
    tensors: dict[str, np.ndarray[Any, Any]],
    cfg: BertConfig,
    step: Callable[[], None] = lambda: None,
    *,
    name: str = "bert",
) -> bytes:
    """The model as serialized ONNX: ``input_ids``, ``attention_mask``, ``token_type_ids`` (int64
    ``[batch, sequence]``) to ``last_hidden_state`` (float32 ``[batch, sequence, hidden]``)."""
    onnx = optional_import("onnx", "building an embedding model for fastembed", EMBED_EXTRA)
    h = onnx.helper
    g = _Graph(onnx)
    words = g.op(
        "Gather",
        g.const("embeddings.word_embeddings.weight", tensors["embeddings.word_embeddings.weight"]),
        "input_ids",
        axis=0,
    )
    types = g.op(
        "Gather",
        g.const(
            "embeddings.token_type_embeddings.weight",
            tensors["embeddings.token_type_embeddings.weight"],
        ),
        "token_type_ids",
        axis=0,
    )
    length = g.op(
        "Slice",
        g.op("Shape", "input_ids"),
        g.const("one_i64", np.array([1], dtype=np.int64)),
        g.const("two_i64", np.array([2], dtype=np.int64)),
    )
    positions = g.op(
        "Slice",
        g.const(
            "embeddings.position_embeddings.weight",
            tensors["embeddings.position_embeddings.weight"],
        ),
        g.const("zero_i64", np.array([0], dtype=np.int64)),
        length,
        g.const("axis0_i64", np.array([0], dtype=np.int64)),
    )
    x = g.op("Add", g.op("Add", words, positions), types)
    x = g.layer_norm(x, tensors, "embeddings.LayerNorm", cfg.eps)
    mask = g.op(
        "Unsqueeze",
        g.op("Cast", "attention_mask", to=onnx.TensorProto.FLOAT),
        g.const("mask_axes", np.array([1, 2], dtype=np.int64)),
    )
    lowest = np.array(np.finfo(np.float32).min, dtype=np.float32)
    bias = g.op(
        "Mul",
        g.op("Sub", g.const("mask_one", np.array(1.0, dtype=np.float32)), mask),
        g.const("mask_lowest", lowest),
    )  # 0 for a token, float32's lowest for padding: [batch, 1, 1, sequence]
    step()
    for layer in range(cfg.layers):
        x = _encoder_layer(g, x, bias, tensors=tensors, p=f"encoder.layer.{layer}.", cfg=cfg)
        step()
    g.nodes.append(h.make_node("Identity", [x], ["last_hidden_state"]))
    int64 = onnx.TensorProto.INT64
    inputs = [
        h.make_tensor_value_info(name, int64, ["batch", "sequence"])
        for name in ("input_ids", "attention_mask", "token_type_ids")
    ]
    output = h.make_tensor_value_info(
        "last_hidden_state", onnx.TensorProto.FLOAT, ["batch", "sequence", cfg.hidden]
    )
    graph = h.make_graph(g.nodes, name, inputs, [output], g.initializers)
    model = h.make_model(
        graph, opset_imports=[h.make_opsetid("", _OPSET)], producer_name="askkit.dense._bert"
    )
    model.ir_version = _IR_VERSION
    onnx.checker.check_model(model)
    data: bytes = model.SerializeToString()
    return data
