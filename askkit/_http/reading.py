"""A response body read as JSON: as :func:`askkit.wire.load_json` reads it, strictly, or
with its arrays of numbers left undecoded.

Three readers, each ``body -> value``, each raising :class:`Unreadable` (which
the core turns into a :class:`~askkit.errors.ProtocolError`) for a body it
does not take:

- :func:`read_json`: what :func:`~askkit.wire.load_json` reads;
- :func:`read_strict_json`: the same, refusing what kimun's JSON parser
  (serde_json) refuses and Python's accepts, wherever it is: ``NaN``,
  ``Infinity``, a number beyond float64's range (``1e400``, a 400-digit
  integer), a string with a lone surrogate (``"\\ud800"``);
- :func:`read_vectors`: :func:`read_strict_json` under a memory bound. Each
  array of numbers is located in the body and left there (a :class:`Numbers`),
  the rest is parsed as JSON (at most :data:`MAX_SKELETON_BYTES`), and
  :meth:`VectorAnswer.matrix` decodes the arrays a caller has checked straight
  into one float32 matrix. Python's ``json`` would build a float object per
  number: up to about 13 times the body's size.

Examples
--------
>>> read_json(b'{"a": [1, 2]}')
{'a': [1, 2]}
>>> read_strict_json(b'{"a": NaN}')
Traceback (most recent call last):
...
askkit._http.reading.Unreadable: NaN at a
>>> value, body = read_vectors(b'{"embeddings": [[0.5, 1], [2, 3]], "n": 2}')
>>> value["embeddings"][0], value["n"]
(Numbers(start=17, stop=23, count=2), 2)
>>> VectorAnswer(value, body, ProtocolError).matrix(value["embeddings"]).tolist()
[[0.5, 1.0], [2.0, 3.0]]
"""

from __future__ import annotations

import json
import math
import re
import secrets
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from askkit.errors import ProtocolError, SchemaError
from askkit.wire import load_json

if TYPE_CHECKING:  # numpy is imported when a matrix is decoded: the kimun client needs none
    import numpy as np

__all__ = [
    "MAX_SKELETON_BYTES",
    "Numbers",
    "Unreadable",
    "VectorAnswer",
    "read_json",
    "read_strict_json",
    "read_vectors",
]

#: What an answer read by :func:`read_vectors` may hold besides its arrays of numbers
#: (keys, indices, usage counts): Ollama and OpenAI-compatible services send a few hundred
#: bytes.
MAX_SKELETON_BYTES = 2**20

_FLOAT64_MAX = sys.float_info.max
_KEY_ARRAY = "an array where an object key belongs"

# An array of JSON numbers, after its "[" (JSON's own grammar, possessive: linear time).
_WS = rb"[ \t\n\r]*+"
_NUMBER = rb"-?+(?:0|[1-9][0-9]*+)(?:\.[0-9]++)?+(?:[eE][-+]?+[0-9]++)?+"
_NUMBERS_REST = _WS + _NUMBER + rb"(?:" + _WS + rb"," + _WS + _NUMBER + rb")*+" + _WS + rb"\]"
#: One step through an answer: everything up to the next array of numbers (a string is
#: skipped whole, so a "[" inside one is text), then that array, an unclosed string, or
#: the end. Every position matches, so the steps tile the body.
_STEP = re.compile(
    rb'(?:[^"\[]++|"(?:[^"\\]++|\\.)*+"|\[(?!' + _NUMBERS_REST + rb"))*+"
    rb"(?:(?P<numbers>\[" + _NUMBERS_REST + rb')|(?P<open>")|\Z)',
    re.DOTALL,
)
#: Numbers are decoded this many bytes of text at a time (numpy parses only whole strings).
_PIECE = 2**20


class Unreadable(ValueError):
    """A body a reader does not take.

    ``kind`` says how (``"not_json"``, ``"refused"``: it holds what serde_json
    refuses, ``"bulky"``: too much besides its arrays of numbers; the core's
    messages for each are in :data:`askkit._http.failures.UNREADABLE`), ``why``
    the detail, and ``body`` the text to quote when it is not the body as
    received (one transcoded to UTF-8).
    """

    def __init__(
        self,
        kind: Literal["not_json", "refused", "bulky"],
        why: str,
        body: bytes | bytearray | None = None,
    ) -> None:
        super().__init__(why)
        self.kind = kind
        self.why = why
        self.body = body


