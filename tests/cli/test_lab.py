"""``askkit lab`` indexes the vault and really starts JupyterLab, printing a working URL."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import re
import secrets
import shutil
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from askkit.cli.lab import data_root
from tests.conftest import DATA, ROOT

LAB = [sys.executable, "-m", "askkit.cli", "lab", "--vault", str(DATA / "vault"), "--no-browser"]


def dry_run(*args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    """``askkit lab --dry-run ARGS`` on the bundled vault, with its cache in ``cache``."""
    return subprocess.run(
        [*LAB, *args, "--dry-run"],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "ASKKIT_CACHE_DIR": str(cache), "COLUMNS": "400"},
    )


def test_dry_run_prints_the_command(tmp_path: Path) -> None:
    out = dry_run("--open", "debug-retrieval.ipynb", cache=tmp_path)
    assert out.returncode == 0, out.stderr
    # a dry run starts nothing and writes nothing: it says what a real run would index
    assert f"would index {DATA / 'vault'} (BM25, into askkit's cache)" in out.stdout
    assert "notes," not in out.stdout
    assert out.stderr == ""  # no progress bar
    assert list(tmp_path.iterdir()) == []  # the cache is left empty
    assert "with debug-retrieval.ipynb open" in out.stdout
    assert " lab debug-retrieval.ipynb " in out.stdout
    assert "--no-browser" in out.stdout


def test_dry_run_with_an_embedder_embeds_nothing(tmp_path: Path) -> None:
    out = subprocess.run(
        [*LAB, "--embedder", "fastembed:AllMiniLML6V2", "--dry-run"],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "ASKKIT_CACHE_DIR": str(tmp_path), "COLUMNS": "400"},
    )
    assert out.returncode == 0, out.stderr
    assert "would embed" in out.stdout
    assert "fastembed:AllMiniLML6V2" in out.stdout
    assert "embedded with" not in out.stdout
    assert list(tmp_path.iterdir()) == []


def test_an_embedder_embeds_the_vault_first_and_goes_to_the_notebooks(
    minilm_cache: Path, tmp_path: Path
) -> None:
    """``--embedder fastembed:AllMiniLML6V2`` (what scripts/main.sh passes): the vault is
    embedded offline, with a progress bar, into the store the notebooks' DenseIndex opens."""
    from askkit.cli.lab import ENV_EMBEDDER, LabSetup, lab_environment

    # the session's model build, without the stores other tests embedded the vault into
    cache = tmp_path / "cache"
    shutil.copytree(
        minilm_cache,
        cache,
        ignore=lambda d, names: (
            [n for n in names if n.startswith("dense-")] if Path(d) == minilm_cache else []
        ),
    )

    proc = subprocess.Popen(
        [*LAB, "--embedder", "fastembed:AllMiniLML6V2"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={
            **os.environ,
            "ASKKIT_CACHE_DIR": str(cache),
            "COLUMNS": "400",
            "HF_HUB_OFFLINE": "1",
        },
        start_new_session=True,
    )
    try:  # read up to the URL JupyterLab is started at, then stop it
        assert proc.stdout is not None
        lines: list[str] = []
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            lines.append(line)
            if "JupyterLab at " in line or not line:
                break
    finally:
        _stop(proc)
    text = "".join(lines)
    assert "JupyterLab at " in text, text
    assert "embedding (fastembed:sentence-transformers/all-MiniLM-L6-v2 (offline" in text
    assert re.search(r"embedded with fastembed:.*all-MiniLM-L6-v2.* \d+ chunks", text)
    printed = " ".join(text.split())
    assert [p for p in cache.glob("dense-*") if str(p) in printed]  # the store it wrote
    setup = LabSetup(DATA / "vault", DATA, tmp_path / "judgments.tsv")
    embedded = dataclasses.replace(setup, embedder="fastembed:AllMiniLML6V2")
    assert lab_environment(embedded, {})[ENV_EMBEDDER] == "fastembed:AllMiniLML6V2"
    assert ENV_EMBEDDER not in lab_environment(setup, {})
    assert "--embedder fastembed:AllMiniLML6V2" in (ROOT / "scripts" / "main.sh").read_text()


def test_missing_vault_or_notebook_is_a_clear_error(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "askkit.cli", "lab", "--vault", str(tmp_path / "nope")],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert out.returncode == 2
    assert "vault not found" in out.stderr
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "askkit.cli",
            "lab",
            "--vault",
            str(DATA / "vault"),
            "--open",
            "x.ipynb",
        ],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert out.returncode == 2
    assert "notebook not found" in out.stderr


