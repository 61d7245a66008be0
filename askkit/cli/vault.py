"""``askkit index`` and ``askkit search --vault``: the local index from the command line."""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from askkit.cli import _terminal, arguments
from askkit.cli._console import print_sources, search_title
from askkit.errors import UsageError, VaultError
from askkit.sources import AskSource

__all__ = [
    "add_kimun_option",
    "add_search_options",
    "check_kimun_option",
    "kimun_version",
    "register",
    "search_command",
]

#: How many files :func:`_what_it_holds` counts at most (a folder of no notes may be huge).
_COUNT_CAP = 100_000

_KIMUN_HELP = (
    "the kimun version whose chunker cuts the notes: 0.18 (default: kimun's single note walk) "
    "or 0.17 (the content extractor before it, as a server that indexed the vault earlier "
    "still holds a note until it is edited)"
)


def add_kimun_option(p: argparse.ArgumentParser, *, prefix: str = "") -> None:
    """``--kimun-version``: which kimun chunker cuts the notes (kimun's newest by default)."""
    from askkit.vault.chunking import KIMUN_VERSIONS

    p.add_argument("--kimun-version", choices=KIMUN_VERSIONS, help=prefix + _KIMUN_HELP)


def kimun_version(args: argparse.Namespace) -> Any:
    """The chunker version ``--kimun-version`` names, kimun's newest when not given."""
    from askkit.vault.chunking import DEFAULT_KIMUN

    return getattr(args, "kimun_version", None) or DEFAULT_KIMUN


def check_kimun_option(args: argparse.Namespace) -> None:
    """Refuse ``--kimun-version`` where askkit cuts no notes (a server, a server's store)."""
    if getattr(args, "kimun_version", None) and getattr(args, "vault", None) is None:
        raise UsageError(
            "--kimun-version applies to --vault: a kimun server (--server) and its store "
            "(--store) hold the chunks its own kimun cut"
        )


def _open_index(path: str, args: argparse.Namespace, *, progress: bool) -> Any:
    root = Path(path).expanduser()
    if not root.exists():
        raise VaultError(f"vault not found: {root} does not exist")
    if not root.is_dir():
        raise VaultError(f"not a vault: {root} is not a folder")
    from askkit.retrieve.local import LocalIndex  # after the checks: a slow import

    cache: str | bool | None = getattr(args, "cache_dir", None)
    if getattr(args, "no_cache", False):
        cache = False
    return LocalIndex(root, cache_dir=cache, progress=progress, kimun=kimun_version(args))


def _what_it_holds(root: Path) -> str:
    """What a folder holds instead of notes: ``12 .txt files and 1 other file``, the
    ``.md`` files in hidden folders (which kimun skips) named apart; counted up to a cap."""
    counts: dict[str, int] = {}
    seen = 0
    for folder, subfolders, files in os.walk(root):
        hidden = any(part.startswith(".") for part in Path(folder).relative_to(root).parts)
        subfolders.sort()
        for name in files:
            seen += 1
            suffix = Path(name).suffix  # as written: kimun takes `.md` alone, not `.MD`
            hidden_file = hidden or name.startswith(".")
            kind = f"{suffix} files" if suffix else "files without an extension"
            if hidden_file:
                kind = f"hidden {suffix} files" if suffix else "hidden files"
            counts[kind] = counts.get(kind, 0) + 1
        if seen >= _COUNT_CAP:
            break
    if not counts:
        return "it is empty"
    parts = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    named = [f"{n} {kind.replace('files', 'file') if n == 1 else kind}" for kind, n in parts[:4]]
    rest = sum(n for _, n in parts[4:])
    if rest:
        named.append(f"{rest} other file{'' if rest == 1 else 's'}")
    listed = ", ".join(named[:-1]) + (" and " if len(named) > 1 else "") + named[-1]
    return f"it holds {'at least ' if seen >= _COUNT_CAP else ''}{listed}"


