"""Known-item questions made from a vault's own sections, with no LLM and no judgments.

Known-item evaluation scores a retriever by where it ranks the one item a
searcher knows is there (Azzopardi, de Rijke and Balog, *Building simulated
queries for known-item topics*, SIGIR 2007). A vault with no judgments still
has known items: each heading section was written to be found, and a question
made from it has one known answer, the section itself. :func:`known_items`
makes such questions, of three kinds (:data:`KINDS`):

- ``heading``: the section's heading path, as the tables show it
  (``Pinned commands › Pin a command``);
- ``sentence``: one sentence of the section's body, of at least ``min_words``
  words (cut at ``max_words``), chosen with the seed; lines of code blocks and
  tables, callout titles, HTML and comment lines are skipped
  (:func:`body_sentences`);
- ``title``: the note's title, its file name (kimun's and Obsidian's title of a
  note); its known answer is the note's first section with a body.

A question more than one section could claim (a heading path, a sentence or a
title found in two places) is not made: it has no single known answer. Notes
are cut by kimun's chunker (:func:`askkit.vault.chunk_note`), into the sections
every askkit retriever ranks; the frontmatter and sections of fewer than
``min_words`` words are never sources. With ``sections=n`` the questions come
from a seeded sample of ``n`` sections spread over the vault's folders (dated
journal entries count as one folder of their own, wherever they are) and
notes: every folder's first note before any folder's second, every note's
first section before any note's second.

The questions are a frame (:data:`QUERY_COLUMNS`) that
:func:`askkit.metrics.read_queries` reads, their answers a qrels frame (grade 1
for the source section, named as :func:`askkit.metrics.evaluate` names
sections) that it scores at section level; :meth:`KnownItems.write` writes both
as files the same readers read back. They are not human judgments: each
question has one answer known, so a retriever that ranks another good section
first is counted wrong.

:func:`example_question` picks one question for a notebook: the user's, when
there are any, else a derived one; :func:`question_set` gives the questions and
judgments a notebook evaluates on, the user's or derived ones, and says which.
"""

from __future__ import annotations

import csv
import io
import os
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

from askkit._atomic import atomic_write_text
from askkit.errors import VaultError
from askkit.frame.schema import STRING
from askkit.metrics.qrels import QRELS_COLUMNS, PathOrFrame, read_qrels, write_qrels
from askkit.metrics.queries import Queries, read_queries
from askkit.sources import HEADING_JOINER, innermost_heading
from askkit.vault import DEFAULT_KIMUN, KimunVersion, Section, Vault, chunk_note

__all__ = [
    "KINDS",
    "QUERY_COLUMNS",
    "Example",
    "Kind",
    "KnownItemSettings",
    "KnownItems",
    "QuestionSet",
    "body_sentences",
    "example_question",
    "known_items",
    "question_set",
]

Kind = Literal["heading", "sentence", "title"]
#: The kinds of question :func:`known_items` makes, in the order it makes them.
KINDS: tuple[Kind, ...] = ("heading", "sentence", "title")
#: The queries frame: the id, the question, its kind, and the section it came from.
QUERY_COLUMNS = ("query_id", "question", "kind", "path", "heading")

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_LIST_MARK = re.compile(r"^(?:[*+-]|\d{1,9}[.)])\s+(?:\[.\]\s+)?")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_LETTER = re.compile(r"[^\W\d_]")
#: Lines that are not prose: a table row, a callout's title, HTML, an Obsidian comment.
_NOT_PROSE = ("|", "[!", "<", "%%")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@dataclass(frozen=True, slots=True)
class KnownItemSettings:
    """How :func:`known_items` makes questions; one frozen object, passed whole.

    Parameters
    ----------
    kinds:
        The kinds of question to make (:data:`KINDS`).
    sections:
        How many sections to sample, spread over folders and notes; ``None``
        (default) makes questions from every section.
    min_words:
        The fewest words a source section holds, and a sentence question too.
    max_words:
        A longer sentence is cut to its first ``max_words`` words.
    seed:
        Seeds the sample and the choice of sentence.
    kimun:
        The kimun version whose chunker cuts the notes.
    """

    kinds: tuple[Kind, ...] = KINDS
    sections: int | None = None
    min_words: int = 8
    max_words: int = 32
    seed: int = 0
    kimun: KimunVersion = DEFAULT_KIMUN

    def __post_init__(self) -> None:
        unknown = [k for k in self.kinds if k not in KINDS]
        if not self.kinds or unknown:
            raise ValueError(f"kinds must be some of {KINDS}, got {self.kinds!r}")
        if self.sections is not None and self.sections < 1:
            raise ValueError(f"sections must be >= 1 or None, got {self.sections}")
        if not 1 <= self.min_words <= self.max_words:
            raise ValueError(
                f"need 1 <= min_words <= max_words, got {self.min_words} and {self.max_words}"
            )


