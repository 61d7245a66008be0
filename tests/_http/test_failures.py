"""The one mapping from HTTP failures to askkit's errors: the tables and their lookups."""

from __future__ import annotations

import typing

import httpx
import pytest

from askkit._http.body import DeadlinePassed, Progress
from askkit._http.failures import (
    HANDLED,
    STATUS,
    TRANSPORT,
    UNREADABLE,
    classify,
    status_row,
)
from askkit._http.reading import Unreadable
from askkit.errors import AuthError, ProtocolError, ServerStatusError, ServerUnavailable

REQUEST = httpx.Request("GET", "http://127.0.0.1:9/health")


@pytest.mark.parametrize(
    ("exc", "error", "says"),
    [
        (DeadlinePassed(Progress()), ServerUnavailable, "no {reply} within the {timeout}"),
        (httpx.ReadTimeout("t", request=REQUEST), ServerUnavailable, "({name})"),
        (httpx.ConnectTimeout("t", request=REQUEST), ServerUnavailable, "no {reply} within"),
        (httpx.ConnectError("refused", request=REQUEST), ServerUnavailable, "cannot connect"),
        (httpx.RemoteProtocolError("gone", request=REQUEST), ServerUnavailable, "dropped"),
        (httpx.ReadError("reset", request=REQUEST), ServerUnavailable, "dropped"),
        (httpx.WriteError("broken pipe", request=REQUEST), ServerUnavailable, "{name}: {exc}"),
        (httpx.ProxyError("proxy", request=REQUEST), ServerUnavailable, "{name}: {exc}"),
        (httpx.DecodingError("bad gzip", request=REQUEST), ProtocolError, "{exc} ({name})"),
        (httpx.TooManyRedirects("loop", request=REQUEST), ProtocolError, "{exc} ({name})"),
        (httpx.InvalidURL("bad"), ProtocolError, "{exc} ({name})"),
        (httpx.StreamConsumed(), ProtocolError, "{exc} ({name})"),
    ],
)
def test_each_failure_maps_to_one_error_and_message(
    exc: Exception, error: type[Exception], says: str
) -> None:
    assert isinstance(exc, HANDLED)
    mapped, template = classify(exc)
    assert mapped is error
    assert says in template


def test_an_unmapped_exception_is_no_failure_of_the_table() -> None:
    with pytest.raises(TypeError, match="no row of TRANSPORT maps KeyError"):
        classify(KeyError("x"))


def test_no_row_is_hidden_by_an_earlier_one() -> None:
    """The table is read top down: a row for a class under an earlier row's would never match."""

    def classes(
        kinds: type[Exception] | tuple[type[Exception], ...],
    ) -> tuple[type[Exception], ...]:
        return kinds if isinstance(kinds, tuple) else (kinds,)

    for i, (kinds, _, _) in enumerate(TRANSPORT):
        for earlier, _, _ in TRANSPORT[:i]:
            assert not [k for k in classes(kinds) if issubclass(k, classes(earlier))], kinds


def test_every_handled_exception_has_a_row() -> None:
    rows = tuple(
        k for kinds, _, _ in TRANSPORT for k in (kinds if isinstance(kinds, tuple) else (kinds,))
    )
    assert all(issubclass(kind, rows) for kind in HANDLED)


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (401, AuthError),
        (403, AuthError),
        (302, ServerStatusError),
        (404, ServerStatusError),
        (500, ServerStatusError),
        (503, ServerStatusError),
    ],
)
def test_statuses_map_to_auth_and_status_errors(status: int, error: type[Exception]) -> None:
    mapped, template = status_row(status)
    assert mapped is error
    assert "{subject}" in template
    assert "{status}" in template


def test_the_status_rows_end_with_one_that_takes_any_status() -> None:
    statuses, error, _ = STATUS[-1]
    assert error is ServerStatusError
    assert all(status in statuses for status in range(100, 600))


def test_every_kind_of_unreadable_body_has_a_message() -> None:
    kinds = typing.get_args(typing.get_type_hints(Unreadable.__init__)["kind"])
    assert set(UNREADABLE) == set(kinds)
    assert all("{why}" in template for template in UNREADABLE.values())
