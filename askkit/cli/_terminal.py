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

Progress bars are drawn on a terminal only (:func:`progress_bars`). A long
step that a user waits for, maybe with its output in a pipe or a log
(``askkit lab``, ``index --embedder``, ``search --vault --embedder`` and
``run`` embedding a vault), runs inside :func:`progress_output`: on a
terminal each tqdm bar fits the terminal's width by shortening its description
(tqdm cuts the end of the line: behind a long model name, the counts and the
estimate never showed), and on a pipe each bar becomes a plain line every few
seconds: done/total, elapsed<estimate and the rate. A command that fails
there leaves those lines, then its one error line, last.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TextIO

from rich.console import Console, ConsoleOptions, ConsoleRenderable, RenderHook
from rich.segment import Segment

__all__ = ["clean", "console", "json_text", "one_line", "progress_bars", "progress_output"]

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


#: tqdm's bar between the percentage and the counts (``45%|####5     | 9/20``).
_BAR = re.compile(r"(\d+%)\|[^|]*\|")
#: tqdm's times and rate at the end of a bar's state (``[00:03<00:00,  9.9chunk/s]``).
_TIMES = re.compile(r"\[[^\[\]]*\]$")


class _ProgressLines(io.TextIOBase):
    """A text stream for tqdm's bars on a pipe: each bar as lines, one every ``interval``.

    tqdm redraws a bar in place: ``\\r`` and the bar's new state, on one line
    that a pipe or a log keeps growing. This writes a bar's first state, then a
    state when ``interval`` seconds passed since the last line, and the bar's
    last state when it ends (tqdm's newline), each as a line of its own without
    the bar's drawing; a state of blanks (a bar erased) writes nothing. Text
    without ``\\r`` goes through line by line.
    """

    def __init__(
        self, out: TextIO, interval: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__()
        self._out = out
        self._interval = interval
        self._clock = clock
        self._frame = ""
        self._redrawn = False  # the pending text is a bar's state (it followed a \r)
        self._shown = False  # ... and is on the output already
        self._fresh = True  # the next bar state starts a bar: shown at once
        self._last = -float("inf")
        self._last_line = ""
        self._lock = threading.Lock()

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        with self._lock:
            for part in re.split(r"([\r\n])", text):
                if part in {"\r", "\n"}:
                    if part == "\n" and not self._shown:
                        self._emit(final=True)
                    if not self._frame.strip():
                        self._fresh = True  # nothing, or a bar erased: a new bar comes next
                    self._frame, self._redrawn, self._shown = "", part == "\r", False
                    self._fresh = self._fresh or part == "\n"
                elif part:
                    self._frame += part
                    self._shown = False
            pending = self._redrawn and not self._shown and self._frame.strip()
            if pending and (self._fresh or self._clock() - self._last >= self._interval):
                self._emit(final=False)
        return len(text)

    def _emit(self, *, final: bool) -> None:
        line = _BAR.sub(r"\1", self._frame).rstrip()
        self._shown = True
        counts = _TIMES.sub("", line)
        if not line.strip() or (final and self._redrawn and counts == self._last_line):
            return  # nothing to say, or a bar's last state said already (but its times)
        self._out.write(line + "\n")
        self._out.flush()
        if self._redrawn:
            self._last, self._last_line, self._fresh = self._clock(), counts, False

    def flush(self) -> None:
        self._out.flush()


#: A bar's state: its description, then the meter from the percentage on.
_STATE = re.compile(r"(?P<desc>.*?): (?P<meter> *\d+%\|.*)", re.DOTALL)


def fit_bar(state: str, width: int) -> str:
    """A tqdm bar's ``state`` in ``width`` columns: a description too long loses its end,
    so that the percentage, the counts and the estimate always show.

    >>> fit_bar("embedding (a-long-model-name):  50%|#####     | 1/2 [00:01<00:01]", 60)
    'embedding (a-long-model…:  50%|#####     | 1/2 [00:01<00:01]'
    >>> fit_bar("x:  50%|#####     | 1/2 [00:01<00:01]", 60)
    'x:  50%|#####     | 1/2 [00:01<00:01]'
    """
    match = _STATE.fullmatch(state)
    if len(state) <= width or match is None:
        return state[:width]
    room = width - len(match["meter"]) - 2
    if room < 5:
        return match["meter"].strip()[:width]
    return f"{match['desc'][: room - 1]}…: {match['meter']}"


class _FittedBars(io.TextIOBase):
    """A text stream for tqdm's bars on a terminal: each state fitted (:func:`fit_bar`).

    It has no file descriptor, so tqdm measures no width and cuts nothing;
    this stream measures the terminal's at each state (a resized window too).
    """

    def __init__(self, out: TextIO) -> None:
        super().__init__()
        self._out = out
        self._width = len("")  # the columns the line's last state took
        self._state: str | None = None  # the state being written (it followed a \r)
        self._lock = threading.Lock()

    @property  # io.TextIOBase's is None; tqdm draws its unicode bar in a stream that can
    def encoding(self) -> str:  # type: ignore[override]
        return str(getattr(self._out, "encoding", None) or "utf-8")

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return True

    def _columns(self) -> int:
        try:
            return os.get_terminal_size(self._out.fileno()).columns - 1
        except (OSError, ValueError, AttributeError):
            return 79

    def write(self, text: str) -> int:
        with self._lock:
            if "\x1b" in text:  # tqdm moving between nested bars: as it is
                self._out.write(text)
                return len(text)
            for part in re.split(r"([\r\n])", text):
                if part == "\r":
                    self._draw()
                    self._state = ""
                elif part == "\n":
                    self._draw()
                    self._out.write("\n")
                    self._state, self._width = None, 0
                elif self._state is not None:
                    self._state += part
                elif part:
                    self._out.write(part)
                    self._width += len(part)
            self._draw()
            self._out.flush()
        return len(text)

    def _draw(self) -> None:
        if self._state is None:
            return
        fitted = fit_bar(self._state.rstrip(), self._columns())
        self._out.write("\r" + fitted + " " * max(self._width - len(fitted), 0))
        self._state, self._width = None, len(fitted)

    def flush(self) -> None:
        self._out.flush()


@contextlib.contextmanager
def progress_output(interval: float = 5.0) -> Iterator[bool]:
    """Run a block whose tqdm bars fit the terminal (:func:`fit_bar`), or, on a pipe or in a
    log, become a line when each starts, every ``interval`` seconds (done/total,
    elapsed<estimate, rate) and when each ends.

    Yields whether the block should show progress at all: ``False`` only when
    there is no stderr to show it on.
    """
    if sys.stderr is None:
        yield False
        return
    terminal = progress_bars()
    stream = _FittedBars(sys.stderr) if terminal else _ProgressLines(sys.stderr, interval)
    with contextlib.redirect_stderr(stream):
        yield True