def _words(text: str) -> int:
    """How many of ``text``'s whitespace-separated tokens hold a letter."""
    return sum(1 for token in text.split() if _LETTER.search(token))


def _closes(line: str, fence: str) -> bool:
    stripped = line.strip()
    return len(stripped) >= len(fence) and stripped == fence[0] * len(stripped)


def body_sentences(text: str, *, min_words: int = 1) -> list[str]:
    """The sentences of a section's text, as kimun sends it, outside code and tables.

    Lines inside a code fence, table rows, callout titles (``[!tip]``), HTML
    and comment lines are skipped; a list item's marker is dropped. A sentence
    ends at ``.``, ``!`` or ``?`` before whitespace, or at the end of its line;
    its whitespace is collapsed. Kept: sentences of at least ``min_words``
    words (tokens holding a letter) whose tokens are words at least half the
    time, and that do not end with ``:`` (a line that announces a list or a
    block says little of its own).

    >>> body_sentences("Feed it daily. Keep it warm!\\n```sh\\nrm -rf x. y\\n```\\n| a | b |")
    ['Feed it daily.', 'Keep it warm!']
    >>> body_sentences("* Press `Enter` to run it.\\n[!tip] Tip", min_words=3)
    ['Press `Enter` to run it.']
    """
    sentences: list[str] = []
    fence: str | None = None
    for line in text.splitlines():
        if fence is not None:
            if _closes(line, fence):
                fence = None
            continue
        opened = _FENCE.match(line)
        if opened:
            fence = opened.group(1)
            continue
        stripped = line.strip()
        if not stripped or stripped.startswith(_NOT_PROSE):
            continue
        for part in _SENTENCE_END.split(_LIST_MARK.sub("", stripped)):
            tokens = part.split()
            words = _words(part)
            if tokens and words >= min_words and 2 * words >= len(tokens) and part[-1] != ":":
                sentences.append(" ".join(tokens))
    return sentences


@dataclass(frozen=True, slots=True)
class _Source:
    """One section that may be a known item: a body of ``min_words`` words or more."""

    path: str
    heading: str
    path_text: str
    sentences: tuple[str, ...]


@dataclass(slots=True)
class _Note:
    path: str
    title: str
    stratum: str
    lead: tuple[str, str] | None
    sources: list[_Source] = field(default_factory=list)


def _read_notes(vault: Vault, settings: KnownItemSettings) -> list[_Note]:
    notes = []
    for path in vault.notes():
        note = vault.note(path)
        printed = str(path)
        folder = printed.split("/", 1)[0] if "/" in printed else "."
        stratum = "(journal)" if note.date is not None else folder
        sections = [s for s in chunk_note(note.text, kimun=settings.kimun) if not s.is_frontmatter]
        lead = next((s for s in sections if _words(s.text) > 0), None)
        title = note.file.stem  # the file's name as on disk, as Obsidian shows it
        item = _Note(printed, title, stratum, None if lead is None else (printed, _heading(lead)))
        item.sources = [
            _Source(
                printed,
                _heading(s),
                HEADING_JOINER.join(part for part in s.breadcrumb if part),
                tuple(
                    " ".join(sentence.split()[: settings.max_words])
                    for sentence in body_sentences(s.text, min_words=settings.min_words)
                ),
            )
            for s in sections
            if _words(s.text) >= settings.min_words
        ]
        notes.append(item)
    return notes


def _heading(section: Section) -> str:
    """The heading a judgment names the section by (the innermost of its wire title)."""
    return innermost_heading(section.title)


def _spread(notes: list[_Note], seed: int) -> list[tuple[_Note, _Source]]:
    """Every source, ordered to spread a prefix over folders and notes (see the module)."""
    rng = np.random.default_rng(seed)
    strata: dict[str, list[_Note]] = defaultdict(list)
    for note in notes:
        if note.sources:
            strata[note.stratum].append(note)
    names = sorted(strata)
    rng.shuffle(names)
    keyed: list[tuple[tuple[int, int, int], _Note, _Source]] = []
    for folder_rank, name in enumerate(names):
        members = list(strata[name])
        rng.shuffle(members)
        for note_rank, note in enumerate(members):
            sources = list(note.sources)
            rng.shuffle(sources)
            keyed.extend(
                ((section_rank, note_rank, folder_rank), note, source)
                for section_rank, source in enumerate(sources)
            )
    keyed.sort(key=lambda item: item[0])
    return [(note, source) for _, note, source in keyed]


