"""The faults of :class:`askkit.testing.KimunTestServer`: what can break, and how it is sent.

:data:`FaultKind` and :data:`Route` name what :meth:`KimunTestServer.fail
<askkit.testing.KimunTestServer.fail>` takes; :func:`make_fault` checks its
arguments and builds a :class:`Fault`. A server's ordinary failures (an error
status, a cut-off or wrong body) are a :class:`Reply` the fault carries; the
server waits out ``slow`` itself and keeps the job faults' outcomes.
:func:`send_faulty` sends a reply as the other faults break it: half a body
then a closed connection (``drop``), JSON no kimun sends (nested 100,000
deep, 400-digit numbers, bytes that are not UTF-8, lone surrogates), or a
hostile stream (a response dripped one byte at a time, a huge or endless
body, gzip bombs). The hostile bodies are generated as they are sent, so a
bomb of a GiB costs the server about one MiB.
"""

from __future__ import annotations

import contextlib
import functools
import json
import struct
import threading
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any, Literal, get_args

__all__ = [
    "JOB_FAULTS",
    "REPLY_FAULTS",
    "Fault",
    "FaultKind",
    "Reply",
    "Route",
    "error",
    "make_fault",
    "send",
    "send_faulty",
]

#: What :meth:`KimunTestServer.fail` can break.
#:
#: - ``status``: answer with ``status`` (default 500) and ``{"error": message}``;
#: - ``unauthorized``: the same with 401;
#: - ``invalid_json``: a 200 whose body is cut-off JSON;
#: - ``body``: answer with ``status`` (default 200) and ``body``: bytes as they
#:   are, anything else as JSON (to send a wrong shape);
#: - ``slow``: wait ``delay`` seconds before answering normally;
#: - ``drop``: send the headers (with the full ``Content-Length``) and half the
#:   body, then close the connection;
#: - ``job_fails``: answer jobs end ``failed`` with ``message``;
#: - ``job_never_completes``: answer jobs stay ``processing``.
#:
#: A hostile server's, each acting on the response the route would send:
#:
#: - ``drip``: send the headers, then the body one byte every ``delay``
#:   seconds (default 0.5);
#: - ``drip_headers``: the same from the status line on;
#: - ``huge_body``: declare a ``Content-Length`` of ``size`` bytes (default
#:   400 MB) and send that many spaces;
#: - ``gzip_bomb``: a gzip body that inflates to ``size`` bytes of spaces
#:   (default 1 GiB, about 1 MB on the wire);
#: - ``gzip_stack``: the same bomb gzipped once more, ``Content-Encoding: gzip, gzip``
#:   (a few KB on the wire);
#: - ``endless``: a chunked body of spaces that never ends;
#: - ``deep_json``: arrays nested ``size`` deep (default 100,000);
#: - ``huge_number``: every number of the response as a ``size``-digit
#:   integer (default 400; one is added when it has none);
#: - ``bad_utf8``: the first string of the response holds ``caf\xe9``, not UTF-8;
#: - ``lone_surrogate``: the first string of the response holds ``"\ud800"``.
FaultKind = Literal[
    "status",
    "unauthorized",
    "invalid_json",
    "body",
    "slow",
    "drop",
    "job_fails",
    "job_never_completes",
    "drip",
    "drip_headers",
    "huge_body",
    "gzip_bomb",
    "gzip_stack",
    "endless",
    "deep_json",
    "huge_number",
    "bad_utf8",
    "lone_surrogate",
]
#: The routes a fault can target: ``GET /health``, ``POST /api/embeddings``,
#: ``POST /api/answer``, ``GET /api/job/{id}``.
Route = Literal["health", "embeddings", "answer", "job"]

_FAULT_KINDS = frozenset(get_args(FaultKind))
_ROUTES = frozenset(get_args(Route))
#: The faults that act on the jobs ``POST /api/answer`` creates.
JOB_FAULTS = frozenset({"job_fails", "job_never_completes"})
#: The faults that answer with their own :attr:`Fault.reply` instead of the route's.
REPLY_FAULTS = frozenset({"status", "unauthorized", "invalid_json", "body"})
_STREAM_FAULTS = frozenset(
    {"drip", "drip_headers", "huge_body", "gzip_bomb", "gzip_stack", "endless"}
)
_PAYLOAD_FAULTS = frozenset({"deep_json", "huge_number", "bad_utf8", "lone_surrogate"})
_DEFAULT_DELAYS = {"drip": 0.5, "drip_headers": 0.5}
_DEFAULT_SIZES = {
    "huge_body": 400_000_000,
    "gzip_bomb": 2**30,
    "gzip_stack": 2**30,
    "deep_json": 100_000,
    "huge_number": 400,
}
_MARK = "@@askkit-hostile@@"  # where a payload fault puts its bytes
_MIB = 2**20
_DEFAULT_MESSAGES = {
    "status": "internal error (a fault injected by KimunTestServer)",
    "unauthorized": "invalid bearer token",
    "job_fails": "the LLM provider returned an error (a fault injected by KimunTestServer)",
}
_BROKEN_JSON = b'{"chunks": [{"path": "journal/2026-04-08.md", "title": "2026-04-08\\u001fAfter'


