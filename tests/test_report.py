"""askkit.report: a static, escaped HTML report with metrics, plots and a drilldown.

The ``askkit report`` command is tested in tests/cli/test_report.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from askkit import __version__
from askkit._html import SORT_SCRIPT, esc
from askkit.errors import AskkitError, SchemaError, UsageError
from askkit.frame import sources_frame
from askkit.metrics import evaluate
from askkit.ranking import sweep_context_cut
from askkit.report import CONVENTIONS, Report, build_report, is_askkit_report
from askkit.retrieve.local import LocalIndex
from tests.conftest import DATA


def write_run_log(path: Path) -> Path:
    """A turn log of the bundled queries, retrieved from the bundled vault (37 turns)."""
    index = LocalIndex(DATA / "vault", cache_dir=False, progress=False)
    queries = pd.read_csv(DATA / "queries.tsv", sep="\t")
    with path.open("w", encoding="utf-8") as fh:
        for qid, question in zip(queries["query_id"], queries["question"], strict=True):
            chunks = [c.to_dict() for c in index.search(question, k=10)]
            fh.write(json.dumps({"id": qid, "question": question, "chunks": chunks}) + "\n")
    return path


def write_pool_log(path: Path) -> Path:
    """A turn log of whole pools, as a server set to keep them logs them: each bundled
    query's BM25 pool, then other chunks of the vault scoring below it, 80 chunks each."""
    index = LocalIndex(DATA / "vault", cache_dir=False, progress=False)
    queries = pd.read_csv(DATA / "queries.tsv", sep="\t")
    with path.open("w", encoding="utf-8") as fh:
        for qid, question in zip(queries["query_id"], queries["question"], strict=True):
            chunks = [c.to_dict() for c in index.pool(question)]
            low = min(c["similarity_score"] for c in chunks)
            taken = {(c["path"], c["title"], c["content"]) for c in chunks}
            every = index.chunks
            keys = zip(every["path"], every["title"], every["text"], strict=True)
            rest = every[[k not in taken for k in keys]].head(80 - len(chunks))
            filler = zip(rest["path"], rest["title"], rest["text"], strict=True)
            chunks += [
                {"path": p, "title": t, "content": x, "hash": "h"}
                | {"similarity_score": low / 2 - i / 1000}
                for i, (p, t, x) in enumerate(filler)
            ]
            for n, chunk in enumerate(chunks, start=1):
                chunk["ordinal"] = n
            fh.write(json.dumps({"id": qid, "question": question, "chunks": chunks}) + "\n")
    return path


@pytest.fixture(scope="module")
def run_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_run_log(tmp_path_factory.mktemp("report") / "run.jsonl")


@pytest.fixture(scope="module")
def pool_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_pool_log(tmp_path_factory.mktemp("report") / "pools.jsonl")


def test_full_report(run_log: Path) -> None:
    report = build_report(run_log, DATA / "qrels.tsv", vault=DATA / "vault", max_queries=None)
    page = report.html
    assert page.startswith("<!doctype html>")
    # askkit's one script (sorting and filtering tables), at the end; nothing else runs
    assert page.count("<script") == 1
    assert page.endswith(SORT_SCRIPT + "</body></html>")
    assert page.count('src="data:image/png;base64,') == 6
    assert "<h2>Metrics</h2>" in page
    assert "<h2>Where relevant notes are lost</h2>" in page
    assert "<h2>Context cut</h2>" in page
    assert "<h2>Coverage</h2>" in page
    assert report.turns == 37
    assert report.shown == 37
    assert page.count("<summary>section in the note</summary>") == report.sources
    assert "section not located" not in page
    assert "note not found" not in page


def test_metrics_table_equals_evaluate(run_log: Path) -> None:
    # note level unless told otherwise, as every command (the judgments name sections)
    for level, asked in (("note", None), ("section", "section"), ("note", "note")):
        report = build_report(run_log, DATA / "qrels.tsv", measures=["ndcg@10", "mrr"], level=asked)
        expected = evaluate(
            sources_frame(run_log), DATA / "qrels.tsv", ["ndcg@10", "mrr"], level=level
        ).mean
        table = report.html.split("<h2>Metrics</h2>", 1)[1].split("</table>", 1)[0]
        shown = [float(x) for x in re.findall(r'<td class="num">([0-9.]+)</td>', table)]
        assert shown == pytest.approx(expected.round(4).tolist(), abs=1e-4)
        header = report.html.split("<h2>", 1)[0]
        assert f"scored at <b>{level}</b> level" in header
        why = "askkit's default in every command" if asked is None else "as asked (level=…)"
        assert why in header