MAIN = ["bash", str(ROOT / "scripts" / "main.sh"), "--no-browser"]


@pytest.mark.slow
@pytest.mark.parametrize("command", [LAB, MAIN], ids=["askkit-lab", "readme-main-command"])
def test_lab_starts_and_serves_the_notebooks(tmp_path: Path, command: list[str]) -> None:
    proc = subprocess.Popen(
        command,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "ASKKIT_CACHE_DIR": str(tmp_path), "COLUMNS": "400"},
        start_new_session=True,
    )
    try:
        assert proc.stdout is not None
        url = None
        deadline = time.monotonic() + 600  # main.sh embeds the vault with the real model first
        lines: list[str] = []
        while url is None and time.monotonic() < deadline:
            line = proc.stdout.readline()
            lines.append(line)
            m = re.search(r"(http://127\.0\.0\.1:(\d+))/lab/tree/\S+\?token=(\w+)", line)
            if m:
                url = m
        assert url is not None, "".join(lines)
        base, token = url.group(1), url.group(3)
        listing = None
        while time.monotonic() < deadline:
            try:
                r = httpx.get(f"{base}/api/contents", params={"token": token}, timeout=2)
            except httpx.TransportError:
                time.sleep(0.3)
                continue
            if r.status_code == 200:
                listing = r.json()
                break
            time.sleep(0.3)
        assert listing is not None, "JupyterLab did not answer in time"
        names = {item["name"] for item in listing["content"]}
        assert {"explore.ipynb", "debug-retrieval.ipynb"} <= names
        page = httpx.get(f"{base}/lab/tree/explore.ipynb", params={"token": token}, timeout=5)
        assert page.status_code == 200
        assert "JupyterLab" in page.text
        unauthorized = httpx.get(f"{base}/api/contents", timeout=5)
        assert unauthorized.status_code == 403
    finally:
        _stop(proc)


# Issue 39, item 3: the lab's token never travels in argv. /proc/PID/cmdline is readable by
# every local user, so a token there lets any of them read and run code in the lab.

PROC = Path("/proc/self/cmdline")
NOBODY = 65534


@dataclasses.dataclass(frozen=True, slots=True)
class _RunningLab:
    """A real ``askkit lab`` (exec'd into JupyterLab: same pid), answering on ``base``."""

    pid: int
    base: str
    token: str
    runtime: Path  # JUPYTER_RUNTIME_DIR, where jupyter_server writes its own server file


def _wait_for_lab(proc: subprocess.Popen[str], runtime: Path) -> _RunningLab:
    """Read up to the printed URL, then wait for JupyterLab to answer (a startup deadline)."""
    assert proc.stdout is not None
    deadline = time.monotonic() + 300
    lines: list[str] = []
    url = None
    while url is None and time.monotonic() < deadline:
        line = proc.stdout.readline()
        lines.append(line)
        url = re.search(r"(http://127\.0\.0\.1:\d+)/lab/tree/\S+\?token=(\w+)", line)
        if not line:
            break
    assert url is not None, "".join(lines)
    lab = _RunningLab(proc.pid, url.group(1), url.group(2), runtime)
    while time.monotonic() < deadline:
        try:
            httpx.get(f"{lab.base}/api", timeout=2)
        except httpx.TransportError:
            time.sleep(0.3)
            continue
        return lab
    pytest.fail("JupyterLab did not answer in time")


