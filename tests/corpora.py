"""The shared corpora beside the repository (``../shared/corpora``): read there, never copied.

A clone without ``../shared`` beside it (anyone's) still passes the suite: a
test that needs a corpus asks :func:`corpus` for it, which skips the test with
one line saying what is missing and why, except under ``CI=true``, where a
missing corpus fails the test. Nothing may read a corpus when a test module is
imported (collection would stop on a clone without it): ask in the test or a
fixture.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import ROOT

__all__ = ["SHARED_CORPORA", "corpus", "has_corpus"]

#: Where the shared corpora live: beside the repository, never inside it.
SHARED_CORPORA = ROOT.parent / "shared" / "corpora"


def has_corpus(name: str) -> bool:
    """Whether ``../shared/corpora/<name>`` is here."""
    return (SHARED_CORPORA / name).is_dir()


def corpus(name: str) -> Path:
    """``../shared/corpora/<name>``; a test without it skips (fails under ``CI=true``)."""
    path = SHARED_CORPORA / name
    if path.is_dir():
        return path
    reason = (
        f"the shared corpus {name!r} is not at {path} (the corpora sit beside the "
        "repository, in ../shared/corpora; a clone without them skips this test)"
    )
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"missing under CI=true: {reason}", pytrace=False)
    pytest.skip(reason)
