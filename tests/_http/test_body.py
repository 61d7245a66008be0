"""One response body off the wire: the size cap, the deadline, one inflation layer in steps."""

from __future__ import annotations

import gzip
import time
import zlib

import httpx
import pytest

from askkit._http.body import (
    ACCEPT_ENCODING,
    Body,
    DeadlinePassed,
    Progress,
    Received,
)
from askkit._http.core import Bearer, Call, Core
from askkit._http.settings import ClientSettings
from askkit.errors import ProtocolError

CALL = Call("POST", "/api/embed")


def core(max_body_bytes: int = 1000) -> Core:
    return Core(
        "http://127.0.0.1:9",
        field="url",
        example="http://127.0.0.1:9",
        bearer=Bearer(),
        settings=ClientSettings(max_body_bytes=max_body_bytes),
        name="the test service",
    )


def body(
    headers: dict[str, str] | None = None,
    *,
    status: int = 200,
    cap: int = 1000,
    deadline: float | None = None,
    progress: Progress | None = None,
) -> Body:
    response = httpx.Response(status, headers=headers or {})
    return Body(
        core(cap),
        CALL,
        response,
        progress or Progress(),
        time.monotonic() + 60 if deadline is None else deadline,
    )


def fed(reader: Body, data: bytes, step: int = 7) -> Received:
    for i in range(0, len(data), step):
        if not reader.feed(data[i : i + step]):
            break
    return reader.received()


def test_a_plain_body_is_taken_chunk_by_chunk() -> None:
    progress = Progress()
    received = fed(body({"content-length": "26"}, progress=progress), b"abcdefghijklmnopqrstuvwxyz")
    assert (received.status, bytes(received.body)) == (200, b"abcdefghijklmnopqrstuvwxyz")
    assert progress.describe() == "HTTP 200, 26 of 26 body bytes received"


def test_a_declared_length_over_the_cap_is_refused_before_reading() -> None:
    with pytest.raises(ProtocolError) as info:
        body({"content-length": "1001"})
    assert str(info.value) == (
        "POST /api/embed to http://127.0.0.1:9 (the test service): the response declares "
        "1,001 bytes (Content-Length), over the 1,000 bytes limit"
    )
    assert info.value.path == "/api/embed"


def test_a_body_growing_past_the_cap_is_cut_off_as_soon_as_it_does() -> None:
    reader = body()
    with pytest.raises(ProtocolError, match=r"passed the 1,000 bytes limit \(1,001 bytes decoded"):
        fed(reader, b"x" * 5000, step=1)
    assert len(reader.data) == 1000


def test_an_error_body_is_kept_to_64_kib_for_its_message() -> None:
    reader = body(status=500, cap=10**9)
    received = fed(reader, b"e" * 100_000, step=50_000)
    assert (received.status, len(received.body)) == (500, 64 * 1024)


@pytest.mark.parametrize(
    ("coding", "compress"),
    [
        ("gzip", gzip.compress),
        ("deflate", zlib.compress),  # zlib-wrapped, as the standard says
        ("deflate", lambda data: zlib.compress(data, wbits=-zlib.MAX_WBITS)),  # raw, as some send
        ("GZIP, identity", gzip.compress),
    ],
)
def test_one_compressed_layer_is_inflated(coding: str, compress: object) -> None:
    data = b"kimun " * 100
    received = fed(body({"content-encoding": coding}), compress(data))  # type: ignore[operator]
    assert bytes(received.body) == data


def test_a_gzip_bomb_stops_at_the_cap_a_step_at_a_time() -> None:
    bomb = gzip.compress(b"\0" * 50 * 2**20)
    reader = body({"content-encoding": "gzip"}, cap=3 * 2**20)
    with pytest.raises(ProtocolError, match=r"passed the 3,145,728 bytes \(3\.0 MiB\) limit"):
        fed(reader, bomb, step=len(bomb))  # one read of the whole bomb
    assert len(reader.data) <= 3 * 2**20


@pytest.mark.parametrize("coding", ["gzip, gzip", "br", "deflate, gzip", "zstd"])
def test_an_encoding_askkit_does_not_bound_is_refused(coding: str) -> None:
    with pytest.raises(ProtocolError) as info:
        body({"content-encoding": coding})
    assert f"the response is encoded {coding!r}; askkit takes one gzip or deflate" in str(
        info.value
    )
    assert f"Accept-Encoding: {ACCEPT_ENCODING}" in str(info.value)


def test_a_corrupt_compressed_body_is_a_protocol_error() -> None:
    with pytest.raises(ProtocolError, match="the gzip body does not inflate"):
        fed(body({"content-encoding": "gzip"}), b"\x1f\x8b not gzip at all")


def test_the_deadline_stops_a_dripping_body() -> None:
    progress = Progress()
    reader = body({"content-length": "100"}, deadline=time.monotonic() + 0.05, progress=progress)
    reader.feed(b"12345")
    time.sleep(0.06)
    with pytest.raises(DeadlinePassed) as info:
        reader.feed(b"6")
    assert info.value.progress is progress
    assert str(info.value) == "HTTP 200, 5 of 100 body bytes received"


def test_progress_says_how_far_a_request_got() -> None:
    progress = Progress()
    assert progress.describe() == "not connected"
    progress.trace("connection.connect_tcp.complete")
    assert progress.describe() == "connected, request not sent"
    progress.trace("http11.receive_response_headers.started")
    assert progress.describe() == "request sent, no response headers"
    progress.status = 502
    assert progress.describe() == "HTTP 502, 0 body bytes received"
