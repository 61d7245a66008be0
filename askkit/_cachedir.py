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

One rule says whether askkit trusts a folder it finds (:func:`untrusted`):
the folder is not a symbolic link and holds none, it and everything in it
belong to the current user, and nobody else can write it; what is in it may
be writable by others only when the folder is private (mode 0700), so that
nobody else can reach it. :func:`claim` applies it to every existing folder
it accepts (an empty one, or askkit's own), and refuses one that breaks it
with a :class:`~askkit.errors.StoreError`: a folder others could write may
hold files askkit did not write, and askkit neither reads them as its own nor
deletes them. Every folder askkit makes is private, so it keeps the rule
under any umask. :func:`writing` turns a failure to make or write a folder (a
cache root that is a file, a full disk) into a
:class:`~askkit.errors.StoreError` naming the folder and what to do.
"""

from __future__ import annotations

import errno
import os
import secrets
import shutil
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from askkit.errors import AskkitError, StoreError, UsageError

__all__ = [
    "BUILT_MODEL",
    "DENSE_STORE",
    "LAB_FOLDER",
    "LOCAL_INDEX",
    "QDRANT_LOCAL",
    "TAG_HEAD",
    "TAG_NAME",
    "Distrust",
    "cache_root",
    "claim",
    "is_ours",
    "mark",
    "purpose_of",
    "refuse_untrusted",
    "swap_in",
    "tag_text",
    "untrusted",
    "writing",
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
LAB_FOLDER = "askkit lab's copies of the notebooks for one vault, with their outputs"


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


# -- the one rule for a folder askkit trusts -------------------------------------------------


@dataclass(frozen=True, slots=True)
class Distrust:
    """Why askkit does not trust a folder: the entry at fault, and what is wrong with it.

    ``problem`` is ``"link"``, ``"owner"`` (another user's), ``"writable"``
    (by other users) or ``"unreadable"``; ``str()`` says it in words.
    """

    path: Path
    problem: Literal["link", "owner", "writable", "unreadable"]
    detail: str

    def __str__(self) -> str:
        return f"{self.path} {self.detail}"


_POSIX = os.name == "posix"
_OTHERS_WRITE = stat.S_IWGRP | stat.S_IWOTH


def _entry_distrust(
    path: Path, st: os.stat_result, me: int | None, *, shared: bool
) -> Distrust | None:
    if stat.S_ISLNK(st.st_mode):
        try:
            target = f" (to {path.readlink()})"
        except OSError:
            target = ""
        return Distrust(path, "link", f"is a symbolic link{target}")
    if me is not None and st.st_uid != me:
        return Distrust(path, "owner", f"belongs to another user (uid {st.st_uid})")
    if _POSIX and shared and st.st_mode & _OTHERS_WRITE:
        mode = stat.S_IMODE(st.st_mode)
        return Distrust(path, "writable", f"can be written by other users (mode {mode:o})")
    return None


def untrusted(folder: Path) -> Distrust | None:
    """Why askkit must not trust what ``folder`` holds (``None``: it may): the one rule.

    The folder is not a symbolic link, and nothing in it is one; it and
    everything in it belong to the current (effective) user; nobody else can
    write the folder, nor anything in it unless the folder is private (no
    access at all for group and others, as every folder askkit makes is), so
    that nobody else can reach it. A folder that breaks the rule may hold files
    askkit did not write, whatever its tag says.

    >>> import tempfile
    >>> untrusted(Path(tempfile.mkdtemp())) is None
    True
    """
    me = os.geteuid() if hasattr(os, "geteuid") else None
    try:
        top = folder.lstat()
    except OSError as exc:
        return Distrust(folder, "unreadable", f"cannot be inspected ({exc.strerror})")
    private = not top.st_mode & 0o077
    failed: list[OSError] = []
    for where, dirs, files in os.walk(folder, onerror=failed.append):
        base = Path(where)
        for name in ["", *dirs, *files]:
            path = base / name if name else base
            try:
                st = path.lstat()
            except OSError as exc:
                return Distrust(path, "unreadable", f"cannot be inspected ({exc.strerror})")
            found = _entry_distrust(path, st, me, shared=path == folder or not private)
            if found is not None:
                return found
    if failed:
        error = failed[0]
        listed = Path(os.fsdecode(error.filename)) if error.filename is not None else folder
        return Distrust(listed, "unreadable", f"cannot be listed ({error.strerror})")
    return None


def refuse_untrusted(folder: Path, what: str, fix: str) -> None:
    """Raise :class:`~askkit.errors.StoreError` if ``folder`` breaks :func:`untrusted`'s rule.

    The message names the folder (as the ``what``), the entry at fault and why,
    says that askkit refuses it rather than rebuilding it, and ends with ``fix``;
    the error's ``path`` is the entry at fault.
    """
    why = untrusted(folder)
    if why is None:
        return
    hint = ""
    if why.problem == "writable":
        hint = (
            f" (if nobody else wrote into it, `chmod -R go-w {folder}` lets askkit use it as it is)"
        )
    raise StoreError(
        f"the {what} {folder} is refused, not rebuilt: {why}, so it may hold files askkit did "
        f"not write, and askkit neither uses such files as its own nor deletes them: {fix}{hint}",
        path=str(why.path),
    )


def _removable(folder: Path) -> bool:
    """Whether askkit may delete ``folder``: its own, and nobody else could have written in it."""
    return is_ours(folder) and untrusted(folder) is None


def claim(
    folder: Path,
    vault: Path | None,
    *,
    what: str = "cache folder",
    fix: str = "give another cache_dir (--cache-dir): a new or empty folder, or one askkit made",
    earlier: Callable[[Path], bool] | None = None,
    foreign_hint: str = "",
    purpose: str | None = None,
    untrusted_fix: str | None = None,
) -> Literal["missing", "empty", "ours"]:
    """Check that askkit may write ``folder``; say whether it is missing, empty or askkit's.

    ``vault`` is the vault's resolved root (``None``: no vault to keep clear
    of). ``earlier`` recognises an untagged folder an earlier askkit wrote,
    which is taken over as askkit's. With ``purpose``, a folder askkit tagged
    for another purpose (a dense store where a BM25 cache goes) is refused too.
    An empty folder, or askkit's own, that breaks :func:`untrusted`'s rule (a
    link inside, another user's, writable by others) raises
    :class:`~askkit.errors.StoreError` saying ``untrusted_fix`` (default: remove
    it yourself, or ``fix``). Anything else raises
    :class:`~askkit.errors.UsageError` naming the folder. Either way nothing is
    touched.
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
    trusted_fix = untrusted_fix or f"remove that folder yourself (askkit makes it again), or {fix}"
    if is_ours(folder):
        held = purpose_of(folder)
        if purpose is not None and held != purpose:
            raise UsageError(
                f"the {what} {folder} holds {held or 'another askkit folder'}, not "
                f"{purpose}; askkit keeps each in its own folder: {fix}"
            )
        refuse_untrusted(folder, what, trusted_fix)
        return "ours"
    try:
        with os.scandir(folder) as entries:
            empty = next(entries, None) is None
    except OSError as exc:
        raise UsageError(f"cannot list the {what} {folder}: {exc.strerror}; {fix}") from None
    if empty:
        refuse_untrusted(folder, what, trusted_fix)
        return "empty"
    if earlier is not None and earlier(folder):
        refuse_untrusted(folder, what, trusted_fix)
        return "ours"
    raise UsageError(
        f"the {what} {folder} holds files askkit did not make (it has no askkit "
        f"{TAG_NAME}), and askkit never deletes what it did not create{foreign_hint}: {fix}, "
        "or remove that folder yourself"
    )


def _old_name(folder: Path) -> Path:
    """A free sibling to move the previous folder to: ``<name>.old`` unless that is not askkit's."""
    old = folder.with_name(folder.name + ".old")
    if os.path.lexists(old) and _removable(old):  # left by an interrupted swap
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
    if _removable(old):
        shutil.rmtree(old, ignore_errors=True)


# -- making and writing a folder -------------------------------------------------------------

_NOT_A_FOLDER = frozenset({errno.ENOTDIR, errno.EEXIST})
_FULL = frozenset({errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC), errno.EFBIG})


def _not_a_folder(path: Path) -> Path | None:
    """The first of ``path`` and its parents, from the root down, that exists but is no folder."""
    for part in [*reversed(path.parents), path]:
        if os.path.lexists(part) and not part.is_dir():
            return part
    return None


def _failure(folder: Path, exc: OSError, *, what: str, fix: str) -> str:
    named = isinstance(exc.filename, str | bytes)
    where = os.fsdecode(exc.filename) if named else str(folder)
    reason = exc.strerror or str(exc) or type(exc).__name__
    detail = f"{where}: {reason}" if named else reason
    blocker = _not_a_folder(Path(where)) if exc.errno in _NOT_A_FOLDER else None
    if blocker is not None:
        return f"cannot make the {what} {folder}: {blocker} is not a folder ({reason}); {fix}"
    if exc.errno in _FULL:
        return (
            f"cannot write the {what} {folder}: the disk holding it is full ({detail}); "
            f"nothing of it was kept: free some space on that disk and run again, or {fix}"
        )
    return f"cannot write the {what} {folder}: {detail}; {fix}"


@contextmanager
def writing(folder: Path, *, what: str, fix: str) -> Iterator[None]:
    """Run the block that makes or writes ``folder``; an :class:`OSError` in it (the cache
    root is a file, the disk is full, no permission) becomes a
    :class:`~askkit.errors.StoreError` naming the folder and saying what to do (``fix``).

    >>> with writing(Path("/dev/null/askkit"), what="cache folder", fix="set ASKKIT_CACHE_DIR"):
    ...     Path("/dev/null/askkit").mkdir(parents=True, exist_ok=True)
    Traceback (most recent call last):
    ...
    askkit.errors.StoreError: cannot make the cache folder /dev/null/askkit: /dev/null is not ...
    """
    try:
        yield
    except AskkitError:
        raise
    except OSError as exc:
        raise StoreError(_failure(folder, exc, what=what, fix=fix), path=str(folder)) from None
