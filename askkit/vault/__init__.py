"""A kimun vault on disk: notes, kimun's sections, and where a source sits in its note.

:mod:`~askkit.vault.notes` reads the vault (:class:`Vault`);
:mod:`~askkit.vault.chunking` cuts a note into kimun's heading sections (as kimun
0.18's single note walk, or kimun 0.17's content extractor);
:mod:`~askkit.vault.locate` finds a retrieved section in the current note, and says
whether a stored chunk was cut before the note changed or by an older kimun;
:mod:`~askkit.vault.diacritics` folds text as kimun's search does.
"""

from __future__ import annotations

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
)

__all__ = [
    "DEFAULT_KIMUN",
    "KIMUN_VERSIONS",
    "Heading",
    "KimunVersion",
    "Note",
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
    "note_hashtags",
    "note_headings",
    "note_outline",
    "section_range",
    "split_frontmatter",
    "stored_status",
    "stored_statuses",
]