def test_a_run_whose_rows_share_labels_reports_as_the_same_run_relabelled(run_log: Path) -> None:
    frame = sources_frame(run_log)
    shared = frame.set_axis([0] * len(frame))  # as pd.concat without ignore_index leaves it
    images = re.compile(r'src="data:image/png;base64,[^"]*"')
    expected = build_report(frame, DATA / "qrels.tsv", vault=DATA / "vault")
    report = build_report(shared, DATA / "qrels.tsv", vault=DATA / "vault")
    assert report.sources == expected.sources == len(frame)
    assert images.sub("", report.html) == images.sub("", expected.html)


def test_drilldown_is_worst_first_and_capped(run_log: Path) -> None:
    report = build_report(run_log, DATA / "qrels.tsv", measures=["ndcg@10"], max_queries=3)
    assert report.shown == 3
    assert "34 more queries not shown" in report.html
    scores = [float(x) for x in re.findall(r"ndcg@10 ([0-9.]+)</span>", report.html)]
    assert scores == sorted(scores)


def test_without_judgments(tmp_path: Path) -> None:
    report = build_report(DATA / "turns.jsonl")
    assert "<h2>Metrics</h2>" not in report.html
    assert report.html.count("data:image/png;base64,") == 2
    assert "<th>grade</th>" not in report.html


def test_user_text_is_escaped(tmp_path: Path) -> None:
    evil = '<script>alert(1)</script><img src=x onerror="alert(2)">'
    log = tmp_path / "evil.jsonl"
    chunk = {
        "path": "a<b>.md",
        "title": evil,
        "date": None,
        "content": evil,
        "hash": "h",
        "similarity_score": 1.0,
        "ordinal": 1,
    }
    log.write_text(
        json.dumps({"id": evil, "question": evil, "answer": evil + " [1] [9]", "chunks": [chunk]})
        + "\n"
    )
    page = build_report(log).html
    assert "<script>alert" not in page
    assert "<img src=x" not in page
    assert "&lt;script&gt;" in page
    assert 'class="dangling"' in page  # [9] has no source


def test_lenient_lists_skipped_records(tmp_path: Path) -> None:
    log = tmp_path / "mixed.jsonl"
    good = (DATA / "turns.jsonl").read_text(encoding="utf-8").splitlines()[0]
    log.write_text(good + "\n" + '{"id": "bad", "chunks": [{"path": 3}]}\n')
    with pytest.raises(AskkitError, match=r"mixed\.jsonl:2"):
        build_report(log)
    report = build_report(log, strict=False)
    assert report.skipped == 1
    assert "<h2>Skipped records</h2>" in report.html


def test_bad_options() -> None:
    with pytest.raises(ValueError, match="level must be"):
        build_report(DATA / "turns.jsonl", level="chunk")
    with pytest.raises(ValueError, match="max_queries"):
        build_report(DATA / "turns.jsonl", max_queries=-1)


# -- the Where relevant notes are lost section ---------------------------------------------


def lost_section(page: str) -> str:
    return page.split("<h2>Where relevant notes are lost</h2>", 1)[1].split("<h2>", 1)[0]


def test_the_lost_section_shows_the_funnel_plot_and_the_per_query_table(run_log: Path) -> None:
    from askkit.trace import funnel, trace_log

    section = lost_section(build_report(run_log, DATA / "qrels.tsv").html)
    assert 'alt="where relevant sections are lost" src="data:image/png;base64,' in section
    table = funnel(trace_log(run_log, DATA / "qrels.tsv"))
    total = table.loc["total"]
    cells = "".join(f'<td class="num">{int(v)}</td>' for v in total.tolist())
    assert f"<td>total</td>{cells}" in section
    assert section.count("<tr>") == len(table) + 1  # the header, each query and the total
    assert total["judged"] == 104


def test_the_lost_section_escapes_ids(tmp_path: Path) -> None:
    evil = "<script>alert(1)</script>"
    log = tmp_path / "evil.jsonl"
    chunk = {"path": "a.md", "title": evil, "content": evil, "hash": "h", "ordinal": 1}
    log.write_text(
        json.dumps({"id": evil, "question": evil, "chunks": [{**chunk, "similarity_score": 1.0}]})
        + "\n"
    )
    qrels = pd.DataFrame({"query_id": [evil], "path": ["a.md"], "heading": [evil], "grade": [2]})
    section = lost_section(build_report(log, qrels).html)
    assert "<script>alert" not in section
    assert f"<td>{esc(evil)}</td>" in section