@dataclass(frozen=True, slots=True)
class Numbers:
    """An array of JSON numbers in an answer, left undecoded: where its text is, and its length.

    ``start`` and ``stop`` delimit the text between its brackets in the body.
    It prints as ``[384 numbers]`` (in a message's excerpt of the answer).
    """

    start: int
    stop: int
    count: int

    def __str__(self) -> str:
        return f"[{self.count} number{'' if self.count == 1 else 's'}]"


class VectorAnswer:
    """A JSON answer whose arrays of numbers are :class:`Numbers`, decoded only on demand.

    ``value`` is the answer as :func:`read_vectors` returned it: as
    :func:`json.loads` would return it, but for each array of numbers, which is
    a :class:`Numbers` (an array with anything else in it, or an empty one, is
    a list as usual). ``body`` is the text the numbers are in; ``error`` makes
    the error raised when that text does not read as its scan said.
    """

    def __init__(
        self, value: Any, body: bytes | bytearray, error: Callable[[str], ProtocolError]
    ) -> None:
        self.value = value
        self._body = body
        self._error = error

    def matrix(self, rows: Sequence[Numbers]) -> np.ndarray[Any, np.dtype[np.float32]]:
        """``rows`` (all of one length) as a float32 ``(len(rows), length)`` matrix.

        Each number is read as a float64, as :func:`json.loads` reads it, then
        rounded to float32; one beyond float32's range becomes infinite (the
        caller checks). The matrix is the only large allocation: the text is
        parsed :data:`_PIECE` bytes at a time, straight into it.
        """
        import numpy as np

        out = np.empty((len(rows), rows[0].count if rows else 0), dtype=np.float32)
        for i, row in enumerate(rows):
            self._decode_into(row, out[i])
        return out

    def _decode_into(self, numbers: Numbers, row: np.ndarray[Any, np.dtype[np.float32]]) -> None:
        import numpy as np

        body, pos, filled = self._body, numbers.start, 0
        with memoryview(body) as view:
            while pos < numbers.stop:
                cut = body.find(b",", min(pos + _PIECE, numbers.stop), numbers.stop)
                cut = numbers.stop if cut < 0 else cut
                values = np.fromstring(bytes(view[pos:cut]), dtype=np.float32, sep=",")
                row[filled : filled + values.size] = values[: numbers.count - filled]
                filled += values.size
                pos = cut + 1
        if filled != numbers.count:  # the scan and numpy disagree on what a number is
            raise self._error(f"an array of {numbers.count} numbers read as {filled}")


def read_json(body: bytes | bytearray) -> Any:
    """``body`` as :func:`~askkit.wire.load_json` reads it, else :class:`Unreadable`."""
    try:
        return load_json(body, what="the body")
    except (ValueError, RecursionError) as exc:  # SchemaError, or what json let out
        raise Unreadable("not_json", _why(exc)) from None


def read_strict_json(body: bytes | bytearray) -> Any:
    """:func:`read_json`, refusing what kimun's JSON parser refuses (see the module)."""
    return _checked(read_json(body), None)


def read_vectors(body: bytes | bytearray) -> tuple[Any, bytes | bytearray]:
    """:func:`read_strict_json` with each array of numbers left in the body as :class:`Numbers`.

    Returns the value and the text the :class:`Numbers` point into (``body``,
    or ``body`` transcoded to UTF-8 when it came as UTF-16 or UTF-32), for a
    :class:`VectorAnswer`. A body holding more than :data:`MAX_SKELETON_BYTES`
    besides its arrays of numbers is :class:`Unreadable` (``"bulky"``).
    """
    data = body
    encoding = json.detect_encoding(data)
    if encoding not in {"utf-8", "utf-8-sig"}:  # UTF-16 or -32: scanned as UTF-8
        try:
            data = bytes(data).decode(encoding).encode("utf-8")
        except UnicodeDecodeError as exc:
            raise Unreadable("not_json", _why(exc)) from None
    skeleton, spans, marker = _skeleton(data)
    try:
        value = load_json(skeleton, what="the body")
    except (ValueError, RecursionError) as exc:
        raise Unreadable("not_json", _why(exc), data) from None
    arrays = [Numbers(start, stop, data.count(b",", start, stop) + 1) for start, stop in spans]
    return _checked(value, (marker, arrays), data), data


def _why(exc: BaseException) -> str:
    """Why a body is not JSON, as a message says it (a body is one document: no line)."""
    why = str(exc) if isinstance(exc, SchemaError) else f"{type(exc).__name__}: {exc}"
    return re.sub(r"^line \d+: ", "", why)


