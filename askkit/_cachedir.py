"""Folders askkit owns: the cache directory tag that marks them, and the check before writing.

askkit writes, replaces and deletes only folders that carry its
``CACHEDIR.TAG`` (a standard cache directory tag, https://bford.info/cachedir/,
whose comment names askkit). :func:`claim` is the one check every writer runs
first (the BM25 index's cache, the dense index's vector store, a model askkit
built): it refuses, with a :class:`~askkit.errors.UsageError` naming the path,
a folder that is a symbolic link or a file, that is the vault, lies inside it
or contains it, or that holds anything without askkit's tag; :func:`mark`
writes the tag. A folder written whole (the BM25 cache, a built model) is
written to a marked temporary sibling and swapped in by :func:`swap_in`.
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from askkit.errors import UsageError

__all__ = [
    "BUILT_MODEL",
    "DENSE_STORE",
    "LOCAL_INDEX",
    "QDRANT_LOCAL",
    "TAG_HEAD",
    "TAG_NAME",
    "cache_root",
    "claim",
    "is_ours",
    "mark",
    "purpose_of",
    "swap_in",
    "tag_text",
]

#: The marker's file name.
TAG_NAME = "CACHEDIR.TAG"
#: How askkit's tag starts: the standard signature, then askkit's name.
TAG_HEAD = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by askkit"
)
#: What each kind of askkit folder holds, as its tag says (a kind never stands in for another).
LOCAL_INDEX = "a local index of a kimun vault"
DENSE_STORE = "askkit's dense index of a kimun vault, in kimun's embeddings.db schema"
QDRANT_LOCAL = "a qdrant-client local-mode store askkit wrote"
BUILT_MODEL = "an embedding model askkit built from installed weights, for fastembed"


def cache_root() -> Path:
    """Where askkit keeps its caches: ``$ASKKIT_CACHE_DIR``, else ``$XDG_CACHE_HOME/askkit``,
    else ``~/.cache/askkit`` (the BM25 indexes, the dense stores, fastembed's models)."""
    explicit = os.environ.get("ASKKIT_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "askkit"


def tag_text(purpose: str, *, lifetime: str) -> str:
    """The whole tag: what the folder holds (``purpose``) and when askkit rewrites it."""
    return (
        f"{TAG_HEAD}: {purpose}.\n# {lifetime}; delete it freely.\n"
        "# For information about cache directory tags, see https://bford.info/cachedir/\n"
    )


def mark(folder: Path, purpose: str, *, lifetime: str) -> None:
    """Write askkit's tag into ``folder`` (which askkit has just claimed)."""
    (folder / TAG_NAME).write_text(tag_text(purpose, lifetime=lifetime), encoding="utf-8")


def is_ours(folder: Path) -> bool:
    """Whether ``folder`` is a real folder (not a link) carrying askkit's marker."""
    tag = folder / TAG_NAME
    try:
        if folder.is_symlink() or not folder.is_dir() or tag.is_symlink() or not tag.is_file():
            return False
        with tag.open("rb") as fh:
            head = fh.read(len(TAG_HEAD.encode()))
    except OSError:
        return False
    return head == TAG_HEAD.encode()


def purpose_of(folder: Path) -> str | None:
    """What an askkit folder holds, as its tag says (``None``: not askkit's, or unreadable).

    Two kinds of folder must never stand in for each other: re-indexing a BM25
    cache replaces its folder whole, which would delete a dense store.
    """
    if not is_ours(folder):
        return None
    try:
        with (folder / TAG_NAME).open("rb") as fh:
            text = fh.read(4096).decode("utf-8", "replace")
    except OSError:
        return None
    first = text[len(TAG_HEAD) :].split("\n", 1)[0]
    return first.removeprefix(": ").removesuffix(".")


def claim(
    folder: Path,
    vault: Path | None,
    *,
    what: str = "cache folder",
    fix: str = "give another cache_dir (--cache-dir): a new or empty folder, or one askkit made",
    earlier: Callable[[Path], bool] | None = None,
    foreign_hint: str = "",
    purpose: str | None = None,
) -> Literal["missing", "empty", "ours"]:
    """Check that askkit may write ``folder``; say whether it is missing, empty or askkit's.

    ``vault`` is the vault's resolved root (``None``: no vault to keep clear
    of). ``earlier`` recognises an untagged folder an earlier askkit wrote,
    which is taken over as askkit's. With ``purpose``, a folder askkit tagged
    for another purpose (a dense store where a BM25 cache goes) is refused too.
    Anything else raises
    :class:`~askkit.errors.UsageError` naming the folder, and nothing is touched.
    """
    if folder.is_symlink():
        raise UsageError(f"the {what} {folder} is a symbolic link; {fix}")
    if vault is not None:
        try:
            real = folder.resolve()
        except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop on Python 3.11
            raise UsageError(f"the {what} {folder} cannot be resolved ({exc}); {fix}") from None
        if real == vault:
            raise UsageError(
                f"the {what} {folder} is the vault itself; askkit never writes into a vault: {fix}"
            )
        if real in vault.parents:
            raise UsageError(
                f"the {what} {folder} contains the vault {vault}, and askkit replaces its "
                f"{what} whole: {fix}"
            )
        if vault in real.parents:
            raise UsageError(
                f"the {what} {folder} is inside the vault {vault}; askkit never writes into "
                f"a vault: {fix}"
            )
    if not folder.exists():
        return "missing"
    if not folder.is_dir():
        raise UsageError(f"the {what} {folder} is a file, not a folder; {fix}")
    if is_ours(folder):
        held = purpose_of(folder)
        if purpose is not None and held != purpose:
            raise UsageError(
                f"the {what} {folder} holds {held or 'another askkit folder'}, not "
                f"{purpose}; askkit keeps each in its own folder: {fix}"
            )
        return "ours"
    try:
        with os.scandir(folder) as entries:
            empty = next(entries, None) is None
    except OSError as exc:
        raise UsageError(f"cannot list the {what} {folder}: {exc.strerror}; {fix}") from None
    if empty:
        return "empty"
    if earlier is not None and earlier(folder):
        return "ours"
    raise UsageError(
        f"the {what} {folder} holds files askkit did not make (it has no askkit "
        f"{TAG_NAME}), and askkit never deletes what it did not create{foreign_hint}: {fix}, "
        "or remove that folder yourself"
    )


def _old_name(folder: Path) -> Path:
    """A free sibling to move the previous folder to: ``<name>.old`` unless that is not askkit's."""
    old = folder.with_name(folder.name + ".old")
    if os.path.lexists(old) and is_ours(old):  # left by an interrupted swap
        shutil.rmtree(old, ignore_errors=True)
    while os.path.lexists(old):  # someone else's: never touched
        old = folder.with_name(f"{folder.name}.old-{secrets.token_hex(4)}")
    return old


def swap_in(tmp: Path, folder: Path, state: Literal["missing", "empty", "ours"]) -> None:
    """Put the finished, marked folder ``tmp`` (a sibling of ``folder``) in ``folder``'s place.

    ``state`` is what :func:`claim` said of ``folder``. A missing or empty
    folder is replaced by one rename (which fails, and leaves ``folder``
    alone, if another writer put something there meanwhile). askkit's previous
    folder is moved aside, the new one renamed in (the previous one is put back
    if that fails), and the previous one deleted only if it carries askkit's
    tag. ``tmp`` is left for the caller to remove if the swap fails.
    """
    if state == "empty":
        folder.rmdir()  # fails, harmlessly, if something appeared in it meanwhile
    if state != "ours":
        tmp.rename(folder)
        return
    old = _old_name(folder)
    folder.rename(old)
    try:
        tmp.rename(folder)
    except OSError:
        old.rename(folder)
        raise
    if is_ours(old):
        shutil.rmtree(old, ignore_errors=True)
