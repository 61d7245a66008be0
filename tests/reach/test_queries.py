"""Known-item questions derived from a vault's sections: each names the section it came from,
as kimun's chunker cuts it and as the measures name it; the sample spreads over folders and
notes; the files written read back with askkit's readers; a question with two possible
answers is never made."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from askkit.errors import VaultError
from askkit.frame import sources_frame
from askkit.metrics import evaluate, read_qrels, read_queries
from askkit.reach import (
    KINDS,
    QUERY_COLUMNS,
    KnownItems,
    KnownItemSettings,
    body_sentences,
    example_question,
    known_items,
    question_set,
)
from askkit.retrieve import LocalIndex
from askkit.sources import innermost_heading
from tests.conftest import DATA
from tests.corpora import corpus

PROSE = "Feed the starter twice a day at room temperature before baking."


def write(root: Path, notes: dict[str, str]) -> Path:
    for name, text in notes.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


# -- sentences ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", []),
        (PROSE, [PROSE]),
        (
            "First one here. Second one there!\nThird line? Yes",
            ["First one here.", "Second one there!", "Third line?", "Yes"],
        ),
        ("```sh\nrm -rf it. now\n```\nAfter the code.", ["After the code."]),
        ("~~~\ninside. tilde\n~~~\nOut.", ["Out."]),
        ("````md\n```js\nnested.\n```\nstill code.\n````\nOut.", ["Out."]),
        ("| a | b |\n|-|-|\n| c. d | e |\nProse.", ["Prose."]),
        ("[!tip] A callout title\nIts body.", ["Its body."]),
        ("<h1>Html line.</h1>\n%% a comment. %%\nKept.", ["Kept."]),
        (
            "* Press `Enter` now.\n1. Then wait.\n- [x] Done it.",
            ["Press `Enter` now.", "Then wait.", "Done it."],
        ),
        ("`1` `2` `3` `4` word.", []),  # tokens without letters outnumber the words
        ("Spaces\xa0and   tabs\there.", ["Spaces and tabs here."]),
        ("To do it:\n* Open the menu.", ["Open the menu."]),  # an announcement is no sentence
    ],
)
def test_body_sentences(text: str, expected: list[str]) -> None:
    assert body_sentences(text) == expected


def test_body_sentences_keeps_the_long_ones() -> None:
    assert body_sentences("Short one. " + PROSE, min_words=5) == [PROSE]


PROSE_LINES = st.lists(
    st.text(alphabet=st.sampled_from(list("abcdé XYZ.,!?:'-")), min_size=1, max_size=40),
    max_size=5,
)
CODE_LINES = st.lists(
    st.text(alphabet=st.sampled_from(list("ab .#|*-[]!<%")), max_size=30), max_size=4
)


@given(PROSE_LINES, CODE_LINES, PROSE_LINES, st.sampled_from(["```", "~~~", "````python"]))
def test_code_never_makes_a_sentence(
    before: list[str], code: list[str], after: list[str], fence: str
) -> None:
    """A code block adds no sentence, whatever it holds, and the prose around it keeps its own."""
    closing = fence.rstrip("python")
    with_code = "\n".join([*before, fence, *code, closing, *after])
    assert body_sentences(with_code) == body_sentences("\n".join([*before, *after]))


@given(PROSE_LINES, st.integers(1, 6))
def test_every_sentence_is_one_line_of_enough_words(lines: list[str], min_words: int) -> None:
    for sentence in body_sentences("\n".join(lines), min_words=min_words):
        assert sentence == " ".join(sentence.split())  # one line, its whitespace collapsed
        assert sum(any(ch.isalpha() for ch in token) for token in sentence.split()) >= min_words


# -- known items ---------------------------------------------------------------------------


@pytest.fixture
def small(tmp_path: Path) -> Path:
    return write(
        tmp_path,
        {
            "baking/bread.md": (
                "---\ntags: [bread]\n---\n# Bread\n\n## Starter\n\n" + PROSE + "\n\n"
                "## Log\n\nBaked a loaf with rye flour and it rose well overnight in the fridge.\n"
            ),
            "garden/tomatoes.md": (
                "# Tomatoes\n\n## Log\n\n"
                "Sowed six seeds of the yellow cherry variety on the windowsill today.\n\n"
                "## Seedlings\n\n"
                "Potted the seedlings on into bigger pots once the true leaves had opened.\n"
                "```\ncode. that never counts as a sentence at all here\n```\n"
            ),
            "journal/2026-04-08.md": (
                "# 2026-04-08\n\n## Afternoon\n\n"
                "The starter peaked after six hours, faster than last week in the cold.\n"
            ),
            "short.md": "# Short\n\nToo short.\n",
        },
    )


def chunk_ids(root: Path) -> set[tuple[str, str]]:
    """Every section the vault's index holds, named as the measures name it."""
    chunks = LocalIndex(root, cache_dir=False, progress=False).chunks
    return set(zip(chunks["path"], chunks["title"].map(innermost_heading), strict=True))


