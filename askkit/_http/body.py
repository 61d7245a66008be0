"""Reading one response body off the wire: size cap, deadline and step-wise inflation.

A client hands each chunk httpx streams to :class:`Body`, which refuses an
unknown content encoding or an oversized ``Content-Length`` before a byte is
read, inflates gzip or deflate a bounded step at a time, stops at
``max_body_bytes`` or at the deadline (:class:`DeadlinePassed`), and gives
the whole body back as a :class:`Received`. :class:`Progress` records how far
a request got, for the message when its deadline passes. The messages
themselves come from the core (:class:`~askkit._http.core.Core`).

Examples
--------
>>> progress = Progress()
>>> progress.describe()
'not connected'
>>> progress.trace("http11.receive_response_headers.started")
>>> progress.describe()
'request sent, no response headers'
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx

if TYPE_CHECKING:
    from askkit._http.core import Call, Core

__all__ = [
    "ACCEPT_ENCODING",
    "Body",
    "DeadlinePassed",
    "Progress",
    "Received",
]

#: What the clients ask for, and the only content codings they take (one layer).
ACCEPT_ENCODING = "gzip, deflate"
_DECODED = frozenset({"gzip", "deflate"})
#: A compressed body is inflated at most this much at a time (zlib's max_length):
#: one 64 KiB read of a gzip bomb would otherwise inflate to 66 MB at once.
_INFLATE_STEP = 2**20
#: An error response's body is read this far, for the message it carries.
_ERROR_BODY = 64 * 1024


@dataclass(slots=True)
class Progress:
    """How far one request got, for the error when its deadline passes.

    The clients feed it httpx's ``trace`` events; :class:`Body` counts the bytes.
    """

    connected: bool = False
    sent: bool = False
    status: int | None = None
    received: int = 0
    declared: int | None = None  # Content-Length of a body sent without a content encoding

    def trace(self, event: str) -> None:
        """Note one of httpcore's trace events (``connection.connect_tcp.complete``...)."""
        if event.endswith(("connect_tcp.complete", "send_request_headers.started")):
            self.connected = True
        elif event.endswith("receive_response_headers.started"):
            self.connected = self.sent = True

    def describe(self) -> str:
        """How far the request got, in a few words."""
        if self.status is not None:
            of = f" of {self.declared:,}" if self.declared is not None else ""
            return f"HTTP {self.status}, {self.received:,}{of} body bytes received"
        if self.sent:
            return "request sent, no response headers"
        return "connected, request not sent" if self.connected else "not connected"


class DeadlinePassed(Exception):
    """One request ran past its timeout (internal: the clients retry it or report it)."""

    def __init__(self, progress: Progress) -> None:
        super().__init__(progress.describe())
        self.progress = progress


@dataclass(frozen=True, slots=True)
class Received:
    """A whole response: its status, headers and (decoded) body."""

    status: int
    headers: httpx.Headers
    body: bytes | bytearray


class Body:
    """One response body, taken in chunk by chunk as it comes off the wire.

    It refuses a content encoding other than one gzip or deflate layer and a
    ``Content-Length`` over the cap before any byte is read; it inflates a
    compressed body a bounded step at a time (httpx's own decoding inflates a
    whole socket read at once), stops the request as soon as the decoded bytes
    pass the cap (``max_body_bytes``) or the deadline passes, and keeps what
    came. So a body never holds more than the cap plus one step. An error
    response's body is cut at 64 KiB instead: only its message is wanted.
    """

    def __init__(
        self,
        core: Core,
        call: Call,
        response: httpx.Response,
        progress: Progress,
        deadline: float,
    ) -> None:
        self.core = core
        self.call = call
        self.status = response.status_code
        self.headers = response.headers
        self.progress = progress
        self.deadline = deadline
        self.ok = 200 <= self.status < 300
        cap = core.settings.max_body_bytes
        self.limit = cap if self.ok else min(cap, _ERROR_BODY)
        self.data = bytearray()
        progress.status = self.status
        encoding = self.headers.get("content-encoding", "")
        codings = [c.strip().lower() for c in encoding.split(",")]
        codings = [c for c in codings if c not in {"", "identity"}]
        if len(codings) > 1 or not set(codings) <= _DECODED:
            raise core.transport_error(
                call,
                f"the response is encoded {encoding!r}; askkit takes one gzip or deflate "
                f"layer at most (it sends Accept-Encoding: {ACCEPT_ENCODING}), so that "
                "max_body_bytes bounds what a body inflates to",
            )
        length = self.headers.get("content-length", "")
        declared = int(length) if length.isdecimal() else None
        if not codings:
            progress.declared = declared
        if self.ok and declared is not None and declared > cap:
            raise core.oversize(call, declared, declared=True)
        self.coding = codings[0] if codings else None
        self._zlib = _inflater(self.coding)
        self._inflating = False  # deflate: zlib-wrapped, else raw (as httpx tries both)

    def feed(self, raw: bytes) -> bool:
        """Take the next chunk off the wire; False once an error body has all it needs."""
        if time.monotonic() >= self.deadline:
            raise DeadlinePassed(self.progress)
        if self._zlib is None:
            return self._take(raw)
        return all(self._take(piece) for piece in self._inflate(raw))

    def received(self) -> Received:
        """The whole body, once the last chunk was fed."""
        if self._zlib is not None:
            self._take(self._zlib.flush())  # the few bytes zlib may still hold
        return Received(self.status, self.headers, self.data)

    def _take(self, data: bytes) -> bool:
        size = len(self.data) + len(data)
        if size > self.limit:
            if not self.ok:
                self.data += data[: self.limit - len(self.data)]
                return False
            raise self.core.oversize(self.call, size, declared=False)
        self.data += data
        self.progress.received = size
        return True

    def _inflate(self, data: bytes) -> Iterator[bytes]:
        while data and self._zlib is not None and not self._zlib.eof:
            try:
                piece = self._zlib.decompress(data, _INFLATE_STEP)
            except zlib.error as exc:
                if self.coding == "deflate" and not self._inflating:
                    self._inflating = True
                    self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
                    continue
                raise self.core.transport_error(
                    self.call, f"the {self.coding} body does not inflate ({exc})"
                ) from None
            self._inflating = True
            stuck = not piece and len(self._zlib.unconsumed_tail) >= len(data)
            data = self._zlib.unconsumed_tail
            if piece:
                yield piece
            if stuck:
                return


def _inflater(coding: str | None) -> Any:
    """A zlib decompressor for ``gzip`` or ``deflate`` (zlib-wrapped first), else None."""
    if coding is None:
        return None
    return zlib.decompressobj(16 + zlib.MAX_WBITS if coding == "gzip" else zlib.MAX_WBITS)