# -- the Context cut section ---------------------------------------------------------------


def cut_section(page: str) -> str:
    return page.split("<h2>Context cut</h2>", 1)[1].split("<h2>", 1)[0]


def test_context_cut_section_shows_the_sweep(pool_log: Path) -> None:
    page = build_report(pool_log, DATA / "qrels.tsv").html
    section = cut_section(page)
    cut = sweep_context_cut(sources_frame(pool_log), DATA / "qrels.tsv")
    assert cut.recommended is not None
    assert esc(cut.recommended.to_toml()) in section
    assert 'alt="context cut sweep" src="data:image/png;base64,' in section
    assert "<h3>Best setting per strategy</h3>" in section
    assert "already truncated" not in section
    assert f"Every setting ({len(cut.sweep)})" in section


def test_context_cut_section_on_truncated_pools_offers_no_toml(run_log: Path) -> None:
    """A log of 10 sources per question: every pool was cut, so no block to merge."""
    section = cut_section(build_report(run_log, DATA / "qrels.tsv").html)
    assert "already truncated 37 of 37 pools" in section
    assert "the sweep can only cut further" in section
    assert "how much of the judged-relevant notes a tighter cut" in section
    assert "cannot tell what a looser cut would add" in section
    assert "no [reranker] block" in section
    assert "<pre>" not in section
    assert "score_range_cutoff = " not in section
    assert "<h3>Best setting per strategy</h3>" in section  # the sweep is still shown


def test_context_cut_section_follows_the_objective(pool_log: Path) -> None:
    page = build_report(pool_log, DATA / "qrels.tsv", objective="ndcg", min_recall=0.5).html
    cut = sweep_context_cut(
        sources_frame(pool_log), DATA / "qrels.tsv", objective="ndcg", min_recall=0.5
    )
    assert cut.recommended is not None
    assert esc(cut.recommended.to_toml()) in cut_section(page)


def test_context_cut_section_when_no_qrels_match() -> None:
    page = build_report(DATA / "turns.jsonl", DATA / "qrels.tsv").html  # turn ids are not q01..
    section = cut_section(page)
    assert "no sweep" in section
    assert "no pool holds a relevant note of" in section
    assert "[reranker]" not in section


def test_context_cut_section_escapes_ids(tmp_path: Path) -> None:
    evil = "<script>alert(1)</script>"
    log = tmp_path / "evil.jsonl"
    chunk = {"path": "a<b>.md", "title": evil, "content": evil, "hash": "h", "ordinal": 1}
    log.write_text(
        json.dumps({"id": evil, "question": evil, "chunks": [{**chunk, "similarity_score": 1.0}]})
        + "\n"
    )
    qrels = pd.DataFrame({"query_id": ["other"], "path": ["a<b>.md"], "grade": [2]})
    page = build_report(log, qrels).html
    assert "<script>alert" not in page
    assert esc(evil) in cut_section(page)  # named in the "no pool holds" message


# --------------------------------------------------------------------------- ids that match nothing


def relabel(log: Path, out: Path, scheme: str) -> Path:
    """``log`` with its turn ids rewritten: ``q-aa`` style, upper case, or padded to ``q001``."""
    lines = log.read_text(encoding="utf-8").splitlines()
    with out.open("w", encoding="utf-8") as fh:
        for n, line in enumerate(lines):
            record = json.loads(line)
            qid = str(record["id"])
            record["id"] = {
                "scheme": f"q-{chr(97 + n // 26)}{chr(97 + n % 26)}",
                "case": qid.upper(),
                "padding": "q" + qid[1:].zfill(3),
            }[scheme]
            fh.write(json.dumps(record) + "\n")
    return out


def page_text(page: str) -> str:
    """The page without its embedded images (base64 can spell anything)."""
    return re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "", page)