def _claims(notes: list[_Note]) -> dict[str, dict[str, set[object]]]:
    """For each kind, each question text (casefolded) -> the answers that could claim it."""
    claims: dict[str, dict[str, set[object]]] = {k: defaultdict(set) for k in KINDS}
    for note in notes:
        claims["title"][note.title.casefold()].add(note.path)
        for source in note.sources:
            answer = (source.path, source.heading)
            if source.path_text:
                claims["heading"][source.path_text.casefold()].add(answer)
            for sentence in source.sentences:
                claims["sentence"][sentence.casefold()].add(answer)
    return claims


@dataclass(frozen=True, slots=True, eq=False)
class KnownItems:
    """Questions made from a vault's sections (:func:`known_items`) and their known answers.

    Attributes
    ----------
    queries:
        One row per question: :data:`QUERY_COLUMNS`, ``path`` and ``heading``
        naming the section it came from.
    qrels:
        Its known answer, grade 1: the qrels frame (``query_id``, ``path``,
        ``heading``, ``grade``).
    eligible:
        How many sections of the vault could be sources.
    sampled:
        How many of them the questions were made from.
    """

    queries: pd.DataFrame
    qrels: pd.DataFrame
    eligible: int
    sampled: int

    def __len__(self) -> int:
        return len(self.queries)

    def __repr__(self) -> str:
        return f"<KnownItems: {self.describe()}>"

    def kinds(self) -> dict[str, int]:
        """How many questions of each kind, in :data:`KINDS` order."""
        counts = self.queries["kind"].value_counts()
        return {k: int(counts.get(k, 0)) for k in KINDS if k in counts.index}

    def describe(self) -> str:
        """One sentence: how many questions, of which kinds, from how much of the vault.

        >>> items = KnownItems(pd.DataFrame({"query_id": ["a"], "question": ["Bread"],
        ...     "kind": ["title"], "path": ["x/bread.md"], "heading": ["Bread"]}),
        ...     pd.DataFrame(), eligible=4, sampled=1)
        >>> print(items.describe())
        1 question (1 title) made from 1 of the vault's 4 sections with a body, in 1 note of 1 folder
        """  # noqa: E501 - a doctest's output is one line
        n = len(self.queries)
        kinds = ", ".join(f"{count} {kind}" for kind, count in self.kinds().items())
        paths = self.queries["path"].astype(str)
        notes = paths.nunique()
        folders = paths.str.rsplit("/", n=1).str[0].where(paths.str.contains("/"), ".").nunique()
        return (
            f"{n} question{'s' * (n != 1)} ({kinds}) made from {self.sampled} of the vault's "
            f"{self.eligible} sections with a body, in {notes} note{'s' * (notes != 1)} of "
            f"{folders} folder{'s' * (folders != 1)}"
        )

    def write(self, queries: str | os.PathLike[str], qrels: str | os.PathLike[str]) -> None:
        """Write the questions as a queries TSV and the answers as a qrels TSV, atomically.

        :func:`askkit.metrics.read_queries` and :func:`askkit.metrics.read_qrels`
        read them back; the queries file keeps every column of :attr:`queries`.
        """
        buffer = io.StringIO()
        self.queries.to_csv(buffer, sep="\t", index=False, quoting=csv.QUOTE_NONE)
        atomic_write_text(queries, buffer.getvalue())
        write_qrels(self.qrels, qrels)


def _question(text: str) -> str:
    """One line, its whitespace collapsed: a TSV field read back as it was written."""
    return " ".join(text.split())


