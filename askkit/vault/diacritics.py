"""kimun's diacritics folding (``core/src/note/diacritics.rs``), value for value.

kimun folds every section text it indexes with a fixed, hand-written table:
each character is looked up on its own (no Unicode normalisation), may map to
one or two ASCII letters, and the combining marks U+0300-U+036F,
U+1AB0-U+1AFF and U+1DC0-U+1DFF are dropped. The table is *not* Unicode
decomposition: ``Æ`` folds to ``A`` (not ``AE``), ``ß`` to ``s`` (not
``ss``), ``þ`` to ``b``, ``ſ`` to ``l``, and Greek or Cyrillic letters are left
alone. Breadcrumbs (headings) are never folded by kimun; section texts are.

Examples
--------
>>> fold("TÅRÖÄÆØ")
'TAROAAO'
>>> fold("Straße, Œuvre, e\u0300")
'Strase, OEuvre, e'
>>> fold_ascii_lower("Café") == fold_ascii_lower("CAFE")
True
"""

from __future__ import annotations

import re

__all__ = [
    "COMBINING_RANGES",
    "FOLD_TABLE",
    "ascii_lower",
    "eq_ignore_ascii_case",
    "fold",
    "fold_ascii_lower",
]

#: Output -> the characters kimun folds to it (one ``match`` arm each in the
#: Rust source; the table has no character in two arms). Identity arms
#: (``'A' => 'A'``) are left out.
_ARMS: dict[str, str] = {
    "A": "ÀÁÂÃÄÅÆĀĂĄǍǞǠǢǺǼȀȂȦȺḀẠẢẤẦẨẪẬẮẰẲẴẶⒶⱯＡ",
    "a": "àáâãäåæāăąǎǟǡǣǻǽȁȃȧɐḁẚạảấầẩẫậắằẳẵặⓐⱥａ",
    "AA": "Ꜳ",
    "aa": "ꜳ",
    "AO": "Ꜵ",
    "ao": "ꜵ",
    "AU": "Ꜷ",
    "au": "ꜷ",
    "AV": "ꜸꜺ",
    "av": "ꜹꜻ",
    "AY": "Ꜽ",
    "ay": "ꜽ",
    "B": "ƁƂɃḂḄḆⒷＢ",
    "b": "þƀƃɓḃḅḇⓑｂ",
    "C": "ÇĆĈĊČƇȻḈⒸꜾＣ",
    "c": "çćĉċčƈȼḉↄⓒꜿｃ",
    "D": "ĎĐƉƊƋḊḌḎḐḒⒹꝹＤ",
    "d": "ďđƌɖɗḋḍḏḑḓⓓꝺｄ",
    "DZ": "ǄǱ",
    "Dz": "ǅǲ",
    "dz": "ǆǳ",
    "E": "ÈÉÊËĒĔĖĘĚƎƐȄȆȨḔḖḘḚḜẸẺẼẾỀỂỄỆⒺＥ",
    "e": "èéêëēĕėęěǝȅȇȩɇɛḕḗḙḛḝẹẻẽếềểễệⓔｅ",
    "F": "ƑḞⒻꝻＦ",
    "f": "ƒḟⓕꝼｆ",
    "G": "ĜĞĠĢƓǤǦǴḠⒼꝽꝾꞠＧ",
    "g": "ĝğġģǥǧǵɠᵹḡⓖꝿꞡｇ",
    "H": "ĤĦȞḢḤḦḨḪⒽⱧⱵꞍＨ",
    "h": "ĥħȟɥḣḥḧḩḫẖⓗⱨⱶｈ",
    "hv": "ƕ",
    "I": "ÌÍÎÏĨĪĬĮİƗǏȈȊḬḮỈỊⒾＩ",
    "i": "ìíîïĩīĭįıǐȉȋɨḭḯỉịⓘｉ",
    "J": "ĴɈⒿＪ",
    "j": "ĵǰɉⓙｊ",
    "K": "ĶƘǨḰḲḴⓀⱩꝀꝂꝄꞢＫ",
    "k": "ķƙǩḱḳḵⓚⱪꝁꝃꝅꞣｋ",
    "L": "ĹĻĽĿŁȽḶḸḺḼⓁⱠⱢꝆꝈꞀＬ",
    "l": "ĺļľŀłſƚɫḷḹḻḽⓛⱡꝇꝉꞁｌ",
    "LJ": "Ǉ",
    "Lj": "ǈ",
    "lj": "ǉ",
    "M": "ƜḾṀṂⓂⱮＭ",
    "m": "ɯɱḿṁṃⓜｍ",
    "N": "ÑŃŅŇƝǸȠṄṆṈṊⓃꞐꞤＮ",
    "n": "ñńņňŉƞǹɲṅṇṉṋⓝꞑꞥｎ",
    "NJ": "Ǌ",
    "Nj": "ǋ",
    "nj": "ǌ",
    "O": "ÒÓÔÕÖØŌŎŐƆƟƠǑǪǬǾȌȎȪȬȮȰṌṎṐṒỌỎỐỒỔỖỘỚỜỞỠỢⓄꝊꝌＯ",
    "o": "òóôõöøōŏőơǒǫǭǿȍȏȫȭȯȱɔɵṍṏṑṓọỏốồổỗộớờởỡợⓞꝋꝍｏ",
    "OE": "\x8cŒ",
    "oe": "\x9cœ",
    "OI": "Ƣ",
    "oi": "ƣ",
    "OO": "Ꝏ",
    "oo": "ꝏ",
    "OU": "Ȣ",
    "ou": "ȣ",
    "P": "ƤṔṖⓅⱣꝐꝒꝔＰ",
    "p": "ƥᵽṕṗⓟꝑꝓꝕｐ",
    "Q": "ɊⓆꝖꝘＱ",
    "q": "ɋⓠꝗꝙｑ",
    "R": "ŔŖŘȐȒɌṘṚṜṞⓇⱤꝚꞂꞦＲ",
    "r": "ŕŗřȑȓɍɽṙṛṝṟⓡꝛꞃꞧｒ",
    "S": "ŚŜŞŠȘṠṢṤṦṨẞⓈⱾꞄꞨＳ",
    "s": "ßśŝşšșȿṡṣṥṧṩẛⓢꞅꞩｓ",
    "T": "ŢŤŦƬƮȚȾṪṬṮṰⓉꞆＴ",
    "t": "ţťŧƭțʈṫṭṯṱẗⓣⱦꞇｔ",
    "TZ": "Ꜩ",
    "tz": "ꜩ",
    "U": "ÙÚÛÜŨŪŬŮŰŲƯǓǕǗǙǛȔȖɄṲṴṶṸṺỤỦỨỪỬỮỰⓊＵ",
    "u": "ùúûüũūŭůűųưǔǖǘǚǜȕȗʉṳṵṷṹṻụủứừửữựⓤｕ",
    "V": "ƲɅṼṾⓋꝞＶ",
    "v": "ʋʌṽṿⓥꝟｖ",
    "VY": "Ꝡ",
    "vy": "ꝡ",
    "W": "ŴẀẂẄẆẈⓌⱲＷ",
    "w": "ŵẁẃẅẇẉẘⓦⱳｗ",
    "X": "ẊẌⓍＸ",
    "x": "ẋẍⓧｘ",
    "Y": "ÝŶŸƳȲɎẎỲỴỶỸỾⓎＹ",
    "y": "ýÿŷƴȳɏẏẙỳỵỷỹỿⓨｙ",
    "Z": "ŹŻŽƵȤẐẒẔⓏⱫⱿꝢＺ",
    "z": "źżžƶȥɀẑẓẕⓩⱬꝣｚ",
}