@dataclass(slots=True)
class Reply:
    """A response: a status and a payload sent as JSON, or raw bytes."""

    status: int
    payload: Any
    raw: bytes | None = None  # sent as is instead of the JSON of payload

    def body(self) -> bytes:
        """The bytes to send."""
        if self.raw is not None:
            return self.raw
        return json.dumps(self.payload, ensure_ascii=False).encode()


def error(status: int, message: str) -> Reply:
    """kimun's error response: ``status`` and ``{"error": message}``."""
    return Reply(status, {"error": message})


@dataclass(slots=True)
class Fault:
    """A fault switched on: what breaks, where, how many more times (``None``: always)."""

    kind: str
    routes: frozenset[str] | None
    remaining: int | None
    reply: Reply  # what status/unauthorized/invalid_json/body send
    delay: float
    size: int | None = None

    def applies(self, route: str) -> bool:
        """Whether the fault acts on a request to ``route``."""
        if self.kind in JOB_FAULTS:
            return route == "answer"
        return self.routes is None or route in self.routes


def make_fault(
    kind: FaultKind,
    *,
    route: Route | Iterable[Route] | None,
    times: int | None,
    status: int | None,
    message: str | None,
    body: Any,
    delay: float | None,
    size: int | None,
) -> Fault:
    """The fault :meth:`KimunTestServer.fail` switches on; ``ValueError`` for bad arguments."""
    if kind not in _FAULT_KINDS:
        raise ValueError(f"unknown fault {kind!r}: expected one of {sorted(_FAULT_KINDS)}")
    if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 1):
        raise ValueError(f"a fault's size must be a whole number >= 1, got {size!r}")
    if delay is not None and not delay >= 0:
        raise ValueError(f"a fault's delay must be >= 0 seconds, got {delay!r}")
    routes = None
    if route is not None:
        routes = frozenset([route] if isinstance(route, str) else route)
        if not routes <= _ROUTES:
            raise ValueError(f"unknown route in {sorted(routes)}: expected {sorted(_ROUTES)}")
    if kind == "unauthorized":
        status = 401
    elif status is None:
        status = 200 if kind == "body" else 500
    if not 100 <= status <= 599 or (kind == "status" and status < 400):
        raise ValueError(f"a fault's status must be an HTTP error status, got {status}")
    if kind == "body":
        reply = Reply(status, body, raw=body if isinstance(body, bytes) else None)
    elif kind == "invalid_json":
        reply = Reply(200, None, raw=_BROKEN_JSON)
    else:  # an error reply; for job_fails, the job's error
        reply = error(status, message if message is not None else _DEFAULT_MESSAGES.get(kind, ""))
    return Fault(
        kind,
        routes,
        times,
        reply,
        _DEFAULT_DELAYS.get(kind, 1.0) if delay is None else delay,
        _DEFAULT_SIZES.get(kind) if size is None else size,
    )


