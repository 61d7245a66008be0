"""kimun's context-cut settings: one frozen value, sanitised as kimun's server does.

kimun reads these from the ``[reranker]`` table of its ``server.toml``
(``RerankerConfig`` in ``server/src/config.rs``) and hands them to its query
pipeline (``KimunRag::with_context_cut``, ``with_score_range_cutoff``,
``with_drop_window`` in ``server/src/lib.rs``), which sanitises them:

* ``score_range_cutoff`` is clamped to ``[0, 1]`` (``inf`` -> 1, ``-inf`` -> 0);
  a NaN is ignored and the previous value (at first the default 0.4) kept;
* the largest-drop window becomes ``min >= 1`` and ``max >= min``;
* ``top_k`` is floored to 1 where it is used (``cut_len``, the search walk).

kimun's config parser types ``top_k`` and the window ``usize`` and reads them
from TOML, whose integers are signed 64-bit: a count above
:data:`MAX_COUNT` is refused here, as kimun refuses the file.

Every number and rule here was read from kimun at commit
:data:`KIMUN_COMMIT` (snapshot ``main`` = f28bdd54; ``lib.rs``,
``reranker/mod.rs`` and ``config.rs`` last changed in 42c2f81b).
"""

from __future__ import annotations

import html
import math
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any, Literal, get_args

from askkit._files import read_input
from askkit.errors import SchemaError

__all__ = [
    "CANDIDATE_POOL",
    "DEFAULT_TOP_K",
    "DROP_WINDOW_MAX",
    "DROP_WINDOW_MIN",
    "HISTORY_ANSWER_HEAD",
    "HISTORY_ANSWER_TAIL",
    "KIMUN_COMMIT",
    "MAX_COUNT",
    "MAX_SETTINGS_BYTES",
    "RANGE_HIGH_PERCENTILE",
    "RANGE_LOW_PERCENTILE",
    "SCORE_RANGE_DEFAULT_CUTOFF",
    "STRATEGIES",
    "CutSettings",
    "Strategy",
]

#: The kimun commit whose server code askkit.ranking follows (the newest readable).
KIMUN_COMMIT = "f28bdd5426c7c22f67601f62f588e958c35e43e1"
#: Chunks the vector store returns per query, before de-duplication.
CANDIDATE_POOL = 80
#: The score-range cut's default normalised cutoff (``score_range_cutoff``).
SCORE_RANGE_DEFAULT_CUTOFF = 0.4
#: The score-range cut measures its range between these percentiles.
RANGE_LOW_PERCENTILE = 0.05
RANGE_HIGH_PERCENTILE = 0.95
#: The largest-drop cut's default note-position search window.
DROP_WINDOW_MIN = 3
DROP_WINDOW_MAX = 30
#: ``[reranker] top_k``'s default (the fixed cut's size).
DEFAULT_TOP_K = 20
#: Characters of a previous answer kept in a follow-up's retrieval query.
HISTORY_ANSWER_HEAD = 150
HISTORY_ANSWER_TAIL = 350

#: The largest ``top_k`` or window bound kimun reads: its fields are ``usize``, and a
#: TOML integer is signed 64-bit (a larger one is not TOML to kimun's parser).
MAX_COUNT = 2**63 - 1
#: The largest settings file :meth:`CutSettings.from_file` reads (a server.toml is a few KiB).
MAX_SETTINGS_BYTES = 1 << 20

Strategy = Literal["fixed", "score-range", "largest-drop"]
#: The ``context_cut`` values kimun accepts, in its order.
STRATEGIES: tuple[Strategy, ...] = get_args(Strategy)


def _strategy(value: object, field: str = "strategy") -> Strategy:
    if isinstance(value, str) and value in STRATEGIES:
        return value
    raise SchemaError(
        "unknown context cut; kimun accepts " + ", ".join(repr(s) for s in STRATEGIES),
        field=field,
        value=value,
    )


def _whole(value: object, field: str) -> int:
    if isinstance(value, Integral) and not isinstance(value, bool):
        number = int(value)
        if number > MAX_COUNT:
            raise SchemaError(
                f"expected a whole number at most {MAX_COUNT} (kimun reads it as a usize from "
                "TOML, whose integers are 64-bit)",
                field=field,
                value=value,
            )
        return number
    raise SchemaError("expected a whole number", field=field, value=value)


def _number(value: object, field: str) -> float:
    if isinstance(value, Real) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:  # an int too large for a float clamps like inf
            return -math.inf if str(value).startswith("-") else math.inf
    raise SchemaError("expected a number", field=field, value=value)


def _cutoff(value: object, previous: float) -> float:
    """kimun's ``with_score_range_cutoff``: NaN keeps ``previous``, the rest is clamped."""
    number = _number(value, "score_range_cutoff")
    if math.isnan(number):
        return previous
    return min(max(number, 0.0), 1.0)


def _window(low: object, high: object) -> tuple[int, int]:
    """kimun's ``with_drop_window``: ``min >= 1`` and ``max >= min``."""
    lo = max(_whole(low, "drop_window_min"), 1)
    return lo, max(_whole(high, "drop_window_max"), lo)


