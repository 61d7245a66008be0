"""askkit.dense._bert: safetensors read with numpy, BERT configs checked, the graph built.

The graph's numbers are held to a numpy forward pass in ``test_minilm.py``; here
the reading and the errors, on small hand-made files.
"""

from __future__ import annotations

import json
import struct
from typing import Any

import numpy as np
import pytest

from askkit.dense._bert import bert_config, bert_onnx, bert_tensors, read_safetensors
from askkit.errors import SchemaError

CONFIG: dict[str, Any] = {
    "model_type": "bert",
    "hidden_act": "gelu",
    "num_hidden_layers": 1,
    "hidden_size": 4,
    "num_attention_heads": 2,
    "intermediate_size": 8,
    "vocab_size": 10,
    "max_position_embeddings": 6,
    "type_vocab_size": 2,
    "layer_norm_eps": 1e-12,
}


BF16 = b'{"w": {"dtype": "BF16", "shape": [1], "data_offsets": [0, 2]}}'


def safetensors(tensors: dict[str, np.ndarray[Any, Any]]) -> bytes:
    """A safetensors file, written as the format says."""
    header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    body = b""
    for name, array in tensors.items():
        data = np.ascontiguousarray(array, dtype="<f4").tobytes()
        header[name] = {
            "dtype": "F32",
            "shape": list(array.shape),
            "data_offsets": [len(body), len(body) + len(data)],
        }
        body += data
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + body


def tiny_bert(seed: int = 0) -> dict[str, np.ndarray[Any, Any]]:
    rng = np.random.default_rng(seed)
    h, i = CONFIG["hidden_size"], CONFIG["intermediate_size"]
    shapes: dict[str, tuple[int, ...]] = {
        "embeddings.word_embeddings.weight": (10, h),
        "embeddings.position_embeddings.weight": (6, h),
        "embeddings.token_type_embeddings.weight": (2, h),
        "embeddings.LayerNorm.weight": (h,),
        "embeddings.LayerNorm.bias": (h,),
    }
    p = "encoder.layer.0."
    for name in ("query", "key", "value"):
        shapes[f"{p}attention.self.{name}.weight"] = (h, h)
        shapes[f"{p}attention.self.{name}.bias"] = (h,)
    shapes |= {
        f"{p}attention.output.dense.weight": (h, h),
        f"{p}attention.output.dense.bias": (h,),
        f"{p}attention.output.LayerNorm.weight": (h,),
        f"{p}attention.output.LayerNorm.bias": (h,),
        f"{p}intermediate.dense.weight": (i, h),
        f"{p}intermediate.dense.bias": (i,),
        f"{p}output.dense.weight": (h, i),
        f"{p}output.dense.bias": (h,),
        f"{p}output.LayerNorm.weight": (h,),
        f"{p}output.LayerNorm.bias": (h,),
    }
    return {name: rng.standard_normal(shape).astype(np.float32) for name, shape in shapes.items()}


def test_safetensors_are_read_as_written() -> None:
    tensors = tiny_bert()
    read = read_safetensors(safetensors(tensors))
    assert set(read) == set(tensors)
    for name, array in tensors.items():
        np.testing.assert_array_equal(read[name], array)


@pytest.mark.parametrize(
    ("data", "field"),
    [
        (struct.pack("<Q", 10**9) + b"{}", "header"),
        (struct.pack("<Q", 2) + b'{"w": 1}'[:2], None),
        (
            struct.pack("<Q", len(BF16)) + BF16 + b"\0\0",
            "header['w'].dtype",
        ),
    ],
)
def test_a_file_that_is_not_safetensors_is_a_schema_error(data: bytes, field: str | None) -> None:
    with pytest.raises(SchemaError) as caught:
        read_safetensors(data, file="w.safetensors")
    assert caught.value.file == "w.safetensors"
    assert caught.value.field == field


def test_offsets_outside_the_file_are_a_schema_error() -> None:
    header = json.dumps({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}).encode()
    with pytest.raises(SchemaError, match="16 bytes inside the file") as caught:
        read_safetensors(struct.pack("<Q", len(header)) + header + b"\0" * 8)
    assert caught.value.field == "header['w'].data_offsets"
    assert caught.value.value == [0, 16]


def test_a_config_of_another_architecture_names_its_field() -> None:
    with pytest.raises(SchemaError) as caught:
        bert_config(json.dumps(CONFIG | {"position_embedding_type": "relative_key"}).encode(), "c")
    assert (caught.value.file, caught.value.field) == ("c", "position_embedding_type")
    with pytest.raises(SchemaError, match="multiple of num_attention_heads"):
        bert_config(json.dumps(CONFIG | {"num_attention_heads": 3}).encode(), "c")
    with pytest.raises(SchemaError, match="whole number"):
        bert_config(json.dumps(CONFIG | {"num_hidden_layers": "six"}).encode(), "c")
    with pytest.raises(SchemaError, match="not JSON"):
        bert_config(b"{", "c")


def test_a_missing_or_misshapen_tensor_is_named() -> None:
    cfg = bert_config(json.dumps(CONFIG).encode(), "config.json")
    tensors = tiny_bert()
    del tensors["encoder.layer.0.output.dense.bias"]
    with pytest.raises(SchemaError, match="missing") as caught:
        bert_tensors(safetensors(tensors), cfg, "w")
    assert caught.value.field == "encoder.layer.0.output.dense.bias"
    tensors = tiny_bert() | {"embeddings.LayerNorm.bias": np.zeros(5, dtype=np.float32)}
    with pytest.raises(SchemaError, match=r"shape \[4\]") as caught:
        bert_tensors(safetensors(tensors), cfg, "w")
    assert caught.value.field == "embeddings.LayerNorm.bias"


def test_a_bert_prefix_is_read_and_the_graph_runs_as_bertmodel() -> None:
    """The graph on a tiny random BERT equals the same layers written out in numpy."""
    import onnxruntime as ort

    from tests.dense.minilm_reference import bert_states

    cfg = bert_config(json.dumps(CONFIG).encode(), "config.json")
    weights = tiny_bert(seed=3)
    tensors = bert_tensors(safetensors({f"bert.{k}": v for k, v in weights.items()}), cfg, "w")
    session = ort.InferenceSession(bert_onnx(tensors, cfg), providers=["CPUExecutionProvider"])
    ids = np.array([[2, 5, 7, 3, 0], [2, 9, 3, 0, 0]], dtype=np.int64)
    mask = (ids != 0).astype(np.int64) | np.array([[1, 1, 1, 1, 0], [1, 1, 1, 0, 0]])
    (states,) = session.run(
        None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    )
    assert states.shape == (2, 5, 4)
    for row in range(2):
        real = int(mask[row].sum())
        expected = bert_states(
            {k: v.astype(np.float64) for k, v in weights.items()}, CONFIG, ids[row, :real].tolist()
        )
        np.testing.assert_allclose(states[row, :real], expected, atol=1e-5, rtol=0)
