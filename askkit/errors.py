"""askkit's exceptions.

Every error askkit raises derives from :class:`AskkitError`; each subclass also
derives from the builtin a caller would naturally catch (``ValueError`` for bad
data, ``OSError`` for the vault on disk, ``ImportError`` for a missing optional
package), so ``except ValueError`` keeps working around askkit calls.
"""

from __future__ import annotations

import reprlib

__all__ = [
    "AskkitError",
    "AuthError",
    "DimensionError",
    "JobFailed",
    "JobTimeout",
    "MissingDependencyError",
    "ProtocolError",
    "SchemaError",
    "ServerError",
    "ServerStatusError",
    "ServerUnavailable",
    "StoreError",
    "UsageError",
    "VaultError",
]

_MAX_VALUE_REPR = 80


#: Shortens containers and strings before they are printed: a value nested
#: 100,000 deep or an integer of thousands of digits never reaches ``repr``.
_REPR = reprlib.Repr()
_REPR.maxlevel = 3
_REPR.maxstring = _MAX_VALUE_REPR
_REPR.maxother = _MAX_VALUE_REPR
_REPR.maxlong = _MAX_VALUE_REPR


def _short_repr(value: object) -> str:
    try:
        text = _REPR.repr(value)
    except (RecursionError, ValueError, OverflowError):  # a hostile value
        text = f"<{type(value).__name__} that cannot be shown>"
    if len(text) > _MAX_VALUE_REPR:
        return text[: _MAX_VALUE_REPR - 3] + "..."
    return text


class AskkitError(Exception):
    """Base class of every error askkit raises."""


class SchemaError(AskkitError, ValueError):
    """Data does not have the shape kimun's wire format (or askkit's frame) requires.

    Parameters
    ----------
    message:
        What is wrong and how to fix it.
    field:
        The dotted field path, with list indices (``"sources[3].ordinal"``).
    value:
        The offending value, as received.
    file, line:
        Where the value came from, when it was read from a file (1-based line).

    Examples
    --------
    >>> err = SchemaError("expected a string", field="chunks[2].path", value=7)
    >>> str(err)
    'chunks[2].path: expected a string, got 7'
    """

    def __init__(
        self,
        message: str,
        *,
        field: str | None = None,
        value: object = None,
        file: str | None = None,
        line: int | None = None,
        has_value: bool = True,
    ) -> None:
        self.message = message
        self.field = field
        self.value = value
        self.file = file
        self.line = line
        self.has_value = has_value
        super().__init__(self._render())

    def _render(self) -> str:
        where = ""
        if self.file is not None:
            where = f"{self.file}:{self.line}: " if self.line is not None else f"{self.file}: "
        elif self.line is not None:
            where = f"line {self.line}: "
        field = f"{self.field}: " if self.field else ""
        got = f", got {_short_repr(self.value)}" if self.has_value else ""
        return f"{where}{field}{self.message}{got}"

    def located(self, *, file: str | None = None, line: int | None = None) -> SchemaError:
        """Return a copy of this error that also names the file and line."""
        return SchemaError(
            self.message,
            field=self.field,
            value=self.value,
            file=file if file is not None else self.file,
            line=line if line is not None else self.line,
            has_value=self.has_value,
        )

    def __reduce__(self) -> tuple[object, ...]:  # keep the fields across pickling (dask)
        return (
            _rebuild_schema_error,
            (self.message, self.field, self.value, self.file, self.line, self.has_value),
        )


def _rebuild_schema_error(  # noqa: PLR0917 - pickle passes positionally
    message: str,
    field: str | None,
    value: object,
    file: str | None,
    line: int | None,
    has_value: bool,
) -> SchemaError:
    return SchemaError(message, field=field, value=value, file=file, line=line, has_value=has_value)


class VaultError(AskkitError, OSError):
    """A vault path cannot be read: it leaves the vault, is missing or is not text."""


