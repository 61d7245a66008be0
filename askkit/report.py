"""A static HTML report for a run, without Jupyter.

:func:`build_report` reads a run by the one run reader of every command
(:func:`askkit.metrics.runs.load_run`: a turn log, a JSON payload or a TREC
run; or a frame), optionally graded judgments and a vault, and writes one
self-contained HTML file: the metrics table, each mean with its bounds
(:func:`askkit.metrics.bounds`: the least and the greatest it could be once the
unjudged documents are judged, shaded around the ndcg@k line too), the plots as
embedded PNG images, the coverage caveats, and a per-query drilldown with each
query's answer, its sources (grade, citation, score) and, with a vault, each
source's section as located in its note. The drilldown shows the worst
:data:`DEFAULT_DRILLDOWN` queries by default (the first measure, lowest first)
and says how many of how many it shows; ``max_queries=None`` (``askkit report
--drilldown all``) shows every one. A TREC run holds ranked document ids and
scores only: its page says so, and its drilldown lists each query's documents,
grades and scores (no answers, citations, source texts, context cut or funnel,
which need a turn log). Scores are at note level unless ``level="section"`` is
asked, as in every askkit command, and the page says which. The answers,
sources tables and metrics tables are :mod:`askkit._html`'s, as in a notebook;
every piece of user text is escaped; the page opens in any browser, and its one
small inline script (sorting and filtering the tables) only adds to tables that
read whole without it.

The run is prepared for scoring once (:func:`askkit.metrics.prepare`) and
every table and plot of it reads that preparation. With judgments the report
also has a **Context cut** section (:func:`askkit.ranking.sweep_context_cut`):
kimun's three context cuts replayed on each turn's sources as its ranked pool,
recall against context size, the best setting per strategy and the
recommended ``[reranker]`` block for kimun's ``server.toml``. ``askkit cut``
prints the same summary in a terminal. A section **Where relevant notes are
lost** follows each judged relevant section through the turns' answers
(:func:`askkit.trace.trace_log`): the funnel plot and the per-query table
(``askkit why LOG`` prints it in a terminal).

A report starts with askkit's marker, ``<meta name="generator" content="askkit
VERSION">``, at a fixed place in its first line. :meth:`Report.write` replaces
an existing file only when it starts so (an earlier report), or with
``force=True``: any other file is left as is.
"""

from __future__ import annotations

import datetime as dt
import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pandas as pd

from askkit import __version__, _html
from askkit._outputs import HTML_START, foreign_file, is_askkit_output, write_report
from askkit._report_runs import (
    LEVELS,
    bounds_legend,
    bounds_table,
    comparison_section,
    img,
    order_note,
    per_query_table,
)
from askkit.errors import AskkitError, SchemaError, UsageError, VaultError
from askkit.sources import AskSource, Turn

if TYPE_CHECKING:
    from askkit.metrics import Level

__all__ = [
    "BOUNDS_ROW",
    "CONVENTIONS",
    "DEFAULT_DRILLDOWN",
    "DEFAULT_MEASURES",
    "UNJUDGED",
    "Report",
    "build_report",
    "foreign_file",
    "is_askkit_report",
]

#: The measures a report shows when none are named.
DEFAULT_MEASURES = ("ndcg@10", "precision@10", "recall@10", "hit@10", "mrr", "map", "r-precision")
#: The queries the drilldown shows by default: the worst first (a query with its
#: sources and their texts weighs 20 to 150 KB of HTML, so a page of every query of a
#: 225-question collection weighed 32 MB).
DEFAULT_DRILLDOWN = 25
#: What the page says of a run of ranked documents only (a TREC run).
RANKED_ONLY = (
    "a TREC run: ranked document ids and scores only. So this page has no questions, "
    "answers, citations or source texts, no context cut and no funnel of where relevant "
    "notes are lost; a turn log (JSONL) of the same questions has them."
)


