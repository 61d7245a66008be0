"""A kimun vault on disk: list notes, read them safely, hash them as kimun does.

Paths inside the vault are :class:`~askkit.VaultPath`\\ s, sanitized and
lower-cased as kimun makes them; a note stored as ``Journal/My Note.md`` is
found as ``journal/my note.md``. Nothing outside the vault root is ever
opened: a path with a ``..`` that climbs above the root, an absolute
file-system path outside it, or a symbolic link whose target lies outside it
raises :class:`~askkit.VaultError` (kimun flattens a stray ``..`` away; askkit
refuses it).

Reading walks from the root one folder at a time and never lets the operating
system follow a symbolic link: each link met is read and followed by askkit,
only while its target stays inside the vault. A link swapped in between a
check and the read therefore cannot lead outside. A symbolic link to a note
inside the vault is read as that note; listing never descends into a linked
folder. Only regular files are read: a FIFO, socket, device or folder named
``*.md`` is skipped by listing (with a warning) and refused by reading,
without ever blocking. A note larger than ``max_note_bytes`` is refused before
any of it is read.

Text is decoded as UTF-8; a leading byte-order mark is removed; line endings
are kept as they are on disk, so the offsets askkit reports (sections,
located ranges) index the text exactly as :meth:`Vault.read` returns it,
CRLF included. The content hash is kimun's: XXH64 with seed 42 over the raw
bytes (BOM included), as a decimal string.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import xxhash

from askkit._warn import warn_user
from askkit.errors import VaultError
from askkit.journal import journal_date
from askkit.sources import VaultPath

__all__ = ["Note", "Vault", "content_hash"]

_BOM = "\ufeff"
_SUFFIX = ".md"

#: The default cap on a note's size, in bytes (16 MiB).
_MAX_NOTE_BYTES = 16 * 1024 * 1024
#: Symbolic links followed while opening one note before it counts as a loop (as Linux).
_MAX_LINKS = 40
#: Times one component is opened again when it changes under the reader.
_MAX_RETRIES = 8
#: Folders deeper than this are not listed (their skip is recorded): no path to them
#: fits in the 4,096 bytes most systems allow, so no other program can open them.
_MAX_DEPTH = 2048
#: Folder descriptors the listing keeps open at once; deeper ones are reopened from the root.
_MAX_OPEN_FOLDERS = 64
#: Bytes asked for after a note's known size, to find its end.
_READ_MORE = 64 * 1024
#: How many skipped entries one listing warning names.
_WARN_NAMES = 5

# O_NONBLOCK everywhere: a FIFO swapped in is refused by fstat, never waited on.
_ROOT_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NONBLOCK | os.O_CLOEXEC
_DIR_FLAGS = _ROOT_FLAGS | os.O_NOFOLLOW
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
# What opening a component that was just swapped for a link (or a file) reports.
_SWAPPED = frozenset({errno.ELOOP, errno.EMLINK, errno.ENOTDIR})
_OUTSIDE = "symbolic link to a file outside the vault"


def content_hash(data: bytes) -> str:
    """kimun's note hash: XXH64 (seed 42) of the raw bytes, as a decimal string.

    >>> content_hash(b"# Hello\\n")
    '5722449285692711332'
    """
    return str(xxhash.xxh64_intdigest(data, seed=42))


@dataclass(frozen=True, slots=True)
class Note:
    """A note read from the vault."""

    path: VaultPath
    text: str
    hash: str
    date: str | None
    file: Path

    @property
    def title(self) -> str:
        """The file stem (kimun's ``get_clean_name``)."""
        return self.path.stem


# -- opening inside the root without following links --------------------------------------


class _Refused(VaultError):
    """Why a vault entry is not read; caught in this module and reported with its file."""

    def __init__(self, reason: str, *, warn: bool = True) -> None:
        super().__init__(reason)
        self.reason = reason
        #: Whether listing warns about the skip (links leaving the vault are skipped silently).
        self.warn = warn


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
    must be a regular file. Raises :class:`_Refused`.
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
                raise _Refused(_not_regular(st.st_mode))
            elif not open_file:
                return -1, st
            else:
                opened = self._open(name, where)
                if opened is not None:
                    return opened
        raise _Refused("a folder, not a note file")

    def _retry(self, name: str, where: str) -> None:
        self.retries += 1
        if self.retries > _MAX_RETRIES:
            raise _Refused(f"{where!r} kept changing while it was opened; try again")
        self.pending.append(name)

    def _up(self, where: str) -> None:
        if not self.cursor.names:
            raise _Refused(f"{_OUTSIDE} ({self.target!r})", warn=False)
        try:
            self.cursor.up()
        except OSError as exc:
            raise _Refused(f"folder {where!r} changed while it was read: {exc.strerror}") from None

    def _lstat(self, name: str, where: str) -> os.stat_result:
        try:
            return os.stat(name, dir_fd=self.cursor.fd, follow_symlinks=False)
        except FileNotFoundError:
            if self.target is None:
                raise _Refused(f"{where!r} does not exist") from None
            raise _Refused(
                f"dangling symbolic link: its target {self.target!r} does not exist"
            ) from None
        except OSError as exc:
            raise _Refused(f"cannot open {where!r}: {exc.strerror}") from None

    def _follow(self, name: str, where: str) -> None:
        self.links += 1
        if self.links > _MAX_LINKS:
            raise _Refused(f"symbolic link loop: more than {_MAX_LINKS} links from {where!r}")
        try:
            target = os.readlink(name, dir_fd=self.cursor.fd)
        except OSError:  # no longer a link: look again
            self._retry(name, where)
            return
        self.target = target
        if target.startswith("/"):
            inside = _inside_parts(self.root, target)
            if inside is None:
                raise _Refused(f"{_OUTSIDE} ({target!r})", warn=False)
            self.cursor.to_root()
            self.pending.extend(_components(inside))
        else:
            self.pending.extend(_components(target.split("/")))

    def _enter(self, name: str, where: str, st: os.stat_result) -> None:
        if not stat.S_ISDIR(st.st_mode):
            raise _Refused(f"{where!r} is not a folder")
        try:
            self.cursor.enter(name)
        except OSError as exc:
            if exc.errno not in _SWAPPED and exc.errno != errno.ENOENT:
                raise _Refused(f"cannot open folder {where!r}: {exc.strerror}") from None
            self._retry(name, where)

    def _open(self, name: str, where: str) -> tuple[int, os.stat_result] | None:
        try:
            fd = os.open(name, _FILE_FLAGS, dir_fd=self.cursor.fd)
        except OSError as exc:
            if exc.errno not in _SWAPPED and exc.errno != errno.ENOENT:
                raise _Refused(f"cannot open {where!r}: {exc.strerror}") from None
            self._retry(name, where)
            return None
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode):
            os.close(fd)
            raise _Refused(_not_regular(opened.st_mode))
        return fd, opened


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
class _Scan:
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