@pytest.mark.parametrize(
    ("scheme", "cause"),
    [
        ("scheme", "different id schemes"),
        ("case", "differ only in case ('Q01' in the run, 'q01' judged)"),
        ("padding", "zero-padding ('q001' in the run, 'q01' judged)"),
    ],
)
def test_mismatched_ids_put_one_sentence_first(
    run_log: Path, tmp_path: Path, scheme: str, cause: str
) -> None:
    log = relabel(run_log, tmp_path / "run.jsonl", scheme)
    report = build_report(log, DATA / "qrels.tsv", vault=DATA / "vault")
    assert report.headline.startswith("No run query matches a judged query: nothing can be scored.")
    assert cause in report.headline
    assert "judged ids: q01, q02, q03." in report.headline
    body = report.html[report.html.index("<body") :]
    first = body[body.index(">") + 1 :]
    assert first.startswith('<div class="askkit-error"')
    assert first.index(esc(report.headline)) < first.index("<h1>")
    text = page_text(report.html)
    assert re.search(r"\bnan\b", text, flags=re.IGNORECASE) is None
    assert "no judged queries" in text.split("<h2>Metrics</h2>")[1].split("</table>")[0]
    # the histogram by judgment and the nDCG@k curve are replaced by the sentence
    assert report.html.count('src="data:image/png;base64,') == 2
    assert "Scores by judgment: no plot:" in text
    assert "ndcg@k: no plot:" in text
    # the coverage section says it first too
    assert text.split("<h2>Coverage</h2><pre>")[1].startswith(esc(report.headline))


def test_bundled_log_and_qrels_say_their_ids_differ(tmp_path: Path) -> None:
    report = build_report(DATA / "turns.jsonl", DATA / "qrels.tsv")
    assert report.headline.startswith("No run query matches a judged query")
    assert re.search(r"\bnan\b", page_text(report.html), flags=re.IGNORECASE) is None


def test_matching_ids_give_numbers_and_no_sentence(run_log: Path) -> None:
    report = build_report(run_log, DATA / "qrels.tsv", measures=["ndcg@10", "mrr"])
    assert report.headline == ""
    text = page_text(report.html)
    assert "nothing can be scored" not in text
    assert "no plot" not in text
    assert re.search(r"\bnan\b", text, flags=re.IGNORECASE) is None
    table = text.split("<h2>Metrics</h2>")[1].split("</table>")[0]
    assert re.search(r'<td class="num">0\.\d{4}</td>', table)


# -- writing: only askkit's own reports are replaced ----------------------------------------


@pytest.fixture(scope="module")
def small_report() -> Report:
    return build_report(DATA / "turns.jsonl", max_queries=2)


def test_a_report_carries_askkits_generator_marker_at_its_very_start(small_report: Report) -> None:
    assert small_report.html.startswith(
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f'<meta name="generator" content="askkit {__version__}">'
    )


def test_write_refuses_to_replace_a_file_askkit_did_not_write(
    small_report: Report, tmp_path: Path
) -> None:
    """``-o /etc/passwd`` replaced it: a file that is no askkit report is left as is."""
    precious = tmp_path / "notes.html"
    precious.write_text("<html>my own page</html>", encoding="utf-8")
    with pytest.raises(UsageError, match=r"is not an askkit report.*force=True") as info:
        small_report.write(precious)
    assert str(precious) in str(info.value)
    assert precious.read_text(encoding="utf-8") == "<html>my own page</html>"
    assert [p.name for p in tmp_path.iterdir()] == ["notes.html"]


def test_write_refuses_a_page_that_only_mentions_the_marker_later(
    small_report: Report, tmp_path: Path
) -> None:
    page = tmp_path / "about.html"
    text = '<html><body><pre>&lt;meta name="generator" content="askkit 1.0"&gt;</pre>'
    page.write_text(text + '<meta name="generator" content="askkit 1.0">', encoding="utf-8")
    with pytest.raises(UsageError, match="is not an askkit report"):
        small_report.write(page)
    assert page.read_text(encoding="utf-8").startswith("<html><body>")


