"""A retrieval regression gate: fail only on a significant drop of at least a given size.

:func:`gate` (:mod:`askkit.gate.core`) scores a baseline and a new run on the
same judged queries, tests each measure's per-query deltas with a paired
test and Holm-corrects the p-values (:mod:`askkit.gate.stats`); its
:class:`GateResult` (:mod:`askkit.gate.result`) prints as text, JSON,
Markdown, JUnit XML and HTML (:mod:`askkit.gate.formats`). A side is a run
file, a frame or a :class:`Side` (:mod:`askkit.gate.side`), or one retrieved
on the spot from a vault with a configuration (:func:`vault_side`,
:mod:`askkit.gate.vault`), which also says at which stage a relevant
document was lost. ``askkit diff`` (:mod:`askkit.cli.diff`) is this on the
command line.

Examples
--------
>>> import pandas as pd
>>> run = pd.DataFrame({"turn_id": ["q1", "q2", "q3"], "path": ["a", "c", "e"],
...                     "score": [1.0, 1.0, 1.0]})
>>> qrels = pd.DataFrame({"query_id": ["q1", "q2", "q3"], "path": ["a", "c", "e"],
...                       "grade": [1, 1, 1]})
>>> gate(run, run, qrels, ["mrr"]).verdict
'PASS: no measure dropped significantly by at least 0 (Holm-corrected p < 0.05, 3 queries)'
"""

from __future__ import annotations

from askkit.gate.core import DEFAULT_GATE_MEASURES, gate
from askkit.gate.holes import HOLES_COLUMNS, Hole, merge_holes, read_holes, write_holes
from askkit.gate.result import (
    GateResult,
    LostDocument,
    MeasureResult,
    RegressedQuery,
    SideReport,
)
from askkit.gate.side import Explainer, Side, file_sha256, read_side
from askkit.gate.stats import POWER, TESTS, Test
from askkit.gate.vault import vault_hash, vault_side

__all__ = [
    "DEFAULT_GATE_MEASURES",
    "HOLES_COLUMNS",
    "POWER",
    "TESTS",
    "Explainer",
    "GateResult",
    "Hole",
    "LostDocument",
    "MeasureResult",
    "RegressedQuery",
    "Side",
    "SideReport",
    "Test",
    "file_sha256",
    "gate",
    "merge_holes",
    "read_holes",
    "read_side",
    "vault_hash",
    "vault_side",
    "write_holes",
]
