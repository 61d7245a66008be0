"""The sections kimun core cuts a note into, with their place in the note.

kimun indexes a note in heading sections (``core/src/note/content_extractor.rs``,
``get_chunks_and_links``). :func:`chunk_note` reproduces that chunker on a
CommonMark parse by markdown-it-py (``MarkdownIt("commonmark")``, no
extensions, as kimun runs pulldown-cmark with ``Options::empty()``):

* YAML/TOML frontmatter (first line exactly ``---`` or ``+++``, a UTF-8 BOM
  allowed before it, closed by the first line equal to the opener) becomes a
  ``FrontMatter`` section, added **last**, only when closed and non-empty. Its
  text is the raw frontmatter lines joined with ``"\\n"`` (not folded).
* Wikilinks become their display text before parsing (``[[a|b]]`` -> ``b``);
  a hashtag's ``#`` is dropped in text outside code, links and images
  (``#tag`` -> ``tag``), with kimun's word-boundary rule.
* Every heading (ATX or setext, also inside a list item or a quote; never a
  ``#`` line inside a code block) closes the current section. The breadcrumb
  is a stack of ``(level, heading text)``: a new heading pops every entry of
  level >= its own. Heading text keeps its accents; inline code keeps its
  backticks, emphasis and link markup go, inline HTML is dropped (``<br>`` is
  a space).
* Section text is kimun's event machine, line for line: paragraph lines and
  soft breaks become separate lines, list items ``"* item"`` indented four
  spaces per level (a wrapped item stays one line), a code block is
  ```` ```lang ````, its trimmed content, ```` ``` ````; block HTML is kept one
  line per source line; links keep their text, images their alt text. The
  lines are joined with ``"\\n"`` and folded with :func:`askkit.diacritics.fold`.
* A section whose folded text is blank (Rust ``trim``) is dropped, so a
  heading with no text of its own shows up only as an ancestor in the
  breadcrumbs of the sections below it.
* A heading directly above a code block keeps its section: kimun's current
  chunker (``a_heading_directly_above_a_code_block_is_kept``) fixed the older
  behaviour that KIMUN.md's pitfall list still describes.

``Section.start``/``Section.end`` are what kimun does not keep: the section's
range as ``str`` indices into the note **exactly as given** (a BOM and CRLF
line endings stay in it and count). ``note[start:end]`` runs from the start
of the section's heading line (the note start, or the line after the
frontmatter, for the text before the first heading) to the start of the next
heading line, or the end of the note; it holds the heading line and the body.
The frontmatter section spans the frontmatter block, delimiters included.

Examples
--------
>>> note = "# Café\\nCrème brûlée.\\n\\n## Menu\\n- thé\\n"
>>> [(s.title, s.text) for s in chunk_note(note)]
[('Café', 'Creme brulee.'), ('Café\\x1fMenu', '* the')]
>>> s = chunk_note(note)[1]
>>> note[s.start:s.end]
'## Menu\\n- thé\\n'
"""

from __future__ import annotations

import re
import types
from bisect import bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path
from typing import Any, Literal, cast

from markdown_it import MarkdownIt
from markdown_it.common.utils import isMdAsciiPunct, isPunctChar, isWhiteSpace
from markdown_it.parser_block import ParserBlock
from markdown_it.ruler import Ruler
from markdown_it.rules_block.state_block import StateBlock
from markdown_it.rules_inline.balance_pairs import processDelimiters
from markdown_it.rules_inline.state_inline import Delimiter
from markdown_it.token import Token

from askkit._text import rust_trim
from askkit.diacritics import ascii_lower, fold

__all__ = [
    "BREADCRUMB_SEP",
    "FRONTMATTER",
    "Heading",
    "Section",
    "check_vault_sections",
    "chunk_note",
    "note_headings",
    "split_frontmatter",
]

#: core's breadcrumb separator (U+001F) inside a wire title.
BREADCRUMB_SEP = "\x1f"
#: The breadcrumb of the frontmatter section.
FRONTMATTER = "FrontMatter"


