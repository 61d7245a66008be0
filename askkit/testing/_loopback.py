"""What the servers of :mod:`askkit.testing` share: real HTTP on 127.0.0.1, in a thread.

:class:`LoopbackServer` binds 127.0.0.1 on a free port (or the one given),
serves from a :class:`~http.server.ThreadingHTTPServer` in a daemon thread,
stops promptly (waking slow handlers and closing idle keep-alive
connections), works as a context manager, records every request it receives
as a :class:`RecordedRequest` and keeps the faults its ``fail`` switches on. A
server answers in its ``_dispatch``, which :class:`LoopbackHandler` calls for
every ``GET`` and ``POST`` (a server's handler may add methods); its
``_respond`` sends a reply as a fault of :mod:`askkit.testing._faults` breaks it, and
:func:`bearer_refusal` is the servers' one check of a bearer token.
:class:`~askkit.testing.KimunTestServer` and
:class:`~askkit.testing.embed_servers.EmbedTestServer` are built on it. It
lives beside :mod:`askkit.testing._faults` rather than in ``testing/``, because
``askkit.testing`` itself (its ``__init__``) imports it.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import socket
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, ClassVar, Generic, Protocol, Self, TypeVar, cast

from askkit.testing._faults import REPLY_FAULTS, Fault, Reply, error, send, send_faulty

__all__ = [
    "LoopbackHandler",
    "LoopbackServer",
    "LoopbackState",
    "RecordedRequest",
    "Switch",
    "bearer_refusal",
]


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request the server received."""

    method: str
    path: str
    headers: Mapping[str, str]  # lower-case names
    body: bytes

    def json(self) -> Any:
        """The body decoded as JSON."""
        return json.loads(self.body)

    @property
    def authorization(self) -> str | None:
        """The ``Authorization`` header, if any."""
        return self.headers.get("authorization")


class Switch(Protocol):
    """A fault switched on: the routes it acts on and its uses left (``None``: always)."""

    remaining: int | None

    def applies(self, route: str) -> bool: ...


FaultT = TypeVar("FaultT", bound=Switch)


