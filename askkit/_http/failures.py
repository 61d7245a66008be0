"""How every HTTP failure maps to askkit's errors: one table per kind of failure, as data.

As httpx's ``_exceptions.py`` maps transport errors, each table below maps a
failure to the askkit error raised for it and what its message says:

- :data:`TRANSPORT`: an exception raised while a request was under way (the
  first row whose class matches): the server unreachable, too slow or gone
  mid-response is :class:`~askkit.errors.ServerUnavailable`, which a read may
  retry; httpx refusing the response is a :class:`~askkit.errors.ProtocolError`;
- :data:`STATUS`: an error status (the first row whose statuses hold it):
  401 and 403 are :class:`~askkit.errors.AuthError`, any other a
  :class:`~askkit.errors.ServerStatusError`;
- :data:`UNREADABLE`: a 2xx body a reader refused
  (:class:`~askkit._http.reading.Unreadable`), always a ProtocolError.

The core (:class:`~askkit._http.core.Core`) fills the templates in: ``{noun}``
and ``{reply}`` are its words for the far end and for a whole reply
(``server``/``response`` for kimun, ``service``/``complete answer`` for an
embedding or rerank service), ``{timeout}`` its timeout, ``{progress}`` how far
a request got, ``{exc}`` the exception's text (its class name when it has
none) and ``{name}`` its class name.

Examples
--------
>>> classify(httpx.ConnectError("refused"))
(<class 'askkit.errors.ServerUnavailable'>, 'cannot connect ({exc}); is the {noun} running?')
>>> status_row(403)[0].__name__, status_row(500)[0].__name__
('AuthError', 'ServerStatusError')
"""

from __future__ import annotations

from collections.abc import Container, Mapping

import httpx

from askkit._http.body import DeadlinePassed
from askkit.errors import (
    AuthError,
    ProtocolError,
    ServerError,
    ServerStatusError,
    ServerUnavailable,
)

__all__ = ["HANDLED", "STATUS", "TRANSPORT", "UNREADABLE", "classify", "status_row"]

#: Every exception :data:`TRANSPORT` maps: what a client catches around one request.
HANDLED: tuple[type[Exception], ...] = (
    httpx.HTTPError,
    httpx.InvalidURL,
    httpx.StreamError,
    DeadlinePassed,
)

_Kinds = type[Exception] | tuple[type[Exception], ...]

#: A failure while a request was under way: the first row whose class matches it.
TRANSPORT: tuple[tuple[_Kinds, type[ServerError], str], ...] = (
    (DeadlinePassed, ServerUnavailable, "no {reply} within the {timeout} ({progress})"),
    (httpx.TimeoutException, ServerUnavailable, "no {reply} within the {timeout} ({name})"),
    (httpx.ConnectError, ServerUnavailable, "cannot connect ({exc}); is the {noun} running?"),
    (
        (httpx.RemoteProtocolError, httpx.ReadError),
        ServerUnavailable,
        "the connection dropped mid-response ({exc})",
    ),
    (httpx.TransportError, ServerUnavailable, "{name}: {exc}"),
    # httpx refused the response (a corrupt gzip body, a bad redirect...)
    ((httpx.HTTPError, httpx.InvalidURL, httpx.StreamError), ProtocolError, "{exc} ({name})"),
)

#: An error status: the first row whose statuses hold it. ``{subject}`` names the
#: request, ``{said}`` is ``: `` and the peer's own message (or nothing), ``{hint}``
#: what to do: for an AuthError about the credential, else ``; `` and the peer's hint
#: for that status (a redirect's target, kimun's 503), or nothing.
STATUS: tuple[tuple[Container[int], type[ServerStatusError], str], ...] = (
    (frozenset({401, 403}), AuthError, "{subject} was refused (HTTP {status}{said}): {hint}"),
    (range(1000), ServerStatusError, "{subject} failed with HTTP {status}{said}{hint}"),
)

#: A 2xx body a reader refused, by :attr:`~askkit._http.reading.Unreadable.kind`: what the
#: peer sent, after ``{subject}`` and before an excerpt of the body.
UNREADABLE: Mapping[str, str] = {
    "not_json": "sent a body that is not JSON askkit can read ({why})",
    "refused": "sent {why}, which kimun's JSON parser (serde_json) refuses too",
    "bulky": "sent {why} besides its arrays of numbers (an embedding answer holds a few hundred)",
}


def classify(exc: BaseException) -> tuple[type[ServerError], str]:
    """The error class and message template :data:`TRANSPORT` gives ``exc``."""
    for kinds, error, template in TRANSPORT:
        if isinstance(exc, kinds):
            return error, template
    raise TypeError(f"no row of TRANSPORT maps {type(exc).__name__}")  # not in HANDLED


def status_row(status: int) -> tuple[type[ServerStatusError], str]:
    """The error class and message template :data:`STATUS` gives ``status``."""
    return next((error, template) for statuses, error, template in STATUS if status in statuses)
