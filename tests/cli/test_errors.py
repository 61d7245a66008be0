"""The command line's contract: any bad input is one line on stderr and exit status 2.

Every subcommand runs, as a user runs it (``askkit`` in its own process),
against a matrix of bad inputs: a missing file, a folder where a file
belongs, a file where a folder belongs, an unreadable file, a FIFO,
``/dev/zero`` and ``/dev/null`` where a file belongs, invalid numbers, NaN
and infinity, a negative count and an unreachable server. The cases run in
parallel threads, each a bounded subprocess (:mod:`tests.cli.bounded`: a
deadline and a memory cap, so a reader that blocks on a FIFO or reads
``/dev/zero`` forever fails its case instead of hanging the test), so the
whole matrix takes seconds.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from askkit.cli import build_parser
from tests.cli.bounded import run_cli
from tests.conftest import DATA

#: What the error line of a special file's case must say it is.
SAYS_WHAT_IT_IS = {"fifo for a file": "pipe", "/dev/zero for a file": "device"}
SAYS_WHAT_IT_IS["/dev/null for a file"] = "device"

#: The kinds of bad input the matrix must cover (each case names one).
KINDS = frozenset(
    {
        "missing file",
        "folder for a file",
        "file for a folder",
        "unreadable file",
        "fifo for a file",
        "/dev/zero for a file",
        "/dev/null for a file",
        "invalid number",
        "nan",
        "inf",
        "negative count",
        "unreachable server",
    }
)


@dataclass(frozen=True, slots=True)
class Case:
    kind: str
    argv: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Inputs:
    """The bad (and the good) inputs the cases are built from."""

    missing: str  # a file that does not exist
    folder: str  # an existing folder
    file: str  # an existing file, plain text
    unreadable: str  # a file that cannot be read (as text, when running as root)
    server: str  # a URL where nothing listens
    out: str  # a writable output file
    fifo: str  # a named pipe nothing writes to: a reader that opens it blocks
    zero: str = "/dev/zero"  # a device that never ends
    null: str = "/dev/null"  # a device that reads as empty
    run: str = str(DATA / "run.jsonl")
    qrels: str = str(DATA / "qrels.tsv")
    queries: str = str(DATA / "queries.tsv")
    payload: str = str(DATA / "answer_job.json")
    vault: str = str(DATA / "vault")


def subcommands() -> set[str]:
    """The subcommands :func:`askkit.cli.build_parser` registers."""
    parser = build_parser()
    found = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert len(found) == 1
    return set(found[0].choices)


def cases(x: Inputs) -> dict[str, list[Case]]:
    """Subcommand -> its bad-input cases (the argv after ``askkit``)."""

    def c(kind: str, *argv: str) -> Case:
        return Case(kind, argv)

    def special(*argv: str) -> list[Case]:
        """A FIFO, /dev/zero and /dev/null in place of the ``FILE`` in ``argv``."""
        return [
            c(kind, *(path if a == "FILE" else a for a in argv))
            for kind, path in (
                ("fifo for a file", x.fifo),
                ("/dev/zero for a file", x.zero),
                ("/dev/null for a file", x.null),
            )
        ]

    report = ("report", x.run, "-o", x.out)
    ask = ("ask", "q?", "--server", x.server, "--vault-id", "notes")
    search_server = ("search", "q", "--server", x.server, "--vault-id", "notes")
    search_vault = ("search", "q", "--vault", x.vault, "--no-cache")
    cut_vault = ("cut", "--qrels", x.qrels, "--vault", x.vault, "--queries", x.queries)
    evaluate = ("eval", x.qrels, x.run)
    gate = ("diff", x.run, x.run, "--qrels", x.qrels)
    gate_vault = ("diff", "--vault", x.vault, "--queries", x.queries, "--qrels", x.qrels)
    why_vault = ("why", "--qrels", x.qrels, "--vault", x.vault, "--queries", x.queries)
    embedder = ("--embedder", f"ollama:{x.server}:nomic-embed-text")
    search_store = ("search", "q", "--store", x.folder, "--vault-id", "notes", *embedder)
    trec = str(Path(x.out).with_name("run.trec"))
    run_vault = ("run", "--vault", x.vault, "--queries", x.queries, "-o", trec)
    collection = ("collection", x.folder, "-o", str(Path(x.out).with_name("vault")))
    return {
        "run": [
            c("missing file", "run", "--vault", x.vault, "--queries", x.missing, "-o", trec),
            c("folder for a file", "run", "--vault", x.vault, "--queries", x.folder, "-o", trec),
            c("unreadable file", "run", "--vault", x.vault, "--queries", x.unreadable, "-o", trec),
            *special("run", "--vault", x.vault, "--queries", "FILE", "-o", trec),
            c("file for a folder", "run", "--vault", x.file, "--queries", x.queries, "-o", trec),
            c("folder for a file", *run_vault, "--settings", x.folder),
            *special(*run_vault, "--settings", "FILE"),
            c("folder for a file", *run_vault[:-1], x.folder),
            c("negative count", *run_vault, "-k", "-1"),
            c("nan", *run_vault, "-k", "nan"),
            c("inf", *run_vault, "-k", "inf"),
            c("invalid number", *run_vault, "--pool-size", "ten"),
            c("unreachable server", *run_vault, *embedder),
        ],
        "collection": [
            c("missing file", "collection", x.missing, "-o", collection[-1]),
            c("file for a folder", "collection", x.file, "-o", collection[-1]),
            c("folder for a file", *collection),  # a folder holding no collection
            c("file for a folder", "collection", x.folder, "-o", x.file),
        ],
        "sources": [
            c("missing file", "sources", x.missing),
            c("folder for a file", "sources", x.folder),
            c("unreadable file", "sources", x.unreadable),
            *special("sources", "FILE"),
        ],
        "prompt": [
            c("missing file", "prompt", x.missing),
            c("folder for a file", "prompt", x.folder),
            c("unreadable file", "prompt", x.unreadable),
            *special("prompt", "FILE"),
        ],
        "index": [
            c("missing file", "index", x.missing),
            c("file for a folder", "index", x.file),
            c("file for a folder", "index", x.vault, "--cache-dir", x.file),
            c("file for a folder", "index", x.vault, *embedder, "--cache-dir", x.file),
            c("unreachable server", "index", x.vault, "--no-cache", *embedder),
            c(
                "unreachable server",
                "index",
                x.vault,
                "--no-cache",
                "--embedder",
                f"openai:{x.server}/v1:text-embedding-3-small",
            ),
        ],
        "search": [
            c("missing file", "search", "q", "--vault", x.missing),
            c("file for a folder", "search", "q", "--vault", x.file),
            c("file for a folder", "search", "q", "--vault", x.vault, "--cache-dir", x.file),
            c("invalid number", *search_vault, "-k", "ten"),
            c("nan", *search_vault, "-k", "nan"),
            c("negative count", *search_vault, "-k", "-1"),
            c("nan", *search_server, "--timeout", "nan"),
            c("inf", *search_server, "--timeout", "inf"),
            c("invalid number", *search_server, "--timeout", "1s"),
            c("unreachable server", *search_server),
            c("missing file", "search", "q", "--store", x.missing, "--vault-id", "v", *embedder),
            c("file for a folder", "search", "q", "--store", x.file, "--vault-id", "v", *embedder),
            c("unreadable file", *search_store[:3], x.unreadable, *search_store[4:]),
            c("folder for a file", *search_store),  # a folder with no embeddings.db
            *special(*search_store[:3], "FILE", *search_store[4:]),
            c("negative count", *search_store, "-k", "-1"),
            c("nan", *search_store, "-k", "nan"),
            c("unreachable server", *search_vault, *embedder),
        ],
        "stores": [
            c("missing file", "stores", x.missing),
            c("file for a folder", "stores", x.file),
            c("folder for a file", "stores", x.folder),
            c("unreadable file", "stores", x.unreadable),
            *special("stores", "FILE"),
        ],
        "ask": [
            c("unreachable server", *ask),
            c("nan", *ask, "--timeout", "nan"),
            c("inf", *ask, "--poll-interval", "inf"),
            c("negative count", *ask, "--max-polls", "-1"),
            c("invalid number", *ask, "--max-polls", "1.5"),
        ],
        "lab": [
            c("missing file", "lab", "--vault", x.missing, "--dry-run"),
            c("file for a folder", "lab", "--vault", x.file, "--dry-run"),
            c("file for a folder", "lab", "--vault", x.vault, "--notebooks", x.file, "--dry-run"),
            c("negative count", "lab", "--port", "-1", "--dry-run"),
            c("nan", "lab", "--port", "nan", "--dry-run"),
            c("invalid number", "lab", "--ip", "999.1.1.1", "--dry-run"),
            c("invalid number", "lab", "--ip", "192.0.2.1", "--dry-run"),  # not this host's
        ],
        "report": [
            c("missing file", "report", x.missing, "-o", x.out),
            c("folder for a file", "report", x.folder, "-o", x.out),
            c("unreadable file", "report", x.unreadable, "-o", x.out),
            c("folder for a file", "report", x.run, "-o", x.folder),
            c("file for a folder", "report", x.run, "-o", str(Path(x.file) / "r.html")),
            c("missing file", *report, "--qrels", x.missing),
            c("folder for a file", *report, "--qrels", x.folder),
            *special("report", "FILE", "-o", x.out),
            *special(*report, "--qrels", "FILE"),
            *special("report", x.run, "-o", "FILE"),
            c("file for a folder", *report, "--vault", x.file),
            c("negative count", *report, "--max-queries", "-1"),
            c("invalid number", *report, "--max-queries", "many"),
            c("nan", *report, "--min-recall", "nan"),
            c("inf", *report, "--min-recall", "inf"),
        ],
        "cut": [
            c("missing file", "cut", x.missing, "--qrels", x.qrels),
            c("unreadable file", "cut", x.unreadable, "--qrels", x.qrels),
            c("folder for a file", "cut", x.run, "--qrels", x.folder),
            c("folder for a file", "cut", x.folder, "--qrels", x.qrels),
            *special("cut", "FILE", "--qrels", x.qrels),
            *special("cut", x.run, "--qrels", "FILE"),
            c("folder for a file", *cut_vault[:-1], x.folder),
            *special(*cut_vault[:-1], "FILE"),
            c(
                "missing file",
                "cut",
                "--qrels",
                x.qrels,
                "--vault",
                x.vault,
                "--queries",
                x.missing,
            ),
            c(
                "file for a folder",
                "cut",
                "--qrels",
                x.qrels,
                "--vault",
                x.file,
                "--queries",
                x.queries,
            ),
            c("negative count", *cut_vault, "--pool-size", "-1"),
            c("invalid number", *cut_vault, "--pool-size", "1e3"),
            c("nan", "cut", x.run, "--qrels", x.qrels, "--min-recall", "nan"),
            c("inf", "cut", x.run, "--qrels", x.qrels, "--min-recall", "inf"),
        ],
        "eval": [
            c("missing file", "eval", x.missing, x.run),
            c("folder for a file", "eval", x.qrels, x.folder),
            c("folder for a file", "eval", x.folder, x.run),
            *special("eval", "FILE", x.run),
            *special("eval", x.qrels, "FILE"),
            c("unreadable file", "eval", x.unreadable, x.run),
            c("unreadable file", "eval", x.qrels, x.unreadable),
            c("negative count", *evaluate, "-M", "-1"),
            c("invalid number", *evaluate, "-l", "two"),
            c("nan", *evaluate, "--digits", "nan"),
            c("inf", *evaluate, "--digits", "inf"),
        ],
        "diff": [
            c("missing file", "diff", x.missing, x.run, "--qrels", x.qrels),
            c("missing file", "diff", x.run, x.run, "--qrels", x.missing),
            c("folder for a file", "diff", x.run, x.folder, "--qrels", x.qrels),
            c("folder for a file", *gate, "--json", x.folder),
            *special("diff", "FILE", x.run, "--qrels", x.qrels),
            *special("diff", x.run, x.run, "--qrels", "FILE"),
            c("unreadable file", "diff", x.run, x.unreadable, "--qrels", x.qrels),
            c("unreadable file", "diff", x.run, x.run, "--qrels", x.unreadable),
            c("negative count", *gate, "--resamples", "-1"),
            c("negative count", *gate, "--min-delta", "-0.1"),
            c("invalid number", *gate, "--alpha", "five"),
            c("invalid number", *gate, "--alpha", "1"),
            c("nan", *gate, "--alpha", "nan"),
            c("nan", *gate, "--max-unjudged", "nan"),
            c("inf", *gate, "--min-delta", "inf"),
            c(
                "file for a folder",
                "diff",
                "--vault",
                x.file,
                "--queries",
                x.queries,
                "--qrels",
                x.qrels,
            ),
            *special(*gate_vault, "--new-settings", "FILE"),
            c("folder for a file", *gate_vault, "--base-settings", x.folder),
            c("negative count", *gate_vault, "--pool-size", "0"),
        ],
        "why": [
            c("missing file", "why", x.missing, "--qrels", x.qrels),
            c("unreadable file", "why", x.unreadable, "--qrels", x.qrels),
            c("folder for a file", "why", x.run, "--qrels", x.folder),
            c("folder for a file", "why", x.folder, "--qrels", x.qrels),
            *special("why", "FILE", "--qrels", x.qrels),
            *special("why", x.run, "--qrels", "FILE"),
            c("folder for a file", *why_vault[:-1], x.folder),
            *special(*why_vault[:-1], "FILE"),
            c("folder for a file", *why_vault, "--settings", x.folder),
            c("unreadable file", *why_vault, "--settings", x.unreadable),
            *special(*why_vault, "--settings", "FILE"),
            c(
                "file for a folder",
                "why",
                "--qrels",
                x.qrels,
                "--vault",
                x.file,
                "--queries",
                x.queries,
            ),
            c("missing file", *why_vault[:-1], x.missing),
            c("negative count", *why_vault, "--top", "-1"),
            c("invalid number", *why_vault, "--top", "ten"),
            c("nan", *why_vault, "--top", "nan"),
            c("inf", *why_vault, "--top", "inf"),
            c("unreachable server", *why_vault, *embedder),
        ],
    }


def closed_port() -> int:
    """A local port nothing listens on (bound, then released): a connection fails at once."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


