"""AsyncKimunClient: the same rules as KimunClient, on httpx.AsyncClient."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import replace

import httpx
import pytest

from askkit import Turn
from askkit.errors import AuthError, JobFailed, JobTimeout, ProtocolError, ServerUnavailable
from askkit.retrieve.client import TOKEN_ENV, AsyncKimunClient, ClientSettings, Health
from askkit.testing import FAST_SETTINGS, KimunTestServer
from askkit.wire import AnswerResult
from tests.conftest import load


@pytest.fixture(autouse=True)
def _no_token_in_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)


@pytest.fixture
def server() -> Iterator[KimunTestServer]:
    with KimunTestServer(token="tok") as s:
        yield s


def client_for(
    server: KimunTestServer,
    *,
    token: str = "tok",
    settings: ClientSettings = FAST_SETTINGS,
    http_client: httpx.AsyncClient | None = None,
) -> AsyncKimunClient:
    return AsyncKimunClient(server.url, "notes", token, settings=settings, http_client=http_client)


def test_health_search_retrieve_and_answer(server: KimunTestServer) -> None:
    async def run() -> tuple[Health, int, list[int], Turn]:
        async with client_for(server) as client:
            health = await client.health()
            result = await client.search("q", history=[("a", "b")], context_size="small")
            chunks = await client.retrieve("q", k=2)
            turn = await client.answer("question?")
            return health, len(result.chunks), [c.ordinal for c in chunks], turn

    health, n, ordinals, turn = asyncio.run(run())
    assert health.auth_required is True
    assert (n, ordinals) == (6, [1, 2])
    assert turn == Turn.from_answer(
        "question?", AnswerResult.from_dict(load("answer_job.json")["result"])
    )
    body = server.requests_to("/api/embeddings")[0].json()
    assert body["history"] == [{"question": "a", "answer": "b"}]
    assert body["context_size"] == "small"
    assert len(server.requests_to("/api/job/")) == 3
    assert {r.authorization for r in server.requests_to("/api/")} == {"Bearer tok"}


def test_repr_hides_the_token(server: KimunTestServer) -> None:
    client = client_for(server)
    assert repr(client) == f"AsyncKimunClient({server.url!r}, vault_id='notes', token=<hidden>)"
    assert client.has_token
    assert client.base_url == server.url
    assert client.vault_id == "notes"
    assert client.settings is FAST_SETTINGS
    asyncio.run(client.aclose())


def test_auth_error(server: KimunTestServer) -> None:
    async def run() -> None:
        async with client_for(server, token="") as client:
            await client.search("q")

    with pytest.raises(AuthError, match="none was sent"):
        asyncio.run(run())


def test_job_failed_and_timeout(server: KimunTestServer) -> None:
    async def run(settings: ClientSettings = FAST_SETTINGS) -> Turn:
        async with client_for(server, settings=settings) as client:
            return await client.answer("q")

    server.fail("job_fails", times=1, message="no LLM")
    with pytest.raises(JobFailed, match="failed: no LLM"):
        asyncio.run(run())
    server.fail("job_never_completes", times=1)
    with pytest.raises(JobTimeout, match="after 3 polls"):
        asyncio.run(run(replace(FAST_SETTINGS, max_polls=3)))


def test_search_is_retried_but_answer_is_not(server: KimunTestServer) -> None:
    async def search() -> int:
        async with client_for(server) as client:
            return len((await client.search("q")).chunks)

    async def answer() -> Turn:
        async with client_for(server) as client:
            return await client.answer("q")

    server.fail("drop", route=["embeddings"], times=1)
    server.fail("drop", route="answer", times=1)
    assert asyncio.run(search()) == 6  # dropped once, retried
    assert len(server.requests_to("/api/embeddings")) == 2
    with pytest.raises(ServerUnavailable, match="dropped"):
        asyncio.run(answer())
    assert len(server.requests_to("/api/answer")) == 1


def test_timeout_and_invalid_json(server: KimunTestServer) -> None:
    async def health(settings: ClientSettings = FAST_SETTINGS) -> Health:
        async with client_for(server, settings=settings) as client:
            return await client.health()

    server.fail("slow", times=1, delay=5)
    with pytest.raises(ServerUnavailable, match=r"no response within the 0\.1 s timeout"):
        asyncio.run(health(replace(FAST_SETTINGS, timeout=0.1, retries=0)))
    server.fail("invalid_json", times=1)
    with pytest.raises(ProtocolError, match="not JSON"):
        asyncio.run(health())


def test_a_caller_owned_http_client_is_not_closed(server: KimunTestServer) -> None:
    async def run() -> bool:
        async with httpx.AsyncClient() as http:
            async with client_for(server, http_client=http) as client:
                await client.health()
            return http.is_closed

    assert asyncio.run(run()) is False
