"""The ``df.ask`` pandas accessor on a sources frame (registered by ``import askkit.frame``).

Every method is a thin, vectorized view over :mod:`askkit.frame`'s schema:
``.sources()`` and ``.turn(id)`` go back to objects, ``.top(k)`` keeps the
best ``k`` sources of each turn, ``.by_note()`` rolls chunks up to notes,
``.describe_scores()`` summarises each turn's scores and ``.stored(vault)``
says how each chunk relates to its note now (current, stored before the note
changed, or by an older kimun).

Examples
--------
>>> import askkit.frame
>>> df = askkit.frame.sources_frame("data/sample_turn.json")
>>> df.ask.top(2)["ordinal"].tolist()
[1, 2]
>>> notes = df.ask.by_note()
>>> notes["note"].tolist()[0], notes["chunks"].tolist()[0], notes["sections"].tolist()[0]
('sourdough', 2, 1)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from askkit.frame.load import to_sources, to_turns
from askkit.frame.schema import STRING
from askkit.sources import SourceList, Turn

if TYPE_CHECKING:
    import os

    from askkit.vault import KimunVersion, Vault

__all__ = ["AskAccessor"]

_NEEDED = ("turn_id", "line", "ordinal", "rank", "path", "score", "heading", "cited")


@pd.api.extensions.register_dataframe_accessor("ask")
class AskAccessor:
    """``df.ask``: askkit's views of a frame built by :func:`askkit.frame.sources_frame`."""

    def __init__(self, df: pd.DataFrame) -> None:
        missing = [c for c in _NEEDED if c not in df.columns]
        if missing:
            raise AttributeError(
                f"df.ask needs a sources frame (askkit.frame.sources_frame); missing {missing}"
            )
        self._df = df

    def _turn_key(self) -> pd.Series:
        """One integer per turn (``turn_id`` and ``line``), in order of first appearance."""
        codes, _ = pd.factorize(
            pd.MultiIndex.from_arrays([self._df["turn_id"], self._df["line"]]), sort=False
        )
        return pd.Series(codes, index=self._df.index)

    def sources(self) -> SourceList:
        """The rows as :class:`~askkit.AskSource` objects (see :func:`askkit.frame.to_sources`)."""
        return to_sources(self._df)

    def turns(self) -> dict[str, Turn]:
        """``{turn_id: Turn}`` (see :func:`askkit.frame.to_turns`)."""
        return to_turns(self._df)

    def turn(self, turn_id: str) -> Turn:
        """The :class:`~askkit.Turn` with this id, rebuilt from its rows."""
        rows = self._df[self._df["turn_id"] == turn_id]
        if rows.empty:
            known = self._df["turn_id"].drop_duplicates().head(5).tolist()
            raise KeyError(f"no turn {turn_id!r} in the frame (ids such as {known})")
        return to_turns(rows)[turn_id]

    def top(self, k: int) -> pd.DataFrame:
        """The ``k`` best-scored sources of each turn, best first; ties keep list order.

        Turns stay in frame order. A new frame; the caller's is not modified.
        """
        if k < 0:
            raise ValueError(f"k must be >= 0, got {k}")
        df = self._df
        key = self._turn_key().to_numpy()
        order = np.lexsort((df["rank"].to_numpy(), -df["score"].to_numpy(), key))
        ranked = df.iloc[order]
        kept = ranked.groupby(key[order], sort=False).cumcount() < k
        return ranked[kept.to_numpy()]

    def by_note(self) -> pd.DataFrame:
        """One row per (turn, note): chunks rolled up to the note they came from.

        kimun splits a long section into several chunks with one title, so a
        note can be retrieved many times for one question. Columns: ``turn_id``,
        ``path``, ``note``, ``best_score``, ``best_rank`` (best ``score_rank``),
        ``chunks`` (rows), ``sections`` (distinct headings: split chunks of one
        section count once), ``ordinals`` (sorted list), ``cited`` (any chunk
        cited). Sorted by turn (frame order), then best score descending.
        """
        df = self._df.assign(_turn=self._turn_key().to_numpy())
        grouped = df.sort_values("ordinal", kind="stable").groupby(
            ["_turn", "turn_id", "path"], sort=False, observed=True
        )
        out = grouped.agg(
            note=("note", "first") if "note" in df else ("path", "first"),
            best_score=("score", "max"),
            best_rank=("score_rank", "min") if "score_rank" in df else ("rank", "min"),
            chunks=("ordinal", "size"),
            sections=("heading", "nunique"),
            ordinals=("ordinal", list),
            cited=("cited", "any"),
        ).reset_index()
        out = out.sort_values(["_turn", "best_score"], ascending=[True, False], kind="stable")
        return out.drop(columns="_turn").reset_index(drop=True)

    def stored(
        self, vault: Vault | str | os.PathLike[str], *, kimun: KimunVersion = "0.18"
    ) -> pd.DataFrame:
        """The frame with a ``stored`` column: each chunk against its note in ``vault`` now.

        kimun's server keeps a note's chunks until it re-indexes the note, so a
        stored chunk may predate the note's last edit, or have been cut by an
        older kimun. ``stored`` is ``"current"`` (the chunk is a piece of a
        section ``kimun``'s chunker cuts from the note now), ``"note changed"``
        (stored before the note changed), ``"older kimun"`` (the note is
        unchanged but cut differently now) or ``"note missing"`` (the vault
        cannot give the note); see :func:`askkit.vault.locate.stored_status`.
        Each note is read once. A new frame; the caller's is not modified.
        """
        from askkit.vault import Vault
        from askkit.vault.locate import stored_statuses

        where = vault if isinstance(vault, Vault) else Vault(vault)
        statuses = stored_statuses(self._df, where, kimun=kimun)
        column = pd.Series(statuses, index=self._df.index, dtype=STRING)
        return self._df.assign(stored=column)

    def describe_scores(self) -> pd.DataFrame:
        """Per-turn score summary, indexed by ``turn_id`` (frame order).

        ``sources``, ``top``, ``mean``, ``std`` (population, ddof=0), ``min``,
        ``top_gap`` (best minus second best; NaN with one source) and ``cited``
        (how many rows are cited).
        """
        df = self._df
        key = self._turn_key().to_numpy()  # codes 0..n-1 in order of first appearance
        grouped = df["score"].groupby(key)
        ordered = pd.DataFrame({"turn": key, "score": df["score"].to_numpy()}).sort_values(
            ["turn", "score"], ascending=[True, False], kind="stable"
        )
        place = ordered.groupby("turn").cumcount().to_numpy()
        first = ordered[place == 0].set_index("turn")["score"]
        second = ordered[place == 1].set_index("turn")["score"]
        out = pd.DataFrame(
            {
                "turn_id": df["turn_id"].groupby(key).first(),
                "sources": grouped.size(),
                "top": grouped.max(),
                "mean": grouped.mean(),
                "std": grouped.std(ddof=0),
                "min": grouped.min(),
                "top_gap": first - second,
                "cited": df["cited"].groupby(key).sum().astype("int64"),
            }
        )
        return out.set_index("turn_id")
