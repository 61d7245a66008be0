"""Stand-ins for tests and notebooks, each labelled as a stand-in wherever it is shown.

- :mod:`askkit.testing.kimun_server`: :class:`KimunTestServer`, kimun's HTTP
  API on 127.0.0.1 with switchable faults;
- :mod:`askkit.testing.embed_servers`: Ollama, OpenAI-compatible and rerank
  endpoints with faults;
- :mod:`askkit.testing.models`: tiny ONNX embedding and cross-encoder models,
  loaded through fastembed, and :mod:`askkit.testing.model_references`,
  their outputs computed without fastembed;
- :mod:`askkit.testing.stores`: kimun-schema SQLite and Qdrant stores written
  as kimun writes them.

The kimun server double is re-exported here, as it is the one most tests
reach for: ``from askkit.testing import KimunTestServer``.
"""

from __future__ import annotations

from askkit.testing._loopback import RecordedRequest
from askkit.testing.kimun_server import (
    FAST_SETTINGS,
    UNCONFIGURED,
    FaultKind,
    KimunTestServer,
    Route,
    sample_payloads,
)

__all__ = [
    "FAST_SETTINGS",
    "UNCONFIGURED",
    "FaultKind",
    "KimunTestServer",
    "RecordedRequest",
    "Route",
    "sample_payloads",
]
