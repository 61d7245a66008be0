"""The I/O-free core of askkit's HTTP clients: the URL and credential rules, each request,
and the error for each way a call fails (the clients over real HTTP are in
tests/retrieve/test_client*.py and tests/dense/)."""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Mapping
from typing import Any, ClassVar

import httpx
import pytest

from askkit._http.body import DeadlinePassed, Progress, Received
from askkit._http.core import Bearer, Call, Core
from askkit._http.reading import Unreadable, read_json, read_strict_json
from askkit._http.settings import ClientSettings
from askkit.errors import (
    AuthError,
    ProtocolError,
    ServerStatusError,
    ServerUnavailable,
    UsageError,
)

URL = "http://127.0.0.1:9"
KEY = "sk-core-s3cret-key"
POST = Call("POST", "/api/embed", {"model": "m", "input": ["é", "\ud800"]})
REQUEST = httpx.Request("GET", URL)


def service(url: object = URL, *, bearer: Bearer | None = None, **settings: Any) -> Core:
    return Core(
        url,
        field="url",
        example="http://127.0.0.1:11434",
        bearer=bearer or Bearer(),
        settings=ClientSettings(**settings),
        name="the test service",
    )


class ServerCore(Core):
    """A core with a server's words and hints, as the kimun client's is."""

    noun: ClassVar[str] = "server"
    reply: ClassVar[str] = "response"
    status_hints: ClassVar[Mapping[int, str]] = {503: "nothing is configured"}
    limit_hint: ClassVar[str] = "; raise the limit"
    not_json_hint: ClassVar[str] = "; is {url} the right server?"
    shape_message: ClassVar[str] = (
        "{subject} sent an unexpected payload ({why}); received {excerpt} from {url}"
    )


def server(bearer: Bearer | None = None, **settings: Any) -> ServerCore:
    return ServerCore(
        f"http://kimun:pw-s3cret@{URL[7:]}",
        field="base_url",
        example=URL,
        bearer=bearer or Bearer(),
        settings=ClientSettings(**settings),
    )


def received(status: int, body: bytes | str | object, **headers: str) -> Received:
    data = (
        body
        if isinstance(body, bytes)
        else (body.encode() if isinstance(body, str) else json.dumps(body).encode())
    )
    return Received(status, httpx.Headers(headers), data)


# -- the URL rule and the user info rule


@pytest.mark.parametrize(
    ("url", "message"),
    [
        (
            "127.0.0.1:11434",
            "url must start with http:// or https:// (for example "
            "http://127.0.0.1:11434), got '127.0.0.1:11434'",
        ),
        ("ftp://user:pw-s3cret@host", "url must start with http:// or https://"),
        (
            None,
            "url must start with http:// or https:// (for example http://127.0.0.1:11434), "
            "got 'NoneType'",
        ),
        ("http://", "url must start with http:// or https://"),
        (
            "http://user:pw-s3cret@127.0.0.1:port",
            "url is not a valid URL (Invalid port: 'port'): 'http://user:***@127.0.0.1:port'",
        ),
        ("http://user:pw-s3cret@/x", "url is not a valid URL (no host)"),
    ],
)
def test_a_bad_url_is_a_usage_error_that_shows_no_password(url: object, message: str) -> None:
    with pytest.raises(UsageError) as info:
        service(url)
    assert str(info.value).startswith(message)
    assert "pw-s3cret" not in str(info.value)


def test_the_user_info_leaves_the_url_and_becomes_basic_auth() -> None:
    core = server()
    assert (core.origin, core.base_url) == (URL, f"http://kimun:***@{URL[7:]}")
    assert isinstance(core.auth, httpx.BasicAuth)
    request = next(core.auth.auth_flow(httpx.Request("GET", URL)))
    assert (
        request.headers["Authorization"] == "Basic " + base64.b64encode(b"kimun:pw-s3cret").decode()
    )
    assert "pw-s3cret" in core.secrets
    assert service(URL + "//").base_url == URL  # trailing slashes dropped
    assert service().auth is None


