"""ipywidgets views of what a retriever retrieved (imports ipywidgets).

* :class:`SourcesView`: kimun's Sources view, sortable, filterable, paged.
* :class:`SourceReader`: the source in its note, the section highlighted.
* :class:`TurnView`: question, answer with clickable ``[n]`` citations, sources, reader.
* :class:`Explorer`: query a retriever, browse and read the results, score histogram.
* :class:`Labeler`: grade the source in a reader 0-3 into a qrels TSV.

Widgets are thin views: what they show comes from pure functions in
``askkit.widgets._table_model``, ``_reader_model`` and ``_turn_model``,
tested without a widget, and every HTML string they show is the markup of
``askkit._html``, the renderer notebooks and the report use too.
``import askkit`` does not import this package.
"""

from __future__ import annotations

from askkit.widgets.explorer import Explorer, HistoryEntry
from askkit.widgets.labeler import GRADE_LABELS, Labeler, read_queries
from askkit.widgets.reader import SourceReader
from askkit.widgets.table import SourcesView
from askkit.widgets.turn import TurnView

__all__ = [
    "GRADE_LABELS",
    "Explorer",
    "HistoryEntry",
    "Labeler",
    "SourceReader",
    "SourcesView",
    "TurnView",
    "read_queries",
]
