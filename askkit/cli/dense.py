"""Dense retrieval from the command line: ``askkit index --embedder``, ``askkit search --store``,
``askkit stores``.

``askkit index PATH --embedder SPEC`` embeds a vault as kimun's server does
(:class:`askkit.dense.DenseIndex`) into a store in kimun's schema;
``askkit search QUERY --store DIR --vault-id ID --embedder SPEC`` searches a
kimun server's own store (or askkit's) as the server does, askkit embedding
the query (:class:`askkit.dense.StoreRetriever`); ``askkit search QUERY
--vault PATH --embedder SPEC`` searches a vault's :class:`~askkit.dense.DenseIndex`;
``askkit stores DIR`` lists a store's collections and its embedder fingerprint.

An embedder is ``fastembed[:MODEL]`` (kimun's names: ``BGESmallENV15`` or
``Xenova/bge-small-en-v1.5``), ``ollama:URL:MODEL`` or ``openai:URL:MODEL``;
a reranker ``fastembed[:MODEL]`` or ``http:URL:MODEL``. API keys come from the
environment only (:data:`EMBED_KEY_ENV`, :data:`RERANK_KEY_ENV`), never from
an argument, which would show in the process list; a refused key's hint names
the variable.

Embedding a vault shows its progress on stderr (:func:`askkit.cli._terminal.progress_output`):
a bar on a terminal, which a run that fails takes back, so an error stays one
line; on a pipe or in a log, a plain line when the bar starts, every few
seconds and when it ends, and a failing run's one error line comes last.
Every command opens the one store of the vault, model and kimun version in
askkit's cache (:func:`askkit.dense.index.default_store_folder`), so a vault
``askkit index --embedder`` embedded is not embedded again by ``search``,
``run``, ``why``, ``diff`` or a notebook; ``askkit stores`` on askkit's cache
folder lists those stores. ``--json`` output
is always JSON: a score that is not a finite number is printed as ``null``,
as kimun's server (serde_json) writes it, with a warning on stderr.

Nothing heavy is imported until a command runs, so ``askkit --help`` stays fast.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

from askkit._warn import warn_user
from askkit.cli import _terminal, arguments
from askkit.errors import UsageError, VaultError

if TYPE_CHECKING:
    from askkit.dense.embedders import Embedder
    from askkit.dense.rerankers import Reranker

__all__ = [
    "EMBED_KEY_ENV",
    "RERANK_KEY_ENV",
    "add_index_options",
    "add_search_options",
    "index_command",
    "open_embedder",
    "register",
    "search_command",
    "stores_command",
    "vault_search_command",
]

#: The environment variable holding the embedder's API key (``openai:``), if it needs one.
EMBED_KEY_ENV = "ASKKIT_EMBED_API_KEY"
#: The environment variable holding the reranker's API key (``http:``), if it needs one.
RERANK_KEY_ENV = "ASKKIT_RERANK_API_KEY"

_EMBEDDER_HELP = (
    "the embedder: fastembed[:MODEL] (e.g. fastembed:BGESmallENV15), ollama:URL:MODEL or "
    f"openai:URL:MODEL (API key from ${EMBED_KEY_ENV})"
)
_RERANKER_HELP = (
    "rerank each pool as kimun does: fastembed[:MODEL] or http:URL:MODEL "
    f"(API key from ${RERANK_KEY_ENV})"
)


def _key(name: str) -> str | None:
    return os.environ.get(name) or None


def open_embedder(spec: str, *, progress: bool = True) -> Embedder:
    """The embedder ``spec`` names, its API key from :data:`EMBED_KEY_ENV` (``openai:`` only)."""
    from askkit.dense.embedders import parse_embedder

    if spec.startswith("openai:"):  # the others take no key
        return parse_embedder(
            spec, api_key=_key(EMBED_KEY_ENV), key_env=EMBED_KEY_ENV, progress=progress
        )
    return parse_embedder(spec, progress=progress)


def _reranker(spec: str | None) -> Reranker | None:
    if spec is None:
        return None
    from askkit.dense.rerankers import parse_reranker

    if spec.startswith("http:"):
        return parse_reranker(spec, api_key=_key(RERANK_KEY_ENV), key_env=RERANK_KEY_ENV)
    return parse_reranker(spec)


def _vault_root(path: str) -> Path:
    root = Path(path).expanduser()
    if not root.exists():
        raise VaultError(f"vault not found: {root} does not exist")
    if not root.is_dir():
        raise VaultError(f"not a vault: {root} is not a folder")
    return root


def _open_dense_index(path: str, args: argparse.Namespace, *, progress: bool) -> Any:
    root = _vault_root(path)
    embedder = open_embedder(args.embedder, progress=progress)
    from askkit.dense.index import DenseIndex
    from askkit.vault.chunking import DEFAULT_KIMUN

    store: str | bool | None = getattr(args, "cache_dir", None)
    if getattr(args, "no_cache", False):
        store = False
    return DenseIndex(
        root,
        embedder,
        store=store,
        vault_id=getattr(args, "vault_id", None),
        reranker=_reranker(getattr(args, "reranker", None)),
        progress=progress,
        kimun=getattr(args, "kimun_version", None) or DEFAULT_KIMUN,
    )


# -- askkit index PATH --embedder SPEC -------------------------------------------------------


def add_index_options(p: argparse.ArgumentParser) -> None:
    """Options of ``askkit index`` that make it a dense index."""
    p.add_argument(
        "--embedder",
        metavar="SPEC",
        help="embed the vault as kimun's server does, into a store in kimun's schema: "
        + _EMBEDDER_HELP,
    )
    p.add_argument(
        "--vault-id",
        metavar="ID",
        help="with --embedder: the store's collection for this vault (default: its folder name)",
    )


def index_command(args: argparse.Namespace, console: Console) -> int:
    """Run ``askkit index PATH --embedder SPEC``."""
    with _terminal.progress_output() as shown:  # on a pipe: a line every few seconds
        index = _open_dense_index(args.path, args, progress=shown)
    report = index.last_report
    console.print(
        Text(
            f"{index.vault.root}: {len(index.vault)} notes, {len(index)} chunks, "
            f"embedded with {index.embedder.name}"
        )
    )
    console.print(Text(str(report)))
    console.print(
        Text(f"{index.last_embedded} chunks embedded, {index.last_reused} stored vectors reused")
    )
    if index.store_folder is not None:
        console.print(
            Text(
                f"vectors stored in {index.store_folder} (vault id {index.vault_id})", style="dim"
            ),
            soft_wrap=True,
        )
    for file, why in report.skipped.items():
        console.print(Text(f"skipped {file}: {why}", style="yellow"))
    return 0


# -- askkit search QUERY --store DIR | --vault PATH --embedder SPEC ----------------------------


def add_search_options(p: argparse.ArgumentParser) -> None:
    """Options of ``askkit search`` for dense retrieval (``--store``, or ``--vault`` dense)."""
    p.add_argument(
        "--embedder",
        metavar="SPEC",
        help="with --store (required) or --vault: embed the query with "
        + _EMBEDDER_HELP
        + "; with --json, a score that is not a finite number prints as null, as kimun's "
        "server writes it",
    )
    p.add_argument("--reranker", metavar="SPEC", help="with --embedder: " + _RERANKER_HELP)


def check_search_options(args: argparse.Namespace) -> None:
    """Refuse dense options where they do not apply, before any work."""
    if args.store is not None:
        if not args.vault_id:
            raise UsageError(
                "--vault-id is required with --store: the vault id the store keeps your vault "
                "under (askkit stores DIR lists them)"
            )
        if not args.embedder:
            raise UsageError(
                "--embedder is required with --store: the embedder the store was built with "
                "(askkit stores DIR shows its fingerprint)"
            )
    elif args.server is not None and (args.embedder or args.reranker):
        raise UsageError(
            "--embedder and --reranker apply to --store and --vault; a kimun server "
            "(--server) embeds and reranks with its own"
        )
    if args.reranker and not args.embedder:
        raise UsageError("--reranker needs --embedder: it reranks a dense pool")


def _print_chunks(
    args: argparse.Namespace,
    console: Console,
    chunks: list[Any],
    elapsed_ms: float,
    where: str,
    *,
    vault: Any = None,
) -> int:
    """Print a search's chunks: the wire JSON, or the table every search prints
    (:func:`askkit.cli._console.search_title`; with the ``vault``, a section before its
    note's first heading is named by the note's title)."""
    if args.json:
        rows = [c.to_dict() for c in chunks]
        _null_non_finite_scores(rows)
        payload = {"chunks": rows, "query_time_ms": round(elapsed_ms)}
        sys.stdout.write(_terminal.json_text(payload))
        return 0
    from askkit.cli._console import print_sources, search_title
    from askkit.sources import AskSource

    sources = AskSource.from_chunks(chunks)
    title = search_title(len(sources), args.query, elapsed_ms, where=where)
    empty = "the store holds no chunk for this vault" if where else "no chunk matched"
    print_sources(console, sources, title=title, empty=empty, vault=vault)
    return 0


def _null_non_finite_scores(rows: list[dict[str, Any]]) -> None:
    """Make each score JSON cannot carry (NaN, infinite) ``null``, as serde_json writes it
    in kimun's server, and warn: ``NaN`` and ``Infinity`` are not JSON."""
    bad = [row for row in rows if not math.isfinite(row["similarity_score"])]
    for row in bad:
        row["similarity_score"] = None
    if bad:
        notes = sorted({str(row["path"]) for row in bad})
        paths = ", ".join(notes[:3]) + (f" and {len(notes) - 3} more" if len(notes) > 3 else "")
        warn_user(
            f"{len(bad)} chunk{'s' if len(bad) > 1 else ''} scored a non-finite number, "
            f"printed as null as kimun's server writes it (JSON has no NaN): {paths}"
        )


