"""markdown-it-py's CommonMark block parse, made faster for the chunker.

The chunker needs the block tokens of ``MarkdownIt("commonmark")`` with its
``inline`` core rule off (the chunker runs the inline parse itself, or a
shortcut of it). :data:`MD` gives exactly those tokens, faster:

* at each line only the block rules that can start on the line's first
  character are tried (:class:`_FastBlockParser`), in markdown-it's order,
  with copies of the rules whose debug logging costs nothing;
* tokens are :class:`_LightToken`\\ s, and :class:`LightStateBlock` finds the
  line markers with ``str`` methods instead of a loop over characters;
* the ``normalize`` core rule skips the substitutions that change nothing;
* :func:`block_parser` picks :data:`MD_NO_SETEXT` for a text with no line
  that could underline a setext heading.

:data:`REFERENCE_MD` is plain markdown-it, every fast path off: what the tests
compare against.
"""

from __future__ import annotations

import re
import types
from collections.abc import Callable
from operator import add, sub
from typing import Any, Literal, cast

from markdown_it import MarkdownIt
from markdown_it.parser_block import ParserBlock
from markdown_it.ruler import Ruler
from markdown_it.rules_block.state_block import StateBlock
from markdown_it.rules_core.state_core import StateCore
from markdown_it.token import Token

from askkit.vault._note_text import line_starts

__all__ = ["MD", "MD_NO_SETEXT", "REFERENCE_MD", "LightStateBlock", "block_parser"]

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


class LightStateBlock(StateBlock):
    """markdown-it's block state, with light tokens and line markers found at C speed."""

    def __init__(self, src: str, md: MarkdownIt, env: Any, tokens: list[Token]) -> None:
        # markdown-it sets every field up, scanning no text; then the markers
        super().__init__("", md, env, tokens)
        self.src = src
        lines = src.split("\n")
        # markdown-it gives no marker to a last line that only holds spaces
        # and tabs, nor to the empty "line" after a final line break
        if not lines[-1].strip(" \t"):
            lines.pop()
        length = len(src)
        starts = line_starts(lines) if lines else []
        self.bMarks = [*starts, length]
        self.eMarks = [*map(add, starts, map(len, lines)), length]
        indents = [*map(sub, map(len, lines), map(len, map(_lstrip_blank, lines))), 0]
        self.tShift = indents
        self.sCount = indents[:]
        if "\t" in src:  # a tab in the indent moves the column to the next stop of 4
            for k, line in enumerate(lines):
                if "\t" in line[: indents[k]]:
                    offset = 0
                    for ch in line[: indents[k]]:
                        offset += 4 - offset % 4 if ch == "\t" else 1
                    self.sCount[k] = offset
        self.bsCount = [0] * (len(lines) + 1)
        self.lineMax = len(lines)

    def push(self, ttype: str, tag: str, nesting: Literal[-1, 0, 1]) -> Token:
        if nesting < 0:
            self.level -= 1
        token: Any = _LightToken(ttype, tag, nesting, self.level)
        if nesting > 0:
            self.level += 1
        self.tokens.append(token)
        return token  # type: ignore[no-any-return]  # a Token in all but its class


def _lstrip_blank(line: str) -> str:
    return line.lstrip(" \t")


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
            pos = state.bMarks[line] + state.tShift[line]
            first = state.src[pos] if pos < state.eMarks[line] else ""
            for fn in table.get(first, anywhere):  # noqa: SIM110 - a loop, not any(genexpr): hot
                if fn(state, line, end, silent):
                    return True
            return False

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
        state = LightStateBlock(src, md, env, outTokens)
        self.tokenize(state, state.line, state.lineMax)
        return state.tokens

    def tokenize(self, state: StateBlock, startLine: int, endLine: int) -> None:  # noqa: N803
        """markdown-it's ``ParserBlock.tokenize`` with first-character rule dispatch."""
        table, anywhere = self._table, self._anywhere
        # the marker lists are only ever changed in place (blockquotes)
        src, bmarks, emarks, tshift = state.src, state.bMarks, state.eMarks, state.tShift
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
            pos = bmarks[line] + tshift[line]
            first = src[pos] if pos < emarks[line] else ""
            for rule in table.get(first, anywhere):
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


_CARRIAGE_RETURN = re.compile(r"\r\n?")


def _normalize(state: StateCore) -> None:
    """markdown-it's ``normalize`` core rule, skipping the substitutions that change nothing."""
    src = state.src
    if "\r" in src:
        src = _CARRIAGE_RETURN.sub("\n", src)
    if "\0" in src:
        src = src.replace("\0", "\ufffd")
    state.src = src


def _make_parser(*, setext: bool) -> MarkdownIt:
    md = MarkdownIt("commonmark")
    md.core.ruler.disable(["inline", "text_join"])
    md.core.ruler.at("normalize", _normalize)
    md.block = _FastBlockParser(md.block, setext=setext)
    # The text rule stops only where a CommonMark inline rule can start (the
    # default set also stops at characters reserved for extensions).
    md.inline.terminator_re = re.compile(r"[\n\\`*_\[\]!<&]")
    return md


MD = _make_parser(setext=True)
#: Without the setext rule, for a text with no line that could underline a
#: setext heading (the rule would try, and fail, on every paragraph).
MD_NO_SETEXT = _make_parser(setext=False)
#: The first line, and any later line (searched for from its line break, which
#: the regex engine finds fast, unlike a multi-line ``^``). A lone ``\r`` ends
#: a line too, in markdown-it as in pulldown-cmark.
_SETEXT_FIRST = re.compile(r"[ \t>]*(?:=+|-+)[ \t]*(?=[\r\n]|\Z)")
_SETEXT_UNDERLINE = re.compile(r"[\r\n][ \t>]*(?:=+|-+)[ \t]*(?=[\r\n]|\Z)")


def block_parser(text: str) -> MarkdownIt:
    """:data:`MD`, or :data:`MD_NO_SETEXT` when no line of ``text`` could underline a heading."""
    underline = _SETEXT_FIRST.match(text) or _SETEXT_UNDERLINE.search(text)
    return MD if underline else MD_NO_SETEXT


def _reference_parser() -> MarkdownIt:
    md = MarkdownIt("commonmark")
    md.core.ruler.disable(["inline", "text_join"])
    return md


#: Plain markdown-it, every fast path off: what the tests compare against.
REFERENCE_MD = _reference_parser()