def test_write_replaces_an_earlier_askkit_report(small_report: Report, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    out.write_text(
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        '<meta name="generator" content="askkit 0.0.1"><title>old</title>',
        encoding="utf-8",
    )
    assert small_report.write(out) == out
    assert out.read_text(encoding="utf-8") == small_report.html
    assert small_report.write(out) == out  # and its own output again
    assert out.read_text(encoding="utf-8") == small_report.html


def test_write_with_force_replaces_any_regular_file(small_report: Report, tmp_path: Path) -> None:
    out = tmp_path / "notes.html"
    out.write_text("mine", encoding="utf-8")
    small_report.write(out, force=True)
    assert out.read_text(encoding="utf-8") == small_report.html


def test_write_creates_a_new_file_and_its_folders(small_report: Report, tmp_path: Path) -> None:
    out = tmp_path / "a" / "b" / "report.html"
    small_report.write(out)
    assert out.read_text(encoding="utf-8") == small_report.html


def test_write_through_a_link_checks_the_file_it_names(
    small_report: Report, tmp_path: Path
) -> None:
    precious = tmp_path / "notes.html"
    precious.write_text("mine", encoding="utf-8")
    link = tmp_path / "report.html"
    link.symlink_to(precious)
    with pytest.raises(UsageError, match="is not an askkit report"):
        small_report.write(link)
    assert precious.read_text(encoding="utf-8") == "mine"


@pytest.mark.parametrize("measures", [[], ()])
def test_build_report_with_judgments_refuses_an_empty_measure_list(measures: Any) -> None:
    """``askkit report --measures ,`` was an "unexpected IndexError"."""
    with pytest.raises(SchemaError) as info:
        build_report(DATA / "turns.jsonl", DATA / "qrels.tsv", measures=measures)
    assert info.value.field == "measures"


@pytest.mark.parametrize(
    ("kwargs", "field"), [({"level": "chunk"}, "level"), ({"max_queries": -1}, "max_queries")]
)
def test_build_report_bad_options_are_schema_errors_naming_the_option(
    kwargs: dict[str, Any], field: str
) -> None:
    with pytest.raises(SchemaError) as info:
        build_report(DATA / "turns.jsonl", **kwargs)
    assert info.value.field == field


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    ids=st.lists(
        st.one_of(st.text(min_size=1, max_size=20), st.just("q\t1 %20#é" * 625)),
        min_size=1,
        max_size=3,
        unique=True,
    ),
    title=st.one_of(st.none(), st.text(max_size=40)),
)
@example(ids=['<meta name="generator" content="askkit 0">'], title="</title><!doctype html>")
def test_any_report_is_marked_read_back_exactly_and_replaced_by_the_next(
    ids: list[str], title: str | None, tmp_path: Path
) -> None:
    records = [
        {
            "id": turn_id,
            "question": turn_id,
            "chunks": [
                {"path": "a.md", "title": "A", "content": "x", "hash": "h", "similarity_score": 0.5}
            ],
        }
        for turn_id in ids
    ]
    report = build_report(records, title=title, max_queries=1)
    out = tmp_path / "report.html"
    out.unlink(missing_ok=True)
    report.write(out)
    assert out.read_bytes() == report.html.encode("utf-8")
    assert is_askkit_report(out)
    again = build_report(records[:1], title="again", max_queries=1)
    again.write(out)  # an earlier askkit report: replaced without force
    assert out.read_bytes() == again.html.encode("utf-8")


# -- what the page says of itself ------------------------------------------------------------


def drilldown_grades(page: str) -> list[str]:
    """The grade cells of every drilldown sources table (the last column)."""
    grades = []
    for table in re.findall(r'<table class="askkit-sources">(.*?)</table>', page, flags=re.S):
        heads = re.findall(r"<th>(.*?)</th>", table)
        assert heads[-1] == "grade"
        rows = re.findall(r"<tr id=[^>]*>(.*?)</tr>", table, flags=re.S)
        grades.extend(re.findall(r"<td>(.*?)</td>", row, flags=re.S)[-1] for row in rows)
    return grades


def test_unjudged_sources_read_as_unjudged_never_as_grade_0(run_log: Path) -> None:
    report = build_report(
        run_log, DATA / "qrels.tsv", measures=["ndcg@10"], level="section", max_queries=None
    )
    grades = drilldown_grades(report.html)
    assert len(grades) == report.sources == 370
    unjudged = [g for g in grades if "unjudged" in g]
    judged = [g for g in grades if "unjudged" not in g]
    assert unjudged
    assert judged
    assert all(g in {"0", "1", "2", "3"} for g in judged)
    # as many judged cells as the run has judged (query, section) rows
    from askkit.frame import sources_frame
    from askkit.metrics import read_qrels
    from askkit.metrics.ids import doc_ids, qrels_doc_ids

    frame = sources_frame(run_log)
    qrels = read_qrels(DATA / "qrels.tsv")
    keys = set(zip(qrels["query_id"], qrels_doc_ids(qrels, "section"), strict=True))
    in_qrels = [k in keys for k in zip(frame["turn_id"], doc_ids(frame, "section"), strict=True)]
    assert len(judged) == sum(in_qrels)


def test_the_page_explains_itself_without_a_readme(run_log: Path) -> None:
    page = build_report(run_log, DATA / "qrels.tsv", measures=["ndcg@10"]).html
    assert "README" not in page_text(page)
    assert esc(CONVENTIONS) in page
    assert "Worst first: judged queries by ndcg@10, lowest first" in page
    plain = build_report(DATA / "turns.jsonl").html
    assert "In the log&#x27;s order." in plain or "In the log's order." in plain