def search_command(args: argparse.Namespace, console: Console) -> int:
    """Run ``askkit search QUERY --store DIR --vault-id ID --embedder SPEC [--reranker SPEC]``."""
    from askkit.dense import StoreRetriever
    from askkit.dense.store import KimunStore

    with KimunStore(args.store) as store:  # a bad store fails before a model loads
        retriever = StoreRetriever(
            store,
            args.vault_id,
            open_embedder(args.embedder, progress=not args.json and _terminal.progress_bars()),
            reranker=_reranker(args.reranker),
            progress=not args.json and _terminal.progress_bars(),
        )
    t0 = time.perf_counter()
    chunks = retriever.search(args.query, args.k, per_note=not args.all_chunks)
    elapsed_ms = (time.perf_counter() - t0) * 1000
    return _print_chunks(args, console, chunks, elapsed_ms, f"in {store.path}")


def vault_search_command(args: argparse.Namespace, console: Console) -> int:
    """Run ``askkit search QUERY --vault PATH --embedder SPEC``: a dense index of the vault."""
    with _terminal.progress_output() as shown:  # on a pipe: a line every few seconds
        index = _open_dense_index(args.vault, args, progress=shown)
    t0 = time.perf_counter()
    chunks = index.search(args.query, args.k, per_note=not args.all_chunks)
    elapsed_ms = (time.perf_counter() - t0) * 1000
    return _print_chunks(args, console, chunks, elapsed_ms, "", vault=index.vault)


