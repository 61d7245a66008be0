"""``CutView``: where kimun's context cut lands on one ranked pool, with its knobs.

The widget wires a strategy dropdown and three sliders (the score-range
cutoff, the largest-drop window, ``top_k``) to the pure functions of
:mod:`askkit.widgets._cut_model`, which read every number from
:mod:`askkit.ranking`: the plot of the pool's scores with each strategy's
boundary, a sentence and a table saying what each strategy keeps, the kept
chunks in a :class:`~askkit.widgets.SourcesView`, why a note is or is not
kept (:func:`askkit.ranking.why_not`) and the ``[reranker]`` TOML block.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as w
import traitlets

from askkit import _html
from askkit.ranking import STRATEGIES, CutSettings, Strategy, why_not
from askkit.ranking.settings import CANDIDATE_POOL
from askkit.sources import AskSource, SourceList, Turn
from askkit.widgets._cut_model import CutModel, as_pool, cut_model, cut_plot_png, strategy_table
from askkit.widgets.table import SourcesView
from askkit.wire import ChunkResult

__all__ = ["CutView"]

_PICK = ("(pick a note)", "")  # a note path is never empty
_LABELS = {"description_width": "90px"}


def _question(pool: Any, question: str | None) -> str | None:
    """The question a pool came from: the one given, else a :class:`~askkit.Turn`'s own."""
    if question is not None:
        return str(question)
    asked = getattr(pool, "question", None) if isinstance(pool, Turn) else None
    return asked or None


