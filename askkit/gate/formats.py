"""The regression gate's result as text, Markdown, JUnit XML, JSON and HTML.

Each function renders a :class:`askkit.gate.GateResult` (its methods of the
same names call them): :func:`to_text` for a terminal and a log,
:func:`to_markdown` for a pull-request comment (escaped), :func:`to_junit`
for a CI's test report, :func:`to_dict` and :func:`to_json` as data
(:func:`read_json` checks it back for :meth:`askkit.gate.GateResult.from_json`)
and :func:`to_html` for a notebook (escaped).

Examples
--------
>>> import pandas as pd
>>> from askkit.gate import gate
>>> run = pd.DataFrame({"turn_id": ["q1", "q2"], "path": ["a", "c"], "score": [1.0, 1.0]})
>>> qrels = pd.DataFrame({"query_id": ["q1", "q2"], "path": ["a", "c"], "grade": [1, 1]})
>>> print(to_text(gate(run, run, qrels, ["mrr"])).splitlines()[0])
PASS: no measure dropped significantly by at least 0 (Holm-corrected p < 0.05, 2 queries)
>>> read_json(to_json(gate(run, run, qrels, ["mrr"])))["exit_status"]
0
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING, Any

from askkit._outputs import JSON_FORMAT, MARKDOWN_MARK
from askkit.errors import SchemaError
from askkit.gate.stats import POWER

if TYPE_CHECKING:
    from askkit.gate.result import GateResult, LostDocument

__all__ = [
    "FORMAT_MARK",
    "float_fields",
    "read_json",
    "to_dict",
    "to_html",
    "to_json",
    "to_junit",
    "to_markdown",
    "to_text",
]

#: What marks the gate's JSON, Markdown and JUnit output as its own, at a fixed place at
#: the start of each (:mod:`askkit._outputs`): the JSON's first key ``format``, the
#: Markdown's first line ``<!-- askkit diff -->``, the JUnit root's first attribute ``name``.
FORMAT_MARK = JSON_FORMAT

_HEADER = (
    "measure",
    "base",
    "new",
    "delta",
    "CI",
    "p (Holm)",
    "W/T/L",
    "min. detectable drop",
    "unjudged",
    "",
)
#: What each --unjudged mode makes the exit status rest on.
_MODES = {
    "ignore": "unjudged documents counted as not relevant, as trec_eval does",
    "condensed": "the condensed lists (unjudged documents taken out of each ranking)",
    "bounds": "drops that hold even with every unjudged document of NEW relevant and of "
    "BASE not relevant",
}


def to_dict(result: GateResult) -> dict[str, Any]:
    """Plain data (what :func:`to_json` writes): ``format`` first, askkit's mark."""
    data = {"format": FORMAT_MARK, **dataclasses.asdict(dataclasses.replace(result, holes=()))}
    data["holes"] = [dataclasses.asdict(h) for h in result.holes]  # made when first read
    data["passed"] = result.passed
    data["exit_status"] = result.exit_status
    return data


def _finite(value: Any) -> Any:
    """``value`` with each NaN or infinite float as ``None`` (JSON has no NaN)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


#: A lone high surrogate followed by a lone low one: JSON writes the pair as it writes one
#: astral character (``\ud800\udfff``), and reads it back as that character.
_JOINED_SURROGATES = re.compile("[\ud800-\udbff][\udc00-\udfff]")


def _check_joinable(value: Any, where: str) -> None:
    """Refuse a text JSON could not give back: two lone surrogates that read back as one
    character (no file holds them: they are not text UTF-8 can write)."""
    if isinstance(value, str):
        if _JOINED_SURROGATES.search(value):
            raise SchemaError(
                "holds a lone high surrogate followed by a lone low one, which JSON reads "
                "back as one other character; such a value is not text a file can hold",
                field=where,
                value=value.encode("ascii", "backslashreplace").decode("ascii"),
            )
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_joinable(key, where)
            _check_joinable(item, f"{where}.{key}" if where else str(key))
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            _check_joinable(item, f"{where}[{i}]")


def to_json(result: GateResult, indent: int | None = 2) -> str:
    """The result as strict JSON (a value with no number, such as the interval of a single
    query, is ``null``); :meth:`askkit.gate.GateResult.from_json` reads it back exactly.

    Raises :class:`SchemaError` naming the field when a text holds two lone surrogates
    JSON would read back as one character."""
    data = _finite(to_dict(result))
    _check_joinable(data, "")
    return json.dumps(data, indent=indent, allow_nan=False) + "\n"


def float_fields(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` for the dataclass ``cls`` with ``null`` read back as NaN in its float fields."""
    if not isinstance(data, dict):
        return data  # refused by the dataclass, as any other wrong shape
    floats = {f.name for f in dataclasses.fields(cls) if f.type == "float"}
    return {k: (math.nan if v is None and k in floats else v) for k, v in data.items()}