def known_items(
    vault: Vault | str | os.PathLike[str], settings: KnownItemSettings | None = None
) -> KnownItems:
    """Known-item questions made from ``vault``'s own sections (see the module).

    Each sampled section gives a question of each kind in ``settings.kinds``
    that it can give without ambiguity; a note gives one ``title`` question,
    with its first sampled section. Query ids read ``k001-heading``: the
    sampled section's number, then the kind.

    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / "bread.md").write_text(
    ...     "# Bread\\n## Starter\\nFeed the starter twice a day at room temperature.\\n")
    >>> items = known_items(root, KnownItemSettings(min_words=3))
    >>> items.queries[["query_id", "question", "kind"]].values.tolist()
    [['k1-heading', 'Bread › Starter', 'heading'], ['k1-sentence', 'Feed the starter twice a day at room temperature.', 'sentence'], ['k1-title', 'bread', 'title']]
    >>> items.qrels.values.tolist()[0]
    ['k1-heading', 'bread.md', 'Starter', 1]
    """  # noqa: E501 - a doctest's output is one line
    settings = settings or KnownItemSettings()
    vault = vault if isinstance(vault, Vault) else Vault(vault)
    notes = _read_notes(vault, settings)
    claims = _claims(notes)
    order = _spread(notes, settings.seed)
    sampled = order if settings.sections is None else order[: settings.sections]
    rng = np.random.default_rng(settings.seed)
    width = len(str(len(sampled)))
    rows: list[tuple[str, str, str, str, str]] = []
    titled: set[str] = set()
    made_texts: set[str] = set()
    for number, (note, source) in enumerate(sampled, start=1):
        prefix = f"k{number:0{width}d}"
        for kind in settings.kinds:
            made = _make(kind, note, source, claims, rng=rng, titled=titled)
            if made is None or _question(made[0]).casefold() in made_texts:
                continue  # a title that reads as a heading already asked is asked once
            text, path, heading = made
            made_texts.add(_question(text).casefold())
            rows.append((f"{prefix}-{kind}", _question(text), kind, path, heading))
    columns = list(zip(*rows, strict=True)) if rows else [(), (), (), (), ()]
    queries = pd.DataFrame(
        {
            name: pd.array(list(values), dtype=STRING)
            for name, values in zip(QUERY_COLUMNS, columns, strict=True)
        }
    )
    qrels = pd.DataFrame(
        {
            "query_id": queries["query_id"],
            "path": queries["path"],
            "heading": queries["heading"],
            "grade": pd.array([1] * len(queries), dtype=QRELS_COLUMNS["grade"]),
        }
    )
    return KnownItems(queries, read_qrels(qrels), sum(len(n.sources) for n in notes), len(sampled))


def _make(
    kind: Kind,
    note: _Note,
    source: _Source,
    claims: dict[str, dict[str, set[object]]],
    *,
    rng: np.random.Generator,
    titled: set[str],
) -> tuple[str, str, str] | None:
    """One question of ``kind`` from ``source``: (text, path, heading), or None."""
    if kind == "heading":
        text = source.path_text
        if text and len(claims["heading"][text.casefold()]) == 1:
            return text, source.path, source.heading
        return None
    if kind == "sentence":
        unique = [s for s in source.sentences if len(claims["sentence"][s.casefold()]) == 1]
        if not unique:
            return None
        return unique[int(rng.integers(len(unique)))], source.path, source.heading
    if note.path in titled or note.lead is None or len(claims["title"][note.title.casefold()]) > 1:
        return None
    titled.add(note.path)
    return note.title, *note.lead


# -- one example, and a question set -------------------------------------------------------

Origin = Literal["judged", "questions", "derived"]


@dataclass(frozen=True, slots=True)
class Example:
    """One question a notebook starts from, and the answer known for it, if any.

    ``origin``: ``"judged"`` (the user's question, its best-graded judgment
    the answer), ``"questions"`` (the user's question, no judgments) or
    ``"derived"`` (made from the vault's sections, its source the answer).
    """

    question: str
    query_id: str
    origin: Origin
    kind: str | None = None
    path: str | None = None
    heading: str | None = None
    grade: int | None = None

    @property
    def answer(self) -> tuple[str, str] | None:
        """``(path, heading)`` of the known answer, or None."""
        if self.path is None:
            return None
        return self.path, self.heading or ""

    def describe(self) -> str:
        """Where the question came from and what its known answer is, in one sentence."""
        where = f"{self.path} › {self.heading}" if self.heading else str(self.path)
        if self.origin == "judged":
            return (
                f"{self.query_id} of your questions; its best-graded judgment "
                f"(grade {self.grade}) is {where}"
            )
        if self.origin == "questions":
            return f"{self.query_id} of your questions, which have no judgments: no answer known"
        made = {
            "heading": "the heading path of one of its sections",
            "sentence": "a sentence of one of its sections",
            "title": "the title of one of its notes",
        }.get(str(self.kind), str(self.kind))
        return (
            f"made from the vault's own notes ({made}, {self.query_id}); "
            f"its known answer is the section it came from, {where}"
        )


