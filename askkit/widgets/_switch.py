"""The Explorer's model: its retrievers, its history, and what its status lines say.

Pure model behind :class:`~askkit.widgets.Explorer` (no widget here):
:func:`choices` validates and adapts what the Explorer was given, :func:`pick` finds one
by name, :attr:`Choice.label` names it in full (a stand-in says so), :func:`switch_kind`
chooses toggle buttons or a dropdown so no name is cut, :func:`compare` asks each for
the same query and :class:`Comparison` shows their answers side by side, escaped.
:func:`history_items` folds the session's runs into one entry per question, with the
retrievers that answered it; :func:`frontmatter_notice` and :func:`chain_status` are the
lines under the results and in the *why not* panel.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from askkit import _html
from askkit._text import number_label
from askkit.errors import UsageError
from askkit.ranking.settings import CANDIDATE_POOL
from askkit.retrieve import Retriever, as_retriever
from askkit.sources import FRONTMATTER, AskSource, SourceList

if TYPE_CHECKING:
    import pandas as pd

    from askkit.retrieve.client import Health

__all__ = [
    "HISTORY_LIMIT",
    "STAND_IN_MARK",
    "Answer",
    "Choice",
    "Comparison",
    "HistoryEntry",
    "HistoryItem",
    "chain_status",
    "choices",
    "compare",
    "describe",
    "frontmatter_notice",
    "histogram_title",
    "history_items",
    "pick",
    "server_notices",
    "stand_ins",
    "switch_kind",
    "switch_width",
]

#: What a stand-in retriever's label ends with, when its name does not say so already.
STAND_IN_MARK = "(stand-in)"
#: The most questions the history lists (the most recent ones).
HISTORY_LIMIT = 20
#: Toggle buttons hold up to this many retrievers, if their labels fit on one line.
_TOGGLES_UP_TO = 4
#: The longest label a toggle button shows whole, and the most characters of all of
#: them on one line (13px text: about 7px a character, in a 900px wide output).
_TOGGLE_LABEL_CHARS = 32
_TOGGLE_LINE_CHARS = 96


def describe(exc: BaseException) -> str:
    """An error as the Explorer shows it: ``RuntimeError: message``."""
    return f"{type(exc).__name__}: {exc}"


@dataclass(frozen=True, slots=True)
class Choice:
    """One retriever the Explorer can ask: its name, the adapted retriever, its pool and,
    for a kimun server, how to read its ``/health``."""

    name: str
    retriever: Retriever
    fetch_pool: Callable[[str], Sequence[Any]]
    pool_from: str
    health: Callable[[], Health] | None = None
    stand_ins: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """The name as the Explorer shows it: a retriever that runs a stand-in model
        says so in full (``dense (stand-in)``) unless its name already does.

        >>> c = choices(None, {"dense": lambda q: []})[0]
        >>> from dataclasses import replace
        >>> c.label, replace(c, stand_ins=("tiny",)).label
        ('dense', 'dense (stand-in)')
        >>> replace(c, name="dense + reranker (stand-in)", stand_ins=("tiny",)).label
        'dense + reranker (stand-in)'
        """
        if self.stand_ins and "stand-in" not in self.name.lower():
            return f"{self.name} {STAND_IN_MARK}"
        return self.name


def stand_ins(obj: object) -> tuple[str, ...]:
    """What a retriever, its embedder and its reranker say of themselves when they are
    stand-ins (a class attribute ``stand_in``, as askkit's tiny test models carry), so the
    Explorer can label them; empty for real models.

    >>> class Tiny:
    ...     stand_in = "a tiny test model"
    >>> class Index:
    ...     embedder, reranker = object(), Tiny()
    >>> stand_ins(Index())
    ('a tiny test model',)
    """
    found = []
    for part in (obj, getattr(obj, "embedder", None), getattr(obj, "reranker", None)):
        note = getattr(type(part), "stand_in", None)
        if isinstance(note, str) and note not in found:
            found.append(note)
    return tuple(found)


def _health_source(obj: object) -> Callable[[], Health] | None:
    """A kimun server client's ``health`` (its ``GET /health``); ``None`` for any other."""
    from askkit.retrieve.client import KimunClient

    return obj.health if isinstance(obj, KimunClient) else None


def server_notices(health: Health) -> list[tuple[str, str]]:
    """What the Explorer's status line says of a server's health: ``(tone, text)`` pairs.

    >>> from askkit.retrieve.client import Health
    >>> server_notices(Health(status="ok", reranker_error="no model"))  # doctest: +ELLIPSIS
    [('warn', "the server's reranker failed to start: no model (...)")]
    """
    tones = ["error"] * health.is_degraded + ["warn"] * (health.reranker_error is not None)
    out = list(zip(tones, health.problems(), strict=True))
    note = health.update_note()
    if note is not None:
        out.append(("muted", note))
    return out


def _pool_source(obj: object, retriever: Retriever) -> tuple[Callable[[str], Any], str]:
    """How the cut panel gets a query's pool, and how it says so."""
    pool = getattr(obj, "pool", None)
    if callable(pool):

        def fetch(query: str) -> Any:
            return pool(query)  # the index's own pool size (kimun's 80 by default)

        return fetch, f"{type(obj).__name__}.pool"

    def first(query: str) -> Any:
        return retriever(query, k=CANDIDATE_POOL)

    return first, f"the retriever's first {CANDIDATE_POOL} results (it has no pool method)"


def _choice(name: str, obj: object) -> Choice:
    retriever = as_retriever(obj)
    fetch, origin = _pool_source(obj, retriever)
    return Choice(name, retriever, fetch, origin, _health_source(obj), stand_ins(obj))


def choices(retriever: object, retrievers: Mapping[str, object] | None) -> tuple[Choice, ...]:
    """The Explorer's retrievers, in the order given: exactly one of ``retriever`` (named
    after its type or function) or ``retrievers`` (``{name: retriever}``, non-empty).

    >>> [c.name for c in choices(None, {"a": lambda q: [], "b": lambda q: []})]
    ['a', 'b']
    >>> def bm25(query): return []
    >>> [c.name for c in choices(bm25, None)]
    ['bm25']
    >>> choices(None, {})
    Traceback (most recent call last):
    askkit.errors.UsageError: retrievers is empty: give at least one {name: retriever}
    """
    if retriever is not None and retrievers is not None:
        raise UsageError("give the Explorer a retriever or retrievers={name: retriever}, not both")
    if retrievers is None:
        if retriever is None:
            raise UsageError(
                "the Explorer needs a retriever, or retrievers={name: retriever} to switch between"
            )
        adapted = as_retriever(retriever)
        name = str(getattr(adapted, "name", "") or type(retriever).__name__)
        fetch, origin = _pool_source(retriever, adapted)
        return (
            Choice(name, adapted, fetch, origin, _health_source(retriever), stand_ins(retriever)),
        )
    if not isinstance(retrievers, Mapping):
        raise UsageError(
            f"retrievers must be a mapping {{name: retriever}}, got {type(retrievers).__name__}"
        )
    if not retrievers:
        raise UsageError("retrievers is empty: give at least one {name: retriever}")
    out = []
    for name, obj in retrievers.items():
        if not isinstance(name, str) or not name.strip():
            raise UsageError(f"a retriever's name must be a non-empty string, got {name!r}")
        try:
            out.append(_choice(name, obj))
        except TypeError as exc:
            raise TypeError(f"retrievers[{name!r}]: {exc}") from exc
    return tuple(out)


def pick(options: Sequence[Choice], name: str) -> Choice:
    """The retriever called ``name``; a :class:`~askkit.errors.UsageError` names the known ones.

    >>> pick(choices(None, {"bm25": lambda q: []}), "dense")
    Traceback (most recent call last):
    askkit.errors.UsageError: no retriever named 'dense'; this Explorer has 'bm25'
    """
    for option in options:
        if option.name == name:
            return option
    known = ", ".join(repr(o.name) for o in options)
    raise UsageError(f"no retriever named {name!r}; this Explorer has {known}")


def histogram_title(count: int, name: str | None) -> str:
    """The score histogram's title: how many scores, and whose (scales differ between
    retrievers). ``$`` is escaped so matplotlib never reads a name as mathtext.

    >>> histogram_title(3, "cost $x$"), histogram_title(0, "bm25"), histogram_title(2, None)
    ('3 scores from cost \\\\$x\\\\$', '', '2 scores')
    """
    if not count:
        return ""
    title = f"{count} scores" + (f" from {name}" if name else "")
    return title.replace("$", r"\$")


@dataclass(frozen=True, slots=True)
class Answer:
    """One retriever's answer to a compared query: its sources, or its error."""

    retriever: str
    sources: SourceList
    seconds: float
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Comparison:
    """Every retriever's top ``k`` for one query, side by side (displays as a table).

    >>> a = Answer("a", SourceList(), 0.0, "RuntimeError: <down>")
    >>> "&lt;down&gt;" in Comparison("q", 5, (a,)).html()
    True
    """

    query: str
    k: int
    answers: tuple[Answer, ...]

    def frame(self) -> pd.DataFrame:
        """One row per retrieved source: ``retriever``, ``rank``, ``path``, ``heading``,
        ``score`` (a failed retriever has no rows)."""
        import pandas as pd

        kept = [a for a in self.answers if a.error is None]
        return pd.DataFrame(
            {
                "retriever": [a.retriever for a in kept for _ in a.sources],
                "rank": [i + 1 for a in kept for i in range(len(a.sources))],
                "path": [str(s.path) for a in kept for s in a.sources],
                "heading": [s.heading for a in kept for s in a.sources],
                "score": pd.Series([s.score for a in kept for s in a.sources], dtype="float64"),
            }
        )

    def table(self) -> pd.DataFrame:
        """Rank by retriever: each cell ``path · score`` (``error`` for a failed one)."""
        import pandas as pd

        rows = max((len(a.sources) for a in self.answers), default=0)
        columns = {a.retriever: _cells(a, rows) for a in self.answers}
        return pd.DataFrame(columns, index=pd.RangeIndex(1, rows + 1, name="rank"))

    def html(self) -> str:
        """The table and each failure, escaped (no ``<style>``: fit for a widget)."""
        head = _html.message(f"top {self.k} for {self.query}", tone="muted")
        errors = "".join(
            _html.message(a.error, tone="error", lead=a.retriever)
            for a in self.answers
            if a.error is not None
        )
        return head + _html.data_table(self.table()) + errors

    def _repr_html_(self) -> str:
        return _html.fragment(self.html())


def _cells(answer: Answer, rows: int) -> list[str]:
    if answer.error is not None:
        return ["error", *[""] * (rows - 1)] if rows else []
    shown = [f"{s.path} · {number_label(s.score, 3)}" for s in answer.sources]
    return shown + [""] * (rows - len(shown))


def compare(options: Sequence[Choice], query: str, k: int) -> Comparison:
    """Ask every retriever for ``query``'s top ``k`` in turn; one that raises is recorded."""
    answers = []
    for option in options:
        started = time.perf_counter()
        try:
            sources = AskSource.from_chunks(option.retriever(query, k=k))
        except Exception as exc:  # any retriever failure is shown, the others still run
            answers.append(
                Answer(option.name, SourceList(), time.perf_counter() - started, describe(exc))
            )
        else:
            answers.append(Answer(option.name, sources, time.perf_counter() - started))
    return Comparison(query, k, tuple(answers))


# --------------------------------------------------------------------------- the switch


def switch_kind(labels: Sequence[str]) -> Literal["toggles", "dropdown"]:
    """Toggle buttons when a few labels fit whole on one line, else a dropdown.

    A toggle button sized to its label shows it whole only while the row has room:
    more than four retrievers, a label over 32 characters or more than 96 in all
    choose the dropdown, whose menu shows every label whole.

    >>> switch_kind(["BM25", "dense", "dense + reranker (stand-in)", "kimun"])
    'toggles'
    >>> switch_kind(["a"] * 5), switch_kind(["a very long retriever name, as a user wrote it"])
    ('dropdown', 'dropdown')
    """
    fits = (
        len(labels) <= _TOGGLES_UP_TO
        and max((len(label) for label in labels), default=0) <= _TOGGLE_LABEL_CHARS
        and sum(len(label) for label in labels) <= _TOGGLE_LINE_CHARS
    )
    return "toggles" if fits else "dropdown"


def switch_width(labels: Sequence[str]) -> str:
    """The dropdown's CSS width: its longest label whole, after the *retriever* label.

    >>> switch_width(["BM25", "dense + reranker (stand-in)"])
    'calc(27ch + 120px)'
    """
    longest = max((len(label) for label in labels), default=0)
    return f"calc({longest}ch + 120px)"


# --------------------------------------------------------------------------- the history


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One query of the session: how many sources it found, in how long, or its error,
    and which retriever answered (``None`` when the Explorer has only one).

    >>> HistoryEntry("rye", 3, 0.01, retriever="BM25").label()
    'rye (3 sources from BM25)'
    """

    query: str
    count: int
    seconds: float
    error: str | None = None
    retriever: str | None = None

    def label(self) -> str:
        """One line: the query, how many sources (or an error), and from which retriever."""
        outcome = "error" if self.error is not None else f"{self.count} sources"
        by = f" from {self.retriever}" if self.retriever is not None else ""
        return f"{self.query} ({outcome}{by})"


def _question_key(query: str) -> str:
    return " ".join(query.split())


@dataclass(frozen=True, slots=True)
class HistoryItem:
    """One question of the history: its latest run and, per retriever that answered it
    (in the order they first did), that retriever's latest run."""

    latest: HistoryEntry
    runs: tuple[HistoryEntry, ...]

    @property
    def query(self) -> str:
        """The question, as last asked."""
        return self.latest.query

    @property
    def failed(self) -> bool:
        """Whether the question's latest run failed."""
        return self.latest.error is not None

    def summary(self, labels: Mapping[str, str] | None = None) -> list[tuple[str, bool]]:
        """``(text, failed)`` per retriever: ``BM25: 5``, ``kimun: error``; a lone
        retriever (no name) reads ``5 sources``. ``labels`` maps names to the labels shown.

        >>> item = history_items([HistoryEntry("q", 5, 0.1, None, "BM25"),
        ...                       HistoryEntry("q", 0, 0.1, "E", "kimun")])[0]
        >>> item.summary()
        [('BM25: 5', False), ('kimun: error', True)]
        """
        known = labels or {}
        out = []
        for run in self.runs:
            outcome = "error" if run.error is not None else str(run.count)
            if run.retriever is None:
                plural = "s" if run.count != 1 else ""
                text = "error" if run.error is not None else f"{run.count} source{plural}"
            else:
                text = f"{known.get(run.retriever, run.retriever)}: {outcome}"
            out.append((text, run.error is not None))
        return out


def history_items(history: Sequence[HistoryEntry], limit: int = HISTORY_LIMIT) -> list[HistoryItem]:
    """The history as the Explorer lists it: one item per question (the same words,
    whitespace aside), the most recently asked first, at most ``limit``; in each, the
    retrievers that answered it, each with its latest run.

    >>> runs = [HistoryEntry("rye", 3, 0.1, None, "BM25"), HistoryEntry("oats", 2, 0.1, None,
    ...         "BM25"), HistoryEntry("rye", 4, 0.1, None, "dense"),
    ...         HistoryEntry("rye ", 5, 0.1, None, "BM25")]
    >>> [(i.query, [r.retriever for r in i.runs]) for i in history_items(runs)]
    [('rye ', ['BM25', 'dense']), ('oats', ['BM25'])]
    >>> [r.count for r in history_items(runs)[0].runs], len(history_items(runs, limit=1))
    ([5, 4], 1)
    """
    runs: dict[str, dict[str | None, HistoryEntry]] = {}
    latest: dict[str, HistoryEntry] = {}
    for entry in history:
        key = _question_key(entry.query)
        runs.setdefault(key, {})[entry.retriever] = entry  # first answer keeps its place
        latest.pop(key, None)
        latest[key] = entry  # re-inserted: the dict ends with the most recently asked
    items = [
        HistoryItem(entry, tuple(runs[key].values())) for key, entry in reversed(latest.items())
    ]
    return items[: max(limit, 0)]


# --------------------------------------------------------------------------- status lines


def frontmatter_notice(sources: Sequence[AskSource]) -> str | None:
    """What the Explorer says under results that hold notes' frontmatter (``None`` when
    none do): kimun indexes a note's YAML frontmatter as a section of its own, so its
    keys and values (tags, aliases, ``cssclasses``) are matched like any text. That is
    kimun's behaviour, and askkit keeps it; the line makes it visible. ``sources`` are
    in the retriever's order; "the top n" ends at the last frontmatter source.

    >>> from askkit import VaultPath
    >>> def s(path, heading, n): return AskSource(VaultPath(path), heading, None, 1.0, "x", n)
    >>> notice = frontmatter_notice([s("a.md", "A", 1), s("b.md", "FrontMatter", 2)])
    >>> notice.split(", which")[0], notice.endswith("like any text (b.md)")
    ("1 of the top 2 is a note's frontmatter", True)
    >>> frontmatter_notice([s("a.md", "A", 1)]) is None
    True
    """
    ranks = [i for i, src in enumerate(sources, 1) if src.heading == FRONTMATTER]
    if not ranks:
        return None
    count, top = len(ranks), ranks[-1]
    among = "the top result" if top == 1 else f"the top {top}"
    if count == 1:
        what = f"1 of {among} is" if top > 1 else f"{among} is"
        what += " a note's frontmatter"
    else:
        what = f"{count} of {among} are" if count < top else f"{among} are all"
        what += " notes' frontmatter"
    paths = [str(sources[r - 1].path) for r in ranks]
    shown = ", ".join(paths[:4]) + (f" and {len(paths) - 4} more" if len(paths) > 4 else "")
    return (
        f"{what}, which kimun indexes as a section of its own: its keys and values "
        f"(tags, aliases, cssclasses...) match a question like any text ({shown})"
    )


def chain_status(query: str | None, traced: str | None) -> str:
    """The *why not* panel's line: what to do next, for the question the Explorer shows.

    >>> chain_status(None, None)
    'run a query, name the notes to follow, click trace'
    >>> chain_status("rye", None)
    'follow notes through the stages of rye: name them (path#heading, comma-separated), click trace'
    >>> chain_status("oats", "rye")
    'the chain below follows rye; click trace to follow the notes through oats'
    """
    if not query:
        return "run a query, name the notes to follow, click trace"
    if traced is None:
        return (
            f"follow notes through the stages of {query}: name them (path#heading, "
            "comma-separated), click trace"
        )
    if traced == query:
        return f"the chain below follows {query}"
    return f"the chain below follows {traced}; click trace to follow the notes through {query}"