def read_json(text: str) -> dict[str, Any]:
    """The data of a gate result's JSON, checked to be one (:class:`SchemaError` if not:
    empty text is said to be empty, not a JSON syntax error)."""
    if not text.strip():
        raise SchemaError(
            "empty: expected the JSON askkit diff --json writes", field="json", value=text
        )
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise SchemaError("not JSON", field="json", value=str(exc)) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT_MARK:
        raise SchemaError(
            "not an askkit diff result (no format: 'askkit diff')",
            field="format",
            value=data.get("format") if isinstance(data, dict) else type(data).__name__,
        )
    return data


def _measure_rows(result: GateResult) -> list[list[str]]:
    rows = []
    failing = {m.measure for m in result.regressions}
    for m in result.measures:
        flag = "REGRESSED" if m.measure in failing else ("improved" if m.improved else "")
        robust = "" if m.holds is None else "holds" if m.holds else f"depends ({m.depends_on})"
        rows.append(
            [
                m.measure,
                _num(m.base),
                _num(m.new),
                f"{m.delta:+.4f}",
                f"[{m.ci_low:+.4f}, {m.ci_high:+.4f}]",
                _p(m.p_holm),
                f"{m.wins}/{m.ties}/{m.losses}",
                _num(m.mde),
                robust,
                flag,
            ]
        )
    return rows


def _lines_about(result: GateResult) -> list[str]:
    pct = f"{1 - result.alpha:.0%}"
    name = result.test.replace("-test", "")
    return [
        f"{result.queries} queries scored at {result.level} level, paired {name} test"
        + (
            f" ({result.resamples} resamples, seed {result.seed})"
            if result.test != "t-test"
            else ""
        )
        + f", alpha {result.alpha:g}, min delta {result.min_delta:g}; "
        f"CI: {pct} interval of the mean delta; p-values Holm-corrected across measures; "
        f"min. detectable drop: at {POWER:.0%} power and alpha/{len(result.measures)}",
        f"exit status rests on {_MODES.get(result.unjudged, result.unjudged)} "
        f"(--unjudged {result.unjudged}); 'unjudged': whether each verdict holds whatever "
        f"the unjudged documents are (each not relevant, or relevant at grade "
        f"{result.fill_grade}), else on how many it depends",
    ]


def _unjudged_lines(result: GateResult, max_holes: int = 10) -> list[str]:
    """Per measure whose verdict could change: the extreme deltas and the unjudged
    documents it depends on (the first ``max_holes``; all of them in JSON and --holes)."""
    out = []
    for m in result.measures:
        if m.holds is not False:
            continue
        out.append(
            f"{m.measure}: the verdict depends on {m.depends_on} unjudged documents in the "
            f"top {result.k} of these queries: the delta could be {m.worst_delta:+.4f} to "
            f"{m.best_delta:+.4f} once they are judged; judge them next (--holes FILE)"
        )
        mine = [h for h in result.holes if m.measure in h.measures.split(", ")]
        out += [f"  - {h.query_id}: {h.doc} ({h.side} rank {h.rank})" for h in mine[:max_holes]]
        if len(mine) > max_holes:
            out.append(f"  - ... and {len(mine) - max_holes} more")
    return out


def _side_lines(result: GateResult) -> list[str]:
    out = []
    for s in (result.base, result.new):
        prov = ", ".join(f"{k} {v}" for k, v in s.provenance.items())
        out.append(
            f"{s.name}: {s.queries} judged queries answered, {s.lacks} lacking, "
            f"{s.unjudged_queries} unjudged; judged share of top {result.k}: "
            f"{s.judged_share:.1%}; {prov}"
        )
    return out