def test_tables_are_sortable_and_plain_without_script(run_log: Path) -> None:
    page = build_report(run_log, DATA / "qrels.tsv", measures=["ndcg@10", "mrr"]).html
    metrics = page.split("<h2>Metrics</h2>", 1)[1]
    assert metrics.startswith('<table class="askkit-data askkit-sortable">')
    per_query = page.split("Per-query measures", 1)[1].split("</details>", 1)[0]
    assert '<table class="askkit-data askkit-sortable">' in per_query
    # every judged query is a row of the plain HTML: the script only sorts and hides
    assert per_query.count("<tr><td>q") == 37
    assert "How did the knee problem change my training in March?" in per_query
    assert "innerHTML" not in SORT_SCRIPT  # it moves rows; it never builds markup from text


def test_a_written_report_gets_the_umasks_mode(small_report: Report, tmp_path: Path) -> None:
    import os
    import stat

    before = os.umask(0o022)
    try:
        out = small_report.write(tmp_path / "shared.html")
    finally:
        os.umask(before)
    assert stat.S_IMODE(out.stat().st_mode) == 0o644


# -- several runs side by side ---------------------------------------------------------------


def test_several_runs_are_compared_side_by_side(run_log: Path, tmp_path: Path) -> None:
    from askkit.compare import compare

    plain = tmp_path / "plain.jsonl"
    index = LocalIndex(DATA / "vault", cache_dir=False, progress=False, stemmer=None)
    queries = pd.read_csv(DATA / "queries.tsv", sep="\t")
    with plain.open("w", encoding="utf-8") as fh:
        for qid, question in zip(queries["query_id"], queries["question"], strict=True):
            chunks = [c.to_dict() for c in index.search(question, k=10)]
            fh.write(json.dumps({"id": qid, "question": question, "chunks": chunks}) + "\n")
    measures = ["ndcg@10", "mrr"]
    report = build_report(run_log, DATA / "qrels.tsv", measures=measures, others=[plain])
    section = report.html.split("<h2>Runs compared</h2>", 1)[1].split("<h2>", 1)[0]
    assert "2 runs on 37 judged queries" in section
    assert "the baseline is <b>run</b>" in section
    cmp = compare(
        {"run": sources_frame(run_log), "plain": sources_frame(plain)},
        DATA / "qrels.tsv",
        measures,
        level="note",
        baseline="run",
    )
    row = cmp.summary.loc[("plain", "ndcg@10")]
    assert f'<td class="num">{int(row["wins"])}</td>' in section
    assert f"{row['delta']:.4f}" in section
    assert "p_random_holm" in section
    assert 'alt="ndcg@k per run"' in section
    # the rest of the page is the first run's
    assert report.turns == 37


def test_several_runs_need_judgments(run_log: Path) -> None:
    with pytest.raises(UsageError, match="comparing runs needs judgments"):
        build_report(run_log, others=[run_log])


# -- issue 41: one run reader, one default level, empty inputs, a capped drilldown -----------


def test_issue41_3_a_trec_run_reports_as_its_turn_log_scores(run_log: Path, tmp_path: Path) -> None:
    from askkit.metrics import read_run, write_run

    trec = tmp_path / "run.trec"
    write_run(sources_frame(run_log), trec)
    measures = ["ndcg@10", "mrr"]
    from_log = build_report(run_log, DATA / "qrels.tsv", measures=measures)
    for run in (trec, read_run(trec)):  # the file, or its frame
        report = build_report(run, DATA / "qrels.tsv", measures=measures, max_queries=None)
        metrics = report.html.split("<h2>Metrics</h2>", 1)[1].split("</table>", 1)[0]
        assert metrics == from_log.html.split("<h2>Metrics</h2>", 1)[1].split("</table>", 1)[0]
        assert (report.turns, report.sources, report.shown) == (37, 370, 37)
        assert "is a TREC run: ranked document ids and scores only" in report.html
        assert "<h2>Context cut</h2>" not in report.html
        assert "askkit-sources" not in report.html  # no sources table: no texts to show
        assert report.html.count("<details><summary><b>q") == 37
    unjudged = build_report(trec)  # without judgments: the ranked documents alone
    assert "<h2>Metrics</h2>" not in unjudged.html
    assert "In the run&#x27;s order" in unjudged.html or "In the run's order" in unjudged.html
    with pytest.raises(UsageError, match="is a TREC run, whose documents carry no text"):
        build_report(trec, vault=DATA / "vault")