@pytest.fixture
def inputs(tmp_path: Path) -> Inputs:
    folder = tmp_path / "folder"
    folder.mkdir()
    file = tmp_path / "plain.txt"
    file.write_text("a plain file\n", encoding="utf-8")
    unreadable = tmp_path / "unreadable.json"
    unreadable.write_bytes(b'{"answer": "x"}')
    unreadable.chmod(0)
    if os.access(unreadable, os.R_OK):  # root reads any file: make it unreadable as text
        unreadable.chmod(0o600)
        unreadable.write_bytes(b'{"answer": "\xff\xfe caf\xe9", "sources": []}\n\xc3(')
    fifo = tmp_path / "queue"  # no suffix: read as a whole JSON document, the blocking way
    os.mkfifo(fifo)
    return Inputs(
        missing=str(tmp_path / "missing.json"),
        folder=str(folder),
        file=str(file),
        unreadable=str(unreadable),
        server=f"http://127.0.0.1:{closed_port()}",
        out=str(tmp_path / "out" / "report.html"),
        fifo=str(fifo),
    )


def run(argv: tuple[str, ...], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``askkit ARGV``, killed (and failed) after 60 s, its memory capped."""
    return run_cli(argv, env=env, timeout=60)


def test_every_subcommand_has_cases(inputs: Inputs) -> None:
    """A new subcommand must come with its bad-input cases, and the matrix covers every kind."""
    matrix = cases(inputs)
    assert set(matrix) == subcommands()
    assert all(matrix.values())
    assert {case.kind for listed in matrix.values() for case in listed} == KINDS
    for command, listed in matrix.items():
        assert all(case.argv[0] == command for case in listed), command
        assert all(case.kind in KINDS for case in listed), command
    unreadable = Path(inputs.unreadable)
    if os.access(unreadable, os.R_OK):
        with pytest.raises(UnicodeDecodeError):
            unreadable.read_bytes().decode("utf-8")
    else:
        with pytest.raises(PermissionError):
            unreadable.read_bytes()


def test_every_bad_input_is_one_line_and_exit_2(inputs: Inputs, tmp_path: Path) -> None:
    """Each case exits 2 with exactly one line on stderr, no traceback, no "unexpected"
    (askkit's own bug: a crash, a read that ran out of memory), in time, and leaves no
    report; a FIFO or a device is named as what it is."""
    env = {
        **os.environ,
        "COLUMNS": "60",  # a narrow terminal: a long message must still be one line
        "ASKKIT_CACHE_DIR": str(tmp_path / "cache"),
    }
    for name in ("ASKKIT_TRACEBACK", "ASKKIT_KIMUN_TOKEN"):
        env.pop(name, None)
    everything = [case for listed in cases(inputs).values() for case in listed]
    with ThreadPoolExecutor(max_workers=8) as pool:  # the cases wait on their subprocesses
        results = list(pool.map(lambda case: run(case.argv, env), everything))
    broken = [
        f"{case.kind}: askkit {' '.join(case.argv)}\n  -> exit {out.returncode}: {out.stderr!r}"
        for case, out in zip(everything, results, strict=True)
        if not (
            out.returncode == 2
            and "Traceback" not in out.stderr
            and "unexpected " not in out.stderr
            and out.stderr.count("\n") == 1
            and out.stderr.startswith("askkit: error: ")
            and SAYS_WHAT_IT_IS.get(case.kind, "") in out.stderr
        )
    ]
    assert not broken, f"{len(broken)} of {len(everything)} cases break the contract:\n" + (
        "\n".join(broken)
    )
    assert not Path(inputs.out).exists()  # no case wrote a report
