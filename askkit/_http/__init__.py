"""askkit's one HTTP JSON core, with no I/O: what every HTTP client of askkit shares.

The kimun server client (:mod:`askkit.retrieve.client`) and the embedding and
rerank endpoints (:mod:`askkit.dense`) send JSON and read JSON. Everything
about that but the sending itself lives here, as httpx's ``BaseClient`` builds
requests, auth and limits while its clients only do I/O:

- :mod:`~askkit._http.settings`: :class:`ClientSettings`, the limits of a
  call (its timeout, retries, polling and body cap), one frozen value;
- :mod:`~askkit._http.redact`: what a message may show (no credential, no
  secret in any escaped form, none in httpx's logs);
- :mod:`~askkit._http.body`: one response body read off the wire, bounded in
  size, time and inflation;
- :mod:`~askkit._http.reading`: a body read as JSON, strictly (what kimun's
  JSON parser refuses is refused) or with its arrays of numbers left undecoded;
- :mod:`~askkit._http.failures`: the one table from a transport failure,
  an error status or an unreadable body to askkit's error and its message;
- :mod:`~askkit._http.core`: :class:`~askkit._http.core.Core`, which checks
  the URL and the credentials, builds each request and turns each response
  or failure into a value or an error a user can act on.

Nothing is imported here, so ``askkit.retrieve`` can name
:class:`ClientSettings` without loading httpx.
"""

from __future__ import annotations

__all__: list[str] = []
