"""A vault's known-item self-test: which of its own sections a retriever and kimun's cut reach.

:func:`self_test` makes known-item questions from a vault's sections
(:func:`~askkit.reach.known_items`), runs each through a retriever's pool
(:func:`askkit.ranking.query_pools`), and reads where each question's known
section stopped with the trace's one rule (:func:`askkit.trace.trace_pools`):
``pool`` (no chunk of it among the pool), ``cut`` (the context cut drops it)
or ``context`` (kept: the answer would read it). :class:`SelfTest` holds one
row per question with the section's attributes (folder, journal or note,
length, heading depth, place in its note), so a :meth:`~SelfTest.summary`,
a :meth:`~SelfTest.breakdown` by any of them, and the sections out of reach
(:meth:`~SelfTest.unreached`, each with the trace's own sentence of why)
come from one frame.

The figures are of known items, not of judgments: a question has one known
answer, the section it was made from, and a retriever that ranks another good
section first is counted as missing it.

Examples
--------
>>> import tempfile, pathlib
>>> from askkit.retrieve import LocalIndex
>>> root = pathlib.Path(tempfile.mkdtemp())
>>> _ = (root / "bread.md").write_text(
...     "# Bread\\n## Starter\\nFeed the starter twice a day at room temperature.\\n"
...     "## Loaf\\nShape the loaf gently and bake it in a hot oven.\\n")
>>> test = self_test(root, LocalIndex(root, cache_dir=False, progress=False).pool,
...                  known=KnownItemSettings(min_words=3, kinds=("heading",)))
>>> test.per_query[["question", "stopped", "rank", "depth", "position"]]
          question  stopped  rank  depth  position
0  Bread › Starter  context     1      2         1
1     Bread › Loaf  context     1      2         2
>>> test.summary()["success"], test.unreached().empty
(1.0, True)
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sized
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np
import pandas as pd

from askkit.errors import SchemaError, VaultError
from askkit.frame.schema import STRING
from askkit.ranking import CutSettings
from askkit.ranking.pools import query_pools
from askkit.reach.queries import KnownItems, KnownItemSettings, _words, known_items
from askkit.sources import innermost_heading
from askkit.trace import printed_path, trace_pool, trace_pools
from askkit.vault import Vault, chunk_note
from askkit.wire import ChunkResult

__all__ = ["BREAKDOWNS", "LENGTH_BANDS", "PER_QUERY_COLUMNS", "SelfTest", "self_test"]

#: What :meth:`SelfTest.breakdown` groups by: a column of :attr:`SelfTest.per_query`,
#: or ``"length"``, the section's words in :data:`LENGTH_BANDS`.
BREAKDOWNS: tuple[str, ...] = ("folder", "note_kind", "kind", "depth", "position", "length")
#: The lower bounds (in words) of the length bands :meth:`SelfTest.breakdown` groups by.
LENGTH_BANDS: tuple[int, ...] = (0, 16, 32, 64, 128, 256)
#: The per-question frame: column -> dtype.
PER_QUERY_COLUMNS: dict[str, Any] = {
    "query_id": STRING,
    "question": STRING,
    "kind": STRING,
    "path": STRING,
    "heading": STRING,
    "stopped": STRING,
    "kept": np.dtype("bool"),
    "rank": pd.Int64Dtype(),
    "reciprocal_rank": np.dtype("float64"),
    "cut_len": np.dtype("int64"),
    "folder": STRING,
    "note_kind": STRING,
    "words": pd.Int64Dtype(),
    "depth": pd.Int64Dtype(),
    "position": pd.Int64Dtype(),
}
#: The order in which a section's questions got furthest (the best first).
_REACH = {"context": 0, "cut": 1, "pool": 2}

Pool = Callable[[str, int | None], list[ChunkResult]]


def _band_labels() -> list[str]:
    bounds = list(LENGTH_BANDS)
    labels = [f"{a}-{b - 1}" for a, b in pairwise(bounds)]
    return [*labels, f"{bounds[-1]}+"]


@dataclass(frozen=True, eq=False)
class SelfTest:
    """What :func:`self_test` found: where each known item stopped, and why.

    Attributes
    ----------
    items:
        The questions and their known answers (:class:`~askkit.reach.KnownItems`).
    pools:
        The long pool frame the questions were cut on
        (:data:`askkit.ranking.POOL_COLUMNS`).
    per_query:
        One row per question (:data:`PER_QUERY_COLUMNS`): the question
        (``query_id``, ``question``, ``kind``), its known section (``path``,
        ``heading``), where it stopped (``stopped``: ``pool``, ``cut`` or
        ``context``; ``kept``: in the context), ``rank`` (the pool rank of the
        section's best chunk, NA outside the pool), ``reciprocal_rank`` (0
        outside the pool), ``cut_len`` (the question's context size), and the
        section: ``folder`` (the note's top folder, ``""`` at the root),
        ``note_kind`` (``"journal"`` for a dated journal note, else ``"note"``),
        ``words``, ``depth`` (headings in its breadcrumb) and ``position``
        (1-based, among its note's sections). A section the vault does not
        hold now (given ``items`` of another vault) has NA attributes.
    settings:
        The cut the questions were cut with.
    """

    items: KnownItems
    pools: pd.DataFrame
    per_query: pd.DataFrame
    settings: CutSettings
    ranker: Pool | None = None
    """Ranks a question over the whole index (a sized retriever's pool), for the
    sentence of a section outside the pool; ``None`` when ``pool`` was a frame."""

    def __repr__(self) -> str:
        s = self.summary()
        return (
            f"<SelfTest: {s['questions']} questions, {s['success']:.0%} kept by the cut, "
            f"MRR {s['mrr']:.3f}>"
        )

    def summary(self) -> dict[str, object]:
        """The figures of the whole test, in one line.

        ``questions``; ``sections`` (distinct known sections); ``success``
        (the share of questions whose section the cut kept); ``mrr`` (mean
        reciprocal pool rank, 0 outside the pool); ``lost_at_pool`` and
        ``lost_at_cut`` (shares of questions); ``unreached`` (sections none of
        whose questions the cut kept).
        """
        frame = self.per_query
        n = len(frame)
        stopped = frame["stopped"].astype(str)
        kept_by_section = frame.groupby(["path", "heading"], dropna=False, observed=True)["kept"]
        return {
            "questions": n,
            "sections": int(kept_by_section.ngroups),
            "success": float(frame["kept"].mean()) if n else float("nan"),
            "mrr": float(frame["reciprocal_rank"].mean()) if n else float("nan"),
            "lost_at_pool": float((stopped == "pool").mean()) if n else float("nan"),
            "lost_at_cut": float((stopped == "cut").mean()) if n else float("nan"),
            "unreached": int((~kept_by_section.any()).sum()),
        }

    def breakdown(self, by: str) -> pd.DataFrame:
        """``count``, ``success`` (share kept) and ``mrr`` per group of questions.

        ``by`` is one of :data:`BREAKDOWNS`: ``folder``, ``note_kind``,
        ``kind``, ``depth``, ``position`` (groups sorted by their value), or
        ``length`` (the section's words in :data:`LENGTH_BANDS`, shortest
        first, empty bands left out). Sections the vault does not hold now
        form an NA group.
        """
        if by not in BREAKDOWNS:
            raise ValueError(f"breakdown by one of {BREAKDOWNS}, got {by!r}")
        frame = self.per_query
        if by == "length":
            key = pd.cut(
                frame["words"].astype("float64"),
                bins=[*LENGTH_BANDS, np.inf],
                right=False,
                labels=_band_labels(),
            )
        else:
            key = frame[by]
        grouped = pd.DataFrame(
            {"key": key, "kept": frame["kept"], "rr": frame["reciprocal_rank"]}
        ).groupby("key", dropna=False, observed=True, sort=True)
        out = pd.DataFrame(
            {
                "count": grouped.size().astype(np.int64),
                "success": grouped["kept"].mean().astype(np.float64),
                "mrr": grouped["rr"].mean().astype(np.float64),
            }
        )
        out.index.name = by
        return out

    def unreached(self) -> pd.DataFrame:
        """The sections none of whose questions the cut kept, each with the trace's why.

        One row per section (in the order of their first question): ``path``,
        ``heading``, ``questions`` (how many were asked of it),
        ``lost_at_pool`` and ``lost_at_cut`` (how many stopped there), and
        the question that got furthest (at the cut before the pool, then the
        best pool rank): its ``query_id``, ``question``, ``kind``,
        ``stopped``, ``rank`` and ``why``, the sentence
        :func:`askkit.trace.trace_pool` says of that stage for that question
        (traced for these questions alone).
        """
        frame = self.per_query
        rows: list[dict[str, Any]] = []
        keys = ["path", "heading"]
        for _, group in frame.groupby(keys, dropna=False, sort=False, observed=True):
            if group["kept"].any():
                continue
            reach = group["stopped"].astype(str).map(_REACH)
            ranks = group["rank"].astype("float64").fillna(np.inf)
            best = group.assign(_reach=reach.to_numpy(), _rank=ranks.to_numpy()).sort_values(
                ["_reach", "_rank"], kind="stable"
            )
            row = best.iloc[0]
            stops = group["stopped"].astype(str)
            rows.append(
                {
                    "path": row["path"],
                    "heading": row["heading"],
                    "questions": len(group),
                    "lost_at_pool": int((stops == "pool").sum()),
                    "lost_at_cut": int((stops == "cut").sum()),
                    "query_id": row["query_id"],
                    "question": row["question"],
                    "kind": row["kind"],
                    "stopped": row["stopped"],
                    "rank": row["rank"],
                    "why": self._why(row),
                }
            )
        columns: dict[str, Any] = {
            "path": STRING,
            "heading": STRING,
            "questions": np.dtype("int64"),
            "lost_at_pool": np.dtype("int64"),
            "lost_at_cut": np.dtype("int64"),
            "query_id": STRING,
            "question": STRING,
            "kind": STRING,
            "stopped": STRING,
            "rank": pd.Int64Dtype(),
            "why": STRING,
        }
        return pd.DataFrame(
            {
                name: pd.Series([r[name] for r in rows], dtype=dtype)
                for name, dtype in columns.items()
            }
        )

    def _why(self, row: pd.Series) -> str:
        """The trace's sentence of the stage ``row``'s question stopped at."""
        query_id = str(row["query_id"])
        rows = self.pools[self.pools["query_id"].astype(str) == query_id]
        if "rank" in rows.columns:
            rows = rows.sort_values("rank", kind="stable")
        pool = _chunks(rows)
        heading = None if pd.isna(row["heading"]) or row["heading"] == "" else str(row["heading"])
        ranking = None
        if row["stopped"] == "pool" and self.ranker is not None:
            owner = getattr(self.ranker, "__self__", None)
            if isinstance(owner, Sized) and len(owner) > 0:
                ranking = self.ranker(str(row["question"]), len(owner))
        traced = trace_pool(
            pool,
            [(printed_path(str(row["path"])), heading)],
            self.settings,
            query_id=query_id,
            ranking=ranking,
        )
        at = traced[traced["stage"].astype(str) == str(row["stopped"])]
        if at.empty:  # the trace's own stopping row, should the stages ever disagree
            at = traced[traced["stopped"]]
        return str(at["why"].iloc[0])


def _chunks(rows: pd.DataFrame) -> list[ChunkResult]:
    """A pool frame's rows as chunks, each text distinct so none is folded again.

    :func:`~askkit.trace.trace_pools` reads the rows as the (already
    de-duplicated) pool; the per-query trace de-duplicates, so the chunks are
    made distinct, as :func:`~askkit.trace.trace_pools_reference` makes them.
    """
    titles = rows["title"].astype(str).tolist()
    paths = rows["path"].astype(str).tolist()
    scores = rows["score"].to_numpy(dtype=np.float64).tolist()
    return [
        ChunkResult(
            path=path,
            title=title,
            date=None,
            content=f"{path}#{title}#{i}",
            hash="h",
            similarity_score=score,
            ordinal=i + 1,
        )
        for i, (path, title, score) in enumerate(zip(paths, titles, scores, strict=True))
    ]


def _attributes(
    vault: Vault, wanted: pd.DataFrame, known: KnownItemSettings
) -> dict[tuple[str, str], tuple[str, str, int, int, int]]:
    """``(path, heading) -> (folder, note_kind, words, depth, position)`` of each wanted section.

    A note's sections are kimun's (:func:`askkit.vault.chunk_note`), the
    frontmatter left out; of two sections with one innermost heading, the
    first long enough to be a source (``known.min_words``) is taken, else
    the first.
    """
    out: dict[tuple[str, str], tuple[str, str, int, int, int]] = {}
    for path in dict.fromkeys(wanted["path"].astype(str)):
        try:
            note = vault.note(path)
        except (VaultError, OSError):
            continue  # not in the vault now: its attributes stay NA
        printed = str(note.path)
        folder = printed.split("/", 1)[0] if "/" in printed else ""
        kind = "journal" if note.date is not None else "note"
        sections = [s for s in chunk_note(note.text, kimun=known.kimun) if not s.is_frontmatter]
        found: dict[str, tuple[str, str, int, int, int]] = {}
        for position, section in enumerate(sections, start=1):
            heading = innermost_heading(section.title)
            words = _words(section.text)
            if heading in found and found[heading][2] >= known.min_words:
                continue
            found[heading] = (folder, kind, words, len(section.breadcrumb), position)
        for heading, values in found.items():
            out[(path, heading)] = values
    return out


def _pool_frame(pool: pd.DataFrame, ids: pd.Index, size: int | None) -> pd.DataFrame:
    """The given pool frame, for these questions, each pool cut to ``size`` rows."""
    missing = [c for c in ("query_id", "path", "score", "title") if c not in pool.columns]
    if missing:
        raise SchemaError(
            "a pool frame needs columns query_id, path, score and title "
            "(askkit.ranking.POOL_COLUMNS; build it with askkit.ranking.query_pools)",
            field="columns",
            value=missing,
        )
    frame = pool[pool["query_id"].astype(str).isin(ids)]
    if size is not None:
        if "rank" in frame.columns:
            frame = frame[frame["rank"].to_numpy() <= size]
        else:
            frame = frame[frame.groupby("query_id", sort=False, observed=True).cumcount() < size]
    return frame.reset_index(drop=True)


def self_test(
    vault: Vault | str | os.PathLike[str],
    pool: Pool | pd.DataFrame,
    settings: CutSettings | None = None,
    *,
    items: KnownItems | None = None,
    known: KnownItemSettings | None = None,
    size: int | None = None,
    progress: bool = False,
) -> SelfTest:
    """Ask a vault's known-item questions of a retriever and see which sections the cut keeps.

    Parameters
    ----------
    vault:
        The vault (a :class:`~askkit.vault.Vault` or its folder).
    pool:
        A retriever's pool, ``pool(text, size)`` (such as
        ``LocalIndex(vault).pool``), or a long pool frame of the questions
        already asked (:data:`askkit.ranking.POOL_COLUMNS`, query ids those of
        ``items``).
    settings:
        The server's cut (default kimun's).
    items:
        The questions (default: :func:`~askkit.reach.known_items` of the
        vault with ``known``); each needs exactly one known section.
    known:
        How the questions are made, and the kimun chunker the sections are
        read with (default :class:`~askkit.reach.KnownItemSettings`).
    size:
        Chunks per pool (``None``: the retriever's own; with a frame, every
        row). With a frame, each query keeps its ``size`` best rows.
    progress:
        Show a bar over the questions.

    Raises
    ------
    VaultError
        No section of the vault is long enough to make a question from.
    SchemaError
        A question without exactly one known section, or a pool frame
        without the columns the trace reads.
    """
    settings = CutSettings() if settings is None else settings
    known = KnownItemSettings() if known is None else known
    vault = vault if isinstance(vault, Vault) else Vault(vault)
    if size is not None and size < 1:
        raise ValueError(f"size must be >= 1 or None, got {size}")
    items = known_items(vault, known) if items is None else items
    if len(items) == 0:
        raise VaultError(
            f"no question to ask: no section of the vault has {known.min_words} words or more "
            "(lower KnownItemSettings.min_words, or give items)"
        )
    queries = items.queries
    ids = pd.Index(queries["query_id"].astype(str))
    if isinstance(pool, pd.DataFrame):
        pools = _pool_frame(pool, ids, size)
        ranker = None
    else:
        asked = pd.DataFrame({"query_id": queries["query_id"], "text": queries["question"]})
        pools = query_pools(pool, asked, size, progress=progress)
        ranker = pool
    traced = trace_pools(pools, items.qrels, settings)
    counts = traced["query_id"].astype(str).value_counts()
    wrong = [q for q in ids if counts.get(q, 0) != 1]
    if wrong:
        raise SchemaError(
            f"a known-item question has exactly one known section (grade >= 1); "
            f"{len(wrong)} of {len(ids)} have {counts.get(wrong[0], 0)} or another number",
            field=f"qrels[{wrong[0]!r}]",
            has_value=False,
        )
    by_query = traced.set_index(traced["query_id"].astype(str))
    at = by_query.loc[ids]
    rank = at["rank"].astype(pd.Int64Dtype())
    reciprocal = np.where(rank.isna(), 0.0, 1.0 / rank.astype("float64").fillna(1.0))
    attrs = _attributes(vault, queries, known)
    heading = queries["heading"].astype(object)
    keys = list(
        zip(
            queries["path"].astype(str),
            ["" if pd.isna(h) else str(h) for h in heading],
            strict=True,
        )
    )
    values = [attrs.get(k) for k in keys]

    def column(i: int) -> list[object]:
        return [pd.NA if v is None else v[i] for v in values]

    per_query = pd.DataFrame(
        {
            "query_id": queries["query_id"].to_numpy(),
            "question": queries["question"].to_numpy(),
            "kind": queries["kind"].to_numpy() if "kind" in queries else pd.NA,
            "path": queries["path"].to_numpy(),
            "heading": queries["heading"].to_numpy(),
            "stopped": at["stopped"].astype(str).to_numpy(),
            "kept": (at["stopped"].astype(str) == "context").to_numpy(),
            "rank": rank.to_numpy(),
            "reciprocal_rank": reciprocal,
            "cut_len": at["cut_len"].to_numpy(dtype=np.int64),
            "folder": column(0),
            "note_kind": column(1),
            "words": column(2),
            "depth": column(3),
            "position": column(4),
        }
    ).astype(PER_QUERY_COLUMNS)
    return SelfTest(items, pools, per_query, settings, ranker)