#: The code point ranges kimun drops outright (combining diacritical marks).
COMBINING_RANGES: tuple[tuple[int, int], ...] = (
    (0x0300, 0x036F),
    (0x1AB0, 0x1AFF),
    (0x1DC0, 0x1DFF),
)

#: ``str.translate`` table: code point -> replacement (``None`` drops it).
FOLD_TABLE: dict[int, str | None] = {ord(ch): out for out, chars in _ARMS.items() for ch in chars}
for _low, _high in COMBINING_RANGES:
    FOLD_TABLE.update(dict.fromkeys(range(_low, _high + 1)))

_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}
#: Finds a character the table changes (ASCII never changes).
_FOLDABLE = re.compile("[" + re.escape("".join(sorted(map(chr, FOLD_TABLE)))) + "]")


def fold(text: str) -> str:
    """Fold diacritics exactly as kimun's ``remove_diacritics`` does.

    >>> fold("čďêƒíó")
    'cdefio'
    >>> fold("Ǆemal ꜳ")
    'DZemal aa'
    """
    if text.isascii() or not _FOLDABLE.search(text):
        return text
    return text.translate(FOLD_TABLE)


def ascii_lower(text: str) -> str:
    """Lowercase ASCII letters only, as Rust's ``to_ascii_lowercase``.

    >>> ascii_lower("ÉCOLE École")
    'École École'
    """
    return text.translate(_ASCII_LOWER)


def fold_ascii_lower(text: str) -> str:
    """The key kimun's heading comparison uses: folded, then ASCII-lowercased.

    >>> fold_ascii_lower("Café Ñandú")
    'cafe nandu'
    """
    return text.translate(FOLD_TABLE).translate(_ASCII_LOWER)


def eq_ignore_ascii_case(a: str, b: str) -> bool:
    """Rust's ``str::eq_ignore_ascii_case``: only ``A-Z``/``a-z`` fold.

    >>> eq_ignore_ascii_case("Notes", "NOTES"), eq_ignore_ascii_case("é", "É")
    (True, False)
    """
    return len(a) == len(b) and a.translate(_ASCII_LOWER) == b.translate(_ASCII_LOWER)