# -- the bearer credential


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("key\nwith newline", "the API key from ENV_KEY must be printable ASCII"),
        ("clé", "the API key from ENV_KEY must be printable ASCII"),
        (42, "the API key from ENV_KEY must be a string, got int"),
    ],
)
def test_a_bearer_value_must_fit_in_a_header(value: Any, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        service(bearer=Bearer(value, "API key", "ENV_KEY"))


# -- requests


def test_a_request_carries_the_bearer_and_an_ascii_json_body() -> None:
    core = service(f"http://u:pw@{URL[7:]}", bearer=Bearer(KEY, "API key"))
    with httpx.Client() as http:
        kwargs = core.request(POST, http)
    assert kwargs["method"] == "POST"
    assert kwargs["url"] == URL + "/api/embed"
    assert kwargs["headers"] == {
        "Accept": "application/json",
        "Accept-Encoding": "gzip, deflate",
        "Content-Type": "application/json",
        "Authorization": f"Bearer {KEY}",
    }
    assert kwargs["content"] == b'{"model":"m","input":["\\u00e9","\\ud800"]}'
    assert json.loads(kwargs["content"]) == POST.body
    assert kwargs["auth"] is httpx.USE_CLIENT_DEFAULT  # the bearer wins over the user info


def test_without_a_bearer_the_user_info_goes_as_basic_auth() -> None:
    core = server(Bearer("tok3n"))
    health = Call("GET", "/health", bearer=False)
    with httpx.Client() as http, httpx.Client(auth=("own", "auth")) as own:
        plain = core.request(health, http)
        with_own_auth = core.request(health, own)
    assert plain["auth"] is core.auth
    assert plain["content"] is None
    assert "Authorization" not in plain["headers"]
    assert "Content-Type" not in plain["headers"]
    assert with_own_auth["auth"] is httpx.USE_CLIENT_DEFAULT  # the caller's client decides


# -- responses


def test_read_gives_the_2xx_body_as_its_reader_reads_it() -> None:
    assert service().read(POST, received(200, {"a": [1]}), read_json) == {"a": [1]}
    assert service().read(POST, received(204, b"[]"), bytes) == b"[]"


@pytest.mark.parametrize(
    ("core", "head", "tail"),
    [
        (service(), f"POST /api/embed to {URL} (the test service)", ""),
        (server(), "POST /api/embed", f"; is http://kimun:***@{URL[7:]} the right server?"),
    ],
    ids=["named", "server"],
)
def test_an_unreadable_body_is_a_protocol_error_with_an_excerpt(
    core: Core, head: str, tail: str
) -> None:
    with pytest.raises(ProtocolError) as not_json:
        core.read(POST, received(200, b'{"chunks": [pw-s3cret'), read_json)
    assert str(not_json.value).startswith(
        f"{head} sent a body that is not JSON askkit can read (the body is not valid JSON"
    )
    assert str(not_json.value).endswith(tail)
    assert not_json.value.excerpt.startswith('\'{"chunks": [')
    with pytest.raises(ProtocolError) as refused:
        core.read(POST, received(200, b'{"n": NaN}'), read_strict_json)
    assert str(refused.value) == (
        f"{head} sent NaN at n, which kimun's JSON parser (serde_json) refuses too: "
        f"'{{\"n\": NaN}}'{tail}"
    )
    with pytest.raises(ProtocolError) as empty:
        core.read(POST, received(200, b" \n"), read_json)
    assert str(empty.value) == f"{head} sent an empty body (HTTP 200){tail}"
    if not core.name:  # the server core's URL holds the password: scrubbed from the excerpt
        assert "pw-s3cret" not in str(not_json.value) + not_json.value.excerpt


def test_a_reader_may_quote_its_own_text() -> None:
    def reader(body: bytes | bytearray) -> Any:
        raise Unreadable("bulky", "more than 3 bytes", b"transcoded")

    with pytest.raises(ProtocolError) as info:
        service().read(POST, received(200, b"\xff\xfeoriginal"), reader)
    assert info.value.excerpt == "'transcoded'"
    assert "sent more than 3 bytes besides its arrays of numbers" in str(info.value)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"error": "model not found"}, "model not found"),  # kimun, Ollama
        ({"error": {"message": "rate limited", "type": "x"}}, "rate limited"),  # OpenAI
        ({"message": "bad input"}, "bad input"),
        ({"detail": "Not Found"}, "Not Found"),
        ({"errors": ["x"]}, '\'{"errors": ["x"]}\''),
        (b"<h1>502 Bad Gateway</h1>\n", "'<h1>502 Bad Gateway</h1>'"),
        (b"", ""),
        ({"error": "line\nbreak"}, "line\\nbreak"),
    ],
)
def test_the_peers_own_message_is_quoted(body: object, message: str) -> None:
    assert service().service_message(received(500, body).body) == message


