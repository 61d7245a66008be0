"""The BM25 baseline's terms: stop words and Snowball stemming, held to bm25s' own tokenizer,
kept apart in the cache, and shown word by word in ``explain``."""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from pathlib import Path

import bm25s
import pandas as pd
import pytest
import Stemmer
from hypothesis import given
from hypothesis import strategies as st

from askkit.errors import UsageError
from askkit.retrieve._cache import FORMAT
from askkit.retrieve.local import (
    DEFAULT_STEMMER,
    DEFAULT_STOPWORDS,
    STOPWORDS,
    Analyzer,
    LocalIndex,
    tokenize,
)

QUERIES = ["feeding starters", "baked loaves", "the starter", "tomato seedlings"]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    (root / "sourdough.md").write_text(
        "# Sourdough\n\n## Starter\n\nFeed the starter twice a day.\n\n"
        "## Bake\n\nBaking two loaves of bread.\n"
    )
    (root / "garden.md").write_text("# Garden\n\n## Tomatoes\n\nThe seedling grows under lights.\n")
    (root / "kayak.md").write_text("# Kayak\n\nPaddle strokes on the lake.\n")
    return root


@pytest.fixture
def no_warnings() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def index_of(root: Path, cache: Path | bool = False, **options: str | None) -> LocalIndex:
    return LocalIndex(root, cache_dir=cache, progress=False, **options)  # type: ignore[arg-type]


def assert_same(index: LocalIndex, reference: LocalIndex) -> None:
    pd.testing.assert_frame_equal(index.chunks, reference.chunks)
    for query in QUERIES:
        assert index.search(query) == reference.search(query), query


# -- the terms ----------------------------------------------------------------------------------


def test_the_default_is_english_stop_words_and_the_snowball_english_stemmer(root: Path) -> None:
    assert (DEFAULT_STOPWORDS, DEFAULT_STEMMER) == ("en", "english")
    index = index_of(root)
    assert index.analyzer == Analyzer("en", "english")
    assert tokenize("Feeding the starters") == ["feed", "starter"]


@pytest.mark.parametrize(
    ("stopwords", "stemmer", "terms"),
    [
        (None, None, ["feeding", "the", "starters", "creme", "fraiche"]),
        ("en", None, ["feeding", "starters", "creme", "fraiche"]),
        (None, "english", ["feed", "the", "starter", "creme", "fraich"]),
        ("en", "english", ["feed", "starter", "creme", "fraich"]),
    ],
)
def test_each_variant_folds_and_lower_cases_first(
    stopwords: str | None, stemmer: str | None, terms: list[str]
) -> None:
    assert tokenize(
        "Feeding THE Starters: Crème Fraîche", stopwords=stopwords, stemmer=stemmer
    ) == (terms)


def test_stop_words_are_dropped_before_stemming_as_bm25s_does() -> None:
    # "theirs" is no stop word; its stem "their" is one, and it stays
    assert tokenize("theirs their") == ["their"]


WORDS = st.sampled_from(
    [*sorted(STOPWORDS["en"]), "feeding", "feeds", "starters", "loaves", "baking", "hydration",
     "generously", "running", "ran", "x", "42", "2026", "it's", "e-mail", "naïve"]
)  # fmt: skip
ASCII_TEXT = st.lists(
    st.one_of(WORDS, st.text(alphabet="abcdefghijklmnopqrstuvwxyzABC019 .,;-'", max_size=12)),
    max_size=30,
).map(" ".join)


@given(text=ASCII_TEXT.filter(str.isascii))
def test_the_terms_are_bm25s_own_tokenizer_on_ascii_text(text: str) -> None:
    """On ASCII text (nothing for kimun's folding to do) the terms are exactly
    ``bm25s.tokenize``'s with its English stop words and PyStemmer's English stemmer."""
    reference = bm25s.tokenize(
        [text],
        stopwords="en",
        stemmer=Stemmer.Stemmer("english").stemWords,
        return_ids=False,
        show_progress=False,
    )
    assert Analyzer()(text) == reference[0]
    plain = bm25s.tokenize([text], stopwords=None, return_ids=False, show_progress=False)
    assert Analyzer(stopwords=None, stemmer=None)(text) == plain[0]


@given(texts=st.lists(st.one_of(ASCII_TEXT, st.text(max_size=40)), max_size=8))
def test_the_corpus_path_stems_as_one_text_at_a_time_does(texts: list[str]) -> None:
    for analyzer in (Analyzer(), Analyzer(stopwords=None), Analyzer(stemmer=None)):
        assert analyzer.corpus(texts) == [analyzer(t) for t in texts]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"stopwords": "fr"}, r"stopwords must be one of \['en'\] or None, got 'fr'"),
        ({"stemmer": "klingon"}, r"stemmer must be a Snowball algorithm .*english.*got 'klingon'"),
        ({"stemmer": "English"}, r"got 'English'"),
    ],
)
def test_an_unknown_list_or_stemmer_is_refused_naming_it(
    root: Path, options: dict[str, str], message: str
) -> None:
    with pytest.raises(UsageError, match=message):
        index_of(root, **options)
    with pytest.raises(UsageError, match=message):
        tokenize("text", **options)  # type: ignore[arg-type]


# -- retrieval ----------------------------------------------------------------------------------


def test_stemming_finds_other_forms_of_a_word(root: Path) -> None:
    stemmed, plain = index_of(root), index_of(root, stemmer=None)
    hits = stemmed.search("feeding starters", per_note=False)
    assert hits[0].title == "Sourdough\x1fStarter"
    assert plain.search("feeding", per_note=False) == []  # "feed" is not "feeding" unstemmed
    assert [c.title for c in stemmed.search("baked loaf", per_note=False)] == ["Sourdough\x1fBake"]
    assert plain.search("baked loaf", per_note=False) == []


