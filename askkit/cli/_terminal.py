"""Terminal-safe output: payload text never drives the terminal.

A note's title, a chunk's text, a server's answer or error, a path: any of
them may hold an escape sequence (``ESC ] 0;title BEL`` renames the window,
``ESC [ 2J`` clears the screen, OSC 8 forges a link). The command line prints
them through :func:`clean`, the one rule: control sequences (CSI, OSC, DCS,
SOS, PM, APC, two-character ESC sequences, in their ESC and C1 forms) are
removed whole, and every other C0 control (but tab and newline), DEL and C1
control (U+0080-U+009F) is removed; a lone surrogate, which no terminal
encoding can write, becomes U+FFFD. A string sequence (OSC, DCS...) that never
ends loses only its introducer: the rest of the text stays visible, inert.

:func:`console` builds the rich consoles the command line prints with: each
segment rich renders passes through :func:`clean` before it reaches the
terminal, after layout, so tables built anywhere (``askkit.cli._console``) are
covered. rich counts a control character as zero cells wide, so removing one
leaves the columns aligned (only a removed sequence's printable part, the
``[31m`` of ``ESC [31m``, leaves its cell that much short). rich's own styles
are added after, and survive.

Text written without rich uses :func:`clean` directly, or :func:`json_text`
for ``--json`` output, which escapes instead of removing: the JSON still
reads back to the same value.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable
from typing import Any

from rich.console import Console, ConsoleOptions, ConsoleRenderable, RenderHook
from rich.segment import Segment

__all__ = ["clean", "console", "json_text", "one_line", "progress_bars"]

_UNSAFE = re.compile(
    # OSC, DCS, SOS, PM, APC: an introducer, a body, BEL or ST (ESC \, U+009C); without
    # its end only the introducer goes (below), and the body shows, inert
    r"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x00-\x1f\x7f-\x9f]*(?:\x07|\x1b\\|\x9c)"
    # CSI: parameters, intermediates, a final byte
    r"|(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?"
    # any other escape: intermediates and a final byte
    r"|\x1b[\x20-\x2f]*[\x30-\x7e]?"
    # what is left: C0 but tab and newline, DEL, C1, and the bidirectional
    # controls that reorder what follows them on the line (the trojan-source ones)
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_NEWLINES = re.compile(r"\s*\n\s*")
#: In ``--json`` output: what ``json.dumps(ensure_ascii=False)`` leaves raw but a
#: terminal could read as a control (DEL, C1) or cannot encode (lone surrogates).
_JSON_RAW = re.compile(r"[\x7f-\x9f\ud800-\udfff]")


def clean(text: str) -> str:
    r"""``text`` with every terminal control sequence and control character removed.

    Tab and newline stay; a lone surrogate becomes U+FFFD.

    Examples
    --------
    >>> clean("a\x1b]0;owned\x07b \x1b[31mred\x1b[0m \x9b2Jc\x00\td\n")
    'ab red c\td\n'
    >>> clean("x\ud800y"), clean("id\u202eevil")
    ('x\ufffdy', 'idevil')
    >>> clean("note\x1b]0;never ended.md")
    'note0;never ended.md'
    """
    if text.isprintable():  # the usual case: nothing to do
        return text
    return _SURROGATE.sub("\ufffd", _UNSAFE.sub("", text))


def one_line(text: str) -> str:
    """:func:`clean`, with each line break (and the blanks around it) made one space.

    >>> one_line("server said:\\n  boom\\n")
    'server said: boom'
    """
    return _NEWLINES.sub(" ", clean(text)).strip()


def json_text(obj: Any) -> str:
    """``obj`` as indented JSON (one trailing newline), safe to print on a terminal.

    Control characters are escaped (``\\u001b``, ``\\u009b``), never removed,
    so the output parses back to ``obj``.

    >>> json_text({"a": "\\x1b[2J\\x9b"})
    '{\\n  "a": "\\\\u001b[2J\\\\u009b"\\n}\\n'
    """
    text = json.dumps(obj, ensure_ascii=False, indent=2)
    return _JSON_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n"


class _Clean:
    """A renderable that renders another and cleans the text of each segment."""

    def __init__(self, renderable: ConsoleRenderable) -> None:
        self.renderable = renderable

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterable[Segment]:
        for segment in console.render(self.renderable, options):
            if segment.control:  # rich's own cursor and screen controls
                yield segment
            else:
                yield Segment(clean(segment.text), segment.style)


class _CleanHook(RenderHook):
    def process_renderables(self, renderables: list[ConsoleRenderable]) -> list[ConsoleRenderable]:
        return [_Clean(r) for r in renderables]


class _Console(Console):
    """rich's console, leaving a closed pipe to the CLI's contract (exit status 2).

    rich itself exits with status 1 when the reader of its output goes away.
    """

    def on_broken_pipe(self) -> None:
        raise BrokenPipeError


def console(*, stderr: bool = False, **options: Any) -> Console:
    """A rich console (no highlighting) whose output passes through :func:`clean`."""
    options.setdefault("highlight", False)
    out = _Console(stderr=stderr, **options)
    out.push_render_hook(_CleanHook())
    return out


def progress_bars() -> bool:
    """Whether a command draws progress bars: on a terminal only. In a pipe or a log a
    bar is noise, and a failing command must leave one line on stderr."""
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # no stderr, or a closed one
        return False