# -- askkit stores DIR ------------------------------------------------------------------------


def register(sub: Any) -> None:
    """Add ``askkit stores`` to the command line."""
    p = sub.add_parser(
        "stores",
        help="list the vaults in a kimun vector store (or askkit's) and its embedder "
        "fingerprint; on askkit's cache folder, the stores inside it",
        description="List the collections (vault ids) of a kimun server's SQLite vector store, "
        "the folder of its embeddings.db ([vector_db] path in server.toml), or of a store "
        "askkit index --embedder wrote: notes, chunks and dimension of each, and the "
        "fingerprint of the embedder that built it. Given askkit's cache folder "
        "($ASKKIT_CACHE_DIR, else ~/.cache/askkit) or any folder holding askkit's stores, "
        "list the stores inside it: folder, vault, embedder, kimun version, notes, chunks.",
    )
    p.add_argument(
        "store",
        type=arguments.store_location,
        help="the store folder or its embeddings.db, or askkit's cache folder",
    )
    p.add_argument("--json", action="store_true", help="print the listing as JSON")
    p.set_defaults(func=stores_command)


def _is_cache(path: Path) -> bool:
    """Whether ``path`` is a folder of askkit's stores rather than a store: no
    ``embeddings.db`` in it, and askkit's cache folder, or one holding askkit's folders."""
    from askkit._cachedir import cache_root
    from askkit.dense.cached import holds_askkit_folders
    from askkit.dense.store import DB_FILE

    if not path.is_dir() or os.path.lexists(path / DB_FILE):
        return False
    try:
        is_root = path.resolve() == cache_root().resolve()
    except OSError:
        is_root = False
    return is_root or holds_askkit_folders(path)