def _from_questions(queries: Queries, qrels: PathOrFrame | None) -> Example:
    by_id = read_queries(queries)
    if not by_id:
        raise ValueError("the queries hold no question")
    if qrels is None:
        first = next(iter(by_id))
        return Example(by_id[first], first, "questions")
    judged = read_qrels(qrels)
    judged = judged[judged["query_id"].isin(list(by_id)) & (judged["grade"] > 0)]
    if judged.empty:
        first = next(iter(by_id))
        return Example(by_id[first], first, "questions")
    order = {qid: i for i, qid in enumerate(by_id)}
    ranked = judged.assign(
        _order=judged["query_id"].map(order), _row=range(len(judged))
    ).sort_values(["grade", "_order", "_row"], ascending=[False, True, True], kind="stable")
    best = ranked.iloc[0]
    qid = str(best["query_id"])
    heading = best["heading"]
    return Example(
        by_id[qid],
        qid,
        "judged",
        path=str(best["path"]),
        heading="" if pd.isna(heading) else str(heading),
        grade=int(best["grade"]),
    )


def example_question(
    vault: Vault | str | os.PathLike[str],
    *,
    queries: Queries | None = None,
    qrels: PathOrFrame | None = None,
    settings: KnownItemSettings | None = None,
) -> Example:
    """One good question for a notebook to start from, and its known answer.

    With ``queries`` (the user's questions): the first question whose best
    judgment in ``qrels`` has the highest grade of all, that judgment its
    answer; without judgments, the first question, no answer known. Without
    ``queries``: a question :func:`known_items` makes from the vault, the
    first in its spread order that is a heading path of three words or more
    (not a date), else the first heading path, else the first question of any
    kind; its source section is its answer.

    Raises :class:`~askkit.VaultError` when the vault has no section long
    enough to make a question from.
    """
    if queries is not None:
        return _from_questions(queries, qrels)
    settings = settings or KnownItemSettings()
    items = known_items(vault, settings).queries
    if items.empty:
        raise VaultError(
            f"no section of the vault has {settings.min_words} words or more to make a "
            "question from: type a question instead"
        )
    heading = items[items["kind"] == "heading"]
    words = heading["question"].astype(str).map(_words)
    dated = heading["heading"].astype(str).str.fullmatch(_DATE.pattern)
    good = heading[(words >= 3) & ~dated]
    row = (good if len(good) else heading if len(heading) else items).iloc[0]
    return Example(
        str(row["question"]),
        str(row["query_id"]),
        "derived",
        kind=str(row["kind"]),
        path=str(row["path"]),
        heading=str(row["heading"]),
        grade=1,
    )


@dataclass(frozen=True, slots=True, eq=False)
class QuestionSet:
    """The questions and judgments a notebook evaluates on, and where they came from.

    ``queries`` has ``query_id`` and ``question`` (derived questions also
    ``kind``, ``path`` and ``heading``); ``qrels`` is a qrels frame; ``derived``
    tells known items made from the vault (:func:`known_items`) from the
    user's own; :meth:`describe` says which in one sentence.
    """

    queries: pd.DataFrame
    qrels: pd.DataFrame
    derived: bool
    what: str

    def describe(self) -> str:
        """What these questions and judgments are, in one sentence."""
        return self.what


def question_set(
    vault: Vault | str | os.PathLike[str],
    *,
    queries: str | os.PathLike[str] | None = None,
    qrels: str | os.PathLike[str] | None = None,
    settings: KnownItemSettings | None = None,
) -> QuestionSet:
    """The user's questions and judgments when both are given, else known items.

    Derived questions (:func:`known_items` with ``settings``) are said to be
    what they are: made from the vault's own sections, each with one known
    answer, not human judgments.
    """
    if queries is not None and qrels is not None:
        by_id = read_queries(queries)
        frame = pd.DataFrame(
            {
                "query_id": pd.array(list(by_id), dtype=STRING),
                "question": pd.array(list(by_id.values()), dtype=STRING),
            }
        )
        judged = read_qrels(qrels)
        what = (
            f"your {len(frame)} questions ({os.fspath(queries)}) and their "
            f"{len(judged)} judgments ({os.fspath(qrels)})"
        )
        return QuestionSet(frame, judged, False, what)
    items = known_items(vault, settings)
    missing = (
        "your questions have no judgments, so: "
        if queries is not None
        else "this vault has no judgments, so: "
    )
    what = (
        f"{missing}{items.describe()}; each question has one known answer, the section "
        "it was made from (known-item questions, not human judgments)"
    )
    return QuestionSet(items.queries, items.qrels, True, what)