@dataclass(frozen=True, slots=True)
class Section:
    """One section of a note, as kimun's chunker cuts it.

    ``breadcrumb`` holds the heading texts from the outermost heading in, as
    kimun builds them (accents kept; an empty heading is an empty segment);
    ``()`` for the text before the first heading, ``("FrontMatter",)`` for
    the frontmatter. ``text`` is what kimun sends as the section text.
    ``note[start:end]`` is the section in the original note (see the module
    docstring).
    """

    breadcrumb: tuple[str, ...]
    text: str
    start: int
    end: int

    @property
    def title(self) -> str:
        """The wire title kimun sends: the breadcrumb joined with U+001F."""
        return BREADCRUMB_SEP.join(self.breadcrumb)

    @property
    def heading(self) -> str:
        """The innermost non-empty breadcrumb segment (kimun's ``breadcrumb_last``), or ``""``."""
        for segment in reversed(self.breadcrumb):
            if segment:
                return segment
        return ""

    @property
    def is_frontmatter(self) -> bool:
        """Whether this is the ``FrontMatter`` section."""
        return self.breadcrumb == (FRONTMATTER,)


@dataclass(frozen=True, slots=True)
class Heading:
    """A heading of a note outside code: its level, text and line.

    ``text`` is the heading text as kimun collects it (the breadcrumb
    segment); ``start``/``line_end`` delimit the heading's first source line
    (``line_end`` excludes the line break); ``setext`` tells the two kinds
    apart.
    """

    level: int
    text: str
    start: int
    line_end: int
    setext: bool


# ---------------------------------------------------------------------------
# Frontmatter (kimun's ``remove_frontmatter``), with line offsets kept.


def _rust_lines(text: str) -> tuple[list[str], list[int]]:
    """Rust ``str::lines`` plus each line's start offset in ``text``."""
    lines = text.split("\n")
    ends_with_newline = lines[-1] == ""
    if ends_with_newline:
        lines.pop()
    starts = list(accumulate((len(line) + 1 for line in lines[:-1]), initial=0))
    if "\r" in text:
        last = lines[-1] if lines and not ends_with_newline else None
        lines = [line.removesuffix("\r") for line in lines]
        if last is not None:
            lines[-1] = last  # a bare CR at the very end is not a line ending
    return lines, starts


@dataclass(frozen=True, slots=True)
class _Body:
    frontmatter: str
    closed: bool
    fm_end: int  # end of the frontmatter block in the note (0 when none)
    body: str  # the text kimun parses
    base: int  # offset of body[0] in the note
    # body line starts -> note offsets (None: body is note[base:])
    line_starts: list[int] | None
    note_line_starts: list[int] | None


def _split(text: str) -> _Body:
    newline = text.find("\n")
    first = text if newline < 0 else text[:newline]
    if newline >= 0 and first.endswith("\r"):
        first = first[:-1]
    first = first.removeprefix("\ufeff")
    if first not in {"---", "+++"}:
        base = 1 if text.startswith("\ufeff") else 0
        return _Body("", False, 0, text[base:], base, None, None)
    lines, starts = _rust_lines(text)
    close = next((i for i in range(1, len(lines)) if lines[i] == first), None)
    if close is None:
        body_first, fm, closed, fm_end = 1, "", False, 0
    else:
        body_first, fm, closed = close + 1, "\n".join(lines[1:close]), True
        fm_end = starts[body_first] if body_first < len(starts) else len(text)
    body_lines = lines[body_first:]
    body_starts = list(accumulate((len(line) + 1 for line in body_lines[:-1]), initial=0))
    base = starts[body_first] if body_first < len(starts) else len(text)
    return _Body(fm, closed, fm_end, "\n".join(body_lines), base, body_starts, starts[body_first:])


def split_frontmatter(text: str) -> tuple[str | None, str]:
    """kimun's ``remove_frontmatter``: ``(frontmatter, body)``.

    The frontmatter is ``None`` when the note has none or it is never
    closed. As in kimun, the body of a note with a frontmatter block is its
    remaining lines re-joined with ``"\\n"`` (CRLF becomes LF, the last line
    break goes); an unclosed block loses only its opening line; a note without
    one is returned as it is (a leading BOM removed).

    >>> split_frontmatter("---\\ntags: [a]\\n---\\n\\nBody\\n")
    ('tags: [a]', '\\nBody')
    >>> split_frontmatter("---\\nnever closed")
    (None, 'never closed')
    """
    parts = _split(text)
    return (parts.frontmatter if parts.closed else None), parts.body


