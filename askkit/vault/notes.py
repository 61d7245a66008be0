"""A kimun vault on disk: list notes, read them safely, hash them as kimun does.

Paths inside the vault are :class:`~askkit.VaultPath`\\ s, sanitized and
lower-cased as kimun makes them; a note stored as ``Journal/My Note.md`` is
found as ``journal/my note.md``. Nothing outside the vault root is ever
opened: a path with a ``..`` that climbs above the root, an absolute
file-system path outside it, or a symbolic link whose target lies outside it
raises :class:`~askkit.VaultError` (kimun flattens a stray ``..`` away; askkit
refuses it).

Text is decoded as UTF-8; a leading byte-order mark is removed; line endings
are kept as they are on disk, so the offsets askkit reports (sections,
located ranges) index the text exactly as :meth:`Vault.read` returns it,
CRLF included. The content hash is kimun's: XXH64 with seed 42 over the raw
bytes (BOM included), as a decimal string.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import xxhash

from askkit.errors import VaultError
from askkit.journal import journal_date
from askkit.sources import VaultPath

__all__ = ["Note", "Vault", "content_hash"]

_BOM = "\ufeff"
_SUFFIX = ".md"


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

    def __init__(self, root: str | os.PathLike[str], *, errors: str = "strict") -> None:
        if errors not in {"strict", "replace"}:
            raise ValueError(f"errors must be 'strict' or 'replace', got {errors!r}")
        path = Path(root).expanduser()
        if not path.exists():
            raise VaultError(f"vault not found: {path} does not exist")
        if not path.is_dir():
            raise VaultError(f"not a vault: {path} is not a folder")
        self.root = path.resolve()
        self.errors = errors
        self._files: dict[VaultPath, Path] | None = None
        #: VaultPaths that two or more files map to (``A.md`` and ``a.md``), with the files.
        self.collisions: dict[VaultPath, list[Path]] = {}
        #: Files skipped while listing, with the reason (links leaving the vault).
        self.skipped: dict[Path, str] = {}

    def __repr__(self) -> str:
        return f"Vault({str(self.root)!r})"

    # -- listing ------------------------------------------------------------------------

    def _scan(self) -> dict[VaultPath, Path]:
        files: dict[VaultPath, Path] = {}
        collisions: dict[VaultPath, list[Path]] = {}
        skipped: dict[Path, str] = {}
        for dirpath, dirnames, filenames in os.walk(self.root, followlinks=False):
            here = Path(dirpath)
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for name in sorted(filenames):
                if not name.endswith(_SUFFIX) or name.startswith("."):
                    continue
                file = here / name
                if file.is_symlink() and not self._inside(file.resolve()):
                    skipped[file] = "symbolic link to a file outside the vault"
                    continue
                rel = file.relative_to(self.root).as_posix()
                vp = VaultPath(rel)
                if vp in files:
                    collisions.setdefault(vp, [files[vp]]).append(file)
                    continue
                files[vp] = file
        self.collisions = collisions
        self.skipped = skipped
        return files

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
        """Every note (``*.md``, recursively, hidden folders skipped), sorted by path."""
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
                resolved = fs.resolve()
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

    def resolve(self, path: str | VaultPath | os.PathLike[str]) -> Path:
        """The file on disk for a note, checked to lie inside the vault."""
        vp = self.vault_path(path)
        key = VaultPath(vp.relative())
        file = self._listing().get(key)
        if file is None:
            self.refresh()
            file = self._listing().get(key)
        if file is None:
            raise VaultError(f"note not found in the vault {self.root}: {str(vp)!r}")
        if not self._inside(file.resolve()):
            raise VaultError(f"{file} links outside the vault {self.root}; refused")
        return file

    # -- reading ------------------------------------------------------------------------

    def read_bytes(self, path: str | VaultPath | os.PathLike[str]) -> bytes:
        """The note's raw bytes."""
        file = self.resolve(path)
        try:
            return file.read_bytes()
        except OSError as exc:
            raise VaultError(f"cannot read {file}: {exc.strerror}") from None

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
            warnings.warn(f"{where}; decoded with replacement characters", stacklevel=3)
            text = data.decode("utf-8", errors="replace")
        return text[1:] if text.startswith(_BOM) else text

    def read(self, path: str | VaultPath | os.PathLike[str]) -> str:
        """The note's text (UTF-8, BOM removed, line endings as on disk)."""
        file = self.resolve(path)
        return self.decode(self.read_bytes(path), file)

    def note(self, path: str | VaultPath | os.PathLike[str]) -> Note:
        """The note with its text, kimun content hash and journal date."""
        vp = self.vault_path(path)
        file = self.resolve(vp)
        data = self.read_bytes(vp)
        key = VaultPath(vp.relative())
        return Note(key, self.decode(data, file), content_hash(data), journal_date(str(key)), file)

    def hash(self, path: str | VaultPath | os.PathLike[str]) -> str:
        """kimun's content hash of the note."""
        return content_hash(self.read_bytes(path))

    @staticmethod
    def journal_date(path: str | VaultPath) -> str | None:
        """The journal date kimun's server gives a file name (see :mod:`askkit.journal`)."""
        return journal_date(str(path))
