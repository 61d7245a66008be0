"""What the kimun clients' messages may show: no credentials, no secrets, no raw server text.

:func:`redact_url` hides the password (or the lone user name) of a URL's user
info; :func:`split_userinfo` takes the user info out of the URL to request and
names the secrets it held; :func:`scrub` and :func:`scrub_error` replace those
secrets (and the token) by ``***`` in free text and in an error's fields.
:func:`printable` and :func:`excerpt` make a server's text fit for a one-line
message.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TypeVar
from urllib.parse import unquote

from askkit.errors import ServerError

__all__ = [
    "excerpt",
    "printable",
    "redact_url",
    "scrub",
    "scrub_error",
    "searchable",
    "split_userinfo",
]

#: The user info of a URL: everything before the last ``@`` of its authority.
_USERINFO = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.\-]*://|//)?(?P<userinfo>[^/?#]*)@")
_HIDDEN = "***"
_MIN_SECRET = 4  # shorter secrets are hidden in URLs, not searched for in free text
_EXCERPT = 200
_WHOLE_EXCERPT = 2**20  # bodies up to this size are decoded whole for an excerpt

_Error = TypeVar("_Error", bound=ServerError)


def redact_url(url: str) -> str:
    """``url`` as it may be shown: the password of its user info replaced by ``***``.

    A user name alone (``https://TOKEN@host``) is hidden too, as it is often a
    token. The clients show every URL this way: in their repr, ``base_url``,
    every error message and (since credentials never go into the URL they
    request) httpx's log lines.

    >>> redact_url("http://kimun:s3cret@127.0.0.1:8080/api")
    'http://kimun:***@127.0.0.1:8080/api'
    >>> redact_url("https://ghp_0123456789@example.org")
    'https://***@example.org'
    >>> redact_url("http://127.0.0.1:8080/a@b")
    'http://127.0.0.1:8080/a@b'
    """
    match = _USERINFO.match(url)
    if match is None:
        return url
    user, colon, password = match["userinfo"].partition(":")
    if not (password if colon else user):
        return url
    shown = f"{user}:{_HIDDEN}" if colon else _HIDDEN
    return f"{match['head'] or ''}{shown}@{url[match.end() :]}"


def split_userinfo(url: str) -> tuple[str, tuple[str, str] | None, set[str]]:
    """``url`` without its user info, the ``(user, password)`` it carried, and its secrets.

    The credentials are percent-decoded (None when the user info is empty or
    absent); the secrets are the password (or, with no ``:``, the user name)
    as written and as decoded.

    >>> origin, credentials, secrets = split_userinfo("http://kimun:s3%2Fcret@127.0.0.1:8080")
    >>> origin, credentials, sorted(secrets)
    ('http://127.0.0.1:8080', ('kimun', 's3/cret'), ['s3%2Fcret', 's3/cret'])
    >>> split_userinfo("http://127.0.0.1:8080")
    ('http://127.0.0.1:8080', None, set())
    """
    match = _USERINFO.match(url)
    if match is None:
        return url, None, set()
    origin = (match["head"] or "") + url[match.end() :]
    raw_user, colon, raw_password = match["userinfo"].partition(":")
    user, password = unquote(raw_user), unquote(raw_password)
    credentials = (user, password) if user or password else None
    secrets = {raw_password, password} if colon else {raw_user, user}
    return origin, credentials, secrets


def searchable(secrets: Iterable[str]) -> tuple[str, ...]:
    """The secrets worth searching free text for, longest first (so none is cut in two).

    >>> searchable(["abc", "s3cret", "", "tok3n-long"])
    ('tok3n-long', 's3cret')
    """
    return tuple(sorted((s for s in secrets if len(s) >= _MIN_SECRET), key=len)[::-1])


def scrub(text: str, secrets: Iterable[str]) -> str:
    """``text`` with each of ``secrets`` (from :func:`searchable`) replaced by ``***``.

    >>> scrub("token s3cret refused", ("s3cret",))
    'token *** refused'
    """
    for secret in secrets:
        text = text.replace(secret, _HIDDEN)
    return text


def scrub_error(error: _Error, secrets: tuple[str, ...]) -> _Error:
    """``error`` with ``secrets`` scrubbed from its message and its text fields."""
    if secrets:
        error.args = tuple(scrub(a, secrets) if isinstance(a, str) else a for a in error.args)
        for name, value in vars(error).items():
            if isinstance(value, str):
                setattr(error, name, scrub(value, secrets))
    return error


def excerpt(data: bytes | bytearray | str, limit: int = _EXCERPT) -> str:
    """The start of a payload, as a repr, with how much was cut."""
    if isinstance(data, bytes | bytearray) and len(data) > _WHOLE_EXCERPT:
        head = bytes(data[: limit * 4]).decode("utf-8", "replace")[:limit]
        return f"{head!r}... ({len(data):,} bytes in all)"
    text = data if isinstance(data, str) else bytes(data).decode("utf-8", "replace")
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text) - limit} more characters)"


def printable(text: str, limit: int = 300) -> str:
    """A server's text fit for a one-line message: control characters and lone
    surrogates escaped, cut at ``limit`` characters."""
    if len(text) > limit:
        text = f"{text[:limit]}... ({len(text) - limit} more characters)"
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
