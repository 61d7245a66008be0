"""The kimun clients against hostile servers: a deadline, a body cap, typed errors, no secrets.

Every test talks to askkit.testing's KimunTestServer over real HTTP on
127.0.0.1, with its hostile faults switched on, through both clients.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import gc
import http.server
import json
import logging
import re
import threading
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import quote, unquote

import pytest

from askkit.errors import (
    JobFailed,
    ProtocolError,
    ServerError,
    ServerStatusError,
    ServerUnavailable,
    UsageError,
)
from askkit.retrieve.client import (
    AsyncKimunClient,
    ClientSettings,
    KimunClient,
    redact_url,
)
from askkit.testing import FAST_SETTINGS, FaultKind, KimunTestServer, Route

MB = 10**6
CLIENTS = ["sync", "async"]


def call(
    kind: str,
    url: str,
    method: str = "search",
    *,
    token: str = "",
    settings: ClientSettings = FAST_SETTINGS,
) -> Any:
    """``client.<method>(...)`` on a fresh sync or async client."""
    args = () if method == "health" else ("how often do I feed the starter?",)
    if kind == "sync":
        with KimunClient(url, "notes", token, settings=settings) as client:
            return getattr(client, method)(*args)

    async def run() -> Any:
        async with AsyncKimunClient(url, "notes", token, settings=settings) as client:
            return await getattr(client, method)(*args)

    return asyncio.run(run())


def _status_bytes(name: str) -> int:
    text = Path("/proc/self/status").read_text(encoding="ascii")
    match = re.search(rf"^{name}:\s+(\d+) kB$", text, re.MULTILINE)
    assert match is not None, name
    return int(match[1]) * 1024


@contextlib.contextmanager
def peak_rss_growth() -> Iterator[list[int]]:
    """How far the process's peak RSS rose above its RSS at the start (one int, in bytes)."""
    gc.collect()
    try:  # reset the peak (VmHWM) to the current RSS: Linux >= 4.0
        Path("/proc/self/clear_refs").write_text("5", encoding="ascii")
        before = _status_bytes("VmRSS")
    except OSError:  # cannot reset: measure against the peak so far (never more lenient)
        before = _status_bytes("VmHWM")
    growth: list[int] = []
    yield growth
    growth.append(_status_bytes("VmHWM") - before)


# -- item 8: a deadline per request, a cap on the body


@dataclass(frozen=True)
class Hostile:
    fault: FaultKind | None  # None: the server's ordinary response
    error: type[ServerError]
    message: str  # a regex; {url} is the server's
    seconds: tuple[float, float]  # the least and the most the call may take
    settings: ClientSettings = FAST_SETTINGS
    size: int | None = None
    attempts: int = 1
    memory: int = 200 * MB


DRIPPING = replace(FAST_SETTINGS, timeout=1, retries=1)
DEFAULT_CAP = "67,108,864 bytes (64.0 MiB)"
CAPPED = 128 * 2**20  # a body read to the 64 MiB cap: the cap, its growth, one step
ITEM_8 = {
    # one byte every 0.5 s: each attempt ends at its 1 s deadline, two attempts
    "drip": Hostile(
        "drip",
        ServerUnavailable,
        r"POST /api/embeddings to {url}: no response within the 1 s timeout "
        r"\(HTTP 200, [1-9][\d,]* of [\d,]+ body bytes received\) after 2 attempts",
        (2.0, 3.5),
        DRIPPING,
        attempts=2,
    ),
    "drip_headers": Hostile(
        "drip_headers",
        ServerUnavailable,
        r"POST /api/embeddings to {url}: no response within the 1 s timeout "
        r"\(request sent, no response headers\)$",
        (1.0, 2.5),
        replace(DRIPPING, retries=0),
    ),
    "huge_body": Hostile(
        "huge_body",
        ProtocolError,
        r"POST /api/embeddings to {url}: the response declares 400,000,000 bytes "
        rf"\(381\.5 MiB\) \(Content-Length\), over the {re.escape(DEFAULT_CAP)} limit; "
        r"raise max_body_bytes",
        (0, 2.0),
    ),
    # 1 MB on the wire, 1 GiB inflated: stopped once 64 MiB are decoded, the
    # memory the cap and one 1 MiB inflate step (not 66 MB per 64 KiB read)
    "gzip_bomb": Hostile(
        "gzip_bomb",
        ProtocolError,
        rf"POST /api/embeddings to {{url}}: the response body passed the {re.escape(DEFAULT_CAP)} "
        r"limit \([\d,]+ bytes \([\d.]+ MiB\) decoded so far\)",
        (0, 5.0),
        memory=CAPPED,
    ),
    "gzip_stack": Hostile(
        "gzip_stack",
        ProtocolError,
        r"POST /api/embeddings to {url}: the response is encoded 'gzip, gzip'; askkit takes "
        r"one gzip or deflate layer at most",
        (0, 2.0),
        size=2**28,
    ),
    "endless": Hostile(
        "endless",
        ProtocolError,
        rf"POST /api/embeddings to {{url}}: the response body passed the {re.escape(DEFAULT_CAP)} "
        r"limit",
        (0, 5.0),
        memory=CAPPED,
    ),
    # the cap is a setting: the sample response (1,687 bytes) over a 1,000-byte cap
    "small_cap": Hostile(
        None,
        ProtocolError,
        r"POST /api/embeddings to {url}: the response declares 1,687 bytes \(Content-Length\), "
        r"over the 1,000 bytes limit",
        (0, 2.0),
        replace(FAST_SETTINGS, max_body_bytes=1000),
    ),
}


