"""askkit: see what a retrieval system retrieved, and why.

The core API: kimun's wire types, ``AskSource`` and ``Turn``, citations and
the errors askkit raises. Importing askkit loads neither ipywidgets, IPython
nor matplotlib; the widget and plot modules import them when used.
"""

from __future__ import annotations

from importlib import metadata as _metadata

from askkit import citations, prompt
from askkit.errors import (
    AskkitError,
    AuthError,
    JobFailed,
    JobTimeout,
    MissingDependencyError,
    ProtocolError,
    SchemaError,
    ServerError,
    ServerStatusError,
    ServerUnavailable,
    VaultError,
)
from askkit.payloads import read_turn, turn_from_payload
from askkit.sources import (
    BREADCRUMB_SEP,
    HEADING_JOINER,
    AskSource,
    SourceList,
    Turn,
    VaultPath,
)
from askkit.wire import AnswerResult, ChunkResult, EmbeddingsResponse

try:
    __version__ = _metadata.version("askkit")
except _metadata.PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"

#: Submodules loaded on first attribute access: ``askkit.frame`` works after a
#: bare ``import askkit`` without making that import pay for pandas.
_LAZY_MODULES = frozenset(
    {
        "frame",
        "metrics",
        "compare",
        "gate",
        "vault",
        "retrieve",
        "report",
        "plots",
        "widgets",
        "testing",
        "ranking",
        "reach",
        "trace",
    }
)


def __getattr__(name: str) -> object:
    if name in _LAZY_MODULES:
        import importlib

        return importlib.import_module(f"askkit.{name}")
    raise AttributeError(f"module 'askkit' has no attribute {name!r}")


__all__ = [
    "BREADCRUMB_SEP",
    "HEADING_JOINER",
    "AnswerResult",
    "AskSource",
    "AskkitError",
    "AuthError",
    "ChunkResult",
    "EmbeddingsResponse",
    "JobFailed",
    "JobTimeout",
    "MissingDependencyError",
    "ProtocolError",
    "SchemaError",
    "ServerError",
    "ServerStatusError",
    "ServerUnavailable",
    "SourceList",
    "Turn",
    "VaultError",
    "VaultPath",
    "__version__",
    "citations",
    "prompt",
    "read_turn",
    "turn_from_payload",
]