def _skeleton(body: bytes | bytearray) -> tuple[bytes, list[tuple[int, int]], str]:
    """``body`` (UTF-8, where no byte of a multi-byte character is ASCII) with each array
    of numbers replaced by a marker string; the arrays' spans (inside the brackets) and
    the markers' common prefix.

    The marker is ``"\\u0000<random>#<i>"``: no answer can hold it by chance
    or on purpose, and it is as much a JSON value as the array it stands for.
    """
    nonce = secrets.token_hex(8)
    head = b'"\\u0000' + nonce.encode("ascii") + b"#"
    pieces: list[bytes] = []
    spans: list[tuple[int, int]] = []
    size = pos = 0
    with memoryview(body) as view:
        while True:
            step = _STEP.match(body, pos)
            if step is None:  # cannot happen: a step starts at every position
                raise Unreadable("not_json", f"unreadable from byte {pos}", body)
            if step.start("open") >= 0:
                where = step.start("open")
                raise Unreadable("not_json", f"a string opened at byte {where} never closes", body)
            start = step.start("numbers")
            stop = start if start >= 0 else step.end()
            marker = head + b'%d"' % len(spans) if start >= 0 else b""
            size += stop - pos + len(marker)
            if size > MAX_SKELETON_BYTES:
                raise Unreadable("bulky", f"more than {MAX_SKELETON_BYTES:,} bytes", body)
            pieces.append(bytes(view[pos:stop]))
            if start < 0:
                break
            pieces.append(marker)
            spans.append((start + 1, step.end() - 1))
            pos = step.end()
    return b"".join(pieces), spans, "\x00" + nonce + "#"


def _checked(
    value: Any, arrays: tuple[str, list[Numbers]] | None, body: bytes | bytearray | None = None
) -> Any:
    """``value``, refused if it holds what kimun's parser refuses; the markers of
    :func:`_skeleton` (``arrays``: their prefix and what they stand for) swapped back."""
    value, problem = _walk(value, arrays)
    if problem is not None:
        what, path = problem
        where = f" at {_field(path)}" if path else ""
        if what == _KEY_ARRAY:  # the array stood in the body where JSON has a key
            raise Unreadable("not_json", f"{what}{where}", body)
        raise Unreadable("refused", f"{what}{where}", body)
    return value


def _walk(
    root: Any, arrays: tuple[str, list[Numbers]] | None
) -> tuple[Any, tuple[str, tuple[str | int, ...]] | None]:
    """``root`` with the markers of ``arrays`` swapped for their :class:`Numbers`, and the
    first value kimun's parser would refuse (what it is, where), if any.

    Iterative: whatever depth :func:`json.loads` reached, this reaches too.
    """
    prefix, numbers = arrays if arrays is not None else ("", [])
    holder = [root]
    stack: list[tuple[list[Any] | dict[str, Any], tuple[str | int, ...] | None]] = [(holder, None)]
    while stack:
        container, path = stack.pop()
        pairs = container.items() if isinstance(container, dict) else enumerate(container)
        for key, item in pairs:
            if isinstance(key, str):  # an object's key
                if prefix and key.startswith(prefix):
                    return root, (_KEY_ARRAY, path or ())
                what = _refused(key)
                if what is not None:
                    return root, (f"{what} as an object key", path or ())
            if isinstance(item, dict | list):
                stack.append((item, () if path is None else (*path, key)))
                continue
            if prefix and isinstance(item, str) and item.startswith(prefix):
                container[key] = numbers[int(item[len(prefix) :])]  # type: ignore[index]
                continue
            what = _refused(item)
            if what is not None:
                return root, (what, () if path is None else (*path, key))
    return holder[0], None


def _refused(value: object) -> str | None:
    """What ``value`` is when kimun's JSON parser refuses it, else None."""
    if isinstance(value, float) and not math.isfinite(value):
        if math.isnan(value):
            return "NaN"
        sign = "-" if value < 0 else ""
        return f"{sign}Infinity (or a number beyond float64's range, such as 1e400)"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > _FLOAT64_MAX:
        return f"a number beyond float64's range (a {len(str(abs(value)))}-digit integer)"
    if isinstance(value, str) and not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return "a string holding a lone surrogate (such as \\ud800)"
    return None


def _field(path: tuple[str | int, ...]) -> str:
    """``("data", 3, "index")`` -> ``data[3].index``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}" if out else part
    return out