def _cached_stores_command(args: argparse.Namespace, console: Console, folder: Path) -> int:
    """Run ``askkit stores CACHE_DIR``: askkit's dense stores inside a folder."""
    from askkit.dense.cached import cached_stores

    stores = cached_stores(folder)
    if args.json:
        payload = {"cache": str(folder), "stores": [s.to_dict() for s in stores]}
        sys.stdout.write(_terminal.json_text(payload))
        return 0
    console.print(Text(f"askkit's dense stores in {folder}: {len(stores)}"), soft_wrap=True)
    for s in stores:
        embedder = s.embedder or "(not recorded)"
        if s.fingerprint:
            embedder += f" (fingerprint {s.fingerprint})"
        size = f"{s.notes} notes, {s.chunks} chunks"
        if s.dimension is not None:
            size += f", {s.dimension}-d"
        console.print(Text(s.folder.name, style="bold"), soft_wrap=True)
        for name, value in (
            ("vault", s.vault or "(not recorded)"),
            ("embedder", embedder),
            ("kimun", s.kimun or "(not recorded)"),
            ("holds", size),
        ):
            console.print(Text(f"  {name + ':':10}{value}"), soft_wrap=True)
        if s.error is not None:
            console.print(Text(f"  unreadable: {s.error}", style="yellow"), soft_wrap=True)
    if not stores:
        console.print(
            Text(
                "no dense store yet: askkit index VAULT --embedder SPEC makes one", style="yellow"
            ),
            soft_wrap=True,
        )
    return 0


def stores_command(args: argparse.Namespace, console: Console) -> int:
    """Run ``askkit stores DIR``: a store's collections, or the stores in askkit's cache."""
    from askkit.dense.store import KimunStore

    folder = Path(args.store).expanduser()
    if _is_cache(folder):
        return _cached_stores_command(args, console, folder)
    with KimunStore(args.store) as store:
        fingerprint = store.fingerprint
        collections = store.collections()
        path = store.path
    rows = [
        {"vault_id": c.name, "notes": c.notes, "chunks": c.chunks, "dimension": c.dimension}
        for c in collections
    ]
    if args.json:
        payload = {"store": str(path), "fingerprint": fingerprint, "collections": rows}
        sys.stdout.write(_terminal.json_text(payload))
        return 0
    from askkit.cli._console import records_table

    shown = [{"vault id": r["vault_id"], **{k: r[k] for k in r if k != "vault_id"}} for r in rows]
    columns = ["vault id", "notes", "chunks", "dimension"]
    console.print(records_table(shown, columns, title=str(path)))
    if not rows:
        console.print(Text("the store holds no collection", style="yellow"))
    console.print(Text(f"embedder fingerprint: {fingerprint or '(none recorded)'}"))
    return 0
