"""What markup would do in a browser: the one audit the HTML and widget safety tests share."""

from __future__ import annotations

from html.parser import HTMLParser

#: Tags that run code, load something or take input: none may come from user data.
BANNED_TAGS = {"script", "img", "iframe", "object", "embed", "svg", "form", "input", "style"}


class _Audit(HTMLParser):
    def __init__(self, *, anchors: bool) -> None:
        super().__init__(convert_charrefs=True)
        self.anchors = anchors
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in BANNED_TAGS or (tag == "a" and not self.anchors):
            self.problems.append(f"<{tag}>")
        for name, value in attrs:
            if name.startswith("on") or name in {"src", "action", "formaction", "srcdoc"}:
                self.problems.append(f"{tag}[{name}={value}]")
            if name == "href" and not (self.anchors and (value or "").startswith("#")):
                self.problems.append(f"{tag}[href={value}]")


def audit(markup: str, *, anchors: bool = True, stylesheet: str = "") -> list[str]:
    """The problems in ``markup``: banned tags, event handlers, links that leave the page.

    ``anchors=False`` refuses every ``<a>`` (widgets show none); ``stylesheet``
    is askkit's own ``<style>`` block, left out of the audit.
    """
    parser = _Audit(anchors=anchors)
    parser.feed(markup.replace(f"<style>{stylesheet}</style>", "") if stylesheet else markup)
    parser.close()
    return parser.problems