def _toml_int(value: int) -> bool:
    """Whether ``value`` is a TOML integer (signed 64-bit; Python's tomllib reads any)."""
    return -MAX_COUNT - 1 <= value <= MAX_COUNT


def _toml_document(text: object) -> dict[str, Any]:
    """``text`` parsed as TOML; anything that is not TOML raises :class:`SchemaError`."""
    if isinstance(text, bytes | bytearray):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SchemaError(
                f"not UTF-8 (byte {exc.start}); TOML is UTF-8 text", has_value=False
            ) from None
    if not isinstance(text, str):
        raise SchemaError("expected TOML text (a str, or UTF-8 bytes)", value=text)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SchemaError(f"not valid TOML: {exc}", has_value=False) from None
    except RecursionError:  # arrays or inline tables nested thousands deep
        raise SchemaError("the TOML is nested too deeply to read", has_value=False) from None


def _reranker_table(document: Mapping[str, Any]) -> Mapping[str, Any]:
    """The ``[reranker]`` table of a server.toml, or the document itself (a bare block)."""
    table: Any = document.get("reranker", document)
    if not isinstance(table, Mapping):
        raise SchemaError("expected a table", field="reranker", value=table)
    return table


def _toml_float(value: float) -> str:
    text = repr(value)  # shortest round-trip; "0.4", "1.0", "1e-05" are TOML floats
    return text if any(c in text for c in ".en") else text + ".0"