def test_known_items_name_the_section_they_came_from(small: Path) -> None:
    items = known_items(small, KnownItemSettings(min_words=6))
    queries, qrels = items.queries, items.qrels
    assert list(queries.columns) == list(QUERY_COLUMNS)
    assert queries["query_id"].is_unique
    assert set(queries["kind"]) <= set(KINDS)
    # one known answer each, grade 1, the section the question names
    assert qrels[["query_id", "path", "heading"]].values.tolist() == (
        queries[["query_id", "path", "heading"]].values.tolist()
    )
    assert (qrels["grade"] == 1).all()
    assert set(zip(qrels["path"], qrels["heading"], strict=True)) <= chunk_ids(small)
    by_id = dict(zip(queries["query_id"], queries["question"], strict=True))
    assert "Bread › Starter" in by_id.values()
    assert PROSE in by_id.values()
    assert "2026-04-08 › Afternoon" in by_id.values()  # journal entries are sources too
    assert "tomatoes" in by_id.values()  # a title: the file's name
    # never: the frontmatter, a section shorter than min_words, code, an ambiguous heading
    assert "FrontMatter" not in set(queries["heading"])
    assert not any("Too short" in q or "code." in q for q in by_id.values())
    assert "Log" not in set(queries.loc[queries["kind"] == "heading", "question"])
    assert "Bread › Log" in by_id.values()
    assert "Tomatoes › Log" in by_id.values()
    assert items.eligible == 5
    assert items.sampled == 5


def test_a_question_two_sections_could_claim_is_not_made(tmp_path: Path) -> None:
    same = "Water the plants every other morning before the sun gets too hot on them."
    root = write(tmp_path, {"a.md": f"## Water\n\n{same}\n", "b/a.md": f"## Water\n\n{same}\n"})
    items = known_items(root, KnownItemSettings(min_words=5))
    assert items.queries.empty  # the heading, the sentence and the title are all in both
    assert items.eligible == 2


def test_a_title_that_reads_as_a_heading_is_asked_once(tmp_path: Path) -> None:
    root = write(tmp_path, {"Focaccia.md": f"# Focaccia\n\n{PROSE}\n"})
    items = known_items(root, KnownItemSettings(min_words=5))
    assert items.queries["question"].tolist() == ["Focaccia", PROSE]
    assert items.queries["kind"].tolist() == ["heading", "sentence"]


def test_the_files_read_back_with_askkits_readers(small: Path, tmp_path: Path) -> None:
    items = known_items(small, KnownItemSettings(min_words=6))
    queries, qrels = tmp_path / "out" / "queries.tsv", tmp_path / "out" / "qrels.tsv"
    queries.parent.mkdir()
    items.write(queries, qrels)
    assert read_queries(queries) == dict(
        zip(items.queries["query_id"], items.queries["question"], strict=True)
    )
    pd.testing.assert_frame_equal(read_qrels(qrels), items.qrels)
    back = pd.read_csv(queries, sep="\t", dtype=str, keep_default_na=False)
    assert back.values.tolist() == items.queries.fillna("").values.tolist()


def test_a_sample_spreads_over_folders_then_notes(tmp_path: Path) -> None:
    notes = {
        f"{folder}/{n}.md": (
            f"# {folder} {n}\n\n## Part one {n}\n\n{PROSE}\n\n"
            f"## Part two {n}\n\n{PROSE} Again {n}.\n"
        )
        for folder in ("a", "b", "c")
        for n in range(4)
    }
    notes.update(
        {f"journal/2026-01-0{d}.md": f"# 2026-01-0{d}\n\n{PROSE} Day {d}.\n" for d in range(1, 4)}
    )
    root = write(tmp_path, notes)
    for seed in range(5):
        items = known_items(root, KnownItemSettings(sections=16, seed=seed, kinds=("heading",)))
        paths = items.queries["path"].tolist()
        strata = ["journal" if p.startswith("journal/") else p.split("/")[0] for p in paths]
        assert len(set(strata[:4])) == 4  # one from each folder, journal entries included
        assert len(set(paths[:15])) == 15  # every note once before any note twice
        assert items.sampled == 16


