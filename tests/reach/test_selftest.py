"""The known-item self-test over real BM25 pools: sections placed out of reach are found and
said so with the trace's own sentence; what it reports kept is what kimun's cut keeps; its
summary and breakdowns are the plain sums of its per-question rows."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from askkit.errors import SchemaError, VaultError
from askkit.ranking import CutSettings, cut_len
from askkit.reach import KnownItems, KnownItemSettings, SelfTest, known_items, self_test
from askkit.reach.selftest import BREAKDOWNS
from askkit.retrieve import LocalIndex
from askkit.sources import innermost_heading
from askkit.trace import trace_pool


def write(root: Path, notes: dict[str, str]) -> Path:
    for name, text in notes.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


#: A parent section with a one-line child: BM25 ranks the short child first on the parent's
#: heading path and on the note's title (its breadcrumb holds the same words, in fewer).
GARDEN = (
    "# Garden\n## Tomatoes\nWater the tomatoes deeply twice a week and pinch the side shoots.\n"
    "### Tiny\nStake them.\n"
)
NOTES = {
    "kitchen/bread.md": (
        "# Bread\n## Starter\nFeed the starter twice a day at room temperature before baking.\n"
        "## Crumb\nAn open crumb needs a wet dough and a long cold proof in the fridge.\n"
    ),
    "journal/2026-04-08.md": (
        "# Walk\nWe walked along the river to the old mill and watched the herons fish.\n"
    ),
    "garden.md": GARDEN,
}
HEADINGS = KnownItemSettings(min_words=2, kinds=("heading", "title"))


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return write(tmp_path / "vault", NOTES)


def index(root: Path) -> LocalIndex:
    return LocalIndex(root, cache_dir=False, progress=False)


def traced_why(idx: LocalIndex, row: pd.Series, cut: CutSettings, size: int | None) -> pd.Series:
    """The per-query trace's stopping row, on the retriever's own pool (not the frame)."""
    pool = idx.pool(str(row["question"]), size)
    ranking = idx.pool(str(row["question"]), len(idx))
    frame = trace_pool(pool, [(str(row["path"]), str(row["heading"]))], cut, ranking=ranking)
    return frame[frame["stopped"]].iloc[0]


def test_a_parent_shadowed_by_its_one_line_child_is_lost_at_the_cut(vault: Path) -> None:
    idx = index(vault)
    test = self_test(vault, idx.pool, known=HEADINGS)
    lost = test.unreached()
    assert lost[["path", "heading"]].values.tolist() == [["garden.md", "Tomatoes"]]
    row = lost.iloc[0]
    assert row["stopped"] == "cut"
    assert (row["questions"], row["lost_at_cut"], row["lost_at_pool"]) == (2, 2, 0)
    trace = traced_why(idx, row, CutSettings(), None)
    assert trace["stage"] == "cut"
    assert row["why"] == trace["why"]
    assert row["why"].startswith("Answer (score-range): cut")
    # the child that shadows it ranks first on the parent's own heading path
    asked = test.pools[test.pools["query_id"] == row["query_id"]]
    assert innermost_heading(str(asked["title"].iloc[0])) == "Tiny"
    assert row["rank"] == 2


def test_a_pool_too_small_loses_the_shadowed_section_at_the_pool(vault: Path) -> None:
    idx = index(vault)
    test = self_test(vault, idx.pool, known=HEADINGS, size=1)
    lost = test.unreached()
    row = lost[(lost["path"] == "garden.md") & (lost["heading"] == "Tomatoes")].iloc[0]
    assert row["stopped"] == "pool"
    assert pd.isna(row["rank"])
    trace = traced_why(idx, row, CutSettings(), 1)
    assert trace["stage"] == "pool"
    assert row["why"] == trace["why"]
    assert "its best chunk ranks 2 of" in row["why"]  # the whole index's rank, said


def test_a_journal_notes_date_title_reaches_nothing(vault: Path) -> None:
    idx = index(vault)
    known = KnownItemSettings(min_words=2, kinds=("title",))
    test = self_test(vault, idx.pool, known=known)
    journal = test.per_query[test.per_query["note_kind"] == "journal"]
    assert journal["question"].tolist() == ["2026-04-08"]
    assert journal["stopped"].tolist() == ["pool"]
    assert journal["reciprocal_rank"].tolist() == [0.0]
    lost = test.unreached()
    row = lost[lost["path"] == "journal/2026-04-08.md"].iloc[0]
    trace = traced_why(idx, row, CutSettings(), None)
    assert (row["stopped"], row["why"]) == ("pool", trace["why"])
    assert row["why"].startswith("not in the candidate pool of 0 chunks")


def test_the_attributes_are_the_sections_own(vault: Path) -> None:
    test = self_test(vault, index(vault).pool, known=HEADINGS)
    frame = test.per_query.set_index("query_id")
    heading = test.per_query[test.per_query["kind"] == "heading"].set_index(["path", "heading"])
    tiny = heading.loc[("garden.md", "Tiny")]
    assert (tiny["folder"], tiny["note_kind"], tiny["words"]) == ("", "note", 2)
    assert (tiny["depth"], tiny["position"]) == (3, 2)
    crumb = heading.loc[("kitchen/bread.md", "Crumb")]
    assert (crumb["folder"], crumb["depth"], crumb["position"], crumb["words"]) == (
        "kitchen",
        2,
        2,
        15,
    )
    walk = heading.loc[("journal/2026-04-08.md", "Walk")]
    assert (walk["folder"], walk["note_kind"], walk["depth"]) == ("journal", "journal", 1)
    assert (frame["kept"] == (frame["stopped"] == "context")).all()


def test_summary_and_breakdowns_are_plain_sums(vault: Path) -> None:
    test = self_test(vault, index(vault).pool, known=KnownItemSettings(min_words=2))
    rows = test.per_query.to_dict("records")
    n = len(rows)
    kept = [bool(r["kept"]) for r in rows]
    rr = [0.0 if pd.isna(r["rank"]) else 1.0 / int(r["rank"]) for r in rows]
    summary = test.summary()
    assert summary["questions"] == n == len(known_items(vault, KnownItemSettings(min_words=2)))
    assert summary["success"] == pytest.approx(sum(kept) / n)
    assert summary["mrr"] == pytest.approx(sum(rr) / n)
    assert summary["lost_at_pool"] == pytest.approx(sum(r["stopped"] == "pool" for r in rows) / n)
    assert summary["lost_at_cut"] == pytest.approx(sum(r["stopped"] == "cut" for r in rows) / n)
    assert 0 < summary["success"] < 1  # the vault holds both kinds of question
    sections: dict[tuple[str, str], bool] = {}
    for r in rows:
        key = (r["path"], r["heading"])
        sections[key] = sections.get(key, False) or bool(r["kept"])
    assert summary["sections"] == len(sections)
    assert summary["unreached"] == sum(not v for v in sections.values()) == len(test.unreached())
    for by in BREAKDOWNS:
        table = test.breakdown(by)
        assert int(table["count"].sum()) == n
        groups: dict[object, list[int]] = {}
        for i, r in enumerate(rows):
            words = int(r["words"])
            band = next(b for b in (256, 128, 64, 32, 16, 0) if words >= b)
            groups.setdefault(band if by == "length" else r[by], []).append(i)
        assert len(table) == len(groups)
        for (key, members), (label, got) in zip(
            sorted(groups.items()), table.iterrows(), strict=True
        ):
            if by == "length":
                assert str(label).startswith(f"{key}")
            else:
                assert label == key
            assert got["count"] == len(members)
            assert got["success"] == pytest.approx(np.mean([kept[i] for i in members]))
            assert got["mrr"] == pytest.approx(np.mean([rr[i] for i in members]))


def test_a_pool_frame_gives_what_the_retriever_gives(vault: Path) -> None:
    idx = index(vault)
    live = self_test(vault, idx.pool, known=HEADINGS)
    framed = self_test(vault, live.pools, known=HEADINGS)
    pd.testing.assert_frame_equal(live.per_query, framed.per_query)
    cut = self_test(vault, live.pools, known=HEADINGS, size=1)
    assert (cut.pools["rank"] <= 1).all()
    assert cut.summary()["lost_at_pool"] > live.summary()["lost_at_pool"]


def test_errors_are_typed_and_say_what_to_do(vault: Path, tmp_path: Path) -> None:
    idx = index(vault)
    short = write(tmp_path / "short", {"a.md": "# A\nToo short.\n"})
    with pytest.raises(VaultError, match="min_words"):
        self_test(short, index(short).pool)
    with pytest.raises(SchemaError, match="title"):
        self_test(
            vault, pd.DataFrame({"query_id": ["k1-heading"], "path": ["a.md"]}), known=HEADINGS
        )
    items = known_items(vault, HEADINGS)
    orphan = KnownItems(items.queries, items.qrels.iloc[1:], items.eligible, items.sampled)
    with pytest.raises(SchemaError, match="exactly one known section"):
        self_test(vault, idx.pool, items=orphan)
    test = self_test(vault, idx.pool, known=HEADINGS)
    with pytest.raises(ValueError, match="breakdown by one of"):
        test.breakdown("colour")
    with pytest.raises(ValueError, match="size"):
        self_test(vault, idx.pool, known=HEADINGS, size=0)
    assert isinstance(test, SelfTest)
    assert repr(test).startswith("<SelfTest: 8 questions")


# -- what it reports kept is what kimun's cut keeps ---------------------------------------------

WORDS = ["bread", "starter", "flour", "water", "oven", "crumb", "salt", "yeast", "proof", "loaf"]
sentence = st.lists(st.sampled_from(WORDS), min_size=3, max_size=12).map(
    lambda ws: " ".join(ws).capitalize() + "."
)
section = st.tuples(st.sampled_from(WORDS), st.lists(sentence, min_size=1, max_size=3))
note = st.lists(section, min_size=1, max_size=3)
cuts = st.one_of(
    st.builds(CutSettings, strategy=st.just("fixed"), top_k=st.integers(1, 4)),
    st.builds(
        CutSettings,
        strategy=st.just("score-range"),
        score_range_cutoff=st.floats(0.0, 1.0, allow_nan=False),
    ),
    st.builds(CutSettings, strategy=st.just("largest-drop")),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    notes=st.lists(note, min_size=1, max_size=4),
    cut=cuts,
    size=st.one_of(st.none(), st.integers(1, 6)),
)
def test_kept_is_in_the_context_the_cut_keeps(
    notes: list[list[tuple[str, list[str]]]], cut: CutSettings, size: int | None
) -> None:
    with tempfile.TemporaryDirectory() as name:
        texts = {
            f"{'sub/' if i % 2 else ''}n{i}.md": "".join(
                f"## {head} {j}\n{' '.join(body)}\n" for j, (head, body) in enumerate(sections)
            )
            for i, sections in enumerate(notes)
        }
        root = write(Path(name), texts)
        known = KnownItemSettings(min_words=3)
        if not len(known_items(root, known)):
            return
        idx = index(root)
        test = self_test(root, idx.pool, cut, known=known, size=size)
        for row in test.per_query.itertuples():
            pool = idx.pool(str(row.question), size)
            context = pool[: cut_len(pool, cut)]
            held = [
                c.path == row.path and innermost_heading(c.title) == row.heading for c in context
            ]
            assert bool(row.kept) == any(held), row
            in_pool = [
                i
                for i, c in enumerate(pool)
                if c.path == row.path and innermost_heading(c.title) == row.heading
            ]
            assert (pd.isna(row.rank) and not in_pool) or row.rank == in_pool[0] + 1


def test_a_note_kimun_prints_lower_cased_keeps_its_attributes(tmp_path: Path) -> None:
    root = write(tmp_path / "v", {"Sub Folder/Garden Notes.md": GARDEN})
    test = self_test(root, index(root).pool, known=KnownItemSettings(min_words=2))
    frame = test.per_query
    assert set(frame["path"]) == {"sub folder/garden notes.md"}
    assert set(frame["folder"]) == {"sub folder"}
    assert frame["words"].notna().all()
    assert frame["position"].notna().all()