# ---------------------------------------------------------------------------
# Wikilinks (collapsed before the parse, as kimun does) and hashtags.

_WIKILINK = re.compile(r"\[\[([^\]]+)\]\]")
_HASHTAG = re.compile(r"#([A-Za-z0-9_]+)")
#: Stands in for a ``#`` that came from a wikilink's display text, which
#: kimun never treats as a hashtag; restored to ``#`` in every output.
_SENTINEL = "\ue000"
_SENTINEL_LABEL = re.compile(r"#(?=[A-Za-z0-9_])")
_MASKABLE = re.compile(r"\[\[[^\]]*#[A-Za-z0-9_][^\]]*\]\]")
_MULTILINE_WIKILINK = re.compile(r"\[\[[^\]\n]*\n[^\]]*\]\]")


def _display(match: re.Match[str]) -> str:
    items = match.group(1).split("|")
    return items[0] if len(items) == 1 else items[1]


def _masked_display(match: re.Match[str]) -> str:
    return _SENTINEL_LABEL.sub(_SENTINEL, _display(match))


def _collapse_wikilinks(body: str) -> tuple[str, list[tuple[int, int, bool]] | None, bool]:
    """Replace ``[[a|b]]`` by ``b``: the text, an offset map, and whether ``#`` was masked.

    The offset map (``(out offset, in offset, copied)`` segments) is only
    built when a wikilink spans lines; otherwise every line starts at the
    same line number in both texts, which is all the chunker maps.
    """
    if "[[" not in body:
        return body, None, False
    # a ``#`` in a wikilink's display text is never a hashtag for kimun
    mask = _SENTINEL not in body and _MASKABLE.search(body) is not None
    if not _MULTILINE_WIKILINK.search(body):
        return _WIKILINK.sub(_masked_display if mask else _display, body), None, mask
    pieces: list[str] = []
    segments: list[tuple[int, int, bool]] = []
    last = 0
    out = 0
    for m in _WIKILINK.finditer(body):
        a, b = m.span()
        if a > last:
            segments.append((out, last, True))
            pieces.append(body[last:a])
            out += a - last
        display = _masked_display(m) if mask else _display(m)
        segments.append((out, a, False))
        pieces.append(display)
        out += len(display)
        last = b
    segments.append((out, last, True))
    pieces.append(body[last:])
    return "".join(pieces), segments, mask


def _label_blocks(ch: str) -> bool:
    return ch.isalnum() or ch in "_#" or ch == _SENTINEL


def _strip_hashtags(text: str, prev_blocks: bool, next_blocks: bool) -> str:
    """Drop the ``#`` of every hashtag in ``text`` (kimun's ``label_matches_inner``)."""
    out: list[str] = []
    last = 0
    n = len(text)
    for m in _HASHTAG.finditer(text):
        a, b = m.span()
        if (a and _label_blocks(text[a - 1])) or (not a and prev_blocks):
            continue
        if (b < n and _label_blocks(text[b])) or (b == n and next_blocks):
            continue
        out.append(text[last:a])
        last = a + 1
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


# ---------------------------------------------------------------------------
# kimun's TextLine machine over markdown-it tokens.

_EMPTY, _HEADER, _TEXT, _ITEM = 0, 1, 2, 3
#: An Empty line; shared and never mutated. Other lines are
#: ``[kind, level, text, heading index]`` lists.
_EMPTY_LINE: list[Any] = [_EMPTY, 0, "", -1]

#: The first characters a block rule can start on; a rule not listed may
#: start anywhere (``code``, ``lheading``, ``paragraph``).
_RULE_FIRST_CHARS = {
    "fence": "`~",
    "blockquote": ">",
    "hr": "*-_",
    "list": "*-+0123456789",
    "reference": "[",
    "html_block": "<",
    "heading": "#",
}
_Rule = Callable[[StateBlock, int, int, bool], bool]


def _dispatch(rules: list[tuple[str, _Rule]]) -> tuple[dict[str, list[_Rule]], list[_Rule]]:
    """Per first character, the rules (in order) that can match a line starting with it."""
    chars = set("".join(_RULE_FIRST_CHARS.values()))
    anywhere = [fn for name, fn in rules if name not in _RULE_FIRST_CHARS]
    table = {
        ch: [fn for name, fn in rules if ch in _RULE_FIRST_CHARS.get(name, ch)] for ch in chars
    }
    return table, anywhere


