"""Hostile notes, headings, paths and queries are shown as text, never as markup."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import ipywidgets as w
import pytest

from askkit import AskSource, Turn, VaultPath
from askkit._html import CSS
from askkit.widgets import Explorer, Labeler, SourceReader, SourcesView, TurnView
from tests import html_audit

SCRIPT = "<script>alert('x')</script>"
IMG = '<img src=x onerror="alert(1)">'
LINK = '<a href="javascript:alert(1)">click</a>'
MD_LINK = "[click](javascript:alert(1))"
HOSTILE = (SCRIPT, IMG, LINK)
NOTE = (
    f"# {SCRIPT}\n\n{IMG} and {LINK} and {MD_LINK}\n\n"
    f"## Second {IMG}\n<div onclick=x>raw html</div>\n"
)


def _html_values(widget: Any) -> list[str]:
    """The value of every HTML widget in a widget tree (what the front-end sets as innerHTML).

    Button descriptions, tooltips and Text values are set as plain text by ipywidgets.
    """
    out: list[str] = []
    stack = [widget]
    while stack:
        node = stack.pop()
        if isinstance(node, w.HTML | w.HTMLMath):
            out.append(node.value)
        stack.extend(getattr(node, "children", ()))
    return out


def _assert_safe(html: str | Any) -> None:
    values = [html] if isinstance(html, str) else _html_values(html)
    for value in values:
        problems = html_audit.audit(value, anchors=False)
        assert not problems, (problems, value[:300])


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    folder = tmp_path / "vault"
    (folder / "evil").mkdir(parents=True)
    (folder / "evil" / "note.md").write_text(NOTE, encoding="utf-8")
    return folder


@pytest.fixture
def hostile() -> AskSource:
    return AskSource(
        VaultPath("evil/note.md"),
        f"{SCRIPT} › Second {IMG}",
        None,
        0.5,
        f"{IMG} and {LINK} and {MD_LINK}",
        1,
        hash=SCRIPT,
    )


def test_sources_view_escapes(hostile: AskSource) -> None:
    other = AskSource(VaultPath(f"x/{IMG}.md"), LINK, "2026-01-01", 0.1, SCRIPT, 2)
    view = SourcesView(Turn(SCRIPT, f"{IMG} [1] [2] [9]", [hostile, other]))
    view.select(0)
    _assert_safe(view)
    _assert_safe(view.html())
    assert "&lt;script&gt;" in view.html()


def test_reader_escapes_note_heading_path_hash_and_query(vault: Path, hostile: AskSource) -> None:
    reader = SourceReader(vault)
    reader.show(hostile, query=f"alert {SCRIPT} onerror")
    assert reader.note_text == NOTE
    assert reader.located is not None
    _assert_safe(reader)
    shown = re.sub(r"<mark[^>]*>|</mark>", "", reader.note_html.value)
    assert "&lt;script&gt;alert(" in shown
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in shown
    assert "[click](javascript:alert(1))" in shown
    assert "&lt;div onclick=x&gt;raw html&lt;/div&gt;" in shown
    reader.next_button.click()
    _assert_safe(reader)


def test_turn_view_escapes(vault: Path, hostile: AskSource) -> None:
    turn = Turn(f"{SCRIPT}?", f"{IMG} see [1] and {LINK} [7]", [hostile])
    view = TurnView(turn, vault)
    view.open_citation(1)
    _assert_safe(view)
    assert "&lt;img" in view.answer_box.children[0].value


def test_explorer_escapes_results_history_and_errors(vault: Path) -> None:
    def retrieve(query: str) -> list[dict[str, Any]]:
        if query == "fail":
            raise ValueError(IMG)
        return [
            {
                "path": "evil/note.md",
                "title": f"{SCRIPT}\x1fSecond {IMG}",
                "content": LINK,
                "hash": IMG,
                "similarity_score": 0.9,
            },
            {
                "path": f"{LINK}.md",
                "title": IMG,
                "content": SCRIPT,
                "hash": "h",
                "similarity_score": 0.1,
            },
        ]

    ex = Explorer(retrieve, vault)
    ex.search(SCRIPT)
    ex.view.select(1)
    ex.search("fail")
    _assert_safe(ex)
    assert "&lt;img" in ex.error_html.value


def test_explorer_escapes_retriever_names_in_every_panel(vault: Path) -> None:
    def hostile_chunks(query: str) -> list[dict[str, Any]]:
        return [
            {
                "path": f"{LINK}.md",
                "title": f"{SCRIPT}\x1f{IMG}",
                "content": SCRIPT,
                "hash": IMG,
                "similarity_score": 0.5,
            }
        ]

    def failing(query: str) -> list[Any]:
        raise RuntimeError(f"{IMG} {query}")

    class Pool:
        def __call__(self, query: str) -> list[dict[str, Any]]:
            return hostile_chunks(query)

        def pool(self, query: str) -> list[Any]:
            raise ValueError(LINK)

    ex = Explorer(retrievers={SCRIPT: hostile_chunks, IMG: failing, LINK: Pool()}, vault=vault)
    ex.show_cut()
    ex.search(SCRIPT)
    _assert_safe(ex)
    assert "from <b>&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;</b>" in ex.status_html.value
    assert "(&lt;script&gt;" in ex.histogram_label.value
    assert "<b>&lt;script&gt;alert(" in ex.cut_status.value  # the pool's lead names it
    ex.use(IMG)
    assert ex.wait(30)
    _assert_safe(ex)
    assert "<b>&lt;img src=x onerror=&quot;alert(1)&quot;&gt; failed:</b>" in ex.error_html.value
    ex.use(LINK)
    assert ex.wait(30)
    _assert_safe(ex)
    assert "fetching the pool failed (&lt;a href=" in ex.cut_status.value
    assert ex.history_buttons[0].description == SCRIPT  # plain text: one entry per question
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;: error" in (
        ex.history_box.children[0].children[1].value
    )
    comparison = ex.compare()
    _assert_safe(comparison.html())
    assert not html_audit.audit(comparison._repr_html_(), stylesheet=CSS)
    assert "<th>&lt;a href=&quot;javascript:alert(1)&quot;&gt;click&lt;/a&gt;</th>" in (
        comparison.html()
    )


def test_labeler_escapes(tmp_path: Path, hostile: AskSource) -> None:
    reader = SourceReader()
    reader.show(hostile)
    lab = Labeler(tmp_path / f"{IMG}.tsv".replace("/", "_"), reader, query_id=SCRIPT)
    lab.grade(2)
    _assert_safe(lab)


@pytest.mark.parametrize("markup", [SCRIPT, IMG, LINK, '<b onclick="x">b</b>'])
def test_the_audit_catches_unescaped_markup(markup: str) -> None:
    with pytest.raises(AssertionError):
        _assert_safe(markup)