def test_the_sample_is_seeded(small: Path) -> None:
    settings = KnownItemSettings(sections=3, seed=7, min_words=6)
    first, again = known_items(small, settings), known_items(small, settings)
    pd.testing.assert_frame_equal(first.queries, again.queries)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"kinds": ()}, "kinds"),
        ({"kinds": ("question",)}, "kinds"),
        ({"sections": 0}, "sections"),
        ({"min_words": 0}, "min_words"),
        ({"min_words": 9, "max_words": 8}, "min_words"),
    ],
)
def test_settings_refuse_what_makes_no_question(options: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        KnownItemSettings(**options)  # type: ignore[arg-type]


def test_the_description_says_what_they_are(small: Path) -> None:
    items = known_items(small, KnownItemSettings(min_words=6))
    assert items.describe().startswith(f"{len(items)} questions (")
    assert "made from 5 of the vault's 5 sections with a body, in 3 notes of 3 folders" in (
        items.describe()
    )
    assert repr(items).startswith("<KnownItems: ")


# -- one example, and a question set -------------------------------------------------------


def test_the_example_on_the_sample_is_the_users_best_judged_question() -> None:
    example = example_question(
        DATA / "vault", queries=DATA / "queries.tsv", qrels=DATA / "qrels.tsv"
    )
    assert (example.query_id, example.origin, example.grade) == ("q01", "judged", 3)
    assert example.answer == ("projects/sourdough.md", "Feeding schedule")
    assert example.question == read_queries(DATA / "queries.tsv")["q01"]
    assert "q01 of your questions" in example.describe()
    unjudged = example_question(DATA / "vault", queries=DATA / "queries.tsv")
    assert (unjudged.query_id, unjudged.answer) == ("q01", None)
    assert "no answer known" in unjudged.describe()


def test_the_example_without_questions_is_a_heading_path_of_the_vault(small: Path) -> None:
    example = example_question(small, settings=KnownItemSettings(min_words=6))
    assert example.origin == "derived"
    assert example.kind == "heading"
    assert len(example.question.split()) >= 3 or "›" in example.question
    assert example.answer is not None
    assert example.answer in chunk_ids(small)
    assert "its known answer is the section it came from" in example.describe()


def test_a_vault_with_nothing_to_ask_says_so(tmp_path: Path) -> None:
    write(tmp_path, {"a.md": "# A\n\nToo short.\n"})
    with pytest.raises(VaultError, match="type a question instead"):
        example_question(tmp_path)


@pytest.mark.parametrize(
    ("given_files", "derived"),
    [(("queries.tsv", "qrels.tsv"), False), (("queries.tsv", None), True), ((None, None), True)],
)
def test_the_question_set_is_the_users_else_derived(
    given_files: tuple[str | None, str | None], derived: bool
) -> None:
    queries, qrels = (None if f is None else DATA / f for f in given_files)
    found = question_set(
        DATA / "vault", queries=queries, qrels=qrels, settings=KnownItemSettings(sections=10)
    )
    assert found.derived is derived
    if derived:
        assert "known-item questions, not human judgments" in found.describe()
        assert ("your questions have no judgments" in found.describe()) is (queries is not None)
    else:
        assert found.describe().startswith("your 37 questions (")
        assert len(found.queries) == 37
        assert len(found.qrels) == 119


# -- on the sample, and on a vault written elsewhere -------------------------------------


def _scored(root: Path, items_for: Callable[[Path], KnownItems]) -> None:
    """Every known answer is a section the index holds, and BM25 finds most of them: the
    questions and the measures name sections alike."""
    items = items_for(root)
    assert set(zip(items.qrels["path"], items.qrels["heading"], strict=True)) <= chunk_ids(root)
    index = LocalIndex(root, cache_dir=False, progress=False)
    run = sources_frame(
        [
            {"id": q, "question": text, "chunks": [c.to_dict() for c in index.search(text, k=10)]}
            for q, text in zip(items.queries["query_id"], items.queries["question"], strict=True)
        ]
    )
    recall = evaluate(run, items.qrels, ["recall@10"], level="section").mean["recall@10"]
    assert recall > 0.5


def test_every_section_of_the_sample_vault() -> None:
    items = known_items(DATA / "vault")
    assert items.sampled == items.eligible  # every section with a body
    assert set(items.queries["path"].str.split("/").str[0]) >= {"journal", "baking", "garden"}
    _scored(DATA / "vault", lambda root: known_items(root, KnownItemSettings(sections=60)))


def test_the_obsidian_help_vault() -> None:
    """A vault askkit has never seen: callouts, tables, code fences with # lines, no H1s."""
    root = corpus("obsidian-help-en")
    items = known_items(root, KnownItemSettings(sections=60, seed=0))
    queries = items.queries
    assert items.sampled == 60
    assert queries["path"].str.rsplit("/", n=1).str[0].nunique() >= 15  # spread over folders
    assert set(queries["kind"]) == set(KINDS)
    for question in queries["question"]:
        assert "```" not in question
        assert not question.startswith(("|", "[!", "<"))
    titles = queries.loc[queries["kind"] == "title", "question"]
    assert titles.str.contains(r"[A-Z]").any()  # file names as on disk, not lower-cased
    _scored(root, lambda root: known_items(root, KnownItemSettings(sections=60, seed=0)))
    example = example_question(root)
    assert example.origin == "derived"
    assert example.kind == "heading"
    assert example.answer in chunk_ids(root)