@dataclass(slots=True)
class LoopbackState(Generic[FaultT]):
    """Everything the handler threads share, behind one lock."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    faults: list[FaultT] = field(default_factory=list)  # switched on, oldest first
    requests: list[RecordedRequest] = field(default_factory=list)
    connections: set[socket.socket] = field(default_factory=set)
    stopping: threading.Event = field(default_factory=threading.Event)


class LoopbackServer(Generic[FaultT]):
    """A real HTTP server on 127.0.0.1 that answers requests in :meth:`_dispatch`.

    A subclass sets ``_name`` (its thread's name and its repr) and
    ``_handler`` (a :class:`LoopbackHandler` with its ``server_version``);
    ``FaultT`` is what its ``fail`` switches on.
    """

    _name: ClassVar[str]
    _handler: ClassVar[type[LoopbackHandler]]

    def __init__(self, port: int) -> None:
        self._port = port
        self._state: LoopbackState[FaultT] = LoopbackState()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle

    def start(self) -> Self:
        """Bind 127.0.0.1 and serve in a background thread."""
        if self._httpd is not None:
            raise RuntimeError("the server is already running")
        self._state.stopping.clear()
        httpd = _HTTPServer(("127.0.0.1", self._port), self._handler)
        httpd.app = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.01},
            name=f"{self._name}:{httpd.server_address[1]}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, close open connections and free the port (idempotent)."""
        httpd, thread = self._httpd, self._thread
        if httpd is None:
            return
        self._state.stopping.set()  # wakes "slow" handlers
        httpd.shutdown()
        with self._state.lock:
            connections = list(self._state.connections)
        for conn in connections:  # idle keep-alive connections would hold their threads
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        httpd.server_close()
        if thread is not None:
            thread.join(timeout=5)
        self._httpd = self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def address(self) -> tuple[str, int]:
        """The bound ``(host, port)``."""
        if self._httpd is None:
            raise RuntimeError("the server is not running: use it in a with block or call start()")
        host, port = self._httpd.server_address[:2]
        return str(host), int(port)

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        host, port = self.address
        return f"http://{host}:{port}"

    def __repr__(self) -> str:
        where = self.url if self._httpd is not None else "stopped"
        return f"<{self._name} {where}>"

    # -- faults and recorded requests

    def _switch_on(self, fault: FaultT) -> None:
        """Add ``fault`` to those switched on (a handler thread takes it from there)."""
        with self._state.lock:
            self._state.faults.append(fault)

    def clear_faults(self) -> None:
        """Switch every fault off."""
        with self._state.lock:
            self._state.faults.clear()

    @property
    def requests(self) -> list[RecordedRequest]:
        """The requests received so far, oldest first (a copy)."""
        with self._state.lock:
            return list(self._state.requests)

    def clear_requests(self) -> None:
        """Forget the recorded requests."""
        with self._state.lock:
            self._state.requests.clear()

    # -- serving (called from the handler threads)

    def _record(self, handler: BaseHTTPRequestHandler) -> RecordedRequest:
        """Read a request's body and record the request (header names lower-cased)."""
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length > 0 else b""
        headers = {k.lower(): v for k, v in handler.headers.items()}
        request = RecordedRequest(handler.command, handler.path, headers, body)
        with self._state.lock:
            self._state.requests.append(request)
        return request

    def _take(self, route: str) -> FaultT | None:
        """The oldest fault switched on for ``route`` with uses left, counted down, or None."""
        with self._state.lock:
            for fault in self._state.faults:
                if not fault.applies(route) or fault.remaining == 0 or self._passes(fault):
                    continue
                if fault.remaining is not None:
                    fault.remaining -= 1
                return fault
        return None

    def _passes(self, fault: FaultT) -> bool:
        """Whether ``fault`` lets this request through untouched (under the lock): never here."""
        return False

    def _respond(
        self, handler: BaseHTTPRequestHandler, fault: Fault | None, reply: Callable[[], Reply]
    ) -> None:
        """Answer under ``fault``: its own reply, or the route's ``reply()`` as it breaks it.

        A ``slow`` fault waits first; a stop cuts the wait short and closes the connection.
        """
        if fault is not None and fault.kind in REPLY_FAULTS:
            send(handler, fault.reply)
            return
        if fault is not None and fault.kind == "slow" and self._state.stopping.wait(fault.delay):
            handler.close_connection = True
            return
        send_faulty(handler, reply(), fault, self._state.stopping)

    def _dispatch(self, handler: BaseHTTPRequestHandler) -> None:
        """Answer one request: a subclass's work."""
        raise NotImplementedError


def bearer_refusal(headers: Mapping[str, str], token: str, what: str) -> Reply | None:
    """The 401 for a request without ``Authorization: Bearer <token>``, or None.

    ``what`` names the token in the error: ``missing <what>`` or ``invalid <what>``.
    """
    given = headers.get("authorization")
    if given is None:
        return error(401, f"missing {what}")
    if not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
        return error(401, f"invalid {what}")
    return None


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    app: LoopbackServer[Any]

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], OSError):
            return  # a client that hung up is not the server's error
        super().handle_error(request, client_address)


class LoopbackHandler(BaseHTTPRequestHandler):
    """Hands ``GET`` and ``POST`` to the server's ``_dispatch``, keeping track of connections."""

    protocol_version = "HTTP/1.1"

    def _app(self) -> LoopbackServer[Any]:
        return cast(_HTTPServer, self.server).app

    def setup(self) -> None:
        super().setup()
        # Without this, Nagle's algorithm and delayed ACKs add 40 ms to every request.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        state = self._app()._state
        with state.lock:
            state.connections.add(self.connection)

    def finish(self) -> None:
        state = self._app()._state
        with state.lock:
            state.connections.discard(self.connection)
        with contextlib.suppress(OSError):
            super().finish()

    def do_GET(self) -> None:
        self._app()._dispatch(self)

    def do_POST(self) -> None:
        self._app()._dispatch(self)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the server records requests in its ``requests`` instead."""
