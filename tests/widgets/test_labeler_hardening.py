"""Labeler: concurrent Labelers lose nothing; any heading is saved and read back."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from askkit import AskSource, VaultPath
from askkit.metrics import read_qrels
from askkit.widgets import Labeler, SourceReader
from askkit.widgets._qrels import load_judgments, update_judgments
from tests.conftest import ROOT

# A Labeler in its own process: waits for "go", grades N sources of its own, and
# prints each judgment once grade() reported it saved.
LABELER = textwrap.dedent(
    """
    import sys
    from askkit import AskSource, VaultPath
    from askkit.widgets import Labeler, SourceReader

    path, writer, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    reader = SourceReader()
    labeler = Labeler(path, reader, query_id=f"w{writer}")
    print("ready", flush=True)
    sys.stdin.readline()
    for i in range(n):
        reader.show(AskSource(VaultPath(f"notes/{writer}-{i}.md"), f"H {i}", None, 0.5, "x", 1))
        if labeler.grade(i % 4):
            print(f"saved\\tw{writer}\\tnotes/{writer}-{i}.md\\tH {i}\\t{i % 4}", flush=True)
    """
)
WRITERS = 3
EACH = 20


def test_concurrent_labelers_lose_no_judgment(tmp_path: Path) -> None:
    """Hardening item 3: Labelers in separate processes grading one qrels file at the
    same time take turns on its lock; every judgment any of them reported saved is in
    the file afterwards."""
    qrels = tmp_path / "qrels.tsv"
    script = tmp_path / "labeler.py"
    script.write_text(LABELER)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), str(qrels), str(w), str(EACH)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        for w in range(WRITERS)
    ]
    try:
        for proc in procs:
            assert proc.stdout is not None
            assert proc.stdout.readline() == "ready\n"
        for proc in procs:  # all start grading together
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        outputs = [proc.communicate(timeout=60)[0] for proc in procs]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)
    assert [proc.returncode for proc in procs] == [0] * WRITERS
    reported = {}
    for out in outputs:
        for line in out.splitlines():
            _, qid, path, heading, grade = line.split("\t")
            reported[(qid, path, heading)] = int(grade)
    assert len(reported) == WRITERS * EACH  # each grade() said saved
    assert load_judgments(qrels) == reported  # and every one of them is in the file
    assert len(read_qrels(qrels)) == WRITERS * EACH


ODD = ["A\rB", "a\r\nb", "tab\there", "line\nbreak", "back\\slash", 'say "hi"', "#lead", "x\x1fy"]


def test_a_cr_in_a_heading_does_not_corrupt_the_qrels_file(tmp_path: Path) -> None:
    """Hardening item 11: grading a source titled ``"Top\\x1fA\\rB"`` saves its heading
    ``"A\\rB"`` so that the file reads back and later grades work; every odd heading,
    path and query id reads back as written; a value that cannot be written is shown in
    the Labeler's status line and the file is left as it was."""
    qrels = tmp_path / "qrels.tsv"
    reader = SourceReader()
    labeler = Labeler(qrels, reader, query_id="q1")
    reader.show(AskSource(VaultPath("notes/top.md"), "Top › A\rB", None, 0.5, "x", 1,
                          title="Top\x1fA\rB"))  # fmt: skip
    assert labeler.grade(2)
    reader.show(AskSource(VaultPath("notes/next.md"), "Next", None, 0.5, "x", 2))
    assert labeler.grade(1)  # a later grade reads the file again: it must parse
    assert load_judgments(qrels) == {
        ("q1", "notes/top.md", "A\rB"): 2,
        ("q1", "notes/next.md", "Next"): 1,
    }
    odd = {(f"#q{i}\t{v}", f"notes/{v}.md", v): i % 4 for i, v in enumerate(ODD)}
    merged = update_judgments(qrels, odd)
    assert load_judgments(qrels) == merged
    assert Labeler(qrels, SourceReader(), query_id="q").judgments == merged  # a new session
    before = qrels.read_bytes()
    reader.show(AskSource(VaultPath("notes/caf\udce9.md"), "Bad", None, 0.5, "x", 3))
    assert not labeler.grade(3)  # an undecodable file name: refused, shown, not raised
    status = labeler.status_html.value
    assert "not saved" in status
    assert "path" in status
    assert "caf\\udce9.md" in status
    assert qrels.read_bytes() == before
    assert ("q1", "notes/caf\udce9.md", "Bad") not in labeler.judgments
