"""The Explorer's retrievers: their names, how each gets its pool, and a side-by-side comparison.

Pure model behind :class:`~askkit.widgets.Explorer`'s retriever switch (no widget here):
:func:`choices` validates and adapts what the Explorer was given, :func:`pick` finds one
by name, :func:`compare` asks each for the same query and :class:`Comparison` shows their
answers side by side, escaped.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from askkit import _html
from askkit._text import number_label
from askkit.errors import UsageError
from askkit.ranking.settings import CANDIDATE_POOL
from askkit.retrieve import Retriever, as_retriever
from askkit.sources import AskSource, SourceList

if TYPE_CHECKING:
    import pandas as pd

    from askkit.retrieve.client import Health

__all__ = [
    "Answer",
    "Choice",
    "Comparison",
    "choices",
    "compare",
    "describe",
    "histogram_title",
    "pick",
    "server_notices",
    "stand_ins",
]


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
