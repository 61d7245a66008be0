"""What askkit's HTTP clients' messages may show: no credentials, no secrets, no raw server text.

:func:`redact_url` hides the password (or the lone user name) of a URL's user
info; :func:`split_userinfo` takes the user info out of the URL to request and
names the secrets it held; :func:`scrub` and :func:`scrub_error` replace those
secrets (and the token) by ``***`` in free text and in an error's fields.
:func:`printable` and :func:`excerpt` make a server's text fit for a one-line
message.
"""

from __future__ import annotations

import json
import logging
import re
import weakref
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import TypeVar
from urllib.parse import quote, unquote

from askkit.errors import ServerError

__all__ = [
    "LOG_FILTER",
    "SecretLogFilter",
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
_MIN_SECRET = 3  # shorter secrets are scrubbed from free text only as whole words
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
    """The non-empty secrets, longest first (so none is cut in two).

    >>> searchable(["abc", "s3cret", "", "tok3n-long"])
    ('tok3n-long', 's3cret', 'abc')
    """
    return tuple(sorted({s for s in secrets if s}, key=lambda s: (len(s), s))[::-1])


def _escaped(text: str) -> str:
    """``text`` as :func:`printable` escapes it."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


#: How a secret's text may be shown escaped: by repr (either quote), json, printable...
_ESCAPES: tuple[Callable[[str], str], ...] = (
    lambda t: repr(t)[1:-1],
    lambda t: repr('"' + t)[2:-1],  # single-quoted: ' shown as \'
    lambda t: t.encode("unicode_escape").decode("ascii"),
    lambda t: json.dumps(t)[1:-1],
    lambda t: json.dumps(t, ensure_ascii=False)[1:-1],
    lambda t: repr(t.encode("utf-8", "surrogatepass"))[2:-1],  # in a bytes repr (logs)
    _escaped,
)


@lru_cache(maxsize=256)
def _forms(secret: str) -> tuple[str, ...]:
    """Every way a message may show ``secret``, longest first: as is, percent-encoded or
    -decoded, and each of those escaped once or twice (a repr of a json text...).

    >>> sorted(_forms("a/b"))
    ['a%2Fb', 'a/b']
    """
    level = {secret, unquote(secret), quote(secret, safe=""), quote(unquote(secret), safe="")}
    found = set(level)
    for _ in range(2):
        level = {escape(t) for t in level for escape in _ESCAPES} - found
        found |= level
    return tuple(sorted((f for f in found if f), key=lambda f: (len(f), f))[::-1])


#: Where :func:`excerpt` and :func:`printable` cut a text (the quote a repr ends with too).
_CUT = re.compile(r"['\"]?\.\.\. \(\d[\d,]* (?:more characters|bytes in all)\)")
_WORD = "A-Za-z0-9"


def _pattern(form: str) -> str:
    """A regex for ``form``: anywhere, or as a whole word when it is short."""
    if len(form) >= _MIN_SECRET:
        return re.escape(form)
    return rf"(?<![{_WORD}]){re.escape(form)}(?![{_WORD}])"


@lru_cache(maxsize=64)
def _compiled(secrets: tuple[str, ...]) -> tuple[re.Pattern[str] | None, tuple[str, ...]]:
    forms = sorted({f for s in secrets for f in _forms(s)}, key=lambda f: (len(f), f))[::-1]
    whole = re.compile("|".join(_pattern(f) for f in forms)) if forms else None
    return whole, tuple(forms)


def _cut_prefix(head: str, forms: tuple[str, ...]) -> str:
    """``head`` (text cut short) without a secret's start at its end."""
    for form in forms:  # longest first
        for size in range(len(form) - 1, 0, -1):
            prefix = form[:size]
            if head.endswith(prefix) and (
                len(form) >= _MIN_SECRET or not head[:-size][-1:].isalnum()
            ):
                return head[:-size] + _HIDDEN
    return head


def scrub(text: str, secrets: Iterable[str]) -> str:
    """``text`` with each of ``secrets`` (from :func:`searchable`) replaced by ``***``.

    Every form a message may show a secret in is replaced (percent-encoded or
    -decoded, escaped by repr, json or :func:`printable`), and so is the start
    of one cut off where :func:`excerpt` or :func:`printable` shortened a text.
    Secrets of :data:`_MIN_SECRET` (3) characters or more are replaced wherever
    they occur; shorter ones (a URL password such as ``pw``) only as a whole
    word, so that ordinary text stays readable.

    >>> scrub("token s3cret refused", ("s3cret",))
    'token *** refused'
    >>> scrub("token s3c... (3 more characters)", ("s3cret",))
    'token ***... (3 more characters)'
    >>> scrub("user kimun:pw@host, pwd", ("pw",))
    'user kimun:***@host, pwd'
    """
    whole, forms = _compiled(tuple(secrets))
    if whole is None:
        return text
    text = whole.sub(_HIDDEN, text)
    for cut in reversed(list(_CUT.finditer(text))):
        text = _cut_prefix(text[: cut.start()], forms) + text[cut.start() :]
    return text


def scrub_error(error: _Error, secrets: tuple[str, ...]) -> _Error:
    """``error`` with ``secrets`` scrubbed from its message and its text fields."""
    if secrets:
        error.args = tuple(scrub(a, secrets) if isinstance(a, str) else a for a in error.args)
        for name, value in vars(error).items():
            if isinstance(value, str):
                setattr(error, name, scrub(value, secrets))
    return error


def excerpt(
    data: bytes | bytearray | str, limit: int = _EXCERPT, secrets: tuple[str, ...] = ()
) -> str:
    """The start of a payload, as a repr, with how much was cut.

    ``secrets`` are scrubbed from the whole text before it is cut, then from
    the cut edge (see :func:`scrub`).
    """
    if isinstance(data, bytes | bytearray) and len(data) > _WHOLE_EXCERPT:
        more = 4 * max((len(f) for s in secrets for f in _forms(s)), default=0)
        text = bytes(data[: (limit + more) * 4]).decode("utf-8", "replace")
        head = scrub(text, secrets)[:limit]
        return scrub(f"{head!r}... ({len(data):,} bytes in all)", secrets)
    text = data if isinstance(data, str) else bytes(data).decode("utf-8", "replace")
    text = scrub(text, secrets)
    if len(text) <= limit:
        return scrub(repr(text), secrets)
    return scrub(f"{text[:limit]!r}... ({len(text) - limit} more characters)", secrets)


def printable(text: str, limit: int = 300, secrets: tuple[str, ...] = ()) -> str:
    """A server's text fit for a one-line message: control characters and lone
    surrogates escaped, cut at ``limit`` characters, ``secrets`` scrubbed (from the
    whole text first, then from the cut edge; see :func:`scrub`)."""
    text = scrub(text, secrets)
    if len(text) > limit:
        text = f"{text[:limit]}... ({len(text) - limit} more characters)"
    if not text.isprintable():
        text = _escaped(text)
    return scrub(text, secrets)


class SecretLogFilter(logging.Filter):
    """Scrubs the secrets of live clients from httpx's and httpcore's log records
    (httpcore's DEBUG lines show the response headers, which a server may echo)."""

    LOGGERS = (
        "httpx",
        "httpcore.connection",
        "httpcore.http11",
        "httpcore.http2",
        "httpcore.proxy",
        "httpcore.socks",
    )

    def __init__(self) -> None:
        super().__init__()
        self._owners: weakref.WeakKeyDictionary[object, tuple[str, ...]] = (
            weakref.WeakKeyDictionary()
        )
        for name in self.LOGGERS:
            logging.getLogger(name).addFilter(self)

    def register(self, owner: object, secrets: tuple[str, ...]) -> None:
        """Scrub ``secrets`` from the records logged while ``owner`` lives."""
        if secrets:
            self._owners[owner] = secrets

    def filter(self, record: logging.LogRecord) -> bool:
        secrets = searchable(s for group in list(self._owners.values()) for s in group)
        if secrets:
            message = record.getMessage()
            shown = scrub(message, secrets)
            if shown != message:
                record.msg, record.args = shown, None
        return True


LOG_FILTER = SecretLogFilter()