def _check_notes(path: str) -> None:
    """Refuse a folder with no markdown note, saying what it holds: before BM25 or an
    embedder indexes nothing and reports success. The index lists the vault again,
    with its own warnings (an unreadable entry is warned about then, once)."""
    root = Path(path).expanduser()
    if not root.exists():
        raise VaultError(f"vault not found: {root} does not exist")
    if not root.is_dir():
        raise VaultError(f"not a vault: {root} is not a folder")
    from askkit.vault import Vault

    vault = Vault(root)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        notes = vault.notes()
    if notes:
        return
    for warning in caught:  # the index will not list it again: say what was skipped now
        warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    n = len(vault.skipped)
    skipped = f"; {n} entr{'y' if n == 1 else 'ies'} skipped (see the warnings)" if n else ""
    raise VaultError(
        f"no markdown notes in {vault.root} (kimun indexes the *.md files outside hidden "
        f"folders): {_what_it_holds(vault.root)}{skipped}; give the folder that holds your notes"
    )


def _cmd_index(args: argparse.Namespace, console: Console) -> int:
    _check_notes(args.path)
    if args.embedder:
        from askkit.cli import dense as _cli_dense

        return _cli_dense.index_command(args, console)
    if args.vault_id is not None:
        raise UsageError("--vault-id applies to a dense index: give --embedder too")
    index = _open_index(args.path, args, progress=_terminal.progress_bars())
    report = index.last_report
    console.print(Text(f"{index.vault.root}: {len(index.vault)} notes, {len(index)} chunks"))
    console.print(Text(str(report)))
    if index.cache_dir is not None:
        console.print(Text(f"index cached in {index.cache_dir}", style="dim"))
    for file, why in report.skipped.items():
        console.print(Text(f"skipped {file}: {why}", style="yellow"))
    return 0


def register(sub: Any) -> None:
    """Add ``askkit index`` to the command line."""
    p = sub.add_parser(
        "index",
        help="index a vault locally (kimun sections, BM25; or embedded, with --embedder)",
    )
    p.add_argument("path", help="the vault folder")
    cache = p.add_mutually_exclusive_group()  # a cache folder and no cache contradict
    cache.add_argument(
        "--cache-dir",
        type=arguments.cache_folder,
        help="where the index (with --embedder: its vector store) persists "
        "(default ~/.cache/askkit)",
    )
    cache.add_argument("--no-cache", action="store_true", help="index in memory only")
    add_kimun_option(p)
    from askkit.cli import dense as _cli_dense

    _cli_dense.add_index_options(p)
    p.set_defaults(func=_cmd_index)


def add_search_options(p: argparse.ArgumentParser) -> None:
    """Options of ``askkit search`` that apply to ``--vault``."""
    cache = p.add_mutually_exclusive_group()  # a cache folder and no cache contradict
    cache.add_argument(
        "--cache-dir", type=arguments.cache_folder, help="with --vault: where the index persists"
    )
    cache.add_argument("--no-cache", action="store_true", help="with --vault: index in memory only")
    add_kimun_option(p, prefix="with --vault: ")
    p.add_argument(
        "--all-chunks",
        action="store_true",
        help="with --vault or --store: every matching chunk, not one per note as kimun's server "
        "returns",
    )


def search_command(args: argparse.Namespace, console: Console) -> int:
    """Run ``askkit search QUERY --vault PATH``."""
    index = _open_index(args.vault, args, progress=not args.json and _terminal.progress_bars())
    t0 = time.perf_counter()
    chunks = index.search(args.query, args.k, per_note=not args.all_chunks)
    elapsed_ms = (time.perf_counter() - t0) * 1000
    if args.json:
        payload = {"chunks": [c.to_dict() for c in chunks], "query_time_ms": round(elapsed_ms)}
        sys.stdout.write(_terminal.json_text(payload))
        return 0
    sources = AskSource.from_chunks(chunks)
    print_sources(
        console,
        sources,
        title=search_title(len(sources), args.query, elapsed_ms),
        empty="no chunk contains any of the query's terms",
        vault=index.vault,
    )
    return 0
