"""kimun's ``TextLines`` event machine, over markdown-it tokens.

kimun's chunker walks pulldown-cmark events and builds a list of text lines
(``Empty``, ``Header``, ``Text``, ``Item``); :class:`EventMachine` does the
same over the block tokens of :mod:`askkit.vault._markdown`. Inline content goes
through markdown-it's inline parser only when it needs to: plain text,
emphasis, code spans and simple links and images are handled by shortcuts
that run markdown-it's own rules without building tokens (the tests compare
them with plain markdown-it, note for note).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.common.utils import isMdAsciiPunct, isPunctChar, isWhiteSpace
from markdown_it.rules_inline.balance_pairs import processDelimiters
from markdown_it.rules_inline.state_inline import Delimiter
from markdown_it.token import Token

from askkit._text import rust_trim
from askkit.vault._markdown import MD
from askkit.vault._note_text import strip_hashtags
from askkit.vault.diacritics import ascii_lower

__all__ = ["EMPTY", "HEADER", "ITEM", "TEXT", "EventMachine", "line_text"]

EMPTY, HEADER, TEXT, ITEM = 0, 1, 2, 3
#: An Empty line; shared and never mutated. Other lines are
#: ``[kind, level, text, heading index]`` lists.
_EMPTY_LINE: list[Any] = [EMPTY, 0, "", -1]


#: Inline content without these is plain text and line breaks.
_INLINE_SPECIAL = re.compile(r"[\\`*_\[\]<&]")
#: Inline content without these (only emphasis and code spans) never needs
#: markdown-it's inline parser; with them, :meth:`EventMachine.link_cuts`
#: decides.
_SLOW_INLINE = re.compile(r"[\\\[\]<&]")
#: Runs of ``*`` and of ``_``, searched apart: a pattern that starts with a
#: literal is scanned for at C speed, ``\*+|_+`` is tried at every position.
_STAR_RUNS = re.compile(r"\*+")
_UNDERSCORE_RUNS = re.compile(r"_+")
#: A code span: a backtick run, then the first later run of the same length.
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.*?)(?<!`)\1(?!`)", re.DOTALL)
#: A link or image whose label is plain text on one line and whose destination
#: is bare (no space, parenthesis, angle bracket, backslash or backtick) and
#: ends the link (no title): markdown-it's ``link``/``image`` rules make it a
#: link (or image) with the label as its only text.
_SIMPLE_LINK = re.compile(r"!?\[([^\[\]\\`*_<&\n]*)\]\(([^\s()<>\\`\x00-\x1f\x7f]*)\)")
#: A destination markdown-it might reject (``validateLink``), or whose scheme
#: an entity could spell: such a link goes through markdown-it.
_UNSAFE_DESTINATION = re.compile(r"(?:vbscript|javascript|file|data):|[^:]*&[^:]*:", re.IGNORECASE)
#: Outside code spans and simple links, these still need markdown-it's inline
#: parser: escapes, autolinks and HTML, entities, and a ``](`` that could
#: close a link.
_SLOW_REST = re.compile(r"[\\<&]|\]\(")


def _emphasis_runs(content: str) -> list[tuple[int, int]]:
    """The spans of the maximal runs of ``*`` and of ``_`` in ``content``, in order."""
    runs = [m.span() for m in _STAR_RUNS.finditer(content)] if "*" in content else []
    if "_" in content:
        underscores = [m.span() for m in _UNDERSCORE_RUNS.finditer(content)]
        runs = sorted(runs + underscores) if runs else underscores
    return runs


def _flanking(src: str, start: int, end: int, can_split_word: bool) -> tuple[bool, bool]:
    """markdown-it's ``StateInline.scanDelims`` for the delimiter run ``src[start:end]``."""
    last = src[start - 1] if start > 0 else " "
    nxt = src[end] if end < len(src) else " "
    return _flanks(last, nxt, can_split_word)


@lru_cache(maxsize=4096)
def _flanks(last: str, nxt: str, can_split_word: bool) -> tuple[bool, bool]:
    """``(can_open, can_close)`` of a delimiter run between the characters ``last`` and ``nxt``."""
    last_punct = isMdAsciiPunct(ord(last)) or isPunctChar(last)
    next_punct = isMdAsciiPunct(ord(nxt)) or isPunctChar(nxt)
    last_space = isWhiteSpace(ord(last))
    next_space = isWhiteSpace(ord(nxt))
    left = not (next_space or (next_punct and not (last_space or last_punct)))
    right = not (last_space or (last_punct and not (next_space or next_punct)))
    if can_split_word:
        return left, right
    return left and (not right or last_punct), right and (not left or next_punct)


_BREAK = re.compile(r" *\n[ \t]*")
#: A line of a block HTML token, its line break included (``\n`` only).
_HTML_LINE = re.compile(r"[^\n]*\n|[^\n]+")


def _underscore_markup(token: Token | None) -> bool:
    return token is not None and token.markup[:1] == "_"


