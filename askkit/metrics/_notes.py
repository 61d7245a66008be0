"""A test collection's document as a kimun note: its file name, and its text escaped.

Names. A document id becomes the note ``<id>.md`` at the top of the vault,
the id written as it is when it holds only ``a-z``, ``0-9``, ``-``, ``_`` and
``.`` (not first), every other character percent-encoded as its UTF-8 bytes
in lower-case hex (``%`` itself as ``%25``, an upper-case ``A`` as ``%41``, a
``/`` as ``%2f``): Cranfield's document 184 is ``184.md``, ``FT911-1`` is
``%46%54911-1.md``. So every name is one that kimun keeps as it is
(:class:`~askkit.VaultPath` lower-cases and replaces characters, and a
case-insensitive file system would merge ``A.md`` and ``a.md``), no two ids
share a name, and :func:`document_id` reads the id back exactly. A name
kimun reserves (``con``, ``aux``, ``com1``... before the first dot) has its
first letter encoded too.

Text. A note is ``# <title>``, a blank line, the text and a newline (no
heading line when the title is empty). Markdown in a document must not make
headings, frontmatter, lists, code blocks, links or wikilinks by accident,
so characters that could are escaped with a backslash (CommonMark's escapes,
which kimun's parser resolves: the indexed text is the document's):
``\\``, ````` ``, ``*``, ``_``, ``[``, ``]``, ``<``, ``>``, ``#`` and ``&``
everywhere; at a line's start (after its indentation) ``-``, ``+``, ``=``,
``~`` and the ``.`` or ``)`` of ``1.`` or ``1)``. Three things are written as
character references instead: a carriage return (``&#13;``, never a line
break), the first blank of an indentation of four columns or more (``&#32;``
or ``&#9;``: no indented code block), and U+FEFF (``&#65279;``, which a
reader would drop as a byte order mark); in a title also a line feed
(``&#10;``: a heading is one line). Every other character is written as it
is, so :func:`read_note` gives back the title and text exactly.
"""

from __future__ import annotations

import re
import urllib.parse

from askkit.errors import SchemaError

__all__ = [
    "MAX_NAME_BYTES",
    "document_id",
    "escape",
    "note_path",
    "note_text",
    "read_note",
    "unescape",
]

#: The longest file name most file systems allow, in bytes.
MAX_NAME_BYTES = 255
_NOTE = ".md"
_KEEP = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_.")
#: Names kimun prefixes with ``_`` (Windows devices), compared before the first dot.
_RESERVED = re.compile(r"con|prn|aux|nul|com[1-9]|lpt[1-9]")
_ENCODED = re.compile(r"(?:[a-z0-9_.-]|%[0-9a-f]{2})+")

#: Escaped with a backslash wherever they are.
_INLINE = frozenset("\\`*_[]<>#&")
#: Escaped at a line's start (after its indentation).
_LINE_START = frozenset("-+=~")
_ORDERED = re.compile(r"([ \t]*[0-9]{1,9})([.)])(?=[ \t]|$)")
_REFERENCES = {"\r": "&#13;", "\ufeff": "&#65279;"}
_TITLE_REFERENCES = {**_REFERENCES, "\n": "&#10;"}
_ESCAPES = re.compile(r"\\([\\`*_\[\]<>#&+=~.)-])|&#(9|10|13|32|65279);|([\\&])")


def _percent(text: str) -> str:
    return "".join(f"%{byte:02x}" for byte in text.encode("utf-8"))


def note_path(doc_id: str) -> str:
    """The note a document id is written to (see the module docstring).

    >>> note_path("184"), note_path("FT911-1"), note_path("a/b c"), note_path("con")
    ('184.md', '%46%54911-1.md', 'a%2fb%20c.md', '%63on.md')

    Raises
    ------
    SchemaError
        The id is empty, or makes a name longer than a file name may be.
    """
    if not isinstance(doc_id, str) or not doc_id:
        raise SchemaError("a document id must be a non-empty string", field="doc_id", value=doc_id)
    try:
        stem = "".join(
            ch if ch in _KEEP and not (i == 0 and ch == ".") else _percent(ch)
            for i, ch in enumerate(doc_id)
        )
    except UnicodeEncodeError:
        raise SchemaError(
            "a document id must be valid Unicode text (it holds a lone surrogate)",
            field="doc_id",
            value=doc_id,
        ) from None
    if _RESERVED.fullmatch(stem.split(".", 1)[0]):
        stem = _percent(stem[0]) + stem[1:]
    name = stem + _NOTE
    if len(name.encode("utf-8")) > MAX_NAME_BYTES:
        raise SchemaError(
            f"this document id makes a note name of {len(name.encode('utf-8'))} bytes, more than "
            f"the {MAX_NAME_BYTES} a file name may have; shorten the id",
            field="doc_id",
            value=doc_id,
        )
    return name