class CutView(w.VBox):  # type: ignore[misc]
    """A ranked pool's scores, each strategy's boundary, and the chunks the cut keeps.

    Parameters
    ----------
    pool:
        The ranked pool, best first (kimun's order; not re-sorted): a list of
        :class:`~askkit.ChunkResult` (``LocalIndex.pool(query)``,
        :func:`askkit.ranking.pool_of`), of :class:`~askkit.AskSource` or of
        wire dicts, a :class:`~askkit.Turn`, a sources frame of one turn, or one
        query's rows of ``LocalIndex.pools``.
    settings:
        The starting :class:`~askkit.ranking.CutSettings` (kimun's defaults).
    question:
        The question the pool was retrieved for, shown above the plot (a
        :class:`~askkit.Turn` names its own).
    page_size:
        Rows per page of the kept sources.

    Pick a strategy and move the sliders: the boundary lines, the sentence,
    the table and the kept sources follow (a slider applies when released).
    Every strategy's boundary is drawn; the selected one is solid, and its
    kept chunks are filled.

    Attributes
    ----------
    settings:
        The current :class:`~askkit.ranking.CutSettings` (a trait: observe it,
        or set it to move the controls).
    model:
        The current :class:`~askkit.widgets._cut_model.CutModel` (every number shown).
    """

    settings = traitlets.Instance(CutSettings)

    def __init__(
        self,
        pool: Any = None,
        settings: CutSettings | None = None,
        *,
        question: str | None = None,
        page_size: int = 10,
    ) -> None:
        settings = CutSettings() if settings is None else settings
        if not isinstance(settings, CutSettings):
            raise TypeError(f"settings must be a CutSettings, got {type(settings).__name__}")
        self._pool: tuple[ChunkResult, ...] = as_pool(pool)
        self.question: str | None = _question(pool, question)
        self.question_html = w.HTML()
        self.question_html.add_class("askkit-cut-question")
        self._syncing = False
        self.model: CutModel = cut_model(self._pool, settings)
        top = self._slider_top(settings)
        self.strategy_box = w.Dropdown(
            options=list(STRATEGIES), value=settings.strategy, description="context cut"
        )
        self.cutoff_slider = w.FloatSlider(
            value=settings.score_range_cutoff,
            min=0.0,
            max=1.0,
            step=0.01,
            description="cutoff",
            readout_format=".2f",
            continuous_update=False,
        )
        self.window_slider = w.IntRangeSlider(
            value=settings.window,
            min=1,
            max=top,
            description="drop window",
            continuous_update=False,
        )
        self.top_k_slider = w.IntSlider(
            value=settings.top_k, min=1, max=top, description="top_k", continuous_update=False
        )
        self.plot = w.Image(format="png", layout=w.Layout(width="560px"))
        self.plot.add_class("askkit-cut-plot")
        self.summary_html = w.HTML()
        self.summary_html.add_class("askkit-cut-summary")
        self.table_html = w.HTML()
        self.toml_box = w.Textarea(
            disabled=True, description="server.toml", layout=w.Layout(height="9em")
        )
        self.why_box = w.Dropdown(description="why (not)")
        for control in (
            self.strategy_box,
            self.cutoff_slider,
            self.window_slider,
            self.top_k_slider,
            self.toml_box,
            self.why_box,
        ):
            control.layout.width = "340px"
            control.style = _LABELS
        self.why_html = w.HTML()
        self.sources_view = SourcesView(None, page_size=page_size, show_cited=False)
        super().__init__()
        self.add_class("askkit-cut")
        self.set_trait("settings", settings)
        self.strategy_box.observe(self._on_control, names="value")
        for slider in (self.cutoff_slider, self.window_slider, self.top_k_slider):
            slider.observe(self._on_control, names="value")
        self.why_box.observe(lambda _c: self._show_why(), names="value")
        self.observe(self._on_settings, names="settings")
        controls = w.VBox(
            [
                self.strategy_box,
                self.cutoff_slider,
                self.window_slider,
                self.top_k_slider,
                self.toml_box,
            ]
        )
        self.children = [
            self.question_html,
            w.HBox([self.plot, controls]),
            self.summary_html,
            self.table_html,
            w.HTML(_html.heading_label("kept", "(the answer's context, numbered as kimun does)")),
            self.sources_view,
            self.why_box,
            self.why_html,
        ]
        self._set_why_options()
        self._refresh()

    def __repr__(self) -> str:
        of = f" pool of {self.question!r}" if self.question else ""
        return f"<CutView{of}: {self.model.summary}>"

    # -- data

    @property
    def pool(self) -> tuple[ChunkResult, ...]:
        """The ranked pool shown, best first."""
        return self._pool

    @property
    def kept(self) -> tuple[ChunkResult, ...]:
        """The chunks the selected strategy keeps: the answer's context, ordinals ``1..n``."""
        return self.model.kept

    @property
    def kept_sources(self) -> SourceList:
        """:attr:`kept` as the sources the Sources view shows."""
        return AskSource.from_chunks(self.model.kept)

    @property
    def boundaries(self) -> dict[Strategy, int]:
        """Each strategy's cut length with the current knobs: its boundary follows that rank."""
        return dict(self.model.lengths)

    @property
    def summary(self) -> str:
        """The sentence under the plot: what the selected strategy keeps, and why."""
        return self.model.summary

    def to_toml(self) -> str:
        """The ``[reranker]`` keys of the current settings, for kimun's ``server.toml``."""
        return self.settings.to_toml()

    def set_pool(self, pool: Any, question: str | None = None) -> None:
        """Show another pool (anything the constructor takes) and name the question it
        came from (a :class:`~askkit.Turn` names its own); the settings stay."""
        self._pool = as_pool(pool)
        self.question = _question(pool, question)
        top = self._slider_top(self.settings)
        self._syncing = True
        try:
            for slider in (self.window_slider, self.top_k_slider):
                slider.max = max(slider.max, top)
        finally:
            self._syncing = False
        self._set_why_options()
        self._refresh()

    def why(self, note: str | ChunkResult) -> str:
        """:func:`askkit.ranking.why_not` for ``note`` under the current settings."""
        return why_not(self._pool, note, self.settings)

    # -- events

    def _slider_top(self, settings: CutSettings) -> int:
        return max(CANDIDATE_POOL, len(self._pool), settings.drop_window_max, settings.top_k)

    def _on_control(self, _change: dict[str, Any]) -> None:
        if self._syncing:
            return
        low, high = self.window_slider.value
        settings = self.settings.replace(  # kimun's builder rules: a NaN cutoff keeps this one
            strategy=self.strategy_box.value,
            score_range_cutoff=float(self.cutoff_slider.value),
            drop_window_min=int(low),
            drop_window_max=int(high),
            top_k=int(self.top_k_slider.value),
        )
        if settings == self.settings:
            self._sync_controls(settings)  # a control left showing what was not applied
        else:
            self.settings = settings

    def _on_settings(self, change: dict[str, Any]) -> None:
        self._sync_controls(change["new"])
        self._refresh()

    def _sync_controls(self, settings: CutSettings) -> None:
        """Move the controls to ``settings`` without applying them again."""
        self._syncing = True
        try:
            top = self._slider_top(settings)
            for slider in (self.window_slider, self.top_k_slider):
                slider.max = max(slider.max, top)
            self.strategy_box.value = settings.strategy
            self.cutoff_slider.value = settings.score_range_cutoff
            self.window_slider.value = settings.window
            self.top_k_slider.value = settings.top_k
        finally:
            self._syncing = False

    def _refresh(self) -> None:
        settings = self.settings
        self.model = cut_model(self._pool, settings)
        self.question_html.value = (
            _html.heading_label("pool of", repr(self.question))
            if self.question
            else _html.message("pool of an unnamed question (pass question=...)", tone="muted")
        )
        self.plot.value = cut_plot_png(self.model)
        self.summary_html.value = _html.message(self.model.summary)
        self.table_html.value = _html.data_table(strategy_table(self.model))
        self.toml_box.value = settings.to_toml()
        self.sources_view.set_data(self.kept_sources)
        self._show_why()

    def _set_why_options(self) -> None:
        notes = list(dict.fromkeys(c.path for c in self._pool))
        self._syncing = True
        try:
            self.why_box.options = [_PICK, *((note, note) for note in notes)]
            self.why_box.value = ""
        finally:
            self._syncing = False

    def _show_why(self) -> None:
        note = self.why_box.value
        self.why_html.value = _html.message(self.why(note)) if note else ""
