"""ipywidgets views of what a retriever retrieved (imports ipywidgets).

* :class:`SourcesView`: kimun's Sources view, sortable, filterable, paged.
* :class:`SourceReader`: the source in its note, the section highlighted.
* :class:`TurnView`: question, answer with clickable ``[n]`` citations, sources, reader.
* :class:`CutView`: a ranked pool's scores, each context cut's boundary, its knobs.
* :class:`ChainView`: one question through kimun's stages, each note of interest a row.
* :class:`Explorer`: query a retriever, browse and read the results, score histogram,
  and the context cut of the query's pool.
* :class:`Labeler`: grade the source in a reader 0-3 into a qrels TSV, or walk a gate's
  holes file (:meth:`Labeler.from_holes`).

Widgets are thin views: what they show comes from pure functions in
``askkit.widgets._table_model``, ``_reader_model``, ``_turn_model``,
``_holes_model`` and ``_cut_model`` (over :mod:`askkit.ranking`),
tested without a widget, and every HTML string they show is the markup of
``askkit._html``, the renderer notebooks and the report use too.
``import askkit`` does not import this package.
"""

from __future__ import annotations

from askkit.widgets.chain import ChainView
from askkit.widgets.cut import CutView
from askkit.widgets.explorer import Explorer, HistoryEntry
from askkit.widgets.labeler import GRADE_LABELS, Labeler, read_queries
from askkit.widgets.reader import SourceReader
from askkit.widgets.table import SourcesView
from askkit.widgets.turn import TurnView

__all__ = [
    "GRADE_LABELS",
    "ChainView",
    "CutView",
    "Explorer",
    "HistoryEntry",
    "Labeler",
    "SourceReader",
    "SourcesView",
    "TurnView",
    "read_queries",
]