class _DispatchRuler(Ruler[_Rule]):
    """A block ruler whose terminator chains are one first-character dispatcher each."""

    def __init__(self, source: Ruler[_Rule], chains: dict[str, list[_Rule]]) -> None:
        super().__init__()
        # keep the rule list: ``StateBlock`` asks ``get_active_rules()``
        # whether indented code is on
        self.__rules__ = list(source.__rules__)
        self._chains = chains

    def getRules(self, chainName: str = "") -> list[_Rule]:  # noqa: N802, N803 - markdown-it API
        return self._chains.get(chainName, [])


class _LightToken:
    """A block token with markdown-it's ``Token`` fields, cheaper to build.

    Fields a block rule rarely sets keep a class-level default; the
    CommonMark block rules only ever assign them (never mutate in place).
    """

    attrs: dict[str, Any] = {}  # noqa: RUF012 - read-only default, rules assign a new dict
    meta: dict[str, Any] = {}  # noqa: RUF012
    map: list[int] | None = None
    children: list[Token] | None = None
    content = ""
    markup = ""
    info = ""
    hidden = False
    block = True

    def __init__(self, type_: str, tag: str, nesting: int, level: int) -> None:
        self.type = type_
        self.tag = tag
        self.nesting = nesting
        self.level = level


class _LightStateBlock(StateBlock):
    def push(self, ttype: str, tag: str, nesting: Literal[-1, 0, 1]) -> Token:
        if nesting < 0:
            self.level -= 1
        token = _LightToken(ttype, tag, nesting, self.level)
        if nesting > 0:
            self.level += 1
        self.tokens.append(cast(Token, token))
        return cast(Token, token)


class _NullLogger:
    """Stands in for a rule module's logger: ``debug`` is a C-level no-op."""

    debug = "".format


def _quiet(fn: _Rule) -> _Rule:
    """A private copy of a markdown-it rule whose ``LOGGER.debug`` calls cost nothing.

    Each block rule logs a debug line on every call; the copy runs the same
    code with ``LOGGER`` bound to :class:`_NullLogger` in its own globals, so
    markdown-it's modules are left untouched.
    """
    code = getattr(fn, "__code__", None)
    if code is None or "LOGGER" not in code.co_names:
        return fn
    if not isinstance(fn, types.FunctionType):
        return fn
    scope = dict(fn.__globals__)
    scope["LOGGER"] = _NullLogger
    clone = types.FunctionType(code, scope, fn.__name__, fn.__defaults__, fn.__closure__)
    clone.__kwdefaults__ = fn.__kwdefaults__
    return cast(_Rule, clone)


def _first_char(state: StateBlock, line: int) -> str:
    pos = state.bMarks[line] + state.tShift[line]
    return state.src[pos] if pos < state.eMarks[line] else ""