def _ident(st: os.stat_result) -> tuple[int, int]:
    return (st.st_dev, st.st_ino)


def _list_folder(scan: _Scan, root_fd: int, fd: int, parts: tuple[str, ...]) -> list[str]:
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
            except _Refused as refusal:
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


def _reopen(scan: _Scan, root_fd: int, folder: _Folder) -> int | None:
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


def _enter(scan: _Scan, parent_fd: int, parts: tuple[str, ...]) -> int | None:
    """Open a subfolder for listing, or record why it is not listed."""
    if len(parts) > _MAX_DEPTH:
        scan.skip(parts, f"folder nested more than {_MAX_DEPTH} levels deep; not listed")
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


def _list_vault(root: Path, root_fd: int) -> _Scan:
    """List the vault depth first, without recursion, following no folder link."""
    scan = _Scan(root)
    first = os.dup(root_fd)
    ident = _ident(os.fstat(first))
    scan.visited.add(ident)
    stack = [_Folder((), first, ident, [])]
    try:
        stack[0].subdirs = _list_folder(scan, root_fd, first, ())
        while stack:
            top = stack[-1]
            parent_fd = None
            if top.subdirs:
                parent_fd = top.fd if top.fd is not None else _reopen(scan, root_fd, top)
            if parent_fd is None:
                stack.pop().close()
                continue
            parts = (*top.parts, top.subdirs.pop())
            fd = _enter(scan, parent_fd, parts)
            if not top.subdirs:
                stack.pop().close()
            if fd is None:
                continue
            child = _Folder(parts, fd, _ident(os.fstat(fd)), [])
            stack.append(child)
            child.subdirs = _list_folder(scan, root_fd, fd, parts)
            held = [f for f in stack[:-1] if f.fd is not None]
            for folder in held[: max(0, len(held) + 1 - _MAX_OPEN_FOLDERS)]:
                folder.close()
    finally:
        for folder in stack:
            folder.close()
    return scan


# -- the vault ------------------------------------------------------------------------------


