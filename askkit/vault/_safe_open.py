"""Opening and listing inside the vault root without letting the system follow a link.

The rule behind :class:`~askkit.vault.Vault`: nothing outside the vault root is
ever opened, even when a link is swapped in between a check and a read.

- Every read starts from a descriptor of the vault root (:func:`open_root`) and
  walks to the note one component at a time, each opened relative to its
  folder's descriptor with ``O_NOFOLLOW`` (:func:`walk_to`). A symbolic link
  met on the way is read and its target walked the same way, only while it
  stays inside the root; a link leaving the vault, a dangling link or a link
  loop is refused with :class:`Refused`.
- The entry reached must be a regular file, checked on the path and again with
  ``fstat`` on the opened descriptor. Everything is opened with ``O_NONBLOCK``,
  so a FIFO swapped in is refused, never waited on.
- Listing (:func:`list_vault`) is iterative, depth first, and never descends
  into a linked folder; it keeps at most ``MAX_OPEN_FOLDERS`` folder
  descriptors open (deeper ones are reopened from the root and checked to be
  the same folder) and stops ``MAX_DEPTH`` levels down. Whatever it does not
  list or cannot read as a note is recorded in :class:`Scan` with the reason.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from askkit.errors import VaultError
from askkit.sources import VaultPath

__all__ = [
    "MAX_DEPTH",
    "MAX_OPEN_FOLDERS",
    "FolderLister",
    "Refused",
    "Scan",
    "list_folder",
    "list_vault",
    "open_root",
    "walk_to",
]

_SUFFIX = ".md"

#: Symbolic links followed while opening one note before it counts as a loop (as Linux).
_MAX_LINKS = 40
#: Times one component is opened again when it changes under the reader.
_MAX_RETRIES = 8
#: Folders deeper than this are not listed (their skip is recorded): no path to them
#: fits in the 4,096 bytes most systems allow, so no other program can open them.
MAX_DEPTH = 2048
#: Folder descriptors the listing keeps open at once; deeper ones are reopened from the root.
MAX_OPEN_FOLDERS = 64
#: How many skipped entries one listing warning names.
_WARN_NAMES = 5

# O_NONBLOCK everywhere: a FIFO swapped in is refused by fstat, never waited on.
_ROOT_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NONBLOCK | os.O_CLOEXEC
_DIR_FLAGS = _ROOT_FLAGS | os.O_NOFOLLOW
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
# What opening a component that was just swapped for a link (or a file) reports.
_SWAPPED = frozenset({errno.ELOOP, errno.EMLINK, errno.ENOTDIR})
_OUTSIDE = "symbolic link to a file outside the vault"


class Refused(VaultError):
    """Why a vault entry is not read; the listing and the vault report it with its file."""

    def __init__(self, reason: str, *, warn: bool = True) -> None:
        super().__init__(reason)
        self.reason = reason
        #: Whether listing warns about the skip (links leaving the vault are skipped silently).
        self.warn = warn


def open_root(root: Path) -> int:
    """A descriptor of the vault folder, the start of every walk; VaultError if it fails."""
    try:
        return os.open(root, _ROOT_FLAGS)
    except OSError as exc:
        raise VaultError(f"cannot open the vault folder {root}: {exc.strerror}") from None


# -- opening inside the root without following links --------------------------------------


def _not_regular(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder, not a note file"
    kinds = [
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ]
    kind = next((name for test, name in kinds if test(mode)), "a special file")
    return f"{kind}, not a regular file"


def _components(parts: list[str]) -> list[str]:
    """``parts`` without empty and ``.`` components, reversed for popping."""
    return [p for p in reversed(parts) if p not in {"", "."}]


def _open_folder(root_fd: int, names: list[str]) -> int:
    """A new descriptor of the folder ``names`` below the root, no link followed."""
    fd = os.dup(root_fd)
    try:
        for name in names:
            child = os.open(name, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


class _Cursor:
    """A folder inside the vault, held by a descriptor, with its path from the root."""

    __slots__ = ("fd", "names", "owned", "root_fd")

    def __init__(self, root_fd: int, fd: int, names: tuple[str, ...]) -> None:
        self.root_fd = root_fd
        self.fd = fd
        self.names = list(names)
        self.owned = False  # the starting descriptor belongs to the caller

    def _move(self, fd: int, names: list[str]) -> None:
        if self.owned:
            os.close(self.fd)
        self.fd, self.names, self.owned = fd, names, fd != self.root_fd

    def enter(self, name: str) -> None:
        self._move(os.open(name, _DIR_FLAGS, dir_fd=self.fd), [*self.names, name])

    def up(self) -> None:
        names = self.names[:-1]
        self._move(_open_folder(self.root_fd, names), names)

    def to_root(self) -> None:
        self._move(self.root_fd, [])

    def close(self) -> None:
        if self.owned:
            os.close(self.fd)
            self.owned = False


def _inside_parts(root: Path, target: str) -> list[str] | None:
    """The components below ``root`` of an absolute link target, or None if it leaves."""
    try:
        return list(PurePosixPath(target).relative_to(root).parts)
    except ValueError:
        pass
    # The target may name the vault through another path (a linked parent folder);
    # the parts found are then walked without following links, like any others.
    try:
        return list(Path(os.path.realpath(target)).relative_to(root).parts)
    except ValueError:
        return None


class _Walk:
    """Reach a path from a cursor, following links only while they stay inside the root.

    Every component is opened relative to its folder's descriptor with
    ``O_NOFOLLOW``; a link is read and its target walked the same way, so no
    link swapped in between two steps can lead outside. The entry reached
    must be a regular file. Raises :class:`Refused`.
    """

    __slots__ = ("cursor", "links", "pending", "retries", "root", "target")

    def __init__(self, root: Path, cursor: _Cursor, parts: list[str]) -> None:
        self.root = root
        self.cursor = cursor
        self.pending = _components(parts)
        self.links = 0
        self.retries = 0
        self.target: str | None = None  # the last link's target, for messages

    def run(self, *, open_file: bool) -> tuple[int, os.stat_result]:
        """The entry's stat and, with ``open_file``, a descriptor (else -1).

        The file is opened with ``O_NONBLOCK`` (a FIFO swapped in never blocks)
        and checked again with ``fstat`` on the descriptor.
        """
        while self.pending:
            name = self.pending.pop()
            where = "/".join([*self.cursor.names, name])
            if name == "..":
                self._up(where)
                continue
            st = self._lstat(name, where)
            if stat.S_ISLNK(st.st_mode):
                self._follow(name, where)
            elif self.pending:
                self._enter(name, where, st)
            elif not stat.S_ISREG(st.st_mode):
                raise Refused(_not_regular(st.st_mode))
            elif not open_file:
                return -1, st
            else:
                opened = self._open(name, where)
                if opened is not None:
                    return opened
        raise Refused("a folder, not a note file")

    def _retry(self, name: str, where: str) -> None:
        self.retries += 1
        if self.retries > _MAX_RETRIES:
            raise Refused(f"{where!r} kept changing while it was opened; try again")
        self.pending.append(name)

    def _up(self, where: str) -> None:
        if not self.cursor.names:
            raise Refused(f"{_OUTSIDE} ({self.target!r})", warn=False)
        try:
            self.cursor.up()
        except OSError as exc:
            raise Refused(f"folder {where!r} changed while it was read: {exc.strerror}") from None

    def _lstat(self, name: str, where: str) -> os.stat_result:
        try:
            return os.stat(name, dir_fd=self.cursor.fd, follow_symlinks=False)
        except FileNotFoundError:
            if self.target is None:
                raise Refused(f"{where!r} does not exist") from None
            raise Refused(
                f"dangling symbolic link: its target {self.target!r} does not exist"
            ) from None
        except OSError as exc:
            raise Refused(f"cannot open {where!r}: {exc.strerror}") from None

    def _follow(self, name: str, where: str) -> None:
        self.links += 1
        if self.links > _MAX_LINKS:
            raise Refused(f"symbolic link loop: more than {_MAX_LINKS} links from {where!r}")
        try:
            target = os.readlink(name, dir_fd=self.cursor.fd)
        except OSError:  # no longer a link: look again
            self._retry(name, where)
            return
        self.target = target
        if target.startswith("/"):
            inside = _inside_parts(self.root, target)
            if inside is None:
                raise Refused(f"{_OUTSIDE} ({target!r})", warn=False)
            self.cursor.to_root()
            self.pending.extend(_components(inside))
        else:
            self.pending.extend(_components(target.split("/")))

    def _enter(self, name: str, where: str, st: os.stat_result) -> None:
        if not stat.S_ISDIR(st.st_mode):
            raise Refused(f"{where!r} is not a folder")
        try:
            self.cursor.enter(name)
        except OSError as exc:
            if exc.errno not in _SWAPPED and exc.errno != errno.ENOENT:
                raise Refused(f"cannot open folder {where!r}: {exc.strerror}") from None
            self._retry(name, where)

    def _open(self, name: str, where: str) -> tuple[int, os.stat_result] | None:
        try:
            fd = os.open(name, _FILE_FLAGS, dir_fd=self.cursor.fd)
        except OSError as exc:
            if exc.errno not in _SWAPPED and exc.errno != errno.ENOENT:
                raise Refused(f"cannot open {where!r}: {exc.strerror}") from None
            self._retry(name, where)
            return None
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode):
            os.close(fd)
            raise Refused(_not_regular(opened.st_mode))
        return fd, opened


def walk_to(
    root: Path, root_fd: int, parts: list[str], *, open_file: bool
) -> tuple[int, os.stat_result]:
    """Walk from the root's descriptor to the regular file ``parts``; raises :class:`Refused`.

    Returns its stat and, with ``open_file``, a descriptor the caller closes
    (else -1). ``root_fd`` stays open.
    """
    cursor = _Cursor(root_fd, root_fd, ())
    try:
        return _Walk(root, cursor, parts).run(open_file=open_file)
    finally:
        cursor.close()


# -- listing --------------------------------------------------------------------------------


@dataclass(slots=True)
class _Folder:
    """A folder being listed: its path, descriptor (None once closed to save descriptors),
    identity, and the subfolders still to visit (reversed)."""

    parts: tuple[str, ...]
    fd: int | None
    ident: tuple[int, int]
    subdirs: list[str]

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


@dataclass(slots=True)
class Scan:
    """What one listing found."""

    root: Path
    files: dict[VaultPath, Path] = field(default_factory=dict)
    collisions: dict[VaultPath, list[Path]] = field(default_factory=dict)
    skipped: dict[Path, str] = field(default_factory=dict)
    refused: dict[VaultPath, tuple[Path, str]] = field(default_factory=dict)
    warned: list[tuple[Path, str]] = field(default_factory=list)
    visited: set[tuple[int, int]] = field(default_factory=set)

    def add(self, parts: tuple[str, ...], file: Path) -> None:
        vp = VaultPath("/".join(parts))
        if vp in self.files:
            self.collisions.setdefault(vp, [self.files[vp]]).append(file)
        else:
            self.files[vp] = file

    def skip(self, parts: tuple[str, ...], reason: str, *, warn: bool = True) -> None:
        file = self.root.joinpath(*parts)
        self.skipped[file] = reason
        self.refused.setdefault(VaultPath("/".join(parts)), (file, reason))
        if warn:
            self.warned.append((file, reason))

    def warning(self, seen: set[tuple[Path, str]]) -> str | None:
        """One line naming the skips not in ``seen`` (then added to it), or None."""
        new = [skip for skip in self.warned if skip not in seen]
        seen.update(new)
        if not new:
            return None
        named = "; ".join(
            f"{f.relative_to(self.root).as_posix()!r}: {r}" for f, r in new[:_WARN_NAMES]
        )
        more = len(new) - _WARN_NAMES
        tail = f"; and {more} more" if more > 0 else ""
        count = len(new)
        return (
            f"vault {self.root}: skipped {count} entr{'y' if count == 1 else 'ies'} "
            f"that cannot be read as notes ({named}{tail}); see Vault.skipped"
        )


def _utf8(name: str) -> bool:
    """Whether a file name decoded by the system (surrogateescape) was UTF-8."""
    if name.isascii():
        return True
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _ident(st: os.stat_result) -> tuple[int, int]:
    return (st.st_dev, st.st_ino)


def list_folder(scan: Scan, root_fd: int, fd: int, parts: tuple[str, ...]) -> list[str]:
    """List one folder's notes into ``scan``; return its subfolders, reversed for popping."""
    subdirs: list[str] = []
    try:
        with os.scandir(fd) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError as exc:
        scan.skip(parts, f"folder cannot be listed: {exc.strerror}")
        return subdirs
    for entry in entries:
        name = entry.name
        if name.startswith("."):
            continue
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
            is_file = entry.is_file(follow_symlinks=False)
            is_link = entry.is_symlink()
        except OSError:  # gone since the folder was read
            continue
        if (is_dir or name.endswith(_SUFFIX)) and not _utf8(name):
            # a name the file system holds as bytes that are not UTF-8: no vault
            # path, wire title or cache can carry it
            scan.skip((*parts, name), "its name is not UTF-8; it is not listed")
            continue
        if is_dir:
            subdirs.append(name)
        if not name.endswith(_SUFFIX):
            continue
        here = (*parts, name)
        if is_file:
            scan.add(here, scan.root.joinpath(*here))
        elif is_dir:
            scan.skip(here, "a folder named like a note; its notes are listed, it is not read")
        elif is_link:
            cursor = _Cursor(root_fd, fd, parts)
            try:
                _Walk(scan.root, cursor, [name]).run(open_file=False)
            except Refused as refusal:
                scan.skip(here, refusal.reason, warn=refusal.warn)
                continue
            finally:
                cursor.close()
            scan.add(here, scan.root.joinpath(*here))
        else:
            try:
                mode = entry.stat(follow_symlinks=False).st_mode
            except OSError:
                continue
            scan.skip(here, _not_regular(mode))
    subdirs.reverse()
    return subdirs


