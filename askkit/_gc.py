"""Pause Python's cyclic garbage collector around a bulk build.

Building a frame from 100,000 source objects, or the widgets of a view,
allocates many short-lived objects; each allocation burst triggers
collections that walk every live object, the caller's 100,000 sources
included, and that walking cost more than the build itself. The builds
create no garbage cycles that must go at once, so the collector waits until
the block ends, then runs as usual. Nesting is safe: only the outermost
block turns the collector back on.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["paused_gc"]


@contextmanager
def paused_gc() -> Iterator[None]:
    """Run the block with the cyclic collector off, restoring its state after.

    >>> with paused_gc():
    ...     gc.isenabled()
    False
    >>> gc.isenabled()
    True
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