def is_askkit_report(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is one of askkit's reports: a regular file starting with askkit's
    mark (:func:`askkit._outputs.is_askkit_output`, the one rule for every report format).

    Only the file's first bytes are read, and only from a regular file (a
    FIFO or a device is never opened for reading: :func:`askkit._files.open_input`).
    Reports written before askkit marked them are not recognised.

    >>> import tempfile, pathlib
    >>> page = pathlib.Path(tempfile.mkdtemp()) / "notes.html"
    >>> _ = page.write_text("<html>my page</html>")
    >>> is_askkit_report(page), is_askkit_report(page.with_name("none.html"))
    (False, False)
    """
    return is_askkit_output(path)


#: The Metrics section's row of each mean with its bounds, under the means' row.
BOUNDS_ROW = "mean [lower, upper]"
#: How the drilldown shows a source the judgments do not grade.
UNJUDGED = "unjudged"
_UNJUDGED_CELL = '<i class="muted" title="no judgment names this document">unjudged</i>'
#: The scoring rules, said on the page (a standalone file has no README beside it).
CONVENTIONS = (
    "Scored as trec_eval scores: an unjudged document counts as not relevant; a document "
    "retrieved twice counts once, at its best rank; tied scores are ordered by document "
    "id; a judged query the run never answered is left out of the mean; nDCG's gain is "
    "the grade."
)

#: The page around the parts (tables and answers carry :data:`askkit._html.CSS`).
_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222;padding:0 1em}
h1{font-size:1.6em}h2{margin-top:2em;border-bottom:1px solid #ccc}.muted{color:#777}
.figs img{max-width:49%;margin:.3em 0}summary{cursor:pointer}
details{margin:.4em 0;border:1px solid #e4e4e4;border-radius:4px;padding:.3em .6em}
pre{white-space:pre-wrap;background:#fafafa;padding:.5em;max-height:24em;overflow:auto}
"""


@dataclass(frozen=True, slots=True)
class Report:
    """A built report: its HTML and what it covers."""

    html: str
    turns: int
    sources: int
    shown: int
    skipped: int
    headline: str = ""
    """Why nothing could be scored (no run query is judged), or ``""``; first on the page."""

    def write(self, path: str | os.PathLike[str], *, force: bool = False) -> Path:
        """Write the report atomically; return its path.

        An existing file is replaced only when it is an earlier askkit report
        (:func:`is_askkit_report`) or ``force`` is true; a folder, a FIFO or a
        device never is. A report is meant to be shared: a new file gets the
        mode the user's umask gives (``0644`` under the usual ``022``), a
        replaced one keeps its own.

        Raises
        ------
        UsageError
            ``path`` is a file askkit did not write (and ``force`` is false),
            or not a regular file.
        """
        return write_report(
            path, self.html, force=force, fix="write to another file, or pass force=True"
        )

    def _repr_html_(self) -> str:
        return (
            f"<p>askkit report: {self.turns} turns, {self.sources} sources, "
            f"{self.shown} shown in the drilldown</p>"
        )


def _no_plot(title: str, why: str) -> str:
    """What stands in for a plot with no data: its title and why."""
    return _html.message(why, tone="warn", lead=f"{title}: no plot")


def _section_text(vault: Any, src: AskSource, cache: dict[str, str | None]) -> str:
    from askkit.vault.locate import locate_source

    path = src.path.relative()
    if path not in cache:
        try:
            cache[path] = vault.read(path)
        except (VaultError, OSError):
            cache[path] = None
    note = cache[path]
    if note is None:
        return _html.message("note not found in the vault", tone="muted")
    span = locate_source(note, src)
    if span is None:
        return _html.message(
            "section not located; the chunk text:", tone="muted"
        ) + _html.chunk_html(src.text)
    section = note[span[0] : span[1]]
    if section.strip() == src.text.strip():  # said, not shown twice: half a page's weight
        return _html.message(
            "located; the section is the chunk's text, shown above, whole", tone="muted"
        )
    return _html.chunk_html(section)


@dataclass
class _Judged:
    sections: list[str]
    figures: list[str]
    per_query: pd.DataFrame
    grades: pd.Series
    order: pd.Index
    headline: str