def document_id(path: str) -> str:
    """The document id a note written by askkit stands for: :func:`note_path` undone.

    >>> document_id("184.md"), document_id("%46%54911-1.md")
    ('184', 'FT911-1')

    Raises
    ------
    SchemaError
        ``path`` is not a name :func:`note_path` gives.
    """
    stem = path.removesuffix(_NOTE)
    doc_id: str | None = None
    if path.endswith(_NOTE) and _ENCODED.fullmatch(stem):
        try:
            doc_id = urllib.parse.unquote(stem, errors="strict")
        except UnicodeDecodeError:
            doc_id = None
    if doc_id is None or not doc_id or note_path(doc_id) != path:
        raise SchemaError(
            "not a note name askkit gives a document (<id>.md, the id's characters other than "
            "a-z 0-9 - _ . percent-encoded in lower case)",
            field="path",
            value=path,
        )
    return doc_id


def _indent_reference(line: str) -> str:
    """A line whose indentation reaches four columns starts with a character reference."""
    columns = 0
    for ch in line:
        if ch == " ":
            columns += 1
        elif ch == "\t":
            columns += 4 - columns % 4
        else:
            break
    if columns < 4 or not line.strip(" \t"):
        return line
    return ("&#32;" if line[0] == " " else "&#9;") + line[1:]


def _escape_line(line: str) -> str:
    """One line of text (no line feed in it) with its markup escaped."""
    line = _ORDERED.sub(r"\1\\\2", line, count=1)
    body = line.lstrip(" \t")
    if body[:1] in _LINE_START:
        line = line[: len(line) - len(body)] + "\\" + body
    return _indent_reference(line)


def escape(text: str, *, title: bool = False) -> str:
    r"""``text`` as a note holds it, markup escaped (see the module docstring).

    >>> escape("# not a heading\n1. nor a list\n    nor code")
    '\\# not a heading\n1\\. nor a list\n&#32;   nor code'
    >>> escape("a\nb", title=True)
    'a&#10;b'
    """
    references = _TITLE_REFERENCES if title else _REFERENCES
    chars = ["\\" + ch if ch in _INLINE else references.get(ch, ch) for ch in text]
    escaped = "".join(chars)
    if title:
        return escaped
    return "\n".join(_escape_line(line) for line in escaped.split("\n"))


def unescape(text: str, *, where: str = "", line: int | None = None) -> str:
    r""":func:`escape` undone: ``\x`` is ``x``, ``&#N;`` the character N.

    >>> unescape(escape("a *b* [[c]] &amp; 1. \\"))
    'a *b* [[c]] &amp; 1. \\'

    Raises
    ------
    SchemaError
        A lone ``\`` or ``&`` (askkit escapes every one it writes): the text
        was not written by :func:`escape`.
    """

    def one(match: re.Match[str]) -> str:
        if match.group(1) is not None:
            return match.group(1)
        if match.group(2) is not None:
            return chr(int(match.group(2)))
        raise SchemaError(
            f"an unescaped {match.group(3)!r} at character {match.start() + 1}: not a note "
            "askkit wrote, or one edited since (askkit escapes every \\ and & it writes)",
            field="text",
            value=text[max(0, match.start() - 20) : match.start() + 20],
            file=where or None,
            line=line,
        )

    return _ESCAPES.sub(one, text)


def note_text(title: str, text: str) -> str:
    r"""A document's note: ``# title``, a blank line, the text, a newline (no heading line
    when the title is empty).

    >>> note_text("Wing *lift*", "measured\n- at 3 speeds")
    '# Wing \\*lift\\*\n\nmeasured\n\\- at 3 speeds\n'
    >>> read_note(note_text("Wing *lift*", "measured\n- at 3 speeds"))
    ('Wing *lift*', 'measured\n- at 3 speeds')
    """
    head = f"# {escape(title, title=True)}\n\n" if title else ""
    return f"{head}{escape(text)}\n"


def read_note(content: str, *, where: str = "") -> tuple[str, str]:
    """``(title, text)`` of a note :func:`note_text` wrote, exactly.

    Raises
    ------
    SchemaError
        The note is not in that form (``where`` names its file).
    """
    title, body, first = "", content, 1
    if content.startswith("# "):
        head, sep, body = content.partition("\n")
        if not sep or not body.startswith("\n"):
            raise SchemaError(
                "a note askkit writes has a blank line after its '# title' line",
                field="text",
                value=content[:80],
                file=where or None,
                line=2,
            )
        title, body, first = unescape(head[2:], where=where, line=1), body[1:], 3
    if not body.endswith("\n"):
        raise SchemaError(
            "a note askkit writes ends with a line feed",
            field="text",
            value=body[-80:],
            file=where or None,
            line=first + body.count("\n"),
        )
    return title, unescape(body[:-1], where=where, line=first)
