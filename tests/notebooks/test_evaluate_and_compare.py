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


def _views(executed: Executed) -> dict[str, tuple[float, float]]:
    """The table of the run that looks worse (``views.round(3)``): row -> (bm25, bm25 + new)."""
    table = printed(executed.nb, "incomplete = {")
    rows = {
        m[1].strip(): (float(m[2]), float(m[3]))
        for m in re.finditer(r"^(\S.*?)\s+(-?[\d.]+)\s+(-?[\d.]+)$", table, re.M)
    }
    bound = ("ndcg@10 lower bound", "ndcg@10 upper bound")
    assert set(rows) == {"ndcg@10", "ndcg'@10", "judged@10", *bound}
    return rows


def test_issue42_a_run_that_looks_worse_is_shown_with_its_condensed_list_and_bounds(
    executed: Executed,
) -> None:
    nb = executed.nb
    rows = _views(executed)
    made = re.search(
        r"^bm25 \+ new: (\d+) unjudged sections put first, for (\d+) of (\d+) questions$",
        printed(nb, "incomplete = {"),
        re.M,
    )
    assert made is not None
    assert int(made[1]) > 0
    # as built: by nDCG@10 it looks worse; on the judged sections alone it is BM25 itself
    (b, n), (cb, cn) = rows["ndcg@10"], rows["ndcg'@10"]
    assert n < b
    assert cn == cb
    for side, row in (("lower", "ndcg@10 lower bound"), ("upper", "ndcg@10 upper bound")):
        assert rows[row][0] <= b if side == "lower" else rows[row][0] >= b
        assert rows[row][1] <= n if side == "lower" else rows[row][1] >= n
    said = printed(nb, "def against(row)")

    def against(row: str) -> str:
        base, new = rows[row]
        change = "higher" if new > base else "lower" if new < base else "the same"
        return f"bm25 + new {new:.3f}, bm25 {base:.3f}: {change}"

    assert f"ndcg@10, unjudged as not relevant: {against('ndcg@10')}" in said
    condensed = "ndcg'@10"
    assert f"{condensed}, the judged sections only: {against(condensed)}" in said
    assert f"judged@10, the share of the top 10 judged: {against('judged@10')}" in said
    (lo_b, lo_n), (hi_b, hi_n) = rows["ndcg@10 lower bound"], rows["ndcg@10 upper bound"]
    verdict = (
        "bm25 + new is worse whatever the unjudged sections turn out to be"
        if hi_n < lo_b
        else "bm25 + new is better whatever they turn out to be"
        if lo_n > hi_b
        else "the ranges overlap: these judgments cannot say which run is better"
    )
    assert (
        f"ndcg@10 bounds: bm25 + new [{lo_n:.3f}, {hi_n:.3f}], bm25 [{lo_b:.3f}, {hi_b:.3f}]: "
        f"{verdict}" in said
    )
    filled = re.search(
        r"^the bounds fill each unjudged section as not relevant or relevant at grade (\d+); "
        r"bm25 \+ new's rest on (\d+) unjudged sections in its top 10",
        said,
        re.M,
    )
    assert filled is not None
    assert filled[1] == ("3" if executed.sample else "1")  # the judgments' top grade
    assert int(filled[2]) >= int(made[1])  # every section put first is unjudged
    assert f"as askkit eval --bounds prints it: {n:.3f} [{lo_n:.3f}, {hi_n:.3f}]" in said
    # the plot: each run's line with its band
    images = cell_images(nb, "plots.metric_curve(incomplete")
    assert len(images) == 1
    drawn = printed(nb, "plots.metric_curve(incomplete")
    assert "['bm25', 'bm25: bounds', 'bm25 + new', 'bm25 + new: bounds']" in drawn
