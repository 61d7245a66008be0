"""How an askkit HTTP client waits and reads: the timeout, the retries, the polling, the body cap.

These options travel together from the command line or a notebook to a
client and on to its core (:class:`~askkit._http.core.Core`), so they are one
frozen value (as httpx keeps ``Timeout`` and ``Limits``), checked once when it
is built. Users know it as ``askkit.retrieve.ClientSettings``: the kimun
server client uses every field; the embedding and rerank endpoints of
:mod:`askkit.dense` the timeout and the body cap.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Integral, Real

from askkit.errors import SchemaError

__all__ = ["ClientSettings"]


def _seconds(name: str, value: object, *, allow_zero: bool) -> float:
    """A finite number of seconds, > 0 (or >= 0 with ``allow_zero``), as a float."""
    if isinstance(value, Real) and not isinstance(value, bool):
        try:
            seconds = float(value)
        except OverflowError:  # an int too large for a float
            seconds = math.inf
        if math.isfinite(seconds) and (seconds >= 0 if allow_zero else seconds > 0):
            return seconds
    bound = ">= 0" if allow_zero else "more than 0"
    raise SchemaError(f"must be {bound} seconds (a finite number)", field=name, value=value)


def _count(name: str, value: object, *, least: int) -> int:
    """A whole number >= ``least`` (an ``int``-like, not a bool or a float), as an int."""
    if isinstance(value, Integral) and not isinstance(value, bool) and int(value) >= least:
        return int(value)
    raise SchemaError(f"must be at least {least} (a whole number)", field=name, value=value)


@dataclass(frozen=True, slots=True)
class ClientSettings:
    """How :class:`~askkit.retrieve.KimunClient` and its async twin wait, retry and read.

    The embedders' and rerankers' endpoints read ``timeout`` and
    ``max_body_bytes`` from it too. The defaults are kimun's own client's. Derive a variant with
    :func:`dataclasses.replace`, which checks the new values the same way.

    Parameters
    ----------
    timeout:
        Seconds one HTTP request may take as a whole (> 0): connecting,
        sending and reading the entire response, however slowly the server
        sends it. A retry starts a new period; an answer job's polls each get
        one, and the job as a whole is bounded by ``max_polls``.
    poll_interval:
        Seconds between two polls of an answer job (>= 0).
    max_polls:
        The most polls of one answer job before
        :class:`~askkit.errors.JobTimeout` (720 polls, about 12 minutes).
    max_poll_errors:
        The failed polls in a row that end an answer job (only errors that
        can heal are tolerated at all: the server unreachable, a 5xx).
    retries:
        Extra attempts after a transport failure, for ``GET /health`` and
        ``POST /api/embeddings`` only (starting an answer job is never retried).
    backoff:
        Seconds before the first retry; each further retry waits twice as long.
    max_body_bytes:
        The most bytes a response body may decode to (64 MiB): a larger body,
        or a ``Content-Length`` above it, is a :class:`~askkit.errors.ProtocolError`,
        raised as soon as the limit is passed.

    Raises
    ------
    SchemaError
        A value that is not a number, a bool, NaN or infinite, or out of its
        range; ``field`` names the option.

    Examples
    --------
    >>> from dataclasses import replace
    >>> patient = replace(ClientSettings(), poll_interval=2, max_polls=1800)
    >>> patient  # doctest: +NORMALIZE_WHITESPACE
    ClientSettings(timeout=30.0, poll_interval=2.0, max_polls=1800, max_poll_errors=15,
                   retries=2, backoff=0.25, max_body_bytes=67108864)
    >>> ClientSettings(retries=-1)
    Traceback (most recent call last):
    ...
    askkit.errors.SchemaError: retries: must be at least 0 (a whole number), got -1
    """

    timeout: float = 30.0
    poll_interval: float = 1.0
    max_polls: int = 720
    max_poll_errors: int = 15
    retries: int = 2
    backoff: float = 0.25
    max_body_bytes: int = 64 * 2**20

    def __post_init__(self) -> None:
        checked = {
            "timeout": _seconds("timeout", self.timeout, allow_zero=False),
            "poll_interval": _seconds("poll_interval", self.poll_interval, allow_zero=True),
            "max_polls": _count("max_polls", self.max_polls, least=1),
            "max_poll_errors": _count("max_poll_errors", self.max_poll_errors, least=1),
            "retries": _count("retries", self.retries, least=0),
            "backoff": _seconds("backoff", self.backoff, allow_zero=True),
            "max_body_bytes": _count("max_body_bytes", self.max_body_bytes, least=1),
        }
        for name, value in checked.items():  # plain float and int, whatever numeric type came in
            object.__setattr__(self, name, value)