@pytest.mark.parametrize("kind", CLIENTS)
@pytest.mark.parametrize("case", ITEM_8.values(), ids=ITEM_8.keys())
def test_item_8_client_deadline_and_body_cap(
    server: KimunTestServer, case: Hostile, kind: str
) -> None:
    """Hardening item 8: the timeout bounds each request as a whole, the body is capped.

    A server dripping one byte every 0.5 s (in the body or in the headers) no
    longer holds a call past its timeout per attempt; a 400 MB Content-Length,
    a gzip bomb, a stacked gzip and an endless chunked body end in a
    ProtocolError at once or as soon as the decoded bytes pass the cap, with
    the process's memory bounded. Each error names the URL, the limit and
    what was received.
    """
    if case.fault is not None:
        server.fail(case.fault, route="embeddings", size=case.size)
    started = time.monotonic()
    with peak_rss_growth() as growth, pytest.raises(case.error) as info:
        call(kind, server.url, settings=case.settings)
    elapsed = time.monotonic() - started
    message = str(info.value)
    assert re.search(case.message.format(url=re.escape(server.url)), message), message
    assert case.seconds[0] <= elapsed < case.seconds[1], elapsed
    assert growth[0] < case.memory, f"peak RSS grew by {growth[0] / MB:.0f} MB"
    assert len(server.requests_to("/api/embeddings")) == case.attempts
    assert "\n" not in message
    assert info.value.path == "/api/embeddings"


# -- item 5: typed errors for JSON no kimun sends


ITEM_5_PROBLEMS: dict[str, str] = {
    "deep_json": r"nest|deep",
    "bad_utf8": r"UTF-8",
    "huge_number": r"number",
    "lone_surrogate": r"surrogate",
}
ITEM_5_CALLS: dict[str, tuple[str, tuple[Route, ...]]] = {
    "search": ("search", ("embeddings",)),
    "health": ("health", ("health",)),
    "answer": ("answer", ("answer", "job")),
}
#: (fault, call, body of a "body" fault)
ITEM_5: list[Any] = [
    pytest.param(fault, name, None, id=f"{fault}-{name}")
    for fault in ITEM_5_PROBLEMS
    for name in ITEM_5_CALLS
    if (fault, name) != ("huge_number", "health")  # /health has no number to break
]
ITEM_5 += [  # the number alone, where the issue met it: query_time_ms and a score
    pytest.param(
        "huge_number",
        "search",
        b'{"chunks": [], "query_time_ms": 1' + b"0" * 400 + b"}",
        id="query_time_ms-search",
    ),
    pytest.param(
        "huge_number",
        "answer",
        b'{"job_id": "j", "status": "completed", "result": {"answer": "a", "sources": '
        b'[{"path": "a.md", "title": "a", "content": "", "hash": "1", "similarity_score": 9'
        + b"9" * 399
        + b"}]}}",
        id="score-answer",
    ),
]


