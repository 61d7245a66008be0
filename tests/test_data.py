"""The bundled sample data agrees with the bundled vault: no false alarm on the first screens."""

from __future__ import annotations

import pytest

from askkit import Turn, read_turn
from askkit.vault import Vault, locate_source
from tests.conftest import DATA

SAMPLES = ["answer_job.json", "sample_turn.json", "embeddings.json", "embeddings_old_server.json"]


@pytest.fixture(scope="module")
def vault() -> Vault:
    return Vault(DATA / "vault")


@pytest.mark.parametrize("name", SAMPLES)
def test_every_sample_source_is_a_vault_note_with_the_same_hash(vault: Vault, name: str) -> None:
    turn: Turn = read_turn(DATA / name)
    assert turn.sources
    for src in turn.sources:
        note = vault.note(str(src.path))
        assert src.hash == note.hash, f"{name}: {src.path} was indexed from another version"


@pytest.mark.parametrize("name", SAMPLES)
def test_every_sample_source_is_found_in_its_note(vault: Vault, name: str) -> None:
    for src in read_turn(DATA / name).sources:
        text = vault.note(str(src.path)).text
        found = locate_source(text, src)
        assert found is not None, f"{name}: {src.display_heading()} not found in {src.path}"