@pytest.fixture(scope="module")
def hardened_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_RunningLab]:
    """``askkit lab --no-browser`` on a free port and a two-note vault in a tmp folder."""
    tmp = tmp_path_factory.mktemp("lab-39-3")
    vault = tmp / "vault"
    vault.mkdir()
    (vault / "alpaca.md").write_text("# Alpaca\n\nAlpacas are kept for their wool.\n")
    (vault / "llama.md").write_text("# Llama\n\nLlamas are kept as pack animals.\n")
    runtime = tmp / "runtime"
    proc = subprocess.Popen(
        [sys.executable, "-m", "askkit.cli", "lab", "--vault", str(vault), "--no-browser"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={
            **os.environ,
            "ASKKIT_CACHE_DIR": str(tmp / "cache"),
            "JUPYTER_RUNTIME_DIR": str(runtime),
            "COLUMNS": "400",
        },
        start_new_session=True,
    )
    try:
        yield _wait_for_lab(proc, runtime)
    finally:
        _stop(proc)


def _stop(proc: subprocess.Popen[str]) -> None:
    """End the lab and everything it started (its process group)."""
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().decode(errors="replace")
    return dict(item.partition("=")[::2] for item in raw.split("\0") if item)


@pytest.mark.slow
@pytest.mark.skipif(not PROC.exists(), reason="reads the lab's argv from /proc")
def test_hardening_39_3_the_token_is_in_the_owners_environment_not_argv(
    hardened_lab: _RunningLab,
) -> None:
    lab = hardened_lab
    cmdline = Path(f"/proc/{lab.pid}/cmdline")
    argv = cmdline.read_bytes().decode().split("\0")
    assert "explore.ipynb" in argv  # the exec'd JupyterLab, not askkit before its exec
    assert f"--ServerApp.port={lab.base.rsplit(':', 1)[1]}" in argv
    assert lab.token not in cmdline.read_text()
    assert stat.S_IMODE(cmdline.stat().st_mode) & 0o004  # why argv leaked: world-readable

    environ = Path(f"/proc/{lab.pid}/environ")
    assert _environ(lab.pid)["JUPYTER_TOKEN"] == lab.token
    assert stat.S_IMODE(environ.stat().st_mode) == 0o400
    assert environ.stat().st_uid == os.geteuid()
    # jupyter_server's own server file also holds the token: 0600 in a 0700 folder
    (server_file,) = lab.runtime.glob(f"jpserver-{lab.pid}.json")
    assert json.loads(server_file.read_text())["token"] == lab.token
    assert stat.S_IMODE(server_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(lab.runtime.stat().st_mode) == 0o700

    # the lab still refuses a request without the token (or with a wrong one)
    contents = f"{lab.base}/api/contents"
    assert httpx.get(contents, timeout=5).status_code == 403
    assert httpx.get(contents, params={"token": "0" * 32}, timeout=5).status_code == 403
    assert httpx.get(contents, params={"token": lab.token}, timeout=5).status_code == 200
    headers = {"Authorization": f"token {lab.token}"}
    assert httpx.get(contents, headers=headers, timeout=5).status_code == 200


@pytest.mark.slow
@pytest.mark.skipif(not PROC.exists(), reason="reads the lab's argv from /proc")
@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="becomes another user (needs root)"
)
def test_hardening_39_3_another_local_user_cannot_read_the_token(
    hardened_lab: _RunningLab,
) -> None:
    """What the attacker of issue 39 tried, as the user nobody: the argv reads, without the
    token; the environment does not read at all."""
    lab = hardened_lab

    def as_nobody(path: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            ["/bin/cat", path],
            check=False,
            capture_output=True,
            user=NOBODY,
            group=NOBODY,
            extra_groups=[],
        )

    argv = as_nobody(f"/proc/{lab.pid}/cmdline")
    assert argv.returncode == 0, argv.stderr
    assert b"--ServerApp.port=" in argv.stdout
    assert lab.token.encode() not in argv.stdout
    environ = as_nobody(f"/proc/{lab.pid}/environ")
    assert environ.returncode != 0
    assert b"Permission denied" in environ.stderr
    assert lab.token.encode() not in environ.stdout
    for path in lab.runtime.iterdir():
        leaked = as_nobody(str(path))
        assert leaked.returncode != 0
        assert lab.token.encode() not in leaked.stdout


def test_hardening_39_3_dry_run_prints_no_token_in_the_command(tmp_path: Path) -> None:
    out = dry_run(cache=tmp_path)
    assert out.returncode == 0, out.stderr
    command = next(line for line in out.stdout.splitlines() if " lab explore.ipynb " in line)
    assert "--ServerApp.port=" in command
    assert "token" not in command.lower()
    assert "IdentityProvider.token" not in command
    assert "JUPYTER_TOKEN" in out.stdout  # it says where the token goes instead


# Issue 41, item 8: a dry run starts nothing, so it prints no URL to open and no token.


@pytest.mark.parametrize("port", [None, "8899"])
def test_issue41_8_dry_run_prints_no_url_and_no_token(tmp_path: Path, port: str | None) -> None:
    out = dry_run(*(["--port", port] if port else []), cache=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "http://" not in out.stdout
    assert "token=" not in out.stdout
    assert re.search(r"\b[0-9a-f]{32}\b", out.stdout) is None  # no token made up and shown
    assert "JupyterLab at" not in out.stdout  # nothing is there to open
    said = next(line for line in out.stdout.splitlines() if line.startswith("would start"))
    if port:
        assert said == "would start JupyterLab on 127.0.0.1, port 8899, with explore.ipynb open:"
        assert "--ServerApp.port=8899 " in out.stdout
    else:
        assert "a free port (PORT: chosen at start)" in said
        assert "--ServerApp.port=PORT " in out.stdout
    assert "a real start makes a new token, passes it in $JUPYTER_TOKEN" in out.stdout
    assert list(tmp_path.iterdir()) == []


# Issue 40, item 3: the lab works on copies of the notebooks in a folder per vault (in
# askkit's cache), never writes into the tracked notebooks, and never restores a session.

NOTEBOOKS = ROOT / "notebooks"


def _vault(folder: Path, animal: str) -> Path:
    folder.mkdir(parents=True)
    (folder / f"{animal}.md").write_text(f"# {animal.title()}\n\nA note about {animal}s.\n")
    return folder


def _lab_env(tmp: Path) -> dict[str, str]:
    """A lab's environment: the cache, runtime and (the old default's) workspaces in ``tmp``."""
    return {
        **os.environ,
        "ASKKIT_CACHE_DIR": str(tmp / "cache"),
        "JUPYTER_RUNTIME_DIR": str(tmp / "runtime"),
        "JUPYTERLAB_WORKSPACES_DIR": str(tmp / "jupyterlab-workspaces"),
        "COLUMNS": "400",
    }


@contextlib.contextmanager
def _lab_on(vault: Path, tmp: Path) -> Iterator[_RunningLab]:
    """A real ``askkit lab --no-browser`` on ``vault``, stopped when the block ends."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "askkit.cli", "lab", "--vault", str(vault), "--no-browser"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=_lab_env(tmp),
        start_new_session=True,
    )
    try:
        yield _wait_for_lab(proc, tmp / "runtime")
    finally:
        _stop(proc)


def _api(lab: _RunningLab, method: str, path: str, **kwargs: Any) -> Any:
    headers = {"Authorization": f"token {lab.token}"}
    r = httpx.request(method, f"{lab.base}{path}", headers=headers, timeout=30, **kwargs)
    assert r.status_code in {200, 201, 204}, (method, path, r.status_code, r.text)
    return r.json() if r.content else None


def _notebook_texts(lab: _RunningLab) -> dict[str, str]:
    """Every notebook JupyterLab serves, as JSON text."""
    listing = _api(lab, "GET", "/api/contents", params={"content": 1})
    names = [i["name"] for i in listing["content"] if i["type"] == "notebook"]
    return {n: json.dumps(_api(lab, "GET", f"/api/contents/{n}")["content"]) for n in names}


#: What JupyterLab saves of a layout with the six notebooks open (its workspace's data).
_SIX = sorted(n.name for n in NOTEBOOKS.glob("*.ipynb"))
_DOCK = {"type": "tab-area", "currentIndex": 0, "widgets": [f"notebook:{n}" for n in _SIX]}
SIX_OPEN = {
    **{f"notebook:{n}": {"data": {"path": n, "factory": "Notebook"}} for n in _SIX},
    "layout-restorer:data": {"main": {"dock": _DOCK}},
}


def _open_notebooks(lab: _RunningLab) -> set[str]:
    """The notebooks any workspace JupyterLab would restore holds open."""
    spaces = _api(lab, "GET", "/lab/api/workspaces")["workspaces"]["values"]
    return {key for space in spaces for key in space["data"] if key.startswith("notebook:")}


def _git_status(path: Path) -> list[str]:
    out = subprocess.run(
        ["git", "status", "--porcelain", "--", str(path)],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return sorted(out.stdout.splitlines())


@dataclasses.dataclass(frozen=True, slots=True)
class _Sessions:
    """What three real lab sessions saw: on vault one (outputs saved, six notebooks left
    open), on vault two, then on vault one again."""

    marker: str
    status_before: list[str]
    status_after: list[str]
    shipped: dict[str, bytes]
    first: dict[str, str]  # the notebooks session one served after its save
    second: dict[str, str]
    again: dict[str, str]
    roots: tuple[Path, Path, Path]  # each session's working folder (JupyterLab's root)
    environs: tuple[dict[str, str], dict[str, str]]
    open_second: set[str]
    open_again: set[str]


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> _Sessions:
    tmp = tmp_path_factory.mktemp("lab-40-3")
    one, two = _vault(tmp / "vault-one", "alpaca"), _vault(tmp / "vault-two", "llama")
    marker = f"outputs of {one} {secrets.token_hex(4)}"
    status_before = _git_status(NOTEBOOKS)
    with _lab_on(one, tmp) as lab:
        nb = _api(lab, "GET", "/api/contents/explore.ipynb")["content"]
        cell = next(c for c in nb["cells"] if c["cell_type"] == "code")
        cell["execution_count"] = 1
        cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": [marker]}]
        body = {"type": "notebook", "format": "json", "content": nb}
        _api(lab, "PUT", "/api/contents/explore.ipynb", json=body)
        _api(
            lab,
            "PUT",
            "/lab/api/workspaces/default",
            json={"data": SIX_OPEN, "metadata": {"id": "default"}},
        )
        first, root_one, env_one = _notebook_texts(lab), _cwd(lab.pid), _environ(lab.pid)
    shipped = {p.name: p.read_bytes() for p in NOTEBOOKS.glob("*.ipynb")}
    status_after = _git_status(NOTEBOOKS)
    with _lab_on(two, tmp) as lab:
        second, root_two, env_two = _notebook_texts(lab), _cwd(lab.pid), _environ(lab.pid)
        open_second = _open_notebooks(lab)
    with _lab_on(one, tmp) as lab:
        again, root_again, open_again = _notebook_texts(lab), _cwd(lab.pid), _open_notebooks(lab)
    return _Sessions(
        marker, status_before, status_after, shipped, first, second, again,
        (root_one, root_two, root_again), (env_one, env_two), open_second, open_again,
    )  # fmt: skip


def _cwd(pid: int) -> Path:
    return Path(f"/proc/{pid}/cwd").resolve()


@pytest.mark.slow
@pytest.mark.skipif(not PROC.exists(), reason="reads the lab's working folder from /proc")
def test_issue40_3_a_saved_session_leaves_the_tracked_notebooks_pristine(
    sessions: _Sessions,
) -> None:
    """Outputs saved through JupyterLab's contents API land in the vault's copy, never in
    ``notebooks/`` (``git status`` shows no more than before the session)."""
    assert sessions.marker in sessions.first["explore.ipynb"]  # the save went through
    assert sessions.status_after == sessions.status_before
    assert not [n for n, data in sessions.shipped.items() if sessions.marker.encode() in data]
    root = sessions.roots[0]
    assert not root.is_relative_to(ROOT)
    assert sessions.marker in (root / "explore.ipynb").read_text()  # the copy holds them


@pytest.mark.slow
@pytest.mark.skipif(not PROC.exists(), reason="reads the lab's working folder from /proc")
def test_issue40_3_another_vault_gets_its_own_copies_without_the_first_ones_outputs(
    sessions: _Sessions,
) -> None:
    one, two, again = sessions.roots
    assert one != two
    assert one == again  # a vault comes back to its own folder
    assert set(sessions.second) >= {"explore.ipynb", "debug-retrieval.ipynb"}
    assert not [n for n, text in sessions.second.items() if sessions.marker in text]
    assert sessions.marker in sessions.again["explore.ipynb"]  # kept for its own vault
    for env, root in zip(sessions.environs, (one, two), strict=True):
        # one file per vault in askkit's data folder, named as its lab folder, not in it
        labels = Path(env["ASKKIT_LABELS"])
        assert labels.name == root.parent.name.removeprefix("lab-") + ".tsv"
        assert labels.parent.name == "judgments"
        assert not labels.is_relative_to(root.parent)


@pytest.mark.slow
def test_issue40_3_a_start_restores_no_earlier_workspace(sessions: _Sessions) -> None:
    """The six notebooks session one left open reopen neither on another vault nor on the
    same one: JupyterLab's workspaces API holds no open notebook at a start."""
    assert sessions.open_second == set()
    assert sessions.open_again == set()


@pytest.mark.slow
@pytest.mark.skipif(not PROC.exists(), reason="reads the lab's environment from /proc")
def test_issue40_3_the_kernels_environment_names_the_vault_data_and_labels(
    sessions: _Sessions, tmp_path: Path
) -> None:
    """The contract the notebooks rely on, in the running JupyterLab's environment (which
    its kernels inherit); a vault other than the sample has no questions by default."""
    env = sessions.environs[1]
    assert env["ASKKIT_VAULT"].endswith("vault-two")
    assert Path(env["ASKKIT_VAULT"]).is_absolute()
    assert env["ASKKIT_DATA"] == str(DATA)
    assert Path(env["ASKKIT_LABELS"]).parent.name == "judgments"
    assert not Path(env["ASKKIT_LABELS"]).is_relative_to(ROOT)
    assert "ASKKIT_QUERIES" not in env
    assert "ASKKIT_QRELS" not in env


def _contract(out: str) -> dict[str, str]:
    lines = [line.strip() for line in out.splitlines() if line.startswith("  ASKKIT_")]
    return dict(line.split("=", 1) for line in lines)


def test_issue40_3_dry_run_says_where_the_copies_are_and_writes_nothing(tmp_path: Path) -> None:
    out = dry_run(cache=tmp_path)
    assert out.returncode == 0, out.stderr
    copies = re.search(r"would work on copies of (\S+) in (\S+) \(6 to copy", out.stdout)
    assert copies is not None, out.stdout
    assert copies.group(1) == str(NOTEBOOKS)
    folder = Path(copies.group(2))
    assert folder.name == "notebooks"
    assert folder.parent.parent == tmp_path  # in askkit's cache folder
    assert re.fullmatch(r"lab-vault-[0-9a-f]{12}", folder.parent.name)
    assert f"--ServerApp.root_dir={folder} " in out.stdout
    assert f"--LabApp.workspaces_dir={folder.parent / 'workspaces'} " in out.stdout
    assert list(tmp_path.iterdir()) == []
    # the bundled vault: its questions and judgments by default, labels in the lab folder
    assert _contract(out.stdout) == {
        "ASKKIT_VAULT": str(DATA / "vault"),
        "ASKKIT_DATA": str(DATA),
        "ASKKIT_LABELS": str(
            data_root() / "judgments" / (folder.parent.name.removeprefix("lab-") + ".tsv")
        ),
        "ASKKIT_QUERIES": str(DATA / "queries.tsv"),
        "ASKKIT_QRELS": str(DATA / "qrels.tsv"),
    }


def test_issue40_3_questions_and_judgments_are_the_users_on_their_own_vault(
    tmp_path: Path,
) -> None:
    vault = _vault(tmp_path / "notes", "alpaca")
    queries, qrels, labels = tmp_path / "q.tsv", tmp_path / "j.tsv", tmp_path / "l.tsv"
    queries.write_text("q1\twhat do alpacas give\n")
    qrels.write_text("q1\t0\talpaca.md\t1\n")
    cache = tmp_path / "cache"
    run = [*LAB[:5], str(vault), "--no-browser", "--dry-run"]
    env = {**os.environ, "ASKKIT_CACHE_DIR": str(cache), "ASKKIT_QUERIES": "/stale.tsv"}
    bare = subprocess.run(run, capture_output=True, text=True, cwd=ROOT, env=env, check=False)
    assert bare.returncode == 0, bare.stderr
    contract = _contract(bare.stdout)
    assert contract["ASKKIT_VAULT"] == str(vault)
    assert "ASKKIT_QUERIES" not in contract
    assert "ASKKIT_QRELS" not in contract
    assert re.fullmatch(r".*/judgments/notes-[0-9a-f]{12}\.tsv", contract["ASKKIT_LABELS"])
    assert not Path(contract["ASKKIT_LABELS"]).is_relative_to(cache)  # never in a cache
    given = subprocess.run(
        [*run, "--queries", str(queries), "--qrels", str(qrels), "--labels", str(labels)],
        capture_output=True, text=True, cwd=ROOT, env=env, check=False,
    )  # fmt: skip
    assert given.returncode == 0, given.stderr
    contract = _contract(given.stdout)
    assert (contract["ASKKIT_QUERIES"], contract["ASKKIT_QRELS"]) == (str(queries), str(qrels))
    assert contract["ASKKIT_LABELS"] == str(labels)
    tracked = subprocess.run(
        [*run, "--labels", str(DATA / "qrels.tsv")],
        capture_output=True, text=True, cwd=ROOT, env=env, check=False,
    )  # fmt: skip
    assert tracked.returncode == 2
    assert "askkit's shipped files" in tracked.stderr
    assert not cache.exists()

    from askkit.cli.lab import LabSetup, lab_environment

    setup = LabSetup(vault, DATA, tmp_path / "judgments.tsv")
    env = lab_environment(setup, {"ASKKIT_QUERIES": "/stale.tsv", "ASKKIT_SERVER": "http://s"})
    assert "ASKKIT_QUERIES" not in env  # another vault's questions never leak in
    assert env["ASKKIT_SERVER"] == "http://s"


def _notebook(*sources: str, output: str | None = None) -> bytes:
    cells: list[dict[str, Any]] = [
        {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": s}
        for s in sources
    ]
    if output is not None:
        cells[0]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": output}]
    nb = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(nb, indent=1).encode()


def _prepare_only(vault: Path, shipped: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "askkit.cli", "lab", "--vault", str(vault), "--notebooks",
         str(shipped), "--open", "a.ipynb", "--prepare-only"],
        capture_output=True, text=True, cwd=ROOT, check=False,
        env={**os.environ, "ASKKIT_CACHE_DIR": str(cache), "COLUMNS": "400"},
    )  # fmt: skip


def test_issue40_3_a_changed_notebook_refreshes_an_unedited_copy_and_keeps_an_edited_one(
    tmp_path: Path,
) -> None:
    vault = _vault(tmp_path / "vault", "alpaca")
    shipped = tmp_path / "shipped"
    shipped.mkdir()
    (shipped / "a.ipynb").write_bytes(_notebook("print('a, first')"))
    (shipped / "b.ipynb").write_bytes(_notebook("print('b, first')"))
    cache = tmp_path / "cache"
    first = _prepare_only(vault, shipped, cache)
    assert first.returncode == 0, first.stderr
    assert "(copied now: 2)" in first.stdout
    (folder,) = cache.glob("lab-vault-*")
    copies = folder / "notebooks"
    assert (copies / "a.ipynb").read_bytes() == (shipped / "a.ipynb").read_bytes()
    # a: run and saved (outputs are no edit); b: its code edited
    (copies / "a.ipynb").write_bytes(_notebook("print('a, first')", output="a, first\n"))
    edited = _notebook("print('b, my version')")
    (copies / "b.ipynb").write_bytes(edited)
    (shipped / "a.ipynb").write_bytes(_notebook("print('a, second')"))
    (shipped / "b.ipynb").write_bytes(_notebook("print('b, second')"))
    shipped_now = {p.name: p.read_bytes() for p in shipped.iterdir()}

    second = _prepare_only(vault, shipped, cache)
    assert second.returncode == 0, second.stderr
    assert (copies / "a.ipynb").read_bytes() == shipped_now["a.ipynb"]  # refreshed
    assert (copies / "b.ipynb").read_bytes() == edited  # kept
    assert (copies / "b.new.ipynb").read_bytes() == shipped_now["b.ipynb"]  # beside it
    said = " ".join(second.stdout.split())
    assert "a.ipynb: askkit's notebook changed and your copy was unedited: replaced" in said
    assert (
        "b.ipynb: askkit's notebook changed, and you edited your copy: kept as it is; "
        "the new version is beside it, b.new.ipynb"
    ) in said
    manifest = json.loads((folder / "manifest.json").read_text())
    assert (
        manifest["notebooks"]["a.ipynb"]["shipped_sha256"]
        == hashlib.sha256(shipped_now["a.ipynb"]).hexdigest()
    )

    third = _prepare_only(vault, shipped, cache)  # nothing changed: nothing said, nothing done
    assert third.returncode == 0, third.stderr
    assert "replaced" not in third.stdout
    assert "kept as it is" not in third.stdout
    assert (copies / "b.ipynb").read_bytes() == edited
    assert {p.name: p.read_bytes() for p in shipped.iterdir()} == shipped_now  # only read


# Issue 40, the benchmark bullet: the lab's first start embeds with a progress bar and an
# estimate (on a pipe, a line every few seconds); a second start embeds nothing.


def _herbs(folder: Path) -> Path:
    """A vault of 180 sections: more than one batch of 100, so embedding shows progress."""
    folder.mkdir()
    for note in range(3):
        body = "".join(f"## Herb {i}\n\nHerb {i} grows best in sun.\n\n" for i in range(60))
        (folder / f"herbs-{note}.md").write_text(f"# Herbs {note}\n\n{body}")
    return folder


def _embedding(minilm_cache: Path, tmp_path: Path) -> tuple[list[str], dict[str, str]]:
    """``askkit lab --prepare-only`` with the offline model on :func:`_herbs`, and its env."""
    cache = tmp_path / "cache"
    shutil.copytree(
        minilm_cache,
        cache,
        ignore=lambda d, names: (
            [n for n in names if n.startswith(("dense-", "index-", "lab-"))]
            if Path(d) == minilm_cache
            else []
        ),
    )
    vault = _herbs(tmp_path / "herbs")
    command = [*LAB[:5], str(vault), "--embedder", "fastembed:AllMiniLML6V2", "--prepare-only"]
    env = {**os.environ, "ASKKIT_CACHE_DIR": str(cache), "COLUMNS": "120", "HF_HUB_OFFLINE": "1"}
    return command, env


@pytest.mark.slow
def test_issue40_lab_start_on_a_pipe_prints_progress_lines_with_an_estimate(
    minilm_cache: Path, tmp_path: Path
) -> None:
    command, env = _embedding(minilm_cache, tmp_path)
    first = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env, check=False)
    assert first.returncode == 0, first.stderr
    assert "\r" not in first.stderr  # lines, never a bar redrawn in place
    lines = [line for line in first.stderr.splitlines() if line.startswith("embedding (")]
    assert len(lines) >= 2, first.stderr  # its first state at once, its last when it ends
    done = r"\d+% (\d+)/180 \[\d\d:\d\d<(\d\d:\d\d|\?), +[\d.?]+chunk/s\]"
    assert all(re.search(done, line) for line in lines), lines
    assert re.search(r"180/180 \[\d\d:\d\d<\d\d:\d\d", lines[-1])  # the last: done, and when
    assert "(180 embedded, 0 reused)" in first.stdout
    second = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env, check=False)
    assert second.returncode == 0, second.stderr
    assert "(0 embedded, 0 reused)" in second.stdout  # the unchanged vault: nothing embedded
    assert "embedding (" not in second.stderr