def test_an_error_status_names_the_request_the_status_and_the_message() -> None:
    with pytest.raises(ServerStatusError) as named:
        service().read(POST, received(500, {"error": "model not found"}), read_json)
    assert str(named.value) == (
        f"POST /api/embed to {URL} (the test service) failed with HTTP 500: model not found"
    )
    assert (named.value.status, named.value.path) == (500, "/api/embed")
    assert named.value.server_message == "model not found"
    with pytest.raises(ServerStatusError) as hinted:
        server().read(POST, received(503, {"error": "no LLM"}), read_json)
    assert (
        str(hinted.value) == "POST /api/embed failed with HTTP 503: no LLM; nothing is configured"
    )
    with pytest.raises(ServerStatusError) as moved:
        server().read(POST, received(301, b"", location="https://user:pw@elsewhere/"), read_json)
    assert str(moved.value) == (
        "POST /api/embed failed with HTTP 301; the server redirects to "
        "https://user:***@elsewhere/: use that URL"
    )


@pytest.mark.parametrize(
    ("bearer", "hint", "sent"),
    [
        (
            Bearer("tok3n", "token", "the token= argument", "pass token=..."),
            "the server rejected the token from the token= argument; check its value",
            True,
        ),
        (
            Bearer(None, "token", "", "pass token=..."),
            "the server requires a token and none was sent; pass token=...",
            False,
        ),
        (
            Bearer(None, "API key", "", "set ENV_KEY"),
            "the server requires an API key and none was sent; set ENV_KEY",
            False,
        ),
        (
            Bearer(None, "API key"),
            "the server wants credentials, and this client takes no API key: check the URL",
            False,
        ),
    ],
)
def test_a_401_says_what_to_do_about_the_credential(bearer: Bearer, hint: str, sent: bool) -> None:
    with pytest.raises(AuthError) as info:
        server(bearer).read(POST, received(401, {"error": "invalid bearer token"}), read_json)
    assert str(info.value) == (
        f"POST /api/embed was refused (HTTP 401: invalid bearer token): {hint}"
    )
    assert info.value.token_sent is sent


def test_a_secret_echoed_by_the_peer_is_scrubbed() -> None:
    core = service(f"http://u:pw-s3cret@{URL[7:]}", bearer=Bearer(KEY, "API key"))
    echo = {"error": f"bad key {KEY} for u:pw-s3cret"}
    with pytest.raises(AuthError) as info:
        core.read(POST, received(401, echo), read_json)
    shown = str(info.value) + repr(vars(info.value))
    assert KEY not in shown
    assert "pw-s3cret" not in shown
    assert info.value.server_message == "bad key *** for u:***"