class _FastBlockParser(ParserBlock):
    """markdown-it's block parser, trying at each line only the rules that can start there.

    The rules, their order and their code are markdown-it's own; a rule is
    skipped only when the line's first character rules it out (each rule
    returns ``False`` straight away on such a line). This halves the block
    parse time on real notes.
    """

    def __init__(self, source: ParserBlock, *, setext: bool = True) -> None:
        super().__init__()
        enabled = [
            (r.name, _quiet(r.fn), r.alt)
            for r in source.ruler.__rules__
            if r.enabled and (setext or r.name != "lheading")
        ]
        self._table, self._anywhere = _dispatch([(name, fn) for name, fn, _ in enabled])
        chains: dict[str, list[_Rule]] = {"": [fn for _, fn, _ in enabled]}
        for chain in {alt for _, _, alts in enabled for alt in alts}:
            table, anywhere = _dispatch([(name, fn) for name, fn, alts in enabled if chain in alts])
            chains[chain] = [self._terminator(table, anywhere)]
        self.ruler = _DispatchRuler(source.ruler, chains)

    @staticmethod
    def _terminator(table: dict[str, list[_Rule]], anywhere: list[_Rule]) -> _Rule:
        def terminates(state: StateBlock, line: int, end: int, silent: bool) -> bool:
            return any(
                fn(state, line, end, silent) for fn in table.get(_first_char(state, line), anywhere)
            )

        return terminates

    def parse(
        self,
        src: str,
        md: MarkdownIt,
        env: Any,
        outTokens: list[Token],  # noqa: N803 - markdown-it's parameter name
    ) -> list[Token] | None:
        """markdown-it's ``ParserBlock.parse`` with a state that builds light tokens."""
        if not src:
            return None
        state = _LightStateBlock(src, md, env, outTokens)
        self.tokenize(state, state.line, state.lineMax)
        return state.tokens

    def tokenize(self, state: StateBlock, startLine: int, endLine: int) -> None:  # noqa: N803
        """markdown-it's ``ParserBlock.tokenize`` with first-character rule dispatch."""
        table, anywhere = self._table, self._anywhere
        line = startLine
        max_nesting = state.md.options.maxNesting
        has_empty_lines = False
        while line < endLine:
            state.line = line = state.skipEmptyLines(line)
            if line >= endLine:
                break
            if state.sCount[line] < state.blkIndent:
                break
            if state.level >= max_nesting:
                state.line = endLine
                break
            for rule in table.get(_first_char(state, line), anywhere):
                if rule(state, line, endLine, False):
                    if state.line <= line:
                        raise RuntimeError("block rule didn't increment state.line")
                    break
            else:
                raise RuntimeError("none of the block rules matched")
            state.tight = not has_empty_lines
            line = state.line
            if (line - 1) < endLine and state.isEmpty(line - 1):
                has_empty_lines = True
            if line < endLine and state.isEmpty(line):
                has_empty_lines = True
                line += 1
                state.line = line


def _make_parser(*, setext: bool) -> MarkdownIt:
    md = MarkdownIt("commonmark")
    md.core.ruler.disable(["inline", "text_join"])
    md.block = _FastBlockParser(md.block, setext=setext)
    # The text rule stops only where a CommonMark inline rule can start (the
    # default set also stops at characters reserved for extensions).
    md.inline.terminator_re = re.compile(r"[\n\\`*_\[\]!<&]")
    return md


_MD = _make_parser(setext=True)
#: Without the setext rule, for a text with no line that could underline a
#: setext heading (the rule would try, and fail, on every paragraph).
_MD_NO_SETEXT = _make_parser(setext=False)
_SETEXT_UNDERLINE = re.compile(r"^[ \t>]*(?:=+|-+)[ \t\r]*$", re.MULTILINE)
#: Inline content without these is plain text and line breaks.
_INLINE_SPECIAL = re.compile(r"[\\`*_\[\]<&]")
#: Inline content with these needs markdown-it's inline parser; without them
#: (only emphasis and code spans) the chunker's own fast path does the same.
_SLOW_INLINE = re.compile(r"[\\\[\]<&]")
_EMPHASIS_RUNS = re.compile(r"\*+|_+")
#: A code span: a backtick run, then the first later run of the same length.
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.*?)(?<!`)\1(?!`)", re.DOTALL)


def _flanking(src: str, start: int, end: int, can_split_word: bool) -> tuple[bool, bool]:
    """markdown-it's ``StateInline.scanDelims`` for the delimiter run ``src[start:end]``."""
    last = src[start - 1] if start > 0 else " "
    nxt = src[end] if end < len(src) else " "
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