@pytest.mark.slow
def test_issue40_lab_start_on_a_terminal_draws_a_bar_that_fits_with_an_estimate(
    minilm_cache: Path, tmp_path: Path
) -> None:
    import fcntl
    import struct
    import termios

    command, env = _embedding(minilm_cache, tmp_path)
    main, terminal = os.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    proc = subprocess.Popen(
        command, stdin=subprocess.DEVNULL, stdout=terminal, stderr=terminal, cwd=ROOT, env=env
    )
    os.close(terminal)
    chunks = []
    while True:
        try:
            data = os.read(main, 65536)
        except OSError:  # EIO: the terminal's other end closed
            break
        if not data:
            break
        chunks.append(data)
    os.close(main)
    assert proc.wait(timeout=60) == 0
    shown = b"".join(chunks).decode(errors="replace")
    states = [s.rstrip() for s in re.split(r"[\r\n]", shown) if s.startswith("embedding (")]
    assert states, shown
    # on 80 columns the long model name is shortened, never the counts and the estimate
    assert all(len(s) < 80 for s in states), states
    assert all(
        re.search(r"^embedding \(fastembed:\S*…: +\d+%\|.*\| \d+/180 \[\d\d:\d\d<", s)
        for s in states
    ), states
    assert re.search(r"\| 180/180 \[\d\d:\d\d<\d\d:\d\d, ", states[-1]), states
    assert "(180 embedded, 0 reused)" in " ".join(shown.split())


