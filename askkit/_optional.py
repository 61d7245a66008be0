"""Optional packages, imported when first needed, with the one hint that installs them."""

from __future__ import annotations

import importlib
from types import ModuleType

from askkit.errors import MissingDependencyError

__all__ = ["EMBED_EXTRA", "optional_import"]

#: The extra that brings fastembed, onnx, onnxruntime and tokenizers.
EMBED_EXTRA = "pip install 'askkit[embed]'"


def optional_import(
    module: str, needed_by: str, install: str, *, package: str | None = None
) -> ModuleType:
    """``import module``, or a :class:`~askkit.errors.MissingDependencyError` saying what
    needs it and how to install it.

    Parameters
    ----------
    module:
        The module to import (``"dask.dataframe"``).
    needed_by:
        What needs it, as the start of a sentence (``"read_jsonl_dask"``).
    install:
        The command that installs it (``"pip install 'askkit[scale]'"``).
    package:
        The distribution's name when it is not the module's first part
        (``"qdrant-client"`` for ``qdrant_client``).

    Examples
    --------
    >>> optional_import("json", "reading a file", "pip install json").__name__
    'json'
    >>> optional_import("no_such_module_x", "the widget", "pip install x")
    Traceback (most recent call last):
    ...
    askkit.errors.MissingDependencyError: the widget needs the no_such_module_x package \
(No module named 'no_such_module_x'): pip install x
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        name = package or module.partition(".")[0]
        raise MissingDependencyError(
            f"{needed_by} needs the {name} package ({exc}): {install}"
        ) from exc
