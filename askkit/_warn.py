"""Warnings attributed to the user's line, not to askkit's own frames."""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

__all__ = ["warn_user"]

_PACKAGE_DIR = str(Path(__file__).parent) + os.sep  # as code objects name their files


def warn_user(message: str, category: type[Warning] = UserWarning) -> None:
    """Warn, attributed to the first caller outside askkit.

    However deep inside askkit the warning starts (a vault listing called by
    an index called by a widget), the user sees the line of their own code
    that led to it.

    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as seen:
    ...     warnings.simplefilter("always")
    ...     warn_user("a note was skipped")
    >>> seen[0].filename.startswith(_PACKAGE_DIR), str(seen[0].message)
    (False, 'a note was skipped')
    """
    level, frame = 2, sys._getframe(1)
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)
