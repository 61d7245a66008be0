"""The Python fastembed package, imported lazily; kimun's models loaded from the cache or the hub.

Which Python model is which of kimun's Rust fastembed models, and how the two
packages differ, is set out in :mod:`askkit.dense._fastembed_models`.

fastembed is an extra (``pip install 'askkit[embed]'``), imported by
:func:`import_fastembed` only when a model is built. Models are downloaded
into :func:`default_cache_dir` unless told otherwise, never into fastembed's
own default (a folder in the system's temporary directory).

Before fastembed is asked for a model, askkit looks for its files in the
cache itself (``huggingface_hub.try_to_load_from_cache``). A model that is
not there, when nothing may be downloaded (``local_files_only=True`` or
``HF_HUB_OFFLINE`` set), or when one request to the hub fails, is a
one-line :class:`~askkit.errors.StoreError` at once: fastembed would log
each step of its search and, offline, retry the hub for about 40 seconds.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx

from askkit._cachedir import cache_root
from askkit._http.redact import redact_url, scrub, searchable, split_userinfo
from askkit._optional import EMBED_EXTRA, optional_import
from askkit.dense._fastembed_models import FastEmbedModel
from askkit.errors import StoreError, UsageError

__all__ = [
    "cross_encoder",
    "default_cache_dir",
    "import_fastembed",
    "register_kimun_file",
    "text_embedding",
]

#: The values of ``HF_HUB_OFFLINE`` that mean "offline" (huggingface_hub's and fastembed's).
_TRUE = frozenset({"1", "TRUE", "YES", "ON"})
#: Seconds the one request that tells whether the hub can be reached may take.
_HUB_TIMEOUT = 10.0


_KIMUN_FILES = "askkit-kimun"
_REGISTERED: set[str] = set()
_REGISTRY_LOCK = threading.Lock()


def register_kimun_file(model: FastEmbedModel) -> str:
    """Register, with Python fastembed, the very file kimun's Rust fastembed loads; its name.

    A custom model named ``askkit-kimun/<variant>``: Rust's repository
    (:attr:`FastEmbedModel.code`), ONNX file and external weights, with Rust's
    pooling and normalisation, so Python fastembed downloads and runs what
    kimun runs. Registered once per process (fastembed's registry refuses a
    second registration).
    """
    fastembed = import_fastembed()
    from fastembed.common.model_description import ModelSource, PoolingType

    name = f"{_KIMUN_FILES}/{model.variant}"
    with _REGISTRY_LOCK:
        if name in _REGISTERED:
            return name
        known = {m["model"].lower() for m in fastembed.TextEmbedding.list_supported_models()}
        if name.lower() not in known:
            if model.output_name is not None:
                pooling = PoolingType.DISABLED
            else:
                pooling = PoolingType.CLS if model.pooling == "cls" else PoolingType.MEAN
            fastembed.TextEmbedding.add_custom_model(
                model=name,
                pooling=pooling,
                normalization=True,
                sources=ModelSource(hf=model.code),
                dim=model.dim,
                model_file=model.model_file,
                description=f"kimun's {model.variant}: {model.description}",
                additional_files=list(model.additional_files),
                output_name=model.output_name,
            )
        _REGISTERED.add(name)
    return name


def import_fastembed() -> ModuleType:
    """``import fastembed``, or a :class:`~askkit.errors.MissingDependencyError` naming
    the extra."""
    return optional_import("fastembed", "kimun's local embedder or cross-encoder", EMBED_EXTRA)


def default_cache_dir() -> Path:
    """Where askkit keeps fastembed's models unless told otherwise.

    ``$FASTEMBED_CACHE_PATH`` when set (fastembed's own variable), else
    ``fastembed`` in askkit's cache folder (:func:`askkit._cachedir.cache_root`,
    ``~/.cache/askkit/fastembed`` by default): a per-user folder that survives a
    reboot, unlike fastembed's default in the system's temporary directory.
    """
    explicit = os.environ.get("FASTEMBED_CACHE_PATH")
    if explicit:
        return Path(explicit)
    return cache_root() / "fastembed"


def _options(
    cache_dir: str | os.PathLike[str] | None,
    local_files_only: bool,
    specific_model_path: str | os.PathLike[str] | None,
    threads: int | None,
) -> dict[str, Any]:
    options: dict[str, Any] = {
        "cache_dir": str(Path(cache_dir) if cache_dir is not None else default_cache_dir()),
        "local_files_only": bool(local_files_only),
    }
    if specific_model_path is not None:
        options["specific_model_path"] = str(specific_model_path)
    if threads is not None:
        options["threads"] = threads
    return options


def _load(kind: str, factory: Any, python_model: str, options: dict[str, Any]) -> Any:
    """``factory(python_model, **options)``, its failures as askkit's errors."""
    description = next(
        (m for m in factory.list_supported_models() if m["model"].lower() == python_model.lower()),
        None,
    )
    if description is None:
        raise UsageError(
            f"fastembed has no {kind} named {python_model!r}: name one of "
            f"{factory.__name__}.list_supported_models(), or register a custom model first "
            f"({factory.__name__}.add_custom_model)"
        )
    where = options.get("specific_model_path") or options["cache_dir"]
    if "specific_model_path" not in options:
        _check_obtainable(kind, python_model, description, options)
    try:
        return factory(python_model, **options)
    except (OSError, ValueError, RuntimeError) as exc:
        hint = (
            "only files already in the cache were looked at (local_files_only=True)"
            if options["local_files_only"]
            else "the first use downloads it from Hugging Face, which needs the network once"
        )
        raise StoreError(
            f"fastembed could not load the {kind} {python_model!r} from {where}: "
            f"{type(exc).__name__}: {_one_line(exc)} ({hint})",
            path=str(where),
        ) from exc