class _Machine:
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
        if cur[0] == _EMPTY:
            if lines:
                lines[-1] = [_TEXT, 0, text, -1]
            else:
                lines.append([_TEXT, 0, text, -1])
        else:
            cur[2] += text

    def soft_break(self) -> None:
        lines = self.lines
        if lines and lines[-1][0] == _ITEM:
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
                lines.append([_HEADER, level, "", len(self.headings)])
                self.headings.append((level, line, tok.markup in {"=", "-"}))
            elif kind == "heading_close":
                lines.append(self.pop())
                lines.append(_EMPTY_LINE)
            elif kind == "bullet_list_open" or kind == "ordered_list_open":  # noqa: PLR1714
                cur = self.pop()
                level = cur[1] + 1 if cur[0] == _ITEM else 0
                lines.append(cur)
                lines.append([_ITEM, level, "", -1])
            elif kind == "bullet_list_close" or kind == "ordered_list_close":  # noqa: PLR1714
                cur = self.pop()
                if cur[0] == _ITEM:
                    last = [_ITEM, cur[1] - 1, "", -1] if cur[1] > 0 else _EMPTY_LINE
                    if cur[2]:
                        lines.append(cur)
                    lines.append(last)
                else:
                    lines.append(cur)
            elif kind == "list_item_open":
                cur = self.pop()
                lines.append(cur)
                if cur[0] != _ITEM:
                    lines.append([_ITEM, 0, "", -1])
                elif cur[2]:
                    lines.append([_ITEM, cur[1], "", -1])
            elif kind == "fence" or kind == "code_block":  # noqa: PLR1714
                cur = self.pop()
                lines.append(cur)
                opener = "```" + tok.info if kind == "fence" else "```"
                lines.append([_TEXT, 0, opener, -1])
                content = tok.content
                if content:
                    lines.append([_TEXT, 0, content, -1])
                    last = lines.pop()
                    last[2] = rust_trim(last[2])
                    lines.append(last)
                lines.append([_TEXT, 0, "```", -1])
            elif kind == "html_block":
                # pulldown-cmark sends one Html event per line, each a new line
                lines.extend([_TEXT, 0, part, -1] for part in _HTML_LINE.findall(tok.content))
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
            self.plain(_strip_hashtags(content, False, False) if "#" in content else content)
            return
        if not _SLOW_INLINE.search(content):
            self.emphasis_and_code(content)
            return
        children = []
        _MD.inline.parse(content, _MD, self.env, children)
        self.children(children, in_link=False)

    def emphasis_and_code(self, content: str) -> None:
        """Inline content whose only markup is emphasis and code spans.

        markdown-it's own rules, run without building tokens: code spans as
        its backtick rule finds them, emphasis delimiters scanned with its
        ``scanDelims`` rules and paired by its ``processDelimiters``. The
        matched delimiters and the code spans cut the text into runs.
        """
        cuts: list[tuple[int, int, str | None]] = []  # (start, end, code content or None)
        if "`" in content:
            for m in _CODE_SPAN.finditer(content):
                code = m.group(2).replace("\n", " ")
                if code.startswith(" ") and code.endswith(" ") and code.strip(" "):
                    code = code[1:-1]
                cuts.append((m.start(), m.end(), code))
        delims: list[Delimiter] = []
        positions: list[int] = []
        token = 0
        last_end = -1
        code_at = 0
        for m in _EMPHASIS_RUNS.finditer(content):
            start, end = m.span()
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
        for start, end, code in cuts:
            if start > pos:
                self.text_run(content, pos, start)
            if code is not None:
                self.append_text(f"`{code}`")
            pos = end
        if pos < len(content):
            self.text_run(content, pos, len(content))

    def text_run(self, content: str, start: int, end: int) -> None:
        text = content[start:end]
        if "#" in text:
            text = _strip_hashtags(
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
                if cur[0] == _HEADER:
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
            text = _strip_hashtags(text, _underscore_markup(before), _underscore_markup(after))
        self.append_text(text)


def _to_text(line: list[Any]) -> str:
    if line[0] == _ITEM:
        indent: int = line[1]
        return " " * (indent * 4) + "* " + str(line[2]).replace("\n", " ")
    return str(line[2])


# ---------------------------------------------------------------------------
# Offsets: parsed line -> note offset.

_NEWLINE = re.compile(r"\r\n?|\n")


class _Offsets:
    """Maps a line of the parsed text (markdown-it's line numbers) to its note offset."""

    __slots__ = ("_line_starts", "_parts", "_segment_starts", "_segments")

    def __init__(
        self, parsed: str, parts: _Body, segments: list[tuple[int, int, bool]] | None
    ) -> None:
        # Without a multi-line wikilink, collapsing kept every line in place:
        # count lines in the body itself and skip the segment map.
        counted = parsed if segments is not None else parts.body
        self._line_starts = [0]
        self._line_starts.extend(m.end() for m in _NEWLINE.finditer(counted))
        self._parts = parts
        self._segments = segments
        self._segment_starts = [s[0] for s in segments] if segments is not None else []

    def line_start(self, line: int) -> int:
        starts = self._line_starts
        pos = starts[line] if line < len(starts) else starts[-1]
        segments = self._segments
        if segments is not None:  # undo the wikilink collapse
            k = bisect_right(self._segment_starts, pos) - 1
            out, src, copied = segments[k]
            pos = src + (pos - out) if copied else src
        parts = self._parts
        if parts.line_starts is None or parts.note_line_starts is None:
            return parts.base + pos if pos else 0  # a leading BOM belongs to line 0
        j = bisect_right(parts.line_starts, pos) - 1
        if j < 0:
            return parts.base
        return parts.note_line_starts[j] + (pos - parts.line_starts[j])


# ---------------------------------------------------------------------------
# The chunker.


def _reference_parser() -> MarkdownIt:
    md = MarkdownIt("commonmark")
    md.core.ruler.disable(["inline", "text_join"])
    return md


#: Plain markdown-it, every fast path off: what the tests compare against.
_REFERENCE_MD = _reference_parser()


def _analyse(text: str, *, reference: bool = False) -> tuple[list[Section], list[Heading]]:
    parts = _split(text)
    parsed, segments, sentinel = _collapse_wikilinks(parts.body)
    env: dict[str, Any] = {}
    machine = _Machine(env, _REFERENCE_MD if reference else None)
    if parsed:
        if reference:
            md = _REFERENCE_MD
        else:
            md = _MD if _SETEXT_UNDERLINE.search(parsed) else _MD_NO_SETEXT
        machine.blocks(md.parse(parsed, env))
    offsets = _Offsets(parsed, parts, segments) if machine.headings else None
    heading_starts = [
        offsets.line_start(line) if offsets is not None else 0 for _, line, _ in machine.headings
    ]

    sections: list[Section] = []
    headings: list[Heading] = []
    stack: list[tuple[int, str]] = []
    content: list[str] = []
    start = parts.base if parts.line_starts is not None else 0
    has_section = False

    def close(end: int) -> None:
        body = fold("\n".join(content))
        if rust_trim(body):
            crumb = tuple(t for _, t in stack)
            if sentinel:
                body = body.replace(_SENTINEL, "#")
                crumb = tuple(t.replace(_SENTINEL, "#") for t in crumb)
            sections.append(Section(crumb, body, start, end))

    for line in machine.lines:
        kind = line[0]
        if kind == _HEADER:
            level, idx = line[1], line[3]
            head_start = heading_starts[idx]
            if has_section or content:
                close(head_start)
            while stack and stack[-1][0] >= level:
                stack.pop()
            # ``retain(lvl < level)`` keeps a strictly increasing stack, so
            # popping from the top is the same filter.
            heading_text = line[2].replace(_SENTINEL, "#") if sentinel else line[2]
            stack.append((level, line[2]))
            content = []
            start = head_start
            has_section = True
            newline = text.find("\n", head_start)
            line_end = len(text) if newline < 0 else newline
            if line_end > head_start and text[line_end - 1] == "\r":
                line_end -= 1
            headings.append(
                Heading(level, heading_text, head_start, line_end, machine.headings[idx][2])
            )
        elif kind != _EMPTY:
            content.append(_to_text(line))
    if has_section or content:
        close(len(text))
    if parts.closed and parts.frontmatter:
        sections.append(Section((FRONTMATTER,), parts.frontmatter, 0, parts.fm_end))
    return sections, headings


def chunk_note(text: str) -> list[Section]:
    """The sections kimun core would produce for ``text``, in kimun's order.

    Body sections come first, in note order, then the ``FrontMatter``
    section (when the note has a closed, non-empty frontmatter block). See
    the module docstring for the rules and :class:`Section` for the fields.

    >>> [s.title for s in chunk_note("---\\na: 1\\n---\\n# T\\ntext\\n### Deep\\nmore\\n")]
    ['T', 'T\\x1fDeep', 'FrontMatter']
    >>> chunk_note("# Only a title\\n")
    []
    """
    if not isinstance(text, str):
        raise TypeError(f"chunk_note takes the note text as a str, got {type(text).__name__}")
    return _analyse(text)[0]


def note_headings(text: str) -> list[Heading]:
    """Every heading kimun's chunker sees in ``text``, in order.

    ATX and setext headings, also inside list items and quotes; never a
    ``#`` line inside a code block or the frontmatter. The text is the
    breadcrumb segment kimun builds.

    >>> note = "Intro\\n=====\\n```\\n# no\\n```\\n## Yes\\n"
    >>> [(h.level, h.text, h.setext) for h in note_headings(note)]
    [(1, 'Intro', True), (2, 'Yes', False)]
    """
    return _analyse(text)[1]


# ---------------------------------------------------------------------------
# Whole-vault check (issue 4, item 8).

_WORD = re.compile(r"[^\W_]+")
_FULL_MD = MarkdownIt("commonmark")


_LINK_DESTINATION = re.compile(r"\]\([^)\n]*\)")
_INLINE_MARKUP = re.compile(r"[*_`\[\]]+")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(fold(text).lower()))