def _lost_text(d: LostDocument) -> str:
    where = "not retrieved" if d.new_rank is None else f"rank {d.new_rank}"
    text = f"{d.doc} (grade {d.grade}): rank {d.base_rank} -> {where}"
    if d.stage != "top k":
        text += f"; lost at the {d.stage}"
    if d.detail:
        text += f": {d.detail}"
    return text


def to_text(result: GateResult, max_queries: int = 20) -> str:
    """The plain-text report (``askkit diff``'s default output)."""
    lines = [result.verdict, *_lines_about(result), ""]
    rows = [list(_HEADER), *_measure_rows(result)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(_HEADER))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines += ["", *_side_lines(result)]
    unjudged = _unjudged_lines(result)
    if unjudged:
        lines += ["", *unjudged]
    lines += [f"problem: {p}" for p in result.problems]
    lines += [f"note: {n}" for n in result.notes]
    if result.regressed_queries:
        shown = result.regressed_queries[:max_queries]
        lines += ["", f"regressed queries ({len(result.regressed_queries)}, worst first):"]
        for q in shown:
            deltas = ", ".join(f"{k} {v:+.4f}" for k, v in q.deltas.items())
            lines.append(f"  {q.query_id}: {deltas}")
            lines += [f"    left the top {result.k}: {_lost_text(d)}" for d in q.lost]
        if len(result.regressed_queries) > len(shown):
            lines.append(f"  ... and {len(result.regressed_queries) - len(shown)} more")
    # an id's own line break never starts a line of its own (a forged "PASS" in a CI log)
    return "\n".join(_LINE_BOUNDARY.sub(" ", line) for line in lines) + "\n"


def to_html(result: GateResult) -> str:
    """The verdict, the measures' table and the sides, as escaped HTML (a notebook's view)."""
    from askkit import _html

    lines = "".join(
        f"<li>{_html.esc(line)}</li>"
        for line in [
            *_side_lines(result),
            *_unjudged_lines(result),
            *result.problems,
            *result.notes,
        ]
    )
    return _html.fragment(
        _html.message(result.verdict, tone="plain" if result.passed else "error")
        + _html.data_table(result.to_frame(), digits=4)
        + f"<ul>{lines}</ul>"
    )


def to_markdown(result: GateResult, max_queries: int = 20) -> str:
    """The report as GitHub Markdown, for a pull-request comment (text escaped)."""
    icon = "✅" if result.passed else "❌"
    lines = [MARKDOWN_MARK, f"### {icon} {_md(result.verdict)}", ""]
    lines += [_md(line) for line in _lines_about(result)]
    lines += ["", "| " + " | ".join(_HEADER[:-1]) + " | |"]
    lines.append("|" + " --- |" * len(_HEADER))
    for row in _measure_rows(result):
        row[-1] = f"**{row[-1]}**" if row[-1] else ""
        lines.append("| " + " | ".join(_md(c) if "*" not in c else c for c in row) + " |")
    lines.append("")
    lines += [f"- {_md(line)}" for line in _side_lines(result)]
    lines += [f"- {_md(line.strip())}" for line in _unjudged_lines(result)]
    lines += [f"- **problem**: {_md(p)}" for p in result.problems]
    lines += [f"- note: {_md(n)}" for n in result.notes]
    if result.regressed_queries:
        shown = result.regressed_queries[:max_queries]
        lines += [
            "",
            f"<details><summary>{len(result.regressed_queries)} regressed queries</summary>",
            "",
            "| query | deltas | relevant documents that left the top k |",
            "| --- | --- | --- |",
        ]
        for q in shown:
            deltas = ", ".join(f"{k} {v:+.4f}" for k, v in q.deltas.items())
            lost = "<br>".join(_md(_lost_text(d)) for d in q.lost) or "-"
            lines.append(f"| {_md(q.query_id)} | {_md(deltas)} | {lost} |")
        if len(result.regressed_queries) > len(shown):
            lines.append(f"\n... and {len(result.regressed_queries) - len(shown)} more")
        lines += ["", "</details>"]
    return "\n".join(lines) + "\n"