@dataclass(frozen=True, slots=True)
class _Run:
    """The run as read: its frame, the records skipped (lenient), its name on the
    page, and its file (``None`` for a frame or objects)."""

    frame: pd.DataFrame
    skipped: pd.DataFrame
    name: str
    file: str | None


def _load(run: Any, strict: bool) -> _Run:
    """The run, read: a path by the one run reader (:func:`askkit.metrics.runs.load_run`),
    anything else :func:`askkit.frame.sources_frame` takes as a sources frame."""
    from askkit.frame import sources_frame
    from askkit.metrics.runs import load_run

    if isinstance(run, pd.DataFrame):
        name = "a sources frame" if _has_turns(run) else "a run frame"
        return _Run(run, pd.DataFrame(), name, None)
    if isinstance(run, str | os.PathLike):
        if strict:
            return _Run(load_run(run), pd.DataFrame(), str(run), str(run))
        frame, skipped = load_run(run, strict=False)
        return _Run(frame, skipped, str(run), str(run))
    if strict:
        return _Run(sources_frame(run), pd.DataFrame(), "a sources frame", None)
    frame, skipped = sources_frame(run, strict=False)
    return _Run(frame, skipped, "a sources frame", None)


def _has_turns(frame: pd.DataFrame) -> bool:
    """Whether ``frame`` holds turns (questions, sources with their texts), as a sources
    frame does, rather than ranked documents only (a TREC run's frame)."""
    return "question" in frame.columns and "text" in frame.columns


def _judged(
    frame: pd.DataFrame, qrels: Any, measures: Sequence[str], level: Level, grade: int | None
) -> _Judged:
    from askkit import plots
    from askkit.metrics import coverage, evaluate, prepare, ranked_run
    from askkit.metrics.evaluate import NO_JUDGED
    from askkit.metrics.ids import doc_ids

    run = prepare(frame, qrels, level=level)  # once: every table and plot reads it
    with warnings.catch_warnings():  # the headline says it, first on the page
        warnings.simplefilter("ignore", UserWarning)
        ev = evaluate(run, measures=measures)
    cov = coverage(run)
    headline = ev.headline or cov.headline
    mean = ev.mean.to_frame("mean").T
    mean.index.name = "run"
    sections = [
        "<h2>Metrics</h2>" + _html.data_table(mean, na=NO_JUDGED, sortable=True),
        _bounds_part(run, measures, grade) if not headline and len(ev.per_query) else "",
        f"<p>{len(ev.per_query)} judged queries, scored at {LEVELS[level]}. "
        f"{_html.esc(CONVENTIONS)}</p>",
        "<h2>Coverage</h2><pre>" + _html.esc(cov.explain()) + "</pre>",
    ]
    ranked = ranked_run(run)
    if headline:
        figures = [
            _no_plot("Scores by judgment", headline),
            img(lambda ax: plots.score_vs_rank(frame, ax=ax)),
            _no_plot("ndcg@k", headline),
        ]
    else:
        figures = [
            img(lambda ax: plots.relevance_histogram(run, ax=ax))
            if bool(ranked["judged"].any())
            else _no_plot("Scores by judgment", "No retrieved document is judged."),
            img(lambda ax: plots.score_vs_rank(run, ax=ax)),
        ]
        if len(ev.per_query):
            figures.append(
                img(
                    lambda ax: plots.metric_curve(
                        {"run": run}, None, "ndcg", band=True, grade=grade, ax=ax
                    )
                )
            )
        else:
            figures.append(_no_plot("ndcg@k", "No judged query is in the run."))
    keys = pd.DataFrame({"query_id": frame["turn_id"], "doc": doc_ids(frame, level)})
    found = keys.merge(
        ranked[["query_id", "doc", "grade", "judged"]].drop_duplicates(["query_id", "doc"]),
        on=["query_id", "doc"],
        how="left",
    )
    # an unjudged document reads as unjudged, never as grade 0 (judged not relevant)
    judged_rows = found["judged"].fillna(False).to_numpy(dtype=bool)
    grades = pd.Series(
        [
            str(int(g)) if ok else UNJUDGED
            for g, ok in zip(found["grade"], judged_rows, strict=True)
        ],
        index=frame.index,
        dtype=object,
    )
    worst = ev.per_query[measures[0]].sort_values(kind="stable").index
    rest = frame["turn_id"].drop_duplicates()
    order = pd.Index([*worst, *rest[~rest.isin(worst)]])
    return _Judged(sections, figures, ev.per_query, grades, order, headline)


