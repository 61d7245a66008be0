"""What the kimun clients return for ``GET /health`` and for a search, as frozen values.

:class:`Health` is validated at the boundary (:meth:`Health.from_dict`);
:class:`SearchResult` holds the chunks retrieved for a query. The protocol
core (:mod:`askkit.retrieve._protocol`) builds them from checked responses and
:mod:`askkit.retrieve.client` re-exports them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from askkit.errors import SchemaError
from askkit.sources import AskSource, SourceList, Turn
from askkit.wire import ChunkResult, EmbeddingsResponse, optional_string

__all__ = ["Health", "SearchResult"]


def _bool(data: Mapping[str, Any], name: str) -> bool:
    value = data.get(name)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise SchemaError("expected true, false or null", field=name, value=value)
    return value


@dataclass(frozen=True, slots=True)
class Health:
    """``GET /health``: what the server runs. Missing or null fields take their default.

    The first five fields are those kimun's own client reads. A newer server
    also says why it runs degraded (``degraded``: its embedder failed to start,
    so search and answers are off), why its reranker failed to start
    (``reranker_error``: it ranks by vector similarity alone), its version and,
    when its update check found a newer stable release, that one
    (``latest_version``). A field the server does not send stays ``None``:
    nothing is invented for an older server.

    >>> Health.from_dict({"status": "ok", "embedder": "ollama"}).capability
    'semantic_only'
    >>> h = Health.from_dict({"status": "ok", "reranker": False, "reranker_error": "no model"})
    >>> h.reranker_error, h.degraded, h.version
    ('no model', None, None)
    """

    status: str = ""
    reranker: bool = False
    embedder: str | None = None
    llm_provider: str | None = None
    auth_required: bool = False
    degraded: str | None = None
    reranker_error: str | None = None
    version: str | None = None
    latest_version: str | None = None

    @classmethod
    def from_dict(cls, obj: object) -> Health:
        """Validate a decoded ``/health`` body (unknown fields are ignored)."""
        if not isinstance(obj, Mapping):
            raise SchemaError("expected a JSON object (a /health response)", value=obj)
        return cls(
            status=optional_string(obj, "status", "") or "",
            reranker=_bool(obj, "reranker"),
            embedder=optional_string(obj, "embedder"),
            llm_provider=optional_string(obj, "llm_provider"),
            auth_required=_bool(obj, "auth_required"),
            degraded=optional_string(obj, "degraded"),
            reranker_error=optional_string(obj, "reranker_error"),
            version=optional_string(obj, "version"),
            latest_version=optional_string(obj, "latest_version"),
        )

    @property
    def is_degraded(self) -> bool:
        """Whether the server says it runs degraded (its embedder failed to start)."""
        return self.degraded is not None

    def problems(self) -> list[str]:
        """What is wrong with the server, in words: degraded, a reranker that failed to start.

        >>> Health(degraded="model download failed").problems()  # doctest: +ELLIPSIS
        ['the server is degraded: model download failed (...)']
        >>> Health(status="ok").problems()
        []
        """
        out = []
        if self.degraded is not None:
            out.append(
                f"the server is degraded: {self.degraded} (its embedder failed to start: "
                "search and answers are off until its configuration is fixed and it restarts)"
            )
        if self.reranker_error is not None:
            out.append(
                f"the server's reranker failed to start: {self.reranker_error} "
                "(results are ranked by vector similarity alone)"
            )
        return out

    def update_note(self) -> str | None:
        """The update the server's own check found, in words, or ``None``.

        >>> Health(version="0.5.1", latest_version="0.6.0").update_note()
        'kimun server 0.6.0 is available (this one runs 0.5.1)'
        """
        if self.latest_version is None:
            return None
        running = f"this one runs {self.version}" if self.version else "the server says so"
        return f"kimun server {self.latest_version} is available ({running})"

    @property
    def capability(self) -> Literal["unconfigured", "semantic_only", "full"]:
        """As kimun's client reads it: no embedder, search only, or search and answers."""
        if self.embedder is None:
            return "unconfigured"
        return "semantic_only" if self.llm_provider is None else "full"


@dataclass(frozen=True, slots=True)
class SearchResult:
    """``POST /api/embeddings``: the chunks retrieved for ``query`` (best first)."""

    query: str
    chunks: tuple[ChunkResult, ...]
    query_time_ms: float = 0.0

    @property
    def sources(self) -> SourceList:
        """The chunks as the UI shows them (:class:`~askkit.AskSource`)."""
        return AskSource.from_chunks(self.chunks)

    def to_turn(self) -> Turn:
        """A turn with no answer: the question and what was retrieved for it."""
        return Turn(self.query, "", self.sources)

    def to_response(self) -> EmbeddingsResponse:
        """The wire response (for saving, or ``askkit sources``)."""
        return EmbeddingsResponse(self.chunks, self.query_time_ms)

    def _repr_html_(self) -> str:
        return self.to_turn()._repr_html_()