def test_without_stop_words_a_stop_word_is_a_term(root: Path) -> None:
    assert index_of(root).search("the") == []
    everything = index_of(root, stopwords=None).search("the", per_note=False)
    assert {c.title for c in everything} == {"Sourdough\x1fStarter", "Garden\x1fTomatoes", "Kayak"}


# -- the cache ----------------------------------------------------------------------------------


@pytest.mark.usefixtures("no_warnings")
@pytest.mark.parametrize(
    ("first", "then"),
    [
        ({"stemmer": None}, {"stemmer": "english"}),
        ({"stemmer": "english"}, {"stemmer": None}),
        ({"stopwords": "en"}, {"stopwords": None}),
        ({"stemmer": "english"}, {"stemmer": "porter"}),
    ],
)
def test_a_cache_with_other_terms_is_rebuilt_never_read(
    root: Path, tmp_path: Path, first: dict[str, str | None], then: dict[str, str | None]
) -> None:
    cache = tmp_path / "cache"
    index_of(root, cache, **first)
    index = index_of(root, cache, **then)
    assert len(index.last_report.added) == 3  # rebuilt quietly: stale, not damaged
    assert_same(index, index_of(root, **then))
    again = index_of(root, cache, **then)
    assert not again.last_report.touched  # and read back when the terms agree
    assert_same(again, index_of(root, **then))


def test_the_manifest_names_the_terms(root: Path, tmp_path: Path) -> None:
    index_of(root, tmp_path / "cache")
    tokens = json.loads((tmp_path / "cache" / "manifest.json").read_text())["params"]["tokens"]
    assert tokens == {
        "fold": "kimun",
        "lower": True,
        "pattern": r"(?u)\b\w\w+\b",
        "stopwords": "en",
        "stemmer": "english",
        "pystemmer": Stemmer.version(),
    }


@pytest.mark.usefixtures("no_warnings")
@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda t: {**t, "pystemmer": "0.0.1"}, id="another PyStemmer"),
        pytest.param(lambda t: {**t, "pattern": r"\w+"}, id="another word pattern"),
        pytest.param(lambda t: {"stemmer": t["stemmer"]}, id="fewer keys"),
    ],
)
def test_a_cache_with_other_tokenisation_params_is_stale(
    root: Path, tmp_path: Path, change: object
) -> None:
    cache = tmp_path / "cache"
    index_of(root, cache)
    manifest = json.loads((cache / "manifest.json").read_text())
    manifest["params"]["tokens"] = change(manifest["params"]["tokens"])  # type: ignore[operator]
    (cache / "manifest.json").write_text(json.dumps(manifest))
    index = index_of(root, cache)
    assert len(index.last_report.added) == 3
    assert_same(index, index_of(root))


@pytest.mark.usefixtures("no_warnings")
def test_a_cache_from_before_the_tokens_key_is_rebuilt_quietly(root: Path, tmp_path: Path) -> None:
    """A cache of the previous format (no tokens in its params) is stale, not damaged."""
    cache = tmp_path / "cache"
    index_of(root, cache, stemmer=None)
    manifest = json.loads((cache / "manifest.json").read_text())
    del manifest["params"]["tokens"]
    manifest["askkit_cache"] = 2
    (cache / "manifest.json").write_text(json.dumps(manifest))
    index = index_of(root, cache, stemmer=None)
    assert len(index.last_report.added) == 3
    assert json.loads((cache / "manifest.json").read_text())["askkit_cache"] == FORMAT


# -- explain ------------------------------------------------------------------------------------


def test_explain_shows_each_word_its_stem_and_its_share(root: Path) -> None:
    index = index_of(root)
    query = "Feeding feeds the starters zzz"
    hit = index.search(query, per_note=False)[0]
    table = index.explain(query, hit)
    assert list(table.columns) == ["term", "stem", "status", "tf", "contribution"]
    rows = {r.term: r for r in table.itertuples()}
    assert (rows["feeding"].stem, rows["feeding"].status, rows["feeding"].tf) == (
        "feed",
        "matched",
        1,
    )
    assert rows["feeds"].stem == "feed"
    assert rows["feeds"].contribution == rows["feeding"].contribution > 0  # one term, typed twice
    assert (rows["starters"].stem, rows["starters"].tf) == ("starter", 2)  # heading and text
    assert (rows["the"].stem, rows["the"].status, rows["the"].contribution) == ("", "stop word", 0)
    assert (rows["zzz"].stem, rows["zzz"].status) == ("zzz", "not in the vault")
    assert table["contribution"].sum() == pytest.approx(hit.similarity_score, rel=1e-5)


def test_explain_counts_a_word_typed_twice_twice(root: Path) -> None:
    index = index_of(root)
    once = index.search("starter", per_note=False)[0]
    twice = index.search("starter starter", per_note=False)[0]
    assert twice.similarity_score == pytest.approx(2 * once.similarity_score, rel=1e-6)
    table = index.explain("starter starter", twice)
    assert len(table) == 1
    assert table["contribution"].sum() == pytest.approx(twice.similarity_score, rel=1e-5)


def test_explain_without_a_stemmer_shows_the_word_as_its_own_term(root: Path) -> None:
    index = index_of(root, stemmer=None)
    hit = index.search("starter feeding", per_note=False)[0]
    table = index.explain("starter feeding", hit)
    status = dict(zip(table["term"], table["status"], strict=True))
    assert status == {"starter": "matched", "feeding": "not in the vault"}
    assert table["stem"].tolist() == table["term"].tolist()