def test_issue40_progress_lines_keep_a_state_every_interval_and_drop_erased_bars() -> None:
    import io

    from askkit.cli._terminal import _ProgressLines

    now = [0.0]
    out = io.StringIO()
    lines = _ProgressLines(out, 5.0, clock=lambda: now[0])
    lines.write("a warning\n")
    for n, at in [(0, 0.0), (100, 2.0), (200, 6.0), (300, 8.0)]:
        now[0] = at
        lines.write(f"\rembedding:  {n // 4}%|##        | {n}/400 [00:0{int(at)}<00:30, 9chunk/s]")
    lines.write("\rembedding: 100%|##########| 400/400 [00:10<00:00, 9chunk/s]\n")
    lines.write("\rreading: 50%|#####     | 1/2 [00:00<00:00]")
    lines.write("\r" + " " * 40 + "\r")  # a bar erased on failure: nothing more is said
    assert out.getvalue().splitlines() == [
        "a warning",
        "embedding:  0% 0/400 [00:00<00:30, 9chunk/s]",  # a bar's first state, at once
        "embedding:  50% 200/400 [00:06<00:30, 9chunk/s]",  # 5 s later, not at 2 s
        "embedding: 100% 400/400 [00:10<00:00, 9chunk/s]",  # its last state
        "reading: 50% 1/2 [00:00<00:00]",
    ]