def test_issue41_4_the_report_scores_notes_unless_asked(run_log: Path) -> None:
    """The bundled judgments name sections: the report scored sections by default, where
    eval and diff scored notes."""
    report = build_report(run_log, DATA / "qrels.tsv", measures=["ndcg@10"])
    expected = evaluate(sources_frame(run_log), DATA / "qrels.tsv", ["ndcg@10"])  # note level
    table = report.html.split("<h2>Metrics</h2>", 1)[1].split("</table>", 1)[0]
    assert f'<td class="num">{expected.mean["ndcg@10"]:.4f}</td>' in table
    assert "scored at <b>note</b> level" in report.html.split("<h2>", 1)[0]


@pytest.mark.parametrize("which", ["run", "qrels"])
def test_issue41_6_empty_inputs_are_refused_naming_the_file(tmp_path: Path, which: str) -> None:
    empty = tmp_path / ("run.trec" if which == "run" else "qrels.tsv")
    empty.write_text("", encoding="utf-8")
    run, qrels = (empty, DATA / "qrels.tsv") if which == "run" else (DATA / "run.jsonl", empty)
    said = "holds no ranked documents" if which == "run" else "holds no judgments"
    with pytest.raises(SchemaError, match=f"^{re.escape(str(empty))}: {said} "):
        build_report(run, qrels)
    if which == "run":
        with pytest.raises(SchemaError, match=f"^{re.escape(str(empty))}: {said} "):
            build_report(run)  # without judgments too
        with pytest.raises(SchemaError, match=f"^the run {said} "):
            build_report(sources_frame(DATA / "turns.jsonl").head(0))


def test_issue41_7_the_drilldown_is_capped_by_default_and_says_so(run_log: Path) -> None:
    from askkit.report import DEFAULT_DRILLDOWN

    report = build_report(run_log, DATA / "qrels.tsv", measures=["ndcg@10"])
    assert report.shown == DEFAULT_DRILLDOWN == 25
    assert "<h2>Queries (25 of 37 shown)</h2>" in report.html
    assert "12 more queries not shown: the drilldown shows the worst 25 by ndcg@10 of 37" in (
        report.html
    )
    every = build_report(run_log, DATA / "qrels.tsv", measures=["ndcg@10"], max_queries=None)
    assert every.shown == 37
    assert "more queries not shown" not in every.html
    plain = build_report(DATA / "turns.jsonl", max_queries=2)  # no judgments: log order
    assert "22 more queries not shown: the drilldown shows the first 2 of 24" in plain.html


def test_issue41_7_a_section_that_is_its_chunk_is_not_shown_twice(run_log: Path) -> None:
    """A source whose located section is exactly its chunk's text (every Cranfield
    abstract; half the bundled run's sources) says so instead of repeating the text."""
    report = build_report(run_log, DATA / "qrels.tsv", vault=DATA / "vault", max_queries=None)
    said = report.html.count("the section is the chunk&#x27;s text, shown above, whole")
    said += report.html.count("the section is the chunk's text, shown above, whole")
    shown = report.html.count('<summary>section in the note</summary><div class="askkit-chunk"')
    assert said > 100
    assert shown > 100
    assert said + shown == report.sources == 370


# -- issue 42: each mean with its bounds ----------------------------------------------------


def bounds_rows(table: str) -> dict[str, list[tuple[str, ...]]]:
    """A bounds table's rows as shown: row label -> each cell's (value, lower, upper)."""
    out = {}
    for label, cells in re.findall(r"<tr><td>([^<]*)</td>(.*?)</tr>", table):
        out[label] = re.findall(r"<td>([-\d.]+) \[([-\d.]+), ([-\d.]+)\]</td>", cells)
    return out


def shown_as(table: pd.DataFrame, measures: list[str]) -> list[tuple[str, ...]]:
    """Each measure's mean and bounds as the page writes them (four decimals)."""
    return [
        tuple(f"{table.loc[m, side]:.4f}" for side in ("value", "lower", "upper")) for m in measures
    ]


