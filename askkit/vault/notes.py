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

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import xxhash

from askkit._warn import warn_user
from askkit.errors import AskkitError, VaultError
from askkit.journal import journal_date
from askkit.sources import VaultPath
from askkit.vault._safe_open import (
    MAX_DEPTH,
    MAX_OPEN_FOLDERS,
    Refused,
    list_folder,
    list_vault,
    open_root,
    walk_to,
)

__all__ = ["Note", "Vault", "content_hash", "note_titles"]

_BOM = "\ufeff"

#: The default cap on a note's size, in bytes (16 MiB).
_MAX_NOTE_BYTES = 16 * 1024 * 1024
#: Bytes asked for after a note's known size, to find its end.
_READ_MORE = 64 * 1024

# The listing's limits and folder lister (see askkit.vault._safe_open), looked up here on
# every listing: tests/vault/test_notes_hardening.py lowers them on this module.
_MAX_DEPTH = MAX_DEPTH
_MAX_OPEN_FOLDERS = MAX_OPEN_FOLDERS
_list_folder = list_folder


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

    # -- listing ------------------------------------------------------------------------

    def _scan(self) -> dict[VaultPath, Path]:
        root_fd = open_root(self.root)
        try:
            scan = list_vault(
                self.root,
                root_fd,
                max_depth=_MAX_DEPTH,
                max_open_folders=_MAX_OPEN_FOLDERS,
                lister=_list_folder,
            )
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
        root_fd = open_root(self.root)
        try:
            parts = list(file.relative_to(self.root).parts)
            return walk_to(self.root, root_fd, parts, open_file=open_file)
        except Refused as refusal:
            raise VaultError(f"{file}: {refusal.reason}; refused") from None
        finally:
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


def note_titles(vault: Vault | None, paths: Iterable[str]) -> dict[str, str]:
    """``{printed path: the note's title}`` for the notes of ``paths`` found in ``vault``.

    A note's title is its file's name without ``.md``, as on disk (Obsidian titles a
    note so): kimun prints paths lowercased and sanitized (:class:`~askkit.VaultPath`),
    the vault knows the file behind each (``Plugins/Command palette.md`` for
    ``plugins/command palette.md``). A path the vault does not hold (a note deleted
    since it was indexed) is left out: :meth:`AskSource.shown_heading` then names
    it by its printed stem. ``{}`` without a vault. The one rule the widgets and the
    terminal tables name a section before its note's first heading by.

    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / "Plugins").mkdir(), (root / "Plugins" / "Command palette.md").write_text("x")
    >>> note_titles(Vault(root), ["plugins/command palette.md", "gone.md"])
    {'plugins/command palette.md': 'Command palette'}
    """
    if vault is None:
        return {}
    titles: dict[str, str] = {}
    for printed in dict.fromkeys(paths):
        try:
            name = vault.resolve(VaultPath.from_printed(printed)).name
        except (AskkitError, OSError, ValueError):  # not in the vault (now): the printed stem
            continue
        titles[printed] = name[: -len(".md")] if name.lower().endswith(".md") else name
    return titles
