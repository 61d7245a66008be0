"""A kimun vault on disk: notes, kimun's sections and chunks, what changed, where a source sits.

:mod:`~askkit.vault.notes` reads the vault (:class:`Vault`);
:mod:`~askkit.vault.chunking` cuts a note into kimun's heading sections (as kimun
0.18's single note walk, or kimun 0.17's content extractor);
:mod:`~askkit.vault.split` splits them into the chunks kimun's server stores
(:func:`note_chunks`); :mod:`~askkit.vault.changes` tells an index which
notes changed (:func:`scan_vault`, :class:`IndexReport`);
:mod:`~askkit.vault.locate` finds a retrieved section in the current note, and says
whether a stored chunk was cut before the note changed or by an older kimun;
:mod:`~askkit.vault.diacritics` folds text as kimun's search does.
"""

from __future__ import annotations

from askkit.vault.changes import IndexReport, NoteChanges, scan_vault
from askkit.vault.chunking import (
    DEFAULT_KIMUN,
    KIMUN_VERSIONS,
    Heading,
    KimunVersion,
    Section,
    check_vault_sections,
    chunk_note,
    extract_headings,
    extract_title,
    note_hashtags,
    note_headings,
    note_outline,
    split_frontmatter,
)
from askkit.vault.locate import (
    atx_heading_text,
    heading_display_text,
    kimun_heading_section_range,
    kimun_section_range,
    locate_source,
    section_range,
    stored_status,
    stored_statuses,
)
from askkit.vault.notes import (
    Note,
    Vault,
    content_hash,
    note_titles,
)
from askkit.vault.split import CHUNK_MAX, CHUNK_TARGET, note_chunks, split_for_rag

__all__ = [
    "CHUNK_MAX",
    "CHUNK_TARGET",
    "DEFAULT_KIMUN",
    "KIMUN_VERSIONS",
    "Heading",
    "IndexReport",
    "KimunVersion",
    "Note",
    "NoteChanges",
    "Section",
    "Vault",
    "atx_heading_text",
    "check_vault_sections",
    "chunk_note",
    "content_hash",
    "extract_headings",
    "extract_title",
    "heading_display_text",
    "kimun_heading_section_range",
    "kimun_section_range",
    "locate_source",
    "note_chunks",
    "note_hashtags",
    "note_headings",
    "note_outline",
    "note_titles",
    "scan_vault",
    "section_range",
    "split_for_rag",
    "split_frontmatter",
    "stored_status",
    "stored_statuses",
]
