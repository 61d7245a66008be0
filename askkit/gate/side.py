"""A side of the regression gate: a run frame, where it came from, and where its losses were.

:func:`read_side` reads a TREC run or a turn log (the one run reader,
:func:`askkit.metrics.runs.load_run`) and records its sha256
(:func:`file_sha256`); :class:`Side` carries a frame with its provenance and,
for a side retrieved on the spot (:func:`askkit.gate.vault_side`), the
:data:`Explainer` that says at which stage a relevant document was lost.

Examples
--------
>>> side = read_side("data/run.jsonl")
>>> side.provenance["kind"], len(side.provenance["sha256"])
('turn log', 64)
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from askkit.metrics import Level
from askkit.metrics.runs import load_run, run_kind

__all__ = ["Explainer", "Side", "file_sha256", "read_side"]

#: ``(query id, document, level) -> (stage, detail)``: where a relevant document was lost.
Explainer = Callable[[str, str, Level], tuple[str, str]]


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The sha256 of a file's bytes, read in 1 MiB blocks.

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile(delete=False) as f:
    ...     _ = f.write(b"abc")
    >>> file_sha256(f.name)[:16]
    'ba7816bf8f01cfea'
    """
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True, slots=True, eq=False)
class Side:
    """One side of a gate: a run frame, where it came from, and optionally its pools' story.

    ``frame`` is a sources frame or a run frame (:func:`askkit.metrics.read_run`);
    ``provenance`` is recorded in the output as given (strings); ``explain``,
    when the side was retrieved on the spot, says at which stage a relevant
    document was lost (``"pool"``, ``"reranker"`` or ``"cut"``) and why.
    """

    frame: pd.DataFrame
    provenance: Mapping[str, str] = field(default_factory=dict)
    explain: Explainer | None = None


def read_side(path: str | os.PathLike[str]) -> Side:
    """Read a TREC run or a turn log (JSONL, or a JSON payload) as a :class:`Side`,
    by the one run reader of every command (:func:`askkit.metrics.runs.load_run`;
    its errors name the file).

    Its provenance: the kind of file, its path and its sha256.
    """
    source = Path(path)
    frame = load_run(source)
    return Side(
        frame=frame,
        provenance={
            "kind": run_kind(source),
            "file": str(source),
            "sha256": file_sha256(source),
        },
    )


def _side(value: Side | pd.DataFrame | str | os.PathLike[str]) -> Side:
    if isinstance(value, Side):
        return value
    if isinstance(value, pd.DataFrame):
        return Side(frame=value, provenance={"kind": "frame", "rows": str(len(value))})
    return read_side(value)