def _bounds_part(run: Any, measures: Sequence[str], grade: int | None) -> str:
    """Each mean's bounds (:func:`askkit.metrics.bounds`), the unjudged share of each
    measure's top k, and what the bracket means."""
    from askkit.metrics import bounds

    with warnings.catch_warnings():  # the headline says it, first on the page
        warnings.simplefilter("ignore", UserWarning)
        limits = bounds(run, measures=measures, grade=grade)
    return bounds_table({BOUNDS_ROW: limits}, share=True) + bounds_legend(
        limits, asked=grade is not None, holes=len(limits.holes), share=True
    )


def _read_judgments(qrels: Any) -> pd.DataFrame:
    """The judgments, read once (a file's errors name it, its line and field)."""
    from askkit.metrics import read_qrels

    return read_qrels(qrels)


def _turn_html(
    tid: str,
    rows: pd.DataFrame,
    *,
    anchor: str,
    per_query: pd.DataFrame | None,
    grades: pd.Series | None,
    store: Any,
    notes: dict[str, str | None],
) -> str:
    from askkit.frame import to_sources

    question = str(rows["question"].iloc[0])
    answer = str(rows["answer"].iloc[0]) if "answer" in rows.columns else ""
    metrics_line = _metrics_line(tid, per_query)
    sources = to_sources(rows)
    extra: list[tuple[str, list[str]]] = []
    if grades is not None:
        shown = grades.loc[rows.index].tolist()
        extra.append(("grade", [_html.esc(g) if g != UNJUDGED else _UNJUDGED_CELL for g in shown]))
    located = None
    if store is not None:
        located = [
            "<details><summary>section in the note</summary>"
            + _section_text(store, src, notes)
            + "</details>"
            for src in sources
        ]
    turn = Turn(question, answer if answer != "nan" else "", sources)
    cited = rows["cited"].tolist()
    body = _html.turn_html(turn, cited=cited, anchor=anchor, extra=extra, below=located)
    return (
        f"<details><summary><b>{_html.esc(tid)}</b> — {_html.esc(question)}"
        f' <span class="muted">{metrics_line}</span></summary>{body}</details>'
    )


def _ranked_html(
    tid: str, rows: pd.DataFrame, *, per_query: pd.DataFrame | None, grades: pd.Series | None
) -> str:
    """A query of a TREC run in the drilldown: its documents in rank order, with their
    scores and grades (a TREC run has no question, answer or text to show)."""
    metrics_line = _metrics_line(tid, per_query)
    shown = rows.sort_values("rank", kind="stable") if "rank" in rows.columns else rows
    table = pd.DataFrame(
        {
            "rank": shown["rank"].to_numpy()
            if "rank" in shown.columns
            else range(1, len(shown) + 1),
            "document": shown["doc"].astype(str).to_numpy()
            if "doc" in shown.columns
            else shown["path"].astype(str).to_numpy(),
            "score": shown["score"].to_numpy(dtype=float),
        }
    )
    if grades is not None:
        table["grade"] = grades.loc[shown.index].to_numpy()
    return (
        f"<details><summary><b>{_html.esc(tid)}</b>"
        f' <span class="muted">{metrics_line}</span></summary>'
        + _html.data_table(table, index=False)
        + "</details>"
    )


def _metrics_line(tid: str, per_query: pd.DataFrame | None) -> str:
    """A query's measures, as its summary line shows them (``""`` when it is not judged)."""
    if per_query is None or tid not in per_query.index:
        return ""
    values = per_query.loc[tid].to_numpy(dtype=float)
    return " · ".join(
        f"{_html.esc(m)} {v:.3f}" for m, v in zip(per_query.columns, values, strict=True)
    )