@dataclass(frozen=True, slots=True)
class CutSettings:
    """How kimun sizes a query's context: the strategy and its knobs, sanitised.

    Parameters
    ----------
    strategy:
        ``"fixed"`` (``top_k`` chunks; ``top_k`` notes on the search surface),
        ``"score-range"`` (kimun's default) or ``"largest-drop"``; kimun's
        ``[reranker] context_cut``.
    score_range_cutoff:
        The normalised cutoff of the score-range cut, clamped to ``[0, 1]``; a
        NaN keeps the default (0.4), as kimun keeps its previous value.
    drop_window_min, drop_window_max:
        The note positions where the largest-drop cut looks for its gap;
        sanitised to ``min >= 1`` and ``max >= min``.
    top_k:
        The fixed cut's size (kimun's ``[reranker] top_k``, default 20, or the
        request's ``context_size``); floored to 1.

    Raises
    ------
    SchemaError
        An unknown strategy, or a value of the wrong type (a bool, a string,
        a float where a whole number is due); ``field`` names the option.

    Examples
    --------
    >>> CutSettings(score_range_cutoff=1.7, drop_window_min=0, drop_window_max=-2, top_k=0)
    CutSettings(strategy='score-range', score_range_cutoff=1.0, drop_window_min=1, drop_window_max=1, top_k=1)
    >>> CutSettings(score_range_cutoff=0.55).replace(score_range_cutoff=float("nan"))
    CutSettings(strategy='score-range', score_range_cutoff=0.55, drop_window_min=3, drop_window_max=30, top_k=20)
    """  # noqa: E501 - a doctest's output is one line

    strategy: Strategy = "score-range"
    score_range_cutoff: float = SCORE_RANGE_DEFAULT_CUTOFF
    drop_window_min: int = DROP_WINDOW_MIN
    drop_window_max: int = DROP_WINDOW_MAX
    top_k: int = DEFAULT_TOP_K

    def __post_init__(self) -> None:
        low, high = _window(self.drop_window_min, self.drop_window_max)
        object.__setattr__(self, "strategy", _strategy(self.strategy))
        cutoff = _cutoff(self.score_range_cutoff, SCORE_RANGE_DEFAULT_CUTOFF)
        object.__setattr__(self, "score_range_cutoff", cutoff)
        object.__setattr__(self, "drop_window_min", low)
        object.__setattr__(self, "drop_window_max", high)
        object.__setattr__(self, "top_k", max(_whole(self.top_k, "top_k"), 1))

    def replace(
        self,
        *,
        strategy: Strategy | None = None,
        score_range_cutoff: float | None = None,
        drop_window_min: int | None = None,
        drop_window_max: int | None = None,
        top_k: int | None = None,
    ) -> CutSettings:
        """A copy with some options changed, sanitised as kimun's builder methods do.

        Unlike :func:`dataclasses.replace`, a NaN cutoff keeps *this* value
        (kimun logs "Ignoring NaN score_range_cutoff; keeping ..."), and a new
        window bound is sanitised against the other, current one.

        >>> CutSettings().replace(strategy="largest-drop", drop_window_min=40).window
        (40, 40)
        """
        cutoff = self.score_range_cutoff
        if score_range_cutoff is not None:
            cutoff = _cutoff(score_range_cutoff, self.score_range_cutoff)
        return CutSettings(
            strategy=self.strategy if strategy is None else strategy,
            score_range_cutoff=cutoff,
            drop_window_min=self.drop_window_min if drop_window_min is None else drop_window_min,
            drop_window_max=self.drop_window_max if drop_window_max is None else drop_window_max,
            top_k=self.top_k if top_k is None else top_k,
        )

    @property
    def window(self) -> tuple[int, int]:
        """The largest-drop search window ``(min, max)``."""
        return self.drop_window_min, self.drop_window_max

    @property
    def label(self) -> str:
        """The strategy and the one knob it reads, for tables and messages.

        >>> CutSettings().label, CutSettings(strategy="fixed", top_k=5).label
        ('score-range cutoff=0.4', 'fixed top_k=5')
        """
        if self.strategy == "fixed":
            return f"fixed top_k={self.top_k}"
        if self.strategy == "score-range":
            return f"score-range cutoff={self.score_range_cutoff:g}"
        return f"largest-drop window={self.drop_window_min}..{self.drop_window_max}"

    def to_toml(self) -> str:
        """The ``[reranker]`` keys to paste into kimun's ``server.toml``.

        Merge these lines into the existing ``[reranker]`` table (keep its
        ``enabled``, ``type``, ``url``...; TOML refuses a second ``[reranker]``
        header). Key names and spellings are kimun's (``config.rs``).

        >>> print(CutSettings(strategy="largest-drop", drop_window_min=2).to_toml())
        [reranker]
        top_k = 20
        context_cut = "largest-drop"
        score_range_cutoff = 0.4
        drop_window_min = 2
        drop_window_max = 30
        >>> CutSettings.from_toml(CutSettings(top_k=7).to_toml()) == CutSettings(top_k=7)
        True
        """
        return "\n".join(
            [
                "[reranker]",
                f"top_k = {self.top_k}",
                f'context_cut = "{self.strategy}"',
                f"score_range_cutoff = {_toml_float(self.score_range_cutoff)}",
                f"drop_window_min = {self.drop_window_min}",
                f"drop_window_max = {self.drop_window_max}",
            ]
        )

    @classmethod
    def from_toml(cls, text: str | bytes | bytearray) -> CutSettings:
        """Read the context-cut keys of a ``server.toml`` (or of its ``[reranker]`` block).

        ``text`` is the TOML as a string, or as UTF-8 bytes (as kimun reads
        its file). Missing keys take kimun's defaults; values are checked as
        kimun's config parser types them (``usize``: whole numbers in
        ``0..=MAX_COUNT``; TOML's 64-bit integers) and then sanitised as its
        pipeline does. Other keys and tables are ignored.

        Raises
        ------
        SchemaError
            Text that is not TOML (not UTF-8, broken, nested too deeply to
            read) or a key of the wrong type or range; ``field`` names the key
            (``reranker.top_k``) and ``value`` holds the value read.

        >>> CutSettings.from_toml('[reranker]\\nscore_range_cutoff = nan\\ntop_k = 0')
        CutSettings(strategy='score-range', score_range_cutoff=0.4, drop_window_min=3, drop_window_max=30, top_k=1)
        """  # noqa: E501 - a doctest's output is one line
        table = _reranker_table(_toml_document(text))
        for key in ("top_k", "drop_window_min", "drop_window_max"):
            if key in table and _whole(table[key], f"reranker.{key}") < 0:
                raise SchemaError(
                    "expected a whole number >= 0", field=f"reranker.{key}", value=table[key]
                )
        cutoff = table.get("score_range_cutoff", SCORE_RANGE_DEFAULT_CUTOFF)
        if isinstance(cutoff, int) and not isinstance(cutoff, bool) and not _toml_int(cutoff):
            raise SchemaError(
                "expected a number; an integer must fit TOML's 64-bit integers",
                field="reranker.score_range_cutoff",
                value=cutoff,
            )
        return cls(
            strategy=_strategy(table.get("context_cut", "score-range"), "reranker.context_cut"),
            score_range_cutoff=_number(cutoff, "reranker.score_range_cutoff"),
            drop_window_min=table.get("drop_window_min", DROP_WINDOW_MIN),
            drop_window_max=table.get("drop_window_max", DROP_WINDOW_MAX),
            top_k=table.get("top_k", DEFAULT_TOP_K),
        )

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> CutSettings:
        """Read the context-cut keys of a ``server.toml`` file (see :meth:`from_toml`).

        The file must be a regular file of at most :data:`MAX_SETTINGS_BYTES`
        (a FIFO, a device or a folder is refused, never read); every error
        names it.

        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "server.toml"
        >>> _ = path.write_text('[reranker]\\ncontext_cut = "fixed"\\ntop_k = 8\\n')
        >>> CutSettings.from_file(path).label
        'fixed top_k=8'
        """
        raw = read_input(path, what="server.toml", limit=MAX_SETTINGS_BYTES)
        try:
            return cls.from_toml(raw)
        except SchemaError as exc:
            raise exc.located(file=os.fspath(path)) from None

    def _repr_html_(self) -> str:
        return f"<pre>{html.escape(self.to_toml())}</pre>"
