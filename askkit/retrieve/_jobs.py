"""The polling rules of one kimun answer job: :class:`JobWatch`, no I/O.

``POST /api/answer`` starts a job; the clients poll ``GET /api/job/{id}`` and
feed each outcome to the watch, which counts polls and failed polls in a row,
returns the answer once the job completed, and raises when the job failed or
polling must stop. The clients only send the requests and sleep between them.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

from askkit._http.redact import printable
from askkit.errors import (
    AuthError,
    JobFailed,
    JobTimeout,
    SchemaError,
    ServerError,
    ServerStatusError,
    ServerUnavailable,
)
from askkit.wire import AnswerResult

if TYPE_CHECKING:
    from askkit.retrieve._protocol import KimunCore

__all__ = ["JobWatch"]


class JobWatch:
    """The polling rules of one answer job; the clients only do the I/O and the sleeping."""

    def __init__(self, core: KimunCore, job_id: str) -> None:
        self.core = core
        self.job_id = job_id
        self.shown_id = printable(job_id, 80)  # the server's text, in one-line messages
        self.call = core.job_call(job_id)
        self.polls = 0
        self.errors = 0
        self.started = time.monotonic()
        self.last_status: str | None = None

    @property
    def exhausted(self) -> bool:
        return self.polls >= self.core.settings.max_polls

    def on_error(self, exc: ServerError) -> None:
        """Count a failed poll; re-raise it when it cannot heal or too many came in a row."""
        self.polls += 1
        healable = isinstance(exc, ServerUnavailable) or (
            isinstance(exc, ServerStatusError)
            and not isinstance(exc, AuthError)
            and (exc.status or 0) >= 500
        )
        self.errors += 1
        if not healable or self.errors >= self.core.settings.max_poll_errors:
            if healable:
                exc.add_note(
                    f"gave up on answer job {self.shown_id}: {self.errors} polls failed in a row"
                )
            raise exc

    def on_status(self, obj: object) -> AnswerResult | None:
        """The answer when the job completed, None while it runs; raises when it failed."""
        self.polls += 1
        self.errors = 0
        status = obj.get("status") if isinstance(obj, Mapping) else None
        if not isinstance(status, str) or not isinstance(obj, Mapping):
            raise self.core.shape_error(
                self.call,
                SchemaError("expected a job status with a string 'status'", field="status"),
                obj,
            )
        self.last_status = printable(status, 80)
        if status == "completed":
            result = obj.get("result")
            if result is None:
                raise self.core.shape_error(
                    self.call,
                    SchemaError("a completed job must carry a result", field="result"),
                    obj,
                )
            try:
                return AnswerResult.from_dict(result, field="result")
            except SchemaError as exc:
                raise self.core.shape_error(self.call, exc, obj) from None
        if status == "failed":
            error = obj.get("error")
            message = printable(error) if isinstance(error, str) and error else None
            raise self.core.scrubbed(
                JobFailed(
                    f"answer job {self.shown_id} failed: {message or 'the server gave no reason'}",
                    job_id=self.job_id,
                    server_message=message,
                )
            )
        return None  # queued, processing, or a status this client does not know: keep polling

    def timeout(self) -> JobTimeout:
        waited = time.monotonic() - self.started
        return JobTimeout(
            f"answer job {self.shown_id} did not finish: still {self.last_status or 'unknown'!r} "
            f"after {self.polls} polls over {waited:.2f} s; raise max_polls "
            f"(now {self.core.settings.max_polls}) or poll_interval "
            f"(now {self.core.settings.poll_interval:g} s) in the client's settings to wait longer",
            job_id=self.job_id,
            polls=self.polls,
            waited=waited,
            last_status=self.last_status,
        )
