"""SourcesView on 100,000 rows: build + first page, then filter, sort and paging.

Builds a sources frame of ``--rows`` sources (default 100,000) column-wise,
then times, best of ``--repeat`` runs (default 5):

* ``frame -> view``: ``SourcesView(frame)`` including the first page (the
  widget objects for one page, their HTML cells);
* ``text filter``, ``sort by score``, ``sort by heading``, ``next page``,
  ``select a row`` on the built view;
* ``sources -> view``: ``SourcesView(list_of_AskSource)``, which builds the
  frame with :func:`askkit.frame.sources_frame` first, and that frame alone.

The first table's baseline is a bare ``ipywidgets.HTML`` holding the first
page's static table (:func:`askkit.widgets._table_model.table_html`): the
ratio says what the interactive view costs over printing one page. Target:
build + first page well under a second at 100,000 rows.

Each view a timed run builds is closed after the run, outside the timing
(ipywidgets keeps open widgets, and so their frames, alive).

The second table's baseline is ``frame -> view``, timed again in the same
process: the ratio says what building from objects costs over building from
a frame. Target: ``sources -> view`` at most 0.2 s at 100,000 rows on a quiet
machine (the frame case takes about 0.06 s there).

    python benchmarks/widgets_bench.py
    python benchmarks/widgets_bench.py --rows 1000000 --repeat 3
"""

from __future__ import annotations

import argparse
import gc
import platform
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from askkit import AskSource, VaultPath
from askkit.frame import sources_frame
from askkit.widgets import SourcesView


def make_frame(rows: int, seed: int = 0) -> pd.DataFrame:
    """A sources frame of ``rows`` rows (one turn), varied paths, dates and scores."""
    rng = np.random.default_rng(seed)
    base = sources_frame([AskSource(VaultPath("a.md"), "A", "2026-01-01", 0.5, "text", 1)])
    frame = base.iloc[np.zeros(rows, dtype=np.int64)].reset_index(drop=True)
    notes = rng.integers(0, 5000, rows)
    days = rng.integers(1, 29, rows)
    frame["path"] = pd.array([f"notes/n{i}.md" for i in notes], dtype=frame["path"].dtype)
    frame["heading"] = pd.array(
        [f"Note {i} › Section {d}" for i, d in zip(notes, days, strict=True)],
        dtype=frame["heading"].dtype,
    )
    frame["text"] = pd.array(
        [f"chunk {i} about starter and flour" for i in range(rows)], dtype=frame["text"].dtype
    )
    frame["score"] = rng.random(rows)
    frame["ordinal"] = np.arange(1, rows + 1)
    frame["rank"] = np.arange(1, rows + 1)
    return frame


def best(fn: Callable[[], Any], repeat: int) -> float:
    """Best of ``repeat`` runs; a view a run builds is closed after it, untimed.

    ipywidgets keeps every open widget alive, and a view its frame: without the
    close, each run would start with the frames of all earlier runs still held.
    """
    times = []
    for _ in range(repeat):
        gc.collect()  # the garbage of earlier runs is not charged to this one
        started = time.perf_counter()
        built = fn()
        times.append(time.perf_counter() - started)
        if isinstance(built, SourcesView):
            built.close()
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--page-size", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    import ipywidgets as w

    from askkit.widgets._table_model import table_html

    frame = make_frame(args.rows)
    sources = None
    if args.rows <= 200_000:
        from askkit.frame import to_sources

        sources = list(to_sources(frame))
    SourcesView(frame.head(10))  # warm imports and first-use caches

    def baseline() -> None:
        w.HTML(table_html(frame, np.arange(min(args.page_size, len(frame)), dtype=np.int64)))

    t_base = best(baseline, args.repeat)
    t_build = best(lambda: SourcesView(frame, page_size=args.page_size), args.repeat)
    view = SourcesView(frame, page_size=args.page_size)

    def text_filter() -> None:
        view.set_filter(text="section 7")
        view.clear_filters()

    def sort_score() -> None:
        view.sort("score", ascending=False)

    def sort_heading() -> None:
        view.sort("heading", ascending=True)

    def next_page() -> None:
        view.page = (view.page + 1) % 50

    def select() -> None:
        view.select(int(view.page_rows()[3]))

    rows = [
        ("first page as static HTML (baseline)", t_base),
        ("frame -> SourcesView + first page", t_build),
        ("text filter + clear (2 refreshes)", best(text_filter, args.repeat)),
        ("sort by score", best(sort_score, args.repeat)),
        ("sort by heading", best(sort_heading, args.repeat)),
        ("next page", best(next_page, args.repeat)),
        ("select a row", best(select, args.repeat)),
    ]
    print(f"SourcesView, {args.rows:,} rows, page size {args.page_size}, best of {args.repeat}")
    print(
        f"python {platform.python_version()}, pandas {pd.__version__}, {platform.machine()}, "
        f"{platform.processor() or platform.platform()}"
    )
    print(f"{'operation':<44} {'ms':>9} {'x baseline':>11}")
    for name, seconds in rows:
        print(f"{name:<44} {seconds * 1000:>9.1f} {seconds / t_base:>11.1f}")
    if sources is None:
        print(f"\n(AskSource list case skipped above 200,000 rows: {args.rows:,})")
        return
    from_objects = [
        (
            "frame -> SourcesView + first page (baseline)",
            lambda: SourcesView(frame, page_size=args.page_size),
        ),
        (
            "AskSource list -> SourcesView + first page",
            lambda: SourcesView(sources, page_size=args.page_size),
        ),
        ("  of which sources_frame(AskSource list)", lambda: sources_frame(sources)),
    ]
    timed = [(name, best(fn, args.repeat)) for name, fn in from_objects]
    t_frame = timed[0][1]
    print(f"\nSourcesView from {args.rows:,} AskSource objects against the frame case")
    print(f"{'operation':<44} {'ms':>9} {'x frame':>11}")
    for name, seconds in timed:
        print(f"{name:<44} {seconds * 1000:>9.1f} {seconds / t_frame:>11.1f}")


if __name__ == "__main__":
    main()