def send(handler: BaseHTTPRequestHandler, reply: Reply, *, drop: bool = False) -> None:
    """Send ``reply``; with ``drop``, only half its body, then close the connection."""
    body = reply.body()
    try:
        handler.send_response(reply.status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body)))
        if drop:
            handler.send_header("Connection", "close")
        handler.end_headers()
        handler.wfile.write(body[: len(body) // 2] if drop else body)
        handler.wfile.flush()
    except OSError:  # the client went away (it timed out): nothing to answer
        handler.close_connection = True
        return
    if drop:
        handler.close_connection = True


def send_faulty(
    handler: BaseHTTPRequestHandler,
    reply: Reply,
    fault: Fault | None,
    stopping: threading.Event,
) -> None:
    """Send the route's ``reply`` as ``fault`` breaks it (as it is without one).

    ``stopping`` (the server is shutting down) ends a drip or a stream.
    """
    if fault is not None and fault.kind == "drop":
        send(handler, reply, drop=True)
        return
    if fault is not None and fault.kind in _PAYLOAD_FAULTS:
        reply = _hostile_payload(fault, reply)
    if fault is not None and fault.kind in _STREAM_FAULTS:
        handler.close_connection = True
        with contextlib.suppress(OSError):  # the client hung up, as it should
            _hostile_stream(handler, fault, reply, stopping)
        return
    send(handler, reply)


# -- a hostile server's responses


def _hostile_payload(fault: Fault, reply: Reply) -> Reply:
    """``reply`` with JSON no kimun sends: deep nesting, huge numbers, bad strings."""
    size = fault.size or 1
    if fault.kind == "deep_json":
        return Reply(reply.status, None, raw=b"[" * size + b"]" * size)
    marked, found = _marked(reply.payload, numbers=fault.kind == "huge_number")
    if not found:
        marked = {**marked, "hostile": _MARK} if isinstance(marked, dict) else [marked, _MARK]
    text = json.dumps(marked, ensure_ascii=False)
    if fault.kind == "huge_number":
        return Reply(reply.status, None, raw=text.replace(f'"{_MARK}"', "9" * size).encode())
    if fault.kind == "lone_surrogate":
        return Reply(reply.status, None, raw=text.replace(_MARK, "\\ud800", 1).encode())
    return Reply(reply.status, None, raw=text.encode().replace(_MARK.encode(), b"caf\xe9", 1))


def _marked(payload: Any, *, numbers: bool) -> tuple[Any, bool]:
    """A copy of ``payload`` with :data:`_MARK` for every number, or in its first string."""
    found = False

    def mark(value: Any) -> Any:
        nonlocal found
        if isinstance(value, dict):
            return {k: mark(v) for k, v in value.items()}
        if isinstance(value, list):
            return [mark(v) for v in value]
        if numbers and isinstance(value, int | float) and not isinstance(value, bool):
            found = True
            return _MARK
        if not numbers and isinstance(value, str) and not found:
            found = True
            return _MARK + value
        return value

    return mark(payload), found


def _hostile_stream(
    handler: BaseHTTPRequestHandler, fault: Fault, reply: Reply, stopping: threading.Event
) -> None:
    """Send ``reply`` as ``fault`` says, until done, the client hangs up or the server stops."""
    write = handler.wfile.write
    body = reply.body()
    headers = [("Content-Type", "application/json"), ("Connection", "close")]
    if fault.kind == "drip_headers":
        phrase = handler.responses.get(reply.status, ("",))[0]
        head = f"HTTP/1.1 {reply.status} {phrase}\r\n"
        for name, value in [*headers, ("Content-Length", str(len(body)))]:
            head += f"{name}: {value}\r\n"
        _drip(write, head.encode("latin-1") + b"\r\n" + body, fault.delay, stopping)
        return
    size = fault.size or _MIB
    pieces: Iterable[bytes]
    if fault.kind == "drip":
        headers.append(("Content-Length", str(len(body))))
        pieces = ()
    elif fault.kind == "huge_body":
        headers.append(("Content-Length", str(size)))
        pieces = _spaces(size)
    elif fault.kind == "gzip_bomb":
        length, pieces = _gzip_bomb(size)
        headers += [("Content-Encoding", "gzip"), ("Content-Length", str(length))]
    elif fault.kind == "gzip_stack":
        stacked = _gzip_stack(size)
        headers += [("Content-Encoding", "gzip, gzip"), ("Content-Length", str(len(stacked)))]
        pieces = (stacked,)
    else:  # endless
        headers.append(("Transfer-Encoding", "chunked"))
        block = b" " * 65536
        pieces = iter(lambda: b"%x\r\n%b\r\n" % (len(block), block), None)
    handler.send_response(reply.status)
    for name, value in headers:
        handler.send_header(name, value)
    handler.end_headers()
    if fault.kind == "drip":
        _drip(write, body, fault.delay, stopping)
        return
    for piece in pieces:
        if stopping.is_set():
            return
        write(piece)


def _drip(
    write: Callable[[bytes], Any], data: bytes, delay: float, stopping: threading.Event
) -> None:
    for i in range(len(data)):
        write(data[i : i + 1])
        if stopping.wait(delay):
            return


def _spaces(size: int) -> Iterator[bytes]:
    block = b" " * 65536
    for start in range(0, size, len(block)):
        yield block[: size - start]


@functools.cache
def _deflate_pieces() -> tuple[bytes, bytes, bytes]:
    """gzip of 1 MiB of spaces: the first piece (with the header), every later one, the end.

    Each piece ends with a full flush, which resets the compressor, so every
    later MiB compresses to the same bytes and a bomb of any size is a repeat.
    """
    block = b" " * _MIB
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    first = compressor.compress(block) + compressor.flush(zlib.Z_FULL_FLUSH)
    again = compressor.compress(block) + compressor.flush(zlib.Z_FULL_FLUSH)
    return first, again, compressor.flush()[:-8]  # the last block, without the trailer


def _gzip_bomb(size: int) -> tuple[int, Iterator[bytes]]:
    """The length and the pieces of a gzip body of ``size`` spaces (whole MiB, rounded up)."""
    first, again, end = _deflate_pieces()
    blocks = -(-size // _MIB)
    length = len(first) + len(again) * (blocks - 1) + len(end) + 8

    def pieces() -> Iterator[bytes]:
        block, crc = b" " * _MIB, 0
        for i in range(blocks):
            yield first if i == 0 else again
            crc = zlib.crc32(block, crc)  # as it goes: a client that stops early costs nothing
        yield end + struct.pack("<II", crc, (blocks * _MIB) & 0xFFFFFFFF)

    return length, pieces()


@functools.lru_cache(maxsize=4)
def _gzip_stack(size: int) -> bytes:
    """A gzip bomb of ``size`` spaces, gzipped once more (a few KB)."""
    return zlib.compress(b"".join(_gzip_bomb(size)[1]), 9, wbits=16 + zlib.MAX_WBITS)
