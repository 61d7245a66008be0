"""notebooks/evaluate-and-compare.ipynb on the sample and on the Obsidian help vault: BM25
(with and without stemming), dense retrieval with kimun's AllMiniLML6V2 (offline) and BM25
and dense fused, scored on the user's judgments or, on a vault without any, on known-item
questions derived from its sections, said as what they are. Every sentence that states a
number or a comparison is parsed back and held to the tables the notebook prints."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.nbrun import (
    VAULTS,
    Executed,
    assert_clean_outputs,
    assert_nothing_written,
    cell_images,
    printed,
    run_on_vault,
)

NAME = "evaluate-and-compare.ipynb"
MEASURES = ("ndcg@10", "mrr", "recall@10", "precision@5", "map", "r-precision")
RUNS = ("bm25", "bm25, no stemming", "dense", "hybrid (rrf)")


@pytest.fixture(scope="module", params=VAULTS)
def executed(
    request: pytest.FixtureRequest, minilm_cache: Path, tmp_path_factory: pytest.TempPathFactory
) -> Executed:
    return run_on_vault(NAME, request.param, cache=minilm_cache, tmp=tmp_path_factory.mktemp("nb"))


def _means(executed: Executed) -> dict[tuple[str, str], float]:
    """The means table the notebook prints (``means.round(3)``): (run, measure) -> value."""
    table = printed(executed.nb, "means = pd.DataFrame(")
    out = {}
    for line in table.splitlines():
        measure, *values = line.split()
        if measure in MEASURES:
            for run, value in zip(RUNS, values[-len(RUNS) :], strict=True):
                out[(run, measure)] = float(value)
    assert len(out) == len(RUNS) * len(MEASURES)
    return out


def _summary(executed: Executed) -> dict[tuple[str, str], tuple[str, ...]]:
    """The comparison table: (run, measure) -> (baseline, mean, delta, wins, ties, losses,
    p_t_holm, p_random_holm)."""
    text = printed(executed.nb, "cmp = compare(runs")
    rows = re.findall(
        r"^(.*?)\s+(ndcg@10|mrr|recall@10|precision@5|map|r-precision)\s+"
        r"([\d.]+)\s+([\d.]+)\s+(-?[\d.]+)\s+(\d+)\s+(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)$",
        text,
        re.M,
    )
    table: dict[tuple[str, str], tuple[str, ...]] = {}
    run = ""
    for row in rows:
        run = row[0].strip() or run
        table[(run, row[1])] = row[2:]
    assert len(table) == (len(RUNS) - 1) * len(MEASURES)
    return table


def test_issue40_evaluate_runs_on_the_vault_it_is_given(executed: Executed) -> None:
    nb, text = executed.nb, executed.text
    assert_clean_outputs(nb)
    assert_nothing_written(executed)
    assert f"DenseIndex('{executed.root.resolve()}'" in text
    assert "model: sentence-transformers/all-MiniLM-L6-v2 built by askkit from" in text
    assert "fingerprint: fastembed:allminilml6v2:384" in text
    said = printed(nb, "questions = question_set(")
    counts = re.search(r"^(\d+) queries, (\d+) judgments$", said, re.M)
    assert counts is not None
    if executed.sample:  # the user's questions and judgments
        assert "your 37 questions (" in said
        assert "their 119 judgments (" in said
        assert counts.groups() == ("37", "119")
    else:  # known items, said as what they are
        made = re.search(
            r"^this vault has no judgments, so: (\d+) questions \(.*\) made from 60 of the "
            r"vault's \d+ sections with a body, .*; each question has one known answer, the "
            r"section it was made from \(known-item questions, not human judgments\)$",
            said,
            re.M,
        )
        assert made is not None
        assert made[1] == counts[1] == counts[2]  # one judgment per question
    runs = dict(re.findall(r"^(.+): (\d+) sources$", printed(nb, "def run(retriever)"), re.M))
    assert tuple(runs) == RUNS


def test_issue40_no_stand_in_reranker_is_run(executed: Executed) -> None:
    assert "reranker: none configured (ASKKIT_RERANKER): the reranked run is left out" in (
        executed.text
    )
    assert "stand-in" not in executed.text.lower()


def test_issue40_the_sentences_about_the_means_are_computed_from_them(executed: Executed) -> None:
    means = _means(executed)
    said = printed(executed.nb, "def best_first(measure)")
    for measure in MEASURES:
        line = re.search(rf"^{re.escape(measure)}, best first: (.+)$", said, re.M)
        assert line is not None, measure
        stated = [re.match(r"(.+) ([\d.]+)$", part) for part in line[1].split("; ")]
        order = [(m[1], float(m[2])) for m in stated if m]
        assert [v for _, v in order] == sorted((v for _, v in order), reverse=True)
        assert dict(order) == {run: means[(run, measure)] for run in RUNS}
        h, b, d = (means[(run, measure)] for run in ("hybrid (rrf)", "bm25", "dense"))
        equal = [name for name, v in (("bm25", b), ("dense", d)) if v == h]
        where = (
            "equal to " + " and ".join(equal)
            if equal
            else "above both"
            if h > max(b, d)
            else "below both"
            if h < min(b, d)
            else "between the two"
        )
        assert f"hybrid (rrf) {measure} {h:.3f}: {where} (bm25 {b:.3f}, dense {d:.3f})" in said
    for measure in ("ndcg@10", "mrr"):
        a, b = means[("bm25", measure)], means[("bm25, no stemming", measure)]
        change = "higher with it" if a > b else "lower with it" if a < b else "the same"
        assert f"stemming, {measure}: bm25 {a:.3f} with it, {b:.3f} without: {change}" in said
    # no sentence about the data is written by hand
    for claim in ("by less than dense alone", "lands between the two", "ruins"):
        assert claim not in executed.markdown


def test_issue40_the_significance_sentences_are_computed_from_the_table(
    executed: Executed,
) -> None:
    table = _summary(executed)
    said = printed(executed.nb, "ALPHA = 0.05")
    for run in RUNS[1:]:
        rows = {m: table[(run, m)] for m in MEASURES}
        higher = [m for m in MEASURES if float(rows[m][2]) > 0]
        lower = [m for m in MEASURES if float(rows[m][2]) < 0]
        significant = [m for m in MEASURES if float(rows[m][6]) < 0.05 and float(rows[m][7]) < 0.05]
        wins, ties, losses = rows["ndcg@10"][3:6]
        named = {
            k: ", ".join(v) or "none" for k, v in (("h", higher), ("l", lower), ("s", significant))
        }
        expected = (
            f"{run} against bm25: higher on {len(higher)} of 6 measures ({named['h']}), "
            f"lower on {len(lower)} ({named['l']}); "
            f"significant in both tests on {len(significant)} ({named['s']}); "
            f"nDCG@10: {wins} questions better, {ties} tied, {losses} worse"
        )
        assert expected in said, run


def test_issue40_coverage_plots_and_citations_say_what_they_show(executed: Executed) -> None:
    nb, text = executed.nb, executed.text
    shares = dict(re.findall(r"^(bm25|dense): Judged share of the top 10: ([\d.]+)%", text, re.M))
    assert set(shares) == {"bm25", "dense"}
    low, high = sorted(shares, key=lambda name: float(shares[name]))
    assert (
        f"judged share of a run's top 10: {float(shares[low]):.1f}% ({low}) to "
        f"{float(shares[high]):.1f}% ({high})" in text
    )
    assert text.count("Two tools can score") == 1
    assert "ndcg@10: dense against bm25" in text
    # the plots: one figure, six axes, each titled with whose scores it draws
    images = cell_images(nb, "fig, axes = plt.subplots(3, 2")
    assert len(images) == 1
    assert images[0].startswith(b"\x89PNG")
    drawn = printed(nb, "fig, axes = plt.subplots(3, 2")
    for title in (
        "Score distribution: bm25",
        "Score distribution: dense",
        "Scores by judgment: dense",
        "Score vs rank: dense",
        "ndcg@k",
        "dense − bm25: ndcg@10 per query",
    ):
        assert f"'{title}'" in drawn, title
    # the sample's answer, ranked by score: its cited sources rank higher than the uncited one
    said = printed(nb, "verdict = (")
    summary = printed(nb, "citations = citation_analysis(")
    assert "the sample's answer: Feed the starter 1:5:5" in summary
    cited = re.search(r"mean_rank_cited\s+([\d.]+)", summary)
    uncited = re.search(r"mean_rank_uncited\s+([\d.]+)", summary)
    assert cited is not None
    assert uncited is not None
    c, u = float(cited[1]), float(uncited[1])
    assert (c, u) == (2.5, 5.0)
    assert (
        f"ranked by score, the cited sources average rank {c:.2f}, the uncited ones {u:.2f}: "
        "the answer cites sources ranked higher (a smaller rank number) on average" in said
    )