def _source_words(text: str) -> set[str]:
    """Words of raw markdown, also as they read once inline markup is gone (``**S**ave``)."""
    bare = _INLINE_MARKUP.sub("", _LINK_DESTINATION.sub("", text))
    return _words(text) | _words(bare)


def _independent_headings(text: str) -> list[tuple[int, int, str]]:
    """(level, note offset, plain text) of each heading, from a separate full parse."""
    parts = _split(text)
    parsed, segments, _ = _collapse_wikilinks(parts.body)
    tokens = _FULL_MD.parse(parsed)
    offsets = _Offsets(parsed, parts, segments)
    out = []
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.map is not None:
            inline = tokens[i + 1]
            plain = "".join(
                c.content for c in inline.children or [] if c.type in {"text", "code_inline"}
            ).replace(_SENTINEL, "#")
            out.append((int(tok.tag[1]), offsets.line_start(tok.map[0]), plain))
    return out


def _squash(text: str) -> str:
    return re.sub(r"[\s#`]+", "", text)


def check_note_sections(text: str, name: str = "<note>") -> list[str]:
    """Problems with ``chunk_note(text)`` found by an independent parse.

    * every heading markdown-it-py finds outside code that owns or encloses a
      non-blank section appears in some section's breadcrumb (kimun drops
      blank sections, so an empty heading appears only as an ancestor);
    * every section's ``text[start:end]`` starts at its heading line and holds
      the heading and every word of the section text.
    """
    problems: list[str] = []
    sections = chunk_note(text)
    body = [s for s in sections if not s.is_frontmatter]
    heads = _independent_headings(text)
    starts = sorted(s.start for s in body)
    for k, (level, start, plain) in enumerate(heads):
        scope_end = next((st for lv, st, _ in heads[k + 1 :] if lv <= level), len(text) + 1)
        i = bisect_right(starts, start - 1)
        if i == len(starts) or starts[i] >= scope_end:
            continue  # no non-blank section under this heading
        wanted = _squash(plain)
        if not any(_squash(seg) == wanted for s in body for seg in s.breadcrumb):
            problems.append(f"{name}: heading {plain!r} (offset {start}) is in no breadcrumb")
    head_starts = {st for _, st, _ in heads}
    for s in sections:
        chunk = text[s.start : s.end]
        where = f"{name}: section {s.title!r} [{s.start}:{s.end}]"
        if not 0 <= s.start <= s.end <= len(text):
            problems.append(f"{where}: range outside the note")
            continue
        if s.is_frontmatter:
            if s.text not in chunk.replace("\r\n", "\n"):
                problems.append(f"{where}: frontmatter text not in its range")
            continue
        if s.breadcrumb:
            if s.start not in head_starts:
                problems.append(f"{where}: does not start at a heading line")
            first_line = chunk.split("\n", 1)[0]
            if not _words(s.breadcrumb[-1]) <= _words(first_line):
                problems.append(f"{where}: heading line missing")
        missing = _words(s.text) - _source_words(chunk)
        if missing:
            problems.append(f"{where}: body words not in range: {sorted(missing)[:5]}")
    return problems


def _iter_notes(root: Path) -> Iterator[Path]:
    yield from sorted(p for p in root.rglob("*.md") if p.is_file())


def check_vault_sections(root: str | Path) -> list[str]:
    """Run :func:`check_note_sections` over every ``*.md`` note under ``root``.

    Returns the problems found (empty when every note checks out). Files are
    read as UTF-8 (a BOM is kept in the text, as a vault reader gives it).
    """
    root = Path(root)
    if not root.is_dir():
        raise NotADirectoryError(f"not a vault folder: {root}")
    problems: list[str] = []
    for path in _iter_notes(root):
        text = path.read_text(encoding="utf-8")
        problems.extend(check_note_sections(text, str(path.relative_to(root))))
    return problems