class Vault:
    """A folder of markdown notes, read the way kimun reads it.

    Parameters
    ----------
    root:
        The vault folder.
    errors:
        ``"strict"`` (default): a note that is not valid UTF-8 raises
        :class:`~askkit.VaultError` naming the file and the byte offset.
        ``"replace"``: decode with U+FFFD replacement characters and warn.
    max_note_bytes:
        The largest note read, in bytes (default 16 MiB). A larger note raises
        :class:`~askkit.VaultError` naming its size, before any of it is read;
        pass a larger number to read it, or ``None`` for no cap.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / "Journal").mkdir(), (root / "Journal" / "2026-04-08.md").write_text("# Day")
    >>> v = Vault(root)
    >>> [str(p) for p in v.notes()]
    ['journal/2026-04-08.md']
    >>> v.read("journal/2026-04-08.md")
    '# Day'
    >>> v.note("Journal/2026-04-08.md").date
    '2026-04-08'
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        errors: str = "strict",
        max_note_bytes: int | None = _MAX_NOTE_BYTES,
    ) -> None:
        if errors not in {"strict", "replace"}:
            raise ValueError(f"errors must be 'strict' or 'replace', got {errors!r}")
        if max_note_bytes is not None and (
            isinstance(max_note_bytes, bool)
            or not isinstance(max_note_bytes, int)
            or max_note_bytes < 0
        ):
            raise ValueError(
                f"max_note_bytes must be a number of bytes >= 0 or None, got {max_note_bytes!r}"
            )
        path = Path(root).expanduser()
        if not path.exists():
            raise VaultError(f"vault not found: {path} does not exist")
        if not path.is_dir():
            raise VaultError(f"not a vault: {path} is not a folder")
        self.root = Path(os.path.realpath(path))
        self.errors = errors
        #: The largest note read, in bytes; ``None`` for no cap.
        self.max_note_bytes = max_note_bytes
        self._files: dict[VaultPath, Path] | None = None
        self._refused: dict[VaultPath, tuple[Path, str]] = {}
        self._warned: set[tuple[Path, str]] = set()  # each skip is warned about once
        #: VaultPaths that two or more files map to (``A.md`` and ``a.md``), with the files.
        self.collisions: dict[VaultPath, list[Path]] = {}
        #: Entries skipped while listing, with the reason: links leaving the vault,
        #: dangling links, link loops, FIFOs and other non-regular files, folders
        #: too deep to list.
        self.skipped: dict[Path, str] = {}

    def __repr__(self) -> str:
        return f"Vault({str(self.root)!r})"

    def _open_root(self) -> int:
        try:
            return os.open(self.root, _ROOT_FLAGS)
        except OSError as exc:
            raise VaultError(f"cannot open the vault folder {self.root}: {exc.strerror}") from None

    # -- listing ------------------------------------------------------------------------

    def _scan(self) -> dict[VaultPath, Path]:
        root_fd = self._open_root()
        try:
            scan = _list_vault(self.root, root_fd)
        finally:
            os.close(root_fd)
        self.collisions = scan.collisions
        self.skipped = scan.skipped
        self._refused = scan.refused
        message = scan.warning(self._warned)
        if message is not None:
            warn_user(message)
        return scan.files

    def _inside(self, resolved: Path) -> bool:
        return resolved == self.root or self.root in resolved.parents

    def refresh(self) -> None:
        """Forget the cached file list; the next call lists the folder again."""
        self._files = None

    def _listing(self) -> dict[VaultPath, Path]:
        if self._files is None:
            self._files = self._scan()
        return self._files

    def notes(self) -> list[VaultPath]:
        """Every note (``*.md``, recursively, hidden folders skipped), sorted by path.

        Entries that cannot be read as notes are left out and recorded in
        :attr:`skipped` with the reason. FIFOs, sockets, devices, folders named
        ``*.md``, dangling links, link loops and folders too deep to list are
        also named in a warning, once per entry and vault; links leaving the
        vault are skipped silently.
        """
        return sorted(self._listing(), key=str)

    def __iter__(self) -> Iterator[VaultPath]:
        return iter(self.notes())

    def __len__(self) -> int:
        return len(self._listing())

    def __contains__(self, path: object) -> bool:
        try:
            self.resolve(path)  # type: ignore[arg-type]
        except (VaultError, TypeError):
            return False
        return True

    # -- resolving ----------------------------------------------------------------------

    def vault_path(self, path: str | VaultPath | os.PathLike[str]) -> VaultPath:
        """The :class:`VaultPath` for a vault path, a string, or a file path inside the root.

        A ``..`` that climbs above the root, or a file-system path outside the
        root, raises :class:`~askkit.VaultError`.
        """
        if isinstance(path, VaultPath):
            vp = path
        elif isinstance(path, os.PathLike):
            fs = Path(path)
            if fs.is_absolute():
                # the folder is resolved, not the file: a link inside is named as itself
                if fs.name in {"", ".", ".."}:
                    resolved = Path(os.path.realpath(fs))
                else:
                    resolved = Path(os.path.realpath(fs.parent)) / fs.name
                if not self._inside(resolved):
                    raise VaultError(f"{fs} is outside the vault {self.root}")
                vp = VaultPath(resolved.relative_to(self.root).as_posix())
            else:
                vp = VaultPath(fs.as_posix())
        elif isinstance(path, str):
            vp = VaultPath(path)
        else:
            raise TypeError(f"expected a vault path (str or VaultPath), got {type(path).__name__}")
        if vp.escapes_root():
            raise VaultError(f"{str(vp)!r} climbs above the vault root with '..'; refused")
        return vp.flatten()

    def _locate(self, path: str | VaultPath | os.PathLike[str]) -> tuple[VaultPath, Path]:
        """The note's key and listed file, unchecked; VaultError if it is not a note."""
        vp = self.vault_path(path)
        key = VaultPath(vp.relative())
        file = self._listing().get(key)
        if file is None:
            self.refresh()
            file = self._listing().get(key)
        if file is None:
            refused = self._refused.get(key)
            if refused is not None:
                raise VaultError(f"{refused[0]}: {refused[1]}; refused")
            raise VaultError(f"note not found in the vault {self.root}: {str(vp)!r}")
        return key, file

    def _walk(self, file: Path, *, open_file: bool) -> tuple[int, os.stat_result]:
        root_fd = self._open_root()
        cursor = _Cursor(root_fd, root_fd, ())
        try:
            parts = list(file.relative_to(self.root).parts)
            return _Walk(self.root, cursor, parts).run(open_file=open_file)
        except _Refused as refusal:
            raise VaultError(f"{file}: {refusal.reason}; refused") from None
        finally:
            cursor.close()
            os.close(root_fd)

    def resolve(self, path: str | VaultPath | os.PathLike[str]) -> Path:
        """The file on disk for a note, checked to be a regular file inside the vault."""
        _, file = self._locate(path)
        self._walk(file, open_file=False)
        return file

    def stat(self, path: str | VaultPath | os.PathLike[str]) -> os.stat_result:
        """The note's ``os.stat_result``, taken on the file opened inside the vault."""
        _, file = self._locate(path)
        fd, st = self._walk(file, open_file=True)
        os.close(fd)
        return st

    # -- reading ------------------------------------------------------------------------

    def _read(self, file: Path) -> bytes:
        fd, st = self._walk(file, open_file=True)
        try:
            return self._read_open(file, fd, st.st_size)
        except OSError as exc:
            if isinstance(exc, VaultError):
                raise
            raise VaultError(f"cannot read {file}: {exc.strerror}") from None
        finally:
            os.close(fd)

    def _read_open(self, file: Path, fd: int, size: int) -> bytes:
        """Read an open note, its size (from ``fstat``) checked against the cap first."""
        cap = self.max_note_bytes
        fix = "open the vault with Vault(..., max_note_bytes=N) and a larger N to read it"
        if cap is not None and size > cap:
            raise VaultError(
                f"{file}: {size} bytes ({size / 2**20:.1f} MiB) is over "
                f"max_note_bytes={cap} ({cap / 2**20:.1f} MiB); {fix}"
            )
        chunks: list[bytes] = []
        total = 0
        want = size + 1  # the whole note, and a byte more to notice it growing
        while True:
            if cap is not None:
                want = min(want, cap + 1 - total)
            chunk = os.read(fd, want)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            total += len(chunk)
            if cap is not None and total > cap:
                raise VaultError(f"{file}: grew past max_note_bytes={cap} while it was read; {fix}")
            want = _READ_MORE

    def read_bytes(self, path: str | VaultPath | os.PathLike[str]) -> bytes:
        """The note's raw bytes (at most ``max_note_bytes``)."""
        _, file = self._locate(path)
        return self._read(file)

    def decode(self, data: bytes, file: Path | str) -> str:
        """Decode note bytes as UTF-8 (BOM dropped) under this vault's ``errors`` mode."""
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            bad = data[exc.start : exc.start + 4]
            where = f"{file}: not valid UTF-8 at byte {exc.start} ({bad!r})"
            if self.errors == "strict":
                raise VaultError(
                    f"{where}; open the vault with errors='replace' to read it anyway"
                ) from None
            warn_user(f"{where}; decoded with replacement characters")
            text = data.decode("utf-8", errors="replace")
        return text[1:] if text.startswith(_BOM) else text

    def read(self, path: str | VaultPath | os.PathLike[str]) -> str:
        """The note's text (UTF-8, BOM removed, line endings as on disk)."""
        _, file = self._locate(path)
        return self.decode(self._read(file), file)

    def note(self, path: str | VaultPath | os.PathLike[str]) -> Note:
        """The note with its text, kimun content hash and journal date."""
        key, file = self._locate(path)
        data = self._read(file)
        return Note(key, self.decode(data, file), content_hash(data), journal_date(str(key)), file)

    def hash(self, path: str | VaultPath | os.PathLike[str]) -> str:
        """kimun's content hash of the note."""
        return content_hash(self.read_bytes(path))

    @staticmethod
    def journal_date(path: str | VaultPath) -> str | None:
        """The journal date kimun's server gives a file name (see :mod:`askkit.journal`)."""
        return journal_date(str(path))