class ServerError(AskkitError, RuntimeError):
    """A kimun server could not be reached or answered with an error."""

    def __reduce__(self) -> tuple[object, ...]:
        # Explicit, so the subclasses that also derive from OSError (AuthError,
        # JobTimeout, ServerUnavailable) pickle the same once a library such as
        # dask's tblib has registered its own exception pickler.
        return (_rebuild_server_error, (type(self), self.args, vars(self)))


def _rebuild_server_error(
    cls: type[ServerError], args: tuple[object, ...], state: dict[str, object]
) -> ServerError:
    error = cls(*args)  # every ServerError takes its message alone; fields are keywords
    error.__dict__.update(state)
    return error


class MissingDependencyError(AskkitError, ImportError):
    """An optional package is needed for this feature; the message names the extra."""


# The kimun server client's errors (askkit.retrieve.client). Every one is a
# ServerError, pickled by ServerError.__reduce__ with its args and fields.


class ServerStatusError(ServerError):
    """The server answered with an error status; the message quotes its ``{"error": ...}``.

    Attributes
    ----------
    status:
        The HTTP status code (400 validation, 404 unknown job, 500 backend,
        503 no embedder or no LLM configured).
    path:
        The URL path that failed (``/api/embeddings``).
    server_message:
        The server's own ``error`` text (or an excerpt of a non-JSON body).
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        path: str | None = None,
        server_message: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.path = path
        self.server_message = server_message


class AuthError(ServerStatusError, PermissionError):
    """401/403: the server wants a bearer token; ``token_sent`` says if one was sent."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        path: str | None = None,
        server_message: str | None = None,
        token_sent: bool = False,
    ) -> None:
        super().__init__(message, status=status, path=path, server_message=server_message)
        self.token_sent = token_sent


class ProtocolError(ServerError, ValueError):
    """The server sent something that is not kimun's API: not JSON, or the wrong shape.

    ``excerpt`` holds the start of the offending payload.
    """

    def __init__(self, message: str, *, path: str | None = None, excerpt: str = "") -> None:
        super().__init__(message)
        self.path = path
        self.excerpt = excerpt


class JobFailed(ServerError):
    """An answer job ended with status ``failed``; ``server_message`` is the job's ``error``."""

    def __init__(
        self, message: str, *, job_id: str = "", server_message: str | None = None
    ) -> None:
        super().__init__(message)
        self.job_id = job_id
        self.server_message = server_message


class JobTimeout(ServerError, TimeoutError):
    """An answer job did not finish within the client's poll budget."""

    def __init__(
        self,
        message: str,
        *,
        job_id: str = "",
        polls: int = 0,
        waited: float = 0.0,
        last_status: str | None = None,
    ) -> None:
        super().__init__(message)
        self.job_id = job_id
        self.polls = polls
        self.waited = waited
        self.last_status = last_status


class ServerUnavailable(ServerError, ConnectionError):
    """The server could not be reached: connection refused, a timeout, a dropped connection."""

    def __init__(self, message: str, *, path: str | None = None, attempts: int = 1) -> None:
        super().__init__(message)
        self.path = path
        self.attempts = attempts


class UsageError(AskkitError, ValueError):
    """A command-line argument is missing or wrong (the CLI exits with status 2)."""


class StoreError(AskkitError, OSError):
    """A vector store cannot be used: missing, locked, corrupt, not kimun's, or no such vault.

    ``path`` names the store (a file, a folder or a Qdrant URL).
    """

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild_store_error, (type(self), self.args, vars(self)))


def _rebuild_store_error(
    cls: type[StoreError], args: tuple[object, ...], state: dict[str, object]
) -> StoreError:
    error = cls(str(args[0]) if args else "")
    error.__dict__.update(state)
    return error


class DimensionError(AskkitError, ValueError):
    """Vectors of the wrong width: the embedder changed, or does not match the store.

    ``expected`` and ``actual`` are the two dimensions.
    """

    def __init__(
        self, message: str, *, expected: int | None = None, actual: int | None = None
    ) -> None:
        super().__init__(message)
        self.expected = expected
        self.actual = actual