def _cut_section(frame: pd.DataFrame, qrels: Any, objective: str, min_recall: float) -> str:
    """The Context cut section: the sweep on each turn's sources, or why there is none."""
    from askkit import plots
    from askkit.ranking import sweep_context_cut

    head = (
        "<h2>Context cut</h2><p>kimun's three context cuts replayed on each turn's sources "
        "as its ranked pool (turn ids as query ids, note level).</p>"
    )
    try:
        cut = sweep_context_cut(frame, qrels, objective=objective, min_recall=min_recall)
    except AskkitError as exc:
        return head + _html.message(str(exc), tone="warn", lead="no sweep")
    image = img(
        lambda ax: plots.cut_sweep(
            cut.sweep, recommended=cut.recommended, min_recall=cut.min_recall, ax=ax
        ),
        alt="context cut sweep",
    )
    return head + cut.html(image)


def _lost_section(frame: pd.DataFrame, qrels: Any) -> str:
    """Where relevant notes are lost: the funnel of the turns' answers, plot and table."""
    from askkit import plots
    from askkit.trace import funnel, trace_log

    head = (
        "<h2>Where relevant notes are lost</h2><p>Each judged relevant section followed "
        "through the turns' answers: in the context the answer was given (as <code>[n]</code>) "
        "and cited by the answer, or where it stopped (<code>askkit why</code>).</p>"
    )
    try:
        traced = trace_log(frame, qrels)
    except AskkitError as exc:
        return head + _html.message(str(exc), tone="warn", lead="No funnel")
    table = funnel(traced)
    if traced.empty:
        why = "no turn id is the query id of a judged relevant section"
        return head + _no_plot("Where relevant sections are lost", why)
    image = img(lambda ax: plots.funnel(table, ax=ax), alt="where relevant sections are lost")
    return head + f'<div class="figs">{image}</div>' + _html.data_table(table)


def _drilldown(
    frame: pd.DataFrame,
    order: pd.Index,
    *,
    max_queries: int | None,
    per_query: pd.DataFrame | None,
    grades: pd.Series | None,
    vault: str | os.PathLike[str] | None,
    measure: str | None,
) -> tuple[list[str], int]:
    """The Queries section (its parts) and how many queries it shows."""
    store = None
    if vault is not None:
        from askkit.vault import Vault

        store = Vault(vault)
    notes: dict[str, str | None] = {}
    turns = _has_turns(frame)
    shown = order if max_queries is None else order[:max_queries]
    groups = frame.groupby("turn_id", sort=False).groups
    drill = [
        f"<h2>Queries ({len(shown)} of {len(order)} shown)</h2>"
        + order_note(measure, per_query, turns=turns)
    ]
    if per_query is not None and len(per_query):
        drill.append(per_query_table(frame, per_query))
    drill += [
        _turn_html(
            str(tid),
            frame.loc[groups[tid]],
            anchor=f"askkit-q{n}",
            per_query=per_query,
            grades=grades,
            store=store,
            notes=notes,
        )
        if turns
        else _ranked_html(str(tid), frame.loc[groups[tid]], per_query=per_query, grades=grades)
        for n, tid in enumerate(shown, start=1)
        if tid in groups
    ]
    if len(order) > len(shown):
        which = f"the worst {len(shown)} by {measure}" if measure else f"the first {len(shown)}"
        drill.append(
            _html.message(
                f"{len(order) - len(shown)} more queries not shown: the drilldown shows "
                f"{which} of {len(order)}. To see every query: askkit report --drilldown "
                "all (build_report(max_queries=None)); the per-query table above lists "
                "every judged query's measures.",
                tone="muted",
            )
        )
    return drill, len(shown)


