"""kimun's Qdrant vector store, read with qdrant-client: a Qdrant server, or local mode.

A kimun server with ``[vector_db] type = "qdrant"`` keeps each vault in its own
Qdrant collection (``server/src/dbembeddings/vecqdrant.rs``):

- named ``<collection>-<vault id>``, where ``collection`` is the config's
  prefix (default ``kimun_embeddings``), or the vault id alone when the prefix
  is empty; names starting with ``__`` after the prefix are kimun's metadata,
  not vaults;
- one point per chunk (a random UUID), with one unnamed dense vector under
  cosine distance (Qdrant stores it normalised) and the payload ``path``,
  ``title``, ``date`` (``""`` when none), ``text`` and ``hash``;
- the embedder fingerprint in the reserved collection
  ``<collection>-__fingerprint``, payload ``fingerprint`` of its one point.

:class:`QdrantStore` lists the vaults, reads the fingerprint, loads a vault's
chunks and vectors (:class:`~askkit.dense.store.StoredVault`, like
:class:`~askkit.dense.store.KimunStore`) and runs Qdrant's own search, as
kimun's server does. qdrant-client is an extra: ``pip install 'askkit[qdrant]'``.

qdrant-client's local mode (``QdrantStore(path=DIR)``) keeps every point as a
pickle and unpickles them all when it opens the folder; unpickling runs code, so
a folder someone else wrote could run any command as the user who opens it.
:class:`QdrantStore` opens a local-mode folder only if askkit wrote it
(:func:`local_client` tags the folder with askkit's cache directory tag) and
nobody else can write what is in it, or when the caller says it trusts the
folder (``trusted=True``).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Self, TypeVar

import numpy as np
import pandas as pd

from askkit._optional import optional_import
from askkit._warn import warn_user
from askkit.dense._schema import COLUMNS, Collection, StoredVault, wire_date
from askkit.dense.vectors import normalise
from askkit.errors import DimensionError, StoreError, UsageError
from askkit.frame.schema import STRING

__all__ = [
    "DEFAULT_COLLECTION_PREFIX",
    "DEFAULT_URL",
    "FINGERPRINT_COLLECTION",
    "QdrantStore",
    "local_client",
]

#: kimun's default ``[vector_db] collection`` (config.rs ``default_qdrant_collection``).
DEFAULT_COLLECTION_PREFIX: Final = "kimun_embeddings"
#: kimun's default ``[vector_db] url`` (config.rs ``default_qdrant_url``).
DEFAULT_URL: Final = "http://localhost:6333"
#: The vault id of kimun's fingerprint collection (``<prefix>-__fingerprint``).
FINGERPRINT_COLLECTION: Final = "__fingerprint"
_PAGE: Final = 1024  # points per scroll page
_UNIT: Final = 1e-4  # a vector whose norm is this close to 1 is taken as normalised

_T = TypeVar("_T")


def _qdrant_client() -> Any:
    return optional_import(
        "qdrant_client", "QdrantStore", "pip install 'askkit[qdrant]'", package="qdrant-client"
    )


def local_client(path: str | os.PathLike[str]) -> Any:
    """A qdrant-client in local mode on a folder askkit owns, made and tagged if new.

    The folder must be new, empty, or one this function made before (it carries
    askkit's tag for :data:`askkit._cachedir.QDRANT_LOCAL`), else
    :class:`~askkit.errors.UsageError`; and keep the rule of every folder askkit
    trusts (:func:`askkit._cachedir.untrusted`: no link, the user's own, nobody
    else can write it), else :class:`~askkit.errors.StoreError`. A refused
    folder is left alone. A new folder is made
    private (mode 0700): its points are pickles, which run code when loaded. Only such a folder
    :class:`QdrantStore` opens without ``trusted=True``. The client is the
    caller's to close.

    Examples
    --------
    >>> import tempfile
    >>> client = local_client(tempfile.mkdtemp())
    >>> client.get_collections().collections
    []
    >>> client.close()
    """
    from askkit._cachedir import QDRANT_LOCAL, claim, mark, writing

    qdrant_client = _qdrant_client()
    folder = Path(path)
    state = claim(
        folder,
        None,
        what="Qdrant folder",
        fix="give a new or empty folder, or one local_client made",
        purpose=QDRANT_LOCAL,
        untrusted_fix=f"remove that folder yourself, or give another one; {_UNPICKLES}",
    )
    if state != "ours":
        with writing(folder, what="Qdrant folder", fix="give another folder"):
            folder.parent.mkdir(parents=True, exist_ok=True)
            folder.mkdir(mode=0o700, exist_ok=True)
            folder.chmod(0o700)  # private: nobody else can reach, let alone rewrite, its pickles
            mark(folder, QDRANT_LOCAL, lifetime="askkit wrote it with qdrant-client's local mode")
    return qdrant_client.QdrantClient(path=str(folder))


_UNPICKLES: Final = (
    "qdrant-client unpickles every stored point when it opens a local-mode folder, and "
    "unpickling runs code, so a folder someone else wrote can run any command as you"
)


def _distrust(folder: Path) -> str | None:
    """Why askkit will not open ``folder`` in local mode on its own (None: it may).

    It must carry askkit's tag for :data:`askkit._cachedir.QDRANT_LOCAL` and
    keep the rule of every folder askkit trusts
    (:func:`askkit._cachedir.untrusted`): nothing in it may be a link or
    belong to another user, and what is in it may be writable by other users
    only when they cannot reach it (the folder is private: :func:`local_client`
    makes it so).
    """
    from askkit._cachedir import QDRANT_LOCAL, purpose_of, untrusted

    if purpose_of(folder) != QDRANT_LOCAL:
        return "askkit did not write it (it carries no askkit tag for a local-mode store)"
    why = untrusted(folder)
    return None if why is None else str(why)


def _payload_chunk(payload: dict[str, Any] | None) -> dict[str, Any]:
    """A point's payload as kimun's ``payload_to_chunk`` reads it (missing strings are ``""``)."""
    payload = payload or {}

    def text(key: str) -> str:
        value = payload.get(key)
        return value if isinstance(value, str) else ""

    return {
        "path": text("path"),
        "hash": text("hash"),
        "title": text("title"),
        "date": wire_date(payload.get("date")),
        "text": text("text"),
    }


class QdrantStore:
    """A kimun Qdrant deployment, read with qdrant-client: vaults, fingerprint, vectors, search.

    Give one of ``url`` (a Qdrant server), ``path`` (a qdrant-client local-mode
    folder) or ``client`` (an open ``QdrantClient``, which stays the caller's
    to close).

    Parameters
    ----------
    url:
        The Qdrant server, as kimun's ``[vector_db] url`` (REST, e.g.
        ``http://localhost:6333``).
    path:
        A folder qdrant-client's local mode wrote (it holds ``meta.json``):
        one :func:`local_client` made, or, with ``trusted``, any.
    collection_prefix:
        kimun's ``[vector_db] collection`` (default ``kimun_embeddings``).
    api_key:
        Qdrant's API key, if the server wants one. It is never shown in a
        message or a repr.
    client:
        An existing ``qdrant_client.QdrantClient``.
    timeout:
        Seconds qdrant-client waits for the server.
    trusted:
        Open a ``path`` askkit did not write. qdrant-client's local mode
        unpickles every stored point when it opens the folder, and unpickling
        runs code: a folder someone else wrote (or could rewrite) can run any
        command as you. Without it, askkit opens only a folder that
        :func:`local_client` made and that no other user can write; pass
        ``True`` only for a folder whose writer you trust.

    Raises
    ------
    MissingDependencyError
        qdrant-client is not installed (``pip install 'askkit[qdrant]'``).
    StoreError
        The local folder is not a qdrant-client storage, is not askkit's own
        (without ``trusted``), or is in use by another client; and, from any
        method, Qdrant cannot be reached or
        answers with an error. Its ``path`` is the URL or folder.

    Examples
    --------
    >>> from qdrant_client import QdrantClient
    >>> from askkit.testing.stores import random_store_rows, write_kimun_qdrant
    >>> client = QdrantClient(":memory:")
    >>> rows, vectors = random_store_rows(6, 4, seed=0)
    >>> _ = write_kimun_qdrant(client, "kimun_embeddings", "notes", rows, vectors, fingerprint="fp")
    >>> store = QdrantStore(client=client)
    >>> store.fingerprint, store.collections()
    ('fp', [Collection(name='notes', notes=2, chunks=6, dimension=4)])
    >>> score, chunk = store.query("notes", vectors[4], k=1)[0]
    >>> chunk["text"] == rows[4]["text"], round(score, 5)
    (True, 1.0)
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        path: str | os.PathLike[str] | None = None,
        collection_prefix: str = DEFAULT_COLLECTION_PREFIX,
        api_key: str | None = None,
        client: Any = None,
        timeout: int | None = None,
        trusted: bool = False,
    ) -> None:
        from askkit._http.redact import redact_url, searchable

        given = [name for name, v in (("url", url), ("path", path), ("client", client)) if v]
        if len(given) != 1:
            raise UsageError(
                "QdrantStore takes exactly one of url (a Qdrant server), path (a local-mode "
                f"folder) or client, not {' and '.join(given) if given else 'none'}"
            )
        self.collection_prefix = collection_prefix
        self._secrets = searchable([api_key]) if api_key else ()
        self._owns = client is None
        if client is not None:
            options = getattr(client, "init_options", None)
            options = options if isinstance(options, dict) else {}
            shown = options.get("url") or options.get("path") or options.get("location")
            shown = shown or options.get("host")
            self.where = redact_url(str(shown)) if shown else f"the given {type(client).__name__}"
            key = options.get("api_key")
            self._secrets = searchable([key]) if isinstance(key, str) and key else ()
            self._client = client
            return
        qdrant_client = _qdrant_client()
        if url:
            self.where = redact_url(url)
            self._client = self._connect(
                lambda: qdrant_client.QdrantClient(
                    url=url, api_key=api_key, timeout=timeout, check_compatibility=False
                )
            )
            return
        folder = Path(os.fspath(path or ""))
        self.where = str(folder)
        if str(path) == ":memory:":
            self._client = qdrant_client.QdrantClient(location=":memory:")
            return
        if not (folder / "meta.json").is_file():
            raise StoreError(
                f"{folder} is not a Qdrant local-mode folder (it has no meta.json); give the "
                "folder a QdrantClient(path=...) wrote, or the url of a Qdrant server",
                path=self.where,
            )
        if not trusted:
            reason = _distrust(folder)
            if reason is not None:
                raise StoreError(
                    f"{folder} is not opened: askkit opens a qdrant-client local-mode folder "
                    "only when it wrote the folder itself and nobody else can write to it, but "
                    f"{reason}. {_UNPICKLES}. Pass "
                    "trusted=True if you trust whoever wrote it, or read the vectors from a "
                    "Qdrant server (url=...)",
                    path=self.where,
                )
        self._client = self._connect(lambda: qdrant_client.QdrantClient(path=str(folder)))

    def _connect(self, make: Callable[[], Any]) -> Any:
        """Build the client; its warnings (an API key over http) point at the caller's line."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                client = make()
            except Exception as exc:  # qdrant-client's own errors, a lock held by another client
                raise self._error("opening it", exc) from None
        for warning in caught:
            warn_user(str(warning.message), warning.category)
        return client

    def _error(self, doing: str, exc: BaseException) -> StoreError:
        from askkit._http.redact import printable, scrub

        text = scrub(printable(f"{type(exc).__name__}: {exc}"), self._secrets)
        return StoreError(f"Qdrant at {self.where}: {doing} failed ({text})", path=self.where)

    def _call(self, doing: str, call: Callable[[], _T]) -> _T:
        try:
            return call()
        except (StoreError, DimensionError, UsageError):
            raise
        except Exception as exc:  # any failure of the client: unreachable, HTTP error, bad reply
            raise self._error(doing, exc) from None

    # -- names

    def collection_name(self, vault_id: str) -> str:
        """kimun's Qdrant collection for a vault: ``<prefix>-<vault id>``, or the id alone."""
        return f"{self.collection_prefix}-{vault_id}" if self.collection_prefix else vault_id

    def _vault_ids(self) -> list[str]:
        response = self._call("listing collections", self._client.get_collections)
        dash = f"{self.collection_prefix}-" if self.collection_prefix else ""
        names = [c.name for c in response.collections if c.name.startswith(dash)]
        return sorted(v for v in (n[len(dash) :] for n in names) if not v.startswith("__"))

    def _dimension(self, vault_id: str) -> int:
        name = self.collection_name(vault_id)
        info = self._call(f"reading collection {name!r}", lambda: self._client.get_collection(name))
        vectors = info.config.params.vectors
        size = getattr(vectors, "size", None)
        if not isinstance(size, int):
            raise StoreError(
                f"Qdrant at {self.where}: collection {name!r} has named vectors "
                f"({sorted(vectors or {})}), not the one unnamed vector kimun stores",
                path=self.where,
            )
        return size

    def _require(self, vault_id: str) -> str:
        name = self.collection_name(vault_id)
        exists = self._call(
            f"looking up collection {name!r}", lambda: self._client.collection_exists(name)
        )
        if not exists or vault_id.startswith("__"):
            ids = self._vault_ids()
            known = ", ".join(repr(i) for i in ids) if ids else "none: it holds no vault yet"
            raise StoreError(
                f"Qdrant at {self.where} has no vault {vault_id!r} (no collection {name!r} under "
                f"the prefix {self.collection_prefix!r}); its vault ids are {known}",
                path=self.where,
            )
        return name

    def _scroll(self, name: str, *, vectors: bool, fields: bool | list[str] = True) -> list[Any]:
        points: list[Any] = []
        offset: Any = None

        def page() -> tuple[list[Any], Any]:
            result: tuple[list[Any], Any] = self._client.scroll(
                name, limit=_PAGE, offset=offset, with_payload=fields, with_vectors=vectors
            )
            return result

        while True:
            found, offset = self._call(f"reading the points of {name!r}", page)
            points += found
            if offset is None:
                return points

    # -- the API

    @property
    def fingerprint(self) -> str | None:
        """The embedder fingerprint kimun recorded, or None (read from Qdrant on each access)."""
        name = self.collection_name(FINGERPRINT_COLLECTION)
        exists = self._call(
            f"looking up collection {name!r}", lambda: self._client.collection_exists(name)
        )
        if not exists:
            return None
        page, _ = self._call(
            f"reading {name!r}",
            lambda: self._client.scroll(name, limit=1, with_payload=True, with_vectors=False),
        )
        value = (page[0].payload or {}).get("fingerprint") if page else None
        return value if isinstance(value, str) else None

    def collections(self) -> list[Collection]:
        """Every vault under the prefix, by name, with its note and chunk counts and dimension.

        Notes are distinct paths, counted by reading every point's ``path``, as
        kimun's own collections page does.
        """
        out = []
        for vault_id in self._vault_ids():
            name = self.collection_name(vault_id)
            points = self._scroll(name, vectors=False, fields=["path"])
            paths = {(p.payload or {}).get("path") for p in points}
            out.append(Collection(vault_id, len(paths), len(points), self._dimension(vault_id)))
        return out

    def load(self, vault_id: str) -> StoredVault:
        """Every point of a vault with its vector, normalised, in point id order (Qdrant's scroll).

        The vectors are those Qdrant stores for a cosine collection: normalised
        (a vector qdrant-client's local mode hands back unnormalised, as it does
        after reopening its folder, is normalised as kimun's SQLite store does).

        Raises
        ------
        StoreError
            No such vault (the message lists the vault ids there are), or a
            point without the one vector of the collection's dimension.
        """
        name = self._require(vault_id)
        dimension = self._dimension(vault_id)
        points = self._scroll(name, vectors=True)
        vectors = []
        for point in points:
            vector = point.vector
            if not isinstance(vector, list) or len(vector) != dimension:
                raise StoreError(
                    f"Qdrant at {self.where}: point {point.id} of {name!r} has no vector of "
                    f"dimension {dimension} (got {type(vector).__name__}), as kimun stores",
                    path=self.where,
                )
            vectors.append(vector)
        matrix = np.asarray(vectors, dtype=np.float32).reshape(len(points), dimension)
        # A Qdrant server hands back the unit vectors it stores for cosine; qdrant-client's
        # local mode, reopened from its folder, hands back the raw vectors it persisted:
        # those are normalised here as kimun's own store would.
        norms = np.linalg.norm(matrix, axis=1)
        raw = (np.abs(norms - 1.0) > _UNIT) & (norms > 0)
        if raw.any():
            matrix[raw] = normalise(matrix[raw])
        matrix.flags.writeable = False
        chunks = [_payload_chunk(p.payload) for p in points]
        frame = pd.DataFrame(
            {c: pd.array([chunk[c] for chunk in chunks], dtype=STRING) for c in COLUMNS}
        )
        return StoredVault(vault_id, frame, matrix)

    def query(
        self, vault_id: str, vector: np.ndarray[Any, Any], k: int = 80
    ) -> list[tuple[float, dict[str, Any]]]:
        """Qdrant's own search, as kimun's server runs it: the ``k`` best chunks, best first.

        Returns ``(score, chunk)`` pairs: the score as Qdrant computes it (cosine
        similarity, float32) widened to float64, the chunk as kimun reads the
        payload (``path``, ``hash``, ``title``, ``date`` or None, ``text``) plus
        the point ``id``. Unlike kimun, an unknown vault raises
        :class:`StoreError` (kimun answers nothing) so that a mistyped id shows.
        """
        query = np.asarray(vector, dtype=np.float32)
        if query.ndim != 1:
            raise UsageError(f"query takes one vector, not {query.ndim}-d data")
        if isinstance(k, bool) or not isinstance(k, int) or k < 0:
            raise UsageError(f"k must be a count of chunks (0 or more), not {k!r}")
        name = self._require(vault_id)
        dimension = self._dimension(vault_id)
        if len(query) != dimension:
            raise DimensionError(
                f"the query vector has dimension {len(query)} but vault {vault_id!r} at "
                f"{self.where} stores {dimension}",
                expected=dimension,
                actual=len(query),
            )
        if k == 0:
            return []
        response = self._call(
            f"searching {name!r}",
            lambda: self._client.query_points(
                name, query=query.tolist(), limit=k, with_payload=True
            ),
        )
        # kimun reads Qdrant's f32 score and widens it; over REST it arrives as a short
        # decimal, so round it to f32 first to report the same f64
        return [
            (float(np.float32(p.score)), {**_payload_chunk(p.payload), "id": str(p.id)})
            for p in response.points
        ]

    def close(self) -> None:
        """Close the client if this store opened it (a given client stays open); idempotent."""
        if self._owns:
            self._client.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<QdrantStore {self.where}, prefix {self.collection_prefix!r}>"