@pytest.mark.parametrize("kind", CLIENTS)
@pytest.mark.parametrize(("fault", "name", "body"), ITEM_5)
def test_item_5_raw_exceptions_become_typed_errors(
    server: KimunTestServer, fault: FaultKind, name: str, body: bytes | None, kind: str
) -> None:
    """Hardening item 5: JSON nested 100,000 deep, 400-digit numbers, bytes that are not
    UTF-8 and lone surrogate escapes give a ProtocolError naming the route, the URL and
    the problem, never a RecursionError, OverflowError or Unicode error.
    """
    method, routes = ITEM_5_CALLS[name]
    if body is None:
        server.fail(fault, route=routes)
    else:
        server.fail("body", route=routes[-1], body=body)
    with pytest.raises(ProtocolError) as info:
        call(kind, server.url, method)
    message = str(info.value)
    assert type(info.value) is ProtocolError
    assert re.search(ITEM_5_PROBLEMS[fault], message, re.IGNORECASE), message
    assert server.url in message
    assert info.value.path is not None
    assert re.match(rf"(GET|POST) {re.escape(info.value.path)} ", message), message
    message.encode("utf-8")  # printable anywhere: no lone surrogate
    assert "\n" not in message
    assert len(message) < 2000


# -- item 14: no secret shown


PASSWORD = "url-pa55word-value"
TOKEN = "arg-t0ken-value"
SECRETS = (PASSWORD, TOKEN)


def assert_no_secret(error: BaseException) -> None:
    shown = "".join(traceback.format_exception(error)) + repr(vars(error))
    for secret in SECRETS:
        assert secret not in shown


@dataclass
class Seen:
    errors: list[BaseException] = field(default_factory=list)

    def run(self, kind: str, url: str, method: str = "search", **kwargs: Any) -> BaseException:
        with pytest.raises(ServerError) as info:
            call(kind, url, method, token=TOKEN, **kwargs)
        self.errors.append(info.value)
        assert_no_secret(info.value)
        return info.value