def _check_options(
    level: str | None,
    max_queries: int | None,
    qrels: Any,
    measures: Sequence[str],
    others: Any,
    *,
    grade: int | None = None,
) -> None:
    """Refuse a bad option before anything is read."""
    if level is not None and level not in ("note", "section"):
        raise SchemaError("level must be 'note' or 'section'", field="level", value=level)
    if others and qrels is None:
        raise UsageError(
            "comparing runs needs judgments: give qrels (askkit report RUN RUN --qrels FILE)"
        )
    if max_queries is not None and (
        isinstance(max_queries, bool) or not isinstance(max_queries, int) or max_queries < 0
    ):
        raise SchemaError(
            "max_queries must be a whole number >= 0, or None for every query",
            field="max_queries",
            value=max_queries,
        )
    if grade is not None and (isinstance(grade, bool) or not isinstance(grade, int) or grade < 0):
        raise SchemaError(
            "grade must be a whole number >= 0: the grade an unjudged document gets when "
            "the bounds count it relevant (None: the judgments' top grade)",
            field="grade",
            value=grade,
        )
    if qrels is not None and not len(measures):
        raise SchemaError(
            "no measure named: give at least one, e.g. ndcg@10", field="measures", value=measures
        )


def _level_said(level: Level, chosen: bool) -> str:
    """How the page's header says the scoring level and why it is that one."""
    why = (
        "as asked (level=…)"
        if chosen
        else "askkit's default in every command (--level section, or level='section', "
        "scores sections)"
    )
    return f"; scored at {LEVELS[level]}, {why}"