def to_junit(result: GateResult) -> str:
    """JUnit XML: one test case per measure (a regression is a ``<failure>``), plus checks."""
    failures = len(result.regressions) + len(result.problems)
    tests = len(result.measures) + (1 if result.max_unjudged is not None else 0)
    suites = ET.Element(
        "testsuites", name=FORMAT_MARK, tests=str(tests), failures=str(failures), errors="0"
    )
    suite = ET.SubElement(
        suites,
        "testsuite",
        name=_xml(f"{FORMAT_MARK}: {result.base.name} -> {result.new.name}"),
        tests=str(tests),
        failures=str(failures),
        errors="0",
        skipped="0",
    )
    props = ET.SubElement(suite, "properties")
    ET.SubElement(props, "property", name="level", value=_xml(result.level))
    for side in (result.base, result.new):
        for key, value in side.provenance.items():
            ET.SubElement(props, "property", name=_xml(f"{side.name}.{key}"), value=_xml(value))
    for m in result.measures:
        case = ET.SubElement(
            suite, "testcase", classname="askkit.diff", name=_xml(m.measure), time="0"
        )
        text = (
            f"{m.measure}: {_num(m.base)} -> {_num(m.new)} (delta {m.delta:+.4f}, "
            f"CI [{m.ci_low:+.4f}, {m.ci_high:+.4f}], p (Holm) {_p(m.p_holm)}, "
            f"W/T/L {m.wins}/{m.ties}/{m.losses}, min. detectable drop {_num(m.mde)})"
        )
        if m in result.regressions:
            failure = ET.SubElement(case, "failure", message=_xml(text), type="regression")
            failure.text = _xml(to_text(result))
        else:
            ET.SubElement(case, "system-out").text = _xml(text)
    if result.max_unjudged is not None:
        case = ET.SubElement(
            suite, "testcase", classname="askkit.diff", name="judged share", time="0"
        )
        for p in result.problems:
            ET.SubElement(case, "failure", message=_xml(p), type="unjudged")
    ET.SubElement(suite, "system-out").text = _xml(to_text(result))
    ET.indent(suites)
    # a CR in text would be read back as LF: written as a reference, it is kept (ElementTree
    # writes one in attributes already, and no CR of its own)
    body = ET.tostring(suites, encoding="unicode").replace("\r", "&#13;")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"


def _num(x: float) -> str:
    return "n/a" if not math.isfinite(x) else f"{x:.4f}"


def _p(x: float) -> str:
    return "n/a" if not math.isfinite(x) else (f"{x:.4f}" if x >= 1e-4 else f"{x:.1e}")


#: Every line boundary of :meth:`str.splitlines` (CR, LF, CR LF, VT, FF, FS, GS, RS,
#: NEL, U+2028, U+2029): in Markdown each becomes a space, so no text ends a table row.
_LINE_BOUNDARY = re.compile("\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")
#: What UTF-8 cannot carry: a lone surrogate (an id read with surrogate escapes).
_SURROGATE = re.compile("[\ud800-\udfff]")
#: Every character XML 1.0 does not allow (its ``Char`` production's complement).
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _md(text: str) -> str:
    r"""Text safe in a Markdown table cell and as HTML (GitHub renders both): one line,
    ``|``, backticks and every other character Markdown reads as syntax escaped.

    >>> _md("q1\u2028# INJECTED | `x` <b>")
    'q1 # INJECTED \\| \\`x\\` &lt;b&gt;'
    """
    out = _LINE_BOUNDARY.sub(" ", _SURROGATE.sub("\ufffd", text))
    out = out.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    for ch in "\\|`*_[]~$":
        out = out.replace(ch, "\\" + ch)
    return out


def _xml(text: str) -> str:
    r"""Text XML 1.0 can carry: each character it does not allow (C0 controls but tab, LF
    and CR; lone surrogates; U+FFFE, U+FFFF) becomes U+FFFD.

    >>> _xml("a\x00b\uffffc\ud800") == "a\ufffdb\ufffdc\ufffd"
    True
    """
    return _NOT_XML.sub("\ufffd", text)
