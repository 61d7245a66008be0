"""The retrieval tests' fixtures: no token from the environment, and a loopback kimun server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from askkit.retrieve.client import TOKEN_ENV
from askkit.testing import KimunTestServer


@pytest.fixture(autouse=True)
def _no_token_in_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)


@pytest.fixture
def server() -> Iterator[KimunTestServer]:
    with KimunTestServer() as s:
        yield s