class EventMachine:
    """The ``TextLines`` event machine of kimun's chunker."""

    __slots__ = ("env", "headings", "lines", "md")

    def __init__(self, env: dict[str, Any], md: MarkdownIt | None = None) -> None:
        self.lines: list[list[Any]] = []
        self.env = env
        self.md = md  # set: always run this parser's inline rules (the reference path)
        # (level, body line, setext) per Header line, in order
        self.headings: list[tuple[int, int, bool]] = []

    def pop(self) -> list[Any]:
        return self.lines.pop() if self.lines else _EMPTY_LINE

    def append_text(self, text: str) -> None:
        lines = self.lines
        cur = lines[-1] if lines else _EMPTY_LINE
        if cur[0] == EMPTY:
            if lines:
                lines[-1] = [TEXT, 0, text, -1]
            else:
                lines.append([TEXT, 0, text, -1])
        else:
            cur[2] += text

    def soft_break(self) -> None:
        lines = self.lines
        if lines and lines[-1][0] == ITEM:
            lines[-1][2] += "\n"
        else:
            lines.append(_EMPTY_LINE)

    def blocks(self, tokens: list[Token]) -> None:  # noqa: PLR0915 - one case per token type
        lines = self.lines
        for tok in tokens:
            kind = tok.type
            if kind == "inline":
                self.inline(tok)
            elif kind == "paragraph_open" or kind == "paragraph_close":  # noqa: PLR1714
                if not tok.hidden:  # tight list items have no Paragraph events
                    lines.append(self.pop())
                    lines.append(_EMPTY_LINE)
            elif kind == "heading_open":
                cur = self.pop()
                level = int(tok.tag[1])
                line = tok.map[0] if tok.map else 0
                lines.append(cur)
                lines.append([HEADER, level, "", len(self.headings)])
                self.headings.append((level, line, tok.markup in {"=", "-"}))
            elif kind == "heading_close":
                lines.append(self.pop())
                lines.append(_EMPTY_LINE)
            elif kind == "bullet_list_open" or kind == "ordered_list_open":  # noqa: PLR1714
                cur = self.pop()
                level = cur[1] + 1 if cur[0] == ITEM else 0
                lines.append(cur)
                lines.append([ITEM, level, "", -1])
            elif kind == "bullet_list_close" or kind == "ordered_list_close":  # noqa: PLR1714
                cur = self.pop()
                if cur[0] == ITEM:
                    last = [ITEM, cur[1] - 1, "", -1] if cur[1] > 0 else _EMPTY_LINE
                    if cur[2]:
                        lines.append(cur)
                    lines.append(last)
                else:
                    lines.append(cur)
            elif kind == "list_item_open":
                cur = self.pop()
                lines.append(cur)
                if cur[0] != ITEM:
                    lines.append([ITEM, 0, "", -1])
                elif cur[2]:
                    lines.append([ITEM, cur[1], "", -1])
            elif kind == "fence" or kind == "code_block":  # noqa: PLR1714
                cur = self.pop()
                lines.append(cur)
                opener = "```" + tok.info if kind == "fence" else "```"
                lines.append([TEXT, 0, opener, -1])
                content = tok.content
                if content:
                    lines.append([TEXT, 0, content, -1])
                    last = lines.pop()
                    last[2] = rust_trim(last[2])
                    lines.append(last)
                lines.append([TEXT, 0, "```", -1])
            elif kind == "html_block":
                # pulldown-cmark sends one Html event per line, each a new line
                lines.extend([TEXT, 0, part, -1] for part in _HTML_LINE.findall(tok.content))
            elif kind == "hr":
                lines.append(_EMPTY_LINE)
            # list_item_close, blockquote_open/close: no change

    def plain(self, text: str) -> None:
        """Text with line breaks and no other inline markup (hashtags already handled)."""
        if "\n" not in text:
            if text:
                self.append_text(text)
            return
        first = True
        for part in _BREAK.split(text):
            if not first:
                self.soft_break()
            first = False
            if part:
                self.append_text(part)

    def inline(self, tok: Token) -> None:
        content = tok.content
        if self.md is not None:
            children: list[Token] = []
            self.md.inline.parse(content, self.md, self.env, children)
            self.children(children, in_link=False)
            return
        if not _INLINE_SPECIAL.search(content):
            self.plain(strip_hashtags(content, False, False) if "#" in content else content)
            return
        if self.emphasis_code_and_links(content):
            return
        children = []
        MD.inline.parse(content, MD, self.env, children)
        self.children(children, in_link=False)

    def emphasis_code_and_links(self, content: str) -> bool:
        """Inline content whose only markup is emphasis, code spans and simple links.

        markdown-it's own rules, run without building tokens: code spans as
        its backtick rule finds them, links and images of :data:`_SIMPLE_LINK`
        (any other bracket being literal text), emphasis delimiters scanned
        with its ``scanDelims`` rules and paired by its ``processDelimiters``.
        The matched delimiters, the code spans and the links cut the text into
        runs. Returns ``False``, having done nothing, for content that needs
        markdown-it's inline parser.
        """
        # (start, end, text to append or None)
        cuts: list[tuple[int, int, str | None]] = []
        if "`" in content:
            for m in _CODE_SPAN.finditer(content):
                code = m.group(2).replace("\n", " ")
                if code.startswith(" ") and code.endswith(" ") and code.strip(" "):
                    code = code[1:-1]
                cuts.append((m.start(), m.end(), f"`{code}`"))
        if _SLOW_INLINE.search(content) and not self.link_cuts(content, cuts):
            return False
        delims: list[Delimiter] = []
        positions: list[int] = []
        token = 0
        last_end = -1
        code_at = 0
        for start, end in _emphasis_runs(content):
            while code_at < len(cuts) and cuts[code_at][1] <= start:
                code_at += 1
            if code_at < len(cuts) and cuts[code_at][0] <= start:
                continue  # inside a code span
            marker = content[start]
            can_open, can_close = _flanking(content, start, end, marker == "*")
            token += 1 if start != last_end else 0
            for k in range(end - start):
                delims.append(Delimiter(ord(marker), end - start, token, -1, can_open, can_close))
                positions.append(start + k)
                token += 1
            last_end = end
        processDelimiters(None, delims)  # type: ignore[arg-type]  # it never reads the state
        for k, d in enumerate(delims):
            if d.end != -1:
                cuts.append((positions[k], positions[k] + 1, None))
                cuts.append((positions[d.end], positions[d.end] + 1, None))
        cuts.sort()
        pos = 0
        for start, end, text in cuts:
            if start > pos:
                self.text_run(content, pos, start)
            if text:
                self.append_text(text)
            pos = end
        if pos < len(content):
            self.text_run(content, pos, len(content))
        return True

    def link_cuts(self, content: str, cuts: list[tuple[int, int, str | None]]) -> bool:
        """Add the simple links and images outside ``cuts`` (the code spans) to ``cuts``.

        ``False`` when some markup outside them needs markdown-it: an escape,
        an entity, ``<``, a ``](`` that could close another link, a bracket
        when the note defines link references, or a link destination that
        markdown-it could reject. A simple link holds no backtick, so a code
        span either holds it whole (and it is code) or lies apart from it.
        """
        code = cuts[:]
        k = 0
        for m in _SIMPLE_LINK.finditer(content):
            start, end = m.span()
            while k < len(code) and code[k][1] <= start:
                k += 1
            if k < len(code) and code[k][0] <= start:
                continue  # inside a code span
            if _UNSAFE_DESTINATION.match(m.group(2)):
                return False
            cuts.append((start, end, m.group(1)))
        if len(cuts) > len(code):
            cuts.sort()
        # the text markdown-it still scans: everything outside the cuts
        references = bool(self.env.get("references"))
        pos = 0
        for start, end, _ in (*cuts, (len(content), len(content), None)):
            rest = content[pos:start]
            if _SLOW_REST.search(rest) or (references and ("[" in rest or "]" in rest)):
                return False
            pos = end
        return True

    def text_run(self, content: str, start: int, end: int) -> None:
        text = content[start:end]
        if "#" in text:
            text = strip_hashtags(
                text,
                start > 0 and content[start - 1] == "_",
                end < len(content) and content[end] == "_",
            )
        self.plain(text)

    def children(self, tokens: list[Token], in_link: bool) -> None:
        pending: list[str] = []
        before: Token | None = None
        link_depth = 0
        for tok in tokens:
            kind = tok.type
            if kind == "text" or kind == "text_special":  # noqa: PLR1714
                pending.append(tok.content)
                continue
            if pending:
                self.flush(pending, before, tok, in_link or link_depth > 0)
                pending = []
            before = tok
            if kind == "softbreak" or kind == "hardbreak":  # noqa: PLR1714
                self.soft_break()
            elif kind == "code_inline":
                self.append_text(f"`{tok.content}`")
            elif kind == "html_inline":
                cur = self.pop()
                if cur[0] == HEADER:
                    if ascii_lower(tok.content[:3]) == "<br":
                        cur[2] += " "
                    self.lines.append(cur)
                else:
                    self.lines.append(cur)
                    self.append_text(tok.content)
            elif kind == "link_open":
                link_depth += 1
            elif kind == "link_close":
                link_depth -= 1
            elif kind == "image":
                self.children(tok.children or [], in_link=True)
        if pending:
            self.flush(pending, before, None, in_link or link_depth > 0)

    def flush(
        self, pending: list[str], before: Token | None, after: Token | None, in_link: bool
    ) -> None:
        text = "".join(pending)
        if not in_link and "#" in text:
            text = strip_hashtags(text, _underscore_markup(before), _underscore_markup(after))
        self.append_text(text)


def line_text(line: list[Any]) -> str:
    if line[0] == ITEM:
        indent: int = line[1]
        return " " * (indent * 4) + "* " + str(line[2]).replace("\n", " ")
    return str(line[2])