def _check_obtainable(
    kind: str, python_model: str, description: dict[str, Any], options: dict[str, Any]
) -> None:
    """Return if the model is in the cache, or can be downloaded; else a StoreError at once.

    What fastembed itself does then: it logs its search of the cache as
    ERROR lines and, offline, retries the hub three times, sleeping 3, 9
    and 27 seconds. One request here tells whether the hub answers.
    """
    from huggingface_hub import constants, get_hf_file_metadata, hf_hub_url, try_to_load_from_cache

    repo = (description.get("sources") or {}).get("hf")
    if not repo:  # a model fastembed downloads from elsewhere: its own rules apply
        return
    cache_dir = options["cache_dir"]
    files = [description["model_file"], *description.get("additional_files", [])]
    if all(isinstance(try_to_load_from_cache(repo, f, cache_dir=cache_dir), str) for f in files):
        return
    size = description.get("size_in_GB")
    what = f"{repo} on Hugging Face{f', about {size} GB' if size else ''}"
    missing = f"the {kind} {python_model!r} ({what}) is not in the cache {cache_dir}"
    if options["local_files_only"] or _hub_offline():
        reason = "local_files_only=True" if options["local_files_only"] else "HF_HUB_OFFLINE is set"
        raise StoreError(
            f"{missing}, and {reason}: nothing is downloaded. Download it once with the "
            "network (without HF_HUB_OFFLINE and local_files_only), or point the cache "
            "(cache_dir, FASTEMBED_CACHE_PATH) at a folder that holds it",
            path=str(cache_dir),
        )
    try:
        get_hf_file_metadata(hf_hub_url(repo, description["model_file"]), timeout=_HUB_TIMEOUT)
    except (httpx.HTTPError, OSError) as exc:  # huggingface_hub's errors are both
        secrets = searchable(split_userinfo(constants.ENDPOINT)[2])  # HF_ENDPOINT's password
        why = (
            f"askkit cannot reach {redact_url(constants.ENDPOINT)} to download it"
            if isinstance(exc, httpx.TransportError)
            else "the hub refused to serve it"
        )
        raise StoreError(
            scrub(
                f"{missing}, and {why} ({type(exc).__name__}: {_one_line(exc)}). Connect once "
                "to download it, or set HF_HUB_OFFLINE=1 to use the cache alone and fail at once",
                secrets,
            ),
            path=str(cache_dir),
        ) from None


def _hub_offline() -> bool:
    """Whether ``HF_HUB_OFFLINE`` says not to use the network (read now, as fastembed does)."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in _TRUE


def _one_line(exc: BaseException) -> str:
    """An exception's message on one line (huggingface_hub's span several)."""
    return " ".join(str(exc).split()) or type(exc).__name__


def text_embedding(
    python_model: str,
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    local_files_only: bool = False,
    specific_model_path: str | os.PathLike[str] | None = None,
    threads: int | None = None,
) -> Any:
    """A ``fastembed.TextEmbedding`` for ``python_model``, with askkit's cache folder."""
    fastembed = import_fastembed()
    options = _options(cache_dir, local_files_only, specific_model_path, threads)
    return _load("embedding model", fastembed.TextEmbedding, python_model, options)


def cross_encoder(
    python_model: str,
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    local_files_only: bool = False,
    specific_model_path: str | os.PathLike[str] | None = None,
    threads: int | None = None,
) -> Any:
    """A ``fastembed.rerank.cross_encoder.TextCrossEncoder`` for ``python_model``."""
    import_fastembed()
    from fastembed.rerank.cross_encoder import TextCrossEncoder

    options = _options(cache_dir, local_files_only, specific_model_path, threads)
    return _load("cross-encoder", TextCrossEncoder, python_model, options)