def test_issue42_each_mean_is_shown_with_the_bounds_bounds_gives(run_log: Path) -> None:
    from askkit.metrics import bounds

    measures = ["ndcg@10", "mrr", "map", "ndcg'@10", "judged@10"]
    for level, asked, grade in (("note", None, None), ("section", "section", 1)):
        report = build_report(
            run_log, DATA / "qrels.tsv", measures=measures, level=asked, grade=grade
        )
        part = report.html.split("<h2>Metrics</h2>", 1)[1].split("<h2>", 1)[0]
        means, rest = part.split("</table>", 1)
        limits = bounds(
            sources_frame(run_log), DATA / "qrels.tsv", measures, level=level, grade=grade
        )
        table = limits.table()
        # the means' table is as it was; the bounds' table beside it, the same columns
        shown = [float(x) for x in re.findall(r'<td class="num">([0-9.]+)</td>', means)]
        assert shown == pytest.approx(table["value"].round(4).tolist(), abs=1e-4)
        assert rest.startswith('<table class="askkit-data askkit-sortable">')
        bounds_html = rest.split("</table>", 1)[0]
        assert "".join(f"<th>{esc(m)}</th>" for m in ["run", *measures]) in bounds_html
        rows = bounds_rows(bounds_html)
        assert rows["mean [lower, upper]"] == shown_as(table, measures)
        shares = re.findall(r"<td>(\d+)%</td>", bounds_html.split("unjudged share", 1)[1])
        assert shares == [f"{s:.0%}".rstrip("%") for s in limits.share()]
        # the measures this run can gain on: its bounds are a range
        assert table.loc["ndcg@10", "upper"] > table.loc["ndcg@10", "value"]
        legend = re.search(r'<p class="muted">(Each mean with its bounds.*?)</p>', rest)
        assert legend is not None
        which = "as asked" if grade else "the judgments&#x27; top grade"
        assert f"relevant at grade {limits.grade} ({which})" in legend[1]
        assert f"the {len(limits.holes)} unjudged documents" in legend[1]
        assert "nDCG can fall below it" in legend[1]
        assert "ndcg&#x27;@10" in legend[1]  # a condensed measure: what its bounds are
    assert limits.grade == 1


def test_issue42_the_ndcg_plot_shades_the_bounds(
    run_log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from matplotlib.collections import PolyCollection

    from askkit import plots
    from askkit.metrics import bounds

    drawn = []
    curve = plots.metric_curve

    def spy(*args: Any, **kwargs: Any) -> Any:
        drawn.append((kwargs, curve(*args, **kwargs)))
        return drawn[-1][1]

    monkeypatch.setattr(plots, "metric_curve", spy)
    build_report(run_log, DATA / "qrels.tsv", measures=["ndcg@10"], grade=2)
    ((kwargs, ax),) = drawn
    assert kwargs["band"] is True
    assert kwargs["grade"] == 2
    (band,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    (path,) = band.get_paths()
    xs, ys = path.vertices[:, 0], path.vertices[:, 1]
    names = [f"ndcg@{k}" for k in range(1, 11)]
    table = bounds(sources_frame(run_log), DATA / "qrels.tsv", names, grade=2).table()
    for k, name in enumerate(names, start=1):
        at = ys[xs == k]
        assert at.min() == pytest.approx(table.loc[name, "lower"])
        assert at.max() == pytest.approx(table.loc[name, "upper"])


def test_issue42_runs_compared_show_each_runs_bounds(run_log: Path, tmp_path: Path) -> None:
    from askkit.metrics import bounds

    other = tmp_path / "other.jsonl"
    # the same questions, each run's sources in reverse: another ranking of the same notes
    rows = [json.loads(line) for line in run_log.read_text(encoding="utf-8").splitlines()]
    with other.open("w", encoding="utf-8") as fh:
        for row in rows:
            for chunk, score in zip(
                reversed(row["chunks"]),
                sorted(c["similarity_score"] for c in row["chunks"])[::-1],
                strict=True,
            ):
                chunk["similarity_score"] = score
            fh.write(json.dumps(row) + "\n")
    measures = ["ndcg@10", "map"]
    report = build_report(run_log, DATA / "qrels.tsv", measures=measures, others=[other])
    section = report.html.split("<h2>Runs compared</h2>", 1)[1].split("<h2>", 1)[0]
    table = section.split("</table>", 1)[1].split("</table>", 1)[0]
    rows_shown = bounds_rows(table)
    for name, log in (("run", run_log), ("other", other)):
        expected = bounds(sources_frame(log), DATA / "qrels.tsv", measures).table()
        assert rows_shown[name] == shown_as(expected, measures)
    assert "relevant at grade 3 (the judgments&#x27; top grade)" in section
    assert "unjudged share" not in table


def test_issue42_the_grade_of_a_relevant_filling_is_checked() -> None:
    with pytest.raises(SchemaError, match="grade must be a whole number >= 0"):
        build_report(DATA / "turns.jsonl", DATA / "qrels.tsv", grade=-1)