#: The signature of :func:`list_folder`, which :func:`list_vault` calls for each folder.
FolderLister = Callable[[Scan, int, int, tuple[str, ...]], list[str]]


def _reopen(scan: Scan, root_fd: int, folder: _Folder) -> int | None:
    """Open a folder again after its descriptor was closed; None (recorded) if it changed."""
    try:
        fd = _open_folder(root_fd, list(folder.parts))
    except OSError as exc:
        reason = f"folder changed while the vault was listed ({exc.strerror})"
    else:
        if _ident(os.fstat(fd)) == folder.ident:
            folder.fd = fd
            return fd
        os.close(fd)
        reason = "folder was replaced while the vault was listed"
    scan.skip(folder.parts, f"{reason}; its remaining subfolders are not listed")
    folder.subdirs.clear()
    return None


def _enter(scan: Scan, parent_fd: int, parts: tuple[str, ...], max_depth: int) -> int | None:
    """Open a subfolder for listing, or record why it is not listed."""
    if len(parts) > max_depth:
        scan.skip(parts, f"folder nested more than {max_depth} levels deep; not listed")
        return None
    try:
        fd = os.open(parts[-1], _DIR_FLAGS, dir_fd=parent_fd)
    except OSError as exc:
        if exc.errno in _SWAPPED or exc.errno == errno.ENOENT:
            return None  # replaced by a link or removed since it was listed
        scan.skip(parts, f"folder cannot be listed: {exc.strerror}")
        return None
    ident = _ident(os.fstat(fd))
    if ident in scan.visited:
        os.close(fd)
        scan.skip(parts, "folder already listed under another path (a folder loop); not listed")
        return None
    scan.visited.add(ident)
    return fd