def build_report(
    run: Any,
    qrels: Any = None,
    *,
    vault: str | os.PathLike[str] | None = None,
    measures: Sequence[str] = DEFAULT_MEASURES,
    level: str | None = None,
    max_queries: int | None = DEFAULT_DRILLDOWN,
    strict: bool = True,
    title: str | None = None,
    objective: str = "smallest-context",
    min_recall: float = 0.9,
    others: Sequence[Any] = (),
    grade: int | None = None,
) -> Report:
    """Build the report for a run.

    Parameters
    ----------
    run:
        A run file (a JSONL turn log, a JSON payload or a TREC run, read by
        :func:`askkit.metrics.runs.load_run`), a sources or run frame, or
        anything :func:`askkit.frame.sources_frame` takes. A TREC run holds
        ranked documents only: the page says so, and shows no answers,
        citations, texts, context cut or funnel.
    qrels:
        Judgments (a TSV or TREC qrels path, or a frame); without them the
        report shows scores and citations but no metrics.
    vault:
        A vault folder: each source's section is shown as located in its note
        (a turn log's sources; a TREC run has no text to locate).
    level:
        Score ``"note"`` or ``"section"`` documents; default (``None``): note
        level, as every askkit command scores by default. The header says which.
    max_queries:
        How many queries the drilldown shows (worst first by the first
        measure when judged, else in log order), :data:`DEFAULT_DRILLDOWN`
        by default; ``None`` shows every one. The page says how many of how
        many it shows, and how to see them all.
    strict:
        With ``False``, bad log records are skipped and listed in the report.
    objective, min_recall:
        How the Context cut section (with ``qrels``) picks its recommended
        setting (:func:`askkit.ranking.sweep_context_cut`).
    others:
        More runs (anything ``run`` takes) to compare with ``run``, which is the
        baseline: with ``qrels`` a **Runs compared** section shows every run's
        metrics side by side with paired significance tests
        (:func:`askkit.compare.compare`); the rest of the page is ``run``'s.
    grade:
        With ``qrels``, every mean is shown with its bounds
        (:func:`askkit.metrics.bounds`): the least and the greatest it could be
        once the unjudged documents are judged, each not relevant or relevant
        at ``grade`` (default: the judgments' top grade); the ndcg@k plot
        shades them around its line.

    Raises
    ------
    SchemaError
        A bad option; a file that cannot be read (naming the file and line);
        judgments that hold no judgment or a run that holds no ranked document
        (:func:`askkit.metrics.runs.check_scorable`, naming the file).
    UsageError
        ``others`` without ``qrels``; ``vault`` with a TREC run.
    """
    from askkit import plots
    from askkit.metrics.runs import check_scorable, decoded_if_encoded

    _check_options(level, max_queries, qrels, measures, others, grade=grade)
    judgments = None if qrels is None else _read_judgments(qrels)
    chosen = level is not None
    lvl = cast("Level", level) if level is not None else "note"
    loaded = _load(run, strict)
    skipped, source_name = loaded.skipped, loaded.name
    # rows are found by label below: labels a caller's frame repeats would mix turns
    frame = loaded.frame.reset_index(drop=True)
    qrels_name = None if qrels is None or isinstance(qrels, pd.DataFrame) else str(qrels)
    check_scorable(
        frame,
        judgments,
        run_file=loaded.file,
        qrels_file=qrels_name,
        shared=False,  # ids that never meet: the page says so first (its headline)
    )
    decoded = None
    if judgments is not None:  # a TREC run's encoded paths, as the judgments hold them
        frame, decoded = decoded_if_encoded(frame, judgments, level=lvl, run_file=loaded.file)
    turns = _has_turns(frame)
    if vault is not None and not turns:
        raise UsageError(
            f"vault: {source_name} is a TREC run, whose documents carry no text to locate "
            "in their notes; give its turn log (JSONL) to see each source's section, or "
            "leave the vault out"
        )
    figures = [img(lambda ax: plots.score_distributions({"run": frame}, ax=ax))]
    sections: list[str] = []
    headline = ""
    per_query: pd.DataFrame | None = None
    grades: pd.Series | None = None
    order = pd.Index(frame["turn_id"].drop_duplicates())
    if judgments is not None:
        judged = _judged(frame, judgments, measures, lvl, grade)
        sections, per_query, grades, order = (
            judged.sections,
            judged.per_query,
            judged.grades,
            judged.order,
        )
        figures += judged.figures
        headline = judged.headline
        if others:
            sections.insert(
                0,
                comparison_section(
                    frame,
                    loaded.file or "run",
                    others,
                    judgments=judgments,
                    measures=measures,
                    level=lvl,
                    grade=grade,
                ),
            )
        if turns:
            sections.append(_cut_section(frame, judgments, objective, min_recall))
            sections.append(_lost_section(frame, judgments))
    else:
        figures.append(img(lambda ax: plots.score_vs_rank(frame, ax=ax)))
    images = "".join(figures)
    drill, shown = _drilldown(
        frame,
        order,
        max_queries=max_queries,
        per_query=per_query,
        grades=grades,
        vault=vault,
        measure=measures[0] if per_query is not None else None,
    )
    skipped_html = f"<p>{_html.esc(decoded)}</p>" if decoded else ""
    if len(skipped):
        skipped_html += "<h2>Skipped records</h2>" + _html.data_table(skipped.set_index("line"))
    name = title or f"askkit report: {source_name}"
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    judged_by = (
        f", judged by {_html.esc(qrels)}"
        if qrels is not None and not isinstance(qrels, pd.DataFrame)
        else ""
    )
    if judgments is not None:
        judged_by += _level_said(lvl, chosen)
    kind = (
        ""
        if turns
        else _html.message(f"{source_name} is {RANKED_ONLY}", tone="muted", lead="Ranked only")
    )
    page = (
        HTML_START
        + f'<meta name="generator" content="askkit {_html.esc(__version__)}">'
        + f"<title>{_html.esc(name)}</title><style>{_CSS}{_html.CSS}</style></head>"
        '<body class="askkit">'
        + (_html.message(headline, tone="error", lead="Nothing scored") if headline else "")
        + f"<h1>{_html.esc(name)}</h1>"
        f'<p class="muted">{frame["turn_id"].nunique()} {"turns" if turns else "queries"}, '
        f"{len(frame)} {'sources' if turns else 'ranked documents'}{judged_by}"
        f" · askkit {__version__} · {stamp}</p>"
        + kind
        + f'<h2>Plots</h2><div class="figs">{images}</div>'
        + "".join(sections)
        + "".join(drill)
        + skipped_html
        + _html.SORT_SCRIPT
        + "</body></html>"
    )
    return Report(page, int(frame["turn_id"].nunique()), len(frame), shown, len(skipped), headline)