@pytest.mark.parametrize("kind", CLIENTS)
def test_item_14_url_credentials_and_token_are_redacted(
    server: KimunTestServer, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Hardening item 14: the password of ``http://user:PASSWORD@host`` and the token are
    redacted in the repr, base_url, every error (even when the server echoes them) and
    httpx's log lines, while the request still carries them; ``redact_url`` is public.
    """
    caplog.set_level(logging.DEBUG, logger="httpx")
    caplog.set_level(logging.DEBUG, logger="httpcore")
    host = server.url.removeprefix("http://")
    url = f"http://kimun:{PASSWORD}@{host}"
    shown = f"http://kimun:***@{host}"
    assert redact_url(url) == shown
    assert redact_url(f"https://{TOKEN}@example.org/x") == "https://***@example.org/x"

    client_type = KimunClient if kind == "sync" else AsyncKimunClient
    client = client_type(url + "/", "notes", TOKEN)
    assert client.base_url == shown
    assert repr(client) == f"{client_type.__name__}({shown!r}, vault_id='notes', token=<hidden>)"
    assert str(client) == repr(client)
    if isinstance(client, KimunClient):
        client.close()
    else:
        asyncio.run(client.aclose())

    # the credentials still reach the server: the user info as Basic auth, as httpx sends it
    assert call(kind, url, "health", token=TOKEN).status == "ok"
    basic = base64.b64encode(f"kimun:{PASSWORD}".encode()).decode()
    assert server.requests[-1].authorization == f"Basic {basic}"

    seen = Seen()
    echo = f"bad credentials {PASSWORD} {TOKEN}"
    server.fail("status", route="embeddings", times=1, status=500, message=echo)
    err = seen.run(kind, url)
    assert isinstance(err, ServerStatusError)
    assert err.server_message == "bad credentials *** ***"
    server.fail("body", route="embeddings", times=1, body=echo.encode())
    assert f"is {shown} a kimun server?" in str(seen.run(kind, url))
    server.fail("job_fails", times=1, message=echo)
    assert isinstance(seen.run(kind, url, "answer"), JobFailed)
    small = replace(FAST_SETTINGS, max_body_bytes=10)
    assert str(seen.run(kind, url, settings=small)).startswith(f"POST /api/embeddings to {shown}:")
    server.fail("slow", route="embeddings", times=1, delay=5)
    quick = replace(FAST_SETTINGS, timeout=0.2, retries=0)
    assert str(seen.run(kind, url, settings=quick)).startswith(f"POST /api/embeddings to {shown}:")
    assert len(seen.errors) == 5

    stopped = KimunTestServer().start()
    gone = f"http://kimun:{PASSWORD}@{stopped.url.removeprefix('http://')}"
    stopped.stop()
    err = seen.run(kind, gone, "health", settings=replace(FAST_SETTINGS, retries=0))
    assert isinstance(err, ServerUnavailable)
    assert redact_url(gone) in str(err)

    with pytest.raises(UsageError) as bad:
        client_type(f"http://kimun:{PASSWORD}@127.0.0.1:port", "notes", TOKEN)
    assert_no_secret(bad.value)
    assert str(bad.value).startswith("base_url ")

    logged = [record.getMessage() for record in caplog.records]
    assert any(f"{server.url}/api/embeddings" in line for line in logged)
    assert not [line for line in logged if any(s in line for s in SECRETS)]


def test_item_8_a_huge_timeout_does_not_overflow() -> None:
    """Hardening item 8: ``timeout=1e10`` overflowed the wait (time_t) with a raw OverflowError."""
    from askkit.errors import ServerUnavailable
    from askkit.retrieve import ClientSettings, KimunClient

    settings = ClientSettings(timeout=1e10, retries=0)
    with (
        KimunClient("http://127.0.0.1:9", "notes", settings=settings) as client,
        pytest.raises(ServerUnavailable),
    ):
        client.health()  # port 9 refuses at once: a typed error, no overflow


class _Echo(http.server.BaseHTTPRequestHandler):
    """A hostile server: every request gets the next planned (status, body, header)."""

    plan: ClassVar[list[tuple[int, bytes, str]]] = []

    def _reply(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        status, body, header = self.plan[0]
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Echo", header)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self._reply()

    def do_POST(self) -> None:
        self._reply()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def echo() -> Iterator[str]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


def assert_hidden(shown: str, secrets: tuple[str, ...]) -> None:
    """No secret in ``shown``: raw, escaped, percent-encoded, or its start (4+ characters)."""
    for secret in secrets:
        forms = {secret, repr(secret)[1:-1], secret.encode("unicode_escape").decode()}
        forms |= {quote(secret, safe=""), unquote(secret)}
        for form in forms:
            heads = [form] if len(form) < 4 else [form[:k] for k in range(4, len(form) + 1)]
            assert not [h for h in heads if h in shown], (form, shown)


@pytest.mark.parametrize("kind", CLIENTS)
def test_item_14_partial_escaped_and_short_secrets_are_redacted(
    echo: str, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Hardening item 14, hostile echoes: secrets are scrubbed before a message is cut
    (no partial token at the cut), in every escaped or percent-coded form (a token with
    a backslash, a password with an encoded newline), short URL passwords too, and from
    httpcore's DEBUG log of the response headers.
    """
    caplog.set_level(logging.DEBUG, logger="httpx")
    caplog.set_level(logging.DEBUG, logger="httpcore")
    quick = replace(FAST_SETTINGS, retries=0)
    token = "SECRETtoken-0123456789"
    cases: list[tuple[str, str, tuple[str, ...], int, bytes]] = [
        # cut at printable's 300 characters, at excerpt's 120 (error) and 200 (not JSON)
        ("pw-long-enough", token, (), 500, json.dumps({"error": "y" * 290 + token}).encode()),
        ("pw-long-enough", token, (), 500, ("y" * 110 + token + "z" * 50).encode()),
        ("pw-long-enough", token, (), 200, ("y" * 190 + token + "z" * 50).encode()),
        # a backslash doubled by repr; a %0A password shown decoded and escaped
        ("pw-long-enough", "abc\\def123456", (), 500, b"echo abc\\def123456"),
        ("pw%0Ahello", token, ("pw\nhello",), 500, json.dumps({"error": "pw\nhello"}).encode()),
        ("pw%0Ahello", token, ("pw\nhello",), 500, b"pw\nhello pw%0Ahello"),
        # a short password, echoed as a word and in user info
        ("abc", token, (), 500, b"refused abc for kimun:abc@host"),
    ]
    for password, tok, decoded, status, body in cases:
        secrets = (password, tok, *decoded)
        header = tok if tok.isalnum() or "-" in tok else "x"
        _Echo.plan = [(status, body, header)]
        url = f"http://kimun:{password}@{echo}"
        with pytest.raises(ServerError) as info:
            call(kind, url, token=tok, settings=quick)
        err = info.value
        shown = "".join(traceback.format_exception(err)) + repr(vars(err)) + str(err)
        assert "***" in str(err), str(err)
        assert_hidden(shown, secrets)
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert "receive_response_headers.complete" in logged
    assert_hidden(logged, (token,))