def list_vault(
    root: Path,
    root_fd: int,
    *,
    max_depth: int = MAX_DEPTH,
    max_open_folders: int = MAX_OPEN_FOLDERS,
    lister: FolderLister = list_folder,
) -> Scan:
    """List the vault depth first, without recursion, following no folder link.

    ``max_depth``, ``max_open_folders`` and ``lister`` default to this module's
    limits and :func:`list_folder`; :class:`~askkit.vault.Vault` passes its own
    module's names so that tests can lower them there.
    """
    scan = Scan(root)
    first = os.dup(root_fd)
    ident = _ident(os.fstat(first))
    scan.visited.add(ident)
    stack = [_Folder((), first, ident, [])]
    try:
        stack[0].subdirs = lister(scan, root_fd, first, ())
        while stack:
            top = stack[-1]
            parent_fd = None
            if top.subdirs:
                parent_fd = top.fd if top.fd is not None else _reopen(scan, root_fd, top)
            if parent_fd is None:
                stack.pop().close()
                continue
            parts = (*top.parts, top.subdirs.pop())
            fd = _enter(scan, parent_fd, parts, max_depth)
            if not top.subdirs:
                stack.pop().close()
            if fd is None:
                continue
            child = _Folder(parts, fd, _ident(os.fstat(fd)), [])
            stack.append(child)
            child.subdirs = lister(scan, root_fd, fd, parts)
            held = [f for f in stack[:-1] if f.fd is not None]
            for folder in held[: max(0, len(held) + 1 - max_open_folders)]:
                folder.close()
    finally:
        for folder in stack:
            folder.close()
    return scan
