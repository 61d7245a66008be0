"""The Labeler's save reads back what it wrote and keeps everything the user wrote:
any ids, rows in any order, a key judged twice, extra columns."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from askkit import AskSource, VaultPath
from askkit.metrics import read_qrels, write_qrels
from askkit.widgets import Labeler, SourceReader
from askkit.widgets._qrels import (
    Key,
    judgment_key,
    load_judgments,
    save_judgments,
    update_judgments,
)
from tests.metrics.strategies import extra_names, headings, ids

FEW = settings(max_examples=max(10, settings().max_examples // 4))  # files, locks, widgets


@st.composite
def judged_files(draw: st.DrawFn) -> tuple[pd.DataFrame, list[Key]]:
    """A judgments frame as a user keeps it (keys judged twice, extra columns in any
    place, rows in any order), and a pool of keys: the file's and new ones."""
    qids = draw(st.lists(ids, min_size=1, max_size=2, unique=True))
    pool = draw(st.lists(st.tuples(st.sampled_from(qids), ids, headings), min_size=1, max_size=4))
    rows = draw(st.lists(st.tuples(st.sampled_from(pool), st.integers(0, 3)), max_size=6))
    frame = pd.DataFrame(
        {
            "query_id": np.array([k[0] for k, _ in rows], dtype=object),
            "path": np.array([k[1] for k, _ in rows], dtype=object),
            "heading": np.array([k[2] for k, _ in rows], dtype=object),
            "grade": np.array([g for _, g in rows], dtype=np.int64),
        }
    )
    for name in draw(extra_names):
        frame[name] = draw(st.lists(headings, min_size=len(rows), max_size=len(rows)))
    frame = frame[draw(st.permutations(list(frame.columns)))]
    return frame, [*pool, *draw(st.lists(st.tuples(st.sampled_from(qids), ids, headings)))]


def section(key: Key) -> tuple[str, str]:
    """The document evaluate grades a key as, at section level."""
    query, path, heading = key
    return query, path if heading == "" else f"{path}#{heading}"


def evaluate_view(rows: list[tuple[Key, int]]) -> dict[Key, int]:
    """The grade evaluate uses for each key: the highest of its section's rows."""
    best: dict[tuple[str, str], int] = {}
    for key, grade in rows:
        best[section(key)] = max(grade, best.get(section(key), grade))
    return {key: best[section(key)] for key, _ in rows}


def rows_of(frame: pd.DataFrame) -> list[tuple[Key, int]]:
    """A qrels frame's (key, grade) rows, in order."""
    columns = (frame[c].astype(str).tolist() for c in ("query_id", "path", "heading"))
    keys = list(zip(*columns, strict=True))
    return list(zip(keys, frame["grade"].astype(int).tolist(), strict=True))


def file_rows(path: Path) -> list[tuple[Key, int]]:
    return rows_of(read_qrels(path, format="tsv"))


@FEW
@given(judged_files(), st.data())
def test_update_judgments_keeps_every_row_and_column_and_reads_back_the_grades(
    drawn: tuple[pd.DataFrame, list[Key]], data: st.DataObject
) -> None:
    frame, pool = drawn
    changes = data.draw(st.dictionaries(st.sampled_from(pool), st.integers(0, 3), max_size=3))
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "qrels.tsv"
        write_qrels(frame, target)
        before = read_qrels(target, extra_columns=True)
        returned = update_judgments(target, changes)
        after = read_qrels(target, extra_columns=True)
        # every row and column the user wrote, in place; only grades change
        assert list(after.columns) == list(before.columns)
        kept = after.iloc[: len(before)]
        pd.testing.assert_frame_equal(kept.drop(columns="grade"), before.drop(columns="grade"))
        regraded = {section(k): g for k, g in changes.items()}
        old = file_rows(target)[: len(before)]
        want = [regraded.get(section(k), g) for k, g in zip(
            [k for k, _ in old], before["grade"].tolist(), strict=True
        )]  # fmt: skip
        assert kept["grade"].tolist() == want
        # new keys at the end, in the order given, their other columns empty
        known = {k for k, _ in old}
        new = [k for k in changes if k not in known]
        assert [k for k, _ in file_rows(target)[len(before) :]] == new
        extra = [c for c in after.columns if c not in ("query_id", "path", "heading", "grade")]
        assert (after.iloc[len(before) :][extra] == "").all().all()
        # the grades read back are evaluate's, and are what the update returned
        assert load_judgments(target) == returned == evaluate_view(file_rows(target))
        for key, grade in changes.items():  # a regrade is the grade evaluate now uses
            if {g for k, g in changes.items() if section(k) == section(key)} == {grade}:
                assert returned[key] == grade


@FEW
@given(judged_files(), st.data())
def test_save_judgments_reads_back_the_judgments_saved(
    drawn: tuple[pd.DataFrame, list[Key]], data: st.DataObject
) -> None:
    frame, pool = drawn
    judgments = data.draw(st.dictionaries(st.sampled_from(pool), st.integers(0, 3)))
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "qrels.tsv"
        write_qrels(frame, target)
        before = read_qrels(target, extra_columns=True)
        save_judgments(target, judgments)
        after = read_qrels(target, extra_columns=True)
        assert list(after.columns) == list(before.columns)
        rows = file_rows(target)
        # the keys saved, in the order given; a key the file had keeps its rows
        assert list(dict.fromkeys(k for k, _ in rows)) == list(judgments)
        old = [k for k, _ in rows_of(before)]
        for key in judgments:
            count = sum(k == key for k, _ in rows)
            assert count == max(1, old.count(key))
        assert load_judgments(target) == evaluate_view(rows)
        if len({section(k) for k in judgments}) == len(judgments):  # one key per section
            assert load_judgments(target) == dict(judgments)


@FEW
@given(judged_files(), st.data())
def test_the_labeler_saves_a_grade_and_shows_the_one_evaluate_uses(
    drawn: tuple[pd.DataFrame, list[Key]], data: st.DataObject
) -> None:
    frame, pool = drawn
    query, path, heading = data.draw(st.sampled_from(pool))
    grade = data.draw(st.integers(0, 3))
    source = AskSource(VaultPath(path), heading, None, 0.5, "x", 1, title=heading)
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "qrels.tsv"
        write_qrels(frame, target)
        before = read_qrels(target, extra_columns=True)
        reader = SourceReader()
        reader.show(source)
        labeler = Labeler(target, reader, query_id=query)
        key = labeler.key()
        if key is None:  # a query id of whitespace alone: nothing to grade
            assert not query.strip()
            assert not labeler.grade(grade)
            return
        assert key == judgment_key(query.strip(), source)
        assert labeler.current_grade() == evaluate_view(file_rows(target)).get(key)
        if not labeler.grade(grade):  # only a value that is not text is refused
            assert "not saved" in labeler.status_html.value
            return
        assert labeler.current_grade() == grade
        after = read_qrels(target, extra_columns=True)
        kept = after.iloc[: len(before)].drop(columns="grade")
        pd.testing.assert_frame_equal(kept, before.drop(columns="grade"))
        assert Labeler(target, SourceReader(), query_id=query).judgments[key] == grade