def test_shape_errors_quote_the_answer_and_say_where_it_came_from() -> None:
    obj = {"embeddings": "no"}
    assert str(service().shape_error(POST, "embeddings is not a list", obj)) == (
        f"POST /api/embed to {URL} (the test service): embeddings is not a list; "
        'received \'{"embeddings": "no"}\''
    )
    assert str(server().shape_error(POST, ValueError("bad"), obj)) == (
        "POST /api/embed sent an unexpected payload (bad); "
        f'received \'{{"embeddings": "no"}}\' from http://kimun:***@{URL[7:]}'
    )
    deep: list[Any] = []
    for _ in range(100_000):
        deep = [deep]
    assert "a list too deeply nested to print" in str(service().shape_error(POST, "x", deep))


# -- failures


@pytest.mark.parametrize(
    ("exc", "named", "kimun"),
    [
        (
            httpx.ConnectError("refused", request=REQUEST),
            "cannot connect (refused); is the service running?",
            "cannot connect (refused); is the server running?",
        ),
        (
            httpx.ReadTimeout("", request=REQUEST),
            "no complete answer within the 2 s timeout (ReadTimeout)",
            "no response within the 2 s timeout (ReadTimeout)",
        ),
        (
            DeadlinePassed(Progress(sent=True)),
            "no complete answer within the 2 s timeout (request sent, no response headers)",
            "no response within the 2 s timeout (request sent, no response headers)",
        ),
        (
            httpx.RemoteProtocolError("peer closed", request=REQUEST),
            "the connection dropped mid-response (peer closed)",
            "the connection dropped mid-response (peer closed)",
        ),
        (httpx.WriteError("", request=REQUEST), "WriteError: WriteError", "WriteError: WriteError"),
    ],
)
def test_a_transport_failure_is_server_unavailable_in_the_clients_words(
    exc: Exception, named: str, kimun: str
) -> None:
    error = service(timeout=2).failure(POST, exc)
    assert isinstance(error, ServerUnavailable)
    assert str(error) == f"POST /api/embed to {URL} (the test service): {named}"
    assert (error.path, error.attempts) == ("/api/embed", 1)
    again = server(timeout=2).failure(POST, exc, attempts=3)
    assert str(again) == f"POST /api/embed to http://kimun:***@{URL[7:]}: {kimun} after 3 attempts"
    assert again.attempts == 3


def test_httpx_refusing_a_response_is_a_protocol_error() -> None:
    error = service().failure(POST, httpx.DecodingError("bad gzip", request=REQUEST))
    assert isinstance(error, ProtocolError)
    assert str(error) == f"POST /api/embed to {URL} (the test service): bad gzip (DecodingError)"


def test_only_a_transport_failure_of_a_repeatable_call_is_retried() -> None:
    core = server(retries=2)
    dropped = httpx.ReadError("reset", request=REQUEST)
    search = Call("POST", "/api/embeddings", retry=True)
    assert core.may_retry(search, dropped, 1)
    assert core.may_retry(search, dropped, 2)
    assert not core.may_retry(search, dropped, 3)  # 2 retries: 3 attempts in all
    assert not core.may_retry(Call("POST", "/api/answer"), dropped, 1)  # starts a job
    assert not core.may_retry(search, httpx.DecodingError("x", request=REQUEST), 1)


def test_an_oversized_body_names_the_limit_and_what_came() -> None:
    assert str(server(max_body_bytes=2**20).oversize(POST, 400_000_000, declared=True)) == (
        f"POST /api/embed to http://kimun:***@{URL[7:]}: the response declares 400,000,000 bytes "
        "(381.5 MiB) (Content-Length), over the 1,048,576 bytes (1.0 MiB) limit; raise the limit"
    )
    assert str(service(max_body_bytes=1000).oversize(POST, 1001, declared=False)) == (
        f"POST /api/embed to {URL} (the test service): the response body passed the "
        "1,000 bytes limit (1,001 bytes decoded so far)"
    )


def test_httpx_log_lines_show_no_secret_while_the_core_lives(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="httpx")
    core = service(bearer=Bearer("log-key-s3cret", "API key"))
    logging.getLogger("httpx").info("header echo: log-key-s3cret")
    assert caplog.records[-1].getMessage() == "header echo: ***"
    del core
